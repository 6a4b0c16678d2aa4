//! Bytes of memory per live episode of each suite task, counted by a global
//! allocator that adds up every allocation and deallocation.
//!
//! A binary of its own: the counting (atomic adds on every allocation) would
//! slow the timed benchmarks of `toolenv-bench`, which runs this one as a
//! child process and prints its figures. `stats_alloc` holds the `unsafe impl
//! GlobalAlloc`, so this crate keeps the workspace's `unsafe_code = "forbid"`.
//!
//! Prints one tab-separated line per task: task id, then net bytes per
//! episode and live heap blocks per episode when fresh (λ = 0), fresh
//! (λ = 0.2), after playing the reference solution, and finished; then the
//! bytes of one copy of the task's world, and of the played calls' results
//! as JSON value trees and as canonical text.
#![forbid(unsafe_code)]

use std::alloc::System;
use std::hint::black_box;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use toolenv_core::Episode;
use toolenv_domains::Finish;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Episodes kept alive per measurement.
const EPISODES: u64 = 1_000;

/// Net heap bytes and live blocks per episode of `make`, plus the episode's
/// own inline size.
fn per_episode(make: impl Fn(u64) -> Episode) -> (u64, u64) {
    let mut episodes: Vec<Episode> = Vec::with_capacity(EPISODES as usize);
    let region = Region::new(GLOBAL);
    for seed in 0..EPISODES {
        episodes.push(make(seed));
    }
    let change = region.change();
    black_box(&episodes);
    let bytes = change.bytes_allocated as i64 - change.bytes_deallocated as i64;
    let blocks = change.allocations as i64 - change.deallocations as i64;
    drop(episodes);
    ((bytes.max(0) as u64) / EPISODES + std::mem::size_of::<Episode>() as u64, blocks.max(0) as u64 / EPISODES)
}

/// Net heap bytes of what `make` returns (kept alive while counting).
fn bytes_of<T>(make: impl Fn() -> T) -> u64 {
    let region = Region::new(GLOBAL);
    let value = make();
    let change = region.change();
    black_box(&value);
    drop(value);
    (change.bytes_allocated as i64 - change.bytes_deallocated as i64).max(0) as u64
}

fn main() {
    // Build the suite (a shared, static part) before counting.
    let suite = toolenv_domains::suite();
    println!("#size_of_episode\t{}", std::mem::size_of::<Episode>());
    for task in suite {
        let fresh = per_episode(|seed| toolenv_bench::create(task, seed, false));
        let chaos = per_episode(|seed| toolenv_bench::create(task, seed, true));
        let played = per_episode(|seed| toolenv_bench::played(task, seed, false));
        let finished = per_episode(|seed| {
            let mut episode = toolenv_bench::played(task, seed, false);
            episode.finish();
            episode
        });
        // What the played episode holds: a copy of the world, and each
        // call's result as a JSON value tree (vs. as canonical text).
        let world = bytes_of(|| task.initial.clone());
        let episode = toolenv_bench::played(task, 7, false);
        let results: Vec<serde_json::Value> = episode.trajectory().calls.iter().filter_map(|c| c.outcome.result_value()).collect();
        let as_values = bytes_of(|| results.clone());
        let as_text: u64 = results.iter().map(|v| toolenv_core::json::canonical(v).len() as u64).sum();
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            task.id, fresh.0, fresh.1, chaos.0, chaos.1, played.0, played.1, finished.0, finished.1, world, as_values, as_text
        );
    }
    generated();
}

/// Live episodes of the standard suite's level-3 tasks (the largest
/// states): a fresh episode shares its task's initial state, so it costs
/// the same whatever the state's size. Prints, per domain, the largest
/// task's state bytes and a fresh and a played episode's bytes beyond it;
/// then the net bytes of 100 000 live fresh episodes over all of them,
/// tasks included.
fn generated() {
    use toolenv_domains::generate::Suite;
    let tasks = Suite::Standard.tasks(None, Some(3));
    println!("#generated\ttask\tstate_bytes\tfresh_episode_bytes\tfresh_with_chaos_bytes\tplayed_episode_bytes");
    for domain in toolenv_domains::registry::ALL {
        let Some(task) = tasks.iter().filter(|t| t.domain == domain).max_by_key(|t| bytes_of(|| toolenv_core::World::clone(&t.initial)))
        else {
            continue;
        };
        let state = bytes_of(|| toolenv_core::World::clone(&task.initial));
        let fresh = per_episode(|seed| Episode::new(task, seed, 0));
        let chaos = per_episode(|seed| Episode::new(task, seed, 0).with_chaos(toolenv_bench::chaos()));
        let played = per_episode(|seed| {
            let mut episode = Episode::new(task, seed, 0);
            for call in &task.reference {
                let _ = episode.call(call.tool, &call.arguments.to_string());
            }
            episode
        });
        println!("#generated\t{}\t{state}\t{}\t{}\t{}", task.id, fresh.0, chaos.0, played.0);
    }
    drop(tasks);
    const LIVE: usize = 100_000;
    let region = Region::new(GLOBAL);
    let tasks = Suite::Standard.tasks(None, Some(3));
    let episodes: Vec<Episode> = (0..LIVE).map(|i| Episode::new(&tasks[i % tasks.len()], i as u64, 0)).collect();
    let change = region.change();
    black_box(&episodes);
    // The episodes' own inline bytes are in the counted Vec.
    let bytes = (change.bytes_allocated as i64 - change.bytes_deallocated as i64).max(0) as u64;
    println!(
        "#live\t{LIVE} fresh level-3 episodes over {} tasks (tasks included)\t{bytes}\t{:.1} MiB",
        tasks.len(),
        bytes as f64 / (1 << 20) as f64
    );
}
