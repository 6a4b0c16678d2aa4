//! Error types by rules over the calls, the oracle's failed checks and the
//! fault ledger.
//!
//! The agent's applied writes are matched with the reference solution's (by
//! tool and canonical arguments, in order). An applied write that matches
//! none is an error of its own: a blind repeat of a write whose reply was lost
//! (the verdict's duplicate check names it), a repeat of a completed write,
//! a write of a requested kind with another record's id (wrong entity) or
//! another value (wrong value), or a write of a kind the task did not ask for.
//! A reference write never applied is an error at the agent's stop: it met a
//! recoverable fault and was dropped, a business rule refused it and the agent
//! went on, the call budget ran out, or it was never tried. A failed check of
//! free text (when every requested write was made) is a policy violation; a
//! failed check about an answer, a wrong answer.

use std::collections::BTreeSet;

use serde_json::Value;

use super::continuation::Plan;
use super::{AttributedError, ErrorType, Responsible};
use toolenv_core::chaos::{Alteration, FaultKind, Phase, Stop};
use toolenv_core::{CallRecord, Check, DUPLICATE_CHECK, Outcome, Task, Verdict};

/// Argument names that identify a record rather than set a value.
fn identifies(name: &str) -> bool {
    name.ends_with("_id")
        || name.ends_with("_number")
        || matches!(name, "id" | "customer" | "passenger" | "traveler" | "email" | "name" | "sku" | "product" | "flight" | "order")
}

/// The environment's error at `step`: the suspension that took effect.
pub(super) fn environment(step: u32, suspension: Option<&CallRecord>) -> AttributedError {
    let reason = match suspension {
        Some(call) if !call.mas_faults().is_empty() => {
            let faults: Vec<&str> = call.mas_faults().iter().map(|i| i.fault().name()).collect();
            format!("MAS-FIRE's {} at call {} left no continuation that passes", faults.join(", "), call.index)
        }
        Some(call) => format!("HardRateLimit suspended the caller at call {}: no call could succeed after it", call.index),
        None => "an injected fault no agent gets past made success impossible".to_owned(),
    };
    AttributedError::new(step, Responsible::Environment, ErrorType::UnrecoverableFault, reason)
}

/// What the trajectory and verdict show, classified once.
#[derive(Debug)]
pub(super) struct Evidence {
    /// Errors at applied writes, by step.
    writes: Vec<AttributedError>,
    /// Errors at the agent's stop (missing writes, failed text checks).
    at_stop: Vec<AttributedError>,
}

