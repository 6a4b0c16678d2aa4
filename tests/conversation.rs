//! Conversational tasks over gRPC: `ask_user` is offered and answered by
//! the simulated user, the same way at any concurrency; the solver asks and
//! passes as it does in-process; bad questions get clear answers.

use crate::support::{new_episode, start};
use serde_json::{Value, json};
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::{Client, play};
use toolenv_core::{
    Episode,
    bus::ASK_USER,
    user::{CODE_QUESTION, READ_CODE, SEND_CODE, VERIFY},
};
use toolenv_domains::{generate::Suite, solver::solve};

fn tasks() -> Vec<toolenv_core::TaskRef> {
    "conversational:2026:2".parse::<Suite>().unwrap().tasks(None, None)
}

async fn ask(client: &mut Client, episode: &str, question: &str) -> Value {
    let reply = client.call_json(episode, ASK_USER, &json!({"question": question}).to_string()).await.expect("ask_user answers");
    match reply.outcome {
        Some(pb::call_tool_response::Outcome::ResultJson(text)) => serde_json::from_str(&text).expect("JSON"),
        other => panic!("ask_user: {other:?}"),
    }
}

#[tokio::test]
async fn the_solver_asks_over_grpc_as_in_process_and_passes() {
    let (server, mut client) = start().await;
    let mut dual = 0;
    for task in tasks() {
        let request = new_episode(&task.id, 1, 0);
        let episode = client.create(request.clone()).await.unwrap();
        assert!(episode.tools.iter().any(|t| t.name == ASK_USER), "{}: ask_user offered", task.id);
        client.finish(crate::support::finishing(&episode.episode_id)).await.unwrap();
        let remote = play(&mut client, Builtin::Solver, request).await.unwrap();
        let mut local = Episode::new(&task, 1, 0);
        let solution = solve(&mut local);
        let remote_calls: Vec<String> = remote.trajectory.calls.iter().map(|c| format!("{}{}", c.tool_name, c.arguments_json)).collect();
        let local_calls: Vec<String> = local.trajectory().calls.iter().map(|c| format!("{}{}", c.tool, c.arguments)).collect();
        assert_eq!(remote_calls, local_calls, "{}", task.id);
        assert!(remote.verdict.passed && solution.verdict.passed, "{}: {:#?}", task.id, remote.verdict.checks);
        let withheld = !task.conversation.as_ref().unwrap().withheld.is_empty();
        let acts = !task.conversation.as_ref().unwrap().actions.is_empty();
        let verifies = task.conversation.as_ref().unwrap().verification.is_some();
        assert_eq!(remote_calls.iter().any(|c| c.starts_with(ASK_USER)), withheld || acts || verifies);
        // The user's own call (dual control) is on the wire, inside the turn that asked for it:
        // an action changes the state, reading the code does not.
        let user_calls: Vec<&pb::ToolCallRecord> = remote.trajectory.calls.iter().filter_map(|c| c.user_call.as_deref()).collect();
        assert_eq!(!user_calls.is_empty(), acts || verifies, "{}", task.id);
        assert!(user_calls.iter().all(|u| u.agent_id == "user"
            && u.state_changed == (u.tool_name != READ_CODE)
            && matches!(u.outcome, Some(pb::tool_call_record::Outcome::ResultJson(_)))));
        dual += usize::from(acts || verifies);
    }
    assert!(dual >= 2, "tasks with dual control: {dual}");
    // A plain generated task offers no user to ask.
    let plain = client.create(new_episode("travel/cheapest-flight/001", 0, 0)).await.unwrap();
    assert!(!plain.tools.iter().any(|t| t.name == ASK_USER));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_user_answers_the_same_at_any_concurrency() {
    let (server, client) = start().await;
    let suite: Suite = "conversational:2026:4".parse().unwrap();
    let task = suite
        .tasks(None, Some(2))
        .into_iter()
        .find(|t| t.conversation.as_ref().is_some_and(|c| c.withheld.len() == 2))
        .expect("two withheld");
    let questions: Vec<String> = {
        let c = task.conversation.as_ref().unwrap();
        let names: Vec<String> = c.withheld.iter().map(|w| toolenv_core::user::readable(w.slot)).collect();
        vec![
            format!("What is the {}?", names[0]),
            format!("What are the {} and the {}?", names[0], names[1]),
            "Tell me everything.".to_owned(),
            "What is the weather like?".to_owned(),
            String::new(),
            "Wann ist das Treffen? Ärger über Öl".to_owned(),
        ]
    };
    let mut workers = Vec::new();
    for worker in 0..16u64 {
        let (mut client, task_id, questions) = (client.clone(), task.id.clone(), questions.clone());
        workers.push(tokio::spawn(async move {
            let episode = client.create(new_episode(&task_id, worker, 0)).await.unwrap();
            let mut answers = Vec::new();
            // Each worker asks in its own order; an answer depends on the question only.
            for k in 0..questions.len() {
                let q = &questions[(k + worker as usize) % questions.len()];
                answers.push((q.clone(), ask(&mut client, &episode.episode_id, q).await));
            }
            answers.sort_by(|a, b| a.0.cmp(&b.0));
            answers
        }));
    }
    let mut all = Vec::new();
    for worker in workers {
        all.push(worker.await.unwrap());
    }
    assert!(all.iter().all(|answers| *answers == all[0]));
    let by_question: std::collections::BTreeMap<&str, &Value> = all[0].iter().map(|(q, a)| (q.as_str(), a)).collect();
    assert_eq!(by_question[questions[1].as_str()]["told"].as_object().unwrap().len(), 2);
    assert_eq!(by_question[questions[0].as_str()]["told"].as_object().unwrap().len(), 1);
    assert_eq!(by_question["Tell me everything."]["heard"], "too_broad");
    assert_eq!(by_question["What is the weather like?"]["heard"], "unknown");
    assert_eq!(by_question[""]["heard"], "empty");
    // A 1 MiB question is refused as malformed, naming the limit; the server goes on.
    let mut client = client;
    let episode = client.create(new_episode(&task.id, 0, 0)).await.unwrap();
    let huge = json!({"question": "date ".repeat(1 << 18)}).to_string();
    let refused = client.call_json(&episode.episode_id, ASK_USER, &huge).await.unwrap_err();
    assert!(matches!(refused, toolenv_client::ClientError::Status(ref s) if s.code() == tonic::Code::InvalidArgument), "{refused}");
    assert_eq!(ask(&mut client, &episode.episode_id, &questions[0]).await, *by_question[questions[0].as_str()]);
    server.shutdown().await.unwrap();
}

/// The outcome of a call over gRPC: its result as JSON, or its domain error's code.
async fn outcome(client: &mut Client, episode: &str, tool: &str, arguments: Value) -> Value {
    let reply = client.call_json(episode, tool, &arguments.to_string()).await.expect("a reply");
    match reply.outcome {
        Some(pb::call_tool_response::Outcome::ResultJson(text)) => serde_json::from_str(&text).expect("JSON"),
        Some(pb::call_tool_response::Outcome::Error(e)) => json!({"domain_error": e.code}),
        other => panic!("{tool}: {other:?}"),
    }
}

#[tokio::test]
async fn a_verification_code_read_by_the_user_over_grpc() {
    let (server, mut client) = start().await;
    let task = "conversational:2026:16"
        .parse::<Suite>()
        .unwrap()
        .tasks(None, None)
        .into_iter()
        .find(|t| t.conversation.as_ref().is_some_and(|c| c.verification.is_some()))
        .expect("a task with a verification");
    let v = task.conversation.as_ref().unwrap().verification.clone().unwrap();
    // The solver sends the code, asks the user, who reads it from the phone, verifies and writes.
    let request = new_episode(&task.id, 0, 0);
    let created = client.create(request.clone()).await.unwrap();
    let offered: Vec<&str> = created.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(offered.ends_with(&[ASK_USER, SEND_CODE, VERIFY]) && !offered.contains(&READ_CODE), "{offered:?}");
    client.finish(crate::support::finishing(&created.episode_id)).await.unwrap();
    let remote = play(&mut client, Builtin::Solver, request).await.unwrap();
    assert!(remote.verdict.passed, "{:#?}", remote.verdict.checks);
    let read = remote.trajectory.calls.iter().find_map(|c| c.user_call.as_deref()).expect("the user's reading");
    assert_eq!((read.tool_name.as_str(), read.agent_id.as_str(), read.state_changed), (READ_CODE, "user", false));
    assert!(matches!(&read.outcome, Some(pb::tool_call_record::Outcome::ResultJson(text)) if text.contains(&v.code)));
    // An agent that guesses the code instead of asking fails: the guesses run out, the write is refused.
    let episode = client.create(new_episode(&task.id, 1, 0)).await.unwrap().episode_id;
    outcome(&mut client, &episode, SEND_CODE, json!({"customer_id": v.customer})).await;
    for guess in ["123456", "000000", "999999", v.code.as_str()] {
        let said = outcome(&mut client, &episode, VERIFY, json!({"customer_id": v.customer, "code": guess})).await;
        assert!(said.get("domain_error").is_some(), "{guess}: {said}");
    }
    let write = task.reference.iter().find(|c| c.tool == v.tool).unwrap();
    let refused = outcome(&mut client, &episode, v.tool, write.arguments.clone()).await;
    assert_eq!(refused, json!({"domain_error": "VERIFICATION_REQUIRED"}));
    let answer = ask(&mut client, &episode, CODE_QUESTION).await;
    assert_eq!(answer["told"]["verification_code"], v.code.as_str());
    let finished = client.finish(crate::support::finishing(&episode)).await.unwrap();
    assert!(!finished.passed);
    server.shutdown().await.unwrap();
}
