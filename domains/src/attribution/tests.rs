//! Attribution's tests: built-in agents and teams under every profile, attributed consistently.

use std::collections::BTreeMap;

use super::continuation::{Plan, continue_from};
use super::*;
use crate::{Finish, perturb::perturb, suite};
use toolenv_core::{
    Call, CallOptions, Episode, Source, Trajectory,
    chaos::{Chaos, FaultKind, FaultParams, FaultProfile},
    phrasing::Level,
};

/// Plays `calls` once each (no retries, no waits) under `profile` at `level`, and finishes.
fn played(task: &'static Task, seed: u64, profile: &FaultProfile, level: Level, calls: impl Fn(&str) -> Vec<Call>) -> Episode {
    let perturbed = perturb(task, level, seed, None);
    let mut episode =
        Episode::new(task, seed, 0).with_chaos(Chaos::new(profile.clone()).unwrap()).with_perturbation(level, perturbed.clone());
    for (i, call) in calls(&perturbed.description).iter().enumerate() {
        let key = format!("agent-key-{i}");
        let _ = episode.call_with(
            call.tool,
            &call.arguments.to_string(),
            &CallOptions { agent: None, idempotency_key: Some(&key), waited_ms: Some(0), user_answer: None },
        );
    }
    episode.finish_with_feasibility();
    episode
}

fn source(episode: &Episode) -> Source {
    Source::of(episode.task_ref(), episode.trajectory())
}

/// The profiles the built-in agents are attributed under.
fn profiles() -> Vec<(&'static str, FaultProfile)> {
    let mut profiles: Vec<_> = ["0.0", "0.1", "0.2", "0.3"].map(|p| (p, FaultProfile::preset(p).unwrap())).into();
    let hard: BTreeMap<String, f64> = [(FaultKind::HardRateLimit.name().to_owned(), 1.0)].into();
    profiles.push(("hard", FaultProfile::custom(0.3, &hard, FaultParams::default()).unwrap()));
    let lost: BTreeMap<String, f64> = [(FaultKind::AmbiguousCommit.name().to_owned(), 1.0)].into();
    profiles.push(("lost", FaultProfile::custom(0.3, &lost, FaultParams::default()).unwrap()));
    profiles
}

/// Checks the must-hold property of one failed episode's attribution and returns it.
fn checked(episode: &Episode) -> Attribution {
    let trajectory: &Trajectory = episode.trajectory();
    let src = source(episode);
    let attribution = attribute(&src, trajectory).expect("the recording replays");
    assert_eq!(attribute(&src, trajectory).unwrap(), attribution, "attribution is deterministic");
    let task = episode.task();
    let plan = Plan::of(task);
    let calls = &trajectory.calls;
    // One feasibility: the verdict's decides who is responsible.
    let feasible = trajectory.verdict.as_ref().and_then(|v| v.feasible).expect("a finished episode's feasibility is decided");
    assert_eq!(attribution.infeasible_from_start, !feasible, "{}: {attribution:?}", task.id);
    assert_eq!(attribution.responsible == Some(Responsible::Environment), !feasible, "{}: {attribution:?}", task.id);
    assert_eq!(attribution.errors[0].responsible == Responsible::Environment, !feasible, "{}: {attribution:?}", task.id);
    match attribution.decisive_step {
        Some(s) => {
            let fork = Episode::fork(&src, calls, s as usize).unwrap();
            assert!(continue_from(task, &plan, &fork, false).passed, "{}: fork at the decisive step {s} passes", task.id);
            if (s as usize) < calls.len() {
                let later = Episode::fork(&src, calls, s as usize + 1).unwrap();
                assert!(!continue_from(task, &plan, &later, false).passed, "{}: fork after the decisive step {s} fails", task.id);
            }
            assert_eq!(attribution.premature_stop, s as usize == calls.len());
        }
        // Infeasible, or feasible with no continuation tried passing from any fork.
        None => assert!(attribution.infeasible_from_start || continuations_fail(&src, task, &plan, calls), "{}", task.id),
    }
    assert!(!attribution.errors.is_empty(), "{}: a failed episode has an error", task.id);
    attribution
}

/// Whether no continuation passes from any fork of the recorded calls.
fn continuations_fail(src: &Source, task: &Task, plan: &Plan, calls: &[toolenv_core::CallRecord]) -> bool {
    (0..=calls.len()).all(|t| !continue_from(task, plan, &Episode::fork(src, calls, t).unwrap(), false).passed)
}

