//! Properties every task of the verified suite must have.

use std::collections::BTreeSet;

use toolenv_core::{Episode, Outcome};
use toolenv_domains::{Finish, selfcheck::SelfCheck, suite};

#[test]
fn every_domain_has_tasks_covering_both_levels() {
    let ids: BTreeSet<&str> = suite().iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids.len(), suite().len(), "task ids are unique");
    for domain in toolenv_domains::registry::ALL {
        let tasks: Vec<_> = suite().iter().filter(|t| t.domain == domain).collect();
        assert!(!tasks.is_empty(), "{domain} has tasks");
        for level in [1, 2] {
            assert!(tasks.iter().any(|t| t.level == level), "{domain} has a level {level} task");
        }
        for task in &tasks {
            assert!(task.id.starts_with(&format!("{domain}/")), "{} is named after its domain", task.id);
            assert_eq!(task.initial.domain(), domain, "{} starts in its own domain", task.id);
            assert!(!task.description().contains('{'), "{} has every slot filled: {}", task.id, task.description());
        }
    }
    let per_domain: usize = toolenv_domains::registry::ALL.iter().map(|&d| suite().iter().filter(|t| t.domain == d).count()).sum();
    assert_eq!(suite().len(), per_domain, "every task belongs to a registered domain");
    let tools: usize = toolenv_domains::registry::ALL.iter().map(|d| d.tools().len()).sum();
    assert!(tools >= 25, "{tools} tools in all");
}

#[test]
fn every_oracle_passes_the_reference_and_fails_inaction_and_random_agents() {
    let mut problems = Vec::new();
    for task in suite() {
        let check = SelfCheck::run(task);
        problems.extend(check.problems().into_iter().map(|p| format!("{}: {p}", task.id)));
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn reference_calls_never_meet_a_domain_error() {
    for task in suite() {
        let mut episode = Episode::new(task, 0, 0);
        for call in &task.reference {
            let record = episode.call(call.tool, &call.arguments.to_string()).expect("reference calls are well formed");
            assert!(matches!(record.outcome, Outcome::Result(_)), "{} {}: {:?}", task.id, call.tool, record.outcome);
        }
    }
}

#[test]
fn same_calls_give_identical_trajectories() {
    for task in suite() {
        let calls = toolenv_domains::agent::random_calls(task, 11, 30);
        let a = toolenv_domains::agent::play_calls(task, 11, 1, &calls);
        let b = toolenv_domains::agent::play_calls(task, 11, 1, &calls);
        assert_eq!(serde_json::to_string(a.trajectory()).unwrap(), serde_json::to_string(b.trajectory()).unwrap());
    }
}

#[test]
fn random_call_sequences_never_panic_and_rejected_calls_change_nothing() {
    for task in suite() {
        for seed in toolenv_core::testing::sweep_seeds(200, 20) {
            let mut episode = Episode::new(task, seed, 0);
            for call in toolenv_domains::agent::random_calls(task, seed, 40) {
                let before = episode.state();
                let spec = task.domain.tool(call.tool).expect("random agent calls the domain's tools");
                match episode.call(call.tool, &call.arguments.to_string()) {
                    Ok(record) => {
                        let changed = record.state_changed;
                        let rejected = matches!(record.outcome, Outcome::Error(_));
                        assert!(!(rejected && changed), "{}: a rejected {} changed the state", task.id, call.tool);
                        assert!(spec.mutates_state || !changed, "{}: read-only {} changed the state", task.id, call.tool);
                        assert_eq!(changed, before != episode.state(), "{}: state_changed is accurate for {}", task.id, call.tool);
                    }
                    Err(_) => assert_eq!(before, episode.state()),
                }
            }
            let verdict = episode.finish().clone();
            assert_eq!(&verdict, episode.finish(), "finishing is stable");
        }
    }
}

#[test]
fn names_shown_in_tables_take_the_width_asked_for() {
    // Reports and the self-check align their columns with `{:<N}`.
    let domain = toolenv_domains::registry::TRAVEL;
    assert_eq!(format!("{domain:<10}|{domain:>8}|"), "travel    |  travel|");
    let kind = toolenv_core::chaos::FaultKind::TransientTimeout;
    assert_eq!(format!("{kind:<20}|"), "TransientTimeout    |");
}
