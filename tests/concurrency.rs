use crate::support::start;
use futures::future::join_all;
use toolenv_agents::Builtin;
use toolenv_client::play_episode;
use toolenv_domains::suite;

/// (task, agent, seed) → (passed, final state hash, number of calls).
type Results = Vec<(String, &'static str, u64, bool, String, usize)>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_concurrent_episodes_match_one_by_one() {
    let (server, client) = start().await;
    let mut plan = Vec::new();
    for task in suite() {
        for seed in 0..10 {
            plan.push((task.id.clone(), Builtin::Random, seed));
        }
        for seed in 0..5 {
            plan.push((task.id.clone(), Builtin::Reference, seed));
        }
    }
    assert!(plan.len() >= 300);

    // The one-by-one baseline: every episode where TOOLENV_FULL_SWEEPS asks, else a sample.
    let checked: Vec<usize> = toolenv_core::testing::sweep_seeds(plan.len() as u64, 60).map(|i| i as usize).collect();
    let mut sequential: Results = Vec::new();
    let mut one = client.clone();
    for (task, agent, seed) in checked.iter().map(|&i| &plan[i]) {
        let outcome = play_episode(&mut one, *agent, task, *seed, 0).await.unwrap();
        sequential.push((
            task.clone(),
            agent.name(),
            *seed,
            outcome.verdict.passed,
            outcome.verdict.final_state_hash,
            outcome.trajectory.calls.len(),
        ));
    }

    let concurrent: Results = join_all(plan.iter().map(|(task, agent, seed)| {
        let mut client = client.clone();
        async move {
            let outcome = play_episode(&mut client, *agent, task, *seed, 0).await.unwrap();
            (task.clone(), agent.name(), *seed, outcome.verdict.passed, outcome.verdict.final_state_hash, outcome.trajectory.calls.len())
        }
    }))
    .await;

    let sampled: Results = checked.iter().map(|&i| concurrent[i].clone()).collect();
    assert_eq!(sequential, sampled);
    let reference_passes = concurrent.iter().filter(|r| r.1 == "reference" && r.3).count();
    assert_eq!(reference_passes, suite().len() * 5);
    server.shutdown().await.unwrap();
}
