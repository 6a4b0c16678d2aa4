//! The MCP bridge: an episode — or a hosted run's episodes, one after
//! another — served to a Model Context Protocol client (the official Rust
//! SDK, `rmcp`, over stdio or streamable HTTP).
//!
//! A thin adapter over the gRPC contract: every tool call is one
//! `ToolEnv.CallTool`, the `finish` tool is `ToolEnv.FinishEpisode`, and
//! what comes back is the server's reply put into MCP's shape. Nothing is
//! decided here: faults, verdicts and trajectories are the server's, and
//! the same calls made over gRPC give a byte-identical trajectory.
//!
//! - The episode's tools are MCP tools with their JSON Schemas unchanged
//!   (read-only ones annotated `readOnlyHint`), plus [`FINISH`].
//! - The task description is the server's instructions and the prompt
//!   [`TASK_PROMPT`].
//! - A fault delivered as a gRPC status (`FAULT_DELIVERY_STATUS`) is a tool
//!   result with `isError: true` and the status as JSON text
//!   (`{"error": {"code", "reason", "message", "retry_after_ms",
//!   "retry_after_virtual_ms"}}`); an in-band fault
//!   (`FAULT_DELIVERY_IN_BAND`) is the OK reply's text, as the server wrote it.
//!   A broken business rule is `isError: true` with
//!   `{"domain_error": {"code", "message"}}`.
//! - A call's `_meta` may carry [`META_WAITED_MS`] (the virtual milliseconds
//!   the agent waited, `CallToolRequest.waited_ms`) and
//!   [`META_IDEMPOTENCY_KEY`]: MCP has no arguments of its own for them, and
//!   tool schemas stay unchanged.
//!
//! [`serve_stdio`] and [`serve_http`] put a [`Bridge`] on a transport. On
//! stdio, closing stdin ends the session once the requests already sent
//! are answered (`stdio`).
//!
//! [`chaos`] is `toolenv chaos`, an MCP proxy in front of any MCP server
//! that injects the chaos layer's faults into its tool calls.
//!
//! May import: the typed client (`toolenv-client`), the protocol crate,
//! the chaos layer and fault ledger (`toolenv-core`), rmcp and axum. Never the command line, the server or the agents: the
//! agent is the MCP client.
#![forbid(unsafe_code)]

pub mod chaos;
mod stdio;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, JsonObject, ListPromptsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, Role,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::Mutex;
use tonic_types::StatusExt as _;
use toolenv::pb;

use toolenv_client::{Client, ClientError};

/// The name of the tool that ends the episode and returns the verdict.
pub const FINISH: &str = "finish";

/// The prompt that carries the current episode's task description.
pub const TASK_PROMPT: &str = "task";

/// A call's `_meta` key for the virtual milliseconds the agent waited since
/// its previous reply (`CallToolRequest.waited_ms`).
pub const META_WAITED_MS: &str = "toolenv/waited_ms";

/// A call's `_meta` key for an idempotency key (`CallToolRequest.idempotency_key`).
pub const META_IDEMPOTENCY_KEY: &str = "toolenv/idempotency_key";

/// Where the bridge's episodes come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// One episode, created as the request says.
    Episode(Box<pb::CreateEpisodeRequest>),
    /// A hosted run's episodes, leased one after another with
    /// `Runs.NextEpisode`: finishing one leases the next.
    Run {
        /// The run's id, e.g. `run-0001`.
        run_id: String,
        /// Only episodes planned for this agent label ("" for any).
        agent: String,
        /// The worker name the leases are taken under, for the server's logs.
        worker: String,
    },
}

/// Why the bridge could not start.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    /// The server refused a request.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A hosted run has nothing left to play for this agent.
    #[error("run {0} has no episode left to play")]
    RunComplete(String),
    /// A tool's schema, as the server sent it, is not a JSON object.
    #[error("tool '{tool}' has a parameters schema that is not a JSON object: {message}")]
    Schema { tool: String, message: String },
}

/// The MCP server: cheap to clone (every HTTP session gets a clone), all
/// clones sharing one episode.
#[derive(Debug, Clone)]
pub struct Bridge {
    inner: Arc<Inner>,
    /// Whether this session was initialized: a second `initialize` is
    /// answered with an error and the session goes on. Each HTTP session
    /// gets its own ([`Bridge::session`]).
    initialized: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Debug)]
