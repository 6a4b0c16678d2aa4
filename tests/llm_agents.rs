//! The built-in LLM agents against a scripted OpenAI-compatible endpoint on
//! a loopback port: every protocol variant parsed over real HTTP, endpoint
//! failures as infrastructure errors, tokens and conversations in the
//! trajectory, and recorded runs replayed byte for byte.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::support::start;
use serde_json::Value;
use toolenv_agents::Agent as _;
use toolenv_agents::llm::scripted::{Script, ScriptedEndpoint, Variant};
use toolenv_agents::llm::{Architecture, LlmAgent, LlmAgents, ModelEndpoint, Price, RetryPolicy, Sampling, Tape, ToolChoice};
use toolenv_client::{Client, run_plan};
use toolenv_runs::metrics::{EpisodeResult, InfraConvention, Population};
use toolenv_runs::{Grid, PlannedEpisode, report, trajectory_json};

const TASK: &str = "scheduling/book-meeting/001";

fn reference_calls(task_id: &str) -> Vec<(String, Value)> {
    let task = toolenv_domains::task(task_id).expect("a suite task");
    task.reference.iter().map(|c| (c.tool.to_owned(), c.arguments.clone())).collect()
}

fn agent(architecture: Architecture, base_url: &str, tape: Tape) -> LlmAgent {
    let retry = RetryPolicy {
        max_attempts: 3,
        request_timeout: Duration::from_secs(10),
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_secs(2),
    };
    LlmAgent {
        architecture,
        model: "scripted".to_owned(),
        endpoint: ModelEndpoint::new(base_url, Some("test-key".into()), retry, tape).expect("a valid url"),
        sampling: Sampling { temperature: Some(0.0), ..Sampling::default() },
        tool_choice: ToolChoice::Omit,
        parallel_tool_calls: None,
        max_turns: 16,
        price: Some(Price { input_per_million: 1.0, output_per_million: 4.0 }),
    }
}

/// One planned episode of `task_id` by `label`, at time scale 0.
fn planned(label: &str, task_id: &str, faults: Option<&str>) -> Vec<PlannedEpisode> {
    let grid = Grid {
        time_scale: Some(0.0),
        fault_profiles: faults.into_iter().map(str::to_owned).collect(),
        ..Grid::single(vec![label.to_owned()])
    };
    grid.plan([task_id])
}

