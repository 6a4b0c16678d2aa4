//! The documented Python worker (examples/python/worker.py), built on the
//! toolenv package (python/), plays a hosted run against a real server.
//!
//! It runs in the Python tests' shared virtual environment
//! ([`toolenv_tests::python::venv`]), with the toolenv package it is built on.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{pass_1_at_lambda, run_report, start};
use toolenv::pb;

fn examples() -> PathBuf {
    toolenv_tests::python::repository().join("examples/python")
}

/// The shared Python environment, with the toolenv package the worker is built on.
fn python() -> Option<PathBuf> {
    toolenv_tests::python::venv(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_worker_plays_a_hosted_run() {
    let Some(python) = tokio::task::spawn_blocking(python).await.unwrap() else { return };
    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest {
        description: "python worker".into(),
        agents: vec!["python".into()],
        fault_profiles: vec!["0.0".into(), "0.2".into()],
        time_scale: Some(0.0),
        lease_timeout_ms: 1000,
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    let planned = 2 * toolenv_domains::suite().len() as u64;
    assert_eq!(run.planned, planned);

    // One episode is leased and abandoned first: the Python workers must get it back.
    let next =
        pb::NextEpisodeRequest { run_id: run.run_id.clone(), agent: "python".into(), worker: "abandons".into(), ..Default::default() };
    let abandoned = client.runs().next_episode(next).await.unwrap().into_inner().lease.unwrap();
    assert_eq!(abandoned.plan_index, 0);

    // The replay policy plays each task's reference calls.
    let scratch = tempfile::tempdir().unwrap();
    let calls: serde_json::Map<String, serde_json::Value> = toolenv_domains::suite()
        .iter()
        .map(|task| {
            let calls: Vec<_> = task.reference.iter().map(|c| serde_json::json!({"tool": c.tool, "arguments": c.arguments})).collect();
            (task.id.clone(), serde_json::Value::from(calls))
        })
        .collect();
    let calls_file = scratch.path().join("calls.json");
    std::fs::write(&calls_file, serde_json::Value::Object(calls).to_string()).unwrap();

    // Two worker processes of two threads each share the run.
    let address = server.addr().to_string();
    let started = Instant::now();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            Command::new(&python)
                .arg(examples().join("worker.py"))
                .args(["--url", &address, "--run", &run.run_id, "--label", "python", "--policy", "replay", "--workers", "2"])
                .arg("--calls")
                .arg(&calls_file)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("python worker starts")
        })
        .collect();
    let mut played = 0;
    for worker in workers {
        let output = tokio::task::spawn_blocking(move || worker.wait_with_output()).await.unwrap().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "worker failed:\n{stderr}");
        let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
        played += summary["played"].as_u64().unwrap();
    }
    assert!(started.elapsed() < Duration::from_secs(120), "bounded in time");
    assert_eq!(played, planned, "every planned episode played once, the abandoned one included");

    let (report, summary) = run_report(&mut client, &run.run_id).await;
    let progress = report.run.unwrap();
    assert_eq!((progress.passed + progress.failed, progress.leased, progress.complete), (planned, 0, true));
    let passed_at = |lambda: f64| pass_1_at_lambda(&summary, 0, lambda);
    assert_eq!(passed_at(0.0), 1.0, "the replayed reference calls pass every task without faults:\n{}", report.text);
    // Its retries (pushback trailers, idempotency keys) carry it through faults as the Rust reference agent.
    assert_eq!(passed_at(0.2), 1.0, "{}", report.text);
    server.shutdown().await.unwrap();
}

/// The worker reaches a server with TLS and a bearer token (`--ca-cert`,
/// `--token`), and a worker without the token is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_worker_passes_a_token_over_tls() {
    use toolenv_server::security::{Security, TlsPem};
    let Some(python) = tokio::task::spawn_blocking(python).await.unwrap() else { return };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls");
    let token = "python-worker-token-0123456789";
    let tls = TlsPem::read(&fixtures.join("server.pem"), &fixtures.join("server.key")).unwrap();
    let config = toolenv_server::Config { security: Security { token: Some(token.into()), tls: Some(tls) }, ..Default::default() };
    let server = toolenv_server::RunningServer::start(config).await.unwrap();
    let credentials =
        toolenv_client::Credentials { token: Some(token.into()), ca_pem: Some(std::fs::read(fixtures.join("ca.pem")).unwrap()) };
    let mut client = toolenv_client::Client::connect_with(&server.url(), &credentials).await.unwrap();
    let request = pb::CreateRunRequest {
        agents: vec!["python".into()],
        domain: pb::Domain::Scheduling.into(),
        level: 1,
        time_scale: Some(0.0),
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.unwrap().into_inner();

    let scratch = tempfile::tempdir().unwrap();
    let calls: serde_json::Map<String, serde_json::Value> = toolenv_domains::suite()
        .iter()
        .map(|task| {
            let calls: Vec<_> = task.reference.iter().map(|c| serde_json::json!({"tool": c.tool, "arguments": c.arguments})).collect();
            (task.id.clone(), serde_json::Value::from(calls))
        })
        .collect();
    let calls_file = scratch.path().join("calls.json");
    std::fs::write(&calls_file, serde_json::Value::Object(calls).to_string()).unwrap();
    let worker = |token: Option<&str>| {
        let mut command = Command::new(&python);
        command
            .arg(examples().join("worker.py"))
            .args(["--url", &server.addr().to_string(), "--run", &run.run_id, "--policy", "replay"])
            .arg("--calls")
            .arg(&calls_file)
            .arg("--ca-cert")
            .arg(fixtures.join("ca.pem"))
            .env_remove("TOOLENV_TOKEN");
        if let Some(token) = token {
            command.args(["--token", token]);
        }
        command.output().expect("python worker runs")
    };
    let refused = tokio::task::block_in_place(|| worker(None));
    assert!(!refused.status.success(), "a worker without the token played");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("UNAUTHENTICATED"), "{}", String::from_utf8_lossy(&refused.stderr));
    let output = tokio::task::block_in_place(|| worker(Some(token)));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "worker failed:\n{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(summary["played"].as_u64(), Some(run.planned), "{stderr}");
    server.shutdown().await.unwrap();
}