struct Inner {
    client: Client,
    source: Source,
    /// The episode being played; finishing swaps it (hosted runs) under this lock.
    current: Mutex<Arc<Current>>,
}

/// The episode the client plays now, with its MCP tools.
#[derive(Debug)]
struct Current {
    episode: pb::Episode,
    /// The run's plan index, for a leased episode.
    plan_index: Option<u64>,
    tools: Vec<Tool>,
    /// Set once finished with nothing after it (a single episode, or the last of a run).
    verdict: Option<Value>,
    /// The index the episode's next call takes, as the server's answers say
    /// it (`None` once one did not); held across a call, so that each call
    /// is sent with its index and sent again with it when its outcome is unknown.
    next_index: Mutex<Option<u32>>,
}

impl Bridge {
    /// Creates the first episode (or leases the run's next one) and returns
    /// the bridge serving it.
    pub async fn start(client: Client, source: Source) -> Result<Bridge, BridgeError> {
        let first = next_episode(&mut client.clone(), &source).await?;
        let Some(first) = first else {
            let Source::Run { run_id, .. } = &source else { unreachable!("a single episode is always created") };
            return Err(BridgeError::RunComplete(run_id.clone()));
        };
        let inner = Arc::new(Inner { client, source, current: Mutex::new(Arc::new(first)) });
        Ok(Bridge { inner, initialized: Arc::default() })
    }

    /// The bridge for a new MCP session: the same episode, not yet initialized.
    pub fn session(&self) -> Bridge {
        Bridge { inner: Arc::clone(&self.inner), initialized: Arc::default() }
    }

    /// The current episode's id (for `ToolEnv.GetTrajectory`).
    pub async fn episode_id(&self) -> String {
        self.inner.current.lock().await.episode.episode_id.clone()
    }

    async fn current(&self) -> Arc<Current> {
        self.inner.current.lock().await.clone()
    }

    /// One tool call, as `ToolEnv.CallTool`.
    async fn call(
        &self,
        current: &Current,
        request: CallToolRequestParams,
        context_meta: &JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        // rmcp moves a request's `_meta` into the request context; read both.
        let meta = Some(request.meta.as_ref().map_or(context_meta, |meta| &meta.0.0));
        let waited_ms = match meta.and_then(|meta| meta.get(META_WAITED_MS)) {
            None => None,
            Some(value) => match value.as_u64() {
                Some(ms) => Some(ms),
                None => return Ok(invalid_argument(&format!("_meta.{META_WAITED_MS} must be a non-negative integer"))),
            },
        };
        let key = match meta.and_then(|meta| meta.get(META_IDEMPOTENCY_KEY)) {
            None => None,
            Some(value) => match value.as_str() {
                Some(key) => Some(key),
                None => return Ok(invalid_argument(&format!("_meta.{META_IDEMPOTENCY_KEY} must be a string"))),
            },
        };
        // Compact JSON: the text CallTool takes. A valid call is recorded in
        // canonical form whatever the text; an invalid one as sent.
        let arguments = request.arguments.map(|arguments| Value::Object(arguments).to_string()).unwrap_or_default();
        let mut client = self.inner.client.clone();
        // Each tools/call is a call of its own (an MCP client's retries are new
        // calls); the bridge's own resends of one whose outcome is unknown keep its index.
        let mut next_index = current.next_index.lock().await;
        let call = pb::CallToolRequest {
            episode_id: current.episode.episode_id.clone(),
            tool_name: request.name.to_string(),
            arguments_json: arguments,
            idempotency_key: key.unwrap_or_default().to_owned(),
            waited_ms,
            agent_id: String::new(),
            user_answer: None,
            expected_index: *next_index,
        };
        let (reply, next) = toolenv_client::call_with_index(&mut client, call).await;
        *next_index = next;
        drop(next_index);
        Ok(match reply {
            Ok(reply) => match reply.outcome {
                Some(pb::call_tool_response::Outcome::ResultJson(text)) => CallToolResult::success(vec![ContentBlock::text(text)]),
                Some(pb::call_tool_response::Outcome::Error(error)) => CallToolResult::error(vec![ContentBlock::text(
                    json!({"domain_error": {"code": error.code, "message": error.message}}).to_string(),
                )]),
                None => return Err(ErrorData::internal_error("the server's reply had neither a result nor an error", None)),
            },
            Err(ClientError::Status(status)) => CallToolResult::error(vec![ContentBlock::text(status_json(&status).to_string())]),
            Err(error) => return Err(ErrorData::internal_error(error.to_string(), None)),
        })
    }

