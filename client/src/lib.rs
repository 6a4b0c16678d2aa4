//! A typed client for the toolenv server, the built-in agents, and an
//! episode runner that plays one episode over gRPC.
#![forbid(unsafe_code)]

pub mod llm;
pub mod mcp;
mod team;
pub mod worker;

pub use toolenv_runs::{Grid, PlannedEpisode, masfire, metrics, report, store, trajectory_json};

use std::time::Duration;

use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use toolenv::pb::{self, runs_client::RunsClient, tool_env_client::ToolEnvClient};
use toolenv_domains::Call;

/// Why a client request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The URL is not a valid endpoint.
    #[error("invalid server url '{url}'")]
    InvalidUrl { url: String, source: tonic::transport::Error },
    /// The server could not be reached.
    #[error("cannot connect to {url}")]
    Connect { url: String, source: tonic::transport::Error },
    /// The server answered with an error status.
    #[error("{:?}: {}", .0.code(), .0.message())]
    Status(tonic::Status),
    /// The token cannot be sent as a header (it is not printable ASCII).
    #[error("the token must be printable ASCII")]
    InvalidToken,
    /// A built-in agent cannot play this task.
    #[error("task '{0}' is not in this client's suite, so the built-in agent cannot play it")]
    UnknownTask(String),
    /// An LLM agent's model endpoint failed after its retries.
    #[error("model endpoint: {0}")]
    Model(String),
}

// Not `#[from]`: that would also make the status the error's source, and
// error reports would print it twice.
impl From<tonic::Status> for ClientError {
    fn from(status: tonic::Status) -> Self {
        ClientError::Status(status)
    }
}

/// How a client proves itself to a server that asks (`toolenv serve
/// --token`, `--tls-cert`): both optional.
#[derive(Clone, Default)]
pub struct Credentials {
    /// Sent with every request as `authorization: Bearer <token>`.
    pub token: Option<String>,
    /// A PEM certificate authority to trust for an `https://` server, in
    /// addition to the public web roots (for a self-signed certificate).
    pub ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        f.debug_struct("Credentials").field("token", &self.token.as_ref().map(|_| "<set>")).field("ca_pem", &self.ca_pem.is_some()).finish()
    }
}

/// Adds the bearer token, if any, to every request.
#[derive(Clone, Default)]
pub struct Bearer(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Bearer(<set>)" } else { "Bearer(none)" })
    }
}

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// The transport of a [`Client`]: a channel that adds the bearer token.
pub type Transport = InterceptedService<Channel, Bearer>;

/// A connection to a toolenv server.
#[derive(Debug, Clone)]
pub struct Client {
    inner: ToolEnvClient<Transport>,
    runs: RunsClient<Transport>,
}

impl Client {
    /// Connects to a server, e.g. `http://127.0.0.1:50051`.
    pub async fn connect(url: &str) -> Result<Self, ClientError> {
        Self::connect_with(url, &Credentials::default()).await
    }

    /// Connects to a server with a token and, for `https://`, a trusted CA.
    pub async fn connect_with(url: &str, credentials: &Credentials) -> Result<Self, ClientError> {
        let invalid = |source| ClientError::InvalidUrl { url: url.to_owned(), source };
        let mut endpoint =
            Endpoint::from_shared(url.to_owned()).map_err(invalid)?.connect_timeout(Duration::from_secs(10)).tcp_nodelay(true);
        if url.starts_with("https://") {
            let mut tls = ClientTlsConfig::new().with_webpki_roots();
            if let Some(ca) = &credentials.ca_pem {
                tls = tls.ca_certificate(Certificate::from_pem(ca));
            }
            endpoint = endpoint.tls_config(tls).map_err(invalid)?;
        }
        let token = match &credentials.token {
            Some(token) => Some(format!("Bearer {token}").parse().map_err(|_| ClientError::InvalidToken)?),
            None => None,
        };
        let channel = endpoint.connect().await.map_err(|source| ClientError::Connect { url: url.to_owned(), source })?;
        let bearer = Bearer(token);
        Ok(Self {
            inner: ToolEnvClient::with_interceptor(channel.clone(), bearer.clone()),
            runs: RunsClient::with_interceptor(channel, bearer),
        })
    }

