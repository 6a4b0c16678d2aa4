//! Fault figures: recovery statistics (ReliabilityBench Table 8), the
//! per-fault-profile ablation (Table 9), and MAS-FIRE's robustness score
//! RS_f and process-level O_f, L_f, S_f (MAS-FIRE §3.3), read from the
//! fault ledger that every trajectory records.
//!
//! MAS-FIRE counts *tasks* of a multi-agent system run once under an injected
//! fault. Here the unit is an episode (one run of one task), the fault is a
//! [`FaultKind`](toolenv_core::chaos::FaultKind) from the ledger, and the
//! fault-tolerant behaviour MAS-FIRE looks for is the one a tool-using agent
//! has: calling the same tool again after a call the fault met.

use std::collections::BTreeMap;

use serde::Serialize;

use toolenv_core::chaos::FaultKind;

use super::{EpisodeResult, InfraConvention, Interval, KindCounts, Level, MetricsError, PassRate, Rate, Ratio, Tally, pass_rate, wilson};

/// Fault recovery statistics over some episodes (Table 8), in the ledger's
/// terms ([`toolenv_core::fault_ledger`] defines them): every total is the
/// sum of `by_kind`'s figure of the same name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultRecovery {
    /// Episodes given.
    pub episodes: u64,
    /// Infrastructure errors among them (their ledgers, if any, are included).
    pub infra_errors: u64,
    /// Faults injected (newly drawn, took effect).
    pub injected: u64,
    /// Faults encountered: calls answered with an explicit error status.
    pub encountered: u64,
    /// Encountered calls after which the same tool was answered without a fault.
    pub recovered: u64,
    /// Calls spent getting past them (see [`super::FaultCounts::extra_calls`]).
    pub extra_calls: u64,
    /// Calls a fault met, newly drawn or carried over (the kinds' `hits`).
    pub hits: u64,
    /// Of those, calls the agent made again (the kinds' `retried`): with the
    /// encountered calls never recovered, where retries went unrewarded.
    pub retried: u64,
    /// recovered / encountered ("Successful Recoveries").
    pub recovery_rate: Rate,
    /// extra_calls / encountered ("Additional Tool Calls on Fault"): a fault
    /// never recovered from adds no extra calls to the ledger.
    pub extra_calls_per_fault: Option<f64>,
    /// extra_calls / recovered: what one recovery costs.
    pub extra_calls_per_recovery: Option<f64>,
    /// The per-kind ledgers summed, by kind name.
    pub by_kind: BTreeMap<&'static str, KindCounts>,
}

/// Sums the fault ledgers of some episodes.
pub fn fault_recovery<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>) -> FaultRecovery {
    let (mut count, mut infra_errors, mut injected, mut encountered, mut recovered, mut extra_calls) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut hits, mut retried) = (0u64, 0u64);
    let mut by_kind: BTreeMap<&'static str, KindCounts> = BTreeMap::new();
    for e in episodes {
        count += 1;
        infra_errors += u64::from(e.is_infra_error());
        injected += u64::from(e.fault_stats.injected);
        encountered += u64::from(e.fault_stats.encountered);
        recovered += u64::from(e.fault_stats.recovered);
        extra_calls += u64::from(e.fault_stats.extra_calls);
        for (kind, counts) in kinds_with_extra_calls(e) {
            hits += u64::from(counts.hits);
            retried += u64::from(counts.retried);
            by_kind.entry(kind.name()).or_default().add(&counts);
        }
    }
    let per = |d: u64| (d > 0).then(|| extra_calls as f64 / d as f64);
    FaultRecovery {
        episodes: count,
        infra_errors,
        injected,
        encountered,
        recovered,
        extra_calls,
        hits,
        retried,
        recovery_rate: Rate::new(recovered, encountered),
        extra_calls_per_fault: per(encountered),
        extra_calls_per_recovery: per(recovered),
        by_kind,
    }
}

