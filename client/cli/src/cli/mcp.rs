//! `toolenv mcp`: an episode, or a hosted run's episodes one after another,
//! served to an MCP client over stdio or streamable HTTP by
//! [`toolenv_mcp::Bridge`], a thin adapter over the gRPC server at --url
//! (or an embedded one).

use std::net::SocketAddr;
use std::process::ExitCode;

use anyhow::Context as _;
use toolenv_mcp::{Bridge, Source};

use super::args::McpArgs;
use super::plan::{self, Server};

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
