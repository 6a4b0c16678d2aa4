//! A recorded episode as an OpenTelemetry trace, in the OTLP/JSON encoding
//! (an `ExportTraceServiceRequest`, as an OTLP/HTTP collector takes it on
//! `/v1/traces` and as `toolenv export --format otlp-json` writes it, one
//! request per line).
//!
//! One trace per episode, with the GenAI semantic conventions' spans:
//! - the episode: `invoke_agent {agent}` (`gen_ai.operation.name` =
//!   `invoke_agent`, `gen_ai.agent.name`, the tokens as `gen_ai.usage.*`),
//!   with the verdict, the fault profile and the episode's grid point as
//!   `toolenv.*` attributes; its status is an error unless the episode passed;
//! - each model turn of a built-in LLM agent (from the conversation it
//!   reported): `chat {model}` (`gen_ai.operation.name` = `chat`,
//!   `gen_ai.request.model`, the sampling settings as `gen_ai.request.*`);
//! - each tool call: `execute_tool {tool}` (`gen_ai.tool.name`,
//!   `gen_ai.tool.call.id` = `call-N`, the arguments and the result), with
//!   the fault that met it as `toolenv.fault.*` and its error as `error.type`.
//!
//! Nothing here reads a clock: times are the episode's virtual time (the
//! waits the agent declared and the simulated delays) from midnight UTC of
//! the episode's "today", and the ids are SHA-256 of the run, the episode's
//! plan index and the span's place, so the same run exports the same bytes.
//! Model turns take no virtual time and calls without a simulated delay
//! none either, so each such span is given one millisecond, which keeps the
//! spans in their order in a viewer; a turn's span comes before the call
//! that follows the tool results it had read.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolenv::pb;
use toolenv::pb::tool_call_record::Outcome as CallOutcome;

use crate::metrics::{EpisodeOutcome, EpisodeResult};
use crate::{PlannedEpisode, StoredEpisode};

/// `SPAN_KIND_INTERNAL` and `SPAN_KIND_CLIENT` of `opentelemetry.proto.trace.v1.Span.SpanKind`.
const KIND_INTERNAL: u8 = 1;
const KIND_CLIENT: u8 = 3;
/// `STATUS_CODE_OK` and `STATUS_CODE_ERROR` of `Status.StatusCode`.
const STATUS_OK: u8 = 1;
const STATUS_ERROR: u8 = 2;

/// The trace of episode `plan_index` of `run` as an OTLP/JSON
/// `ExportTraceServiceRequest`: its result, its trajectory when it reached
/// the server's, and its entry in the run's plan when known.
pub fn episode_trace(
    run: &str,
    plan_index: usize,
    planned: Option<&PlannedEpisode>,
    result: &EpisodeResult,
    trajectory: Option<&pb::Trajectory>,
) -> Value {
    let ids = Ids { trace: hex(&digest(&format!("{run}/{plan_index}"))[..16]), run, index: plan_index };
    let base = trajectory.map_or(0, |t| midnight_unix_nanos(&t.today));
    let root = ids.span("episode");
    let mut spans = Vec::new();
    let mut clock = 0u64; // virtual milliseconds since the episode began
    let calls = trajectory.map_or(&[][..], |t| &t.calls[..]);
    let conversation = trajectory.and_then(|t| t.conversation.as_ref());
    let chat = conversation.map(Chat::of);
    let mut turns = chat.as_ref().map(|c| c.turns.iter().enumerate()).into_iter().flatten().peekable();
    for (k, call) in calls.iter().enumerate() {
        clock = clock.saturating_add(call.waited_ms);
        while let Some((turn, (_, message))) = turns.next_if(|(_, (before, _))| *before <= k) {
            if let (Some(chat), Some(conversation)) = (&chat, conversation) {
                spans.push(chat.span(&ids, &root, conversation, turn, message, base, clock));
            }
            clock += 1;
        }
        let start = clock;
        clock = clock.saturating_add(call.delay_ms.max(1));
        spans.push(tool_span(&ids, &root, call, base, start, clock));
    }
    for (turn, (_, message)) in turns {
        if let (Some(chat), Some(conversation)) = (&chat, conversation) {
            spans.push(chat.span(&ids, &root, conversation, turn, message, base, clock));
        }
        clock += 1;
    }
    spans.insert(0, episode_span(&ids, &root, planned, result, trajectory, base, clock));
    json!({
        "resourceSpans": [{
            "resource": {"attributes": [string("service.name", "toolenv"), string("service.version", env!("CARGO_PKG_VERSION"))]},
            "scopeSpans": [{
                "scope": {"name": "toolenv", "version": env!("CARGO_PKG_VERSION")},
                "spans": spans,
            }],
        }],
    })
}

