//! The scheduling tasks of the suite.

use serde_json::{Value, json};

use super::phrasing;
use toolenv_core::{Call, Check, Task, World, date::Date, slots};

fn world(state: Value) -> std::sync::Arc<World> {
    std::sync::Arc::new(World::new::<crate::scheduling::State>(serde_json::from_value(state).expect("scheduling task states are valid")))
}

/// The verified scheduling tasks.
pub(super) fn tasks() -> Vec<Task> {
    let today = Date::from_ymd(2025, 12, 29).expect("valid date");
    let busy_week = json!({"calendar": {
        "2026-01-07": {"10:00": "Standup", "15:00": "Sprint planning"},
        "2026-01-08": {"09:00": "Standup", "10:00": "Hiring sync", "11:00": "1:1 with Dana", "16:00": "Retro"},
        "2026-01-12": {"15:00": "Client call"},
        "2026-01-13": {"09:00": "Standup", "10:00": "Roadmap review"},
        "2026-01-14": {"11:00": "Vendor demo", "14:00": "Vendor demo prep"}
    }});
    vec![
        Task {
            id: "scheduling/book-meeting/001".into(),
            domain: crate::registry::SCHEDULING,
            level: 1,
            template: &phrasing::BOOK_MEETING,
            slots: slots(&[("topic", "Review"), ("date", "2026-01-01"), ("time", "09:00")]),
            today,
            initial: world(json!({"calendar": {}})),
            reference: vec![Call::new("book_meeting", json!({"date": "2026-01-01", "time": "09:00", "topic": "Review"}))],
            checks: vec![Check::equals("'Review' booked on 2026-01-01 at 09:00", "/calendar/2026-01-01/09:00", json!("Review"))],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "scheduling/book-meeting/002".into(),
            domain: crate::registry::SCHEDULING,
            level: 1,
            template: &phrasing::BOOK_MEETING,
            slots: slots(&[("topic", "Budget sync"), ("date", "2026-01-07"), ("time", "14:00")]),
            today,
            initial: world(busy_week.clone()),
            reference: vec![Call::new("book_meeting", json!({"date": "2026-01-07", "time": "14:00", "topic": "Budget sync"}))],
            checks: vec![Check::equals("'Budget sync' booked on 2026-01-07 at 14:00", "/calendar/2026-01-07/14:00", json!("Budget sync"))],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "scheduling/conflict/003".into(),
            domain: crate::registry::SCHEDULING,
            level: 2,
            template: &phrasing::CONFLICT,
            slots: slots(&[("topic", "Design review"), ("date", "2026-01-08"), ("time", "10:00")]),
            today,
            initial: world(busy_week.clone()),
            reference: vec![
                Call::new("check_availability", json!({"date": "2026-01-08", "time": "10:00"})),
                Call::new("book_meeting", json!({"date": "2026-01-08", "time": "12:00", "topic": "Design review"})),
            ],
            checks: vec![
                Check::equals("'Design review' booked at the next free slot, 12:00", "/calendar/2026-01-08/12:00", json!("Design review")),
                Check::equals("the existing 10:00 meeting is kept", "/calendar/2026-01-08/10:00", json!("Hiring sync")),
                Check::count("'Design review' booked once on 2026-01-08", "/calendar/2026-01-08", json!("Design review"), 1),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "scheduling/reschedule/004".into(),
            domain: crate::registry::SCHEDULING,
            level: 2,
            template: &phrasing::RESCHEDULE,
            slots: slots(&[("topic", "Client call"), ("date", "2026-01-12"), ("new_date", "2026-01-13")]),
            today,
            initial: world(busy_week.clone()),
            reference: vec![
                Call::new("check_calendar", json!({"date": "2026-01-12"})),
                Call::new("check_availability", json!({"date": "2026-01-13", "time": "09:00"})),
                Call::new(
                    "reschedule_meeting",
                    json!({"date": "2026-01-12", "time": "15:00", "new_date": "2026-01-13", "new_time": "11:00"}),
                ),
            ],
            checks: vec![
                Check::equals("'Client call' moved to 2026-01-13 at 11:00", "/calendar/2026-01-13/11:00", json!("Client call")),
                Check::equals("'Client call' no longer on 2026-01-12 at 15:00", "/calendar/2026-01-12/15:00", Value::Null),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
        Task {
            id: "scheduling/cancel/005".into(),
            domain: crate::registry::SCHEDULING,
            level: 1,
            template: &phrasing::CANCEL,
            slots: slots(&[("topic", "Vendor demo"), ("date", "2026-01-14")]),
            today,
            initial: world(busy_week),
            reference: vec![
                Call::new("check_calendar", json!({"date": "2026-01-14"})),
                Call::new("cancel_meeting", json!({"date": "2026-01-14", "time": "11:00"})),
            ],
            checks: vec![
                Check::equals("'Vendor demo' cancelled", "/calendar/2026-01-14/11:00", Value::Null),
                Check::equals("'Vendor demo prep' kept", "/calendar/2026-01-14/14:00", json!("Vendor demo prep")),
            ],
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        },
    ]
}