/// An episode's per-kind ledger, with the extra calls of a record stored
/// before they were kept per kind given to the one kind that recovered (a
/// record whose kinds' extra calls already sum to its total is as stored).
fn kinds_with_extra_calls(e: &EpisodeResult) -> impl Iterator<Item = (FaultKind, KindCounts)> + '_ {
    let kept: u32 = e.faults_by_kind.values().map(|c| c.extra_calls).sum();
    let mut recovering = e.faults_by_kind.iter().filter(|(_, c)| c.recovered > 0).map(|(kind, _)| *kind);
    let only = match (recovering.next(), recovering.next()) {
        (Some(kind), None) if kept == 0 => Some(kind),
        _ => None,
    };
    e.faults_by_kind.iter().map(move |(kind, counts)| {
        let mut counts = *counts;
        if only == Some(*kind) {
            counts.extra_calls = e.fault_stats.extra_calls;
        }
        (*kind, counts)
    })
}

/// One fault profile of the ablation (a row of Table 9).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AblationRow {
    /// The fault profile's name, e.g. `timeout-only`.
    pub fault_profile: String,
    /// The pooled pass rate of its episodes.
    pub pass: PassRate,
    /// Its pass rate minus the baseline's ("vs Mixed"), or `None` for the
    /// baseline itself and when either rate is undefined.
    pub vs_baseline: Option<f64>,
}

/// The per-fault-type ablation: the pooled pass rate of every fault profile
/// and its difference from the baseline profile's (the paper's `mixed`),
/// rows ordered by profile name. Pass the ablation episodes (all at the same
/// λ); every profile present gets a row.
pub fn ablation<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    baseline_profile: &str,
    convention: InfraConvention,
) -> Vec<AblationRow> {
    let mut profiles: BTreeMap<&str, Vec<&EpisodeResult>> = BTreeMap::new();
    for e in episodes {
        profiles.entry(e.fault_profile.as_str()).or_default().push(e);
    }
    let rates: BTreeMap<&str, PassRate> = profiles.into_iter().map(|(name, group)| (name, pass_rate(group, convention))).collect();
    let baseline = rates.get(baseline_profile).and_then(|p| p.rate.value);
    rates
        .into_iter()
        .map(|(name, pass)| AblationRow {
            fault_profile: name.to_owned(),
            vs_baseline: (name != baseline_profile).then(|| baseline.zip(pass.rate.value).map(|(b, v)| v - b)).flatten(),
            pass,
        })
        .collect()
}

/// MAS-FIRE's robustness score RS_f of one fault profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RobustnessScore {
    /// The fault profile f.
    pub fault_profile: String,
    /// |T_base|: tasks every baseline trial of which passed.
    pub base_tasks: u64,
    /// Tasks of T_base also run under f: the denominator.
    pub tasks: u64,
    /// N_f,success: the T_base tasks solved under f, each counting its
    /// fraction of passed trials (whole counts with one trial per task).
    pub solved: Ratio,
    /// RS_f = solved / tasks, exactly; `None` when no T_base task was run under f.
    pub score: Option<Ratio>,
    /// Wilson interval of the score over the tasks.
    pub ci: Option<Interval>,
    /// Infrastructure errors among f's episodes.
    pub infra_errors: u64,
}

/// Agent, task, ε.
type UnitKey<'a> = (&'a str, &'a str, Level);

