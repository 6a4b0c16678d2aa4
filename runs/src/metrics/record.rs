//! The episode record every metric computes from ([`EpisodeResult`]), in
//! domain terms: the task's [`Domain`], the fault ledger keyed by
//! [`FaultKind`], λ as a number. Records are made in two places only: from a
//! domain [`Trajectory`] ([`EpisodeResult::from_trajectory`], in process)
//! and from its wire form ([`EpisodeResult::from_wire`], the one conversion
//! from `toolenv.v1`); the per-kind ledger of both is the engine's
//! [`fault_ledger`] over the same [`LedgerCall`]s, whose sums are the
//! verdict's totals (the ledger is defined there, and nowhere else).
//!
//! A record is stored as JSON (the store's `result` column, the export's
//! `result`); its serde form is the one written since the first stored runs:
//! the domain and the fault kinds by name, an unknown λ as `null`. A per-kind
//! ledger written before `recovered` was counted over encountered calls only
//! is read with its figures restated (see `kinds_by_name`).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use toolenv::pb;
use toolenv_core::{Domain, Trajectory, chaos::FaultKind};
pub use toolenv_core::{KindCounts, LedgerCall, LedgerReply, fault_ledger};

use crate::PlannedEpisode;

/// How an episode ended, for the metrics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EpisodeOutcome {
    /// The oracle's verdict passed.
    Passed,
    /// The oracle's verdict failed.
    Failed,
    /// The episode did not reach a verdict for a reason outside the agent
    /// (server unreachable, episode lost, worker crash), with that reason.
    InfraError(String),
}

/// The fault ledger's totals for one episode (the verdict's `fault_stats`,
/// [`toolenv_core::FaultStats`]): the sums of its per-kind ledger.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCounts {
    /// Faults injected: calls where a fault was newly drawn and took effect
    /// (calls a persistent fault state carried over not counted).
    pub injected: u32,
    /// Calls answered with an explicit error status (timeouts, resets, rate
    /// limits, suspensions, outages, lost replies): the paper's "faults
    /// encountered".
    pub encountered: u32,
    /// Encountered calls after which a later call of the same tool got an
    /// answer without a fault.
    pub recovered: u32,
    /// For each recovered call, the calls of the same tool after it up to and
    /// including the answered one (a refusal never got past adds none).
    pub extra_calls: u32,
}

impl From<toolenv_core::FaultStats> for FaultCounts {
    fn from(stats: toolenv_core::FaultStats) -> Self {
        FaultCounts { injected: stats.injected, encountered: stats.encountered, recovered: stats.recovered, extra_calls: stats.extra_calls }
    }
}

/// Tokens an agent reported with its finish call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Prompt (input) tokens.
    pub input: u64,
    /// Completion (output) tokens.
    pub output: u64,
}

/// A built-in LLM agent's protocol figures for one episode, from the
/// conversation in its trajectory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmCounts {
    /// Chat-completion requests answered (model turns).
    pub model_turns: u32,
    /// Tool calls made through the API's native `tool_calls`.
    pub native_calls: u32,
    /// Tool calls written as text (fenced or bare JSON, `Action:` lines).
    pub text_form_calls: u32,
    /// Replies meant as a call that could not be read: agent protocol errors.
    pub protocol_errors: u32,
    /// Episodes whose conversation outgrew the model's context (0 or 1 for
    /// one episode).
    #[serde(default)]
    pub context_exhausted: u32,
}

