//! The LLM judge of prose answers against a scripted OpenAI-compatible
//! endpoint on a loopback port: its ruling decides the answer checks, is
//! kept in the trajectory and replays without the model; typed answers and
//! tasks that ask nothing never reach it; a reply that holds no ruling
//! refuses the finish as UNAVAILABLE and leaves the episode to finish again.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolenv_domains::taskfile::Catalogue;

use crate::support::{new_episode, start_with};
use prost::Message as _;
use serde_json::Value;
use toolenv::pb;
use toolenv_agents::llm::scripted::{Canned, ScriptedEndpoint};
use toolenv_agents::llm::{LlmJudge, ModelEndpoint, RetryPolicy, Tape};
use toolenv_core::{DEFAULT_MAX_CALLS, JudgeQuestion, Task};
use toolenv_domains::generate::{Origin, generate};
use toolenv_server::{AnswerJudge, Config};

/// The judge as the server asks it.
#[derive(Debug)]
struct Judge(LlmJudge);

impl AnswerJudge for Judge {
    fn rule<'a>(
        &'a self,
        question: &'a JudgeQuestion,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<toolenv_core::AnswerRuling, String>> + Send + 'a>> {
        Box::pin(self.0.rule(question))
    }
}

/// The text between two markers of a judge's question.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).map_or(0, |at| at + start.len());
    let to = text[from..].find(end).map_or(text.len(), |at| from + at);
    &text[from..to]
}

/// A lenient scripted judge: an answer is right when it holds the
/// reference answer word for word (so a hedged right answer, which the
/// rule-based reader rejects, passes here: the ruling decides); a reply with
/// no ruling for an answer that says GARBAGE. Keeps the last request body.
async fn judge_endpoint(last: Arc<Mutex<Value>>) -> ScriptedEndpoint {
    ScriptedEndpoint::start_with(move |body: &Value| {
        *last.lock().unwrap() = body.clone();
        let question = body.pointer("/messages/1/content").and_then(Value::as_str).unwrap_or_default();
        let reference = between(question, "A right answer (reference):\n", "\n\nA right answer must:");
        let answer = between(question, "<<<ANSWER\n", "\nANSWER>>>");
        if answer.contains("GARBAGE") {
            return Canned::Text("I would rather not say.".into());
        }
        let correct = answer.contains(reference);
        Canned::Text(format!(
            "Ruling:\n```json\n{{\"correct\": {correct}, \"reason\": \"scripted: reference {}\"}}\n```",
            if correct { "found" } else { "missing" }
        ))
    })
    .await
    .unwrap()
}

