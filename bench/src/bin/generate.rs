//! The task generators at scale, on one core: how fast a suite is generated
//! and self-checked, how many distinct tasks each domain and level yields,
//! how many calls their reference solutions take, and how the built-in
//! agents score per level on the standard suite.
//!
//! Usage: `toolenv-bench-generate [TASKS] [DOMAIN]` (TASKS: how many tasks
//! to generate and self-check, 10 000 by default; DOMAIN: self-check only
//! that domain's tasks and skip the other sections, for profiling).
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use sha2::{Digest, Sha256};
use toolenv_core::{
    Domain, Episode, TaskRef,
    chaos::{Chaos, FaultProfile},
    json::canonical,
};
use toolenv_domains::{
    Finish,
    agent::random_calls,
    generate::{Origin, STANDARD_PER_CELL, STANDARD_SEED, Suite, generate},
    selfcheck::SelfCheck,
};

/// Random-agent episodes per task in the check at scale (as `toolenv selfcheck --suite`).
const RANDOM_SEEDS: u64 = 4;
/// Tasks generated at a time (as `toolenv selfcheck`).
const BATCH: usize = 64;
/// Tasks per domain and level whose distinctness is counted.
const DISTINCT_PER_CELL: u32 = 1_000;

/// As the `toolenv` binary's (its `selfcheck --suite` does this work).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let tasks: usize = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let domain =
        std::env::args().nth(2).map(|name| toolenv_domains::registry::parse(&name).unwrap_or_else(|| panic!("no domain '{name}'")));
    if domain.is_none() {
        distinct_and_calls();
    }
    generate_and_check(tasks, domain);
    if domain.is_none() {
        agents_on_standard();
    }
}

