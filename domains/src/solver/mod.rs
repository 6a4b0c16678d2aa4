//! The result-reading solver: a built-in agent that decides from what tools
//! return, the way a careful client would.
//!
//! Unlike the reference agent (which replays a task's known solution), the
//! solver knows only what the task asks: its slots, its "today" and the
//! meaning of its template (each domain's `solver.rs` has one strategy per
//! kind of task). Everything else it reads from results: it picks the
//! cheapest flight from a search, the free slot from a calendar, the tier
//! from a knowledge-base policy. It never looks at the reference solution,
//! the oracle or the initial state.
//!
//! This module is the part every strategy shares: [`Session`] makes one
//! logical call through any [`Env`] and retries until it has an answer it can
//! use. It converts drifted v2 results back with [`toolenv_core::drift::from_v2`];
//! re-calls on an empty reply, a result cut short (unparseable, marked
//! `"truncated": true`, or lacking what the strategy needs); waits the
//! advised delay of a rate limit, declaring it as the call's wait so the
//! window is honoured in virtual time; backs off on timeouts and outages,
//! with bounded attempts; gives every write an idempotency key and repeats
//! an unconfirmed write with the same key, so it never runs twice; and gives
//! up on a suspension, which no call can get past. Strategies read before
//! they write, so a stale snapshot (which only a read after a write can
//! return) never feeds a decision, and a write is confirmed by its own reply,
//! never by a read.
//!
//! [`solve`] plays an episode in-process and judges it; whether an episode
//! was feasible at all follows from how the solver ended ([`Solution::feasible`]).
//! The same policy runs over gRPC through another [`Env`].

use crate::registry::Extensions;
use serde_json::Value;

use serde_json::json;
use toolenv_core::{
    CallError, CallOptions, CallRecord, Domain, Episode, FailureCode, Judgement, Outcome, Task,
    bus::ASK_USER,
    user::{CODE_QUESTION, CODE_SLOT, Conversation, SEND_CODE, UserAction, VERIFY},
};

#[cfg(test)]
mod tests;

/// Most attempts of one logical call (a cascade alone takes four, and a
/// cascade's end may start another).
pub const MAX_ATTEMPTS: u32 = 24;
/// How many reads must show the same longest list before it is taken as whole.
pub const CONFIRMATIONS: u32 = 3;
/// Most reads of a list whose completeness is confirmed by reading it again.
pub const MAX_CONFIRMING_READS: u32 = 6;
/// The first backoff, in virtual milliseconds, when a failure gives no advice.
const BACKOFF_MS: u64 = 100;

/// What a client sees of one call: the same whether the episode runs
/// in-process or over gRPC.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// An OK reply's result text, as it came: possibly empty, cut short,
    /// marked truncated, in the v2 shape, or a fault delivered in-band.
    Result(String),
    /// A broken business rule; the state did not change.
    DomainError {
        /// The stable code, e.g. `SLOT_TAKEN`.
        code: String,
        /// The readable explanation.
        message: String,
    },
    /// A fault's error status.
    Failure(Fault),
    /// The call was rejected as malformed before any tool ran.
    Invalid {
        /// The field at fault.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The episode accepts no more calls (its call budget is spent, or it is finished).
    Closed(String),
}

/// A fault's error status, as a client reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// The status code.
    pub code: FailureCode,
    /// The `ErrorInfo` reason, e.g. `RATE_LIMIT_EXCEEDED`.
    pub reason: String,
    /// The readable message.
    pub message: String,
    /// The advised retry delay in the episode's virtual milliseconds
    /// (`RetryInfo`, the pushback trailer); -1: do not retry; `None`: no advice.
    pub retry_after_ms: Option<i64>,
}