/// Attribution reads the verdict's feasibility, the one the run report
/// counts: over the faulted episodes of the built-in agents at λ = 0.3 and
/// under suspensions, every infeasible episode is the environment's from
/// the start and every feasible failure an agent's — even where a
/// continuation writing the reference values blind would pass from the
/// start, or a suspension met after the decisive step would once have
/// been blamed.
#[test]
fn attribution_never_contradicts_the_verdicts_feasibility() {
    let (mut infeasible, mut feasible) = (0, 0);
    for (name, profile) in profiles().into_iter().filter(|(n, _)| ["0.3", "hard"].contains(n)) {
        for task in suite() {
            for seed in 0..3 {
                let no_retry = played(task, seed, &profile, Level::Canonical, |_| task.reference.clone());
                let random = played(task, seed, &profile, Level::Canonical, |_| crate::agent::random_calls(task, seed, 12));
                for episode in [no_retry, random] {
                    let Some(verdict) = episode.verdict().filter(|v| !v.passed) else { continue };
                    let attribution = attribute(&source(&episode), episode.trajectory()).unwrap();
                    let what = format!("{} {name} seed {seed}: {attribution:?}", task.id);
                    match verdict.feasible {
                        Some(false) => {
                            infeasible += 1;
                            assert!(attribution.infeasible_from_start, "{what}");
                            assert_eq!(attribution.responsible, Some(Responsible::Environment), "{what}");
                            assert_eq!(
                                (attribution.decisive_step, attribution.errors[0].error),
                                (None, ErrorType::UnrecoverableFault),
                                "{what}"
                            );
                        }
                        Some(true) => {
                            feasible += 1;
                            assert!(!attribution.infeasible_from_start, "{what}");
                            assert!(matches!(attribution.responsible, Some(Responsible::Agent | Responsible::User)), "{what}");
                            assert!(attribution.errors.iter().all(|e| e.responsible != Responsible::Environment), "{what}");
                        }
                        None => panic!("{what}: feasibility not decided"),
                    }
                }
            }
        }
    }
    assert!(infeasible > 5 && feasible > 50, "{infeasible} infeasible, {feasible} feasible failures");
}

#[test]
fn replaying_a_trajectory_reproduces_every_call_and_the_verdict() {
    for (_, profile) in profiles() {
        for task in suite() {
            let episode = played(task, 7, &profile, Level::Medium, |_| task.reference.clone());
            let replayed = Episode::replay_finished(&source(&episode), episode.trajectory(), &crate::Assessor).unwrap();
            assert_eq!(replayed.trajectory(), episode.trajectory());
        }
    }
}

#[test]
fn a_fork_diverging_from_its_record_is_an_error_naming_the_call() {
    let task = &suite()[0];
    let episode = played(task, 1, &FaultProfile::none(), Level::Canonical, |_| task.reference.clone());
    let mut calls = episode.trajectory().calls.clone();
    calls[0].state_changed = !calls[0].state_changed;
    let error = Episode::fork(&source(&episode), &calls, 1).unwrap_err();
    assert!(matches!(error, ForkError::Diverged { index: 0, .. }), "{error}");
    let error = Episode::fork(&source(&episode), &calls, calls.len() + 1).unwrap_err();
    assert!(matches!(error, ForkError::PastEnd { .. }), "{error}");
}

#[test]
fn a_fork_continues_with_the_recorded_fault_schedule_and_keys() {
    // The reference solution under lost replies, forked at every step and
    // finished with the rest of the calls, gives the same trajectory.
    let (_, profile) = profiles().pop().unwrap();
    for task in suite() {
        let episode = played(task, 3, &profile, Level::Canonical, |_| task.reference.clone());
        let calls = &episode.trajectory().calls;
        for t in 0..=calls.len() {
            let mut fork = Episode::fork(&source(&episode), calls, t).unwrap();
            for call in &calls[t..] {
                let _ = fork.replay_call(&call.into());
            }
            fork.finish_with_feasibility();
            assert_eq!(fork.trajectory(), episode.trajectory(), "{} forked at {t}", task.id);
        }
    }
}

#[test]
fn built_in_agents_are_attributed_consistently_under_every_profile() {
    let mut attributed = 0;
    let mut decisive_types = std::collections::BTreeSet::new();
    for (name, profile) in profiles() {
        for task in suite() {
            for seed in 0..3 {
                let no_retry = played(task, seed, &profile, Level::Canonical, |_| task.reference.clone());
                let brittle = played(task, seed, &profile, Level::Heavy, |d| crate::perturb::brittle_calls(task, d));
                let random = played(task, seed, &profile, Level::Canonical, |_| crate::agent::random_calls(task, seed, 12));
                for episode in [no_retry, brittle, random] {
                    if episode.verdict().is_some_and(|v| !v.passed) {
                        let attribution = checked(&episode);
                        attributed += 1;
                        decisive_types.insert(attribution.errors[0].error);
                        if name == "0.0" {
                            assert_eq!(attribution.responsible, Some(Responsible::Agent), "{}: no faults, the agent's", task.id);
                        }
                    }
                }
            }
        }
    }
    assert!(attributed > 100, "only {attributed} failed episodes");
    for expected in [ErrorType::WrongValue, ErrorType::GaveUpAfterRecoverableFault, ErrorType::UnrecoverableFault] {
        assert!(decisive_types.contains(&expected), "no decisive {expected:?} among {decisive_types:?}");
    }
}

