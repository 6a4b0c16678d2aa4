//! The fuzz harness's bounded run: every target survives, and its
//! mutations are deterministic. (The harness is not a default member of the
//! workspace, so that its paused-time tokio stays out of the `toolenv`
//! binary; its tests run here.)

use toolenv_fuzz::{Gen, Target, run};

/// A bounded run of every target: no panics.
#[test]
fn every_target_survives_a_bounded_run() {
    for (target, executions) in [(Target::Args, 20_000), (Target::Profiles, 5_000), (Target::Wire, 3_000)] {
        let crashes = run(target, 1, executions, 5);
        assert!(crashes.is_empty(), "{}: {crashes:#?}", target.name());
    }
}

#[test]
fn mutations_are_deterministic_and_vary() {
    let (mut a, mut b) = (Gen::new(9), Gen::new(9));
    let seed = br#"{"date": "2026-01-01"}"#;
    let first: Vec<_> = (0..50).map(|_| a.mutate(seed)).collect();
    assert_eq!(first, (0..50).map(|_| b.mutate(seed)).collect::<Vec<_>>());
    assert!(first.iter().filter(|m| m.as_slice() != seed).count() > 40);
}
