//! `toolenv chaos` over real stdio pipes, in front of `toolenv mcp` as the
//! upstream MCP server: determinism, pass-through, the faults' rates and
//! manifestations, and the ledger `toolenv report --chaos-ledger` reads.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const TASK: &str = "travel/cheapest-flight/001";

/// The calls of a session: searches with holds in between, so that search
/// results change (seats left) and a stale one can differ from the current.
fn script(n: usize) -> Vec<(&'static str, Value)> {
    (0..n)
        .map(|i| match i % 3 {
            0 | 1 => ("search_flights", json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"})),
            _ => ("hold_flight", json!({"flight_id": "AA-500"})),
        })
        .collect()
}

/// What a session through the proxy gave: every stdout line, the reply
/// line to each tool call in order, and the ledger.
struct Session {
    stdout: Vec<String>,
    replies: Vec<String>,
    ledger: String,
}

/// Runs `toolenv chaos ARGS -- UPSTREAM` (or the upstream alone when
/// `direct`), plays initialize, tools/list and the calls one by one, and
/// closes stdin.
fn session(args: &[&str], calls: &[(&str, Value)], direct: bool) -> Session {
    session_with(&[env!("CARGO_BIN_EXE_toolenv"), "mcp", TASK], args, calls, direct)
}

/// [`session`] in front of any upstream MCP server command.
fn session_with(upstream: &[&str], args: &[&str], calls: &[(&str, Value)], direct: bool) -> Session {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ledger = dir.path().join("ledger.jsonl");
    let toolenv = env!("CARGO_BIN_EXE_toolenv");
    let mut command = Command::new(if direct { upstream[0] } else { toolenv });
    if !direct {
        command.args(["chaos", "--time-scale", "0", "--ledger"]).arg(&ledger).args(args).args(["--", upstream[0]]);
    }
    command.args(&upstream[1..]);
    let mut child = command
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // A file, not a pipe nobody reads before the end: logs cannot stall the session.
        .stderr(std::fs::File::create(dir.path().join("stderr")).expect("a stderr file"))
        .spawn()
        .expect("toolenv chaos starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut stdout = Vec::new();
    let mut ask = |message: Value| -> String {
        writeln!(stdin, "{message}").expect("the proxy reads");
        if message.get("id").is_none() {
            return String::new();
        }
        loop {
            let line = lines.next().expect("a reply").expect("a line");
            stdout.push(line.clone());
            let reply: Value = serde_json::from_str(&line).expect("a JSON-RPC message");
            if reply.get("id") == message.get("id") && reply.get("method").is_none() {
                return line;
            }
        }
    };
    ask(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}));
    ask(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    ask(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let replies = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, arguments))| {
            ask(json!({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}))
        })
        .collect();
    drop(stdin);
    let status = child.wait().expect("the proxy ends when stdin closes");
    let stderr = std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default();
    assert!(status.success(), "{status}: {stderr}");
    let ledger = if direct { String::new() } else { std::fs::read_to_string(&ledger).expect("the ledger is written") };
    Session { stdout, replies, ledger }
}

fn ledger(session: &Session) -> Vec<Value> {
    session.ledger.lines().map(|l| serde_json::from_str(l).expect("a ledger line")).collect()
}

fn result(reply: &str) -> Value {
    serde_json::from_str::<Value>(reply).expect("a reply")["result"].clone()
}

/// A fault profiles file with one profile, `only`, of one fault kind at `rate`.
fn profile_file(dir: &tempfile::TempDir, kind: &str, rate: f64) -> String {
    let path = dir.path().join("profiles.json");
    std::fs::write(&path, json!({"only": {"failure_rate": rate, "fault_weights": {kind: 1.0}}}).to_string()).expect("written");
    path.display().to_string()
}

#[test]
fn the_same_seed_gives_the_same_replies_and_ledger_byte_for_byte() {
    let calls = script(24);
    let first = session(&["--seed", "7", "--faults", "0.3"], &calls, false);
    let second = session(&["--seed", "7", "--faults", "0.3"], &calls, false);
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(first.ledger, second.ledger);
    let other = session(&["--seed", "8", "--faults", "0.3"], &calls, false);
    assert_ne!(first.ledger, other.ledger, "another seed draws other faults");
    // The ledger has a line per call, and each line's reply is what the client got.
    let lines = ledger(&first);
    assert_eq!(lines.len(), calls.len());
    for (line, reply) in lines.iter().zip(&first.replies) {
        assert_eq!(line["reply"].as_str(), Some(reply.as_str()));
    }
    assert!(lines.iter().any(|l| !l["fault"].is_null()), "λ = 0.3 meets some fault in 24 calls: {}", first.ledger);
}

#[test]
fn no_faults_pass_everything_through_byte_for_byte() {
    let calls = script(9);
    let proxied = session(&["--seed", "3", "--faults", "0.0"], &calls, false);
    let direct = session(&[], &calls, true);
    assert_eq!(proxied.stdout, direct.stdout);
    assert!(ledger(&proxied).iter().all(|l| l["fault"].is_null() && l["forwarded"] == true));
}