async fn play(client: &Client, agents: &[(&str, LlmAgent)], plan: &[PlannedEpisode]) -> Vec<(EpisodeResult, Option<Value>)> {
    let agents = LlmAgents::new(agents.iter().map(|(label, agent)| ((*label).to_owned(), agent.clone())).collect::<BTreeMap<_, _>>());
    let mut trajectories = vec![None; plan.len()];
    let results = run_plan(client, plan, 4, &|label| agents.agent(label), |index, _, trajectory| {
        trajectories[index] = trajectory.map(trajectory_json);
    })
    .await;
    results.into_iter().zip(trajectories).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_protocol_variant_plays_the_task() {
    let (_server, client) = start().await;
    let calls = reference_calls(TASK);
    for variant in [Variant::Native, Variant::Fenced, Variant::Bare, Variant::ReactAction] {
        let endpoint = ScriptedEndpoint::start(Script::new(calls.clone(), variant)).await.unwrap();
        let label = "react@scripted";
        let played =
            play(&client, &[(label, agent(Architecture::React, &endpoint.base_url(), Tape::Off))], &planned(label, TASK, None)).await;
        let (result, trajectory) = &played[0];
        assert_eq!(result.outcome, toolenv_runs::metrics::EpisodeOutcome::Passed, "{variant:?}: {result:?}");
        assert_eq!(result.calls as usize, calls.len(), "{variant:?}");
        let llm = result.llm.expect("an LLM agent's counts");
        let (native, text) = if variant == Variant::Native { (calls.len() as u32, 0) } else { (0, calls.len() as u32) };
        assert_eq!((llm.native_calls, llm.text_form_calls, llm.protocol_errors), (native, text, 0), "{variant:?}");
        // One turn per call, and the final answer.
        assert_eq!(llm.model_turns as usize, calls.len() + 1);
        assert_eq!(endpoint.requests() as usize, calls.len() + 1);
        let tokens = result.tokens.expect("tokens reported");
        assert!(tokens.input > 0 && tokens.output > 0);
        let cost = result.cost_usd.expect("priced");
        assert!((cost - (tokens.input as f64 + 4.0 * tokens.output as f64) / 1e6).abs() < 1e-12);
        // The conversation is in the trajectory, as the model saw it.
        let conversation = &trajectory.as_ref().expect("a trajectory")["conversation"];
        let messages = conversation["messages"].as_array().unwrap();
        assert_eq!(messages[0]["role"], "system");
        assert_eq!(messages[1]["role"], "user");
        let answers = if variant == Variant::Native { "tool" } else { "user" };
        assert_eq!(messages.iter().filter(|m| m["role"] == answers).count(), calls.len() + usize::from(answers == "user"));
        assert_eq!(conversation["model"], "scripted");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_calls_are_protocol_errors_not_silent_zeros() {
    let (_server, client) = start().await;
    let calls = reference_calls(TASK);
    // Always garbage: told back once, then the episode ends, failed, with two protocol errors.
    let endpoint = ScriptedEndpoint::start(Script::new(calls.clone(), Variant::Garbage)).await.unwrap();
    let label = "react@scripted";
    let played = play(&client, &[(label, agent(Architecture::React, &endpoint.base_url(), Tape::Off))], &planned(label, TASK, None)).await;
    let (result, trajectory) = &played[0];
    assert_eq!(result.outcome, toolenv_runs::metrics::EpisodeOutcome::Failed);
    assert_eq!(result.llm.map(|l| (l.protocol_errors, l.model_turns)), Some((2, 2)));
    let messages = trajectory.as_ref().unwrap()["conversation"]["messages"].as_array().unwrap().clone();
    assert!(messages[3]["content"].as_str().unwrap().contains("could not be read"), "{:?}", messages[3]);
    // Garbage once, then readable: told back, recovered, passed.
    let script = Script { variants: vec![Variant::Garbage, Variant::Fenced], ..Script::new(calls.clone(), Variant::Native) };
    let endpoint = ScriptedEndpoint::start(script).await.unwrap();
    let played = play(&client, &[(label, agent(Architecture::React, &endpoint.base_url(), Tape::Off))], &planned(label, TASK, None)).await;
    assert_eq!(played[0].0.outcome, toolenv_runs::metrics::EpisodeOutcome::Passed, "{:?}", played[0].0);
    assert!(played[0].0.llm.unwrap().protocol_errors >= 1);
    let text = report::render(&[played[0].0.clone()], 1, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap();
    assert!(text.contains("Table 10"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_failures_are_retried_then_infrastructure_errors() {
    let (_server, client) = start().await;
    let calls = reference_calls(TASK);
    let label = "react@scripted";
    // Two 429s, each with retry-after-ms: retried, the episode passes.
    let script = Script { rate_limited_first: 2, retry_after_ms: Some(20), ..Script::new(calls.clone(), Variant::Native) };
    let endpoint = ScriptedEndpoint::start(script).await.unwrap();
    let played = play(&client, &[(label, agent(Architecture::React, &endpoint.base_url(), Tape::Off))], &planned(label, TASK, None)).await;
    assert_eq!(played[0].0.outcome, toolenv_runs::metrics::EpisodeOutcome::Passed);
    assert_eq!(endpoint.requests() as usize, calls.len() + 1 + 2);
    // A 429 with Retry-After in seconds is honoured too (one second).
    let script = Script { rate_limited_first: 1, ..Script::new(calls.clone(), Variant::Native) };
    let endpoint = ScriptedEndpoint::start(script).await.unwrap();
    let started = std::time::Instant::now();
    let played = play(&client, &[(label, agent(Architecture::React, &endpoint.base_url(), Tape::Off))], &planned(label, TASK, None)).await;
    assert_eq!(played[0].0.outcome, toolenv_runs::metrics::EpisodeOutcome::Passed);
    assert!(started.elapsed() >= Duration::from_millis(950), "Retry-After: 1 was not waited");
    // HTTP 500 every time: an infrastructure error after the attempts, no trajectory.
    let script = Script { always_500: true, ..Script::new(calls.clone(), Variant::Native) };
    let endpoint = ScriptedEndpoint::start(script).await.unwrap();
    let played = play(&client, &[(label, agent(Architecture::React, &endpoint.base_url(), Tape::Off))], &planned(label, TASK, None)).await;
    let (result, trajectory) = &played[0];
    assert!(result.is_infra_error(), "{result:?}");
    assert!(format!("{:?}", result.outcome).contains("HTTP 500"), "{:?}", result.outcome);
    assert!(trajectory.is_none());
    assert_eq!(endpoint.requests(), 3, "max_attempts");
    // The conversation outgrows the model's context (HTTP 400, as llama.cpp
    // says it): the agent's limit, so the episode ends as it stands and is
    // judged, not an infrastructure error.
    let script = Script { context_full_after_turns: Some(0), ..Script::new(calls.clone(), Variant::Native) };
    let endpoint = ScriptedEndpoint::start(script).await.unwrap();
    let played = play(&client, &[(label, agent(Architecture::React, &endpoint.base_url(), Tape::Off))], &planned(label, TASK, None)).await;
    let (result, trajectory) = &played[0];
    assert_eq!(result.outcome, toolenv_runs::metrics::EpisodeOutcome::Failed, "{result:?}");
    assert_eq!(result.llm.map(|c| c.context_exhausted), Some(1));
    assert_eq!(trajectory.as_ref().and_then(|t| t.pointer("/conversation/context_exhausted")), Some(&Value::Bool(true)));
    assert_eq!(endpoint.requests(), 1, "a refusal for length is not retried");
    // Nothing listening: an infrastructure error too.
    let (_held, closed) = toolenv_tests::held_port();
    let closed = format!("http://{closed}/v1");
    let played = play(&client, &[(label, agent(Architecture::React, &closed, Tape::Off))], &planned(label, TASK, None)).await;
    assert!(played[0].0.is_infra_error());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflexion_reflects_after_failures_and_before_finishing() {
    let (_server, client) = start().await;
    let calls = reference_calls(TASK);
    let endpoint = ScriptedEndpoint::start(Script::new(calls.clone(), Variant::Native)).await.unwrap();
    let label = "reflexion@scripted";
    // λ = 0.3 over ten seeds: some calls fail, and are reflected on.
    let grid = Grid { time_scale: Some(0.0), fault_profiles: vec!["0.3".into()], seeds: 10, ..Grid::single(vec![label.to_owned()]) };
    let plan = grid.plan([TASK]);
    let played = play(&client, &[(label, agent(Architecture::Reflexion, &endpoint.base_url(), Tape::Off))], &plan).await;
    let mut failures_seen = 0;
    for (result, trajectory) in &played {
        assert!(!result.is_infra_error(), "{result:?}");
        let trajectory = trajectory.as_ref().unwrap();
        let messages = trajectory["conversation"]["messages"].as_array().unwrap();
        let reflections = |prefix: &str| messages.iter().filter(|m| m["content"].as_str().is_some_and(|c| c.starts_with(prefix))).count();
        assert_eq!(reflections("Reflection: before you finish"), 1, "one reflection before finishing");
        let failed = trajectory["calls"].as_array().unwrap().iter().filter(|c| c["outcome"].get("failure").is_some()).count();
        assert_eq!(reflections("Reflection: the call to"), failed, "one reflection per failed call");
        assert_eq!(trajectory["conversation"]["agent"], "reflexion");
        failures_seen += failed;
    }
    assert!(failures_seen > 0, "no seed met a failure to reflect on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_run_replays_byte_for_byte_offline() {
    let (_server, client) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let tasks = ["scheduling/book-meeting/001", "travel/direct-booking/002"];
    let mut plan = Vec::new();
    for task in tasks {
        for label in ["react@scripted", "reflexion@scripted"] {
            plan.extend(planned(label, task, Some("0.2")));
        }
    }
    // One endpoint per task (the script is the task's reference); every
    // agent of a run shares --record.
    let mut recorded = Vec::new();
    let mut endpoints = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        let script = Script {
            variants: vec![Variant::Native, Variant::Fenced, Variant::ReactAction],
            ..Script::new(reference_calls(task), Variant::Native)
        };
        let endpoint = ScriptedEndpoint::start(script).await.unwrap();
        let tape = Tape::Record(dir.path().to_path_buf());
        let agents = [
            ("react@scripted", agent(Architecture::React, &endpoint.base_url(), tape.clone())),
            ("reflexion@scripted", agent(Architecture::Reflexion, &endpoint.base_url(), tape)),
        ];
        recorded.extend(play(&client, &agents, &plan[i * 2..i * 2 + 2]).await);
        endpoints.push(endpoint);
    }
    assert!(recorded.iter().all(|(r, _)| !r.is_infra_error()), "{recorded:?}");
    drop(endpoints);
    // Replayed with nothing listening at the URL: every answer comes from the recording.
    let nowhere = "http://127.0.0.1:9/v1";
    let replay = Tape::Replay(dir.path().to_path_buf());
    let agents = [
        ("react@scripted", agent(Architecture::React, nowhere, replay.clone())),
        ("reflexion@scripted", agent(Architecture::Reflexion, nowhere, replay)),
    ];
    let replayed = play(&client, &agents, &plan).await;
    for ((a, ta), (b, tb)) in recorded.iter().zip(&replayed) {
        assert_eq!(a, b);
        assert_eq!(ta.as_ref().map(Value::to_string), tb.as_ref().map(Value::to_string), "byte-identical trajectories");
    }
    let render = |played: &[(EpisodeResult, Option<Value>)]| {
        let results: Vec<EpisodeResult> = played.iter().map(|(r, _)| r.clone()).collect();
        report::render(&results, 1, InfraConvention::CountAsFailure, Population::AllEpisodes).unwrap()
    };
    assert_eq!(render(&recorded), render(&replayed));
    // Another model (a changed request) does not replay: an infrastructure error, not a made-up answer.
    let mut other = agent(Architecture::React, nowhere, Tape::Replay(dir.path().to_path_buf()));
    other.sampling.temperature = Some(0.7);
    let diverged = play(&client, &[("react@scripted", other)], &plan[..1]).await;
    assert!(diverged[0].0.is_infra_error());
    assert!(format!("{:?}", diverged[0].0.outcome).contains("differs from the recorded one"));
}

#[test]
fn agent_specs_name_an_architecture_and_a_model() {
    use toolenv_agents::Spec;
    assert_eq!(Spec::parse("react@gpt-4o"), Ok(Spec::Llm(Architecture::React, "gpt-4o")));
    assert_eq!(Spec::parse("reflexion@org/model@v2"), Ok(Spec::Llm(Architecture::Reflexion, "org/model@v2")));
    assert_eq!(Spec::parse("reference"), Ok(Spec::Builtin(toolenv_agents::Builtin::Reference)));
    assert!(Spec::parse("react@").is_err());
}

/// The Python worker's parser (examples/python/llm_calls.py) gives the
/// shared cases the answers the Rust agents give (checked in client's tests).
#[test]
fn the_python_worker_reads_calls_by_the_same_rules() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/python/llm_calls.py");
    let output = std::process::Command::new("python3").arg(&script).output().expect("the test needs python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

/// `toolenv work --agent react@MODEL`: an LLM agent plays a hosted run; its
/// tokens and conversations reach the server's store and report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_llm_agent_works_on_a_hosted_run() {
    use toolenv::pb;
    let (_server, mut client) = start().await;
    let endpoint = ScriptedEndpoint::start(Script::new(reference_calls(TASK), Variant::Fenced)).await.unwrap();
    let label = "react@scripted";
    let request = pb::CreateRunRequest {
        description: "llm worker".into(),
        agents: vec![label.into()],
        time_scale: Some(0.0),
        domain: pb::Domain::Scheduling.into(),
        level: 1,
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    let agent = agent(Architecture::React, &endpoint.base_url(), Tape::Off);
    assert_eq!(agent.label(), label);
    let summary = toolenv_client::worker::work(&mut client, &run.run_id, agent, label, "w", |_, _, _| {}).await.unwrap();
    assert_eq!(summary.played, run.planned);
    // The script plays book-meeting/001's reference: that episode passes, the others cannot.
    assert!(summary.passed >= 1, "{summary:?}");
    let report = client.runs().get_run_report(pb::GetRunReportRequest { run_id: run.run_id.clone(), ..Default::default() }).await;
    let text = report.unwrap().into_inner().text;
    assert!(text.contains("Table 10") && text.contains(label), "{text}");
}

/// The model's final answer reaches the episode however the model gives it:
/// as a reply with no tool call, or in the `finish` tool's arguments when
/// `tool_choice` is `required` — for both architectures; the trajectory
/// records the answer and where it was read, and a model that ends without
/// the answer fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_s_final_answer_reaches_the_episode() {
    use toolenv_agents::llm::scripted::Ending;
    let (_server, client) = start().await;
    let task_id = "scheduling/refuse-booking/g2-3-2-0000";
    let task = toolenv_domains::generate::generate_id(task_id).expect("a generated task, rebuilt from its id");
    let answer = task.reference_answer().expect("a task that asks for an answer").to_owned();
    let calls: Vec<(String, Value)> = task.reference.iter().map(|c| (c.tool.to_owned(), c.arguments.clone())).collect();
    let typed = toolenv_core::typed::example(&task.answer_fields());
    let mut wrong_typed = typed.clone();
    wrong_typed["reason"] = serde_json::json!("over_budget");
    let endings = [
        (ToolChoice::Required, Ending::FinishTyped(answer.clone(), typed.clone()), "finish_typed", true),
        // The typed answer is judged, not the prose beside it.
        (ToolChoice::Required, Ending::FinishTyped(answer.clone(), wrong_typed), "finish_typed", false),
        (ToolChoice::Omit, Ending::Text(answer.clone()), "text", true),
        (ToolChoice::Auto, Ending::Finish(answer.clone()), "text", true),
        (ToolChoice::Required, Ending::Finish(answer.clone()), "finish", true),
        (ToolChoice::Required, Ending::Finish("Done.".into()), "finish", false),
        (ToolChoice::Omit, Ending::default(), "text", false),
    ];
    for architecture in [Architecture::React, Architecture::Reflexion] {
        for (tool_choice, ending, from, passes) in &endings {
            let script = Script { ending: ending.clone(), ..Script::new(calls.clone(), Variant::Native) };
            let endpoint = ScriptedEndpoint::start(script).await.unwrap();
            let label = format!("{}@scripted", architecture.name());
            let llm = LlmAgent { tool_choice: *tool_choice, ..agent(architecture, &endpoint.base_url(), Tape::Off) };
            let played = play(&client, &[(&label, llm)], &planned(&label, task_id, None)).await;
            let (result, trajectory) = &played[0];
            let case = format!("{label}, {tool_choice:?}, {ending:?}");
            assert_eq!(result.outcome == toolenv_runs::metrics::EpisodeOutcome::Passed, *passes, "{case}: {result:?}");
            let trajectory = trajectory.as_ref().expect("a trajectory");
            let given = match ending {
                Ending::Text(text) | Ending::Finish(text) | Ending::FinishTyped(text, _) => text,
            };
            assert_eq!(trajectory["answer"].as_str(), Some(given.as_str()), "{case}");
            if let Ending::FinishTyped(_, fields) = ending {
                assert_eq!(&trajectory["answer_json"], fields, "{case}: the typed answer is recorded");
            }
            assert_eq!(trajectory["conversation"]["answer_from"], *from, "{case}");
            let verdict_passed = trajectory["verdict"]["passed"].as_bool();
            assert_eq!(verdict_passed, Some(*passes), "{case}");
        }
    }
}
