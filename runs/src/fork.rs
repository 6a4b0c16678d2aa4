//! Fork, replay and attribute recorded trajectories in their wire form (as a
//! run's store keeps them): the domain's [`Episode::fork`] with every
//! replayed call checked against its stored record, byte for byte.

use std::borrow::Cow;
use std::collections::BTreeMap;

use prost::Message;
use toolenv_core::{
    Episode, ForkError, ReplayCall, Source,
    chaos::FaultProfile,
    phrasing::{Applied, Relation},
};
use toolenv_domains::{Finish, attribution::Attribution, taskfile::Catalogue};

use toolenv::pb;

/// What a recorded trajectory was created with, its task found in `tasks`.
/// `max_calls` is the call limit it ran under (not recorded: the server's
/// `max_calls_per_episode`).
pub fn source(tasks: &Catalogue, trajectory: &pb::Trajectory, max_calls: u32) -> Result<Source, ForkError> {
    let task = tasks.resolve(&trajectory.task_id).map_err(|_| ForkError::UnknownTask(trajectory.task_id.clone()))?;
    let fault_profile: FaultProfile =
        serde_json::from_str(&trajectory.fault_profile_json).map_err(|e| ForkError::Malformed(format!("fault_profile_json: {e}")))?;
    let perturbations = trajectory
        .perturbations
        .iter()
        .map(|p| {
            let relation = Relation::from_name(&p.relation)
                .ok_or_else(|| ForkError::Malformed(format!("unknown perturbation relation '{}'", p.relation)))?;
            Ok(Applied { relation, params: p.params.clone() })
        })
        .collect::<Result<_, ForkError>>()?;
    Ok(Source {
        task,
        seed: trajectory.seed,
        trial: trajectory.trial,
        fault_profile,
        description: trajectory.description.clone(),
        epsilon: trajectory.epsilon,
        perturbations,
        max_calls: max_calls.max(trajectory.calls.len() as u32),
        roles: trajectory.roles.iter().map(pb::Role::to_domain).collect(),
        mas_profile: trajectory
            .mas_profile
            .as_ref()
            .map(pb::MasFaultProfile::to_domain)
            .transpose()
            .map_err(|e| ForkError::Malformed(format!("mas_profile: {e}")))?,
        prompt_faults: trajectory
            .prompt_faults
            .iter()
            .map(|i| serde_json::from_str(&i.detail_json).map_err(|e| ForkError::Malformed(format!("prompt_faults: {e}"))))
            .collect::<Result<_, _>>()?,
    })
}

/// The episode of a recorded trajectory after its first `steps` calls, each
/// replayed call's wire record checked against the stored one byte for byte.
pub fn fork(tasks: &Catalogue, trajectory: &pb::Trajectory, steps: usize, max_calls: u32) -> Result<Episode, ForkError> {
    let source = source(tasks, trajectory, max_calls)?;
    if steps > trajectory.calls.len() {
        return Err(ForkError::PastEnd { steps, recorded: trajectory.calls.len() });
    }
    let mut episode = Episode::recreate(&source)?;
    // The keys as the agent sent them, where the records keep them (a replica's log).
    let keys: BTreeMap<u32, &str> = trajectory.calls[..steps]
        .iter()
        .filter(|c| !c.idempotency_key.is_empty())
        .filter_map(|c| Some((c.idempotency_key_call?, c.idempotency_key.as_str())))
        .collect();
    for (index, recorded) in trajectory.calls[..steps].iter().enumerate() {
        let call = ReplayCall {
            tool: recorded.tool_name.clone(),
            arguments: recorded.arguments_json.clone(),
            idempotency_key_call: recorded.idempotency_key_call,
            idempotency_key: recorded.idempotency_key_call.and_then(|first| keys.get(&first)).map(|&key| key.to_owned()),
            waited_ms: recorded.waited_ms,
            agent: Some(recorded.agent_id.clone()).filter(|a| !a.is_empty()),
            role: Some(recorded.role.clone()).filter(|r| !r.is_empty()),
            user_answer: recorded.user_answer.clone(),
        };
        let replayed = pb::ToolCallRecord::from(episode.replay_call(&call).map_err(|error| ForkError::Refused { index, error })?);
        // The key is the log's, never a replay's: compared without it.
        let recorded = match recorded.idempotency_key.is_empty() {
            true => Cow::Borrowed(recorded),
            false => Cow::Owned(pb::ToolCallRecord { idempotency_key: String::new(), ..recorded.clone() }),
        };
        if replayed.encode_to_vec() != recorded.encode_to_vec() {
            let json = |r: &pb::ToolCallRecord| {
                let t = pb::Trajectory { calls: vec![r.clone()], ..Default::default() };
                t.to_json()["calls"][0].to_string()
            };
            return Err(ForkError::Diverged { index, expected: json(&recorded), actual: json(&replayed) });
        }
    }
    Ok(episode)
}

/// The episode of a recorded trajectory after all its calls, with the
/// answers it finished with (prose, typed, and a judge's ruling on the prose).
fn answered(tasks: &Catalogue, trajectory: &pb::Trajectory, max_calls: u32) -> Result<Episode, ForkError> {
    let mut episode = fork(tasks, trajectory, trajectory.calls.len(), max_calls)?;
    if let Some(answer) = &trajectory.answer {
        episode.answer(answer.as_str());
    }
    if let Some(typed) = &trajectory.answer_json {
        let typed = serde_json::from_str(typed).map_err(|e| ForkError::Malformed(format!("answer_json: {e}")))?;
        episode.answer_typed(typed);
    }
    if let Some(ruling) = &trajectory.answer_ruling {
        episode.rule_answer(ruling.to_domain());
    }
    Ok(episode)
}

/// Replays a whole finished trajectory and checks its verdict, byte for byte.
pub fn replay(tasks: &Catalogue, trajectory: &pb::Trajectory, max_calls: u32) -> Result<Episode, ForkError> {
    let mut episode = answered(tasks, trajectory, max_calls)?;
    let verdict = pb::Verdict::from(episode.finish_with_feasibility());
    if let Some(recorded) = &trajectory.verdict
        && recorded.encode_to_vec() != verdict.encode_to_vec()
    {
        let text = |v: &pb::Verdict| format!("{v:?}");
        return Err(ForkError::Diverged { index: trajectory.calls.len(), expected: text(recorded), actual: text(&verdict) });
    }
    Ok(episode)
}

/// Attributes a recorded episode: its calls replayed and checked, then
/// [`toolenv_domains::attribution::attribute`] on the replay. The replay's
/// end state must be the recorded one.
pub fn attribute(tasks: &Catalogue, trajectory: &pb::Trajectory, max_calls: u32) -> Result<Attribution, ForkError> {
    let source = source(tasks, trajectory, max_calls)?;
    let replayed = answered(tasks, trajectory, max_calls)?;
    let attribution = toolenv_domains::attribution::attribute(&source, replayed.trajectory())?;
    if let Some(recorded) = &trajectory.verdict
        && recorded.passed != attribution.passed
    {
        return Err(ForkError::Diverged {
            index: trajectory.calls.len(),
            expected: format!("passed: {}", recorded.passed),
            actual: format!("passed: {}", attribution.passed),
        });
    }
    Ok(attribution)
}
