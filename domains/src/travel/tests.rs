//! Unit tests of the travel tools and tasks.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::tasks::{confirmed, flight, tasks};
use super::tools::MAX_TEXT_CHARS;
use super::{Flight, Reservation, State, Status};
use crate::agent::{play_calls, random_calls};
use toolenv_core::{COLLATERAL_CHECK, Call, Check, DomainError, date::Date};

fn call(state: &mut State, tool: &str, args: Value) -> Result<Value, DomainError> {
    toolenv_core::testing::call(state, Date::from_ymd(2026, 1, 2).unwrap(), tool, args)
}

fn code(result: Result<Value, DomainError>) -> &'static str {
    result.unwrap_err().code
}

fn state(value: Value) -> State {
    serde_json::from_value(value).unwrap()
}

/// The initial state of a suite task.
fn initial(id: &str) -> State {
    let initial = &crate::task(id).unwrap().initial;
    initial.state::<State>().unwrap_or_else(|| panic!("{id} is not a travel task: {initial:?}")).clone()
}

/// A small world: one open flight, one full, one flown; Bob and Alice on file.
fn small() -> State {
    state(json!({
        "flights_db": [
            flight("AA-500", "LON", "PAR", "2026-01-05", 300, 2),
            flight("AF-900", "LON", "PAR", "2026-01-05", 250, 0),
            flight("BA-100", "LON", "PAR", "2025-12-30", 200, 5),
        ],
        "reservations": {"R-0001": confirmed("BA-100", "Alice", "card_1111", 200)},
        "travelers": {"Bob": {"payment_methods": ["card_4242"]}, "Alice": {"payment_methods": ["card_1111", "paypal_alice"]}},
    }))
}

fn hold(s: &mut State, flight_id: &str) -> Result<Value, DomainError> {
    call(s, "hold_flight", json!({"flight_id": flight_id}))
}

fn confirm(s: &mut State, flight_id: &str, passenger: &str, payment_info: &str) -> Result<Value, DomainError> {
    call(s, "confirm_booking", json!({"flight_id": flight_id, "passenger": passenger, "payment_info": payment_info}))
}

fn seats_of(s: &State, flight_id: &str) -> u32 {
    s.flights_db.iter().find(|f| f.id == flight_id).unwrap().seats_left
}

#[test]
fn appendix_c2_booking_gives_the_exact_final_state() {
    let mut s = initial("travel/cheapest-flight/001");
    let found = call(&mut s, "search_flights", json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"})).unwrap();
    let fares: Vec<(&str, u64)> =
        found["flights"].as_array().unwrap().iter().map(|f| (f["id"].as_str().unwrap(), f["price"].as_u64().unwrap())).collect();
    assert_eq!(fares, [("BA-200", 500), ("AA-500", 300)]);
    let profile = call(&mut s, "get_traveler_profile", json!({"name": "Bob"})).unwrap();
    assert_eq!(profile, json!({"name": "Bob", "payment_methods": ["card_4242"], "reservations": []}));
    let held = hold(&mut s, "AA-500").unwrap();
    assert_eq!(held["held"]["reservation_id"], json!("R-0001"));
    assert_eq!(held["held"]["flight"]["seats_left"], json!(9));
    let booked = confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap();
    assert_eq!(booked["confirmed"]["status"], json!("confirmed"));
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        json!({
            "flights_db": [
                {"id": "BA-200", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 500, "seats_left": 10},
                {"id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 9}
            ],
            "reservations": {
                "R-0001": {"flight_id": "AA-500", "passenger": "Bob", "status": "confirmed", "payment_info": "card_4242", "price": 300}
            },
            "travelers": {"Bob": {"payment_methods": ["card_4242"]}}
        })
    );
}

#[test]
fn the_papers_initial_state_reads_as_is() {
    let paper = json!({"flights_db": [
        {"id": "BA-200", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 500, "seats_left": 10},
        {"id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 10}
    ]});
    let s = state(paper.clone());
    let mut expected = paper;
    expected["reservations"] = json!({});
    expected["travelers"] = json!({});
    assert_eq!(serde_json::to_value(&s).unwrap(), expected);
    assert_eq!(serde_json::to_value(initial("travel/cheapest-flight/001")).unwrap()["flights_db"], expected["flights_db"]);
}

#[test]
fn search_validates_and_lists_matches_in_database_order() {
    let mut s = small();
    let search = |s: &mut State, origin: &str, dest: &str, date: &str| {
        call(s, "search_flights", json!({"origin": origin, "dest": dest, "date": date}))
    };
    assert_eq!(code(search(&mut s, "LON", "PAR", "05/01/2026")), "INVALID_DATE");
    assert_eq!(code(search(&mut s, "LON", "PAR", "2026-02-30")), "INVALID_DATE");
    assert_eq!(code(search(&mut s, " ", "PAR", "2026-01-05")), "INVALID_AIRPORT");
    assert_eq!(code(search(&mut s, "LON", "", "2026-01-05")), "INVALID_AIRPORT");
    assert_eq!(code(search(&mut s, &"L".repeat(201), "PAR", "2026-01-05")), "TEXT_TOO_LONG");
    let found = search(&mut s, " lon", "par ", "2026-01-05").unwrap();
    assert_eq!(
        found,
        json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05", "flights": [
            {"id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 2},
            {"id": "AF-900", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 250, "seats_left": 0}
        ]})
    );
    assert_eq!(search(&mut s, "PAR", "LON", "2026-01-05").unwrap()["flights"], json!([]));
    assert_eq!(s, small(), "searching changes nothing");
}

