//! Text reports of a run, shaped like the paper's tables: reliability by
//! agent and ε (Tables 5–6), by λ (Figure 2), by domain (Table 7), fault
//! recovery (Table 8), fault-type ablation (Table 9) and the surface's
//! summary figures (Section 3.3).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::metrics::{self, Breakdown, EpisodeResult, InfraConvention, PassK, Population};

/// `n` and the noun, plural unless `n` is 1: `1 task`, `3 infrastructure errors`.
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// A minimum detectable difference as a number of percentage points (`±8.1`).
fn pp(mde: f64) -> String {
    format!("±{:.1}", mde * 100.0)
}

/// A minimum detectable difference with its unit (`±8.1 pp`), or `n/a`.
fn mde_pp(mde: Option<f64>) -> String {
    mde.map_or("n/a".to_owned(), |m| pp(m) + " pp")
}

/// The MDEs of pass^1 and pass^k as `±a/±b pp` (`±a pp` with one trial,
/// where the two are the same figure); `n/a` for one that is not defined.
fn mde_text(pass_1: &PassK, pass_k: &PassK, k: u32) -> String {
    match (pass_1.mde, pass_k.mde) {
        _ if k == 1 => mde_pp(pass_1.mde),
        (Some(one), Some(all)) => format!("{}/{} pp", pp(one), pp(all)),
        (one, all) => format!("{}/{}", mde_pp(one), mde_pp(all)),
    }
}

/// The name of a pair of figures at 1 and at k (`ceiling ^1/^4`), or of the
/// one figure they are with one trial (`ceiling ^1`).
fn pair_title(name: &str, k: u32) -> String {
    if k == 1 { format!("{name} ^1") } else { format!("{name} ^1/^{k}") }
}

/// Formats a pass^k as a percentage with its Wilson interval.
fn pct(pass: &PassK) -> String {
    match (pass.value, pass.ci) {
        (Some(value), Some(ci)) => format!("{:.1}% [{:.0}–{:.0}]", value.to_f64() * 100.0, ci.lower * 100.0, ci.upper * 100.0),
        (Some(value), None) => format!("{:.1}%", value.to_f64() * 100.0),
        (None, _) => "n/a".to_owned(),
    }
}

/// What the fault recovery line's figures count ([`toolenv_core::fault_ledger`]
/// defines them); every total is the sum of the kinds' in `report --json`.
const FAULT_LEGEND: &str = "Fault ledger, counted in calls: a fault injected meets one call, or several when its state carries \
     over (a suspension, an outage, a rate-limit window); encountered = calls answered with an error status; recovered = \
     encountered calls after which the same tool answered without a fault; extra calls = for each recovered call, that \
     tool's calls up to the answer; calls met = calls a fault met; retried = of those, calls the agent made again \
     (retries of a fault never recovered from included)\n";

/// The report of a run's episodes, pass^k at `k` (the number of trials),
/// infrastructure errors counted as `conv` says and infeasible episodes as
/// `population` says (both always shown), each rate with its ceiling.
///
/// Every figure is read from [`summary`], the same computation `report
/// --json` and the HTML page show, so the three cannot disagree.
pub fn render(episodes: &[EpisodeResult], k: u32, conv: InfraConvention, population: Population) -> Result<String, metrics::MetricsError> {
    let summary = summary(episodes, k, episodes.len() as u64, conv, population)?;
    Ok(render_summary(&summary))
}

/// The text of a [`Summary`].
pub fn render_summary(summary: &Summary) -> String {
    let (k, counts) = (summary.k, summary.counts);
    let mut out = String::new();
    let counted = match summary.convention {
        InfraConvention::CountAsFailure => "counted as failures",
        InfraConvention::Exclude => "excluded from the rates",
    };
    let over = match summary.population {
        Population::AllEpisodes => "counted as failures",
        Population::FeasibleOnly => "excluded from the rates",
    };
    let _ = writeln!(
        out,
        "{} episodes, pass^{k} over tasks with 95% Wilson intervals; infrastructure errors: {} ({counted}); \
         infeasible episodes (no agent could pass): {} ({over})",
        counts.recorded, counts.infra_errors, counts.infeasible
    );
    let _ = writeln!(
        out,
        "MDE: the smallest difference from another run of this size detectable at 95% (two-sided) with {:.0}% power, \
         the task as the unit (arcsine test; pass^1 counts trials as far as they disagree within a task)",
        metrics::stats::POWER * 100.0
    );
    if summary.agents.iter().any(|a| a.recovery.hits > 0) {
        out.push_str(FAULT_LEGEND);
    }
    for agent in &summary.agents {
        render_agent(&mut out, agent, k);
    }
    out.push_str(&crate::cost::render_rows(&summary.cost));
    out
}

