//! The toolenv wire contract (`toolenv.v1`): generated messages, client and
//! server stubs, the encoded descriptor set for reflection, and conversions
//! from the domain types.
#![forbid(unsafe_code)]

use toolenv_domains as domains;

/// Generated code of the `toolenv.v1` protobuf package.
#[allow(missing_docs, missing_debug_implementations, clippy::all)]
pub mod pb {
    tonic::include_proto!("toolenv.v1");

    /// The encoded `FileDescriptorSet` of `toolenv.v1`, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("toolenv_v1_descriptor");
}

/// The fully qualified name of the service, as health checks name it.
pub const SERVICE_NAME: &str = "toolenv.v1.ToolEnv";

impl From<domains::Domain> for pb::Domain {
    fn from(domain: domains::Domain) -> Self {
        match domain {
            domains::Domain::Scheduling => pb::Domain::Scheduling,
            domains::Domain::Travel => pb::Domain::Travel,
            domains::Domain::Support => pb::Domain::Support,
            domains::Domain::Ecommerce => pb::Domain::Ecommerce,
        }
    }
}

impl pb::Domain {
    /// The domain this wire value names; `None` for `DOMAIN_UNSPECIFIED`.
    pub fn to_domain(self) -> Option<domains::Domain> {
        match self {
            pb::Domain::Unspecified => None,
            pb::Domain::Scheduling => Some(domains::Domain::Scheduling),
            pb::Domain::Travel => Some(domains::Domain::Travel),
            pb::Domain::Support => Some(domains::Domain::Support),
            pb::Domain::Ecommerce => Some(domains::Domain::Ecommerce),
        }
    }
}

impl From<&domains::ToolSpec> for pb::ToolSpec {
    fn from(tool: &domains::ToolSpec) -> Self {
        pb::ToolSpec {
            name: tool.name.to_owned(),
            description: tool.description.to_owned(),
            parameters_json_schema: tool.parameters_schema().to_string(),
            mutates_state: tool.mutates_state,
        }
    }
}

impl From<&domains::Task> for pb::TaskSummary {
    fn from(task: &domains::Task) -> Self {
        pb::TaskSummary {
            id: task.id.clone(),
            domain: pb::Domain::from(task.domain).into(),
            level: task.level.into(),
            description: task.description(),
        }
    }
}

/// The wire descriptions of a domain's tools, built once: every episode
/// sends them, and building the JSON Schemas is not free.
pub fn tool_specs(domain: domains::Domain) -> &'static [pb::ToolSpec] {
    static SPECS: [std::sync::OnceLock<Vec<pb::ToolSpec>>; 4] = [const { std::sync::OnceLock::new() }; 4];
    let index = domains::Domain::ALL.iter().position(|&d| d == domain).unwrap_or_default();
    SPECS[index].get_or_init(|| domain.tools().iter().map(Into::into).collect())
}

impl From<&domains::Task> for pb::Task {
    fn from(task: &domains::Task) -> Self {
        pb::Task {
            summary: Some(task.into()),
            tools: tool_specs(task.domain).to_vec(),
            today: task.today.to_string(),
            initial_state_json: domains::json::canonical(&task.initial.to_json()),
        }
    }
}

impl From<&domains::DomainError> for pb::DomainError {
    fn from(error: &domains::DomainError) -> Self {
        pb::DomainError { code: error.code.to_owned(), message: error.message.clone() }
    }
}

impl From<&domains::Verdict> for pb::Verdict {
    fn from(verdict: &domains::Verdict) -> Self {
        let json = |value: &Option<serde_json::Value>| value.as_ref().map(domains::json::canonical).unwrap_or_default();
        let stats = &verdict.fault_stats;
        pb::Verdict {
            passed: verdict.passed,
            checks: verdict
                .checks
                .iter()
                .map(|c| pb::Check {
                    name: c.name.clone(),
                    passed: c.passed,
                    expected_json: domains::json::canonical(&c.expected),
                    actual_json: domains::json::canonical(&c.actual),
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
        }
    }
}

impl From<&domains::Failure> for pb::Failure {
    fn from(failure: &domains::Failure) -> Self {
        pb::Failure {
            code: failure.code.name().to_owned(),
            reason: failure.reason.to_owned(),
            message: failure.message.clone(),
            retry_after_ms: failure.retry_after_ms,
        }
    }
}

impl From<&domains::CallRecord> for pb::ToolCallRecord {
    fn from(record: &domains::CallRecord) -> Self {
        use pb::tool_call_record::Outcome;
        let outcome = match &record.outcome {
            domains::Outcome::Result(text) => Outcome::ResultJson(text.clone()),
            domains::Outcome::Raw(text) => Outcome::RawResult(text.clone()),
            domains::Outcome::Error(error) => Outcome::Error(error.into()),
            domains::Outcome::Invalid(error) => {
                Outcome::Invalid(pb::InvalidCall { field: error.field.clone(), message: error.message.clone() })
            }
            domains::Outcome::Failure(failure) => Outcome::Failure(failure.into()),
        };
        pb::ToolCallRecord {
            index: record.index,
            tool_name: record.tool.clone(),
            arguments_json: record.arguments.clone(),
            outcome: Some(outcome),
            state_changed: record.state_changed,
            fault: record.fault.map(|f| pb::FaultRecord { kind: f.kind.name().to_owned(), new: f.new, recoverable: f.recoverable }),
            delay_ms: record.delay_ms,
        }
    }
}

impl pb::CallToolResponse {
    /// The OK reply to a call that reached the tool layer (an injected
    /// failure reaches it only in band, as an error result).
    pub fn from_answer(call_index: u32, answer: domains::Answer) -> Self {
        use pb::call_tool_response::Outcome;
        let outcome = match answer {
            domains::Answer::Result(text) | domains::Answer::Raw(text) => Outcome::ResultJson(text),
            domains::Answer::Error(error) => Outcome::Error((&error).into()),
        };
        pb::CallToolResponse { call_index, outcome: Some(outcome) }
    }
}

impl From<&domains::Trajectory> for pb::Trajectory {
    fn from(trajectory: &domains::Trajectory) -> Self {
        pb::Trajectory {
            task_id: trajectory.task_id.clone(),
            seed: trajectory.seed,
            trial: trajectory.trial,
            description: trajectory.description.clone(),
            today: trajectory.today.clone(),
            calls: trajectory.calls.iter().map(Into::into).collect(),
            verdict: trajectory.verdict.as_ref().map(Into::into),
            fault_profile_json: domains::json::canonical(&serde_json::to_value(&trajectory.fault_profile).unwrap_or_default()),
            epsilon: trajectory.epsilon,
            perturbations: trajectory
                .perturbations
                .iter()
                .map(|a| pb::Perturbation { relation: a.relation.name().to_owned(), params: a.params.clone() })
                .collect(),
            // The agent reports it with its finish call; the server adds it.
            usage: None,
        }
    }
}
