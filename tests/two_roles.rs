//! The Python two-role example (examples/python/two_roles.py): a planner and
//! an executor, two workers in one process, share each episode of a hosted
//! multi-agent run under a message storm.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::start;
use toolenv::pb;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/python")
}

/// A Python with the toolenv package, in the tests' shared virtual environment.
fn python() -> Option<PathBuf> {
    toolenv_tests::python::venv(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_python_workers_in_two_roles_play_a_hosted_run_under_a_message_storm() {
    let Some(python) = tokio::task::spawn_blocking(python).await.unwrap() else { return };
    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest {
        agents: vec!["team".into()],
        domain: pb::Domain::Travel.into(),
        roles: ["planner", "executor"].iter().map(|n| pb::Role::from(&toolenv_core::RoleSpec::standard(n))).collect(),
        fault_profiles: vec!["mas:message-storm@1".into()],
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    assert_eq!(run.planned, 5);
    // The recorded solutions the planner sends as plans.
    let calls: serde_json::Map<String, serde_json::Value> = toolenv_domains::suite()
        .iter()
        .map(|t| (t.id.clone(), t.reference.iter().map(|c| serde_json::json!({"tool": c.tool, "arguments": c.arguments})).collect()))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let calls_file = dir.path().join("calls.json");
    std::fs::write(&calls_file, serde_json::Value::Object(calls).to_string()).unwrap();
    let url = server.url().trim_start_matches("http://").to_owned();
    let run_id = run.run_id.clone();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(&python)
            .arg(examples().join("two_roles.py"))
            .args(["--url", &url, "--run", &run_id, "--label", "team", "--calls"])
            .arg(&calls_file)
            .arg("--verbose")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "two_roles.py failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("5/5 episodes passed"), "{stdout}");
    let progress = client.runs().get_run(pb::GetRunRequest { run_id: run.run_id.clone() }).await.unwrap().into_inner();
    assert_eq!((progress.passed, progress.complete), (5, true));
    server.shutdown().await.unwrap();
}