/// The worker's llm policy hands the model's final reply to the episode as
/// its answer: a scripted OpenAI-compatible endpoint makes each task's
/// reference calls (as bare JSON text) and then replies with the reference
/// answer, and every answer task of the run passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_worker_s_llm_policy_gives_the_model_s_answer() {
    use std::collections::HashMap;
    use toolenv_agents::llm::scripted::{Canned, ScriptedEndpoint};
    use toolenv_domains::generate::Suite;

    let Some(python) = tokio::task::spawn_blocking(python).await.unwrap() else { return };
    let suite: Suite = "generated:2:1".parse().unwrap();
    let tasks: Vec<_> = suite.tasks(None, Some(3)).into_iter().filter(|t| t.id.starts_with("scheduling/")).collect();
    assert!(tasks.iter().any(|t| t.reference_answer().is_some()), "the run holds an answer task");
    // Each task's calls and answer, by the description its episode tells (ε = 0).
    let scripts: HashMap<String, (Vec<serde_json::Value>, String)> = tasks
        .iter()
        .map(|task| {
            let calls = task.reference.iter().map(|c| serde_json::json!({"name": c.tool, "arguments": c.arguments})).collect();
            (task.description().to_owned(), (calls, task.reference_answer().unwrap_or("Done.").to_owned()))
        })
        .collect();
    let endpoint = ScriptedEndpoint::start_with(move |body| {
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let asked = messages.iter().filter(|m| m["role"] == "user").find_map(|m| m["content"].as_str()).unwrap_or_default();
        let Some((calls, answer)) = scripts.iter().find(|(description, _)| asked.contains(description.as_str())).map(|(_, s)| s) else {
            return Canned::Status(400);
        };
        let made: usize = messages.iter().filter_map(|m| m["content"].as_str()).map(|c| c.matches("Observation (").count()).sum();
        Canned::Text(calls.get(made).map_or_else(|| answer.clone(), serde_json::Value::to_string))
    })
    .await
    .unwrap();

    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest {
        agents: vec!["python-llm".into()],
        suite: "generated:2:1".into(),
        domain: pb::Domain::Scheduling.into(),
        level: 3,
        time_scale: Some(0.0),
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    assert_eq!(run.planned as usize, tasks.len());
    let output = tokio::task::block_in_place(|| {
        Command::new(&python)
            .arg(examples().join("worker.py"))
            .args(["--url", &server.addr().to_string(), "--run", &run.run_id, "--label", "python-llm", "--policy", "llm"])
            .args(["--model", "scripted"])
            .env("OPENAI_BASE_URL", endpoint.base_url())
            .env("OPENAI_API_KEY", "test-key")
            .output()
            .expect("python worker runs")
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "worker failed:\n{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(summary["played"].as_u64(), Some(run.planned), "{stderr}");
    assert_eq!(summary["passed"].as_u64(), Some(run.planned), "every task passes with its answer:\n{stderr}");
    server.shutdown().await.unwrap();
}

/// A worker that cannot play (the llm policy without a key) says so and
/// exits non-zero before it leases anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_worker_that_cannot_play_leases_nothing() {
    let Some(python) = tokio::task::spawn_blocking(python).await.unwrap() else { return };
    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest { agents: vec!["python".into()], level: 1, time_scale: Some(0.0), ..Default::default() };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    let output = tokio::task::block_in_place(|| {
        Command::new(&python)
            .arg(examples().join("worker.py"))
            .args(["--url", &server.addr().to_string(), "--run", &run.run_id, "--label", "python", "--policy", "llm"])
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .output()
            .expect("python worker runs")
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "a worker that cannot play exited 0:\n{stderr}");
    assert!(stderr.contains("OPENAI_API_KEY"), "{stderr}");
    let progress = client.runs().get_run(pb::GetRunRequest { run_id: run.run_id.clone() }).await.unwrap().into_inner();
    assert_eq!((progress.leased, progress.passed + progress.failed), (0, 0), "{progress:?}");
    server.shutdown().await.unwrap();
}
