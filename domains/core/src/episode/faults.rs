//! How a fault acts on a call, by its phase, and whether it took effect.
//!
//! Each kind has one rule for "took effect", so the ledger counts real
//! events, not dice:
//! - faults that stop the call with a failure (timeout, reset, rate limits,
//!   cascade) always do: the agent gets a failure instead of a reply;
//! - an empty reply does, unless the call is a read whose real result
//!   carries nothing either (every field empty, as a search that found nothing);
//! - a high latency does when its delay is not zero (virtual time: the same at
//!   every time scale, so trajectories do not depend on it);
//! - a partial response does when it cut something off a result;
//! - schema drift does when it switched the mode and the reply it was drawn
//!   on was delivered in the v2 shape (not on a business error, not when the
//!   results were already drifted);
//! - stale data does on a read whose older snapshot answers differently from
//!   the current state (never on a write, nor before any write);
//! - an ambiguous commit does when it lost a result (after the tool ran).
//!
//! Faults that alter a reply leave a business error as it is: the draw had
//! no effect.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Episode, FaultRecord};
use crate::{
    World,
    chaos::{Alteration, FaultKind, Mode, Phase, Purpose, Stop},
    delivery::{Answer, Delivery, Failure, FailureCode, cut_list, cut_text, rate_limited, reply, reset, suspended, timed_out},
    json,
    tool::ToolResult,
    world::ToolRef,
};

/// Persistent fault states, counted in calls (and virtual milliseconds for
/// the rate-limit window).
#[derive(Debug, Clone, Default)]
pub(super) struct FaultState {
    pub(super) suspended: bool,
    pub(super) drifted: bool,
    pub(super) cascade_left: u32,
    /// Virtual time now, and until when a soft rate limit rejects calls.
    pub(super) clock_ms: u64,
    pub(super) limited_until_ms: u64,
    /// Executed writes by idempotency key: (tool, canonical args, result text).
    pub(super) idempotent: BTreeMap<String, (String, String, ToolResult)>,
    /// Bytes the idempotency keys and what is kept for them hold
    /// (key, tool, canonical arguments, result text), against
    /// [`super::MAX_IDEMPOTENCY_BYTES`].
    pub(super) idempotent_bytes: usize,
    /// Writes whose reply was lost, by (tool, canonical args).
    pub(super) ambiguous: Vec<(u32, String, String)>,
    /// Later writes that repeated an ambiguous one: (call, repeated call).
    pub(super) duplicates: Vec<(u32, u32)>,
    /// The first call that sent each idempotency key.
    pub(super) key_calls: BTreeMap<String, u32>,
    /// Draws no HardRateLimit and lifts a suspension: the counterfactual
    /// attribution asks "would the agent's prefix pass without it?".
    pub(super) spare_suspension: bool,
}

/// What a valid call asks for.
#[derive(Debug, Clone, Copy)]
pub(super) struct ToolCall<'a> {
    pub(super) index: u32,
    pub(super) spec: ToolRef,
    pub(super) args: &'a crate::Args,
    pub(super) canonical_args: &'a str,
    pub(super) key: Option<&'a str>,
}

impl Episode {
    /// Plays a call under the phase of the fault drawn for it (`None`: no
    /// fault), and says whether the fault took effect.
    pub(super) fn play_fault(
        &mut self,
        phase: Option<Phase>,
        call: &ToolCall<'_>,
        delay_ms: &mut u64,
        state_changed: &mut bool,
    ) -> (Delivery, bool) {
        match phase {
            None => {
                let result = self.execute(call, state_changed);
                (self.plain(call, result), false)
            }
            Some(Phase::Stops(stop)) => self.stop(stop, call, delay_ms, state_changed),
            Some(Phase::OlderState) => self.stale(call, state_changed),
            Some(Phase::SwitchesMode(mode)) => {
                let result = self.execute(call, state_changed);
                // The mode switches only when this reply is a result, delivered in the new shape.
                let switches = result.is_ok()
                    && match mode {
                        Mode::SchemaV2 => !std::mem::replace(&mut self.faults.drifted, true),
                    };
                (self.plain(call, result), switches)
            }
            Some(Phase::AltersReply(alteration)) => match self.execute(call, state_changed) {
                Ok(text) => self.alter(alteration, text, call, *state_changed, delay_ms),
                // A broken rule reaches the agent as it is: the draw had no effect.
                Err(error) => (Delivery::Reply(Answer::Error(error)), false),
            },
        }
    }

    /// A persistent fault state that answers this call without a new draw.
    pub(super) fn carried_over_fault(&mut self, index: u32) -> Option<(FaultRecord, Failure)> {
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
    /// setting the fault state it leaves. Every stop takes effect but an
    /// empty reply to a read whose real result is empty already: that read
    /// gets its real result.
    fn stop(&mut self, stop: Stop, call: &ToolCall<'_>, delay_ms: &mut u64, state_changed: &mut bool) -> (Delivery, bool) {
        let params = &self.chaos.profile().params;
        let failure = match stop {
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
                self.cascade_failure(call.index)
            }
            Stop::Empty => {
                // A read changes nothing, so it may run to see whether its
                // real result carries anything an empty reply would not.
                if !call.spec.mutates_state {
                    let mut changed = false;
                    let result = self.execute(call, &mut changed);
                    if result.as_deref().is_ok_and(carries_nothing) {
                        *state_changed = changed;
                        return (self.plain(call, result), false);
                    }
                }
                // A valid but empty reply.
                return (Delivery::Reply(Answer::Result("{}".to_owned())), true);
            }
        };
        (Delivery::Failure(failure), true)
    }