#[test]
fn hold_rules() {
    let mut s = small();
    assert_eq!(code(hold(&mut s, "ZZ-1")), "UNKNOWN_FLIGHT");
    assert_eq!(code(hold(&mut s, "")), "UNKNOWN_FLIGHT");
    assert_eq!(code(hold(&mut s, "AF-900")), "FLIGHT_FULL");
    assert_eq!(code(hold(&mut s, "BA-100")), "DATE_IN_PAST");
    assert_eq!(s, small(), "rejected holds change nothing");
    hold(&mut s, " aa-500 ").unwrap();
    assert_eq!(code(hold(&mut s, "AA-500")), "ALREADY_HELD");
    assert_eq!(seats_of(&s, "AA-500"), 1);
}

#[test]
fn confirm_rules() {
    let mut s = small();
    assert_eq!(code(confirm(&mut s, "ZZ-1", "Bob", "card_4242")), "UNKNOWN_FLIGHT");
    let not_held = confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap_err();
    assert_eq!(not_held, DomainError::new("NOT_HELD", "flight AA-500 has no active hold; hold it first with hold_flight"));
    hold(&mut s, "AA-500").unwrap();
    let held = s.clone();
    assert_eq!(code(confirm(&mut s, "AA-500", "Zed", "card_4242")), "UNKNOWN_TRAVELER");
    assert_eq!(code(confirm(&mut s, "AA-500", "bob", "card_4242")), "UNKNOWN_TRAVELER");
    assert_eq!(code(confirm(&mut s, "AA-500", &"B".repeat(201), "card_4242")), "TEXT_TOO_LONG");
    assert_eq!(code(confirm(&mut s, "AA-500", "Bob", "")), "PAYMENT_REQUIRED");
    assert_eq!(code(confirm(&mut s, "AA-500", "Bob", "  ")), "PAYMENT_REQUIRED");
    let wrong = confirm(&mut s, "AA-500", "Bob", "card_1111").unwrap_err();
    assert_eq!(wrong.code, "UNKNOWN_PAYMENT_METHOD");
    assert!(wrong.message.contains("get_traveler_profile"), "{}", wrong.message);
    assert_eq!(s, held, "rejected confirmations change nothing");
    let booked = confirm(&mut s, "AA-500", "Bob", " card_4242 ").unwrap();
    assert_eq!(
        booked,
        json!({"confirmed": {
            "reservation_id": "R-0002", "flight_id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05",
            "passenger": "Bob", "status": "confirmed", "payment_info": "card_4242", "price": 300
        }})
    );
    assert_eq!(code(confirm(&mut s, "AA-500", "Bob", "card_4242")), "NOT_HELD", "a confirmed booking is no longer a hold");
}