/// The trace id of an episode and what its span ids derive from.
struct Ids<'a> {
    trace: String,
    run: &'a str,
    index: usize,
}

impl Ids<'_> {
    /// The id of the span at `place` (`episode`, `call-3`, `turn-2`).
    fn span(&self, place: &str) -> String {
        hex(&digest(&format!("{}/{}/{place}", self.run, self.index))[..8])
    }
}

/// Writes the trace of each recorded episode of `run` (in their order) as one
/// line of OTLP/JSON, and returns how many.
pub fn write_jsonl(
    run: &str,
    plan: &[PlannedEpisode],
    episodes: &[StoredEpisode],
    mut writer: impl std::io::Write,
) -> std::io::Result<u64> {
    for episode in episodes {
        let trace = episode_trace(run, episode.plan_index, plan.get(episode.plan_index), &episode.result, episode.trajectory.as_ref());
        serde_json::to_writer(&mut writer, &trace)?;
        writer.write_all(b"\n")?;
    }
    writer.flush()?;
    Ok(episodes.len() as u64)
}

fn episode_span(
    ids: &Ids,
    id: &str,
    planned: Option<&PlannedEpisode>,
    result: &EpisodeResult,
    trajectory: Option<&pb::Trajectory>,
    base: u64,
    end_ms: u64,
) -> Value {
    let mut attributes = vec![
        string("gen_ai.operation.name", "invoke_agent"),
        string("gen_ai.agent.name", &result.agent),
        string("gen_ai.conversation.id", &format!("{}/{}", ids.run, ids.index)),
        string("toolenv.run", ids.run),
        int("toolenv.plan_index", ids.index as i64),
        string("toolenv.task_id", &result.task_id),
        int("toolenv.seed", result.seed as i64),
        int("toolenv.trial", i64::from(result.trial)),
        double("toolenv.epsilon", result.epsilon),
        string("toolenv.fault_profile", &result.fault_profile),
        int("toolenv.calls", i64::from(result.calls)),
        int("toolenv.faults.injected", i64::from(result.fault_stats.injected)),
        int("toolenv.faults.encountered", i64::from(result.fault_stats.encountered)),
        int("toolenv.faults.recovered", i64::from(result.fault_stats.recovered)),
    ];
    if let Some(domain) = result.domain {
        attributes.push(string("toolenv.domain", &domain.to_string()));
    }
    if !result.lambda.is_nan() {
        attributes.push(double("toolenv.lambda", result.lambda));
    }
    if let Some(planned) = planned {
        attributes.push(string("toolenv.fault_delivery", planned.request.fault_delivery().as_str_name()));
    }
    if let Some(tokens) = result.tokens {
        attributes.push(int("gen_ai.usage.input_tokens", tokens.input as i64));
        attributes.push(int("gen_ai.usage.output_tokens", tokens.output as i64));
    }
    if let Some(cost) = result.cost_usd {
        attributes.push(double("toolenv.cost_usd", cost));
    }
    let conversation = trajectory.and_then(|t| t.conversation.as_ref());
    if let Some(conversation) = conversation.filter(|c| !c.model.is_empty()) {
        attributes.push(string("gen_ai.request.model", &conversation.model));
    }
    let (outcome, status) = match &result.outcome {
        EpisodeOutcome::Passed => ("passed", json!({"code": STATUS_OK})),
        EpisodeOutcome::Failed => ("failed", json!({"code": STATUS_ERROR, "message": "the verdict failed"})),
        EpisodeOutcome::InfraError(reason) => ("infra_error", json!({"code": STATUS_ERROR, "message": reason})),
    };
    attributes.push(string("toolenv.outcome", outcome));
    if !matches!(result.outcome, EpisodeOutcome::Passed) {
        attributes.push(string("error.type", outcome));
    }
    if let Some(verdict) = trajectory.and_then(|t| t.verdict.as_ref()) {
        attributes.push(boolean("toolenv.verdict.passed", verdict.passed));
        let failed: Vec<&str> = verdict.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect();
        attributes.push(int("toolenv.verdict.checks", verdict.checks.len() as i64));
        attributes.push(strings("toolenv.verdict.failed_checks", &failed));
        if let Some(feasible) = verdict.feasible {
            attributes.push(boolean("toolenv.verdict.feasible", feasible));
        }
        if !verdict.fault_notes.is_empty() {
            let notes: Vec<&str> = verdict.fault_notes.iter().map(String::as_str).collect();
            attributes.push(strings("toolenv.verdict.fault_notes", &notes));
        }
    }
    json!({
        "traceId": ids.trace,
        "spanId": id,
        "name": format!("invoke_agent {}", result.agent),
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": nanos(base, 0),
        "endTimeUnixNano": nanos(base, end_ms),
        "attributes": attributes,
        "status": status,
    })
}

