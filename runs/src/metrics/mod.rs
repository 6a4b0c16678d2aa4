//! Metrics of a run: pure functions from per-episode records to the figures
//! a report shows (ReliabilityBench §3.2–3.3 and Tables 5–10, MAS-FIRE §3.3).
//!
//! The input is one [`EpisodeResult`] per episode: a plain, serializable
//! record in domain terms (the task's domain, fault kinds, λ as a number),
//! built from a trajectory in one place ([`record`]:
//! [`EpisodeResult::from_wire`] and [`EpisodeResult::from_trajectory`]). Nothing here does I/O or reads a
//! clock; every grouping uses ordered maps, so the same records (in any
//! order) give the same report. Empty input gives empty results or `None`,
//! never a panic.
//!
//! - Consistency ([`pass_k`]): [`pass_hat_k`] (pass^k, the unbiased
//!   estimator mean_t C(c_t, k)/C(n_t, k) in exact rationals) and
//!   [`pass_at_k`], with a selectable [`InfraConvention`]; infrastructure
//!   errors are always counted in the result. [`breakdown`] gives them per
//!   agent, domain, ε, λ or fault profile ([`breakdowns`], Tables 5–7).
//! - The reliability surface ([`surface`]): R(k, ε, λ) over the measured
//!   grid, its volume, degradation gradient, critical threshold, and
//!   R_fault / R_prompt.
//! - Faults ([`faults`]): recovery statistics (Table 8), the per-fault-profile
//!   ablation (Table 9), and MAS-FIRE's RS_f, O_f, L_f, S_f.
//! - [`usage_totals`] ([`usage`]): tokens and cost when agents report them
//!   (Table 10).
//! - [`conversation_figures`] ([`conversation`]): clarification recall and
//!   precision, user turns, pass^k of conversational tasks beside the same
//!   tasks given in full.
//! - Every rate carries a 95 % Wilson score interval ([`rates`]: [`wilson`],
//!   [`Rate`]); [`stats`] says how far a figure can be trusted and when two
//!   agents really differ.
//!
//! Units of consistency: a *task* in pass^k is one task under one
//! configuration — the same agent, ε, λ and fault profile — and its trials
//! are the episodes that differ only in the trial index. pass^k asks whether
//! repeated runs of the same thing agree, so trials of different
//! configurations are never pooled.
//!
//! This module holds what the others share: the infrastructure-error
//! convention, the population the rates are over, the error, and the key
//! that orders levels.

pub mod breakdowns;
pub mod conversation;
pub mod faults;
pub mod pass_k;
pub mod rates;
mod ratio;
pub mod record;
pub mod stats;
pub mod surface;
pub mod usage;

use serde::{Deserialize, Serialize};

pub use breakdowns::{Breakdown, BreakdownRow, NO_LEVEL, breakdown};
pub use conversation::{ConversationFigures, conversation_figures};
pub use faults::{
    AblationRow, FaultRecovery, FaultTolerance, FaultToleranceReport, RobustnessScore, ablation, fault_recovery, fault_tolerance,
    robustness_scores,
};
pub(crate) use pass_k::Tally;
pub use pass_k::{Estimator, PassK, ceiling, pass_at_k, pass_hat_k, task_pass_at_k, task_pass_hat_k};
pub use rates::{PassRate, Rate, pass_rate};
pub use ratio::{Ratio, binomial, gcd};
pub use record::{
    EpisodeOutcome, EpisodeResult, FaultCounts, KindCounts, LedgerCall, LedgerReply, LlmCounts, TokenUsage, WireError, fault_ledger,
    ledger_calls,
};
pub use stats::{Interval, Z_95, wilson};
pub use surface::{
    Axis, CriticalThreshold, Gradient, GradientStep, GridPoint, Relative, RelativeReliability, Surface, SurfacePoint, SurfaceVolume,
    critical_threshold, degradation_gradient, relative_reliability, reliability_surface, surface_volume,
};
pub use usage::{UsageTotals, usage_totals};

