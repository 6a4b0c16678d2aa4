//! The fault ledger of a finished episode: what the verdict counts and notes.
//!
//! Only faults that took effect are in a call's `fault`; a draw that changed
//! nothing is kept apart (`CallRecord::drawn_without_effect`) and is neither
//! counted nor noted here.
//!
//! The ledger is defined once, on [`fault_ledger`]; the verdict's
//! [`FaultStats`] are its sums, and every report shows these figures.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::CallRecord;
use crate::{chaos::FaultKind, delivery::Outcome};

/// Fault recovery figures of an episode (the paper's Table 8 columns): the
/// sums over the kinds of its [`fault_ledger`], which defines them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FaultStats {
    /// Faults injected: calls where a fault was newly drawn and took effect
    /// (not counting calls a persistent state carried over, nor draws that
    /// changed nothing).
    pub injected: u32,
    /// Calls answered with an explicit error status (timeouts, resets, rate
    /// limits, suspensions, outages, lost replies): the paper's "faults
    /// encountered".
    pub encountered: u32,
    /// Encountered calls after which a later call of the same tool got an
    /// answer (a result or a domain error) without a fault.
    pub recovered: u32,
    /// For each recovered call, the calls of the same tool after it up to and
    /// including the answered one.
    pub extra_calls: u32,
}

impl FaultStats {
    /// The totals of a per-kind ledger: each figure summed over the kinds.
    pub fn of_kinds<'a>(kinds: impl IntoIterator<Item = &'a KindCounts>) -> FaultStats {
        kinds.into_iter().fold(FaultStats::default(), |total, k| FaultStats {
            injected: total.injected.saturating_add(k.injected),
            encountered: total.encountered.saturating_add(k.encountered),
            recovered: total.recovered.saturating_add(k.recovered),
            extra_calls: total.extra_calls.saturating_add(k.extra_calls),
        })
    }
}

/// The fault ledger of one episode restricted to one fault kind (defined on
/// [`fault_ledger`]); the episode's [`FaultStats`] are the sums over kinds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindCounts {
    /// Calls this kind of fault met, newly drawn or carried over by a
    /// persistent fault state (a suspension, a cascade, a rate-limit window).
    pub hits: u32,
    /// Of the hits, calls where the fault was newly drawn: faults injected.
    pub injected: u32,
    /// Of the hits, calls answered with an explicit error status.
    pub encountered: u32,
    /// Of the hits, calls followed by a later call of the same tool: the
    /// agent reacted (retries on a fault that never cleared included).
    pub retried: u32,
    /// Of the encountered, calls followed by a later answer (a result or a
    /// domain error) of the same tool with no fault on it.
    pub recovered: u32,
    /// For each recovered call, the calls of the same tool after it up to and
    /// including the answered one.
    pub extra_calls: u32,
    /// Of the hits, calls followed by a later fault-free answer of the same
    /// tool: `recovered` read over every hit, silent faults included (what
    /// MAS-FIRE's local recovery reads).
    pub answered_after: u32,
}

impl KindCounts {
    /// Adds another ledger's counts to these.
    pub fn add(&mut self, other: &KindCounts) {
        self.hits = self.hits.saturating_add(other.hits);
        self.injected = self.injected.saturating_add(other.injected);
        self.encountered = self.encountered.saturating_add(other.encountered);
        self.retried = self.retried.saturating_add(other.retried);
        self.recovered = self.recovered.saturating_add(other.recovered);
        self.extra_calls = self.extra_calls.saturating_add(other.extra_calls);
        self.answered_after = self.answered_after.saturating_add(other.answered_after);
    }
}

/// How a call was answered, as far as the fault ledger is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerReply {
    /// An explicit error status (timeout, reset, rate limit, suspension).
    Failure,
    /// A whole result or a domain error: the tool answered.
    Answer,
    /// Anything else: a payload cut short, a rejected call.
    Other,
}

/// What the fault ledger reads of one call: the same from a domain
/// [`CallRecord`] and from its wire form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerCall<'a> {
    /// The tool called.
    pub tool: &'a str,
    /// The fault that met the call, and whether it was newly drawn.
    pub fault: Option<(FaultKind, bool)>,
    /// How it was answered.
    pub reply: LedgerReply,
}