impl Fault {
    /// Reads a fault delivered in-band: an object `{"error": {"code", "reason",
    /// "message", "retry_after_ms"}}` in place of a result.
    pub fn in_band(value: &Value) -> Option<Fault> {
        let error = value.get("error")?;
        let reason = error.get("reason")?.as_str()?.to_owned();
        let code = match error.get("code").and_then(Value::as_str) {
            Some("DEADLINE_EXCEEDED") => FailureCode::DeadlineExceeded,
            Some("RESOURCE_EXHAUSTED") => FailureCode::ResourceExhausted,
            Some("PERMISSION_DENIED") => FailureCode::PermissionDenied,
            _ => FailureCode::Unavailable,
        };
        let message = error.get("message").and_then(Value::as_str).unwrap_or_default().to_owned();
        Some(Fault { code, reason, message, retry_after_ms: error.get("retry_after_ms").and_then(Value::as_i64) })
    }

    /// Whether no retry can succeed: a suspension, or a pushback of -1.
    pub fn is_final(&self) -> bool {
        self.code == FailureCode::PermissionDenied || self.retry_after_ms.is_some_and(|ms| ms < 0)
    }
}

/// What the solver sends with a call besides tool and arguments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Request<'a> {
    /// The idempotency key of a write.
    pub idempotency_key: Option<&'a str>,
    /// Virtual milliseconds waited since the previous call (a rate limit's advice or a backoff).
    pub waited_ms: u64,
    /// The user's answer to an `ask_user` question, supplied from outside
    /// (an LLM user); `None`: the task's rule-based user answers.
    pub user_answer: Option<&'a str>,
}

/// Where the solver's calls go: an in-process episode, or an episode on a server.
pub trait Env {
    /// Makes one call (after waiting `request.waited_ms`, where waits are real)
    /// and returns what the client saw.
    fn call(&mut self, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation;

    /// Sets the final answer the episode finishes with (for tasks that ask a
    /// question or must be refused); a later answer replaces it. An
    /// environment that plays no such tasks may ignore it.
    fn answer(&mut self, text: &str) {
        let _ = text;
    }

    /// Sets the typed final answer (a JSON object of the fields the task's
    /// answer schema names), judged instead of the text answer.
    fn answer_typed(&mut self, answer: &serde_json::Value) {
        let _ = answer;
    }
}

/// What a client sees of an in-process call: its outcome, or why it was refused.
pub(crate) fn observe(called: Result<&CallRecord, CallError>) -> Observation {
    match called {
        Ok(record) => match &record.outcome {
            Outcome::Result(text) | Outcome::Raw(text) => Observation::Result(text.clone()),
            Outcome::Error(e) => Observation::DomainError { code: e.code.to_owned(), message: e.message.clone() },
            Outcome::Invalid(e) => Observation::Invalid { field: e.field.clone(), message: e.message.clone() },
            Outcome::Failure(f) => Observation::Failure(Fault {
                code: f.code,
                reason: f.reason.to_owned(),
                message: f.message.clone(),
                retry_after_ms: f.retry_after_ms,
            }),
        },
        Err(CallError::InvalidArgument(e)) => Observation::Invalid { field: e.field.clone(), message: e.message.clone() },
        Err(e @ CallError::UnknownTool(_)) => Observation::Invalid { field: "tool_name".into(), message: e.to_string() },
        Err(e @ (CallError::Finished | CallError::CallLimit(_) | CallError::BusLimit(_))) => Observation::Closed(e.to_string()),
    }
}

impl Env for Episode {
    fn call(&mut self, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        let agent = self.acting_agent().map(str::to_owned);
        let options = CallOptions {
            agent: agent.as_deref(),
            idempotency_key: request.idempotency_key,
            waited_ms: Some(request.waited_ms),
            user_answer: request.user_answer,
        };
        observe(self.call_with(tool, arguments_json, &options))
    }

    fn answer(&mut self, text: &str) {
        Episode::answer(self, text);
    }

