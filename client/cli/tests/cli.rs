//! The `toolenv` binary as a user runs it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use prost::Message as _;
use toolenv_store::Store;

/// Runs toolenv to its end, storing runs in a temporary file unless `--store` says otherwise.
fn toolenv(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().expect("a temporary directory");
    Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(args)
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .output()
        .expect("toolenv runs")
}

/// A child process killed when the test ends, however it ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn run_plays_the_whole_suite_with_the_reference_agent() {
    let out = toolenv(&["run"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let tasks = toolenv_domains::suite().len();
    assert!(stdout.contains(&format!("{tasks}/{tasks} passed (reference agent")), "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.contains(" pass ")).count(), tasks, "{stdout}");
}

#[test]
fn selfcheck_passes_and_play_prints_a_verdict() {
    let out = toolenv(&["selfcheck"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    // The paper suite has no answer task: no empty answers table.
    assert!(stdout.contains("WRONG CHEATS FAILED") && !stdout.contains("ANSWER CHEATS"), "{stdout}");
    let out = toolenv(&["selfcheck", "--suite", "generated:2:4", "--domain", "scheduling", "--level", "3"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\n4 tasks of the ") && stdout.contains("ANSWER CHEATS"), "{stdout}");
    // The prose corpus's figures per answer kind.
    let row = stdout.lines().find(|l| l.starts_with("refuse-booking ")).expect("a prose row for refuse-booking");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(cells[1].parse::<u32>().unwrap() > 0 && cells[4].parse::<u32>().unwrap() > 0, "{row}");
    let out = toolenv(&["play", "scheduling/book-meeting/001"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("verdict: PASS") && stdout.contains("+ /calendar/2026-01-01"), "{stdout}");
    let out = toolenv(&["play", "scheduling/book-meeting/001", "--agent", "idle", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints json");
    assert_eq!(json["verdict"]["passed"], false);
}

#[test]
fn play_prints_the_fault_ledger_and_its_kinds_which_sum_to_it() {
    // Two cascades refuse eight calls of one tool; the agent retries seven
    // times, never gets an answer, and passes without it.
    let out = toolenv(&["play", "travel/cheapest-flight/001", "--faults", "0.3", "--seed", "5"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let ledger: Vec<&str> = stdout.lines().skip_while(|l| !l.starts_with("faults: ")).take(2).collect();
    assert_eq!(
        ledger,
        [
            "faults: 2 injected, 8 encountered, 0 recovered, 0 extra calls; 8 calls met, 7 retried",
            "  CascadingFailure: 2 injected, 8 encountered, 0 recovered, 0 extra calls; 8 calls met, 7 retried",
        ],
        "{stdout}"
    );
    // --json has the same ledger by kind, summing to its totals.
    let out = toolenv(&["play", "travel/cheapest-flight/001", "--faults", "0.3", "--seed", "5", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints json");
    let verdict = &json["verdict"];
    let kinds = verdict["faults_by_kind"].as_object().expect("the ledger by kind");
    assert_eq!(kinds["CascadingFailure"]["hits"], 8);
    assert_eq!(kinds["CascadingFailure"]["retried"], 7);
    for total in ["injected", "encountered", "recovered", "extra_calls"] {
        let sum: u64 = kinds.values().map(|k| k[total].as_u64().unwrap()).sum();
        assert_eq!(Some(sum), verdict["fault_stats"][total].as_u64(), "{total}");
    }
}

#[test]
fn errors_are_clear_and_exit_non_zero() {
    let out = toolenv(&["play", "travel/no-such-task/999"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("NotFound") || stderr.contains("not found"), "{stderr}");
    let out = toolenv(&["run", "--level", "4"]);
    assert_eq!(out.status.code(), Some(2), "clap rejects a level outside 1..=3");
    let out = toolenv(&["tasks", "--suite", "generated:1"]);
    assert_eq!(out.status.code(), Some(2), "a suite needs a seed and a size");
    assert!(String::from_utf8_lossy(&out.stderr).contains("generated:<seed>:<n>"));
    let out = toolenv(&["tasks", "--url", "http://127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot connect"));
}

/// Starts `toolenv serve` on a loopback port with its store in `dir`; returns it and its URL.
fn serve(dir: &std::path::Path) -> (KillOnDrop, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(["serve", "--addr", "127.0.0.1:0", "--store"])
        .arg(dir.join("server.db"))
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
    // Keep draining its log so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (KillOnDrop(child), url)
}

#[cfg(unix)]
#[test]
fn serve_stops_gracefully_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, url) = serve(dir.path());
    let out = toolenv(&["run", "--domain", "travel", "--url", &url]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("5/5 passed"));
    let killed = Command::new("kill").args(["-TERM", &server.0.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = server.0.wait().unwrap();
    assert!(status.success(), "serve exits 0 after SIGTERM: {status}");
}

#[test]
fn a_hosted_run_is_played_by_workers_and_reported_by_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = serve(dir.path());
    let out = toolenv(&[
        "host",
        "--url",
        &url,
        "--domain",
        "support",
        "--faults",
        "0.2",
        "--trials",
        "2",
        "--label",
        "reference,random",
        "--no-wait",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_eq!(run, "run-0001");
    // Two worker commands at once, one per label; the second plays the random agent under the label "random".
    let workers: Vec<_> = [["--agent", "reference"], ["--agent", "random"]]
        .iter()
        .map(|agent| {
            Command::new(env!("CARGO_BIN_EXE_toolenv"))
                .args(["work", &run, "--url", &url, "--workers", "3"])
                .args(agent)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for worker in workers {
        let out = worker.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains("played ") && stderr.contains(&format!("episodes of {run}")), "{stderr}");
    }
    let out = toolenv(&["report", &run, "--url", &url]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("run-0001: 20/20 episodes finished (complete)"), "{stdout}");
    assert!(stdout.contains("== agent reference (10 episodes): pass^2 100.0%") && stdout.contains("== agent random"), "{stdout}");
    let out = toolenv(&["runs", "--url", &url]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("run-0001") && l.contains("complete") && l.contains("reference,random")), "{stdout}");
    // The plan is the server's: a worker for a label it does not plan is told so.
    let out = toolenv(&["work", &run, "--url", &url, "--agent", "brittle"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("plans no episode for 'brittle'"));
    let out = toolenv(&["host", "--label", "x"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--url"), "hosting needs a server");
}

#[test]
fn workers_say_why_they_cannot_play_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = serve(dir.path());
    let host = ["host", "--url", &url, "--domain", "travel", "--roles", "planner,executor", "--label", "team", "--no-wait"];
    let out = toolenv(&host);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    // The closed loop needs a verifier the run's episodes do not declare: said at once, nothing scored.
    let out = toolenv(&["work", &run, "--url", &url, "--agent", "team-closed-loop", "--label", "team", "--workers", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not 'verifier'") && stderr.contains("--roles planner,executor,verifier"), "{stderr}");
    // Refused before leasing: the run holds no lease for a correct worker to wait out.
    let out = toolenv(&["runs", "--url", &url]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let row: Vec<&str> = stdout.lines().find(|l| l.starts_with(run.as_str())).expect("the run is listed").split_whitespace().collect();
    assert_eq!(row[5], "0", "LEASED after a refused worker:\n{stdout}");
    // An MCP client asking for a label the run does not plan is told which it does.
    let out = toolenv(&["mcp", "--url", &url, "--run", &run, "--label", "claude"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("plans no episode for 'claude'; its agents are: team"), "{stderr}");
}

#[test]
fn run_plays_a_grid_and_prints_the_report() {
    let out = toolenv(&["run", "--grid", "ablation", "--domain", "scheduling", "--agent", "reference,reference-no-retry"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for expected in ["80 episodes, pass^2", "== agent reference ", "fault-type ablation (Table 9", "rate-limit-only"] {
        assert!(stdout.contains(expected), "{expected}:\n{stdout}");
    }
    let out = toolenv(&["run", "--epsilon", "0,0.2", "--agent", "brittle", "--domain", "travel", "--json"]);
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 10);
    assert!(lines.iter().all(|l| l["agent"] == "brittle"));
}

#[test]
fn a_killed_run_resumes_without_losing_or_repeating_episodes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_arg = db.to_str().unwrap();
    // 480 episodes; fault delays at 2 % of simulated time make it last a few seconds.
    let args = ["run", "--grid", "paper", "--agent", "reference,reference-no-retry", "--concurrency", "2", "--time-scale", "0.02"];
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_toolenv"))
            .args(args)
            .args(["--store", db_arg])
            .env_remove("TOOLENV_URL")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("toolenv starts"),
    );
    // Generous: on a loaded machine (the docs check and Python beside it) 30 episodes can take long.
    let deadline = Instant::now() + Duration::from_secs(120);
    let run = loop {
        assert!(Instant::now() < deadline, "no episodes were stored in time");
        if let Some(status) = child.0.try_wait().unwrap() {
            panic!("the run ended ({status}) before it could be killed: make it longer");
        }
        let stored = if db.is_file() { Store::open_existing(&db).unwrap().runs().unwrap() } else { Vec::new() };
        if let Some(run) = stored.into_iter().next().filter(|run| run.finished() >= 30) {
            break run;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    child.0.kill().unwrap();
    child.0.wait().unwrap();

    let store = Store::open_existing(&db).unwrap();
    let id = run.id.clone();
    let killed = store.episodes(&id).unwrap();
    let planned = run.planned as usize;
    assert_eq!(planned, 480);
    assert!(killed.len() >= 30 && killed.len() < planned, "killed mid-run: {} of {planned} stored", killed.len());
    assert!(killed.iter().all(|e| e.session == 1 && e.trajectory.is_some()));
    drop(store);

    let out = toolenv(&["run", "--resume", id.as_str(), "--store", db_arg, "--concurrency", "4"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let remaining = planned - killed.len();
    assert!(stderr.contains(&format!("{}/{planned} episodes finished; playing {remaining} ", killed.len())), "{stderr}");
    assert!(stderr.contains(&format!("played {remaining} episodes in this session")), "{stderr}");
    assert!(stdout.contains("480 episodes, pass^2") && stdout.contains("== agent reference-no-retry"), "{stdout}");

    let store = Store::open_existing(&db).unwrap();
    let summary = store.summary(&id).unwrap();
    assert_eq!((summary.finished(), summary.status(), summary.sessions), (480, "complete", 2));
    let after = store.episodes(&id).unwrap();
    let indices: Vec<usize> = after.iter().map(|e| e.plan_index).collect();
    assert_eq!(indices, (0..planned).collect::<Vec<_>>(), "every planned episode stored exactly once");
    for before in &killed {
        let now = &after[before.plan_index];
        assert_eq!(now.session, 1, "episode {} was played again", before.plan_index);
        let bytes = |e: &toolenv_store::StoredEpisode| e.trajectory.as_ref().map(|t| t.encode_to_vec());
        assert_eq!(bytes(now), bytes(before), "episode {}'s trajectory changed", before.plan_index);
        assert_eq!(now.result, before.result);
    }
    assert_eq!(after.iter().filter(|e| e.session == 2).count(), remaining);

    // The report's JSON summary adds up.
    let out = toolenv(&["report", id.as_str(), "--json", "--store", db_arg]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("report --json prints JSON");
    let counts = &json["report"]["counts"];
    let count = |name: &str| counts[name].as_u64().unwrap();
    assert_eq!((count("planned"), count("recorded"), count("not_recorded")), (480, 480, 0));
    assert_eq!(count("passed") + count("failed") + count("infra_errors"), 480);
    let agents = json["report"]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    let episodes = |rows: &serde_json::Value| rows.as_array().unwrap().iter().map(|r| r["episodes"].as_u64().unwrap()).sum::<u64>();
    assert_eq!(agents.iter().map(|a| a["overall"]["episodes"].as_u64().unwrap()).sum::<u64>(), 480);
    for agent in agents {
        let total = agent["overall"]["episodes"].as_u64().unwrap();
        for by in ["by_epsilon", "by_lambda", "by_domain", "by_fault_profile"] {
            assert_eq!(episodes(&agent[by]), total, "{by}");
        }
        assert_eq!(agent["surface"]["points"].as_array().unwrap().len(), 2 * 3 * 2, "k ∈ {{1, 2}} × 3 ε × 2 λ");
    }
    assert_eq!(json["run"]["id"], id.as_str());

    // Export: one parsable line per episode, in plan order.
    let out = toolenv(&["export", id.as_str(), "--store", db_arg]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.iter().map(|l| l["plan_index"].as_u64().unwrap() as usize).collect::<Vec<_>>(), indices);
    assert!(lines.iter().all(|l| l["trajectory"]["verdict"]["passed"].as_bool() == Some(l["result"]["outcome"] == "passed")));
}

#[test]
fn stored_runs_are_listed_and_unknown_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_arg = db.to_str().unwrap();
    let out = toolenv(&["runs", "--store", db_arg]);
    assert_eq!(out.status.code(), Some(2), "no store yet");
    assert!(String::from_utf8_lossy(&out.stderr).contains("runs.db"));
    let out = toolenv(&["run", "--domain", "travel", "--store", db_arg]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("run run-0001: 5 episodes; resume with `toolenv run --resume run-0001 --store"));
    let out = toolenv(&["run", "--domain", "travel", "--no-store", "--store", db_arg]);
    assert!(out.status.success());
    let out = toolenv(&["runs", "--store", db_arg]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 2, "a header and one run (--no-store stores nothing): {stdout}");
    assert!(stdout.contains("run-0001") && stdout.contains("complete") && stdout.contains("5/5"), "{stdout}");
    for command in [&["report", "run-0009"][..], &["export", "run-0009"], &["run", "--resume", "run-0009"]] {
        let out = toolenv(&[command, &["--store", db_arg]].concat());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(stderr.contains("no run 'run-0009' in the store at") && stderr.contains("runs.db"), "{command:?}: {stderr}");
    }
    let out = toolenv(&["run", "--resume", "run-0001", "--grid", "paper", "--store", db_arg]);
    assert_eq!(out.status.code(), Some(2), "a resumed run keeps its plan");
}

#[test]
fn bad_grid_values_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_arg = db.to_str().unwrap();
    for (args, flag, message) in [
        (
            &["run", "--epsilon", "0,0.5", "--store", db_arg][..],
            "--epsilon",
            "epsilon 0.5 is not a perturbation level: use 0, 0.1, 0.2 or 0.3",
        ),
        (&["run", "--time-scale=5000", "--store", db_arg], "--time-scale", "time scale 5000 is not within [0, 1000]"),
        (&["run", "--grid", "paper", "--time-scale=-1", "--store", db_arg], "--time-scale", "time scale -1 is not within [0, 1000]"),
        (&["run", "--faults", "0.2,0.7", "--store", db_arg], "--faults", "unknown fault profile '0.7'"),
        (&["run", "--concurrency", "0", "--store", db_arg], "--concurrency", "0 episodes at once would play nothing; give at least 1"),
        (&["play", "travel/cheapest-flight/001", "--epsilon", "0.25"], "--epsilon", "epsilon 0.25 is not a perturbation level"),
        (&["play", "travel/cheapest-flight/001", "--time-scale", "1000.5"], "--time-scale", "time scale 1000.5 is not within"),
        (
            &["serve", "--time-scale", "2000", "--addr", "127.0.0.1:0", "--store", db_arg],
            "--time-scale",
            "time scale 2000 is not within [0, 1000]",
        ),
    ] {
        let out = toolenv(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&format!("error: invalid {flag}: {message}")), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed {}", String::from_utf8_lossy(&out.stdout));
    }
    assert!(!db.exists(), "a refused run stores nothing");
}

#[test]
fn a_single_configuration_is_a_grid_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let db_arg = db.to_str().unwrap();
    // Tables: a verdict per task, in plan order, then the pass count.
    let out = toolenv(&["run", "--domain", "travel", "--agent", "brittle", "--epsilon", "0.2", "--store", db_arg]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["TASK", "LEVEL", "RESULT", "CALLS", "FAULTS", "FAILED", "CHECKS"]);
    let tasks: Vec<&str> = lines[1..6].iter().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(
        tasks,
        [
            "travel/cheapest-flight/001",
            "travel/direct-booking/002",
            "travel/cheapest-flight/003",
            "travel/cancel-trip/004",
            "travel/change-hold/005"
        ]
    );
    assert!(lines[1..6].iter().all(|l| l.contains(" FAIL ")), "{stdout}");
    assert_eq!(lines[7], "0/5 passed (brittle agent, seed 0, trial 0); ceiling 5/5 (no episode infeasible)");
    // Resumed when complete, the run prints the same table from the store.
    let resumed = toolenv(&["run", "--resume", "run-0001", "--store", db_arg]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(String::from_utf8_lossy(&resumed.stdout), stdout);

    // JSON: one object per episode, with the fields a single configuration
    // always printed and the result fields a grid prints.
    let json_lines = |args: &[&str]| -> Vec<serde_json::Value> {
        let out = toolenv(args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let single = json_lines(&["run", "--domain", "travel", "--seed", "3", "--json", "--no-store"]);
    assert_eq!(single.len(), 5);
    for line in &single {
        assert!(line["task_id"].as_str().unwrap().starts_with("travel/"));
        assert_eq!((line["agent"].as_str(), line["seed"].as_u64(), line["trial"].as_u64()), (Some("reference"), Some(3), Some(0)));
        assert_eq!((line["passed"].as_bool(), line["outcome"].as_str()), (Some(true), Some("passed")));
        assert!(line["calls"].as_u64().unwrap() > 0);
        assert_eq!(line["final_state_hash"].as_str().map(str::len), Some(64), "{line}");
        assert_eq!((line["epsilon"].as_f64(), line["fault_profile"].as_str()), (Some(0.0), Some("none")));
    }
    let grid = json_lines(&["run", "--domain", "travel", "--trials", "2", "--json", "--no-store"]);
    assert_eq!(grid.len(), 10);
    let keys = |line: &serde_json::Value| line.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert!(grid.iter().chain(&single).all(|line| keys(line) == keys(&single[0])), "one shape for every run");
    let hashes = |lines: &[serde_json::Value]| lines.iter().map(|l| l["final_state_hash"].clone()).collect::<Vec<_>>();
    assert_eq!(hashes(&single), hashes(&grid.iter().step_by(2).cloned().collect::<Vec<_>>()), "same episodes, same end states");
}

#[test]
fn a_single_configuration_marks_infeasible_episodes_and_prints_the_ceiling() {
    let args = ["run", "--faults", "0.3", "--agent", "solver", "--seed", "3", "--no-store"];
    let out = toolenv(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let marked: Vec<&str> =
        stdout.lines().filter(|l| l.contains(" FAIL (infeasible) ")).map(|l| l.split_whitespace().next().unwrap()).collect();
    // The same episodes as --json calls infeasible, and the ceiling counts them.
    let json = toolenv(&[&args[..], &["--json"]].concat());
    let infeasible: Vec<String> = String::from_utf8_lossy(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["feasible"] == false)
        .map(|l| l["task_id"].as_str().unwrap().to_owned())
        .collect();
    assert!(!marked.is_empty() && marked == infeasible, "{marked:?} vs {infeasible:?}\n{stdout}");
    let passed = stdout.lines().filter(|l| l.split_whitespace().nth(2) == Some("pass")).count();
    let tasks = toolenv_domains::suite().len();
    let summary = format!(
        "{passed}/{tasks} passed (solver agent, seed 3, trial 0); ceiling {}/{tasks} ({} episodes infeasible: no agent could pass them)",
        tasks - marked.len(),
        marked.len()
    );
    assert!(stdout.lines().any(|l| l == summary), "{summary}\n{stdout}");
}

#[test]
fn compare_tells_which_differences_are_significant() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("compare.db");
    let store = store.to_str().unwrap();
    let run = |agent: &str, faults: &str| {
        let out = toolenv(&["run", "--agent", agent, "--faults", faults, "--trials", "2", "--seeds", "3", "--store", store]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    // Two real runs into one store: retries against none, at λ 0 and 0.2,
    // three perturbation seeds per task (20 tasks alone are too few: 5
    // discordant tasks give p = 0.0625).
    run("reference", "0.0,0.2");
    run("reference-no-retry", "0.0,0.2");
    let out = toolenv(&["compare", "run-0001", "run-0002", "--store", store]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // Units: every task × 3 seeds × 2 fault profiles.
    let (tasks, units) = (toolenv_domains::suite().len(), toolenv_domains::suite().len() * 6);
    assert!(
        stdout.starts_with(&format!(
            "A = run-0001 reference  vs  B = run-0002 reference-no-retry\n{units} shared units (task × seed × ε × fault profile) of {tasks} tasks"
        )),
        "{stdout}"
    );
    let overall = format!("overall                  pass^2{tasks:>7}{units:>7}  100.0%");
    for expected in [overall.as_str(), "by cell (ε, fault profile):", "ε 0, faults 0.2", "by domain:", "travel"] {
        assert!(stdout.contains(expected), "{expected}:\n{stdout}");
    }
    assert!(stdout.contains("significant after adjustment: overall pass^1"), "{stdout}");
    let significant = |line: &str| line.contains(" * ");
    let cell = |name: &str| stdout.lines().filter(|l| l.trim_start().starts_with(name)).collect::<Vec<_>>();
    assert_eq!(cell("ε 0, faults 0.2").len(), 2, "{stdout}");
    assert!(cell("ε 0, faults 0.2").iter().all(|l| significant(l)), "{stdout}");
    assert!(cell("ε 0, faults 0.0").iter().all(|l| !significant(l) && l.contains("no difference")), "{stdout}");

    let out = toolenv(&["compare", "run-0001", "run-0002", "--json", "--store", store]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints json");
    assert_eq!(
        (json["a"]["agent"].as_str(), json["b"]["run"].as_str(), json["k"].as_u64()),
        (Some("reference"), Some("run-0002"), Some(2))
    );
    let overall = &json["overall"][1];
    assert_eq!(
        (overall["k"].as_u64(), overall["test"].as_str(), overall["b_better"].as_u64()),
        (Some(2), Some("sign_flip_exact"), Some(0))
    );
    assert!(overall["significant"].as_bool().unwrap() && overall["p_holm"].as_f64().unwrap() < 0.05, "{overall}");
    // Every row's Holm p is at least its raw p.
    for row in json["by_cell"].as_array().unwrap().iter().chain(json["by_domain"].as_array().unwrap()) {
        assert!(row["p_holm"].as_f64() >= row["p_value"].as_f64(), "{row}");
    }

    // The report shows each figure's minimum detectable difference.
    let out = toolenv(&["report", "run-0002", "--store", store]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("MDE: the smallest difference") && stdout.contains("MDE ^1/^2"), "{stdout}");
    let out = toolenv(&["report", "run-0002", "--json", "--store", store]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints json");
    let mde = json["report"]["agents"][0]["overall"]["pass_k"]["mde"].as_f64().unwrap();
    assert!(mde > 0.0 && mde < 0.5, "{mde}");

    // Refusals: another grid, a run with no second agent to compare.
    run("reference", "0.3");
    let out = toolenv(&["compare", "run-0001", "run-0003", "--store", store]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("differ in grid: cells only in A: ε 0, faults 0.0; ε 0, faults 0.2; only in B: ε 0, faults 0.3"), "{stderr}");
    let out = toolenv(&["compare", "run-0001", "run-0001", "--store", store]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("compare run-0001 run-0001: a run compared with itself differs in nothing"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = toolenv(&["compare", "run-0001", "--store", store]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs two labels: --agents A,B"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = toolenv(&["compare", "run-0001", "run-0002", "--agents", "reference,brittle", "--store", store]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("run-0002 has no episodes of agent 'brittle'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every printing command, its stdout read for a few bytes and then closed:
/// quiet, exit status 0 (`toolenv … | head`).
#[test]
fn a_reader_that_closes_stdout_early_is_not_an_error() {
    use std::io::Read as _;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = dir.path().join("toolenv.db");
    let store = store.to_str().unwrap();
    let out = toolenv(&["run", "--store", store, "--agent", "reference", "--domain", "scheduling"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let commands: [&[&str]; 8] = [
        &["tasks"],
        &["tasks", "show", "travel/cheapest-flight/001"],
        &["play", "travel/cheapest-flight/001"],
        &["play", "travel/cheapest-flight/001", "--json"],
        &["run", "--no-store", "--agent", "random"],
        &["runs", "--store", store],
        &["report", "run-0001", "--store", store],
        &["export", "run-0001", "--store", store],
    ];
    for args in commands {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolenv"))
            .args(args)
            .env_remove("TOOLENV_URL")
            .env("TOOLENV_STORE", dir.path().join("other.db"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolenv starts");
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 8];
        stdout.read_exact(&mut first).expect("the command prints something");
        drop(stdout);
        let out = child.wait_with_output().expect("toolenv ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?}\n{stderr}", out.status);
        assert!(!stderr.contains("panicked") && !stderr.contains("error"), "{args:?}: {stderr}");
    }
}

/// The repository's example task files.
fn examples() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks")
}

#[test]
fn task_files_are_listed_checked_played_and_exported_and_bad_ones_named_in_one_line() {
    let examples = examples();
    let dir = examples.to_str().unwrap();
    let out = toolenv(&["tasks", "--tasks", dir]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.lines().filter(|l| l.contains("acme-0")).count(), 5, "{stdout}");
    let out = toolenv(&["selfcheck", "--suite", &format!("file:{dir}/travel.json")]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("every oracle passes"));
    let out = toolenv(&["play", "scheduling/cancel/acme-002", "--tasks", dir, "--agent", "solver"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("verdict: PASS"), "{}", String::from_utf8_lossy(&out.stderr));
    // A stored run of the file's tasks is attributed given the file, and says why not without it.
    let store = tempfile::tempdir().unwrap();
    let db = store.path().join("runs.db");
    let db = db.to_str().unwrap();
    let out = toolenv(&["run", "--tasks", dir, "--agent", "idle", "--store", db]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("0/5 passed"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = toolenv(&["attribute", "run-0001", "--store", db, "--tasks", dir, "--json"]);
    let attributed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(attributed.lines().count(), 5, "{attributed}{}", String::from_utf8_lossy(&out.stderr));
    let out = toolenv(&["attribute", "run-0001", "--store", db, "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.stdout.is_empty() && stderr.lines().filter(|l| l.contains("not attributed") && l.contains("acme-0")).count() == 5,
        "{stderr}"
    );
    // So is the report's attribution table.
    let report =
        |tasks: &[&str]| String::from_utf8_lossy(&toolenv(&[&["report", "run-0001", "--store", db], tasks].concat()).stdout).into_owned();
    let (with, without) = (report(&["--tasks", dir]), report(&[]));
    assert!(with.contains("5 failed episodes: 5 the agent's") && !with.contains("not attributed"), "{with}");
    assert!(without.contains("no failed episode attributed") && without.contains("5 failed episodes not attributed"), "{without}");
    assert!(without.contains("need --tasks FILE|DIR"), "{without}");
    // The paper suite written out reads back as the checked-in file.
    let out = toolenv(&["tasks", "export", "--suite", "paper"]);
    let exported: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checked_in: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(examples.join("paper/paper.json")).unwrap()).unwrap();
    assert_eq!(exported, checked_in);
    // Bad files: one line naming the file and the place, exit code 2, no panic.
    let scratch = tempfile::tempdir().unwrap();
    let cases = [
        ("malformed.json", "{\"version\": 1, \"tasks\": [".to_owned(), "malformed.json:1:"),
        (
            "domain.json",
            std::fs::read_to_string(examples.join("travel.json")).unwrap().replace("\"domain\": \"travel\"", "\"domain\": \"trains\""),
            "at /tasks/0/domain: no domain 'trains'",
        ),
        ("paper.json", std::fs::read_to_string(examples.join("paper/paper.json")).unwrap(), "the id is a built-in task's"),
    ];
    for (name, text, message) in cases {
        let path = scratch.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = toolenv(&["tasks", "--tasks", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(message) && !stderr.contains("panicked"), "{stderr}");
    }
}
