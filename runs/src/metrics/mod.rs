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
//! - Consistency: [`pass_hat_k`] (pass^k, the unbiased estimator
//!   mean_t C(c_t, k)/C(n_t, k) in exact rationals) and [`pass_at_k`], with a
//!   selectable [`InfraConvention`]; infrastructure errors are always counted
//!   in the result. [`breakdown`] gives them per agent, domain, ε, λ or fault
//!   profile (Tables 5–7).
//! - The reliability surface ([`surface`]): R(k, ε, λ) over the measured
//!   grid, its volume, degradation gradient, critical threshold, and
//!   R_fault / R_prompt.
//! - Faults ([`faults`]): recovery statistics (Table 8), the per-fault-profile
//!   ablation (Table 9), and MAS-FIRE's RS_f, O_f, L_f, S_f.
//! - [`usage_totals`]: tokens and cost when agents report them (Table 10).
//! - Every rate carries a 95 % Wilson score interval ([`wilson`]).
//!
//! Units of consistency: a *task* in pass^k is one task under one
//! configuration — the same agent, ε, λ and fault profile — and its trials
//! are the episodes that differ only in the trial index. pass^k asks whether
//! repeated runs of the same thing agree, so trials of different
//! configurations are never pooled.

pub mod faults;
mod ratio;
pub mod record;
pub mod stats;
pub mod surface;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use faults::{
    AblationRow, FaultRecovery, FaultTolerance, FaultToleranceReport, RobustnessScore, ablation, fault_recovery, fault_tolerance,
    robustness_scores,
};
pub use ratio::{Ratio, binomial, gcd};
pub use record::{EpisodeResult, FaultCounts, KindCounts, LedgerCall, LlmCounts, Outcome, Reply, TokenUsage, WireError, fault_ledger};
pub use surface::{
    Axis, CriticalThreshold, Gradient, GradientStep, GridPoint, Relative, RelativeReliability, Surface, SurfacePoint, SurfaceVolume,
    critical_threshold, degradation_gradient, relative_reliability, reliability_surface, surface_volume,
};

/// The z value of a two-sided 95 % normal interval.
pub const Z_95: f64 = 1.959964;

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
    pub fn judge(self, outcome: &Outcome) -> Option<bool> {
        match (outcome, self) {
            (Outcome::Passed, _) => Some(true),
            (Outcome::Failed, _) | (Outcome::InfraError(_), InfraConvention::CountAsFailure) => Some(false),
            (Outcome::InfraError(_), InfraConvention::Exclude) => None,
        }
    }
}

/// A closed interval within [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// The lower bound.
    pub lower: f64,
    /// The upper bound.
    pub upper: f64,
}

/// The 95 % Wilson score interval of a proportion p̂ measured over n units,
/// or `None` when n = 0 or p̂ is not within [0, 1].
///
/// With z = [`Z_95`]:
///
/// ```text
///            p̂ + z²/(2n)              z       ┌ p̂(1 − p̂)     z²  ┐½
/// centre = ───────────── ,  half = ────────── │ ───────── + ──── │
///            1 + z²/n              1 + z²/n  └     n        4n²  ┘
/// ```
///
/// and the interval is centre ± half, clamped to [0, 1]. Unlike the normal
/// (Wald) interval it stays inside [0, 1] and is not degenerate at p̂ = 0 or 1,
/// which matter here: pass rates near 100 % over a few dozen tasks are the
/// common case. E.g. 8/10 → [0.4902, 0.9433].
pub fn wilson(p_hat: f64, n: u64) -> Option<Interval> {
    if n == 0 || !(0.0..=1.0).contains(&p_hat) {
        return None;
    }
    let n = n as f64;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (p_hat + z2 / (2.0 * n)) / denominator;
    let half = Z_95 / denominator * (p_hat * (1.0 - p_hat) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval { lower: (centre - half).max(0.0), upper: (centre + half).min(1.0) })
}

/// A proportion of whole counts, with its Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    /// The numerator.
    pub successes: u64,
    /// The denominator.
    pub total: u64,
    /// successes / total, or `None` when total = 0.
    pub value: Option<f64>,
    /// The 95 % Wilson interval, or `None` when total = 0.
    pub ci: Option<Interval>,
    /// The minimum difference detectable against another rate over as many
    /// units (α = 0.05 two-sided, 80 % power; [`stats::mde`]), each unit
    /// (a fault, an episode) taken as independent.
    pub mde: Option<f64>,
}

