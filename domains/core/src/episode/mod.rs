//! An episode: one attempt at one task, with its own world and call log.
//!
//! Everything here is a pure function of the task, the episode parameters and
//! the sequence of calls: the same inputs give the same trajectory, byte for
//! byte, whatever else runs at the same time.

use std::borrow::Cow;

use serde_json::Value;

pub mod bus;
mod faults;
mod finish;
mod fork;
mod ledger;
mod record;
mod roles;
mod user;
mod verify;

pub use finish::{Assess, Judgement};

pub use fork::{ForkError, ReplayCall, Source, replay_key};
pub use ledger::{FaultStats, KindCounts, LedgerCall, LedgerReply, fault_ledger};
use record::CallExtra;
pub use record::{CallError, CallRecord, FaultRecord, Trajectory};
pub use roles::{CLARIFICATION_CHECK, RoleSpec, TeamError};
pub use user::UserCall;

use crate::{
    chaos::{Chaos, Dice, FaultKind},
    delivery::{Delivery, Outcome},
    task::{Task, TaskRef},
    tool::ArgError,
    world::World,
};
use faults::{FaultState, ToolCall};

/// The caller of a call in a multi-agent episode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Caller {
    pub id: String,
    pub role: Option<String>,
}

/// Default for the most calls an episode accepts.
pub const DEFAULT_MAX_CALLS: u32 = 200;

/// Most bytes one episode keeps for idempotency keys and the results of
/// the writes they named (checked before each new key, so one result may
/// go past it).
pub const MAX_IDEMPOTENCY_BYTES: usize = 256 * 1024;

/// Most bytes of a rejected call's argument text kept in the trajectory.
const MAX_RECORDED_INVALID_BYTES: usize = 1024;
/// Most bytes of an unknown tool's name kept in the trajectory.
const MAX_RECORDED_TOOL_NAME_BYTES: usize = 128;

/// One call's request beyond tool and arguments.
#[derive(Debug, Clone, Default)]
pub struct CallOptions<'a> {
    /// The calling agent's id (from [`Episode::join`]); required in an
    /// episode with roles, `None` otherwise.
    pub agent: Option<&'a str>,
    /// Makes a state-changing call safe to retry: a repeat with the same key
    /// returns the first execution's result instead of running again.
    pub idempotency_key: Option<&'a str>,
    /// Virtual milliseconds the agent waited since its previous reply (for
    /// rate-limit windows). `None`: no time passed, as at time scale 0 when
    /// the agent declares no wait.
    pub waited_ms: Option<u64>,
    /// The user's answer to an `ask_user` turn of a conversational task,
    /// supplied from outside (an LLM user) instead of the rule-based
    /// user's: recorded, so a replay feeds it back. Ignored on other calls.
    pub user_answer: Option<&'a str>,
}

/// A call that reached the tools, before its outcome is recorded: its
/// record (with an empty result until then) and what goes into the
/// record's extra part when the call has any.
#[derive(Debug)]
struct Reached {
    record: CallRecord,
    caller: Option<Caller>,
    mas_faults: Vec<crate::masfire::Injection>,
    user: Option<Box<UserCall>>,
    user_answer: Option<String>,
}

impl Reached {
    /// A call with no fault, no delay and no state change.
    fn plain(index: u32, tool: &str, arguments: String, waited_ms: u64) -> Self {
        Reached::from(CallRecord::reached(index, Cow::Owned(tool.to_owned()), arguments, waited_ms))
    }
}

impl From<CallRecord> for Reached {
    fn from(record: CallRecord) -> Self {
        Reached { record, caller: None, mas_faults: Vec::new(), user: None, user_answer: None }
    }
}

/// One attempt at one task.
#[derive(Debug, Clone)]
pub struct Episode {
    task: TaskRef,
    /// The state: the task's initial state, shared until the first write
    /// copies it (so a fresh episode costs no copy of a large state).
    world: std::sync::Arc<World>,
    max_calls: u32,
    chaos: Chaos,
    dice: Dice,
    faults: FaultState,
    trajectory: Trajectory,
    /// The roles, agents, bus and MAS-FIRE profile of a multi-agent episode.
    team: Option<Box<roles::Team>>,
    /// Whether the verdict is for the record: finishing decides feasibility
    /// and hashes the end state. False for episodes played only for pass or
    /// fail: the solver's feasibility replay (which must not replay itself),
    /// counterfactual continuations and the oracle self-check.
    records_verdict: bool,
    /// The agent the in-process solver's calls are made as, in a team's
    /// episode continued by the solver (a counterfactual); none otherwise.
    acting: Option<String>,
}

