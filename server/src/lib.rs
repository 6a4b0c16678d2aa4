//! The toolenv gRPC server: hosts episodes of the suite's tasks for agents
//! in any language, and runs of them as work queues for agent workers, with
//! health checks and server reflection.
//!
//! Start one inside a test, on an ephemeral loopback port, with one call:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use toolenv::pb::{self, tool_env_client::ToolEnvClient};
//!
//! let server = toolenv_server::RunningServer::start(toolenv_server::Config::default()).await?;
//! let mut client = ToolEnvClient::connect(server.url()).await?;
//! let tasks = client.list_tasks(pb::ListTasksRequest::default()).await?.into_inner().tasks;
//! assert_eq!(tasks.len(), toolenv_domains::suite().len());
//! server.shutdown().await?;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::server::TcpIncoming;
use toolenv::pb::runs_server::RunsServer;
use toolenv::pb::tool_env_server::ToolEnvServer;

mod error;
mod fault;
mod finished;
mod fork;
pub mod limits;
mod metrics;
mod registry;
mod replica;
mod runs;
pub mod security;
mod service;
mod team;

pub use error::Error;
pub use runs::{DEFAULT_LEASE_TIMEOUT, RunsService};
pub use service::ToolEnvService;

/// Limits and timeouts of a server.
#[derive(Debug, Clone)]
pub struct Config {
    /// Most episodes held at once, live or finished (finished ones stay
    /// readable until they expire).
    pub max_episodes: usize,
    /// Most tool calls one episode accepts.
    pub max_calls_per_episode: u32,
    /// Most bytes of argument JSON in one call.
    pub max_argument_bytes: usize,
    /// An episode untouched for this long is dropped.
    pub episode_idle_timeout: Duration,
    /// Real milliseconds per simulated millisecond of fault delays, unless an
    /// episode asks for another: 1 waits for real, 0 never sleeps.
    pub time_scale: f64,
    /// Named fault profiles (from a profile file), usable by name in
    /// create-episode requests; they shadow presets of the same name.
    pub fault_profiles: std::collections::BTreeMap<String, toolenv_core::chaos::FaultProfile>,
    /// Alternative task descriptions (from a paraphrase file), used at ε ≥ 0.2.
    pub paraphrases: Option<std::sync::Arc<toolenv_domains::perturb::ParaphraseBank>>,
    /// The tasks served by id: the built-in and generated suites, and the
    /// task files added to it (suite `file:<hash>`).
    pub tasks: toolenv_domains::taskfile::Catalogue,
    /// The SQLite file that keeps hosted runs, their episodes and results
    /// (created if missing); `None` keeps them in memory, lost at shutdown.
    pub store: Option<std::path::PathBuf>,
    /// Where to serve Prometheus metrics over HTTP at `/metrics` (port 0:
    /// any free port, see [`RunningServer::metrics_addr`]); `None` keeps no
    /// metrics at all.
    pub metrics_addr: Option<SocketAddr>,
    /// An optional bearer token and TLS identity ([`security::Security`]).
    pub security: security::Security,
    /// With a PostgreSQL store: when live episodes' calls reach the log.
    pub durability: Durability,
    /// With a PostgreSQL store: how long the log of an unfinished episode
    /// may go without a call before it is dropped (every replica then
    /// answers NOT_FOUND for it, as one process does for an episode idle
    /// past its idle timeout). At least the idle timeout: replicas drop
    /// idle copies from memory then, and rebuild them from the log.
    pub abandoned_after: Duration,
    /// Who rules on prose answers instead of the rule-based reader (an LLM
    /// judge, see [`AnswerJudge`]); `None`: the rules, the default.
    pub answer_judge: Option<std::sync::Arc<dyn AnswerJudge>>,
}

/// A judge of prose answers: asked once per finish of an episode whose task
/// asks for an answer and that is finished with prose (not typed fields).
/// Its ruling decides the answer checks and is kept in the trajectory, so
/// a replay or a fork needs no judge. The server only asks; the CLI gives
/// it an LLM behind an OpenAI-compatible endpoint.
pub trait AnswerJudge: std::fmt::Debug + Send + Sync {
    /// The ruling on the answer a question is about, or why there is none
    /// (the finish is then refused as UNAVAILABLE, and may be sent again).
    fn rule<'a>(
        &'a self,
        question: &'a toolenv_core::JudgeQuestion,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<toolenv_core::AnswerRuling, String>> + Send + 'a>>;
}

