//! Replicas on a PostgreSQL store, measured on this machine (a benchmark,
//! not a test): calls per second and the time per call with and without the
//! durable log, the log's bytes per call, lease claims per second, and the
//! time to rebuild an episode by replay as a function of its length.
//!
//! `bench/replicas.sh` runs it all against a cluster it starts. By hand, it
//! needs a PostgreSQL database to write into (it creates runs and logs):
//!
//!     TOOLENV_BENCH_PG=postgres://user:password@127.0.0.1:5432/db \
//!         cargo run --release -p toolenv-bench --bin toolenv-bench-replicas
//!
//! Prints one tab-separated line per figure.
//!
//! With `TOOLENV_BENCH_TARGETS=label=URL,label=URL,…` it measures only
//! calls and episodes per second against each running server or proxy, in
//! turn, over several rounds (`TOOLENV_BENCH_ROUNDS`, default 3), with each
//! target's median ratio to the first (`bench/replicas.sh` starts them: a
//! single process, one replica, and HAProxy in front of 1, 2 and 3 replicas).
#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use prost::Message as _;
use toolenv::pb;
use toolenv_client::Client;
use toolenv_server::{Config, RunningServer};

/// Calls per episode in the throughput figures.
const CALLS: usize = 20;

/// Episodes per target and round in the throughput figures: a few seconds
/// of calls each (a plain server's rate over under a second swung between
/// 30 k and 49 k calls/s from one round to the next on a shared machine).
const EPISODES_PER_ROUND: usize = 3200;

async fn server(store: Option<&str>) -> (RunningServer, Client) {
    let config = Config { store: store.map(Into::into), time_scale: 0.0, ..Config::default() };
    let server = RunningServer::start(config).await.expect("a server starts");
    let client = Client::connect(&server.url()).await.expect("a client connects");
    (server, client)
}

/// Plays `episodes` episodes of `CALLS` calls each, each finished (as an
/// agent's is; with the log, a finish is logged too), over `clients`
/// concurrent clients (one on each of `servers`, round robin); returns
/// (calls/s, mean µs per call as one client sees it).
async fn play(clients: &[Client], episodes: usize, concurrency: usize) -> (f64, f64) {
    let task = &toolenv_domains::suite()[0];
    let calls = toolenv_domains::agent::random_calls(task, 1, CALLS);
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..concurrency {
        let (mut client, calls, task_id) = (clients[worker % clients.len()].clone(), calls.clone(), task.id.clone());
        tasks.spawn(async move {
            let mut busy = Duration::ZERO;
            for n in (worker..episodes).step_by(concurrency) {
                let request = pb::CreateEpisodeRequest { task_id: task_id.clone(), seed: n as u64, ..Default::default() };
                let episode = client.create(request).await.expect("created");
                for call in &calls {
                    let at = Instant::now();
                    let _ = client.call_json(&episode.episode_id, call.tool, &call.arguments.to_string()).await;
                    busy += at.elapsed();
                }
                client.finish(pb::FinishEpisodeRequest { episode_id: episode.episode_id, ..Default::default() }).await.expect("finished");
            }
            busy
        });
    }
    let mut busy = Duration::ZERO;
    while let Some(done) = tasks.join_next().await {
        busy += done.expect("a worker");
    }
    let total = (episodes * CALLS) as f64;
    (total / started.elapsed().as_secs_f64(), busy.as_secs_f64() * 1e6 / total)
}