    fn answer_typed(&mut self, answer: &serde_json::Value) {
        Episode::answer_typed(self, answer.clone());
    }
}

/// Why the solver stopped before the task was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GiveUp {
    /// The caller is suspended for the rest of the episode: no call can succeed.
    Suspended,
    /// The episode accepts no more calls.
    Closed(String),
    /// A call kept failing through every attempt.
    Exhausted(String),
    /// A tool refused a call and the strategy has no way around it.
    Rejected {
        /// The tool.
        tool: String,
        /// The domain error's code, or `INVALID_ARGUMENT`.
        code: String,
        /// Its message.
        message: String,
    },
    /// The results do not hold what the task needs, or no strategy knows the task.
    Stuck(String),
}

impl GiveUp {
    /// Whether no agent could have got past it: a suspension or a spent call budget.
    pub fn unrecoverable(&self) -> bool {
        matches!(self, GiveUp::Suspended | GiveUp::Closed(_))
    }
}

impl std::fmt::Display for GiveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GiveUp::Suspended => f.write_str("suspended for the rest of the episode"),
            GiveUp::Closed(why) => write!(f, "the episode accepts no more calls: {why}"),
            GiveUp::Exhausted(tool) => write!(f, "{tool} failed {MAX_ATTEMPTS} times in a row"),
            GiveUp::Rejected { tool, code, message } => write!(f, "{tool} refused: {code}: {message}"),
            GiveUp::Stuck(why) => write!(f, "stuck: {why}"),
        }
    }
}

/// The result of a solver step: a value, or why the solver gave up.
pub type Step<T> = Result<T, GiveUp>;

/// What the solver can use of a call: its result (in the v1 shape), or the business rule it broke.
#[derive(Debug, Clone, PartialEq)]
pub enum Usable {
    /// The result.
    Ok(Value),
    /// The domain error's code and message.
    Rejected(String, String),
}

/// A strategy: how the solver plays the tasks of one domain.
pub(crate) trait Strategy {
    /// Plays `task` through the session until it is done or cannot be.
    fn solve(task: &Task, session: &mut Session<'_>) -> Step<()>;
}

/// One episode as the solver plays it: the retrying, reading wrapper around an [`Env`].
pub struct Session<'a> {
    env: &'a mut dyn Env,
    domain: Domain,
    /// The task's actions only its user may take: a write of one is asked of the user.
    actions: Vec<UserAction>,
    /// The write that needs the customer verified first, and the customer's
    /// id if the task gives it; `None` once verified (or when none does).
    verify: Option<(&'static str, Option<String>)>,
    /// Virtual milliseconds to declare as waited before the next call.
    wait_ms: u64,
    /// Writes made, for fresh idempotency keys.
    writes: u32,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("domain", &self.domain).field("wait_ms", &self.wait_ms).field("writes", &self.writes).finish()
    }
}

impl<'a> Session<'a> {
    /// A session of an episode of `domain`.
    pub fn new(env: &'a mut dyn Env, domain: Domain) -> Self {
        Self { env, domain, actions: Vec::new(), verify: None, wait_ms: 0, writes: 0 }
    }

    /// The session with `task`'s user-only actions (dual control) asked of its user.
    pub(crate) fn asking_for(mut self, task: &Task) -> Self {
        if let Some(conversation) = &task.conversation {
            self.actions.clone_from(&conversation.actions);
        }
        self
    }

    /// A read whose result must be whole: not empty, not cut, not marked truncated.
    /// (Every call's reply must be a non-empty object: an empty one is re-called.)
    pub(crate) fn read(&mut self, tool: &str, args: Value) -> Step<Usable> {
        self.call(tool, &args, None, &unmarked)
    }

    /// A read whose result must also pass `usable` (hold what the strategy
    /// needs); one that does not is read again.
    pub(crate) fn read_if(&mut self, tool: &str, args: Value, usable: &dyn Fn(&Value) -> bool) -> Step<Usable> {
        self.call(tool, &args, None, &|v| unmarked(v) && usable(v))
    }

    /// A read of a page whose own `truncated` field belongs to the domain (a
    /// page limit), so only `usable` decides whether it is whole.
    pub(crate) fn read_page(&mut self, tool: &str, args: Value, usable: &dyn Fn(&Value) -> bool) -> Step<Usable> {
        self.call(tool, &args, None, usable)
    }