/// RS_f = N_f,success / |T_base| (MAS-FIRE eq. 1): the fraction of the tasks
/// the agent solves without faults that it still solves under fault f, for
/// every fault profile f other than the baseline, ordered by name.
///
/// Adaptations: f is a fault profile (an ablation such as `timeout-only`
/// isolates one fault type, which is what MAS-FIRE injects). A task is a
/// task by one agent at one ε, so faults are compared at the same
/// perturbation. T_base holds the tasks all of whose counted trials under
/// `baseline_profile` (λ = 0, `0.0`) passed and that have at least one —
/// "completes without faults" read strictly, so that flakiness without
/// faults is not blamed on f. Under f, each T_base task counts c/n of its
/// trials: with one trial per task, as in MAS-FIRE, that is the plain count.
/// Tasks of T_base not run under f are left out of its denominator, so that
/// RS_f never exceeds 1 nor counts a missing run as a failure.
pub fn robustness_scores<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    baseline_profile: &str,
    convention: InfraConvention,
) -> Result<Vec<RobustnessScore>, MetricsError> {
    let mut profiles: BTreeMap<&str, (BTreeMap<UnitKey<'a>, Tally>, u64)> = BTreeMap::new();
    for e in episodes {
        let (units, infra_errors) = profiles.entry(e.fault_profile.as_str()).or_default();
        *infra_errors += u64::from(e.is_infra_error());
        let tally = units.entry((e.agent.as_str(), e.task_id.as_str(), Level::new(e.epsilon))).or_default();
        if let Some(passed) = convention.judge(&e.outcome) {
            tally.trials += 1;
            tally.passes += u64::from(passed);
        }
    }
    let base: Vec<UnitKey<'a>> = profiles
        .get(baseline_profile)
        .map(|(units, _)| units.iter().filter(|(_, t)| t.trials > 0 && t.passes == t.trials).map(|(key, _)| *key).collect())
        .unwrap_or_default();
    let overflow = MetricsError::Overflow { k: 1 };
    let mut scores = Vec::new();
    for (name, (units, infra_errors)) in &profiles {
        if *name == baseline_profile {
            continue;
        }
        let (mut solved, mut tasks) = (Ratio::ZERO, 0u64);
        for tally in base.iter().filter_map(|key| units.get(key)).filter(|t| t.trials > 0) {
            let fraction = Ratio::new(u128::from(tally.passes), u128::from(tally.trials)).ok_or(overflow.clone())?;
            solved = solved.checked_add(fraction).ok_or(overflow.clone())?;
            tasks += 1;
        }
        let score = if tasks == 0 { None } else { Some(solved.checked_div_int(tasks).ok_or(overflow.clone())?) };
        scores.push(RobustnessScore {
            fault_profile: (*name).to_owned(),
            base_tasks: base.len() as u64,
            tasks,
            solved,
            score,
            ci: score.and_then(|s| wilson(s.to_f64(), tasks)),
            infra_errors: *infra_errors,
        });
    }
    Ok(scores)
}

/// MAS-FIRE's process-level figures O_f, L_f and S_f (eq. 2) of one fault
/// f: the one row type of both tables that show them, per fault kind of
/// the ledger ([`fault_tolerance`], `F` the kind's name) and per MAS-FIRE
/// fault type and group ([`crate::masfire::tolerance`], `F` a
/// [`MasFault`](toolenv_core::masfire::MasFault)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultTolerance<F = String> {
    /// The fault: a fault kind's name (e.g. `SoftRateLimit`) or `any`, or a
    /// MAS-FIRE fault type.
    pub fault: F,
    /// The agent label or role the row is about, when rows are per group;
    /// `None` (and not serialized) for a row over all the episodes given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// N_total: episodes the fault met (took effect in) at least once.
    pub injected_episodes: u64,
    /// N_f,trigger: of those, episodes where the agent detected the fault
    /// and reacted (for a fault kind: called a tool again after a call the
    /// fault met).
    pub triggered: u64,
    /// N_f,fixed: of the triggered, episodes where every reaction corrected
    /// the fault (for a fault kind: every call the agent called again after
    /// was followed by a fault-free reply of that tool).
    pub fixed: u64,
    /// N_f,final_success: of the triggered, episodes whose verdict passed.
    pub final_success: u64,
    /// O_f = triggered / injected_episodes.
    pub occurrence: Rate,
    /// L_f = fixed / triggered.
    pub local_success: Rate,
    /// S_f = final_success / triggered.
    pub success: Rate,
}

impl<F> FaultTolerance<F> {
    /// The row of fault f (for `group`, if per group) from its counts
    /// N_total, N_f,trigger, N_f,fixed and N_f,final_success.
    pub fn new(fault: F, group: Option<String>, [injected_episodes, triggered, fixed, final_success]: [u64; 4]) -> Self {
        FaultTolerance {
            fault,
            group,
            injected_episodes,
            triggered,
            fixed,
            final_success,
            occurrence: Rate::new(triggered, injected_episodes),
            local_success: Rate::new(fixed, triggered),
            success: Rate::new(final_success, triggered),
        }
    }
}

