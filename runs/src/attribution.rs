//! Failure attribution of a stored run: every failed episode's trajectory
//! replayed and attributed ([`crate::fork::attribute`]), the attribution
//! table of the run report, and the exports (Who&When's JSON shape, and one
//! VerifyMAS hypothesis per line).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};
use toolenv::pb;
use toolenv_core::ForkError;
use toolenv_domains::attribution::{Attribution, ErrorType, Mast, Responsible};

use crate::{StoredEpisode, metrics::EpisodeOutcome};

/// One failed episode of a run, attributed.
#[derive(Debug, Clone)]
pub struct EpisodeAttribution {
    /// Its index in the run's plan.
    pub plan_index: usize,
    /// The task played.
    pub task_id: String,
    /// The agent's label in the run: the responsible agent of a single-agent episode.
    pub agent: String,
    /// The fault profile's name.
    pub fault_profile: String,
    /// The perturbation level ε.
    pub epsilon: f64,
    /// The attribution.
    pub attribution: Attribution,
}

impl EpisodeAttribution {
    /// The responsible party of each agent–error pair, with the pair: the
    /// run's agent label stands for the episode's agent.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &toolenv_domains::attribution::AttributedError)> {
        self.attribution.errors.iter().map(|e| (e.party(&self.agent), e))
    }

    /// The party responsible for the decisive error.
    pub fn mistake_agent(&self) -> Option<&str> {
        self.attribution.errors.first().map(|e| e.party(&self.agent))
    }

    /// As JSON, for `toolenv attribute --json`.
    pub fn to_json(&self) -> Value {
        let errors: Vec<Value> = self
            .pairs()
            .map(|(party, e)| {
                json!({"step": e.step, "agent": party, "error": e.error.name(), "mast": e.mast.map(Mast::name), "reason": e.reason})
            })
            .collect();
        let a = &self.attribution;
        json!({
            "plan_index": self.plan_index, "task_id": self.task_id, "agent": self.agent,
            "fault_profile": self.fault_profile, "epsilon": self.epsilon,
            "steps": a.steps, "decisive_step": a.decisive_step, "mistake_step": a.decisive_step, "mistake_agent": self.mistake_agent(),
            "responsible": a.responsible, "infeasible_from_start": a.infeasible_from_start,
            "premature_stop": a.premature_stop, "fault_step": a.fault_step,
            "continuations": a.continuations, "errors": errors,
        })
    }
}

/// An episode that could not be attributed, and why.
#[derive(Debug, Clone)]
pub struct Unattributed {
    /// Its index in the run's plan.
    pub plan_index: usize,
    /// Why.
    pub error: ForkError,
}

/// Attributes every failed episode of a run that has a trajectory (passed
/// ones and infrastructure errors have nothing to attribute). `max_calls`
/// is the call limit the run's episodes had. Episodes whose replay diverges
/// from their record are returned apart, with the reason; so is one whose
/// replay decides its feasibility otherwise than its recorded verdict (an
/// episode judged under another call limit or by an older solver), so that
/// an attribution never contradicts the report's infeasible count. Tasks
/// are found in `tasks`.
pub fn attribute_run(
    tasks: &toolenv_domains::taskfile::Catalogue,
    episodes: &[StoredEpisode],
    max_calls: u32,
) -> (Vec<EpisodeAttribution>, Vec<Unattributed>) {
    let mut attributed = Vec::new();
    let mut failed = Vec::new();
    for episode in episodes {
        let Some(trajectory) = episode.trajectory.as_ref().filter(|_| episode.result.outcome == EpisodeOutcome::Failed) else { continue };
        let recorded = trajectory.verdict.as_ref().and_then(|v| v.feasible);
        let attribution = crate::fork::attribute(tasks, trajectory, max_calls).and_then(|attribution| match recorded {
            Some(feasible) if attribution.infeasible_from_start == feasible => Err(ForkError::Diverged {
                index: trajectory.calls.len(),
                expected: format!("feasible: {feasible}"),
                actual: format!("feasible: {}", !attribution.infeasible_from_start),
            }),
            _ => Ok(attribution),
        });
        match attribution {
            Ok(attribution) => attributed.push(EpisodeAttribution {
                plan_index: episode.plan_index,
                task_id: episode.result.task_id.clone(),
                agent: episode.result.agent.clone(),
                fault_profile: episode.result.fault_profile.clone(),
                epsilon: episode.result.epsilon,
                attribution,
            }),
            Err(error) => failed.push(Unattributed { plan_index: episode.plan_index, error }),
        }
    }
    (attributed, failed)
}

