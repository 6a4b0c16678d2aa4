//! Waiting for the signal that stops a long-running command (`serve`,
//! `mcp --http`, `chaos --listen`): SIGINT (Ctrl-C) or SIGTERM.

/// Resolves at the first SIGINT or SIGTERM.
pub(crate) async fn shutdown_signal() -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            result = tokio::signal::ctrl_c() => result?,
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await?;
    Ok(())
}