    /// The generated stub, for requests this wrapper does not cover.
    pub fn raw(&mut self) -> &mut ToolEnvClient<Transport> {
        &mut self.inner
    }

    /// The generated stub of the `Runs` service (hosted runs, leases, reports).
    pub fn runs(&mut self) -> &mut RunsClient<Transport> {
        &mut self.runs
    }

    /// Lists the paper suite's tasks, optionally of one domain and level.
    pub async fn list_tasks(
        &mut self,
        domain: Option<toolenv_domains::Domain>,
        level: Option<u8>,
    ) -> Result<Vec<pb::TaskSummary>, ClientError> {
        self.list_suite_tasks("", domain, level).await
    }

    /// Lists a suite's tasks ("paper", "standard", "generated:<seed>:<n>";
    /// empty: the paper's), optionally of one domain and level.
    pub async fn list_suite_tasks(
        &mut self,
        suite: &str,
        domain: Option<toolenv_domains::Domain>,
        level: Option<u8>,
    ) -> Result<Vec<pb::TaskSummary>, ClientError> {
        let domain = domain.map_or(pb::Domain::Unspecified, pb::Domain::from);
        let mut request = pb::ListTasksRequest {
            domain: domain.into(),
            level: level.map_or(0, u32::from),
            suite: suite.to_owned(),
            ..Default::default()
        };
        let mut tasks = Vec::new();
        loop {
            let page = self.inner.list_tasks(request.clone()).await?.into_inner();
            tasks.extend(page.tasks);
            if page.next_page_token.is_empty() {
                return Ok(tasks);
            }
            request.page_token = page.next_page_token;
        }
    }

    /// Returns one task in full, with its tools' schemas.
    pub async fn get_task(&mut self, task_id: &str) -> Result<pb::Task, ClientError> {
        Ok(self.inner.get_task(pb::GetTaskRequest { task_id: task_id.to_owned() }).await?.into_inner())
    }

    /// Starts an episode of a task, with no faults.
    pub async fn create_episode(&mut self, task_id: &str, seed: u64, trial: u32) -> Result<pb::Episode, ClientError> {
        self.create_episode_with(pb::CreateEpisodeRequest { task_id: task_id.to_owned(), seed, trial, ..Default::default() }).await
    }

    /// Starts an episode as the request says (fault profile, delivery, time scale).
    pub async fn create_episode_with(&mut self, request: pb::CreateEpisodeRequest) -> Result<pb::Episode, ClientError> {
        Ok(self.inner.create_episode(request).await?.into_inner())
    }

    /// Calls one tool with JSON argument text.
    pub async fn call_tool(
        &mut self,
        episode_id: &str,
        tool_name: &str,
        arguments_json: &str,
    ) -> Result<pb::CallToolResponse, ClientError> {
        self.call_tool_with(episode_id, tool_name, arguments_json, None).await
    }

    /// Calls one tool, with an idempotency key that makes a retried write safe.
    pub async fn call_tool_with(
        &mut self,
        episode_id: &str,
        tool_name: &str,
        arguments_json: &str,
        idempotency_key: Option<&str>,
    ) -> Result<pb::CallToolResponse, ClientError> {
        self.call_tool_after(episode_id, tool_name, arguments_json, idempotency_key, None).await
    }

    /// Calls one tool, declaring the virtual milliseconds waited since the
    /// previous reply (the backoff the agent honoured), with an optional
    /// idempotency key. At time scale 0 a declared wait is the only time
    /// that passes for the episode's rate-limit windows.
    pub async fn call_tool_after(
        &mut self,
        episode_id: &str,
        tool_name: &str,
        arguments_json: &str,
        idempotency_key: Option<&str>,
        waited_ms: Option<u64>,
    ) -> Result<pb::CallToolResponse, ClientError> {
        self.call_tool_as("", episode_id, tool_name, arguments_json, idempotency_key, waited_ms).await
    }

    /// Finishes an episode and returns the verdict.
    pub async fn finish_episode(&mut self, episode_id: &str) -> Result<pb::Verdict, ClientError> {
        self.finish_episode_with(episode_id, None).await
    }