/// One episode, as the metrics see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeResult {
    /// The task played, e.g. `travel/cheapest-flight/003`.
    pub task_id: String,
    /// The task's domain; `None` for a task the suite does not know (which
    /// no server plays). Stored by name.
    #[serde(with = "domain_by_name")]
    pub domain: Option<Domain>,
    /// The agent's label in the run.
    pub agent: String,
    /// The perturbation level ε.
    pub epsilon: f64,
    /// The fault intensity λ of the fault profile, as the plan resolved it
    /// ([`crate::lambda_of`]): the preset's level, 0.2 for the paper's
    /// ablations. NaN when unknown (a custom profile), which JSON writes as
    /// null and reads back as NaN.
    #[serde(deserialize_with = "nan_if_null")]
    pub lambda: f64,
    /// The fault profile's name, e.g. `0.2`, `timeout-only`, `mixed`.
    pub fault_profile: String,
    /// The trial index.
    pub trial: u32,
    /// The episode's seed: with the task, the unit of pass^k (a grid may draw
    /// several perturbation samples per task). Not written when 0, as
    /// records stored before it was kept read back.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed: u64,
    /// How the episode ended.
    pub outcome: EpisodeOutcome,
    /// The fault ledger's totals.
    pub fault_stats: FaultCounts,
    /// The fault ledger by fault kind; empty when unknown or when no fault
    /// met the episode. Stored by kind name, in name order.
    #[serde(default, with = "kinds_by_name")]
    pub faults_by_kind: BTreeMap<FaultKind, KindCounts>,
    /// Tokens, when the agent reported them.
    #[serde(default)]
    pub tokens: Option<TokenUsage>,
    /// Cost in US dollars, when the agent reported it.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Tool calls that reached the episode.
    pub calls: u32,
    /// Whether an ideal agent could still have passed the episode under its
    /// fault schedule (the verdict's feasibility); `None` when unknown (an
    /// infrastructure error, a run recorded before feasibility was decided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feasible: Option<bool>,
    /// A built-in LLM agent's protocol figures; `None` for other agents
    /// (and not written, so their records keep their shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmCounts>,
    /// What became of each MAS-FIRE fault injected (detected, fixed), from
    /// the verdict; empty for an episode without any. Not written when
    /// empty, so records stored before it read back and write the same bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mas_faults: Vec<toolenv_core::masfire::MasOutcome>,
    /// Calls of `ask_user`: the agent's turns with the simulated user. Not
    /// written when 0, so records without any keep their shape.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub user_turns: u32,
    /// Of those, the turns an LLM user answered (its answer supplied to the
    /// episode) rather than the task's rule-based user. Not written when 0.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub llm_user_turns: u32,
    /// The answer judge that ruled on the episode's prose answer (e.g.
    /// `model gpt-4o-mini`); `None` when no judge did (the rule-based
    /// reader or typed fields judged, or no answer was asked for). Not
    /// written when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_judge: Option<String>,
}

/// Why a wire trajectory could not be read into a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// A call's fault names a kind this version does not know.
    #[error("call {index}: unknown fault kind '{kind}'")]
    UnknownFaultKind {
        /// The call's index.
        index: u32,
        /// The name as sent.
        kind: String,
    },
}

impl EpisodeResult {
    /// The record of a planned episode with the given outcome and nothing
    /// else measured yet: the run's labels (agent, fault profile, λ) and the
    /// episode's parameters, the domain from the task.
    pub fn planned(planned: &PlannedEpisode, outcome: EpisodeOutcome) -> Self {
        let request = &planned.request;
        EpisodeResult {
            task_id: request.task_id.clone(),
            domain: toolenv_domains::generate::domain_of(&request.task_id),
            agent: planned.agent.clone(),
            epsilon: request.epsilon,
            lambda: planned.lambda,
            fault_profile: planned.fault_profile.clone(),
            trial: request.trial,
            seed: request.seed,
            outcome,
            fault_stats: FaultCounts::default(),
            faults_by_kind: BTreeMap::new(),
            tokens: None,
            cost_usd: None,
            calls: 0,
            feasible: None,
            llm: None,
            mas_faults: Vec::new(),
            user_turns: 0,
            llm_user_turns: 0,
            answer_judge: None,
        }
    }

