//! `--answer-judge llm` on the command line, against a scripted judge on a
//! loopback port: the run's table and report say which judged, the stored
//! run keeps the rulings, and wrong uses are refused before anything runs.

use std::process::Command;

use serde_json::Value;
use toolenv_agents::llm::scripted::{Canned, ScriptedEndpoint};

fn toolenv(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolenv")).args(args).env("TOOLENV_LOG", "warn").output().expect("toolenv runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_judged_by_a_model_says_so_and_keeps_its_rulings() {
    // A strict judge: no answer is right.
    let judge =
        ScriptedEndpoint::start_with(|_: &Value| Canned::Text(r#"{"correct": false, "reason": "scripted: never"}"#.into())).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let (store, url) = (store.to_str().unwrap().to_owned(), judge.base_url());
    let run = ["run", "--suite", "generated:2:2", "--level", "3", "--agent", "reference", "--store", &store];
    let judged = [&run[..], &["--answer-judge", "llm", "--judge-model", "scripted-judge", "--judge-base-url", &url]].concat();
    // The judge answers on this runtime while the command runs.
    let out = tokio::task::block_in_place(|| toolenv(&judged));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let asked = judge.requests();
    assert!(asked > 0, "{text}{}", String::from_utf8_lossy(&out.stderr));
    // The reference passes every task but those that ask a question, which the judge fails.
    assert!(text.contains(&format!("answers judged by model scripted-judge: {asked} episode")), "{text}");
    assert!(text.contains(&format!("{}/8 passed", 8 - asked)), "{text}");
    let report = toolenv(&["report", "run-0001", "--json", "--store", &store]);
    let report: Value = serde_json::from_slice(&report.stdout).expect("report --json");
    assert_eq!(report["report"]["agents"][0]["answer_judges"]["model scripted-judge"].as_u64(), Some(asked), "{report}");

    // Refused before anything runs: no model named, and a judge for a server started elsewhere.
    let no_model = toolenv(&["run", "--answer-judge", "llm"]);
    assert!(!no_model.status.success() && String::from_utf8_lossy(&no_model.stderr).contains("--judge-model"));
    let remote = toolenv(&["--url", "http://127.0.0.1:9", "run", "--answer-judge", "llm", "--judge-model", "m"]);
    let why = String::from_utf8_lossy(&remote.stderr);
    assert!(!remote.status.success() && why.contains("toolenv serve --answer-judge llm"), "{why}");
}