    /// A read of a list the strategy chooses from (an extremum: the cheapest),
    /// confirmed against silent truncation. A list cut without a mark looks
    /// whole, but it is the first half of the whole one: so the longest list
    /// seen wins, and it is taken once [`CONFIRMATIONS`] reads showed it.
    pub(crate) fn read_confirmed(&mut self, tool: &str, args: Value, list: &str) -> Step<Usable> {
        let len = |v: &Value| v.pointer(list).and_then(Value::as_array).map_or(0, Vec::len);
        let mut longest: Option<(Value, u32)> = None;
        for _ in 0..MAX_CONFIRMING_READS {
            let value = match self.read_if(tool, args.clone(), &|v| v.pointer(list).is_some_and(Value::is_array))? {
                Usable::Ok(value) => value,
                rejected @ Usable::Rejected(..) => return Ok(rejected),
            };
            match &mut longest {
                Some((best, seen)) if *best == value => *seen += 1,
                Some((best, _)) if len(best) >= len(&value) => {}
                _ => longest = Some((value, 1)),
            }
            if longest.as_ref().is_some_and(|(_, seen)| *seen >= CONFIRMATIONS) {
                break;
            }
        }
        longest.map(|(value, _)| Usable::Ok(value)).ok_or_else(|| GiveUp::Exhausted(tool.to_owned()))
    }

    /// Gives the episode's final answer.
    pub(crate) fn answer(&mut self, text: &str) {
        self.env.answer(text);
    }

    /// A write under a fresh idempotency key, repeated with the same key until
    /// its reply confirms it.
    pub(crate) fn write(&mut self, tool: &str, args: Value) -> Step<Usable> {
        self.write_if(tool, args, &|_| true)
    }

    /// A write whose reply must also pass `usable` (e.g. carry the new record's
    /// id). Any other reply that is not empty confirms it: the write ran, even
    /// when its reply was cut.
    pub(crate) fn write_if(&mut self, tool: &str, args: Value, usable: &dyn Fn(&Value) -> bool) -> Step<Usable> {
        if let Some(action) = self.actions.iter().find(|a| a.tool == tool).cloned() {
            return self.ask_to_act(&action, &args);
        }
        if self.verify.as_ref().is_some_and(|(gated, _)| *gated == tool) {
            self.verify_customer()?;
        }
        self.writes += 1;
        let key = format!("solver-write-{}", self.writes);
        self.call(tool, &args, Some(&key), usable)
    }

    /// Asks the task's user a question; the user's reply (`answer`, `told`, …).
    pub(crate) fn ask(&mut self, question: &str) -> Step<Value> {
        let args = serde_json::json!({"question": question});
        accepted(ASK_USER, self.call(ASK_USER, &args, None, &|v| v.get("answer").is_some())?)
    }

    /// A write only the user may make, asked of the user: the reply of the
    /// user's own call, as if the solver had made it.
    fn ask_to_act(&mut self, action: &UserAction, args: &Value) -> Step<Usable> {
        let id = args.get(action.id_param).and_then(Value::as_str).unwrap_or_default();
        let reply = self.ask(&format!("Please {} for {} {id}.", action.what, toolenv_core::user::readable(action.id_param)))?;
        match (reply.get("result"), reply.get("error")) {
            (Some(result), _) => Ok(Usable::Ok(result.clone())),
            (None, Some(error)) => Ok(Usable::Rejected(field(error, "code").to_owned(), field(error, "message").to_owned())),
            (None, None) => Err(GiveUp::Stuck(format!("the user did not {}: {}", action.what, field(&reply, "answer")))),
        }
    }

