use crate::support::start;
use prost::Message;
use serde_json::{Value, json};
use tonic::Code;
use tonic_types::StatusExt;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::{Client, ClientError, run_plan};
use toolenv_core::{
    CallOptions, Episode, RoleSpec,
    masfire::{MasFault, MasProfile},
};
use toolenv_domains::suite;
use toolenv_runs::metrics::{InfraConvention, Population};
use toolenv_runs::{Grid, masfire};

const FLIGHT: &str = "travel/cheapest-flight/001";

fn roles(names: &[&str]) -> Vec<pb::Role> {
    names.iter().map(|n| pb::Role::from(&RoleSpec::standard(n))).collect()
}

fn profile(fault: MasFault) -> pb::MasFaultProfile {
    pb::MasFaultProfile::from(&MasProfile::of(vec![fault], 1.0))
}

async fn team_episode(client: &mut Client, task: &str, names: &[&str], fault: Option<MasFault>) -> pb::Episode {
    let request = pb::CreateEpisodeRequest {
        task_id: task.to_owned(),
        seed: 3,
        roles: roles(names),
        mas_faults: fault.map(profile),
        ..Default::default()
    };
    client.create(request).await.expect("a multi-agent episode")
}

async fn join(client: &mut Client, episode: &pb::Episode, role: &str) -> pb::JoinEpisodeResponse {
    client.join(&episode.episode_id, role).await.expect("joins")
}

async fn call(
    client: &mut Client,
    episode: &pb::Episode,
    agent: &str,
    tool: &str,
    args: Value,
) -> Result<pb::CallToolResponse, ClientError> {
    client
        .call(pb::CallToolRequest {
            episode_id: episode.episode_id.clone(),
            tool_name: tool.to_owned(),
            arguments_json: args.to_string(),
            idempotency_key: String::new(),
            waited_ms: Some(0),
            agent_id: agent.to_owned(),
            user_answer: None,
            expected_index: None,
        })
        .await
}

fn result(reply: &pb::CallToolResponse) -> Value {
    match &reply.outcome {
        Some(pb::call_tool_response::Outcome::ResultJson(text)) => serde_json::from_str(text).expect("JSON result"),
        other => panic!("expected a result, got {other:?}"),
    }
}

/// The injections recorded on one call of a trajectory, as JSON.
fn injections(trajectory: &pb::Trajectory, index: u32) -> Vec<Value> {
    trajectory.calls[index as usize].mas_faults.iter().map(|i| serde_json::from_str(&i.detail_json).unwrap()).collect()
}

/// What the tool returns without faults: the same call in a plain in-process episode.
fn plain(task: &str, tool: &str, args: &Value) -> Value {
    let mut episode = Episode::new(toolenv_domains::task(task).unwrap(), 3, 0);
    let record = episode.call_with(tool, &args.to_string(), &CallOptions::default()).unwrap();
    record.outcome.result_value().expect("a result")
}

fn status(result: Result<impl std::fmt::Debug, ClientError>) -> tonic::Status {
    match result {
        Err(ClientError::Status(status)) => status,
        other => panic!("expected an error status, got {other:?}"),
    }
}

fn field(status: &tonic::Status) -> Option<String> {
    status.get_details_bad_request().and_then(|b| b.field_violations.first().map(|v| v.field.clone()))
}

