//! The proxy offered over MCP's streamable HTTP (`toolenv chaos --listen`):
//! each MCP session (an `initialize` without `Mcp-Session-Id`) gets an
//! upstream server of its own and a proxy session named `<session>-<n>`
//! (n counts sessions from 1), whose messages cross the same [`super::run`]
//! as over stdio, through an in-memory pipe. So a session over HTTP meets
//! the faults a stdio session of that name meets, byte for byte.
//!
//! A POST carries one JSON-RPC message or a batch; its requests are
//! answered in one `application/json` reply once the proxy has answered
//! each, notifications and responses with 202. There is no SSE stream
//! (GET answers 405, as the transport allows), so a message the upstream
//! server sends on its own (a request to the client, a notification) has
//! nowhere to go and is dropped, with a debug log. DELETE ends a session
//! and its upstream server.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, WriteHalf};
use tokio::sync::{Mutex, oneshot};

use super::reply::rpc_error;
use super::{Config, INVALID_REQUEST};

/// The session header of the streamable HTTP transport.
const SESSION_HEADER: &str = "mcp-session-id";

/// Bytes the pipe between a session's HTTP side and its proxy buffers.
const PIPE_BYTES: usize = 1 << 20;

/// The sessions of one listener.
struct Hub {
    config: Config,
    sessions: std::sync::Mutex<HashMap<String, Arc<Link>>>,
    opened: AtomicU64,
}

/// One session: where its client messages go, and who waits for which reply.
struct Link {
    input: Mutex<WriteHalf<tokio::io::DuplexStream>>,
    /// Requests waiting for the proxy's reply, by the JSON text of their id;
    /// `None` once the proxy has ended.
    waiting: Waiting,
}

/// The waiters get the proxy's reply line as written, byte for byte.
type Waiting = Arc<std::sync::Mutex<Option<HashMap<String, oneshot::Sender<String>>>>>;

/// Serves MCP over streamable HTTP at `/mcp` on `listener` until `shutdown`
/// resolves. `config.ledger`, when set, is a directory: each session writes
/// `<session>-<n>.jsonl` there.
pub async fn serve_http(
    config: Config,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    if let Some(dir) = &config.ledger {
        std::fs::create_dir_all(dir)?;
    }
    let hub = Arc::new(Hub { config, sessions: std::sync::Mutex::new(HashMap::new()), opened: AtomicU64::new(0) });
    let app = axum::Router::new().route("/mcp", axum::routing::post(post).get(get).delete(delete)).with_state(hub.clone());
    let served = axum::serve(listener, app).with_graceful_shutdown(shutdown).await;
    // Ending every session closes every upstream server's input.
    hub.sessions.lock().unwrap_or_else(|e| e.into_inner()).clear();
    served
}

/// JSON-RPC error codes of a body that is not JSON, and of a request the server never answered.
const PARSE_ERROR: i64 = -32700;
const INTERNAL_ERROR: i64 = -32603;

