//! A worker for runs hosted by a server: leases episodes one at a time,
//! plays each with a built-in agent, and finishes it, which records its
//! verdict in the run. Many workers, in this process or others, in Rust or
//! any other language, can share a run.

use std::time::Duration;

use toolenv::pb;

use crate::{Agent, Client, ClientError, known_task, play_created};

/// The agent a worker plays with.
#[derive(Debug, Clone)]
pub enum WorkAgent {
    /// A built-in agent that needs no model.
    Builtin(Agent),
    /// An LLM agent (`react@MODEL`, `reflexion@MODEL`).
    Llm(Box<crate::llm::LlmAgent>),
}

impl WorkAgent {
    /// The agent's default label: its name, or `architecture@model`.
    pub fn label(&self) -> String {
        match self {
            WorkAgent::Builtin(agent) => agent.name().to_owned(),
            WorkAgent::Llm(llm) => format!("{}@{}", llm.architecture.name(), llm.model),
        }
    }
}

impl From<Agent> for WorkAgent {
    fn from(agent: Agent) -> Self {
        WorkAgent::Builtin(agent)
    }
}

/// What a worker did before it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkSummary {
    /// Episodes played and finished.
    pub played: u64,
    /// Of those, how many passed.
    pub passed: u64,
    /// Episodes lost because their lease expired while playing.
    pub lost_leases: u64,
}

/// Plays episodes of a hosted run with a built-in agent until none is left
/// for `label` (every episode planned for that label has a verdict), calling
/// `on_episode` after each with its lease, verdict and the run's progress.
///
/// An episode whose lease expired mid-play (the server handed it to another
/// worker) is dropped and counted in [`WorkSummary::lost_leases`]; any other
/// error ends the worker.
pub async fn work(
    client: &mut Client,
    run_id: &str,
    agent: impl Into<WorkAgent>,
    label: &str,
    worker: &str,
    mut on_episode: impl FnMut(&pb::Lease, &pb::Verdict, Option<&pb::Run>),
) -> Result<WorkSummary, ClientError> {
    let agent = agent.into();
    let mut summary = WorkSummary::default();
    loop {
        let request =
            pb::NextEpisodeRequest { run_id: run_id.to_owned(), agent: label.to_owned(), worker: worker.to_owned(), role: String::new() };
        let reply = client.runs().next_episode(request).await?.into_inner();
        let Some(lease) = reply.lease else {
            if reply.retry_after_ms == 0 {
                return Ok(summary);
            }
            tokio::time::sleep(Duration::from_millis(reply.retry_after_ms)).await;
            continue;
        };
        let episode = lease.episode.clone().unwrap_or_default();
        let played = async {
            match &agent {
                WorkAgent::Builtin(agent) => {
                    let task = known_task(client, &episode.task_id).await?;
                    // The random agent's seed: the plan entry, so that replays agree.
                    let answer = play_created(client, *agent, &task, lease.plan_index, &episode).await?;
                    client.finish_episode_answering(&episode.episode_id, None, answer).await
                }
                // An endpoint that keeps failing stops the worker: the
                // episode's lease expires and it is played again, never
                // scored as the agent's failure.
                WorkAgent::Llm(llm) => {
                    let tape_key = format!("{label}/{run_id}/{}", lease.plan_index);
                    crate::llm::play_created(client, llm, &episode, &tape_key).await.map_err(|error| match error {
                        crate::llm::LlmError::Client(error) => error,
                        crate::llm::LlmError::Endpoint(error) => ClientError::Model(error.to_string()),
                    })
                }
            }
        };
        match played.await {
            Ok(verdict) => {
                summary.played += 1;
                summary.passed += u64::from(verdict.passed);
                on_episode(&lease, &verdict, reply.run.as_ref());
            }
            Err(ClientError::Status(status)) if is_lease_expired(&status) => {
                tracing::warn!(run_id, plan_index = lease.plan_index, "lease expired mid-episode; another worker has it");
                summary.lost_leases += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

fn is_lease_expired(status: &tonic::Status) -> bool {
    use tonic_types::StatusExt;
    status.code() == tonic::Code::FailedPrecondition && status.get_details_error_info().is_some_and(|info| info.reason == "LEASE_EXPIRED")
}
