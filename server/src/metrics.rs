//! Prometheus metrics of a server (`serve --metrics-addr`): episodes live,
//! created and finished; tool calls by tool, outcome and fault kind, with
//! their latency; refused requests; hosted runs' progress. Served as
//! OpenMetrics text over plain HTTP at `/metrics` on their own address.
//!
//! Counters and histograms are updated as requests go by; gauges of what
//! the server holds (live episodes, runs' progress) are read at scrape time
//! ([`Collector`]), so they are exact and cost nothing between scrapes. The
//! metrics only observe: nothing here decides anything about an episode.
//! They exist only when asked for, so a server without them pays nothing.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry as MetricRegistry, Unit};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use toolenv_core::Outcome;

use crate::{
    fault::Outgoing,
    registry::{Registry, Session},
    runs::RunHost,
};

/// The content type of the OpenMetrics text format.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DomainLabels {
    domain: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    domain: &'static str,
    verdict: &'static str,
}

/// A tool call: its tool, how it was answered, and the fault that met it.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct CallLabels {
    domain: &'static str,
    tool: &'static str,
    /// `result`, `partial` (cut short), `domain_error` (a broken business
    /// rule) or `fault` (an injected failure, as a status or in band).
    outcome: &'static str,
    /// The fault kind that took effect on the call, or `none`.
    fault: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    domain: &'static str,
    tool: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusalLabels {
    /// The gRPC status code, e.g. `NotFound`.
    code: &'static str,
}

/// A status code's name as its `Debug` form writes it, e.g. `NotFound`,
/// without writing a string for every refusal.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "Ok",
        Code::Cancelled => "Cancelled",
        Code::Unknown => "Unknown",
        Code::InvalidArgument => "InvalidArgument",
        Code::DeadlineExceeded => "DeadlineExceeded",
        Code::NotFound => "NotFound",
        Code::AlreadyExists => "AlreadyExists",
        Code::PermissionDenied => "PermissionDenied",
        Code::ResourceExhausted => "ResourceExhausted",
        Code::FailedPrecondition => "FailedPrecondition",
        Code::Aborted => "Aborted",
        Code::OutOfRange => "OutOfRange",
        Code::Unimplemented => "Unimplemented",
        Code::Internal => "Internal",
        Code::Unavailable => "Unavailable",
        Code::DataLoss => "DataLoss",
        Code::Unauthenticated => "Unauthenticated",
    }
}

impl CallLabels {
    /// The labels of a call the session just answered with `outgoing`.
    pub(crate) fn of(session: &Session, outgoing: &Outgoing) -> CallLabels {
        let task = session.episode.task();
        let record = session.episode.trajectory().calls.last().filter(|c| c.index == outgoing.index);
        let tool = record.and_then(|r| task.tools().iter().find(|t| t.name == r.tool)).map_or("unknown", |t| t.name);
        let outcome = match &outgoing.outcome {
            Outcome::Result(_) => "result",
            Outcome::Raw(_) => "partial",
            Outcome::Error(_) => "domain_error",
            Outcome::Failure(_) => "fault",
            Outcome::Invalid(_) => "invalid",
        };
        let fault = record.and_then(|r| r.fault.as_ref()).map_or("none", |f| f.kind.name());
        CallLabels { domain: task.domain.name(), tool, outcome, fault }
    }
}

/// The server's metrics.
#[derive(Debug)]
pub(crate) struct Metrics {
    registry: MetricRegistry,
    created: Family<DomainLabels, Counter>,
    finished: Family<VerdictLabels, Counter>,
    calls: Family<CallLabels, Counter>,
    latency: Family<ToolLabels, Histogram, fn() -> Histogram>,
    refused: Family<RefusalLabels, Counter>,
}

fn latency_histogram() -> Histogram {
    // 100 µs to about 26 s: in-process calls at time scale 0 up to real fault delays.
    Histogram::new(exponential_buckets(0.0001, 4.0, 10))
}

impl Metrics {
    /// Metrics over the episodes of `episodes` and the runs of `runs`.
    pub(crate) fn new(episodes: Arc<Registry>, runs: Arc<RunHost>, rebuilt: Option<Counter>) -> Metrics {
        let mut registry = MetricRegistry::with_prefix("toolenv");
        if let Some(rebuilt) = rebuilt {
            registry.register("episodes_rebuilt", "Episodes this replica rebuilt from the durable log by replay", rebuilt);
        }
        let created = Family::<DomainLabels, Counter>::default();
        registry.register("episodes_created", "Episodes created, by domain", created.clone());
        let finished = Family::<VerdictLabels, Counter>::default();
        registry.register("episodes_finished", "Episodes finished (first finish), by domain and verdict", finished.clone());
        let calls = Family::<CallLabels, Counter>::default();
        registry.register("tool_calls", "Tool calls answered, by domain, tool, outcome and the fault kind that took effect", calls.clone());
        let latency = Family::<ToolLabels, Histogram, fn() -> Histogram>::new_with_constructor(latency_histogram);
        registry.register_with_unit(
            "tool_call_duration",
            "Time from a tool call's arrival to its reply, simulated fault delays included",
            Unit::Seconds,
            latency.clone(),
        );
        let refused = Family::<RefusalLabels, Counter>::default();
        registry.register("tool_calls_refused", "Tool calls refused before reaching an episode, by gRPC status code", refused.clone());
        registry.register_collector(Box::new(Held { episodes, runs }));
        Metrics { registry, created, finished, calls, latency, refused }
    }

