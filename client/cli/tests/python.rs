//! The Python side, run by `cargo test`: the toolenv package's pytest suite
//! (the Gymnasium-style env, the typed client, and `toolenv mcp` driven by the
//! official MCP Python client over stdio and streamable HTTP), and the same
//! task played with the same calls over gRPC, MCP and the Python env, giving
//! byte-identical trajectories.
//!
//! Python runs in the tests' shared virtual environment under target/
//! ([`toolenv_tests::python::venv`]: pinned packages from PyPI, once).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use prost::Message as _;
use serde_json::{Value, json};
use toolenv::pb;
use toolenv_server::{Config, RunningServer};

fn python() -> Option<PathBuf> {
    toolenv_tests::python::venv(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

fn python_tests() -> PathBuf {
    toolenv_tests::python::repository().join("python/tests")
}

#[test]
fn the_python_package_and_the_mcp_bridge_pass_their_pytest_suite() {
    let Some(python) = python() else { return };
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(python_tests())
        .env("TOOLENV_BIN", env!("CARGO_BIN_EXE_toolenv"))
        // Not the repository: its python/ source (without generated stubs) must not shadow the installed package.
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("pytest runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "pytest failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let summary = stdout.lines().last().unwrap_or_default();
    assert!(summary.contains(" passed") && !summary.contains("skipped"), "{summary}");
}

/// The travel task's reference calls, a malformed call, and a retry that
/// declares a wait.
fn calls() -> Vec<Value> {
    vec![
        json!({"tool": "search_flights", "arguments": {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}}),
        json!({"tool": "search_flights", "arguments": {"origin": 5}}),
        json!({"tool": "search_flights", "arguments": {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}, "waited_ms": 1000}),
        json!({"tool": "get_traveler_profile", "arguments": {"name": "Bob"}}),
        json!({"tool": "hold_flight", "arguments": {"flight_id": "AA-500"}}),
        json!({"tool": "confirm_booking", "arguments": {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"}}),
        json!({"tool": "confirm_booking", "arguments": {"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"}, "waited_ms": 1000}),
    ]
}

const TASK: &str = "travel/cheapest-flight/001";
const EPSILON: f64 = 0.2;
const FAULTS: &str = "0.3";

/// Plays [`calls`] over gRPC (the Rust client) and returns the trajectory.
async fn play_grpc(url: &str, seed: u64, in_band: bool) -> pb::Trajectory {
    let mut client = toolenv_client::Client::connect(url).await.unwrap();
    let delivery = if in_band { pb::FaultDelivery::InBand } else { pb::FaultDelivery::Status };
    let request = pb::CreateEpisodeRequest {
        task_id: TASK.into(),
        seed,
        epsilon: EPSILON,
        fault_profile: Some(pb::FaultProfile { name: FAULTS.into(), ..Default::default() }),
        fault_delivery: delivery.into(),
        time_scale: Some(0.0),
        ..Default::default()
    };
    let episode = client.create(request).await.unwrap();
    for call in calls() {
        let arguments = call["arguments"].to_string();
        let waited = call["waited_ms"].as_u64();
        let request = pb::CallToolRequest {
            episode_id: episode.episode_id.clone(),
            tool_name: call["tool"].as_str().unwrap().to_owned(),
            arguments_json: arguments,
            waited_ms: waited,
            ..Default::default()
        };
        let _ = client.call(request).await;
    }
    client.finish(pb::FinishEpisodeRequest { episode_id: episode.episode_id.clone(), ..Default::default() }).await.unwrap();
    client.trajectory(&episode.episode_id).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_calls_over_grpc_mcp_and_the_python_env_give_byte_identical_trajectories() {
    let Some(python) = tokio::task::spawn_blocking(python).await.unwrap() else { return };
    let server = RunningServer::start(Config::default()).await.unwrap();
    let url = server.url();
    for in_band in [false, true] {
        // A seed whose episode meets faults, so that the ledger is part of what is compared.
        let mut seed = 0;
        let grpc = loop {
            let trajectory = play_grpc(&url, seed, in_band).await;
            if trajectory.calls.iter().filter(|c| c.fault.is_some()).count() >= 2 {
                break trajectory;
            }
            seed += 1;
            assert!(seed < 50, "no seed in 0..50 meets two faults at λ = 0.3");
        };
        assert!(grpc.calls.iter().any(|c| matches!(c.outcome, Some(pb::tool_call_record::Outcome::Invalid(_)))));
        assert!(!grpc.perturbations.is_empty(), "ε = 0.2 perturbs the description");

        let spec = json!({
            "server": url.trim_start_matches("http://"), "binary": env!("CARGO_BIN_EXE_toolenv"), "task": TASK,
            "seed": seed, "epsilon": EPSILON, "faults": FAULTS, "in_band": in_band, "calls": calls(),
        });
        let python = python.clone();
        let output = tokio::task::spawn_blocking(move || {
            let mut child = Command::new(&python)
                .arg(python_tests().join("surfaces.py"))
                .current_dir(python_tests())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("python runs");
            child.stdin.take().unwrap().write_all(spec.to_string().as_bytes()).unwrap();
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "surfaces.py failed:\n{stderr}");
        let ids: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));

        let mut client = toolenv_client::Client::connect(&url).await.unwrap();
        let expected = grpc.encode_to_vec();
        for surface in ["env", "mcp_stdio", "mcp_http"] {
            let trajectory = client.trajectory(ids[surface].as_str().unwrap()).await.unwrap();
            pretty_assertions::assert_eq!(trajectory, grpc, "{surface} (in band: {in_band})");
            assert_eq!(trajectory.encode_to_vec(), expected, "{surface}: the bytes");
        }
    }
    server.shutdown().await.unwrap();
}