    /// Finishes an episode, reporting what the agent spent, and returns the verdict.
    pub async fn finish_episode_with(&mut self, episode_id: &str, usage: Option<pb::Usage>) -> Result<pb::Verdict, ClientError> {
        self.finish_episode_answering(episode_id, usage, None).await
    }

    /// Finishes an episode with the agent's final answer (for tasks that ask
    /// a question or must be refused) and what it spent; returns the verdict.
    pub async fn finish_episode_answering(
        &mut self,
        episode_id: &str,
        usage: Option<pb::Usage>,
        answer: Option<String>,
    ) -> Result<pb::Verdict, ClientError> {
        let request = pb::FinishEpisodeRequest { episode_id: episode_id.to_owned(), usage, answer, ..Default::default() };
        Ok(self.inner.finish_episode(request).await?.into_inner())
    }

    /// Returns an episode's trajectory.
    pub async fn trajectory(&mut self, episode_id: &str) -> Result<pb::Trajectory, ClientError> {
        Ok(self.inner.get_trajectory(pb::GetTrajectoryRequest { episode_id: episode_id.to_owned() }).await?.into_inner())
    }
}

toolenv_core::named_enum! {
    /// The agents built into the client, which need no model.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Agent {
        /// Plays the task's reference solution, retrying what faults break: knows
        /// the answer and never reads a result.
        Reference = "reference",
        /// The reference solution without retries: each call is made once.
        ReferenceNoRetry = "reference-no-retry",
        /// Reads the slots from the description with fixed patterns that only
        /// understand the canonical phrasing, then plays the reference solution
        /// with what it read: robustness falls with ε.
        Brittle = "brittle",
        /// Makes seeded random calls with plausible arguments; should fail every task.
        Random = "random",
        /// Does nothing and finishes; should fail every task.
        Idle = "idle",
        /// Knows only what the task asks (its slots) and decides from what the
        /// tools return: the result-reading solver that decides feasibility.
        Solver = "solver",
        /// A team of two in a multi-agent episode: the solver as planner, an
        /// executor running each planned write once, over the message bus;
        /// nobody checks anything (a linear, waterfall-style pipeline).
        TeamPipeline = "team-pipeline",
        /// A team of three: planner and executor as in the pipeline, plus a
        /// verifier that re-reads what the planner relies on, and an executor
        /// that checks plans and replies (a closed loop).
        TeamClosedLoop = "team-closed-loop",
    }
}

impl Agent {
    /// The calls this agent makes on a task, given the description it was told.
    fn calls(self, task: &toolenv_domains::Task, seed: u64, description: &str) -> Vec<Call> {
        match self {
            Agent::Reference | Agent::ReferenceNoRetry => task.reference.clone(),
            Agent::Brittle => toolenv_domains::perturb::brittle_calls(task, description),
            Agent::Random => toolenv_domains::agent::random_calls(task, seed, toolenv_domains::agent::RANDOM_AGENT_CALLS),
            // The solver and the teams decide call by call (see `solve_remote`).
            Agent::Idle | Agent::Solver | Agent::TeamPipeline | Agent::TeamClosedLoop => Vec::new(),
        }
    }

    /// The team topology of a built-in team agent.
    pub fn topology(self) -> Option<toolenv_domains::masfire::team::Topology> {
        use toolenv_domains::masfire::team::Topology;
        match self {
            Agent::TeamPipeline => Some(Topology::Pipeline),
            Agent::TeamClosedLoop => Some(Topology::ClosedLoop),
            Agent::Reference | Agent::ReferenceNoRetry | Agent::Brittle | Agent::Random | Agent::Idle | Agent::Solver => None,
        }
    }
}

/// One episode played to its end.
#[derive(Debug, Clone)]
pub struct EpisodeOutcome {
    /// The task played.
    pub task_id: String,
    /// The oracle's verdict.
    pub verdict: pb::Verdict,
    /// The whole trajectory, verdict included.
    pub trajectory: pb::Trajectory,
}

/// Plays one episode of `task_id` with a built-in agent, over gRPC, with no faults.
pub async fn play_episode(client: &mut Client, agent: Agent, task_id: &str, seed: u64, trial: u32) -> Result<EpisodeOutcome, ClientError> {
    play(client, agent, pb::CreateEpisodeRequest { task_id: task_id.to_owned(), seed, trial, ..Default::default() }).await
}

