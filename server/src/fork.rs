//! `ForkEpisode`: a new live episode re-created after the first calls of a
//! recorded trajectory. The replay and its checks are the domain's
//! ([`toolenv_runs::fork`]); this only finds the source and registers the fork.

use toolenv::pb;
use toolenv_core::ForkError;

use crate::{error::Error, registry::Session, service::ToolEnvService};

impl ToolEnvService {
    /// Forks the request's source episode or trajectory after `calls` calls.
    pub(crate) fn fork_episode(&self, mut request: pb::ForkEpisodeRequest) -> Result<pb::Episode, Error> {
        crate::limits::text("episode_id", &request.episode_id, crate::limits::MAX_ID_BYTES)?;
        let in_band =
            crate::limits::known_enum::<pb::FaultDelivery>("fault_delivery", request.fault_delivery)? == pb::FaultDelivery::InBand;
        let trajectory = match (request.episode_id.is_empty(), request.trajectory.take()) {
            (false, None) => self.registry().trajectory(&request.episode_id)?,
            (true, Some(trajectory)) => trajectory,
            (false, Some(_)) => return Err(Error::invalid("trajectory", "give either episode_id or trajectory, not both")),
            (true, None) => return Err(Error::MissingField("episode_id")),
        };
        let time_scale = toolenv_runs::check_time_scale(request.time_scale.unwrap_or(self.config().time_scale))
            .map_err(|e| Error::invalid("time_scale", e.to_string()))?;
        let max_calls = self.config().max_calls_per_episode;
        let episode =
            toolenv_runs::fork::fork(&self.config().tasks, &trajectory, request.calls as usize, max_calls).map_err(
                |error| match error {
                    ForkError::UnknownTask(id) => Error::UnknownTask(id),
                    ForkError::PastEnd { .. } => Error::invalid("calls", error.to_string()),
                    other => Error::invalid("trajectory", other.to_string()),
                },
            )?;
        let reply = pb::Episode {
            episode_id: String::new(),
            task_id: episode.task().id.clone(),
            description: episode.description().to_owned(),
            tools: crate::team::tools(&episode),
            roles: episode.roles().iter().map(Into::into).collect(),
            today: episode.task().today.to_string(),
            max_calls: episode.max_calls(),
            fault_profile_json: trajectory.fault_profile_json.clone(),
            time_scale,
            answer_schema_json: toolenv::answer_schema_json(episode.task()),
        };
        let episode_id = self.registry().insert(Session::new(episode, in_band, time_scale, None))?;
        tracing::debug!(%episode_id, task_id = %reply.task_id, calls = request.calls, "episode forked");
        Ok(pb::Episode { episode_id, ..reply })
    }
}