#[test]
fn release_rules() {
    let mut s = small();
    assert_eq!(code(call(&mut s, "release_hold", json!({"flight_id": "ZZ-1"}))), "UNKNOWN_FLIGHT");
    assert_eq!(code(call(&mut s, "release_hold", json!({"flight_id": "AA-500"}))), "NOT_HELD");
    hold(&mut s, "AA-500").unwrap();
    let released = call(&mut s, "release_hold", json!({"flight_id": "AA-500"})).unwrap();
    assert_eq!(released["released"]["reservation_id"], json!("R-0002"));
    assert_eq!(serde_json::to_value(&s).unwrap(), serde_json::to_value(small()).unwrap(), "a released hold leaves no trace");
    hold(&mut s, "AA-500").unwrap();
    confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap();
    assert_eq!(code(call(&mut s, "release_hold", json!({"flight_id": "AA-500"}))), "NOT_HELD", "a booking is not a hold");
}

#[test]
fn cancel_rules() {
    let mut s = small();
    let cancel = |s: &mut State, id: &str| call(s, "cancel_reservation", json!({"reservation_id": id}));
    assert_eq!(code(cancel(&mut s, "R-0999")), "UNKNOWN_RESERVATION");
    assert_eq!(code(cancel(&mut s, "R-0001")), "DATE_IN_PAST");
    hold(&mut s, "AA-500").unwrap();
    let held = cancel(&mut s, "R-0002").unwrap_err();
    assert_eq!(held.code, "NOT_CONFIRMED");
    assert!(held.message.contains("release_hold"), "{}", held.message);
    confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap();
    let cancelled = cancel(&mut s, "r-0002").unwrap();
    assert_eq!(cancelled["cancelled"]["status"], json!("cancelled"));
    assert_eq!(
        *s.reservations["R-0002"],
        Reservation {
            flight_id: "AA-500".into(),
            passenger: Some("Bob".into()),
            status: Status::Cancelled,
            payment_info: Some("card_4242".into()),
            price: Some(300),
        }
    );
    assert_eq!(code(cancel(&mut s, "R-0002")), "ALREADY_CANCELLED");
}

#[test]
fn traveler_profile_and_itinerary() {
    let mut s = small();
    assert_eq!(code(call(&mut s, "get_traveler_profile", json!({"name": "Zed"}))), "UNKNOWN_TRAVELER");
    assert_eq!(code(call(&mut s, "get_traveler_profile", json!({"name": ""}))), "UNKNOWN_TRAVELER");
    let alice = call(&mut s, "get_traveler_profile", json!({"name": "Alice"})).unwrap();
    assert_eq!(alice, json!({"name": "Alice", "payment_methods": ["card_1111", "paypal_alice"], "reservations": ["R-0001"]}));
    hold(&mut s, "AA-500").unwrap();
    let itinerary = call(&mut s, "get_itinerary", json!({})).unwrap();
    assert_eq!(
        itinerary,
        json!({"reservations": [
            {"reservation_id": "R-0001", "flight_id": "BA-100", "origin": "LON", "dest": "PAR", "date": "2025-12-30",
             "passenger": "Alice", "status": "confirmed", "payment_info": "card_1111", "price": 200},
            {"reservation_id": "R-0002", "flight_id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05",
             "passenger": null, "status": "held", "payment_info": null, "price": null}
        ]})
    );
    assert!(crate::registry::TRAVEL.tool("no_such_tool").is_none(), "travel has no such tool");
}