#[test]
fn faults_come_at_the_profiles_rate_and_manifest_as_mcp_errors() {
    let calls = script(120);
    let run = session(&["--seed", "11", "--faults", "timeout-only"], &calls, false);
    let lines = ledger(&run);
    let injected = lines.iter().filter(|l| l["fault"]["kind"] == "TransientTimeout").count();
    // 17.5 % of 120 is 21; a binomial's 99.99 % interval is well inside 5..45.
    assert!((5..=45).contains(&injected), "{injected} timeouts in 120 calls");
    for (line, reply) in lines.iter().zip(&run.replies) {
        let reply: Value = serde_json::from_str(reply).expect("a reply");
        if line["fault"].is_null() {
            assert!(reply.get("result").is_some(), "{reply}");
        } else {
            assert_eq!(reply["error"]["code"], -32001, "a timeout is a JSON-RPC request timeout: {reply}");
            assert_eq!(reply["error"]["data"]["error"]["code"], "DEADLINE_EXCEEDED");
            assert_eq!(line["forwarded"], false, "the tool did not run");
            assert_eq!(line["delay_ms"], 5000);
        }
    }
    // A rate limit is a tool error with retry advice, and so is every retry inside its window.
    let run = session(&["--seed", "2", "--faults", "rate-limit-only"], &script(30), false);
    let limited: Vec<(Value, &String)> = ledger_pairs(&run).into_iter().filter(|(l, _)| !l["fault"].is_null()).collect();
    assert!(!limited.is_empty());
    for (line, reply) in limited {
        let result = result(reply);
        assert_eq!(result["isError"], true, "{reply}");
        assert_eq!(result["structuredContent"]["error"]["reason"], "RATE_LIMIT_EXCEEDED");
        assert!(result["structuredContent"]["error"]["retry_after_virtual_ms"].as_i64().is_some_and(|ms| ms > 0));
        assert_eq!(line["outcome"], "failure");
    }
}

fn ledger_pairs(session: &Session) -> Vec<(Value, &String)> {
    ledger(session).into_iter().zip(&session.replies).collect()
}

#[test]
fn a_stale_result_is_an_earlier_result_of_the_same_call() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let profiles = profile_file(&dir, "StaleData", 0.5);
    let calls = script(30);
    let stale = session(&["--seed", "5", "--fault-profiles", &profiles, "--faults", "only"], &calls, false);
    // Every call reaches the upstream server alike, so a run without faults has the true results.
    let truth = session(&["--seed", "5", "--faults", "0.0"], &calls, false);
    let lines = ledger(&stale);
    let mut seen = 0;
    for (i, line) in lines.iter().enumerate() {
        if line["fault"]["kind"] != "StaleData" {
            continue;
        }
        seen += 1;
        let got = result(&stale.replies[i]);
        assert_ne!(got, result(&truth.replies[i]), "a stale result differs from the current one");
        let earlier = (0..i).any(|j| calls[j] == calls[i] && result(&truth.replies[j]) == got);
        assert!(earlier, "call {i}: {got} is no earlier result of the same call");
    }
    assert!(seen > 0, "some stale result took effect: {}", stale.ledger);
    assert!(lines.iter().any(|l| l["drawn_without_effect"] == "StaleData"), "a first call has nothing older to give");
}

/// A JSON value's leaves (strings and numbers as text), dates excepted, sorted.
fn leaves(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
        Value::String(s) if s.contains("2026") => {}
        other => out.push(other.to_string()),
    }
}

fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            keys(v, out);
        }),
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

#[test]
fn schema_drift_changes_keys_and_dates_but_keeps_values() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let profiles = profile_file(&dir, "SchemaDrift", 0.3);
    let calls = script(12);
    let drifted = session(&["--seed", "1", "--fault-profiles", &profiles, "--faults", "only"], &calls, false);
    let truth = session(&["--seed", "1", "--faults", "0.0"], &calls, false);
    let lines = ledger(&drifted);
    let first = lines.iter().position(|l| l["fault"]["kind"] == "SchemaDrift").expect("a drift takes effect");
    let text = |reply: &str| -> Value {
        let result = result(reply);
        serde_json::from_str(result["content"][0]["text"].as_str().expect("a text")).expect("JSON text")
    };
    let mut compared = 0;
    for (i, call) in calls.iter().enumerate() {
        let (got, want) = (text(&drifted.replies[i]), text(&truth.replies[i]));
        if i < first || result(&truth.replies[i])["isError"] == true {
            assert_eq!(drifted.replies[i], truth.replies[i], "before the drift, and on the tool's own errors, nothing changes");
            continue;
        }
        let (mut got_leaves, mut want_leaves) = (Vec::new(), Vec::new());
        leaves(&got, &mut got_leaves);
        leaves(&want, &mut want_leaves);
        got_leaves.sort();
        want_leaves.sort();
        assert_eq!(got_leaves, want_leaves, "call {i} keeps its values");
        let (mut got_keys, mut want_keys) = (Vec::new(), Vec::new());
        keys(&got, &mut got_keys);
        keys(&want, &mut want_keys);
        assert_ne!(got_keys, want_keys, "call {i} has other keys: {got}");
        if call.0 == "search_flights" {
            assert_eq!(got["data"]["flights"][0]["date"], "01/05/2026", "{got}");
            compared += 1;
        }
    }
    assert!(compared > 0);
}

