//! Conversational tasks: the variants withhold what they say they withhold,
//! the self-check holds for them (reference and solver pass; inaction,
//! random agents, cheats and an agent that guesses instead of asking fail),
//! the user answers the same way every time, and dual control records the
//! user's own call.

use serde_json::{Value, json};
use toolenv_core::{CallOptions, Episode, Outcome, TaskRef, bus::ASK_USER};
use toolenv_domains::{Finish, generate::Suite, selfcheck::SelfCheck};

/// The suite checked: `conversational:2026:4`, or the one `TOOLENV_CONVERSATIONAL_SUITE` names (a larger sweep).
fn suite() -> Vec<TaskRef> {
    let name = std::env::var("TOOLENV_CONVERSATIONAL_SUITE").unwrap_or_else(|_| "conversational:2026:4".to_owned());
    name.parse::<Suite>().expect("a suite name").tasks(None, None)
}

fn reply(episode: &mut Episode, tool: &str, arguments: Value) -> Value {
    let record = episode.call_with(tool, &arguments, &CallOptions::default()).expect("a recorded call").clone();
    match record.outcome {
        Outcome::Result(text) => serde_json::from_str(&text).expect("JSON"),
        Outcome::Error(e) => json!({"domain_error": e.code}),
        other => panic!("{tool}: {other:?}"),
    }
}

#[test]
fn variants_withhold_from_the_description_and_keep_the_task() {
    let tasks = suite();
    assert!(tasks.len() >= 48);
    let (mut withholding, mut dual, mut full) = (0, 0, 0);
    for task in &tasks {
        let conversation = task.conversation.as_ref().expect("a conversational task");
        let description = task.description();
        for w in &conversation.withheld {
            assert!(!description.contains(&w.value), "{}: '{}' is in '{description}'", task.id, w.value);
        }
        withholding += usize::from(!conversation.withheld.is_empty());
        dual += usize::from(!conversation.actions.is_empty());
        full += usize::from(conversation.withheld.is_empty());
        // The task given in full has the same end state.
        let generated = toolenv_domains::generate::resolve(&toolenv_domains::generate::conversation::generated_id(&task.id).unwrap())
            .expect("the task in full");
        assert_eq!(generated.expected_changes(), task.expected_changes(), "{}", task.id);
        assert!(generated.conversation.is_none());
        // Resolved by id, the same task.
        let again = toolenv_domains::generate::resolve(&task.id).expect("resolved");
        assert_eq!(again.slots, task.slots);
    }
    assert!(withholding >= 30 && full >= 12 && dual >= 4, "withholding {withholding}, in full {full}, dual control {dual}");
}

#[test]
fn the_self_check_holds_for_conversational_tasks() {
    let (mut guesses, mut lucky) = (0, 0);
    for task in suite() {
        let check = SelfCheck::run_with(&task, 4);
        assert!(check.problems().is_empty(), "{}: {:?}", task.id, check.problems());
        guesses += check.guesser.len();
        lucky += check.guesser.iter().filter(|g| g.passed).count();
        // The solver asked exactly when something was withheld.
        let mut episode = Episode::new(&task, 0, 0);
        let _ = toolenv_domains::solver::run(&task, &mut episode);
        let asked = episode.trajectory().calls.iter().filter(|c| c.tool == ASK_USER).count();
        let conversation = task.conversation.as_ref().unwrap();
        let needs_user = !conversation.withheld.is_empty() || !conversation.actions.is_empty() || conversation.verification.is_some();
        assert_eq!(asked > 0, needs_user, "{}", task.id);
    }
    eprintln!("{lucky} of {guesses} wrong guesses passed");
    // Every wrong guess fails: a slot is withheld only where one must ask.
    assert!(guesses >= 60 && lucky == 0, "{lucky} of {guesses} guesses passed");
}

/// The class, not one seed: over many suites, no wrong guess of a withheld slot passes.
#[test]
fn no_wrong_guess_passes_in_any_suite() {
    use toolenv_domains::agent::{GUESSES, guessed};
    let (mut played, mut lucky) = (0, Vec::new());
    for seed in 1..=12u64 {
        let suite: Suite = format!("conversational:{seed}:6").parse().unwrap();
        for task in suite.tasks(None, None) {
            for guess in (0..GUESSES).map_while(|k| guessed(&task, k)) {
                let mut episode = Episode::new(&task, 0, 0).for_pass_or_fail();
                let _ = toolenv_domains::solver::run(&guess, &mut episode);
                played += 1;
                if episode.finish().passed {
                    lucky.push(task.id.clone());
                }
            }
        }
    }
    assert!(played >= 500 && lucky.is_empty(), "{} of {played} wrong guesses passed: {lucky:?}", lucky.len());
}

