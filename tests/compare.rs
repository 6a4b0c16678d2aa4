//! Two agents of hosted runs compared on the server (Runs.CompareRuns):
//! paired tests over the tasks both played, and clear refusals.

use crate::support::start;
use tonic::Code;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::Client;
use toolenv_client::worker::work;

/// A hosted run of the suite at one ε and λ 0 and 0.2, two trials, played
/// to the end by a built-in worker of each label.
async fn played_run(client: &mut Client, agents: &[Builtin], epsilon: f64) -> String {
    let request = pb::CreateRunRequest {
        description: "compare test".into(),
        agents: agents.iter().map(|a| a.name().to_owned()).collect(),
        epsilons: vec![epsilon],
        fault_profiles: vec!["0.0".into(), "0.2".into()],
        trials: 2,
        time_scale: Some(0.0),
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.expect("run created").into_inner();
    for &agent in agents {
        work(client, &run.run_id, agent, agent.name(), "compare-test", |_, _, _| {}).await.expect("worker runs to the end");
    }
    run.run_id
}

async fn compare(client: &mut Client, run_a: &str, run_b: &str, agents: &[&str]) -> Result<pb::RunComparison, tonic::Status> {
    let request = pb::CompareRunsRequest {
        run_a: run_a.into(),
        run_b: run_b.into(),
        agents: agents.iter().map(|a| (*a).to_owned()).collect(),
        exclude_infra_errors: false,
    };
    client.runs().compare_runs(request).await.map(tonic::Response::into_inner)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_are_compared_over_the_tasks_they_share() {
    let (server, mut client) = start().await;
    let both = played_run(&mut client, &[Builtin::Reference, Builtin::ReferenceNoRetry], 0.0).await;
    let alone = played_run(&mut client, &[Builtin::ReferenceNoRetry], 0.0).await;

    // Two labels of one run, and the same pairing across two runs: the no-retry
    // agent plays the same seeds, so both comparisons agree exactly.
    let inside = compare(&mut client, &both, "", &["reference", "reference-no-retry"]).await.expect("compared");
    let across = compare(&mut client, &both, &alone, &["reference", "reference-no-retry"]).await.expect("compared");
    let json: serde_json::Value = serde_json::from_str(&inside.comparison_json).unwrap();
    let across_json: serde_json::Value = serde_json::from_str(&across.comparison_json).unwrap();
    assert_eq!(json["overall"], across_json["overall"]);
    assert_eq!(
        (json["k"].as_u64(), json["units"].as_u64(), json["only_a"].as_u64()),
        (Some(2), Some(2 * toolenv_domains::suite().len() as u64), Some(0))
    );

    // Without faults the two agents are the same; at λ = 0.2 retries help.
    let cells = json["by_cell"].as_array().unwrap();
    let cell = |profile: &str, k: u64| cells.iter().find(|r| r["fault_profile"] == profile && r["k"] == k).unwrap();
    assert_eq!((cell("0.0", 2)["test"].as_str(), cell("0.0", 2)["difference"].as_f64()), (Some("no_difference"), Some(0.0)));
    let faulty = cell("0.2", 2);
    assert!(faulty["difference"].as_f64().unwrap() > 0.0, "{faulty}");
    assert_eq!(faulty["b_better"].as_u64(), Some(0), "{faulty}");
    assert_eq!(faulty["test"], "mcnemar_exact");
    // The p-value is the exact McNemar test of the discordant tasks.
    let discordant = faulty["a_better"].as_u64().unwrap() as i32;
    let p = faulty["p_value"].as_f64().unwrap();
    assert!((p - (2.0_f64.powi(1 - discordant)).min(1.0)).abs() < 1e-12, "{faulty}");
    assert!(inside.text.contains("A = run-0001 reference  vs  B = run-0001 reference-no-retry"), "{}", inside.text);
    assert!(inside.text.contains("ε 0, faults 0.2"), "{}", inside.text);

    // Refusals name the field.
    let refused = |status: tonic::Status, code: Code, message: &str| {
        assert_eq!(status.code(), code, "{status:?}");
        assert!(status.message().contains(message), "{} does not contain {message}", status.message());
    };
    refused(compare(&mut client, &both, "", &[]).await.unwrap_err(), Code::InvalidArgument, "needs two labels");
    refused(compare(&mut client, &both, &alone, &[]).await.unwrap_err(), Code::InvalidArgument, "run-0001 has 2 agents");
    refused(compare(&mut client, "", "", &[]).await.unwrap_err(), Code::InvalidArgument, "run_a is required");
    refused(compare(&mut client, "run-0099", "", &[]).await.unwrap_err(), Code::NotFound, "run-0099");
    // A run against itself, even with two of its agents, is refused: one run and --agents says that.
    for agents in [&[][..], &["reference", "reference-no-retry"]] {
        refused(compare(&mut client, &both, &both, agents).await.unwrap_err(), Code::InvalidArgument, "run_b: names run_a's run run-0001");
    }
    let other_grid = played_run(&mut client, &[Builtin::ReferenceNoRetry], 0.1).await;
    refused(
        compare(&mut client, &alone, &other_grid, &[]).await.unwrap_err(),
        Code::InvalidArgument,
        "run-0002 reference-no-retry and run-0003 reference-no-retry differ in grid: cells only in A: ε 0, faults 0.0",
    );
    server.shutdown().await.unwrap();
}
