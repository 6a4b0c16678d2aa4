//! The solver's tests: backoff and waits, results read, giving up.

use serde_json::json;

use super::*;

/// An environment that answers from a script and records what was sent.
struct Scripted {
    replies: Vec<Observation>,
    sent: Vec<(String, Option<String>, u64)>,
}

impl Env for Scripted {
    fn call(&mut self, tool: &str, _arguments_json: &str, request: &Request<'_>) -> Observation {
        self.sent.push((tool.to_owned(), request.idempotency_key.map(str::to_owned), request.waited_ms));
        if self.replies.is_empty() { Observation::Closed("script ended".into()) } else { self.replies.remove(0) }
    }
}

fn failure(code: FailureCode, retry_after_ms: Option<i64>) -> Observation {
    Observation::Failure(Fault { code, reason: "R".into(), message: "m".into(), retry_after_ms })
}

#[test]
fn a_write_is_retried_under_one_key_through_every_kind_of_bad_reply() {
    let replies = vec![
        failure(FailureCode::ResourceExhausted, Some(1_000)),
        Observation::Result("{}".into()),
        Observation::Result("{\"booked\": {\"da".into()),
        failure(FailureCode::DeadlineExceeded, None),
        Observation::Result(
            r#"{"error": {"code": "UNAVAILABLE", "reason": "BACKEND_UNAVAILABLE", "message": "x", "retry_after_ms": null}}"#.into(),
        ),
        Observation::Result(
            r#"{"api_version": "v2", "booked": {"title": "Review", "when": {"day": "01/01/2026", "start": "9:00 AM"}}}"#.into(),
        ),
    ];
    let mut env = Scripted { replies, sent: Vec::new() };
    let mut session = Session::new(&mut env, crate::registry::SCHEDULING);
    let answer = session.write("book_meeting", json!({"date": "2026-01-01", "time": "09:00", "topic": "Review"})).unwrap();
    assert_eq!(answer, Usable::Ok(json!({"booked": {"date": "2026-01-01", "time": "09:00", "topic": "Review"}})));
    let keys: Vec<Option<&str>> = env.sent.iter().map(|(_, k, _)| k.as_deref()).collect();
    assert_eq!(keys, vec![Some("solver-write-1"); 6], "every attempt reuses the write's key");
    let waits: Vec<u64> = env.sent.iter().map(|(_, _, w)| *w).collect();
    assert_eq!(waits, [0, 1_000, 0, 0, 800, 1_600], "the advised delay, then backoffs after failures without advice");
}

#[test]
fn reads_give_up_on_a_suspension_and_on_a_closed_episode_and_report_domain_errors() {
    let mut env = Scripted { replies: vec![failure(FailureCode::PermissionDenied, Some(-1))], sent: Vec::new() };
    assert_eq!(Session::new(&mut env, crate::registry::TRAVEL).read("get_itinerary", json!({})), Err(GiveUp::Suspended));
    let mut env = Scripted { replies: vec![failure(FailureCode::ResourceExhausted, Some(-1))], sent: Vec::new() };
    assert_eq!(Session::new(&mut env, crate::registry::TRAVEL).read("get_itinerary", json!({})), Err(GiveUp::Suspended));
    let mut env = Scripted { replies: Vec::new(), sent: Vec::new() };
    assert!(matches!(Session::new(&mut env, crate::registry::TRAVEL).read("get_itinerary", json!({})), Err(e) if e.unrecoverable()));
    let rejected = Observation::DomainError { code: "UNKNOWN_TRAVELER".into(), message: "no".into() };
    let mut env = Scripted { replies: vec![rejected], sent: Vec::new() };
    let answer = Session::new(&mut env, crate::registry::TRAVEL).read("get_traveler_profile", json!({"name": "X"}));
    assert_eq!(answer, Ok(Usable::Rejected("UNKNOWN_TRAVELER".into(), "no".into())));
}

#[test]
fn marked_truncation_is_read_again_and_attempts_are_bounded() {
    let cut = Observation::Result(r#"{"reservations": [{"reservation_id": "R-0001"}], "truncated": true}"#.into());
    let whole = Observation::Result(r#"{"reservations": [{"reservation_id": "R-0001"}, {"reservation_id": "R-0002"}]}"#.into());
    let mut env = Scripted { replies: vec![cut.clone(), whole], sent: Vec::new() };
    let answer = Session::new(&mut env, crate::registry::TRAVEL).read("get_itinerary", json!({})).unwrap();
    assert!(matches!(answer, Usable::Ok(v) if v["reservations"].as_array().unwrap().len() == 2));
    let mut env = Scripted { replies: vec![cut; MAX_ATTEMPTS as usize + 1], sent: Vec::new() };
    assert_eq!(
        Session::new(&mut env, crate::registry::TRAVEL).read("get_itinerary", json!({})),
        Err(GiveUp::Exhausted("get_itinerary".into()))
    );
    assert_eq!(env.sent.len(), MAX_ATTEMPTS as usize);
}

#[test]
fn a_confirmed_read_keeps_the_longest_list_until_enough_reads_agree() {
    let short = Observation::Result(r#"{"flights": [{"id": "A"}]}"#.into());
    let long = Observation::Result(r#"{"flights": [{"id": "A"}, {"id": "B"}]}"#.into());
    let mut env = Scripted { replies: vec![short.clone(), short.clone(), long.clone(), short, long.clone(), long], sent: Vec::new() };
    let answer = Session::new(&mut env, crate::registry::TRAVEL).read_confirmed("search_flights", json!({}), "/flights").unwrap();
    assert_eq!(answer, Usable::Ok(json!({"flights": [{"id": "A"}, {"id": "B"}]})));
    assert_eq!(env.sent.len(), 6, "the longest list is taken on its third sighting");
}
