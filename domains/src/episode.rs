//! An episode: one attempt at one task, with its own world and call log.
//!
//! Everything here is a pure function of the task, the episode parameters and
//! the sequence of calls: the same inputs give the same trajectory, byte for
//! byte, whatever else runs at the same time.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use crate::World;
use crate::chaos::{Alteration, Chaos, Dice, FaultKind, Mode, Phase, Purpose, Stop};
use crate::delivery::{
    Answer, Delivered, Delivery, Failure, FailureCode, Outcome, partial, rate_limited, reply, reset, suspended, timed_out,
};
use crate::json;
use crate::oracle::{CheckOutcome, Verdict};
use crate::task::Task;
use crate::tool::{ArgError, DomainError, ToolResult};
use crate::world::ToolRef;

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

/// The fault that met a call: the ledger's ground truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FaultRecord {
    /// The fault.
    pub kind: FaultKind,
    /// True when drawn on this call; false when a persistent fault state
    /// (suspension, cascade, rate-limit window, drift) carried over.
    pub new: bool,
    /// Whether a retry or a later call can still succeed.
    pub recoverable: bool,
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
    /// What reached the agent.
    pub outcome: Outcome,
    /// Whether the call changed the state.
    pub state_changed: bool,
    /// The fault that met the call, if any.
    pub fault: Option<FaultRecord>,
    /// Simulated delay before the reply, in milliseconds (before time scaling).
    pub delay_ms: u64,
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

/// Fault recovery figures of an episode (the paper's Table 8 columns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FaultStats {
    /// Faults drawn (not counting calls a persistent state carried over).
    pub injected: u32,
    /// Calls answered with an explicit error status (timeouts, resets, rate
    /// limits): the paper's "faults encountered".
    pub encountered: u32,
    /// Encountered faults followed by a later call of the same tool that got a
    /// reply without a fault.
    pub recovered: u32,
    /// Calls of the same tool after an encountered fault, up to and including
    /// the recovering one.
    pub extra_calls: u32,
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
    pub perturbations: Vec<crate::perturb::Applied>,
    /// Every call that reached the episode, in order.
    pub calls: Vec<CallRecord>,
    /// The verdict, once finished.
    pub verdict: Option<Verdict>,
}

/// One call's request beyond tool and arguments.
#[derive(Debug, Clone, Default)]
pub struct CallOptions<'a> {
    /// Makes a state-changing call safe to retry: a repeat with the same key
    /// returns the first execution's result instead of running again.
    pub idempotency_key: Option<&'a str>,
    /// Simulated milliseconds the agent waited since its previous call
    /// (for rate-limit windows); `None` counts as long enough.
    pub waited_ms: Option<u64>,
}

/// A call that reached the tools, before its outcome is recorded.
#[derive(Debug)]
struct Reached {
    index: u32,
    tool: String,
    arguments: String,
    state_changed: bool,
    fault: Option<FaultRecord>,
    delay_ms: u64,
}

/// What a valid call asks for.
#[derive(Debug, Clone, Copy)]
struct ToolCall<'a> {
    index: u32,
    spec: ToolRef,
    args: &'a crate::Args,
    canonical_args: &'a str,
    key: Option<&'a str>,
}

/// Persistent fault states, counted in calls (and virtual milliseconds for
/// the rate-limit window).
#[derive(Debug, Clone, Default)]
struct FaultState {
    suspended: bool,
    drifted: bool,
    cascade_left: u32,
    /// Virtual time now, and until when a soft rate limit rejects calls.
    clock_ms: u64,
    limited_until_ms: u64,
    /// Executed writes by idempotency key: (tool, canonical args, result text).
    idempotent: BTreeMap<String, (String, String, ToolResult)>,
    /// Writes whose reply was lost, by (tool, canonical args).
    ambiguous: Vec<(u32, String, String)>,
    /// Later writes that repeated an ambiguous one: (call, repeated call).
    duplicates: Vec<(u32, u32)>,
}

/// One attempt at one task.
#[derive(Debug, Clone)]
pub struct Episode {
    task: &'static Task,
    world: World,
    max_calls: u32,
    chaos: Chaos,
    dice: Dice,
    faults: FaultState,
    trajectory: Trajectory,
}