impl Episode {
    /// Starts an episode of `task` from its initial state (shared until
    /// the episode writes), with no faults.
    pub fn new(task: impl Into<TaskRef>, seed: u64, trial: u32) -> Self {
        let task = task.into();
        Self {
            world: std::sync::Arc::clone(&task.initial),
            max_calls: DEFAULT_MAX_CALLS,
            chaos: Chaos::default(),
            dice: Dice::new(&task.id, seed, trial),
            faults: FaultState::default(),
            trajectory: Trajectory {
                task_id: task.id.clone(),
                seed,
                trial,
                description: task.description(),
                today: task.today.to_string(),
                fault_profile: crate::chaos::FaultProfile::none(),
                epsilon: 0.0,
                perturbations: Vec::new(),
                calls: Vec::new(),
                roles: Vec::new(),
                mas_profile: None,
                prompt_faults: Vec::new(),
                verdict: None,
                answer: None,
                answer_json: None,
                answer_ruling: None,
            },
            team: None,
            records_verdict: true,
            acting: None,
            task,
        }
    }

    /// Judges the episode only for pass or fail when it finishes: its
    /// verdict leaves feasibility undecided (`None`), the end state's hash
    /// empty and the state diff out, which no check reads. For the oracle
    /// self-check, whose episodes need neither a solver replay nor a hash
    /// nor a diff each.
    pub fn for_pass_or_fail(mut self) -> Self {
        self.records_verdict = false;
        self
    }

    /// Sets the most calls the episode accepts.
    pub fn with_max_calls(mut self, max_calls: u32) -> Self {
        self.max_calls = max_calls;
        self
    }

    /// Runs the episode under a fault profile.
    pub fn with_chaos(mut self, chaos: Chaos) -> Self {
        self.trajectory.fault_profile = chaos.profile().clone();
        self.chaos = chaos;
        self
    }

    /// Gives the agent a perturbed description at level ε (the task, its
    /// oracle and its "today" are unchanged), and records what was applied.
    pub fn with_perturbation(mut self, level: crate::phrasing::Level, perturbed: crate::phrasing::Perturbed) -> Self {
        self.trajectory.description = perturbed.description;
        self.trajectory.epsilon = level.epsilon();
        self.trajectory.perturbations = perturbed.applied;
        self
    }

    /// The task being played.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The task being played, as a handle that outlives the episode.
    pub fn task_ref(&self) -> &TaskRef {
        &self.task
    }

    /// Gives the episode's final answer (text the task's answer checks read
    /// when it finishes); a later answer replaces an earlier one. Ignored
    /// once finished.
    pub fn answer(&mut self, answer: impl Into<String>) {
        if self.trajectory.verdict.is_none() {
            self.trajectory.answer = Some(answer.into());
            // A ruling was on the answer before.
            self.trajectory.answer_ruling = None;
        }
    }

    /// Gives the episode's typed final answer (a JSON object of the fields
    /// [`crate::typed::fields`] names, which the answer check judges instead
    /// of prose); a later one replaces an earlier one. Ignored once finished.
    pub fn answer_typed(&mut self, answer: serde_json::Value) {
        if self.trajectory.verdict.is_none() {
            self.trajectory.answer_json = Some(answer);
        }
    }

    /// Gives the episode the answers a recorded trajectory finished with:
    /// prose, typed, and a judge's ruling on the prose.
    pub fn answer_as(&mut self, recorded: &Trajectory) {
        if let Some(answer) = &recorded.answer {
            self.answer(answer.as_str());
        }
        if let Some(typed) = &recorded.answer_json {
            self.answer_typed(typed.clone());
        }
        if let Some(ruling) = &recorded.answer_ruling {
            self.rule_answer(ruling.clone());
        }
    }

    /// What to ask an answer judge about the prose answer the episode
    /// would finish with; `None` when there is nothing for a judge to rule
    /// on: the task asks for no answer, the answer is typed, or the episode
    /// is finished.
    pub fn judge_question(&self, answer: &str) -> Option<crate::JudgeQuestion> {
        if self.trajectory.verdict.is_some() || self.trajectory.answer_json.is_some() {
            return None;
        }
        crate::ruling::question(&self.task, &self.trajectory.description, answer)
    }

