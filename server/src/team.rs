//! Multi-agent episodes on the wire: the tools an episode offers (the bus
//! tools after the domain's) and agents joining under a role.

use toolenv::pb;
use toolenv_core::Episode;

use crate::{error::Error, registry::Session};

/// The tools an episode offers: its domain's, then the bus tools it has.
pub(crate) fn tools(episode: &Episode) -> Vec<pb::ToolSpec> {
    let mut tools = toolenv::tool_specs(episode.task().domain);
    tools.extend(episode.bus_tools().into_iter().map(pb::ToolSpec::from));
    tools
}

/// An agent joins a session's episode under `role`.
pub(crate) fn join(session: &mut Session, role: &str) -> Result<pb::JoinEpisodeResponse, Error> {
    let record = match session.episode.join(role) {
        Ok(record) => record,
        Err(error) => return Err(session.refusal(error)),
    };
    let reply = match &record.outcome {
        toolenv_core::Outcome::Result(text) => {
            serde_json::from_str::<serde_json::Value>(text).map_err(|_| Error::Internal("join reply"))?
        }
        _ => return Err(Error::Internal("join reply")),
    };
    let text = |key: &str| reply.get(key).and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
    Ok(pb::JoinEpisodeResponse {
        agent_id: text("agent_id"),
        role: text("role"),
        system_prompt: text("system_prompt"),
        description: text("description"),
        tools: tools(&session.episode),
    })
}

/// A live episode as a lease shows it (for a worker joining an episode
/// another worker opened).
pub(crate) fn episode_message(episode_id: &str, session: &Session) -> pb::Episode {
    let episode = &session.episode;
    let trajectory = episode.trajectory();
    pb::Episode {
        episode_id: episode_id.to_owned(),
        task_id: trajectory.task_id.clone(),
        description: episode.description().to_owned(),
        tools: tools(episode),
        today: trajectory.today.clone(),
        max_calls: episode.max_calls(),
        fault_profile_json: serde_json::to_string(&trajectory.fault_profile).unwrap_or_default(),
        time_scale: session.time_scale,
        roles: episode.roles().iter().map(Into::into).collect(),
        answer_schema_json: toolenv::answer_schema_json(episode.task()),
    }
}
