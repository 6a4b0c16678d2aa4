//! What a call sends back: the [`Outcome`] a trajectory records and a
//! server sends (a result, a domain error, or an injected [`Failure`]), the
//! internal delivery the fault machinery shapes, and the cut a partial
//! response makes.

use serde::Serialize;
use serde_json::{Value, json};

use crate::{
    json,
    tool::{ArgError, DomainError, ToolResult},
};

/// What one call produced, as it reached the agent.
///
/// Every call's outcome is kept for its episode's life; the rare ones are
/// boxed so that the common one, a result, costs its text and no more.
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
    Error(Box<DomainError>),
    /// A malformed call (unknown tool, bad arguments), rejected before the tool ran.
    Invalid(Box<ArgError>),
    /// A transport-level failure a production client would see as an error status.
    Failure(Box<Failure>),
}

impl Outcome {
    /// The outcome as an agent whose tool loop reads errors as text gets
    /// it: a failure becomes an error result ([`Failure::in_band`]).
    pub fn in_band(self, time_scale: f64) -> Outcome {
        match self {
            Outcome::Failure(failure) => Outcome::Result(json::canonical(&failure.in_band(time_scale))),
            other => other,
        }
    }

    /// The result as a JSON value, when the call produced a whole result.
    pub fn result_value(&self) -> Option<Value> {
        match self {
            Outcome::Result(text) => serde_json::from_str(text).ok(),
            Outcome::Raw(_) | Outcome::Error(_) | Outcome::Invalid(_) | Outcome::Failure(_) => None,
        }
    }
}

crate::named_enum! {
    /// The gRPC status code of a [`Failure`]; its name is the code's name as
    /// gRPC writes it, e.g. `RESOURCE_EXHAUSTED`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum FailureCode {
        /// The call took too long.
        DeadlineExceeded = "DEADLINE_EXCEEDED",
        /// The service could not be reached (reset, outage).
        Unavailable = "UNAVAILABLE",
        /// A rate limit or overload.
        ResourceExhausted = "RESOURCE_EXHAUSTED",
        /// The caller is suspended.
        PermissionDenied = "PERMISSION_DENIED",
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

/// What a call that reached the tools sends back: an OK reply, or a failure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Delivery {
    /// An OK reply.
    Reply(Answer),
    /// An injected failure: an error status, or an error result inside an OK
    /// reply when delivered in band ([`Delivery::in_band`]).
    Failure(Failure),
}

/// What an OK reply carries.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// The tool's result as canonical JSON text (possibly delayed, emptied,
    /// cut or in the v2 shape by a fault).
    Result(String),
    /// A result cut short so that it is no longer valid JSON.
    Raw(String),
    /// A broken business rule; the state did not change.
    Error(DomainError),
}

impl From<Delivery> for Outcome {
    fn from(delivery: Delivery) -> Self {
        match delivery {
            Delivery::Reply(Answer::Result(text)) => Outcome::Result(text),
            Delivery::Reply(Answer::Raw(text)) => Outcome::Raw(text),
            Delivery::Reply(Answer::Error(error)) => Outcome::Error(Box::new(error)),
            Delivery::Failure(failure) => Outcome::Failure(Box::new(failure)),
        }
    }
}

/// A timeout: DEADLINE_EXCEEDED after `timeout_ms`.
pub(crate) fn timed_out(timeout_ms: u64) -> Failure {
    Failure {
        code: FailureCode::DeadlineExceeded,
        reason: "UPSTREAM_TIMEOUT",
        message: format!("deadline exceeded: no reply within {timeout_ms} ms"),
        retry_after_ms: None,
    }
}

/// A reset connection: UNAVAILABLE.
pub(crate) fn reset() -> Failure {
    Failure { code: FailureCode::Unavailable, reason: "CONNECTION_RESET", message: "connection reset by peer".into(), retry_after_ms: None }
}

