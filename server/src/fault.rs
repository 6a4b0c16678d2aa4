//! The wire side of fault injection: reading a requested fault profile, and
//! turning an injected failure into the status a production client sees.
//! Which fault meets which call is decided in `toolenv_core::chaos`.

use std::collections::BTreeMap;
use std::time::Duration;

use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};
use toolenv::pb;
use toolenv_core::{
    Failure, FailureCode, Outcome,
    chaos::{Chaos, FaultKind, FaultProfile, ProfileError},
};

use crate::{error::Error, limits};

/// Builds the fault profile a create-episode request asks for. `named` holds
/// the profiles of the server's profile file, which shadow the presets.
pub(crate) fn chaos(spec: Option<&pb::FaultProfile>, named: &BTreeMap<String, FaultProfile>) -> Result<Chaos, Error> {
    let Some(spec) = spec else { return Ok(Chaos::default()) };
    limits::text("fault_profile.name", &spec.name, limits::MAX_NAME_BYTES)?;
    if spec.fault_weights.len() > limits::MAX_MAP_LEN {
        return Err(Error::invalid("fault_profile.fault_weights", format!("at most {} entries", limits::MAX_MAP_LEN)));
    }
    for (kind, &weight) in &spec.fault_weights {
        limits::text("fault_profile.fault_weights", kind, limits::MAX_NAME_BYTES)?;
        limits::figure("fault_profile.fault_weights", weight)?;
    }
    limits::list("fault_profile.only", &spec.only, limits::MAX_NAME_BYTES)?;
    if !(0.0..=1.0).contains(&spec.failure_rate) {
        return Err(Error::invalid("fault_profile.failure_rate", format!("must be within [0, 1], got {}", spec.failure_rate)));
    }
    let mut profile = if spec.name.is_empty() {
        FaultProfile::custom(spec.failure_rate, &spec.fault_weights.clone().into_iter().collect(), Default::default()).map_err(invalid)?
    } else {
        if spec.failure_rate != 0.0 || !spec.fault_weights.is_empty() {
            return Err(Error::invalid("fault_profile.name", "give a profile name or a custom failure_rate and fault_weights, not both"));
        }
        match named.get(&spec.name) {
            Some(profile) => profile.clone(),
            None => FaultProfile::preset(&spec.name).map_err(invalid)?,
        }
    };
    if let Some(p) = &spec.params {
        let params = &mut profile.params;
        params.timeout_ms = p.timeout_ms.unwrap_or(params.timeout_ms);
        params.latency_min_ms = p.latency_min_ms.unwrap_or(params.latency_min_ms);
        params.latency_max_ms = p.latency_max_ms.unwrap_or(params.latency_max_ms);
        params.latency_shape_centi = p.latency_shape_centi.unwrap_or(params.latency_shape_centi);
        params.retry_after_ms = p.retry_after_ms.unwrap_or(params.retry_after_ms);
        params.cascade_calls = p.cascade_calls.unwrap_or(params.cascade_calls);
    }
    if !spec.only.is_empty() {
        let kinds = spec.only.iter().map(|name| FaultKind::parse(name).ok_or_else(|| ProfileError::UnknownKind(name.clone())));
        let kinds: Vec<FaultKind> = kinds.collect::<Result<_, _>>().map_err(|e| Error::invalid("fault_profile.only", e.to_string()))?;
        profile = profile.restricted_to(&kinds).map_err(invalid)?;
    }
    Chaos::new(profile).map_err(invalid)
}

/// Names the request field a profile problem is about.
fn invalid(error: ProfileError) -> Error {
    let field = match &error {
        ProfileError::Rate(_) => "fault_profile.failure_rate".to_owned(),
        ProfileError::Weight { .. } | ProfileError::WeightSum(_) | ProfileError::NoWeights | ProfileError::UnknownKind(_) => {
            "fault_profile.fault_weights".to_owned()
        }
        ProfileError::UnknownProfile(_) => "fault_profile.name".to_owned(),
        ProfileError::EmptyAblation(_) => "fault_profile.only".to_owned(),
        ProfileError::Param { field, .. } => format!("fault_profile.params.{field}"),
    };
    Error::invalid(field, error.to_string())
}

