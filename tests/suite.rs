use crate::support::start;
use toolenv_agents::Builtin;
use toolenv_client::play_episode;
use toolenv_core::{COLLATERAL_CHECK, DUPLICATE_CHECK};
use toolenv_domains::suite;

#[tokio::test]
async fn every_task_passes_with_the_reference_agent() {
    let (server, mut client) = start().await;
    let tasks = client.list_tasks(None, None).await.unwrap();
    assert_eq!(tasks.len(), suite().len());
    for task in &tasks {
        let outcome = play_episode(&mut client, Builtin::Reference, &task.id, 0, 0).await.unwrap();
        assert!(outcome.verdict.passed, "{}: {:#?}", task.id, outcome.verdict.checks);
        let names: Vec<&str> = outcome.verdict.checks.iter().rev().take(2).map(|c| c.name.as_str()).collect();
        assert_eq!(names, [DUPLICATE_CHECK, COLLATERAL_CHECK], "the collateral checks come last");
        assert!(!outcome.verdict.state_diff.is_empty(), "{} changed something", task.id);
        assert_ne!(outcome.verdict.final_state_hash, outcome.verdict.initial_state_hash);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn every_task_fails_inaction_and_random_agents() {
    let (server, mut client) = start().await;
    for task in suite() {
        let idle = play_episode(&mut client, Builtin::Idle, &task.id, 0, 0).await.unwrap();
        assert!(!idle.verdict.passed, "{} passes on inaction", task.id);
        assert!(idle.verdict.state_diff.is_empty());
        assert_eq!(idle.verdict.final_state_hash, idle.verdict.initial_state_hash);
        for seed in 0..3 {
            let random = play_episode(&mut client, Builtin::Random, &task.id, seed, 0).await.unwrap();
            assert!(!random.verdict.passed, "{} passes with random seed {seed}", task.id);
        }
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn appendix_c_tasks_are_verbatim_and_end_in_the_paper_states() {
    let (server, mut client) = start().await;
    let schedule = client.get_task("scheduling/book-meeting/001").await.unwrap();
    let summary = schedule.summary.unwrap();
    assert_eq!(summary.description, "Book a meeting about 'Review' on 2026-01-01 at 09:00.");
    assert_eq!(schedule.initial_state_json, r#"{"calendar":{}}"#);
    let outcome = play_episode(&mut client, Builtin::Reference, &summary.id, 0, 0).await.unwrap();
    assert_eq!(outcome.verdict.state_diff_text, "+ /calendar/2026-01-01: {\"09:00\":\"Review\"}\n");
    // The final state is exactly the paper's, so its hash is that of the paper's JSON.
    let expected = serde_json::json!({"calendar": {"2026-01-01": {"09:00": "Review"}}});
    assert_eq!(outcome.verdict.final_state_hash, toolenv_core::json::state_hash(&expected));

    let travel = client.get_task("travel/cheapest-flight/001").await.unwrap();
    assert_eq!(travel.summary.unwrap().description, "Book the cheapest flight from LON to PAR on 2026-01-05 for Bob.");
    let initial: serde_json::Value = serde_json::from_str(&travel.initial_state_json).unwrap();
    assert_eq!(
        initial["flights_db"],
        serde_json::json!([
            {"id": "BA-200", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 500, "seats_left": 10},
            {"id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 10}
        ])
    );
    let outcome = play_episode(&mut client, Builtin::Reference, "travel/cheapest-flight/001", 0, 0).await.unwrap();
    assert!(outcome.verdict.passed);
    let confirmed = outcome
        .verdict
        .state_diff
        .iter()
        .any(|c| c.after_json.contains("\"AA-500\"") && c.after_json.contains("\"confirmed\"") && c.after_json.contains("\"Bob\""));
    assert!(confirmed, "AA-500 confirmed for Bob: {}", outcome.verdict.state_diff_text);
    server.shutdown().await.unwrap();
}