    /// An episode of `domain` was created.
    pub(crate) fn episode_created(&self, domain: &'static str) {
        self.created.get_or_create(&DomainLabels { domain }).inc();
    }

    /// An episode of `domain` was finished for the first time.
    pub(crate) fn episode_finished(&self, domain: &'static str, passed: bool) {
        let verdict = if passed { "pass" } else { "fail" };
        self.finished.get_or_create(&VerdictLabels { domain, verdict }).inc();
    }

    /// A tool call was answered after `elapsed`.
    pub(crate) fn call(&self, labels: &CallLabels, elapsed: Duration) {
        self.calls.get_or_create(labels).inc();
        let tool = ToolLabels { domain: labels.domain, tool: labels.tool };
        self.latency.get_or_create(&tool).observe(elapsed.as_secs_f64());
    }

    /// A tool call was refused with `code`.
    pub(crate) fn refused(&self, code: tonic::Code) {
        self.refused.get_or_create(&RefusalLabels { code: code_name(code) }).inc();
    }

    /// The metrics as OpenMetrics text.
    pub(crate) fn encode(&self) -> String {
        let mut text = String::with_capacity(8 * 1024);
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// What the server holds, read at scrape time.
#[derive(Debug)]
struct Held {
    episodes: Arc<Registry>,
    runs: Arc<RunHost>,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RunLabels {
    run: String,
    /// `planned`, `passed`, `failed`, `leased` or `waiting`.
    state: &'static str,
}

impl Collector for Held {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let (held, live) = self.episodes.census();
        let gauge = ConstGauge::new(live as i64);
        gauge.encode(encoder.encode_descriptor("episodes_live", "Episodes created and not yet finished", None, gauge.metric_type())?)?;
        let gauge = ConstGauge::new(held as i64);
        gauge.encode(encoder.encode_descriptor(
            "episodes_held",
            "Episodes held, live or finished (finished ones stay readable until they expire)",
            None,
            gauge.metric_type(),
        )?)?;
        let runs = self.runs.progress_all();
        let mut family = encoder.encode_descriptor(
            "run_episodes",
            "Planned episodes of each hosted run this server has loaded, by state",
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        for run in &runs {
            for (state, value) in
                [("planned", run.planned), ("passed", run.passed), ("failed", run.failed), ("leased", run.leased), ("waiting", run.waiting)]
            {
                let labels = RunLabels { run: run.run_id.clone(), state };
                ConstGauge::new(value as i64).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

/// The `/metrics` endpoint, serving until stopped.
#[derive(Debug)]
pub(crate) struct Endpoint {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Endpoint {
    /// Binds `addr` (so scrapes can start at once) and serves `metrics` there.
    pub(crate) async fn bind(addr: SocketAddr, metrics: Arc<Metrics>) -> std::io::Result<Endpoint> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let (stop, mut stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    _ = &mut stopped => break,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(error) => {
                            tracing::warn!(%error, "metrics endpoint: accept failed");
                            continue;
                        }
                    },
                };
                let metrics = metrics.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let response = respond(&metrics, &request);
                        async move { Ok::<_, Infallible>(response) }
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    if let Err(error) = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await {
                        tracing::debug!(%error, "metrics endpoint: connection ended badly");
                    }
                });
            }
        });
        tracing::info!(%addr, "metrics endpoint listening on /metrics");
        Ok(Endpoint { addr, stop, task })
    }

    /// The address it listens on.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting scrapes.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// The reply to one HTTP request: the metrics at `/metrics`, nothing elsewhere.
fn respond<B>(metrics: &Metrics, request: &hyper::Request<B>) -> hyper::Response<String> {
    let reply = |status: u16, content_type: &str, body: String| {
        hyper::Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(body)
            .unwrap_or_else(|_| hyper::Response::new(String::new()))
    };
    match (request.method(), request.uri().path()) {
        (&hyper::Method::GET, "/metrics") => reply(200, CONTENT_TYPE, metrics.encode()),
        (&hyper::Method::GET, "/") => reply(200, "text/plain; charset=utf-8", "toolenv: metrics at /metrics\n".to_owned()),
        (_, "/metrics" | "/") => reply(405, "text/plain; charset=utf-8", "only GET\n".to_owned()),
        _ => reply(404, "text/plain; charset=utf-8", "not found; metrics are at /metrics\n".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_are_the_debug_names() {
        for code in 0..=16 {
            let code = tonic::Code::from_i32(code);
            assert_eq!(code_name(code), format!("{code:?}"));
        }
    }
}
