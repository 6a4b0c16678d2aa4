//! Benchmarks of toolenv: the workloads, a small timer, the raw tonic echo
//! baseline and process readings, shared by the `toolenv-bench` binary and
//! the criterion benches (`cargo bench -p toolenv-bench`).
//!
//! Nothing here runs in `cargo test`: the crate is a workspace member but not
//! a default member, and no test asserts a time.
#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use toolenv_core::{
    CallOptions, Episode, Outcome, Task,
    chaos::{Chaos, FaultProfile},
};
use toolenv_domains::Finish;

/// Generated code of the echo baseline (`proto/bench/v1/echo.proto`).
#[allow(missing_docs, missing_debug_implementations, clippy::all)]
pub mod pb {
    tonic::include_proto!("bench.v1");
}

/// The fault profile of the "with chaos decisions" measurements: the paper's λ = 0.2.
pub const CHAOS_PRESET: &str = "0.2";

/// One benchmarked tool call: a call of a suite task's reference solution,
/// made on an episode that has already made the reference calls before it.
#[derive(Debug, Clone)]
pub struct CallCase {
    /// Short name, e.g. `travel/read`.
    pub name: String,
    /// The task whose reference solution the call comes from.
    pub task: &'static Task,
    /// The reference calls made before it, as (tool, argument text).
    pub prefix: Vec<(&'static str, String)>,
    /// The tool called.
    pub tool: &'static str,
    /// Its argument text, as an agent sends it.
    pub arguments: String,
    /// Whether the tool changes the state.
    pub write: bool,
}

/// The typical read and write of each domain: (domain, task, index of the
/// read in its reference solution, index of the write).
const CASES: [(&str, &str, usize, usize); 4] = [
    ("scheduling", "scheduling/conflict/003", 0, 1),      // check_availability, book_meeting
    ("travel", "travel/cheapest-flight/001", 0, 2),       // search_flights, hold_flight
    ("support", "support/escalate-dispute/003", 2, 3),    // search_knowledge_base, update_ticket
    ("ecommerce", "ecommerce/cheapest-coupon/002", 0, 3), // search_products, create_order
];

fn case(domain: &str, task_id: &str, index: usize, write: bool) -> CallCase {
    let task = toolenv_domains::task(task_id).unwrap_or_else(|| panic!("{task_id} is not in the suite"));
    let call = &task.reference[index];
    let spec = task.domain.tool(call.tool).expect("a reference call names a tool of its domain");
    assert_eq!(spec.mutates_state, write, "{task_id} call {index} ({}) is not a {}", call.tool, if write { "write" } else { "read" });
    CallCase {
        name: format!("{domain}/{}", if write { "write" } else { "read" }),
        task,
        prefix: task.reference[..index].iter().map(|c| (c.tool, c.arguments.to_string())).collect(),
        tool: call.tool,
        arguments: call.arguments.to_string(),
        write,
    }
}

/// The eight call cases: a read and a write per domain, in suite order.
pub fn call_cases() -> Vec<CallCase> {
    CASES.iter().flat_map(|&(domain, task, read, write)| [case(domain, task, read, false), case(domain, task, write, true)]).collect()
}

/// The call the gRPC benchmark makes, over and over: the travel domain's
/// typical read (`search_flights`, a 245-byte result).
pub fn grpc_case() -> CallCase {
    call_cases().into_iter().find(|c| c.name == "travel/read").expect("the travel read case")
}

/// The paper's λ = 0.2 profile, ready to draw from.
pub fn chaos() -> Chaos {
    Chaos::new(FaultProfile::preset(CHAOS_PRESET).expect("a preset")).expect("a valid preset")
}

impl CallCase {
    /// An episode of the case's task that has made the prefix calls, ready
    /// for the benchmarked call. With `chaos`, the episode runs under λ = 0.2
    /// with the first seed whose draws meet no fault on the prefix and the
    /// call, so the timed call pays for the decision and nothing else.
    pub fn prepared(&self, chaos: bool) -> Episode {
        for seed in 0..10_000 {
            let mut episode = Episode::new(self.task, seed, 0);
            if chaos {
                episode = episode.with_chaos(self::chaos());
            }
            let mut clean = true;
            for (tool, arguments) in &self.prefix {
                let record = episode.call(tool, arguments).expect("a reference call is valid");
                clean &= record.fault.is_none() && !matches!(record.outcome, Outcome::Error(_) | Outcome::Failure(_));
            }
            let mut probe = episode.clone();
            let record = probe.call(self.tool, &self.arguments).expect("a reference call is valid");
            clean &= record.fault.is_none() && matches!(record.outcome, Outcome::Result(_));
            if clean {
                return episode;
            }
        }
        panic!("no seed below 10 000 lets {} run without a fault", self.name)
    }

