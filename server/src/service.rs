//! The `toolenv.v1.ToolEnv` service: thin handlers that validate, convert,
//! call the episode and convert back. Every decision is the domain's.

use std::sync::Arc;

use tonic::{Request, Response, Status};
use toolenv::pb;
use toolenv_domains::{CallError, Episode, suite};

use crate::Config;
use crate::error::Error;
use crate::registry::Registry;

/// The service implementation, cheap to clone.
#[derive(Debug, Clone)]
pub struct ToolEnvService {
    registry: Arc<Registry>,
    config: Arc<Config>,
}

impl ToolEnvService {
    pub(crate) fn new(config: Config) -> Self {
        Self { registry: Arc::new(Registry::new(config.max_episodes)), config: Arc::new(config) }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    fn task(&self, id: &str) -> Result<&'static toolenv_domains::Task, Error> {
        if id.is_empty() {
            return Err(Error::MissingField("task_id"));
        }
        toolenv_domains::task(id).ok_or_else(|| Error::UnknownTask(id.to_owned()))
    }
}

fn episode_id(id: &str) -> Result<&str, Error> {
    if id.is_empty() { Err(Error::MissingField("episode_id")) } else { Ok(id) }
}

#[tonic::async_trait]
impl pb::tool_env_server::ToolEnv for ToolEnvService {
    async fn list_tasks(&self, request: Request<pb::ListTasksRequest>) -> Result<Response<pb::ListTasksResponse>, Status> {
        let request = request.into_inner();
        let domain = pb::Domain::try_from(request.domain)
            .map_err(|_| Error::InvalidField { field: "domain", message: format!("unknown domain value {}", request.domain) })?
            .to_domain();
        if request.level > 2 {
            return Err(
                Error::InvalidField { field: "level", message: format!("levels are 1 and 2 (0 for all), got {}", request.level) }.into()
            );
        }
        let tasks = suite()
            .iter()
            .filter(|t| domain.is_none_or(|d| t.domain == d))
            .filter(|t| request.level == 0 || u32::from(t.level) == request.level)
            .map(Into::into)
            .collect();
        Ok(Response::new(pb::ListTasksResponse { tasks }))
    }

    async fn get_task(&self, request: Request<pb::GetTaskRequest>) -> Result<Response<pb::Task>, Status> {
        let task = self.task(&request.get_ref().task_id)?;
        Ok(Response::new(task.into()))
    }

    async fn create_episode(&self, request: Request<pb::CreateEpisodeRequest>) -> Result<Response<pb::Episode>, Status> {
        let request = request.into_inner();
        let task = self.task(&request.task_id)?;
        let episode = Episode::new(task, request.seed, request.trial).with_max_calls(self.config.max_calls_per_episode);
        let reply = pb::Episode {
            episode_id: String::new(),
            task_id: task.id.clone(),
            description: episode.description().to_owned(),
            tools: task.tools().iter().map(Into::into).collect(),
            today: task.today.to_string(),
            max_calls: episode.max_calls(),
        };
        let episode_id = self.registry.insert(episode)?;
        tracing::debug!(%episode_id, task_id = %task.id, seed = request.seed, trial = request.trial, "episode created");
        Ok(Response::new(pb::Episode { episode_id, ..reply }))
    }

    async fn call_tool(&self, request: Request<pb::CallToolRequest>) -> Result<Response<pb::CallToolResponse>, Status> {
        let request = request.into_inner();
        let id = episode_id(&request.episode_id)?;
        if request.tool_name.is_empty() {
            return Err(Error::MissingField("tool_name").into());
        }
        if request.arguments_json.len() > self.config.max_argument_bytes {
            let message = format!("arguments are larger than {} bytes", self.config.max_argument_bytes);
            return Err(Error::InvalidField { field: "arguments_json", message }.into());
        }
        let reply = self.registry.with(id, |episode| match episode.call(&request.tool_name, &request.arguments_json) {
            Ok(record) => Ok(pb::CallToolResponse::from(record)),
            Err(CallError::UnknownTool(tool)) => {
                let available = episode.task().tools().iter().map(|t| t.name).collect::<Vec<_>>().join(", ");
                Err(Error::UnknownTool { tool, available })
            }
            Err(CallError::InvalidArgument(arg)) => Err(Error::InvalidArguments(arg)),
            Err(CallError::Finished) => Err(Error::EpisodeFinished),
            Err(CallError::CallLimit(limit)) => Err(Error::CallLimit(limit)),
        })??;
        Ok(Response::new(reply))
    }

    async fn finish_episode(&self, request: Request<pb::FinishEpisodeRequest>) -> Result<Response<pb::Verdict>, Status> {
        let id = episode_id(&request.get_ref().episode_id)?;
        let verdict = self.registry.with(id, |episode| pb::Verdict::from(episode.finish()))?;
        tracing::debug!(episode_id = %id, passed = verdict.passed, "episode finished");
        Ok(Response::new(verdict))
    }

    async fn get_trajectory(&self, request: Request<pb::GetTrajectoryRequest>) -> Result<Response<pb::Trajectory>, Status> {
        let id = episode_id(&request.get_ref().episode_id)?;
        let trajectory = self.registry.with(id, |episode| pb::Trajectory::from(episode.trajectory()))?;
        Ok(Response::new(trajectory))
    }
}
