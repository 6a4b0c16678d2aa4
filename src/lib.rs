//! The toolenv wire contract (`toolenv.v1`): generated messages, client and
//! server stubs, the encoded descriptor set for reflection, and conversions
//! from the domain types.
#![forbid(unsafe_code)]

/// Generated code of the `toolenv.v1` protobuf package (committed; a test
/// checks it against `proto/`).
#[rustfmt::skip]
#[allow(missing_docs, missing_debug_implementations, clippy::all, rustdoc::invalid_html_tags)]
pub mod pb;

/// The encoded `FileDescriptorSet` of `toolenv.v1`, for server reflection
/// (committed beside [`pb`] and checked with it).
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("descriptor_set.bin");

/// The fully qualified name of the service, as health checks name it.
pub const SERVICE_NAME: &str = "toolenv.v1.ToolEnv";

/// The `ErrorInfo` domain of an injected fault's status: a status with
/// another domain, or none, is not a fault of the episode (it comes from the
/// server, a proxy or the transport).
pub const FAULT_DOMAIN: &str = "toolenv.chaos";

/// The subject of the `QuotaFailure` a server answers RESOURCE_EXHAUSTED with
/// when it holds as many live episodes as it may: the server's quota, not
/// the episode's.
pub const SERVER_QUOTA: &str = "server:live-episodes";

/// The metadata key of a CallTool status that says the episode's next call
/// index (`CallToolRequest.expected_index`); absent when the call's outcome
/// is unknown (retry it with the same index).
pub const NEXT_INDEX_KEY: &str = "toolenv-next-index";

/// The prefix of every `Domain` value's name in `toolenv.v1`.
const DOMAIN_PREFIX: &str = "DOMAIN_";

mod masfire;

impl From<toolenv_core::Domain> for pb::Domain {
    /// The wire value named after the domain (`DOMAIN_TRAVEL` for travel):
    /// a registered domain needs only its enum value in the proto, which the
    /// `every_domain_has_a_wire_value` test checks.
    fn from(domain: toolenv_core::Domain) -> Self {
        let name = format!("{DOMAIN_PREFIX}{}", domain.name().to_ascii_uppercase());
        pb::Domain::from_str_name(&name).unwrap_or(pb::Domain::Unspecified)
    }
}

impl pb::Domain {
    /// The domain of `registry` (`toolenv_domains::registry::ALL`) this wire
    /// value names; `None` for `DOMAIN_UNSPECIFIED` and a domain the registry
    /// does not hold.
    pub fn to_domain(self, registry: &[toolenv_core::Domain]) -> Option<toolenv_core::Domain> {
        let name = self.as_str_name().strip_prefix(DOMAIN_PREFIX)?;
        registry.iter().copied().find(|domain| domain.name().eq_ignore_ascii_case(name))
    }
}

impl From<&toolenv_core::ToolSpec> for pb::ToolSpec {
    fn from(tool: &toolenv_core::ToolSpec) -> Self {
        pb::ToolSpec {
            name: tool.name.to_owned(),
            description: tool.description.to_owned(),
            parameters_json_schema: tool.parameters_schema().to_string(),
            mutates_state: tool.mutates_state,
        }
    }
}

impl From<&toolenv_core::Task> for pb::TaskSummary {
    fn from(task: &toolenv_core::Task) -> Self {
        pb::TaskSummary {
            id: task.id.clone(),
            domain: pb::Domain::from(task.domain).into(),
            level: task.level.into(),
            description: task.description(),
            reference_calls: task.reference.len() as u32,
            summary: task.summary(),
        }
    }
}

