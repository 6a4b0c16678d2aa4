//! Prometheus metrics (`serve --metrics-addr`): scraped over real HTTP after
//! real episodes under faults, a refused call and a hosted run, and checked
//! against the trajectories the server recorded.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use crate::support::start_with;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::play;
use toolenv_server::Config;

/// One scrape: the HTTP status line, the content type, and each sample by
/// its series (`name{labels}` as written).
struct Scrape {
    status: String,
    content_type: String,
    samples: BTreeMap<String, f64>,
    text: String,
}

impl Scrape {
    /// A sample's value; a series never written reads 0, as Prometheus would
    /// treat a counter that has not started.
    fn value(&self, series: &str) -> f64 {
        self.samples.get(series).copied().unwrap_or(0.0)
    }

    /// The sum over the series of `name` whose labels contain every `(label, value)`.
    fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|(series, _)| series.split('{').next() == Some(name))
            .filter(|(series, _)| labels.iter().all(|(l, v)| series.contains(&format!("{l}=\"{v}\""))))
            .map(|(_, v)| v)
            .sum()
    }
}

/// GET /metrics over a plain TCP connection, as Prometheus does.
async fn scrape(addr: SocketAddr, path: &str) -> Scrape {
    http(addr, "GET", path).await
}

/// One HTTP/1.1 request over a plain TCP connection.
async fn http(addr: SocketAddr, method: &str, path: &str) -> Scrape {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("the metrics endpoint accepts connections");
    let request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("request sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).await.expect("response read");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    let status = head.lines().next().unwrap_or_default().to_owned();
    let content_type = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.trim().to_owned()))
        .unwrap_or_default();
    let exposition = content_type.starts_with("application/openmetrics-text");
    let samples = body
        .lines()
        .filter(|_| exposition)
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("a sample line");
            (series.to_owned(), value.parse().unwrap_or_else(|_| panic!("a number in {l:?}")))
        })
        .collect();
    Scrape { status, content_type, samples, text: body.to_owned() }
}