impl Rate {
    /// successes out of total.
    pub fn new(successes: u64, total: u64) -> Self {
        let value = (total > 0).then(|| successes as f64 / total as f64);
        Rate { successes, total, value, ci: value.and_then(|p| wilson(p, total)), mde: value.and_then(|p| stats::mde(p, total as f64)) }
    }
}

/// Which estimator a [`PassK`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimator {
    /// pass^k: all k trials succeed, C(c, k)/C(n, k) per task.
    PassHatK,
    /// pass@k: at least one of k trials succeeds, 1 − C(n − c, k)/C(n, k) per task.
    PassAtK,
}

/// pass^k or pass@k over a set of episodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassK {
    /// Which estimator.
    pub estimator: Estimator,
    /// The number of trials k.
    pub k: u32,
    /// How infrastructure errors were counted.
    pub convention: InfraConvention,
    /// The exact mean over tasks, or `None` when no task has k trials.
    pub value: Option<Ratio>,
    /// Tasks with at least k trials, which the mean is over.
    pub tasks: u64,
    /// Tasks with fewer than k (counted) trials, left out of the mean.
    pub tasks_excluded: u64,
    /// Trials counted in the tasks of the mean.
    pub trials: u64,
    /// Infrastructure errors among the input episodes, under either convention.
    pub infra_errors: u64,
    /// The Wilson interval of the value, taking the tasks as the n units
    /// (an approximation: a task's term is a fraction, not a 0/1 outcome).
    pub ci: Option<Interval>,
    /// The minimum difference detectable against another measurement of the
    /// same design (α = 0.05 two-sided, 80 % power; [`stats::mde`]), with
    /// the task as the unit: pass^k (k ≥ 2) over its tasks, pass^1 over the
    /// tasks' trials discounted by their intraclass correlation
    /// ([`stats::effective_units`]).
    pub mde: Option<f64>,
    /// The independent units the MDE is over (tasks, or for pass^1 the
    /// effective number of trials).
    pub effective_units: f64,
}

impl PassK {
    /// The value as a float, for display.
    pub fn as_f64(&self) -> Option<f64> {
        self.value.map(Ratio::to_f64)
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

/// Trials and successes of one task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) trials: u64,
    pub(crate) passes: u64,
}

/// Agent, task, ε, λ, fault profile.
type ConfigKey<'a> = (&'a str, &'a str, u64, Level, Level, &'a str);

/// Trials per task-under-a-configuration, and the infrastructure errors.
/// Under [`InfraConvention::Exclude`] a task whose trials were all
/// infrastructure errors stays, with n = 0.
fn tally_tasks<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    convention: InfraConvention,
) -> (BTreeMap<ConfigKey<'a>, Tally>, u64) {
    tally_by(episodes, |e| convention.judge(&e.outcome))
}

/// Tallies trials per task configuration, each episode judged by `judge`
/// (a success, a failure, or no trial); also counts infrastructure errors.
fn tally_by<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    judge: impl Fn(&EpisodeResult) -> Option<bool>,
) -> (BTreeMap<ConfigKey<'a>, Tally>, u64) {
    let mut tasks: BTreeMap<ConfigKey<'a>, Tally> = BTreeMap::new();
    let mut infra_errors = 0;
    for e in episodes {
        infra_errors += u64::from(e.is_infra_error());
        let key = (e.agent.as_str(), e.task_id.as_str(), e.seed, Level::new(e.epsilon), Level::new(e.lambda), e.fault_profile.as_str());
        let tally = tasks.entry(key).or_default();
        if let Some(passed) = judge(e) {
            tally.trials += 1;
            tally.passes += u64::from(passed);
        }
    }
    (tasks, infra_errors)
}

/// One task's pass^k term, C(c, k)/C(n, k), or `None` when n < k (or c > n).
///
/// Computed as the product Π_{i<k} (c − i)/(n − i), reduced at every step,
/// which equals the binomial ratio and overflows later than it. E.g. n = 4,
/// c = 3, k = 2: (3/4)·(2/3) = 1/2 = C(3,2)/C(4,2) = 3/6.
pub fn task_pass_hat_k(passes: u64, trials: u64, k: u32) -> Option<Result<Ratio, MetricsError>> {
    if trials < u64::from(k) || passes > trials {
        return None;
    }
    Some(falling_ratio(passes, trials, k))
}