/// O_f, L_f and S_f per fault kind, and for any fault.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultToleranceReport {
    /// How infrastructure errors were counted.
    pub convention: InfraConvention,
    /// Infrastructure errors among the episodes, under either convention.
    pub infra_errors: u64,
    /// One row per fault kind that met an episode, ordered by name.
    pub by_kind: Vec<FaultTolerance>,
    /// f = any fault: an episode counts when some fault met it, is
    /// triggered when the agent reacted to any, fixed when every fault kind
    /// it reacted to was fixed.
    pub any: FaultTolerance,
}

/// MAS-FIRE eq. 2 from the per-kind fault ledger ([`EpisodeResult::faults_by_kind`]):
/// O_f = N_f,trigger / N_total, L_f = N_f,fixed / N_f,trigger,
/// S_f = N_f,final_success / N_f,trigger.
///
/// Adaptations, per episode and fault kind f: "injected" is f having met at
/// least one call (a hit); "triggered" (the agent detected the anomaly and
/// responded) is calling the same tool again after a hit, the
/// fault-tolerant behaviour a tool-using agent has (retrying, or re-reading
/// after a suspicious reply); "fixed" (local recovery) is every such retried
/// hit being followed by a fault-free reply of that tool (the ledger's
/// `answered_after`, over every hit, silent faults included); "final success" is
/// the verdict passing. A fault the agent rightly ignores (a slow but
/// correct reply) is thus not triggered and does not count against L_f.
/// Under [`InfraConvention::Exclude`] infrastructure errors are left out;
/// otherwise they count as episodes that did not succeed.
pub fn fault_tolerance<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>, convention: InfraConvention) -> FaultToleranceReport {
    // Per kind: N_total, trigger, fixed, final_success.
    let mut kinds: BTreeMap<&'static str, [u64; 4]> = BTreeMap::new();
    let mut any = [0u64; 4];
    let mut infra_errors = 0;
    for e in episodes {
        infra_errors += u64::from(e.is_infra_error());
        let Some(passed) = convention.judge(&e.outcome) else { continue };
        let (mut met, mut triggered, mut fixed) = (false, false, true);
        for (kind, counts) in e.faults_by_kind.iter().filter(|(_, c)| c.hits > 0) {
            let row = kinds.entry(kind.name()).or_default();
            let kind_triggered = counts.retried > 0;
            let kind_fixed = kind_triggered && counts.answered_after >= counts.retried;
            row[0] += 1;
            row[1] += u64::from(kind_triggered);
            row[2] += u64::from(kind_fixed);
            row[3] += u64::from(kind_triggered && passed);
            met = true;
            triggered |= kind_triggered;
            fixed &= !kind_triggered || kind_fixed;
        }
        any[0] += u64::from(met);
        any[1] += u64::from(triggered);
        any[2] += u64::from(triggered && fixed);
        any[3] += u64::from(triggered && passed);
    }
    let row = |name: &str, counts: [u64; 4]| FaultTolerance::new(name.to_owned(), None, counts);
    FaultToleranceReport {
        convention,
        infra_errors,
        by_kind: kinds.into_iter().map(|(name, counts)| row(name, counts)).collect(),
        any: row("any", any),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{episode, r, task};
    use super::super::{EpisodeOutcome, FaultCounts, pass_hat_k};
    use super::*;

    /// Refusals of one kind, each recovered one past in one extra call.
    fn kind(hits: u32, retried: u32, recovered: u32) -> KindCounts {
        KindCounts { hits, injected: hits, encountered: hits, retried, recovered, extra_calls: recovered, answered_after: recovered }
    }

    #[test]
    fn recovery_statistics_like_table_8() {
        // ReAct at λ = 0.2: 47 faults encountered, 38 recovered (80.9 %); 18
        // recoveries took 2 extra calls and 20 took 1: 56 extra calls,
        // 56/47 = 1.19 per fault ("+1.2"), 56/38 = 1.47 per recovery.
        let episodes: Vec<_> = (0..47)
            .map(|i| {
                let mut e = episode("x/a", i, EpisodeOutcome::Passed);
                let (recovered, extra) = match i {
                    0..18 => (1, 2),
                    18..38 => (1, 1),
                    _ => (0, 0),
                };
                e.fault_stats = FaultCounts { injected: 1, encountered: 1, recovered, extra_calls: extra };
                e.faults_by_kind.insert(FaultKind::TransientTimeout, KindCounts { extra_calls: extra, ..kind(1, recovered, recovered) });
                e
            })
            .collect();
        let stats = fault_recovery(&episodes);
        assert_eq!((stats.episodes, stats.injected, stats.encountered, stats.recovered, stats.extra_calls), (47, 47, 47, 38, 56));
        assert!((stats.recovery_rate.value.unwrap() - 0.8085).abs() < 1e-4);
        assert!((stats.extra_calls_per_fault.unwrap() - 56.0 / 47.0).abs() < 1e-12);
        assert!((stats.extra_calls_per_recovery.unwrap() - 56.0 / 38.0).abs() < 1e-12);
        assert_eq!(stats.by_kind["TransientTimeout"], KindCounts { extra_calls: 56, ..kind(47, 38, 38) });
        assert_eq!((stats.hits, stats.retried), (47, 38));
        let empty = fault_recovery(&[]);
        assert_eq!((empty.episodes, empty.recovery_rate.value, empty.extra_calls_per_fault), (0, None, None));
    }

    #[test]
    fn ablation_reproduces_table_9() {
        // 80 episodes per profile (20 tasks × 2 agents × 2 runs): timeout-only
        // 79/80 = 98.75 %, rate-limit-only 75/80 = 93.75 %, partial-response-only
        // 78/80 = 97.5 %, mixed 77/80 = 96.25 %. vs Mixed: +2.50, −2.50, +1.25 points.
        let mut episodes = Vec::new();
        for (profile, passes) in [("timeout-only", 79), ("rate-limit-only", 75), ("partial-response-only", 78), ("mixed", 77)] {
            episodes.extend(task("x/a", passes, 80).into_iter().map(|mut e| {
                e.fault_profile = profile.to_owned();
                e.lambda = 0.2;
                e
            }));
        }
        let rows = ablation(&episodes, "mixed", InfraConvention::default());
        let got: Vec<_> = rows.iter().map(|r| (r.fault_profile.as_str(), r.pass.rate.value.unwrap(), r.vs_baseline)).collect();
        let want = [
            ("mixed", 0.9625, None),
            ("partial-response-only", 0.975, Some(0.0125)),
            ("rate-limit-only", 0.9375, Some(-0.025)),
            ("timeout-only", 0.9875, Some(0.025)),
        ];
        assert_eq!(got.len(), want.len());
        for ((name, rate, vs), (want_name, want_rate, want_vs)) in got.iter().zip(want) {
            assert_eq!(*name, want_name);
            assert!((rate - want_rate).abs() < 1e-12);
            match (vs, want_vs) {
                (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{name}: {a} vs {b}"),
                (a, b) => assert_eq!(*a, b),
            }
        }
        // Without the baseline there is nothing to compare with.
        let rows = ablation(&episodes[..80], "mixed", InfraConvention::default());
        assert_eq!((rows.len(), rows[0].vs_baseline), (1, None));
        assert!(ablation(&[], "mixed", InfraConvention::default()).is_empty());
    }

    /// `passes` of `trials` episodes of `task_id` under `profile`.
    fn under(profile: &str, task_id: &str, passes: u32, trials: u32) -> Vec<EpisodeResult> {
        task(task_id, passes, trials)
            .into_iter()
            .map(|mut e| {
                e.fault_profile = profile.to_owned();
                e
            })
            .collect()
    }

    #[test]
    fn robustness_scores_by_hand() {
        // Baseline "0.0", 2 trials: t1 PP, t2 PP, t3 PF, t4 PP → T_base = {t1, t2, t4}.
        // timeout-only: t1 PP (1), t2 PF (½), t3 PP (not in T_base), t4 not run
        //   → N = 3/2 over 2 tasks: RS = 3/4.
        // rate-limit-only: t1 FF (0), t2 PP (1), t4 PP (1) → 2/3.
        let episodes = [
            under("0.0", "x/t1", 2, 2),
            under("0.0", "x/t2", 2, 2),
            under("0.0", "x/t3", 1, 2),
            under("0.0", "x/t4", 2, 2),
            under("timeout-only", "x/t1", 2, 2),
            under("timeout-only", "x/t2", 1, 2),
            under("timeout-only", "x/t3", 2, 2),
            under("rate-limit-only", "x/t1", 0, 2),
            under("rate-limit-only", "x/t2", 2, 2),
            under("rate-limit-only", "x/t4", 2, 2),
        ]
        .concat();
        let scores = robustness_scores(&episodes, "0.0", InfraConvention::default()).unwrap();
        let got: Vec<_> = scores.iter().map(|s| (s.fault_profile.as_str(), s.base_tasks, s.tasks, s.solved, s.score)).collect();
        assert_eq!(got, [("rate-limit-only", 3, 3, r(2, 1), Some(r(2, 3))), ("timeout-only", 3, 2, r(3, 2), Some(r(3, 4)))]);
        assert!(scores[0].ci.is_some());
        // One trial per task, as MAS-FIRE runs: T_base = {t1, t2}; under f t1
        // passes, t2 fails → N_f,success = 1, RS = 1/2.
        let single = [under("0.0", "x/t1", 1, 1), under("0.0", "x/t2", 1, 1), under("f", "x/t1", 1, 1), under("f", "x/t2", 0, 1)].concat();
        let scores = robustness_scores(&single, "0.0", InfraConvention::default()).unwrap();
        assert_eq!((scores[0].solved, scores[0].score), (Ratio::ONE, Some(r(1, 2))));
        // An infrastructure error in the baseline: t3's second trial. Counted
        // as a failure, t3 stays out of T_base; excluded, t3 (P) joins it, and
        // timeout-only's t3 PP counts: N = 5/2 over 3 → 5/6.
        let mut with_infra = episodes.clone();
        with_infra[5].outcome = EpisodeOutcome::InfraError("lost".into());
        let counted = robustness_scores(&with_infra, "0.0", InfraConvention::CountAsFailure).unwrap();
        let excluded = robustness_scores(&with_infra, "0.0", InfraConvention::Exclude).unwrap();
        assert_eq!((counted[1].base_tasks, counted[1].score), (3, Some(r(3, 4))));
        assert_eq!((excluded[1].base_tasks, excluded[1].score), (4, Some(r(5, 6))));
        // No baseline, no score; no input, no rows.
        let scores = robustness_scores(&episodes[8..], "0.0", InfraConvention::default()).unwrap();
        assert!(scores.iter().all(|s| s.base_tasks == 0 && s.score.is_none()));
        assert!(robustness_scores(&[], "0.0", InfraConvention::default()).unwrap().is_empty());
    }

    #[test]
    fn fault_tolerance_by_hand() {
        // e1 passed: SoftRateLimit hit twice, both retried and recovered.
        // e2 failed: SoftRateLimit hit once, retried, never recovered.
        // e3 passed: SoftRateLimit hit once, not retried.
        // e4 failed: SoftRateLimit retried and recovered; TransientTimeout not retried.
        // e5 passed: no fault.
        // SoftRateLimit: N_total 4, trigger 3 (e1 e2 e4), fixed 2 (e1 e4),
        // final 1 (e1): O = 3/4, L = 2/3, S = 1/3. TransientTimeout: N_total 1,
        // trigger 0: O = 0, L and S undefined. Any: 4, 3, 2 (e1; e4, whose
        // only reaction was fixed), 1.
        let with = |trial, outcome, kinds: &[(&str, KindCounts)]| {
            let mut e = episode("x/a", trial, outcome);
            e.faults_by_kind = kinds.iter().map(|(k, c)| (FaultKind::parse(k).unwrap(), *c)).collect();
            e
        };
        let mut episodes = vec![
            with(0, EpisodeOutcome::Passed, &[("SoftRateLimit", kind(2, 2, 2))]),
            with(1, EpisodeOutcome::Failed, &[("SoftRateLimit", kind(1, 1, 0))]),
            with(2, EpisodeOutcome::Passed, &[("SoftRateLimit", kind(1, 0, 0))]),
            with(3, EpisodeOutcome::Failed, &[("SoftRateLimit", kind(1, 1, 1)), ("TransientTimeout", kind(1, 0, 0))]),
            with(4, EpisodeOutcome::Passed, &[]),
        ];
        let report = fault_tolerance(&episodes, InfraConvention::default());
        let counts = |f: &FaultTolerance| (f.fault.clone(), f.injected_episodes, f.triggered, f.fixed, f.final_success);
        assert_eq!(
            report.by_kind.iter().map(counts).collect::<Vec<_>>(),
            [("SoftRateLimit".to_owned(), 4, 3, 2, 1), ("TransientTimeout".to_owned(), 1, 0, 0, 0)]
        );
        assert_eq!(counts(&report.any), ("any".to_owned(), 4, 3, 2, 1));
        let srl = &report.by_kind[0];
        assert_eq!((srl.occurrence.value, srl.local_success.successes, srl.local_success.total), (Some(0.75), 2, 3));
        assert!((srl.success.value.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        let tt = &report.by_kind[1];
        assert_eq!((tt.occurrence.value, tt.local_success.value, tt.success.value), (Some(0.0), None, None));
        // An infrastructure error met by SoftRateLimit: counted (N_total 5,
        // O = 3/5) by default, left out when excluded; reported either way.
        episodes.push(with(5, EpisodeOutcome::InfraError("lost".into()), &[("SoftRateLimit", kind(1, 0, 0))]));
        let counted = fault_tolerance(&episodes, InfraConvention::CountAsFailure);
        let excluded = fault_tolerance(&episodes, InfraConvention::Exclude);
        assert_eq!((counted.by_kind[0].injected_episodes, counted.infra_errors), (5, 1));
        assert_eq!((excluded.by_kind[0].injected_episodes, excluded.infra_errors), (4, 1));
        let empty = fault_tolerance(&[], InfraConvention::default());
        assert!(empty.by_kind.is_empty());
        assert_eq!((empty.any.injected_episodes, empty.any.occurrence.value), (0, None));
    }

    #[test]
    fn reports_do_not_depend_on_episode_order() {
        let mut episodes = [under("0.0", "x/t1", 2, 3), under("mixed", "x/t1", 1, 3), under("mixed", "x/t2", 3, 3)].concat();
        for (i, e) in episodes.iter_mut().enumerate() {
            e.faults_by_kind.insert([FaultKind::SoftRateLimit, FaultKind::TransientTimeout][i % 2], kind(1, (i % 3 == 0).into(), 0));
            e.epsilon = [0.0, 0.1][i % 2];
        }
        let report = |episodes: &[EpisodeResult]| {
            serde_json::to_string(&(
                pass_hat_k(episodes, 2, InfraConvention::default()).unwrap(),
                super::super::reliability_surface(episodes, &[1, 2], InfraConvention::default()).unwrap(),
                fault_recovery(episodes),
                ablation(episodes, "mixed", InfraConvention::default()),
                robustness_scores(episodes, "0.0", InfraConvention::default()).unwrap(),
                fault_tolerance(episodes, InfraConvention::default()),
            ))
            .unwrap()
        };
        let forward = report(&episodes);
        episodes.reverse();
        assert_eq!(report(&episodes), forward);
        episodes.rotate_left(4);
        assert_eq!(report(&episodes), forward);
    }
}
