//! Generated tasks are sound for every seed, not only the seeds the other
//! tests use: the self-check (reference and solver pass; inaction, random
//! agents and every wrong cheat fail) over a deterministic sweep of many
//! seeds with a small sample each, on every run, and no draw ambiguous
//! (`generate::ambiguity`: no count check matches a record of the initial
//! state).
//!
//! The large sweep is the same test over more seeds and tasks, ignored by
//! default (docs/suite.md gives the command):
//!
//! ```text
//! TOOLENV_SWEEP_SEEDS=100 TOOLENV_SWEEP_PER_CELL=1000 nice cargo test --release \
//!     -p toolenv-domains --test tests soundness -- --ignored --nocapture
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};

use toolenv_domains::generate::{LEVELS, Origin, ambiguity, generate};
use toolenv_domains::selfcheck::SelfCheck;

/// Random-agent episodes per task, as `toolenv selfcheck` uses for a
/// generated suite.
const RANDOM_SEEDS: u64 = 4;

/// The seeds of a sweep: `0..count`, then a few far from zero (a user's
/// seed is any `u64`).
fn seeds(count: u64) -> impl Iterator<Item = u64> {
    toolenv_core::testing::sweep_seeds(count, 8).chain([1 << 32, 987_654_321_987, u64::MAX])
}

/// The problems of every task of `per_cell` indices per domain and level
/// for each seed, checked on `threads` threads; prints a summary.
fn sweep(seeds: impl Iterator<Item = u64>, per_cell: u32, threads: usize) -> Vec<String> {
    let origins: Vec<Origin> = seeds
        .flat_map(|seed| {
            toolenv_domains::registry::ALL.into_iter().flat_map(move |domain| {
                LEVELS.into_iter().flat_map(move |level| (0..per_cell).map(move |index| Origin { domain, level, seed, index }))
            })
        })
        .collect();
    let next = AtomicUsize::new(0);
    let mut problems: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut found = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&origin) = origins.get(i) else { break found };
                        let task = generate(origin);
                        if let Some(why) = ambiguity(&task) {
                            found.push(format!("{}: ambiguous: {why}", task.id));
                        }
                        let check = SelfCheck::run_with(task, RANDOM_SEEDS);
                        found.extend(check.problems().into_iter().map(|p| format!("{}: {p}", check.task.id)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    problems.sort();
    println!("{} generated tasks self-checked on {threads} thread(s): {} problem(s)", origins.len(), problems.len());
    problems
}

#[test]
fn no_task_of_the_paper_suite_counts_records_of_its_initial_state() {
    for task in toolenv_domains::suite() {
        assert_eq!(ambiguity(task), None, "{}", task.id);
    }
}

#[test]
fn generated_tasks_are_sound_for_many_seeds() {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(2);
    let problems = sweep(seeds(32), 1, threads);
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// The large sweep: `TOOLENV_SWEEP_SEEDS` seeds (default 100) ×
/// `TOOLENV_SWEEP_PER_CELL` tasks per domain and level (default 1000) on
/// `TOOLENV_SWEEP_THREADS` threads (default 1), from seed
/// `TOOLENV_SWEEP_FIRST` (default 0).
#[test]
#[ignore = "minutes in release: run by hand (see the module doc)"]
fn generated_tasks_are_sound_for_a_large_sweep() {
    let var = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let (first, count) = (var("TOOLENV_SWEEP_FIRST", 0), var("TOOLENV_SWEEP_SEEDS", 100));
    let per_cell = u32::try_from(var("TOOLENV_SWEEP_PER_CELL", 1000)).expect("a task count per cell");
    let threads = usize::try_from(var("TOOLENV_SWEEP_THREADS", 1)).expect("a thread count");
    let problems = sweep(first..first + count, per_cell, threads);
    for problem in &problems {
        println!("problem: {problem}");
    }
    assert!(problems.is_empty(), "{} problems (listed above)", problems.len());
}