impl<'a> From<&'a CallRecord> for LedgerCall<'a> {
    fn from(call: &'a CallRecord) -> Self {
        let reply = match &call.outcome {
            Outcome::Failure(_) => LedgerReply::Failure,
            Outcome::Result(_) | Outcome::Error(_) => LedgerReply::Answer,
            Outcome::Raw(_) | Outcome::Invalid(_) => LedgerReply::Other,
        };
        LedgerCall { tool: &call.tool, fault: call.fault.map(|f| (f.kind, f.new)), reply }
    }
}

/// Counts the fault ledger of a trajectory's calls by fault kind; kinds no
/// fault of which met a call are absent.
///
/// # The ledger, defined once
///
/// The ledger counts *calls*, as ReliabilityBench's Table 8 does ("faults
/// encountered" are explicit error responses). Per fault kind, over the
/// calls a fault of that kind met:
///
/// - **hits**: calls the fault met, newly drawn or carried over by a
///   persistent fault state (a suspension, a cascade, a rate-limit window);
/// - **injected**: hits where the fault was newly drawn — the faults
///   injected (a carried-over call is the same fault met again);
/// - **encountered**: hits answered with an explicit error status (timeout,
///   reset, rate limit, suspension, outage, a lost reply); a fault that alters
///   a reply the tool gave (cut, stale, drifted, empty, late) is a hit but
///   not encountered;
/// - **recovered**: encountered hits after which a later call of the same
///   tool was answered — a result or a domain error — with no fault on it;
/// - **extra calls**: for each recovered hit, the calls of that tool after it
///   up to and including the answered one: what getting past it took. A
///   refusal never got past adds none (its retries are counted in `retried`);
/// - **retried**: hits followed by a later call of the same tool, whatever
///   became of it: the agent reacted, the retries spent on a fault that never
///   cleared included;
/// - **answered after**: hits followed by a later fault-free answer of the
///   same tool — recovery read over every hit, silent faults included, which
///   MAS-FIRE's local recovery (L_f) reads.
///
/// So per kind `recovered ≤ encountered ≤ hits`, `injected ≤ hits`,
/// `recovered ≤ answered after ≤ retried ≤ hits`, and `extra calls ≥
/// recovered`. The episode's totals ([`FaultStats`]: injected, encountered,
/// recovered, extra calls) are the sums over the kinds, by construction, and
/// the same as counting the calls directly: a call is answered with an error
/// status only when a fault met it.
pub fn fault_ledger(calls: &[LedgerCall<'_>]) -> BTreeMap<FaultKind, KindCounts> {
    let mut ledger: BTreeMap<FaultKind, KindCounts> = BTreeMap::new();
    for (i, call) in calls.iter().enumerate() {
        let Some((kind, new)) = call.fault else { continue };
        let counts = ledger.entry(kind).or_default();
        counts.hits += 1;
        counts.injected += u32::from(new);
        let encountered = call.reply == LedgerReply::Failure;
        counts.encountered += u32::from(encountered);
        let mut later = calls[i + 1..].iter().filter(|c| c.tool == call.tool).peekable();
        counts.retried += u32::from(later.peek().is_some());
        // The calls up to and including the first fault-free answer, if any.
        let answered = later.position(|c| c.fault.is_none() && c.reply == LedgerReply::Answer);
        if let Some(position) = answered {
            counts.answered_after += 1;
            if encountered {
                counts.recovered += 1;
                counts.extra_calls += u32::try_from(position).unwrap_or(u32::MAX).saturating_add(1);
            }
        }
    }
    ledger
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

/// Counts the fault ledger of a finished episode: its per-kind ledger's sums.
pub(super) fn fault_stats(calls: &[CallRecord]) -> FaultStats {
    let calls: Vec<LedgerCall<'_>> = calls.iter().map(LedgerCall::from).collect();
    FaultStats::of_kinds(fault_ledger(&calls).values())
}