/// One agent's section of the text report.
fn render_agent(out: &mut String, agent: &AgentSummary, k: u32) {
    let overall = &agent.overall;
    // With one trial pass^k is pass^1: each figure is named once.
    let rates = if k == 1 {
        format!("pass^1 {}", pct(&overall.pass_1))
    } else {
        format!("pass^{k} {}, pass^1 {}", pct(&overall.pass_k), pct(&overall.pass_1))
    };
    let _ = writeln!(
        out,
        "\n== agent {} ({} episodes): {rates}, {} {}, {} {}",
        agent.agent,
        overall.episodes,
        pair_title("ceiling", k),
        ceiling_text(overall, k),
        pair_title("MDE", k),
        mde_text(&overall.pass_1, &overall.pass_k, k)
    );
    for (title, rows, always) in
        [("perturbation ε", &agent.by_epsilon, false), ("fault level λ", &agent.by_lambda, false), ("domain", &agent.by_domain, true)]
    {
        if rows.len() < 2 && !always {
            continue;
        }
        let _ = writeln!(out, "  by {title}:");
        // With one trial the pass^k column would repeat pass^1: it is left out.
        let line = |label: &str, episodes: &str, pass_1: &str, pass_k: &str, ceiling: &str, calls: &str, mde: &str| {
            let pass_k = if k == 1 { String::new() } else { format!("{pass_k:<22} ") };
            format!("    {label:<12} {episodes:>8}  {pass_1:<22} {pass_k}{ceiling:<18} {calls:>10}  {mde}")
        };
        let (ceiling_title, mde_title) = (pair_title("ceiling", k), pair_title("MDE", k));
        let _ = writeln!(out, "{}", line("", "episodes", "pass^1", &format!("pass^{k}"), &ceiling_title, "avg calls", &mde_title));
        for row in rows {
            let calls = row.mean_calls.map_or("-".to_owned(), |c| format!("{c:.1}"));
            let ceiling = ceiling_text(row, k);
            let mde = mde_text(&row.pass_1, &row.pass_k, k);
            let _ = writeln!(
                out,
                "{}",
                line(&row.label, &row.episodes.to_string(), &pct(&row.pass_1), &pct(&row.pass_k), &ceiling, &calls, &mde)
            );
        }
        if rows.iter().any(|r| r.label == metrics::NO_LEVEL) {
            let _ = writeln!(
                out,
                "    ({}: episodes whose fault profile has no single level, a MAS-FIRE profile or one from the server's profile file)",
                metrics::NO_LEVEL
            );
        }
    }
    let recovery = &agent.recovery;
    if recovery.injected > 0 {
        let rate = recovery.recovery_rate.value.map_or("n/a".to_owned(), |v| format!("{:.1}%", v * 100.0));
        let extra = recovery.extra_calls_per_fault.map_or("n/a".to_owned(), |v| format!("+{v:.2}"));
        let _ = writeln!(
            out,
            "  fault recovery: {} injected, {} encountered, {} recovered ({rate}), extra calls per fault {extra}; \
             {} calls met, {} retried; MDE {} over {}",
            recovery.injected,
            recovery.encountered,
            recovery.recovered,
            recovery.hits,
            recovery.retried,
            mde_pp(recovery.recovery_rate.mde),
            counted(recovery.encountered, "fault")
        );
    }
    let usage = &agent.usage;
    if usage.episodes_with_tokens > 0 || usage.episodes_with_cost > 0 {
        // A cost no episode reported is unknown (no price set), not zero.
        let cost = match usage.cost_usd {
            Some(cost) => {
                let per_100 = usage.cost_per_100_episodes_usd.map_or(String::new(), |c| format!(" (${c:.4} per 100 episodes)"));
                format!("cost ${cost:.4} over {}{per_100}", usage.episodes_with_cost)
            }
            None => "cost n/a (no episode reported a cost: no price was set)".to_owned(),
        };
        // Tokens no episode reported are unknown (n/a), not zero.
        let tokens = |t: Option<u64>| t.map_or("n/a".to_owned(), |t| t.to_string());
        let _ = writeln!(
            out,
            "  usage: {} input + {} output tokens over {} episodes; {cost}",
            tokens(usage.input_tokens),
            tokens(usage.output_tokens),
            usage.episodes_with_tokens
        );
    }
    if !agent.ablation.is_empty() {
        let _ = writeln!(out, "  fault-type ablation (Table 9; pooled pass rate of the episodes, vs mixed):");
        let _ = writeln!(out, "    {:<24} {:>10} {:>10}", "fault profile", "pass rate", "vs mixed");
        for row in &agent.ablation {
            let value = row.pass.rate.value.map_or("n/a".to_owned(), |v| format!("{:.2}%", v * 100.0));
            let delta = row.vs_baseline.map_or(String::new(), |d| format!("{:+.2}%", d * 100.0));
            let _ = writeln!(out, "    {:<24} {:>10} {:>10}", row.fault_profile, value, delta);
        }
    }
    if let Some(mas) = &agent.mas_fire {
        crate::masfire::render_agent(out, mas);
    }
    if let Some(conversation) = &agent.conversation {
        render_conversation(out, conversation, k);
    }
    out.push_str(&judged_lines("  ", &agent.answer_judges));
    render_surface(out, agent, k);
}