#[test]
fn the_user_answers_the_same_way_every_time() {
    let task = suite().into_iter().find(|t| t.conversation.as_ref().is_some_and(|c| !c.withheld.is_empty())).unwrap();
    let w = &task.conversation.as_ref().unwrap().withheld[0];
    let question = format!("What is the {}?", toolenv_core::user::readable(w.slot));
    let answers: Vec<Value> = (0..3)
        .map(|seed| {
            let mut episode = Episode::new(&task, seed, 0);
            reply(&mut episode, ASK_USER, json!({"question": question}))
        })
        .collect();
    assert_eq!(answers[0]["told"][w.slot], Value::from(w.value.clone()));
    assert!(answers.iter().all(|a| *a == answers[0]));
    // Bad input: a clear, bounded answer that tells nothing.
    let mut episode = Episode::new(&task, 0, 0);
    for (question, heard) in [("", "empty"), ("¿Cuál es la fecha de la reunión, señor? Ñandú", "unknown"), ("Какая дата?", "foreign")]
    {
        let answer = reply(&mut episode, ASK_USER, json!({"question": question}));
        assert_eq!(answer["heard"], heard, "{question}");
        assert_eq!(answer["told"], json!({}));
    }
    let long = "x".repeat(1 << 20);
    let answer = reply(&mut episode, ASK_USER, json!({"question": long}));
    assert_eq!(answer["heard"], "too_long");
    assert!(answer["answer"].as_str().unwrap().len() < 200);
    // Sent as text, a 1 MiB question is a malformed call naming its limit.
    let text = json!({"question": long}).to_string();
    assert!(episode.call(ASK_USER, &text).is_err());
}

#[test]
fn only_the_user_takes_a_user_action_and_the_turn_records_it() {
    // Travel's payment, ecommerce's refund, scheduling's booking and move, each in some variant.
    let tasks = bigger_suite();
    let mut seen = std::collections::BTreeSet::new();
    for task in tasks.iter().filter(|t| t.conversation.as_ref().is_some_and(|c| !c.actions.is_empty())) {
        let action = &task.conversation.as_ref().unwrap().actions[0];
        if !seen.insert(action.tool) {
            continue;
        }
        let ask =
            task.reference.iter().find(|c| c.tool == ASK_USER && c.arguments["question"].as_str().unwrap().contains(action.what)).unwrap();
        let id = ask.arguments["question"].as_str().unwrap().split(' ').next_back().unwrap().trim_end_matches('.').to_owned();
        // The agent may not act itself.
        let mut episode = Episode::new(task, 0, 0);
        let mut arguments = action.fixed.clone();
        arguments[action.id_param] = Value::from(id.clone());
        assert_eq!(reply(&mut episode, action.tool, arguments), json!({"domain_error": "USER_ACTION_REQUIRED"}), "{}", task.id);
        assert!(!episode.trajectory().calls[0].state_changed);
        // The reference asks the user, whose call is recorded in the turn.
        let mut episode = Episode::new(task, 0, 0);
        for call in &task.reference {
            let _ = episode.call_with(call.tool, &call.arguments, &CallOptions::default());
        }
        let turn = episode.trajectory().calls.iter().find(|c| c.user().is_some()).expect("a turn with the user's call");
        assert!(turn.state_changed);
        let user = turn.user().unwrap();
        assert_eq!(user.tool, action.tool);
        assert!(user.arguments.contains(&id));
        assert!(matches!(user.outcome, Outcome::Result(_)));
        assert!(episode.finish().passed, "{}", task.id);
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["book_meeting", "confirm_booking", "process_return", "reschedule_meeting"]);
}

/// A larger suite, where every kind of dual control occurs.
fn bigger_suite() -> Vec<TaskRef> {
    "conversational:2026:16".parse::<Suite>().unwrap().tasks(None, None)
}

#[test]
fn every_domain_has_dual_control_in_some_variant() {
    let mut domains = std::collections::BTreeSet::new();
    for task in bigger_suite() {
        let c = task.conversation.as_ref().unwrap();
        if !c.actions.is_empty() || c.verification.is_some() {
            domains.insert(task.domain.name());
        }
    }
    assert_eq!(domains.len(), 4, "{domains:?}");
}

