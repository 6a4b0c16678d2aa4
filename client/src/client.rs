//! The connection to a server: [`Client`] wraps the generated stubs in a
//! small typed API — tasks, one entry point each to create, call and finish
//! an episode, multi-agent joins, trajectories and leases of hosted runs —
//! with its own error type.

use std::time::Duration;
use toolenv_domains::taskfile::Catalogue;

use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};
use toolenv::pb::{self, runs_client::RunsClient, tool_env_client::ToolEnvClient};

/// Why a client request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The URL is not a valid endpoint.
    #[error("invalid server url '{url}'")]
    InvalidUrl { url: String, source: tonic::transport::Error },
    /// The server could not be reached.
    #[error("cannot connect to {url}")]
    Connect { url: String, source: tonic::transport::Error },
    /// The server answered with an error status: a fault, a refusal, or an
    /// infrastructure error (see the crate docs).
    #[error("{}", status_text(.0))]
    Status(tonic::Status),
    /// A CA certificate was given for a server reached without TLS.
    #[error("a CA certificate (--ca-cert) is for an https:// server, but the url is '{url}': use https://")]
    CaWithoutHttps { url: String },
    /// The CA certificate cannot be used.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsSetupError),
    /// The token cannot be sent as a header (it is not printable ASCII).
    #[error("the token must be printable ASCII")]
    InvalidToken,
    /// The agent could not play (an unknown task, a model endpoint that
    /// kept failing): an infrastructure error of the episode.
    #[error(transparent)]
    Agent(#[from] toolenv_agents::AgentError),
}

/// What a status whose connection broke says after its message.
pub const CONNECTION_BROKE: &str =
    "the connection broke: the server stopped or restarted mid-call, or it serves TLS and the url needs https:// (and --ca-cert)";

/// A status as `Code: message`, with what may have happened when the
/// message alone does not say: a connection that broke is a server that went
/// away mid-call, or plain HTTP/2 sent to a TLS server.
fn status_text(status: &tonic::Status) -> String {
    let message = status.message();
    let broke = match status.code() {
        tonic::Code::Unknown | tonic::Code::Internal | tonic::Code::Unavailable => {
            message == "transport error" || message.contains("h2 protocol error")
        }
        // What tonic says when the connection went away under a request.
        tonic::Code::Cancelled => message == "operation was canceled",
        _ => false,
    };
    let hint = if broke { format!(" ({CONNECTION_BROKE})") } else { String::new() };
    format!("{:?}: {message}{hint}", status.code())
}

