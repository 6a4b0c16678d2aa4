//! `toolenv-bench`: measures toolenv in one run and prints every figure next
//! to its target.
//!
//! 1. In-process (the pure core, JSON text in, JSON text out): median time
//!    per tool call, a typical read and write of each domain, with and
//!    without chaos decisions; creating and finishing an episode; bytes per
//!    live episode of each suite task (from `toolenv-bench-alloc`).
//!    Then counterfactual attribution of the paper grid's failed episodes.
//! 2. Over gRPC on 127.0.0.1: closed-loop CallTool throughput and p50/p99
//!    latency at concurrency 1, 16 and 64, alternating with a raw tonic echo
//!    service whose reply carries the same payload; the ratios are the result.
//! 3. Scale: resident memory of a server holding 100 000 live episodes; wall
//!    time of the paper's 1 280 episodes with the retrying reference agent at
//!    time scale 0 over gRPC.
//!
//! The servers run in a child process (`toolenv-bench serve`), so their CPU
//! time and resident memory are their own; this binary runs with the
//! allocator of `toolenv serve` (mimalloc), so the child serves as shipped. Every load loop is bounded in
//! calls and in time, and binds 127.0.0.1:0 only.
//!
//! This file dispatches; each phase is a module: [`inprocess`] (1, and the
//! `profile` loops), [`attribution`], [`grpc`] (2, and `load`), [`scale`]
//! (3), [`hardening`] (the drills); [`servers`] runs the server child they
//! measure.
#![forbid(unsafe_code)]

use std::time::Duration;

mod attribution;
mod chaos;
mod grpc;
mod hardening;
mod inprocess;
mod scale;
mod servers;

/// The allocator the `toolenv` binary runs with (`serve`, and the in-process
/// `run` and `selfcheck`), so that the server child is measured as it is
/// shipped, with the echo baseline beside it on the same allocator. Under
/// the system allocator (glibc) the server's CPU per call is about 20 %
/// higher: the episodes' many small blocks, kept in their trajectories, make
/// its fastbin consolidation costly.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Any failure of a phase: the binary reports it and stops.
type Error = Box<dyn std::error::Error + Send + Sync>;

const USAGE: &str = "\
usage: toolenv-bench [SECTION...] [--quick]

Sections (default: all, in this order):
  inprocess   the pure core: tool calls, create and finish, bytes per episode
  attribution counterfactual attribution of failed paper-grid episodes, in-process
  grpc        CallTool against a raw tonic echo baseline at concurrency 1, 16, 64
  scale       resident memory with 100k live episodes; the paper's 1,280 episodes

  --quick     shorter phases and fewer samples (a smoke run; figures are noisier)

For a profiler (valgrind --tool=callgrind, perf), a bare loop of one operation:
  profile call CASE [N]       N calls (default 10000) of a case, e.g. travel/read, ecommerce/write
  profile call-chaos CASE [N] the same under λ = 0.2 (no fault met)
  profile create TASK [N]     N episodes created (λ = 0.2)
  profile finish TASK [N]     N played episodes finished
  load echo|toolenv C SECS [MAX_CALLS]
                              one closed-loop gRPC phase against a server child whose pid is
                              printed first (attach `perf record -p PID` to profile the server)

Load, soak and crash drills (bounded, loopback only):
  live [EPISODES] [SECS]      EPISODES (10000) concurrent live episodes at λ = 0.2 for SECS (60);
                              prints calls/s and every error status
  churn [EPISODES] [SECS]     EPISODES (1000000) created, played and finished, at most SECS (900);
                              prints the server's resident memory through the run
  kill-loop [ITERATIONS]      `toolenv run --grid paper` killed with SIGKILL ITERATIONS (20) times
                              and resumed; checks nothing is lost or repeated (needs target/release/toolenv)
  chaos [CALLS]               CALLS (2000) sequential MCP tools/call direct and through `toolenv chaos`
                              at λ = 0: the time the proxy adds per call, its memory (needs
                              target/release/toolenv)