/// `text` cut to at most `max` characters at a word boundary, with `…`
/// when something was left out.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    let at_word = cut.rfind(' ').map_or(cut.as_str(), |space| &cut[..space]);
    format!("{}…", at_word.trim_end_matches([',', ';', ':']))
}

/// The attribution table of a run report: error types (toolenv type and its
/// MAST mode) × responsible party × fault profile, with counts and the first
/// example of each row; then where the decisive steps fell.
pub fn table(attributions: &[EpisodeAttribution]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Failure attribution (counterfactual replay; decisive error of each failed episode, then every pair)");
    if attributions.is_empty() {
        let _ = writeln!(out, "  no failed episode attributed");
        return out;
    }
    // (error, party, profile) -> (decisive count, pair count, example)
    let mut rows: BTreeMap<(ErrorType, String, String), (u32, u32, String)> = BTreeMap::new();
    for episode in attributions {
        for (i, (party, error)) in episode.pairs().enumerate() {
            let row = rows.entry((error.error, party.to_owned(), episode.fault_profile.clone())).or_default();
            row.0 += u32::from(i == 0);
            row.1 += 1;
            if row.2.is_empty() {
                row.2 = format!("#{} {} step {}: {}", episode.plan_index, episode.task_id, error.step, error.reason);
            }
        }
    }
    let _ = writeln!(
        out,
        "  {:<40} {:<7} {:<20} {:<22} {:>8} {:>6}  example",
        "error type", "MAST", "responsible", "faults", "decisive", "pairs"
    );
    for ((error, party, profile), (decisive, pairs, example)) in &rows {
        let mast = error.mast().map_or("-", Mast::name);
        let example = shorten(example, 110);
        let _ = writeln!(out, "  {:<40} {:<7} {:<20} {:<22} {:>8} {:>6}  {example}", error.name(), mast, party, profile, decisive, pairs);
    }
    let count = |f: &dyn Fn(&Attribution) -> bool| attributions.iter().filter(|e| f(&e.attribution)).count();
    let _ = writeln!(
        out,
        "  {} failed episodes: {} the agent's, {} the environment's, {} the user's; {} premature stops, {} infeasible from the start",
        attributions.len(),
        count(&|a| a.responsible == Some(Responsible::Agent)),
        count(&|a| a.responsible == Some(Responsible::Environment)),
        count(&|a| a.responsible == Some(Responsible::User)),
        count(&|a| a.premature_stop),
        count(&|a| a.infeasible_from_start),
    );
    out
}

/// A call's line in a Who&When history: what the agent called and what came back.
fn history_content(call: &pb::ToolCallRecord) -> String {
    use pb::tool_call_record::Outcome;
    let reply = match &call.outcome {
        Some(Outcome::ResultJson(text)) | Some(Outcome::RawResult(text)) => text.clone(),
        Some(Outcome::Error(e)) => format!("error {}: {}", e.code, e.message),
        Some(Outcome::Invalid(i)) => format!("invalid {}: {}", i.field, i.message),
        Some(Outcome::Failure(f)) => format!("{} {}: {}", f.code, f.reason, f.message),
        None => String::new(),
    };
    format!("{}({}) -> {}", call.tool_name, call.arguments_json, reply)
}

