//! `CallTools`: many tool calls over one long-lived stream, for clients that
//! step many episodes at once. Each call goes through the unary `CallTool`
//! handler unchanged, so the stream decides nothing of its own; it only saves
//! the per-call cost of a unary RPC.

use std::collections::BTreeSet;
use std::pin::Pin;

use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Status, Streaming};
use toolenv::pb;
use toolenv::pb::tool_env_server::ToolEnv as _;

use super::ToolEnvService;
use crate::{error::Error, limits};

/// The responses of a `CallTools` stream.
pub type CallToolsStream = Pin<Box<dyn Stream<Item = Result<pb::CallToolsResponse, Status>> + Send>>;

/// Responses buffered ahead of a slow reader before answering waits.
const BUFFERED_RESPONSES: usize = 64;

/// Answers each request of the stream as its calls complete; requests are
/// served concurrently, and a stream error or an over-long request ends it.
pub(crate) fn serve(service: ToolEnvService, mut requests: Streaming<pb::CallToolsRequest>) -> CallToolsStream {
    let (responses, receiver) = mpsc::channel(BUFFERED_RESPONSES);
    tokio::spawn(async move {
        loop {
            let request = match requests.message().await {
                Ok(Some(request)) => request,
                Ok(None) => break,
                Err(status) => {
                    let _ = responses.send(Err(status)).await;
                    break;
                }
            };
            if request.calls.len() > limits::MAX_LIST_LEN {
                let message = format!("at most {} calls in one request", limits::MAX_LIST_LEN);
                let _ = responses.send(Err(Error::invalid("calls", message).into())).await;
                break;
            }
            let (service, responses) = (service.clone(), responses.clone());
            tokio::spawn(async move {
                let _ = responses.send(Ok(answer(service, request).await)).await;
            });
        }
    });
    Box::pin(ReceiverStream::new(receiver))
}

/// Plays a request's calls concurrently, each through `CallTool`.
async fn answer(service: ToolEnvService, request: pb::CallToolsRequest) -> pb::CallToolsResponse {
    let mut outcomes: Vec<Option<pb::CallOutcome>> = vec![None; request.calls.len()];
    let mut seen = BTreeSet::new();
    let mut calls = JoinSet::new();
    for (index, call) in request.calls.into_iter().enumerate() {
        if !seen.insert(call.episode_id.clone()) {
            let status: Status = Error::invalid("calls.episode_id", "a second call to the same episode in one request").into();
            outcomes[index] = Some(outcome(Err(status)));
            continue;
        }
        let service = service.clone();
        calls.spawn(async move { (index, outcome(service.call_tool(Request::new(call)).await.map(tonic::Response::into_inner))) });
    }
    while let Some(joined) = calls.join_next().await {
        match joined {
            Ok((index, played)) => outcomes[index] = Some(played),
            // A call's task panicked: its slot stays empty and is reported below.
            Err(error) => tracing::error!(%error, "a CallTools call failed"),
        }
    }
    let outcomes =
        outcomes.into_iter().map(|o| o.unwrap_or_else(|| outcome(Err(Status::internal("the call failed on the server"))))).collect();
    pb::CallToolsResponse { tag: request.tag, outcomes }
}

/// A call's reply or error status as a `CallOutcome`.
fn outcome(result: Result<pb::CallToolResponse, Status>) -> pb::CallOutcome {
    let played = match result {
        Ok(reply) => pb::call_outcome::Outcome::Reply(reply),
        Err(status) => {
            let pushback = status.metadata().get("grpc-retry-pushback-ms").and_then(|v| v.to_str().ok()?.parse().ok());
            pb::call_outcome::Outcome::Status(pb::CallStatus {
                code: status.code() as i32,
                message: status.message().to_owned(),
                details: status.details().to_vec(),
                retry_pushback_ms: pushback,
            })
        }
    };
    pb::CallOutcome { outcome: Some(played) }
}