Environment:
  TOOLENV_BENCH_WARM_MIB=N    the server child touches N MiB and frees it before it serves (with
                              mimalloc's purging off), so that its growth reuses memory already
                              touched: a diagnostic separating the first-touch cost of what the
                              server keeps per call (column srv RSS B/call) from the rest
  TOOLENV_BENCH_SERVER_PREFIX runs the server child under a tool, e.g. valgrind --tool=callgrind
  TOOLENV_BENCH_ATTACH_SECS   seconds `load` waits before its phase, for a profiler to attach (2)

Build first: cargo build --release -p toolenv-bench (it also builds
toolenv-bench-alloc, which the inprocess section runs for the memory figures).";

#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Samples per in-process measurement.
    samples: usize,
    /// Time budget per in-process measurement.
    budget: Duration,
    /// Measured duration of one gRPC phase.
    phase: Duration,
    /// Alternating rounds per concurrency.
    rounds: usize,
    /// Live episodes for the memory-at-scale figure.
    live_episodes: usize,
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        return servers::serve(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("profile") {
        return inprocess::profile(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("load") {
        return grpc::load_only(&args[1..]);
    }
    match args.first().map(String::as_str) {
        Some("live") => return hardening::live(&args[1..]),
        Some("churn") => return hardening::churn(&args[1..]),
        Some("kill-loop") => return hardening::kill_loop(&args[1..]),
        Some("chaos") => return chaos::run(&args[1..]),
        _ => {}
    }
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let quick = args.iter().any(|a| a == "--quick");
    let settings = if quick {
        Settings { samples: 21, budget: Duration::from_millis(150), phase: Duration::from_millis(300), rounds: 1, live_episodes: 10_000 }
    } else {
        Settings { samples: 101, budget: Duration::from_millis(800), phase: Duration::from_millis(1500), rounds: 3, live_episodes: 100_000 }
    };
    let mut sections: Vec<&str> = args.iter().map(String::as_str).filter(|a| !a.starts_with("--")).collect();
    if sections.is_empty() {
        sections = vec!["inprocess", "attribution", "grpc", "scale"];
    }
    if let Some(bad) = sections.iter().find(|s| !["inprocess", "attribution", "grpc", "scale"].contains(s)) {
        return Err(format!("unknown section '{bad}'\n\n{USAGE}").into());
    }
    println!("toolenv-bench: {}, {}", cores(), if quick { "--quick (smoke run)" } else { "full run" });
    if let Some(mib) = servers::warm_mib()? {
        println!(
            "Diagnostic: the server child touches {mib} MiB before it serves (TOOLENV_BENCH_WARM_MIB); its memory figures include them."
        );
    }
    let mut summary = Vec::new();
    if sections.contains(&"inprocess") {
        summary.extend(inprocess::run(&settings)?);
    }
    if sections.contains(&"attribution") {
        summary.extend(attribution::run(settings.samples, settings.budget));
    }
    if sections.contains(&"grpc") {
        summary.extend(grpc::run(&settings)?);
    }
    if sections.contains(&"scale") {
        summary.extend(scale::run(&settings)?);
    }
    println!("\n== Targets ==");
    println!("{:<58} {:>16} {:>14}", "target", "measured", "limit");
    for line in &summary {
        println!("{line}");
    }
    Ok(())
}

fn cores() -> String {
    std::thread::available_parallelism().map_or("? hardware threads".into(), |n| format!("{n} hardware threads"))
}

/// One line of the target summary.
fn target(name: &str, measured: String, limit: String, met: bool) -> String {
    format!("{name:<58} {measured:>16} {limit:>14}  {}", if met { "met" } else { "MISSED" })
}

fn us(ns: f64) -> String {
    if ns >= 10_000.0 { format!("{:.1} µs", ns / 1000.0) } else { format!("{:.2} µs", ns / 1000.0) }
}