    /// The benchmarked call, JSON text in and JSON text out: what the
    /// server's CallTool handler does around the core (canonical result text).
    pub fn call(&self, episode: &mut Episode) -> String {
        let record = episode.call_with(self.tool, &self.arguments, &CallOptions::default()).expect("a valid call");
        match &record.outcome {
            // The episode keeps the canonical text; the server sends it as is.
            Outcome::Result(text) => text.clone(),
            other => panic!("{}: expected a result, got {other:?}", self.name),
        }
    }

    /// The result text the call gives (the gRPC reply's `result_json`).
    pub fn result_text(&self) -> String {
        self.call(&mut self.prepared(false))
    }
}

/// A created episode of every suite task, λ = 0 or λ = 0.2, as the server's
/// CreateEpisode builds it (without the wire reply).
pub fn create(task: &'static Task, seed: u64, chaos: bool) -> Episode {
    let episode = Episode::new(task, seed, 0);
    if chaos { episode.with_chaos(self::chaos()) } else { episode }
}

/// An episode of `task` that has played its whole reference solution and
/// is ready to be finished.
pub fn played(task: &'static Task, seed: u64, chaos: bool) -> Episode {
    let mut episode = create(task, seed, chaos);
    for call in &task.reference {
        let _ = episode.call(call.tool, &call.arguments.to_string());
    }
    episode
}

/// A timing: the median over samples of the mean time per iteration in a
/// batch, and the spread of the samples.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Median nanoseconds per iteration.
    pub median_ns: f64,
    /// 10th percentile.
    pub p10_ns: f64,
    /// 90th percentile.
    pub p90_ns: f64,
}

/// Times `routine` on inputs made by `setup`, as criterion's `iter_batched`
/// does: each sample makes `batch` inputs (untimed), runs the routine on each
/// (timed), then drops the outputs (untimed). Bounded: `samples` samples
/// after one warm-up sample, and stops early after `budget`.
pub fn time_batched<I, O>(
    mut setup: impl FnMut() -> I,
    mut routine: impl FnMut(I) -> O,
    batch: usize,
    samples: usize,
    budget: Duration,
) -> Timing {
    let start = Instant::now();
    let mut per_iter = Vec::with_capacity(samples);
    for sample in 0..=samples {
        let inputs: Vec<I> = (0..batch).map(|_| setup()).collect();
        let mut outputs = Vec::with_capacity(batch);
        let t0 = Instant::now();
        for input in inputs {
            outputs.push(black_box(routine(black_box(input))));
        }
        let elapsed = t0.elapsed();
        drop(outputs);
        if sample > 0 {
            per_iter.push(elapsed.as_nanos() as f64 / batch as f64);
        }
        if start.elapsed() > budget && per_iter.len() >= 5 {
            break;
        }
    }
    per_iter.sort_by(f64::total_cmp);
    let at = |q: f64| per_iter[((per_iter.len() - 1) as f64 * q).round() as usize];
    Timing { median_ns: at(0.5), p10_ns: at(0.1), p90_ns: at(0.9) }
}

/// The raw tonic echo baseline: answers every request with a fixed reply,
/// doing nothing else.
#[derive(Debug, Clone)]
pub struct EchoService {
    /// The reply's `result_json`: the same text the toolenv call returns.
    pub result_json: String,
}

