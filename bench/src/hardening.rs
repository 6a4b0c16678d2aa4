//! Load, soak and crash drills, each bounded in count and time, loopback only:
//!
//! - `live [EPISODES] [SECS]`: EPISODES concurrent live episodes (λ = 0.2,
//!   faults delivered in-band so that an error status is never an injected
//!   fault) driven closed-loop for SECS; an episode near its call limit is
//!   finished and replaced, so EPISODES stay live. Prints calls/s and every
//!   error status (there should be none).
//! - `churn [EPISODES] [SECS]`: EPISODES episodes created, played with their
//!   reference calls and finished, 64 at a time; prints the server's resident
//!   memory at the start, through the run and at the end.
//! - `kill-loop [ITERATIONS]`: the paper grid played by `toolenv run`,
//!   killed with SIGKILL at a random point and resumed, ITERATIONS times
//!   (then resumed to the end); after each kill, every stored episode is
//!   stored once and unchanged. Needs `target/release/toolenv`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use toolenv::pb;
use toolenv::pb::tool_env_client::ToolEnvClient;
use toolenv_domains::suite;

use crate::Error;
use crate::servers::{Servers, channel, client_runtime};

fn arg<T: std::str::FromStr>(args: &[String], index: usize, default: T) -> Result<T, Error> {
    match args.get(index) {
        Some(text) => text.replace('_', "").parse().map_err(|_| format!("not a number: {text}").into()),
        None => Ok(default),
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// `live [EPISODES] [SECS]`.
pub(crate) fn live(args: &[String]) -> Result<(), Error> {
    let episodes: usize = arg(args, 0, 10_000)?;
    let secs: u64 = arg(args, 1, 60)?.min(3_600);
    let servers = Servers::start(Some(episodes + 1_000))?;
    let runtime = client_runtime()?;
    let rss_start = servers.rss();
    let calls = Arc::new(AtomicU64::new(0));
    let replaced = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(parking_errors());
    let started = runtime.block_on(async {
        let mut channels = Vec::new();
        for _ in 0..8 {
            channels.push(channel(&servers.toolenv_url).await?);
        }
        let deadline = Instant::now() + Duration::from_secs(secs);
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..episodes {
            let mut client = ToolEnvClient::new(channels[i % channels.len()].clone());
            let (calls, replaced, errors) = (calls.clone(), replaced.clone(), errors.clone());
            tasks.spawn(async move {
                let task = &suite()[i % suite().len()];
                let mut seed = i as u64;
                'episodes: while Instant::now() < deadline {
                    let request = pb::CreateEpisodeRequest {
                        task_id: task.id.clone(),
                        seed,
                        fault_profile: Some(pb::FaultProfile { name: "0.2".into(), ..Default::default() }),
                        fault_delivery: pb::FaultDelivery::InBand.into(),
                        time_scale: Some(0.0),
                        ..Default::default()
                    };
                    let episode = match client.create_episode(request).await {
                        Ok(reply) => reply.into_inner(),
                        Err(status) => {
                            errors.note(&status);
                            break;
                        }
                    };
                    for call in task.reference.iter().cycle().take(episode.max_calls as usize - 10) {
                        if Instant::now() >= deadline {
                            break 'episodes;
                        }
                        let request = pb::CallToolRequest {
                            episode_id: episode.episode_id.clone(),
                            tool_name: call.tool.to_owned(),
                            arguments_json: call.arguments.to_string(),
                            waited_ms: Some(1),
                            ..Default::default()
                        };
                        match client.call_tool(request).await {
                            Ok(_) => calls.fetch_add(1, Ordering::Relaxed),
                            Err(status) => {
                                errors.note(&status);
                                0
                            }
                        };
                    }
                    let _ = client
                        .finish_episode(pb::FinishEpisodeRequest { episode_id: episode.episode_id, usage: None, ..Default::default() })
                        .await;
                    replaced.fetch_add(1, Ordering::Relaxed);
                    seed += episodes as u64;
                }
            });
        }
        let started = Instant::now();
        while tasks.join_next().await.is_some() {}
        Ok::<Instant, Error>(started)
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let calls = calls.load(Ordering::Relaxed);
    println!("live: {episodes} concurrent live episodes for {elapsed:.1} s (λ = 0.2, faults in-band)");
    println!(
        "  {calls} calls ({:.0}/s), {} episodes finished and replaced",
        calls as f64 / elapsed.max(1e-9),
        replaced.load(Ordering::Relaxed)
    );
    println!("  server RSS {:.1} MiB at start, {:.1} MiB at the end", mib(rss_start), mib(servers.rss()));
    errors.print();
    Ok(())
}

/// `churn [EPISODES] [SECS]`.
pub(crate) fn churn(args: &[String]) -> Result<(), Error> {
    let episodes: u64 = arg(args, 0, 1_000_000)?;
    let secs: u64 = arg(args, 1, 900)?.min(3_600);
    let servers = Servers::start(None)?;
    let runtime = client_runtime()?;
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(parking_errors());
    let rss_start = servers.rss();
    let mut samples = Vec::new();
    let started = Instant::now();
    runtime.block_on(async {
        let mut channels = Vec::new();
        for _ in 0..4 {
            channels.push(channel(&servers.toolenv_url).await?);
        }
        let deadline = started + Duration::from_secs(secs);
        let next = Arc::new(AtomicU64::new(0));
        let mut tasks = tokio::task::JoinSet::new();
        for worker in 0..64 {
            let mut client = ToolEnvClient::new(channels[worker % channels.len()].clone());
            let (next, done, errors) = (next.clone(), done.clone(), errors.clone());
            tasks.spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= episodes || Instant::now() >= deadline {
                        break;
                    }
                    let task = &suite()[(i % suite().len() as u64) as usize];
                    let request =
                        pb::CreateEpisodeRequest { task_id: task.id.clone(), seed: i, time_scale: Some(0.0), ..Default::default() };
                    let episode = match client.create_episode(request).await {
                        Ok(reply) => reply.into_inner(),
                        Err(status) => {
                            errors.note(&status);
                            continue;
                        }
                    };
                    for call in &task.reference {
                        let request = pb::CallToolRequest {
                            episode_id: episode.episode_id.clone(),
                            tool_name: call.tool.to_owned(),
                            arguments_json: call.arguments.to_string(),
                            ..Default::default()
                        };
                        if let Err(status) = client.call_tool(request).await {
                            errors.note(&status);
                        }
                    }
                    match client
                        .finish_episode(pb::FinishEpisodeRequest { episode_id: episode.episode_id, usage: None, ..Default::default() })
                        .await
                    {
                        Ok(verdict) if verdict.get_ref().passed => {
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(_) => errors.note(&tonic::Status::internal("a reference play failed its verdict")),
                        Err(status) => errors.note(&status),
                    }
                }
            });
        }
        let mut ticker = tokio::time::interval(Duration::from_secs(10));
        loop {
            tokio::select! {
                joined = tasks.join_next() => if joined.is_none() { break },
                _ = ticker.tick() => samples.push((started.elapsed().as_secs(), done.load(Ordering::Relaxed), servers.rss())),
            }
        }
        Ok::<(), Error>(())
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let done = done.load(Ordering::Relaxed);
    println!(
        "churn: {done} episodes created, played and finished in {elapsed:.1} s ({:.0} episodes/s, 64 at a time)",
        done as f64 / elapsed
    );
    println!("  server RSS {:.1} MiB at start, {:.1} MiB at the end", mib(rss_start), mib(servers.rss()));
    for (at, done, rss) in samples {
        println!("  {at:>5} s  {done:>9} episodes  RSS {:.1} MiB", mib(rss));
    }
    errors.print();
    Ok(())
}

/// `kill-loop [ITERATIONS]`.
pub(crate) fn kill_loop(args: &[String]) -> Result<(), Error> {
    use toolenv_store::Store;
    let iterations: u32 = arg(args, 0, 20)?.min(1_000);
    let toolenv = std::env::current_exe()?.with_file_name("toolenv");
    if !toolenv.is_file() {
        return Err(format!("{} is missing: cargo build --release -p toolenv-cli", toolenv.display()).into());
    }
    let dir = std::env::temp_dir().join(format!("toolenv-kill-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("runs.db");
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut random = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n.max(1)
    };
    let mut kept: std::collections::BTreeMap<usize, Vec<u8>> = std::collections::BTreeMap::new();
    let mut run_id: Option<String> = None;
    let (mut kills, mut runs, mut stored_total, started) = (0u32, 0u32, 0usize, Instant::now());
    let outcome = (|| -> Result<(), Error> {
        for iteration in 0..=iterations {
            let mut command = std::process::Command::new(&toolenv);
            match &run_id {
                None => command.args(["run", "--grid", "paper", "--agent", "reference,reference-no-retry", "--time-scale", "0.02"]),
                Some(id) => command.args(["run", "--resume", id]),
            };
            command.arg("--store").arg(&db).args(["--concurrency", "4"]).env_remove("TOOLENV_URL");
            let mut child = command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn()?;
            let last = iteration == iterations;
            if !last {
                // Kill at a random point: 50 to 1 500 ms in.
                std::thread::sleep(Duration::from_millis(50 + random(1_450)));
                if child.try_wait()?.is_none() {
                    child.kill()?;
                    kills += 1;
                }
            }
            let status = child.wait()?;
            if last && !status.success() {
                return Err(format!("the last resume failed: {status}").into());
            }
            if !db.is_file() {
                continue;
            }
            let store = Store::open_existing(&db)?;
            let Some(run) = store.runs()?.into_iter().next() else { continue };
            run_id = Some(run.id.to_string());
            let stored = store.episodes(&run.id)?;
            let mut seen = std::collections::BTreeSet::new();
            for episode in &stored {
                if !seen.insert(episode.plan_index) {
                    return Err(format!("plan entry {} stored twice", episode.plan_index).into());
                }
                let bytes = episode.trajectory.as_ref().map(prost::Message::encode_to_vec).unwrap_or_default();
                if let Some(before) = kept.get(&episode.plan_index)
                    && *before != bytes
                {
                    return Err(format!("plan entry {} changed after a kill (played again)", episode.plan_index).into());
                }
                kept.insert(episode.plan_index, bytes);
            }
            if kept.len() < stored.len() {
                return Err("a stored episode disappeared".into());
            }
            if run.finished() == run.planned {
                // Complete: start another run, until every kill is spent.
                runs += 1;
                stored_total += kept.len();
                kept.clear();
                run_id = None;
                drop(store);
                std::fs::remove_file(&db)?;
                if last {
                    break;
                }
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    outcome?;
    println!(
        "kill-loop: {kills} SIGKILLs over {:.1} s; {runs} runs completed ({stored_total} episodes), each episode stored once, none changed after a kill",
        started.elapsed().as_secs_f64(),
    );
    Ok(())
}

/// Error statuses by code, with the first message of each.
struct Errors(std::sync::Mutex<std::collections::BTreeMap<i32, (u64, String)>>);

fn parking_errors() -> Errors {
    Errors(std::sync::Mutex::default())
}

impl Errors {
    fn note(&self, status: &tonic::Status) {
        let mut map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = map.entry(status.code() as i32).or_insert_with(|| (0, status.message().to_owned()));
        entry.0 += 1;
    }

    fn print(&self) {
        let map = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.is_empty() {
            println!("  error statuses: 0");
        }
        for (code, (count, message)) in map.iter() {
            println!("  error status {:?}: {count} (first: {message})", tonic::Code::from_i32(*code));
        }
    }
}
