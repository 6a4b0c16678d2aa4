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
//! time and resident memory are their own. Every load loop is bounded in
//! calls and in time, and binds 127.0.0.1:0 only.
#![forbid(unsafe_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tonic::transport::{Channel, Endpoint};
use toolenv::pb;
use toolenv::pb::tool_env_client::ToolEnvClient;
use toolenv_bench::pb::echo_client::EchoClient;
use toolenv_bench::{CallCase, Timing, call_cases, grpc_case, time_batched};
use toolenv_domains::Finish;

mod hardening;

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

Build first: cargo build --release -p toolenv-bench (it also builds
toolenv-bench-alloc, which the inprocess section runs for the memory figures).";

#[derive(Debug, Clone, Copy)]
struct Settings {
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

mod attribution;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        return serve(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("profile") {
        return profile(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("load") {
        return load_only(&args[1..]);
    }
    match args.first().map(String::as_str) {
        Some("live") => return hardening::live(&args[1..]),
        Some("churn") => return hardening::churn(&args[1..]),
        Some("kill-loop") => return hardening::kill_loop(&args[1..]),
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
    let mut summary = Vec::new();
    if sections.contains(&"inprocess") {
        summary.extend(inprocess(&settings)?);
    }
    if sections.contains(&"attribution") {
        summary.extend(attribution::run(settings.samples, settings.budget));
    }
    if sections.contains(&"grpc") {
        summary.extend(grpc(&settings)?);
    }
    if sections.contains(&"scale") {
        summary.extend(scale(&settings)?);
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

/// `profile WHAT NAME [N]`: a bare loop for a profiler. Setup (cloning the
/// prepared episodes) happens before the loop, so the loop is the operation.
fn profile(args: &[String]) -> Result<(), Error> {
    let (Some(what), Some(name)) = (args.first(), args.get(1)) else { return Err(USAGE.into()) };
    let n: usize = args.get(2).map(|a| a.parse()).transpose()?.unwrap_or(10_000);
    let task = || toolenv_domains::task(name).ok_or_else(|| format!("unknown task '{name}'"));
    let mut out = 0usize;
    match what.as_str() {
        "call" | "call-chaos" => {
            let case = call_cases().into_iter().find(|c| &c.name == name).ok_or_else(|| format!("unknown case '{name}'"))?;
            let prepared = case.prepared(what == "call-chaos");
            let mut episodes: Vec<_> = (0..n).map(|_| prepared.clone()).collect();
            for episode in &mut episodes {
                out += case.call(episode).len();
            }
        }
        "create" => {
            let task = task()?;
            let episodes: Vec<_> = (0..n).map(|i| toolenv_bench::create(task, i as u64, true)).collect();
            out = episodes.len();
        }
        "finish" => {
            let task = task()?;
            let played = toolenv_bench::played(task, 7, false);
            let mut episodes: Vec<_> = (0..n).map(|_| played.clone()).collect();
            for episode in &mut episodes {
                out += usize::from(episode.finish().passed);
            }
        }
        _ => return Err(USAGE.into()),
    }
    println!("{what} {name} x{n}: {out}");
    Ok(())
}

/// One line of the target summary.
fn target(name: &str, measured: String, limit: String, met: bool) -> String {
    format!("{name:<58} {measured:>16} {limit:>14}  {}", if met { "met" } else { "MISSED" })
}

fn us(ns: f64) -> String {
    if ns >= 10_000.0 { format!("{:.1} µs", ns / 1000.0) } else { format!("{:.2} µs", ns / 1000.0) }
}

// ---------------------------------------------------------------------------
// 1. In-process
// ---------------------------------------------------------------------------

fn time_call(case: &CallCase, chaos: bool, s: &Settings) -> Timing {
    let prepared = case.prepared(chaos);
    time_batched(
        || prepared.clone(),
        |mut episode| {
            let text = case.call(&mut episode);
            (episode, text)
        },
        64,
        s.samples,
        s.budget,
    )
}

fn inprocess(s: &Settings) -> Result<Vec<String>, Error> {
    let mut summary = Vec::new();
    println!("\n== 1. In-process: the pure core (toolenv-domains), JSON text in, JSON text out ==");
    println!("Median of {} samples, each the mean over a batch of 64 calls on fresh copies of the episode", s.samples);
    println!("(p10–p90 of the samples in brackets). With chaos: λ = 0.2, a seed whose draws meet no fault.\n");
    println!("{:<18} {:<22} {:>26} {:>26}", "call", "tool", "no chaos", "chaos λ=0.2 (decision)");
    let mut worst_call: (f64, String) = (0.0, String::new());
    let mut all_medians = Vec::new();
    for case in call_cases() {
        let plain = time_call(&case, false, s);
        let chaos = time_call(&case, true, s);
        let show = |t: Timing| format!("{} [{}–{}]", us(t.median_ns), us(t.p10_ns), us(t.p90_ns));
        println!("{:<18} {:<22} {:>26} {:>26}", case.name, case.tool, show(plain), show(chaos));
        for (t, label) in [(plain, "no chaos"), (chaos, "chaos")] {
            all_medians.push(t.median_ns);
            if t.median_ns > worst_call.0 {
                worst_call = (t.median_ns, format!("{} {label}", case.name));
            }
        }
    }
    all_medians.sort_by(f64::total_cmp);
    let median_of_medians = all_medians[all_medians.len() / 2];
    summary.push(target(
        &format!("in-process tool call, median (worst: {})", worst_call.1),
        us(worst_call.0),
        "≤ 1 µs".into(),
        worst_call.0 <= 1000.0,
    ));
    summary.push(target(
        "in-process tool call, median of the 16 cases",
        us(median_of_medians),
        "≤ 1 µs".into(),
        median_of_medians <= 1000.0,
    ));

    println!("\nCreating and finishing an episode, per suite task (median per episode):");
    println!("  create: Episode::new (+ Chaos::new of the λ = 0.2 preset and with_chaos); finish: oracle, diff, state hashes.");
    println!("  The wire columns are the server's conversions around the core (tool schemas of the CreateEpisode");
    println!("  reply; the Verdict message), shown apart because they are not part of the core.\n");
    println!(
        "{:<32} {:>10} {:>12} {:>10} {:>14} {:>13} {:>13}",
        "task", "create", "create λ=.2", "finish", "create+finish", "wire create", "wire verdict"
    );
    let mut worst = (0.0f64, String::new());
    let mut sums = Vec::new();
    for task in toolenv_domains::suite() {
        let create = time_batched(|| (), |()| toolenv_bench::create(task, 7, false), 64, s.samples, s.budget);
        let create_chaos = time_batched(|| (), |()| toolenv_bench::create(task, 7, true), 64, s.samples, s.budget);
        let played = toolenv_bench::played(task, 7, false);
        let finish = time_batched(
            || played.clone(),
            |mut episode| {
                episode.finish();
                episode
            },
            64,
            s.samples,
            s.budget,
        );
        let chaos = toolenv_bench::chaos();
        let wire_create = time_batched(
            || (),
            |()| {
                let tools: Vec<pb::ToolSpec> = task.tools().iter().map(Into::into).collect();
                (tools, serde_json::to_string(chaos.profile()).unwrap_or_default(), task.description())
            },
            64,
            s.samples,
            s.budget,
        );
        let mut finished = played.clone();
        finished.finish();
        let verdict = finished.verdict().expect("finished").clone();
        let wire_verdict = time_batched(|| (), |()| pb::Verdict::from(&verdict), 64, s.samples, s.budget);
        let sum = create_chaos.median_ns + finish.median_ns;
        sums.push(sum);
        if sum > worst.0 {
            worst = (sum, task.id.clone());
        }
        println!(
            "{:<32} {:>10} {:>12} {:>10} {:>14} {:>13} {:>13}",
            task.id,
            us(create.median_ns),
            us(create_chaos.median_ns),
            us(finish.median_ns),
            us(sum),
            us(wire_create.median_ns),
            us(wire_verdict.median_ns)
        );
    }
    let mean = sums.iter().sum::<f64>() / sums.len() as f64;
    println!("{:<32} {:>49}", "mean over the 20 tasks", us(mean));
    summary.push(target(&format!("create (λ=0.2) + finish, worst task ({})", worst.1), us(worst.0), "≤ 50 µs".into(), worst.0 <= 50_000.0));

    println!("\nWhere the time goes: each step alone, through the public APIs (median; the steps overlap the totals above).");
    let anatomy_budget = s.budget / 2;
    for name in ["travel/read", "ecommerce/write"] {
        let case = call_cases().into_iter().find(|c| c.name == name).expect("a case");
        println!("  {name} ({}):", case.tool);
        for step in toolenv_bench::call_anatomy(&case, s.samples, anatomy_budget) {
            println!("    {:<78} {:>10}", step.name, us(step.timing.median_ns));
        }
    }
    let worst_task = toolenv_domains::task(&worst.1).expect("a suite task");
    println!("  finish {}:", worst_task.id);
    for step in toolenv_bench::finish_anatomy(worst_task, s.samples, anatomy_budget) {
        println!("    {:<78} {:>10}", step.name, us(step.timing.median_ns));
    }

    summary.extend(memory_per_episode()?);
    Ok(summary)
}

/// Runs `toolenv-bench-alloc` and prints its per-task figures.
fn memory_per_episode() -> Result<Vec<String>, Error> {
    println!("\nBytes per live episode (net heap bytes counted by a global allocator + the Episode itself;");
    println!("blocks: live heap allocations, each costing malloc a further 8–16 bytes of overhead). World copy: one");
    println!("clone of the task's state; results: the played calls' results as JSON value trees / as canonical text:\n");
    let exe = std::env::current_exe()?.with_file_name("toolenv-bench-alloc");
    let output = match Command::new(&exe).output() {
        Ok(output) if output.status.success() => output,
        Ok(output) => return Err(format!("{} failed: {}", exe.display(), String::from_utf8_lossy(&output.stderr)).into()),
        Err(e) => {
            println!("  (skipped: cannot run {}: {e}; build it with `cargo build --release -p toolenv-bench`)", exe.display());
            return Ok(Vec::new());
        }
    };
    let text = String::from_utf8(output.stdout)?;
    println!(
        "{:<32} {:>15} {:>15} {:>19} {:>15} {:>11} {:>19}",
        "task", "fresh λ=0", "fresh λ=0.2", "reference played", "finished", "world copy", "results tree / text"
    );
    let mut worst = (0u64, String::new());
    let mut generated = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        if line.starts_with("#generated") || line.starts_with("#live") {
            generated.push(fields.iter().skip(1).copied().collect::<Vec<_>>().join("  "));
            continue;
        }
        if line.starts_with('#') {
            println!("  (size_of::<Episode>() = {} bytes)", fields[1]);
            continue;
        }
        let n = |i: usize| fields[i].parse::<u64>().unwrap_or(0);
        let cell = |bytes: u64, blocks: u64| format!("{:.1} KiB/{blocks:>3}", bytes as f64 / 1024.0);
        let kib = |bytes: u64| format!("{:.1} KiB", bytes as f64 / 1024.0);
        println!(
            "{:<32} {:>15} {:>15} {:>19} {:>15} {:>11} {:>19}",
            fields[0],
            cell(n(1), n(2)),
            cell(n(3), n(4)),
            cell(n(5), n(6)),
            cell(n(7), n(8)),
            kib(n(9)),
            format!("{} / {}", kib(n(10)), kib(n(11)))
        );
        let live = n(1).max(n(3)).max(n(5));
        if live > worst.0 {
            worst = (live, fields[0].to_owned());
        }
    }
    // Generated level-3 tasks: state bytes, then a fresh (λ 0, λ 0.2) and a played episode's bytes beyond it.
    println!("\nLargest level-3 task of the standard suite per domain: state bytes, fresh λ=0 / fresh λ=0.2 / played episode bytes:");
    for line in &generated {
        println!("  {line}");
    }
    Ok(vec![target(
        &format!("bytes per live paper-task episode, worst ({})", worst.1),
        format!("{:.1} KiB", worst.0 as f64 / 1024.0),
        "≤ 16 KiB".into(),
        worst.0 <= 16 * 1024,
    )])
}

// ---------------------------------------------------------------------------
// The server child process
// ---------------------------------------------------------------------------

/// `toolenv-bench serve [MAX_EPISODES]`: a toolenv server (time scale 0) and
/// the echo baseline on 127.0.0.1:0; prints `READY <toolenv> <echo>` and
/// serves until its standard input closes (or 30 minutes pass).
fn serve(args: &[String]) -> Result<(), Error> {
    let max_episodes = args.first().map(|a| a.parse()).transpose()?.unwrap_or(toolenv_server::Config::default().max_episodes);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let config = toolenv_server::Config { time_scale: 0.0, max_episodes, ..Default::default() };
        let server = toolenv_server::RunningServer::start(config).await?;

        let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await?;
        let echo_addr = listener.local_addr()?;
        let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
        let echo = toolenv_bench::EchoService { result_json: grpc_case().result_text() };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let echo_task = tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(toolenv_bench::pb::echo_server::EchoServer::new(echo))
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                }),
        );
        println!("READY {} {}", server.addr(), echo_addr);
        std::io::stdout().flush()?;
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let mut sink = String::new();
            while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {}
        });
        tokio::select! {
            _ = stdin_closed => {}
            _ = tokio::time::sleep(Duration::from_secs(30 * 60)) => {}
        }
        let _ = stop.send(());
        let _ = echo_task.await;
        server.shutdown().await?;
        Ok::<(), Error>(())
    })?;
    // The blocking stdin reader may still be parked; do not wait for it.
    std::process::exit(0)
}