/// When a replica writes a live episode's calls to the durable log (with a
/// PostgreSQL store; a single process has no log).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// Every call, before its reply: an episode outlives its replica and
    /// continues on another byte for byte.
    #[default]
    Call,
    /// The first call and the finish: one commit for the first call (so
    /// that another replica can tell an episode played here) and one at the
    /// end. An episode whose replica is lost mid-play is lost with it: any
    /// other replica answers DATA_LOSS, an infrastructure error (a worker
    /// drops the episode, whose lease then expires and is played again).
    /// For RL rollouts and scripted agents that would rather replay an
    /// episode than pay a commit per call.
    Finish,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            max_episodes: 100_000,
            max_calls_per_episode: toolenv_core::DEFAULT_MAX_CALLS,
            max_argument_bytes: toolenv_core::MAX_ARGUMENTS_BYTES,
            episode_idle_timeout: Duration::from_secs(15 * 60),
            time_scale: 1.0,
            fault_profiles: std::collections::BTreeMap::new(),
            paraphrases: None,
            tasks: toolenv_domains::taskfile::Catalogue::new(),
            store: None,
            metrics_addr: None,
            security: security::Security::default(),
            durability: Durability::default(),
            abandoned_after: Duration::from_secs(24 * 60 * 60),
            answer_judge: None,
        }
    }
}

/// A server running in the background of this process.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    tls: bool,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<Result<(), tonic::transport::Error>>,
    metrics: Option<metrics::Endpoint>,
}

/// Why a server could not start or stopped badly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    /// The store of runs could not be opened.
    #[error(transparent)]
    Store(#[from] toolenv_store::StoreError),
    /// The reflection service could not be built.
    #[error("cannot build the reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The TLS identity or the token was refused.
    #[error("invalid security settings: {0}")]
    Security(String),
    /// The transport failed.
    #[error("server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The server task panicked or was cancelled.
    #[error("server task ended abnormally: {0}")]
    Join(#[from] tokio::task::JoinError),
}

impl RunningServer {
    /// Starts a server on an ephemeral port of 127.0.0.1.
    pub async fn start(config: Config) -> Result<Self, ServeError> {
        Self::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), config).await
    }

    /// Starts a server on `addr`. The socket is bound before this returns,
    /// so clients can connect at once.
    pub async fn bind(addr: SocketAddr, config: Config) -> Result<Self, ServeError> {
        let listener = TcpListener::bind(addr).await.map_err(|source| ServeError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind { addr, source })?;
        // Tool calls are small request/response pairs: send them at once
        // (without this, replies over a few KiB wait ~40 ms for delayed ACKs).
        // Agents that vanished without closing their connection are noticed
        // by the kernel's TCP keepalive (first probe after 30 s idle, dead
        // after 3 unanswered probes 10 s apart), not by HTTP/2 pings: those
        // make hyper time every frame of every call.
        let incoming = TcpIncoming::from(listener)
            .with_nodelay(Some(true))
            .with_keepalive(Some(Duration::from_secs(30)))
            .with_keepalive_interval(Some(Duration::from_secs(10)))
            .with_keepalive_retries(Some(3));
        let (shutdown, signal) = oneshot::channel::<()>();
        let tls = config.security.tls.is_some();
        let secure = config.security.token.is_some() && config.security.tls.is_some();
        if !addr.ip().is_loopback() && !secure {
            tracing::warn!(%addr, token = config.security.token.is_some(), tls = config.security.tls.is_some(),
                "listening beyond loopback without both a token and TLS: anyone who reaches this address can use it (see docs/operations-and-security.md, \"Exposing a server safely\")");
        }
        let metrics_addr = config.metrics_addr;
        let (router, metrics) = router(config).await?;
        let metrics = match (metrics_addr, metrics) {
            (Some(addr), Some(metrics)) => {
                Some(metrics::Endpoint::bind(addr, metrics).await.map_err(|source| ServeError::Bind { addr, source })?)
            }
            _ => None,
        };
        let task = tokio::spawn(router.serve_with_incoming_shutdown(incoming, async {
            // A dropped handle stops the server too.
            let _ = signal.await;
        }));
        tracing::info!(%addr, "toolenv server listening");
        Ok(Self { addr, tls, shutdown, task, metrics })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL clients connect to, e.g. `http://127.0.0.1:50051`
    /// (`https://` when the server serves TLS).
    pub fn url(&self) -> String {
        format!("{}://{}", if self.tls { "https" } else { "http" }, self.addr)
    }

    /// The address of the Prometheus endpoint (`http://ADDR/metrics`),
    /// when the server was configured with [`Config::metrics_addr`].
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().map(metrics::Endpoint::addr)
    }

    /// Stops accepting requests, lets the ones in flight finish, and waits.
    pub async fn shutdown(self) -> Result<(), ServeError> {
        if let Some(metrics) = self.metrics {
            metrics.stop().await;
        }
        let _ = self.shutdown.send(());
        self.task.await??;
        Ok(())
    }
}

