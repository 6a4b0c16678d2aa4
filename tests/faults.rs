//! Injected faults as a real tonic client sees them, in both delivery modes.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::start;
use futures::future::join_all;
use prost::Message;
use tonic::Code;
use tonic_types::StatusExt;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::{Client, ClientError, play};
use toolenv_core::{
    Episode, Outcome,
    chaos::{Chaos, FaultKind, FaultParams, FaultProfile},
};

/// A request whose every call meets `kind` (delivered as `delivery`).
fn always(task: &str, kind: &str, delivery: pb::FaultDelivery, time_scale: f64) -> pb::CreateEpisodeRequest {
    pb::CreateEpisodeRequest {
        task_id: task.into(),
        seed: 1,
        trial: 0,
        fault_profile: Some(pb::FaultProfile {
            failure_rate: 1.0,
            fault_weights: BTreeMap::from([(kind.to_owned(), 1.0)]),
            params: Some(pb::FaultParams {
                timeout_ms: Some(100),
                latency_min_ms: Some(200),
                latency_max_ms: Some(400),
                ..Default::default()
            }),
            ..Default::default()
        }),
        fault_delivery: delivery.into(),
        time_scale: Some(time_scale),
        ..Default::default()
    }
}

const CALENDAR: (&str, &str) = ("check_calendar", r#"{"date": "2026-01-01"}"#);
const BOOK: (&str, &str) = ("book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#);

/// What the status of a failure carries.
#[derive(Debug, PartialEq)]
struct Seen {
    code: Code,
    reason: Option<String>,
    retry_delay: Option<Duration>,
    pushback: Option<String>,
}

fn seen(status: &tonic::Status) -> Seen {
    Seen {
        code: status.code(),
        reason: status.get_details_error_info().map(|i| i.reason),
        retry_delay: status.get_details_retry_info().and_then(|r| r.retry_delay),
        pushback: status.metadata().get("grpc-retry-pushback-ms").map(|v| v.to_str().unwrap().to_owned()),
    }
}

fn expect(code: Code, reason: &str, retry_delay: Option<u64>, pushback: Option<&str>) -> Seen {
    Seen { code, reason: Some(reason.into()), retry_delay: retry_delay.map(Duration::from_millis), pushback: pushback.map(Into::into) }
}

async fn call(client: &mut Client, episode: &str, (tool, args): (&str, &str)) -> Result<pb::CallToolResponse, tonic::Status> {
    client.call_json(episode, tool, args).await.map_err(|e| match e {
        ClientError::Status(status) => status,
        other => panic!("{other}"),
    })
}

fn result_json(reply: &pb::CallToolResponse) -> &str {
    match &reply.outcome {
        Some(pb::call_tool_response::Outcome::ResultJson(text)) => text,
        other => panic!("expected a result, got {other:?}"),
    }
}

#[tokio::test]
async fn failures_arrive_as_statuses_with_details_and_trailers() {
    let (server, mut client) = start().await;
    let status = pb::FaultDelivery::Status;
    // time scale 0.1: retry delays of 1000 simulated ms are 100 real ms.
    let cases = [
        ("TransientTimeout", expect(Code::DeadlineExceeded, "UPSTREAM_TIMEOUT", None, None)),
        ("ConnectionReset", expect(Code::Unavailable, "CONNECTION_RESET", None, None)),
        ("SoftRateLimit", expect(Code::ResourceExhausted, "RATE_LIMIT_EXCEEDED", Some(100), Some("100"))),
        ("HardRateLimit", expect(Code::PermissionDenied, "CONSUMER_SUSPENDED", None, Some("-1"))),
    ];
    for (kind, expected) in cases {
        let episode = client.create(always("scheduling/book-meeting/001", kind, status, 0.1)).await.unwrap().episode_id;
        let error = call(&mut client, &episode, CALENDAR).await.unwrap_err();
        assert_eq!(seen(&error), expected, "{kind}");
        assert!(!error.message().is_empty());
    }

    // A cascade: the first call and the next three fail, all as outages or overloads.
    let episode = client.create(always("scheduling/book-meeting/001", "CascadingFailure", status, 0.0)).await.unwrap().episode_id;
    for _ in 0..4 {
        let error = call(&mut client, &episode, CALENDAR).await.unwrap_err();
        assert!(matches!(error.code(), Code::Unavailable | Code::ResourceExhausted), "{error:?}");
    }
    let ledger = client.trajectory(&episode).await.unwrap();
    let new: Vec<bool> = ledger.calls.iter().map(|c| c.fault.as_ref().unwrap().new).collect();
    assert_eq!(new, [true, false, false, false], "one cascade, carried over three calls");

    // A timeout really waits (time scale 1, 100 simulated ms).
    let episode = client.create(always("scheduling/book-meeting/001", "TransientTimeout", status, 1.0)).await.unwrap().episode_id;
    let started = std::time::Instant::now();
    let _ = call(&mut client, &episode, CALENDAR).await;
    assert!(started.elapsed() >= Duration::from_millis(100));

    // An ambiguous commit: the reply is lost, yet the write happened.
    let episode = client.create(always("scheduling/book-meeting/001", "AmbiguousCommit", status, 0.0)).await.unwrap().episode_id;
    let error = call(&mut client, &episode, BOOK).await.unwrap_err();
    assert!(matches!(error.code(), Code::DeadlineExceeded | Code::Unavailable));
    assert!(client.finish(crate::support::finishing(&episode)).await.unwrap().passed, "the booking was applied");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn modified_replies_are_ok_and_valid_messages() {
    let (server, mut client) = start().await;
    let status = pb::FaultDelivery::Status;
    let search = ("search_flights", r#"{"origin": "LON", "dest": "PAR", "date": "2026-01-05"}"#);
    let task = "travel/cheapest-flight/001";

    let episode = client.create(always(task, "HighLatency", status, 0.0)).await.unwrap().episode_id;
    let reply = call(&mut client, &episode, search).await.unwrap();
    assert!(result_json(&reply).contains("AA-500"));
    let delay = client.trajectory(&episode).await.unwrap().calls[0].delay_ms;
    assert!((200..=400).contains(&delay), "the simulated latency is recorded: {delay}");

    let episode = client.create(always(task, "EmptyResponse", status, 0.0)).await.unwrap().episode_id;
    assert_eq!(result_json(&call(&mut client, &episode, search).await.unwrap()), "{}");

    let episode = client.create(always(task, "PartialResponse", status, 0.0)).await.unwrap().episode_id;
    let cut: serde_json::Value = serde_json::from_str(result_json(&call(&mut client, &episode, search).await.unwrap())).unwrap();
    assert_eq!(cut["flights"].as_array().unwrap().len(), 1);

    let episode = client.create(always(task, "SchemaDrift", status, 0.0)).await.unwrap().episode_id;
    let drifted: serde_json::Value = serde_json::from_str(result_json(&call(&mut client, &episode, search).await.unwrap())).unwrap();
    assert_eq!(drifted["api_version"], "v2");
    assert!(drifted.to_string().contains("flight_number"), "{drifted}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn in_band_delivery_carries_the_same_fault_inside_an_ok_reply() {
    let (server, mut client) = start().await;
    let cases = [
        ("TransientTimeout", "DEADLINE_EXCEEDED", "UPSTREAM_TIMEOUT", serde_json::Value::Null),
        ("ConnectionReset", "UNAVAILABLE", "CONNECTION_RESET", serde_json::Value::Null),
        ("SoftRateLimit", "RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED", serde_json::json!(100)),
        ("HardRateLimit", "PERMISSION_DENIED", "CONSUMER_SUSPENDED", serde_json::json!(-1)),
    ];
    for (kind, code, reason, retry) in cases {
        let request = always("scheduling/book-meeting/001", kind, pb::FaultDelivery::InBand, 0.1);
        let episode = client.create(request).await.unwrap().episode_id;
        let reply = call(&mut client, &episode, CALENDAR).await.expect("in-band faults are OK replies");
        let value: serde_json::Value = serde_json::from_str(result_json(&reply)).unwrap();
        let error = &value["error"];
        assert_eq!((error["code"].as_str(), error["reason"].as_str()), (Some(code), Some(reason)), "{kind}: {value}");
        assert_eq!(error["retry_after_ms"], retry, "{kind}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_soft_rate_limit_window_is_enforced_in_real_time() {
    let (server, mut client) = start().await;
    // retry_after 1000 simulated ms at time scale 0.05: 50 real ms.
    let request = always("scheduling/book-meeting/001", "SoftRateLimit", pb::FaultDelivery::Status, 0.05);
    let episode = client.create(request).await.unwrap().episode_id;
    let _ = call(&mut client, &episode, CALENDAR).await;
    let _ = call(&mut client, &episode, CALENDAR).await;
    tokio::time::sleep(Duration::from_millis(120)).await;
    let _ = call(&mut client, &episode, CALENDAR).await;
    let calls = client.trajectory(&episode).await.unwrap().calls;
    let new: Vec<bool> = calls.iter().map(|c| c.fault.as_ref().unwrap().new).collect();
    assert_eq!(new, [true, false, true], "an early retry is rejected by the same window; a late one gets a new draw");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn invalid_fault_profiles_name_the_field() {
    let (server, mut client) = start().await;
    let base = || pb::CreateEpisodeRequest { task_id: "scheduling/book-meeting/001".into(), ..Default::default() };
    let profile = |p: pb::FaultProfile| pb::CreateEpisodeRequest { fault_profile: Some(p), ..base() };
    let weights = |pairs: &[(&str, f64)]| pairs.iter().map(|&(k, v)| (k.to_owned(), v)).collect::<BTreeMap<_, _>>();
    let cases = [
        (
            profile(pb::FaultProfile { failure_rate: 1.5, fault_weights: weights(&[("TransientTimeout", 1.0)]), ..Default::default() }),
            "fault_profile.failure_rate",
        ),
        (
            profile(pb::FaultProfile { failure_rate: 0.1, fault_weights: weights(&[("TransientTimeout", 0.7)]), ..Default::default() }),
            "fault_profile.fault_weights",
        ),
        (
            profile(pb::FaultProfile { failure_rate: 0.1, fault_weights: weights(&[("Gremlins", 1.0)]), ..Default::default() }),
            "fault_profile.fault_weights",
        ),
        (profile(pb::FaultProfile { name: "0.7".into(), ..Default::default() }), "fault_profile.name"),
        (profile(pb::FaultProfile { name: "0.2".into(), only: vec!["Gremlins".into()], ..Default::default() }), "fault_profile.only"),
        (profile(pb::FaultProfile { name: "0.1".into(), only: vec!["SchemaDrift".into()], ..Default::default() }), "fault_profile.only"),
        (
            profile(pb::FaultProfile {
                name: "0.2".into(),
                params: Some(pb::FaultParams { latency_min_ms: Some(9_000), latency_max_ms: Some(10), ..Default::default() }),
                ..Default::default()
            }),
            "fault_profile.params.latency_min_ms",
        ),
        (pb::CreateEpisodeRequest { time_scale: Some(-1.0), ..base() }, "time_scale"),
    ];
    for (request, field) in cases {
        let status = client.raw().create_episode(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{field}: {status:?}");
        let named = status.get_details_bad_request().unwrap().field_violations[0].field.clone();
        assert_eq!(named, field, "{}", status.message());
    }
    // The paper's ablation by name works.
    let ablation = profile(pb::FaultProfile { name: "rate-limit-only".into(), ..Default::default() });
    let episode = client.create(ablation).await.unwrap();
    assert!(episode.fault_profile_json.contains("SoftRateLimit") && !episode.fault_profile_json.contains("TransientTimeout"));
    server.shutdown().await.unwrap();
}

/// A profile of recoverable faults only, at a high rate.
fn recoverable(task: &str, seed: u64) -> pb::CreateEpisodeRequest {
    let kinds = [
        "TransientTimeout",
        "HighLatency",
        "EmptyResponse",
        "ConnectionReset",
        "SoftRateLimit",
        "PartialResponse",
        "CascadingFailure",
        "AmbiguousCommit",
    ];
    pb::CreateEpisodeRequest {
        task_id: task.into(),
        seed,
        trial: 0,
        fault_profile: Some(pb::FaultProfile {
            failure_rate: 0.3,
            fault_weights: kinds.iter().map(|k| (k.to_string(), 1.0 / kinds.len() as f64)).collect(),
            ..Default::default()
        }),
        fault_delivery: pb::FaultDelivery::Status.into(),
        time_scale: Some(0.0),
        ..Default::default()
    }
}

#[tokio::test]
async fn the_retrying_agent_passes_every_task_under_recoverable_faults() {
    let (server, mut client) = start().await;
    let (mut retry_passes, mut no_retry_passes, mut faults) = (0, 0, 0);
    for task in toolenv_domains::suite() {
        for seed in 0..4 {
            for delivery in [pb::FaultDelivery::Status, pb::FaultDelivery::InBand] {
                let request = pb::CreateEpisodeRequest { fault_delivery: delivery.into(), ..recoverable(&task.id, seed) };
                let outcome = play(&mut client, Builtin::Reference, request.clone()).await.unwrap();
                assert!(outcome.verdict.passed, "{} seed {seed} {delivery:?}: {:#?}", task.id, outcome.verdict);
                retry_passes += 1;
                faults += outcome.verdict.fault_stats.unwrap().encountered;
                let blind = play(&mut client, Builtin::ReferenceNoRetry, request).await.unwrap();
                no_retry_passes += u32::from(blind.verdict.passed);
            }
        }
    }
    assert!(faults > 100, "the agent met faults: {faults}");
    assert!(no_retry_passes < retry_passes - 10, "without retries: {no_retry_passes}/{retry_passes}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_gives_the_same_faults_at_concurrency_1_and_64() {
    let (server, client) = start().await;
    let requests: Vec<pb::CreateEpisodeRequest> = toolenv_domains::suite()
        .iter()
        .flat_map(|t| {
            (0..4).map(move |seed| pb::CreateEpisodeRequest {
                task_id: t.id.clone(),
                seed,
                fault_profile: Some(pb::FaultProfile { name: "0.3".into(), ..Default::default() }),
                time_scale: Some(0.0),
                ..Default::default()
            })
        })
        .collect();
    let mut one = client.clone();
    let mut sequential = Vec::new();
    for request in &requests {
        sequential.push(play(&mut one, Builtin::Reference, request.clone()).await.unwrap().trajectory.encode_to_vec());
    }
    for chunk in requests.chunks(64).zip(sequential.chunks(64)) {
        let concurrent = join_all(chunk.0.iter().map(|request| {
            let mut client = client.clone();
            async move { play(&mut client, Builtin::Reference, request.clone()).await.unwrap().trajectory.encode_to_vec() }
        }))
        .await;
        assert_eq!(concurrent, chunk.1);
    }
    assert!(sequential.iter().any(|t| pb::Trajectory::decode(t.as_slice()).unwrap().calls.iter().any(|c| c.fault.is_some())));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn hard_rate_limit_fails_the_task_and_the_verdict_says_why() {
    let (server, mut client) = start().await;
    let request = always("travel/cheapest-flight/001", "HardRateLimit", pb::FaultDelivery::Status, 0.0);
    let outcome = play(&mut client, Builtin::Reference, request).await.unwrap();
    assert!(!outcome.verdict.passed);
    assert_eq!(outcome.verdict.fault_notes, ["suspended by HardRateLimit at call 0; 3 later calls refused"]);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn named_profiles_from_the_server_profile_file_are_used_by_name() {
    let file = r#"{"resets": {"failure_rate": 1.0, "fault_weights": {"ConnectionReset": 1.0}}, "0.1": {"failure_rate": 0.0}}"#;
    let fault_profiles = serde_json::from_str(file).unwrap();
    let (server, mut client) = crate::support::start_with(toolenv_server::Config { fault_profiles, ..Default::default() }).await;
    let named = |name: &str| pb::CreateEpisodeRequest {
        task_id: "scheduling/book-meeting/001".into(),
        fault_profile: Some(pb::FaultProfile { name: name.into(), ..Default::default() }),
        time_scale: Some(0.0),
        ..Default::default()
    };
    let episode = client.create(named("resets")).await.unwrap().episode_id;
    assert_eq!(call(&mut client, &episode, CALENDAR).await.unwrap_err().code(), Code::Unavailable);
    // A file profile shadows the preset of the same name.
    let episode = client.create(named("0.1")).await.unwrap();
    assert!(episode.fault_profile_json.contains(r#""failure_rate":0.0"#), "{}", episode.fault_profile_json);
    server.shutdown().await.unwrap();
}

/// For every fault kind (the list the core derives, so a new kind is covered
/// here without a line more) and both delivery modes, the wire carries what
/// the same episode played in-process delivers: the result text, the domain
/// error, or the failure as a status (code, reason, message) or in band; and
/// the server's ledger is the in-process one.
#[tokio::test]
async fn every_kind_reaches_the_wire_as_the_episode_delivers_it() {
    use pb::call_tool_response::Outcome as Wire;
    let (server, mut client) = start().await;
    let task = toolenv_domains::task("scheduling/book-meeting/001").unwrap();
    let params = FaultParams { timeout_ms: 100, latency_min_ms: 200, latency_max_ms: 400, ..Default::default() };
    let calls = [BOOK, CALENDAR, BOOK, CALENDAR];
    let mut statuses = 0;
    for kind in FaultKind::ALL {
        let weights = BTreeMap::from([(kind.name().to_owned(), 1.0)]);
        for delivery in [pb::FaultDelivery::Status, pb::FaultDelivery::InBand] {
            let in_band = delivery == pb::FaultDelivery::InBand;
            let episode = client.create(always(&task.id, kind.name(), delivery, 0.0)).await.unwrap().episode_id;
            let chaos = Chaos::new(FaultProfile::custom(1.0, &weights, params.clone()).unwrap()).unwrap();
            let mut local = Episode::new(task, 1, 0).with_chaos(chaos);
            for (i, &(tool, arguments)) in calls.iter().enumerate() {
                let wire = call(&mut client, &episode, (tool, arguments)).await;
                let expected = local.call(tool, arguments).unwrap().clone();
                let context = format!("{kind} {delivery:?} call {i}: {:?}", expected.outcome);
                match (&expected.outcome, wire) {
                    (Outcome::Failure(failure), Err(status)) if !in_band => {
                        statuses += 1;
                        let code = format!("{:?}", status.code()).to_uppercase();
                        assert_eq!(code, failure.code.name().replace('_', ""), "{context}");
                        assert_eq!(status.message(), failure.message, "{context}");
                        assert_eq!(status.get_details_error_info().unwrap().reason, failure.reason, "{context}");
                    }
                    (Outcome::Failure(failure), Ok(reply)) if in_band => {
                        assert_eq!(reply.call_index, expected.index, "{context}");
                        let value: serde_json::Value = serde_json::from_str(result_json(&reply)).unwrap();
                        assert_eq!(value, failure.in_band(0.0), "{context}");
                    }
                    (Outcome::Result(text) | Outcome::Raw(text), Ok(reply)) => {
                        assert_eq!((reply.call_index, result_json(&reply)), (expected.index, text.as_str()), "{context}");
                    }
                    (Outcome::Error(error), Ok(reply)) => match reply.outcome {
                        Some(Wire::Error(e)) => assert_eq!((e.code.as_str(), e.message), (error.code, error.message.clone()), "{context}"),
                        other => panic!("{context}: got {other:?}"),
                    },
                    (_, wire) => panic!("{context}: got {wire:?}"),
                }
            }
            let ledger = client.trajectory(&episode).await.unwrap();
            assert_eq!(ledger.calls, pb::Trajectory::from(local.trajectory()).calls, "{kind} {delivery:?}");
        }
    }
    assert!(statuses >= 20, "statuses were checked: {statuses}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn at_time_scale_0_the_rate_limit_window_passes_only_with_declared_waits() {
    let (server, mut client) = start().await;
    let request = always("scheduling/book-meeting/001", "SoftRateLimit", pb::FaultDelivery::Status, 0.0);
    let episode = client.create(request).await.unwrap().episode_id;
    let (tool, args) = CALENDAR;
    let mut messages = Vec::new();
    for waited_ms in [None, None, Some(400), Some(600)] {
        let status = client
            .call(pb::CallToolRequest {
                episode_id: episode.to_owned(),
                tool_name: tool.to_owned(),
                arguments_json: args.to_owned(),
                idempotency_key: String::new(),
                waited_ms,
                agent_id: String::new(),
                user_answer: None,
                expected_index: None,
            })
            .await
            .unwrap_err();
        let ClientError::Status(status) = status else { panic!("{status}") };
        let info = status.get_details_error_info().unwrap();
        messages.push((status.message().to_owned(), info.metadata.get("retry_after_virtual_ms").cloned()));
    }
    let calls = client.trajectory(&episode).await.unwrap().calls;
    let seen: Vec<(bool, u64)> = calls.iter().map(|c| (c.fault.as_ref().unwrap().new, c.waited_ms)).collect();
    assert_eq!(seen, [(true, 0), (false, 0), (false, 400), (true, 600)], "no time passes unless declared");
    let expected = [
        ("rate limit exceeded; retry after 1000 ms", "1000"),
        ("retried before the retry delay passed; retry after 1000 ms", "1000"),
        ("retried before the retry delay passed; retry after 600 ms", "600"),
        ("rate limit exceeded; retry after 1000 ms", "1000"),
    ];
    let expected: Vec<_> = expected.iter().map(|(m, v)| (m.to_string(), Some(v.to_string()))).collect();
    assert_eq!(messages, expected, "the remainder is virtual");
    server.shutdown().await.unwrap();
}

/// Rate limits, timeouts and cascades with short delays, so that time scale 1 is quick.
fn timed(task: &str, seed: u64, time_scale: f64, delivery: pb::FaultDelivery) -> pb::CreateEpisodeRequest {
    let kinds = ["SoftRateLimit", "TransientTimeout", "CascadingFailure", "HighLatency"];
    pb::CreateEpisodeRequest {
        task_id: task.into(),
        seed,
        trial: 0,
        fault_profile: Some(pb::FaultProfile {
            failure_rate: 0.35,
            fault_weights: kinds.iter().map(|k| (k.to_string(), 0.25)).collect(),
            params: Some(pb::FaultParams {
                timeout_ms: Some(15),
                retry_after_ms: Some(40),
                latency_min_ms: Some(5),
                latency_max_ms: Some(20),
                ..Default::default()
            }),
            ..Default::default()
        }),
        fault_delivery: delivery.into(),
        time_scale: Some(time_scale),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_waits_give_the_same_trajectory_at_time_scale_0_and_1() {
    let (server, client) = start().await;
    // The episodes wait in real time at scale 1: all are played at once.
    let mut episodes = Vec::new();
    for task in toolenv_domains::suite().iter().step_by(3) {
        for (seed, delivery) in [(0, pb::FaultDelivery::Status), (1, pb::FaultDelivery::InBand)] {
            for agent in [Builtin::Reference, Builtin::Solver] {
                let mut client = client.clone();
                episodes.push(async move {
                    let at = |scale| timed(&task.id, seed, scale, delivery);
                    let virtual_only = play(&mut client, agent, at(0.0)).await.unwrap();
                    let real = play(&mut client, agent, at(1.0)).await.unwrap();
                    (task, seed, delivery, agent, virtual_only, real)
                });
            }
        }
    }
    let (mut compared, mut windows) = (0, 0);
    for (task, seed, delivery, agent, virtual_only, real) in futures::future::join_all(episodes).await {
        let (a, b) = (&virtual_only.trajectory, &real.trajectory);
        assert_eq!(a.calls, b.calls, "{} seed {seed} {delivery:?} {}", task.id, agent.name());
        assert_eq!(a.verdict, b.verdict, "{} seed {seed} {}", task.id, agent.name());
        assert!(virtual_only.verdict.passed, "{} seed {seed} {}: {:?}", task.id, agent.name(), virtual_only.verdict.fault_notes);
        windows += a.calls.iter().filter(|c| c.fault.as_ref().is_some_and(|f| f.kind == "SoftRateLimit") && c.waited_ms > 0).count();
        windows += a.calls.iter().filter(|c| c.drawn_without_effect.is_empty() && c.fault.is_none() && c.waited_ms >= 40).count();
        compared += 1;
    }
    assert!(compared >= 20 && windows > 5, "{compared} episodes, {windows} declared waits that mattered");
    server.shutdown().await.unwrap();
}