/// A running `toolenv-bench serve` child.
struct Servers {
    child: Child,
    stdin: Option<ChildStdin>,
    toolenv_url: String,
    echo_url: String,
}

impl Servers {
    fn start(max_episodes: Option<usize>) -> Result<Self, Error> {
        // TOOLENV_BENCH_SERVER_PREFIX runs the child under a tool, e.g.
        // "valgrind --tool=callgrind" (for `load` with a profiler).
        let prefix = std::env::var("TOOLENV_BENCH_SERVER_PREFIX").unwrap_or_default();
        let mut words = prefix.split_whitespace();
        let mut command = match words.next() {
            Some(program) => {
                let mut command = Command::new(program);
                command.args(words).arg(std::env::current_exe()?);
                command
            }
            None => Command::new(std::env::current_exe()?),
        };
        command.arg("serve");
        if let Some(n) = max_episodes {
            command.arg(n.to_string());
        }
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        BufReader::new(child.stdout.take().ok_or("no stdout")?).read_line(&mut line)?;
        let mut parts = line.split_whitespace().skip(1);
        let (Some(toolenv), Some(echo)) = (parts.next(), parts.next()) else {
            let _ = child.kill();
            return Err(format!("server child said {line:?}").into());
        };
        Ok(Self { toolenv_url: format!("http://{toolenv}"), echo_url: format!("http://{echo}"), child, stdin })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn rss(&self) -> u64 {
        toolenv_bench::proc::rss_bytes(self.pid()).unwrap_or(0)
    }

    fn cpu(&self) -> f64 {
        toolenv_bench::proc::cpu_seconds(self.pid()).unwrap_or(0.0)
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        // Closing stdin stops the child; kill it (by its own handle) if it lingers.
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn channel(url: &str) -> Result<Channel, Error> {
    Ok(Endpoint::from_shared(url.to_owned())?.tcp_nodelay(true).connect_timeout(Duration::from_secs(10)).connect().await?)
}

fn client_runtime() -> Result<tokio::runtime::Runtime, Error> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

// ---------------------------------------------------------------------------
// 2. gRPC
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Echo,
    Toolenv,
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Echo => "echo",
            Target::Toolenv => "toolenv",
        }
    }
}

