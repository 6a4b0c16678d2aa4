//! `--otlp-endpoint URL`: each episode's trace ([`toolenv_runs::otlp`]) sent
//! live to an OpenTelemetry collector, as OTLP/HTTP with JSON bodies (a POST
//! to `URL/v1/traces` per episode), as the episode ends.
//!
//! Sending happens on a task of its own, off the path that plays episodes:
//! [`Exporter::send`] only queues the trace. A collector that refuses or
//! cannot be reached costs the traces, never the run; [`Exporter::finish`]
//! waits for the queue to drain and says how many were sent.

use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper_util::client::legacy::{Client as HttpClient, connect::HttpConnector};
use tokio::sync::mpsc;
use toolenv::pb;
use toolenv_runs::PlannedEpisode;
use toolenv_runs::metrics::EpisodeResult;

/// How long one POST may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Where traces go: the collector's base URL (`/v1/traces` is added unless
/// the URL ends with it already), checked before anything is played.
pub(crate) fn traces_url(endpoint: &str) -> anyhow::Result<String> {
    let base = endpoint.trim_end_matches('/');
    let url = if base.ends_with("/v1/traces") { base.to_owned() } else { format!("{base}/v1/traces") };
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.parse::<hyper::Uri>().is_err() {
        anyhow::bail!("--otlp-endpoint must be an http(s) URL such as http://127.0.0.1:4318, got {endpoint:?}");
    }
    Ok(url)
}

/// The sending task and its queue.
pub(crate) struct Exporter {
    queue: mpsc::UnboundedSender<Bytes>,
    task: tokio::task::JoinHandle<(u64, u64, Option<String>)>,
    url: String,
}

impl Exporter {
    /// Starts sending to `url` (as [`traces_url`] made it).
    pub(crate) fn start(url: String) -> anyhow::Result<Exporter> {
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())?
            .https_or_http()
            .enable_http1()
            .build();
        let http: HttpClient<_, Full<Bytes>> = HttpClient::builder(hyper_util::rt::TokioExecutor::new()).build(connector);
        let (queue, mut received) = mpsc::unbounded_channel::<Bytes>();
        let target = url.clone();
        let task = tokio::spawn(async move {
            let (mut sent, mut failed, mut first_error) = (0u64, 0u64, None);
            while let Some(body) = received.recv().await {
                match post(&http, &target, body).await {
                    Ok(()) => sent += 1,
                    Err(error) => {
                        failed += 1;
                        tracing::warn!(url = %target, %error, "trace not sent");
                        first_error.get_or_insert(error);
                    }
                }
            }
            (sent, failed, first_error)
        });
        Ok(Exporter { queue, task, url })
    }

    /// Queues the trace of one episode.
    pub(crate) fn send(
        &self,
        run: &str,
        index: usize,
        planned: Option<&PlannedEpisode>,
        result: &EpisodeResult,
        trajectory: Option<&pb::Trajectory>,
    ) {
        let trace = toolenv_runs::otlp::episode_trace(run, index, planned, result, trajectory);
        // The task ends only when the queue is dropped, so sending cannot fail.
        let _ = self.queue.send(Bytes::from(trace.to_string()));
    }

    /// Waits until every queued trace was posted and says how it went on stderr.
    pub(crate) async fn finish(self) {
        drop(self.queue);
        match self.task.await {
            Ok((sent, 0, _)) => eprintln!("sent {sent} traces to {}", self.url),
            Ok((sent, failed, error)) => {
                eprintln!("sent {sent} traces to {}; {failed} could not be sent (the first: {})", self.url, error.unwrap_or_default())
            }
            Err(error) => eprintln!("the trace exporter stopped: {error}"),
        }
    }
}