#[tonic::async_trait]
impl pb::echo_server::Echo for EchoService {
    async fn call(&self, request: tonic::Request<pb::EchoRequest>) -> Result<tonic::Response<pb::EchoReply>, tonic::Status> {
        let request = request.into_inner();
        // Read the request as a handler would, so it is not optimized away.
        black_box(&request);
        Ok(tonic::Response::new(pb::EchoReply { call_index: 0, result_json: self.result_json.clone() }))
    }
}

/// Process readings from /proc (Linux).
pub mod proc {
    /// Resident memory (VmRSS) of a process, in bytes; `None` off Linux.
    pub fn rss_bytes(pid: u32) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    /// User plus system CPU time of a process so far, in seconds.
    pub fn cpu_seconds(pid: u32) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name (which may hold spaces) in parentheses.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        // USER_HZ is 100 on every Linux this runs on.
        Some(ticks as f64 / 100.0)
    }
}

/// One step of a call or a finish, timed on its own through public APIs.
#[derive(Debug, Clone)]
pub struct Step {
    /// What the step is, with where it happens in the core.
    pub name: &'static str,
    /// Its median time.
    pub timing: Timing,
}

/// The steps of a benchmarked call, each timed alone: where the time of
/// `Episode::call_with` plus the server's reply text goes.
pub fn call_anatomy(case: &CallCase, samples: usize, budget: Duration) -> Vec<Step> {
    let spec = case.task.domain.tool(case.tool).expect("a tool of the domain");
    let args = spec.parse_arguments(&case.arguments).expect("valid arguments");
    let ctx = case.task.context();
    // The world after the prefix, as the benchmarked call meets it.
    let world = || {
        let mut world = toolenv_core::World::clone(&case.task.initial);
        for (tool, arguments) in &case.prefix {
            let spec = case.task.domain.tool(tool).expect("a tool");
            let _ = world.apply(spec, &spec.parse_arguments(arguments).expect("valid"), &ctx);
        }
        world
    };
    let prepared_world = world();
    let t = |name, timing| Step { name, timing };
    vec![
        t(
            "parse + validate arguments (tool.rs ToolSpec::parse_arguments)",
            time_batched(|| (), |()| spec.parse_arguments(&case.arguments), 64, samples, budget),
        ),
        t("canonical args (tool.rs Args::canonical)", time_batched(|| (), |()| args.canonical(), 64, samples, budget)),
        t(
            "World::apply: the tool and its result text (world.rs; json.rs to_canonical)",
            time_batched(|| prepared_world.clone(), |mut w| (w.apply(spec, &args, &ctx), w), 64, samples, budget),
        ),
    ]
}

/// The steps of finishing an episode of `task` after its reference
/// solution, each timed alone.
pub fn finish_anatomy(task: &'static Task, samples: usize, budget: Duration) -> Vec<Step> {
    let played = played(task, 7, false);
    let initial = task.initial.to_json();
    let last = played.state();
    let t = |name, timing| Step { name, timing };
    vec![
        t(
            "World::to_json, initial state (cached per suite task since)",
            time_batched(|| (), |()| task.initial.to_json(), 64, samples, budget),
        ),
        t("World::to_json, final state", time_batched(|| (), |()| played.state(), 64, samples, budget)),
        t(
            "json::state_hash, initial state (cached per suite task since)",
            time_batched(|| (), |()| toolenv_core::json::state_hash(&initial), 64, samples, budget),
        ),
        t("json::state_hash, final state", time_batched(|| (), |()| toolenv_core::json::state_hash(&last), 64, samples, budget)),
        t(
            "  of which json::canonical (json.rs write_canonical)",
            time_batched(|| (), |()| toolenv_core::json::canonical(&last), 64, samples, budget),
        ),
        t("json::diff initial → final (json.rs)", time_batched(|| (), |()| toolenv_core::json::diff(&initial, &last), 64, samples, budget)),
        t(
            "Episode::finish, all of it",
            time_batched(
                || played.clone(),
                |mut e| {
                    e.finish();
                    e
                },
                64,
                samples,
                budget,
            ),
        ),
    ]
}