/// The router with its layers.
type Layered = tonic::transport::server::Router<
    tower::layer::util::Stack<tower::util::Either<security::BearerLayer, tower::layer::util::Identity>, tower::layer::util::Identity>,
>;

/// Builds the services and the transport settings, each with its reason.
async fn router(config: Config) -> Result<(Layered, Option<std::sync::Arc<metrics::Metrics>>), ServeError> {
    let (idle_timeout, abandoned_after) = (config.episode_idle_timeout, config.abandoned_after);
    let security = config.security.clone();
    if let Some(token) = &security.token {
        security::check_token(token).map_err(ServeError::Security)?;
    }
    let store = match &config.store {
        Some(path) => toolenv_store::AnyStore::open(path)?,
        None => toolenv_store::Store::open_in_memory()?.into(),
    };
    let service = ToolEnvService::new(config, store);
    let metrics = service.metrics().cloned();
    spawn_expiry(service.registry(), idle_timeout);
    if let Some(replica) = service.replica() {
        replica::spawn_pruning(std::sync::Arc::downgrade(replica), idle_timeout, abandoned_after);
    }
    let runs = RunsService::new(service.clone());

    // Health: load balancers and orchestrators probe grpc.health.v1.
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<ToolEnvServer<ToolEnvService>>().await;
    health.set_serving::<RunsServer<RunsService>>().await;
    // Reflection: generic clients (grpcurl, Postman) discover the API without the .proto.
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(toolenv::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(toolenv::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;

    let mut builder = tonic::transport::Server::builder();
    // A span per request, only when debug spans are recorded at all: without
    // a reader, taking each request apart to name its span is pure cost.
    if tracing::enabled!(tracing::Level::DEBUG) {
        builder = builder.trace_fn(|request| tracing::debug_span!("rpc", path = %request.uri().path()));
    }
    // TLS: a server reached beyond loopback keeps its token and traffic private.
    if let Some(tls) = &security.tls {
        builder = builder.tls_config(tls.server_config()).map_err(|e| ServeError::Security(format!("TLS identity: {e}")))?;
    }
    let router = builder
        // Auth: every service but health needs the bearer token, when one is set.
        .layer(tower::util::option_layer(security.token.as_deref().map(security::BearerLayer::new)))
        .add_service(health_service)
        .add_service(reflection)
        .add_service(reflection_alpha)
        .add_service(ToolEnvServer::new(service))
        .add_service(RunsServer::new(runs));
    Ok((router, metrics))
}

/// The two services without a transport, over an in-memory store (and
/// without the background expiry): for driving the handlers in-process, as
/// the fuzz harness does. A real server is [`RunningServer`].
pub fn in_process(config: Config) -> Result<(ToolEnvService, RunsService), ServeError> {
    let store = toolenv_store::Store::open_in_memory()?.into();
    let service = ToolEnvService::new(config, store);
    let runs = RunsService::new(service.clone());
    Ok((service, runs))
}

/// Drops idle episodes in the background until the service is gone.
fn spawn_expiry(registry: &std::sync::Arc<registry::Registry>, idle_timeout: Duration) {
    let registry = std::sync::Arc::downgrade(registry);
    let period = (idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(period);
        loop {
            ticker.tick().await;
            let Some(registry) = registry.upgrade() else { break };
            let expired = registry.expire(idle_timeout);
            if expired > 0 {
                tracing::info!(expired, live = registry.len(), "expired idle episodes");
            }
        }
    });
}
