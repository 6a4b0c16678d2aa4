//! Phase 2, over gRPC on 127.0.0.1: closed-loop CallTool throughput and
//! p50/p99 latency at concurrency 1, 16 and 64, alternating with the raw
//! tonic echo service whose reply carries the same payload (the ratios are
//! the result); and one phase alone (`load`), for a profiler attached to
//! the server child.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tonic::transport::Channel;
use toolenv::pb;
use toolenv::pb::tool_env_client::ToolEnvClient;
use toolenv_bench::pb::echo_client::EchoClient;
use toolenv_bench::{CallCase, grpc_case};

use crate::servers::{Servers, channel, client_runtime};
use crate::{Error, Settings, USAGE, target};

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
    /// How much the server's resident memory grew over the phase.
    server_growth_bytes: i64,
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
        let (cpu0, rss0) = (servers.cpu(), servers.rss());
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
        phase.server_growth_bytes = servers.rss() as i64 - rss0 as i64;
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
    server_growth_bytes: i64,
    round_rates: Vec<f64>,
}

impl Stats {
    fn add(&mut self, phase: Phase) {
        self.round_rates.push(phase.calls as f64 / phase.elapsed.as_secs_f64());
        self.calls += phase.calls;
        self.errors += phase.errors;
        self.elapsed += phase.elapsed;
        self.server_cpu_s += phase.server_cpu_s;
        self.server_growth_bytes += phase.server_growth_bytes;
        self.latencies_ns.extend(phase.latencies_ns);
    }
    fn rate(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64()
    }
    fn cpu_us_per_call(&self) -> f64 {
        self.server_cpu_s / self.calls as f64 * 1e6
    }
    /// Resident memory the server gained per call: what it keeps of each.
    fn growth_per_call(&self) -> f64 {
        self.server_growth_bytes as f64 / self.calls as f64
    }
    fn sort(&mut self) {
        self.latencies_ns.sort_unstable();
    }
    fn p(&self, q: f64) -> f64 {
        percentile(&self.latencies_ns, q)
    }
}

pub(crate) fn run(s: &Settings) -> Result<Vec<String>, Error> {
    let case = grpc_case();
    // A warmed server is a diagnostic, not the target's measure: say so beside the figures.
    let warmed = if crate::servers::warm_mib()?.is_some() { " (server warmed)" } else { "" };
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
            "{:>3} {:<8} {:>10} {:>17} {:>9} {:>9} {:>9} {:>14} {:>14} {:>7}",
            "c", "server", "calls/s", "rounds min–max", "p50 µs", "p99 µs", "p99.9 µs", "srv CPU µs/call", "srv RSS B/call", "errors"
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
                    "{:>3} {:<8} {:>10.0} {:>17} {:>9.1} {:>9.1} {:>9.1} {:>14.1} {:>14.0} {:>7}",
                    c,
                    target.name(),
                    st.rate(),
                    format!("{min:.0}–{max:.0}"),
                    st.p(0.5) / 1000.0,
                    st.p(0.99) / 1000.0,
                    st.p(0.999) / 1000.0,
                    st.cpu_us_per_call(),
                    st.growth_per_call(),
                    st.errors
                );
            }
            let [echo, toolenv] = &stats;
            let throughput = toolenv.rate() / echo.rate();
            let p50 = toolenv.p(0.5) / echo.p(0.5);
            let p99 = toolenv.p(0.99) / echo.p(0.99);
            let cpu = toolenv.cpu_us_per_call() / echo.cpu_us_per_call();
            println!("    toolenv/echo: throughput {throughput:.3}, p50 {p50:.3}, p99 {p99:.3}, server CPU per call {cpu:.2}");
            summary.push(target(&format!("gRPC throughput toolenv/echo at c={c}{warmed}"), format!("{throughput:.3}"), "≥ 0.90".into(), throughput >= 0.9));
            summary.push(target(&format!("gRPC p99 toolenv/echo at c={c}{warmed}"), format!("{p99:.3}"), "≤ 1.20".into(), p99 <= 1.2));
        }
        Ok::<(), Error>(())
    })?;
    // Only the c=64 figures are targets; the others are context.
    let summary = summary.into_iter().filter(|l| l.contains("c=64")).collect();
    Ok(summary)
}

/// `load echo|toolenv C SECS`: one phase of the gRPC load alone, for a
/// profiler attached to the server child.
pub(crate) fn load_only(args: &[String]) -> Result<(), Error> {
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
            "{} c={c}: {:.0} calls/s, p50 {:.1} µs, p99 {:.1} µs, server CPU {:.1} µs/call, server RSS {:+.0} B/call",
            target.name(),
            stats.rate(),
            stats.p(0.5) / 1000.0,
            stats.p(0.99) / 1000.0,
            stats.cpu_us_per_call(),
            stats.growth_per_call()
        );
        Ok::<(), Error>(())
    })
}
