//! `toolenv serve`: the environments over gRPC until SIGINT or SIGTERM.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use toolenv_runs::report::counted;
use toolenv_server::{Config, RunningServer};

use super::args::ServeArgs;

/// Serves until a signal asks to stop, then finishes the requests in flight.
pub(crate) async fn serve(args: ServeArgs, token: Option<String>, json_logs: bool) -> anyhow::Result<ExitCode> {
    let time_scale = toolenv_runs::check_time_scale(args.time_scale).context("invalid --time-scale")?;
    let fault_profiles = match &args.fault_profiles {
        None => Default::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let profiles: std::collections::BTreeMap<String, toolenv_core::chaos::FaultProfile> =
                serde_json::from_str(&text).with_context(|| format!("parsing fault profiles in {}", path.display()))?;
            for (name, profile) in &profiles {
                profile.validate().with_context(|| format!("fault profile '{name}' in {}", path.display()))?;
            }
            profiles
        }
    };
    let paraphrases = match &args.paraphrases {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let bank =
                toolenv_domains::perturb::ParaphraseBank::from_json(&text).with_context(|| format!("paraphrases in {}", path.display()))?;
            Some(std::sync::Arc::new(bank))
        }
    };
    let config = Config {
        paraphrases,
        tasks: super::filter::catalogue(&args.tasks)?,
        max_episodes: args.max_episodes,
        max_calls_per_episode: args.max_calls,
        max_argument_bytes: args.max_argument_bytes,
        episode_idle_timeout: Duration::from_secs(args.idle_timeout_secs.max(1)),
        time_scale,
        fault_profiles,
        store: (!args.no_store).then(|| args.store.store.clone()),
        metrics_addr: args.metrics_addr,
        security: security(&args, token)?,
        durability: args.durability.into(),
        abandoned_after: Duration::from_secs(args.abandoned_after_secs),
        answer_judge: args.judge.judge()?,
    };
    let traces_url = args.otlp_endpoint.as_deref().map(super::otlp::traces_url).transpose()?;
    let server = RunningServer::bind(args.addr, config).await?;
    let watcher = traces_url.map(|url| super::otlp::StoreWatcher::start(args.store.store.clone(), url)).transpose()?;
    let kept = if args.no_store {
        "in memory only".to_owned()
    } else {
        format!("in {}", toolenv_store::postgres::redact(&args.store.store.display().to_string()))
    };
    // The banner: plain lines for a person, or log events where logs are JSON.
    let say = |line: String| if json_logs { tracing::info!("{line}") } else { eprintln!("{line}") };
    say(format!("toolenv listening on {} (Ctrl-C to stop); hosted runs are kept {kept}", server.url()));
    if let Some(addr) = server.metrics_addr() {
        say(format!("Prometheus metrics at http://{addr}/metrics"));
    }
    for set in &args.tasks {
        say(format!("task file {}: {}, suite file:{}", set.name, counted(set.tasks.len() as u64, "task"), set.hash));
    }
    super::signal::shutdown_signal().await?;
    tracing::info!("shutting down: finishing requests in flight");
    server.shutdown().await?;
    if let Some(watcher) = watcher {
        watcher.stop().await;
    }
    Ok(ExitCode::SUCCESS)
}

/// The token and TLS identity `serve` was given.
fn security(args: &ServeArgs, token: Option<String>) -> anyhow::Result<toolenv_server::security::Security> {
    if let Some(token) = &token {
        toolenv_server::security::check_token(token).map_err(|e| anyhow::anyhow!("invalid --token: {e}"))?;
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(toolenv_server::security::TlsPem::read(cert, key).context("reading the TLS certificate and key")?),
        _ => None,
    };
    Ok(toolenv_server::security::Security { token, tls })
}