/// Why a connection to a plain `http://` url broke under a request (a
/// status that says [`CONNECTION_BROKE`]), found by asking the server once
/// more: it is gone, it speaks TLS, or it speaks plain HTTP/2 (so it, or a
/// replica behind a proxy, stopped mid-call). `None` when it cannot tell.
/// Blocks for at most a few seconds.
pub fn broken_connection_hint(url: &str) -> Option<String> {
    use std::io::{Read as _, Write as _};
    use std::net::ToSocketAddrs as _;
    let authority = url.strip_prefix("http://")?.split('/').next()?;
    let addr = authority.to_socket_addrs().ok()?.next()?;
    let timeout = std::time::Duration::from_secs(2);
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&addr, timeout) else {
        return Some(format!("nothing listens at {url} now: the server stopped under the request; start it again and rerun"));
    };
    stream.set_read_timeout(Some(timeout)).ok()?;
    // The HTTP/2 connection preface and an empty SETTINGS frame.
    stream.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0").ok()?;
    let mut first = [0u8; 9];
    let tls = "the server expects TLS: use an https:// url (and --ca-cert for a private CA or a self-signed certificate)";
    match stream.read(&mut first) {
        // A TLS record (an alert or a handshake) or a closed connection: not HTTP/2 in the clear.
        Ok(0) => Some(tls.to_owned()),
        Ok(_) if matches!(first[0], 0x15 | 0x16) => Some(tls.to_owned()),
        // A SETTINGS frame: the server (or a proxy in front of it) speaks HTTP/2 in the clear.
        Ok(n) if n >= 4 && first[3] == 0x04 => Some(format!(
            "{url} answers plain HTTP/2 again: the server (or a replica behind a proxy) stopped or restarted under the request; rerun the command"
        )),
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => Some(tls.to_owned()),
        _ => None,
    }
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
    /// Where a built-in agent played through this client finds its task.
    tasks: Catalogue,
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
        let https = url.starts_with("https://");
        let ca_config = match (&credentials.ca_pem, https) {
            (Some(ca), true) => Some(crate::tls::client_config(ca)?),
            (Some(_), false) => return Err(ClientError::CaWithoutHttps { url: url.to_owned() }),
            (None, _) => None,
        };
        if https && ca_config.is_none() {
            endpoint = endpoint.tls_config(ClientTlsConfig::new().with_webpki_roots()).map_err(invalid)?;
        }
        let token = match &credentials.token {
            Some(token) => Some(format!("Bearer {token}").parse().map_err(|_| ClientError::InvalidToken)?),
            None => None,
        };
        let connect_error = |source| ClientError::Connect { url: url.to_owned(), source };
        let channel = match ca_config {
            Some(config) => Channel::connect(crate::tls::connector(config), endpoint).await.map_err(connect_error)?,
            None => endpoint.connect().await.map_err(connect_error)?,
        };
        let bearer = Bearer(token);
        Ok(Self {
            inner: ToolEnvClient::with_interceptor(channel.clone(), bearer.clone()),
            runs: RunsClient::with_interceptor(channel, bearer),
            tasks: Catalogue::new(),
        })
    }

    /// This client with the task files of `tasks` known to the built-in
    /// agents played through it (the reference and the solver read their
    /// task), as the server it plays on was given them (`--tasks FILE`).
    pub fn with_tasks(self, tasks: Catalogue) -> Self {
        Self { tasks, ..self }
    }

    /// The tasks the built-in agents played through this client find:
    /// the built-in and generated ones, and those given to [`Client::with_tasks`].
    pub fn tasks(&self) -> &Catalogue {
        &self.tasks
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
        domain: Option<toolenv_core::Domain>,
        level: Option<u8>,
    ) -> Result<Vec<pb::TaskSummary>, ClientError> {
        self.list_suite_tasks("", domain, level).await
    }

    /// Lists a suite's tasks (`paper`, `standard`, `generated:<seed>:<n>`;
    /// empty: the paper's), optionally of one domain and level.
    pub async fn list_suite_tasks(
        &mut self,
        suite: &str,
        domain: Option<toolenv_core::Domain>,
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

    /// Starts an episode as the request says (task, seed, trial, fault
    /// profile, delivery, time scale, roles).
    pub async fn create(&mut self, request: pb::CreateEpisodeRequest) -> Result<pb::Episode, ClientError> {
        Ok(self.inner.create_episode(request).await?.into_inner())
    }

    /// Calls one tool as the request says (arguments as JSON text, an
    /// idempotency key that makes a retried write safe, the virtual
    /// milliseconds waited since the previous reply, the agent of a
    /// multi-agent episode). What comes back is a result, a rejection, a
    /// fault, a refusal or an infrastructure error (see the crate docs).
    pub async fn call(&mut self, request: pb::CallToolRequest) -> Result<pb::CallToolResponse, ClientError> {
        let request = routed(request, |r| &r.episode_id);
        Ok(self.inner.call_tool(request).await?.into_inner())
    }

    /// [`Client::call`] with JSON argument text and nothing else.
    pub async fn call_json(
        &mut self,
        episode_id: &str,
        tool_name: &str,
        arguments_json: &str,
    ) -> Result<pb::CallToolResponse, ClientError> {
        let request = pb::CallToolRequest {
            episode_id: episode_id.to_owned(),
            tool_name: tool_name.to_owned(),
            arguments_json: arguments_json.to_owned(),
            ..Default::default()
        };
        self.call(request).await
    }

    /// Finishes an episode as the request says (the agent's final answer,
    /// what it spent, its conversation) and returns the verdict.
    pub async fn finish(&mut self, request: pb::FinishEpisodeRequest) -> Result<pb::Verdict, ClientError> {
        let request = routed(request, |r| &r.episode_id);
        Ok(self.inner.finish_episode(request).await?.into_inner())
    }

    /// Joins a multi-agent episode under `role`: the agent's id (for
    /// `CallToolRequest.agent_id`), its system prompt, the description and the tools.
    pub async fn join(&mut self, episode_id: &str, role: &str) -> Result<pb::JoinEpisodeResponse, ClientError> {
        let request = pb::JoinEpisodeRequest { episode_id: episode_id.to_owned(), role: role.to_owned() };
        Ok(self.inner.join_episode(routed(request, |r| &r.episode_id)).await?.into_inner())
    }

    /// Returns an episode's trajectory.
    pub async fn trajectory(&mut self, episode_id: &str) -> Result<pb::Trajectory, ClientError> {
        let request = routed(pb::GetTrajectoryRequest { episode_id: episode_id.to_owned() }, |r| &r.episode_id);
        Ok(self.inner.get_trajectory(request).await?.into_inner())
    }

    /// Leases the next episode of a hosted run planned for `agent` (empty:
    /// any), waiting as the server advises while other workers hold the
    /// rest; with the run's progress. `None` when every episode planned for
    /// the agent has a verdict. `team_roles`: the roles the agent plays
    /// itself (a team); the server refuses (FAILED_PRECONDITION), before
    /// leasing anything, a run whose episodes do not declare every one.
    pub async fn lease(
        &mut self,
        run_id: &str,
        agent: &str,
        worker: &str,
        team_roles: &[String],
    ) -> Result<Option<(pb::Lease, Option<pb::Run>)>, ClientError> {
        loop {
            let request = pb::NextEpisodeRequest {
                run_id: run_id.to_owned(),
                agent: agent.to_owned(),
                worker: worker.to_owned(),
                role: String::new(),
                team_roles: team_roles.to_vec(),
            };
            let reply = self.runs.next_episode(request).await?.into_inner();
            match reply.lease {
                Some(lease) if lease.episode.is_some() => return Ok(Some((lease, reply.run))),
                _ if reply.retry_after_ms == 0 => return Ok(None),
                _ => tokio::time::sleep(Duration::from_millis(reply.retry_after_ms)).await,
            }
        }
    }
}

/// The metadata header that carries a request's episode id, so that a proxy
/// in front of replicas keeps an episode on one replica by hashing it
/// (HAProxy's `balance hdr(x-toolenv-episode)`, Envoy's ring hash) without
/// parsing protobuf. Servers ignore it.
pub const EPISODE_HEADER: &str = "x-toolenv-episode";

/// `message` as a request with its episode id in [`EPISODE_HEADER`].
fn routed<T>(message: T, episode_id: fn(&T) -> &String) -> tonic::Request<T> {
    let value = tonic::metadata::MetadataValue::try_from(episode_id(&message).as_str());
    let mut request = tonic::Request::new(message);
    if let Ok(value) = value {
        request.metadata_mut().insert(EPISODE_HEADER, value);
    }
    request
}
