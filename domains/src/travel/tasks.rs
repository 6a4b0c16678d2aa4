//! The travel tasks of the suite.

use serde_json::{Value, json};

use super::phrasing;
use toolenv_core::{Call, Check, Task, World, date::Date, slots};

fn world(state: Value) -> std::sync::Arc<World> {
    std::sync::Arc::new(World::new::<crate::travel::State>(serde_json::from_value(state).expect("travel task states are valid")))
}

pub(super) fn flight(id: &str, origin: &str, dest: &str, date: &str, price: u32, seats_left: u32) -> Value {
    json!({"id": id, "origin": origin, "dest": dest, "date": date, "price": price, "seats_left": seats_left})
}

pub(super) fn confirmed(flight_id: &str, passenger: &str, payment_info: &str, price: u32) -> Value {
    json!({"flight_id": flight_id, "passenger": passenger, "status": "confirmed", "payment_info": payment_info, "price": price})
}

/// Exactly one confirmed reservation of `flight_id` for `passenger`.
fn booked(flight_id: &str, passenger: &str) -> Check {
    Check::count(
        format!("{flight_id} confirmed for {passenger}"),
        "/reservations",
        json!({"flight_id": flight_id, "passenger": passenger, "status": "confirmed"}),
        1,
    )
}

/// The booking of `flight_id` for `passenger` charged `payment_info` at `price`.
fn paid(flight_id: &str, passenger: &str, payment_info: &str, price: u32) -> Check {
    Check::count(
        format!("{passenger}'s {flight_id} booking paid with {payment_info} at {price}"),
        "/reservations",
        confirmed(flight_id, passenger, payment_info, price),
        1,
    )
}

/// The flight at `index` of `flights_db` (named `flight_id`) has `seats_left` seats free.
fn seats(flight_id: &str, index: usize, seats_left: u32) -> Check {
    Check::equals(format!("{flight_id} seats_left is {seats_left}"), format!("/flights_db/{index}/seats_left"), json!(seats_left))
}