#[test]
fn seats_are_accounted_through_hold_release_confirm_and_cancel() {
    let mut s = small();
    assert_eq!(seats_of(&s, "AA-500"), 2);
    hold(&mut s, "AA-500").unwrap();
    assert_eq!(seats_of(&s, "AA-500"), 1, "a hold takes a seat");
    call(&mut s, "release_hold", json!({"flight_id": "AA-500"})).unwrap();
    assert_eq!(seats_of(&s, "AA-500"), 2, "a release gives it back");
    hold(&mut s, "AA-500").unwrap();
    confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap();
    assert_eq!(seats_of(&s, "AA-500"), 1, "confirming keeps the held seat");
    hold(&mut s, "AA-500").unwrap();
    confirm(&mut s, "AA-500", "Alice", "paypal_alice").unwrap();
    assert_eq!(seats_of(&s, "AA-500"), 0);
    assert_eq!(code(hold(&mut s, "AA-500")), "FLIGHT_FULL");
    call(&mut s, "cancel_reservation", json!({"reservation_id": "R-0003"})).unwrap();
    assert_eq!(seats_of(&s, "AA-500"), 1, "a cancellation gives the seat back");
    let held = hold(&mut s, "AA-500").unwrap();
    assert_eq!(held["held"]["reservation_id"], json!("R-0005"), "ids are never reused");
    let ids: Vec<&str> = s.reservations.keys().map(String::as_str).collect();
    assert_eq!(ids, ["R-0001", "R-0003", "R-0004", "R-0005"]);
}

#[test]
fn numbering_continues_from_a_task_state() {
    let mut s = initial("travel/direct-booking/002");
    assert_eq!(hold(&mut s, "LH-1122").unwrap()["held"]["reservation_id"], json!("R-0003"));
    let mut s = initial("travel/change-hold/005");
    call(&mut s, "release_hold", json!({"flight_id": "KL-1002"})).unwrap();
    assert_eq!(hold(&mut s, "BA-431").unwrap()["held"]["reservation_id"], json!("R-0005"));
    let mut s = State::default();
    s.flights_db
        .push(Flight { id: "X-1".into(), origin: "A".into(), dest: "B".into(), date: "2026-01-05".into(), price: 1, seats_left: 1 }.into());
    assert_eq!(hold(&mut s, "X-1").unwrap()["held"]["reservation_id"], json!("R-0001"));
    assert!(serde_json::to_value(&s).unwrap().get("last_reservation").is_none(), "the counter is not judged state");
}

#[test]
fn malformed_states_are_refused() {
    let base = serde_json::to_value(small()).unwrap();
    let refused = |edit: &dyn Fn(&mut Value)| {
        let mut value = base.clone();
        edit(&mut value);
        serde_json::from_value::<State>(value).is_err()
    };
    assert!(!refused(&|_| {}));
    assert!(refused(&|v| v["extra"] = json!(1)));
    assert!(refused(&|v| v["flights_db"][0]["gate"] = json!("B7")));
    assert!(refused(&|v| v["flights_db"][1]["id"] = json!("AA-500")));
    assert!(refused(&|v| v["flights_db"][0]["date"] = json!("2026-1-5")));
    assert!(refused(&|v| v["flights_db"][0]["seats_left"] = json!(-1)));
    assert!(refused(&|v| v["reservations"]["X-1"] = confirmed("AA-500", "Bob", "card_4242", 300)));
    assert!(refused(&|v| v["reservations"]["R-0002"] = confirmed("ZZ-1", "Bob", "card_4242", 300)));
    assert!(refused(&|v| v["reservations"]["R-0002"]["status"] = json!("pending")));
    let hold = json!({"flight_id": "AA-500", "passenger": null, "status": "held", "payment_info": null, "price": null});
    assert!(!refused(&|v| v["reservations"]["R-0002"] = hold.clone()));
    assert!(refused(&|v| {
        v["reservations"]["R-0002"] = hold.clone();
        v["reservations"]["R-0003"] = hold.clone();
    }));
}