#[test]
fn a_verification_code_goes_from_the_phone_through_the_user() {
    use toolenv_core::user::{CODE_QUESTION, READ_CODE, SEND_CODE, VERIFY, Verification};
    let task =
        bigger_suite().into_iter().find(|t| t.conversation.as_ref().is_some_and(|c| c.verification.is_some())).expect("a verification");
    let v = task.conversation.as_ref().unwrap().verification.clone().unwrap();
    assert_eq!(v.code, Verification::code_of(&task.id, &v.customer));
    assert!(v.code.len() == 6 && v.code.bytes().all(|b| b.is_ascii_digit()));
    let write = task.reference.iter().find(|c| c.tool == v.tool).unwrap().clone();
    let ask_code = json!({"question": CODE_QUESTION});
    let mut episode = Episode::new(&task, 0, 0);
    let offered: Vec<&str> = episode.bus_tools().iter().map(|t| t.name).collect();
    assert_eq!(offered, [ASK_USER, SEND_CODE, VERIFY]);
    // The write is refused before verification; the code is nowhere to read or verify yet.
    assert_eq!(reply(&mut episode, v.tool, write.arguments.clone()), json!({"domain_error": "VERIFICATION_REQUIRED"}));
    assert!(!episode.trajectory().calls[0].state_changed);
    let answer = reply(&mut episode, ASK_USER, ask_code.clone());
    assert_eq!((answer["heard"].as_str(), answer["told"].get("verification_code")), (Some("understood"), None), "{answer}");
    let read = episode.trajectory().calls.last().unwrap().user().cloned().expect("the user looked at the phone");
    assert_eq!(read.tool, READ_CODE);
    assert!(matches!(read.outcome, Outcome::Error(_)));
    let verify = |code: &str| json!({"customer_id": v.customer, "code": code});
    assert_eq!(reply(&mut episode, VERIFY, verify(&v.code)), json!({"domain_error": "NO_CODE_SENT"}));
    // The agent cannot read the phone itself.
    assert!(episode.call_with(READ_CODE, &json!({}), &CallOptions::default()).is_err());
    // Sent to another customer, the code is not on this user's phone.
    assert_eq!(reply(&mut episode, SEND_CODE, json!({"customer_id": "C-999"}))["sent"], true);
    assert!(reply(&mut episode, ASK_USER, ask_code.clone())["told"].get("verification_code").is_none());
    // Sent to the customer, the user reads it out, and the reading is the user's recorded call.
    reply(&mut episode, SEND_CODE, json!({"customer_id": v.customer}));
    let answer = reply(&mut episode, ASK_USER, ask_code.clone());
    assert_eq!(answer["told"]["verification_code"], v.code.as_str());
    let read = episode.trajectory().calls.last().unwrap().user().cloned().unwrap();
    assert_eq!((read.tool.as_str(), read.outcome), (READ_CODE, Outcome::Result(json!({"code": v.code}).to_string())));
    // Three wrong codes lock it: the right one after them is refused, and the write with it.
    for left in [2, 1, 0] {
        let wrong = reply(&mut episode, VERIFY, verify("000000"));
        assert_eq!(wrong, json!({"domain_error": "WRONG_CODE"}), "{left} left");
    }
    assert_eq!(reply(&mut episode, VERIFY, verify(&v.code)), json!({"domain_error": "TOO_MANY_ATTEMPTS"}));
    assert_eq!(reply(&mut episode, v.tool, write.arguments.clone()), json!({"domain_error": "VERIFICATION_REQUIRED"}));
    assert!(!episode.finish().passed);
    // The right code in time opens the write.
    let mut episode = Episode::new(&task, 0, 0);
    reply(&mut episode, SEND_CODE, json!({"customer_id": v.customer}));
    assert_eq!(reply(&mut episode, VERIFY, verify(&v.code))["verified"], true);
    assert!(episode.verified(&v.customer));
    assert!(reply(&mut episode, v.tool, write.arguments).get("domain_error").is_none());
    // The self-check's cheats at the code (unverified, guessed, unsent) all fail.
    let check = SelfCheck::run_with(&task, 2);
    let code_cheats: Vec<_> =
        check.cheats.iter().filter(|p| p.cheat.label.contains("code") || p.cheat.label.contains("verification")).collect();
    assert_eq!(code_cheats.len(), 3, "{:?}", check.cheats.iter().map(|p| &p.cheat.label).collect::<Vec<_>>());
    assert!(code_cheats.iter().all(|p| p.wrong && !p.verdict.passed));
    assert!(check.problems().is_empty(), "{:?}", check.problems());
    // The task in full has neither the tools nor the refusal.
    let full = toolenv_domains::generate::resolve(&toolenv_domains::generate::conversation::generated_id(&task.id).unwrap()).unwrap();
    assert!(Episode::new(full, 0, 0).bus_tools().is_empty());
}