/// Most attempts the retrying agent makes per call.
pub const MAX_ATTEMPTS: u32 = 8;

/// Plays one episode with a built-in agent, over gRPC, as the request says
/// (fault profile, delivery, time scale).
///
/// A call the server rejects as malformed (the random agent makes some) is
/// part of the episode, not a failure of the run; so are injected faults. Any
/// other error status is.
pub async fn play(client: &mut Client, agent: Agent, mut request: pb::CreateEpisodeRequest) -> Result<EpisodeOutcome, ClientError> {
    let task = known_task(client, &request.task_id).await?;
    // A team declares its own roles, unless the request already does.
    if let Some(topology) = agent.topology()
        && request.roles.is_empty()
    {
        request.roles = topology.roles().iter().map(pb::Role::from).collect();
    }
    let seed = request.seed;
    let episode = client.create_episode_with(request).await?;
    let answer = play_created(client, agent, &task, seed, &episode).await?;
    let verdict = client.finish_episode_answering(&episode.episode_id, None, answer).await?;
    let trajectory = client.trajectory(&episode.episode_id).await?;
    Ok(EpisodeOutcome { task_id: task.id.clone(), verdict, trajectory })
}

/// The task of an id (the paper's, or a generated one rebuilt from its id),
/// or why a built-in agent cannot play it.
async fn known_task(client: &mut Client, task_id: &str) -> Result<toolenv_domains::TaskRef, ClientError> {
    match toolenv_domains::generate::resolve(task_id) {
        Ok(task) => Ok(task),
        Err(_) => {
            // The server's NOT_FOUND says it best, if it does not know the task either.
            client.get_task(task_id).await?;
            Err(ClientError::UnknownTask(task_id.to_owned()))
        }
    }
}

