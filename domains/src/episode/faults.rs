//! How a fault acts on a call, and whether it took effect.
//!
//! Each kind has one rule for "took effect", so the ledger counts real
//! events, not dice:
//! - faults that stop the call (timeout, reset, rate limits, cascade) always
//!   do: the agent gets a failure instead of a reply;
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

use super::outcome::{Failure, FailureCode, Outcome, rate_limited, reset, suspended, timed_out};
use super::{Episode, FaultRecord};
use crate::World;
use crate::chaos::{FaultKind, Purpose};
use crate::json;
use crate::tool::ToolResult;
use crate::world::ToolRef;

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
    /// Writes whose reply was lost, by (tool, canonical args).
    pub(super) ambiguous: Vec<(u32, String, String)>,
    /// Later writes that repeated an ambiguous one: (call, repeated call).
    pub(super) duplicates: Vec<(u32, u32)>,
}

/// One valid call on its way to the tool.
pub(super) struct Pending<'c> {
    pub(super) spec: ToolRef,
    pub(super) args: &'c crate::Args,
    pub(super) canonical_args: &'c str,
    pub(super) key: Option<&'c str>,
    pub(super) index: u32,
}

/// What a call came to once its fault (if any) acted.
pub(super) struct Delivery {
    pub(super) outcome: Outcome,
    pub(super) state_changed: bool,
    /// Simulated delay before the reply.
    pub(super) delay_ms: u64,
    /// Whether the drawn fault took effect (false with no fault).
    pub(super) took_effect: bool,
}

impl Delivery {
    fn new(outcome: Outcome, state_changed: bool, took_effect: bool) -> Self {
        Self { outcome, state_changed, delay_ms: 0, took_effect }
    }

    fn failure(failure: Failure) -> Self {
        Self::new(Outcome::Failure(failure), false, true)
    }

    /// A call a persistent fault state answered.
    pub(super) fn carried(failure: Failure) -> Self {
        Self::failure(failure)
    }
}

impl Episode {
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

    /// Runs a call under its newly drawn fault (or none).
    pub(super) fn deliver(&mut self, call: &Pending<'_>, kind: Option<FaultKind>) -> Delivery {
        let Some(kind) = kind else {
            let (result, changed) = self.execute(call);
            return Delivery::new(self.plain(call.spec, result), changed, false);
        };
        let params = &self.chaos.profile().params;
        match kind {
            FaultKind::TransientTimeout => {
                let timeout_ms = params.timeout_ms;
                Delivery { delay_ms: timeout_ms, ..Delivery::failure(timed_out(timeout_ms)) }
            }
            FaultKind::ConnectionReset => Delivery::failure(reset()),
            FaultKind::SoftRateLimit => {
                let retry_after_ms = params.retry_after_ms;
                self.faults.limited_until_ms = self.faults.clock_ms.saturating_add(retry_after_ms);
                Delivery::failure(rate_limited(retry_after_ms, "rate limit exceeded"))
            }
            FaultKind::HardRateLimit => {
                self.faults.suspended = true;
                Delivery::failure(suspended())
            }
            FaultKind::CascadingFailure => {
                self.faults.cascade_left = params.cascade_calls;
                Delivery::failure(self.cascade_failure(call.index))
            }
            FaultKind::EmptyResponse => {
                // A valid but empty reply; the tool did not run. A read whose
                // real result carries nothing either gets that result.
                if !call.spec.mutates_state {
                    let (result, changed) = self.execute(call);
                    if let Ok(text) = &result
                        && carries_nothing(text)
                    {
                        return Delivery::new(self.plain(call.spec, result), changed, false);
                    }
                }
                Delivery::new(Outcome::Result("{}".to_owned()), false, true)
            }
            FaultKind::HighLatency => {
                let (result, changed) = self.execute(call);
                if result.is_err() {
                    return Delivery::new(self.plain(call.spec, result), changed, false);
                }
                let delay_ms = self.chaos.latency_ms(&self.dice, call.index);
                Delivery { delay_ms, ..Delivery::new(self.plain(call.spec, result), changed, delay_ms > 0) }
            }
            FaultKind::PartialResponse => {
                let (result, changed) = self.execute(call);
                match result {
                    Ok(text) => {
                        let draw = self.dice.draw(call.index, Purpose::Partial);
                        // A list is cut in the v1 shape, where the domain's markers have known names.
                        let (outcome, took_effect) = match cut_list(&text, draw) {
                            Some(cut) => (Outcome::Result(self.shaped(call.spec, cut)), true),
                            None => {
                                let whole = self.shaped(call.spec, text);
                                match cut_text(&whole, draw) {
                                    Some(cut) => (cut, true),
                                    None => (Outcome::Result(whole), false),
                                }
                            }
                        };
                        Delivery::new(outcome, changed, took_effect)
                    }
                    Err(error) => Delivery::new(Outcome::Error(error), changed, false),
                }
            }
            FaultKind::SchemaDrift => {
                let (result, changed) = self.execute(call);
                // The mode switches only when this reply is a result, delivered in v2.
                let switches = result.is_ok() && !self.faults.drifted;
                self.faults.drifted |= switches;
                Delivery::new(self.plain(call.spec, result), changed, switches)
            }
            FaultKind::StaleData => {
                let (result, changed) = self.execute(call);
                let stale = if call.spec.mutates_state { None } else { self.previous_world() };
                match stale.map(|mut previous| previous.apply(call.spec, call.args, &self.task.context()).0) {
                    Some(old) if old != result => Delivery::new(self.plain(call.spec, old), false, true),
                    _ => Delivery::new(self.plain(call.spec, result), changed, false),
                }
            }
            FaultKind::AmbiguousCommit => {
                let (result, changed) = self.execute(call);
                if result.is_err() {
                    return Delivery::new(self.plain(call.spec, result), changed, false);
                }
                if changed {
                    self.faults.ambiguous.push((call.index, call.spec.name.to_owned(), call.canonical_args.to_owned()));
                }
                let timeout_ms = self.chaos.profile().params.timeout_ms;
                if self.dice.below(call.index, Purpose::Variant, 2) == 0 {
                    Delivery { delay_ms: timeout_ms, ..Delivery::new(Outcome::Failure(timed_out(timeout_ms)), changed, true) }
                } else {
                    Delivery::new(Outcome::Failure(reset()), changed, true)
                }
            }
        }
    }