    /// Gives an answer judge's ruling on the episode's prose answer: it
    /// decides the answer checks instead of the rule-based reader, and is
    /// recorded; a later [`Episode::answer`] drops it. Ignored once finished.
    pub fn rule_answer(&mut self, ruling: crate::AnswerRuling) {
        if self.trajectory.verdict.is_none() {
            self.trajectory.answer_ruling = Some(ruling);
        }
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

    /// The idempotency key call `first` sent first, as the agent sent it
    /// (trajectories record only the index: keys may hold ids). A replica's
    /// durable log keeps it, so that an episode rebuilt there recognises the
    /// agent's retries.
    pub fn idempotency_key(&self, first: u32) -> Option<&str> {
        self.faults.key_calls.iter().find(|(_, call)| **call == first).map(|(key, _)| key.as_str())
    }

    /// The judgement, once finished.
    pub fn verdict(&self) -> Option<&Judgement> {
        self.trajectory.verdict.as_ref()
    }

    /// Calls one tool with JSON argument text (empty text means `{}`), with
    /// no options: [`Episode::call_with`] for the common case.
    pub fn call(&mut self, tool: &str, arguments: &str) -> Result<&CallRecord, CallError> {
        self.call_with(tool, arguments, &CallOptions::default())
    }

    /// Calls one tool: the episode's one entry point for a call, in-process
    /// or on a server's behalf. `arguments` is the agent's JSON text (empty
    /// text means `{}`) or JSON the caller built ([`Arguments`]).
    ///
    /// A broken business rule or an injected fault is an `Ok` record whose
    /// [`Outcome`] says what reached the agent, after the record's
    /// `delay_ms`. A malformed call is recorded and returned as an error;
    /// calls after finishing or past the limit are returned as errors and
    /// not recorded.
    pub fn call_with<'a>(
        &mut self,
        tool: &str,
        arguments: impl Into<Arguments<'a>>,
        options: &CallOptions<'_>,
    ) -> Result<&CallRecord, CallError> {
        let (call, delivery) = self.reach(tool, arguments.into(), options)?;
        Ok(self.record(call, delivery.into()))
    }

    /// Checks a call and plays it under its fault; the caller records it.
    fn reach(&mut self, tool: &str, arguments: Arguments<'_>, options: &CallOptions<'_>) -> Result<(Reached, Delivery), CallError> {
        if self.trajectory.verdict.is_some() {
            return Err(CallError::Finished);
        }
        if self.trajectory.calls.len() >= self.max_calls as usize {
            return Err(CallError::CallLimit(self.max_calls));
        }
        let index = self.trajectory.calls.len() as u32;
        // The episode's virtual clock moves by the agent's wait, whatever the call comes to.
        let waited_ms = options.waited_ms.unwrap_or(0);
        self.faults.clock_ms = self.faults.clock_ms.saturating_add(waited_ms);
        if self.team.is_some() {
            return self.reach_team(index, tool, &arguments.text(), options, waited_ms);
        }
        if tool == bus::ASK_USER && self.has_user() {
            return self.user_turn(index, arguments, None, waited_ms, options.user_answer);
        }
        if let Some(played) = self.verification_call(index, tool, &arguments, None, waited_ms) {
            return played;
        }
        let Some(spec) = self.task.domain.tool(tool) else {
            let error = CallError::UnknownTool(tool.to_owned());
            self.record_invalid(tool, &arguments.text(), waited_ms, ArgError::new("tool_name", error.to_string()));
            return Err(error);
        };
        let parsed = match arguments {
            Arguments::Text(text) => spec.parse_arguments(text),
            Arguments::Json(value) => spec.arguments_of(value),
        };
        let args = match parsed {
            Ok(args) => args,
            Err(error) => {
                self.record_invalid(tool, &arguments.text(), waited_ms, error.clone());
                return Err(CallError::InvalidArgument(error));
            }
        };
        if let Some(refusal) = self.user_only(tool).or_else(|| self.unverified(tool)) {
            return Ok((Reached::plain(index, tool, args.canonical(), waited_ms), Delivery::Reply(refusal)));
        }
        self.run_tool(tool, arguments, spec, &args, options, waited_ms)
    }

