//! Runs hosted by a server (--url) for workers: `host` plans one and
//! follows it, `work` plays one with built-in agents, and `runs`/`report`
//! read the server's runs.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use toolenv::pb;
use toolenv_client::{Client, ClientError};

use super::render;

/// Plans a hosted run on the server, then follows it to its report.
pub(crate) async fn host(client: &mut Client, request: pb::CreateRunRequest, no_wait: bool) -> anyhow::Result<ExitCode> {
    let run = client.runs().create_run(request).await.map_err(ClientError::from)?.into_inner();
    println!("{}", run.run_id);
    eprintln!(
        "hosting {}: {} episodes for {}; workers lease them with Runs.NextEpisode (e.g. `toolenv work {} --url URL`)",
        run.run_id,
        run.planned,
        run.agents.join(", "),
        run.run_id
    );
    if no_wait {
        return Ok(ExitCode::SUCCESS);
    }
    let bar = render::progress_bar(run.planned, "episodes");
    let mut run = run;
    while !run.complete {
        bar.set_position(run.passed + run.failed);
        bar.set_message(format!("{} passed, {} leased", run.passed, run.leased));
        tokio::time::sleep(Duration::from_millis(500)).await;
        let request = pb::GetRunRequest { run_id: run.run_id.clone() };
        run = client.runs().get_run(request).await.map_err(ClientError::from)?.into_inner();
    }
    bar.finish_and_clear();
    report(client, &run.run_id, false, false, false).await
}

/// Works on a hosted run with built-in agents until nothing is left for the label.
/// The hosted run `run`, if it plans episodes for `label`; otherwise an
/// error naming the labels it plans (`work`, `mcp --run --label`).
pub(crate) async fn planned_for(client: &mut Client, run: &str, label: &str) -> anyhow::Result<pb::Run> {
    let found = client.runs().get_run(pb::GetRunRequest { run_id: run.to_owned() }).await.map_err(ClientError::from)?.into_inner();
    if !found.agents.iter().any(|a| a == label) {
        bail!("{run} plans no episode for '{label}'; its agents are: {} (choose one with --label)", found.agents.join(", "));
    }
    Ok(found)
}

pub(crate) async fn work(
    client: &mut Client,
    run: &str,
    agent: std::sync::Arc<dyn toolenv_agents::Agent>,
    label: Option<String>,
    workers: u32,
) -> anyhow::Result<ExitCode> {
    let label = label.unwrap_or_else(|| agent.label());
    let first = planned_for(client, run, &label).await?;
    let bar = render::progress_bar(first.planned, "episodes");
    bar.set_position(first.passed + first.failed);
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..workers {
        let mut client = client.clone();
        let (run, label, bar, agent) = (run.to_owned(), label.clone(), bar.clone(), agent.clone());
        let name = format!("{}-{}-{index}", label, std::process::id());
        tasks.spawn(async move {
            toolenv_client::worker::work(&mut client, &run, agent, &label, &name, |_, _, progress| {
                if let Some(progress) = progress {
                    bar.set_position((progress.passed + progress.failed).max(bar.position()));
                    bar.set_message(format!("{} passed, {} leased", progress.passed, progress.leased));
                }
            })
            .await
        });
    }
    let mut total = toolenv_client::worker::WorkSummary::default();
    let mut failure = None;
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok(summary)) => {
                total.played += summary.played;
                total.passed += summary.passed;
                total.lost_leases += summary.lost_leases;
            }
            Ok(Err(error)) => failure = Some(anyhow::Error::new(error)),
            Err(error) => failure = Some(anyhow::Error::new(error)),
        }
    }
    bar.finish_and_clear();
    eprintln!(
        "played {} episodes of {run} as '{label}' ({} passed); {} lost to expired leases",
        total.played, total.passed, total.lost_leases
    );
    match failure {
        Some(error) => Err(error.context(format!("a worker on {run} stopped"))),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// `toolenv runs --url`: the server's runs.
pub(crate) async fn list_runs(client: &mut Client) -> anyhow::Result<ExitCode> {
    let runs = client.runs().list_runs(pb::ListRunsRequest {}).await.map_err(ClientError::from)?.into_inner().runs;
    render::server_runs(&runs);
    Ok(ExitCode::SUCCESS)
}

/// `toolenv report RUN --url`: a hosted run's report, as `toolenv report` prints a stored one.
pub(crate) async fn report(
    client: &mut Client,
    run: &str,
    json: bool,
    exclude_infra_errors: bool,
    feasible_only: bool,
) -> anyhow::Result<ExitCode> {
    let request = pb::GetRunReportRequest { run_id: run.to_owned(), exclude_infra_errors, feasible_only };
    let report = client.runs().get_run_report(request).await.map_err(ClientError::from)?.into_inner();
    render::server_report(&report, json);
    Ok(ExitCode::SUCCESS)
}

/// `toolenv compare --url`: two agents of runs hosted by the server, compared there.
pub(crate) async fn compare(client: &mut Client, request: &super::compare::CompareRequest<'_>) -> anyhow::Result<ExitCode> {
    let message = pb::CompareRunsRequest {
        run_a: request.run_a.to_owned(),
        run_b: request.run_b.unwrap_or_default().to_owned(),
        agents: request.agents.to_vec(),
        exclude_infra_errors: request.convention == toolenv_runs::metrics::InfraConvention::Exclude,
    };
    let reply = client.runs().compare_runs(message).await.map_err(ClientError::from)?.into_inner();
    if request.json {
        let value: serde_json::Value = serde_json::from_str(&reply.comparison_json)?;
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", reply.text);
    }
    Ok(ExitCode::SUCCESS)
}
