//! An episode on a server as the environment agents play against
//! ([`toolenv_agents::Env`]): each call is one `ToolEnv.CallTool`, made from
//! a thread that may block, and its reply becomes the observation the
//! solver's vocabulary names, the same an in-process episode gives.

use std::time::Duration;

use tonic_types::StatusExt as _;
use toolenv::pb;
use toolenv_core::FailureCode;
use toolenv_domains::{
    masfire::team::TeamEnv,
    solver::{Env, Fault, Observation, Request},
};

use crate::{Client, ClientError};

/// An episode on a server, as an agent's environment. Built inside a tokio
/// runtime; played on a thread that may block (`spawn_blocking`).
#[derive(Debug)]
pub struct RemoteEnv {
    client: Client,
    runtime: tokio::runtime::Handle,
    episode_id: String,
    time_scale: f64,
    /// Whether a fault delivered in-band stays the reply's text (as an LLM
    /// reads it) instead of being read as a failure.
    in_band_text: bool,
    /// An infrastructure error (not a fault): the episode stops there.
    error: Option<ClientError>,
    /// The agent the calls are made as (empty: none).
    agent_id: String,
    /// The final answer the agent gave, sent with the finish.
    answer: Option<String>,
    /// The typed final answer it gave (JSON), sent with the finish.
    answer_json: Option<String>,
    /// The index the next call is to take (`CallToolRequest.expected_index`),
    /// as the server's answers say it; `None` once an answer did not say.
    next_index: Option<u32>,
}

impl RemoteEnv {
    /// The environment of a created episode, on the current tokio runtime.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn new(client: Client, episode: &pb::Episode, in_band_text: bool) -> RemoteEnv {
        RemoteEnv {
            client,
            runtime: tokio::runtime::Handle::current(),
            episode_id: episode.episode_id.clone(),
            time_scale: episode.time_scale.max(0.0),
            in_band_text,
            error: None,
            agent_id: String::new(),
            answer: None,
            answer_json: None,
            // A created episode holds no call yet.
            next_index: Some(0),
        }
    }

    /// Sends a call. One sent with an index is sent again, with the same
    /// index, while the answer leaves its outcome unknown (the store
    /// unavailable, the stream cut, no answer): the server applies an index
    /// once, and returns the recorded reply to a repeat.
    fn send(&mut self, call: pb::CallToolRequest) -> Result<pb::CallToolResponse, ClientError> {
        let (answer, next) = self.runtime.block_on(crate::retry::call_with_index(&mut self.client.clone(), call));
        // An answer that does not say the next index (an older server): stop sending one.
        self.next_index = next;
        answer
    }

    /// What the play came to: the final answer to finish with (its text,
    /// and its typed form as JSON), or the infrastructure error that stopped it.
    pub fn into_answer(self) -> Result<(Option<String>, Option<String>), ClientError> {
        self.error.map_or(Ok((self.answer, self.answer_json)), Err)
    }

    /// A status as the agent observes it; one that is not the episode's
    /// doing stops the play as an infrastructure error.
    fn observe_status(&mut self, status: tonic::Status) -> Observation {
        match observation_of(&status, self.time_scale) {
            Ok(observation) => observation,
            Err(why) => {
                self.error = Some(ClientError::Status(status));
                Observation::Closed(why.into())
            }
        }
    }
}

