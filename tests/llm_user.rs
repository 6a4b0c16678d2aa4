//! The LLM user of conversational tasks against a scripted OpenAI-compatible
//! endpoint on a loopback port: an honest user gets the solver through,
//! in-process and over gRPC; a lying one fails the episode and attribution
//! names it; recorded episodes replay and fork byte for byte without the
//! model, and re-attribute the same; bad replies and a failing endpoint end
//! in bounded, clear outcomes.

use std::sync::Arc;
use std::time::Duration;
use toolenv_domains::taskfile::Catalogue;

use crate::support::{new_episode, start};
use prost::Message as _;
use serde_json::{Value, json};
use toolenv::pb;
use toolenv_agents::llm::scripted::{Canned, ScriptedEndpoint};
use toolenv_agents::llm::{LlmUser, ModelEndpoint, RetryPolicy, Tape, WithLlmUser};
use toolenv_agents::{Agent, Builtin};
use toolenv_client::play;
use toolenv_core::{DEFAULT_MAX_CALLS, TaskRef, bus::ASK_USER, user};
use toolenv_domains::{Finish, attribution::Responsible, generate::Suite};

/// Conversational tasks that withhold something.
fn withholding() -> Vec<TaskRef> {
    let tasks = "conversational:2026:2".parse::<Suite>().unwrap().tasks(None, None);
    tasks.into_iter().filter(|t| t.conversation.as_ref().is_some_and(|c| !c.withheld.is_empty())).collect()
}

/// Of those, tasks whose first withheld value goes verbatim into a reference write.
fn direct() -> Vec<TaskRef> {
    withholding()
        .into_iter()
        .filter(|t| {
            let w = &t.conversation.as_ref().unwrap().withheld[0];
            t.reference.iter().any(|c| t.domain.tool(c.tool).is_some_and(|s| s.mutates_state) && c.arguments.to_string().contains(&w.value))
        })
        .collect()
}

/// A value like `value` but wrong.
fn wrong(value: &str) -> String {
    match value.rfind(|c: char| c.is_ascii_digit()) {
        Some(at) => format!("{}{}{}", &value[..at], (value.as_bytes()[at] - b'0' + 1) % 10, &value[at + 1..]),
        None if value.len() == 3 && value.bytes().all(|b| b.is_ascii_uppercase()) => "QQQ".into(),
        None => "Zoe Quill".into(),
    }
}

/// A scripted user for `task`: it answers the question the request asks
/// with what the task's user holds (each value through `say`), a sentence a slot.
async fn user_endpoint(task: &TaskRef, say: fn(&str) -> String) -> ScriptedEndpoint {
    let task = task.clone();
    ScriptedEndpoint::start_with(move |body: &Value| {
        let question = body.pointer("/messages/1/content").and_then(Value::as_str).unwrap_or_default();
        let conversation = task.conversation.as_ref().unwrap();
        let told = user::hear(conversation, &task.slots, question).told;
        // The withheld slots in the task's order, then the id of a customer to verify.
        let slots = conversation.withheld.iter().map(|w| w.slot).chain([user::CUSTOMER_ID]);
        let sentences: Vec<String> =
            slots.filter_map(|slot| told.get(slot).map(|v| format!("The {} is {}.", user::readable(slot), say(v)))).collect();
        Canned::Text(if sentences.is_empty() { "I don't know.".into() } else { sentences.join(" ") })
    })
    .await
    .unwrap()
}

fn llm_user(base_url: &str, tape: Tape, retry: RetryPolicy) -> LlmUser {
    LlmUser::new("scripted-user", ModelEndpoint::new(base_url, None, retry, tape).unwrap())
}

fn quick() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 2,
        request_timeout: Duration::from_secs(2),
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
    }
}

fn solver_with(user: LlmUser) -> Arc<dyn Agent> {
    Arc::new(WithLlmUser { agent: Arc::new(Builtin::Solver), user })
}

