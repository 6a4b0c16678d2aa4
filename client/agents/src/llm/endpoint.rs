//! An OpenAI-compatible chat-completions endpoint over HTTP(S): one POST per
//! model turn, retried with backoff on what is the endpoint's failure and
//! not the model's (HTTP 408, 409, 429, 5xx, timeouts, refused or reset
//! connections), honouring `retry-after-ms` / `Retry-After`. Every exchange
//! can be recorded to a directory and played back from it offline, so a
//! recorded run replays byte for byte.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::{Client as HttpClient, connect::HttpConnector};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a model turn got no answer: an infrastructure error of the episode.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The base URL is not an http(s) URL.
    #[error("invalid model endpoint url '{0}'")]
    InvalidUrl(String),
    /// TLS could not be set up.
    #[error("cannot set up TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// The endpoint kept failing (or refused for good) after the retries.
    #[error("model endpoint {url}: {last} (after {attempts} attempts)")]
    Failed {
        /// The URL posted to.
        url: String,
        /// The last failure, e.g. "HTTP 429: …" or "timed out after 120 s".
        last: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The endpoint refused the request because the conversation no longer
    /// fits the model's context window: the agent's limit, not a failure of
    /// the endpoint (see `is_context_exceeded`).
    #[error("model endpoint {url}: the conversation exceeds the model's context: {detail}")]
    ContextExceeded {
        /// The URL posted to.
        url: String,
        /// The endpoint's own words.
        detail: String,
    },
    /// An OK reply that is not a chat completion.
    #[error("model endpoint {url}: the reply is not a chat completion: {detail}")]
    NotACompletion {
        /// The URL posted to.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// Recording or replaying failed.
    #[error("{0}")]
    Tape(String),
}

/// Where exchanges go, or come from.
#[derive(Debug, Clone, Default)]
pub enum Tape {
    /// Talk to the endpoint and keep nothing.
    #[default]
    Off,
    /// Talk to the endpoint and write every exchange under this directory.
    Record(PathBuf),
    /// Never talk to the endpoint: answer from the exchanges under this directory.
    Replay(PathBuf),
}

/// Retry and timeout settings of an endpoint.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts per model turn, the first included.
    pub max_attempts: u32,
    /// Time allowed for one request and its whole reply.
    pub request_timeout: Duration,
    /// The first backoff when the endpoint advises none; doubled each attempt.
    pub initial_backoff: Duration,
    /// The longest wait between attempts, advised or not.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            request_timeout: Duration::from_secs(300),
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// One HTTP attempt as recorded: what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// The HTTP status; 0 when no response came (timeout, connection error).
    pub status: u16,
    /// The delay the endpoint advised, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// The response body, or what went wrong without one.
    pub body: String,
}

/// A recorded model turn: the request and every attempt it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Exchange {
    url: String,
    request: Value,
    attempts: Vec<Attempt>,
}

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// An OpenAI-compatible endpoint, e.g. `https://api.openai.com/v1` or
/// `http://127.0.0.1:8080/v1`; cheap to clone and share between episodes.
#[derive(Clone)]
pub struct ModelEndpoint {
    url: String,
    api_key: Option<Arc<str>>,
    http: HttpClient<Connector, Full<Bytes>>,
    retry: RetryPolicy,
    tape: Tape,
}

impl std::fmt::Debug for ModelEndpoint {
    // Never the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelEndpoint").field("url", &self.url).field("retry", &self.retry).field("tape", &self.tape).finish()
    }
}