#[test]
fn suite_names_round_trip_and_a_paired_suite_gives_each_variant_then_its_task_in_full() {
    let paired: Suite = "conversational-paired:7:3".parse().unwrap();
    assert_eq!(paired.to_string(), "conversational-paired:7:3");
    assert_eq!("conversational-paired".parse::<Suite>().unwrap().to_string(), "conversational-paired");
    let tasks = paired.tasks(None, None);
    assert_eq!((tasks.len(), paired.len(), paired.count(None, Some(2))), (72, 72, 24));
    for pair in tasks.chunks(2) {
        assert_eq!(toolenv_domains::generate::conversation::generated_id(&pair[0].id).as_deref(), Some(pair[1].id.as_str()));
    }
    let ids: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
    assert_eq!(toolenv_domains::generate::suite_of(ids.iter().map(String::as_str)).0, "conversational-paired:7:3");
    assert_eq!(paired.page(None, None, 5, 4).iter().map(|t| t.id.clone()).collect::<Vec<_>>(), ids[5..9]);
    for name in ["conversational", "conversational:7:3"] {
        let suite: Suite = name.parse().unwrap();
        assert_eq!(suite.to_string(), name);
        let ids: Vec<String> = suite.tasks(None, Some(1)).iter().map(|t| t.id.clone()).collect();
        if name != "conversational" {
            assert_eq!(toolenv_domains::generate::suite_of(ids.iter().map(String::as_str)).0, name);
        }
    }
}

#[test]
fn perturbed_descriptions_keep_withheld_values_out_and_the_solver_passes() {
    use toolenv_core::phrasing::Level;
    for task in suite() {
        for level in Level::ALL {
            for seed in 0..3 {
                let perturbed = toolenv_domains::perturb::perturb(&task, level, seed, None);
                for w in &task.conversation.as_ref().unwrap().withheld {
                    assert!(!perturbed.description.contains(&w.value), "{} at {level:?}: {}", task.id, perturbed.description);
                }
                let mut episode = Episode::new(&task, seed, 0).with_perturbation(level, perturbed).for_pass_or_fail();
                let solution = toolenv_domains::solver::solve(&mut episode);
                assert!(solution.verdict.passed, "{} at {level:?}: {:?}", task.id, solution.ended);
            }
        }
    }
}

#[test]
fn both_teams_ask_and_pass_conversational_tasks() {
    use toolenv_domains::masfire::team::{Topology, run};
    // The teams give no final answers (the crew passes none on): tasks judged on the end state alone.
    let asking = |t: &TaskRef| t.conversation.as_ref().is_some_and(|c| !c.withheld.is_empty() || !c.actions.is_empty());
    for task in suite().into_iter().filter(|t| asking(t) && !t.asks_for_answer()) {
        for topology in Topology::ALL {
            let mut episode = Episode::new(&task, 1, 0).with_team(topology.roles(), None).expect("a team");
            let _ = run(&task, topology, &mut episode);
            let asked: Vec<_> = episode.trajectory().calls.iter().filter(|c| c.tool == ASK_USER).collect();
            assert!(!asked.is_empty() && asked.iter().all(|c| c.role() == Some("planner")), "{}", task.id);
            let verdict = episode.finish();
            assert!(verdict.passed, "{} with {}: {:?}", task.id, topology.name(), verdict.failures().collect::<Vec<_>>());
        }
    }
}

#[test]
fn variants_name_their_own_version_and_older_ones_are_refused() {
    use toolenv_domains::generate::{GENERATOR_VERSION, SuiteError, conversation, resolve};
    // Pinned like the generated suite: a new generator version needs a new variant version.
    assert_eq!((GENERATOR_VERSION, conversation::VERSION), (2, 3));
    let task = suite().into_iter().next().unwrap();
    let (head, rest) = task.id.rsplit_once("/c3-").expect("a version-3 variant id");
    assert_eq!(conversation::generated_id(&task.id), Some(format!("{head}/g2-{rest}")));
    assert_eq!(conversation::id_of(&format!("{head}/g2-{rest}")), task.id);
    let older = format!("{head}/c2-{rest}");
    assert!(matches!(resolve(&older), Err(SuiteError::Version { version: 2, current: 3, .. })), "{older}");
    assert_eq!("conversational:2026:4".parse::<Suite>().unwrap().generator_version(), Some(3));
    let ids: Vec<String> = suite().iter().map(|t| t.id.clone()).collect();
    assert_eq!(toolenv_domains::generate::suite_of(ids.iter().map(String::as_str)), ("conversational:2026:4".to_owned(), 3));
}