    /// The record of a planned episode from its domain trajectory (played in
    /// process). The outcome is the verdict's, or an infrastructure error
    /// when the trajectory has none; tokens and cost are left empty.
    pub fn from_trajectory(planned: &PlannedEpisode, trajectory: &Trajectory) -> Self {
        let outcome = match &trajectory.verdict {
            Some(verdict) if verdict.passed => EpisodeOutcome::Passed,
            Some(_) => EpisodeOutcome::Failed,
            None => no_verdict(),
        };
        let calls: Vec<LedgerCall<'_>> = trajectory.calls.iter().map(LedgerCall::from).collect();
        EpisodeResult {
            fault_stats: trajectory.verdict.as_ref().map(|v| v.fault_stats.into()).unwrap_or_default(),
            feasible: trajectory.verdict.as_ref().and_then(|v| v.feasible),
            mas_faults: trajectory.verdict.as_ref().map(|v| v.mas_faults.clone()).unwrap_or_default(),
            llm_user_turns: trajectory.calls.iter().filter(|c| c.user_answer().is_some()).count() as u32,
            answer_judge: trajectory.answer_ruling.as_ref().map(|r| r.judge.clone()),
            ..EpisodeResult::played(planned, trajectory.epsilon, trajectory.trial, outcome, &calls)
        }
    }

    /// The record of a planned episode from its trajectory as the wire
    /// carries it: the one conversion from `toolenv.v1` to the record. The
    /// outcome is the verdict's, or an infrastructure error when the
    /// trajectory has none; tokens and cost are the usage the agent reported.
    pub fn from_wire(planned: &PlannedEpisode, trajectory: &pb::Trajectory) -> Result<Self, WireError> {
        let outcome = match &trajectory.verdict {
            Some(verdict) if verdict.passed => EpisodeOutcome::Passed,
            Some(_) => EpisodeOutcome::Failed,
            None => no_verdict(),
        };
        let calls = ledger_calls(trajectory)?;
        let stats = trajectory.verdict.as_ref().and_then(|v| v.fault_stats);
        Ok(EpisodeResult {
            fault_stats: stats
                .map(|s| FaultCounts {
                    injected: s.injected,
                    encountered: s.encountered,
                    recovered: s.recovered,
                    extra_calls: s.extra_calls,
                })
                .unwrap_or_default(),
            tokens: trajectory.usage.map(|u| TokenUsage { input: u.input_tokens, output: u.output_tokens }),
            cost_usd: trajectory.usage.and_then(|u| u.cost_usd),
            llm: trajectory.conversation.as_ref().map(|c| LlmCounts {
                model_turns: c.model_turns,
                native_calls: c.native_calls,
                text_form_calls: c.text_form_calls,
                protocol_errors: c.protocol_errors,
                context_exhausted: u32::from(c.context_exhausted),
            }),
            feasible: trajectory.verdict.as_ref().and_then(|v| v.feasible),
            llm_user_turns: trajectory.calls.iter().filter(|c| c.user_answer.is_some()).count() as u32,
            answer_judge: trajectory.answer_ruling.as_ref().map(|r| r.judge.clone()),
            mas_faults: trajectory
                .verdict
                .as_ref()
                .map(|v| v.mas_faults.iter().filter_map(pb::MasFaultOutcome::to_domain).collect())
                .unwrap_or_default(),
            ..EpisodeResult::played(planned, trajectory.epsilon, trajectory.trial, outcome, &calls)
        })
    }

    /// The parts both trajectory shapes give alike.
    fn played(planned: &PlannedEpisode, epsilon: f64, trial: u32, outcome: EpisodeOutcome, calls: &[LedgerCall<'_>]) -> Self {
        EpisodeResult {
            epsilon,
            trial,
            faults_by_kind: fault_ledger(calls),
            calls: u32::try_from(calls.len()).unwrap_or(u32::MAX),
            user_turns: calls.iter().filter(|c| c.tool == toolenv_core::bus::ASK_USER).count() as u32,
            ..EpisodeResult::planned(planned, outcome)
        }
    }

    /// Whether the episode ended in an infrastructure error.
    pub fn is_infra_error(&self) -> bool {
        matches!(self.outcome, EpisodeOutcome::InfraError(_))
    }

    /// The domain's name for reports; `unknown` for a task the suite does not know.
    pub fn domain_name(&self) -> &'static str {
        self.domain.map_or("unknown", Domain::name)
    }
}