impl ModelEndpoint {
    /// An endpoint at a base URL (the part before `/chat/completions`), with
    /// an optional bearer key.
    pub fn new(base_url: &str, api_key: Option<String>, retry: RetryPolicy, tape: Tape) -> Result<Self, EndpointError> {
        let base = base_url.trim_end_matches('/');
        let url = format!("{base}/chat/completions");
        if !(base.starts_with("http://") || base.starts_with("https://")) || url.parse::<hyper::Uri>().is_err() {
            return Err(EndpointError::InvalidUrl(base_url.to_owned()));
        }
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())?
            .https_or_http()
            .enable_http1()
            .build();
        let http = HttpClient::builder(hyper_util::rt::TokioExecutor::new()).pool_idle_timeout(Duration::from_secs(30)).build(connector);
        Ok(ModelEndpoint { url, api_key: api_key.map(Into::into), http, retry, tape })
    }

    /// The URL posted to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Posts one chat-completions request and returns the reply's JSON,
    /// retrying the endpoint's failures. `tape_key` names the turn in a
    /// recording (`<episode>/turn-NNN`), so replays do not depend on the
    /// order episodes ran in.
    pub async fn complete(&self, tape_key: &str, request: &Value) -> Result<Value, EndpointError> {
        let attempts = match &self.tape {
            Tape::Replay(dir) => self.replayed(dir, tape_key, request)?,
            Tape::Off | Tape::Record(_) => {
                let attempts = self.post_with_retries(request).await;
                if let Tape::Record(dir) = &self.tape {
                    let exchange = Exchange { url: self.url.clone(), request: request.clone(), attempts: attempts.clone() };
                    write_exchange(&tape_path(dir, tape_key), &exchange)?;
                }
                attempts
            }
        };
        let last = attempts.last().cloned().unwrap_or(Attempt { status: 0, retry_after_ms: None, body: "no attempt made".into() });
        if is_context_exceeded(&last) {
            return Err(EndpointError::ContextExceeded { url: self.url.clone(), detail: describe(&last) });
        }
        if last.status != 200 {
            return Err(EndpointError::Failed { url: self.url.clone(), last: describe(&last), attempts: attempts.len() as u32 });
        }
        let reply: Value = serde_json::from_str(&last.body)
            .map_err(|e| EndpointError::NotACompletion { url: self.url.clone(), detail: format!("not JSON ({e})") })?;
        if reply.pointer("/choices/0/message").is_none_or(|m| !m.is_object()) {
            return Err(EndpointError::NotACompletion { url: self.url.clone(), detail: "no choices[0].message".into() });
        }
        Ok(reply)
    }

    /// The attempts of one turn, against the endpoint, with the waits between them.
    async fn post_with_retries(&self, request: &Value) -> Vec<Attempt> {
        let body = Bytes::from(request.to_string());
        let mut attempts = Vec::new();
        for attempt in 0..self.retry.max_attempts.max(1) {
            let outcome = self.post_once(body.clone()).await;
            let retry = retryable(&outcome);
            let advised = outcome.retry_after_ms;
            attempts.push(outcome);
            if !retry || attempt + 1 >= self.retry.max_attempts {
                break;
            }
            let backoff = self.retry.initial_backoff.saturating_mul(1 << attempt.min(16));
            let wait = advised.map_or(backoff, Duration::from_millis).min(self.retry.max_backoff);
            tracing::warn!(url = %self.url, status = attempts.last().map_or(0, |a| a.status), wait_ms = wait.as_millis() as u64, "model endpoint failed; retrying");
            tokio::time::sleep(wait).await;
        }
        attempts
    }

    async fn post_once(&self, body: Bytes) -> Attempt {
        let mut builder = hyper::Request::post(&self.url).header("content-type", "application/json").header("accept", "application/json");
        if let Some(key) = &self.api_key {
            builder = builder.header("authorization", format!("Bearer {key}"));
        }
        let request = match builder.body(Full::new(body)) {
            Ok(request) => request,
            Err(error) => return Attempt { status: 0, retry_after_ms: None, body: format!("cannot build the request: {error}") },
        };
        let exchange = async {
            let response = self.http.request(request).await.map_err(|e| format!("connection failed: {}", error_chain(&e)))?;
            let status = response.status().as_u16();
            let retry_after_ms = retry_after_ms(response.headers());
            let body = response.into_body().collect().await.map_err(|e| format!("reading the reply failed: {e}"))?.to_bytes();
            Ok::<_, String>(Attempt { status, retry_after_ms, body: String::from_utf8_lossy(&body).into_owned() })
        };
        match tokio::time::timeout(self.retry.request_timeout, exchange).await {
            Ok(Ok(attempt)) => attempt,
            Ok(Err(error)) => Attempt { status: 0, retry_after_ms: None, body: error },
            Err(_) => {
                Attempt { status: 0, retry_after_ms: None, body: format!("timed out after {} s", self.retry.request_timeout.as_secs()) }
            }
        }
    }

    /// The recorded attempts of a turn, checked against the request made now.
    fn replayed(&self, dir: &Path, tape_key: &str, request: &Value) -> Result<Vec<Attempt>, EndpointError> {
        let path = tape_path(dir, tape_key);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| EndpointError::Tape(format!("replay: no recorded exchange {} ({e})", path.display())))?;
        let exchange: Exchange = serde_json::from_str(&text)
            .map_err(|e| EndpointError::Tape(format!("replay: {} is not a recorded exchange: {e}", path.display())))?;
        if exchange.request != *request {
            return Err(EndpointError::Tape(format!(
                "replay: the request of {} differs from the recorded one (another model, prompt or earlier reply)",
                path.display()
            )));
        }
        Ok(exchange.attempts)
    }
}

