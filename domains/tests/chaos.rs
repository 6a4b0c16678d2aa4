//! Fault injection as an episode sees it: persistent states, the rate-limit
//! window, stale reads, lost replies and idempotency keys.

use std::collections::BTreeMap;

use serde_json::json;
use toolenv_core::{
    CallOptions, DUPLICATE_CHECK, Episode, FailureCode, Outcome,
    chaos::{Alteration, Chaos, FaultKind, FaultParams, FaultProfile, Phase, Stop},
};
use toolenv_domains::{Finish, task};

/// Every call meets `kind`.
fn always(kind: FaultKind) -> Chaos {
    let weights = BTreeMap::from([(kind.name().to_owned(), 1.0)]);
    Chaos::new(FaultProfile::custom(1.0, &weights, FaultParams::default()).unwrap()).unwrap()
}

fn failure_code(outcome: &Outcome) -> Option<FailureCode> {
    match outcome {
        Outcome::Failure(f) => Some(f.code),
        _ => None,
    }
}

const TICKET: &str = r#"{"customer_id": "C-104", "subject": "Invoice email change", "description": "x", "priority": "low"}"#;

#[test]
fn a_blind_retry_after_a_lost_reply_is_flagged_and_a_keyed_one_is_not() {
    let task = task("support/create-close/001").unwrap();
    for (key, duplicated) in [(None, true), (Some("k-1"), false)] {
        let mut episode = Episode::new(task, 1, 0).with_chaos(always(FaultKind::AmbiguousCommit));
        let options = CallOptions { agent: None, idempotency_key: key, waited_ms: None, user_answer: None };
        let first = episode.call_with("create_ticket", TICKET, &options).unwrap().clone();
        assert!(first.state_changed, "the write was applied");
        assert!(
            matches!(failure_code(&first.outcome), Some(FailureCode::DeadlineExceeded | FailureCode::Unavailable)),
            "but its reply was lost"
        );
        let retry = episode.call_with("create_ticket", TICKET, &options).unwrap().clone();
        assert_eq!(retry.state_changed, duplicated, "key {key:?}");
        let tickets = episode.state()["tickets"].as_object().unwrap().len();
        let verdict = episode.finish().clone();
        let check = verdict.checks.iter().find(|c| c.name == DUPLICATE_CHECK).unwrap();
        assert_eq!(!check.passed, duplicated, "key {key:?}: {check:?}");
        assert_eq!(tickets, if duplicated { 8 } else { 7 });
        if duplicated {
            assert_eq!(check.actual, json!([{"call": 1, "repeats_lost_reply_of_call": 0}]));
            assert!(verdict.fault_notes.iter().any(|n| n.contains("AmbiguousCommit")), "{:?}", verdict.fault_notes);
        }
    }
}

#[test]
fn an_idempotency_key_cannot_be_reused_for_another_call() {
    let task = task("support/create-close/001").unwrap();
    let mut episode = Episode::new(task, 1, 0);
    let options = CallOptions { agent: None, idempotency_key: Some("k"), waited_ms: None, user_answer: None };
    episode.call_with("create_ticket", TICKET, &options).unwrap();
    let other = TICKET.replace("low", "high");
    let error = episode.call_with("create_ticket", &other, &options).unwrap_err();
    assert!(error.to_string().contains("idempotency_key"), "{error}");
}

#[test]
fn soft_rate_limit_rejects_retries_before_its_delay() {
    let task = task("scheduling/book-meeting/001").unwrap();
    let mut episode = Episode::new(task, 1, 0).with_chaos(always(FaultKind::SoftRateLimit));
    let args = r#"{"date": "2026-01-01"}"#;
    let first = episode.call_with("check_calendar", args, &CallOptions::default()).unwrap().clone();
    let Outcome::Failure(f) = &first.outcome else { panic!("{first:?}") };
    assert_eq!((f.code, f.reason, f.retry_after_ms), (FailureCode::ResourceExhausted, "RATE_LIMIT_EXCEEDED", Some(1000)));
    // 400 ms later: still inside the window, rejected again without a new draw.
    let early = episode
        .call_with("check_calendar", args, &CallOptions { agent: None, idempotency_key: None, waited_ms: Some(400), user_answer: None })
        .unwrap()
        .clone();
    assert_eq!(early.fault.map(|f| (f.kind, f.new)), Some((FaultKind::SoftRateLimit, false)));
    let Outcome::Failure(f) = &early.outcome else { panic!("{early:?}") };
    assert_eq!(f.retry_after_ms, Some(600), "the rest of the window");
    // After the delay, the call gets a fresh draw (limited again here, since every draw is).
    let late = episode
        .call_with("check_calendar", args, &CallOptions { agent: None, idempotency_key: None, waited_ms: Some(600), user_answer: None })
        .unwrap()
        .clone();
    assert_eq!(late.fault.map(|f| f.new), Some(true));
}