/// One failed episode in Who&When's JSON shape: `question`, `ground_truth`,
/// `history` (one entry per call — its request and reply — then the agent's
/// finish, so `mistake_step` indexes it), `mistake_agent`, `mistake_step`,
/// `mistake_reason`; toolenv's own labels under `toolenv`. Each call's entry
/// names the team member that made it (its agent id); the run's agent label
/// names the episode's only agent.
pub fn who_when(episode: &EpisodeAttribution, trajectory: &pb::Trajectory) -> Value {
    let caller = |call: &pb::ToolCallRecord| if call.agent_id.is_empty() { episode.agent.clone() } else { call.agent_id.clone() };
    let mut history: Vec<Value> =
        trajectory.calls.iter().map(|c| json!({"name": caller(c), "role": "assistant", "content": history_content(c)})).collect();
    history.push(json!({"name": episode.agent, "role": "assistant", "content": "finish"}));
    let ground_truth: Vec<String> =
        trajectory.verdict.iter().flat_map(|v| &v.checks).map(|c| format!("{}: {}", c.name, c.expected_json)).collect();
    let decisive = episode.attribution.errors.first();
    json!({
        "question": trajectory.description,
        "ground_truth": ground_truth.join("\n"),
        "history": history,
        "mistake_agent": episode.mistake_agent(),
        "mistake_step": episode.attribution.decisive_step.map(|s| s.to_string()),
        "mistake_reason": decisive.map(|e| e.reason.clone()),
        "toolenv": episode.to_json(),
    })
}

/// The VerifyMAS training hypotheses of one failed episode, one per MAST
/// failure mode: `entail` (with the responsible agents) for the modes its
/// agent–error pairs name; `neutral` for the other modes of an entailed
/// mode's category (related, unsupported, not refuted); `contradict` for the
/// rest, which the counterfactual replay refutes.
pub fn hypotheses(episode: &EpisodeAttribution) -> Vec<Value> {
    let mut entailed: BTreeMap<Mast, (Vec<&str>, Vec<&str>)> = BTreeMap::new();
    for (party, error) in episode.pairs() {
        if let Some(mast) = error.mast {
            let (agents, types) = entailed.entry(mast).or_default();
            if !agents.contains(&party) {
                agents.push(party);
            }
            if !types.contains(&error.error.name()) {
                types.push(error.error.name());
            }
        }
    }
    Mast::ALL
        .iter()
        .map(|&mast| {
            let (label, agents, types) = match entailed.get(&mast) {
                Some((agents, types)) => ("entail", agents.clone(), types.clone()),
                None if entailed.keys().any(|m| m.category() == mast.category()) => ("neutral", Vec::new(), Vec::new()),
                None => ("contradict", Vec::new(), Vec::new()),
            };
            json!({
                "plan_index": episode.plan_index, "task_id": episode.task_id, "candidate_agents": [episode.agent],
                "error_type": mast.name(), "hypothesis": mast.hypothesis(), "label": label,
                "agents": agents, "toolenv_types": types,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_team_s_history_names_each_member() {
        let call =
            |agent_id: &str| pb::ToolCallRecord { tool_name: "search_flights".into(), agent_id: agent_id.into(), ..Default::default() };
        let trajectory = pb::Trajectory { calls: vec![call("planner-1"), call("executor-1"), call("")], ..Default::default() };
        let attribution = Attribution { steps: 3, ..Attribution::default() };
        let episode = EpisodeAttribution {
            plan_index: 0,
            task_id: "travel/cheapest-flight/001".into(),
            agent: "team".into(),
            fault_profile: "none".into(),
            epsilon: 0.0,
            attribution,
        };
        let names: Vec<Value> = who_when(&episode, &trajectory)["history"].as_array().unwrap().iter().map(|h| h["name"].clone()).collect();
        assert_eq!(names, [json!("planner-1"), json!("executor-1"), json!("team"), json!("team")]);
    }

    #[test]
    fn examples_are_cut_between_words() {
        assert_eq!(shorten("short enough", 20), "short enough");
        let cut = shorten("#3 travel/x step 2: called book_flight with the wrong flight number", 40);
        assert_eq!(cut, "#3 travel/x step 2: called book_flight…");
        assert!(cut.chars().count() <= 40);
    }
}