/// Calls one toolenv episode gets before a worker moves to the next.
const CALLS_PER_EPISODE: usize = 100;
/// Most calls of one measured phase.
const MAX_CALLS_PER_PHASE: u64 = 400_000;

#[derive(Debug, Default)]
struct Phase {
    calls: u64,
    errors: u64,
    elapsed: Duration,
    latencies_ns: Vec<u32>,
    server_cpu_s: f64,
}

struct Load {
    case: CallCase,
    toolenv: Vec<Channel>,
    echo: Vec<Channel>,
}

impl Load {
    fn request(&self, episode_id: String) -> pb::CallToolRequest {
        pb::CallToolRequest {
            episode_id,
            tool_name: self.case.tool.to_owned(),
            arguments_json: self.case.arguments.clone(),
            idempotency_key: String::new(),
            waited_ms: None,
            ..Default::default()
        }
    }

    /// Creates `n` episodes of the case's task (λ = 0) with `c` workers.
    async fn episodes(&self, n: usize, c: usize) -> Result<Vec<String>, Error> {
        let left = Arc::new(AtomicU64::new(n as u64));
        let mut workers = Vec::new();
        for w in 0..c.min(n).max(1) {
            let mut client = ToolEnvClient::new(self.toolenv[w % self.toolenv.len()].clone());
            let task_id = self.case.task.id.clone();
            let left = left.clone();
            workers.push(tokio::spawn(async move {
                let mut ids = Vec::new();
                while left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| l.checked_sub(1)).is_ok() {
                    let request = pb::CreateEpisodeRequest { task_id: task_id.clone(), seed: 1, ..Default::default() };
                    ids.push(client.create_episode(request).await?.into_inner().episode_id);
                }
                Ok::<_, tonic::Status>(ids)
            }));
        }
        let mut ids = Vec::with_capacity(n);
        for worker in workers {
            ids.extend(worker.await??);
        }
        Ok(ids)
    }

    /// One closed-loop phase: `c` workers call back to back until `duration`
    /// has passed or `max_calls` calls were made.
    async fn phase(&self, target: Target, c: usize, duration: Duration, max_calls: u64, servers: &Servers) -> Result<Phase, Error> {
        let pool = if target == Target::Toolenv {
            let n = (max_calls as usize).div_ceil(CALLS_PER_EPISODE) + c;
            self.episodes(n, c.max(16)).await?
        } else {
            Vec::new()
        };
        let pool = Arc::new(std::sync::Mutex::new(pool));
        let issued = Arc::new(AtomicU64::new(0));
        let barrier = Arc::new(tokio::sync::Barrier::new(c + 1));
        // Same content for both: a toolenv-shaped episode id of the same length.
        let echo_request = {
            let r = self.request(format!("ep-{}", "0".repeat(32)));
            toolenv_bench::pb::EchoRequest {
                episode_id: r.episode_id,
                tool_name: r.tool_name,
                arguments_json: r.arguments_json,
                idempotency_key: r.idempotency_key,
            }
        };
        let mut workers = Vec::new();
        for w in 0..c {
            let (barrier, issued, pool) = (barrier.clone(), issued.clone(), pool.clone());
            let mut toolenv = ToolEnvClient::new(self.toolenv[w % self.toolenv.len()].clone());
            let mut echo = EchoClient::new(self.echo[w % self.echo.len()].clone());
            let template = self.request(String::new());
            let echo_request = echo_request.clone();
            workers.push(tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(1 << 14);
                let mut errors = 0u64;
                let mut episode = String::new();
                let mut used = CALLS_PER_EPISODE;
                barrier.wait().await;
                let deadline = Instant::now() + duration;
                while Instant::now() < deadline && issued.fetch_add(1, Ordering::Relaxed) < max_calls {
                    let ok = match target {
                        Target::Echo => {
                            let t0 = Instant::now();
                            let ok = echo.call(echo_request.clone()).await.is_ok();
                            latencies.push(t0.elapsed().as_nanos().min(u128::from(u32::MAX)) as u32);
                            ok
                        }
                        Target::Toolenv => {
                            if used == CALLS_PER_EPISODE {
                                let Some(next) = pool.lock().expect("pool").pop() else { break };
                                episode = next;
                                used = 0;
                            }
                            used += 1;
                            let request = pb::CallToolRequest { episode_id: episode.clone(), ..template.clone() };
                            let t0 = Instant::now();
                            let ok = toolenv.call_tool(request).await.is_ok();
                            latencies.push(t0.elapsed().as_nanos().min(u128::from(u32::MAX)) as u32);
                            ok
                        }
                    };
                    errors += u64::from(!ok);
                }
                (latencies, errors)
            }));
        }
        let cpu0 = servers.cpu();
        barrier.wait().await;
        let start = Instant::now();
        let mut phase = Phase::default();
        for worker in workers {
            let (latencies, errors) = worker.await?;
            phase.latencies_ns.extend(latencies);
            phase.errors += errors;
        }
        phase.elapsed = start.elapsed();
        phase.server_cpu_s = servers.cpu() - cpu0;
        phase.calls = phase.latencies_ns.len() as u64;
        Ok(phase)
    }
}