    /// Verifies the customer before a write that needs it: the customer's id
    /// (from the task, or asked of the user), a code sent to their phone,
    /// the user asked to read it, the code verified.
    fn verify_customer(&mut self) -> Step<()> {
        let Some((_, known)) = self.verify.take() else { return Ok(()) };
        let told = |reply: &Value, slot: &str| -> Step<String> {
            reply.pointer(&format!("/told/{slot}")).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
                GiveUp::Stuck(format!("the user did not tell the {}: {}", toolenv_core::user::readable(slot), field(reply, "answer")))
            })
        };
        let customer = match known {
            Some(customer) => customer,
            None => told(&self.ask("What is your customer id?")?, "customer_id")?,
        };
        accepted(SEND_CODE, self.call(SEND_CODE, &json!({"customer_id": customer}), None, &unmarked)?)?;
        let code = told(&self.ask(CODE_QUESTION)?, CODE_SLOT)?;
        accepted(VERIFY, self.call(VERIFY, &json!({"customer_id": customer, "code": code}), None, &unmarked)?)?;
        Ok(())
    }

    /// One logical call, retried until an answer the strategy can use.
    fn call(&mut self, tool: &str, args: &Value, key: Option<&str>, usable: &dyn Fn(&Value) -> bool) -> Step<Usable> {
        let arguments = args.to_string();
        for attempt in 0..MAX_ATTEMPTS {
            let request = Request { idempotency_key: key, waited_ms: std::mem::take(&mut self.wait_ms), user_answer: None };
            let fault = match self.env.call(tool, &arguments, &request) {
                Observation::Result(text) => match serde_json::from_str::<Value>(&text) {
                    // Cut short: the same call again.
                    Err(_) => continue,
                    Ok(value) => match Fault::in_band(&value) {
                        Some(fault) => fault,
                        None => {
                            let value = self.v1(tool, value);
                            if value.as_object().is_some_and(|map| !map.is_empty()) && usable(&value) {
                                return Ok(Usable::Ok(value));
                            }
                            continue;
                        }
                    },
                },
                Observation::DomainError { code, message } => return Ok(Usable::Rejected(code, message)),
                Observation::Failure(fault) => fault,
                Observation::Invalid { field, message } => {
                    return Err(GiveUp::Rejected {
                        tool: tool.to_owned(),
                        code: "INVALID_ARGUMENT".into(),
                        message: format!("{field}: {message}"),
                    });
                }
                Observation::Closed(why) => return Err(GiveUp::Closed(why)),
            };
            if fault.is_final() {
                return Err(GiveUp::Suspended);
            }
            // The advised delay, or an exponential backoff when there is none.
            self.wait_ms = match fault.retry_after_ms {
                Some(ms) => ms.max(0) as u64,
                None => BACKOFF_MS << attempt.min(6),
            };
        }
        Err(GiveUp::Exhausted(tool.to_owned()))
    }

    /// A result in the v1 shape, whichever shape it came in.
    fn v1(&self, tool: &str, value: Value) -> Value {
        if value.get(toolenv_core::drift::API_VERSION_KEY).and_then(Value::as_str) == Some(toolenv_core::drift::API_VERSION) {
            toolenv_core::drift::from_v2(self.domain, tool, &value)
        } else {
            value
        }
    }
}

/// Whether a result is not marked as cut short.
fn unmarked(value: &Value) -> bool {
    value.get("truncated") != Some(&Value::Bool(true))
}

/// Plays `task` through any environment; `Ok` when the strategy finished.
pub fn run(task: &Task, env: &mut dyn Env) -> Step<()> {
    let mut session = Session::new(env, task.domain);
    let Some(conversation) = &task.conversation else { return task.domain.solve(task, &mut session) };
    session.actions.clone_from(&conversation.actions);
    let told = ask_withheld(task, conversation, &mut session)?;
    // The customer's id, where the request gives it (or the user told it).
    session.verify = conversation.verification.as_ref().map(|v| (v.tool, told.slot("customer_id").map(str::to_owned)));
    task.domain.solve(&told, &mut session)
}