/// A JSON body with its content type.
fn json_reply(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn plain(status: StatusCode, text: &str) -> Response {
    (status, text.to_owned()).into_response()
}

async fn post(State(hub): State<Arc<Hub>>, headers: HeaderMap, body: Bytes) -> Response {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return json_reply(StatusCode::BAD_REQUEST, rpc_error(&Value::Null, PARSE_ERROR, "parse error: the body is not JSON", None));
    };
    let batch = message.is_array();
    let messages = match message {
        Value::Array(messages) if !messages.is_empty() => messages,
        Value::Object(_) => vec![message],
        _ => return json_reply(StatusCode::BAD_REQUEST, rpc_error(&Value::Null, INVALID_REQUEST, "invalid request", None)),
    };
    let (name, link) = match headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) {
        Some(name) => match hub.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(name) {
            Some(link) => (name.to_owned(), link.clone()),
            None => return plain(StatusCode::NOT_FOUND, "unknown or ended session: initialize a new one"),
        },
        None if messages.iter().any(|m| m["method"] == "initialize") => open(&hub),
        None => return plain(StatusCode::BAD_REQUEST, "no Mcp-Session-Id: a session starts with initialize"),
    };
    let mut replies = Vec::new();
    {
        let mut input = link.input.lock().await;
        for message in &messages {
            if message.get("method").is_some() && message.get("id").is_some_and(|id| !id.is_null()) {
                let (tx, rx) = oneshot::channel();
                // A session whose proxy has ended drops the sender, and the request hears so below.
                if let Some(waiting) = link.waiting.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                    waiting.insert(message["id"].to_string(), tx);
                }
                replies.push((message["id"].clone(), rx));
            }
            let line = format!("{message}\n");
            if input.write_all(line.as_bytes()).await.is_err() {
                return plain(StatusCode::NOT_FOUND, "the session's upstream server has ended: initialize a new one");
            }
        }
        let _ = input.flush().await;
    }
    if replies.is_empty() {
        return with_session(StatusCode::ACCEPTED.into_response(), &name);
    }
    let mut answered = Vec::with_capacity(replies.len());
    for (id, rx) in replies {
        answered
            .push(rx.await.unwrap_or_else(|_| rpc_error(&id, INTERNAL_ERROR, "the upstream MCP server ended before it answered", None)));
    }
    // The replies as the proxy wrote them: a batch's in brackets.
    let body = if batch { format!("[{}]", answered.join(",")) } else { answered.remove(0) };
    with_session(json_reply(StatusCode::OK, body), &name)
}

fn with_session(mut response: Response, name: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(name) {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

/// Opens a session: its proxy, its upstream server, and the task that
/// hands the proxy's replies to the requests waiting for them.
fn open(hub: &Hub) -> (String, Arc<Link>) {
    let n = hub.opened.fetch_add(1, Ordering::Relaxed) + 1;
    let name = format!("{}-{n}", hub.config.session);
    let config = Config {
        session: name.clone(),
        ledger: hub.config.ledger.as_ref().map(|dir| dir.join(format!("{name}.jsonl"))),
        ..hub.config.clone()
    };
    let (client, proxy) = tokio::io::duplex(PIPE_BYTES);
    let (proxy_in, proxy_out) = tokio::io::split(proxy);
    let (from_proxy, to_proxy) = tokio::io::split(client);
    let session = name.clone();
    tokio::spawn(async move {
        match super::run(config, proxy_in, proxy_out).await {
            Ok(status) => tracing::debug!(%session, %status, "session ended"),
            Err(error) => tracing::warn!(%session, %error, "session failed"),
        }
    });
    let waiting: Waiting = Arc::new(std::sync::Mutex::new(Some(HashMap::new())));
    let routes = waiting.clone();
    let session = name.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_proxy).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            let is_reply = message.get("result").is_some() || message.get("error").is_some();
            let waiter = message
                .get("id")
                .filter(|_| is_reply)
                .and_then(|id| routes.lock().unwrap_or_else(|e| e.into_inner()).as_mut()?.remove(&id.to_string()));
            match waiter {
                Some(waiter) => {
                    let _ = waiter.send(line);
                }
                None => tracing::debug!(%session, %line, "dropped: a message of the server's own, and the client has no SSE stream"),
            }
        }
        // The proxy is done: whoever still waits hears so (their senders drop).
        routes.lock().unwrap_or_else(|e| e.into_inner()).take();
    });
    let link = Arc::new(Link { input: Mutex::new(to_proxy), waiting });
    hub.sessions.lock().unwrap_or_else(|e| e.into_inner()).insert(name.clone(), link.clone());
    (name, link)
}

async fn get() -> Response {
    let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "no SSE stream: POST JSON-RPC messages to /mcp");
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
    response
}

async fn delete(State(hub): State<Arc<Hub>>, headers: HeaderMap) -> Response {
    let name = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
    match hub.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(name) {
        // Dropping its link closes the proxy's input, and so the upstream server's.
        Some(_) => StatusCode::OK.into_response(),
        None => plain(StatusCode::NOT_FOUND, "unknown or ended session"),
    }
}
