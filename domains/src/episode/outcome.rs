//! What a call produced as it reached the agent, and the failures the chaos
//! layer delivers instead of a reply.

use serde::Serialize;
use serde_json::{Value, json};

use crate::chaos::FaultKind;
use crate::tool::{ArgError, DomainError};

/// What one call produced, as it reached the agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool's result as canonical JSON text (possibly delayed, emptied,
    /// cut or in the v2 shape by a fault). Kept as text: replies and
    /// trajectories send it as is, and text is far smaller than a value tree.
    Result(String),
    /// A payload cut short so that it is no longer valid JSON.
    Raw(String),
    /// A broken business rule; the state did not change.
    Error(DomainError),
    /// A malformed call (unknown tool, bad arguments), rejected before the tool ran.
    Invalid(ArgError),
    /// A transport-level failure a production client would see as an error status.
    Failure(Failure),
}

impl Outcome {
    /// The result as a JSON value, when the call produced a whole result.
    pub fn result_value(&self) -> Option<Value> {
        match self {
            Outcome::Result(text) => serde_json::from_str(text).ok(),
            Outcome::Raw(_) | Outcome::Error(_) | Outcome::Invalid(_) | Outcome::Failure(_) => None,
        }
    }
}

/// The gRPC status code of a [`Failure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FailureCode {
    /// The call took too long.
    DeadlineExceeded,
    /// The service could not be reached (reset, outage).
    Unavailable,
    /// A rate limit or overload.
    ResourceExhausted,
    /// The caller is suspended.
    PermissionDenied,
}

impl FailureCode {
    /// The code's name as gRPC writes it, e.g. `RESOURCE_EXHAUSTED`.
    pub fn name(self) -> &'static str {
        match self {
            FailureCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            FailureCode::Unavailable => "UNAVAILABLE",
            FailureCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            FailureCode::PermissionDenied => "PERMISSION_DENIED",
        }
    }
}

/// A failure the chaos layer delivers instead of (or after) running the tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    /// The status code.
    pub code: FailureCode,
    /// The `ErrorInfo` reason, e.g. `RATE_LIMIT_EXCEEDED`.
    pub reason: &'static str,
    /// A readable message.
    pub message: String,
    /// Simulated milliseconds to wait before retrying (RetryInfo and the
    /// `grpc-retry-pushback-ms` trailer); -1: do not retry; `None`: no advice.
    pub retry_after_ms: Option<i64>,
}

impl Failure {
    /// The retry delay an agent should wait, in real milliseconds at this
    /// time scale (-1: do not retry).
    pub fn retry_after_real_ms(&self, time_scale: f64) -> Option<i64> {
        self.retry_after_ms.map(|ms| if ms < 0 { -1 } else { (ms as f64 * time_scale).round() as i64 })
    }

    /// The failure as an in-band error result: the same code, reason,
    /// message and retry delay (real, and in the episode's virtual
    /// milliseconds, the wait to declare), inside an OK reply.
    pub fn in_band(&self, time_scale: f64) -> Value {
        json!({"error": {
            "code": self.code.name(),
            "reason": self.reason,
            "message": self.message,
            "retry_after_ms": self.retry_after_real_ms(time_scale),
            "retry_after_virtual_ms": self.retry_after_ms,
        }})
    }
}

/// The fault that met a call and took effect: the ledger's ground truth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FaultRecord {
    /// The fault.
    pub kind: FaultKind,
    /// True when drawn on this call; false when a persistent fault state
    /// (suspension, cascade, rate-limit window) carried over.
    pub new: bool,
    /// Whether a retry or a later call can still succeed.
    pub recoverable: bool,
}

pub(crate) fn timed_out(timeout_ms: u64) -> Failure {
    Failure {
        code: FailureCode::DeadlineExceeded,
        reason: "UPSTREAM_TIMEOUT",
        message: format!("deadline exceeded: no reply within {timeout_ms} ms"),
        retry_after_ms: None,
    }
}

pub(crate) fn reset() -> Failure {
    Failure { code: FailureCode::Unavailable, reason: "CONNECTION_RESET", message: "connection reset by peer".into(), retry_after_ms: None }
}

pub(crate) fn rate_limited(retry_after_ms: u64, why: &str) -> Failure {
    Failure {
        code: FailureCode::ResourceExhausted,
        reason: "RATE_LIMIT_EXCEEDED",
        message: format!("{why}; retry after {retry_after_ms} ms"),
        retry_after_ms: Some(retry_after_ms as i64),
    }
}

pub(crate) fn suspended() -> Failure {
    Failure {
        code: FailureCode::PermissionDenied,
        reason: "CONSUMER_SUSPENDED",
        message: "consumer suspended for exceeding its quota; calls will keep failing".into(),
        retry_after_ms: Some(-1),
    }
}