/// What an infrastructure error counts as. Either way, results report how
/// many there were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InfraConvention {
    /// A failed trial: the agent's figures include the environment's
    /// failures (the conservative default: nothing is dropped).
    #[default]
    CountAsFailure,
    /// No trial at all: removed from n_t (and from every denominator), so
    /// the figures describe the agent alone.
    Exclude,
}

impl InfraConvention {
    /// [`InfraConvention::Exclude`] when asked to exclude, else the default.
    pub fn excluding(exclude: bool) -> Self {
        if exclude { InfraConvention::Exclude } else { InfraConvention::CountAsFailure }
    }

    /// Whether an episode counts as a success (`Some(true)`), a failure
    /// (`Some(false)`), or not at all (`None`).
    pub fn judge(self, outcome: &EpisodeOutcome) -> Option<bool> {
        match (outcome, self) {
            (EpisodeOutcome::Passed, _) => Some(true),
            (EpisodeOutcome::Failed, _) | (EpisodeOutcome::InfraError(_), InfraConvention::CountAsFailure) => Some(false),
            (EpisodeOutcome::InfraError(_), InfraConvention::Exclude) => None,
        }
    }
}

/// Why a metric could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetricsError {
    /// Exact arithmetic does not fit in 128 bits; happens only with about
    /// 70 or more trials per task.
    #[error("exact arithmetic overflowed 128 bits (k = {k}); too many trials per task")]
    Overflow {
        /// The k being computed.
        k: u32,
    },
}

/// A perturbation or fault level used as a map key: ordered by
/// `f64::total_cmp`, with −0 read as 0.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Level(pub(crate) f64);

impl Level {
    pub(crate) fn new(x: f64) -> Self {
        // −0.0 + 0.0 is +0.0, so both zeros are the same level.
        Level(x + 0.0)
    }
}

impl PartialEq for Level {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Level {}

impl PartialOrd for Level {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Level {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Which episodes the rates of a report are over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Population {
    /// Every episode: an infeasible one is a failed trial (the default).
    #[default]
    AllEpisodes,
    /// Feasible episodes only: an episode no agent could have passed is
    /// left out of every rate (still counted and shown).
    FeasibleOnly,
}

impl Population {
    /// [`Population::FeasibleOnly`] when asked, else the default.
    pub fn feasible_only(only: bool) -> Self {
        if only { Population::FeasibleOnly } else { Population::AllEpisodes }
    }

    /// The episodes the rates are over (borrowed as they are for every episode).
    pub fn select(self, episodes: &[EpisodeResult]) -> std::borrow::Cow<'_, [EpisodeResult]> {
        match self {
            Population::AllEpisodes => std::borrow::Cow::Borrowed(episodes),
            Population::FeasibleOnly => episodes.iter().filter(|e| e.feasible != Some(false)).cloned().collect(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An episode of `task` by agent "a" at ε = 0, λ = 0 (profile "0.0").
    pub(crate) fn episode(task: &str, trial: u32, outcome: EpisodeOutcome) -> EpisodeResult {
        let planned = crate::PlannedEpisode {
            agent: "a".to_owned(),
            request: toolenv::pb::CreateEpisodeRequest { task_id: task.to_owned(), trial, ..Default::default() },
            fault_profile: "0.0".to_owned(),
            lambda: 0.0,
        };
        // Made-up task ids (`travel/t/001`) still name their domain.
        EpisodeResult {
            domain: toolenv_domains::registry::parse(task.split('/').next().unwrap_or_default()),
            ..EpisodeResult::planned(&planned, outcome)
        }
    }

    /// `trials` episodes of one task, the first `passes` of them passed.
    pub(crate) fn task(task_id: &str, passes: u32, trials: u32) -> Vec<EpisodeResult> {
        (0..trials).map(|t| episode(task_id, t, if t < passes { EpisodeOutcome::Passed } else { EpisodeOutcome::Failed })).collect()
    }

    pub(crate) fn r(num: u128, den: u128) -> Ratio {
        Ratio::new(num, den).unwrap()
    }

    /// Whether two floats agree to the four decimals the paper prints.
    pub(crate) fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }
}
