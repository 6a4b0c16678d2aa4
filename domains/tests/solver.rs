//! The result-reading solver: it passes every task at every perturbation
//! level, every feasible episode under every fault preset, and plays the same
//! inputs the same way.

use std::collections::BTreeMap;

use toolenv_core::{
    Episode, Task,
    chaos::{Chaos, FaultKind, FaultProfile, PRESETS},
    phrasing::Level,
};
use toolenv_domains::{
    perturb::perturb,
    solver::{Solution, solve},
    suite,
};

/// Seeds per task and preset in the fault sweep.
const SEEDS: u64 = 200;

fn episode(task: &'static Task, preset: &str, level: Level, seed: u64) -> Episode {
    let chaos = Chaos::new(FaultProfile::preset(preset).expect("a preset")).expect("a valid preset");
    Episode::new(task, seed, 0).with_chaos(chaos).with_perturbation(level, perturb(task, level, seed, None))
}

#[test]
fn the_solver_passes_every_task_at_every_perturbation_level_without_faults() {
    for task in suite() {
        for level in Level::ALL {
            for seed in 0..5 {
                let mut episode = episode(task, "0.0", level, seed);
                let solution = solve(&mut episode);
                assert!(
                    solution.verdict.passed && solution.ended.is_ok(),
                    "{} at ε={} seed {seed}: {:?}\n{}",
                    task.id,
                    level.epsilon(),
                    solution.ended,
                    solution.verdict.diff_text()
                );
            }
        }
    }
}

/// How the solver fared under one preset.
#[derive(Debug, Default)]
struct Tally {
    episodes: u32,
    passed: u32,
    infeasible: u32,
    calls: u64,
}

#[test]
fn the_solver_passes_every_feasible_episode_under_every_fault_preset() {
    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut failures = Vec::new();
    for preset in PRESETS {
        let tally = tallies.entry(preset).or_default();
        for task in suite() {
            for seed in toolenv_core::testing::sweep_seeds(SEEDS, 25) {
                let mut episode = episode(task, preset, Level::Canonical, seed);
                let solution = solve(&mut episode);
                tally.episodes += 1;
                tally.passed += u32::from(solution.verdict.passed);
                tally.infeasible += u32::from(!solution.feasible());
                tally.calls += episode.trajectory().calls.len() as u64;
                if !solution.feasible() {
                    // Infeasible only for a fault no agent gets past.
                    let suspended = episode.trajectory().calls.iter().any(|c| c.fault.is_some_and(|f| f.kind == FaultKind::HardRateLimit));
                    assert!(
                        suspended || episode.trajectory().calls.len() >= episode.max_calls() as usize,
                        "{}: {:?}",
                        task.id,
                        solution.ended
                    );
                } else if !solution.verdict.passed {
                    failures.push(describe(task, preset, seed, &solution, &episode));
                }
            }
        }
    }
    for (preset, t) in &tallies {
        eprintln!(
            "λ {preset:>22}: solver pass {:5.1}% · infeasible {:4.1}% · pass over feasible {:5.1}% · {:.1} calls/episode",
            100.0 * f64::from(t.passed) / f64::from(t.episodes),
            100.0 * f64::from(t.infeasible) / f64::from(t.episodes),
            100.0 * f64::from(t.passed) / f64::from(t.episodes - t.infeasible).max(1.0),
            t.calls as f64 / f64::from(t.episodes),
        );
    }
    assert!(failures.is_empty(), "{} feasible episodes failed:\n{}", failures.len(), failures.join("\n"));
    // The presets without suspensions leave every episode feasible.
    for (preset, t) in &tallies {
        let suspends = FaultProfile::preset(preset).unwrap().fault_weights.contains_key(&FaultKind::HardRateLimit);
        assert_eq!(t.infeasible == 0, !suspends || t.episodes == 0, "{preset}: {t:?}");
    }
}

fn describe(task: &Task, preset: &str, seed: u64, solution: &Solution, episode: &Episode) -> String {
    let faults: Vec<String> = episode
        .trajectory()
        .calls
        .iter()
        .filter_map(|c| c.fault.map(|f| format!("{}:{}{}", c.index, f.kind, if f.new { "" } else { "'" })))
        .collect();
    let failed: Vec<&str> = solution.verdict.failures().map(|c| c.name.as_str()).collect();
    format!("  {} λ={preset} seed {seed}: {:?}; failed {failed:?}; faults {}", task.id, solution.ended, faults.join(" "))
}

#[test]
fn the_same_episode_is_played_the_same_way() {
    for task in suite() {
        for preset in ["0.2", "0.3", "mixed"] {
            let play = || {
                let mut episode = episode(task, preset, Level::Medium, 17);
                let solution = solve(&mut episode);
                (serde_json::to_string(episode.trajectory()).unwrap(), solution)
            };
            let (first, a) = play();
            let (second, b) = play();
            assert_eq!(first, second, "{} under λ={preset}", task.id);
            assert_eq!(a, b);
        }
    }
}
