//! OpenTelemetry traces of runs: `toolenv export --format otlp-json` parsed
//! with the OpenTelemetry protobuf definitions (the `opentelemetry-proto`
//! Python package, strict JSON mapping), and `run`/`serve --otlp-endpoint`
//! received by a collector stand-in over a real socket.

use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use toolenv_agents::llm::scripted::{Script, ScriptedEndpoint, Variant};

const TASK: &str = "travel/direct-booking/002";

fn toolenv(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolenv")).args(args).env("TOOLENV_LOG", "warn").output().expect("toolenv runs")
}

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A collector stand-in: answers every `POST /v1/traces` with 200 and keeps
/// the bodies; anything else gets a 404.
struct Collector {
    url: String,
    bodies: Arc<Mutex<Vec<String>>>,
}

impl Collector {
    fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = kept.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut stream = stream;
                    // One request after another on the connection (keep-alive).
                    loop {
                        let mut request_line = String::new();
                        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
                            return;
                        }
                        let mut length = 0;
                        let mut json = false;
                        loop {
                            let mut header = String::new();
                            reader.read_line(&mut header).unwrap();
                            let header = header.trim_end().to_ascii_lowercase();
                            if header.is_empty() {
                                break;
                            }
                            if let Some(value) = header.strip_prefix("content-length:") {
                                length = value.trim().parse().unwrap();
                            }
                            json |= header == "content-type: application/json";
                        }
                        let mut body = vec![0; length];
                        reader.read_exact(&mut body).unwrap();
                        let status = if request_line.starts_with("POST /v1/traces ") && json {
                            kept.lock().unwrap().push(String::from_utf8(body).unwrap());
                            "200 OK"
                        } else {
                            "404 Not Found"
                        };
                        write!(stream, "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{{}}").unwrap();
                    }
                });
            }
        });
        Collector { url, bodies }
    }

    fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
    }
}

fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"].as_array()?.iter().find(|a| a["key"] == key).map(|a| &a["value"])
}

fn text<'a>(span: &'a Value, key: &str) -> &'a str {
    attribute(span, key).and_then(|v| v["stringValue"].as_str()).unwrap_or_default()
}

fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()) && text.chars().any(|c| c != '0')
}