/// The built-in teams under MAS-FIRE faults: their trajectories (joins,
/// messages, agent ids, prompt faults) replay byte for byte, and every failed
/// episode is attributed consistently, the solver continuing as one of the team.
#[test]
fn team_episodes_replay_and_are_attributed_consistently() {
    use crate::masfire::team::{Topology, run};
    use toolenv_core::masfire::{MasFault, MasProfile};
    let mut attributed = 0;
    for fault in [MasFault::ParameterFillingError, MasFault::Hallucination, MasFault::InstructionAmbiguity, MasFault::MessageCycle] {
        for topology in Topology::ALL {
            for task in suite() {
                let profile = MasProfile::of(vec![fault], 0.5);
                let mut episode = Episode::new(task, 3, 0).with_team(topology.roles(), Some(profile)).unwrap();
                let _ = run(task, topology, &mut episode);
                episode.finish_with_feasibility();
                let replayed = Episode::replay_finished(&source(&episode), episode.trajectory(), &crate::Assessor).unwrap();
                assert_eq!(replayed.trajectory(), episode.trajectory(), "{} {fault} {}", task.id, topology.name());
                if episode.verdict().is_some_and(|v| !v.passed) {
                    checked(&episode);
                    attributed += 1;
                }
            }
        }
    }
    assert!(attributed > 10, "only {attributed} failed team episodes");
}

#[test]
fn a_suspension_that_made_success_impossible_is_the_environments() {
    let (_, hard) = profiles().into_iter().find(|(n, _)| *n == "hard").unwrap();
    let mut environment = 0;
    for task in suite() {
        for seed in 0..4 {
            let episode = played(task, seed, &hard, Level::Canonical, |_| task.reference.clone());
            let Some(verdict) = episode.verdict().filter(|v| !v.passed) else { continue };
            let suspended = episode.trajectory().calls.iter().any(|c| c.fault.is_some_and(|f| f.kind == FaultKind::HardRateLimit));
            let attribution = checked(&episode);
            if suspended && verdict.feasible == Some(false) {
                // Nothing the agent did wrong: the reference's calls, once each, and a suspension.
                assert_eq!(attribution.responsible, Some(Responsible::Environment), "{} seed {seed}: {attribution:?}", task.id);
                assert_eq!(attribution.errors[0].error, ErrorType::UnrecoverableFault);
                assert_eq!(attribution.errors[0].mast, None);
                environment += 1;
            }
            assert!(
                attribution.errors.iter().all(|e| e.responsible == Responsible::Environment || e.error != ErrorType::UnrecoverableFault)
            );
        }
    }
    assert!(environment > 5, "only {environment} suspended episodes");
}

#[test]
fn a_dropped_write_is_a_premature_stop_after_a_recoverable_fault() {
    let timeouts: BTreeMap<String, f64> = [(FaultKind::TransientTimeout.name().to_owned(), 1.0)].into();
    let profile = FaultProfile::custom(0.4, &timeouts, FaultParams::default()).unwrap();
    let mut seen = 0;
    for task in suite() {
        for seed in 0..4 {
            let episode = played(task, seed, &profile, Level::Canonical, |_| task.reference.clone());
            if episode.verdict().is_some_and(|v| v.passed) {
                continue;
            }
            let attribution = checked(&episode);
            assert!(attribution.premature_stop, "{}: {attribution:?}", task.id);
            assert_eq!(attribution.decisive_step, Some(attribution.steps));
            assert_eq!(attribution.errors[0].error, ErrorType::GaveUpAfterRecoverableFault);
            assert_eq!(attribution.errors[0].mast, Some(Mast::Fm3_1));
            seen += 1;
        }
    }
    assert!(seen > 5, "only {seen}");
}

#[test]
fn the_taxonomy_names_parse_back_and_map_into_mast() {
    for mast in Mast::ALL {
        assert_eq!(Mast::parse(mast.name()), Some(mast));
        assert!((1..=3).contains(&mast.category()));
    }
    assert_eq!(Mast::Fm2_6.title(), "Uses inconsistent reasoning");
    for error in ErrorType::ALL {
        assert_eq!(error.mast().is_none(), error == ErrorType::UnrecoverableFault);
    }
}