/// The verified travel tasks.
pub(super) fn tasks() -> Vec<Task> {
    let today = Date::from_ymd(2026, 1, 2).expect("valid date");
    let alice = json!({"payment_methods": ["card_1111", "paypal_alice"]});
    let bob = json!({"payment_methods": ["card_4242"]});
    vec![
        Task {
            id: "travel/cheapest-flight/001".into(),
            domain: crate::registry::TRAVEL,
            level: 2,
            template: &phrasing::CHEAPEST_FLIGHT,
            slots: slots(&[("origin", "LON"), ("dest", "PAR"), ("date", "2026-01-05"), ("passenger", "Bob")]),
            today,
            // The paper's Appendix C.2, with the traveler the booking needs.
            initial: world(json!({
                "flights_db": [
                    flight("BA-200", "LON", "PAR", "2026-01-05", 500, 10),
                    flight("AA-500", "LON", "PAR", "2026-01-05", 300, 10),
                ],
                "reservations": {},
                "travelers": {"Bob": bob},
            })),
            reference: vec![
                Call::new("search_flights", json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"})),
                Call::new("get_traveler_profile", json!({"name": "Bob"})),
                Call::new("hold_flight", json!({"flight_id": "AA-500"})),
                Call::new("confirm_booking", json!({"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"})),
            ],
            checks: vec![booked("AA-500", "Bob"), paid("AA-500", "Bob", "card_4242", 300), seats("AA-500", 1, 9)],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "travel/direct-booking/002".into(),
            domain: crate::registry::TRAVEL,
            level: 1,
            template: &phrasing::DIRECT_BOOKING,
            slots: slots(&[("flight_id", "LH-1122"), ("origin", "FRA"), ("dest", "MAD"), ("date", "2026-01-09"), ("passenger", "Dana")]),
            today,
            initial: world(json!({
                "flights_db": [
                    flight("LH-1120", "FRA", "MAD", "2026-01-09", 260, 6),
                    flight("IB-3501", "FRA", "MAD", "2026-01-09", 180, 12),
                    flight("LH-1122", "FRA", "MAD", "2026-01-09", 290, 3),
                    flight("LH-1124", "FRA", "MAD", "2026-01-10", 210, 9),
                    flight("IB-3510", "MAD", "FRA", "2026-01-14", 175, 20),
                    flight("LH-400", "FRA", "NYC", "2026-01-09", 640, 2),
                ],
                "reservations": {
                    "R-0001": confirmed("LH-1120", "Alice", "paypal_alice", 260),
                    "R-0002": confirmed("IB-3510", "Dana", "amex_3782", 175),
                },
                "travelers": {
                    "Alice": alice,
                    "Dana": {"payment_methods": ["amex_3782"]},
                    "Frank": {"payment_methods": ["card_9001"]},
                },
            })),
            reference: vec![
                Call::new("get_traveler_profile", json!({"name": "Dana"})),
                Call::new("hold_flight", json!({"flight_id": "LH-1122"})),
                Call::new("confirm_booking", json!({"flight_id": "LH-1122", "passenger": "Dana", "payment_info": "amex_3782"})),
            ],
            checks: vec![booked("LH-1122", "Dana"), paid("LH-1122", "Dana", "amex_3782", 290), seats("LH-1122", 2, 2)],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "travel/cheapest-flight/003".into(),
            domain: crate::registry::TRAVEL,
            level: 2,
            template: &phrasing::CHEAPEST_FLIGHT_003,
            slots: slots(&[("origin", "NYC"), ("dest", "LAX"), ("date", "2026-01-12"), ("passenger", "Carol")]),
            today,
            // The cheapest flight that day (DL-410) is full; the next day and
            // another destination have cheaper flights still.
            initial: world(json!({
                "flights_db": [
                    flight("AA-100", "NYC", "LAX", "2026-01-12", 310, 20),
                    flight("DL-410", "NYC", "LAX", "2026-01-12", 180, 0),
                    flight("UA-215", "NYC", "LAX", "2026-01-12", 240, 3),
                    flight("B6-623", "NYC", "LAX", "2026-01-13", 205, 8),
                    flight("B6-101", "NYC", "SFO", "2026-01-12", 150, 14),
                    flight("DL-411", "LAX", "NYC", "2026-01-16", 195, 7),
                ],
                "reservations": {
                    "R-0001": confirmed("DL-410", "Bob", "card_4242", 180),
                    "R-0002": confirmed("AA-100", "Alice", "card_1111", 310),
                    "R-0003": confirmed("DL-411", "Carol", "card_5555", 195),
                },
                "travelers": {"Alice": alice, "Bob": bob, "Carol": {"payment_methods": ["card_5555"]}},
            })),
            reference: vec![
                Call::new("search_flights", json!({"origin": "NYC", "dest": "LAX", "date": "2026-01-12"})),
                Call::new("get_traveler_profile", json!({"name": "Carol"})),
                Call::new("hold_flight", json!({"flight_id": "UA-215"})),
                Call::new("confirm_booking", json!({"flight_id": "UA-215", "passenger": "Carol", "payment_info": "card_5555"})),
            ],
            checks: vec![booked("UA-215", "Carol"), paid("UA-215", "Carol", "card_5555", 240), seats("UA-215", 2, 2)],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "travel/cancel-trip/004".into(),
            domain: crate::registry::TRAVEL,
            level: 1,
            template: &phrasing::CANCEL_TRIP,
            slots: slots(&[
                ("passenger", "Evan"),
                ("origin", "LON"),
                ("dest", "ROM"),
                ("date", "2026-01-15"),
                ("return_date", "2026-01-19"),
            ]),
            today,
            // Evan's return is AZ-208 (an earlier BA-549 booking is already
            // cancelled); his past trip and his Dublin flight stay, and so
            // does Alice's seat on his outbound flight.
            initial: world(json!({
                "flights_db": [
                    flight("BA-548", "LON", "ROM", "2026-01-15", 220, 4),
                    flight("AZ-203", "LON", "ROM", "2026-01-15", 175, 0),
                    flight("BA-549", "ROM", "LON", "2026-01-19", 210, 11),
                    flight("AZ-208", "ROM", "LON", "2026-01-19", 160, 6),
                    flight("EI-155", "LON", "DUB", "2026-01-25", 95, 30),
                    flight("BA-546", "LON", "ROM", "2025-12-20", 190, 0),
                ],
                "reservations": {
                    "R-0001": confirmed("BA-546", "Evan", "card_7777", 190),
                    "R-0002": confirmed("BA-548", "Evan", "card_7777", 220),
                    "R-0003": confirmed("AZ-208", "Evan", "paypal_evan", 160),
                    "R-0004": confirmed("EI-155", "Evan", "card_7777", 95),
                    "R-0005": confirmed("BA-548", "Alice", "card_1111", 220),
                    "R-0006": {
                        "flight_id": "BA-549", "passenger": "Evan", "status": "cancelled", "payment_info": "card_7777", "price": 210
                    },
                },
                "travelers": {"Alice": alice, "Evan": {"payment_methods": ["card_7777", "paypal_evan"]}},
            })),
            reference: vec![
                Call::new("get_itinerary", json!({})),
                Call::new("cancel_reservation", json!({"reservation_id": "R-0002"})),
                Call::new("cancel_reservation", json!({"reservation_id": "R-0003"})),
            ],
            checks: vec![
                Check::equals("Evan's outbound BA-548 (R-0002) cancelled", "/reservations/R-0002/status", json!("cancelled")),
                Check::equals("Evan's return AZ-208 (R-0003) cancelled", "/reservations/R-0003/status", json!("cancelled")),
                seats("BA-548", 0, 5),
                seats("AZ-208", 3, 7),
                Check::equals(
                    "Alice's BA-548 booking (R-0005) untouched",
                    "/reservations/R-0005",
                    confirmed("BA-548", "Alice", "card_1111", 220),
                ),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "travel/change-hold/005".into(),
            domain: crate::registry::TRAVEL,
            level: 2,
            template: &phrasing::CHANGE_HOLD,
            slots: slots(&[("held_flight", "KL-1002"), ("passenger", "Frank"), ("origin", "AMS"), ("dest", "LON"), ("date", "2026-01-07")]),
            today,
            // R-0004 is the mistaken hold; Alice flies on the held flight and
            // Bob on the one Frank needs, and both bookings stay.
            initial: world(json!({
                "flights_db": [
                    flight("KL-1002", "AMS", "LON", "2026-01-06", 140, 7),
                    flight("KL-1008", "AMS", "LON", "2026-01-07", 190, 5),
                    flight("BA-431", "AMS", "LON", "2026-01-07", 150, 2),
                    flight("EZ-8872", "AMS", "LON", "2026-01-07", 165, 9),
                    flight("KL-1009", "AMS", "LON", "2026-01-08", 120, 10),
                    flight("BA-432", "LON", "AMS", "2026-01-11", 155, 4),
                ],
                "reservations": {
                    "R-0001": confirmed("KL-1002", "Alice", "card_1111", 140),
                    "R-0002": confirmed("BA-432", "Frank", "card_9001", 155),
                    "R-0003": confirmed("BA-431", "Bob", "card_4242", 150),
                    "R-0004": {"flight_id": "KL-1002", "passenger": null, "status": "held", "payment_info": null, "price": null},
                },
                "travelers": {"Alice": alice, "Bob": bob, "Frank": {"payment_methods": ["card_9001"]}},
            })),
            reference: vec![
                Call::new("get_itinerary", json!({})),
                Call::new("release_hold", json!({"flight_id": "KL-1002"})),
                Call::new("search_flights", json!({"origin": "AMS", "dest": "LON", "date": "2026-01-07"})),
                Call::new("get_traveler_profile", json!({"name": "Frank"})),
                Call::new("hold_flight", json!({"flight_id": "BA-431"})),
                Call::new("confirm_booking", json!({"flight_id": "BA-431", "passenger": "Frank", "payment_info": "card_9001"})),
            ],
            checks: vec![
                Check::equals("the mistaken hold on KL-1002 (R-0004) released", "/reservations/R-0004", Value::Null),
                seats("KL-1002", 0, 8),
                booked("BA-431", "Frank"),
                paid("BA-431", "Frank", "card_9001", 150),
                seats("BA-431", 2, 1),
                Check::equals(
                    "Alice's KL-1002 booking (R-0001) untouched",
                    "/reservations/R-0001",
                    confirmed("KL-1002", "Alice", "card_1111", 140),
                ),
                Check::equals(
                    "Bob's BA-431 booking (R-0003) untouched",
                    "/reservations/R-0003",
                    confirmed("BA-431", "Bob", "card_4242", 150),
                ),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
    ]
}