#[test]
fn odd_arguments_get_short_errors_and_never_panic() {
    let mut s = small();
    let long = "é".repeat(150);
    let unknown = hold(&mut s, &long).unwrap_err();
    assert_eq!(unknown.code, "UNKNOWN_FLIGHT");
    assert!(unknown.message.chars().count() < 120, "{}", unknown.message);
    assert_eq!(code(hold(&mut s, &"x".repeat(MAX_TEXT_CHARS + 1))), "TEXT_TOO_LONG");
    for id in ["", "\u{0}", "R-", "R-00001", "R-0000", "../R-0001", "R-0001/status"] {
        assert_eq!(code(call(&mut s, "cancel_reservation", json!({"reservation_id": id}))), "UNKNOWN_RESERVATION", "{id:?}");
    }
    for task in tasks() {
        let task = crate::task(&task.id).unwrap();
        for seed in 0..100 {
            play_calls(task, seed, 0, &random_calls(task, seed, 40));
        }
    }
}

/// The checks the verdict of an episode of `id` playing `calls` fails.
fn failures(id: &str, calls: &[Call]) -> Vec<String> {
    let episode = play_calls(crate::task(id).unwrap(), 0, 0, calls);
    episode.verdict().unwrap().failures().map(|c| c.name.clone()).collect()
}

fn search(origin: &str, dest: &str, date: &str) -> Call {
    Call::new("search_flights", json!({"origin": origin, "dest": dest, "date": date}))
}

fn hold_call(flight_id: &str) -> Call {
    Call::new("hold_flight", json!({"flight_id": flight_id}))
}

fn confirm_call(flight_id: &str, passenger: &str, payment_info: &str) -> Call {
    Call::new("confirm_booking", json!({"flight_id": flight_id, "passenger": passenger, "payment_info": payment_info}))
}

fn release_call(flight_id: &str) -> Call {
    Call::new("release_hold", json!({"flight_id": flight_id}))
}

fn cancel_call(reservation_id: &str) -> Call {
    Call::new("cancel_reservation", json!({"reservation_id": reservation_id}))
}

#[test]
fn cheapest_flight_001_fails_the_dearer_flight_and_a_booking_without_payment() {
    let id = "travel/cheapest-flight/001";
    assert_eq!(
        failures(id, &[search("LON", "PAR", "2026-01-05"), hold_call("BA-200"), confirm_call("BA-200", "Bob", "card_4242")]),
        ["AA-500 confirmed for Bob", "Bob's AA-500 booking paid with card_4242 at 300", "AA-500 seats_left is 9", COLLATERAL_CHECK]
    );
    // The paper's failure mode: confirming without payment information.
    assert_eq!(
        failures(id, &[search("LON", "PAR", "2026-01-05"), hold_call("AA-500"), confirm_call("AA-500", "Bob", "")]),
        ["AA-500 confirmed for Bob", "Bob's AA-500 booking paid with card_4242 at 300", COLLATERAL_CHECK]
    );
    // Guessing a payment method instead of looking it up.
    assert_eq!(
        failures(id, &[hold_call("AA-500"), confirm_call("AA-500", "Bob", "visa")]),
        ["AA-500 confirmed for Bob", "Bob's AA-500 booking paid with card_4242 at 300", COLLATERAL_CHECK]
    );
    // Holding both flights to compare leaves a stray seat taken.
    assert_eq!(failures(id, &[hold_call("BA-200"), hold_call("AA-500"), confirm_call("AA-500", "Bob", "card_4242")]), [COLLATERAL_CHECK]);
    // A released hold leaves no record: only the later reservation's number moves.
    assert_eq!(
        failures(id, &[hold_call("BA-200"), release_call("BA-200"), hold_call("AA-500"), confirm_call("AA-500", "Bob", "card_4242")]),
        Vec::<String>::new(),
        "an agent that corrects itself passes"
    );
}