/// Makes a built-in agent's calls in an episode created already; does not
/// finish it. Returns the final answer the agent finishes with, if any.
async fn play_created(
    client: &mut Client,
    agent: Agent,
    task: &toolenv_domains::TaskRef,
    seed: u64,
    episode: &pb::Episode,
) -> Result<Option<String>, ClientError> {
    let time_scale = episode.time_scale.max(0.0);
    if agent == Agent::Solver {
        return solve_remote(client, task.clone(), episode, time_scale).await;
    }
    if let Some(topology) = agent.topology() {
        return team::play_remote(client, task, topology, episode, time_scale).await;
    }
    let calls = agent.calls(task, seed, &episode.description);
    // The reference agents know the answer; the brittle agent gives it when it read the task right.
    let answer = match agent {
        Agent::Reference | Agent::ReferenceNoRetry => task.reference_answer().map(str::to_owned),
        Agent::Brittle if calls == task.reference => task.reference_answer().map(str::to_owned),
        Agent::Brittle | Agent::Random | Agent::Idle | Agent::Solver | Agent::TeamPipeline | Agent::TeamClosedLoop => None,
    };
    for (i, call) in calls.into_iter().enumerate() {
        let arguments = call.arguments.to_string();
        if agent == Agent::Reference {
            let mutates = task.domain.tool(call.tool).is_some_and(|t| t.mutates_state);
            let key = mutates.then(|| format!("{}-{i}", episode.episode_id));
            call_with_retries(client, &episode.episode_id, call.tool, &arguments, key.as_deref(), mutates, time_scale).await?;
        } else {
            // Declared waits of 0: these agents honour no advice, and their own
            // pauses are not waits, so the trajectory is the same at every time scale.
            match client.call_tool_after(&episode.episode_id, call.tool, &arguments, None, Some(0)).await {
                Ok(_) => {}
                Err(ClientError::Status(status)) if status.code() == tonic::Code::InvalidArgument || is_fault(&status) => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(answer)
}

/// Whether a status is one an injected fault (a flaky backend) sends.
fn is_fault(status: &tonic::Status) -> bool {
    use tonic::Code;
    matches!(status.code(), Code::DeadlineExceeded | Code::Unavailable | Code::ResourceExhausted | Code::PermissionDenied)
}

/// What one attempt of a call came to.
enum Attempt {
    /// A usable reply (a result or a domain error), or one not worth
    /// retrying (a suspension, a malformed call): move on.
    Done,
    /// A failure worth retrying, after the advised delay (virtual
    /// milliseconds) if any.
    Retry(Option<u64>),
}

/// Makes one call, retrying faults: bounded attempts, backoff that honours
/// RetryInfo (or the in-band retry delay), no retry when told not to
/// (pushback -1, a suspension), and a write whose reply is empty or
/// unreadable counts as unconfirmed. The idempotency key makes each retried
/// write safe.
async fn call_with_retries(
    client: &mut Client,
    episode_id: &str,
    tool: &str,
    arguments: &str,
    key: Option<&str>,
    mutates: bool,
    time_scale: f64,
) -> Result<(), ClientError> {
    use tonic_types::StatusExt;
    // The virtual milliseconds waited before the next attempt, declared with
    // it (0 too: the agent's own pauses are not waits it honours).
    let mut waited_ms = 0;
    for attempt in 0..MAX_ATTEMPTS {
        let outcome = match client.call_tool_after(episode_id, tool, arguments, key, Some(std::mem::take(&mut waited_ms))).await {
            Ok(reply) => judge_reply(&reply, mutates),
            Err(ClientError::Status(status)) if status.code() == tonic::Code::InvalidArgument => Attempt::Done,
            Err(ClientError::Status(status)) if is_fault(&status) => {
                let pushback = status.metadata().get("grpc-retry-pushback-ms").and_then(|v| v.to_str().ok()?.parse::<i64>().ok());
                if pushback.is_some_and(|ms| ms < 0) || status.code() == tonic::Code::PermissionDenied {
                    Attempt::Done
                } else {
                    Attempt::Retry(status.get_details_error_info().and_then(|info| virtual_retry_ms(&info.metadata)))
                }
            }
            Err(error) => return Err(error),
        };
        match outcome {
            Attempt::Done => return Ok(()),
            // The advised delay in virtual milliseconds or, without advice, a
            // short exponential backoff; slept for real at the episode's time
            // scale and declared with the retry.
            Attempt::Retry(delay_ms) => {
                let delay_ms = delay_ms.unwrap_or(1 << attempt.min(7));
                let delay = Duration::from_millis(delay_ms).mul_f64(time_scale);
                if delay.is_zero() {
                    tokio::task::yield_now().await;
                } else {
                    tokio::time::sleep(delay).await;
                }
                waited_ms = delay_ms;
            }
        }
    }
    Ok(())
}

/// The advised retry delay in the episode's virtual milliseconds, from a
/// fault's `ErrorInfo` metadata.
fn virtual_retry_ms(metadata: &std::collections::HashMap<String, String>) -> Option<u64> {
    metadata.get("retry_after_virtual_ms")?.parse::<i64>().ok().and_then(|ms| u64::try_from(ms).ok())
}

/// Reads an OK reply: a fault delivered in-band, an unconfirmed write, or done.
fn judge_reply(reply: &pb::CallToolResponse, mutates: bool) -> Attempt {
    let Some(pb::call_tool_response::Outcome::ResultJson(text)) = &reply.outcome else { return Attempt::Done };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return if mutates { Attempt::Retry(None) } else { Attempt::Done };
    };
    if let Some(error) = value.get("error").filter(|e| e.get("reason").is_some()) {
        let retry_ms = error.get("retry_after_ms").and_then(serde_json::Value::as_i64);
        let virtual_ms = error.get("retry_after_virtual_ms").and_then(serde_json::Value::as_u64);
        return match (error.get("code").and_then(serde_json::Value::as_str), retry_ms) {
            (Some("PERMISSION_DENIED"), _) | (_, Some(-1)) => Attempt::Done,
            _ => Attempt::Retry(virtual_ms),
        };
    }
    if mutates && value.as_object().is_some_and(serde_json::Map::is_empty) {
        return Attempt::Retry(None);
    }
    Attempt::Done
}

/// Plays an episode with the result-reading solver: the same policy as
/// in-process, each call made over gRPC from a blocking thread.
async fn solve_remote(
    client: &Client,
    task: toolenv_domains::TaskRef,
    episode: &pb::Episode,
    time_scale: f64,
) -> Result<Option<String>, ClientError> {
    let mut env = RemoteEnv {
        client: client.clone(),
        runtime: tokio::runtime::Handle::current(),
        episode_id: episode.episode_id.clone(),
        time_scale,
        error: None,
        agent_id: String::new(),
        answer: None,
    };
    let env = tokio::task::spawn_blocking(move || {
        // Giving up is an outcome of the episode, judged by its verdict.
        let _ = toolenv_domains::solver::play(&task, &mut env);
        env
    })
    .await
    .map_err(|e| ClientError::Status(tonic::Status::internal(format!("the solver's thread ended abnormally: {e}"))))?;
    env.error.map_or(Ok(env.answer), Err)
}

/// An episode on a server, as the solver's environment: replies become the
/// observations any client sees.
struct RemoteEnv {
    client: Client,
    runtime: tokio::runtime::Handle,
    episode_id: String,
    time_scale: f64,
    /// An infrastructure error (not a fault): the episode stops there.
    error: Option<ClientError>,
    /// The agent the calls are made as (empty: none).
    agent_id: String,
    /// The final answer the solver gave, sent with the finish.
    answer: Option<String>,
}

impl toolenv_domains::solver::Env for RemoteEnv {
    fn answer(&mut self, text: &str) {
        self.answer = Some(text.to_owned());
    }

    fn call(
        &mut self,
        tool: &str,
        arguments_json: &str,
        request: &toolenv_domains::solver::Request<'_>,
    ) -> toolenv_domains::solver::Observation {
        use toolenv_domains::solver::{Fault, Observation};
        if self.error.is_some() {
            return Observation::Closed("stopped after an infrastructure error".into());
        }
        // The wait, for real at this time scale (a blocking thread may
        // sleep), and declared with the call: at time scale 0 only the
        // declaration makes time pass for the episode.
        if request.waited_ms > 0 && self.time_scale > 0.0 {
            std::thread::sleep(Duration::from_millis(request.waited_ms).mul_f64(self.time_scale));
        }
        let call = self.client.call_tool_as(
            &self.agent_id,
            &self.episode_id,
            tool,
            arguments_json,
            request.idempotency_key,
            Some(request.waited_ms),
        );
        // Real milliseconds back to the episode's virtual ones, where no virtual figure came with them.
        let virtual_ms = |ms: i64| if ms > 0 && self.time_scale > 0.0 { (ms as f64 / self.time_scale).round() as i64 } else { ms };
        match self.runtime.block_on(call) {
            Ok(reply) => match reply.outcome {
                Some(pb::call_tool_response::Outcome::ResultJson(text)) => {
                    let in_band = serde_json::from_str(&text).ok().and_then(|v| Fault::in_band(&v));
                    let advised = serde_json::from_str::<serde_json::Value>(&text)
                        .ok()
                        .and_then(|v| v.pointer("/error/retry_after_virtual_ms").and_then(serde_json::Value::as_i64));
                    match in_band {
                        Some(fault) => {
                            Observation::Failure(Fault { retry_after_ms: advised.or(fault.retry_after_ms.map(virtual_ms)), ..fault })
                        }
                        None => Observation::Result(text),
                    }
                }
                Some(pb::call_tool_response::Outcome::Error(e)) => Observation::DomainError { code: e.code, message: e.message },
                None => Observation::Result(String::new()),
            },
            Err(ClientError::Status(status)) => {
                use tonic_types::StatusExt;
                let code = match status.code() {
                    tonic::Code::InvalidArgument | tonic::Code::NotFound => {
                        return Observation::Invalid { field: String::new(), message: status.message().to_owned() };
                    }
                    tonic::Code::FailedPrecondition => return Observation::Closed(status.message().to_owned()),
                    tonic::Code::DeadlineExceeded => toolenv_domains::FailureCode::DeadlineExceeded,
                    tonic::Code::Unavailable => toolenv_domains::FailureCode::Unavailable,
                    tonic::Code::ResourceExhausted => toolenv_domains::FailureCode::ResourceExhausted,
                    tonic::Code::PermissionDenied => toolenv_domains::FailureCode::PermissionDenied,
                    _ => {
                        self.error = Some(ClientError::Status(status));
                        return Observation::Closed("infrastructure error".into());
                    }
                };
                let Some(info) = status.get_details_error_info() else {
                    // No fault's ErrorInfo: a quota of the episode (its call limit).
                    return Observation::Closed(status.message().to_owned());
                };
                let pushback = status.metadata().get("grpc-retry-pushback-ms").and_then(|v| v.to_str().ok()?.parse::<i64>().ok());
                let retry_after_ms =
                    pushback.or_else(|| status.get_details_retry_info().and_then(|r| r.retry_delay).map(|d| d.as_millis() as i64));
                // A suspension's -1 stays; a delay is read in virtual milliseconds where given.
                let advised = virtual_retry_ms(&info.metadata).map(|ms| ms as i64).filter(|_| retry_after_ms.is_none_or(|ms| ms >= 0));
                Observation::Failure(Fault {
                    code,
                    reason: info.reason,
                    message: status.message().to_owned(),
                    retry_after_ms: advised.or(retry_after_ms.map(virtual_ms)),
                })
            }
            Err(error) => {
                self.error = Some(error);
                Observation::Closed("infrastructure error".into())
            }
        }
    }
}

/// Plays planned episodes concurrently (at most `concurrency` at once) and
/// returns their results in plan order, calling `on_result` as each ends with
/// its index in `plan`, its result and, when it reached the server's
/// trajectory, that trajectory (to store it; it is not kept). An episode that
/// fails for an infrastructure reason (the server or the network) is recorded
/// as such, with no trajectory, not dropped. Every planned agent label must
/// name a built-in agent ([`Agent::parse`]); one that does not is
/// recorded as an infrastructure error.
pub async fn run_plan(
    client: &Client,
    plan: &[PlannedEpisode],
    concurrency: usize,
    on_result: impl FnMut(usize, &metrics::EpisodeResult, Option<&pb::Trajectory>),
) -> Vec<metrics::EpisodeResult> {
    run_plan_with(client, plan, concurrency, &llm::LlmAgents::default(), on_result).await
}

/// [`run_plan`], where a label may also name one of `llm_agents`
/// (`react@MODEL`, `reflexion@MODEL`); an LLM agent's endpoint failing
/// after its retries is an infrastructure error of the episode.
pub async fn run_plan_with(
    client: &Client,
    plan: &[PlannedEpisode],
    concurrency: usize,
    llm_agents: &llm::LlmAgents,
    mut on_result: impl FnMut(usize, &metrics::EpisodeResult, Option<&pb::Trajectory>),
) -> Vec<metrics::EpisodeResult> {
    let semaphore = std::sync::Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (index, planned) in plan.iter().cloned().enumerate() {
        let mut client = client.clone();
        let semaphore = semaphore.clone();
        let llm_agents = llm_agents.clone();
        tasks.spawn(async move {
            let _permit = semaphore.acquire_owned().await;
            let played = match (Agent::parse(&planned.agent), llm_agents.get(&planned.agent)) {
                (Some(agent), _) => play(&mut client, agent, planned.request.clone()).await.map_err(|e| e.to_string()),
                (None, Some(llm)) => llm::play(&mut client, llm, &planned).await.map_err(|e| e.to_string()),
                (None, None) => Err(format!("'{}' is not a built-in agent", planned.agent)),
            };
            match played {
                Ok(outcome) => (index, planned.result(&outcome.trajectory), Some(outcome.trajectory)),
                Err(error) => (index, planned.infra_error(error), None),
            }
        });
    }
    let mut results: Vec<Option<metrics::EpisodeResult>> = vec![None; plan.len()];
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, result, trajectory)) => {
                on_result(index, &result, trajectory.as_ref());
                results[index] = Some(result);
            }
            Err(error) => tracing::error!(%error, "an episode task ended abnormally"),
        }
    }
    results
        .into_iter()
        .zip(plan)
        .map(|(result, planned)| result.unwrap_or_else(|| planned.infra_error("episode task panicked".into())))
        .collect()
}