/// Checks one trace's shape and returns (trace id, agent, task, tool spans, chat spans, fault kinds).
fn check_trace(line: &str) -> (String, String, String, usize, usize, Vec<String>) {
    let request: Value = serde_json::from_str(line).expect("a line is JSON");
    let spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"].as_array().expect("spans").clone();
    let root = &spans[0];
    let trace = root["traceId"].as_str().unwrap().to_owned();
    assert!(is_hex(&trace, 32), "trace id {trace}");
    assert!(root.get("parentSpanId").is_none(), "the episode span is the root");
    assert_eq!(text(root, "gen_ai.operation.name"), "invoke_agent");
    let root_id = root["spanId"].as_str().unwrap();
    let mut ids = BTreeSet::new();
    let (mut tools, mut chats, mut faults) = (0, 0, Vec::new());
    for span in &spans {
        assert_eq!(span["traceId"], trace.as_str(), "one trace per episode");
        let id = span["spanId"].as_str().unwrap();
        assert!(is_hex(id, 16) && ids.insert(id.to_owned()), "span id {id}");
        let start: u64 = span["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let end: u64 = span["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
        assert!(start <= end && start >= 1_700_000_000_000_000_000, "times from the episode's today: {start}..{end}");
        for attribute in span["attributes"].as_array().unwrap() {
            if let Some(value) = attribute["value"].get("intValue") {
                assert!(value.as_str().is_some_and(|v| v.parse::<i64>().is_ok()), "OTLP/JSON writes int64 as a string: {attribute}");
            }
        }
        if span == root {
            continue;
        }
        assert_eq!(span["parentSpanId"], root_id);
        match text(span, "gen_ai.operation.name") {
            "execute_tool" => {
                tools += 1;
                assert_eq!(span["name"], format!("execute_tool {}", text(span, "gen_ai.tool.name")));
                assert!(text(span, "gen_ai.tool.call.id").starts_with("call-"));
                if let Some(kind) = attribute(span, "toolenv.fault.kind") {
                    faults.push(kind["stringValue"].as_str().unwrap().to_owned());
                }
            }
            "chat" => {
                chats += 1;
                assert_eq!(text(span, "gen_ai.request.model"), "scripted");
                assert_eq!(span["kind"], 3, "a model turn is a client span");
            }
            other => panic!("unexpected span {other}: {span}"),
        }
    }
    let calls: usize = attribute(root, "toolenv.calls").unwrap()["intValue"].as_str().unwrap().parse().unwrap();
    assert_eq!(tools, calls, "a span per tool call");
    (trace, text(root, "gen_ai.agent.name").to_owned(), text(root, "toolenv.task_id").to_owned(), tools, chats, faults)
}

/// Parses every line with `ExportTraceServiceRequest` of opentelemetry-proto
/// (unknown fields refused) and prints, per line, the trace id (hex of the
/// parsed bytes), the span count and the sum of `toolenv.calls`. OTLP/JSON
/// differs from protobuf's JSON mapping in one point, ids in hex rather than
/// base64, which is undone first (as OpenTelemetry's own decoders do).
const PARSE: &str = r#"
import base64, json, sys
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
def unhex(value):
    assert value == value.lower() and len(value) in (16, 32), value
    return base64.b64encode(bytes.fromhex(value)).decode()
out = []
for line in open(sys.argv[1]):
    raw = json.loads(line)
    for r in raw["resourceSpans"]:
        for ss in r["scopeSpans"]:
            for s in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:
                        s[key] = unhex(s[key])
    request = json_format.Parse(json.dumps(raw), ExportTraceServiceRequest(), ignore_unknown_fields=False)
    spans = [s for r in request.resource_spans for ss in r.scope_spans for s in ss.spans]
    assert all(len(s.trace_id) == 16 and len(s.span_id) == 8 for s in spans)
    calls = [a.value.int_value for a in spans[0].attributes if a.key == "toolenv.calls"]
    kinds = sorted({s.kind for s in spans})
    out.append({"trace": spans[0].trace_id.hex(), "spans": len(spans), "calls": calls[0], "kinds": kinds,
                "root_parent": spans[0].parent_span_id.hex(), "child_parent": [s.parent_span_id.hex() for s in spans[1:]][:1]})
print(json.dumps(out))
"#;

#[tokio::test(flavor = "multi_thread")]
async fn run_sends_the_traces_export_writes_and_opentelemetry_proto_parses_them() {
    let task = toolenv_domains::task(TASK).expect("a suite task");
    let calls = task.reference.iter().map(|c| (c.tool.to_owned(), c.arguments.clone())).collect();
    let endpoint = ScriptedEndpoint::start(Script::new(calls, Variant::Native)).await.unwrap();
    let collector = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("runs.db");
    let store = store.to_str().unwrap().to_owned();
    let base_url = endpoint.base_url();
    let args = [
        "run",
        "--domain",
        "travel",
        "--level",
        "1",
        "--faults",
        "0.3",
        "--seeds",
        "2",
        "--agent",
        "reference,react@scripted",
        "--base-url",
        &base_url,
        "--store",
        &store,
        "--otlp-endpoint",
        &collector.url,
    ]
    .map(str::to_owned);
    let out = tokio::task::spawn_blocking(move || toolenv(&args.each_ref().map(String::as_str))).await.unwrap();
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("sent 8 traces to {}/v1/traces", collector.url)), "{stderr}");

    let export = ok(&toolenv(&["export", "run-0001", "--store", &store, "--format", "otlp-json"]));
    assert_eq!(export, ok(&toolenv(&["export", "run-0001", "--store", &store, "--format", "otlp-json"])), "the same bytes twice");
    let lines: Vec<&str> = export.lines().collect();
    assert_eq!(lines.len(), 8, "a trace per episode: 2 tasks x 2 seeds x 2 agents");
    let sent: BTreeSet<String> = collector.bodies().into_iter().collect();
    assert_eq!(sent, lines.iter().map(|l| (*l).to_owned()).collect(), "what was sent live is what export writes");

    let traces: Vec<_> = lines.iter().map(|line| check_trace(line)).collect();
    assert_eq!(traces.iter().map(|t| &t.0).collect::<BTreeSet<_>>().len(), 8, "trace ids differ between episodes");
    for (_, agent, task, tools, chats, _) in &traces {
        match agent.as_str() {
            "reference" => assert_eq!(*chats, 0, "no model turns for a scripted agent"),
            "react@scripted" => assert!(*chats >= 1 && *tools >= 1, "{task}: {chats} turns, {tools} calls"),
            other => panic!("agent {other}"),
        }
    }
    assert!(traces.iter().any(|t| !t.5.is_empty()), "at λ 0.3 some call met a fault, and its span says which");

    // The OpenTelemetry protobuf definitions read every line.
    let file = dir.path().join("traces.jsonl");
    std::fs::write(&file, &export).unwrap();
    let Some(python) = toolenv_tests::python::venv(Path::new(env!("CARGO_TARGET_TMPDIR"))) else { return };
    let out = Command::new(python).args(["-c", PARSE]).arg(&file).output().unwrap();
    let parsed: Vec<Value> = serde_json::from_str(&ok(&out)).expect("the parser's summary");
    assert_eq!(parsed.len(), 8);
    for (summary, (trace, _, _, tools, chats, _)) in parsed.iter().zip(&traces) {
        assert_eq!(summary["trace"], trace.as_str());
        assert_eq!(summary["spans"], 1 + tools + chats);
        assert_eq!(summary["calls"], *tools);
        assert_eq!(summary["root_parent"], "");
        let kinds: Vec<u64> = summary["kinds"].as_array().unwrap().iter().map(|k| k.as_u64().unwrap()).collect();
        assert_eq!(kinds, if *chats > 0 { vec![1, 3] } else { vec![1] }, "INTERNAL spans, CLIENT for model turns");
    }

    let out = toolenv(&["run", "--domain", "travel", "--no-store", "--otlp-endpoint", "ftp://nowhere"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--otlp-endpoint must be an http(s) URL"));
}

#[test]
fn serve_sends_the_traces_of_episodes_workers_record() {
    let collector = Collector::start();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("server.db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolenv"))
        .args(["serve", "--addr", "127.0.0.1:0", "--otlp-endpoint", &collector.url, "--store"])
        .arg(&store)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("serve announces its address").unwrap();
        if let Some(rest) = line.split("toolenv listening on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_owned();
        }
    };
    let log = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    let run = ok(&toolenv(&["host", "--url", &url, "--domain", "support", "--label", "reference", "--no-wait"])).trim().to_owned();
    ok(&toolenv(&["work", &run, "--url", &url, "--agent", "reference"]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while collector.bodies().len() < 5 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    assert!(child.wait().unwrap().success());
    let log = log.join().unwrap();
    assert!(log.contains("sent 5 traces"), "{log}");
    let export = ok(&toolenv(&["export", &run, "--store", store.to_str().unwrap(), "--format", "otlp-json"]));
    let sent: BTreeSet<String> = collector.bodies().into_iter().collect();
    assert_eq!(sent, export.lines().map(str::to_owned).collect(), "each recorded episode sent once, as export writes it");
}