/// Calls and episodes per second against each `label=URL` target, 16
/// clients, in `TOOLENV_BENCH_ROUNDS` rounds (default 3) that take the
/// targets in turn, so that a noisy machine slows them alike; then each
/// target's median over the rounds and its median ratio to the first
/// target's rate in the same round.
async fn targets(targets: &str) {
    let mut clients = Vec::new();
    for target in targets.split(',') {
        let Some((label, url)) = target.split_once('=') else {
            eprintln!("TOOLENV_BENCH_TARGETS: '{target}' is not label=URL");
            std::process::exit(2);
        };
        match Client::connect(url).await {
            Ok(client) => clients.push((label, vec![client; 16])),
            Err(error) => {
                eprintln!("{label}: cannot connect to {url}: {error}");
                std::process::exit(2);
            }
        }
    }
    let rounds = std::env::var("TOOLENV_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).filter(|&r| r > 0).unwrap_or(3);
    let mut rates = vec![Vec::new(); clients.len()];
    for round in 1..=rounds {
        for ((label, clients), rates) in clients.iter().zip(&mut rates) {
            play(clients, 32, 16).await;
            let (rate, micros) = play(clients, EPISODES_PER_ROUND, 16).await;
            println!("round {round}\t{label}\t16 clients\t{rate:.0} calls/s\t{:.0} episodes/s\t{micros:.0} µs/call", rate / CALLS as f64);
            rates.push(rate);
        }
    }
    for ((label, _), rate) in clients.iter().zip(&rates) {
        let ratios: Vec<f64> = rate.iter().zip(&rates[0]).map(|(rate, first)| rate / first).collect();
        println!(
            "target\t{label}\t16 clients\tmedian {:.0} calls/s\t{:.2}× the first target (median of {rounds} rounds; each {})",
            median(rate),
            median(&ratios),
            ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", ")
        );
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) { (sorted[middle - 1] + sorted[middle]) / 2.0 } else { sorted[middle] }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    if let Ok(list) = std::env::var("TOOLENV_BENCH_TARGETS") {
        return targets(&list).await;
    }
    let Ok(url) = std::env::var("TOOLENV_BENCH_PG") else {
        eprintln!("set TOOLENV_BENCH_PG=postgres://user:password@host:port/db (a database this benchmark may write into)");
        std::process::exit(2);
    };
    let (single, single_client) = server(None).await;
    let (replica, replica_client) = server(Some(&url)).await;
    let (replica2, replica2_client) = server(Some(&url)).await;
    // Warm up both paths (connections, statement caches).
    play(std::slice::from_ref(&single_client), 20, 4).await;
    play(std::slice::from_ref(&replica_client), 20, 4).await;
    for concurrency in [1, 16] {
        let (rate, micros) = play(std::slice::from_ref(&single_client), 400, concurrency).await;
        println!("calls\tno log (SQLite default)\tconcurrency {concurrency}\t{rate:.0} calls/s\t{micros:.0} µs/call");
        let (rate, micros) = play(std::slice::from_ref(&replica_client), 400, concurrency).await;
        println!("calls\tdurable log, 1 replica\tconcurrency {concurrency}\t{rate:.0} calls/s\t{micros:.0} µs/call");
        let (rate, micros) = play(&[replica_client.clone(), replica2_client.clone()], 400, concurrency).await;
        println!("calls\tdurable log, 2 replicas\tconcurrency {concurrency}\t{rate:.0} calls/s\t{micros:.0} µs/call");
    }

    // The log's bytes per call: each call is its encoded wire record.
    let mut client = replica_client.clone();
    let task = &toolenv_domains::suite()[0];
    let episode = client.create(pb::CreateEpisodeRequest { task_id: task.id.clone(), ..Default::default() }).await.unwrap();
    for call in toolenv_domains::agent::random_calls(task, 1, CALLS) {
        let _ = client.call_json(&episode.episode_id, call.tool, &call.arguments.to_string()).await;
    }
    let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
    let bytes: usize = trajectory.calls.iter().map(|c| c.encoded_len()).sum();
    let header = pb::Trajectory { calls: Vec::new(), ..trajectory.clone() }.encoded_len();
    println!("log\tbytes per call\t{}\tper episode header\t{header}", bytes / trajectory.calls.len());

    // Lease claims per second, 16 claimers on one run.
    let store = std::sync::Arc::new(toolenv_store::PgStore::connect(&url).expect("the store"));
    let plan = toolenv_runs::Grid { trials: 100, ..toolenv_runs::Grid::single(vec!["reference".into()]) }
        .plan(toolenv_domains::suite().iter().map(|t| t.id.as_str()));
    let run = store.host_run(&plan, "bench", Duration::from_secs(600)).expect("a run");
    let started = Instant::now();
    let mut claimers = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (store, run) = (store.clone(), run.to_string());
        claimers.spawn(async move {
            let mut claimed = 0u64;
            while let Ok(toolenv_store::postgres::Claim::Slot(_)) = store.claim(run.clone(), String::new(), Duration::from_secs(600)).await
            {
                claimed += 1;
            }
            claimed
        });
    }
    let mut claimed = 0;
    while let Some(done) = claimers.join_next().await {
        claimed += done.unwrap();
    }
    println!("leases\tclaims/s (16 claimers, {} entries)\t{:.0}", plan.len(), claimed as f64 / started.elapsed().as_secs_f64());

    // Rebuilding by replay: an episode of n calls made on one replica, read on the other.
    for n in [10, 50, 100, 200] {
        let mut on_a = replica_client.clone();
        let mut on_b = replica2_client.clone();
        let request = pb::CreateEpisodeRequest { task_id: task.id.clone(), ..Default::default() };
        let episode = on_a.create(request).await.unwrap();
        for call in toolenv_domains::agent::random_calls(task, n as u64, n) {
            let _ = on_a.call_json(&episode.episode_id, call.tool, &call.arguments.to_string()).await;
        }
        let at = Instant::now();
        on_b.trajectory(&episode.episode_id).await.expect("rebuilt");
        let rebuild = at.elapsed();
        let at = Instant::now();
        on_b.trajectory(&episode.episode_id).await.expect("held");
        let held = at.elapsed();
        println!("rebuild\t{n} calls\t{:.2} ms (then {:.2} ms held)", rebuild.as_secs_f64() * 1e3, held.as_secs_f64() * 1e3);
    }
    for server in [single, replica, replica2] {
        server.shutdown().await.unwrap();
    }
}
