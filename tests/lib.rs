//! Helpers shared by the end-to-end tests: a real server on 127.0.0.1:0 and
//! a real gRPC client connected to it.
#![forbid(unsafe_code)]

pub mod npm;
pub mod postgres;
pub mod python;

use serde_json::Value;
use toolenv::pb;
use toolenv_client::Client;
use toolenv_server::{Config, RunningServer};

/// Says on the terminal what a test did not run and why. Written to the
/// process's stderr itself, which the test harness does not capture (it
/// captures `eprintln!`, and shows it only for a failing test), so a plain
/// `cargo test` that passes still lists what it skipped.
pub fn skipped(why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// [`skipped`] for want of something `.ci/run` installs, unless the
/// environment variable `required` is set (as `.ci/run` sets it), when the
/// test fails instead.
pub fn skipped_unless_required(required: &str, why: &str) {
    assert!(std::env::var_os(required).is_none(), "{required} is set: {why}");
    skipped(why);
}

/// Starts a server with default limits and connects a client to it.
pub async fn start() -> (RunningServer, Client) {
    start_with(Config::default()).await
}

/// Starts a server with `config` and connects a client to it.
pub async fn start_with(config: Config) -> (RunningServer, Client) {
    let server = RunningServer::start(config).await.expect("server starts on 127.0.0.1:0");
    let client = Client::connect(&server.url()).await.expect("client connects");
    (server, client)
}

/// Plays the given calls in a fresh episode of `task_id` and returns the verdict.
/// Calls the server rejects as malformed are part of the play.
pub async fn play_calls(client: &mut Client, task_id: &str, calls: &[(&str, Value)]) -> pb::Verdict {
    let episode = client.create(new_episode(task_id, 0, 0)).await.expect("episode starts");
    for (tool, arguments) in calls {
        let _ = client.call_json(&episode.episode_id, tool, &arguments.to_string()).await;
    }
    client.finish(finishing(&episode.episode_id)).await.expect("episode finishes")
}

/// The request for an episode of `task_id` with no faults.
pub fn new_episode(task_id: &str, seed: u64, trial: u32) -> pb::CreateEpisodeRequest {
    pb::CreateEpisodeRequest { task_id: task_id.to_owned(), seed, trial, ..Default::default() }
}

/// The request to finish an episode with no answer and no usage.
pub fn finishing(episode_id: &str) -> pb::FinishEpisodeRequest {
    pb::FinishEpisodeRequest { episode_id: episode_id.to_owned(), ..Default::default() }
}

/// The names of a verdict's failed checks, in order.
pub fn failed_checks(verdict: &pb::Verdict) -> Vec<&str> {
    verdict.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect()
}

/// Asserts that exactly the checks whose names contain the given fragments failed.
pub fn assert_failed(verdict: &pb::Verdict, fragments: &[&str]) {
    let failed = failed_checks(verdict);
    assert!(!verdict.passed, "verdict should fail");
    assert_eq!(failed.len(), fragments.len(), "failed checks: {failed:#?}, expected ones containing {fragments:?}");
    for fragment in fragments {
        assert!(failed.iter().any(|name| name.contains(fragment)), "no failed check contains {fragment:?}: {failed:#?}");
    }
}

/// pass^1 of one agent (by its place in the report) at fault level λ, read
/// from a run report's JSON summary (`GetRunReport.summary_json`).
pub fn pass_1_at_lambda(summary: &Value, agent: usize, lambda: f64) -> f64 {
    let rows = summary["report"]["agents"][agent]["by_lambda"].as_array().expect("a by-λ breakdown");
    let row = rows.iter().find(|r| r["level"].as_f64() == Some(lambda)).unwrap_or_else(|| panic!("no row at λ = {lambda}"));
    let value = &row["pass_1"]["value"];
    value["num"].as_f64().expect("numerator") / value["den"].as_f64().expect("denominator")
}

/// A hosted run's report, and its JSON summary parsed.
pub async fn run_report(client: &mut Client, run_id: &str) -> (pb::RunReport, Value) {
    let request = pb::GetRunReportRequest { run_id: run_id.to_owned(), ..Default::default() };
    let report = client.runs().get_run_report(request).await.expect("the run's report").into_inner();
    let summary = serde_json::from_str(&report.summary_json).expect("the summary is JSON");
    (report, summary)
}

/// A page of the documentation as the docs check reads it: the README or a
/// page of the book in `docs/`.
#[derive(Debug)]
pub struct DocPage {
    /// Its path from the repository's root (`README.md`, `docs/faults.md`).
    pub path: String,
    /// Its text.
    pub text: String,
    /// Its command blocks marked for checking, in order: each `sh` block right
    /// after a `<!-- readme-check: NAME -->` line, as (NAME, the block's lines
    /// without their indentation).
    pub blocks: Vec<(String, String)>,
    /// The output it shows for its blocks: each `text` block right after a
    /// `<!-- readme-output: NAME -->` line, as (NAME, its lines).
    pub outputs: Vec<(String, String)>,
}

/// The documentation's pages in reading order: the README, then every page
/// of `docs/SUMMARY.md` in its order. A page of `docs/` that SUMMARY.md does
/// not list would escape the check, so it is an error.
pub fn doc_pages() -> Vec<DocPage> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    let summary = read("docs/SUMMARY.md");
    let mut paths = vec!["README.md".to_owned()];
    for link in summary.split("](").skip(1) {
        let target = link.split(')').next().unwrap_or_default();
        assert!(target.ends_with(".md") && !target.contains('/'), "SUMMARY.md links to {target}: pages sit in docs/ itself");
        paths.push(format!("docs/{target}"));
    }
    let on_disk = std::fs::read_dir(root.join("docs")).expect("docs/");
    for entry in on_disk {
        let name = entry.expect("an entry of docs/").file_name().to_string_lossy().into_owned();
        let path = format!("docs/{name}");
        assert!(!name.ends_with(".md") || name == "SUMMARY.md" || paths.contains(&path), "{path} is not in docs/SUMMARY.md");
    }
    paths
        .into_iter()
        .map(|path| {
            let text = read(&path);
            let blocks = fenced_after(&path, &text, "readme-check", "sh");
            let outputs = fenced_after(&path, &text, "readme-output", "text");
            DocPage { path, text, blocks, outputs }
        })
        .collect()
}

/// The fenced blocks of `text` each right after a `<!-- MARK: NAME -->`
/// line, which must open with ```` ```LANGUAGE ````: (NAME, the block's lines
/// without their indentation).
fn fenced_after(path: &str, text: &str, mark: &str, language: &str) -> Vec<(String, String)> {
    let prefix = format!("<!-- {mark}: ");
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.trim().strip_prefix(prefix.as_str()).and_then(|l| l.strip_suffix(" -->")) else { continue };
        let fence = lines.next().unwrap_or_default();
        assert_eq!(fence.trim(), format!("```{language}"), "{path}: the block marked {mark}: {name} does not start with ```{language}");
        let indent = fence.len() - fence.trim_start().len();
        let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").map(|l| l.get(indent..).unwrap_or(l.trim())).collect();
        blocks.push((name.to_owned(), body.join("\n") + "\n"));
    }
    blocks
}

/// The command blocks marked for checking in the README and every page of
/// the book, in reading order (see [`doc_pages`]), as (NAME, the block).
pub fn readme_blocks() -> Vec<(String, String)> {
    doc_pages().into_iter().flat_map(|page| page.blocks).collect()
}

/// The README block marked `name` (see [`readme_blocks`]).
pub fn readme_block(name: &str) -> String {
    readme_blocks().into_iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no README block marked {name}")).1
}