/// The wire descriptions of a domain's tools, built once per domain: every
/// episode sends them, and building the JSON Schemas is not free.
pub fn tool_specs(domain: toolenv_core::Domain) -> Vec<pb::ToolSpec> {
    use std::sync::{PoisonError, RwLock};
    static BUILT: RwLock<Vec<Vec<pb::ToolSpec>>> = RwLock::new(Vec::new());
    let index = domain.index();
    if let Some(specs) = BUILT.read().unwrap_or_else(PoisonError::into_inner).get(index).filter(|specs| !specs.is_empty()) {
        return specs.clone();
    }
    let specs: Vec<pb::ToolSpec> = domain.tools().iter().map(Into::into).collect();
    let mut built = BUILT.write().unwrap_or_else(PoisonError::into_inner);
    if built.len() <= index {
        built.resize(index + 1, Vec::new());
    }
    built[index].clone_from(&specs);
    specs
}

impl From<&toolenv_core::Task> for pb::Task {
    fn from(task: &toolenv_core::Task) -> Self {
        pb::Task {
            summary: Some(task.into()),
            tools: tool_specs(task.domain),
            today: task.today.to_string(),
            initial_state_json: toolenv_core::json::canonical(&task.initial.to_json()),
            answer_schema_json: answer_schema_json(task),
        }
    }
}

/// The JSON Schema of a task's typed answer as the wire carries it (on
/// `Task` and `Episode`); empty for a task that asks for no value.
pub fn answer_schema_json(task: &toolenv_core::Task) -> String {
    task.answer_schema().map(|schema| toolenv_core::json::canonical(&schema)).unwrap_or_default()
}

impl From<&toolenv_core::DomainError> for pb::DomainError {
    fn from(error: &toolenv_core::DomainError) -> Self {
        pb::DomainError { code: error.code.to_owned(), message: error.message.clone() }
    }
}

impl From<&toolenv_core::Judgement> for pb::Verdict {
    fn from(verdict: &toolenv_core::Judgement) -> Self {
        let json = |value: &Option<serde_json::Value>| value.as_ref().map(toolenv_core::json::canonical).unwrap_or_default();
        let stats = &verdict.fault_stats;
        pb::Verdict {
            passed: verdict.passed,
            checks: verdict
                .checks
                .iter()
                .map(|c| pb::Check {
                    name: c.name.clone(),
                    passed: c.passed,
                    expected_json: toolenv_core::json::canonical(&c.expected),
                    actual_json: toolenv_core::json::canonical(&c.actual),
                })
                .collect(),
            state_diff: verdict
                .diff
                .iter()
                .map(|c| pb::StateChange { path: c.path.clone(), before_json: json(&c.before), after_json: json(&c.after) })
                .collect(),
            state_diff_text: verdict.diff_text(),
            final_state_hash: verdict.final_state_hash.clone(),
            initial_state_hash: verdict.initial_state_hash.clone(),
            fault_stats: Some(pb::FaultStats {
                injected: stats.injected,
                encountered: stats.encountered,
                recovered: stats.recovered,
                extra_calls: stats.extra_calls,
            }),
            fault_notes: verdict.fault_notes.clone(),
            feasible: verdict.feasible,
            mas_faults: verdict.mas_faults.iter().map(Into::into).collect(),
        }
    }
}

impl From<&toolenv_core::Failure> for pb::Failure {
    fn from(failure: &toolenv_core::Failure) -> Self {
        pb::Failure {
            code: failure.code.name().to_owned(),
            reason: failure.reason.to_owned(),
            message: failure.message.clone(),
            retry_after_ms: failure.retry_after_ms,
        }
    }
}

