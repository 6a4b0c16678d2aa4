//! The result-reading solver over gRPC plays exactly as it does in-process.

use crate::support::start;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::play;
use toolenv_core::{
    Episode,
    chaos::{Chaos, FaultProfile},
};
use toolenv_domains::{solver::solve, suite};

#[tokio::test]
async fn the_solver_over_grpc_makes_the_same_calls_and_gets_the_same_verdict_as_in_process() {
    let (server, mut client) = start().await;
    for task in suite() {
        for (preset, delivery, seed) in
            [("0.0", pb::FaultDelivery::Status, 0), ("0.2", pb::FaultDelivery::Status, 3), ("0.3", pb::FaultDelivery::InBand, 5)]
        {
            let request = pb::CreateEpisodeRequest {
                task_id: task.id.clone(),
                seed,
                trial: 0,
                fault_profile: Some(pb::FaultProfile { name: preset.into(), ..Default::default() }),
                fault_delivery: delivery.into(),
                time_scale: Some(0.0),
                ..Default::default()
            };
            let remote = play(&mut client, Builtin::Solver, request).await.unwrap();
            let chaos = Chaos::new(FaultProfile::preset(preset).unwrap()).unwrap();
            let mut local = Episode::new(task, seed, 0).with_chaos(chaos);
            let solution = solve(&mut local);
            let calls = |names: Vec<(&str, &str)>| names.into_iter().map(|(t, a)| format!("{t}{a}")).collect::<Vec<_>>();
            assert_eq!(
                calls(remote.trajectory.calls.iter().map(|c| (c.tool_name.as_str(), c.arguments_json.as_str())).collect()),
                calls(local.trajectory().calls.iter().map(|c| (&*c.tool, c.arguments.as_str())).collect()),
                "{} under λ={preset}",
                task.id
            );
            assert_eq!(remote.verdict.passed, solution.verdict.passed, "{} under λ={preset}", task.id);
            if preset == "0.0" {
                assert!(remote.verdict.passed, "{}: {:#?}", task.id, remote.verdict.checks);
            }
        }
    }
    server.shutdown().await.unwrap();
}
