//! Phase 3, scale: resident memory of a server holding many live episodes
//! (100 000 in a full run), before and after playing them; and the wall
//! time of the paper's 1,280 episodes with the retrying reference agent at
//! time scale 0 over gRPC.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use toolenv::pb;
use toolenv::pb::tool_env_client::ToolEnvClient;

use crate::servers::{Servers, channel, client_runtime};
use crate::{Error, Settings, target};

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

pub(crate) fn run(s: &Settings) -> Result<Vec<String>, Error> {
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
