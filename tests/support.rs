//! Starting a real server on 127.0.0.1:0 with a real gRPC client, and the
//! requests, verdicts and reports the end-to-end tests build and read.

use serde_json::Value;
use toolenv::pb;
use toolenv_client::Client;
use toolenv_server::{Config, RunningServer};

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