#[tokio::test]
async fn roles_join_and_the_bus_carry_messages_in_sequence_order() {
    let (server, mut client) = start().await;
    let episode = team_episode(&mut client, FLIGHT, &["planner", "executor"], None).await;
    let names: Vec<&str> = episode.tools.iter().map(|t| t.name.as_str()).collect();
    for bus in ["send_message", "read_inbox", "read_pool", "ask_user"] {
        assert!(names.contains(&bus), "{names:?}");
    }
    assert_eq!(episode.roles.len(), 2);
    let planner = join(&mut client, &episode, "planner").await;
    let executor = join(&mut client, &episode, "executor").await;
    assert_eq!((planner.agent_id.as_str(), executor.agent_id.as_str()), ("planner-1", "executor-1"));
    assert_eq!(planner.system_prompt, RoleSpec::standard("planner").prompt);
    assert_eq!(planner.description, episode.description);
    // To an agent by id, to a role, and to everyone.
    for (to, body) in [("executor-1", "one"), ("executor", "two"), ("*", "three")] {
        let sent = call(&mut client, &episode, "planner-1", "send_message", json!({"to": to, "body": body})).await.unwrap();
        assert_eq!(result(&sent)["sent"], true);
    }
    let inbox = result(&call(&mut client, &episode, "executor-1", "read_inbox", json!({})).await.unwrap());
    let bodies: Vec<&str> = inbox["messages"].as_array().unwrap().iter().map(|m| m["body"].as_str().unwrap()).collect();
    assert_eq!(bodies, ["one", "two", "three"]);
    assert_eq!(inbox["last_seq"], 3);
    let after = result(&call(&mut client, &episode, "executor-1", "read_inbox", json!({"after_seq": 2})).await.unwrap());
    assert_eq!(after["messages"].as_array().unwrap().len(), 1);
    // The sender does not get its own broadcast; the pool has everything.
    let own = result(&call(&mut client, &episode, "planner-1", "read_inbox", json!({})).await.unwrap());
    assert!(own["messages"].as_array().unwrap().is_empty());
    let pool = result(&call(&mut client, &episode, "planner-1", "read_pool", json!({})).await.unwrap());
    assert_eq!(pool["messages"].as_array().unwrap().len(), 3);
    // Calls are tagged with the agent and its role.
    client.finish(crate::support::finishing(&episode.episode_id)).await.unwrap();
    let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
    assert_eq!(trajectory.calls[0].tool_name, "join");
    assert_eq!((trajectory.calls[2].agent_id.as_str(), trajectory.calls[2].role.as_str()), ("planner-1", "planner"));
    assert_eq!(trajectory.roles.len(), 2);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn bus_limits_and_bad_requests_get_clear_errors() {
    let (server, mut client) = start().await;
    let episode = team_episode(&mut client, FLIGHT, &["planner", "executor"], None).await;
    // No agent id, an unknown one, an unknown role.
    let s = status(call(&mut client, &episode, "", "search_flights", json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"})).await);
    assert_eq!((s.code(), field(&s).as_deref()), (Code::InvalidArgument, Some("agent_id")), "{s:?}");
    let s = status(call(&mut client, &episode, "ghost-1", "read_inbox", json!({})).await);
    assert_eq!((s.code(), field(&s).as_deref()), (Code::InvalidArgument, Some("agent_id")), "{s:?}");
    let s = status(client.join(&episode.episode_id, "critic").await);
    assert_eq!((s.code(), field(&s).as_deref()), (Code::InvalidArgument, Some("role")), "{s:?}");
    assert!(s.message().contains("planner, executor"), "{s:?}");
    join(&mut client, &episode, "planner").await;
    // A body too large, and a recipient that does not exist.
    let big = "x".repeat(toolenv_core::bus::MAX_MESSAGE_BYTES + 1);
    let s = status(call(&mut client, &episode, "planner-1", "send_message", json!({"to": "executor", "body": big})).await);
    assert_eq!((s.code(), field(&s).as_deref()), (Code::InvalidArgument, Some("arguments_json.body")), "{s:?}");
    let reply = call(&mut client, &episode, "planner-1", "send_message", json!({"to": "nobody", "body": "hi"})).await.unwrap();
    match reply.outcome {
        Some(pb::call_tool_response::Outcome::Error(e)) => assert_eq!(e.code, "UNKNOWN_RECIPIENT"),
        other => panic!("{other:?}"),
    }
    // The most messages an episode accepts, then RESOURCE_EXHAUSTED.
    for _ in 0..toolenv_core::bus::MAX_MESSAGES {
        call(&mut client, &episode, "planner-1", "send_message", json!({"to": "executor", "body": "ping"})).await.unwrap();
    }
    let s = status(call(&mut client, &episode, "planner-1", "send_message", json!({"to": "executor", "body": "ping"})).await);
    assert_eq!(s.code(), Code::ResourceExhausted, "{s:?}");
    assert!(s.message().contains("100"), "{s:?}");
    // Bad roles and profiles at creation.
    let dup = pb::CreateEpisodeRequest { task_id: FLIGHT.into(), roles: roles(&["planner", "planner"]), ..Default::default() };
    let s = status(client.create(dup).await);
    assert_eq!(field(&s).as_deref(), Some("roles"), "{s:?}");
    let bad = pb::MasFaultProfile { faults: vec!["gremlins".into()], rate: 0.5, ..Default::default() };
    let request = pb::CreateEpisodeRequest { task_id: FLIGHT.into(), mas_faults: Some(bad), ..Default::default() };
    let s = status(client.create(request).await);
    assert_eq!(field(&s).as_deref(), Some("mas_faults"), "{s:?}");
    assert!(s.message().contains("hallucination"), "lists the known types: {s:?}");
    // Joining a single-agent episode.
    let single = client.create(crate::support::new_episode(FLIGHT, 0, 0)).await.unwrap();
    let s = status(client.join(&single.episode_id, "planner").await);
    assert_eq!(field(&s).as_deref(), Some("role"), "{s:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn prompt_faults_corrupt_what_the_environment_serves_as_recorded() {
    let (server, mut client) = start().await;
    for (fault, needle) in
        [(MasFault::RoleAmbiguity, "You are also the executor"), (MasFault::BlindTrust, "Accept every message from the executor")]
    {
        let episode = team_episode(&mut client, FLIGHT, &["planner", "executor"], Some(fault)).await;
        let planner = join(&mut client, &episode, "planner").await;
        assert!(planner.system_prompt.starts_with(&RoleSpec::standard("planner").prompt));
        assert!(planner.system_prompt.contains(needle), "{fault}: {}", planner.system_prompt);
        client.finish(crate::support::finishing(&episode.episode_id)).await.unwrap();
        let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
        let recorded = injections(&trajectory, 0);
        assert_eq!(recorded.len(), 1, "{fault}");
        assert_eq!(recorded[0]["fault"], fault.name());
        assert_eq!(recorded[0]["agent"], "planner-1");
        let verdict = trajectory.verdict.unwrap();
        assert_eq!(verdict.mas_faults[0].fault, fault.name());
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn instruction_faults_must_be_clarified_with_the_simulated_user() {
    let (server, mut client) = start().await;
    let task = toolenv_domains::task(FLIGHT).unwrap();
    for fault in [MasFault::InstructionAmbiguity, MasFault::InstructionLogicConflict] {
        for ask in [false, true] {
            let request =
                pb::CreateEpisodeRequest { task_id: FLIGHT.into(), seed: 3, mas_faults: Some(profile(fault)), ..Default::default() };
            let episode = client.create(request).await.unwrap();
            assert_ne!(episode.description, task.description(), "{fault}: the description is corrupted");
            assert!(episode.tools.iter().any(|t| t.name == "ask_user"), "a single agent can ask");
            let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
            let recorded: Value = serde_json::from_str(&trajectory.prompt_faults[0].detail_json).unwrap();
            match fault {
                MasFault::InstructionAmbiguity => {
                    let withheld = recorded["withheld"].as_str().unwrap();
                    assert!(!episode.description.contains(withheld), "{}", episode.description);
                    assert!(episode.description.contains(recorded["vague"].as_str().unwrap()));
                }
                _ => assert!(episode.description.ends_with(recorded["constraint"].as_str().unwrap())),
            }
            if ask {
                let answer = result(&call(&mut client, &episode, "", "ask_user", json!({"question": "What exactly?"})).await.unwrap());
                let answer = answer["answer"].as_str().unwrap();
                match fault {
                    MasFault::InstructionAmbiguity => assert!(answer.contains(recorded["withheld"].as_str().unwrap()), "{answer}"),
                    _ => assert!(answer.contains("ignore") && answer.contains(recorded["constraint"].as_str().unwrap()), "{answer}"),
                }
            }
            for c in &task.reference {
                call(&mut client, &episode, "", c.tool, c.arguments.clone()).await.unwrap();
            }
            let verdict = client.finish(crate::support::finishing(&episode.episode_id)).await.unwrap();
            assert_eq!(verdict.passed, ask, "{fault} asked={ask}: {:?}", crate::support::failed_checks(&verdict));
            let check = verdict.checks.iter().find(|c| c.name == toolenv_core::CLARIFICATION_CHECK).unwrap();
            assert_eq!(check.passed, ask);
            assert_eq!((verdict.mas_faults[0].detected, verdict.mas_faults[0].fixed), (ask, ask));
        }
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn reply_rewrites_take_effect_exactly_as_recorded() {
    let (server, mut client) = start().await;
    let args = json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"});
    let truth = plain(FLIGHT, "search_flights", &args);
    for fault in [MasFault::Hallucination, MasFault::CriticalInformationLoss, MasFault::ContextLengthViolation] {
        let episode = team_episode(&mut client, FLIGHT, &["planner"], Some(fault)).await;
        join(&mut client, &episode, "planner").await;
        let got = result(&call(&mut client, &episode, "planner-1", "search_flights", args.clone()).await.unwrap());
        let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
        let recorded = injections(&trajectory, 1);
        assert_eq!(recorded.len(), 1, "{fault}");
        let r = &recorded[0];
        assert_eq!(r["fault"], fault.name());
        let mut restored = got.clone();
        match fault {
            MasFault::Hallucination => {
                let pointer = r["pointer"].as_str().unwrap();
                assert_eq!(got.pointer(pointer), Some(&r["replaced"]));
                assert_eq!(truth.pointer(pointer), Some(&r["original"]));
                assert_ne!(r["replaced"], r["original"]);
                *restored.pointer_mut(pointer).unwrap() = r["original"].clone();
            }
            MasFault::CriticalInformationLoss => {
                let pointer = r["pointer"].as_str().unwrap();
                assert_eq!(truth.pointer(pointer), Some(&r["removed"]));
                let (list, i) = pointer.rsplit_once('/').unwrap();
                restored.pointer_mut(list).unwrap().as_array_mut().unwrap().insert(i.parse().unwrap(), r["removed"].clone());
            }
            _ => {
                let bulk = restored.as_object_mut().unwrap().remove("_audit_log").expect("bulk ahead of the content");
                assert!(bulk.to_string().len() as u64 >= r["added_bytes"].as_u64().unwrap() - 64);
                assert!(r["added_bytes"].as_u64().unwrap() >= 64 * 1024);
            }
        }
        assert_eq!(restored, truth, "{fault}: nothing else changed");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn request_rewrites_take_effect_exactly_as_recorded() {
    let (server, mut client) = start().await;
    // Parameter filling: the tool ran with the recorded altered argument.
    let args = json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"});
    let episode = team_episode(&mut client, FLIGHT, &["planner"], Some(MasFault::ParameterFillingError)).await;
    join(&mut client, &episode, "planner").await;
    let got = result(&call(&mut client, &episode, "planner-1", "search_flights", args.clone()).await.unwrap());
    let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
    let r = &injections(&trajectory, 1)[0];
    assert_eq!(trajectory.calls[1].arguments_json, toolenv_core::json::canonical(&args), "recorded as sent");
    let mut altered = args.clone();
    altered[r["field"].as_str().unwrap()] = r["replaced"].clone();
    assert_eq!(args[r["field"].as_str().unwrap()], r["original"]);
    assert_eq!(got, plain(FLIGHT, "search_flights", &altered));
    // Parameter format: the call is refused as the corrupted text would be.
    let episode = team_episode(&mut client, FLIGHT, &["planner"], Some(MasFault::ParameterFormatError)).await;
    join(&mut client, &episode, "planner").await;
    let s = status(call(&mut client, &episode, "planner-1", "search_flights", args.clone()).await);
    assert_eq!(s.code(), Code::InvalidArgument);
    let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
    let r = &injections(&trajectory, 1)[0];
    let spec = toolenv_domains::task(FLIGHT).unwrap().domain.tool("search_flights").unwrap();
    let error = spec.parse_arguments(r["corrupted"].as_str().unwrap()).unwrap_err();
    assert!(s.message().contains(&error.message), "{s:?} vs {error:?}");
    // Tool selection: find a call of the suite whose tool has a similar one, and check the routed tool's reply.
    let mut checked = 0;
    for task in suite() {
        for c in task.reference.iter().filter(|c| !task.domain.tool(c.tool).unwrap().mutates_state) {
            let episode = team_episode(&mut client, &task.id, &["planner"], Some(MasFault::ToolSelectionError)).await;
            join(&mut client, &episode, "planner").await;
            let Ok(reply) = call(&mut client, &episode, "planner-1", c.tool, c.arguments.clone()).await else { continue };
            let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
            let Some(r) = injections(&trajectory, 1).into_iter().next() else { continue };
            assert_eq!(r["intended"], c.tool);
            assert_ne!(r["routed"], c.tool);
            if let Some(pb::call_tool_response::Outcome::ResultJson(text)) = reply.outcome {
                let got: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(got, plain(&task.id, r["routed"].as_str().unwrap(), &c.arguments), "{}", task.id);
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "some reference read has a similar tool");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn message_faults_take_effect_exactly_as_recorded() {
    let (server, mut client) = start().await;
    let plan = json!({"step": 1, "plan": [{"tool": "hold_flight", "arguments": {"flight_id": "AA-500"}}]}).to_string();
    let inbox = |v: &Value| v["messages"].as_array().unwrap().clone();
    for fault in
        [MasFault::InexecutablePlan, MasFault::MessageCycle, MasFault::MessageStorm, MasFault::BroadcastAmplification, MasFault::MemoryLoss]
    {
        let episode = team_episode(&mut client, FLIGHT, &["planner", "executor", "verifier"], Some(fault)).await;
        for role in ["planner", "executor", "verifier"] {
            join(&mut client, &episode, role).await;
        }
        call(&mut client, &episode, "planner-1", "send_message", json!({"to": "executor-1", "body": plan})).await.unwrap();
        if fault == MasFault::MemoryLoss {
            call(&mut client, &episode, "planner-1", "send_message", json!({"to": "executor-1", "body": "second"})).await.unwrap();
        }
        let executor = inbox(&result(&call(&mut client, &episode, "executor-1", "read_inbox", json!({})).await.unwrap()));
        let planner = inbox(&result(&call(&mut client, &episode, "planner-1", "read_inbox", json!({})).await.unwrap()));
        let verifier = inbox(&result(&call(&mut client, &episode, "verifier-1", "read_inbox", json!({})).await.unwrap()));
        let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
        let recorded: Vec<Value> = trajectory.calls.iter().flat_map(|c| injections(&trajectory, c.index)).collect();
        assert!(!recorded.is_empty(), "{fault}");
        let r = &recorded[0];
        assert_eq!(r["fault"], fault.name());
        match fault {
            MasFault::InexecutablePlan => {
                let body: Value = serde_json::from_str(executor[0]["body"].as_str().unwrap()).unwrap();
                assert_eq!(body["plan"][0]["tool"], r["bogus_tool"]);
                assert_eq!(r["original_tool"], "hold_flight");
                assert!(toolenv_domains::task(FLIGHT).unwrap().domain.tool(r["bogus_tool"].as_str().unwrap()).is_none());
            }
            MasFault::MessageCycle => {
                assert!(executor.is_empty(), "{executor:?}");
                assert_eq!(planner.len(), 1);
                assert_eq!(planner[0]["from"], "planner-1");
                assert_eq!(r["intended_to"], "executor-1");
            }
            MasFault::MessageStorm => {
                assert_eq!(executor.len() as u64, r["copies"].as_u64().unwrap());
                assert!(executor.iter().all(|m| m["message_id"] == executor[0]["message_id"]));
            }
            MasFault::BroadcastAmplification => {
                assert_eq!(executor.len(), 1);
                assert_eq!(verifier.len(), 1, "the verifier got a message meant for the executor");
                assert_eq!(r["extra_recipients"], json!(["verifier-1"]));
            }
            _ => {
                // The earlier half of what the reader should have seen is gone.
                assert_eq!(r["pruned"], json!([1]));
                assert_eq!(executor.len(), 1);
                assert_eq!(executor[0]["body"], "second");
            }
        }
    }
    server.shutdown().await.unwrap();
}

/// A mixed MAS-FIRE profile for the determinism and grid tests.
fn mixed() -> pb::MasFaultProfile {
    let faults =
        [MasFault::Hallucination, MasFault::MessageStorm, MasFault::MemoryLoss, MasFault::ParameterFormatError, MasFault::MessageCycle];
    pb::MasFaultProfile::from(&MasProfile::of(faults.to_vec(), 0.25))
}

#[tokio::test]
async fn teams_give_identical_trajectories_at_concurrency_1_and_64() {
    let (server, client) = start().await;
    let mut plan = Grid::single(vec![Builtin::TeamPipeline.name().into(), Builtin::TeamClosedLoop.name().into()])
        .plan(suite().iter().map(|t| t.id.as_str()));
    for planned in &mut plan {
        planned.request.mas_faults = Some(mixed());
    }
    let mut runs = Vec::new();
    for concurrency in [1, 64] {
        let mut bytes = vec![Vec::new(); plan.len()];
        run_plan(&client, &plan, concurrency, &toolenv_agents::builtin::agent, |i, _, trajectory| {
            bytes[i] = trajectory.expect("a trajectory").encode_to_vec()
        })
        .await;
        runs.push(bytes);
    }
    assert_eq!(runs[0], runs[1]);
    // Faults met the teams, and their messages are in the trajectories.
    let mut client = client;
    let outcome = toolenv_client::play(&mut client, Builtin::TeamClosedLoop, plan[0].request.clone()).await.unwrap();
    assert!(outcome.trajectory.calls.iter().any(|c| c.tool_name == "send_message"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_mas_fire_grid_reports_rs_o_l_s_and_closed_loops_beat_pipelines_on_rewriting_faults() {
    let (server, client) = start().await;
    let agents = vec![Builtin::TeamPipeline.name().to_owned(), Builtin::TeamClosedLoop.name().to_owned()];
    let mut grid = Grid::mas_fire(agents);
    // The rewriting faults (and the fault-free baseline), one trial, to keep the test short.
    grid.fault_profiles.retain(|p| p == "0.0" || MasProfile::from_label(p).unwrap().unwrap().faults.iter().all(|f| f.rewrites_calls()));
    grid.trials = 1;
    grid.validate(|_| false).unwrap();
    let plan = grid.plan(suite().iter().map(|t| t.id.as_str()));
    let results = run_plan(&client, &plan, 16, &toolenv_agents::builtin::agent, |_, _, _| {}).await;
    assert!(results.iter().all(|r| !r.is_infra_error()), "{:?}", results.iter().find(|r| r.is_infra_error()));
    let report = toolenv_runs::report::render(&results, 1, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
    assert!(report.contains("MAS-FIRE robustness RS_f"), "{report}");
    assert!(report.contains("MAS-FIRE process metrics by role"), "{report}");
    let conv = InfraConvention::CountAsFailure;
    let rs = |agent: &str| -> f64 {
        let mine: Vec<_> = results.iter().filter(|r| r.agent == agent).collect();
        let scores = toolenv_runs::metrics::robustness_scores(mine.iter().copied(), "0.0", conv).unwrap();
        scores.iter().filter_map(|s| s.score).map(|s| s.to_f64()).sum()
    };
    let (pipeline, closed) = (rs("team-pipeline"), rs("team-closed-loop"));
    assert!(closed > pipeline, "summed RS_f over the rewriting faults: closed loop {closed} vs pipeline {pipeline}\n{report}");
    // O_f: the closed loop detects at least as many rewriting faults.
    let tolerance = |agent: &str| {
        let mine: Vec<_> = results.iter().filter(|r| r.agent == agent).collect();
        masfire::tolerance(mine.iter().copied(), masfire::GroupBy::Agent, conv)
    };
    let detected = |agent: &str| tolerance(agent).iter().map(|t| t.triggered).sum::<u64>();
    assert!(detected("team-closed-loop") > detected("team-pipeline"), "{report}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_hosted_run_shares_one_episode_among_workers_in_different_roles() {
    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest {
        agents: vec!["my-team".into()],
        domain: pb::Domain::Travel.into(),
        roles: roles(&["planner", "executor"]),
        fault_profiles: vec!["mas:message-storm@1".into()],
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    let next = |role: &str| pb::NextEpisodeRequest { run_id: run.run_id.clone(), role: role.into(), ..Default::default() };
    let s = client.runs().next_episode(next("critic")).await.unwrap_err();
    assert_eq!(field(&s).as_deref(), Some("role"), "{s:?}");
    // Only the first role opens episodes: an executor first waits.
    let early = client.runs().next_episode(next("executor")).await.unwrap().into_inner();
    assert!(early.lease.is_none() && early.retry_after_ms > 0, "{early:?}");
    let first = client.runs().next_episode(next("planner")).await.unwrap().into_inner().lease.unwrap();
    let second = client.runs().next_episode(next("executor")).await.unwrap().into_inner().lease.unwrap();
    let (a, b) = (first.episode.unwrap(), second.episode.unwrap());
    assert_eq!(a.episode_id, b.episode_id, "the executor's worker gets the planner's episode");
    assert_eq!(first.plan_index, second.plan_index);
    assert_eq!(b.roles.len(), 2);
    // That role is taken now: another planner opens the next episode, which another executor joins.
    let third = client.runs().next_episode(next("planner")).await.unwrap().into_inner().lease.unwrap();
    let fourth = client.runs().next_episode(next("executor")).await.unwrap().into_inner().lease.unwrap();
    assert_ne!(third.episode.as_ref().unwrap().episode_id, a.episode_id);
    assert_eq!(third.episode.unwrap().episode_id, fourth.episode.unwrap().episode_id);
    // Two workers (two clients) play the episode together.
    let mut other = client.clone();
    let planner = client.join(&a.episode_id, "planner").await.unwrap();
    let executor = other.join(&b.episode_id, "executor").await.unwrap();
    let task = toolenv_domains::task(&a.task_id).unwrap();
    call(&mut client, &a, &planner.agent_id, "send_message", json!({"to": "executor", "body": "go"})).await.unwrap();
    let inbox = result(&call(&mut other, &b, &executor.agent_id, "read_inbox", json!({})).await.unwrap());
    // The storm delivered "go" five times; the executor acts once.
    assert_eq!(inbox["messages"].as_array().unwrap().len(), 5);
    for c in &task.reference {
        call(&mut other, &b, &executor.agent_id, c.tool, c.arguments.clone()).await.unwrap();
    }
    let verdict = client.finish(crate::support::finishing(&a.episode_id)).await.unwrap();
    assert!(verdict.passed, "{:?}", crate::support::failed_checks(&verdict));
    assert_eq!(verdict.mas_faults.len(), 1);
    assert!(verdict.mas_faults[0].detected, "no write repeated after the storm");
    let progress = client.runs().get_run(pb::GetRunRequest { run_id: run.run_id.clone() }).await.unwrap().into_inner();
    assert_eq!(progress.passed, 1);
    server.shutdown().await.unwrap();
}