/// The calls of a trajectory as the wire encodes them.
fn encoded(trajectory: &pb::Trajectory) -> Vec<Vec<u8>> {
    trajectory.calls.iter().map(|c| c.encode_to_vec()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honest_llm_user_gets_the_solver_through_in_process_and_over_grpc() {
    let (_server, mut client) = start().await;
    let tasks = withholding();
    assert!(tasks.len() >= 8);
    for task in tasks.iter().take(8) {
        let endpoint = user_endpoint(task, str::to_owned).await;
        let agent = solver_with(llm_user(&endpoint.base_url(), Tape::Off, quick()));
        // In-process.
        let (local, in_process) = (task.clone(), agent.clone());
        let mut episode =
            tokio::task::spawn_blocking(move || toolenv_agents::play_in_process(&*in_process, local, 0, 0)).await.unwrap().expect("plays");
        assert!(episode.finish().passed, "{} in-process", task.id);
        let turns: Vec<_> = episode.trajectory().calls.iter().filter(|c| c.tool == ASK_USER).collect();
        let (answered, read): (Vec<&&toolenv_core::CallRecord>, Vec<_>) = turns.iter().partition(|c| c.user_answer().is_some());
        assert!(!answered.is_empty() && answered.iter().all(|c| c.user_answer().is_some_and(|a| a.starts_with("The "))), "{}", task.id);
        // A question that only asks for the code is the user's reading of their phone, not the model's.
        assert!(read.iter().all(|c| c.user().is_some_and(|u| u.tool == "read_verification_code")), "{}", task.id);
        // Over gRPC: the same calls, the answers on the wire.
        let asked = endpoint.requests();
        let remote = play(&mut client, agent, new_episode(&task.id, 0, 0)).await.expect("plays");
        assert!(remote.verdict.passed, "{} over gRPC", task.id);
        assert_eq!(endpoint.requests(), asked * 2, "{}: one model request a question", task.id);
        let local: Vec<Vec<u8>> = episode.trajectory().calls.iter().map(|c| pb::ToolCallRecord::from(c).encode_to_vec()).collect();
        assert_eq!(encoded(&remote.trajectory), local, "{}", task.id);
        let on_the_wire = remote.trajectory.calls.iter().filter(|c| c.tool_name == ASK_USER && c.user_answer.is_some()).count();
        assert_eq!(on_the_wire, answered.len(), "{}", task.id);
        // The run's record counts the turns the LLM user answered (what the report shows).
        let planned = toolenv_runs::Grid::single(vec!["solver".to_owned()]).plan([task.id.as_str()]);
        let result = planned[0].result(&remote.trajectory);
        assert_eq!((result.llm_user_turns, result.user_turns), (answered.len() as u32, turns.len() as u32));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_llm_user_fails_the_episode_and_attribution_names_it() {
    let (_server, mut client) = start().await;
    let tasks = direct();
    assert!(tasks.len() >= 3);
    let mut named = 0;
    for task in tasks.iter().take(6) {
        let endpoint = user_endpoint(task, wrong).await;
        let remote = play(&mut client, solver_with(llm_user(&endpoint.base_url(), Tape::Off, quick())), new_episode(&task.id, 0, 0))
            .await
            .expect("plays");
        assert!(!remote.verdict.passed, "{}", task.id);
        let turn = remote.trajectory.calls.iter().find(|c| c.user_answer.is_some()).expect("a supplied answer").index;
        let attribution = toolenv_runs::fork::attribute(&Catalogue::new(), &remote.trajectory, DEFAULT_MAX_CALLS).expect("attributed");
        if attribution.responsible == Some(Responsible::User) {
            named += 1;
            assert_eq!((attribution.decisive_step, attribution.errors[0].step), (Some(turn), turn), "{}", task.id);
            assert_eq!(attribution.errors[0].error.name(), "user_misinformed");
        }
        // Stored (its wire bytes) and read back, it re-attributes the same.
        let stored = pb::Trajectory::decode(remote.trajectory.encode_to_vec().as_slice()).unwrap();
        assert_eq!(toolenv_runs::fork::attribute(&Catalogue::new(), &stored, DEFAULT_MAX_CALLS).unwrap(), attribution);
        // The same task with the rule-based user: the solver passes, nothing to attribute.
        let rules = play(&mut client, Builtin::Solver, new_episode(&task.id, 0, 0)).await.unwrap();
        assert!(rules.verdict.passed && rules.trajectory.calls.iter().all(|c| c.user_answer.is_none()));
    }
    assert_eq!(named, tasks.len().min(6), "the user named in {named} episodes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_llm_user_episode_replays_and_forks_byte_for_byte_offline() {
    let (_server, mut client) = start().await;
    let task = direct().into_iter().next().unwrap();
    let tape = tempfile::tempdir().unwrap();
    let endpoint = user_endpoint(&task, wrong).await;
    let user = llm_user(&endpoint.base_url(), Tape::Record(tape.path().to_owned()), quick());
    let recorded = play(&mut client, solver_with(user), new_episode(&task.id, 3, 1)).await.unwrap();
    let golden = toolenv_runs::trajectory_json(&recorded.trajectory).to_string();
    assert!(golden.contains("\"user_answer\":\"The "), "{golden}");
    // Replayed from the trajectory alone: every call byte for byte, the verdict too.
    let replayed = toolenv_runs::fork::replay(&Catalogue::new(), &recorded.trajectory, DEFAULT_MAX_CALLS).expect("replays");
    let again = pb::Trajectory { verdict: recorded.trajectory.verdict.clone(), ..pb::Trajectory::from(replayed.trajectory()) };
    assert_eq!(encoded(&again), encoded(&recorded.trajectory));
    // Forked right after the user's turn: the answer is fed back.
    let turn = recorded.trajectory.calls.iter().position(|c| c.user_answer.is_some()).unwrap();
    let fork = toolenv_runs::fork::fork(&Catalogue::new(), &recorded.trajectory, turn + 1, DEFAULT_MAX_CALLS).expect("forks");
    assert_eq!(fork.trajectory().calls[turn].user_answer(), recorded.trajectory.calls[turn].user_answer.as_deref());
    // An edited answer does not replay: the record is checked.
    let mut edited = recorded.trajectory.clone();
    edited.calls[turn].user_answer = Some("The date is 1999-01-01.".into());
    assert!(toolenv_runs::fork::fork(&Catalogue::new(), &edited, turn + 1, DEFAULT_MAX_CALLS).is_err());
    // Played again from the tape, with the endpoint gone: the same trajectory.
    drop(endpoint);
    let user = llm_user("http://127.0.0.1:9/v1", Tape::Replay(tape.path().to_owned()), quick());
    let offline = play(&mut client, solver_with(user), new_episode(&task.id, 3, 1)).await.expect("replays from the tape");
    assert_eq!(toolenv_runs::trajectory_json(&offline.trajectory).to_string(), golden);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_replies_and_failing_endpoints_end_in_bounded_clear_outcomes() {
    let (_server, mut client) = start().await;
    let task = withholding().into_iter().next().unwrap();
    let huge = "the date is ".repeat(100_000);
    for text in [String::new(), huge, "Не знаю, спросите моего мужа.".to_owned()] {
        let endpoint = ScriptedEndpoint::start_with(move |_: &Value| Canned::Text(text.clone())).await.unwrap();
        let remote = play(&mut client, solver_with(llm_user(&endpoint.base_url(), Tape::Off, quick())), new_episode(&task.id, 0, 0))
            .await
            .expect("a bad answer is an answer");
        // The solver learns nothing and gives up: a failed episode, judged.
        assert!(!remote.verdict.passed);
        let turn = remote.trajectory.calls.iter().find(|c| c.tool_name == ASK_USER).unwrap();
        let Some(pb::tool_call_record::Outcome::ResultJson(reply)) = &turn.outcome else { panic!("{turn:?}") };
        let reply: Value = serde_json::from_str(reply).unwrap();
        assert_eq!(reply["told"], json!({}));
        assert!(reply["answer"].as_str().unwrap().len() <= user::MAX_ANSWER_BYTES);
    }
    // HTTP 500 and a hung endpoint: infrastructure errors that say what failed.
    for (canned, says) in [(Canned::Status(500), "HTTP 500"), (Canned::Hang, "timed out")] {
        let endpoint = ScriptedEndpoint::start_with(move |_: &Value| canned.clone()).await.unwrap();
        let user = llm_user(&endpoint.base_url(), Tape::Off, RetryPolicy { request_timeout: Duration::from_millis(300), ..quick() });
        let error = play(&mut client, solver_with(user), new_episode(&task.id, 0, 0)).await.expect_err("an infrastructure error");
        let message = error.to_string();
        assert!(message.contains("LLM user") && message.contains(says), "{message}");
        assert_eq!(endpoint.requests(), 2, "max_attempts");
    }
}

#[test]
fn the_prompt_holds_what_the_user_knows_and_asks_for_determinism() {
    let task = direct().into_iter().next().unwrap();
    let user = llm_user("http://127.0.0.1:9/v1", Tape::Off, quick());
    let request = user.request(&task, "What is it?");
    let system = request.pointer("/messages/0/content").and_then(Value::as_str).unwrap();
    for w in &task.conversation.as_ref().unwrap().withheld {
        assert!(system.contains(&format!("- {}: {}", user::readable(w.slot), w.value)), "{system}");
    }
    assert!(system.contains(&task.description()));
    assert_eq!(request["messages"][1], json!({"role": "user", "content": "What is it?"}));
    assert_eq!((request["temperature"].as_f64(), request["seed"].as_u64()), (Some(0.0), Some(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_asks_the_llm_user_through_its_planner() {
    let (_server, mut client) = start().await;
    for task in withholding().iter().take(3) {
        let endpoint = user_endpoint(task, str::to_owned).await;
        let user = llm_user(&endpoint.base_url(), Tape::Off, quick());
        let agent: Arc<dyn Agent> = Arc::new(WithLlmUser { agent: Arc::new(Builtin::TeamClosedLoop), user });
        let remote = play(&mut client, agent, new_episode(&task.id, 0, 0)).await.expect("plays");
        assert!(remote.verdict.passed, "{}", task.id);
        let turns: Vec<&pb::ToolCallRecord> = remote.trajectory.calls.iter().filter(|c| c.tool_name == ASK_USER).collect();
        assert!(!turns.is_empty() && turns.iter().all(|c| c.user_answer.is_some() && !c.agent_id.is_empty()), "{}", task.id);
        assert!(endpoint.requests() >= turns.len() as u64);
    }
}
