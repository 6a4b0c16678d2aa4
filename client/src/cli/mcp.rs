//! `toolenv mcp`: an episode, or a hosted run's episodes one after another,
//! served to an MCP client over stdio or streamable HTTP by
//! [`toolenv_client::mcp::Bridge`], a thin adapter over the gRPC server at
//! --url (or an embedded one).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use rmcp::ServiceExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use toolenv_client::mcp::{Bridge, Source};
use toolenv_server::{Config, RunningServer};

use super::args::{AgentArg, EpisodeArgs};
use super::plan::{self, Server};

/// Serve one episode, or a hosted run's episodes one after another, to an
/// MCP client (Claude, Cursor, agent SDKs) over stdio, or over streamable
/// HTTP with --http. The episode's tools are MCP tools with their JSON
/// schemas unchanged, the task description is the server's instructions and
/// the prompt "task", faults come back as tool errors (isError) or in-band
/// text as --in-band says, and the tool "finish" ends the episode and
/// returns the verdict. Every call goes to the gRPC server (--url, or an
/// embedded one), which records the trajectory as for any other client.
#[derive(Debug, Clone, clap::Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["task_id", "run"]))]
pub(crate) struct McpArgs {
    /// The task of the episode to serve, e.g. travel/cheapest-flight/001.
    pub(crate) task_id: Option<String>,
    /// Serve a run hosted by the server at --url instead: lease its next
    /// episode, and the next one after each finish, until none is left.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["seed", "trial", "epsilon", "faults", "only", "in_band", "time_scale"])]
    pub(crate) run: Option<String>,
    /// With --run: play the episodes planned for this agent label (default: any).
    #[arg(long, requires = "run", default_value = "")]
    pub(crate) label: String,
    /// Serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8000;
    /// port 0 picks one) at the path /mcp, instead of stdio. The endpoint's
    /// URL is printed on stdout.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<SocketAddr>,
    /// Episode seed.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Trial index.
    #[arg(long, default_value_t = 0)]
    pub(crate) trial: u32,
    /// Perturbation level ε of the description: 0, 0.1, 0.2 or 0.3.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) epsilon: f64,
    /// Fault profile: a λ preset (0.0, 0.1, 0.2, 0.3), an ablation
    /// (timeout-only, rate-limit-only, partial-response-only, mixed) or a
    /// name from the server's profile file.
    #[arg(long, value_name = "PROFILE")]
    pub(crate) faults: Option<String>,
    /// Keep only these fault types of the profile (comma-separated).
    #[arg(long, value_delimiter = ',', requires = "faults")]
    pub(crate) only: Vec<String>,
    /// Deliver faults in-band, as error objects in the tool's text result,
    /// instead of as MCP tool errors (isError).
    #[arg(long)]
    pub(crate) in_band: bool,
    /// Real milliseconds per simulated millisecond of fault delays (0:
    /// never sleep; a call's `_meta` "toolenv/waited_ms" then declares the
    /// waits that let a rate limit pass).
    #[arg(long, default_value_t = 0.0)]
    pub(crate) time_scale: f64,
}

/// Serves until the client goes away (stdio) or a signal stops it (HTTP).
pub(crate) async fn mcp(args: McpArgs, url: Option<String>) -> anyhow::Result<ExitCode> {
    let source = match &args.run {
        Some(run_id) => {
            super::needs_server(url.as_deref())?;
            let worker = format!("mcp-{}", std::process::id());
            Source::Run { run_id: run_id.clone(), agent: args.label.clone(), worker }
        }
        None => {
            let task_id = args.task_id.clone().unwrap_or_default();
            let episode = EpisodeArgs {
                agent: AgentArg(toolenv_client::Agent::Reference),
                seed: args.seed,
                trial: args.trial,
                epsilon: args.epsilon,
                faults: args.faults.clone(),
                only: args.only.clone(),
                in_band: args.in_band,
                time_scale: args.time_scale,
                mas_faults: Vec::new(),
                mas_rate: 1.0,
                mas_roles: Vec::new(),
            };
            Source::Episode(Box::new(plan::episode(&episode, &task_id, Server::of(url.as_deref()))?.1))
        }
    };
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
    {
        anyhow::bail!("invalid --http {addr}: the MCP endpoint has no authentication, so it listens on loopback addresses only");
    }
    let embedded = match &url {
        Some(_) => None,
        None => Some(RunningServer::start(Config::default()).await.context("starting the embedded server")?),
    };
    let url = url.or_else(|| embedded.as_ref().map(RunningServer::url)).unwrap_or_default();
    let client = super::connect(&url).await?;
    let bridge = Bridge::start(client, source).await?;
    let served = match args.http {
        None => serve_stdio(bridge).await,
        Some(addr) => serve_http(bridge, addr).await,
    };
    if let Some(server) = embedded {
        server.shutdown().await?;
    }
    served.map(|()| ExitCode::SUCCESS)
}

async fn serve_stdio(bridge: Bridge) -> anyhow::Result<()> {
    let service = bridge.serve(rmcp::transport::stdio()).await.context("starting the MCP session on stdio")?;
    service.waiting().await.context("the MCP session on stdio")?;
    Ok(())
}

async fn serve_http(bridge: Bridge, addr: SocketAddr) -> anyhow::Result<()> {
    let service = StreamableHttpService::new(
        move || Ok(bridge.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    println!("http://{local}/mcp");
    eprintln!("toolenv MCP endpoint at http://{local}/mcp (streamable HTTP; Ctrl-C to stop)");
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            if let Err(error) = super::serve::shutdown_signal().await {
                tracing::warn!("waiting for a signal: {error}");
            }
        })
        .await
        .context("serving MCP over HTTP")
}
