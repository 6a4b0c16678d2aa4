//! The `toolenv.v1.ToolEnv` service: thin handlers that validate, convert,
//! call the episode and convert back. Every decision is the domain's.

use std::sync::Arc;

use tonic::{Request, Response, Status};
use toolenv::pb;
use toolenv_domains::perturb::{Level, perturb};
use toolenv_domains::{Episode, suite};

use crate::error::Error;
use crate::registry::{Registry, Session};
use crate::runs::{LeaseTag, RunHost};
use crate::{Config, fault, limits};

/// The service implementation, cheap to clone.
#[derive(Debug, Clone)]
pub struct ToolEnvService {
    registry: Arc<Registry>,
    config: Arc<Config>,
    runs: Arc<RunHost>,
}

impl ToolEnvService {
    pub(crate) fn new(config: Config, store: toolenv_runs::store::Store) -> Self {
        Self { registry: Arc::new(Registry::new(config.max_episodes)), config: Arc::new(config), runs: Arc::new(RunHost::new(store)) }
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn runs(&self) -> &RunHost {
        &self.runs
    }

    /// The suite's tasks of a domain (a `pb::Domain` value, 0 for all) and level (0 for all).
    pub(crate) fn tasks(&self, domain: i32, level: u32) -> Result<Vec<&'static toolenv_domains::Task>, Error> {
        let domain = limits::known_enum::<pb::Domain>("domain", domain)?.to_domain();
        if level > 2 {
            return Err(Error::invalid("level", format!("levels are 1 and 2 (0 for all), got {level}")));
        }
        Ok(suite().iter().filter(|t| domain.is_none_or(|d| t.domain == d)).filter(|t| level == 0 || u32::from(t.level) == level).collect())
    }

    /// Creates an episode as the request says; a leased one records its
    /// result in its run when finished.
    pub(crate) fn open_episode(&self, request: pb::CreateEpisodeRequest, lease: Option<LeaseTag>) -> Result<pb::Episode, Error> {
        let task = self.task(&request.task_id)?;
        let delivery: pb::FaultDelivery = limits::known_enum("fault_delivery", request.fault_delivery)?;
        if !request.epsilon.is_finite() {
            return Err(Error::invalid("epsilon", format!("must be a finite number, got {}", request.epsilon)));
        }
        let chaos = fault::chaos(request.fault_profile.as_ref(), &self.config.fault_profiles)?;
        let time_scale = toolenv_runs::check_time_scale(request.time_scale.unwrap_or(self.config.time_scale))
            .map_err(|e| Error::invalid("time_scale", e.to_string()))?;
        let level = Level::from_epsilon(request.epsilon).map_err(|e| Error::invalid("epsilon", e.to_string()))?;
        // The seed, not the trial: all k trials of a configuration read the same text.
        let perturbed = perturb(task, level, request.seed, self.config.paraphrases.as_deref());
        let in_band = delivery == pb::FaultDelivery::InBand;
        let fault_profile_json = serde_json::to_string(chaos.profile()).unwrap_or_default();
        let episode = Episode::new(task, request.seed, request.trial)
            .with_max_calls(self.config.max_calls_per_episode)
            .with_chaos(chaos)
            .with_perturbation(level, perturbed);
        let reply = pb::Episode {
            episode_id: String::new(),
            task_id: task.id.clone(),
            description: episode.description().to_owned(),
            tools: toolenv::tool_specs(task.domain).to_vec(),
            today: task.today.to_string(),
            max_calls: episode.max_calls(),
            fault_profile_json,
            time_scale,
        };
        let episode_id = self.registry.insert(Session::new(episode, in_band, time_scale, lease))?;
        tracing::debug!(%episode_id, task_id = %task.id, seed = request.seed, trial = request.trial, "episode created");
        Ok(pb::Episode { episode_id, ..reply })
    }

    fn task(&self, id: &str) -> Result<&'static toolenv_domains::Task, Error> {
        let id = limits::id("task_id", id)?;
        toolenv_domains::task(id).ok_or_else(|| Error::UnknownTask(id.to_owned()))
    }
}

