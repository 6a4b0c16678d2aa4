//! Plausible wrong plays, each failing a named check: equality checks, count
//! checks and the collateral check, in every domain.

use crate::support::{assert_failed, play_calls, start};
use serde_json::json;
use toolenv_core::COLLATERAL_CHECK;

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
    assert_eq!(collateral.actual_json, r#"[{"actual":"Review","expected":null,"path":"/calendar/2026-01-01/10:00"}]"#);

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
    assert_failed(&v, &["AA-500 confirmed for Bob", "paid with card_4242", "collateral"]);

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

#[tokio::test]
async fn support() {
    let (server, mut client) = start().await;
    let c = &mut client;
    let close = |id: &str| ("close_ticket", json!({"ticket_id": id, "resolution": "Refund reviewed and handled."}));

    // The paper's trap: closing a ticket that policy says must be escalated.
    let v = play_calls(
        c,
        "support/escalate-dispute/003",
        &[("update_ticket", json!({"ticket_id": "T-0002", "priority": "high"})), close("T-0002")],
    )
    .await;
    assert_failed(&v, &["T-0002 escalated to tier2", "T-0002 escalated, not closed", "gives the disputed amount", "collateral"]);

    // Escalating to the wrong tier.
    let v = play_calls(
        c,
        "support/escalate-dispute/003",
        &[
            ("update_ticket", json!({"ticket_id": "T-0002", "priority": "high"})),
            ("escalate_ticket", json!({"ticket_id": "T-0002", "reason": "Disputed refund of $749.00.", "escalate_to": "tier3"})),
        ],
    )
    .await;
    assert_failed(&v, &["T-0002 escalated to tier2", "collateral"]);

    // The mirror image: escalating a small dispute that tier1 must close.
    let create = (
        "create_ticket",
        json!({"customer_id": "C-106", "subject": "Refund dispute: returned smart plug", "description": "$45 refund disputed", "priority": "medium"}),
    );
    let escalate = ("escalate_ticket", json!({"ticket_id": "T-0007", "reason": "dispute", "escalate_to": "tier2"}));
    let v = play_calls(c, "support/small-dispute/005", &[create, escalate]).await;
    assert_failed(&v, &["T-0007 closed by tier1", "approves the refund and states the amount", "T-0007 not escalated", "collateral"]);

    // Wrong priority: the count check finds no matching ticket.
    let create =
        ("create_ticket", json!({"customer_id": "C-104", "subject": "Invoice email change", "description": "x", "priority": "high"}));
    let v = play_calls(c, "support/create-close/001", &[create, close("T-0007")]).await;
    // The placeholder description and the wrong priority fail too.
    assert_failed(&v, &["one ticket for C-104", "description names the invoice email", "resolution says what was done", "collateral"]);
    let count = v.checks.iter().find(|k| k.name.starts_with("one ticket")).unwrap();
    assert_eq!((count.expected_json.as_str(), count.actual_json.as_str()), ("1", "0"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn ecommerce() {
    let (server, mut client) = start().await;
    let c = &mut client;
    let office = "900 Congress Avenue, Floor 3, Austin, TX 78701";
    let order = |customer: &str, sku: &str, address: &str, coupon: Option<&str>| {
        (
            "create_order",
            json!({"customer_id": customer, "items": [{"sku": sku, "quantity": 1}], "shipping_address": address, "coupon_code": coupon}),
        )
    };

    // The cheapest mouse is out of stock: ordering it is refused and nothing happens.
    let v = play_calls(c, "ecommerce/cheapest-coupon/002", &[order("C-203", "SKU-102", office, Some("SAVE10"))]).await;
    assert_failed(&v, &["one order for C-203", "totals $19.35", "SKU-103 stock"]);

    // A pricier mouse: wrong order, wrong total, untouched stock, and stray stock change.
    let v = play_calls(c, "ecommerce/cheapest-coupon/002", &[order("C-203", "SKU-101", office, Some("SAVE10"))]).await;
    assert_failed(&v, &["one order for C-203", "totals $19.35", "SKU-103 stock", "collateral"]);

    // The expired coupon is refused; ordering without any coupon gets the total wrong.
    let home = "27 Willow Court, Madison, WI 53703";
    let v = play_calls(
        c,
        "ecommerce/cheapest-coupon/003",
        &[order("C-204", "SKU-302", home, Some("WINTER25")), order("C-204", "SKU-302", home, None)],
    )
    .await;
    assert_failed(&v, &["valid coupon HOME5", "totals $22.49", "collateral"]);

    // Returning both items of the recent order, to store credit.
    let items = json!({"order_id": "O-0003", "items": ["SKU-204", "SKU-205"], "reason": "too tight", "refund_method": "store_credit"});
    let v = play_calls(c, "ecommerce/return/005", &[("process_return", items)]).await;
    assert!(!v.passed);
    for fragment in ["returned, and nothing else", "refunds $67.99", "original payment"] {
        assert!(v.checks.iter().any(|k| !k.passed && k.name.contains(fragment)), "{fragment}: {:#?}", v.checks);
    }
    server.shutdown().await.unwrap();
}