impl From<&toolenv_core::CallRecord> for pb::ToolCallRecord {
    fn from(record: &toolenv_core::CallRecord) -> Self {
        pb::ToolCallRecord {
            index: record.index,
            tool_name: record.tool.to_string(),
            arguments_json: record.arguments.clone(),
            outcome: Some(record_outcome(&record.outcome)),
            state_changed: record.state_changed,
            fault: record.fault.map(|f| pb::FaultRecord { kind: f.kind.name().to_owned(), new: f.new, recoverable: f.recoverable }),
            delay_ms: record.delay_ms,
            drawn_without_effect: record.drawn_without_effect.map(|k| k.name().to_owned()).unwrap_or_default(),
            waited_ms: record.waited_ms,
            idempotency_key_call: record.idempotency_key_call,
            // Kept by a replica's log only (keys may hold ids).
            idempotency_key: String::new(),
            agent_id: record.agent().unwrap_or_default().to_owned(),
            role: record.role().unwrap_or_default().to_owned(),
            mas_faults: record.mas_faults().iter().map(Into::into).collect(),
            // The simulated user's own call, as a record of the user's within the turn.
            user_call: record.user().map(|call| {
                Box::new(pb::ToolCallRecord {
                    index: record.index,
                    tool_name: call.tool.clone(),
                    arguments_json: call.arguments.clone(),
                    outcome: Some(record_outcome(&call.outcome)),
                    state_changed: record.state_changed,
                    agent_id: toolenv_core::user::USER.to_owned(),
                    role: toolenv_core::user::USER.to_owned(),
                    ..Default::default()
                })
            }),
            user_answer: record.user_answer().map(str::to_owned),
        }
    }
}

/// A recorded outcome on the wire.
fn record_outcome(outcome: &toolenv_core::Outcome) -> pb::tool_call_record::Outcome {
    use pb::tool_call_record::Outcome;
    match outcome {
        toolenv_core::Outcome::Result(text) => Outcome::ResultJson(text.clone()),
        toolenv_core::Outcome::Raw(text) => Outcome::RawResult(text.clone()),
        toolenv_core::Outcome::Error(error) => Outcome::Error(error.as_ref().into()),
        toolenv_core::Outcome::Invalid(error) => {
            Outcome::Invalid(pb::InvalidCall { field: error.field.clone(), message: error.message.clone() })
        }
        toolenv_core::Outcome::Failure(failure) => Outcome::Failure(failure.as_ref().into()),
    }
}

impl pb::CallToolResponse {
    /// The OK reply to a call whose outcome is a result (whole or cut) or a
    /// broken business rule; `None` for an outcome no OK reply carries (an
    /// injected failure, which goes out as a status or in band as a result
    /// first, or a malformed call, which the episode refuses).
    pub fn from_outcome(call_index: u32, outcome: toolenv_core::Outcome) -> Option<Self> {
        use pb::call_tool_response::Outcome;
        let outcome = match outcome {
            toolenv_core::Outcome::Result(text) | toolenv_core::Outcome::Raw(text) => Outcome::ResultJson(text),
            toolenv_core::Outcome::Error(error) => Outcome::Error(error.as_ref().into()),
            toolenv_core::Outcome::Failure(_) | toolenv_core::Outcome::Invalid(_) => return None,
        };
        Some(pb::CallToolResponse { call_index, outcome: Some(outcome) })
    }
}

impl From<&toolenv_core::Trajectory> for pb::Trajectory {
    fn from(trajectory: &toolenv_core::Trajectory) -> Self {
        pb::Trajectory {
            task_id: trajectory.task_id.clone(),
            seed: trajectory.seed,
            trial: trajectory.trial,
            description: trajectory.description.clone(),
            today: trajectory.today.clone(),
            calls: trajectory.calls.iter().map(Into::into).collect(),
            verdict: trajectory.verdict.as_ref().map(Into::into),
            fault_profile_json: toolenv_core::json::canonical(&serde_json::to_value(&trajectory.fault_profile).unwrap_or_default()),
            epsilon: trajectory.epsilon,
            perturbations: trajectory
                .perturbations
                .iter()
                .map(|a| pb::Perturbation { relation: a.relation.name().to_owned(), params: a.params.clone() })
                .collect(),
            // The agent reports it with its finish call; the server adds it.
            usage: None,
            conversation: None,
            roles: trajectory.roles.iter().map(Into::into).collect(),
            mas_profile: trajectory.mas_profile.as_ref().map(Into::into),
            prompt_faults: trajectory.prompt_faults.iter().map(Into::into).collect(),
            answer: trajectory.answer.clone(),
            answer_json: trajectory.answer_json.as_ref().map(toolenv_core::json::canonical),
            answer_ruling: trajectory.answer_ruling.as_ref().map(|r| pb::AnswerRuling {
                judge: r.judge.clone(),
                correct: r.correct,
                reason: r.reason.clone(),
            }),
        }
    }
}