    /// The `finish` tool: `ToolEnv.FinishEpisode`, then, for a hosted run,
    /// the next episode.
    async fn finish(&self, request: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let mut current = self.inner.current.lock().await;
        let finish = match Finish::parse(&arguments, &typed_fields(&current.episode)) {
            Ok(finish) => finish,
            Err(message) => return Ok(invalid_argument(&message)),
        };
        if let Some(verdict) = &current.verdict {
            return Ok(CallToolResult::success(vec![ContentBlock::text(
                json!({"episode_id": current.episode.episode_id, "task_id": current.episode.task_id, "verdict": verdict, "next": Value::Null})
                    .to_string(),
            )]));
        }
        let mut client = self.inner.client.clone();
        let episode = current.episode.clone();
        let request = pb::FinishEpisodeRequest {
            episode_id: episode.episode_id.clone(),
            usage: finish.usage,
            answer: finish.answer,
            answer_json: finish.answer_json,
            ..Default::default()
        };
        let verdict = match client.finish(request).await {
            Ok(verdict) => verdict,
            Err(ClientError::Status(status)) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(status_json(&status).to_string())]));
            }
            Err(error) => return Err(ErrorData::internal_error(error.to_string(), None)),
        };
        let verdict = verdict_json(verdict);
        let mut reply = json!({"episode_id": episode.episode_id, "task_id": episode.task_id, "verdict": verdict});
        if let Some(plan_index) = current.plan_index {
            reply["plan_index"] = plan_index.into();
        }
        let next = match &self.inner.source {
            Source::Episode(_) => None,
            Source::Run { .. } => {
                next_episode(&mut client, &self.inner.source).await.map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            }
        };
        match next {
            Some(next) => {
                reply["next"] = json!({"episode_id": next.episode.episode_id, "task_id": next.episode.task_id, "plan_index": next.plan_index, "description": next.episode.description, "today": next.episode.today, "tools": next.tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>()});
                *current = Arc::new(next);
            }
            None => {
                reply["next"] = Value::Null;
                let finished = Current { verdict: Some(verdict), ..clone_current(&current) };
                *current = Arc::new(finished);
            }
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(reply.to_string())]))
    }
}

fn clone_current(current: &Current) -> Current {
    Current {
        episode: current.episode.clone(),
        plan_index: current.plan_index,
        tools: current.tools.clone(),
        verdict: current.verdict.clone(),
        next_index: Mutex::new(None),
    }
}

/// The `finish` tool's arguments.
struct Finish {
    answer: Option<String>,
    /// The typed answer's fields given, as JSON text (`answer_json`).
    answer_json: Option<String>,
    usage: Option<pb::Usage>,
}

