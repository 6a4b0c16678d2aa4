//! An MCP server reached over streamable HTTP, as a stdio server: what
//! `toolenv chaos -- URL` runs as its upstream (`toolenv chaos-connect URL`,
//! a command of its own, so the proxy keeps one way to reach a server).
//! Each line read is POSTed to the URL (with the session id the server gave
//! at `initialize`); each reply, a JSON body or the events of an SSE
//! stream, is written back as lines. Requests are posted concurrently: a
//! slow call does not hold up the next.

use std::sync::Arc;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::{Client, connect::HttpConnector};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;

type Http = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

/// Why the connector stopped.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The URL is not an http(s) URL.
    #[error("invalid MCP server url '{0}': an http:// or https:// URL")]
    InvalidUrl(String),
    /// TLS could not be set up.
    #[error("cannot set up TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// Reading or writing the pipes failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Bridges `input`/`output` (JSON-RPC lines) to the MCP server at `url`
/// until `input` ends; then ends the session (DELETE) and returns.
pub async fn connect<R, W>(url: &str, input: R, output: W) -> Result<(), ConnectError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let uri: hyper::Uri = url.parse().map_err(|_| ConnectError::InvalidUrl(url.to_owned()))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(ConnectError::InvalidUrl(url.to_owned()));
    }
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())?
        .https_or_http()
        .enable_http1()
        .build();
    let http: Http = Client::builder(hyper_util::rt::TokioExecutor::new()).build(connector);
    let output = Arc::new(Mutex::new(output));
    let session: Arc<Mutex<Option<String>>> = Arc::default();
    let mut lines = BufReader::new(input).lines();
    let mut posts = tokio::task::JoinSet::new();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let message: Option<Value> = serde_json::from_str(&line).ok();
        let initialize = message.as_ref().is_some_and(|m| m["method"] == "initialize");
        // The session id comes with initialize's reply: everything after it waits for that reply.
        let known = session.lock().await.clone();
        let post = post(http.clone(), uri.clone(), known, line, message, session.clone(), output.clone());
        if initialize {
            post.await;
        } else {
            posts.spawn(post);
        }
    }
    while posts.join_next().await.is_some() {}
    if let Some(id) = session.lock().await.clone()
        && let Ok(request) = hyper::Request::delete(uri).header("mcp-session-id", id).body(Full::default())
    {
        let _ = http.request(request).await;
    }
    Ok(())
}

/// Posts one message and writes its replies; a failure becomes the
/// request's JSON-RPC error, so every request gets one answer.
async fn post<W: AsyncWrite + Unpin>(
    http: Http,
    uri: hyper::Uri,
    known: Option<String>,
    line: String,
    message: Option<Value>,
    session: Arc<Mutex<Option<String>>>,
    output: Arc<Mutex<W>>,
) {
    let id = message.as_ref().and_then(|m| m.get("method").and(m.get("id"))).cloned();
    let replies = match exchange(&http, uri, known, line).await {
        Ok((given, replies)) => {
            if let Some(given) = given {
                *session.lock().await = Some(given);
            }
            replies
        }
        Err(why) => match id {
            Some(id) => vec![super::reply::rpc_error(&id, super::UNAVAILABLE, &why, None)],
            None => Vec::new(),
        },
    };
    let mut output = output.lock().await;
    for reply in replies {
        let _ = output.write_all(format!("{reply}\n").as_bytes()).await;
    }
    let _ = output.flush().await;
}

/// One POST: the session id the server gave, if any, and the messages of its reply as lines.
async fn exchange(http: &Http, uri: hyper::Uri, session: Option<String>, line: String) -> Result<(Option<String>, Vec<String>), String> {
    let mut request =
        hyper::Request::post(uri).header("content-type", "application/json").header("accept", "application/json, text/event-stream");
    if let Some(id) = &session {
        request = request.header("mcp-session-id", id);
    }
    let request = request.body(Full::new(Bytes::from(line))).map_err(|e| e.to_string())?;
    let response = http.request(request).await.map_err(|e| format!("the MCP server at the URL did not answer: {e}"))?;
    let status = response.status();
    let given = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let streamed = response.headers().get("content-type").and_then(|v| v.to_str().ok()).is_some_and(|t| t.starts_with("text/event-stream"));
    let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    let text = String::from_utf8_lossy(&body);
    if !status.is_success() {
        return Err(format!("the MCP server answered HTTP {status}: {}", text.chars().take(200).collect::<String>()));
    }
    let replies = if streamed {
        // Each event's data lines, joined, are one message.
        text.split("\n\n")
            .map(|event| event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect::<Vec<_>>().join("\n"))
            .filter(|data| !data.is_empty())
            .collect()
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Array(batch)) => batch.iter().map(Value::to_string).collect(),
            _ if text.trim().is_empty() => Vec::new(),
            _ => vec![text.trim().to_owned()],
        }
    };
    Ok((given, replies))
}