/// A soft rate limit: RESOURCE_EXHAUSTED, retry after `retry_after_ms`.
pub(crate) fn rate_limited(retry_after_ms: u64, why: &str) -> Failure {
    Failure {
        code: FailureCode::ResourceExhausted,
        reason: "RATE_LIMIT_EXCEEDED",
        message: format!("{why}; retry after {retry_after_ms} ms"),
        retry_after_ms: Some(retry_after_ms as i64),
    }
}

/// A suspension: PERMISSION_DENIED, do not retry.
pub(crate) fn suspended() -> Failure {
    Failure {
        code: FailureCode::PermissionDenied,
        reason: "CONSUMER_SUSPENDED",
        message: "consumer suspended for exceeding its quota; calls will keep failing".into(),
        retry_after_ms: Some(-1),
    }
}

/// The reply to a call that ran with no fault altering its reply.
pub(crate) fn reply(result: ToolResult) -> Delivery {
    Delivery::Reply(match result {
        Ok(text) => Answer::Result(text),
        Err(error) => Answer::Error(error),
    })
}

/// The fields of a result that describe its list's length in the v1
/// shapes: a page limit's `truncated` (ecommerce searches) and the counts of
/// matches (`count`, `total_matches`). A silent cut drops them with the
/// items, so that a cut list never carries a false marker.
const LIST_MARKERS: [&str; 3] = ["truncated", "count", "total_matches"];

/// Cuts the first list of a result (of at least two items) to its first
/// half; `None` when there is no such list. A marked cut says
/// `"truncated": true`; a silent one drops the result's own markers
/// ([`LIST_MARKERS`]), which would otherwise say the list is whole. Lists
/// are cut in the v1 shape, where the markers have known names.
pub(crate) fn cut_list(text: &str, draw: u64) -> Option<String> {
    let mut value: Value = serde_json::from_str(text).ok()?;
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
/// length, so that it is no longer valid JSON; `None` when nothing would be
/// cut off.
pub(crate) fn cut_text(text: &str, draw: u64) -> Option<Answer> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let keep = chars.len() / 4 + (draw >> 1) as usize % (chars.len() / 2).max(1);
    let end = chars.get(keep).map_or(text.len(), |&(i, _)| i);
    (end < text.len()).then(|| Answer::Raw(text[..end].to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_codes_are_named_as_grpc_writes_them_and_parse_back() {
        assert_eq!(
            FailureCode::ALL.map(FailureCode::name),
            ["DEADLINE_EXCEEDED", "UNAVAILABLE", "RESOURCE_EXHAUSTED", "PERMISSION_DENIED"]
        );
        for code in FailureCode::ALL {
            assert_eq!(FailureCode::parse(code.name()), Some(code));
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.name()), "trajectories spell it alike");
        }
        assert_eq!(FailureCode::parse("DeadlineExceeded"), None);
    }

    #[test]
    fn a_delivery_becomes_the_outcome_it_records_and_in_band_an_ok_answer() {
        let failure = reset();
        let error = DomainError::new("SLOT_TAKEN", "taken");
        let cases = [
            (Delivery::Reply(Answer::Result("{}".into())), Outcome::Result("{}".into())),
            (Delivery::Reply(Answer::Raw("{\"a".into())), Outcome::Raw("{\"a".into())),
            (Delivery::Reply(Answer::Error(error.clone())), Outcome::Error(Box::new(error))),
            (Delivery::Failure(failure.clone()), Outcome::Failure(Box::new(failure.clone()))),
        ];
        for (delivery, outcome) in cases {
            assert_eq!(Outcome::from(delivery.clone()), outcome);
            if let Delivery::Reply(_) = &delivery {
                assert_eq!(outcome.clone().in_band(1.0), outcome, "a reply is delivered as it is");
            }
        }
        let in_band = Outcome::Failure(Box::new(failure.clone())).in_band(0.5);
        assert_eq!(in_band, Outcome::Result(json::canonical(&failure.in_band(0.5))));
    }
}
