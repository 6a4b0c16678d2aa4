//! Answers supplied from outside (an LLM user) to `ask_user`: the reply's
//! shape and bounds, what `told` reads from the text, the record and its
//! byte-identical replay; and attribution naming the user when a wrong
//! answer is what failed the episode, and the agent when the same wrong
//! value was its own doing.

use serde_json::{Value, json};
use toolenv_core::{CallOptions, Episode, Outcome, Source, TaskRef, Trajectory, bus::ASK_USER, user};
use toolenv_domains::{
    Finish,
    attribution::{ErrorType, Mast, Responsible, attribute},
    generate::Suite,
    solver::{Env, Observation, Request},
};

fn tasks() -> Vec<TaskRef> {
    "conversational:2026:4".parse::<Suite>().unwrap().tasks(None, None)
}

/// Conversational tasks whose first withheld value goes verbatim into a reference write (a wrong one shows in the end state).
fn direct_tasks() -> Vec<TaskRef> {
    tasks()
        .into_iter()
        .filter(|t| {
            let Some(w) = t.conversation.as_ref().and_then(|c| c.withheld.first()) else { return false };
            t.reference.iter().any(|c| t.domain.tool(c.tool).is_some_and(|s| s.mutates_state) && c.arguments.to_string().contains(&w.value))
        })
        .collect()
}

fn reply(record: &toolenv_core::CallRecord) -> Value {
    match &record.outcome {
        Outcome::Result(text) => serde_json::from_str(text).expect("JSON"),
        other => panic!("ask_user: {other:?}"),
    }
}

/// A value like `value` but wrong: its last digit moved on by one (a date stays a date unless its day ends in 9).
fn wrong(value: &str) -> String {
    let Some(at) = value.rfind(|c: char| c.is_ascii_digit()) else {
        // A place code, or a name.
        return if value.len() == 3 && value.bytes().all(|b| b.is_ascii_uppercase()) { "QQQ".into() } else { "Zoe Quill".into() };
    };
    let digit = value.as_bytes()[at] - b'0';
    format!("{}{}{}", &value[..at], (digit + 1) % 10, &value[at + 1..])
}

#[test]
fn a_supplied_answer_is_the_reply_told_reads_it_and_the_record_keeps_it() {
    let task = tasks().into_iter().find(|t| t.conversation.as_ref().is_some_and(|c| !c.withheld.is_empty())).unwrap();
    let w = task.conversation.as_ref().unwrap().withheld[0].clone();
    let question = json!({"question": format!("What is the {}?", user::readable(w.slot))}).to_string();
    let mut episode = Episode::new(&task, 0, 0);
    let options = CallOptions::default();
    let said = format!("Oh, it is {} I think.", wrong(&w.value));
    let r = reply(episode.call_with(ASK_USER, &question, &CallOptions { user_answer: Some(&said), ..CallOptions::default() }).unwrap());
    assert_eq!(r["answer"], said);
    assert_eq!(r["heard"], "understood");
    assert_eq!(r["told"], json!({w.slot: wrong(&w.value)}));
    // The rule-based user tells the truth to the same question.
    let r = reply(episode.call_with(ASK_USER, &question, &options).unwrap());
    assert_eq!(r["told"], json!({w.slot: w.value}));
    // Bad answers: empty, 1 MiB, not English: bounded, nothing told.
    let huge = "x".repeat(1 << 20);
    for bad in ["", huge.as_str(), "Не знаю, спросите позже."] {
        let record =
            episode.call_with(ASK_USER, &question, &CallOptions { user_answer: Some(bad), ..CallOptions::default() }).unwrap().clone();
        let r = reply(&record);
        assert_eq!(r["told"], json!({}), "{}", &bad[..bad.len().min(20)]);
        assert!(r["answer"].as_str().unwrap().len() <= user::MAX_ANSWER_BYTES);
        assert_eq!(record.user_answer().map(str::len), Some(bad.len().min(user::MAX_ANSWER_BYTES)));
        assert!(record.arguments.len() < 200);
    }
    // A supplied answer elsewhere than ask_user changes nothing.
    let calls = episode.trajectory().calls.len();
    let tool = task.tools().iter().next().unwrap().name;
    let _ = episode.call_with(tool, "{}", &CallOptions { user_answer: Some("ignored"), ..CallOptions::default() });
    assert_eq!(episode.trajectory().calls[calls].user_answer(), None);
    // Replayed from the record, byte for byte (the supplied text fed back).
    let source = Source::of(task.clone(), episode.trajectory());
    let replayed = Episode::fork(&source, &episode.trajectory().calls, episode.trajectory().calls.len()).expect("replays");
    assert_eq!(serde_json::to_string(replayed.trajectory()).unwrap(), serde_json::to_string(episode.trajectory()).unwrap());
}

