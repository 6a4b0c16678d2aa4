//! `toolenv mcp` over stdio as an MCP client drives it, line by line.

use std::io::{BufRead, BufReader, Write as _};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// `toolenv mcp ARGS` on an embedded server, with its store in `dir` and piped stdio.
fn mcp(dir: &tempfile::TempDir, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(args)
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolenv mcp starts")
}

/// A second `initialize` is answered with an error, and the session goes on.
#[test]
fn a_second_initialize_is_refused_and_the_session_goes_on() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut child = mcp(&dir, &["mcp", "travel/cheapest-flight/001"]);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut ask = move |message: Value| -> Value {
        writeln!(stdin, "{message}").expect("the bridge reads");
        let line = lines.next().expect("a reply").expect("a line");
        serde_json::from_str(&line).expect("a JSON-RPC reply")
    };
    let initialize = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
    };
    let first = ask(initialize(1));
    assert_eq!(first["result"]["serverInfo"]["name"], "toolenv", "{first}");
    let again = ask(initialize(2));
    assert_eq!(again["id"], 2, "{again}");
    assert!(again["error"]["message"].as_str().is_some_and(|m| m.contains("already initialized")), "{again}");
    let tools = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let names: Vec<&str> = tools["result"]["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"search_flights") && names.contains(&"finish"), "{tools}");
    drop(ask);
    let status = child.wait().expect("toolenv mcp ends when stdin closes");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr).expect("stderr reads");
    assert!(status.success(), "{status}: {stderr}");
}

/// A client that sends a tools/call and closes stdin at once still gets the
/// reply, even when the call takes longer than the five seconds rmcp alone
/// waits after the end of input: seed 4 draws a 5000 ms upstream timeout on
/// the first call, played at 1.2 real ms per virtual one (6 s).
#[test]
fn closing_stdin_after_a_slow_call_still_gets_its_reply() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut child = mcp(&dir, &["mcp", "travel/cheapest-flight/001", "--faults", "timeout-only", "--seed", "4", "--time-scale", "1.2"]);
    let mut stdin = child.stdin.take().expect("stdin");
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "search_flights", "arguments": {"origin": "LON", "dest": "PAR", "date": "2026-01-05"}}}),
    ] {
        writeln!(stdin, "{message}").expect("the bridge reads");
    }
    drop(stdin);
    let started = std::time::Instant::now();
    let output = child.wait_with_output().expect("toolenv mcp ends when stdin closes");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {stderr}", output.status);
    let replies: Vec<Value> = stdout.lines().map(|line| serde_json::from_str(line).expect("a JSON-RPC reply")).collect();
    let call = replies.iter().find(|reply| reply["id"] == 2);
    let call = call.unwrap_or_else(|| panic!("no reply to the tool call on stdout:\n{stdout}\nstderr:\n{stderr}"));
    let text = call["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("DEADLINE_EXCEEDED") && started.elapsed() > std::time::Duration::from_secs(5),
        "the call was meant to take over 5 s (seed 4 no longer draws a timeout first? pick a seed that does): {call}"
    );
}

/// An answer task over MCP: `finish` offers the task's typed answer fields
/// beside `answer`; finishing with them after the reference's calls passes,
/// and a wrong field fails.
#[test]
fn finish_takes_the_typed_answer_over_mcp() {
    let task_id = "scheduling/refuse-booking/g2-3-2-0000";
    let task = toolenv_domains::generate::generate_id(task_id).expect("a generated task");
    let fields = task.answer_fields();
    let right = toolenv_core::typed::example(&fields);
    let mut wrong = right.clone();
    wrong["reason"] = json!("over_budget");
    for (typed, passes) in [(right, true), (wrong, false)] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut child = mcp(&dir, &["mcp", task_id]);
        let mut stdin = child.stdin.take().expect("stdin");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut ask = |message: Value| -> Value {
            writeln!(stdin, "{message}").expect("the bridge reads");
            let line = lines.next().expect("a reply").expect("a line");
            serde_json::from_str(&line).expect("a JSON-RPC reply")
        };
        ask(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}));
        let tools = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        let finish = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "finish").expect("finish").clone();
        for field in &fields {
            assert!(finish["inputSchema"]["properties"].get(&field.name).is_some(), "finish lacks {}: {finish}", field.name);
        }
        for (n, call) in task.reference.iter().enumerate() {
            let reply = ask(json!({"jsonrpc": "2.0", "id": 3 + n, "method": "tools/call",
                                   "params": {"name": call.tool, "arguments": call.arguments}}));
            assert!(reply["result"].is_object(), "{reply}");
        }
        let mut arguments = typed.clone();
        arguments["answer"] = json!("I booked nothing.");
        let finished =
            ask(json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "finish", "arguments": arguments}}));
        let text = finished["result"]["content"][0]["text"].as_str().expect("the verdict as text");
        let verdict: Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(verdict["verdict"]["passed"], passes, "{typed}: {verdict}");
        drop(stdin);
        let _ = child.wait();
    }
}