/// A delivered call, ready to send once its delay has passed.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The call's index within the episode.
    pub(crate) index: u32,
    /// What reaches the agent.
    pub(crate) outcome: Outcome,
    /// The call's simulated delay, in real time.
    pub(crate) delay: Duration,
    /// Failures go out as error results inside OK replies, not as statuses.
    pub(crate) in_band: bool,
    /// Real milliseconds per simulated millisecond.
    pub(crate) time_scale: f64,
}

impl Outgoing {
    /// The reply on the wire: an OK reply, or an injected failure's status
    /// (unless it is delivered in band).
    pub(crate) fn into_response(self) -> Result<pb::CallToolResponse, Status> {
        match self.outcome {
            Outcome::Failure(failure) if !self.in_band => Err(status(&failure, self.time_scale)),
            outcome => pb::CallToolResponse::from_outcome(self.index, outcome.in_band(self.time_scale))
                .ok_or_else(|| Status::internal("a refused call has no reply")),
        }
    }
}

/// The status of an injected failure: its code and message, `ErrorInfo` with
/// its reason, `RetryInfo` with the (time-scaled) delay when it has one, and
/// the `grpc-retry-pushback-ms` trailer (-1: do not retry).
fn status(failure: &Failure, time_scale: f64) -> Status {
    let code = match failure.code {
        FailureCode::DeadlineExceeded => Code::DeadlineExceeded,
        FailureCode::Unavailable => Code::Unavailable,
        FailureCode::ResourceExhausted => Code::ResourceExhausted,
        FailureCode::PermissionDenied => Code::PermissionDenied,
    };
    // The delay in the episode's virtual milliseconds: the wait to declare
    // (`CallToolRequest.waited_ms`), which at time scale 0 no real delay shows.
    let virtual_ms = failure.retry_after_ms.map(|ms| ("retry_after_virtual_ms".to_owned(), ms.to_string()));
    let mut details = ErrorDetails::with_error_info(
        failure.reason,
        toolenv::FAULT_DOMAIN,
        virtual_ms.into_iter().collect::<std::collections::HashMap<_, _>>(),
    );
    let mut metadata = MetadataMap::new();
    if let Some(ms) = failure.retry_after_real_ms(time_scale) {
        if ms >= 0 {
            details.set_retry_info(Some(Duration::from_millis(ms as u64)));
        }
        metadata.insert("grpc-retry-pushback-ms", MetadataValue::from(ms));
    }
    Status::with_error_details_and_metadata(code, failure.message.clone(), details, metadata)
}

/// The virtual milliseconds an agent waited before a call: at time scale 0
/// what it declares (none: no time passed); at a time scale > 0 the real
/// wait since the previous reply divided by the scale, or the declared wait
/// when the real clock agrees with it (within one real millisecond), so that
/// an agent that declares the waits it honours gets the same trajectory at
/// every time scale.
pub(crate) fn virtual_wait_ms(declared_ms: Option<u64>, real_wait: Option<Duration>, time_scale: f64) -> Option<u64> {
    if time_scale <= 0.0 {
        return declared_ms;
    }
    let Some(real) = real_wait else { return declared_ms };
    let measured_ms = (real.as_secs_f64() * 1000.0 / time_scale) as u64;
    let slack_ms = (1.0 / time_scale).ceil() as u64;
    match declared_ms {
        Some(declared) if declared <= measured_ms.saturating_add(slack_ms) => Some(declared),
        _ => Some(measured_ms),
    }
}

/// A simulated delay as a real one.
pub(crate) fn real_delay(simulated_ms: u64, time_scale: f64) -> Duration {
    Duration::from_secs_f64(simulated_ms as f64 / 1000.0 * time_scale)
}