/// The conversational figures: clarification recall and precision, user turns, pass^k beside the tasks in full.
fn render_conversation(out: &mut String, c: &metrics::ConversationFigures, k: u32) {
    let rate = |r: &metrics::Rate| match r.value {
        Some(v) => format!("{:.1}% ({}/{})", v * 100.0, r.successes, r.total),
        None => "n/a".to_owned(),
    };
    let in_full = c.pass_k_in_full.as_ref().map_or("n/a (not played)".to_owned(), pct);
    let _ = writeln!(
        out,
        "  conversation ({} episodes): clarification recall {} (asked when a slot was withheld), precision {} \
         (did not ask when nothing was), {:.2} user turns per episode ({}); pass^{k} {} vs {in_full} given in full",
        c.episodes,
        rate(&c.recall),
        rate(&c.precision),
        c.user_turns_per_episode,
        match c.llm_user_turns {
            0 => "the rule-based user".to_owned(),
            n => format!("{n} answered by an LLM user"),
        },
        pct(&c.pass_k),
    );
}

/// The surface's summary figures: V, the per-cell MDEs, R_fault and R_prompt.
fn render_surface(out: &mut String, agent: &AgentSummary, k: u32) {
    let surface = &agent.surface;
    if surface.epsilons().len() * surface.lambdas().len() < 2 {
        return;
    }
    if let Some(volume) = agent.surface_volume {
        let ks = surface.ks().iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            out,
            "  surface volume V = {:.3} (trapezoid over k ∈ {{{ks}}} and the measured ε, λ; grid mean {:.3})",
            volume.trapezoid, volume.grid_mean
        );
    }
    let cells: Vec<&PassK> = surface.points.iter().filter(|p| p.point.k == k).map(|p| &p.pass).filter(|p| p.value.is_some()).collect();
    let extreme =
        |values: &mut dyn Iterator<Item = f64>| values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (mde_low, mde_high) = extreme(&mut cells.iter().filter_map(|p| p.mde));
    let (tasks_low, tasks_high) = extreme(&mut cells.iter().map(|p| p.tasks as f64));
    if !cells.is_empty() {
        let range = |low: String, high: String| if low == high { low } else { format!("{low}–{high}") };
        let mde = if mde_low.is_finite() { range(pp(mde_low), pp(mde_high)) + " pp" } else { "n/a".to_owned() };
        let _ = writeln!(
            out,
            "  R({k}, ε, λ) per cell: MDE {mde} over {} per cell ({})",
            if tasks_low == tasks_high { counted(tasks_low as u64, "task") } else { format!("{tasks_low}–{tasks_high} tasks") },
            counted(cells.len() as u64, "cell")
        );
    }
    let relative = &agent.relative;
    let ratios = relative.fault.iter().map(|r| ("R_fault", "λ", r)).chain(relative.prompt.iter().map(|r| ("R_prompt", "ε", r)));
    for (name, axis, r) in ratios.filter(|(_, _, r)| r.level != 0.0) {
        let ratio = r.ratio.map_or("n/a".to_owned(), |v| format!("{:.3}", v.to_f64()));
        let _ = writeln!(out, "  {name}({axis} = {}) = {ratio}", r.level);
    }
}