fn is_zero(seed: &u64) -> bool {
    *seed == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn no_verdict() -> EpisodeOutcome {
    EpisodeOutcome::InfraError("episode has no verdict".to_owned())
}

/// What the fault ledger reads of a wire trajectory's calls: the one
/// conversion of `toolenv.v1` calls to [`LedgerCall`]s, for records and for
/// anything else that shows a wire trajectory's ledger (`toolenv play`).
pub fn ledger_calls(trajectory: &pb::Trajectory) -> Result<Vec<LedgerCall<'_>>, WireError> {
    use pb::tool_call_record::Outcome as Wire;
    trajectory
        .calls
        .iter()
        .map(|call| {
            let fault = match &call.fault {
                None => None,
                Some(fault) => Some((
                    FaultKind::parse(&fault.kind)
                        .ok_or_else(|| WireError::UnknownFaultKind { index: call.index, kind: fault.kind.clone() })?,
                    fault.new,
                )),
            };
            let reply = match &call.outcome {
                Some(Wire::Failure(_)) => LedgerReply::Failure,
                Some(Wire::ResultJson(_) | Wire::Error(_)) => LedgerReply::Answer,
                Some(Wire::RawResult(_) | Wire::Invalid(_)) | None => LedgerReply::Other,
            };
            Ok(LedgerCall { tool: &call.tool_name, fault, reply })
        })
        .collect()
}

/// Reads a number, or null (how JSON writes NaN) as NaN.
fn nan_if_null<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// A domain as its name; `None` as null, and a name this version does not
/// know read as `None`.
mod domain_by_name {
    use super::*;

    pub(super) fn serialize<S: Serializer>(domain: &Option<Domain>, serializer: S) -> Result<S::Ok, S::Error> {
        domain.map(Domain::name).serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Domain>, D::Error> {
        Ok(Option::<String>::deserialize(deserializer)?.and_then(|name| toolenv_domains::registry::parse(&name)))
    }
}

/// The per-kind ledger as an object keyed by kind name, in name order.
mod kinds_by_name {
    use serde::de::Error as _;

    use super::*;