#[test]
fn hard_rate_limit_suspends_for_the_rest_of_the_episode_and_the_verdict_says_so() {
    let task = task("scheduling/book-meeting/001").unwrap();
    let mut episode = Episode::new(task, 1, 0).with_chaos(always(FaultKind::HardRateLimit));
    for call in &task.reference {
        for _ in 0..3 {
            let record = episode.call(call.tool, &call.arguments.to_string()).unwrap();
            let Outcome::Failure(f) = &record.outcome else { panic!("{record:?}") };
            assert_eq!((f.code, f.reason, f.retry_after_ms), (FailureCode::PermissionDenied, "CONSUMER_SUSPENDED", Some(-1)));
        }
    }
    let verdict = episode.finish().clone();
    assert!(!verdict.passed);
    assert_eq!(verdict.fault_notes, ["suspended by HardRateLimit at call 0; 2 later calls refused"]);
    assert_eq!((verdict.fault_stats.injected, verdict.fault_stats.encountered, verdict.fault_stats.recovered), (1, 3, 0));
}

#[test]
fn stale_data_reads_an_older_snapshot_and_writes_still_apply() {
    let task = task("scheduling/book-meeting/001").unwrap();
    let mut episode = Episode::new(task, 1, 0).with_chaos(always(FaultKind::StaleData));
    let booked = episode.call("book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#).unwrap().clone();
    assert!(booked.state_changed);
    let read = episode.call("check_calendar", r#"{"date": "2026-01-01"}"#).unwrap().clone();
    assert_eq!(read.outcome.result_value(), Some(json!({"date": "2026-01-01", "meetings": []})), "read-your-writes is broken");
    assert!(episode.finish().passed, "the write itself happened");
}

#[test]
fn a_stale_read_sees_the_state_before_the_most_recent_change() {
    let task = task("scheduling/book-meeting/001").unwrap();
    let mut episode = Episode::new(task, 1, 0).with_chaos(always(FaultKind::StaleData));
    let book = |time: &str| format!(r#"{{"date": "2026-01-01", "time": "{time}", "topic": "T{time}"}}"#);
    episode.call("book_meeting", &book("09:00")).unwrap();
    let keyed = CallOptions { agent: None, idempotency_key: Some("k"), waited_ms: None, user_answer: None };
    assert!(episode.call_with("book_meeting", &book("10:00"), &keyed).unwrap().state_changed);
    // A keyed retry and a rejected call change nothing: the most recent change is still the 10:00 booking.
    assert!(!episode.call_with("book_meeting", &book("10:00"), &keyed).unwrap().state_changed);
    assert!(matches!(&episode.call("book_meeting", &book("09:00")).unwrap().outcome, Outcome::Error(e) if e.code == "SLOT_TAKEN"));
    let read = episode.call("check_calendar", r#"{"date": "2026-01-01"}"#).unwrap().clone();
    let only_the_first = json!({"date": "2026-01-01", "meetings": [{"time": "09:00", "topic": "T09:00"}]});
    assert_eq!(read.outcome.result_value(), Some(only_the_first));
    assert_eq!(episode.state()["calendar"]["2026-01-01"].as_object().unwrap().len(), 2, "both bookings happened");
}

#[test]
fn schema_drift_persists_and_empty_and_partial_replies_stay_valid() {
    let task = task("travel/cheapest-flight/001").unwrap();
    let search = r#"{"origin": "LON", "dest": "PAR", "date": "2026-01-05"}"#;
    let mut drifted = Episode::new(task, 1, 0).with_chaos(always(FaultKind::SchemaDrift));
    for _ in 0..2 {
        let value = drifted.call("search_flights", search).unwrap().outcome.result_value().unwrap();
        assert_eq!(value["api_version"], "v2");
    }
    let mut empty = Episode::new(task, 1, 0).with_chaos(always(FaultKind::EmptyResponse));
    assert_eq!(empty.call("search_flights", search).unwrap().outcome.result_value(), Some(json!({})));
    let mut partial = Episode::new(task, 1, 0).with_chaos(always(FaultKind::PartialResponse));
    let cut = partial.call("search_flights", search).unwrap().outcome.result_value().unwrap();
    assert_eq!(cut["flights"].as_array().unwrap().len(), 1, "the list is cut");
    // A result with no list to cut is cut as text.
    match &partial.call("get_traveler_profile", r#"{"name": "Bob"}"#).unwrap().outcome {
        Outcome::Raw(text) => assert!(serde_json::from_str::<serde_json::Value>(text).is_err() && !text.is_empty()),
        Outcome::Result(text) => assert!(text.contains(r#""truncated":true"#), "{text}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_same_episode_meets_the_same_faults() {
    let chaos = Chaos::new(FaultProfile::preset("0.3").unwrap()).unwrap();
    for task in toolenv_domains::suite() {
        let calls = toolenv_domains::agent::random_calls(task, 9, 40);
        let run = || {
            let mut episode = Episode::new(task, 9, 1).with_chaos(chaos.clone());
            for call in &calls {
                let _ = episode.call(call.tool, &call.arguments.to_string());
            }
            episode.finish();
            serde_json::to_string(episode.trajectory()).unwrap()
        };
        assert_eq!(run(), run(), "{}", task.id);
    }
}

/// Each kind does what its declared phase says: a stopped call never runs
/// (a write changes nothing), every other call runs (a write applies), an
/// altered reply differs from the plain one as its alteration says, a mode
/// switch reshapes this and later replies, and an older-state read misses
/// the latest write.
#[test]
fn every_kind_acts_as_its_phase_says() {
    let task = task("scheduling/book-meeting/001").unwrap();
    let book = r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#;
    let read = r#"{"date": "2026-01-01"}"#;
    let mut plain = Episode::new(task, 1, 0);
    let plain_book = plain.call("book_meeting", book).unwrap().clone();
    let plain_read = plain.call("check_calendar", read).unwrap().clone();
    for kind in FaultKind::ALL {
        let mut episode = Episode::new(task, 1, 0).with_chaos(always(kind));
        let booked = episode.call("book_meeting", book).unwrap().clone();
        if kind.phase() == Phase::OlderState {
            // A write runs against the current state: the draw had no effect.
            assert_eq!((booked.fault, booked.drawn_without_effect), (None, Some(kind)), "{kind}");
        } else {
            let fault = booked.fault.unwrap();
            assert!(fault.new && fault.kind == kind && fault.recoverable == kind.recoverable(), "{kind}: {fault:?}");
        }
        let stopped = matches!(kind.phase(), Phase::Stops(_));
        assert_eq!(booked.state_changed, !stopped, "{kind}: a write applies unless the call is stopped");
        match kind.phase() {
            Phase::Stops(Stop::Empty) => assert_eq!(booked.outcome, Outcome::Result("{}".into()), "{kind}"),
            Phase::Stops(stop) => {
                assert!(matches!(booked.outcome, Outcome::Failure(_)), "{kind}");
                assert_eq!(booked.delay_ms > 0, stop == Stop::Timeout, "{kind}: only a timeout waits");
            }
            Phase::AltersReply(Alteration::Delay) => {
                assert_eq!(booked.outcome, plain_book.outcome, "{kind}: the whole reply");
                assert!(booked.delay_ms >= FaultParams::default().latency_min_ms, "{kind}");
            }
            Phase::AltersReply(Alteration::Cut) => assert_ne!(booked.outcome, plain_book.outcome, "{kind}: the reply is cut"),
            Phase::AltersReply(Alteration::LoseReply) => assert!(matches!(booked.outcome, Outcome::Failure(_)), "{kind}"),
            Phase::SwitchesMode(_) => {
                let value = booked.outcome.result_value().unwrap();
                assert_eq!(value["api_version"], "v2", "{kind}: this reply is reshaped");
                let later = episode.call("check_calendar", read).unwrap().outcome.result_value().unwrap();
                assert_eq!(later["api_version"], "v2", "{kind}: and so are later ones");
            }
            Phase::OlderState => {
                assert_eq!(booked.outcome, plain_book.outcome, "{kind}: a write runs against the current state");
                let stale = episode.call("check_calendar", read).unwrap().clone();
                assert_eq!(stale.fault.map(|f| f.kind), Some(kind), "{kind}: the stale read took effect");
                assert_ne!(stale.outcome, plain_read.outcome, "{kind}: the read misses the write");
                assert_eq!(stale.outcome.result_value(), Some(json!({"date": "2026-01-01", "meetings": []})), "{kind}");
            }
        }
    }
}

/// A call's arguments as text (an agent's) and as JSON (a built-in
/// caller's) are the same call under every kind of fault, call after call:
/// the same outcome, index and delay, and the same trajectory.
#[test]
fn text_and_json_arguments_are_the_same_call() {
    let task = task("scheduling/book-meeting/001").unwrap();
    let calls = [
        ("book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#),
        ("check_calendar", r#"{"date": "2026-01-01"}"#),
        ("book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Other"}"#),
        ("check_calendar", r#"{"date": "2026-01-02"}"#),
    ];
    for kind in FaultKind::ALL {
        let mut recorded = Episode::new(task, 3, 0).with_chaos(always(kind));
        let mut built = Episode::new(task, 3, 0).with_chaos(always(kind));
        for (i, &(tool, arguments)) in calls.iter().enumerate() {
            let options = CallOptions { agent: None, idempotency_key: None, waited_ms: Some(i as u64 * 400), user_answer: None };
            let record = recorded.call_with(tool, arguments, &options).unwrap().clone();
            let value: serde_json::Value = serde_json::from_str(arguments).unwrap();
            let same = built.call_with(tool, &value, &options).unwrap();
            assert_eq!((same.index, same.delay_ms, &same.outcome), (record.index, record.delay_ms, &record.outcome), "{kind} call {i}");
        }
        assert_eq!(built.trajectory(), recorded.trajectory(), "{kind}");
    }
    // Refusals are the same errors, recorded alike.
    let (mut text, mut json) = (Episode::new(task, 3, 0), Episode::new(task, 3, 0));
    assert!(matches!(text.call("fly", "{}"), Err(toolenv_core::CallError::UnknownTool(_))));
    assert!(matches!(json.call_with("fly", &serde_json::json!({}), &CallOptions::default()), Err(toolenv_core::CallError::UnknownTool(_))));
    assert_eq!(text.trajectory(), json.trajectory(), "the unknown tool is in both trajectories");
    assert_eq!(text.trajectory().calls.len(), 1);
}

/// The ledger's rule for each fault kind: a draw that took effect is in the
/// call's `fault`, counted as injected and noted; one that changed nothing is
/// recorded as drawn without effect, and neither counted nor noted.
mod took_effect {
    use super::*;
    use toolenv_core::CallRecord;

    const BOOK: &str = r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#;
    const READ: &str = r#"{"date": "2026-01-01"}"#;

    fn scheduling(chaos: Chaos) -> Episode {
        Episode::new(task("scheduling/book-meeting/001").unwrap(), 1, 0).with_chaos(chaos)
    }

    fn took_effect(record: &CallRecord, kind: FaultKind) -> bool {
        match (record.fault, record.drawn_without_effect) {
            (Some(f), None) if f.kind == kind && f.new => true,
            (None, Some(k)) if k == kind => false,
            other => panic!("{kind}: neither a fault nor a draw without effect: {other:?} in {record:?}"),
        }
    }

    /// Every call's draw, and whether it took effect; checks the verdict counts only those that did.
    fn ledger(mut episode: Episode, kind: FaultKind, calls: &[(&str, &str)]) -> (Vec<bool>, Episode) {
        let effects: Vec<bool> = calls.iter().map(|(tool, args)| took_effect(episode.call(tool, args).unwrap(), kind)).collect();
        let injected = effects.iter().filter(|&&e| e).count() as u32;
        assert_eq!(episode.finish().fault_stats.injected, injected, "{kind}: injected counts the effective draws");
        (effects, episode)
    }

    #[test]
    fn faults_that_stop_the_call_always_take_effect() {
        for kind in [
            FaultKind::TransientTimeout,
            FaultKind::ConnectionReset,
            FaultKind::SoftRateLimit,
            FaultKind::HardRateLimit,
            FaultKind::CascadingFailure,
        ] {
            let mut episode = scheduling(always(kind));
            for (tool, args) in [("book_meeting", BOOK), ("check_calendar", READ)] {
                let record = episode.call(tool, args).unwrap().clone();
                assert!(matches!(record.outcome, Outcome::Failure(_)), "{kind}: {record:?}");
                // The first call draws; a persistent state may answer the second.
                if record.fault.is_some_and(|f| f.new) || record.index == 0 {
                    assert!(took_effect(&record, kind), "{kind}");
                }
                assert!(!record.state_changed, "{kind}: the tool did not run");
            }
        }
    }

    #[test]
    fn stale_data_takes_effect_only_on_a_read_an_older_state_answers_differently() {
        let booked = r#"{"date": "2026-01-01", "time": "10:00", "topic": "Later"}"#;
        let calls = [
            ("check_calendar", READ),                        // before any write: no older state
            ("book_meeting", BOOK),                          // a write
            ("check_calendar", READ),                        // misses the booking
            ("check_calendar", r#"{"date": "2026-02-01"}"#), // a day the write did not touch
            ("book_meeting", booked),                        // a write
            ("check_calendar", READ),                        // misses the 10:00 booking only
        ];
        let (effects, episode) = ledger(scheduling(always(FaultKind::StaleData)), FaultKind::StaleData, &calls);
        assert_eq!(effects, [false, false, true, false, false, true]);
        let notes = &episode.verdict().unwrap().fault_notes;
        assert_eq!(notes, &["calls 2, 5 were answered from an older snapshot (StaleData)"]);
        let writes = episode.trajectory().calls.iter().filter(|c| c.state_changed).count();
        assert_eq!(writes, 2, "writes under a stale draw still apply");
    }

    #[test]
    fn schema_drift_takes_effect_when_a_result_is_delivered_in_v2() {
        let calls = [
            ("book_meeting", r#"{"date": "2026-01-01", "time": "07:00", "topic": "Too early"}"#), // a business error
            ("check_calendar", READ),                                                             // switches
            ("check_calendar", READ),                                                             // already drifted
        ];
        let (effects, episode) = ledger(scheduling(always(FaultKind::SchemaDrift)), FaultKind::SchemaDrift, &calls);
        assert_eq!(effects, [false, true, false]);
        let outcomes: Vec<_> = episode.trajectory().calls.iter().map(|c| c.outcome.clone()).collect();
        assert!(matches!(&outcomes[0], Outcome::Error(_)), "{:?}", outcomes[0]);
        assert!(outcomes[1..].iter().all(|o| o.result_value().is_some_and(|v| v["api_version"] == "v2")));
        assert_eq!(episode.verdict().unwrap().fault_notes, ["results switched to the v2 schema at call 1 (SchemaDrift)"]);
    }

    #[test]
    fn a_partial_response_takes_effect_when_it_cuts_a_result() {
        let calls = [("book_meeting", r#"{"date": "2026-01-01", "time": "07:00", "topic": "Too early"}"#), ("check_calendar", READ)];
        let (effects, episode) = ledger(scheduling(always(FaultKind::PartialResponse)), FaultKind::PartialResponse, &calls);
        assert_eq!(effects, [false, true], "a business error is delivered whole");
        let read = &episode.trajectory().calls[1].outcome;
        assert!(!matches!(read, Outcome::Result(text) if text == r#"{"date":"2026-01-01","meetings":[]}"#), "{read:?}");
    }

    #[test]
    fn an_empty_response_takes_effect_unless_the_result_was_empty_already() {
        let task = task("ecommerce/cheapest-coupon/002").unwrap();
        let episode = Episode::new(task, 1, 0).with_chaos(always(FaultKind::EmptyResponse));
        let calls = [("search_products", r#"{"query": "no such thing anywhere"}"#), ("search_products", r#"{"query": "mouse"}"#)];
        let (effects, episode) = ledger(episode, FaultKind::EmptyResponse, &calls);
        assert_eq!(effects, [false, true]);
        let nothing = episode.trajectory().calls[0].outcome.result_value().unwrap();
        assert_eq!(nothing["products"], json!([]), "the real, empty result: {nothing}");
        // A write under an empty response did not run: that is an effect.
        let mut write = scheduling(always(FaultKind::EmptyResponse));
        let record = write.call("book_meeting", BOOK).unwrap().clone();
        assert!(took_effect(&record, FaultKind::EmptyResponse) && !record.state_changed);
    }

    #[test]
    fn high_latency_takes_effect_when_it_delays_a_result() {
        let (effects, episode) = ledger(
            scheduling(always(FaultKind::HighLatency)),
            FaultKind::HighLatency,
            &[("check_calendar", READ), ("book_meeting", r#"{"date": "2026-01-01", "time": "07:00", "topic": "Too early"}"#)],
        );
        assert_eq!(effects, [true, false], "a business error is not delayed");
        assert!(episode.trajectory().calls[0].delay_ms >= 2_000);
        assert_eq!(episode.trajectory().calls[1].delay_ms, 0);
        // No delay at all: the draw changed nothing.
        let weights = BTreeMap::from([("HighLatency".to_owned(), 1.0)]);
        let params = FaultParams { latency_min_ms: 0, latency_max_ms: 0, ..FaultParams::default() };
        let instant = Chaos::new(FaultProfile::custom(1.0, &weights, params).unwrap()).unwrap();
        let (effects, _) = ledger(scheduling(instant), FaultKind::HighLatency, &[("check_calendar", READ)]);
        assert_eq!(effects, [false]);
    }

    #[test]
    fn an_ambiguous_commit_takes_effect_when_it_loses_a_result() {
        let calls = [("book_meeting", r#"{"date": "2026-01-01", "time": "07:00", "topic": "Too early"}"#), ("book_meeting", BOOK)];
        let (effects, episode) = ledger(scheduling(always(FaultKind::AmbiguousCommit)), FaultKind::AmbiguousCommit, &calls);
        assert_eq!(effects, [false, true]);
        assert!(matches!(episode.trajectory().calls[0].outcome, Outcome::Error(_)), "the refusal reached the agent");
        assert!(matches!(episode.trajectory().calls[1].outcome, Outcome::Failure(_)));
    }

    #[test]
    fn every_kind_has_a_rule_tested_here() {
        // The tests above cover these kinds; a new kind must get its rule and a test.
        let covered = [
            FaultKind::TransientTimeout,
            FaultKind::ConnectionReset,
            FaultKind::SoftRateLimit,
            FaultKind::HardRateLimit,
            FaultKind::CascadingFailure,
            FaultKind::StaleData,
            FaultKind::SchemaDrift,
            FaultKind::PartialResponse,
            FaultKind::EmptyResponse,
            FaultKind::HighLatency,
            FaultKind::AmbiguousCommit,
        ];
        assert_eq!(FaultKind::ALL.len(), covered.len());
        assert!(FaultKind::ALL.iter().all(|k| covered.contains(k)));
    }
}

/// A list a partial response cut carries a true marker or none: never the
/// domain's own `"truncated": false`, nor a count of matches larger than
/// what is shown. Checked on every tool the corpus reaches, in the v1 and
/// the drifted v2 shape, against the same calls without faults.
#[test]
fn a_cut_list_never_carries_a_false_marker() {
    use serde_json::Value;
    let cut_only = always(FaultKind::PartialResponse);
    let weights = BTreeMap::from([("PartialResponse".to_owned(), 0.5), ("SchemaDrift".to_owned(), 0.5)]);
    let drifting = Chaos::new(FaultProfile::custom(1.0, &weights, FaultParams::default()).unwrap()).unwrap();
    let (mut silent, mut marked) = (BTreeMap::<&str, u32>::new(), 0);
    for task in toolenv_domains::suite() {
        let reference: Vec<_> =
            toolenv_domains::suite().iter().filter(|t| t.domain == task.domain).flat_map(|t| t.reference.clone()).collect();
        for (seed, chaos) in (0..4u64).flat_map(|s| [(s, cut_only.clone()), (s, drifting.clone())]) {
            let mut whole = Episode::new(task, seed, 0).with_max_calls(1000);
            let mut cut = Episode::new(task, seed, 0).with_chaos(chaos).with_max_calls(1000);
            for call in reference.iter().chain(&toolenv_domains::agent::random_calls(task, seed, 20)) {
                let args = call.arguments.to_string();
                let Ok(expected) = whole.call(call.tool, &args).map(|r| r.outcome.result_value()) else { continue };
                let record = cut.call(call.tool, &args).unwrap().clone();
                let (Some(expected), Some(got)) = (expected, record.outcome.result_value()) else { continue };
                if record.fault.map(|f| f.kind) != Some(FaultKind::PartialResponse) {
                    continue;
                }
                let expected =
                    if got.get("api_version").is_some() { toolenv_core::drift::to_v2(task.domain, call.tool, &expected) } else { expected };
                let (Value::Object(got), Value::Object(expected)) = (&got, &expected) else { continue };
                let Some((key, shown)) = got.iter().find_map(|(k, v)| {
                    let (now, before) = (v.as_array()?.len(), expected.get(k)?.as_array()?.len());
                    (now < before).then_some((k, now))
                }) else {
                    continue;
                };
                if got.get("truncated") == Some(&Value::Bool(true)) {
                    marked += 1;
                    continue;
                }
                *silent.entry(call.tool).or_default() += 1;
                // Fields about the list's length or completeness, by any name the domains use.
                let about_the_list =
                    |field: &str| ["truncat", "count", "total", "match", "more", "complete"].iter().any(|w| field.contains(w));
                for (field, value) in got.iter().filter(|(f, _)| about_the_list(f)) {
                    assert_ne!(
                        value,
                        &Value::Bool(false),
                        "{} {}: '{field}' false beside the cut list '{key}': {got:?}",
                        task.id,
                        call.tool
                    );
                    assert!(
                        value.as_u64().is_none_or(|n| n as usize <= shown),
                        "{} {}: '{field}' = {value} counts more than the {shown} items left in '{key}': {got:?}",
                        task.id,
                        call.tool
                    );
                }
            }
        }
    }
    // The tools whose results carry markers were cut silently, and marked cuts happen too.
    for tool in ["search_products", "search_knowledge_base"] {
        assert!(silent.get(tool).is_some_and(|&n| n > 0), "no silent cut of {tool}: {silent:?}");
    }
    assert!(marked > 0);
}

#[test]
fn the_verdict_says_whether_the_episode_was_feasible() {
    let task = task("scheduling/book-meeting/001").unwrap();
    // Doing nothing fails a feasible episode: the failure is the agent's.
    // Feasibility is decided on request (a solver replay), then kept.
    let mut idle = Episode::new(task, 1, 0);
    let verdict = idle.finish().clone();
    assert_eq!((verdict.passed, verdict.feasible), (false, None));
    assert_eq!(idle.finish_with_feasibility().feasible, Some(true));
    assert_eq!(idle.finish().feasible, Some(true));
    // A suspension at the first call: no agent passes.
    let mut suspended = Episode::new(task, 1, 0).with_chaos(always(FaultKind::HardRateLimit));
    assert_eq!(suspended.finish_with_feasibility().feasible, Some(false));
    // Under λ = 0.3, some episodes are infeasible and the verdict of each says so,
    // the same for an idle agent and the solver.
    let chaos = Chaos::new(FaultProfile::preset("0.3").unwrap()).unwrap();
    let task = toolenv_domains::task("travel/cheapest-flight/001").unwrap();
    let mut infeasible = 0;
    for seed in 0..100 {
        let mut idle = Episode::new(task, seed, 0).with_chaos(chaos.clone());
        let idle_feasible = idle.finish_with_feasibility().feasible.unwrap();
        let mut played = Episode::new(task, seed, 0).with_chaos(chaos.clone());
        let solution = toolenv_domains::solver::solve(&mut played);
        assert_eq!(solution.verdict.feasible, Some(solution.feasible()), "seed {seed}");
        assert_eq!(idle_feasible, solution.feasible(), "seed {seed}: feasibility does not depend on the agent");
        infeasible += u32::from(!idle_feasible);
    }
    assert!((1..50).contains(&infeasible), "{infeasible} of 100 infeasible");
    // Draws are per call index, so an agent making other calls meets other
    // draws: an episode it passed was passable, whatever the solver met.
    let passed_where_the_solver_could_not = (0..300).find_map(|seed| {
        let mut solver = Episode::new(task, seed, 0).with_chaos(chaos.clone());
        if toolenv_domains::solver::solve(&mut solver).feasible() {
            return None;
        }
        let mut reference = Episode::new(task, seed, 0).with_chaos(chaos.clone());
        for call in &task.reference {
            let _ = reference.call(call.tool, &call.arguments.to_string());
        }
        // A passed episode is feasible without asking.
        let verdict = reference.finish().clone();
        verdict.passed.then_some(verdict)
    });
    let verdict = passed_where_the_solver_could_not.expect("a seed where the reference passes and the solver is suspended");
    assert_eq!(verdict.feasible, Some(true));
}

/// The fault ledger counted straight from the calls, as the verdict counted
/// it before the ledger was kept per kind: injected, encountered (error
/// statuses), recovered and extra calls.
fn counted_directly(calls: &[toolenv_core::CallRecord]) -> toolenv_core::FaultStats {
    let mut stats = toolenv_core::FaultStats::default();
    for (i, call) in calls.iter().enumerate() {
        stats.injected += u32::from(call.fault.is_some_and(|f| f.new));
        if !matches!(call.outcome, Outcome::Failure(_)) {
            continue;
        }
        stats.encountered += 1;
        let mut extra = 0;
        for next in calls[i + 1..].iter().filter(|c| c.tool == call.tool) {
            extra += 1;
            if next.fault.is_none() && matches!(next.outcome, Outcome::Result(_) | Outcome::Error(_)) {
                stats.recovered += 1;
                stats.extra_calls += extra;
                break;
            }
        }
    }
    stats
}

/// The fault ledger adds up for every trajectory of a sweep over seeds,
/// fault profiles (the presets, every kind at once, each kind alone) and agents (the
/// retrying solver, the reference calls once, random calls each sent twice):
/// the kinds sum to the verdict's totals, which are the calls counted
/// directly, and per kind recovered ≤ encountered ≤ hits, injected ≤ hits,
/// recovered ≤ answered after ≤ retried ≤ hits, extra calls ≥ recovered.
#[test]
fn the_fault_ledger_adds_up_for_every_trajectory() {
    use toolenv_core::{FaultStats, LedgerCall, fault_ledger};
    let every: BTreeMap<String, f64> = FaultKind::ALL.iter().map(|k| (k.name().to_owned(), 1.0 / FaultKind::ALL.len() as f64)).collect();
    let mut profiles: Vec<(&str, FaultProfile)> = ["0.1", "0.2", "0.3"].map(|p| (p, FaultProfile::preset(p).unwrap())).into();
    profiles.push(("every kind", FaultProfile::custom(0.5, &every, FaultParams::default()).unwrap()));
    for kind in FaultKind::ALL {
        let only = BTreeMap::from([(kind.name().to_owned(), 1.0)]);
        profiles.push((kind.name(), FaultProfile::custom(0.4, &only, FaultParams::default()).unwrap()));
    }
    let (mut trajectories, mut kinds_seen, mut recovered, mut unrecovered_retries) = (0, std::collections::BTreeSet::new(), 0, 0);
    for (name, profile) in &profiles {
        let chaos = Chaos::new(profile.clone()).unwrap();
        for task in toolenv_domains::suite() {
            for seed in toolenv_core::testing::sweep_seeds(12, 4) {
                let mut solved = Episode::new(task, seed, 0).with_chaos(chaos.clone());
                toolenv_domains::solver::solve(&mut solved);
                let mut reference = Episode::new(task, seed, 0).with_chaos(chaos.clone());
                for call in &task.reference {
                    let _ = reference.call(call.tool, &call.arguments.to_string());
                }
                reference.finish();
                let mut random = Episode::new(task, seed, 0).with_chaos(chaos.clone()).with_max_calls(1000);
                for call in toolenv_domains::agent::random_calls(task, seed, 30) {
                    let arguments = call.arguments.to_string();
                    let _ = random.call(call.tool, &arguments);
                    let _ = random.call(call.tool, &arguments);
                }
                random.finish();
                for episode in [solved, reference, random] {
                    let trajectory = episode.trajectory();
                    let what = format!("{} {name} seed {seed}", task.id);
                    let calls: Vec<LedgerCall<'_>> = trajectory.calls.iter().map(LedgerCall::from).collect();
                    let kinds = fault_ledger(&calls);
                    let totals = trajectory.verdict.as_ref().unwrap().fault_stats;
                    assert_eq!(FaultStats::of_kinds(kinds.values()), totals, "{what}: the kinds sum to the totals");
                    assert_eq!(counted_directly(&trajectory.calls), totals, "{what}: the totals count the calls");
                    let faulted = trajectory.calls.iter().filter(|c| c.fault.is_some()).count() as u32;
                    assert_eq!(kinds.values().map(|c| c.hits).sum::<u32>(), faulted, "{what}: every faulted call is a hit");
                    for (kind, c) in &kinds {
                        let ordered = c.recovered <= c.encountered
                            && c.encountered <= c.hits
                            && c.injected <= c.hits
                            && c.recovered <= c.answered_after
                            && c.answered_after <= c.retried
                            && c.retried <= c.hits
                            && c.extra_calls >= c.recovered
                            && (c.recovered > 0 || c.extra_calls == 0);
                        assert!(ordered, "{what}: {kind:?} {c:?}");
                        // A kind refuses every call it meets, or none.
                        assert!(c.encountered == 0 || c.encountered == c.hits, "{what}: {kind:?} {c:?}");
                        kinds_seen.insert(*kind);
                        recovered += c.recovered;
                        unrecovered_retries += u32::from(c.encountered > c.recovered && c.retried > 0);
                    }
                    trajectories += 1;
                }
            }
        }
    }
    assert!(trajectories >= (4 + FaultKind::ALL.len()) * 20 * 4 * 3, "{trajectories} trajectories");
    assert_eq!(kinds_seen.len(), FaultKind::ALL.len(), "every kind met a call: {kinds_seen:?}");
    assert!(recovered > 50 && unrecovered_retries > 10, "{recovered} recovered, {unrecovered_retries} kinds retried unrecovered");
}