async fn post(http: &HttpClient<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>, url: &str, body: Bytes) -> Result<(), String> {
    let request = hyper::Request::post(url)
        .header("content-type", "application/json")
        .body(Full::new(body))
        .map_err(|e| format!("cannot build the request: {e}"))?;
    let exchange = async {
        let response = http.request(request).await.map_err(|e| format!("connection failed: {e}"))?;
        let status = response.status();
        let body = response.into_body().collect().await.map_err(|e| format!("reading the reply failed: {e}"))?.to_bytes();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&body).chars().take(200).collect::<String>()))
        }
    };
    tokio::time::timeout(TIMEOUT, exchange).await.map_err(|_| format!("timed out after {} s", TIMEOUT.as_secs()))?
}

/// `serve --otlp-endpoint`: the traces of the episodes workers record in
/// the server's store, sent as they are recorded. The server is not asked
/// for anything: a thread of its own reads the store every [`POLL`], beside
/// it (store reads block, so not on the runtime's threads).
pub(crate) struct StoreWatcher {
    stop: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<Exporter>,
}

/// How often [`StoreWatcher`] reads the store.
const POLL: Duration = Duration::from_secs(1);

impl StoreWatcher {
    /// Watches the store at `path` (which the server creates); episodes
    /// already recorded when it starts are not sent.
    pub(crate) fn start(path: std::path::PathBuf, url: String) -> anyhow::Result<StoreWatcher> {
        let exporter = Exporter::start(url)?;
        let (stop, stopped) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new().name("otlp-store-watcher".into()).spawn(move || {
            let mut seen = Seen::default();
            seen.poll(&path, None);
            loop {
                let stopping = !matches!(stopped.recv_timeout(POLL), Err(std::sync::mpsc::RecvTimeoutError::Timeout));
                seen.poll(&path, Some(&exporter));
                if stopping {
                    return exporter;
                }
            }
        })?;
        Ok(StoreWatcher { stop, thread })
    }

    /// Sends what was recorded since the last read, then stops.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        match tokio::task::spawn_blocking(move || self.thread.join()).await {
            Ok(Ok(exporter)) => exporter.finish().await,
            _ => eprintln!("the store watcher of --otlp-endpoint stopped early; some traces were not sent"),
        }
    }
}

/// The recorded episodes already seen: (run, plan index, attempts before
/// it), so that an infrastructure error replaced by a verdict is sent again.
#[derive(Default)]
struct Seen {
    episodes: std::collections::HashSet<(String, usize, u32)>,
    /// Per run, the summary's figures when last read: a run whose figures
    /// did not change is not read again.
    runs: std::collections::HashMap<String, (u64, u64, u32)>,
    /// The store, once it exists.
    store: Option<toolenv_store::AnyStore>,
}

impl Seen {
    /// Reads the store and sends (when `exporter` is given) the episodes not seen yet.
    fn poll(&mut self, path: &std::path::Path, exporter: Option<&Exporter>) {
        let mut read = || -> Result<(), toolenv_store::StoreError> {
            if self.store.is_none() {
                self.store = Some(toolenv_store::AnyStore::open_existing(path)?);
            }
            let Some(store) = &self.store else { return Ok(()) };
            for summary in store.runs()? {
                let figures = (summary.finished(), summary.infra_errors, summary.sessions);
                if self.runs.get(summary.id.as_str()) == Some(&figures) {
                    continue;
                }
                let plan = store.plan(&summary.id)?;
                for episode in store.episodes(&summary.id)? {
                    let key = (summary.id.to_string(), episode.plan_index, episode.replaced_infra_errors);
                    if self.episodes.insert(key)
                        && let Some(exporter) = exporter
                    {
                        let planned = plan.get(episode.plan_index);
                        exporter.send(summary.id.as_str(), episode.plan_index, planned, &episode.result, episode.trajectory.as_ref());
                    }
                }
                self.runs.insert(summary.id.to_string(), figures);
            }
            Ok(())
        };
        if let Err(error) = read() {
            tracing::debug!(%error, "store not read for traces");
        }
    }
}