/// One task's pass@k term, 1 − C(n − c, k)/C(n, k), or `None` when n < k (or c > n).
///
/// E.g. n = 4, c = 1, k = 2: 1 − C(3,2)/C(4,2) = 1 − 3/6 = 1/2.
pub fn task_pass_at_k(passes: u64, trials: u64, k: u32) -> Option<Result<Ratio, MetricsError>> {
    if trials < u64::from(k) || passes > trials {
        return None;
    }
    Some(
        falling_ratio(trials - passes, trials, k).and_then(|all_fail| Ratio::ONE.checked_sub(all_fail).ok_or(MetricsError::Overflow { k })),
    )
}

/// Π_{i<k} (a − i)/(n − i) = C(a, k)/C(n, k), for a ≤ n and k ≤ n.
fn falling_ratio(a: u64, n: u64, k: u32) -> Result<Ratio, MetricsError> {
    if a < u64::from(k) {
        return Ok(Ratio::ZERO);
    }
    let mut acc = Ratio::ONE;
    for i in 0..u64::from(k) {
        let step = Ratio::new(u128::from(a - i), u128::from(n - i)).ok_or(MetricsError::Overflow { k })?;
        acc = acc.checked_mul(step).ok_or(MetricsError::Overflow { k })?;
    }
    Ok(acc)
}

/// The estimator's mean over the tallied tasks.
pub(crate) fn estimate(
    tallies: impl IntoIterator<Item = Tally>,
    infra_errors: u64,
    k: u32,
    estimator: Estimator,
    convention: InfraConvention,
) -> Result<PassK, MetricsError> {
    let term = match estimator {
        Estimator::PassHatK => task_pass_hat_k,
        Estimator::PassAtK => task_pass_at_k,
    };
    let (mut sum, mut tasks, mut tasks_excluded, mut trials) = (Ratio::ZERO, 0u64, 0u64, 0u64);
    let mut counted = Vec::new();
    for tally in tallies {
        match term(tally.passes, tally.trials, k) {
            Some(value) => {
                sum = sum.checked_add(value?).ok_or(MetricsError::Overflow { k })?;
                tasks += 1;
                trials += tally.trials;
                counted.push((tally.passes, tally.trials));
            }
            None => tasks_excluded += 1,
        }
    }
    let value = if tasks == 0 { None } else { Some(sum.checked_div_int(tasks).ok_or(MetricsError::Overflow { k })?) };
    let ci = value.and_then(|v| wilson(v.to_f64(), tasks));
    // pass^1 is a mean of trials, which count for more than their tasks as
    // far as they disagree within a task; any other k is one term per task.
    let effective_units = if k == 1 { stats::effective_units(&counted) } else { tasks as f64 };
    let mde = value.and_then(|v| stats::mde(v.to_f64(), effective_units));
    Ok(PassK { estimator, k, convention, value, tasks, tasks_excluded, trials, infra_errors, ci, mde, effective_units })
}

/// pass^k: the probability that k trials of a task all succeed, by the
/// unbiased estimator mean over tasks of C(c_t, k)/C(n_t, k) (τ-bench;
/// ReliabilityBench Definition 3), in exact arithmetic.
///
/// A task is one task under one configuration (agent, ε, λ, fault profile);
/// n_t is its counted trials and c_t its passed ones. Tasks with n_t < k are
/// left out of the mean and counted in `tasks_excluded`. Under
/// [`InfraConvention::CountAsFailure`] an infrastructure error is a failed
/// trial; under [`InfraConvention::Exclude`] it is not a trial.
pub fn pass_hat_k<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    k: u32,
    convention: InfraConvention,
) -> Result<PassK, MetricsError> {
    let (tasks, infra_errors) = tally_tasks(episodes, convention);
    estimate(tasks.into_values(), infra_errors, k, Estimator::PassHatK, convention)
}

/// The ceiling of pass^k: the pass^k of an ideal agent that passes exactly
/// the feasible episodes (see [`EpisodeResult::feasible`]), with the same
/// trials and infrastructure-error convention. `None` when no episode's
/// feasibility is known (a run recorded before it was decided).
pub fn ceiling<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult> + Clone,
    k: u32,
    convention: InfraConvention,
) -> Result<Option<PassK>, MetricsError> {
    if !episodes.clone().into_iter().any(|e| e.feasible.is_some()) {
        return Ok(None);
    }
    let judge = |e: &EpisodeResult| convention.judge(&e.outcome).map(|_| e.feasible.unwrap_or(true));
    let (tasks, infra_errors) = tally_by(episodes, judge);
    estimate(tasks.into_values(), infra_errors, k, Estimator::PassHatK, convention).map(Some)
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

/// pass@k: the probability that at least one of k trials succeeds, mean over
/// tasks of 1 − C(n_t − c_t, k)/C(n_t, k); tasks and conventions as in [`pass_hat_k`].
pub fn pass_at_k<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    k: u32,
    convention: InfraConvention,
) -> Result<PassK, MetricsError> {
    let (tasks, infra_errors) = tally_tasks(episodes, convention);
    estimate(tasks.into_values(), infra_errors, k, Estimator::PassAtK, convention)
}