impl Evidence {
    pub(super) fn of(task: &Task, trajectory: &toolenv_core::Trajectory, verdict: &Verdict) -> Self {
        let calls = &trajectory.calls;
        let n = calls.len() as u32;
        let plan = Plan::of(task);
        let duplicates: BTreeSet<u64> = verdict
            .checks
            .iter()
            .filter(|c| c.name == DUPLICATE_CHECK)
            .filter_map(|c| c.actual.as_array())
            .flatten()
            .filter_map(|d| d.get("call").and_then(Value::as_u64))
            .collect();
        let mut unmatched: Vec<usize> = (0..plan.writes.len()).collect();
        let mut writes = Vec::new();
        for call in calls.iter().filter(|c| c.state_changed) {
            // A dual-control turn applied the user's own call.
            let (tool, arguments) = super::continuation::applied_as(call);
            if let Some(i) = unmatched.iter().position(|&w| plan.writes[w].tool == tool && plan.writes[w].canonical == arguments) {
                unmatched.remove(i);
                continue;
            }
            let (error, reason) = if duplicates.contains(&u64::from(call.index)) {
                (
                    ErrorType::DuplicateWriteAfterAmbiguousCommit,
                    format!("{} repeated a write whose reply was lost but which had been applied", tool),
                )
            } else if plan.writes.iter().any(|w| w.tool == tool && w.canonical == arguments) {
                (ErrorType::RepeatedWrite, format!("{} was made again after it had been applied", tool))
            } else if let Some(w) = unmatched.iter().map(|&w| &plan.writes[w]).find(|w| w.tool == tool) {
                let differing = differing_fields(&w.canonical, arguments);
                let error = if differing.iter().any(|f| identifies(f)) { ErrorType::WrongEntity } else { ErrorType::WrongValue };
                (error, format!("{} with {} other than the task asks for ({})", tool, differing.join(", "), arguments))
            } else {
                (ErrorType::UnrequestedWrite, format!("{} is a write the task did not ask for ({})", tool, arguments))
            };
            writes.push(AttributedError::new(call.index, Responsible::Agent, error, reason));
            // A wrong write right after a reply a fault altered, not read again.
            if let Some(read) = calls[..call.index as usize].iter().rev().find(|c| !c.state_changed)
                && read.fault.is_some_and(|f| altering(f.kind))
                && !matches!(writes.last().map(|e| e.error), Some(ErrorType::DuplicateWriteAfterAmbiguousCommit | ErrorType::RepeatedWrite))
            {
                let kind = read.fault.map(|f| f.kind.name()).unwrap_or_default();
                let reason = format!("{} followed the reply of call {} that {kind} had altered, without reading again", tool, read.index);
                writes.push(AttributedError::new(call.index, Responsible::Agent, ErrorType::ActedOnFaultyReply, reason));
            }
        }
        let mut at_stop = Vec::new();
        // After a suspension no call could succeed: what was left undone is the environment's.
        let suspended = calls.iter().any(|c| c.fault.is_some_and(|f| f.kind == FaultKind::HardRateLimit));
        for w in unmatched.iter().map(|&w| &plan.writes[w]).filter(|_| !suspended) {
            let attempts: Vec<&CallRecord> = calls.iter().filter(|c| c.tool == w.tool && !c.state_changed).collect();
            let (error, reason) = if let Some(failed) = attempts.iter().rev().find(|c| matches!(c.outcome, Outcome::Failure(_))) {
                let kind = failed.fault.map(|f| f.kind.name()).unwrap_or("a fault");
                (
                    ErrorType::GaveUpAfterRecoverableFault,
                    format!("{} failed with {kind} at call {} and was never made", w.tool, failed.index),
                )
            } else if let Some(refused) = attempts.iter().rev().find(|c| matches!(c.outcome, Outcome::Error(_))) {
                let code = if let Outcome::Error(e) = &refused.outcome { e.code } else { "" };
                (
                    ErrorType::IgnoredBusinessError,
                    format!("{} was refused ({code}) at call {} and the agent went on", w.tool, refused.index),
                )
            } else if n >= toolenv_core::DEFAULT_MAX_CALLS {
                (ErrorType::CallBudgetSpent, format!("the call budget ran out before {}", w.tool))
            } else {
                (ErrorType::StoppedEarly, format!("the agent stopped without {} ({})", w.tool, w.canonical))
            };
            if !at_stop.iter().any(|e: &AttributedError| e.error == error) {
                at_stop.push(AttributedError::new(n, Responsible::Agent, error, reason));
            }
        }
        // A text check on a record a missing write would have made is that write's consequence, not a policy error.
        for failed in verdict.failures().filter(|_| !suspended && unmatched.is_empty()) {
            let text = task.checks.iter().any(|c| matches!(c, Check::Text { name, .. } if *name == failed.name));
            let error = if failed.name.to_lowercase().contains("answer") {
                ErrorType::AnswerWrong
            } else if text {
                ErrorType::PolicyViolated
            } else {
                continue;
            };
            if !at_stop.iter().any(|e| e.error == error) {
                at_stop.push(AttributedError::new(n, Responsible::Agent, error, format!("failed check: {}", failed.name)));
            }
        }
        Self { writes, at_stop }
    }

    /// The agent's error at the decisive step `s`: the error of the write
    /// made there, else the first error at or after it, else at the stop.
    pub(super) fn decisive(&self, s: u32) -> AttributedError {
        let mut error = self
            .writes
            .iter()
            .find(|e| e.step == s)
            .or_else(|| self.writes.iter().find(|e| e.step > s))
            .or_else(|| self.at_stop.first())
            .cloned()
            .unwrap_or_else(|| {
                AttributedError::new(s, Responsible::Agent, ErrorType::StoppedEarly, "no continuation passes after this step".to_owned())
            });
        error.step = s;
        error
    }

    /// Every agent error, in step order.
    pub(super) fn agent_errors(&self) -> impl Iterator<Item = AttributedError> + '_ {
        self.writes.iter().chain(&self.at_stop).cloned()
    }
}

/// Whether a fault alters the data of a reply the agent reads (rather than
/// stopping the call, delaying it or losing its reply): read from the
/// kind's phase, so that a new kind is classified where it is declared.
fn altering(kind: FaultKind) -> bool {
    match kind.phase() {
        Phase::OlderState | Phase::SwitchesMode(_) | Phase::Stops(Stop::Empty) | Phase::AltersReply(Alteration::Cut) => true,
        Phase::Stops(_) | Phase::AltersReply(Alteration::Delay | Alteration::LoseReply) => false,
    }
}

/// The top-level argument names whose values differ between two canonical argument texts.
fn differing_fields(expected: &str, actual: &str) -> Vec<String> {
    let parse = |text: &str| serde_json::from_str::<serde_json::Map<String, Value>>(text).unwrap_or_default();
    let (expected, actual) = (parse(expected), parse(actual));
    let names: BTreeSet<&String> = expected.keys().chain(actual.keys()).collect();
    names.into_iter().filter(|k| expected.get(*k) != actual.get(*k)).cloned().collect()
}