impl Episode {
    /// Starts an episode of `task` from a fresh copy of its initial state, with no faults.
    pub fn new(task: &'static Task, seed: u64, trial: u32) -> Self {
        Self {
            task,
            world: task.initial.clone(),
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
                verdict: None,
            },
        }
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
    pub fn with_perturbation(mut self, level: crate::perturb::Level, perturbed: crate::perturb::Perturbed) -> Self {
        self.trajectory.description = perturbed.description;
        self.trajectory.epsilon = level.epsilon();
        self.trajectory.perturbations = perturbed.applied;
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

    /// Calls one tool with JSON argument text (empty text means `{}`), with no options.
    pub fn call(&mut self, tool: &str, arguments: &str) -> Result<&CallRecord, CallError> {
        self.call_with(tool, arguments, &CallOptions::default())
    }

    /// Calls one tool with JSON argument text (empty text means `{}`).
    ///
    /// A broken business rule or an injected fault is an `Ok` record (see
    /// [`Outcome`]). A malformed call is recorded and returned as an error;
    /// calls after finishing or past the limit are returned as errors and not recorded.
    pub fn call_with(&mut self, tool: &str, arguments: &str, options: &CallOptions<'_>) -> Result<&CallRecord, CallError> {
        let (call, delivery) = self.reach(tool, arguments, options)?;
        Ok(self.record(call, delivery.into()))
    }

    /// Calls one tool as [`Episode::call_with`] does, and returns what to
    /// send back and after how long: the server's view of the same call.
    pub fn deliver_call(&mut self, tool: &str, arguments: &str, options: &CallOptions<'_>) -> Result<Delivered, CallError> {
        let (call, delivery) = self.reach(tool, arguments, options)?;
        let delivered = Delivered { index: call.index, delay_ms: call.delay_ms, delivery: delivery.clone() };
        self.record(call, delivery.into());
        Ok(delivered)
    }

    /// Checks a call and plays it under its fault; the caller records it.
    fn reach(&mut self, tool: &str, arguments: &str, options: &CallOptions<'_>) -> Result<(Reached, Delivery), CallError> {
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
        let canonical_args = args.canonical();
        let key = options.idempotency_key.filter(|_| spec.mutates_state);
        if let Some((first_tool, first_args, _)) = key.and_then(|k| self.faults.idempotent.get(k))
            && (*first_tool != spec.name || *first_args != canonical_args)
        {
            let error = ArgError::new(
                "idempotency_key",
                format!("key was first used for {first_tool}({first_args}); use a new key for a different call"),
            );
            self.record_invalid(tool, arguments, error.clone());
            return Err(CallError::InvalidArgument(error));
        }
        self.faults.clock_ms = self.faults.clock_ms.saturating_add(options.waited_ms.unwrap_or(u64::MAX / 4));

        let call = ToolCall { index, spec, args: &args, canonical_args: &canonical_args, key };
        let mut delay_ms = 0;
        let mut state_changed = false;
        let (fault, delivery) = match self.carried_over_fault(index) {
            Some((fault, failure)) => (Some(fault), Delivery::Failure(failure)),
            None => {
                let fault = self.chaos.draw(&self.dice, index).map(|kind| FaultRecord { kind, new: true, recoverable: kind.recoverable() });
                let phase = fault.map(|f| f.kind.phase());
                (fault, self.play(phase, &call, &mut delay_ms, &mut state_changed))
            }
        };
        self.faults.clock_ms = self.faults.clock_ms.saturating_add(delay_ms);
        let reached = Reached { index, tool: tool.to_owned(), arguments: canonical_args, state_changed, fault, delay_ms };
        Ok((reached, delivery))
    }

    /// Plays a call under the phase of the fault drawn for it (`None`: no fault).
    fn play(&mut self, phase: Option<Phase>, call: &ToolCall<'_>, delay_ms: &mut u64, state_changed: &mut bool) -> Delivery {
        match phase {
            None => reply(self.run(call, false, None, state_changed)),
            Some(Phase::Stops(stop)) => self.stop(stop, call.index, delay_ms),
            Some(Phase::OlderState) => reply(self.run(call, true, None, state_changed)),
            Some(Phase::SwitchesMode(mode)) => reply(self.run(call, false, Some(mode), state_changed)),
            Some(Phase::AltersReply(alteration)) => match self.run(call, false, None, state_changed) {
                Ok(text) => self.alter(alteration, text, call, *state_changed, delay_ms),
                // A broken rule reaches the agent as it is.
                Err(error) => Delivery::Reply(Answer::Error(error)),
            },
        }
    }

    fn record(&mut self, call: Reached, outcome: Outcome) -> &CallRecord {
        let Reached { index, tool, arguments, state_changed, fault, delay_ms } = call;
        self.trajectory.calls.push(CallRecord { index, tool, arguments, outcome, state_changed, fault, delay_ms });
        &self.trajectory.calls[index as usize]
    }

    /// A persistent fault state that answers this call without a new draw.
    fn carried_over_fault(&mut self, index: u32) -> Option<(FaultRecord, Failure)> {
        let carried = |kind: FaultKind| FaultRecord { kind, new: false, recoverable: kind.recoverable() };
        if self.faults.suspended {
            return Some((carried(FaultKind::HardRateLimit), suspended()));
        }
        if self.faults.cascade_left > 0 {
            self.faults.cascade_left -= 1;
            return Some((carried(FaultKind::CascadingFailure), self.cascade_failure(index)));
        }
        if self.faults.clock_ms < self.faults.limited_until_ms {
            let left = self.faults.limited_until_ms - self.faults.clock_ms;
            return Some((carried(FaultKind::SoftRateLimit), rate_limited(left, "retried before the retry delay passed")));
        }
        None
    }

    /// The answer of a fault that stops the call before the tool runs,
    /// setting the fault state it leaves.
    fn stop(&mut self, stop: Stop, index: u32, delay_ms: &mut u64) -> Delivery {
        let params = &self.chaos.profile().params;
        Delivery::Failure(match stop {
            Stop::Timeout => {
                *delay_ms = params.timeout_ms;
                timed_out(params.timeout_ms)
            }
            Stop::Reset => reset(),
            Stop::RateLimit => {
                self.faults.limited_until_ms = self.faults.clock_ms.saturating_add(params.retry_after_ms);
                rate_limited(params.retry_after_ms, "rate limit exceeded")
            }
            Stop::Suspension => {
                self.faults.suspended = true;
                suspended()
            }
            Stop::Cascade => {
                self.faults.cascade_left = params.cascade_calls;
                self.cascade_failure(index)
            }
            // A valid but empty reply.
            Stop::Empty => return Delivery::Reply(Answer::Result("{}".to_owned())),
        })
    }

    fn cascade_failure(&self, index: u32) -> Failure {
        // Mostly outages, one call in three an overload with a retry hint.
        if self.dice.below(index, Purpose::Variant, 3) == 0 {
            let retry = self.chaos.profile().params.retry_after_ms;
            Failure {
                code: FailureCode::ResourceExhausted,
                reason: "BACKEND_OVERLOADED",
                message: "backend overloaded (cascading failure)".into(),
                retry_after_ms: Some(retry as i64),
            }
        } else {
            Failure {
                code: FailureCode::Unavailable,
                reason: "BACKEND_UNAVAILABLE",
                message: "service unavailable (cascading failure)".into(),
                retry_after_ms: None,
            }
        }
    }

    /// Runs the tool (against an older snapshot for a stale read) and keeps
    /// the idempotency and duplicate bookkeeping.
    fn execute(&mut self, spec: ToolRef, args: &crate::Args, canonical_args: &str, key: Option<&str>, stale: bool) -> (ToolResult, bool) {
        if let Some((_, _, result)) = key.and_then(|k| self.faults.idempotent.get(k)) {
            // A retry of an executed write: the first result, nothing runs again.
            return (result.clone(), false);
        }
        let ctx = self.task.context();
        if stale
            && !spec.mutates_state
            && let Some(mut previous) = self.previous_world()
        {
            return (previous.apply(spec, args, &ctx).0, false);
        }
        let (result, changed) = self.world.apply(spec, args, &ctx);
        if changed {
            let repeats = self.faults.ambiguous.iter().find(|(_, t, a)| t == spec.name && a == canonical_args).map(|(i, _, _)| *i);
            if let (Some(first), None) = (repeats, key) {
                self.faults.duplicates.push((first, self.trajectory.calls.len() as u32));
            }
        }
        if let Some(key) = key {
            self.faults.idempotent.insert(key.to_owned(), (spec.name.to_owned(), canonical_args.to_owned(), result.clone()));
        }
        (result, changed)
    }

    /// The state before the most recent change, which a stale read sees;
    /// `None` before the first change.
    ///
    /// It is the task's initial state with every state-changing call but the
    /// last one replayed. Tools are pure functions of the state, their
    /// arguments and the task's context, so the replay is exact; it runs only
    /// for a stale read, instead of every write copying the state in case one
    /// comes.
    fn previous_world(&self) -> Option<World> {
        let changes = self.trajectory.calls.iter().filter(|c| c.state_changed);
        // Everything but the most recent change.
        let last = changes.clone().count().checked_sub(1)?;
        let ctx = self.task.context();
        let mut world = self.task.initial.clone();
        for call in changes.take(last) {
            // A call that changed the state had a tool of the domain and valid canonical arguments.
            let Some(spec) = self.task.domain.tool(&call.tool) else { continue };
            let Ok(args) = spec.read_arguments(&call.arguments) else { continue };
            let (_, changed) = world.apply(spec, &args, &ctx);
            debug_assert!(changed, "replaying call {} changes the state again", call.index);
        }
        Some(world)
    }

    /// Runs the tool (against an older state for a stale read); when it
    /// broke no rule, switches `mode` on and shapes the result as the
    /// episode's modes say.
    fn run(&mut self, call: &ToolCall<'_>, stale: bool, mode: Option<Mode>, state_changed: &mut bool) -> Result<String, DomainError> {
        let (result, changed) = self.execute(call.spec, call.args, call.canonical_args, call.key, stale);
        *state_changed = changed;
        let text = result?;
        match mode {
            Some(Mode::SchemaV2) => self.faults.drifted = true,
            None => {}
        }
        // Only a drifted or a cut reply needs the result as a value.
        Ok(if self.faults.drifted { json::canonical(&crate::drift::to_v2(self.task.domain, call.spec.name, &parse(&text))) } else { text })
    }

    /// Alters the reply of a call that ran.
    fn alter(&mut self, alteration: Alteration, text: String, call: &ToolCall<'_>, changed: bool, delay_ms: &mut u64) -> Delivery {
        match alteration {
            Alteration::Delay => {
                *delay_ms = self.chaos.latency_ms(&self.dice, call.index);
                Delivery::Reply(Answer::Result(text))
            }
            Alteration::Cut => Delivery::Reply(partial(parse(&text), self.dice.draw(call.index, Purpose::Partial))),
            Alteration::LoseReply => {
                if changed {
                    self.faults.ambiguous.push((call.index, call.spec.name.to_owned(), call.canonical_args.to_owned()));
                }
                if self.dice.below(call.index, Purpose::Variant, 2) == 0 {
                    *delay_ms = self.chaos.profile().params.timeout_ms;
                    Delivery::Failure(timed_out(*delay_ms))
                } else {
                    Delivery::Failure(reset())
                }
            }
        }
    }

    fn record_invalid(&mut self, tool: &str, arguments: &str, error: ArgError) {
        self.trajectory.calls.push(CallRecord {
            index: self.trajectory.calls.len() as u32,
            tool: cut(tool, MAX_RECORDED_TOOL_NAME_BYTES).to_owned(),
            arguments: cut(arguments, MAX_RECORDED_INVALID_BYTES).to_owned(),
            outcome: Outcome::Invalid(error),
            state_changed: false,
            fault: None,
            delay_ms: 0,
        });
    }

    /// Finishes the episode and judges its end state. Finishing again
    /// returns the same verdict.
    pub fn finish(&mut self) -> &Verdict {
        let verdict = match self.trajectory.verdict.take() {
            Some(verdict) => verdict,
            None => {
                let (initial, initial_hash) = initial_snapshot(self.task);
                let mut verdict = Verdict::judge_hashed(self.task, &initial, initial_hash.into_owned(), &self.world.to_json());
                let duplicates: Vec<Value> = self
                    .faults
                    .duplicates
                    .iter()
                    .map(|&(first, repeat)| json!({"call": repeat, "repeats_lost_reply_of_call": first}))
                    .collect();
                verdict.passed &= duplicates.is_empty();
                verdict.checks.push(CheckOutcome {
                    name: crate::oracle::DUPLICATE_CHECK.to_owned(),
                    passed: duplicates.is_empty(),
                    expected: Value::Array(Vec::new()),
                    actual: Value::Array(duplicates),
                });
                verdict.fault_stats = fault_stats(&self.trajectory.calls);
                verdict.fault_notes = fault_notes(&self.trajectory.calls);
                verdict
            }
        };
        self.trajectory.verdict.insert(verdict)
    }
}

/// A task's initial state as JSON and its hash: computed once for the
/// suite's tasks (every finish needs them), fresh for any other task.
fn initial_snapshot(task: &Task) -> (std::borrow::Cow<'static, Value>, std::borrow::Cow<'static, str>) {
    use std::borrow::Cow;
    static SUITE: std::sync::OnceLock<BTreeMap<&'static str, (Value, String)>> = std::sync::OnceLock::new();
    let cached = SUITE.get_or_init(|| {
        crate::suite()
            .iter()
            .map(|t| {
                let initial = t.initial.to_json();
                let hash = json::state_hash(&initial);
                (t.id.as_str(), (initial, hash))
            })
            .collect()
    });
    match cached.get(task.id.as_str()) {
        // The id alone is not enough: a task built outside the suite may reuse one.
        Some((initial, hash)) if crate::task(&task.id).is_some_and(|t| std::ptr::eq(t, task)) => {
            (Cow::Borrowed(initial), Cow::Borrowed(hash))
        }
        _ => {
            let initial = task.initial.to_json();
            let hash = json::state_hash(&initial);
            (Cow::Owned(initial), Cow::Owned(hash))
        }
    }
}

/// A tool's result text as a value. The text is JSON the core wrote itself,
/// so the fallback never shows.
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Notes on the faults that change what an agent could do.
fn fault_notes(calls: &[CallRecord]) -> Vec<String> {
    let mut notes = Vec::new();
    let first = |kind| calls.iter().find(|c| c.fault.is_some_and(|f| f.kind == kind && f.new)).map(|c| c.index);
    if let Some(i) = first(FaultKind::HardRateLimit) {
        let refused = calls.iter().filter(|c| c.index > i && c.fault.is_some_and(|f| !f.new)).count();
        notes.push(format!("suspended by HardRateLimit at call {i}; {refused} later calls refused"));
    }
    if let Some(i) = first(FaultKind::SchemaDrift) {
        notes.push(format!("results switched to the v2 schema at call {i} (SchemaDrift)"));
    }
    let stale: Vec<String> =
        calls.iter().filter(|c| c.fault.is_some_and(|f| f.kind == FaultKind::StaleData)).map(|c| c.index.to_string()).collect();
    if !stale.is_empty() {
        notes.push(format!("calls {} were answered from an older snapshot (StaleData)", stale.join(", ")));
    }
    let lost: Vec<String> = calls
        .iter()
        .filter(|c| c.state_changed && c.fault.is_some_and(|f| f.kind == FaultKind::AmbiguousCommit))
        .map(|c| c.index.to_string())
        .collect();
    if !lost.is_empty() {
        notes.push(format!("calls {} were applied but their replies lost (AmbiguousCommit)", lost.join(", ")));
    }
    notes
}

/// Counts the fault ledger of a finished episode.
fn fault_stats(calls: &[CallRecord]) -> FaultStats {
    let mut stats = FaultStats::default();
    for (i, call) in calls.iter().enumerate() {
        stats.injected += u32::from(call.fault.is_some_and(|f| f.new));
        if !matches!(call.outcome, Outcome::Failure(_)) {
            continue;
        }
        stats.encountered += 1;
        let later = calls[i + 1..].iter().filter(|c| c.tool == call.tool);
        let mut extra = 0;
        for next in later {
            extra += 1;
            if next.fault.is_none() && matches!(next.outcome, Outcome::Result(_) | Outcome::Error(_)) {
                stats.recovered += 1;
                stats.extra_calls += extra;
                break;
            }
        }
    }
    stats
}
