//! Fork and replay: an episode re-created after the first calls of a recorded
//! trajectory, with the state, fault-schedule position, persistent fault
//! states and virtual clock exactly those the recording had at that point.
//!
//! An episode is a pure function of (task, seed, trial, fault profile, calls,
//! declared waits, which calls shared an idempotency key), so a fork is a
//! replay of those calls from creation. Each replayed call must reproduce its
//! record byte for byte; one that does not is a [`ForkError::Diverged`] naming
//! the call and both records, never a silently different episode.

use serde_json::json;

use super::roles::{RoleSpec, TeamError};
use super::{CallError, CallOptions, CallRecord, Episode, Trajectory};
use crate::{
    chaos::{Chaos, FaultProfile, ProfileError},
    masfire::{Injection, MasProfile},
    phrasing::Applied,
    task::TaskRef,
};

/// The idempotency key a replay sends for the calls that shared the key of
/// call `first`: a forked episode knows its recorded writes' keys by these names.
pub fn replay_key(first: u32) -> String {
    format!("call-{first}")
}

/// What an episode was created with: enough to create it again.
#[derive(Debug, Clone)]
pub struct Source {
    /// The task played.
    pub task: TaskRef,
    /// The episode's seed.
    pub seed: u64,
    /// The episode's trial index.
    pub trial: u32,
    /// The fault profile it ran under.
    pub fault_profile: FaultProfile,
    /// The description the agent was given.
    pub description: String,
    /// The perturbation level ε of the description.
    pub epsilon: f64,
    /// The relations applied to the description.
    pub perturbations: Vec<Applied>,
    /// The most calls the episode accepts.
    pub max_calls: u32,
    /// The roles of a multi-agent episode (empty for a single agent).
    pub roles: Vec<RoleSpec>,
    /// The MAS-FIRE profile it ran under, if any.
    pub mas_profile: Option<MasProfile>,
    /// The MAS-FIRE faults injected into its description at creation.
    pub prompt_faults: Vec<Injection>,
}

impl Source {
    /// The source of a recorded trajectory of `task` (the call limit is not
    /// recorded: the default, or the recorded call count if larger).
    pub fn of(task: impl Into<TaskRef>, trajectory: &Trajectory) -> Self {
        Self {
            task: task.into(),
            seed: trajectory.seed,
            trial: trajectory.trial,
            fault_profile: trajectory.fault_profile.clone(),
            description: trajectory.description.clone(),
            epsilon: trajectory.epsilon,
            perturbations: trajectory.perturbations.clone(),
            max_calls: super::DEFAULT_MAX_CALLS.max(trajectory.calls.len() as u32),
            roles: trajectory.roles.clone(),
            mas_profile: trajectory.mas_profile.clone(),
            prompt_faults: trajectory.prompt_faults.clone(),
        }
    }

    /// The description before the MAS-FIRE prompt faults changed it: each
    /// recorded change undone, so that the team re-applies it.
    fn description_before_prompt_faults(&self) -> String {
        let mut description = self.description.clone();
        for injection in self.prompt_faults.iter().rev() {
            match injection {
                Injection::InstructionLogicConflict { constraint, .. } => {
                    if let Some(before) = description.strip_suffix(constraint.as_str()) {
                        description = before.trim_end().to_owned();
                    }
                }
                Injection::InstructionAmbiguity { withheld, vague, .. } => description = description.replace(vague.as_str(), withheld),
                _ => {}
            }
        }
        description
    }
}

/// One recorded call as a replay makes it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayCall {
    /// The tool's name as sent.
    pub tool: String,
    /// The argument text as recorded.
    pub arguments: String,
    /// The first call that sent this call's idempotency key, if it had one.
    pub idempotency_key_call: Option<u32>,
    /// That key as the agent sent it, when known (a replica's durable log
    /// keeps it); otherwise the replay sends [`replay_key`] of the first call.
    pub idempotency_key: Option<String>,
    /// Virtual milliseconds waited before the call.
    pub waited_ms: u64,
    /// The agent that made it, in a multi-agent episode.
    pub agent: Option<String>,
    /// That agent's role (what a `join` joined as).
    pub role: Option<String>,
    /// The user's answer to an `ask_user` turn, when it was supplied from outside.
    pub user_answer: Option<String>,
}

impl From<&CallRecord> for ReplayCall {
    fn from(record: &CallRecord) -> Self {
        Self {
            tool: record.tool.to_string(),
            arguments: record.arguments.clone(),
            idempotency_key_call: record.idempotency_key_call,
            idempotency_key: None,
            waited_ms: record.waited_ms,
            agent: record.agent().map(str::to_owned),
            role: record.role().map(str::to_owned),
            user_answer: record.user_answer().map(str::to_owned),
        }
    }
}