/// A status as the agent observes it, or why it is an infrastructure error.
///
/// Only a status with a fault's `ErrorInfo` ([`toolenv::FAULT_DOMAIN`]) is a
/// fault; of the rest, what the episode itself decides (a malformed call, an
/// unknown tool, a finished episode, the episode's own quotas) is observed,
/// and everything else (the episode gone, its lease expired, the server
/// full, a store, proxy or transport failure) is not the agent's doing and
/// must never be scored as such.
fn observation_of(status: &tonic::Status, time_scale: f64) -> Result<Observation, &'static str> {
    let refused = || Observation::Closed(status.message().to_owned());
    let invalid = || Observation::Invalid { field: String::new(), message: status.message().to_owned() };
    let info = status.get_details_error_info().filter(|info| info.domain == toolenv::FAULT_DOMAIN);
    let code = match status.code() {
        tonic::Code::InvalidArgument => return Ok(invalid()),
        tonic::Code::NotFound if status.get_details_resource_info().is_some_and(|r| r.resource_type == "tool") => return Ok(invalid()),
        // The episode went to another worker: nothing this play does counts any more.
        tonic::Code::FailedPrecondition if crate::retry::is_lease_expired(status) => return Err("the lease expired"),
        tonic::Code::FailedPrecondition => return Ok(refused()),
        // A quota of the episode (its calls, its messages), not the server's.
        tonic::Code::ResourceExhausted
            if status.get_details_error_info().is_none() && !status.get_details_quota_failure().is_some_and(|q| is_server_quota(&q)) =>
        {
            return Ok(refused());
        }
        tonic::Code::DeadlineExceeded => FailureCode::DeadlineExceeded,
        tonic::Code::Unavailable => FailureCode::Unavailable,
        tonic::Code::ResourceExhausted => FailureCode::ResourceExhausted,
        tonic::Code::PermissionDenied => FailureCode::PermissionDenied,
        _ => return Err("infrastructure error"),
    };
    let Some(info) = info else { return Err("infrastructure error") };
    let pushback = status.metadata().get("grpc-retry-pushback-ms").and_then(|v| v.to_str().ok()?.parse::<i64>().ok());
    let retry_after_ms = pushback.or_else(|| status.get_details_retry_info().and_then(|r| r.retry_delay).map(|d| d.as_millis() as i64));
    // A suspension's -1 stays; a delay is read in virtual milliseconds where given.
    let advised = info
        .metadata
        .get("retry_after_virtual_ms")
        .and_then(|ms| ms.parse::<i64>().ok())
        .filter(|ms| *ms >= 0 && retry_after_ms.is_none_or(|ms| ms >= 0));
    Ok(Observation::Failure(Fault {
        code,
        reason: info.reason,
        message: status.message().to_owned(),
        retry_after_ms: advised.or(retry_after_ms.map(|ms| virtual_ms(ms, time_scale))),
    }))
}

/// Real milliseconds back to the episode's virtual ones.
fn virtual_ms(ms: i64, time_scale: f64) -> i64 {
    if ms > 0 && time_scale > 0.0 { (ms as f64 / time_scale).round() as i64 } else { ms }
}

/// Whether a quota failure is the server's (its live episodes), not the episode's.
fn is_server_quota(quota: &tonic_types::QuotaFailure) -> bool {
    quota.violations.iter().any(|v| v.subject == toolenv::SERVER_QUOTA)
}

impl Env for RemoteEnv {
    fn answer(&mut self, text: &str) {
        self.answer = Some(text.to_owned());
    }

    fn answer_typed(&mut self, answer: &serde_json::Value) {
        self.answer_json = Some(toolenv_core::json::canonical(answer));
    }

    fn call(&mut self, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        if self.error.is_some() {
            return Observation::Closed("stopped after an infrastructure error".into());
        }
        // The wait, for real at this time scale (a blocking thread may
        // sleep), and declared with the call: at time scale 0 only the
        // declaration makes time pass for the episode.
        if request.waited_ms > 0 && self.time_scale > 0.0 {
            std::thread::sleep(Duration::from_millis(request.waited_ms).mul_f64(self.time_scale));
        }
        let call = pb::CallToolRequest {
            episode_id: self.episode_id.clone(),
            tool_name: tool.to_owned(),
            arguments_json: arguments_json.to_owned(),
            idempotency_key: request.idempotency_key.unwrap_or_default().to_owned(),
            waited_ms: Some(request.waited_ms),
            agent_id: self.agent_id.clone(),
            user_answer: request.user_answer.map(str::to_owned),
            expected_index: self.next_index,
        };
        match self.send(call) {
            Ok(reply) => match reply.outcome {
                Some(pb::call_tool_response::Outcome::ResultJson(text)) if self.in_band_text => Observation::Result(text),
                Some(pb::call_tool_response::Outcome::ResultJson(text)) => {
                    let value = serde_json::from_str::<serde_json::Value>(&text).ok();
                    match value.as_ref().and_then(Fault::in_band) {
                        Some(fault) => {
                            let advised =
                                value.and_then(|v| v.pointer("/error/retry_after_virtual_ms").and_then(serde_json::Value::as_i64));
                            let retry_after_ms = advised.or(fault.retry_after_ms.map(|ms| virtual_ms(ms, self.time_scale)));
                            Observation::Failure(Fault { retry_after_ms, ..fault })
                        }
                        None => Observation::Result(text),
                    }
                }
                Some(pb::call_tool_response::Outcome::Error(e)) => Observation::DomainError { code: e.code, message: e.message },
                None => Observation::Result(String::new()),
            },
            Err(ClientError::Status(status)) => self.observe_status(status),
            Err(error) => {
                self.error = Some(error);
                Observation::Closed("infrastructure error".into())
            }
        }
    }
}

