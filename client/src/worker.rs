//! A worker for runs hosted by a server: leases episodes one at a time,
//! plays each with an agent through the same driver as [`crate::play`], and
//! finishes it, which records its verdict in the run. Many workers, in this
//! process or others, in Rust or any other language, can share a run.

use std::sync::Arc;

use toolenv::pb;
use toolenv_agents::Agent;

use crate::{
    Client, ClientError,
    play::{known_task, play_created},
};

/// What a worker did before it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkSummary {
    /// Episodes played and finished.
    pub played: u64,
    /// Of those, how many passed.
    pub passed: u64,
    /// Episodes lost because their lease expired while playing, or with
    /// the replica that played them (`serve --durability finish`); each is
    /// played again once its lease expires.
    pub lost_leases: u64,
}

/// Plays episodes of a hosted run with an agent until none is left for
/// `label` (every episode planned for that label has a verdict), calling
/// `on_episode` after each with its lease, verdict and the run's progress.
///
/// A lease or a finish whose answer leaves its outcome unknown (the store
/// unavailable, a replica gone under it) is asked again, a few times with
/// backoff. An episode whose lease expired mid-play (the server handed it
/// to another worker) is dropped and counted in [`WorkSummary::lost_leases`];
/// any other error ends the worker. An LLM agent's endpoint that keeps failing stops
/// the worker: the episode's lease expires and it is played again, never
/// scored as the agent's failure.
pub async fn work(
    client: &mut Client,
    run_id: &str,
    agent: impl Into<Arc<dyn Agent>>,
    label: &str,
    worker: &str,
    mut on_episode: impl FnMut(&pb::Lease, &pb::Verdict, Option<&pb::Run>),
) -> Result<WorkSummary, ClientError> {
    let agent = agent.into();
    // A team is refused by the server, before any lease, when the run's episodes lack one of its roles.
    let team_roles: Vec<String> = agent.roles().into_iter().map(|role| role.name).collect();
    let mut summary = WorkSummary::default();
    let leasing = client.clone();
    let next = || {
        let (mut client, team_roles) = (leasing.clone(), &team_roles);
        async move { client.lease(run_id, label, worker, team_roles).await }
    };
    while let Some((lease, run)) = crate::retry::resent(next).await? {
        let episode = lease.episode.clone().unwrap_or_default();
        let played = async {
            let task = known_task(client, &*agent, &episode.task_id).await?;
            // The seed of the agent's own randomness: the plan entry, so that replays agree.
            let tape_key = format!("{label}/{run_id}/{}", lease.plan_index);
            play_created(client, agent.clone(), task, &episode, lease.plan_index, tape_key).await
        };
        match played.await {
            Ok(verdict) => {
                summary.played += 1;
                summary.passed += u64::from(verdict.passed);
                on_episode(&lease, &verdict, run.as_ref());
            }
            Err(ClientError::Status(status)) if crate::retry::is_lease_expired(&status) => {
                tracing::warn!(run_id, plan_index = lease.plan_index, "lease expired mid-episode; another worker has it");
                summary.lost_leases += 1;
            }
            // Lost with a replica (`serve --durability finish`): its lease expires and it is played again.
            Err(ClientError::Status(status)) if status.code() == tonic::Code::DataLoss => {
                tracing::warn!(run_id, plan_index = lease.plan_index, %status, "episode lost with its replica; it will be played again");
                summary.lost_leases += 1;
            }
            Err(error) => return Err(error),
        }
    }
    Ok(summary)
}
