//! `toolenv mcp` over stdio as an MCP client drives it, line by line.

use std::io::{BufRead, BufReader, Write as _};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// A second `initialize` is answered with an error, and the session goes on.
#[test]
fn a_second_initialize_is_refused_and_the_session_goes_on() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(["mcp", "travel/cheapest-flight/001"])
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolenv mcp starts");
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