#[test]
fn direct_booking_002_fails_the_cheaper_flight_and_a_guessed_card() {
    let id = "travel/direct-booking/002";
    assert_eq!(
        failures(id, &[hold_call("IB-3501"), confirm_call("IB-3501", "Dana", "amex_3782")]),
        ["LH-1122 confirmed for Dana", "Dana's LH-1122 booking paid with amex_3782 at 290", "LH-1122 seats_left is 2", COLLATERAL_CHECK]
    );
    assert_eq!(
        failures(id, &[hold_call("LH-1122"), confirm_call("LH-1122", "Dana", "card_4242")]),
        ["LH-1122 confirmed for Dana", "Dana's LH-1122 booking paid with amex_3782 at 290", COLLATERAL_CHECK]
    );
}

#[test]
fn cheapest_flight_003_needs_the_cheapest_flight_with_seats_that_day() {
    let id = "travel/cheapest-flight/003";
    let tried_full = [search("NYC", "LAX", "2026-01-12"), hold_call("DL-410")];
    // Giving up when the cheapest flight is full.
    assert_eq!(
        failures(id, &tried_full),
        ["UA-215 confirmed for Carol", "Carol's UA-215 booking paid with card_5555 at 240", "UA-215 seats_left is 2"]
    );
    // A cheaper flight, but on the next day.
    assert_eq!(
        failures(id, &[hold_call("B6-623"), confirm_call("B6-623", "Carol", "card_5555")]),
        ["UA-215 confirmed for Carol", "Carol's UA-215 booking paid with card_5555 at 240", "UA-215 seats_left is 2", COLLATERAL_CHECK]
    );
    let recovered = [tried_full.as_slice(), &[hold_call("UA-215"), confirm_call("UA-215", "Carol", "card_5555")]].concat();
    assert_eq!(failures(id, &recovered), Vec::<String>::new(), "moving on to the next cheapest passes");
}

#[test]
fn cancel_trip_004_needs_both_flights_and_nothing_else() {
    let id = "travel/cancel-trip/004";
    assert_eq!(failures(id, &[cancel_call("R-0002")]), ["Evan's return AZ-208 (R-0003) cancelled", "AZ-208 seats_left is 7"]);
    // The BA-549 return booking is already cancelled: the live one is AZ-208.
    assert_eq!(
        failures(id, &[cancel_call("R-0002"), cancel_call("R-0006")]),
        ["Evan's return AZ-208 (R-0003) cancelled", "AZ-208 seats_left is 7"]
    );
    // Cancelling all of Evan's bookings takes his Dublin flight too.
    let all = ["R-0001", "R-0002", "R-0003", "R-0004"].map(cancel_call);
    assert_eq!(failures(id, &all), [COLLATERAL_CHECK]);
    // Cancelling Alice's seat on the same flight instead of Evan's.
    assert_eq!(
        failures(id, &[cancel_call("R-0005"), cancel_call("R-0003")]),
        ["Evan's outbound BA-548 (R-0002) cancelled", "Alice's BA-548 booking (R-0005) untouched", COLLATERAL_CHECK]
    );
}

#[test]
fn change_hold_005_needs_the_release_and_the_new_booking() {
    let id = "travel/change-hold/005";
    let book = [hold_call("BA-431"), confirm_call("BA-431", "Frank", "card_9001")];
    assert_eq!(
        failures(id, &book),
        ["the mistaken hold on KL-1002 (R-0004) released", "KL-1002 seats_left is 8"],
        "booking without releasing the hold"
    );
    // Confirming the mistaken hold instead of releasing it.
    assert_eq!(
        failures(id, &[confirm_call("KL-1002", "Frank", "card_9001")]),
        [
            "the mistaken hold on KL-1002 (R-0004) released",
            "KL-1002 seats_left is 8",
            "BA-431 confirmed for Frank",
            "Frank's BA-431 booking paid with card_9001 at 150",
            "BA-431 seats_left is 1",
            COLLATERAL_CHECK,
        ]
    );
    // The next day's flight is cheaper, but not the day asked for.
    assert_eq!(
        failures(id, &[release_call("KL-1002"), hold_call("KL-1009"), confirm_call("KL-1009", "Frank", "card_9001")]),
        ["BA-431 confirmed for Frank", "Frank's BA-431 booking paid with card_9001 at 150", "BA-431 seats_left is 1", COLLATERAL_CHECK]
    );
    let detour = [release_call("KL-1002"), hold_call("KL-1008"), release_call("KL-1008"), book[0].clone(), book[1].clone()];
    assert_eq!(failures(id, &detour), Vec::<String>::new(), "a hold taken and released on the way leaves no trace");
}