/// A row's ceilings as `pass^1 / pass^k` percentages (the one figure with
/// one trial), with the infeasible count, or `-` when feasibility is unknown.
fn ceiling_text(row: &metrics::BreakdownRow, k: u32) -> String {
    let value = |p: &Option<PassK>| p.as_ref().and_then(|p| p.value).map(|v| format!("{:.1}", v.to_f64() * 100.0));
    match (value(&row.ceiling_1), value(&row.ceiling_k)) {
        (Some(one), Some(_)) if k == 1 => format!("{one}% ({} inf.)", row.infeasible),
        (Some(one), Some(at_k)) => format!("{one}/{at_k}% ({} inf.)", row.infeasible),
        _ => "-".to_owned(),
    }
}

/// Whether a profile name is one of the paper's single-fault ablations.
pub fn is_ablation(profile: &str) -> bool {
    crate::ABLATION_PROFILES.contains(&profile)
}

/// A run's figures for machines: what [`render`] prints, as data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The k of pass^k (the number of trials).
    pub k: u32,
    /// How infrastructure errors count in the figures.
    pub convention: InfraConvention,
    /// Which episodes the rates are over (all, or feasible ones only).
    pub population: Population,
    /// Episodes by outcome.
    pub counts: Counts,
    /// Per agent, in name order.
    pub agents: Vec<AgentSummary>,
    /// Table 10 (tokens, calls, turns, protocol figures, cost), one row per
    /// agent that reported any; not written when none did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cost: Vec<crate::cost::CostRow>,
}

/// Episodes of a run by outcome; `passed + failed + infra_errors = recorded`
/// and `recorded + not_recorded = planned`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Episodes in the plan.
    pub planned: u64,
    /// Episodes recorded (infrastructure errors included).
    pub recorded: u64,
    /// Planned episodes never recorded (the run was interrupted).
    pub not_recorded: u64,
    /// Verdicts that passed.
    pub passed: u64,
    /// Verdicts that failed.
    pub failed: u64,
    /// Episodes that ended in an infrastructure error.
    pub infra_errors: u64,
    /// Recorded episodes no agent could have passed under their fault schedule.
    pub infeasible: u64,
}

/// One agent's figures (Tables 5–9).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentSummary {
    /// The agent's label.
    pub agent: String,
    /// Over all its episodes.
    pub overall: metrics::BreakdownRow,
    /// By perturbation level ε (Table 5).
    pub by_epsilon: Vec<metrics::BreakdownRow>,
    /// By fault level λ.
    pub by_lambda: Vec<metrics::BreakdownRow>,
    /// By domain (Table 7).
    pub by_domain: Vec<metrics::BreakdownRow>,
    /// By fault profile.
    pub by_fault_profile: Vec<metrics::BreakdownRow>,
    /// pass^1 and pass^k per (ε, λ) cell of the main grid ([`in_main_grid`]).
    pub surface: metrics::Surface,
    /// The surface's volume over k ∈ {1, k} and the measured ε, λ, when the
    /// grid has more than one (ε, λ) cell.
    pub surface_volume: Option<metrics::SurfaceVolume>,
    /// R_fault and R_prompt at pass^k.
    pub relative: metrics::RelativeReliability,
    /// Fault recovery (Table 8).
    pub recovery: metrics::FaultRecovery,
    /// Each fault profile against `mixed` (Table 9); empty without a `mixed` profile.
    pub ablation: Vec<metrics::AblationRow>,
    /// Tokens and cost, over the episodes whose agent reported them (Table 10).
    pub usage: metrics::UsageTotals,
    /// MAS-FIRE's tables, when the agent ran under MAS-FIRE profiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mas_fire: Option<crate::masfire::MasFireSummary>,
    /// Conversational figures, when the agent played conversational tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation: Option<metrics::ConversationFigures>,
    /// Episodes whose prose answer an answer judge ruled on, by judge (e.g.
    /// `model gpt-4o-mini`); the rule-based reader or the typed fields
    /// judged every other answer. Not written when empty.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub answer_judges: BTreeMap<String, u64>,
}

/// Episodes whose prose answer an answer judge ruled on, by judge.
pub fn answer_judges<'a>(episodes: impl Iterator<Item = &'a EpisodeResult>) -> BTreeMap<String, u64> {
    episodes.filter_map(|e| e.answer_judge.clone()).fold(BTreeMap::new(), |mut judges, judge| {
        *judges.entry(judge).or_insert(0) += 1;
        judges
    })
}

/// A line per answer judge ([`answer_judges`]), each after `indent`.
pub fn judged_lines(indent: &str, judges: &BTreeMap<String, u64>) -> String {
    judges
        .iter()
        .map(|(judge, n)| {
            format!(
                "{indent}answers judged by {judge}: {} (every other answer by the rule-based reader or its typed fields)\n",
                counted(*n, "episode")
            )
        })
        .collect()
}