fn episode_id(id: &str) -> Result<&str, Error> {
    limits::id("episode_id", id)
}

#[tonic::async_trait]
impl pb::tool_env_server::ToolEnv for ToolEnvService {
    async fn list_tasks(&self, request: Request<pb::ListTasksRequest>) -> Result<Response<pb::ListTasksResponse>, Status> {
        let request = request.into_inner();
        let tasks = self.tasks(request.domain, request.level)?.into_iter().map(Into::into).collect();
        Ok(Response::new(pb::ListTasksResponse { tasks }))
    }

    async fn get_task(&self, request: Request<pb::GetTaskRequest>) -> Result<Response<pb::Task>, Status> {
        let task = self.task(&request.get_ref().task_id)?;
        Ok(Response::new(task.into()))
    }

    async fn create_episode(&self, request: Request<pb::CreateEpisodeRequest>) -> Result<Response<pb::Episode>, Status> {
        Ok(Response::new(self.open_episode(request.into_inner(), None)?))
    }

    async fn call_tool(&self, request: Request<pb::CallToolRequest>) -> Result<Response<pb::CallToolResponse>, Status> {
        let request = request.into_inner();
        let id = episode_id(&request.episode_id)?;
        if request.tool_name.is_empty() {
            return Err(Error::MissingField("tool_name").into());
        }
        limits::text("tool_name", &request.tool_name, limits::MAX_NAME_BYTES)?;
        limits::text("idempotency_key", &request.idempotency_key, limits::MAX_KEY_BYTES)?;
        if request.arguments_json.len() > self.config.max_argument_bytes {
            let message = format!("arguments are larger than {} bytes", self.config.max_argument_bytes);
            return Err(Error::invalid("arguments_json", message).into());
        }
        let key = Some(request.idempotency_key.as_str()).filter(|k| !k.is_empty());
        let outgoing =
            self.registry.with_live(id, |session| session.call(&request.tool_name, &request.arguments_json, key, request.waited_ms))?;
        // The simulated delay, for real, with no lock held.
        if !outgoing.delay.is_zero() {
            tokio::time::sleep(outgoing.delay).await;
        }
        Ok(Response::new(outgoing.into_response()?))
    }

    async fn finish_episode(&self, request: Request<pb::FinishEpisodeRequest>) -> Result<Response<pb::Verdict>, Status> {
        let request = request.into_inner();
        let id = episode_id(&request.episode_id)?;
        if let Some(cost) = request.usage.as_ref().and_then(|u| u.cost_usd) {
            limits::figure("usage.cost_usd", cost)?;
        }
        let finished = self.registry.finish(id, |session| {
            if session.episode.verdict().is_none() {
                session.usage = request.usage;
            }
            let verdict = pb::Verdict::from(session.episode.finish());
            // A leased episode is recorded in its run once, at its first finish.
            Ok((verdict, session.lease.take()))
        });
        let (verdict, lease, trajectory) = match finished {
            Ok(((verdict, lease), trajectory)) => (verdict, lease, trajectory),
            // Finished before: the same verdict again, from what it keeps.
            Err(Error::EpisodeFinished) => {
                let verdict = self.registry.finished(id).and_then(|t| t.verdict).ok_or_else(|| Error::UnknownEpisode(id.to_owned()))?;
                (verdict, None, None)
            }
            Err(error) => return Err(error.into()),
        };
        tracing::debug!(episode_id = %id, passed = verdict.passed, "episode finished");
        if let (Some(lease), Some(trajectory)) = (lease, trajectory) {
            self.runs.record(lease, id, trajectory).await?;
        }
        Ok(Response::new(verdict))
    }

    async fn get_trajectory(&self, request: Request<pb::GetTrajectoryRequest>) -> Result<Response<pb::Trajectory>, Status> {
        let id = episode_id(&request.get_ref().episode_id)?;
        let trajectory = self.registry.trajectory(id)?;
        Ok(Response::new(trajectory))
    }
}
