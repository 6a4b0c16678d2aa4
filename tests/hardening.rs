//! Hostile and malformed requests: every input has a limit, errors quote
//! little, nonsense is refused, finished episodes free their place, slow
//! calls keep their lease, and undecodable bodies get the documented status.

use std::collections::{BTreeMap, HashMap};

use crate::support::{start, start_with};
use tonic::Code;
use tonic_types::StatusExt;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::worker::work;
use toolenv_core::chaos::{FaultParams, FaultProfile};
use toolenv_server::{Config, limits};

const TASK: &str = "scheduling/book-meeting/001";

/// The bytes a status takes on the wire as trailers (name and value of each).
fn trailer_bytes(status: &tonic::Status) -> usize {
    let mut headers = tonic::codegen::http::HeaderMap::new();
    status.add_header(&mut headers).expect("a status encodes as headers");
    headers.iter().map(|(name, value)| name.as_str().len() + value.len()).sum()
}

/// Asserts an INVALID_ARGUMENT naming `field` in its BadRequest, small on the wire.
fn assert_invalid(case: &str, result: Result<impl std::fmt::Debug, tonic::Status>, field: &str) {
    let status = match result {
        Err(status) => status,
        Ok(reply) => panic!("{case}: accepted: {reply:?}"),
    };
    assert_eq!(status.code(), Code::InvalidArgument, "{case}: {}", status.message());
    let named = status.get_details_bad_request().and_then(|b| b.field_violations.first().map(|v| v.field.clone()));
    assert_eq!(named.as_deref(), Some(field), "{case}: {}", status.message());
    assert_small(case, &status);
}

fn assert_small(case: &str, status: &tonic::Status) {
    let bytes = trailer_bytes(status);
    assert!(bytes < 4096, "{case}: the status takes {bytes} bytes of trailers: {}", status.message());
    assert!(status.message().len() <= limits::MAX_MESSAGE_BYTES, "{case}: {}", status.message());
}

