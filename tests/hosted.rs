//! Runs hosted by the server as work queues: workers lease episodes, play
//! them, finish them; results aggregate on the server.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::{pass_1_at_lambda, run_report, start, start_with};
use prost::Message as _;
use tonic::Code;
use tonic_types::StatusExt as _;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::worker::work;
use toolenv_client::{Client, play};
use toolenv_server::Config;

fn create(agents: &[&str]) -> pb::CreateRunRequest {
    pb::CreateRunRequest {
        description: "hosted test".into(),
        agents: agents.iter().map(|a| a.to_string()).collect(),
        time_scale: Some(0.0),
        ..Default::default()
    }
}

async fn create_run(client: &mut Client, request: pb::CreateRunRequest) -> pb::Run {
    client.runs().create_run(request).await.expect("run created").into_inner()
}

async fn next(client: &mut Client, run_id: &str, agent: &str) -> pb::NextEpisodeResponse {
    let request = pb::NextEpisodeRequest { run_id: run_id.into(), agent: agent.into(), worker: "test".into(), ..Default::default() };
    client.runs().next_episode(request).await.expect("next episode").into_inner()
}

async fn get_run(client: &mut Client, run_id: &str) -> pb::Run {
    client.runs().get_run(pb::GetRunRequest { run_id: run_id.into() }).await.expect("run").into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_workers_share_a_run_and_results_aggregate_on_the_server() {
    let (server, mut client) = start().await;
    // The paper grid on the travel domain: 2 agents × 3 ε × 2 λ × 5 tasks × 2 trials.
    let request =
        pb::CreateRunRequest { preset: "paper".into(), domain: pb::Domain::Travel.into(), ..create(&["reference", "reference-no-retry"]) };
    let run = create_run(&mut client, request).await;
    assert_eq!((run.run_id.as_str(), run.planned, run.waiting, run.complete), ("run-0001", 120, 120, false));
    assert_eq!(run.agents, ["reference", "reference-no-retry"]);

    // Three workers for one label, two for the other, all at once.
    let mut workers = tokio::task::JoinSet::new();
    for (agent, count) in [(Builtin::Reference, 3), (Builtin::ReferenceNoRetry, 2)] {
        for i in 0..count {
            let (mut client, run_id) = (client.clone(), run.run_id.clone());
            workers.spawn(async move {
                let mut episodes = Vec::new();
                let summary = work(&mut client, &run_id, agent, agent.name(), &format!("{}-{i}", agent.name()), |lease, verdict, _| {
                    episodes.push((lease.plan_index, lease.episode.clone().unwrap_or_default().episode_id, verdict.passed));
                })
                .await
                .expect("worker runs to the end");
                (agent, summary, episodes)
            });
        }
    }
    let mut played: BTreeMap<u64, (Builtin, String)> = BTreeMap::new();
    let mut passed_by_agent: BTreeMap<&str, u64> = BTreeMap::new();
    while let Some(joined) = workers.join_next().await {
        let (agent, summary, episodes) = joined.unwrap();
        assert_eq!((summary.played, summary.lost_leases), (episodes.len() as u64, 0));
        *passed_by_agent.entry(agent.name()).or_default() += summary.passed;
        for (index, episode_id, _) in episodes {
            assert!(played.insert(index, (agent, episode_id)).is_none(), "plan entry {index} played twice");
        }
    }
    assert_eq!(played.len(), 120, "every planned episode played exactly once");
    // Each worker only got episodes planned for its label: the first 60 are the reference agent's.
    assert!(played.iter().all(|(&index, (agent, _))| (*agent == Builtin::Reference) == (index < 60)));

    let progress = get_run(&mut client, &run.run_id).await;
    assert_eq!((progress.passed + progress.failed, progress.waiting, progress.leased, progress.complete), (120, 0, 0, true));
    assert_eq!(progress.passed, passed_by_agent.values().sum::<u64>());
    let done = next(&mut client, &run.run_id, "").await;
    assert!(done.lease.is_none() && done.retry_after_ms == 0, "nothing left: {done:?}");

    // The report aggregates on the server: counts add up and retries matter under faults.
    let (report, summary) = run_report(&mut client, &run.run_id).await;
    let counts = &summary["report"]["counts"];
    assert_eq!((counts["planned"].as_u64(), counts["recorded"].as_u64(), counts["infra_errors"].as_u64()), (Some(120), Some(120), Some(0)));
    assert_eq!(counts["passed"].as_u64(), Some(progress.passed));
    let at_fault = |agent: usize| pass_1_at_lambda(&summary, agent, 0.2);
    assert_eq!(summary["report"]["agents"][0]["agent"], "reference");
    assert!(at_fault(1) < at_fault(0), "no retries score below retries at λ = 0.2");
    assert!(report.text.contains("== agent reference-no-retry") && report.text.contains("by fault level λ"), "{}", report.text);

    // A worker's episode is the same episode the CLI plays: byte-identical trajectories.
    for index in [0u64, 7, 59] {
        let (_, episode_id) = &played[&index];
        let hosted = client.trajectory(episode_id).await.unwrap();
        let planned = paper_travel_request(index);
        let local = play(&mut client, Builtin::Reference, planned).await.unwrap().trajectory;
        assert_eq!(hosted.encode_to_vec(), local.encode_to_vec(), "plan entry {index}");
    }
    server.shutdown().await.unwrap();
}

/// The request of one entry of the test's travel paper grid (the reference agent's half).
fn paper_travel_request(index: u64) -> pb::CreateEpisodeRequest {
    let grid = toolenv_runs::Grid { time_scale: Some(0.0), ..toolenv_runs::Grid::paper(vec!["reference".into()]) };
    let travel: Vec<&str> = toolenv_domains::suite().iter().filter(|t| t.id.starts_with("travel/")).map(|t| t.id.as_str()).collect();
    grid.plan(travel.iter().copied())[index as usize].request.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_episode_is_handed_out_again_after_its_lease_expires() {
    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest { domain: pb::Domain::Scheduling.into(), level: 1, lease_timeout_ms: 300, ..create(&["agent"]) };
    let run = create_run(&mut client, request).await;
    let planned = run.planned;
    assert!(planned >= 2);

    // Worker A leases the first episode, makes a call, and vanishes.
    let abandoned = next(&mut client, &run.run_id, "agent").await.lease.unwrap();
    let abandoned_id = abandoned.episode.as_ref().unwrap().episode_id.clone();
    assert_eq!((abandoned.plan_index, abandoned.lease_timeout_ms, abandoned.agent.as_str()), (0, 300, "agent"));
    client.call_json(&abandoned_id, "check_calendar", r#"{"date": "2026-01-05"}"#).await.unwrap();

    // Worker B gets the others at once; then its request waits for the lease to expire.
    let mut seen = Vec::new();
    let again = loop {
        let asked = std::time::Instant::now();
        let lease = next(&mut client, &run.run_id, "agent").await.lease.expect("a lease, after a wait for the last one");
        if lease.plan_index == 0 {
            assert!(asked.elapsed() >= Duration::from_millis(250), "handed out again only once the lease expired");
            break lease;
        }
        seen.push(lease.plan_index);
        client.finish(crate::support::finishing(&lease.episode.unwrap().episode_id)).await.unwrap();
    };
    assert_eq!(seen, (1..planned).collect::<Vec<_>>());
    // The abandoned plan entry went out again, as a new episode.
    let again_id = again.episode.unwrap().episode_id;
    assert_ne!(again_id, abandoned_id);

    // The first worker is told, whatever it tries.
    let late = client.call_json(&abandoned_id, "check_calendar", r#"{"date": "2026-01-05"}"#).await.unwrap_err();
    let toolenv_client::ClientError::Status(status) = late else { panic!("{late:?}") };
    assert_eq!(status.code(), Code::FailedPrecondition);
    assert_eq!(status.get_details_error_info().unwrap().reason, "LEASE_EXPIRED");
    assert!(client.finish(crate::support::finishing(&abandoned_id)).await.is_err(), "a revoked episode cannot record a verdict");

    client.finish(crate::support::finishing(&again_id)).await.unwrap();
    let progress = get_run(&mut client, &run.run_id).await;
    assert_eq!((progress.passed + progress.failed, progress.leased, progress.complete), (planned, 0, true));
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_worker_learns_at_once_when_the_last_episode_is_done() {
    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest { domain: pb::Domain::Travel.into(), level: 2, ..create(&["agent"]) };
    let run = create_run(&mut client, request).await;
    let mut held = Vec::new();
    for _ in 0..run.planned {
        held.push(next(&mut client, &run.run_id, "agent").await.lease.unwrap().episode.unwrap().episode_id);
    }
    // All leased, for the default 10 minutes: a long poll gives up after a while and says when to ask again.
    let asked = std::time::Instant::now();
    let reply = next(&mut client, &run.run_id, "agent").await;
    assert!(reply.lease.is_none() && (50..=1000).contains(&reply.retry_after_ms), "{reply:?}");
    assert!(asked.elapsed() >= Duration::from_secs(4), "it waited before answering");
    // A worker waiting while the others finish hears "nothing left" as soon as they do.
    let waiting = {
        let (mut client, run_id) = (client.clone(), run.run_id.clone());
        tokio::spawn(async move { next(&mut client, &run_id, "agent").await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let finished = std::time::Instant::now();
    for id in &held {
        client.finish(crate::support::finishing(id)).await.unwrap();
    }
    let reply = waiting.await.unwrap();
    assert!(reply.lease.is_none() && reply.retry_after_ms == 0, "{reply:?}");
    assert!(finished.elapsed() < Duration::from_secs(2), "woken by the last finish, not by a timeout: {:?}", finished.elapsed());
    assert!(reply.run.unwrap().complete);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_reported_at_finish_reaches_the_report() {
    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest { domain: pb::Domain::Support.into(), level: 1, ..create(&["llm"]) };
    let run = create_run(&mut client, request).await;
    let mut episodes = 0;
    while let Some(lease) = next(&mut client, &run.run_id, "llm").await.lease {
        let usage = pb::Usage { input_tokens: 1000, output_tokens: 100, cost_usd: Some(0.01) };
        let id = lease.episode.unwrap().episode_id;
        client.finish(pb::FinishEpisodeRequest { episode_id: id.to_owned(), usage: Some(usage), ..Default::default() }).await.unwrap();
        // A second finish returns the same verdict and changes nothing.
        client
            .finish(pb::FinishEpisodeRequest {
                episode_id: id.to_owned(),
                usage: Some(pb::Usage { input_tokens: 5, ..usage }),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(client.trajectory(&id).await.unwrap().usage, Some(usage));
        episodes += 1;
    }
    assert_eq!(episodes, run.planned);
    let (report, summary) = run_report(&mut client, &run.run_id).await;
    let usage = &summary["report"]["agents"][0]["usage"];
    assert_eq!(usage["input_tokens"].as_u64(), Some(1000 * episodes));
    assert_eq!(usage["episodes_with_cost"].as_u64(), Some(episodes));
    assert!((usage["cost_per_100_episodes_usd"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    assert!(report.text.contains(&format!("usage: {} input", 1000 * episodes)), "{}", report.text);
    // Doing nothing fails every task: the verdicts were recorded, not invented.
    assert_eq!(report.run.unwrap().failed, episodes);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_on_its_store_resumes_a_hosted_run() {
    let dir = tempfile::tempdir().unwrap();
    let config = || Config { store: Some(dir.path().join("server.db")), ..Config::default() };
    let (server, mut client) = start_with(config()).await;
    let request = pb::CreateRunRequest { domain: pb::Domain::Ecommerce.into(), trials: 2, ..create(&["reference"]) };
    let run = create_run(&mut client, request).await;
    assert_eq!(run.planned, 10);
    let mut done = Vec::new();
    for _ in 0..4 {
        let lease = next(&mut client, &run.run_id, "").await.lease.unwrap();
        done.push(lease.plan_index);
        client.finish(crate::support::finishing(&lease.episode.unwrap().episode_id)).await.unwrap();
    }
    // One more leased and left unfinished when the server stops.
    let in_flight = next(&mut client, &run.run_id, "").await.lease.unwrap().plan_index;
    server.shutdown().await.unwrap();

    let (server, mut client) = start_with(config()).await;
    let progress = get_run(&mut client, &run.run_id).await;
    assert_eq!((progress.failed, progress.waiting, progress.leased), (4, 6, 0), "finished kept, the in-flight one waits again");
    let mut rest = Vec::new();
    while let Some(lease) = next(&mut client, &run.run_id, "").await.lease {
        rest.push(lease.plan_index);
        client.finish(crate::support::finishing(&lease.episode.unwrap().episode_id)).await.unwrap();
    }
    assert!(rest.contains(&in_flight));
    assert!(rest.iter().all(|i| !done.contains(i)), "no finished episode repeated: {done:?} then {rest:?}");
    assert_eq!(done.len() + rest.len(), 10);
    assert!(get_run(&mut client, &run.run_id).await.complete);
    let runs = client.runs().list_runs(pb::ListRunsRequest {}).await.unwrap().into_inner().runs;
    assert_eq!(runs.len(), 1);
    assert_eq!((runs[0].run_id.as_str(), runs[0].failed, runs[0].complete), ("run-0001", 10, true));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_run_requests_are_refused_with_the_field_named() {
    let (server, mut client) = start().await;
    let refused = |request: pb::CreateRunRequest| {
        let mut client = client.clone();
        async move { client.runs().create_run(request).await.unwrap_err() }
    };
    for (request, field) in [
        (pb::CreateRunRequest { agents: vec![], ..create(&[]) }, "agents"),
        (create(&[" "]), "agents"),
        (pb::CreateRunRequest { preset: "huge".into(), ..create(&["a"]) }, "preset"),
        (pb::CreateRunRequest { preset: "paper".into(), trials: 3, ..create(&["a"]) }, "preset"),
        (pb::CreateRunRequest { epsilons: vec![0.5], ..create(&["a"]) }, "epsilons"),
        (pb::CreateRunRequest { trials: 101, ..create(&["a"]) }, "trials"),
        (pb::CreateRunRequest { time_scale: Some(-1.0), ..create(&["a"]) }, "time_scale"),
        (pb::CreateRunRequest { level: 3, ..create(&["a"]) }, "level"),
        (pb::CreateRunRequest { description: "x".repeat(5000), ..create(&["a"]) }, "description"),
    ] {
        let status = refused(request).await;
        assert_eq!(status.code(), Code::InvalidArgument, "{field}: {status:?}");
        let violations = status.get_details_bad_request().unwrap().field_violations;
        assert_eq!(violations[0].field, field, "{status:?}");
    }
    let status = refused(pb::CreateRunRequest { fault_profiles: vec!["no-such-profile".into()], ..create(&["a"]) }).await;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");

    let unknown = client.runs().next_episode(pb::NextEpisodeRequest { run_id: "run-0042".into(), ..Default::default() }).await;
    assert_eq!(unknown.unwrap_err().code(), Code::NotFound);
    let missing = client.runs().get_run_report(pb::GetRunReportRequest::default()).await;
    assert_eq!(missing.unwrap_err().code(), Code::InvalidArgument);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn runs_played_by_the_command_line_cannot_be_leased() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.db");
    let plan = toolenv_runs::Grid::single(vec!["reference".into()]).plan(["travel/direct-flight/001"]);
    let cli_run = toolenv_store::Store::open(&path).unwrap().create_run(&plan, "toolenv run").unwrap();
    let (server, mut client) = start_with(Config { store: Some(path), ..Config::default() }).await;
    let request = pb::NextEpisodeRequest { run_id: cli_run.to_string(), ..Default::default() };
    let status = client.runs().next_episode(request).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    let run = get_run(&mut client, cli_run.as_str()).await;
    assert_eq!((run.planned, run.waiting, run.lease_timeout_ms), (1, 1, 0));
    server.shutdown().await.unwrap();
}