    /// A tool's answer as it reaches the agent with no fault acting on it:
    /// in the v2 shape once the results drifted.
    fn plain(&self, spec: ToolRef, result: ToolResult) -> Outcome {
        match result {
            Ok(text) => Outcome::Result(self.shaped(spec, text)),
            Err(error) => Outcome::Error(error),
        }
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

    /// Runs the tool and keeps the idempotency and duplicate bookkeeping.
    fn execute(&mut self, call: &Pending<'_>) -> (ToolResult, bool) {
        let spec = call.spec;
        if let Some((_, _, result)) = call.key.and_then(|k| self.faults.idempotent.get(k)) {
            // A retry of an executed write: the first result, nothing runs again.
            return (result.clone(), false);
        }
        let ctx = self.task.context();
        let (result, changed) = self.world.apply(spec, call.args, &ctx);
        if changed {
            let repeats = self.faults.ambiguous.iter().find(|(_, t, a)| t == spec.name && a == call.canonical_args).map(|(i, _, _)| *i);
            if let (Some(first), None) = (repeats, call.key) {
                self.faults.duplicates.push((first, self.trajectory.calls.len() as u32));
            }
        }
        if let Some(key) = call.key {
            self.faults.idempotent.insert(key.to_owned(), (spec.name.to_owned(), call.canonical_args.to_owned(), result.clone()));
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

/// The fields of a result that describe its list's length in the v1
/// shapes: a page limit's `truncated` (ecommerce searches) and the counts of
/// matches (`count`, `total_matches`). A silent cut drops them with the
/// items, so that a cut list never carries a false marker.
const LIST_MARKERS: [&str; 3] = ["truncated", "count", "total_matches"];

/// Cuts the first list of a result (of at least two items) to its first
/// half; `None` when there is no such list. A marked cut says
/// `"truncated": true`; a silent one drops the result's own markers
/// ([`LIST_MARKERS`]), which would otherwise say the list is whole.
fn cut_list(text: &str, draw: u64) -> Option<String> {
    let mut value = parse(text);
    let marked = draw & 1 == 0;
    let Value::Object(map) = &mut value else { return None };
    let list = map.values_mut().filter_map(Value::as_array_mut).find(|l| l.len() >= 2)?;
    list.truncate(list.len().div_ceil(2));
    if marked {
        map.insert("truncated".into(), Value::Bool(true));
    } else {
        for marker in LIST_MARKERS {
            map.remove(marker);
        }
    }
    Some(json::canonical(&value))
}

/// Cuts a result's JSON text between a quarter and three quarters of its
/// length; `None` when nothing would be cut off.
fn cut_text(text: &str, draw: u64) -> Option<Outcome> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let keep = chars.len() / 4 + (draw >> 1) as usize % (chars.len() / 2).max(1);
    let end = chars.get(keep).map_or(text.len(), |&(i, _)| i);
    (end < text.len()).then(|| Outcome::Raw(text[..end].to_owned()))
}