    /// Plays a valid call of a domain tool under its λ fault.
    fn run_tool(
        &mut self,
        tool: &str,
        arguments: Arguments<'_>,
        spec: crate::ToolRef,
        args: &crate::Args,
        options: &CallOptions<'_>,
        waited_ms: u64,
    ) -> Result<(Reached, Delivery), CallError> {
        // Nothing is recorded between reaching a call and running it.
        let index = self.trajectory.calls.len() as u32;
        let canonical_args = args.canonical();
        let key = options.idempotency_key.filter(|_| spec.mutates_state);
        if let Some(key) = key
            && !self.faults.idempotent.contains_key(key)
            && self.faults.idempotent_bytes + key.len() > MAX_IDEMPOTENCY_BYTES
        {
            let error = ArgError::new(
                "idempotency_key",
                format!(
                    "this episode keeps at most {MAX_IDEMPOTENCY_BYTES} bytes of idempotency keys and their results; reuse a key only for a retry, or send no key"
                ),
            );
            self.record_invalid(tool, &arguments.text(), waited_ms, error.clone());
            return Err(CallError::InvalidArgument(error));
        }
        let idempotency_key_call = key.map(|k| *self.faults.key_calls.entry(k.to_owned()).or_insert(index));
        if let Some((first_tool, first_args, _)) = key.and_then(|k| self.faults.idempotent.get(k))
            && (*first_tool != spec.name || *first_args != canonical_args)
        {
            let error = ArgError::new(
                "idempotency_key",
                format!("key was first used for {first_tool}({first_args}); use a new key for a different call"),
            );
            self.record_invalid(tool, &arguments.text(), waited_ms, error.clone());
            if let Some(record) = self.trajectory.calls.last_mut() {
                record.idempotency_key_call = idempotency_key_call;
            }
            return Err(CallError::InvalidArgument(error));
        }

        let call = ToolCall { index, spec, args, canonical_args: &canonical_args, key };
        let mut delay_ms = 0;
        let mut state_changed = false;
        let (fault, delivery, drawn_without_effect) = match self.carried_over_fault(index) {
            Some((fault, failure)) => (Some(fault), Delivery::Failure(failure), None),
            None => {
                // A counterfactual without suspensions (attribution) spares them.
                let drawn =
                    self.chaos.draw(&self.dice, index).filter(|&kind| !(self.faults.spare_suspension && kind == FaultKind::HardRateLimit));
                let (delivery, took_effect) = self.play_fault(drawn.map(FaultKind::phase), &call, &mut delay_ms, &mut state_changed);
                match drawn {
                    // Only a fault that took effect is the ledger's; a draw that changed nothing is kept apart.
                    Some(kind) if took_effect => (Some(FaultRecord { kind, new: true, recoverable: kind.recoverable() }), delivery, None),
                    drawn => (None, delivery, drawn),
                }
            }
        };
        self.faults.clock_ms = self.faults.clock_ms.saturating_add(delay_ms);
        let tool = if spec.name == tool { Cow::Borrowed(spec.name) } else { Cow::Owned(tool.to_owned()) };
        let reached = Reached::from(CallRecord {
            state_changed,
            fault,
            drawn_without_effect,
            delay_ms,
            idempotency_key_call,
            ..CallRecord::reached(index, tool, canonical_args, waited_ms)
        });
        Ok((reached, delivery))
    }

    /// Records a call that reached the tools, with what reached the agent.
    fn record(&mut self, call: Reached, outcome: Outcome) -> &CallRecord {
        let Reached { mut record, caller, mas_faults, user, user_answer } = call;
        record.outcome = outcome;
        let (agent, role) = caller.map_or((None, None), |c| (Some(c.id), c.role));
        if agent.is_some() || role.is_some() || !mas_faults.is_empty() || user.is_some() || user_answer.is_some() {
            record.extra = Some(Box::new(CallExtra { agent, role, mas_faults, user: user.map(|user| *user), user_answer }));
        }
        let index = record.index as usize;
        self.trajectory.calls.push(record);
        &self.trajectory.calls[index]
    }

    fn record_invalid(&mut self, tool: &str, arguments: &str, waited_ms: u64, error: ArgError) {
        self.record_invalid_as(tool, arguments, waited_ms, error, None, Vec::new());
    }
}

/// A call's arguments as they reach an episode: an agent's JSON text, or
/// JSON a caller built itself (a reference, cheat or random call), read
/// without writing it as text and parsing that; both give the same call.
#[derive(Debug, Clone, Copy)]
pub enum Arguments<'a> {
    /// JSON text as an agent sent it.
    Text(&'a str),
    /// A JSON value.
    Json(&'a Value),
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Arguments::Text(text)
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        Arguments::Text(text)
    }
}

impl<'a> From<&'a Value> for Arguments<'a> {
    fn from(value: &'a Value) -> Self {
        Arguments::Json(value)
    }
}

impl<'a> Arguments<'a> {
    /// The arguments as text, as a record of a malformed call keeps them.
    fn text(self) -> std::borrow::Cow<'a, str> {
        match self {
            Arguments::Text(text) => text.into(),
            Arguments::Json(value) => value.to_string().into(),
        }
    }
}