fn tool_span(ids: &Ids, parent: &str, call: &pb::ToolCallRecord, base: u64, start_ms: u64, end_ms: u64) -> Value {
    let call_id = format!("call-{}", call.index);
    let mut attributes = vec![
        string("gen_ai.operation.name", "execute_tool"),
        string("gen_ai.tool.name", &call.tool_name),
        string("gen_ai.tool.call.id", &call_id),
        string("gen_ai.tool.type", "function"),
        string("gen_ai.tool.call.arguments", &call.arguments_json),
        int("toolenv.call.index", i64::from(call.index)),
        boolean("toolenv.call.state_changed", call.state_changed),
        int("toolenv.call.delay_ms", call.delay_ms as i64),
        int("toolenv.call.waited_ms", call.waited_ms as i64),
    ];
    if !call.agent_id.is_empty() {
        attributes.push(string("gen_ai.agent.id", &call.agent_id));
    }
    if !call.role.is_empty() {
        attributes.push(string("toolenv.role", &call.role));
    }
    if let Some(fault) = &call.fault {
        attributes.push(string("toolenv.fault.kind", &fault.kind));
        attributes.push(boolean("toolenv.fault.new", fault.new));
        attributes.push(boolean("toolenv.fault.recoverable", fault.recoverable));
    }
    if !call.drawn_without_effect.is_empty() {
        attributes.push(string("toolenv.fault.drawn_without_effect", &call.drawn_without_effect));
    }
    let error = match &call.outcome {
        Some(CallOutcome::ResultJson(result)) => {
            attributes.push(string("gen_ai.tool.call.result", result));
            None
        }
        Some(CallOutcome::RawResult(raw)) => {
            attributes.push(string("gen_ai.tool.call.result", raw));
            Some(("truncated_result".to_owned(), "the result was cut short".to_owned()))
        }
        Some(CallOutcome::Error(error)) => Some((error.code.clone(), error.message.clone())),
        Some(CallOutcome::Invalid(invalid)) => Some(("invalid_call".to_owned(), invalid.message.clone())),
        Some(CallOutcome::Failure(failure)) => Some((failure.code.clone(), failure.message.clone())),
        None => None,
    };
    let status = match error {
        Some((kind, message)) => {
            attributes.push(string("error.type", &kind));
            json!({"code": STATUS_ERROR, "message": message})
        }
        None => json!({"code": STATUS_OK}),
    };
    json!({
        "traceId": ids.trace,
        "spanId": ids.span(&call_id),
        "parentSpanId": parent,
        "name": format!("execute_tool {}", call.tool_name),
        "kind": KIND_INTERNAL,
        "startTimeUnixNano": nanos(base, start_ms),
        "endTimeUnixNano": nanos(base, end_ms),
        "attributes": attributes,
        "status": status,
    })
}

/// The model turns of a conversation: each assistant message with the
/// number of tool results read before it (the index of the call it comes
/// before), and the sampling settings as `gen_ai.request.*` attributes.
struct Chat {
    turns: Vec<(usize, Value)>,
    request: Vec<Value>,
}

impl Chat {
    fn of(conversation: &pb::Conversation) -> Chat {
        let sampling: Value = serde_json::from_str(&conversation.sampling_json).unwrap_or(Value::Null);
        let mut request = Vec::new();
        for (key, attribute) in [
            ("temperature", "gen_ai.request.temperature"),
            ("top_p", "gen_ai.request.top_p"),
            ("max_tokens", "gen_ai.request.max_tokens"),
            ("seed", "gen_ai.request.seed"),
        ] {
            match sampling.get(key) {
                Some(Value::Number(n)) if n.is_i64() => request.push(int(attribute, n.as_i64().unwrap_or_default())),
                Some(Value::Number(n)) => request.push(double(attribute, n.as_f64().unwrap_or_default())),
                _ => {}
            }
        }
        let mut turns = Vec::new();
        let mut results_read = 0usize;
        for message in &conversation.messages_json {
            let message: Value = serde_json::from_str(message).unwrap_or(Value::Null);
            match message.get("role").and_then(Value::as_str) {
                Some("tool") => results_read += 1,
                Some("assistant") => turns.push((results_read, message)),
                _ => {}
            }
        }
        Chat { turns, request }
    }

