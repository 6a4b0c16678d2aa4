//! What an episode records: one [`CallRecord`] per call that reached it,
//! in its [`Trajectory`], and the [`CallError`] of a call that did not.

use std::borrow::Cow;

use serde::Serialize;

use super::{Judgement, RoleSpec, UserCall};
use crate::{chaos::FaultKind, delivery::Outcome, tool::ArgError};

/// The fault that met a call and took effect: the ledger's ground truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FaultRecord {
    /// The fault.
    pub kind: FaultKind,
    /// True when drawn on this call; false when a persistent fault state
    /// (suspension, cascade, rate-limit window) carried over.
    pub new: bool,
    /// Whether a retry or a later call can still succeed.
    pub recoverable: bool,
}

/// One call as the episode saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRecord {
    /// 0-based index within the episode.
    pub index: u32,
    /// The tool's name as sent (a known tool's without an allocation of its own).
    pub tool: Cow<'static, str>,
    /// The arguments: canonical JSON for a valid call, the text as sent
    /// (cut to 1 KiB) for a rejected one; an unknown tool's name is cut to 128 bytes.
    pub arguments: String,
    /// What reached the agent.
    pub outcome: Outcome,
    /// Whether the call changed the state.
    pub state_changed: bool,
    /// The fault that met the call and took effect, if any.
    pub fault: Option<FaultRecord>,
    /// A fault drawn for the call that had no effect (a stale read with no
    /// older state that differs, drift on a business error, …): recorded as
    /// drawn, never counted as injected nor noted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drawn_without_effect: Option<FaultKind>,
    /// Simulated delay before the reply, in milliseconds (before time scaling).
    pub delay_ms: u64,
    /// Virtual milliseconds the agent waited between the previous reply and
    /// this call, as the episode counted them (declared, or measured on the
    /// real clock divided by the time scale): with the calls, what makes a
    /// replay exact.
    pub waited_ms: u64,
    /// The index of the first call that sent this write's idempotency key
    /// (its own index when the key was new); none without a key or on a
    /// read. Keys themselves are the agent's (they may hold ids), so the
    /// trajectory keeps which calls shared one: all a replay needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key_call: Option<u32>,
    /// Who called, the MAS-FIRE faults and the user's turn, when the call
    /// has any: see the accessors.
    #[serde(flatten)]
    pub(super) extra: Option<Box<CallExtra>>,
}

/// What only some calls have, kept apart so that a plain call's record
/// stays small: every record lives as long as its episode, and fresh memory
/// per call is what a busy server pays most for (see docs/benchmarks.md).
/// Written into the record's JSON as its own fields, as before.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(super) struct CallExtra {
    /// The calling agent's id, in a multi-agent episode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) agent: Option<String>,
    /// The calling agent's role, in an episode with roles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) role: Option<String>,
    /// The MAS-FIRE faults that met the call and took effect: ground truth.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) mas_faults: Vec<crate::masfire::Injection>,
    /// The tool call the user made during this `ask_user` turn, when asked
    /// to act (dual control): the user's own call, recorded in the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) user: Option<UserCall>,
    /// The answer to this `ask_user` turn when supplied from outside (an LLM user), as kept: what a replay feeds back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) user_answer: Option<String>,
}

impl CallRecord {
    /// The calling agent's id, in a multi-agent episode.
    pub fn agent(&self) -> Option<&str> {
        self.extra.as_ref()?.agent.as_deref()
    }

    /// The calling agent's role, in an episode with roles.
    pub fn role(&self) -> Option<&str> {
        self.extra.as_ref()?.role.as_deref()
    }

    /// The MAS-FIRE faults that met the call and took effect: ground truth.
    pub fn mas_faults(&self) -> &[crate::masfire::Injection] {
        self.extra.as_ref().map_or(&[], |extra| &extra.mas_faults)
    }

    /// The tool call the user made during this `ask_user` turn, when asked
    /// to act (dual control).
    pub fn user(&self) -> Option<&UserCall> {
        self.extra.as_ref()?.user.as_ref()
    }

    /// The answer to this `ask_user` turn when supplied from outside (an LLM
    /// user), as kept: what a replay feeds back.
    pub fn user_answer(&self) -> Option<&str> {
        self.extra.as_ref()?.user_answer.as_deref()
    }

    /// A call that reached the tools, before anything else is known of it:
    /// no outcome yet (an empty result), no fault, no delay, no state change.
    pub(super) fn reached(index: u32, tool: Cow<'static, str>, arguments: String, waited_ms: u64) -> Self {
        CallRecord {
            index,
            tool,
            arguments,
            outcome: Outcome::Result(String::new()),
            state_changed: false,
            fault: None,
            drawn_without_effect: None,
            delay_ms: 0,
            waited_ms,
            idempotency_key_call: None,
            extra: None,
        }
    }

    /// The extra part, made when a call first needs one.
    pub(super) fn extra_mut(&mut self) -> &mut CallExtra {
        self.extra.get_or_insert_default()
    }
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
    /// A limit of the multi-agent bus (messages, agents) was reached.
    #[error("{0}")]
    BusLimit(String),
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
    /// The fault profile the episode ran under.
    pub fault_profile: crate::chaos::FaultProfile,
    /// The perturbation level ε of the description.
    pub epsilon: f64,
    /// The Action Metamorphic Relations applied to the description, with their parameters.
    pub perturbations: Vec<crate::phrasing::Applied>,
    /// Every call that reached the episode, in order.
    pub calls: Vec<CallRecord>,
    /// The roles of a multi-agent episode.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleSpec>,
    /// The MAS-FIRE fault profile the episode ran under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mas_profile: Option<crate::masfire::MasProfile>,
    /// MAS-FIRE faults injected into the description when the episode was created.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompt_faults: Vec<crate::masfire::Injection>,
    /// The judgement, once finished.
    pub verdict: Option<Judgement>,
    /// The final answer the agent finished with, if any (written only when
    /// given, so trajectories of tasks that ask for none are unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The typed answer the agent finished with, if any (a JSON object of
    /// the fields [`crate::typed::fields`] names); judged instead of `answer`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_json: Option<serde_json::Value>,
    /// An answer judge's ruling on the prose `answer`, which decides its
    /// answer checks instead of the rule-based reader (see [`crate::ruling`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_ruling: Option<crate::AnswerRuling>,
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// Every record lives as long as its episode, so what a plain call keeps
    /// is its two texts and this much: the rare outcomes (a domain error, a
    /// rejected call, a failure) are boxed, and a field that grows the
    /// record is a choice to make here.
    #[test]
    fn a_record_and_its_outcome_stay_small() {
        assert_eq!(std::mem::size_of::<Outcome>(), 32, "an outcome is a text, or a box");
        assert_eq!(std::mem::size_of::<CallRecord>(), 128);
    }
}