impl TeamEnv for RemoteEnv {
    fn join(&mut self, role: &str) -> Result<String, String> {
        if self.error.is_some() {
            return Err("stopped after an infrastructure error".into());
        }
        let mut client = self.client.clone();
        match self.runtime.block_on(client.join(&self.episode_id, role)) {
            Ok(reply) => {
                // The join took an index of the episode too: the next call's
                // goes unsent until an answer says it again.
                self.next_index = None;
                Ok(reply.agent_id)
            }
            Err(ClientError::Status(status)) if status.code() != tonic::Code::Unavailable && status.code() != tonic::Code::Internal => {
                Err(status.message().to_owned())
            }
            Err(error) => {
                let message = error.to_string();
                self.error = Some(error);
                Err(message)
            }
        }
    }

    fn call_as(&mut self, agent: &str, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        agent.clone_into(&mut self.agent_id);
        Env::call(self, tool, arguments_json, request)
    }
}

#[cfg(test)]
mod tests {
    use tonic::Code;
    use tonic_types::{ErrorDetails, StatusExt as _};

    use super::*;

    fn read(status: &tonic::Status) -> Result<Observation, &'static str> {
        observation_of(status, 0.0)
    }

    #[test]
    fn only_a_fault_of_the_chaos_domain_is_a_fault() {
        let fault = |code, domain: &str| {
            tonic::Status::with_error_details(
                code,
                "m",
                ErrorDetails::with_error_info("RATE_LIMIT_EXCEEDED", domain, std::collections::HashMap::new()),
            )
        };
        for code in [Code::DeadlineExceeded, Code::Unavailable, Code::ResourceExhausted, Code::PermissionDenied] {
            assert!(matches!(read(&fault(code, toolenv::FAULT_DOMAIN)), Ok(Observation::Failure(_))), "{code:?}");
            // The same code from elsewhere (a proxy, the transport, another domain) is no fault.
            assert_eq!(read(&fault(code, "example.com")).err(), Some("infrastructure error"), "{code:?}");
            assert_eq!(read(&tonic::Status::new(code, "m")).err().is_some(), code != Code::ResourceExhausted, "{code:?}");
        }
        for code in [Code::Unknown, Code::Internal, Code::Aborted, Code::Cancelled, Code::Unauthenticated, Code::DataLoss] {
            assert!(read(&fault(code, toolenv::FAULT_DOMAIN)).is_err(), "{code:?}");
        }
    }

    #[test]
    fn what_the_episode_decides_is_observed_and_the_rest_stops_the_play() {
        let resource =
            |kind: &str| tonic::Status::with_error_details(Code::NotFound, "m", ErrorDetails::with_resource_info(kind, "x", "", ""));
        assert!(matches!(read(&resource("tool")), Ok(Observation::Invalid { .. })));
        // The episode gone (expired, or on a replica that cannot rebuild it) is not the agent's bad call.
        assert!(read(&resource("episode")).is_err());
        assert!(read(&tonic::Status::not_found("m")).is_err());
        assert!(matches!(read(&tonic::Status::invalid_argument("m")), Ok(Observation::Invalid { .. })));
        assert!(matches!(read(&tonic::Status::failed_precondition("finished")), Ok(Observation::Closed(_))));
        let expired = tonic::Status::with_error_details(
            Code::FailedPrecondition,
            "m",
            ErrorDetails::with_error_info("LEASE_EXPIRED", "toolenv.runs", std::collections::HashMap::new()),
        );
        assert_eq!(read(&expired).err(), Some("the lease expired"));
        // The episode's call limit ends the play as observed; a full server does not.
        assert!(matches!(read(&tonic::Status::resource_exhausted("call limit")), Ok(Observation::Closed(_))));
        let full = tonic::Status::with_error_details(
            Code::ResourceExhausted,
            "m",
            ErrorDetails::with_quota_failure_violation(toolenv::SERVER_QUOTA, "m"),
        );
        assert!(read(&full).is_err());
    }
}