fn percentile(sorted: &[u32], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize] as f64
}

#[derive(Debug, Default)]
struct Stats {
    calls: u64,
    errors: u64,
    elapsed: Duration,
    latencies_ns: Vec<u32>,
    server_cpu_s: f64,
    round_rates: Vec<f64>,
}

impl Stats {
    fn add(&mut self, phase: Phase) {
        self.round_rates.push(phase.calls as f64 / phase.elapsed.as_secs_f64());
        self.calls += phase.calls;
        self.errors += phase.errors;
        self.elapsed += phase.elapsed;
        self.server_cpu_s += phase.server_cpu_s;
        self.latencies_ns.extend(phase.latencies_ns);
    }
    fn rate(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }
    fn sort(&mut self) {
        self.latencies_ns.sort_unstable();
    }
    fn p(&self, q: f64) -> f64 {
        percentile(&self.latencies_ns, q)
    }
}

fn grpc(s: &Settings) -> Result<Vec<String>, Error> {
    let case = grpc_case();
    let servers = Servers::start(None)?;
    let runtime = client_runtime()?;
    let mut summary = Vec::new();
    runtime.block_on(async {
        let connections = 4;
        let mut load = Load { case, toolenv: Vec::new(), echo: Vec::new() };
        for _ in 0..connections {
            load.toolenv.push(channel(&servers.toolenv_url).await?);
            load.echo.push(channel(&servers.echo_url).await?);
        }
        // What goes over the wire, to show the payloads match.
        let probe = load.episodes(1, 1).await?.pop().ok_or("no episode")?;
        let request = load.request(probe.clone());
        let reply = ToolEnvClient::new(load.toolenv[0].clone()).call_tool(request.clone()).await?.into_inner();
        let echo_reply = EchoClient::new(load.echo[0].clone())
            .call(toolenv_bench::pb::EchoRequest {
                episode_id: request.episode_id.clone(),
                tool_name: request.tool_name.clone(),
                arguments_json: request.arguments_json.clone(),
                idempotency_key: String::new(),
            })
            .await?
            .into_inner();
        use prost::Message;
        println!("\n== 2. Over gRPC on 127.0.0.1: CallTool against a raw tonic echo service ==");
        println!(
            "Call: {} {}({}) on {}; request {} bytes, reply {} bytes (echo reply {} bytes).",
            load.case.name,
            load.case.tool,
            load.case.arguments,
            load.case.task.id,
            request.encoded_len(),
            reply.encoded_len(),
            echo_reply.encoded_len()
        );
        println!(
            "Closed loop: c workers call back to back over {connections} HTTP/2 connections (worker i uses connection i mod {connections}); \
             servers in a child process\n(time scale 0), client in this one. Per concurrency: one warm-up phase each, then {} rounds of \
             {:.1} s phases alternating\necho/toolenv (order flipped each round). Toolenv workers move to a fresh episode every {CALLS_PER_EPISODE} calls.\n",
            s.rounds,
            s.phase.as_secs_f64()
        );
        println!(
            "{:>3} {:<8} {:>10} {:>17} {:>9} {:>9} {:>9} {:>14} {:>7}",
            "c", "server", "calls/s", "rounds min–max", "p50 µs", "p99 µs", "p99.9 µs", "srv CPU µs/call", "errors"
        );
        for c in [1usize, 16, 64] {
            let mut stats = [Stats::default(), Stats::default()];
            // Warm-up; its rate sizes the bound (and the toolenv episode pool) of the measured phases.
            let mut warm_rate: f64 = 0.0;
            for target in [Target::Echo, Target::Toolenv] {
                let warm = load.phase(target, c, s.phase / 4, MAX_CALLS_PER_PHASE / 4, &servers).await?;
                warm_rate = warm_rate.max(warm.calls as f64 / warm.elapsed.as_secs_f64());
            }
            let max_calls = ((warm_rate * s.phase.as_secs_f64() * 2.0) as u64).clamp(1_000, MAX_CALLS_PER_PHASE);
            for round in 0..s.rounds {
                let order = if round % 2 == 0 { [Target::Echo, Target::Toolenv] } else { [Target::Toolenv, Target::Echo] };
                for target in order {
                    let phase = load.phase(target, c, s.phase, max_calls, &servers).await?;
                    stats[target as usize].add(phase);
                }
            }
            for (target, st) in [Target::Echo, Target::Toolenv].into_iter().zip(stats.iter_mut()) {
                st.sort();
                let min = st.round_rates.iter().copied().fold(f64::INFINITY, f64::min);
                let max = st.round_rates.iter().copied().fold(0.0, f64::max);
                println!(
                    "{:>3} {:<8} {:>10.0} {:>17} {:>9.1} {:>9.1} {:>9.1} {:>14.1} {:>7}",
                    c,
                    target.name(),
                    st.rate(),
                    format!("{min:.0}–{max:.0}"),
                    st.p(0.5) / 1000.0,
                    st.p(0.99) / 1000.0,
                    st.p(0.999) / 1000.0,
                    st.server_cpu_s / st.calls as f64 * 1e6,
                    st.errors
                );
            }
            let [echo, toolenv] = &stats;
            let throughput = toolenv.rate() / echo.rate();
            let p50 = toolenv.p(0.5) / echo.p(0.5);
            let p99 = toolenv.p(0.99) / echo.p(0.99);
            let cpu = (toolenv.server_cpu_s / toolenv.calls as f64) / (echo.server_cpu_s / echo.calls as f64);
            println!("    toolenv/echo: throughput {throughput:.3}, p50 {p50:.3}, p99 {p99:.3}, server CPU per call {cpu:.2}");
            summary.push(target(&format!("gRPC throughput toolenv/echo at c={c}"), format!("{throughput:.3}"), "≥ 0.90".into(), throughput >= 0.9));
            summary.push(target(&format!("gRPC p99 toolenv/echo at c={c}"), format!("{p99:.3}"), "≤ 1.20".into(), p99 <= 1.2));
        }
        Ok::<(), Error>(())
    })?;
    // Only the c=64 figures are targets; the others are context.
    let summary = summary.into_iter().filter(|l| l.contains("c=64")).collect();
    Ok(summary)
}