/// Distinct tasks and reference calls per domain and level over
/// `generated:1:1000`, with the generation time.
fn distinct_and_calls() {
    println!("## distinct tasks and reference calls (generated:1:{DISTINCT_PER_CELL})");
    println!(
        "{:<11} {:>5} {:>8} {:>9}  {:<28} {:>8}  {:>6}",
        "DOMAIN", "LEVEL", "TASKS", "DISTINCT", "CALLS min/p25/median/p75/max", "mean", "ANSWER"
    );
    let started = Instant::now();
    let mut generated = 0;
    for domain in toolenv_domains::registry::ALL {
        for level in [1, 2, 3] {
            let mut hashes = BTreeSet::new();
            let mut calls = Vec::new();
            let mut answers = 0;
            for index in 0..DISTINCT_PER_CELL {
                let task = generate(Origin { domain, level, seed: 1, index });
                generated += 1;
                let identity = format!("{}\n{}\n{}", task.description(), canonical(&task.initial.to_json()), task.today);
                hashes.insert(Sha256::digest(identity.as_bytes()));
                calls.push(task.reference.len());
                answers += usize::from(task.asks_for_answer());
            }
            calls.sort_unstable();
            let at = |q: usize| calls[(calls.len() - 1) * q / 100];
            let mean = calls.iter().sum::<usize>() as f64 / calls.len() as f64;
            let spread = format!("{}/{}/{}/{}/{}", at(0), at(25), at(50), at(75), at(100));
            let share = format!("{:.0} %", 100.0 * answers as f64 / calls.len() as f64);
            println!("{domain:<11} {level:>5} {:>8} {:>9}  {spread:<28} {mean:>8.1}  {share:>6}", calls.len(), hashes.len());
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("generated and hashed {generated} tasks in {seconds:.2} s ({:.0} µs per task)\n", seconds * 1e6 / generated as f64);
}

/// Generates `count` tasks (whole cells of a suite, round-robin), a batch
/// at a time, and self-checks each on this thread. The figures are the time
/// spent generating and checking, not the bench's own bookkeeping.
fn generate_and_check(count: usize, domain: Option<Domain>) {
    let per_cell = count.div_ceil(toolenv_domains::registry::COUNT * 3) as u32;
    let suite = Suite::Generated { seed: 7, per_cell };
    println!("## generation and self-check on one core ({suite}, {} tasks, {RANDOM_SEEDS} random-agent episodes each)", suite.len());
    let total = suite.count(domain, None);
    let (mut generated, mut checked) = (0.0, 0.0);
    let mut rejected: BTreeMap<String, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    // Per domain and level: tasks, cheats played, state bytes, seconds.
    let mut cells: BTreeMap<(String, u8), (usize, usize, usize, f64)> = BTreeMap::new();
    // As `toolenv selfcheck` does: a batch of tasks generated at a time, never the whole suite.
    for first in (0..total).step_by(BATCH) {
        let generating = Instant::now();
        let batch = suite.page(domain, None, first, BATCH);
        generated += generating.elapsed().as_secs_f64();
        for task in &batch {
            let started = Instant::now();
            let check = SelfCheck::run_with(task, RANDOM_SEEDS);
            let (seconds, cheats) = (started.elapsed().as_secs_f64(), check.cheats.len());
            let found = check.problems();
            drop(check);
            checked += started.elapsed().as_secs_f64();
            // The bench's own bookkeeping, not counted.
            let cell = cells.entry((task.domain.to_string(), task.level)).or_default();
            let bytes = canonical(&task.initial.to_json()).len();
            *cell = (cell.0 + 1, cell.1 + cheats, cell.2 + bytes, cell.3 + seconds);
            if !found.is_empty() {
                *rejected.entry(format!("{}/{}", task.domain, task.level)).or_default() += 1;
                problems.extend(found.into_iter().map(|p| format!("{}: {p}", task.id)));
            }
        }
        let dropping = Instant::now();
        drop(batch);
        generated += dropping.elapsed().as_secs_f64();
    }
    let total_seconds = generated + checked;
    println!(
        "generated in {generated:.2} s, self-checked in {checked:.2} s: {total_seconds:.2} s in all ({:.0} µs per task); rejected: {}",
        total_seconds * 1e6 / total as f64,
        problems.len()
    );
    println!("  {:<11} {:>5} {:>12} {:>8} {:>12}", "DOMAIN", "LEVEL", "µs PER TASK", "CHEATS", "STATE BYTES");
    for ((domain, level), (tasks, cheats, bytes, seconds)) in &cells {
        let per_task = |x: f64| x / (*tasks).max(1) as f64;
        let (micros, cheats, bytes) = (per_task(seconds * 1e6), per_task(*cheats as f64), per_task(*bytes as f64));
        println!("  {domain:<11} {level:>5} {micros:>12.0} {cheats:>8.1} {bytes:>12.0}");
    }
    for (cell, n) in &rejected {
        println!("  rejected in {cell}: {n}");
    }
    for problem in problems.iter().take(20) {
        println!("  problem: {problem}");
    }
    println!();
}

/// pass^1 of the in-process built-in agents per level on the standard
/// suite, at λ = 0 and λ = 0.2 (ε = 0: the canonical descriptions).
fn agents_on_standard() {
    println!("## built-in agents' pass^1 per level on the standard suite (generated:{STANDARD_SEED}:{STANDARD_PER_CELL}), ε = 0");
    let tasks = Suite::Standard.tasks(None, None);
    let agents = ["reference-no-retry", "solver", "brittle", "random", "idle"];
    for lambda in ["0", "0.2"] {
        println!("λ = {lambda}");
        println!("{:<20} {:>8} {:>8} {:>8} {:>8}", "AGENT", "LEVEL 1", "LEVEL 2", "LEVEL 3", "ALL");
        for agent in agents {
            let mut passed = [0usize; 3];
            let mut played = [0usize; 3];
            for (i, task) in tasks.iter().enumerate() {
                let level = usize::from(task.level) - 1;
                played[level] += 1;
                passed[level] += usize::from(plays(agent, task, i as u64, lambda));
            }
            let rate = |p: usize, n: usize| format!("{:.1} %", 100.0 * p as f64 / n.max(1) as f64);
            let all = rate(passed.iter().sum(), played.iter().sum());
            println!(
                "{agent:<20} {:>8} {:>8} {:>8} {all:>8}",
                rate(passed[0], played[0]),
                rate(passed[1], played[1]),
                rate(passed[2], played[2])
            );
        }
    }
}

/// Whether one built-in agent passes one episode of a task in-process.
fn plays(agent: &str, task: &TaskRef, seed: u64, lambda: &str) -> bool {
    let mut episode = Episode::new(task, seed, 0);
    if lambda != "0" {
        episode = episode.with_chaos(Chaos::new(FaultProfile::preset(lambda).expect("a preset")).expect("a valid preset"));
    }
    let description = task.description();
    let (calls, answer) = match agent {
        "reference-no-retry" => (task.reference.clone(), task.reference_answer()),
        "brittle" => {
            let calls = toolenv_domains::perturb::brittle_calls(task, &description);
            let answer = if calls == task.reference { task.reference_answer() } else { None };
            (calls, answer)
        }
        "random" => (random_calls(task, seed, toolenv_domains::agent::RANDOM_AGENT_CALLS), None),
        "solver" => return toolenv_domains::solver::solve(&mut episode).verdict.passed,
        _ => (Vec::new(), None),
    };
    for call in &calls {
        let _ = episode.call(call.tool, &call.arguments.to_string());
    }
    episode.finish_with_answer(answer).passed
}