#[test]
fn seat_checks_and_seat_patterns_name_their_flights() {
    for task in tasks() {
        let s0 = task.initial.to_json();
        let flight_at = |path: &str| -> Option<String> {
            let index = path.strip_prefix("/flights_db/")?.strip_suffix("/seats_left")?;
            Some(s0["flights_db"][index.parse::<usize>().ok()?]["id"].as_str()?.to_owned())
        };
        let mut named = Vec::new();
        for check in &task.checks {
            if let Check::Equals { name, path, .. } = check
                && let Some(flight_id) = flight_at(path)
            {
                assert!(name.starts_with(&format!("{flight_id} ")), "{}: check '{name}' reads {path}", task.id);
                named.push(flight_id);
            }
        }
        for change in toolenv_core::json::diff(&s0, task.expected_final_state()) {
            if change.path.starts_with("/flights_db/") {
                let flight_id = flight_at(&change.path).unwrap_or_else(|| panic!("{}: {} is not a seat count", task.id, change.path));
                assert!(named.contains(&flight_id), "{}: {} ({flight_id}) changes but no check reads it", task.id, change.path);
            }
        }
    }
}

#[test]
fn random_agents_fail_every_task_over_many_seeds() {
    for task in tasks() {
        let task = crate::task(&task.id).unwrap();
        let passes: Vec<u64> = (0..300)
            .filter(|&seed| {
                play_calls(task, seed, 0, &random_calls(task, seed, crate::agent::RANDOM_AGENT_CALLS)).verdict().unwrap().passed
            })
            .collect();
        assert_eq!(passes, Vec::<u64>::new(), "{}", task.id);
    }
}

#[test]
fn tasks_cover_both_levels_with_unique_ids() {
    let tasks = tasks();
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "travel/cheapest-flight/001",
            "travel/direct-booking/002",
            "travel/cheapest-flight/003",
            "travel/cancel-trip/004",
            "travel/change-hold/005"
        ]
    );
    assert_eq!(tasks.iter().map(|t| t.level).collect::<Vec<_>>(), [2, 1, 2, 1, 2]);
    assert_eq!(tasks[0].description(), "Book the cheapest flight from LON to PAR on 2026-01-05 for Bob.");
    for task in &tasks {
        assert_eq!(task.today.to_string(), "2026-01-02");
        let text = task.description();
        assert!(!text.contains("card") && !text.contains("paypal") && !text.contains("amex"), "{}: {text}", task.id);
    }
}

#[test]
fn a_flight_whose_near_duplicate_ids_are_all_taken_gets_another_id() {
    // Origins whose generation once looped forever: every near-duplicate id
    // of a flight (the number 2, 4, 6 and 8 higher) was taken already.
    for (seed, index) in [(7, 853), (2, 673)] {
        let origin = crate::generate::Origin { domain: crate::registry::TRAVEL, level: 2, seed, index };
        let task = crate::generate::generate(origin);
        let state = task.initial.to_json();
        let ids: Vec<&str> = state["flights_db"].as_array().unwrap().iter().map(|f| f["id"].as_str().unwrap()).collect();
        let distinct: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), ids.len(), "{}", task.id);
        let check = crate::selfcheck::SelfCheck::run(task);
        assert_eq!(check.problems(), Vec::<String>::new(), "{}", check.task.id);
    }
}
