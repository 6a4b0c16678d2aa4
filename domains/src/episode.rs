//! An episode: one attempt at one task, with its own world and call log.
//!
//! Everything here is a pure function of the task, the episode parameters and
//! the sequence of calls: the same inputs give the same trajectory, byte for
//! byte, whatever else runs at the same time.

use serde::Serialize;
use serde_json::Value;

use crate::json;
use crate::oracle::Verdict;
use crate::task::Task;
use crate::tool::{ArgError, DomainError};
use crate::world::World;

/// Default for the most calls an episode accepts.
pub const DEFAULT_MAX_CALLS: u32 = 200;

/// Most bytes of a rejected call's argument text kept in the trajectory.
const MAX_RECORDED_INVALID_BYTES: usize = 1024;
/// Most bytes of an unknown tool's name kept in the trajectory.
const MAX_RECORDED_TOOL_NAME_BYTES: usize = 128;

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// What one call produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool's result.
    Result(Value),
    /// A broken business rule; the state did not change.
    Error(DomainError),
    /// A malformed call (unknown tool, bad arguments), rejected before the tool ran.
    Invalid(ArgError),
}

/// One call as the episode saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRecord {
    /// 0-based index within the episode.
    pub index: u32,
    /// The tool's name as sent.
    pub tool: String,
    /// The arguments: canonical JSON for a valid call, the text as sent
    /// (cut to 1 KiB) for a rejected one; an unknown tool's name is cut to 128 bytes.
    pub arguments: String,
    /// What the call produced.
    pub outcome: Outcome,
    /// Whether the call changed the state.
    pub state_changed: bool,
}

/// Why a call did not reach the episode's tools.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The tool is not one of the episode's tools. Recorded in the trajectory.
    #[error("unknown tool '{0}'")]
    UnknownTool(String),
    /// The arguments are malformed. Recorded in the trajectory.
    #[error("invalid argument {0}")]
    InvalidArgument(ArgError),
    /// The episode is finished and accepts no more calls.
    #[error("episode is finished")]
    Finished,
    /// The episode has had as many calls as it accepts.
    #[error("episode reached its limit of {0} calls")]
    CallLimit(u32),
}

/// The ordered record of an episode: no ids, no clock readings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trajectory {
    /// The task played.
    pub task_id: String,
    /// The episode's seed.
    pub seed: u64,
    /// The episode's trial index.
    pub trial: u32,
    /// The description the agent was given.
    pub description: String,
    /// The episode's "today".
    pub today: String,
    /// Every call that reached the episode, in order.
    pub calls: Vec<CallRecord>,
    /// The verdict, once finished.
    pub verdict: Option<Verdict>,
}

/// One attempt at one task.
#[derive(Debug, Clone)]
pub struct Episode {
    task: &'static Task,
    world: World,
    max_calls: u32,
    trajectory: Trajectory,
}

impl Episode {
    /// Starts an episode of `task` from a fresh copy of its initial state.
    pub fn new(task: &'static Task, seed: u64, trial: u32) -> Self {
        Self {
            task,
            world: task.initial.clone(),
            max_calls: DEFAULT_MAX_CALLS,
            trajectory: Trajectory {
                task_id: task.id.clone(),
                seed,
                trial,
                description: task.description(),
                today: task.today.to_string(),
                calls: Vec::new(),
                verdict: None,
            },
        }
    }

    /// Sets the most calls the episode accepts.
    pub fn with_max_calls(mut self, max_calls: u32) -> Self {
        self.max_calls = max_calls;
        self
    }

    /// The task being played.
    pub fn task(&self) -> &'static Task {
        self.task
    }

    /// The description the agent is given.
    pub fn description(&self) -> &str {
        &self.trajectory.description
    }

    /// The most calls the episode accepts.
    pub fn max_calls(&self) -> u32 {
        self.max_calls
    }

    /// The current state as JSON.
    pub fn state(&self) -> Value {
        self.world.to_json()
    }

    /// The trajectory so far.
    pub fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    /// The verdict, once finished.
    pub fn verdict(&self) -> Option<&Verdict> {
        self.trajectory.verdict.as_ref()
    }

    /// Calls one tool with JSON argument text (empty text means `{}`).
    ///
    /// A broken business rule is an `Ok` record with an [`Outcome::Error`].
    /// A malformed call is recorded and returned as an error; calls after
    /// finishing or past the limit are returned as errors and not recorded.
    pub fn call(&mut self, tool: &str, arguments: &str) -> Result<&CallRecord, CallError> {
        if self.trajectory.verdict.is_some() {
            return Err(CallError::Finished);
        }
        if self.trajectory.calls.len() >= self.max_calls as usize {
            return Err(CallError::CallLimit(self.max_calls));
        }
        let index = self.trajectory.calls.len() as u32;
        let Some(spec) = self.task.domain.tool(tool) else {
            let error = CallError::UnknownTool(tool.to_owned());
            self.record_invalid(tool, arguments, ArgError::new("tool_name", error.to_string()));
            return Err(error);
        };
        let args = match spec.parse_arguments(arguments) {
            Ok(args) => args,
            Err(error) => {
                self.record_invalid(tool, arguments, error.clone());
                return Err(CallError::InvalidArgument(error));
            }
        };
        let (result, state_changed) = self.world.apply(spec, &args, &self.task.context());
        let outcome = match result {
            Ok(value) => Outcome::Result(value),
            Err(error) => Outcome::Error(error),
        };
        let arguments = json::canonical(&Value::Object(args.as_map().clone()));
        self.trajectory.calls.push(CallRecord { index, tool: tool.to_owned(), arguments, outcome, state_changed });
        Ok(&self.trajectory.calls[index as usize])
    }

    fn record_invalid(&mut self, tool: &str, arguments: &str, error: ArgError) {
        self.trajectory.calls.push(CallRecord {
            index: self.trajectory.calls.len() as u32,
            tool: cut(tool, MAX_RECORDED_TOOL_NAME_BYTES).to_owned(),
            arguments: cut(arguments, MAX_RECORDED_INVALID_BYTES).to_owned(),
            outcome: Outcome::Invalid(error),
            state_changed: false,
        });
    }

    /// Finishes the episode and judges its end state. Finishing again
    /// returns the same verdict.
    pub fn finish(&mut self) -> &Verdict {
        let task = self.task;
        let world = &self.world;
        self.trajectory.verdict.get_or_insert_with(|| Verdict::judge(task, &task.initial.to_json(), &world.to_json()))
    }
}