/// Level-3 generated tasks that ask a question, one of each kind.
fn answer_tasks() -> Vec<Task> {
    let mut kinds = std::collections::BTreeSet::new();
    toolenv_domains::registry::ALL
        .iter()
        .flat_map(|&domain| (0..12).map(move |index| generate(Origin { domain, level: 3, seed: 4, index })))
        .filter(|t| t.reference_answer().is_some() && kinds.insert(t.kind().to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_judges_ruling_decides_the_answer_and_replays_without_the_model() {
    let last = Arc::new(Mutex::new(Value::Null));
    let endpoint = judge_endpoint(last.clone()).await;
    let retry = RetryPolicy { max_attempts: 2, request_timeout: Duration::from_secs(5), ..Default::default() };
    let model = LlmJudge::new("scripted-judge", ModelEndpoint::new(&endpoint.base_url(), None, retry, Tape::Off).unwrap());
    let config = Config { answer_judge: Some(Arc::new(Judge(model))), ..Config::default() };
    let (server, mut client) = start_with(config).await;
    let tasks = answer_tasks();
    assert!(tasks.len() >= 6, "answer kinds: {}", tasks.len());
    let (mut trajectories, mut disagreements) = (Vec::new(), 0);
    for task in &tasks {
        let right = task.reference_answer().unwrap().to_owned();
        let hedged = format!("{right} I'm not sure.");
        // (answer, the judge's ruling)
        for (answer, correct) in [(right.clone(), true), (hedged, true), ("I could not find out.".to_owned(), false)] {
            let episode = client.create(new_episode(&task.id, 0, 0)).await.unwrap();
            for call in &task.reference {
                client.call_json(&episode.episode_id, call.tool, &call.arguments.to_string()).await.unwrap();
            }
            let asked = endpoint.requests();
            let finish =
                pb::FinishEpisodeRequest { episode_id: episode.episode_id.clone(), answer: Some(answer.clone()), ..Default::default() };
            let verdict = client.finish(finish.clone()).await.unwrap();
            assert_eq!(verdict.passed, correct, "{}: {answer}: {:#?}", task.id, verdict.checks);
            assert_eq!(endpoint.requests(), asked + 1, "one question a finish");
            // Finishing again: the same verdict, the judge not asked again.
            assert_eq!(client.finish(finish).await.unwrap(), verdict);
            assert_eq!(endpoint.requests(), asked + 1);
            let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
            let ruling = trajectory.answer_ruling.clone().expect("the ruling is recorded");
            assert_eq!((ruling.judge.as_str(), ruling.correct), ("model scripted-judge", correct), "{}", task.id);
            let check = verdict.checks.iter().find(|c| c.actual_json.contains("judged_by")).expect("the answer check says who judged");
            assert!(check.actual_json.contains("model scripted-judge") && check.actual_json.contains("scripted: reference"), "{check:?}");
            // The rule-based reader on the same end state and answer: where it disagrees, the ruling decided.
            let mut by_reader =
                toolenv_runs::fork::fork(&Catalogue::new(), &trajectory, trajectory.calls.len(), DEFAULT_MAX_CALLS).unwrap();
            by_reader.answer(answer.as_str());
            disagreements += usize::from(toolenv_domains::Finish::finish(&mut by_reader).passed != correct);
            trajectories.push(trajectory);
        }
    }
    assert!(disagreements > 0, "the reader rejects some hedged answers the lenient judge accepts");
    let body = last.lock().unwrap().clone();
    assert_eq!((body["temperature"].as_f64(), body["model"].as_str()), (Some(0.0), Some("scripted-judge")), "{body}");
    // With the endpoint gone: every stored trajectory replays to its verdict, byte for byte, and attributes.
    drop(endpoint);
    for trajectory in &trajectories {
        let stored = pb::Trajectory::decode(trajectory.encode_to_vec().as_slice()).unwrap();
        toolenv_runs::fork::replay(&Catalogue::new(), &stored, DEFAULT_MAX_CALLS).unwrap_or_else(|e| panic!("{}: {e}", stored.task_id));
        let attribution = toolenv_runs::fork::attribute(&Catalogue::new(), &stored, DEFAULT_MAX_CALLS).unwrap();
        assert_eq!(attribution.passed, stored.verdict.as_ref().unwrap().passed);
    }
    // The run's records and report say which judged.
    let planned = toolenv_runs::Grid::single(vec!["reference".to_owned()]).plan(trajectories.iter().map(|t| t.task_id.as_str()));
    let results: Vec<_> = planned.iter().zip(&trajectories).map(|(p, t)| p.result(t)).collect();
    assert!(results.iter().all(|r| r.answer_judge.as_deref() == Some("model scripted-judge")));
    let text = toolenv_runs::report::render(&results, 1, Default::default(), Default::default()).unwrap();
    assert!(text.contains(&format!("answers judged by model scripted-judge: {} episodes", results.len())), "{text}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_answers_and_tasks_that_ask_nothing_never_reach_the_judge_and_no_ruling_is_no_finish() {
    let endpoint = judge_endpoint(Arc::new(Mutex::new(Value::Null))).await;
    let retry = RetryPolicy { max_attempts: 1, request_timeout: Duration::from_secs(5), ..Default::default() };
    let model = LlmJudge::new("scripted-judge", ModelEndpoint::new(&endpoint.base_url(), None, retry, Tape::Off).unwrap());
    let (server, mut client) = start_with(Config { answer_judge: Some(Arc::new(Judge(model))), ..Config::default() }).await;
    let task = answer_tasks().into_iter().next().unwrap();
    // A typed answer is judged field by field.
    let episode = client.create(new_episode(&task.id, 0, 0)).await.unwrap();
    for call in &task.reference {
        client.call_json(&episode.episode_id, call.tool, &call.arguments.to_string()).await.unwrap();
    }
    let typed = toolenv_core::typed::example(&task.answer_fields()).to_string();
    let finish = pb::FinishEpisodeRequest {
        episode_id: episode.episode_id.clone(),
        answer: Some("prose beside the fields".into()),
        answer_json: Some(typed),
        ..Default::default()
    };
    assert!(client.finish(finish).await.unwrap().passed);
    assert!(client.trajectory(&episode.episode_id).await.unwrap().answer_ruling.is_none());
    // A task of the paper's suite asks nothing.
    let paper = &toolenv_domains::suite()[0];
    let episode = client.create(new_episode(&paper.id, 0, 0)).await.unwrap();
    let finish = pb::FinishEpisodeRequest { episode_id: episode.episode_id.clone(), answer: Some("Done.".into()), ..Default::default() };
    client.finish(finish).await.unwrap();
    assert_eq!(endpoint.requests(), 0, "nothing to rule on");
    // A reply with no ruling: UNAVAILABLE, nothing finished; the episode finishes on the next try.
    let episode = client.create(new_episode(&task.id, 0, 0)).await.unwrap();
    let finish = |answer: &str| pb::FinishEpisodeRequest {
        episode_id: episode.episode_id.clone(),
        answer: Some(answer.into()),
        ..Default::default()
    };
    let refused = client.finish(finish("GARBAGE")).await.unwrap_err().to_string();
    assert!(refused.contains("the answer judge gave no ruling") && refused.contains("rather not say"), "{refused}");
    assert!(client.trajectory(&episode.episode_id).await.unwrap().verdict.is_none(), "not finished");
    let verdict = client.finish(finish("I could not find out.")).await.unwrap();
    assert!(!verdict.passed);
    server.shutdown().await.unwrap();
}
