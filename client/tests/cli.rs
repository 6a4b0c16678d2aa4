//! The `toolenv` binary as a user runs it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn toolenv(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolenv")).args(args).env_remove("TOOLENV_URL").output().expect("toolenv runs")
}

#[test]
fn run_plays_the_whole_suite_with_the_reference_agent() {
    let out = toolenv(&["run"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("20/20 passed (reference agent"), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.contains(" pass ")).count(), 20, "{stdout}");
}

#[test]
fn selfcheck_passes_and_play_prints_a_verdict() {
    let out = toolenv(&["selfcheck"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let out = toolenv(&["play", "scheduling/book-meeting/001"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("verdict: PASS") && stdout.contains("+ /calendar/2026-01-01"), "{stdout}");
    let out = toolenv(&["play", "scheduling/book-meeting/001", "--agent", "idle", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints json");
    assert_eq!(json["verdict"]["passed"], false);
}

#[test]
fn errors_are_clear_and_exit_non_zero() {
    let out = toolenv(&["play", "travel/no-such-task/999"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("NotFound") || stderr.contains("not found"), "{stderr}");
    let out = toolenv(&["run", "--level", "3"]);
    assert_eq!(out.status.code(), Some(2), "clap rejects a level outside 1..=2");
    let out = toolenv(&["tasks", "--url", "http://127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot connect"));
}

#[cfg(unix)]
#[test]
fn serve_stops_gracefully_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("serve starts");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines.next().expect("serve announces its address").unwrap();
        if let Some(rest) = line.split("toolenv listening on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    let out = toolenv(&["run", "--domain", "travel", "--url", &url]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("5/5 passed"));
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "serve exits 0 after SIGTERM: {status}");
}

#[test]
fn run_plays_a_grid_and_prints_the_report() {
    let out = toolenv(&["run", "--grid", "ablation", "--domain", "scheduling", "--agent", "reference,reference-no-retry"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for expected in ["80 episodes, pass^2", "== agent reference ", "fault-type ablation (vs mixed)", "rate-limit-only"] {
        assert!(stdout.contains(expected), "{expected}:\n{stdout}");
    }
    let out = toolenv(&["run", "--epsilon", "0,0.2", "--agent", "brittle", "--domain", "travel", "--json"]);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 10);
    assert!(lines.iter().all(|l| l["agent"] == "brittle"));
}
