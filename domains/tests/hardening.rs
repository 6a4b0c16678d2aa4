//! Hostile arguments: keys given twice at any depth, and idempotency keys
//! beyond the episode's budget, are refused and recorded, never kept.

use toolenv_core::{CallError, CallOptions, Episode, MAX_IDEMPOTENCY_BYTES};
use toolenv_domains::task;

fn refusal(episode: &mut Episode, tool: &str, arguments: &str, key: Option<&str>) -> toolenv_core::ArgError {
    let options = CallOptions { agent: None, idempotency_key: key, waited_ms: None, user_answer: None };
    match episode.call_with(tool, arguments, &options) {
        Err(CallError::InvalidArgument(error)) => error,
        other => panic!("{arguments}: expected an invalid argument, got {other:?}"),
    }
}

#[test]
fn a_key_given_twice_is_refused_at_any_depth() {
    let scheduling = task("scheduling/book-meeting/001").unwrap();
    let mut episode = Episode::new(scheduling, 0, 0);
    let error = refusal(&mut episode, "check_calendar", r#"{"date": "2026-01-01", "date": "2026-01-02"}"#, None);
    assert_eq!(error.field, "date");
    assert!(error.message.contains("twice"), "{error:?}");

    let ecommerce = task("ecommerce/simple-order/001").unwrap();
    let mut episode = Episode::new(ecommerce, 0, 0);
    let spec = ecommerce.tools().iter().find(|t| t.params.iter().any(|p| matches!(p.ty, toolenv_core::ParamType::ObjectList(_))));
    let spec = spec.expect("a tool with a list of objects");
    let list = spec.params.iter().find(|p| matches!(p.ty, toolenv_core::ParamType::ObjectList(_))).unwrap();
    let nested = format!(r#"{{"{}": [{{"a": 1, "a": 2}}]}}"#, list.name);
    let error = refusal(&mut episode, spec.name, &nested, None);
    assert!(error.message.contains("given twice"), "{error:?}");
    assert_eq!(episode.trajectory().calls.len(), 1, "the refusal is recorded");
}

#[test]
fn idempotency_keys_count_against_the_episode_budget() {
    let task = task("support/create-close/001").unwrap();
    let mut episode = Episode::new(task, 0, 0);
    let ticket = r#"{"customer_id": "C-104", "subject": "s", "description": "d", "priority": "low"}"#;
    let key = "k".repeat(60 * 1024);
    let mut accepted = 0;
    let refused = loop {
        let options = CallOptions { agent: None, idempotency_key: Some(&format!("{accepted}{key}")), waited_ms: None, user_answer: None };
        match episode.call_with("create_ticket", ticket, &options) {
            Ok(_) => accepted += 1,
            Err(CallError::InvalidArgument(error)) => break error,
            Err(other) => panic!("{other:?}"),
        }
        assert!(accepted < 100, "the budget never refused a key");
    };
    assert_eq!(refused.field, "idempotency_key");
    assert_eq!(accepted, MAX_IDEMPOTENCY_BYTES / (60 * 1024), "{refused:?}");
    // A retry with a key already kept is still answered.
    let first = format!("0{key}");
    let options = CallOptions { agent: None, idempotency_key: Some(&first), waited_ms: None, user_answer: None };
    assert!(episode.call_with("create_ticket", ticket, &options).is_ok());
}
