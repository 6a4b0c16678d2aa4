//! Counterfactual attribution of failed paper-suite episodes, in-process:
//! the time to replay a recorded trajectory and fork it backwards until a
//! continuation passes.

use std::time::Duration;

use toolenv_bench::time_batched;
use toolenv_core::{
    CallOptions, Episode, Source,
    chaos::{Chaos, FaultProfile},
    phrasing::Level,
};
use toolenv_domains::{Finish, attribution::attribute, perturb::perturb, suite};

/// The failed episodes of the paper's main grid (ε 0, 0.1, 0.2 × λ 0, 0.2 ×
/// 2 trials) for the agents that fail there: the reference solution without
/// retries, and the brittle agent; played in-process at time scale 0.
/// With `harder`, also the random agent (wrong writes early, so many forks)
/// and λ = 0.3 (suspensions, so the environment's counterfactual too).
fn failed_episodes(harder: bool) -> Vec<(String, Episode)> {
    let mut failed = Vec::new();
    let lambdas: &[&str] = if harder { &["0.0", "0.2", "0.3"] } else { &["0.0", "0.2"] };
    for task in suite() {
        for level in [Level::Canonical, Level::Light, Level::Medium] {
            for &lambda in lambdas {
                for trial in 0..2 {
                    let perturbed = perturb(task, level, 7, None);
                    let mut agents = vec![
                        ("reference-no-retry", task.reference.clone()),
                        ("brittle", toolenv_domains::perturb::brittle_calls(task, &perturbed.description)),
                    ];
                    if harder {
                        agents.push(("random", toolenv_domains::agent::random_calls(task, u64::from(trial), 12)));
                    }
                    for (agent, calls) in agents {
                        let chaos = Chaos::new(FaultProfile::preset(lambda).expect("a preset")).expect("a valid preset");
                        let mut episode = Episode::new(task, 7, trial).with_chaos(chaos).with_perturbation(level, perturbed.clone());
                        for (i, call) in calls.iter().enumerate() {
                            let key = format!("k{i}");
                            let options = CallOptions { agent: None, idempotency_key: Some(&key), waited_ms: Some(0), user_answer: None };
                            let _ = episode.call_with(call.tool, &call.arguments.to_string(), &options);
                        }
                        if !episode.finish().passed {
                            failed.push((format!("{agent} {} ε{} λ{lambda} t{trial}", task.id, level.epsilon()), episode));
                        }
                    }
                }
            }
        }
    }
    failed
}

/// Prints the figures and returns the target line.
pub(crate) fn run(samples: usize, budget: Duration) -> Vec<String> {
    println!("\nCounterfactual attribution of failed paper-grid episodes (reference-no-retry and brittle, ε 0–0.2, λ 0 and 0.2):");
    println!("replay with every call checked, then forks from the end backwards, each continued by the remaining reference");
    println!("writes and then the solver, until one passes. Median per episode, then over the episodes:\n");
    let mut summary = Vec::new();
    for harder in [false, true] {
        summary.extend(figures(harder, samples, budget));
    }
    summary
}

fn figures(harder: bool, samples: usize, budget: Duration) -> Option<String> {
    let failed = failed_episodes(harder);
    let mut medians: Vec<(f64, &str, u32)> = failed
        .iter()
        .map(|(name, episode)| {
            let source = Source::of(episode.task_ref(), episode.trajectory());
            let trajectory = episode.trajectory();
            let continuations = attribute(&source, trajectory).expect("a recording replays").continuations;
            let timing = time_batched(|| (), |()| attribute(&source, trajectory), 4, samples.min(21), budget / 8);
            (timing.median_ns, name.as_str(), continuations)
        })
        .collect();
    medians.sort_by(|a, b| a.0.total_cmp(&b.0));
    let at = |q: f64| medians[((medians.len() - 1) as f64 * q).round() as usize];
    let (median, p90, worst) = (at(0.5), at(0.9), at(1.0));
    let mean_continuations = medians.iter().map(|m| f64::from(m.2)).sum::<f64>() / medians.len() as f64;
    let corpus = if harder { "+ random agent, + λ 0.3" } else { "paper grid" };
    println!("  {corpus}: {} failed episodes; continuations played per episode: mean {mean_continuations:.1}", medians.len());
    println!(
        "  median {}   p90 {}   slowest {} ({}, {} continuations)",
        crate::us(median.0),
        crate::us(p90.0),
        crate::us(worst.0),
        worst.1,
        worst.2
    );
    (!harder)
        .then(|| crate::target("attribution of a failed paper-grid episode, median", crate::us(median.0), "≤ 1 ms".into(), median.0 <= 1e6))
}
