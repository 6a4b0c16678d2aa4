//! What a call the proxy stops gets instead of the server's reply: an
//! `isError` result with a structured error and retry advice, a JSON-RPC
//! error where a transport would fail, or an emptied result; and the
//! JSON-RPC errors the proxy answers on its own.

use serde_json::{Value, json};

use super::ledger::FailureRecord;
use super::{REQUEST_TIMEOUT, State, UNAVAILABLE};

/// The `resultType` of a result the proxy makes itself (an `isError` result,
/// an emptied one): MCP's later revisions require it (rmcp writes it, the
/// Python SDK 2.x refuses a result without it), and earlier clients ignore it.
const RESULT_TYPE: &str = "complete";

/// An emptied result: the text `{}`.
pub(super) fn empty_result(id: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": RESULT_TYPE, "content": [{"type": "text", "text": "{}"}]}}).to_string()
}

/// How a call the proxy stops is answered.
pub(super) enum Stopped {
    /// `{}`.
    Empty,
    /// A failure, as a JSON-RPC error (true) or an `isError` result (false).
    Failure(FailureRecord, bool),
}

fn failure(code: &str, reason: &str, message: &str, retry_after_ms: Option<i64>, as_rpc: bool) -> Stopped {
    Stopped::Failure(FailureRecord { code: code.into(), reason: reason.into(), message: message.into(), retry_after_ms }, as_rpc)
}

pub(super) fn timed_out(ms: u64) -> Stopped {
    failure("DEADLINE_EXCEEDED", "TIMEOUT", &format!("request timed out after {ms} ms"), None, true)
}

pub(super) fn reset() -> Stopped {
    failure("UNAVAILABLE", "CONNECTION_RESET", "connection reset by peer", None, true)
}

pub(super) fn rate_limited(ms: u64, message: &str) -> Stopped {
    failure("RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED", message, Some(i64::try_from(ms).unwrap_or(i64::MAX)), false)
}

pub(super) fn suspended() -> Stopped {
    failure("PERMISSION_DENIED", "CONSUMER_SUSPENDED", "consumer suspended for the rest of the session", Some(-1), false)
}

pub(super) fn cascade(s: &State, index: u32) -> Stopped {
    // Mostly outages, one call in three an overload with a retry hint.
    if s.draws.variant(index, 3) == 0 {
        let ms = i64::try_from(s.draws.profile().params.retry_after_ms).unwrap_or(i64::MAX);
        failure("RESOURCE_EXHAUSTED", "BACKEND_OVERLOADED", "backend overloaded (cascading failure)", Some(ms), false)
    } else {
        failure("UNAVAILABLE", "BACKEND_UNAVAILABLE", "service unavailable (cascading failure)", None, true)
    }
}

/// The structured error a failure carries: retry advice in real
/// milliseconds (the virtual ones scaled; -1: do not retry) and in virtual ones.
fn error_json(failure: &FailureRecord, scale: f64) -> Value {
    let mut error = json!({"code": failure.code, "reason": failure.reason, "message": failure.message});
    if let Some(ms) = failure.retry_after_ms {
        let real = if ms < 0 || scale <= 0.0 { ms } else { (ms as f64 * scale).round() as i64 };
        error["retry_after_ms"] = real.into();
        error["retry_after_virtual_ms"] = ms.into();
    }
    json!({"error": error})
}

pub(super) fn failure_reply(id: &Value, failure: &FailureRecord, as_rpc: bool, scale: f64) -> String {
    let error = error_json(failure, scale);
    if as_rpc {
        let code = if failure.code == "DEADLINE_EXCEEDED" { REQUEST_TIMEOUT } else { UNAVAILABLE };
        rpc_error(id, code, &failure.message, Some(error))
    } else {
        json!({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": RESULT_TYPE,
            "content": [{"type": "text", "text": error.to_string()}],
            "structuredContent": error,
            "isError": true,
        }})
        .to_string()
    }
}

pub(super) fn rpc_error(id: &Value, code: i64, message: &str, data: Option<Value>) -> String {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string()
}
