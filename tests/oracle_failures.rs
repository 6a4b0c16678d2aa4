//! Plausible wrong plays, each failing a named check: equality checks, count
//! checks and the collateral check, in every domain.

use serde_json::json;
use toolenv_domains::COLLATERAL_CHECK;
use toolenv_tests::{assert_failed, play_calls, start};

#[tokio::test]
async fn scheduling() {
    let (server, mut client) = start().await;
    let c = &mut client;

    // Wrong time: the booking check fails, and the stray slot fails the collateral check.
    let v = play_calls(
        c,
        "scheduling/book-meeting/001",
        &[("book_meeting", json!({"date": "2026-01-01", "time": "10:00", "topic": "Review"}))],
    )
    .await;
    assert_failed(&v, &["'Review' booked", "collateral"]);
    let booked = v.checks.iter().find(|k| k.name.contains("'Review' booked")).unwrap();
    assert_eq!((booked.expected_json.as_str(), booked.actual_json.as_str()), ("\"Review\"", "null"));
    let collateral = v.checks.iter().find(|k| k.name == COLLATERAL_CHECK).unwrap();
    assert_eq!(collateral.actual_json, r#"["/calendar/2026-01-01/10:00"]"#);

    // Conflict handling: cancelling the existing meeting to take its slot.
    let v = play_calls(
        c,
        "scheduling/conflict/003",
        &[
            ("cancel_meeting", json!({"date": "2026-01-08", "time": "10:00"})),
            ("book_meeting", json!({"date": "2026-01-08", "time": "10:00", "topic": "Design review"})),
        ],
    )
    .await;
    assert_failed(&v, &["next free slot", "existing 10:00 meeting is kept", "collateral"]);

    // Booking twice: the count check fails (and the extra slot is collateral).
    let v = play_calls(
        c,
        "scheduling/conflict/003",
        &[
            ("book_meeting", json!({"date": "2026-01-08", "time": "12:00", "topic": "Design review"})),
            ("book_meeting", json!({"date": "2026-01-08", "time": "13:00", "topic": "Design review"})),
        ],
    )
    .await;
    assert_failed(&v, &["booked once", "collateral"]);

    // Rescheduling by booking a copy leaves the old meeting in place.
    let v = play_calls(
        c,
        "scheduling/reschedule/004",
        &[("book_meeting", json!({"date": "2026-01-13", "time": "11:00", "topic": "Client call"}))],
    )
    .await;
    assert_failed(&v, &["no longer on 2026-01-12"]);

    // Cancelling the wrong meeting of the day.
    let v = play_calls(c, "scheduling/cancel/005", &[("cancel_meeting", json!({"date": "2026-01-14", "time": "14:00"}))]).await;
    assert_failed(&v, &["'Vendor demo' cancelled", "'Vendor demo prep' kept", "collateral"]);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn travel() {
    let (server, mut client) = start().await;
    let c = &mut client;

    // Booking the pricier flight: both booking checks fail, the seat count of
    // AA-500 is unchanged, and BA-200's seat is collateral.
    let v = play_calls(
        c,
        "travel/cheapest-flight/001",
        &[
            ("hold_flight", json!({"flight_id": "BA-200"})),
            ("confirm_booking", json!({"flight_id": "BA-200", "passenger": "Bob", "payment_info": "card_4242"})),
        ],
    )
    .await;
    assert_failed(&v, &["AA-500 confirmed for Bob", "paid with card_4242", "AA-500 seats_left is 9", "collateral"]);
    let collateral = v.checks.iter().find(|k| k.name == COLLATERAL_CHECK).unwrap();
    assert!(collateral.actual_json.contains("/flights_db/0/seats_left"), "{}", collateral.actual_json);

    // The paper's trap: an invented payment method is refused, so the flight stays only held.
    let v = play_calls(
        c,
        "travel/cheapest-flight/001",
        &[
            ("hold_flight", json!({"flight_id": "AA-500"})),
            ("confirm_booking", json!({"flight_id": "AA-500", "passenger": "Bob", "payment_info": "credit card"})),
        ],
    )
    .await;
    assert_failed(&v, &["AA-500 confirmed for Bob", "paid with card_4242"]);

    // Cancelling only half of the round trip.
    let v = play_calls(c, "travel/cancel-trip/004", &[("cancel_reservation", json!({"reservation_id": "R-0002"}))]).await;
    assert!(v.checks.iter().any(|k| !k.passed && k.name.contains("R-0003")), "{:#?}", v.checks);
    assert!(!v.passed);

    // Booking the right flight but leaving the mistaken hold in place.
    let v = play_calls(
        c,
        "travel/change-hold/005",
        &[
            ("hold_flight", json!({"flight_id": "BA-431"})),
            ("confirm_booking", json!({"flight_id": "BA-431", "passenger": "Frank", "payment_info": "card_9001"})),
        ],
    )
    .await;
    assert!(v.checks.iter().any(|k| !k.passed && k.name.contains("R-0004")), "{:#?}", v.checks);
    server.shutdown().await.unwrap();
}