/// Why an episode could not be forked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ForkError {
    /// The recorded task is not one this build knows.
    #[error("unknown task '{0}'")]
    UnknownTask(String),
    /// The recorded fault profile is not valid.
    #[error("the recorded fault profile is invalid: {0}")]
    Profile(#[from] ProfileError),
    /// The recording is not well formed (e.g. its fault profile is not JSON).
    #[error("the recording is malformed: {0}")]
    Malformed(String),
    /// The recorded roles or MAS-FIRE profile are not valid.
    #[error("the recorded team cannot be re-created: {0}")]
    Team(#[from] TeamError),
    /// The fork point lies past the recorded calls.
    #[error("cannot fork after {steps} calls: the trajectory has {recorded}")]
    PastEnd {
        /// Calls asked for.
        steps: usize,
        /// Calls recorded.
        recorded: usize,
    },
    /// A replayed call was refused before reaching the episode.
    #[error("call {index} could not be replayed: {error}")]
    Refused {
        /// The call's index.
        index: usize,
        /// Why the episode refused it.
        error: CallError,
    },
    /// A replayed call did not reproduce its record: the recording does not
    /// come from this build's episode (another version, another call limit,
    /// or an edited file).
    #[error("call {index} diverged from its record: expected {expected}, replayed {actual}")]
    Diverged {
        /// The call's index (or the call count, for the verdict).
        index: usize,
        /// The recorded call (or verdict), as JSON.
        expected: String,
        /// The replayed one, as JSON.
        actual: String,
    },
}

impl Episode {
    /// A fresh episode as `source` was created: no calls made yet.
    pub fn recreate(source: &Source) -> Result<Episode, ForkError> {
        let chaos = Chaos::new(source.fault_profile.clone())?;
        let mut episode = Episode::new(&source.task, source.seed, source.trial).with_max_calls(source.max_calls).with_chaos(chaos);
        if source.roles.is_empty() && source.mas_profile.is_none() {
            episode.trajectory.description.clone_from(&source.description);
        } else {
            // The team re-applies its prompt faults to the description they met.
            episode.trajectory.description = source.description_before_prompt_faults();
            episode = episode.with_team(source.roles.clone(), source.mas_profile.clone())?;
            if episode.trajectory.description != source.description || episode.trajectory.prompt_faults != source.prompt_faults {
                return Err(ForkError::Diverged {
                    index: 0,
                    expected: json!({"description": source.description, "prompt_faults": source.prompt_faults}).to_string(),
                    actual: json!({"description": episode.trajectory.description, "prompt_faults": episode.trajectory.prompt_faults})
                        .to_string(),
                });
            }
        }
        episode.trajectory.epsilon = source.epsilon;
        episode.trajectory.perturbations.clone_from(&source.perturbations);
        Ok(episode)
    }

    /// Makes one recorded call again, with its recorded wait and its
    /// idempotency key (as the agent sent it when known, else as
    /// [`replay_key`] names it) and its supplied user answer, if any, and returns its new record.
    /// A call the tools reject as malformed is recorded, as it was the first time.
    pub fn replay_call(&mut self, call: &ReplayCall) -> Result<&CallRecord, CallError> {
        let key = call.idempotency_key.clone().or_else(|| call.idempotency_key_call.map(replay_key));
        let options = CallOptions {
            agent: call.agent.as_deref(),
            idempotency_key: key.as_deref(),
            waited_ms: Some(call.waited_ms),
            user_answer: call.user_answer.as_deref(),
        };
        let index = self.trajectory.calls.len();
        if call.tool == super::bus::JOIN
            && let Some(role) = &call.role
        {
            self.join(role)?;
            return Ok(&self.trajectory.calls[index]);
        }
        match self.call_with(&call.tool, &call.arguments, &options) {
            Ok(_) | Err(CallError::UnknownTool(_) | CallError::InvalidArgument(_)) => Ok(&self.trajectory.calls[index]),
            Err(error) => Err(error),
        }
    }

    /// The episode of a recorded trajectory after its first `steps` calls,
    /// each checked against its record; ready for more calls.
    pub fn fork(source: &Source, calls: &[CallRecord], steps: usize) -> Result<Episode, ForkError> {
        if steps > calls.len() {
            return Err(ForkError::PastEnd { steps, recorded: calls.len() });
        }
        let mut episode = Episode::recreate(source)?;
        for (index, recorded) in calls[..steps].iter().enumerate() {
            let replayed = episode.replay_call(&ReplayCall::from(recorded)).map_err(|error| ForkError::Refused { index, error })?;
            if replayed != recorded {
                return Err(ForkError::Diverged { index, expected: record_json(recorded), actual: record_json(replayed) });
            }
        }
        Ok(episode)
    }

    /// Replays a whole finished trajectory and checks that the judgement
    /// (finished with `assess`) is the recorded one, byte for byte.
    pub fn replay_finished(source: &Source, trajectory: &Trajectory, assess: &dyn super::Assess) -> Result<Episode, ForkError> {
        let mut episode = Episode::fork(source, &trajectory.calls, trajectory.calls.len())?;
        let verdict = episode.finish_with(assess);
        if let Some(recorded) = &trajectory.verdict
            && recorded != verdict
        {
            let as_json = |v| serde_json::to_string(v).unwrap_or_default();
            return Err(ForkError::Diverged { index: trajectory.calls.len(), expected: as_json(recorded), actual: as_json(verdict) });
        }
        Ok(episode)
    }

    /// The same episode for a counterfactual continuation: its finish does
    /// not decide feasibility (no solver replay inside a replay), and with
    /// `spare_suspension` it draws no HardRateLimit from now on and any
    /// suspension is lifted.
    pub fn counterfactual(&self, spare_suspension: bool) -> Episode {
        let mut episode = self.clone();
        episode.records_verdict = false;
        episode.act_for_team();
        if spare_suspension {
            // A team's MAS-FIRE faults are spared too: no more are drawn.
            if let Some(team) = episode.team.as_deref_mut() {
                team.profile = None;
            }
            episode.faults.spare_suspension = true;
            episode.faults.suspended = false;
        }
        episode
    }
}

fn record_json(record: &CallRecord) -> String {
    serde_json::to_string(record).unwrap_or_else(|e| json!({"unserializable": e.to_string()}).to_string())
}
