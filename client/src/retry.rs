//! Sending a request again when its answer leaves its outcome unknown (the
//! store unavailable, a replica gone under it, the stream cut): a call with
//! the same index, which the server applies at most once; a finish or a
//! lease, which are safe to repeat. What statuses say about that.

use std::future::Future;
use std::time::Duration;

use tonic_types::StatusExt as _;
use toolenv::pb;

use crate::{Client, ClientError};

/// Attempts of a request whose answers leave its outcome unknown, sent
/// again (a call with the same index, which the server applies at most once).
const UNKNOWN_OUTCOME_ATTEMPTS: u32 = 7;
/// The first pause before sending such a request again; doubled each time, up to 1.6 s.
const UNKNOWN_OUTCOME_BACKOFF: Duration = Duration::from_millis(100);

/// Sends a call; one sent with an index (`expected_index`) is sent again,
/// with the same index, while the answer leaves its outcome unknown (the
/// store unavailable, the stream cut, no answer): the server applies an
/// index once and returns the recorded reply to a repeat. Returns the answer
/// and the index of the episode's next call as it says it (`None` when it
/// does not).
pub async fn call_with_index(client: &mut Client, call: pb::CallToolRequest) -> (Result<pb::CallToolResponse, ClientError>, Option<u32>) {
    let mut backoff = UNKNOWN_OUTCOME_BACKOFF;
    for attempt in 1.. {
        let answer = client.call(call.clone()).await;
        let next = match &answer {
            Ok(reply) => Some(reply.call_index + 1),
            Err(ClientError::Status(status)) => {
                status.metadata().get(toolenv::NEXT_INDEX_KEY).and_then(|v| v.to_str().ok()?.parse::<u32>().ok())
            }
            Err(_) => None,
        };
        let unknown = next.is_none() && answer.as_ref().err().is_some_and(outcome_unknown);
        if call.expected_index.is_some() && unknown && attempt < UNKNOWN_OUTCOME_ATTEMPTS {
            tracing::debug!(episode_id = %call.episode_id, attempt, "call's outcome unknown; sending it again with its index");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_millis(1600));
            continue;
        }
        return (answer, next);
    }
    unreachable!("the attempts are bounded above")
}

/// Sends a request that is safe to send again (a finish, whose repeat gets
/// the same verdict; a lease, whose lost answer only leaves a lease to
/// expire) while its answers leave its outcome unknown: the store
/// unavailable, a replica gone under it. Up to [`UNKNOWN_OUTCOME_ATTEMPTS`].
pub(crate) async fn resent<T, F: Future<Output = Result<T, ClientError>>>(mut send: impl FnMut() -> F) -> Result<T, ClientError> {
    let mut backoff = UNKNOWN_OUTCOME_BACKOFF;
    for attempt in 1.. {
        match send().await {
            Err(error) if outcome_unknown(&error) && attempt < UNKNOWN_OUTCOME_ATTEMPTS => {
                tracing::debug!(attempt, %error, "outcome unknown; sending the request again");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(1600));
            }
            answer => return answer,
        }
    }
    unreachable!("the attempts are bounded above")
}

/// Whether an answer leaves a call's outcome unknown: no reply (the
/// connection or stream broke), or a status the episode did not decide (the
/// store unavailable, a deadline or a reset on the way) rather than an
/// injected fault's or a refusal's.
fn outcome_unknown(error: &ClientError) -> bool {
    match error {
        ClientError::Status(status) => {
            let fault = status.get_details_error_info().is_some_and(|info| info.domain == toolenv::FAULT_DOMAIN);
            !fault
                && matches!(
                    status.code(),
                    tonic::Code::Unavailable
                        | tonic::Code::Unknown
                        | tonic::Code::Cancelled
                        | tonic::Code::DeadlineExceeded
                        | tonic::Code::Internal
                        | tonic::Code::Aborted
                )
        }
        ClientError::Connect { .. } => true,
        _ => false,
    }
}

/// Whether a status says a hosted episode's lease expired (another worker has it).
pub(crate) fn is_lease_expired(status: &tonic::Status) -> bool {
    use tonic_types::StatusExt;
    status.code() == tonic::Code::FailedPrecondition && status.get_details_error_info().is_some_and(|info| info.reason == "LEASE_EXPIRED")
}
