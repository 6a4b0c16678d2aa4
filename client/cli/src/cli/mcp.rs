//! `toolenv mcp`: an episode, or a hosted run's episodes one after another,
//! served to an MCP client over stdio or streamable HTTP by
//! [`toolenv_mcp::Bridge`], a thin adapter over the gRPC server at --url
//! (or an embedded one).

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context as _;
use toolenv_mcp::{Bridge, Source};

use super::args::EpisodeArgs;
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
    #[arg(long, value_name = "RUN", conflicts_with_all = ["seed", "trial", "epsilon", "faults", "only", "in_band", "time_scale", "mas_faults"])]
    pub(crate) run: Option<String>,
    /// With --run: play the episodes planned for this agent label (default: any).
    #[arg(long, requires = "run", default_value = "")]
    pub(crate) label: String,
    /// Serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8000;
    /// port 0 picks one) at the path /mcp, instead of stdio. The endpoint's
    /// URL is printed on stdout.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<SocketAddr>,
    #[command(flatten)]
    pub(crate) episode: EpisodeArgs,
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
            Source::Episode(Box::new(plan::episode(&args.episode, "mcp", &task_id, Server::of(url.as_deref()))?))
        }
    };
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
    {
        anyhow::bail!("invalid --http {addr}: the MCP endpoint has no authentication, so it listens on loopback addresses only");
    }
    let mut session = super::Session::open(url, toolenv_domains::taskfile::Catalogue::new()).await?;
    if let Some(run) = &args.run
        && !args.label.is_empty()
    {
        super::hosted::planned_for(&mut session.client, run, &args.label).await?;
    }
    let bridge = Bridge::start(session.client.clone(), source).await?;
    let served = match args.http {
        None => toolenv_mcp::serve_stdio(bridge).await.map_err(anyhow::Error::from),
        Some(addr) => serve_http(bridge, addr).await,
    };
    session.close(served).await
}

async fn serve_http(bridge: Bridge, addr: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    println!("http://{local}/mcp");
    eprintln!("toolenv MCP endpoint at http://{local}/mcp (streamable HTTP; Ctrl-C to stop)");
    let shutdown = async {
        if let Err(error) = super::signal::shutdown_signal().await {
            tracing::warn!("waiting for a signal: {error}");
        }
    };
    Ok(toolenv_mcp::serve_http(bridge, listener, shutdown).await?)
}
