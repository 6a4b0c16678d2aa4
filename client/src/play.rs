//! Playing agents over gRPC: the one driver ([`play_created`]) that plays
//! any agent on a created episode through a [`RemoteEnv`] and finishes it,
//! [`play`] for one episode, and the run planner [`run_plan`] that plays a
//! grid's episodes concurrently. The hosted-run worker uses the same driver.

use std::sync::Arc;

use toolenv::pb;
use toolenv_agents::{Agent, AgentError, Briefing};
use toolenv_core::TaskRef;
use toolenv_runs::PlannedEpisode;
use toolenv_runs::metrics::EpisodeResult;

use crate::{Client, ClientError, RemoteEnv};

/// One episode played to its end.
#[derive(Debug, Clone)]
pub struct FinishedEpisode {
    /// The task played.
    pub task_id: String,
    /// The oracle's verdict.
    pub verdict: pb::Verdict,
    /// The whole trajectory, verdict included.
    pub trajectory: pb::Trajectory,
}

/// Plays one episode of `task_id` with an agent, over gRPC, with no faults.
pub async fn play_episode(
    client: &mut Client,
    agent: impl Into<Arc<dyn Agent>>,
    task_id: &str,
    seed: u64,
    trial: u32,
) -> Result<FinishedEpisode, ClientError> {
    play(client, agent, pb::CreateEpisodeRequest { task_id: task_id.to_owned(), seed, trial, ..Default::default() }).await
}

/// Plays one episode with an agent, over gRPC, as the request says (fault
/// profile, delivery, time scale); a team declares its roles unless the
/// request does.
///
/// A call the server rejects as malformed (the random agent makes some) is
/// part of the episode, not a failure of the run; so are injected faults.
/// Any other error status is.
pub async fn play(
    client: &mut Client,
    agent: impl Into<Arc<dyn Agent>>,
    request: pb::CreateEpisodeRequest,
) -> Result<FinishedEpisode, ClientError> {
    let tape_key = format!("{}/s{}-t{}-e{}", request.task_id, request.seed, request.trial, request.epsilon);
    play_keyed(client, agent.into(), request, tape_key).await
}

/// [`play`], with the key that names the episode in a recording of model exchanges.
async fn play_keyed(
    client: &mut Client,
    agent: Arc<dyn Agent>,
    mut request: pb::CreateEpisodeRequest,
    tape_key: String,
) -> Result<FinishedEpisode, ClientError> {
    let task = known_task(client, &*agent, &request.task_id).await?;
    if request.roles.is_empty() {
        request.roles = agent.roles().iter().map(pb::Role::from).collect();
    }
    let seed = request.seed;
    let episode = client.create(request).await?;
    let verdict = play_created(client, agent, task, &episode, seed, tape_key).await?;
    let trajectory = client.trajectory(&episode.episode_id).await?;
    Ok(FinishedEpisode { task_id: episode.task_id, verdict, trajectory })
}

/// The task of an id (the paper's, a generated one rebuilt from its id, or
/// one of the client's task files) when the agent needs it, or why it
/// cannot play it.
pub(crate) async fn known_task(client: &mut Client, agent: &dyn Agent, task_id: &str) -> Result<Option<TaskRef>, ClientError> {
    if !agent.needs_task() {
        return Ok(None);
    }
    match client.tasks().resolve(task_id) {
        Ok(task) => Ok(Some(task)),
        Err(_) => {
            // The server's NOT_FOUND says it best, if it does not know the task either.
            client.get_task(task_id).await?;
            Err(AgentError::UnknownTask(task_id.to_owned()).into())
        }
    }
}

/// The driver over gRPC: plays `agent` on an episode created already, on a
/// blocking thread through a [`RemoteEnv`], and finishes it with the
/// agent's answer, usage and conversation; returns the verdict. An
/// infrastructure error stops the episode unfinished.
pub(crate) async fn play_created(
    client: &mut Client,
    agent: Arc<dyn Agent>,
    task: Option<TaskRef>,
    episode: &pb::Episode,
    seed: u64,
    tape_key: String,
) -> Result<pb::Verdict, ClientError> {
    let briefing = Briefing::of(episode, task, seed, tape_key);
    let mut env = RemoteEnv::new(client.clone(), episode, agent.reads_in_band_text());
    let (env, played) = tokio::task::spawn_blocking(move || {
        let played = toolenv_agents::drive(&*agent, &briefing, &mut env);
        (env, played)
    })
    .await
    .map_err(|e| ClientError::Status(tonic::Status::internal(format!("the agent's thread ended abnormally: {e}"))))?;
    let (answer, answer_json) = env.into_answer()?;
    let played = played?;
    let request = pb::FinishEpisodeRequest {
        episode_id: episode.episode_id.clone(),
        usage: played.usage,
        answer,
        answer_json,
        conversation: played.conversation,
    };
    crate::retry::resent(|| {
        let (mut client, request) = (client.clone(), request.clone());
        async move { client.finish(request).await }
    })
    .await
}

/// Plays planned episodes concurrently (at most `concurrency` at once) and
/// returns their results in plan order, calling `on_result` as each ends with
/// its index in `plan`, its result and, when it reached the server's
/// trajectory, that trajectory (to store it; it is not kept). An episode that
/// fails for an infrastructure reason (the server, the network, a model
/// endpoint) is recorded as such, with no trajectory, not dropped. `agents`
/// finds the agent of each planned label (`toolenv_agents::builtin::agent`
/// for the built-in ones); a label it does not know is recorded as an
/// infrastructure error.
pub async fn run_plan(
    client: &Client,
    plan: &[PlannedEpisode],
    concurrency: usize,
    agents: &dyn Fn(&str) -> Option<Arc<dyn Agent>>,
    mut on_result: impl FnMut(usize, &EpisodeResult, Option<&pb::Trajectory>),
) -> Vec<EpisodeResult> {
    let semaphore = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, planned) in plan.iter().cloned().enumerate() {
        let mut client = client.clone();
        let semaphore = semaphore.clone();
        let agent = agents(&planned.agent);
        tasks.spawn(async move {
            let _permit = semaphore.acquire_owned().await;
            let played = match agent {
                Some(agent) => {
                    let request = &planned.request;
                    let tape_key = format!(
                        "{}/{}/s{}-t{}-e{}-{}",
                        planned.agent, request.task_id, request.seed, request.trial, request.epsilon, planned.fault_profile
                    );
                    play_keyed(&mut client, agent, planned.request.clone(), tape_key).await.map_err(|e| e.to_string())
                }
                None => Err(format!("'{}' is not a built-in agent", planned.agent)),
            };
            match played {
                Ok(outcome) => (index, planned.result(&outcome.trajectory), Some(outcome.trajectory)),
                Err(error) => (index, planned.infra_error(error), None),
            }
        });
    }
    let mut results: Vec<Option<EpisodeResult>> = vec![None; plan.len()];
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, result, trajectory)) => {
                on_result(index, &result, trajectory.as_ref());
                results[index] = Some(result);
            }
            Err(error) => tracing::error!(%error, "an episode task ended abnormally"),
        }
    }
    results
        .into_iter()
        .zip(plan)
        .map(|(result, planned)| result.unwrap_or_else(|| planned.infra_error("episode task panicked".into())))
        .collect()
}
