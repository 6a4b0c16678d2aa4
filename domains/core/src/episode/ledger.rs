//! The fault ledger of a finished episode: what the verdict counts and notes.
//!
//! Only faults that took effect are in a call's `fault`; a draw that changed
//! nothing is kept apart (`CallRecord::drawn_without_effect`) and is neither
//! counted nor noted here.

use serde::Serialize;

use super::CallRecord;
use crate::{chaos::FaultKind, delivery::Outcome};

/// Fault recovery figures of an episode (the paper's Table 8 columns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FaultStats {
    /// Faults drawn on a call that took effect (not counting calls a
    /// persistent state carried over, nor draws that changed nothing).
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

/// Notes on the faults that change what an agent could do.
pub(super) fn fault_notes(calls: &[CallRecord]) -> Vec<String> {
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
pub(super) fn fault_stats(calls: &[CallRecord]) -> FaultStats {
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