/// The task with its withheld slots as the user tells them, asked in one
/// question that names each (the solver knows which slots its strategy
/// needs; their values it learns only from the user's answer).
fn ask_withheld(task: &Task, conversation: &Conversation, session: &mut Session<'_>) -> Step<Task> {
    let names: Vec<String> = conversation.withheld.iter().map(|w| format!("the {}", toolenv_core::user::readable(w.slot))).collect();
    let question = match names.as_slice() {
        [one] => format!("What is {one}?"),
        [rest @ .., last] => format!("What are {} and {last}?", rest.join(", ")),
        [] => return Ok(task.clone()),
    };
    let reply = session.ask(&question)?;
    let mut told = task.clone();
    for withheld in &conversation.withheld {
        let value = reply
            .pointer(&format!("/told/{}", withheld.slot))
            .and_then(Value::as_str)
            .ok_or_else(|| GiveUp::Stuck(format!("the user did not tell the {}: {}", withheld.slot, field(&reply, "answer"))))?;
        if let Some(slot) = told.slots.iter_mut().find(|s| s.name == withheld.slot) {
            value.clone_into(&mut slot.value);
        }
    }
    Ok(told)
}

/// How an in-process episode played by the solver ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// `Ok` when the strategy finished, or why it gave up.
    pub ended: Step<()>,
    /// The episode's verdict.
    pub verdict: Judgement,
}

impl Solution {
    /// Whether the episode was feasible: the solver passed it, or failed it
    /// for a reason other than a fault no agent gets past (a suspension, a
    /// spent call budget). A failure that is not infeasible is the solver's.
    pub fn feasible(&self) -> bool {
        self.verdict.passed || !unrecoverable(&self.ended)
    }
}

/// Whether the solver gave up on a fault no agent gets past.
fn unrecoverable(ended: &Step<()>) -> bool {
    matches!(ended, Err(give_up) if give_up.unrecoverable())
}

/// Plays an episode in-process with the solver, finishes it and returns how
/// it ended. Its verdict's feasibility is what this play showed, as a
/// second solver replay would find it.
pub fn solve(episode: &mut Episode) -> Solution {
    let task = episode.task_ref().clone();
    let ended = run(&task, episode);
    let verdict = episode.finish_with(&crate::finish::Known(Some(!unrecoverable(&ended)))).clone();
    Solution { ended, verdict }
}

// Helpers the strategies share.

/// The kind of a task: the middle part of its id (`cheapest-flight` in
/// `travel/cheapest-flight/001`), which names its template's meaning.
pub(crate) fn kind(task: &Task) -> &str {
    task.id.split('/').nth(1).unwrap_or_default()
}

/// A slot the strategy needs.
pub(crate) fn slot<'t>(task: &'t Task, name: &str) -> Step<&'t str> {
    task.slot(name).ok_or_else(|| GiveUp::Stuck(format!("task {} has no slot '{name}'", task.id)))
}

/// Gives up on a task no strategy knows.
pub(crate) fn unknown(task: &Task) -> GiveUp {
    GiveUp::Stuck(format!("no strategy for tasks of kind '{}' ({})", kind(task), task.id))
}

/// The result of an answer; a refusal is where the strategy gives up.
pub(crate) fn accepted(tool: &str, answer: Usable) -> Step<Value> {
    match answer {
        Usable::Ok(value) => Ok(value),
        Usable::Rejected(code, message) => Err(GiveUp::Rejected { tool: tool.to_owned(), code, message }),
    }
}

/// The text at a JSON pointer of a result.
pub(crate) fn text_at<'v>(value: &'v Value, pointer: &str) -> Step<&'v str> {
    value.pointer(pointer).and_then(Value::as_str).ok_or_else(|| GiveUp::Stuck(format!("no text at {pointer} in {value}")))
}

/// The list at a JSON pointer of a result (empty when absent).
pub(crate) fn list_at<'v>(value: &'v Value, pointer: &str) -> &'v [Value] {
    value.pointer(pointer).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A string field of a record, or "".
pub(crate) fn field<'v>(record: &'v Value, name: &str) -> &'v str {
    record.get(name).and_then(Value::as_str).unwrap_or_default()
}
