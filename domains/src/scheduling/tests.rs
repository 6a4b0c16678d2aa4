//! Unit tests of the scheduling tools.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::State;
use super::tools::{FIRST_START, LAST_START, SLOTS};
use toolenv_core::{
    DomainError,
    date::{Date, format_time},
};

fn call(state: &mut State, tool: &str, args: Value) -> Result<Value, DomainError> {
    toolenv_core::testing::call(state, Date::from_ymd(2025, 12, 29).unwrap(), tool, args)
}

fn code(result: Result<Value, DomainError>) -> &'static str {
    result.unwrap_err().code
}

#[test]
fn appendix_c_booking_gives_the_exact_final_state() {
    let mut s = State::default();
    call(&mut s, "book_meeting", json!({"date": "2026-01-01", "time": "09:00", "topic": "Review"})).unwrap();
    assert_eq!(serde_json::to_value(&s).unwrap(), json!({"calendar": {"2026-01-01": {"09:00": "Review"}}}));
}

#[test]
fn booking_rules() {
    let mut s = State::default();
    call(&mut s, "book_meeting", json!({"date": "2026-01-05", "time": "10:00", "topic": "A"})).unwrap();
    let book = |s: &mut State, date: &str, time: &str| call(s, "book_meeting", json!({"date": date, "time": time, "topic": "B"}));
    assert_eq!(code(book(&mut s, "2026-01-05", "10:00")), "SLOT_TAKEN");
    assert_eq!(code(book(&mut s, "2026-01-05", "17:00")), "OUTSIDE_BUSINESS_HOURS");
    assert_eq!(code(book(&mut s, "2026-01-05", "10:30")), "OUTSIDE_BUSINESS_HOURS");
    assert_eq!(code(book(&mut s, "2026-01-03", "10:00")), "OUTSIDE_BUSINESS_HOURS");
    assert_eq!(code(book(&mut s, "2025-12-01", "10:00")), "DATE_IN_PAST");
    assert_eq!(code(book(&mut s, "01/05/2026", "10:00")), "INVALID_DATE");
    assert_eq!(code(book(&mut s, "2026-01-05", "10am")), "INVALID_TIME");
    assert_eq!(code(call(&mut s, "book_meeting", json!({"date": "2026-01-05", "time": "11:00", "topic": " "}))), "INVALID_TOPIC");
}

#[test]
fn cancel_and_reschedule_keep_the_calendar_tidy() {
    let mut s = State::default();
    call(&mut s, "book_meeting", json!({"date": "2026-01-05", "time": "10:00", "topic": "A"})).unwrap();
    assert_eq!(code(call(&mut s, "cancel_meeting", json!({"date": "2026-01-05", "time": "11:00"}))), "NO_SUCH_MEETING");
    let moved =
        call(&mut s, "reschedule_meeting", json!({"date": "2026-01-05", "time": "10:00", "new_date": "2026-01-06", "new_time": "09:00"}));
    assert_eq!(moved.unwrap()["rescheduled"]["to"], json!({"date": "2026-01-06", "time": "09:00"}));
    assert_eq!(serde_json::to_value(&s).unwrap(), json!({"calendar": {"2026-01-06": {"09:00": "A"}}}));
    call(&mut s, "cancel_meeting", json!({"date": "2026-01-06", "time": "09:00"})).unwrap();
    assert_eq!(s, State::default());
}

#[test]
fn the_slots_are_the_allowed_starts() {
    let starts: Vec<String> = (FIRST_START..=LAST_START).step_by(60).map(format_time).collect();
    assert_eq!(SLOTS.to_vec(), starts);
}

#[test]
fn availability_names_the_conflict_and_the_free_slots() {
    let mut s = State::default();
    for time in ["09:00", "10:00", "12:00"] {
        call(&mut s, "book_meeting", json!({"date": "2026-01-05", "time": time, "topic": time})).unwrap();
    }
    let r = call(&mut s, "check_availability", json!({"date": "2026-01-05", "time": "10:00"})).unwrap();
    assert_eq!(r["available"], json!(false));
    assert_eq!(r["conflict"], json!({"time": "10:00", "topic": "10:00"}));
    assert_eq!(r["free_slots"], json!(["11:00", "13:00", "14:00", "15:00", "16:00"]));
    let listed = call(&mut s, "list_meetings", json!({"start_date": "2026-01-01", "end_date": "2026-01-05"})).unwrap();
    assert_eq!(listed["meetings"].as_array().unwrap().len(), 3);
    assert_eq!(code(call(&mut s, "list_meetings", json!({"start_date": "2026-01-05", "end_date": "2026-01-01"}))), "INVALID_RANGE");
}
