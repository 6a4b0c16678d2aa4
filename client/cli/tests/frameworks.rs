//! Agent frameworks over MCP: the README's examples for the OpenAI Agents
//! SDK and LangGraph (examples/python) play a toolenv episode through
//! `toolenv mcp` with a scripted model (examples/python/scripted_model.py,
//! an OpenAI-compatible endpoint over a real socket), each in the venv its
//! requirements file pins.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

const TASK: &str = "travel/cheapest-flight/001";

fn examples() -> PathBuf {
    toolenv_tests::python::repository().join("examples/python")
}

/// The reference calls of the task, as the scripted model's script.
fn script(dir: &Path) -> PathBuf {
    let task = toolenv_domains::task(TASK).expect("a suite task");
    let calls: Vec<Value> = task.reference.iter().map(|c| json!({"tool": c.tool, "arguments": c.arguments})).collect();
    let path = dir.join("calls.json");
    std::fs::write(&path, serde_json::to_string(&calls).unwrap()).unwrap();
    path
}

/// `python scripted_model.py calls.json` on port 0, and the base URL it printed.
struct Model(Child, String);

impl Model {
    fn start(python: &Path, script: &Path) -> Model {
        let mut child = Command::new(python)
            .arg(examples().join("scripted_model.py"))
            .arg(script)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the scripted model starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert!(line.starts_with("http://127.0.0.1:") && line.trim_end().ends_with("/v1"), "{line}");
        Model(child, line.trim().to_owned())
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs an example as the README shows it, with `toolenv` and the scripted model; returns what it printed (the finish result).
fn play(python: &Path, example: &str, model: &Model, extra: &[&str]) -> Value {
    let out = Command::new(python)
        .arg(examples().join(example))
        .args([TASK, "--model", "scripted", "--base-url", &model.1, "--toolenv", env!("CARGO_BIN_EXE_toolenv")])
        .args(extra)
        .env("OPENAI_API_KEY", "not-used")
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{example}:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{example} printed {stdout}: {e}"))
}

fn check(example: &str, python: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let model = Model::start(python, &script(dir.path()));
    // The model plays the reference: the episode passes, with the tokens the framework counted.
    let finished = play(python, example, &model, &[]);
    assert_eq!(finished["task_id"], TASK, "{finished}");
    assert_eq!(finished["verdict"]["passed"], true, "{example}: {finished}");
    // Under faults the tools' errors reach the framework as tool errors, the
    // model goes on with its script, and the episode still ends with a verdict
    // that counts the faults.
    let finished = play(python, example, &model, &["--faults", "0.3", "--seed", "2"]);
    assert!(finished["verdict"]["fault_stats"]["injected"].as_u64().unwrap() > 0, "{example}: {finished}");
    assert!(finished["verdict"]["checks"].as_array().is_some_and(|c| !c.is_empty()), "{finished}");
}

#[test]
fn the_openai_agents_sdk_example_plays_an_episode_through_toolenv_mcp() {
    let Some(python) = toolenv_tests::python::venv(Path::new(env!("CARGO_TARGET_TMPDIR"))) else { return };
    check("openai_agents_mcp.py", &python);
}

/// The LangGraph example's own venv (it needs the MCP SDK 1.x).
fn langgraph_python() -> Option<PathBuf> {
    toolenv_tests::python::venv_of(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        "python-venv-langgraph",
        "examples/python/requirements-langgraph.txt",
    )
}

#[test]
fn the_langgraph_example_plays_an_episode_through_toolenv_mcp() {
    let Some(python) = langgraph_python() else { return };
    check("langgraph_mcp.py", &python);
}

#[test]
fn the_openai_agents_sdk_plays_through_the_chaos_proxy_and_finishes_unless_suspended() {
    let Some(python) = toolenv_tests::python::venv(Path::new(env!("CARGO_TARGET_TMPDIR"))) else { return };
    through_chaos("openai_agents_mcp.py", &python, 6);
}

#[test]
fn langgraph_plays_through_the_chaos_proxy_and_finishes_unless_suspended() {
    let Some(python) = langgraph_python() else { return };
    through_chaos("langgraph_mcp.py", &python, 4);
}

/// `example --chaos 0.3` for `seeds` seeds: each finishes with a verdict,
/// unless HardRateLimit suspended its session; most finish, most meet faults.
fn through_chaos(example: &str, python: &Path, seeds: usize) {
    let dir = tempfile::tempdir().unwrap();
    let model = Model::start(python, &script(dir.path()));
    let (mut finished, mut faulted) = (0, 0);
    for seed in 0..seeds {
        let ledger = dir.path().join(format!("ledger-{seed}.jsonl"));
        let out = Command::new(python)
            .arg(examples().join(example))
            .args([TASK, "--model", "scripted", "--base-url", &model.1, "--toolenv", env!("CARGO_BIN_EXE_toolenv")])
            .args(["--chaos", "0.3", "--seed", &seed.to_string(), "--chaos-ledger", ledger.to_str().unwrap()])
            .env("OPENAI_API_KEY", "not-used")
            .env("TOOLENV_STORE", dir.path().join("toolenv.db"))
            .output()
            .expect("the example runs");
        let calls: Vec<Value> = std::fs::read_to_string(&ledger)
            .expect("the proxy's ledger")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a ledger line"))
            .collect();
        let faults: Vec<&str> = calls.iter().filter_map(|c| c["fault"]["kind"].as_str()).collect();
        faulted += usize::from(!faults.is_empty());
        let stdout = String::from_utf8_lossy(&out.stdout);
        if out.status.success() {
            let verdict: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("the finish's JSON");
            assert!(verdict["verdict"]["passed"].is_boolean(), "{example} seed {seed}: {verdict}");
            finished += 1;
        } else {
            // The one honest reason not to finish: suspended for the rest of the session.
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                faults.contains(&"HardRateLimit") && stderr.contains("finish did not return a verdict"),
                "seed {seed}: {faults:?}\n{stderr}"
            );
        }
    }
    assert!(2 * finished >= seeds && 2 * faulted >= seeds, "{example}: {finished} finished, {faulted} met faults, of {seeds}");
}