/// Whether the endpoint refused a request as longer than the model's
/// context, as OpenAI (`context_length_exceeded`), vLLM ("maximum context
/// length"), llama.cpp (`exceed_context_size_error`) and Ollama word it.
fn is_context_exceeded(attempt: &Attempt) -> bool {
    let body = attempt.body.to_lowercase();
    matches!(attempt.status, 400 | 413)
        && body.contains("context")
        && ["exceed", "maximum context length", "too long", "context_length"].iter().any(|w| body.contains(w))
}

/// Whether an attempt failed in a way worth another try.
fn retryable(attempt: &Attempt) -> bool {
    matches!(attempt.status, 0 | 408 | 409 | 429 | 500..=599)
}

fn describe(attempt: &Attempt) -> String {
    let body: String = attempt.body.chars().take(300).collect();
    match attempt.status {
        0 => body,
        status => format!("HTTP {status}: {body}"),
    }
}

/// The advised delay: OpenAI's `retry-after-ms`, else `Retry-After` in
/// seconds (an HTTP date is not honoured; the backoff applies).
fn retry_after_ms(headers: &hyper::HeaderMap) -> Option<u64> {
    let read = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
    read("retry-after-ms").map(|ms| ms.round() as u64).or_else(|| read("retry-after").map(|s| (s * 1000.0).round() as u64))
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// A turn's file: the key's parts as folders, each made safe for a file name.
fn tape_path(dir: &Path, tape_key: &str) -> PathBuf {
    let mut path = dir.to_path_buf();
    for part in tape_key.split('/') {
        let safe: String = part.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@=".contains(c) { c } else { '_' }).collect();
        path.push(if safe.is_empty() || safe.chars().all(|c| c == '.') { "_".to_owned() } else { safe });
    }
    path.set_extension("json");
    path
}

fn write_exchange(path: &Path, exchange: &Exchange) -> Result<(), EndpointError> {
    let fail = |e: std::io::Error| EndpointError::Tape(format!("record: cannot write {}: {e}", path.display()));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    let text = serde_json::to_string_pretty(exchange).map_err(|e| EndpointError::Tape(format!("record: {e}")))?;
    std::fs::write(path, text).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_headers() {
        let mut headers = hyper::HeaderMap::new();
        assert_eq!(retry_after_ms(&headers), None);
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after_ms(&headers), Some(2000));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after_ms(&headers), Some(150));
    }

    #[test]
    fn tape_paths_stay_inside_the_directory() {
        let path = tape_path(Path::new("/tmp/rec"), "react@m/../travel\\x/turn-001");
        assert_eq!(path, Path::new("/tmp/rec/react@m/_/travel_x/turn-001.json"));
    }

    #[test]
    fn bad_urls_are_refused() {
        for url in ["api.openai.com/v1", "ftp://x/v1", ""] {
            assert!(matches!(ModelEndpoint::new(url, None, RetryPolicy::default(), Tape::Off), Err(EndpointError::InvalidUrl(_))), "{url}");
        }
    }
}