#[test]
fn the_report_reads_ledgers_and_its_kinds_sum_to_its_totals() {
    let calls = script(40);
    let run = session(&["--seed", "9", "--faults", "0.3"], &calls, false);
    let other = session(&["--seed", "9", "--session", "b", "--faults", "0.3"], &calls, false);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    std::fs::write(&a, &run.ledger).expect("written");
    std::fs::write(&b, &other.ledger).expect("written");
    let report = |json: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolenv"));
        command.arg("report").arg("--chaos-ledger").arg(&a).arg(&b);
        if json {
            command.arg("--json");
        }
        let output = command.env_remove("TOOLENV_URL").output().expect("report runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).expect("UTF-8")
    };
    let summary: Value = serde_json::from_str(&report(true)).expect("JSON");
    assert_eq!(summary["sessions"], 2);
    assert_eq!(summary["calls"], 80);
    let kinds = summary["kinds"].as_object().expect("kinds");
    assert!(!kinds.is_empty(), "{summary}");
    let sum = |field: &str| kinds.values().map(|k| k[field].as_u64().expect("a count")).sum::<u64>();
    for field in ["injected", "encountered", "recovered", "extra_calls", "retried"] {
        assert_eq!(summary[field].as_u64(), Some(sum(field)), "{field}: {summary}");
    }
    // The counts are the ledger's: injected are the calls with a newly drawn fault.
    let new: usize = [&run, &other].iter().map(|s| ledger(s).iter().filter(|l| l["fault"]["new"] == true).count()).sum();
    assert_eq!(summary["injected"].as_u64(), Some(new as u64));
    assert_eq!(summary["calls_met"].as_u64(), Some(sum("hits")));
    for kind in kinds.values() {
        assert!(kind["recovered"].as_u64() <= kind["encountered"].as_u64());
        assert!(kind["encountered"].as_u64() <= kind["hits"].as_u64());
    }
    let text = report(false);
    assert!(text.contains("2 sessions, 80 tool calls"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("total")), "{text}");
    let counts: BTreeMap<String, u64> = kinds.iter().map(|(k, v)| (k.clone(), v["hits"].as_u64().unwrap_or(0))).collect();
    for (kind, hits) in counts {
        assert!(text.lines().any(|l| l.starts_with(&kind) && l.split_whitespace().nth(1) == Some(&hits.to_string())), "{kind}: {text}");
    }
}