/// Every string, list and map field of every RPC, oversized: refused with
/// the field named, and the whole status under 4 KiB.
#[tokio::test]
async fn every_oversized_field_of_every_rpc_is_refused_by_name_and_briefly() {
    let (server, mut client) = start().await;
    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    let run_request =
        pb::CreateRunRequest { agents: vec!["reference".into()], domain: pb::Domain::Scheduling.into(), ..Default::default() };
    let run = client.runs().create_run(run_request.clone()).await.unwrap().into_inner().run_id;
    // Longer than any limit, with multi-byte characters that would grow when percent-encoded.
    let huge = "é".repeat(300_000);
    let many = vec!["reference".to_owned(); limits::MAX_LIST_LEN + 1];
    let env = client.raw().clone();
    let runs = client.runs().clone();

    let create = |f: &dyn Fn(&mut pb::CreateEpisodeRequest)| {
        let mut request = pb::CreateEpisodeRequest { task_id: TASK.into(), ..Default::default() };
        f(&mut request);
        request
    };
    let profile = |f: &dyn Fn(&mut pb::FaultProfile)| {
        create(&|r| {
            let mut p = pb::FaultProfile::default();
            f(&mut p);
            r.fault_profile = Some(p);
        })
    };
    let call = |f: &dyn Fn(&mut pb::CallToolRequest)| {
        let mut request = pb::CallToolRequest {
            episode_id: episode.clone(),
            tool_name: "check_calendar".into(),
            arguments_json: "{}".into(),
            ..Default::default()
        };
        f(&mut request);
        request
    };
    let create_run = |f: &dyn Fn(&mut pb::CreateRunRequest)| {
        let mut request = run_request.clone();
        f(&mut request);
        request
    };
    let next = |f: &dyn Fn(&mut pb::NextEpisodeRequest)| {
        let mut request = pb::NextEpisodeRequest { run_id: run.clone(), ..Default::default() };
        f(&mut request);
        request
    };

    let mut e = env.clone();
    assert_invalid("GetTask.task_id", e.get_task(pb::GetTaskRequest { task_id: huge.clone() }).await, "task_id");
    assert_invalid("CreateEpisode.task_id", e.create_episode(create(&|r| r.task_id = huge.clone())).await, "task_id");
    assert_invalid("CreateEpisode.fault_profile.name", e.create_episode(profile(&|p| p.name = huge.clone())).await, "fault_profile.name");
    let weights = profile(&|p| {
        p.failure_rate = 0.1;
        p.fault_weights = HashMap::from([(huge.clone(), 1.0)]).into_iter().collect();
    });
    assert_invalid("CreateEpisode.fault_profile.fault_weights key", e.create_episode(weights).await, "fault_profile.fault_weights");
    let too_many_weights = profile(&|p| {
        p.failure_rate = 0.1;
        p.fault_weights = (0..=limits::MAX_MAP_LEN).map(|i| (format!("k{i}"), 0.01)).collect();
    });
    assert_invalid(
        "CreateEpisode.fault_profile.fault_weights size",
        e.create_episode(too_many_weights).await,
        "fault_profile.fault_weights",
    );
    assert_invalid(
        "CreateEpisode.fault_profile.only",
        e.create_episode(profile(&|p| p.only = vec![huge.clone()])).await,
        "fault_profile.only",
    );
    assert_invalid(
        "CreateEpisode.fault_profile.only size",
        e.create_episode(profile(&|p| p.only = many.clone())).await,
        "fault_profile.only",
    );
    assert_invalid("CallTool.episode_id", e.call_tool(call(&|r| r.episode_id = huge.clone())).await, "episode_id");
    assert_invalid("CallTool.tool_name", e.call_tool(call(&|r| r.tool_name = huge.clone())).await, "tool_name");
    assert_invalid("CallTool.arguments_json", e.call_tool(call(&|r| r.arguments_json = huge.clone())).await, "arguments_json");
    assert_invalid("CallTool.idempotency_key", e.call_tool(call(&|r| r.idempotency_key = huge.clone())).await, "idempotency_key");
    assert_invalid("CallTool.agent_id", e.call_tool(call(&|r| r.agent_id = huge.clone())).await, "agent_id");
    let finish = pb::FinishEpisodeRequest { episode_id: huge.clone(), ..Default::default() };
    assert_invalid("FinishEpisode.episode_id", e.finish_episode(finish).await, "episode_id");
    let finish = pb::FinishEpisodeRequest { episode_id: episode.clone(), answer: Some(huge.clone()), ..Default::default() };
    assert_invalid("FinishEpisode.answer", e.finish_episode(finish).await, "answer");
    let suite = pb::ListTasksRequest { suite: huge.clone(), ..Default::default() };
    assert_invalid("ListTasks.suite", e.list_tasks(suite).await, "suite");
    let page = pb::ListTasksRequest { page_token: huge.clone(), ..Default::default() };
    assert_invalid("ListTasks.page_token", e.list_tasks(page).await, "page_token");
    let role = |name: &str, prompt: &str| pb::Role { name: name.to_owned(), prompt: prompt.to_owned() };
    assert_invalid("CreateEpisode.roles.name", e.create_episode(create(&|r| r.roles = vec![role(&huge, "p")])).await, "roles.name");
    assert_invalid(
        "CreateEpisode.roles.prompt",
        e.create_episode(create(&|r| r.roles = vec![role("planner", &huge)])).await,
        "roles.prompt",
    );
    let mas = |faults: Vec<String>| pb::MasFaultProfile { faults, rate: 0.5, ..Default::default() };
    assert_invalid(
        "CreateEpisode.mas_faults.faults",
        e.create_episode(create(&|r| r.mas_faults = Some(mas(vec![huge.clone()])))).await,
        "mas_faults.faults",
    );
    assert_invalid(
        "CreateEpisode.mas_faults.faults size",
        e.create_episode(create(&|r| r.mas_faults = Some(mas(many.clone())))).await,
        "mas_faults.faults",
    );
    let join = pb::JoinEpisodeRequest { episode_id: episode.clone(), role: huge.clone() };
    assert_invalid("JoinEpisode.role", e.join_episode(join).await, "role");
    let join = pb::JoinEpisodeRequest { episode_id: huge.clone(), role: "planner".into() };
    assert_invalid("JoinEpisode.episode_id", e.join_episode(join).await, "episode_id");
    let fork = pb::ForkEpisodeRequest { episode_id: huge.clone(), ..Default::default() };
    assert_invalid("ForkEpisode.episode_id", e.fork_episode(fork).await, "episode_id");
    assert_invalid("GetTrajectory.episode_id", e.get_trajectory(pb::GetTrajectoryRequest { episode_id: huge.clone() }).await, "episode_id");

    let mut r = runs.clone();
    assert_invalid("CreateRun.description", r.create_run(create_run(&|q| q.description = huge.clone())).await, "description");
    assert_invalid("CreateRun.agents", r.create_run(create_run(&|q| q.agents = vec![huge.clone()])).await, "agents");
    assert_invalid("CreateRun.agents size", r.create_run(create_run(&|q| q.agents = many.clone())).await, "agents");
    assert_invalid("CreateRun.preset", r.create_run(create_run(&|q| q.preset = huge.clone())).await, "preset");
    assert_invalid(
        "CreateRun.fault_profiles",
        r.create_run(create_run(&|q| q.fault_profiles = vec![huge.clone()])).await,
        "fault_profiles",
    );
    assert_invalid("CreateRun.fault_profiles size", r.create_run(create_run(&|q| q.fault_profiles = many.clone())).await, "fault_profiles");
    assert_invalid(
        "CreateRun.epsilons size",
        r.create_run(create_run(&|q| q.epsilons = vec![0.0; limits::MAX_LIST_LEN + 1])).await,
        "epsilons",
    );
    assert_invalid("GetRun.run_id", r.get_run(pb::GetRunRequest { run_id: huge.clone() }).await, "run_id");
    assert_invalid("NextEpisode.run_id", r.next_episode(next(&|q| q.run_id = huge.clone())).await, "run_id");
    assert_invalid("NextEpisode.agent", r.next_episode(next(&|q| q.agent = huge.clone())).await, "agent");
    assert_invalid("NextEpisode.worker", r.next_episode(next(&|q| q.worker = huge.clone())).await, "worker");
    let report = pb::GetRunReportRequest { run_id: huge.clone(), ..Default::default() };
    assert_invalid("GetRunReport.run_id", r.get_run_report(report).await, "run_id");
    assert_invalid("NextEpisode.role", r.next_episode(next(&|q| q.role = huge.clone())).await, "role");
    assert_invalid("CreateRun.suite", r.create_run(create_run(&|q| q.suite = huge.clone())).await, "suite");
    let roles = vec![pb::Role { name: huge.clone(), prompt: String::new() }];
    assert_invalid("CreateRun.roles.name", r.create_run(create_run(&|q| q.roles = roles.clone())).await, "roles.name");
    let compare = |f: &dyn Fn(&mut pb::CompareRunsRequest)| {
        let mut request = pb::CompareRunsRequest { run_a: run.clone(), ..Default::default() };
        f(&mut request);
        request
    };
    assert_invalid("CompareRuns.run_a", r.compare_runs(compare(&|q| q.run_a = huge.clone())).await, "run_a");
    assert_invalid("CompareRuns.run_b", r.compare_runs(compare(&|q| q.run_b = huge.clone())).await, "run_b");
    assert_invalid("CompareRuns.agents", r.compare_runs(compare(&|q| q.agents = vec![huge.clone()])).await, "agents");

    // The server is still serving, and the episode still plays.
    client.call_json(&episode, "check_calendar", r#"{"date": "2026-01-01"}"#).await.unwrap();
    server.shutdown().await.unwrap();
}

/// Values under the limits that the server does not know come back quoted
/// briefly: at most 64 characters and a marker, never the whole value.
#[tokio::test]
async fn errors_quote_at_most_a_short_marked_prefix() {
    let (server, mut client) = start().await;
    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    let long_id = "x".repeat(limits::MAX_ID_BYTES);
    let mut env = client.raw().clone();

    let missing = env.get_task(pb::GetTaskRequest { task_id: long_id.clone() }).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    assert!(missing.message().contains(&format!("…(cut, {} bytes)", limits::MAX_ID_BYTES)), "{}", missing.message());
    assert!(!missing.message().contains(&long_id));
    assert_small("unknown task", &missing);
    let resource = missing.get_details_resource_info().expect("ResourceInfo names the task");
    assert!(resource.resource_name.chars().count() < limits::MAX_ECHO_CHARS + 30, "{}", resource.resource_name);

    let name = "t".repeat(limits::MAX_NAME_BYTES);
    let unknown_tool = client.call_json(&episode, &name, "{}").await.unwrap_err();
    let toolenv_client::ClientError::Status(status) = unknown_tool else { panic!("{unknown_tool:?}") };
    assert_eq!(status.code(), Code::NotFound);
    assert!(status.message().contains("…(cut,"), "{}", status.message());
    assert_small("unknown tool", &status);

    // An unknown argument name of 60 KB (inside the 64 KiB argument limit).
    let key = "k".repeat(60_000);
    let arguments = format!(r#"{{"{key}": 1, "date": "2026-01-01"}}"#);
    let status = env
        .call_tool(pb::CallToolRequest {
            episode_id: episode.clone(),
            tool_name: "check_calendar".into(),
            arguments_json: arguments,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let field = status.get_details_bad_request().unwrap().field_violations[0].field.clone();
    assert!(field.starts_with("arguments_json.kkk") && field.ends_with("…(cut, 60000 bytes)"), "{field}");
    assert_small("unknown argument", &status);
    server.shutdown().await.unwrap();
}

/// Unknown enum values, non-finite or negative figures and keys given twice
/// are refused as INVALID_ARGUMENT naming the field.
#[tokio::test]
async fn nonsense_values_are_refused() {
    let (server, mut client) = start().await;
    let mut env = client.raw().clone();
    let mut runs = client.runs().clone();
    let create = |f: &dyn Fn(&mut pb::CreateEpisodeRequest)| {
        let mut request = pb::CreateEpisodeRequest { task_id: TASK.into(), ..Default::default() };
        f(&mut request);
        request
    };
    let custom = |rate: f64, weight: f64| {
        create(&|r| {
            r.fault_profile = Some(pb::FaultProfile {
                failure_rate: rate,
                fault_weights: [("TransientTimeout".to_owned(), weight)].into_iter().collect(),
                ..Default::default()
            })
        })
    };
    assert_invalid("ListTasks.domain", env.list_tasks(pb::ListTasksRequest { domain: 99, ..Default::default() }).await, "domain");
    assert_invalid("CreateEpisode.fault_delivery", env.create_episode(create(&|r| r.fault_delivery = 7)).await, "fault_delivery");
    assert_invalid("CreateEpisode.epsilon NaN", env.create_episode(create(&|r| r.epsilon = f64::NAN)).await, "epsilon");
    assert_invalid("CreateEpisode.time_scale NaN", env.create_episode(create(&|r| r.time_scale = Some(f64::NAN))).await, "time_scale");
    assert_invalid(
        "CreateEpisode.time_scale -inf",
        env.create_episode(create(&|r| r.time_scale = Some(f64::NEG_INFINITY))).await,
        "time_scale",
    );
    assert_invalid("failure_rate NaN", env.create_episode(custom(f64::NAN, 1.0)).await, "fault_profile.failure_rate");
    assert_invalid("failure_rate inf", env.create_episode(custom(f64::INFINITY, 1.0)).await, "fault_profile.failure_rate");
    assert_invalid("fault weight NaN", env.create_episode(custom(0.1, f64::NAN)).await, "fault_profile.fault_weights");
    assert_invalid("fault weight negative", env.create_episode(custom(0.1, -1.0)).await, "fault_profile.fault_weights");

    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    let twice = pb::CallToolRequest {
        episode_id: episode.clone(),
        tool_name: "check_calendar".into(),
        arguments_json: r#"{"date": "2026-01-01", "date": "2026-01-02"}"#.into(),
        ..Default::default()
    };
    assert_invalid("a key given twice", env.call_tool(twice).await, "arguments_json.date");
    for cost in [f64::NAN, f64::NEG_INFINITY, f64::INFINITY, -1.0] {
        let usage = pb::Usage { input_tokens: 1, output_tokens: 1, cost_usd: Some(cost) };
        let finish = pb::FinishEpisodeRequest { episode_id: episode.clone(), usage: Some(usage), ..Default::default() };
        assert_invalid(&format!("usage.cost_usd {cost}"), env.finish_episode(finish).await, "usage.cost_usd");
    }

    let run = pb::CreateRunRequest { agents: vec!["reference".into()], domain: pb::Domain::Scheduling.into(), ..Default::default() };
    assert_invalid(
        "CreateRun.fault_delivery",
        runs.create_run(pb::CreateRunRequest { fault_delivery: 9, ..run.clone() }).await,
        "fault_delivery",
    );
    assert_invalid("CreateRun.domain", runs.create_run(pb::CreateRunRequest { domain: 42, ..run.clone() }).await, "domain");
    assert_invalid(
        "CreateRun.epsilons NaN",
        runs.create_run(pb::CreateRunRequest { epsilons: vec![f64::NAN], ..run.clone() }).await,
        "epsilons",
    );
    assert_invalid(
        "CreateRun.time_scale inf",
        runs.create_run(pb::CreateRunRequest { time_scale: Some(f64::INFINITY), ..run.clone() }).await,
        "time_scale",
    );
    // Finding 7: the request's own field, not the episode request's.
    let unknown = pb::CreateRunRequest { fault_profiles: vec!["no-such-profile".into()], ..run.clone() };
    assert_invalid("CreateRun unknown fault profile", runs.create_run(unknown).await, "fault_profiles");
    server.shutdown().await.unwrap();
}

/// Finishing an episode frees its live place at once; its trajectory and
/// verdict stay readable.
#[tokio::test]
async fn finished_episodes_free_their_place_at_once() {
    let (server, mut client) = start_with(Config { max_episodes: 2, ..Config::default() }).await;
    let mut first = None;
    for seed in 0..20 {
        let episode =
            client.create(crate::support::new_episode(TASK, seed, 0)).await.expect("a finished episode's place is free").episode_id;
        client.call_json(&episode, "book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#).await.unwrap();
        let verdict = client.finish(crate::support::finishing(&episode)).await.unwrap();
        first.get_or_insert((episode, verdict));
    }
    let (episode, verdict) = first.unwrap();
    assert_eq!(client.finish(crate::support::finishing(&episode)).await.unwrap(), verdict, "finishing again gives the same verdict");
    let trajectory = client.trajectory(&episode).await.unwrap();
    assert_eq!((trajectory.calls.len(), trajectory.verdict.as_ref()), (1, Some(&verdict)));
    let after = client.call_json(&episode, "check_calendar", r#"{"date": "2026-01-01"}"#).await.unwrap_err();
    assert!(matches!(&after, toolenv_client::ClientError::Status(s) if s.code() == Code::FailedPrecondition), "{after:?}");

    // Two live (unfinished) episodes fill it; the refusal says what frees room.
    client.create(crate::support::new_episode(TASK, 100, 0)).await.unwrap();
    client.create(crate::support::new_episode(TASK, 101, 0)).await.unwrap();
    let refused = client.create(crate::support::new_episode(TASK, 102, 0)).await.unwrap_err();
    let toolenv_client::ClientError::Status(status) = refused else { panic!("{refused:?}") };
    assert_eq!(status.code(), Code::ResourceExhausted);
    assert!(status.message().contains("finishing an episode frees its place at once"), "{}", status.message());
    // Marked as the server's quota, so an agent's client never takes it for its episode's.
    use tonic_types::StatusExt as _;
    let quota = status.get_details_quota_failure().expect("a QuotaFailure detail");
    assert_eq!(quota.violations.iter().map(|v| v.subject.as_str()).collect::<Vec<_>>(), [toolenv::SERVER_QUOTA]);
    server.shutdown().await.unwrap();
}

/// Calls three times longer than the lease, several workers: no lease is
/// lost, no episode changes hands, the run completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_longer_than_the_lease_keeps_its_episode() {
    let weights = BTreeMap::from([("TransientTimeout".to_owned(), 1.0)]);
    let params = FaultParams { timeout_ms: 1_200, ..FaultParams::default() };
    let slow = FaultProfile::custom(0.4, &weights, params).unwrap();
    let config = Config { fault_profiles: BTreeMap::from([("slow".to_owned(), slow)]), ..Config::default() };
    let (server, mut client) = start_with(config).await;
    let request = pb::CreateRunRequest {
        agents: vec!["reference".into()],
        domain: pb::Domain::Scheduling.into(),
        level: 1,
        fault_profiles: vec!["slow".into()],
        trials: 2,
        // 1 200 simulated ms are 600 real ms: three leases of 200 ms.
        time_scale: Some(0.5),
        lease_timeout_ms: 200,
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    let mut workers = tokio::task::JoinSet::new();
    for i in 0..3 {
        let (mut client, run_id) = (client.clone(), run.run_id.clone());
        workers.spawn(async move {
            let mut played = Vec::new();
            let summary = work(&mut client, &run_id, Builtin::Reference, "reference", &format!("w{i}"), |lease, _, _| {
                played.push((lease.plan_index, lease.episode.clone().unwrap_or_default().episode_id));
            })
            .await
            .expect("the worker runs to the end");
            (summary, played)
        });
    }
    let mut by_index = BTreeMap::new();
    // Without the fix the workers take the episodes from each other forever:
    // fail instead of hanging.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
    while let Some(joined) = tokio::time::timeout_at(deadline, workers.join_next()).await.expect("the run completes (no lease ping-pong)") {
        let (summary, played) = joined.unwrap();
        assert_eq!(summary.lost_leases, 0, "a lease expired under a call in flight");
        for (index, episode_id) in played {
            assert!(by_index.insert(index, episode_id).is_none(), "plan entry {index} played twice");
        }
    }
    assert_eq!(by_index.len() as u64, run.planned);
    let progress = client.runs().get_run(pb::GetRunRequest { run_id: run.run_id.clone() }).await.unwrap().into_inner();
    assert!(progress.complete, "{progress:?}");
    let mut slow_calls = 0;
    for episode_id in by_index.values() {
        let trajectory = client.trajectory(episode_id).await.unwrap();
        slow_calls += trajectory.calls.iter().filter(|c| c.fault.as_ref().is_some_and(|f| f.kind == "TransientTimeout")).count();
    }
    assert!(slow_calls > 0, "no call was longer than the lease: the test tests nothing");
    server.shutdown().await.unwrap();
}

/// A body that does not decode as the request message (a truncated field,
/// invalid UTF-8 in a string) gets INTERNAL, as the gRPC status code table
/// says for a request that cannot be parsed (tonic's behaviour), with a
/// message saying so; the server keeps serving.
#[tokio::test]
async fn an_undecodable_body_gets_the_documented_status() {
    let (server, mut client) = start().await;
    let channel = tonic::transport::Endpoint::from_shared(server.url()).unwrap().connect().await.unwrap();
    let cases: [(&str, Vec<u8>); 3] = [
        // Field 1 (task_id), length 10, then only 2 bytes.
        ("truncated field", vec![0x0a, 10, b'a', b'b']),
        // Field 1 (task_id), a 2-byte string that is not UTF-8.
        ("invalid utf-8", vec![0x0a, 2, 0xff, 0xfe]),
        // A field tag with wire type 7, which does not exist.
        ("bad wire type", vec![0x0f]),
    ];
    for (case, body) in cases {
        let mut grpc = tonic::client::Grpc::new(channel.clone());
        grpc.ready().await.unwrap();
        let path = tonic::codegen::http::uri::PathAndQuery::from_static("/toolenv.v1.ToolEnv/GetTask");
        let status = grpc.unary::<Vec<u8>, Vec<u8>, _>(tonic::Request::new(body), path, RawCodec).await.unwrap_err();
        assert_eq!(status.code(), Code::Internal, "{case}: {status:?}");
        assert!(status.message().contains("decode"), "{case}: {}", status.message());
    }
    assert_eq!(client.get_task(TASK).await.unwrap().summary.unwrap().id, TASK, "still serving");
    server.shutdown().await.unwrap();
}

/// Sends and receives message bytes as they are: a raw gRPC frame.
#[derive(Debug, Clone, Default)]
struct RawCodec;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }
    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl tonic::codec::Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut tonic::codec::EncodeBuf<'_>) -> Result<(), tonic::Status> {
        use bytes::BufMut;
        dst.put_slice(&item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut tonic::codec::DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        use bytes::Buf;
        let mut bytes = vec![0; src.remaining()];
        src.copy_to_slice(&mut bytes);
        Ok(Some(bytes))
    }
}
