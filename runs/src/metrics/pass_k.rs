//! Tallies of trials per task and the estimators over them: pass^k
//! ([`pass_hat_k`], the unbiased estimator mean_t C(c_t, k)/C(n_t, k) in
//! exact rationals), pass@k ([`pass_at_k`]) and the ceiling an agent
//! passing every feasible episode would reach ([`ceiling`]).
//!
//! A task here is one task under one configuration (agent, ε, λ, fault
//! profile); its trials are the episodes that differ only in the trial
//! index, tallied by [`InfraConvention::judge`].

use std::collections::BTreeMap;

use serde::Serialize;

use super::{EpisodeResult, InfraConvention, Interval, Level, MetricsError, Ratio, stats, wilson};

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
/// trials and infrastructure-error convention: an infrastructure error is
/// no ideal agent's pass either (a failed trial, or no trial, as the
/// convention says). `None` when no episode's feasibility is known (a run
/// recorded before it was decided).
pub fn ceiling<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult> + Clone,
    k: u32,
    convention: InfraConvention,
) -> Result<Option<PassK>, MetricsError> {
    if !episodes.clone().into_iter().any(|e| e.feasible.is_some()) {
        return Ok(None);
    }
    let judge = |e: &EpisodeResult| convention.judge(&e.outcome).map(|_| !e.is_infra_error() && e.feasible.unwrap_or(true));
    let (tasks, infra_errors) = tally_by(episodes, judge);
    estimate(tasks.into_values(), infra_errors, k, Estimator::PassHatK, convention).map(Some)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::{episode, r, task};
    use crate::metrics::{Breakdown, EpisodeOutcome, binomial, breakdown, pass_rate};

    #[test]
    fn the_ideal_agent_passes_no_infrastructure_error() {
        // One task, four trials: a pass, an infeasible failure, a feasible failure, an infrastructure error.
        let mut episodes: Vec<EpisodeResult> =
            [EpisodeOutcome::Passed, EpisodeOutcome::Failed, EpisodeOutcome::Failed, EpisodeOutcome::InfraError("endpoint down".into())]
                .into_iter()
                .enumerate()
                .map(|(trial, outcome)| episode("travel/t/001", trial as u32, outcome))
                .collect();
        episodes[0].feasible = Some(true);
        episodes[1].feasible = Some(false);
        episodes[2].feasible = Some(true);
        // Counted as failures, the ideal agent passes 2 of 4; excluded, 2 of 3.
        let counted = ceiling(&episodes, 1, InfraConvention::CountAsFailure).unwrap().unwrap();
        assert_eq!(counted.value, Some(r(2, 4)));
        let excluded = ceiling(&episodes, 1, InfraConvention::Exclude).unwrap().unwrap();
        assert_eq!(excluded.value, Some(r(2, 3)));
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
        episodes.push(episode("x/a", 3, EpisodeOutcome::InfraError("server unreachable".into())));
        let counted = pass_hat_k(&episodes, 2, InfraConvention::CountAsFailure).unwrap();
        let excluded = pass_hat_k(&episodes, 2, InfraConvention::Exclude).unwrap();
        assert_eq!((counted.value, counted.trials, counted.infra_errors), (Some(r(1, 6)), 4, 1));
        assert_eq!((excluded.value, excluded.trials, excluded.infra_errors), (Some(r(1, 3)), 3, 1));
        // A task of only infrastructure errors: a 0 under the default, left
        // out (n = 0 < k) when excluded — and counted either way.
        let only_infra: Vec<_> = (0..2).map(|t| episode("x/b", t, EpisodeOutcome::InfraError("lost".into()))).collect();
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
}