/// The names of the episode's typed answer fields (its `answer_schema_json`'s properties).
fn typed_fields(episode: &pb::Episode) -> Vec<String> {
    let schema: Value = serde_json::from_str(&episode.answer_schema_json).unwrap_or_default();
    schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

impl Finish {
    /// The arguments, `typed` being the names of the episode's typed answer fields.
    fn parse(arguments: &JsonObject, typed: &[String]) -> Result<Finish, String> {
        let known = |k: &str| ["answer", "input_tokens", "output_tokens", "cost_usd"].contains(&k) || typed.iter().any(|t| t == k);
        if let Some(unknown) = arguments.keys().find(|k| !known(k)) {
            return Err(format!("finish takes no argument '{unknown}'"));
        }
        let fields: JsonObject =
            arguments.iter().filter(|(k, v)| typed.contains(k) && !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
        let answer_json = (!fields.is_empty()).then(|| Value::Object(fields).to_string());
        let answer = match arguments.get("answer") {
            None | Some(Value::Null) => None,
            Some(Value::String(answer)) => Some(answer.clone()),
            Some(_) => return Err("finish: 'answer' must be a string".into()),
        };
        let tokens = |name: &str| match arguments.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value.as_u64().map(Some).ok_or_else(|| format!("finish: '{name}' must be a non-negative integer")),
        };
        let (input, output) = (tokens("input_tokens")?, tokens("output_tokens")?);
        let cost_usd = match arguments.get("cost_usd") {
            None | Some(Value::Null) => None,
            Some(value) => {
                Some(value.as_f64().filter(|c| c.is_finite() && *c >= 0.0).ok_or("finish: 'cost_usd' must be a non-negative number")?)
            }
        };
        let usage = (input.is_some() || output.is_some() || cost_usd.is_some()).then(|| pb::Usage {
            input_tokens: input.unwrap_or(0),
            output_tokens: output.unwrap_or(0),
            cost_usd,
        });
        Ok(Finish { answer, answer_json, usage })
    }

    /// The tool, with the episode's typed answer fields beside `answer`.
    fn tool(episode: &pb::Episode) -> Tool {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "answer": {"type": "string", "description": "The answer, when the task asks a question."},
                "input_tokens": {"type": "integer", "minimum": 0, "description": "Prompt tokens spent on the episode, for the run's cost figures."},
                "output_tokens": {"type": "integer", "minimum": 0, "description": "Completion tokens spent on the episode."},
                "cost_usd": {"type": "number", "minimum": 0, "description": "What the episode cost, in US dollars."}
            },
            "additionalProperties": false
        });
        let typed: Value = serde_json::from_str(&episode.answer_schema_json).unwrap_or_default();
        for (name, property) in typed["properties"].as_object().into_iter().flatten() {
            let mut property = property.clone();
            property["description"] = json!(format!(
                "Typed answer: {} (give every typed field to be judged on them instead of the text answer).",
                property["description"].as_str().unwrap_or(name)
            ));
            schema["properties"][name] = property;
        }
        let Value::Object(schema) = schema else { unreachable!("a literal object") };
        Tool::new(
            FINISH,
            "End the episode when the task is done (or cannot be done): the environment judges its end state and returns the verdict. No tool can be called after it.",
            Arc::new(schema),
        )
    }
}

/// The current episode's MCP tools: the server's, schemas unchanged, then `finish`.
fn tools(episode: &pb::Episode) -> Result<Vec<Tool>, BridgeError> {
    let mut tools = Vec::with_capacity(episode.tools.len() + 1);
    for spec in &episode.tools {
        let schema: JsonObject = serde_json::from_str(&spec.parameters_json_schema)
            .map_err(|e| BridgeError::Schema { tool: spec.name.clone(), message: e.to_string() })?;
        let annotations = ToolAnnotations::new().read_only(!spec.mutates_state);
        tools.push(Tool::new(spec.name.clone(), spec.description.clone(), Arc::new(schema)).annotate(annotations));
    }
    tools.push(Finish::tool(episode));
    Ok(tools)
}

/// The next episode: created (a single episode) or leased (a run); `None`
/// when the run has nothing left for the agent.
async fn next_episode(client: &mut Client, source: &Source) -> Result<Option<Current>, BridgeError> {
    let (episode, plan_index) = match source {
        Source::Episode(request) => (client.create((**request).clone()).await?, None),
        Source::Run { run_id, agent, worker } => match client.lease(run_id, agent, worker, &[]).await? {
            Some((lease, _)) => (lease.episode.unwrap_or_default(), Some(lease.plan_index)),
            None => return Ok(None),
        },
    };
    let tools = tools(&episode)?;
    // A created or leased episode holds no call yet.
    Ok(Some(Current { episode, plan_index, tools, verdict: None, next_index: Mutex::new(Some(0)) }))
}

/// A gRPC status as the JSON text a tool result carries: the code, the
/// ErrorInfo reason, the message and the retry advice (the
/// `grpc-retry-pushback-ms` trailer in real milliseconds, -1 for "do not
/// retry"; ErrorInfo's `retry_after_virtual_ms` in the episode's virtual ones).
fn status_json(status: &tonic::Status) -> Value {
    let info = status.get_details_error_info();
    let pushback = status.metadata().get("grpc-retry-pushback-ms").and_then(|v| v.to_str().ok()?.parse::<i64>().ok());
    let virtual_ms = info.as_ref().and_then(|info| info.metadata.get("retry_after_virtual_ms")?.parse::<i64>().ok());
    let code = format!("{:?}", status.code());
    let mut error = json!({"code": screaming(&code), "message": status.message()});
    if let Some(info) = info {
        error["reason"] = info.reason.into();
    }
    if let Some(ms) = pushback {
        error["retry_after_ms"] = ms.into();
    }
    if let Some(ms) = virtual_ms {
        error["retry_after_virtual_ms"] = ms.into();
    }
    json!({"error": error})
}