/// The pooled pass rate: passed episodes over counted episodes, with the
/// infrastructure errors seen. Unlike pass^1 it weighs tasks by their trial
/// counts; the two agree when every task has the same number of trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PassRate {
    /// Passed over counted episodes.
    pub rate: Rate,
    /// Infrastructure errors among the episodes, under either convention.
    pub infra_errors: u64,
}

/// The pooled pass rate of some episodes.
pub fn pass_rate<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>, convention: InfraConvention) -> PassRate {
    let (mut passes, mut total, mut infra_errors) = (0, 0, 0);
    for e in episodes {
        infra_errors += u64::from(e.is_infra_error());
        if let Some(passed) = convention.judge(&e.outcome) {
            total += 1;
            passes += u64::from(passed);
        }
    }
    PassRate { rate: Rate::new(passes, total), infra_errors }
}

/// What [`breakdown`] groups episodes by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Breakdown {
    /// By agent label (Table 6).
    Agent,
    /// By domain (Table 7).
    Domain,
    /// By perturbation level ε (Table 5's columns).
    Epsilon,
    /// By fault intensity λ.
    Lambda,
    /// By fault profile name.
    FaultProfile,
}

/// One group of a [`breakdown`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakdownRow {
    /// The group: the agent, domain or profile name, or the level as written by `{}`.
    pub label: String,
    /// The level, when grouping by ε or λ.
    pub level: Option<f64>,
    /// Episodes in the group, infrastructure errors included.
    pub episodes: u64,
    /// pass^1 (the paper's pass@1: the mean per-task success rate).
    pub pass_1: PassK,
    /// pass^k.
    pub pass_k: PassK,
    /// Mean tool calls per episode, infrastructure errors included.
    pub mean_calls: Option<f64>,
    /// The ceiling of pass^1 and of pass^k: what an agent passing every
    /// feasible episode would score ([`ceiling`]); `None` when unknown.
    pub ceiling_1: Option<PassK>,
    /// The ceiling of pass^k.
    pub ceiling_k: Option<PassK>,
    /// Episodes no agent could have passed under their fault schedule.
    pub infeasible: u64,
}

/// pass^1, pass^k and mean tool calls per agent, domain, ε, λ or fault
/// profile, in the group's order (names by byte order, levels ascending).
pub fn breakdown<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    by: Breakdown,
    k: u32,
    convention: InfraConvention,
) -> Result<Vec<BreakdownRow>, MetricsError> {
    let mut groups: BTreeMap<(Level, &str), Vec<&EpisodeResult>> = BTreeMap::new();
    for e in episodes {
        let key = match by {
            Breakdown::Agent => (Level(0.0), e.agent.as_str()),
            Breakdown::Domain => (Level(0.0), e.domain_name()),
            Breakdown::FaultProfile => (Level(0.0), e.fault_profile.as_str()),
            Breakdown::Epsilon => (Level::new(e.epsilon), ""),
            Breakdown::Lambda => (Level::new(e.lambda), ""),
        };
        groups.entry(key).or_default().push(e);
    }
    let numeric = matches!(by, Breakdown::Epsilon | Breakdown::Lambda);
    groups
        .into_iter()
        .map(|((level, name), group)| {
            let calls: u64 = group.iter().map(|e| u64::from(e.calls)).sum();
            Ok(BreakdownRow {
                label: if numeric { level.0.to_string() } else { name.to_owned() },
                level: numeric.then_some(level.0),
                episodes: group.len() as u64,
                pass_1: pass_hat_k(group.iter().copied(), 1, convention)?,
                pass_k: pass_hat_k(group.iter().copied(), k, convention)?,
                mean_calls: (!group.is_empty()).then(|| calls as f64 / group.len() as f64),
                ceiling_1: ceiling(group.iter().copied(), 1, convention)?,
                ceiling_k: ceiling(group.iter().copied(), k, convention)?,
                infeasible: group.iter().filter(|e| e.feasible == Some(false)).count() as u64,
            })
        })
        .collect()
}

