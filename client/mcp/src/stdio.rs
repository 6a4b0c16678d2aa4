//! The end of an MCP session on stdio: when the client closes stdin, the
//! requests it has already sent are still answered.
//!
//! rmcp ends its serve loop as soon as the transport reports end of input,
//! then gives the handlers still running five seconds before it drops their
//! replies (`timed out draining in-flight responses`). A tool call can take
//! longer than that: a fault's delay at a real `--time-scale`, a slow `--url`
//! server, a hosted run's `finish` leasing the next episode (whose
//! `tools/list_changed` notification also needs the loop running). So
//! [`Draining`] holds the end of input back until every request received has
//! been answered and its reply flushed to stdout, or until [`DRAIN_TIMEOUT`]
//! has passed; only then does rmcp see it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServerHandler, ServiceExt as _};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::ServeError;

/// How long the end of input waits for the replies still owed. Longer than
/// any fault delay of the built-in profiles at `--time-scale 1` (the longest
/// is a 5 s upstream timeout), short enough that a client shutting down is
/// not kept waiting by a request that will never be answered.
pub(crate) const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// A transport whose end of input waits for the requests in flight.
pub(crate) struct Draining<T> {
    inner: T,
    /// Requests received and not answered yet; shared with the sends in
    /// flight (rmcp spawns them) and with [`Owed`].
    unanswered: Arc<watch::Sender<HashSet<RequestId>>>,
    /// Set when the inner transport reported end of input: the wait for the
    /// replies still owed ends then. Kept here because rmcp polls `receive`
    /// inside a `select!` and may drop it and call it again.
    deadline: Option<Instant>,
}

/// The requests a [`Draining`] transport has not answered: after the session,
/// the replies that were lost.
#[derive(Debug, Clone)]
pub(crate) struct Owed(Arc<watch::Sender<HashSet<RequestId>>>);

impl Owed {
    pub(crate) fn count(&self) -> usize {
        self.0.borrow().len()
    }
}

impl<T> Draining<T> {
    pub(crate) fn new(inner: T) -> (Draining<T>, Owed) {
        let unanswered = Arc::new(watch::Sender::new(HashSet::new()));
        (Draining { inner, unanswered: Arc::clone(&unanswered), deadline: None }, Owed(unanswered))
    }

    /// Keeps count of what the client asked: a request is owed a reply until
    /// one is sent, or until the client cancels it (rmcp then sends none).
    fn received(&self, message: &RxJsonRpcMessage<RoleServer>) {
        match message {
            JsonRpcMessage::Request(request) => {
                self.unanswered.send_modify(|owed| {
                    owed.insert(request.id.clone());
                });
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) = &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.unanswered.send_if_modified(|owed| owed.remove(id));
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Draining<T> {
    type Error = T::Error;

    fn send(&mut self, item: TxJsonRpcMessage<RoleServer>) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        let send = self.inner.send(item);
        let unanswered = Arc::clone(&self.unanswered);
        async move {
            // The inner send returns once the line is flushed. A reply that
            // could not be written is not waited for either: the client is gone.
            let sent = send.await;
            if let Some(id) = answers {
                unanswered.send_if_modified(|owed| owed.remove(&id));
            }
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let deadline = match self.deadline {
            Some(deadline) => deadline,
            None => match self.inner.receive().await {
                Some(message) => {
                    self.received(&message);
                    return Some(message);
                }
                None => *self.deadline.insert(Instant::now() + DRAIN_TIMEOUT),
            },
        };
        let mut owed = self.unanswered.subscribe();
        // Timing out is not an error here: the replies still owed are lost,
        // and `serve` reports them from `Owed` when the session has ended.
        let _ = tokio::time::timeout_at(deadline, owed.wait_for(HashSet::is_empty)).await;
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// Serves `handler` on `transport` until the client closes its input and
/// every request it sent has been answered (or [`DRAIN_TIMEOUT`] has passed).
pub(crate) async fn serve<S, T>(handler: S, transport: T) -> Result<(), ServeError>
where
    S: ServerHandler,
    T: Transport<RoleServer> + 'static,
{
    let (transport, owed) = Draining::new(transport);
    let service = handler.serve(transport).await.map_err(|e| ServeError::Session(e.to_string()))?;
    service.waiting().await.map_err(|e| ServeError::Session(e.to_string()))?;
    match owed.count() {
        0 => Ok(()),
        unanswered => Err(ServeError::Unanswered { unanswered, waited_s: DRAIN_TIMEOUT.as_secs() }),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
    use rmcp::service::RequestContext;
    use rmcp::transport::async_rw::AsyncRwTransport;
    use rmcp::{ErrorData, RoleServer, ServerHandler};
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    use super::{DRAIN_TIMEOUT, serve};
    use crate::ServeError;

    /// A server whose one tool answers after `delay`, on tokio's clock.
    #[derive(Clone)]
    struct Slow {
        delay: std::time::Duration,
    }

    impl ServerHandler for Slow {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn call_tool(&self, _: CallToolRequestParams, _: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
            tokio::time::sleep(self.delay).await;
            Ok(CallToolResult::success(vec![ContentBlock::text("done")]).into())
        }
    }

    /// Sends initialize, initialized and one tools/call, closes the input,
    /// and returns what the server wrote and how serving ended.
    async fn call_then_close(delay: std::time::Duration) -> (Vec<Value>, Result<(), ServeError>) {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let served = tokio::spawn(serve(Slow { delay }, AsyncRwTransport::new_server(server_read, server_write)));
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut input = String::new();
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}),
        ] {
            input.push_str(&format!("{message}\n"));
        }
        client_write.write_all(input.as_bytes()).await.expect("the server reads");
        client_write.shutdown().await.expect("end of input");
        drop(client_write);
        let mut lines = BufReader::new(client_read).lines();
        let mut replies = Vec::new();
        while let Some(line) = lines.next_line().await.expect("a line") {
            replies.push(serde_json::from_str(&line).expect("JSON-RPC"));
        }
        (replies, served.await.expect("serve does not panic"))
    }

    /// rmcp alone drops a reply that takes longer than five seconds after the
    /// end of input; this one takes twenty and still arrives.
    #[tokio::test(start_paused = true)]
    async fn a_reply_owed_at_the_end_of_input_is_sent() {
        let (replies, served) = call_then_close(std::time::Duration::from_secs(20)).await;
        let call = replies.iter().find(|reply| reply["id"] == 2);
        let call = call.unwrap_or_else(|| panic!("no reply to the tool call in {replies:?}"));
        assert_eq!(call["result"]["content"][0]["text"], "done", "{call}");
        assert!(served.is_ok(), "{served:?}");
    }

    /// A request that is never answered does not keep the session open: it
    /// ends after the timeout, and says a reply was lost.
    #[tokio::test(start_paused = true)]
    async fn a_request_never_answered_ends_the_session_after_the_timeout() {
        let started = tokio::time::Instant::now();
        let (replies, served) = call_then_close(DRAIN_TIMEOUT * 10).await;
        let waited = started.elapsed();
        assert!(replies.iter().all(|reply| reply["id"] != 2), "{replies:?}");
        assert!(waited >= DRAIN_TIMEOUT && waited < DRAIN_TIMEOUT * 2, "{waited:?}");
        assert!(matches!(served, Err(ServeError::Unanswered { unanswered: 1, .. })), "{served:?}");
    }
}