impl pb::AnswerRuling {
    /// The ruling as the episode keeps it.
    pub fn to_domain(&self) -> toolenv_core::AnswerRuling {
        toolenv_core::AnswerRuling { judge: self.judge.clone(), correct: self.correct, reason: self.reason.clone() }
    }
}

impl pb::Trajectory {
    /// The trajectory as readable JSON: argument, result and state texts
    /// parsed (kept as strings when they are not JSON), outcomes and faults
    /// as objects. The one JSON form of a trajectory, for people and files
    /// (`toolenv play --json`, `toolenv export`); the domain trajectory
    /// reaches it through its wire form.
    pub fn to_json(&self) -> serde_json::Value {
        use pb::tool_call_record::Outcome;
        let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap_or_else(|_| serde_json::Value::from(text));
        let calls: Vec<_> = self
            .calls
            .iter()
            .map(|c| {
                let outcome = match &c.outcome {
                    Some(Outcome::ResultJson(json)) => serde_json::json!({"result": parse(json)}),
                    Some(Outcome::Error(e)) => serde_json::json!({"error": {"code": e.code, "message": e.message}}),
                    Some(Outcome::Invalid(i)) => serde_json::json!({"invalid": {"field": i.field, "message": i.message}}),
                    Some(Outcome::RawResult(text)) => serde_json::json!({"raw_result": text}),
                    Some(Outcome::Failure(f)) => {
                        serde_json::json!({"failure": {"code": f.code, "reason": f.reason, "message": f.message, "retry_after_ms": f.retry_after_ms}})
                    }
                    None => serde_json::Value::Null,
                };
                let fault = c.fault.as_ref().map(|f| serde_json::json!({"kind": f.kind, "new": f.new, "recoverable": f.recoverable}));
                let mut call = serde_json::json!({"index": c.index, "tool": c.tool_name, "arguments": parse(&c.arguments_json), "outcome": outcome, "state_changed": c.state_changed, "fault": fault, "delay_ms": c.delay_ms, "waited_ms": c.waited_ms});
                if !c.drawn_without_effect.is_empty() {
                    call["drawn_without_effect"] = serde_json::Value::from(c.drawn_without_effect.as_str());
                }
                if let Some(first) = c.idempotency_key_call {
                    call["idempotency_key_call"] = serde_json::Value::from(first);
                }
                if let Some(answer) = &c.user_answer {
                    call["user_answer"] = serde_json::Value::from(answer.as_str());
                }
                masfire::call_json(c, &mut call);
                call
            })
            .collect();
        let verdict = self.verdict.as_ref().map(|v| {
            let checks: Vec<_> = v
                .checks
                .iter()
                .map(|c| serde_json::json!({"name": c.name, "passed": c.passed, "expected": parse(&c.expected_json), "actual": parse(&c.actual_json)}))
                .collect();
            let stats = v.fault_stats.map(|s| serde_json::json!({"injected": s.injected, "encountered": s.encountered, "recovered": s.recovered, "extra_calls": s.extra_calls}));
            serde_json::json!({"passed": v.passed, "checks": checks, "state_diff": v.state_diff_text, "final_state_hash": v.final_state_hash, "initial_state_hash": v.initial_state_hash, "fault_stats": stats, "fault_notes": v.fault_notes, "feasible": v.feasible})
        });
        let mut verdict = verdict;
        if let (Some(json), Some(v)) = (verdict.as_mut(), self.verdict.as_ref()) {
            masfire::verdict_json(v, json);
        }
        let mut json = serde_json::json!({
            "task_id": self.task_id, "seed": self.seed, "trial": self.trial, "epsilon": self.epsilon,
            "perturbations": self.perturbations.iter().map(|p| serde_json::json!({"relation": p.relation, "params": p.params})).collect::<Vec<_>>(),
            "description": self.description, "today": self.today, "calls": calls, "verdict": verdict,
            "usage": self.usage.map(|u| serde_json::json!({"input_tokens": u.input_tokens, "output_tokens": u.output_tokens, "cost_usd": u.cost_usd})),
        });
        // Only trajectories of built-in LLM agents have one; others keep their shape.
        if let Some(c) = &self.conversation {
            json["conversation"] = serde_json::json!({
                "agent": c.agent, "model": c.model, "sampling": parse(&c.sampling_json),
                "messages": c.messages_json.iter().map(|m| parse(m)).collect::<Vec<_>>(),
                "model_turns": c.model_turns, "native_calls": c.native_calls,
                "text_form_calls": c.text_form_calls, "protocol_errors": c.protocol_errors, "context_exhausted": c.context_exhausted,
                "answer_from": (!c.answer_from.is_empty()).then_some(c.answer_from.as_str()),
            });
        }
        masfire::trajectory_json(self, &mut json);
        // Written only when given, so the JSON of tasks that ask for no answer is unchanged.
        if let (Some(answer), Some(map)) = (&self.answer, json.as_object_mut()) {
            map.insert("answer".to_owned(), serde_json::Value::from(answer.as_str()));
        }
        if let (Some(answer), Some(map)) = (&self.answer_json, json.as_object_mut()) {
            map.insert("answer_json".to_owned(), parse(answer));
        }
        if let (Some(r), Some(map)) = (&self.answer_ruling, json.as_object_mut()) {
            map.insert("answer_ruling".to_owned(), serde_json::json!({"judge": r.judge, "correct": r.correct, "reason": r.reason}));
        }
        json
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `src/pb.rs` holds before the generated code.
    const PB_HEADER: &str = r#"//! `toolenv.v1`'s messages and its client and server stubs, as
//! `tonic-prost-build` compiles `proto/toolenv/v1/toolenv.proto`.
//! Generated and committed with the encoded descriptor set
//! (`src/descriptor_set.bin`), so that a build needs no proto compiler: do
//! not edit. After changing the proto, `TOOLENV_BLESS=1 cargo test -p toolenv
//! --lib` writes both again (and without it, fails until they match).

"#;

    #[test]
    fn the_committed_generated_code_is_what_the_proto_compiles_to() {
        use prost::Message as _;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let fds = protox::compile(["toolenv/v1/toolenv.proto"], [root.join("proto")]).expect("the proto compiles");
        let out = tempfile::tempdir().expect("a temporary directory");
        // Generated maps iterate in a fixed order, so encodings are deterministic.
        tonic_prost_build::configure().btree_map(".").out_dir(out.path()).compile_fds(fds.clone()).expect("the code generates");
        let code = std::fs::read_to_string(out.path().join("toolenv.v1.rs")).expect("the generated code");
        for (file, bytes) in [("src/pb.rs", format!("{PB_HEADER}{code}").into_bytes()), ("src/descriptor_set.bin", fds.encode_to_vec())] {
            toolenv_core::testing::assert_snapshot(&root.join(file), &bytes, "not what proto/ compiles to");
        }
    }

    #[test]
    fn every_domain_has_a_wire_value() {
        for domain in toolenv_domains::registry::ALL {
            let wire = pb::Domain::from(domain);
            assert_ne!(wire, pb::Domain::Unspecified, "{domain} has no DOMAIN_ value in toolenv.v1");
            assert_eq!(wire.to_domain(&toolenv_domains::registry::ALL), Some(domain));
        }
        assert_eq!(pb::Domain::Unspecified.to_domain(&toolenv_domains::registry::ALL), None);
    }

    #[test]
    fn every_wire_domain_is_registered() {
        for value in 1.. {
            let Ok(wire) = pb::Domain::try_from(value) else { break };
            assert!(wire.to_domain(&toolenv_domains::registry::ALL).is_some(), "{} is not a registered domain", wire.as_str_name());
        }
    }
}
