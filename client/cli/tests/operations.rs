//! `toolenv report --html` and `--log-format json` as a user runs them.

use std::process::Command;

/// Runs toolenv to its end with `store` as its store of runs.
fn toolenv(store: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(args)
        .env_remove("TOOLENV_URL")
        .env_remove("TOOLENV_LOG_FORMAT")
        .env_remove("RUST_LOG")
        .env("TOOLENV_STORE", store)
        .output()
        .expect("toolenv runs")
}

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn report_writes_one_run_or_two_side_by_side_as_html() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    ok(&toolenv(
        &store,
        &["run", "--domain", "travel", "--agent", "reference,brittle", "--epsilon", "0,0.2", "--faults", "0.0,0.2", "--trials", "2"],
    ));
    ok(&toolenv(&store, &["run", "--domain", "travel", "--agent", "reference", "--faults", "0.3", "--trials", "3"]));
    let page = dir.path().join("report.html");
    ok(&toolenv(&store, &["report", "run-0001", "--html", page.to_str().unwrap()]));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..100.min(html.len())]);
    assert!(html.contains("toolenv report: run-0001") && html.contains(r#"class="heatmap""#));
    // The page's headline figure is the JSON summary's.
    let json: serde_json::Value = serde_json::from_str(&ok(&toolenv(&store, &["report", "run-0001", "--json"]))).unwrap();
    let value = &json["report"]["agents"][0]["overall"]["pass_k"]["value"];
    let pass_k = value["num"].as_f64().unwrap() / value["den"].as_f64().unwrap();
    let cell = format!(
        r#"<span id="r0-a0-pass-k"><span class="num" data-ptr="/runs/0/report/agents/0/overall/pass_k/value" data-scale="100">{:.1}%</span>"#,
        pass_k * 100.0
    );
    assert!(html.contains(&cell), "{cell} not in the page");

    let both = dir.path().join("both.html");
    ok(&toolenv(&store, &["report", "run-0001", "run-0002", "--html", both.to_str().unwrap()]));
    let html = std::fs::read_to_string(&both).unwrap();
    assert!(html.contains("run-0001 vs run-0002") && html.contains(r#"<section id="comparison">"#));

    // A second run needs --html; --html needs the store, not a server; an unknown run is named.
    let out = toolenv(&store, &["report", "run-0001", "run-0002"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--html"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = toolenv(&store, &["report", "run-0001", "--html", "x.html", "--url", "http://127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--store file instead of --url"));
    let out = toolenv(&store, &["report", "run-0001", "run-0099", "--html", both.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run-0099"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn log_format_json_writes_one_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(["--log-format", "json", "tasks"])
        .env_remove("TOOLENV_URL")
        .env("TOOLENV_STORE", dir.path().join("runs.db"))
        .env("RUST_LOG", "info")
        .output()
        .expect("toolenv runs");
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<serde_json::Value> =
        stderr.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    let listening = lines.iter().find(|l| l["message"] == "toolenv server listening").expect("the embedded server logs its start");
    assert_eq!(listening["level"], "INFO");
    assert!(listening["addr"].as_str().is_some_and(|a| a.starts_with("127.0.0.1:")), "{listening}");
}

/// `serve --log-format json`'s banner is log events too: every line on
/// stderr is a JSON object, the address among them.
#[test]
fn serve_with_json_logs_prints_no_plain_banner() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(["--log-format", "json", "serve", "--addr", "127.0.0.1:0", "--no-store"])
        .env("TOOLENV_STORE", dir.path().join("runs.db"))
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let banner = loop {
        let line = lines.next().expect("serve announces its address").unwrap();
        let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        if event["message"].as_str().is_some_and(|m| m.starts_with("toolenv listening on ")) {
            break event;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(banner["level"], "INFO", "{banner}");
}