/// `load echo|toolenv C SECS`: one phase of the gRPC load alone, for a
/// profiler attached to the server child.
fn load_only(args: &[String]) -> Result<(), Error> {
    let target = match args.first().map(String::as_str) {
        Some("echo") => Target::Echo,
        Some("toolenv") => Target::Toolenv,
        _ => return Err(USAGE.into()),
    };
    let c: usize = args.get(1).map(|a| a.parse()).transpose()?.unwrap_or(64);
    let secs: f64 = args.get(2).map(|a| a.parse()).transpose()?.unwrap_or(5.0);
    let max_calls: u64 = args.get(3).map(|a| a.parse()).transpose()?.unwrap_or(MAX_CALLS_PER_PHASE);
    let servers = Servers::start(None)?;
    println!("server pid {}", servers.pid());
    std::io::stdout().flush()?;
    client_runtime()?.block_on(async {
        let mut load = Load { case: grpc_case(), toolenv: Vec::new(), echo: Vec::new() };
        for _ in 0..4 {
            load.toolenv.push(channel(&servers.toolenv_url).await?);
            load.echo.push(channel(&servers.echo_url).await?);
        }
        // Let a profiler attach (or zero its counters).
        let wait = std::env::var("TOOLENV_BENCH_ATTACH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0);
        tokio::time::sleep(Duration::from_secs_f64(wait)).await;
        let mut stats = Stats::default();
        stats.add(load.phase(target, c, Duration::from_secs_f64(secs), max_calls, &servers).await?);
        stats.sort();
        println!(
            "{} c={c}: {:.0} calls/s, p50 {:.1} µs, p99 {:.1} µs, server CPU {:.1} µs/call",
            target.name(),
            stats.rate(),
            stats.p(0.5) / 1000.0,
            stats.p(0.99) / 1000.0,
            stats.server_cpu_s / stats.calls as f64 * 1e6
        );
        Ok::<(), Error>(())
    })
}

// ---------------------------------------------------------------------------
// 3. Scale
// ---------------------------------------------------------------------------

/// The paper's 1,280 episodes: the main grid (20 tasks × 3 ε × 2 λ × 2
/// agents × 2 runs, for each of 2 models = 960) and the ablation grid (20
/// tasks × 4 fault types at λ = 0.2 × 2 agents × 2 runs = 320). Every episode
/// here is played by the same built-in agent, so model and agent become
/// distinct seeds, and each run a trial.
fn paper_grid() -> Vec<pb::CreateEpisodeRequest> {
    let request = |task: &toolenv_core::Task, seed: u64, trial: u32, epsilon: f64, profile: &str| pb::CreateEpisodeRequest {
        task_id: task.id.clone(),
        seed,
        trial,
        epsilon,
        fault_profile: Some(pb::FaultProfile { name: profile.to_owned(), ..Default::default() }),
        time_scale: Some(0.0),
        ..Default::default()
    };
    let mut grid = Vec::new();
    for model in 0..2u64 {
        for epsilon in 0..3u64 {
            for lambda in ["0.0", "0.2"] {
                for agent in 0..2u64 {
                    for run in 0..2u32 {
                        for task in toolenv_domains::suite() {
                            grid.push(request(task, 1000 * model + 10 * agent, run, epsilon as f64 / 10.0, lambda));
                        }
                    }
                }
            }
        }
    }
    for (i, ablation) in ["timeout-only", "rate-limit-only", "partial-response-only", "mixed"].into_iter().enumerate() {
        for agent in 0..2u64 {
            for run in 0..2u32 {
                for task in toolenv_domains::suite() {
                    grid.push(request(task, 5000 + 100 * i as u64 + 10 * agent, run, 0.0, ablation));
                }
            }
        }
    }
    grid
}

fn scale(s: &Settings) -> Result<Vec<String>, Error> {
    let mut summary = Vec::new();
    println!("\n== 3. Scale ==");
    let runtime = client_runtime()?;

    // Resident memory with many live episodes.
    {
        let n = s.live_episodes;
        let servers = Servers::start(Some(n))?;
        runtime.block_on(async {
            let channels = [channel(&servers.toolenv_url).await?, channel(&servers.toolenv_url).await?];
            let suite = toolenv_domains::suite();
            // Warm up every code path once, then read the baseline.
            let mut warm = ToolEnvClient::new(channels[0].clone());
            for task in suite {
                let id = warm.create_episode(pb::CreateEpisodeRequest { task_id: task.id.clone(), ..Default::default() }).await?;
                let _ = warm.finish_episode(pb::FinishEpisodeRequest { episode_id: id.into_inner().episode_id, usage: None, ..Default::default() }).await?;
            }
            let rss0 = servers.rss();
            let workers = 32;
            let next = Arc::new(AtomicU64::new(0));
            // 20 warm-up episodes are held too; stay within the server's limit.
            let total = (n - suite.len()) as u64;
            let start = Instant::now();
            let deadline = start + Duration::from_secs(180);
            let mut handles = Vec::new();
            for w in 0..workers {
                let mut client = ToolEnvClient::new(channels[w % channels.len()].clone());
                let next = next.clone();
                handles.push(tokio::spawn(async move {
                    let mut ids = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= total || Instant::now() > deadline {
                            break;
                        }
                        let task = &suite[i as usize % suite.len()];
                        // Half of them under λ = 0.2.
                        let fault_profile = (i % 2 == 1).then(|| pb::FaultProfile { name: "0.2".into(), ..Default::default() });
                        let request = pb::CreateEpisodeRequest { task_id: task.id.clone(), seed: i, fault_profile, ..Default::default() };
                        ids.push((i, client.create_episode(request).await?.into_inner().episode_id));
                    }
                    Ok::<_, tonic::Status>(ids)
                }));
            }
            let mut ids = Vec::new();
            for h in handles {
                ids.extend(h.await??);
            }
            let created = start.elapsed();
            let live = ids.len() + suite.len();
            let rss1 = servers.rss();
            println!(
                "{live} live episodes (round robin over the 20 tasks, half at λ = 0.2), created over gRPC with {workers} workers in {:.2} s ({:.0}/s):",
                created.as_secs_f64(),
                ids.len() as f64 / created.as_secs_f64()
            );
            println!(
                "  server resident memory {:.1} MiB (was {:.1} MiB before them): {:.0} bytes per fresh live episode, registry included",
                rss1 as f64 / 1048576.0,
                rss0 as f64 / 1048576.0,
                (rss1 - rss0) as f64 / ids.len() as f64
            );
            // Now play every episode's reference solution, leaving it unfinished.
            let ids = Arc::new(ids);
            let cursor = Arc::new(AtomicU64::new(0));
            let start = Instant::now();
            let deadline = start + Duration::from_secs(180);
            let mut handles = Vec::new();
            for w in 0..workers {
                let mut client = ToolEnvClient::new(channels[w % channels.len()].clone());
                let (ids, cursor) = (ids.clone(), cursor.clone());
                handles.push(tokio::spawn(async move {
                    let (mut played, mut calls) = (0u64, 0u64);
                    loop {
                        let k = cursor.fetch_add(1, Ordering::Relaxed) as usize;
                        if k >= ids.len() || Instant::now() > deadline {
                            break;
                        }
                        let (i, id) = &ids[k];
                        let task = &suite[*i as usize % suite.len()];
                        for call in &task.reference {
                            let request = pb::CallToolRequest {
                                episode_id: id.clone(),
                                tool_name: call.tool.to_owned(),
                                arguments_json: call.arguments.to_string(),
                                idempotency_key: String::new(),
                                waited_ms: None,
                                ..Default::default()
                            };
                            // Injected faults come back as statuses; they are part of the play.
                            let _ = client.call_tool(request).await;
                            calls += 1;
                        }
                        played += 1;
                    }
                    (played, calls)
                }));
            }
            let (mut played, mut calls) = (0, 0);
            for h in handles {
                let (p, c) = h.await?;
                played += p;
                calls += c;
            }
            let rss2 = servers.rss();
            println!(
                "  after playing the reference solution in {played} of them ({calls} calls in {:.2} s, {:.0} calls/s), unfinished: {:.1} MiB, {:.0} bytes per live episode",
                start.elapsed().as_secs_f64(),
                calls as f64 / start.elapsed().as_secs_f64(),
                rss2 as f64 / 1048576.0,
                (rss2 - rss0) as f64 / live as f64
            );
            let projected = rss0 as f64 + (rss2 - rss0) as f64 * 100_000.0 / live as f64;
            let label = if live >= 100_000 { "resident memory with 100k live episodes (played)".to_owned() } else {
                format!("resident memory, 100k live episodes (projected from {live})")
            };
            summary.push(target(&label, format!("{:.0} MiB", projected / 1048576.0), "< 2048 MiB".into(), projected < 2048.0 * 1048576.0));
            Ok::<(), Error>(())
        })?;
    }

    // The paper's 1,280 episodes, with the retrying reference agent.
    {
        let servers = Servers::start(None)?;
        let grid = paper_grid();
        println!(
            "\nThe paper's {} episodes (main grid 960 at ε 0, 0.1, 0.2 + ablations 320; fault profiles 0.0, 0.2, timeout-only, rate-limit-only,",
            grid.len()
        );
        println!("partial-response-only, mixed), each played with Agent::Reference (retries with backoff) over gRPC at time scale 0:");
        println!("{:>12} {:>10} {:>12} {:>8} {:>10}", "concurrency", "wall s", "episodes/s", "passed", "tool calls");
        let mut best = f64::INFINITY;
        let mut sequential = f64::NAN;
        for c in [1usize, 16, 64] {
            let grid = Arc::new(grid.clone());
            let result = runtime.block_on(async {
                let connections = c.div_ceil(16);
                let mut clients = Vec::new();
                for _ in 0..connections {
                    clients.push(toolenv_client::Client::connect(&servers.toolenv_url).await?);
                }
                let cursor = Arc::new(AtomicU64::new(0));
                let start = Instant::now();
                let deadline = start + Duration::from_secs(300);
                let mut handles = Vec::new();
                for w in 0..c {
                    let mut client = clients[w % clients.len()].clone();
                    let (grid, cursor) = (grid.clone(), cursor.clone());
                    handles.push(tokio::spawn(async move {
                        let (mut passed, mut calls, mut done) = (0u64, 0u64, 0u64);
                        loop {
                            let k = cursor.fetch_add(1, Ordering::Relaxed) as usize;
                            if k >= grid.len() || Instant::now() > deadline {
                                break;
                            }
                            let outcome = toolenv_client::play(&mut client, toolenv_agents::Builtin::Reference, grid[k].clone()).await?;
                            passed += u64::from(outcome.verdict.passed);
                            calls += outcome.trajectory.calls.len() as u64;
                            done += 1;
                        }
                        Ok::<_, toolenv_client::ClientError>((done, passed, calls))
                    }));
                }
                let (mut done, mut passed, mut calls) = (0, 0, 0);
                for h in handles {
                    let (d, p, n) = h.await??;
                    done += d;
                    passed += p;
                    calls += n;
                }
                Ok::<_, Error>((start.elapsed(), done, passed, calls))
            })?;
            let (wall, done, passed, calls) = result;
            println!(
                "{:>12} {:>10.3} {:>12.0} {:>8} {:>10}",
                c,
                wall.as_secs_f64(),
                done as f64 / wall.as_secs_f64(),
                format!("{passed}/{done}"),
                calls
            );
            if done as usize == grid.len() {
                best = best.min(wall.as_secs_f64());
                if c == 1 {
                    sequential = wall.as_secs_f64();
                }
            }
        }
        summary.push(target(
            "1,280 paper episodes, wall time, sequential (c=1)",
            format!("{sequential:.3} s"),
            "< 2 s".into(),
            sequential < 2.0,
        ));
        summary.push(target("1,280 paper episodes, wall time, best concurrency", format!("{best:.3} s"), "< 2 s".into(), best < 2.0));
    }
    Ok(summary)
}
