//! Multi-agent episodes from the client: joining under a role, calls as an
//! agent, and the built-in teams (`team-pipeline`, `team-closed-loop`)
//! played over gRPC.

use toolenv::pb;
use toolenv_domains::masfire::team::{TeamEnv, Topology};
use toolenv_domains::solver::{Env, Observation, Request};

use crate::{Client, ClientError, RemoteEnv};

impl Client {
    /// Joins a multi-agent episode under `role`: the agent's id, its system
    /// prompt, the description and the tools.
    pub async fn join_episode(&mut self, episode_id: &str, role: &str) -> Result<pb::JoinEpisodeResponse, ClientError> {
        let request = pb::JoinEpisodeRequest { episode_id: episode_id.to_owned(), role: role.to_owned() };
        Ok(self.inner.join_episode(request).await?.into_inner())
    }

    /// Calls one tool as an agent of a multi-agent episode (`agent_id` from
    /// [`Client::join_episode`]; empty for none), as [`Client::call_tool_after`] does.
    pub async fn call_tool_as(
        &mut self,
        agent_id: &str,
        episode_id: &str,
        tool_name: &str,
        arguments_json: &str,
        idempotency_key: Option<&str>,
        waited_ms: Option<u64>,
    ) -> Result<pb::CallToolResponse, ClientError> {
        let request = pb::CallToolRequest {
            episode_id: episode_id.to_owned(),
            tool_name: tool_name.to_owned(),
            arguments_json: arguments_json.to_owned(),
            idempotency_key: idempotency_key.unwrap_or_default().to_owned(),
            waited_ms,
            agent_id: agent_id.to_owned(),
        };
        Ok(self.inner.call_tool(request).await?.into_inner())
    }
}

impl TeamEnv for RemoteEnv {
    fn join(&mut self, role: &str) -> Result<String, String> {
        if self.error.is_some() {
            return Err("stopped after an infrastructure error".into());
        }
        let mut client = self.client.clone();
        match self.runtime.block_on(client.join_episode(&self.episode_id, role)) {
            Ok(reply) => Ok(reply.agent_id),
            Err(ClientError::Status(status)) if status.code() != tonic::Code::Unavailable && status.code() != tonic::Code::Internal => {
                Err(status.message().to_owned())
            }
            Err(error) => {
                let message = error.to_string();
                self.error = Some(error);
                Err(message)
            }
        }
    }

    fn call_as(&mut self, agent: &str, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        agent.clone_into(&mut self.agent_id);
        Env::call(self, tool, arguments_json, request)
    }
}

/// Plays an episode with a built-in team: the same policy as in-process,
/// each agent's calls made over gRPC under its own agent id, from a blocking thread.
pub(crate) async fn play_remote(
    client: &Client,
    task: &toolenv_domains::TaskRef,
    topology: Topology,
    episode: &pb::Episode,
    time_scale: f64,
) -> Result<Option<String>, ClientError> {
    let task = task.clone();
    let mut env = RemoteEnv {
        client: client.clone(),
        runtime: tokio::runtime::Handle::current(),
        episode_id: episode.episode_id.clone(),
        time_scale,
        error: None,
        agent_id: String::new(),
        answer: None,
    };
    let env = tokio::task::spawn_blocking(move || {
        // Giving up is an outcome of the episode, judged by its verdict.
        let _ = toolenv_domains::masfire::team::play(&task, topology, &mut env);
        env
    })
    .await
    .map_err(|e| ClientError::Status(tonic::Status::internal(format!("the team's thread ended abnormally: {e}"))))?;
    env.error.map_or(Ok(env.answer), Err)
}
