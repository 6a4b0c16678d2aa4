//! `NextEpisode` of a hosted run when replicas share a PostgreSQL store: a
//! plan entry is claimed in the database (`FOR UPDATE SKIP LOCKED`), not in
//! this server's memory, so no two replicas hand out the same entry while
//! its lease lives; the episode is created here, logged with its plan entry
//! (any replica can rebuild it and record its verdict) and leased to it.
//!
//! A lease is renewed by every logged call; one older than the run's lease
//! timeout is claimed again by the next worker. The old episode is not
//! revoked across replicas: if both finish, the first verdict stands (the
//! store's key) and the second is dropped, so a plan entry still has
//! exactly one verdict.

use std::sync::Arc;
use std::time::Duration;

use toolenv::pb;
use toolenv_store::postgres::Claim;

use super::Replica;
use crate::error::Error;
use crate::runs::{LeaseTag, Queue};
use crate::service::ToolEnvService;

/// Longest a `NextEpisode` waits while every remaining entry is leased.
const LONG_POLL: Duration = Duration::from_secs(5);

/// How often a waiting `NextEpisode` claims again.
const POLL: Duration = Duration::from_millis(100);

impl Replica {
    /// The next episode of `queue`'s run for `agent` (any when empty).
    pub(crate) async fn next_episode(
        &self,
        env: &ToolEnvService,
        queue: &Arc<Queue>,
        agent: &str,
        worker: &str,
    ) -> Result<pb::NextEpisodeResponse, Error> {
        let run = queue.run.to_string();
        let deadline = tokio::time::Instant::now() + LONG_POLL;
        let index = loop {
            match self.store.claim(run.clone(), agent.to_owned(), queue.lease_timeout).await.map_err(Error::store)? {
                Claim::Slot(index) if index < queue.plan.len() => break index,
                Claim::Slot(index) => return Err(Error::Store(format!("run {run} has no planned episode {index}"))),
                Claim::Busy(left) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(left.min(POLL)).await;
                }
                Claim::Busy(left) => {
                    let retry_after_ms = left.clamp(Duration::from_millis(50), Duration::from_secs(1)).as_millis() as u64;
                    return Ok(pb::NextEpisodeResponse { lease: None, run: Some(queue.progress()), retry_after_ms });
                }
                Claim::Done => return Ok(pb::NextEpisodeResponse { lease: None, run: Some(queue.progress()), retry_after_ms: 0 }),
            }
        };
        let planned = &queue.plan[index];
        let tag = LeaseTag { queue: queue.clone(), index };
        let created = match env.open_episode(planned.request.clone(), Some(tag)) {
            Ok(episode) => match self.created(env.registry(), &episode.episode_id).await {
                Ok(()) => Ok(episode),
                Err(error) => Err(error),
            },
            Err(error) => Err(error),
        };
        let episode = match created {
            Ok(episode) => episode,
            Err(error) => {
                let _ = self.store.release(run, index).await;
                return Err(error);
            }
        };
        self.store.lease_to(run.clone(), index, episode.episode_id.clone()).await.map_err(Error::store)?;
        tracing::debug!(%run, index, %worker, episode_id = %episode.episode_id, "episode leased (shared store)");
        let lease = pb::Lease {
            episode: Some(episode),
            plan_index: index as u64,
            agent: planned.agent.clone(),
            lease_timeout_ms: queue.lease_timeout.as_millis() as u64,
        };
        Ok(pb::NextEpisodeResponse { lease: Some(lease), run: Some(queue.progress()), retry_after_ms: 0 })
    }
}