/// A call the bridge itself refuses before asking the server, in the shape
/// of the server's INVALID_ARGUMENT (MCP: input errors are tool errors the
/// model can read and correct).
fn invalid_argument(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(json!({"error": {"code": "INVALID_ARGUMENT", "message": message}}).to_string())])
}

/// `ResourceExhausted` → `RESOURCE_EXHAUSTED`: gRPC's own spelling of a code.
fn screaming(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// A verdict in the one JSON form trajectories use ([`pb::Trajectory::to_json`]).
fn verdict_json(verdict: pb::Verdict) -> Value {
    let mut wrapped = pb::Trajectory { verdict: Some(verdict), ..Default::default() }.to_json();
    wrapped["verdict"].take()
}

/// What the agent is told about an episode, as instructions and as the task prompt.
fn briefing(current: &Current, source: &Source) -> String {
    let episode = &current.episode;
    let mut text = format!(
        "{}\n\nToday is {}. Call the tools to do the task, then call `{FINISH}` to end the episode and get the verdict \
         (at most {} tool calls).",
        episode.description, episode.today, episode.max_calls
    );
    if let Source::Run { run_id, .. } = source {
        text.push_str(&format!(
            " This is one episode of run {run_id}: `{FINISH}` returns its verdict and the next episode's task \
             (also in the `{TASK_PROMPT}` prompt); the tool list changes with it."
        ));
    }
    text
}

impl ServerHandler for Bridge {
    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        if self.initialized.swap(true, std::sync::atomic::Ordering::AcqRel) {
            // MCP: initialize is the session's first request, sent once. Refused, the session stays.
            return Err(ErrorData::invalid_request("the session is already initialized: initialize is sent once per session", None));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_prompts().build();
        let mut info = ServerConfig::new(capabilities).with_server_info(Implementation::new("toolenv", env!("CARGO_PKG_VERSION")));
        // get_info is synchronous; the lock is only ever held briefly or
        // across a finish, so a busy lock means "the episode is changing".
        if let Ok(current) = self.inner.current.try_lock() {
            info = info.with_instructions(briefing(&current, &self.inner.source));
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.current().await.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let current = self.inner.current.try_lock().ok()?;
        current.tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        if request.name == FINISH {
            let before = self.episode_id().await;
            let result = self.finish(request).await?;
            if self.episode_id().await != before {
                // A hosted run moved on to another task, maybe another domain.
                let _ = context.peer.notify_tool_list_changed().await;
            }
            return Ok(result.into());
        }
        let current = self.current().await;
        Ok(self.call(&current, request, &context.meta.0.0).await?.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let current = self.current().await;
        let description = format!("The task of the current episode ({}).", current.episode.task_id);
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(TASK_PROMPT, Some(description), None)]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != TASK_PROMPT {
            return Err(ErrorData::invalid_params(format!("no prompt '{}': the only prompt is '{TASK_PROMPT}'", request.name), None));
        }
        let current = self.current().await;
        let message = PromptMessage::new_text(Role::User, briefing(&current, &self.inner.source));
        Ok(GetPromptResult::new(vec![message]).with_description(format!("Task {}", current.episode.task_id)).into())
    }
}

/// Serves the bridge over stdio until the client closes stdin and every
/// request it sent has been answered (waiting at most 30 seconds for them).
pub async fn serve_stdio(bridge: Bridge) -> Result<(), ServeError> {
    let (stdin, stdout) = rmcp::transport::stdio();
    stdio::serve(bridge, rmcp::transport::async_rw::AsyncRwTransport::new_server(stdin, stdout)).await
}

/// Serves the bridge over streamable HTTP at `/mcp` on a bound listener
/// until `shutdown` completes.
pub async fn serve_http(
    bridge: Bridge,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        move || Ok(bridge.session()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    axum::serve(listener, router).with_graceful_shutdown(shutdown).await.map_err(ServeError::Http)
}

/// Why serving the bridge stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP session on stdio failed.
    #[error("the MCP session on stdio: {0}")]
    Session(String),
    /// Stdin closed with requests still unanswered, and they stayed so.
    #[error("stdin closed with {unanswered} request(s) unanswered; gave up on their replies after {waited_s} s")]
    Unanswered { unanswered: usize, waited_s: u64 },
    /// Serving HTTP failed.
    #[error("serving MCP over HTTP")]
    Http(#[source] std::io::Error),
}
