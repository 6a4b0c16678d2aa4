//! A scripted OpenAI-compatible chat-completions endpoint on a loopback
//! port: real HTTP/1.1, answering each request with the next call of a
//! script (a task's reference solution, say) in the protocol variant asked
//! for — native `tool_calls`, a fenced or bare JSON object, ReAct `Action:`
//! lines, or garbage — and, on request, with HTTP 429 (`Retry-After`) or 500
//! first, or with llama.cpp's HTTP 400 for a conversation longer than the
//! model's context. For tests and benchmarks of the LLM agents, with no model and no
//! network. Usage figures are a deterministic function of the text sizes.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use serde_json::{Value, json};

/// How the endpoint writes a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// In `tool_calls`, as the API defines.
    Native,
    /// As a ```json fenced object in the text, as llama.cpp's stock server does.
    Fenced,
    /// As a bare JSON object in the text.
    Bare,
    /// As ReAct's `Action:` / `Action Input:` lines.
    ReactAction,
    /// As text that looks like a call and cannot be read.
    Garbage,
}

/// What the endpoint answers.
#[derive(Debug, Clone)]
pub struct Script {
    /// The calls to make, in order: tool name and arguments.
    pub calls: Vec<(String, Value)>,
    /// The variant of each model turn (cycled; turn n uses `variants[n % len]`).
    pub variants: Vec<Variant>,
    /// Requests answered with HTTP 429 and `Retry-After: 1` (or
    /// `retry-after-ms`, see below) before any is served.
    pub rate_limited_first: u64,
    /// `retry-after-ms` of those 429s instead of `Retry-After: 1`.
    pub retry_after_ms: Option<u64>,
    /// Answer every request with HTTP 500.
    pub always_500: bool,
    /// Refuse a request whose conversation already holds this many
    /// assistant turns with HTTP 400, as llama.cpp refuses a request longer
    /// than the model's context.
    pub context_full_after_turns: Option<usize>,
    /// How the model ends once every call is made.
    pub ending: Ending,
}

/// How the scripted model ends, the ways models end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// A reply with this text and no tool call.
    Text(String),
    /// A call of the `finish` tool the request offers, with this text in
    /// its `answer` parameter, or in every string parameter of its schema
    /// when it has none (a reply with the text when the request offers no
    /// `finish`).
    Finish(String),
    /// A call of `finish` with this text as its `answer` and these typed
    /// answer fields beside it (a reply with the text when the request
    /// offers no `finish`).
    FinishTyped(String, Value),
}

impl Default for Ending {
    fn default() -> Self {
        Ending::Text("The task is done.".to_owned())
    }
}

impl Script {
    /// Plays `calls` in one variant, with no HTTP failures.
    pub fn new(calls: Vec<(String, Value)>, variant: Variant) -> Self {
        Script {
            calls,
            variants: vec![variant],
            rate_limited_first: 0,
            retry_after_ms: None,
            always_500: false,
            context_full_after_turns: None,
            ending: Ending::default(),
        }
    }
}

/// A running scripted endpoint; stops when dropped.
#[derive(Debug)]
pub struct ScriptedEndpoint {
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedEndpoint {
    /// Binds 127.0.0.1:0 and serves the script.
    pub async fn start(script: Script) -> std::io::Result<Self> {
        let script = Arc::new(script);
        Self::serve(move |request, n| Box::pin(answer(request, script.clone(), n))).await
    }

    /// Binds 127.0.0.1:0 and answers each chat-completions request as
    /// `respond` says from its JSON body: with an assistant message's text,
    /// an HTTP status, or not at all (a hung endpoint, for timeouts).
    pub async fn start_with(respond: impl Fn(&Value) -> Canned + Send + Sync + 'static) -> std::io::Result<Self> {
        let respond = Arc::new(respond);
        Self::serve(move |request, n| {
            let respond = respond.clone();
            Box::pin(async move {
                let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                let body = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
                let text = match respond(&body) {
                    Canned::Text(text) => text,
                    Canned::Status(status) => return Ok(json_response(status, json!({"error": {"message": "canned failure"}}), None)),
                    Canned::Hang => std::future::pending().await,
                };
                Ok(json_response(200, completion(n, &body, json!({"role": "assistant", "content": text})), None))
            })
        })
        .await
    }

    async fn serve(handle: impl Fn(Request<Incoming>, u64) -> Pending + Send + Sync + 'static) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(AtomicU64::new(0));
        let handle = Arc::new(handle);
        let counter = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (handle, counter) = (handle.clone(), counter.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| handle(request, counter.fetch_add(1, Ordering::Relaxed)));
                    let io = hyper_util::rt::TokioIo::new(stream);
                    if let Err(error) = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await {
                        tracing::debug!(%error, "scripted endpoint connection ended");
                    }
                });
            }
        });
        Ok(ScriptedEndpoint { addr, requests, task })
    }

    /// The base URL to give an agent, e.g. `http://127.0.0.1:41234/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// HTTP requests received so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

impl Drop for ScriptedEndpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What [`ScriptedEndpoint::start_with`] answers a request with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Canned {
    /// An assistant message with this text.
    Text(String),
    /// This HTTP status, with an error body.
    Status(u16),
    /// Nothing, ever: the request times out.
    Hang,
}