/// The solver's environment with a user who answers as `answer` says (the
/// rule-based user's answer and told values, to the answer's text), and
/// an agent that may misread what it is told (`misread`).
struct Scripted<'a> {
    episode: &'a mut Episode,
    answer: fn(&Value) -> Option<String>,
    misread: bool,
}

impl Env for Scripted<'_> {
    fn call(&mut self, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        let said = (tool == ASK_USER).then(|| {
            let question: Value = serde_json::from_str(arguments_json).unwrap();
            let task = self.episode.task_ref().clone();
            let told = user::hear(task.conversation.as_ref().unwrap(), &task.slots, question["question"].as_str().unwrap()).told;
            (self.answer)(&json!({"told": told}))
        });
        let said = said.flatten();
        let request = Request { user_answer: said.as_deref(), ..*request };
        let mut observation = Env::call(self.episode, tool, arguments_json, &request);
        if let (Observation::Result(text), true) = (&mut observation, self.misread && tool == ASK_USER) {
            let mut reply: Value = serde_json::from_str(text).unwrap();
            if let Some(told) = reply["told"].as_object_mut() {
                told.values_mut().for_each(|v| *v = json!(wrong(v.as_str().unwrap())));
            }
            *text = reply.to_string();
        }
        observation
    }
}

/// An LLM user that lies: each told value made wrong.
fn lying(truth: &Value) -> Option<String> {
    let told = truth["told"].as_object().filter(|t| !t.is_empty())?;
    Some(told.values().map(|v| format!("It is {}.", wrong(v.as_str().unwrap()))).collect::<Vec<_>>().join(" "))
}

/// An LLM user that tells the truth in its own words.
fn honest(truth: &Value) -> Option<String> {
    let told = truth["told"].as_object().filter(|t| !t.is_empty())?;
    Some(format!("Sure: {}.", told.values().map(|v| v.as_str().unwrap().to_owned()).collect::<Vec<_>>().join(", then ")))
}

fn play(task: &TaskRef, answer: fn(&Value) -> Option<String>, misread: bool) -> (Trajectory, bool) {
    let mut episode = Episode::new(task, 0, 0);
    let _ = toolenv_domains::solver::run(task, &mut Scripted { episode: &mut episode, answer, misread });
    let passed = episode.finish().passed;
    (episode.trajectory().clone(), passed)
}

#[test]
fn attribution_names_a_lying_user_and_an_agent_that_misreads() {
    let tasks = direct_tasks();
    assert!(tasks.len() >= 4, "{} tasks", tasks.len());
    let mut named_user = 0;
    for task in &tasks {
        // An honest LLM user: the solver passes, and nothing is attributed.
        let (trajectory, passed) = play(task, honest, false);
        assert!(passed, "{}: honest: {:?}", task.id, trajectory.calls.iter().map(|c| &c.outcome).collect::<Vec<_>>());
        assert!(trajectory.calls.iter().any(|c| c.user_answer().is_some()));
        // A lying one: the episode fails; the user is responsible at the turn where it lied.
        let (trajectory, passed) = play(task, lying, false);
        assert!(!passed, "{}: lying", task.id);
        let source = Source::of(task.clone(), &trajectory);
        let attribution = attribute(&source, &trajectory).expect("attributed");
        let turn = trajectory.calls.iter().find(|c| c.user_answer().is_some()).unwrap().index;
        if attribution.responsible == Some(Responsible::User) {
            named_user += 1;
            let decisive = &attribution.errors[0];
            assert_eq!((decisive.step, decisive.error, decisive.mast), (turn, ErrorType::UserMisinformed, Some(Mast::Fm2_4)));
            assert_eq!(attribution.decisive_step, Some(turn));
            assert_eq!(decisive.party("agent"), "user");
        } else {
            eprintln!("{}: {:?}", task.id, attribution.errors.first().map(|e| &e.reason));
        }
        // The same wrong value, the agent's own misreading of the rule-based user: the agent's.
        let (trajectory, passed) = play(task, |_| None, true);
        assert!(!passed, "{}: misread", task.id);
        assert!(trajectory.calls.iter().all(|c| c.user_answer().is_none()));
        let attribution = attribute(&Source::of(task.clone(), &trajectory), &trajectory).expect("attributed");
        assert_ne!(attribution.responsible, Some(Responsible::User), "{}", task.id);
        assert!(attribution.errors.iter().all(|e| e.responsible != Responsible::User));
        // A turn where the user acted (dual control) applied the user's own call: no write of `ask_user`.
        assert!(attribution.errors.iter().all(|e| !e.reason.starts_with(ASK_USER)), "{}: {:?}", task.id, attribution.errors);
    }
    eprintln!("the user named in {named_user} of {} lying episodes", tasks.len());
    // A wrong value written verbatim is the user's in every task.
    assert_eq!(named_user, tasks.len());
}