    /// A read answered from the state before the most recent change, when
    /// that state answers differently; a write, or a read the older state
    /// answers alike, runs as it is (the draw had no effect).
    fn stale(&mut self, call: &ToolCall<'_>, state_changed: &mut bool) -> (Delivery, bool) {
        let result = self.execute(call, state_changed);
        let previous = if call.spec.mutates_state { None } else { self.previous_world() };
        match previous.map(|mut previous| previous.apply(call.spec, call.args, &self.task.context()).0) {
            Some(old) if old != result => {
                *state_changed = false;
                (self.plain(call, old), true)
            }
            _ => (self.plain(call, result), false),
        }
    }

    /// Alters the reply of a call that ran and broke no rule.
    fn alter(&mut self, alteration: Alteration, text: String, call: &ToolCall<'_>, changed: bool, delay_ms: &mut u64) -> (Delivery, bool) {
        match alteration {
            Alteration::Delay => {
                *delay_ms = self.chaos.latency_ms(&self.dice, call.index);
                (Delivery::Reply(Answer::Result(self.shaped(call.spec, text))), *delay_ms > 0)
            }
            Alteration::Cut => {
                let draw = self.dice.draw(call.index, Purpose::Partial);
                // A list is cut in the v1 shape, where the domain's markers have known names.
                if let Some(cut) = cut_list(&text, draw) {
                    return (Delivery::Reply(Answer::Result(self.shaped(call.spec, cut))), true);
                }
                let whole = self.shaped(call.spec, text);
                match cut_text(&whole, draw) {
                    Some(cut) => (Delivery::Reply(cut), true),
                    None => (Delivery::Reply(Answer::Result(whole)), false),
                }
            }
            Alteration::LoseReply => {
                if changed {
                    self.faults.ambiguous.push((call.index, call.spec.name.to_owned(), call.canonical_args.to_owned()));
                }
                let failure = if self.dice.below(call.index, Purpose::Variant, 2) == 0 {
                    *delay_ms = self.chaos.profile().params.timeout_ms;
                    timed_out(*delay_ms)
                } else {
                    reset()
                };
                (Delivery::Failure(failure), true)
            }
        }
    }

    /// A tool's answer as it reaches the agent with no fault altering it:
    /// in the v2 shape once the results drifted.
    fn plain(&self, call: &ToolCall<'_>, result: ToolResult) -> Delivery {
        reply(result.map(|text| self.shaped(call.spec, text)))
    }

    /// A result's text in the current shape.
    fn shaped(&self, spec: ToolRef, text: String) -> String {
        // Only a drifted reply needs the result as a value.
        if self.faults.drifted { json::canonical(&crate::drift::to_v2(self.task.domain, spec.name, &parse(&text))) } else { text }
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

    /// Runs the tool against the current state, in the v1 shape, and keeps
    /// the idempotency and duplicate bookkeeping.
    fn execute(&mut self, call: &ToolCall<'_>, state_changed: &mut bool) -> ToolResult {
        let spec = call.spec;
        if let Some((_, _, result)) = call.key.and_then(|k| self.faults.idempotent.get(k)) {
            // A retry of an executed write: the first result, nothing runs again.
            *state_changed = false;
            return result.clone();
        }
        let ctx = self.task.context();
        let (result, changed) = World::apply_shared(&mut self.world, spec, call.args, &ctx);
        if changed {
            let repeats = self.faults.ambiguous.iter().find(|(_, t, a)| t == spec.name && a == call.canonical_args).map(|(i, _, _)| *i);
            if let (Some(first), None) = (repeats, call.key) {
                self.faults.duplicates.push((first, self.trajectory.calls.len() as u32));
            }
        }
        if let Some(key) = call.key {
            let kept = match &result {
                Ok(text) => text.len(),
                Err(error) => error.message.len() + error.code.len(),
            };
            self.faults.idempotent_bytes += key.len() + spec.name.len() + call.canonical_args.len() + kept;
            self.faults.idempotent.insert(key.to_owned(), (spec.name.to_owned(), call.canonical_args.to_owned(), result.clone()));
        }
        *state_changed = changed;
        result
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
        let mut world = World::clone(&self.task.initial);
        for call in changes.take(last) {
            // A call that changed the state had a tool of the domain and valid canonical arguments.
            let Some(spec) = self.task.domain.tool(&call.tool) else { continue };
            let Ok(args) = spec.read_arguments(&call.arguments) else { continue };
            let (_, changed) = world.apply(spec, &args, &ctx);
            debug_assert!(changed, "replaying call {} changes the state again", call.index);
        }
        Some(world)
    }
}

/// A tool's result text as a value. The text is JSON the core wrote itself,
/// so the fallback never shows.
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Whether a result says nothing an empty reply would not: every field is
/// empty (null, false, zero, an empty string, list or object), as in a
/// search that found nothing.
fn carries_nothing(text: &str) -> bool {
    match parse(text) {
        Value::Object(map) => map.values().all(|v| match v {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            Value::Array(items) => items.is_empty(),
            Value::Object(fields) => fields.is_empty(),
        }),
        _ => false,
    }
}