    /// The span of model turn `turn`, one virtual millisecond from `at_ms`.
    #[allow(clippy::too_many_arguments)]
    fn span(&self, ids: &Ids, parent: &str, conversation: &pb::Conversation, turn: usize, message: &Value, base: u64, at_ms: u64) -> Value {
        let asked: Vec<&str> = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(|calls| calls.iter().filter_map(|c| c.pointer("/function/name").and_then(Value::as_str)).collect())
            .unwrap_or_default();
        let mut attributes = vec![
            string("gen_ai.operation.name", "chat"),
            string("gen_ai.agent.name", &conversation.agent),
            int("toolenv.turn", turn as i64),
        ];
        if !conversation.model.is_empty() {
            attributes.push(string("gen_ai.request.model", &conversation.model));
        }
        attributes.extend(self.request.iter().cloned());
        if !asked.is_empty() {
            attributes.push(strings("toolenv.turn.tool_calls", &asked));
        }
        if let Some(content) = message.get("content").and_then(Value::as_str).filter(|c| !c.is_empty()) {
            attributes.push(string("toolenv.turn.content", content));
        }
        json!({
            "traceId": ids.trace,
            "spanId": ids.span(&format!("turn-{turn}")),
            "parentSpanId": parent,
            "name": format!("chat {}", conversation.model),
            "kind": KIND_CLIENT,
            "startTimeUnixNano": nanos(base, at_ms),
            "endTimeUnixNano": nanos(base, at_ms + 1),
            "attributes": attributes,
            "status": {"code": STATUS_OK},
        })
    }
}

fn digest(text: &str) -> Vec<u8> {
    Sha256::digest(text.as_bytes()).to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `base` nanoseconds plus `ms` virtual milliseconds, as OTLP/JSON writes a
/// fixed64: a decimal string.
fn nanos(base: u64, ms: u64) -> String {
    base.saturating_add(ms.saturating_mul(1_000_000)).to_string()
}

/// Midnight UTC of a `YYYY-MM-DD` date in Unix nanoseconds; 0 for anything else.
fn midnight_unix_nanos(date: &str) -> u64 {
    let mut parts = date.get(..10).unwrap_or("").split('-').map(str::parse::<i64>);
    let (Some(Ok(y)), Some(Ok(m)), Some(Ok(d))) = (parts.next(), parts.next(), parts.next()) else { return 0 };
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return 0;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    (days as u64).saturating_mul(86_400_000_000_000)
}

fn attribute(key: &str, value: Value) -> Value {
    json!({"key": key, "value": value})
}

fn string(key: &str, value: &str) -> Value {
    attribute(key, json!({"stringValue": value}))
}

/// An int attribute: OTLP/JSON writes an int64 as a decimal string.
fn int(key: &str, value: i64) -> Value {
    attribute(key, json!({"intValue": value.to_string()}))
}

fn double(key: &str, value: f64) -> Value {
    attribute(key, json!({"doubleValue": value}))
}

fn boolean(key: &str, value: bool) -> Value {
    attribute(key, json!({"boolValue": value}))
}

fn strings(key: &str, values: &[&str]) -> Value {
    let values: Vec<Value> = values.iter().map(|v| json!({"stringValue": v})).collect();
    attribute(key, json!({"arrayValue": {"values": values}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midnight_of_known_dates() {
        assert_eq!(midnight_unix_nanos("1970-01-01"), 0);
        // 2026-01-05T00:00:00Z = 1767571200 s.
        assert_eq!(midnight_unix_nanos("2026-01-05"), 1_767_571_200 * 1_000_000_000);
        // 2024-03-01 (after a leap day) = 1709251200 s.
        assert_eq!(midnight_unix_nanos("2024-03-01"), 1_709_251_200 * 1_000_000_000);
        assert_eq!(midnight_unix_nanos("not a date"), 0);
        assert_eq!(midnight_unix_nanos("2026-13-01"), 0);
    }
}