/// Token and cost totals over the episodes whose agents reported them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UsageTotals {
    /// All episodes given.
    pub episodes: u64,
    /// Episodes that reported tokens.
    pub episodes_with_tokens: u64,
    /// Input tokens over those.
    pub input_tokens: u64,
    /// Output tokens over those.
    pub output_tokens: u64,
    /// Episodes that reported a cost (a finite, non-negative number).
    pub episodes_with_cost: u64,
    /// Total cost in US dollars over those.
    pub cost_usd: f64,
    /// Cost per 100 episodes that reported a cost (Table 10's "Cost/100 ep").
    pub cost_per_100_episodes_usd: Option<f64>,
}

impl UsageTotals {
    /// Input plus output tokens.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

/// Sums tokens and cost. Costs are summed as whole nano-dollars (each
/// episode's cost rounded to 1e-9 USD), so the total does not depend on the
/// order of the episodes; a cost that is negative or not finite counts as
/// not reported.
pub fn usage_totals<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>) -> UsageTotals {
    let mut totals = UsageTotals {
        episodes: 0,
        episodes_with_tokens: 0,
        input_tokens: 0,
        output_tokens: 0,
        episodes_with_cost: 0,
        cost_usd: 0.0,
        cost_per_100_episodes_usd: None,
    };
    let mut cost_nano_usd: u128 = 0;
    for e in episodes {
        totals.episodes += 1;
        if let Some(tokens) = e.tokens {
            totals.episodes_with_tokens += 1;
            totals.input_tokens = totals.input_tokens.saturating_add(tokens.input);
            totals.output_tokens = totals.output_tokens.saturating_add(tokens.output);
        }
        if let Some(cost) = e.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
            totals.episodes_with_cost += 1;
            // A float-to-int `as` saturates, so an absurd cost cannot wrap.
            cost_nano_usd = cost_nano_usd.saturating_add((cost * 1e9).round() as u128);
        }
    }
    totals.cost_usd = cost_nano_usd as f64 / 1e9;
    totals.cost_per_100_episodes_usd = (totals.episodes_with_cost > 0).then(|| totals.cost_usd * 100.0 / totals.episodes_with_cost as f64);
    totals
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An episode of `task` by agent "a" at ε = 0, λ = 0 (profile "0.0").
    pub(crate) fn episode(task: &str, trial: u32, outcome: Outcome) -> EpisodeResult {
        let planned = crate::PlannedEpisode {
            agent: "a".to_owned(),
            request: toolenv::pb::CreateEpisodeRequest { task_id: task.to_owned(), trial, ..Default::default() },
            fault_profile: "0.0".to_owned(),
            lambda: 0.0,
        };
        // Made-up task ids (`travel/t/001`) still name their domain.
        EpisodeResult {
            domain: toolenv_domains::Domain::parse(task.split('/').next().unwrap_or_default()),
            ..EpisodeResult::planned(&planned, outcome)
        }
    }

    /// `trials` episodes of one task, the first `passes` of them passed.
    pub(crate) fn task(task_id: &str, passes: u32, trials: u32) -> Vec<EpisodeResult> {
        (0..trials).map(|t| episode(task_id, t, if t < passes { Outcome::Passed } else { Outcome::Failed })).collect()
    }

    pub(crate) fn r(num: u128, den: u128) -> Ratio {
        Ratio::new(num, den).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-5
    }

    #[test]
    fn task_terms_by_hand() {
        // n = 4, c = 3, k = 2: C(3,2)/C(4,2) = 3/6 = 1/2.
        assert_eq!(task_pass_hat_k(3, 4, 2), Some(Ok(r(1, 2))));
        // c = n: C(4,2)/C(4,2) = 1.
        assert_eq!(task_pass_hat_k(4, 4, 2), Some(Ok(Ratio::ONE)));
        // c = 0: C(0,2) = 0.
        assert_eq!(task_pass_hat_k(0, 4, 2), Some(Ok(Ratio::ZERO)));
        // c < k: C(1,2) = 0.
        assert_eq!(task_pass_hat_k(1, 4, 2), Some(Ok(Ratio::ZERO)));
        // n < k: no estimate.
        assert_eq!(task_pass_hat_k(1, 1, 2), None);
        // k = 1 is the success rate: 3/4.
        assert_eq!(task_pass_hat_k(3, 4, 1), Some(Ok(r(3, 4))));
        // n = 5, c = 4, k = 3: C(4,3)/C(5,3) = 4/10 = 2/5.
        assert_eq!(task_pass_hat_k(4, 5, 3), Some(Ok(r(2, 5))));
        // pass@k, n = 4, c = 1, k = 2: 1 − C(3,2)/C(4,2) = 1 − 3/6 = 1/2.
        assert_eq!(task_pass_at_k(1, 4, 2), Some(Ok(r(1, 2))));
        // pass@k, c = 0: 1 − C(4,2)/C(4,2) = 0; n − c < k: 1 − 0 = 1.
        assert_eq!(task_pass_at_k(0, 4, 2), Some(Ok(Ratio::ZERO)));
        assert_eq!(task_pass_at_k(3, 4, 2), Some(Ok(Ratio::ONE)));
        assert_eq!(task_pass_at_k(0, 1, 2), None);
        // The product form equals the binomial ratio everywhere small.
        for n in 0..16u64 {
            for c in 0..=n {
                for k in 0..=n as u32 {
                    let exact = Ratio::new(binomial(c, k.into()).unwrap(), binomial(n, k.into()).unwrap()).unwrap();
                    assert_eq!(task_pass_hat_k(c, n, k), Some(Ok(exact)), "n={n} c={c} k={k}");
                }
            }
        }
    }

    #[test]
    fn pass_hat_k_is_the_mean_over_tasks() {
        // A: n = 4, c = 3 → 1/2; B: n = 2, c = 2 → 1; C: n = 1 < k, excluded.
        // Mean over A and B: (1/2 + 1)/2 = 3/4.
        let episodes: Vec<_> = [task("x/a", 3, 4), task("x/b", 2, 2), task("x/c", 1, 1)].concat();
        let p = pass_hat_k(&episodes, 2, InfraConvention::CountAsFailure).unwrap();
        assert_eq!(p.value, Some(r(3, 4)));
        assert_eq!((p.tasks, p.tasks_excluded, p.trials, p.infra_errors), (2, 1, 6, 0));
        assert_eq!(p.as_f64(), Some(0.75));
        // pass@2: A: 1 − C(1,2)/C(4,2) = 1; B: 1 − 0 = 1 → 1.
        assert_eq!(pass_at_k(&episodes, 2, InfraConvention::CountAsFailure).unwrap().value, Some(Ratio::ONE));
        // pass^1 includes C: (3/4 + 1 + 1)/3 = 11/12.
        assert_eq!(pass_hat_k(&episodes, 1, InfraConvention::CountAsFailure).unwrap().value, Some(r(11, 12)));
        // The Wilson interval is over the 2 tasks.
        let ci = p.ci.unwrap();
        assert!(ci.lower < 0.75 && 0.75 < ci.upper);
    }

    #[test]
    fn empty_input_and_no_eligible_task_give_none() {
        let p = pass_hat_k(&[], 2, InfraConvention::default()).unwrap();
        assert_eq!((p.value, p.tasks, p.tasks_excluded, p.infra_errors, p.ci), (None, 0, 0, 0, None));
        let p = pass_hat_k(&task("x/a", 1, 1), 2, InfraConvention::default()).unwrap();
        assert_eq!((p.value, p.tasks, p.tasks_excluded), (None, 0, 1));
        assert_eq!(pass_rate(&[], InfraConvention::default()).rate.value, None);
        assert!(breakdown(&[], Breakdown::Domain, 2, InfraConvention::default()).unwrap().is_empty());
    }

    #[test]
    fn infrastructure_errors_under_both_conventions() {
        // Trials P, P, F, infra: counted as a failure n = 4, c = 2 →
        // C(2,2)/C(4,2) = 1/6; excluded n = 3, c = 2 → C(2,2)/C(3,2) = 1/3.
        let mut episodes = task("x/a", 2, 3);
        episodes.push(episode("x/a", 3, Outcome::InfraError("server unreachable".into())));
        let counted = pass_hat_k(&episodes, 2, InfraConvention::CountAsFailure).unwrap();
        let excluded = pass_hat_k(&episodes, 2, InfraConvention::Exclude).unwrap();
        assert_eq!((counted.value, counted.trials, counted.infra_errors), (Some(r(1, 6)), 4, 1));
        assert_eq!((excluded.value, excluded.trials, excluded.infra_errors), (Some(r(1, 3)), 3, 1));
        // A task of only infrastructure errors: a 0 under the default, left
        // out (n = 0 < k) when excluded — and counted either way.
        let only_infra: Vec<_> = (0..2).map(|t| episode("x/b", t, Outcome::InfraError("lost".into()))).collect();
        let counted = pass_hat_k(&only_infra, 2, InfraConvention::CountAsFailure).unwrap();
        let excluded = pass_hat_k(&only_infra, 2, InfraConvention::Exclude).unwrap();
        assert_eq!((counted.value, counted.tasks, counted.infra_errors), (Some(Ratio::ZERO), 1, 2));
        assert_eq!((excluded.value, excluded.tasks_excluded, excluded.infra_errors), (None, 1, 2));
        // The pooled rate: 2/4 vs 2/3.
        assert_eq!(pass_rate(&episodes, InfraConvention::CountAsFailure).rate.value, Some(0.5));
        assert_eq!(pass_rate(&episodes, InfraConvention::Exclude).rate.total, 3);
    }

    #[test]
    fn configurations_are_separate_tasks() {
        // The same task id by two agents, and at two ε: three tasks of
        // n = 2, never one of n = 6. Agent a at ε 0: c = 2 → 1; agent b: c = 1
        // → 0; agent a at ε 0.1: c = 2 → 1. Mean 2/3.
        let mut episodes = task("x/a", 2, 2);
        episodes.extend(task("x/a", 1, 2).into_iter().map(|mut e| {
            e.agent = "b".into();
            e
        }));
        episodes.extend(task("x/a", 2, 2).into_iter().map(|mut e| {
            e.epsilon = 0.1;
            e
        }));
        let p = pass_hat_k(&episodes, 2, InfraConvention::default()).unwrap();
        assert_eq!((p.value, p.tasks), (Some(r(2, 3)), 3));
        // −0.0 and 0.0 are the same level.
        let mut zeros = task("x/z", 1, 1);
        zeros.extend(task("x/z", 1, 1).into_iter().map(|mut e| {
            e.epsilon = -0.0;
            e.trial = 1;
            e
        }));
        assert_eq!(pass_hat_k(&zeros, 2, InfraConvention::default()).unwrap().value, Some(Ratio::ONE));
    }

    #[test]
    fn overflow_is_an_error_not_a_panic() {
        // n = 300, c = 200, k = 150: C(200,150)/C(300,150) has a reduced
        // denominator far beyond 2^128.
        let episodes = task("x/a", 200, 300);
        assert_eq!(pass_hat_k(&episodes, 150, InfraConvention::default()), Err(MetricsError::Overflow { k: 150 }));
        // A NaN level does not panic either.
        let mut odd = task("x/a", 1, 2);
        odd[0].epsilon = f64::NAN;
        assert_eq!(pass_hat_k(&odd, 1, InfraConvention::default()).unwrap().tasks, 2);
    }

    #[test]
    fn wilson_intervals_by_hand() {
        // 8/10: z² = 3.841459, centre = (0.8 + 0.192073)/1.384146 = 0.716740,
        // half = 1.959964·√(0.016 + 0.009604)/1.384146 = 0.226572 → [0.4902, 0.9433].
        let ci = wilson(0.8, 10).unwrap();
        assert!(close(ci.lower, 0.4902) && close(ci.upper, 0.9433), "{ci:?}");
        // 0/10: centre = half = 0.192073/1.384146 = 0.138766 → [0, 0.2775].
        let ci = wilson(0.0, 10).unwrap();
        assert!(close(ci.lower, 0.0) && close(ci.upper, 0.2775), "{ci:?}");
        // 10/10 mirrors it: [0.7225, 1].
        let ci = wilson(1.0, 10).unwrap();
        assert!(close(ci.lower, 0.7225) && close(ci.upper, 1.0), "{ci:?}");
        // 38/47 (Table 8's ReAct recoveries): centre = (0.808511 + 0.040866)/1.081733
        // = 0.785196, half = 1.959964·√(0.003294 + 0.000435)/1.081733 = 0.110642
        // → [0.6746, 0.8958].
        let rate = Rate::new(38, 47);
        let ci = rate.ci.unwrap();
        assert!(close(ci.lower, 0.6746) && close(ci.upper, 0.8958), "{ci:?}");
        assert_eq!(wilson(0.5, 0), None);
        assert_eq!(wilson(1.5, 10), None);
        assert_eq!(Rate::new(0, 0).ci, None);
    }

    #[test]
    fn table_7_by_domain() {
        // Table 7 (λ = 0, ReAct), k = 2 with 2 trials per task. Travel: 8
        // tasks, 6 pass both trials, 2 pass one: pass^1 = (6 + 2·½)/8 = 7/8 =
        // 87.5 %, pass^2 = 6/8 = 75 %. Support: 12 tasks, 10 both, 2 one:
        // 11/12 = 91.7 %, 10/12 = 83.3 %. Scheduling: 5 tasks, all both: 100 %.
        let mut episodes = Vec::new();
        for (domain, both, one) in [("travel", 6, 2), ("support", 10, 2), ("scheduling", 5, 0)] {
            for i in 0..both + one {
                let passes = if i < both { 2 } else { 1 };
                episodes.extend(task(&format!("{domain}/t/{i:03}"), passes, 2).into_iter().map(|mut e| {
                    e.calls = 5;
                    e
                }));
            }
        }
        let rows = breakdown(&episodes, Breakdown::Domain, 2, InfraConvention::default()).unwrap();
        let got: Vec<_> = rows.iter().map(|r| (r.label.as_str(), r.pass_1.value.unwrap(), r.pass_k.value.unwrap())).collect();
        assert_eq!(got, [("scheduling", Ratio::ONE, Ratio::ONE), ("support", r(11, 12), r(5, 6)), ("travel", r(7, 8), r(3, 4))]);
        assert_eq!(rows[2].episodes, 16);
        assert_eq!(rows[2].mean_calls, Some(5.0));
        assert!(close(rows[1].pass_1.as_f64().unwrap(), 0.9167) && close(rows[1].pass_k.as_f64().unwrap(), 0.8333));
    }

    #[test]
    fn breakdown_by_level_is_in_ascending_order() {
        let mut episodes = Vec::new();
        for (eps, passes) in [(0.2, 1), (0.0, 2), (0.1, 0)] {
            episodes.extend(task("x/a", passes, 2).into_iter().map(|mut e| {
                e.epsilon = eps;
                e
            }));
        }
        let rows = breakdown(&episodes, Breakdown::Epsilon, 2, InfraConvention::default()).unwrap();
        let got: Vec<_> = rows.iter().map(|r| (r.label.as_str(), r.level, r.pass_1.value)).collect();
        assert_eq!(got, [("0", Some(0.0), Some(Ratio::ONE)), ("0.1", Some(0.1), Some(Ratio::ZERO)), ("0.2", Some(0.2), Some(r(1, 2)))]);
    }

    #[test]
    fn usage_totals_like_table_10() {
        // 480 episodes at 2,483.77 tokens and $0.00025 each: $0.12 in all,
        // $0.025 per 100 episodes; one more episode reported nothing and one
        // a NaN cost.
        let mut episodes: Vec<_> = (0..480)
            .map(|t| {
                let mut e = episode("x/a", t, Outcome::Passed);
                e.tokens = Some(TokenUsage { input: 2000, output: 483 });
                e.cost_usd = Some(0.00025);
                e
            })
            .collect();
        episodes.push(episode("x/a", 480, Outcome::Passed));
        let mut nan = episode("x/a", 481, Outcome::Passed);
        nan.cost_usd = Some(f64::NAN);
        episodes.push(nan);
        let totals = usage_totals(&episodes);
        assert_eq!((totals.episodes, totals.episodes_with_tokens, totals.episodes_with_cost), (482, 480, 480));
        assert_eq!((totals.input_tokens, totals.output_tokens, totals.total_tokens()), (960_000, 231_840, 1_191_840));
        assert!(close(totals.cost_usd, 0.12), "{}", totals.cost_usd);
        assert!(close(totals.cost_per_100_episodes_usd.unwrap(), 0.025));
        // The total does not depend on the order.
        let mut reversed = episodes.clone();
        reversed.reverse();
        assert_eq!(usage_totals(&reversed), totals);
        let empty = usage_totals(&[]);
        assert_eq!((empty.episodes, empty.cost_usd, empty.cost_per_100_episodes_usd), (0, 0.0, None));
    }

    #[test]
    fn episode_results_round_trip_through_json() {
        let mut e = episode("travel/x/001", 1, Outcome::InfraError("worker crashed".into()));
        e.faults_by_kind.insert(
            toolenv_domains::chaos::FaultKind::SoftRateLimit,
            KindCounts { hits: 2, injected: 1, encountered: 2, retried: 2, recovered: 2 },
        );
        e.tokens = Some(TokenUsage { input: 10, output: 5 });
        let json = serde_json::to_string(&e).unwrap();
        assert!(json.contains(r#""outcome":{"infra_error":"worker crashed"}"#), "{json}");
        assert_eq!(serde_json::from_str::<EpisodeResult>(&json).unwrap(), e);
    }
}
