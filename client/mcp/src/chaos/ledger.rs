//! The chaos proxy's ledger: one JSON line per tool call, with the field
//! names of an episode's call record (`ToolCallRecord`: `index`,
//! `tool_name`, `arguments_json`, `fault`, `drawn_without_effect`,
//! `delay_ms`, `waited_ms`, `failure`), and the fault recovery figures a
//! report reads from it ([`toolenv_core::fault_ledger`] defines them).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolenv_core::chaos::FaultKind;
use toolenv_core::{FaultStats, KindCounts, LedgerCall, LedgerReply, fault_ledger};

/// The fault that met a call and took effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRecord {
    /// The fault type.
    pub kind: FaultKind,
    /// Drawn on this call (false: a persistent fault state carried over).
    pub new: bool,
    /// Whether a retry or later call can still succeed.
    pub recoverable: bool,
}

/// An injected failure, as the client got it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureRecord {
    /// The gRPC-style code, e.g. `RESOURCE_EXHAUSTED`.
    pub code: String,
    /// The reason, e.g. `RATE_LIMIT_EXCEEDED`.
    pub reason: String,
    /// The message.
    pub message: String,
    /// Virtual milliseconds to wait before retrying; -1: do not retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<i64>,
}

/// How a call was answered: the kind of `toolenv_core::Outcome` it would be, without its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// A tool result (`isError` absent or false), possibly delayed, emptied,
    /// cut to valid JSON, stale or drifted by a fault.
    Result,
    /// The tool's own error result (`isError: true`): a domain error.
    Error,
    /// A result cut short so that its text is no longer valid JSON.
    Raw,
    /// A failure injected by the proxy (an `isError` result or a JSON-RPC error).
    Failure,
    /// A JSON-RPC error of the upstream server, or a reply the proxy could not read.
    Invalid,
}

/// One tool call through the proxy: a line of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// The session (`--session`) the call belongs to.
    pub session: String,
    /// The seed of the draws.
    pub seed: u64,
    /// The fault profile's name.
    pub fault_profile: String,
    /// The call's 0-based index within the session.
    pub index: u32,
    /// The tool's name as sent.
    pub tool_name: String,
    /// The arguments as sent (as JSON text).
    pub arguments_json: String,
    /// How the call was answered.
    pub outcome: OutcomeKind,
    /// The injected failure, when `outcome` is `failure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureRecord>,
    /// The fault that met the call and took effect, if any.
    pub fault: Option<FaultRecord>,
    /// A fault drawn for the call that had no effect; empty when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub drawn_without_effect: String,
    /// Simulated delay before the reply, in milliseconds (before time scaling).
    pub delay_ms: u64,
    /// Virtual milliseconds the client declared it waited (`_meta` `toolenv/waited_ms`).
    pub waited_ms: u64,
    /// Whether the call reached the upstream server.
    pub forwarded: bool,
    /// The JSON-RPC message the client got, exactly.
    pub reply: String,
}

impl Call {
    /// What the fault ledger reads of the call.
    pub fn ledger_call(&self) -> LedgerCall<'_> {
        let reply = match self.outcome {
            OutcomeKind::Failure => LedgerReply::Failure,
            OutcomeKind::Result | OutcomeKind::Error => LedgerReply::Answer,
            OutcomeKind::Raw | OutcomeKind::Invalid => LedgerReply::Other,
        };
        LedgerCall { tool: &self.tool_name, fault: self.fault.map(|f| (f.kind, f.new)), reply }
    }
}

/// Fault recovery read from ledgers: per kind, summed over sessions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Sessions read (distinct (file, session) pairs).
    pub sessions: u32,
    /// Tool calls read.
    pub calls: u32,
    /// Calls a fault met (newly drawn or carried over).
    pub calls_met: u32,
    /// Draws that had no effect, by kind.
    pub drawn_without_effect: BTreeMap<String, u32>,
    /// The fault ledger per kind.
    pub kinds: BTreeMap<FaultKind, KindCounts>,
    /// The totals: sums over the kinds.
    pub injected: u32,
    /// Encountered calls (explicit errors), summed over kinds.
    pub encountered: u32,
    /// Recovered calls, summed over kinds.
    pub recovered: u32,
    /// Extra calls, summed over kinds.
    pub extra_calls: u32,
    /// Retried calls, summed over kinds.
    pub retried: u32,
}

/// Why a ledger could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ReadError {
    /// The file.
    pub file: String,
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses a ledger's text (JSON lines; blank lines skipped).
pub fn parse(file: &str, text: &str) -> Result<Vec<Call>, ReadError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| ReadError { file: file.to_owned(), line: i + 1, message: e.to_string() }))
        .collect()
}

/// The fault ledger of sessions: each session's calls in index order,
/// counted by [`fault_ledger`], the kinds summed over sessions.
pub fn summarize<'a>(sessions: impl IntoIterator<Item = &'a [Call]>) -> Summary {
    let mut summary = Summary::default();
    for calls in sessions {
        let mut by_session: BTreeMap<&str, Vec<&Call>> = BTreeMap::new();
        for call in calls {
            by_session.entry(&call.session).or_default().push(call);
        }
        for mut calls in by_session.into_values() {
            calls.sort_by_key(|c| c.index);
            summary.sessions += 1;
            summary.calls += u32::try_from(calls.len()).unwrap_or(u32::MAX);
            for call in &calls {
                summary.calls_met += u32::from(call.fault.is_some());
                if !call.drawn_without_effect.is_empty() {
                    *summary.drawn_without_effect.entry(call.drawn_without_effect.clone()).or_default() += 1;
                }
            }
            let ledger_calls: Vec<LedgerCall<'_>> = calls.iter().map(|c| c.ledger_call()).collect();
            for (kind, counts) in fault_ledger(&ledger_calls) {
                summary.kinds.entry(kind).or_default().add(&counts);
            }
        }
    }
    let totals = FaultStats::of_kinds(summary.kinds.values());
    summary.injected = totals.injected;
    summary.encountered = totals.encountered;
    summary.recovered = totals.recovered;
    summary.extra_calls = totals.extra_calls;
    summary.retried = summary.kinds.values().map(|k| k.retried).sum();
    summary
}