/// The outcome label of a recorded call, as the metrics name it.
fn outcome(call: &pb::ToolCallRecord) -> &'static str {
    use pb::tool_call_record::Outcome;
    match call.outcome {
        Some(Outcome::ResultJson(_)) => "result",
        Some(Outcome::RawResult(_)) => "partial",
        Some(Outcome::Error(_)) => "domain_error",
        Some(Outcome::Failure(_)) => "fault",
        Some(Outcome::Invalid(_)) | None => "invalid",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_counts_the_episodes_calls_faults_and_runs_the_server_saw() {
    let config = Config { metrics_addr: Some(SocketAddr::from(([127, 0, 0, 1], 0))), time_scale: 0.0, ..Config::default() };
    let (server, mut client) = start_with(config).await;
    let addr = server.metrics_addr().expect("metrics are served");

    let before = scrape(addr, "/metrics").await;
    assert_eq!(before.status, "HTTP/1.1 200 OK");
    assert!(before.content_type.starts_with("application/openmetrics-text"), "{}", before.content_type);
    assert_eq!(before.value("toolenv_episodes_live"), 0.0);
    assert!(before.text.ends_with("# EOF\n"), "an OpenMetrics exposition ends with # EOF");

    // Every travel and support task, played to the end by the reference
    // agent at λ = 0.3 (faults as statuses), three seeds each.
    let mut trajectories = Vec::new();
    for task in toolenv_domains::suite()
        .iter()
        .filter(|t| [toolenv_domains::registry::TRAVEL, toolenv_domains::registry::SUPPORT].contains(&t.domain))
    {
        for seed in 0..3 {
            let request = pb::CreateEpisodeRequest {
                task_id: task.id.clone(),
                seed,
                fault_profile: Some(pb::FaultProfile { name: "0.3".into(), ..Default::default() }),
                time_scale: Some(0.0),
                ..Default::default()
            };
            trajectories.push(play(&mut client, Builtin::Reference, request).await.expect("the episode plays").trajectory);
        }
    }
    // Two episodes left open, and a call to an episode that does not exist.
    for _ in 0..2 {
        client.create(crate::support::new_episode("travel/cheapest-flight/001", 0, 0)).await.expect("episode starts");
    }
    let refused = client.call_json("ep-00000000000000000000000000000000", "search_flights", "{}").await;
    assert!(refused.is_err(), "an unknown episode is refused");
    // A hosted run of the scheduling tasks, worked to the end.
    let request = pb::CreateRunRequest {
        agents: vec!["reference".into()],
        domain: pb::Domain::Scheduling.into(),
        time_scale: Some(0.0),
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.expect("run created").into_inner();
    let worked = toolenv_client::worker::work(&mut client, &run.run_id, Builtin::Reference, "reference", "w", |_, _, _| {}).await;
    let worked = worked.expect("the run is worked to the end");

    let after = scrape(addr, "/metrics").await;
    assert_eq!(after.value("toolenv_episodes_live"), 2.0, "the two unfinished episodes");
    assert_eq!(after.value("toolenv_episodes_held") as usize, trajectories.len() + 2 + worked.played as usize);
    let per_domain = trajectories.len() / 2;
    assert_eq!(after.value(r#"toolenv_episodes_created_total{domain="travel"}"#) as usize, per_domain + 2);
    assert_eq!(after.value(r#"toolenv_episodes_created_total{domain="support"}"#) as usize, per_domain);
    let finished = |domain| after.sum("toolenv_episodes_finished_total", &[("domain", domain)]) as usize;
    assert_eq!((finished("travel"), finished("support"), finished("scheduling")), (per_domain, per_domain, worked.played as usize));
    let passed = trajectories.iter().filter(|t| t.verdict.as_ref().is_some_and(|v| v.passed)).count();
    let passed_metric = after.sum("toolenv_episodes_finished_total", &[("verdict", "pass")]) as usize;
    assert_eq!(passed_metric, passed + worked.passed as usize);

    // Every call of the trajectories, by domain, tool, outcome and fault kind.
    let mut expected: BTreeMap<String, f64> = BTreeMap::new();
    let mut per_tool: BTreeMap<(String, String), f64> = BTreeMap::new();
    for trajectory in &trajectories {
        let domain = trajectory.task_id.split('/').next().unwrap_or_default().to_owned();
        for call in &trajectory.calls {
            let fault = call.fault.as_ref().map_or("none", |f| f.kind.as_str());
            let series = format!(
                r#"toolenv_tool_calls_total{{domain="{domain}",tool="{}",outcome="{}",fault="{fault}"}}"#,
                call.tool_name,
                outcome(call)
            );
            *expected.entry(series).or_default() += 1.0;
            *per_tool.entry((domain.clone(), call.tool_name.clone())).or_default() += 1.0;
        }
    }
    assert!(expected.keys().any(|s| s.contains(r#"outcome="fault""#)), "λ = 0.3 met some calls with faults");
    let measured: BTreeMap<String, f64> = after
        .samples
        .iter()
        .filter(|(s, _)| s.starts_with("toolenv_tool_calls_total{") && !s.contains(r#"domain="scheduling""#))
        .map(|(s, v)| (s.clone(), *v))
        .collect();
    assert_eq!(measured, expected);
    for ((domain, tool), calls) in &per_tool {
        let series = format!(r#"toolenv_tool_call_duration_seconds_count{{domain="{domain}",tool="{tool}"}}"#);
        assert_eq!(after.value(&series), *calls, "{series}");
    }
    assert_eq!(after.value(r#"toolenv_tool_calls_refused_total{code="NotFound"}"#), 1.0);

    // The hosted run's progress.
    let state = |s: &str| after.value(&format!(r#"toolenv_run_episodes{{run="{}",state="{s}"}}"#, run.run_id));
    assert_eq!(state("planned"), run.planned as f64);
    assert_eq!(state("passed") + state("failed"), run.planned as f64);
    assert_eq!((state("leased"), state("waiting")), (0.0, 0.0));

    // Anything but /metrics is not found.
    assert_eq!(scrape(addr, "/other").await.status, "HTTP/1.1 404 Not Found");
    assert_eq!(http(addr, "POST", "/metrics").await.status, "HTTP/1.1 405 Method Not Allowed");
    server.shutdown().await.expect("clean shutdown");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "the endpoint stops with the server");
}

#[tokio::test]
async fn without_a_metrics_address_there_is_no_endpoint() {
    let (server, _client) = start_with(Config::default()).await;
    assert_eq!(server.metrics_addr(), None);
    server.shutdown().await.expect("clean shutdown");
}