/// `toolenv chaos ARGS` with `stdin` as the client's input; its exit
/// status, stdout lines and stderr.
fn chaos_with(args: &[&str], stdin: &str) -> (std::process::ExitStatus, Vec<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .arg("chaos")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolenv chaos starts");
    // Written whole, then closed: the upstream sees the end of its input.
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("the proxy reads");
    drop(input);
    let out = child.wait_with_output().expect("the proxy ends");
    let stdout = String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect();
    (out.status, stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn bad_requests_and_a_silent_upstream_get_one_answer_each() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.jsonl");
    let lines = [
        "not json".to_owned(),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": 5}).to_string(),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "again"}}).to_string(),
        json!({"jsonrpc": "2.0", "id": "eight", "method": "tools/call"}).to_string(),
    ];
    // An upstream that reads everything and answers nothing, then exits when its input ends.
    let args =
        ["--seed", "1", "--faults", "0.0", "--time-scale", "0", "--ledger", ledger.to_str().unwrap(), "--", "sh", "-c", "cat > /dev/null"];
    let (status, stdout, stderr) = chaos_with(&args, &(lines.join("\n") + "\n"));
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let replies: Vec<Value> = stdout.iter().map(|l| serde_json::from_str(l).expect("JSON-RPC")).collect();
    let answered: Vec<(Value, i64)> = replies.iter().map(|r| (r["id"].clone(), r["error"]["code"].as_i64().unwrap())).collect();
    // The duplicate id is refused at once; the two calls in flight are
    // answered as unavailable when the upstream ends, in call order.
    assert_eq!(answered, [(json!(7), -32600), (json!(7), -32000), (json!("eight"), -32000)], "{stdout:?}");
    let ledger: Vec<Value> = std::fs::read_to_string(&ledger).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let calls: Vec<(u64, &str)> = ledger.iter().map(|c| (c["index"].as_u64().unwrap(), c["outcome"].as_str().unwrap())).collect();
    assert_eq!(calls, [(0, "invalid"), (1, "invalid")], "the refused duplicate is no call of the session");
}

#[test]
fn bad_arguments_are_refused_with_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let missing_dir = dir.path().join("no-such-dir").join("ledger.jsonl");
    let missing_dir = missing_dir.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["--seed", "1", "--faults", "0.2", "--", "/no/such/server"], "cannot start the upstream server `/no/such/server`"),
        (&["--seed", "1", "--faults", "0.2", "--ledger", missing_dir, "--", "cat"], "cannot write the ledger"),
        (&["--seed", "1", "--faults", "0.7", "--", "cat"], "unknown fault profile '0.7'"),
        (&["--seed", "1", "--faults", "0.2", "--time-scale=-1", "--", "cat"], "time scale -1 is not within [0, 1000]"),
        (&["--seed", "1", "--faults", "0.2", "--only", "Gremlins", "--", "cat"], "unknown fault type 'Gremlins'"),
    ];
    for (args, expected) in cases {
        let (status, stdout, stderr) = chaos_with(args, "");
        assert!(!status.success() && stdout.is_empty(), "{args:?}: {status} {stdout:?}");
        assert!(stderr.contains(expected) && !stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let (_, _, stderr) = chaos_with(&["--seed", "1", "--faults", "0.2", "--ledger", missing_dir, "--", "cat"], "");
    assert!(stderr.contains(missing_dir), "the ledger's path is named: {stderr}");
}

#[test]
fn verdicts_make_the_ledgers_a_run_with_pass_k_by_fault_profile() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let calls = script(6);
    // Two tasks × two trials at λ 0 and 0.3: a session each, named after them.
    let passes = [("0.0", "a", [true, true]), ("0.0", "b", [true, false]), ("0.3", "a", [true, false]), ("0.3", "b", [false, false])];
    let (mut ledgers, mut verdicts) = (Vec::new(), String::new());
    for (profile, task, passed) in passes {
        for (trial, passed) in passed.into_iter().enumerate() {
            let name = format!("{profile}-{task}-{trial}");
            let played = session(&["--seed", "4", "--session", &name, "--faults", profile], &calls, false);
            let file = dir.path().join(format!("{name}.jsonl"));
            std::fs::write(&file, &played.ledger).expect("written");
            ledgers.push(file);
            verdicts.push_str(&format!("{}\n", json!({"session": name, "passed": passed, "task": task, "agent": "mine"})));
        }
    }
    let verdicts_file = dir.path().join("verdicts.jsonl");
    std::fs::write(&verdicts_file, &verdicts).expect("written");
    let report = |extra: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_toolenv"))
            .arg("report")
            .arg("--chaos-ledger")
            .args(&ledgers)
            .arg("--verdicts")
            .arg(&verdicts_file)
            .args(extra)
            .env_remove("TOOLENV_URL")
            .output()
            .expect("report runs");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (ok, stdout, stderr) = report(&["--json"]);
    assert!(ok, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!((json["sessions"].as_u64(), json["report"]["k"].as_u64()), (Some(8), Some(2)), "k: the trials of each task");
    let agent = &json["report"]["agents"][0];
    assert_eq!(agent["agent"], "mine");
    // By hand: at λ 0, task a passed both trials and b one of two; at 0.3, a one, b none.
    let fraction = |v: &Value| format!("{}/{}", v["num"], v["den"]);
    let by_lambda: Vec<(String, String, String)> = agent["by_lambda"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["label"].as_str().unwrap().to_owned(), fraction(&row["pass_1"]["value"]), fraction(&row["pass_k"]["value"])))
        .collect();
    let expected = [("0", "3/4", "1/2"), ("0.3", "1/4", "0/1")].map(|(l, p1, pk)| (l.to_owned(), p1.to_owned(), pk.to_owned()));
    assert_eq!(by_lambda, expected);
    // The run's fault ledger is the ledgers' own.
    for field in ["injected", "encountered", "recovered", "extra_calls"] {
        assert_eq!(agent["recovery"][field], json[field], "{field}");
    }
    let (ok, text, stderr) = report(&[]);
    assert!(ok, "{stderr}");
    assert!(text.contains("== agent mine (8 episodes): pass^2 25.0%"), "{text}");
    // The page shows the same figures, each where its pointer says.
    let page = dir.path().join("report.html");
    let (ok, _, stderr) = report(&["--html", page.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let html = std::fs::read_to_string(&page).expect("the page is written");
    assert!(html.contains("pass^2") && html.contains("25.0%") && html.contains("data-ptr"), "{}", &html[..html.len().min(500)]);

    // A verdict for a session no ledger has, or a second one, is refused with where.
    for (bad, expected) in [
        (json!({"session": "elsewhere", "passed": true}).to_string(), "session 'elsewhere' is in no ledger given"),
        (json!({"session": "0.0-a-0", "passed": true}).to_string(), "session '0.0-a-0' has a second verdict"),
        (json!({"session": "0.0-a-1", "passed": "yes"}).to_string(), "verdicts.jsonl:9"),
    ] {
        std::fs::write(&verdicts_file, format!("{verdicts}{bad}\n")).expect("written");
        let (ok, _, stderr) = report(&[]);
        assert!(!ok && stderr.contains(expected), "{expected}: {stderr}");
    }
}

/// An MCP client standing for someone's agent: starts the server command it
/// is given (TOOLENV_MCP_COMMAND_JSON), searches three times, and exits.
const AGENT: &str = r#"
import json, os, subprocess
server = subprocess.Popen(json.loads(os.environ["TOOLENV_MCP_COMMAND_JSON"]), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def ask(message):
    server.stdin.write(json.dumps(message) + "\n"); server.stdin.flush()
    if "id" in message:
        while True:
            reply = json.loads(server.stdout.readline())
            if reply.get("id") == message["id"] and "method" not in reply:
                return reply
ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1"}}})
ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
for i in range(3):
    ask({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "search_flights", "arguments": {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}}})
server.stdin.close(); server.wait()
"#;

#[test]
fn chaos_run_plays_an_agent_k_times_per_profile_and_reports_pass_k() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let agent = dir.path().join("agent.py");
    std::fs::write(&agent, AGENT).expect("written");
    let out = dir.path().join("out");
    let toolenv = env!("CARGO_BIN_EXE_toolenv");
    let output = Command::new(toolenv)
        .args(["chaos-run", "--faults", "0.0,0.3", "--trials", "2", "--seed", "5", "--time-scale", "0", "--json"])
        .arg("--agent")
        .arg(format!("python3 {}", agent.display()))
        // The checker fails every second trial.
        .args(["--check", r#"test "$TOOLENV_TRIAL" != 1"#, "--out"])
        .arg(&out)
        .args(["--", toolenv, "mcp", TASK])
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .output()
        .expect("chaos-run runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stderr.lines().filter(|l| l.ends_with(": passed")).count(), 2, "{stderr}");
    let json: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!((json["sessions"].as_u64(), json["calls"].as_u64(), json["report"]["k"].as_u64()), (Some(4), Some(12), Some(2)), "{json}");
    let by_lambda: Vec<String> = json["report"]["agents"][0]["by_lambda"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            format!(
                "{} {}/{} {}/{}",
                row["label"],
                row["pass_1"]["value"]["num"],
                row["pass_1"]["value"]["den"],
                row["pass_k"]["value"]["num"],
                row["pass_k"]["value"]["den"]
            )
        })
        .collect();
    assert_eq!(by_lambda, [r#""0" 1/2 0/1"#, r#""0.3" 1/2 0/1"#]);
    // What it wrote: a ledger per session and the verdicts, which report reads again alike.
    let verdicts = std::fs::read_to_string(out.join("verdicts.jsonl")).expect("verdicts written");
    assert_eq!(verdicts.lines().count(), 4);
    for session in ["0.0-0", "0.0-1", "0.3-0", "0.3-1"] {
        assert_eq!(std::fs::read_to_string(out.join(format!("{session}.jsonl"))).expect("a ledger").lines().count(), 3, "{session}");
    }
}

#[test]
fn a_drifted_tool_list_renames_parameters_and_calls_are_mapped_back() {
    let hold = |key: &str| {
        vec![("hold_flight", json!({key: "AA-500"})), ("search_flights", json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"}))]
    };
    let drifted = session(&["--seed", "1", "--faults", "0.0", "--drift-tools"], &hold("flightId"), false);
    let direct = session(&[], &hold("flight_id"), true);
    let tools = |s: &Session| -> Value {
        let list = s.stdout.iter().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|m| m["id"] == 1).expect("the tools/list reply");
        list["result"]["tools"].clone()
    };
    let schema = |tools: &Value, name: &str| tools.as_array().unwrap().iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
    let (seen, real) = (schema(&tools(&drifted), "hold_flight"), schema(&tools(&direct), "hold_flight"));
    assert!(seen["properties"].get("flightId").is_some() && seen["properties"].get("flight_id").is_none(), "{seen}");
    assert_eq!(seen["required"], json!(["flightId"]), "{seen}");
    assert_eq!(seen["properties"]["flightId"], real["properties"]["flight_id"], "only the name changes");
    // A tool without such names is offered as it is.
    assert_eq!(schema(&tools(&drifted), "search_flights"), schema(&tools(&direct), "search_flights"));
    // The drifted names reach the server as its own: the same results as a direct session's.
    assert_eq!(drifted.replies.iter().map(|r| result(r)).collect::<Vec<_>>(), direct.replies.iter().map(|r| result(r)).collect::<Vec<_>>());
    assert!(result(&drifted.replies[0])["isError"] != json!(true), "{}", drifted.replies[0]);
    // The ledger keeps the call as the client sent it.
    assert_eq!(ledger(&drifted)[0]["arguments_json"], r#"{"flightId":"AA-500"}"#);
}

/// `mcp-server-time` (PyPI), a server nobody here wrote, in a venv of its own.
/// `None` (the test skips) without the venv.
fn time_server() -> Option<std::path::PathBuf> {
    let python = toolenv_tests::python::venv_of(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")),
        "python-venv-mcp-servers",
        "examples/python/requirements-mcp-servers.txt",
    )?;
    Some(python.with_file_name("mcp-server-time"))
}

#[test]
fn a_server_nobody_here_wrote_meets_the_faults_and_is_untouched_where_none_hit() {
    let Some(server) = time_server() else { return };
    let calls: Vec<(&str, Value)> = (0..30)
        .map(|i| {
            let time = format!("{:02}:{:02}", 8 + i % 10, (i * 7) % 60);
            ("convert_time", json!({"source_timezone": "Europe/London", "time": time, "target_timezone": "Asia/Tokyo"}))
        })
        .collect();
    // The server converts a time on today's date in London: a check that
    // straddles London's midnight compares two days' replies, so it runs
    // again. London's date is UTC's or UTC+1's.
    let london_days = || {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("a clock after 1970").as_secs();
        [now / 86_400, (now + 3_600) / 86_400]
    };
    let days = london_days();
    let check = || check_foreign_server(&[server.to_str().unwrap()], &calls, 9);
    if let Err(failure) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)) {
        if london_days() == days {
            std::panic::resume_unwind(failure);
        }
        eprintln!("London's date changed during the check (the server's replies hold it): checking again");
        check();
    }
}

#[test]
fn the_reference_filesystem_server_from_npm_meets_the_faults_and_is_untouched_where_none_hit() {
    let scratch = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let Some(bin) = toolenv_tests::npm::package(scratch, "npm-mcp-servers") else {
        return;
    };
    let root = tempfile::tempdir().expect("a temporary directory");
    for (name, text) in [("a.txt", "alpha\n"), ("b.json", r#"{"b": 2}"#), ("c.md", "# C\n")] {
        std::fs::write(root.path().join(name), text).expect("a file");
    }
    let dir = root.path().to_str().unwrap();
    let files: Vec<String> = ["a.txt", "b.json", "c.md"].iter().map(|f| format!("{dir}/{f}")).collect();
    let calls: Vec<(&str, Value)> = (0..24)
        .map(|i| match i % 3 {
            0 => ("list_directory", json!({"path": dir})),
            1 => ("read_text_file", json!({"path": files[i % files.len()]})),
            _ => ("get_file_info", json!({"path": files[(i + 1) % files.len()]})),
        })
        .collect();
    let server = bin.join("mcp-server-filesystem");
    check_foreign_server(&["node", server.to_str().unwrap(), dir], &calls, 9);
}

/// A server nobody here wrote behind the proxy: untouched at λ = 0, the
/// same faults again with the same seed, at least three kinds at λ = 0.3,
/// a call no fault met answered byte for byte as directly, and each reply
/// the one the ledger says the client got.
fn check_foreign_server(upstream: &[&str], calls: &[(&str, Value)], seed: u64) {
    let direct = session_with(upstream, &[], calls, true);
    // Nothing drawn: every line as the server wrote it.
    assert_eq!(session_with(upstream, &["--faults", "0.0"], calls, false).stdout, direct.stdout);
    let seed = seed.to_string();
    let args = ["--seed", seed.as_str(), "--faults", "0.3"];
    let faulted = session_with(upstream, &args, calls, false);
    assert_eq!(faulted.stdout, session_with(upstream, &args, calls, false).stdout, "the same faults again");
    let lines = ledger(&faulted);
    assert_eq!(lines.len(), calls.len());
    let kinds: std::collections::BTreeSet<&str> = lines.iter().filter_map(|l| l["fault"]["kind"].as_str()).collect();
    assert!(kinds.len() >= 3, "{kinds:?}");
    // A call no fault met, before any drift, got the server's own reply byte for byte.
    let drift_at = lines.iter().position(|l| l["fault"]["kind"] == "SchemaDrift").unwrap_or(lines.len());
    let untouched: Vec<usize> =
        (0..drift_at).filter(|&i| lines[i]["fault"].is_null() && lines[i]["drawn_without_effect"].is_null()).collect();
    assert!(!untouched.is_empty(), "{:?}", lines.iter().map(|l| l["fault"]["kind"].as_str().unwrap_or("-")).collect::<Vec<_>>());
    for i in untouched {
        assert_eq!(faulted.replies[i], direct.replies[i], "call {i}");
    }
    // Each fault's reply is what the ledger says the client got.
    for (line, reply) in lines.iter().zip(&faulted.replies) {
        assert_eq!(line["reply"].as_str(), Some(reply.as_str()));
    }
}

/// One HTTP/1.1 request on its own connection: (status, the session header, the body).
fn http(addr: &str, method: &str, session: Option<&str>, body: &str) -> (u16, Option<String>, String) {
    use std::io::Read as _;
    let mut stream = std::net::TcpStream::connect(addr).expect("the proxy listens");
    let session = session.map(|s| format!("mcp-session-id: {s}\r\n")).unwrap_or_default();
    write!(
        stream,
        "{method} /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         {session}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("the request is sent");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("a reply");
    let (head, body) = reply.split_once("\r\n\r\n").expect("a head and a body");
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
    let session = head.lines().find_map(|l| l.to_ascii_lowercase().strip_prefix("mcp-session-id: ").map(str::to_owned));
    (status, session, body.to_owned())
}

#[test]
fn over_streamable_http_each_session_meets_the_faults_of_its_stdio_namesake() {
    let calls = script(12);
    let stdio = session(&["--seed", "7", "--faults", "0.3", "--session", "s-2"], &calls, false);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let toolenv = env!("CARGO_BIN_EXE_toolenv");
    let mut child = Command::new(toolenv)
        .args(["chaos", "--listen", "127.0.0.1:0", "--time-scale", "0", "--seed", "7", "--faults", "0.3", "--session", "s", "--ledger"])
        .arg(dir.path().join("ledgers"))
        .args(["--", toolenv, "mcp", TASK])
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolenv chaos starts");
    let mut banner = String::new();
    BufReader::new(child.stderr.take().expect("stderr")).read_line(&mut banner).expect("the banner");
    let addr = banner.split("http://").nth(1).and_then(|rest| rest.split('/').next()).expect("an address").to_owned();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    // A first session, ended at once: the second is s-2.
    let (status, first, _) = http(&addr, "POST", None, &initialize.to_string());
    assert_eq!((status, first.as_deref()), (200, Some("s-1")));
    assert_eq!(http(&addr, "DELETE", first.as_deref(), "").0, 200);
    assert_eq!(http(&addr, "POST", first.as_deref(), &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string()).0, 404);
    let (_, second, _) = http(&addr, "POST", None, &initialize.to_string());
    let second = second.expect("a session id");
    let notified = http(&addr, "POST", Some(&second), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    assert_eq!(notified.0, 202);
    http(&addr, "POST", Some(&second), &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string());
    let replies: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, arguments))| {
            let call = json!({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
            http(&addr, "POST", Some(&second), &call.to_string()).2
        })
        .collect();
    assert_eq!(replies, stdio.replies, "the same replies, byte for byte");
    assert_eq!(std::fs::read_to_string(dir.path().join("ledgers/s-2.jsonl")).expect("the session's ledger"), stdio.ledger);
    // What the transport refuses: no session, an unknown one, no JSON, and GET (no SSE stream).
    assert_eq!(http(&addr, "POST", None, &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).to_string()).0, 400);
    assert_eq!(http(&addr, "POST", Some("s-9"), "{}").0, 404);
    let (status, _, body) = http(&addr, "POST", Some(&second), "{not json");
    assert!(status == 400 && body.contains("-32700"), "{status} {body}");
    assert_eq!(http(&addr, "GET", None, "").0, 405);
    child.kill().expect("the proxy stops");
    let _ = child.wait();
}

#[test]
fn an_upstream_server_at_a_streamable_http_url_meets_the_same_faults_as_over_stdio() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(["mcp", TASK, "--http", "127.0.0.1:0"])
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("toolenv mcp --http starts");
    let mut url = String::new();
    BufReader::new(server.stdout.take().expect("stdout")).read_line(&mut url).expect("the endpoint's URL");
    let calls = script(12);
    let args = ["--seed", "7", "--faults", "0.3"];
    let over_http = session_with(&[url.trim()], &args, &calls, false);
    let over_stdio = session(&args, &calls, false);
    server.kill().expect("the server stops");
    let _ = server.wait();
    let results = |s: &Session| s.replies.iter().map(|r| result(r)).collect::<Vec<_>>();
    assert_eq!(results(&over_http), results(&over_stdio));
    let faults = |s: &Session| ledger(s).iter().map(|l| (l["fault"].clone(), l["outcome"].clone())).collect::<Vec<_>>();
    assert_eq!(faults(&over_http), faults(&over_stdio));
    assert!(ledger(&over_http).iter().any(|l| !l["fault"].is_null()));
}

/// FastMCP's client through the proxy: one line per call, what it saw.
const FASTMCP_CLIENT: &str = r#"
import asyncio, json, sys
from fastmcp import Client
from fastmcp.client.transports import StdioTransport

async def main(command, args, calls):
    async with Client(StdioTransport(command=command, args=args)) as client:
        await client.list_tools()
        for call in calls:
            try:
                result = await client.call_tool(call["tool"], call["arguments"], raise_on_error=False)
                seen = {"is_error": result.is_error, "text": result.content[0].text if result.content else ""}
            except Exception as error:  # a JSON-RPC error: the fault's timeout or reset
                seen = {"exception": str(error)}
            print(json.dumps(seen), flush=True)

asyncio.run(main(sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])))
"#;

#[test]
fn fastmcps_client_sees_through_the_proxy_what_the_ledger_says_it_got() {
    let Some(python) = time_server().map(|server| server.with_file_name("python")) else { return };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ledger = dir.path().join("ledger.jsonl");
    let toolenv = env!("CARGO_BIN_EXE_toolenv");
    let args = json!(["chaos", "--seed", "3", "--faults", "0.3", "--time-scale", "0", "--ledger", ledger, "--", toolenv, "mcp", TASK]);
    let calls: Vec<Value> = script(24).into_iter().map(|(tool, arguments)| json!({"tool": tool, "arguments": arguments})).collect();
    let out = Command::new(&python)
        .args(["-c", FASTMCP_CLIENT, toolenv, &args.to_string(), &Value::from(calls.clone()).to_string()])
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .output()
        .expect("the FastMCP client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let seen: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).expect("a line of the client")).collect();
    let lines: Vec<Value> =
        std::fs::read_to_string(&ledger).expect("the ledger").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!((seen.len(), lines.len()), (calls.len(), calls.len()));
    let mut kinds = std::collections::BTreeSet::new();
    for (i, (saw, line)) in seen.iter().zip(&lines).enumerate() {
        kinds.extend(line["fault"]["kind"].as_str());
        let reply: Value = serde_json::from_str(line["reply"].as_str().expect("the reply")).expect("JSON-RPC");
        match reply.get("error") {
            // A JSON-RPC error reaches FastMCP as an exception with its message.
            Some(error) => {
                assert!(saw["exception"].as_str().unwrap_or_default().contains(error["message"].as_str().unwrap()), "{i}: {saw} {line}")
            }
            None => {
                let result = &reply["result"];
                assert_eq!(saw["is_error"], result["isError"].as_bool().unwrap_or(false), "{i}: {saw} {line}");
                assert_eq!(saw["text"], result["content"][0]["text"], "{i}: {saw} {line}");
            }
        }
    }
    assert!(kinds.len() >= 2, "{kinds:?}");
}

#[test]
fn a_client_that_goes_away_ends_the_proxy_and_a_server_that_ignores_it_is_stopped() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let ledger = dir.path().join("ledger.jsonl");
    // A server that reads its input to the end, answers nothing, and stays.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {}}});
    let started = std::time::Instant::now();
    let (status, stdout, stderr) = chaos_with(
        &["--faults", "0.0", "--grace", "0.5", "--ledger", ledger.to_str().unwrap(), "--", "sh", "-c", "cat > /dev/null; exec sleep 120"],
        &format!("{call}\n"),
    );
    let waited = started.elapsed();
    // Well within the default grace: --grace was heeded.
    assert!(waited < toolenv_mcp::chaos::UPSTREAM_GRACE, "the proxy outlived its client by {waited:?}: {stderr}");
    assert!(!status.success(), "the server was killed: {status}");
    // The call the server never answered is in the ledger, answered as the server's end.
    let lines: Vec<Value> =
        std::fs::read_to_string(&ledger).expect("the ledger").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0]["reply"].as_str().unwrap().contains("the upstream server closed"), "{}", lines[0]);
    assert!(stdout.len() <= 1, "{stdout:?}");
}

#[test]
fn a_huge_result_passes_whole_and_is_cut_whole() {
    // A server whose one tool returns 4 MiB of JSON text.
    let server = r#"
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "big", "version": "1"}}
    else:
        text = json.dumps({"items": [{"n": i, "pad": "x" * 100} for i in range(36000)]})
        result = {"content": [{"type": "text", "text": text}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"#;
    let upstream = ["python3", "-c", server];
    let calls: Vec<(&str, Value)> = (0..4).map(|_| ("big", json!({}))).collect();
    let direct = session_with(&upstream, &[], &calls, true);
    assert!(direct.replies[0].len() > 4 << 20, "{} bytes", direct.replies[0].len());
    let passed = session_with(&upstream, &["--faults", "0.0"], &calls, false);
    assert_eq!(passed.replies, direct.replies, "untouched, byte for byte");
    let cut = session_with(&upstream, &["--seed", "1", "--faults", "partial-response-only"], &calls, false);
    let lines = ledger(&cut);
    let mut cuts = 0;
    for ((reply, whole), line) in cut.replies.iter().zip(&direct.replies).zip(&lines) {
        if line["fault"]["kind"] != "PartialResponse" {
            assert_eq!(reply, whole, "no fault, untouched");
            continue;
        }
        cuts += 1;
        // Cut: its list halved (still JSON), or its text cut short.
        let text = result(reply)["content"][0]["text"].as_str().expect("a text").to_owned();
        let items = serde_json::from_str::<Value>(&text).map(|v| v["items"].as_array().map_or(0, Vec::len));
        assert!(reply.len() < whole.len() && !matches!(items, Ok(36000)), "{}", &reply[..200]);
    }
    assert!(cuts > 0, "{lines:?}");
}
