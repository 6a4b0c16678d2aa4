use crate::support::start;
use prost::Message;
use toolenv_agents::Builtin;
use toolenv_client::play_episode;
use toolenv_domains::suite;

#[tokio::test]
async fn the_same_episode_twice_gives_identical_trajectory_bytes() {
    let (server, mut client) = start().await;
    for task in suite() {
        for agent in [Builtin::Reference, Builtin::Random] {
            let a = play_episode(&mut client, agent, &task.id, 42, 1).await.unwrap();
            let b = play_episode(&mut client, agent, &task.id, 42, 1).await.unwrap();
            assert_eq!(a.trajectory.encode_to_vec(), b.trajectory.encode_to_vec(), "{} with the {} agent", task.id, agent.name());
            assert_eq!(a.trajectory.seed, 42);
            assert_eq!(a.trajectory.trial, 1);
        }
        // Another seed makes the random agent play differently.
        let c = play_episode(&mut client, Builtin::Random, &task.id, 43, 1).await.unwrap();
        let d = play_episode(&mut client, Builtin::Random, &task.id, 42, 1).await.unwrap();
        assert_ne!(c.trajectory.calls, d.trajectory.calls, "{}", task.id);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn over_grpc_and_in_process_agree() {
    let (server, mut client) = start().await;
    for task in suite() {
        let calls = toolenv_domains::agent::random_calls(task, 5, 25);
        let local = toolenv_domains::agent::play_calls(task, 5, 0, &calls);
        let remote = play_episode(&mut client, Builtin::Random, &task.id, 5, 0).await.unwrap();
        let expected = toolenv::pb::Trajectory::from(local.trajectory());
        assert_eq!(remote.trajectory, expected, "{}", task.id);
    }
    server.shutdown().await.unwrap();
}