/// Whether an episode is a point of the main (ε, λ) grid the surface is
/// drawn over: not a fault-type ablation, not a MAS-FIRE profile, and at a
/// numeric ε and λ (a named profile has no single λ).
pub fn in_main_grid(e: &EpisodeResult) -> bool {
    !is_ablation(&e.fault_profile) && !crate::masfire::is_mas(&e.fault_profile) && e.epsilon.is_finite() && e.lambda.is_finite()
}

/// The summary of a run's recorded episodes, of which `planned` were
/// planned, infrastructure errors counted as `conv` says and infeasible
/// episodes as `population` says.
pub fn summary(
    episodes: &[EpisodeResult],
    k: u32,
    planned: u64,
    conv: InfraConvention,
    population: Population,
) -> Result<Summary, metrics::MetricsError> {
    let count = |outcome: fn(&metrics::EpisodeOutcome) -> bool| episodes.iter().filter(|e| outcome(&e.outcome)).count() as u64;
    let counts = Counts {
        planned,
        recorded: episodes.len() as u64,
        not_recorded: planned.saturating_sub(episodes.len() as u64),
        passed: count(|o| *o == metrics::EpisodeOutcome::Passed),
        failed: count(|o| *o == metrics::EpisodeOutcome::Failed),
        infra_errors: count(|o| matches!(o, metrics::EpisodeOutcome::InfraError(_))),
        infeasible: episodes.iter().filter(|e| e.feasible == Some(false)).count() as u64,
    };
    let selected = population.select(episodes);
    let episodes = &*selected;
    let mut agents = Vec::new();
    for overall in metrics::breakdown(episodes, Breakdown::Agent, k, conv)? {
        let mine: Vec<&EpisodeResult> = episodes.iter().filter(|e| e.agent == overall.label).collect();
        let by = |by| metrics::breakdown(mine.iter().copied(), by, k, conv);
        let main_grid = mine.iter().copied().filter(|e| in_main_grid(e));
        let surface = metrics::reliability_surface(main_grid, &[1, k], conv)?;
        let cells = surface.epsilons().len() * surface.lambdas().len();
        let with_mixed = mine.iter().any(|e| e.fault_profile == "mixed");
        agents.push(AgentSummary {
            agent: overall.label.clone(),
            by_epsilon: by(Breakdown::Epsilon)?,
            by_lambda: by(Breakdown::Lambda)?,
            by_domain: by(Breakdown::Domain)?,
            by_fault_profile: by(Breakdown::FaultProfile)?,
            surface_volume: if cells > 1 { metrics::surface_volume(&surface) } else { None },
            relative: metrics::relative_reliability(&surface, k),
            surface,
            recovery: metrics::fault_recovery(mine.iter().copied()),
            ablation: if with_mixed { metrics::ablation(mine.iter().copied(), "mixed", conv) } else { Vec::new() },
            usage: metrics::usage_totals(mine.iter().copied()),
            mas_fire: crate::masfire::summary(&mine, conv)?,
            conversation: metrics::conversation_figures(&mine, k, conv)?,
            answer_judges: answer_judges(mine.iter().copied()),
            overall,
        });
    }
    Ok(Summary { k, convention: conv, population, counts, agents, cost: crate::cost::table(episodes) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::EpisodeOutcome;
    use crate::metrics::tests::episode;

    #[test]
    fn counted_says_one_in_the_singular() {
        assert_eq!(counted(1u64, "infrastructure error"), "1 infrastructure error");
        assert_eq!(counted(0u64, "task"), "0 tasks");
        assert_eq!(counted(20u32, "task"), "20 tasks");
        assert_eq!(mde_pp(None), "n/a");
        assert_eq!(mde_pp(Some(0.081)), "±8.1 pp");
    }

    #[test]
    fn infrastructure_errors_are_counted_either_way_and_excluded_on_request() {
        let mut episodes = vec![
            episode("travel/x/001", 0, EpisodeOutcome::Passed),
            episode("travel/x/001", 1, EpisodeOutcome::InfraError("server gone".into())),
            episode("travel/y/002", 0, EpisodeOutcome::Failed),
            episode("travel/y/002", 1, EpisodeOutcome::Failed),
        ];
        episodes[0].tokens = Some(metrics::TokenUsage { input: 120, output: 30 });
        episodes[0].cost_usd = Some(0.5);
        let counted = render(&episodes, 1, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
        let excluded = render(&episodes, 1, InfraConvention::Exclude, Population::AllEpisodes).unwrap();
        assert!(counted.contains("infrastructure errors: 1 (counted as failures)"), "{counted}");
        assert!(excluded.contains("infrastructure errors: 1 (excluded from the rates)"), "{excluded}");
        // pass^1: (1/2 + 0) / 2 with the error as a failure; (1/1 + 0) / 2 without it.
        assert!(counted.contains("pass^1 25.0%"), "{counted}");
        assert!(excluded.contains("pass^1 50.0%"), "{excluded}");
        assert!(counted.contains("usage: 120 input + 30 output tokens over 1 episodes; cost $0.5000 over 1"), "{counted}");

        let summary = summary(&episodes, 1, 6, InfraConvention::Exclude, Population::AllEpisodes).unwrap();
        assert_eq!(summary.convention, InfraConvention::Exclude);
        let counts = summary.counts;
        assert_eq!((counts.planned, counts.recorded, counts.not_recorded, counts.infra_errors), (6, 4, 2, 1));
        assert_eq!(summary.agents[0].usage.input_tokens, Some(120));

        // Tokens but no price: the cost is n/a in the text and null in the JSON, never $0.
        episodes[0].cost_usd = None;
        let text = render(&episodes, 1, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
        assert!(text.contains("over 1 episodes; cost n/a (no episode reported a cost: no price was set)"), "{text}");
        assert!(!text.contains("$0.0000"), "{text}");
        let unpriced = super::summary(&episodes, 1, 4, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
        let json = serde_json::to_value(&unpriced).unwrap();
        assert_eq!(json["agents"][0]["usage"]["cost_usd"], serde_json::Value::Null);
        assert_eq!(json["cost"][0]["usage"]["cost_usd"], serde_json::Value::Null);
    }

    #[test]
    fn ceilings_and_the_feasible_population() {
        // Task a: 4 trials, one infeasible (and failed), two passed. Task b: all feasible, one passed.
        let mut episodes = crate::metrics::tests::task("travel/a/001", 2, 4);
        episodes.extend(crate::metrics::tests::task("travel/b/002", 1, 4));
        for e in &mut episodes {
            e.feasible = Some(!(e.task_id == "travel/a/001" && e.trial == 3));
        }
        let rows = metrics::breakdown(&episodes, Breakdown::Agent, 1, InfraConvention::CountAsFailure).unwrap();
        let ceiling = rows[0].ceiling_1.as_ref().and_then(|p| p.value).unwrap();
        assert_eq!(ceiling, crate::metrics::tests::r(7, 8), "mean of 3/4 and 4/4");
        assert_eq!(rows[0].infeasible, 1);
        assert_eq!(rows[0].pass_1.value, Some(crate::metrics::tests::r(3, 8)));
        // Over feasible episodes only, task a has 3 trials, two passed.
        let feasible = summary(&episodes, 1, 8, InfraConvention::CountAsFailure, Population::FeasibleOnly).unwrap();
        assert_eq!(feasible.counts.infeasible, 1);
        assert_eq!(feasible.agents[0].overall.pass_1.value, Some(crate::metrics::tests::r(11, 24)), "mean of 2/3 and 1/4");
        let text = render(&episodes, 1, InfraConvention::CountAsFailure, Population::FeasibleOnly).unwrap();
        assert!(text.contains("infeasible episodes (no agent could pass): 1 (excluded from the rates)"), "{text}");
        assert!(text.contains("100.0% (0 inf.)"), "{text}");
        let text = render(&episodes, 1, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
        assert!(text.contains("ceiling ^1 87.5% (1 inf.)"), "{text}");
        // With one trial each figure is named once: no "pass^1 …, pass^1 …", no "^1/^1".
        assert!(
            !text.contains("^1/^1") && text.matches("pass^1").count() == text.lines().filter(|l| l.contains("pass^1")).count(),
            "{text}"
        );
        let four = render(&episodes, 4, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
        assert!(four.contains("pass^4 ") && four.contains("pass^1 ") && four.contains("ceiling ^1/^4 87.5/"), "{four}");
        // Unknown feasibility (runs recorded before it was decided) has no ceiling.
        episodes.iter_mut().for_each(|e| e.feasible = None);
        let rows = metrics::breakdown(&episodes, Breakdown::Agent, 1, InfraConvention::CountAsFailure).unwrap();
        assert_eq!((rows[0].ceiling_1.clone(), rows[0].infeasible), (None, 0));
    }
}