/// A reply the endpoint is making.
type Pending = std::pin::Pin<Box<dyn Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send>>;

fn json_response(status: u16, body: Value, header: Option<(&str, String)>) -> Response<Full<Bytes>> {
    let mut builder = Response::builder().status(status).header("content-type", "application/json");
    if let Some((name, value)) = header {
        builder = builder.header(name, value);
    }
    builder.body(Full::new(Bytes::from(body.to_string()))).unwrap_or_default()
}

/// A chat completion of `message`, with usage figures that are a function of the text sizes.
fn completion(n: u64, body: &Value, message: Value) -> Value {
    let prompt_tokens = body.to_string().len() as u64 / 4;
    let completion_tokens = message.to_string().len() as u64 / 4;
    json!({
        "id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": 0,
        "model": body.get("model").cloned().unwrap_or(Value::Null),
        "choices": [{"index": 0, "finish_reason": if message.get("tool_calls").is_some() { "tool_calls" } else { "stop" }, "message": message}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    })
}

async fn answer(request: Request<Incoming>, script: Arc<Script>, n: u64) -> Result<Response<Full<Bytes>>, Infallible> {
    let respond = |status: u16, body: Value, header: Option<(&str, String)>| Ok(json_response(status, body, header));
    if request.uri().path() != "/v1/chat/completions" {
        return respond(404, json!({"error": {"message": "not found"}}), None);
    }
    if script.always_500 {
        return respond(500, json!({"error": {"message": "internal error"}}), None);
    }
    if n < script.rate_limited_first {
        let header = match script.retry_after_ms {
            Some(ms) => ("retry-after-ms", ms.to_string()),
            None => ("retry-after", "1".to_owned()),
        };
        return respond(429, json!({"error": {"message": "rate limited", "type": "rate_limit"}}), Some(header));
    }
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return respond(400, json!({"error": {"message": "unreadable body"}}), None),
    };
    let Ok(body) = serde_json::from_slice::<Value>(&body) else {
        return respond(400, json!({"error": {"message": "not JSON"}}), None);
    };
    let turns = body.get("messages").and_then(Value::as_array).map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
    if script.context_full_after_turns.is_some_and(|full| turns >= full) {
        let error = json!({"error": {"code": 400, "type": "exceed_context_size_error",
            "message": "request (8279 tokens) exceeds the available context size (8192 tokens), try increasing it"}});
        return respond(400, error, None);
    }
    let message = reply(&script, &body);
    Ok(json_response(200, completion(n, &body, message), None))
}

/// The assistant message for a request: the next call of the script (one
/// per observation the conversation holds), or a final answer.
fn reply(script: &Script, body: &Value) -> Value {
    let messages = body.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let turn = messages.iter().filter(|m| m["role"] == "assistant").count();
    let made = messages
        .iter()
        .map(|m| match m["role"].as_str() {
            Some("tool") => 1,
            Some("user") => m["content"].as_str().map_or(0, |c| c.matches("Observation (").count()),
            _ => 0,
        })
        .sum::<usize>();
    let variant = script.variants.get(turn % script.variants.len().max(1)).copied().unwrap_or(Variant::Native);
    let (name, arguments) = match (script.calls.get(made), &script.ending) {
        (Some((name, arguments)), _) => (name.as_str(), arguments.clone()),
        (None, Ending::Finish(text)) if finish_parameters(body).is_some() => {
            let mut parameters = finish_parameters(body).unwrap_or_default();
            if parameters.iter().any(|p| p == "answer") {
                parameters.retain(|p| p == "answer");
            }
            ("finish", Value::Object(parameters.into_iter().map(|p| (p, json!(text))).collect()))
        }
        (None, Ending::FinishTyped(text, fields)) if finish_parameters(body).is_some() => {
            let mut arguments = fields.clone();
            arguments["answer"] = json!(text);
            ("finish", arguments)
        }
        (None, Ending::Text(text) | Ending::Finish(text) | Ending::FinishTyped(text, _)) => {
            return json!({"role": "assistant", "content": text});
        }
    };
    let object = json!({"name": name, "arguments": arguments});
    match variant {
        Variant::Native => json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("call_{made}"), "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}
        }]}),
        Variant::Fenced => json!({"role": "assistant", "content": format!("I will call {name}.\n```json\n{object}\n```")}),
        Variant::Bare => json!({"role": "assistant", "content": object.to_string()}),
        Variant::ReactAction => {
            json!({"role": "assistant", "content": format!("Thought: next, {name}.\nAction: {name}\nAction Input: {arguments}")})
        }
        Variant::Garbage => {
            json!({"role": "assistant", "content": format!("```json\n{{\"name\": \"{name}\", \"arguments\": {{\"oops\n```")})
        }
    }
}

/// The string parameters of the `finish` tool a request offers, if it offers one.
fn finish_parameters(body: &Value) -> Option<Vec<String>> {
    let tools = body.get("tools")?.as_array()?;
    let finish = tools.iter().find(|t| t.pointer("/function/name").and_then(Value::as_str) == Some("finish"))?;
    let properties = finish.pointer("/function/parameters/properties").and_then(Value::as_object);
    Some(properties.into_iter().flatten().filter(|(_, schema)| schema["type"] == "string").map(|(name, _)| name.clone()).collect())
}