    pub(super) fn serialize<S: Serializer>(ledger: &BTreeMap<FaultKind, KindCounts>, serializer: S) -> Result<S::Ok, S::Error> {
        ledger.iter().map(|(kind, counts)| (kind.name(), counts)).collect::<BTreeMap<_, _>>().serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<FaultKind, KindCounts>, D::Error> {
        BTreeMap::<String, Stored>::deserialize(deserializer)?
            .into_iter()
            .map(|(name, counts)| {
                FaultKind::parse(&name)
                    .map(|kind| (kind, counts.into()))
                    .ok_or_else(|| D::Error::custom(format!("unknown fault kind '{name}'")))
            })
            .collect()
    }

    /// A kind's ledger as stored: the current form, or the one written
    /// before `recovered` was counted over encountered calls only (no
    /// `answered_after`, no `extra_calls`).
    #[derive(Deserialize)]
    struct Stored {
        hits: u32,
        injected: u32,
        encountered: u32,
        retried: u32,
        recovered: u32,
        #[serde(default)]
        extra_calls: u32,
        answered_after: Option<u32>,
    }

    impl From<Stored> for KindCounts {
        fn from(s: Stored) -> Self {
            let Stored { hits, injected, encountered, retried, recovered, extra_calls, answered_after } = s;
            let (recovered, answered_after) = match answered_after {
                Some(answered_after) => (recovered, answered_after),
                // The older `recovered` counted every hit later answered: that is
                // `answered_after`. A kind's hits are all refused (a stop, a lost
                // reply) or none are (an altered reply), so its part over the
                // encountered hits is all of it or nothing; the per-kind extra
                // calls were not kept (see `faults::fault_recovery`).
                None if encountered == hits => (recovered, recovered),
                None if encountered == 0 => (0, recovered),
                None => (recovered.min(encountered), recovered),
            };
            KindCounts { hits, injected, encountered, retried, recovered, extra_calls, answered_after }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use toolenv_core::Episode;
    use toolenv_core::chaos::{Chaos, FaultProfile};
    use toolenv_domains::Finish;

    use super::*;
    use crate::metrics::tests::episode;

    fn planned(task_id: &str) -> PlannedEpisode {
        PlannedEpisode {
            agent: "react".to_owned(),
            request: pb::CreateEpisodeRequest { task_id: task_id.to_owned(), trial: 2, epsilon: 0.1, ..Default::default() },
            fault_profile: "0.2".to_owned(),
            lambda: 0.2,
        }
    }

    fn call(index: u32, tool: &str, fault: Option<(&str, bool)>, outcome: pb::tool_call_record::Outcome) -> pb::ToolCallRecord {
        pb::ToolCallRecord {
            index,
            tool_name: tool.to_owned(),
            outcome: Some(outcome),
            fault: fault.map(|(kind, new)| pb::FaultRecord { kind: kind.to_owned(), new, recoverable: true }),
            ..Default::default()
        }
    }

    #[test]
    fn ledger_by_kind_from_a_wire_trajectory() {
        use FaultKind::*;
        use pb::tool_call_record::Outcome as O;
        let failure = || O::Failure(pb::Failure::default());
        let ok = || O::ResultJson("{}".to_owned());
        // 0 search: SoftRateLimit (new), failure   → retried (1), recovered at 2: 2 extra calls
        // 1 search: SoftRateLimit (carried), failure → retried (2), recovered at 2: 1 extra call
        // 2 search: clean result
        // 3 book:   PartialResponse, cut payload    → retried (5), not answered after (5 faulted), not encountered
        // 4 get:    HighLatency, correct result     → never called again
        // 5 book:   TransientTimeout, failure       → last call
        let calls = vec![
            call(0, "search", Some(("SoftRateLimit", true)), failure()),
            call(1, "search", Some(("SoftRateLimit", false)), failure()),
            call(2, "search", None, ok()),
            call(3, "book", Some(("PartialResponse", true)), O::RawResult("{\"id".to_owned())),
            call(4, "get", Some(("HighLatency", true)), ok()),
            call(5, "book", Some(("TransientTimeout", true)), failure()),
        ];
        let trajectory = pb::Trajectory {
            task_id: "travel/cheapest-flight/003".to_owned(),
            trial: 2,
            epsilon: 0.1,
            calls,
            verdict: Some(pb::Verdict {
                passed: true,
                fault_stats: Some(pb::FaultStats { injected: 4, encountered: 3, recovered: 2, extra_calls: 3 }),
                ..Default::default()
            }),
            usage: Some(pb::Usage { input_tokens: 10, output_tokens: 4, cost_usd: Some(0.5) }),
            ..Default::default()
        };
        let e = EpisodeResult::from_wire(&planned(&trajectory.task_id), &trajectory).unwrap();
        let got: Vec<_> = e
            .faults_by_kind
            .iter()
            .map(|(k, c)| (*k, [c.hits, c.injected, c.encountered, c.retried, c.recovered, c.extra_calls, c.answered_after]))
            .collect();
        assert_eq!(
            got,
            [
                (TransientTimeout, [1, 1, 1, 0, 0, 0, 0]),
                (HighLatency, [1, 1, 0, 0, 0, 0, 0]),
                (SoftRateLimit, [2, 1, 2, 2, 2, 3, 2]),
                (PartialResponse, [1, 1, 0, 1, 0, 0, 0]),
            ]
        );
        // The kinds sum to the verdict's totals.
        let sums = toolenv_core::FaultStats::of_kinds(e.faults_by_kind.values());
        assert_eq!(FaultCounts::from(sums), e.fault_stats);
        assert_eq!(
            (e.domain, e.agent.as_str(), e.fault_profile.as_str(), e.trial, e.calls),
            (Some(toolenv_domains::registry::TRAVEL), "react", "0.2", 2, 6)
        );
        assert_eq!((e.epsilon, e.lambda, &e.outcome), (0.1, 0.2, &EpisodeOutcome::Passed));
        assert_eq!(e.fault_stats, FaultCounts { injected: 4, encountered: 3, recovered: 2, extra_calls: 3 });
        assert_eq!((e.tokens, e.cost_usd), (Some(TokenUsage { input: 10, output: 4 }), Some(0.5)));
        // No verdict: an infrastructure error.
        let unfinished = EpisodeResult::from_wire(&planned(&trajectory.task_id), &pb::Trajectory { verdict: None, ..trajectory.clone() });
        assert!(unfinished.unwrap().is_infra_error());
        // A fault kind this version does not know is an error, not a silent skip.
        let mut unknown = trajectory;
        unknown.calls[4].fault = Some(pb::FaultRecord { kind: "Gremlins".to_owned(), new: true, recoverable: true });
        assert_eq!(
            EpisodeResult::from_wire(&planned("travel/cheapest-flight/003"), &unknown),
            Err(WireError::UnknownFaultKind { index: 4, kind: "Gremlins".to_owned() })
        );
        assert!(fault_ledger(&[]).is_empty());
    }

    #[test]
    fn the_wire_and_the_domain_trajectory_give_the_same_record() {
        // Heavy faults and random calls, so that every ledger column is exercised.
        let mut kinds_seen = 0;
        for task in toolenv_domains::suite() {
            let profile = FaultProfile::preset("0.3").unwrap();
            let mut episode = Episode::new(task, 11, 1).with_chaos(Chaos::new(profile).unwrap());
            for call in toolenv_domains::agent::random_calls(task, 11, 40) {
                let arguments = call.arguments.to_string();
                let _ = episode.call(call.tool, &arguments);
                let _ = episode.call(call.tool, &arguments);
            }
            episode.finish();
            let trajectory = episode.trajectory();
            let planned = PlannedEpisode { fault_profile: "0.3".to_owned(), lambda: 0.3, ..planned(&task.id) };
            let from_domain = EpisodeResult::from_trajectory(&planned, trajectory);
            let from_wire = EpisodeResult::from_wire(&planned, &pb::Trajectory::from(trajectory)).unwrap();
            assert_eq!(from_wire, from_domain, "{}", task.id);
            assert_eq!(from_domain.domain, Some(task.domain));
            assert!(from_domain.calls > 0);
            kinds_seen += from_domain.faults_by_kind.len();
        }
        assert!(kinds_seen > 20, "{kinds_seen}");
    }

    #[test]
    fn episode_results_round_trip_through_json() {
        let mut e = episode("travel/x/001", 1, EpisodeOutcome::InfraError("worker crashed".into()));
        e.faults_by_kind.insert(
            toolenv_core::chaos::FaultKind::SoftRateLimit,
            KindCounts { hits: 2, injected: 1, encountered: 2, retried: 2, recovered: 2, extra_calls: 3, answered_after: 2 },
        );
        e.tokens = Some(TokenUsage { input: 10, output: 5 });
        let json = serde_json::to_string(&e).unwrap();
        assert!(json.contains(r#""outcome":{"infra_error":"worker crashed"}"#), "{json}");
        assert_eq!(serde_json::from_str::<EpisodeResult>(&json).unwrap(), e);
    }
}
