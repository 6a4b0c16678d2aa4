//! Scheduling: a calendar of one-hour meetings.
//!
//! The state is exactly the paper's shape, `{"calendar": {date: {time: topic}}}`.
//! Rules: meetings start on the hour within business hours (09:00–16:00
//! starts, so they end by 17:00) on weekdays, never in the past, one meeting
//! per slot; a day with no meetings left disappears from the calendar.

mod phrasing;
mod views;

use std::collections::BTreeMap;
use std::ops::Bound;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::date::{Date, format_time, parse_time};
use crate::json::{Field, Seq};
use crate::oracle::Check;
use crate::task::{Call, Task, slots};
use crate::tool::{Args, DomainError, Param, ParamType, ToolSpec, echo};
use crate::drift::Mapping;
use crate::perturb::Synonym;
use crate::World;
use crate::world::{Context, DomainState, Reply, Tool};

/// First and last allowed meeting start, in minutes after midnight.
const FIRST_START: u32 = 9 * 60;
const LAST_START: u32 = 16 * 60;
/// Every allowed meeting start, `FIRST_START` to `LAST_START` on the hour.
const SLOTS: [&str; 8] = ["09:00", "10:00", "11:00", "12:00", "13:00", "14:00", "15:00", "16:00"];
/// Longest span `list_meetings` accepts, in days.
const MAX_RANGE_DAYS: i64 = 366;

/// A calendar: date → start time → topic.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// Meetings by date (`YYYY-MM-DD`) and start time (`HH:MM`).
    pub calendar: BTreeMap<String, BTreeMap<String, String>>,
}

const DATE: Param = Param::required("date", ParamType::String, "Date, YYYY-MM-DD.");
const TIME: Param = Param::required("time", ParamType::String, "Start time, HH:MM (24-hour, on the hour, 09:00-16:00).");

impl DomainState for State {
    const TOOLS: &'static [Tool<Self>] = &[
        Tool::new(
            ToolSpec {
                name: "book_meeting",
                description: "Books a one-hour meeting on the specified date and time.",
                mutates_state: true,
                params: &[DATE, TIME, Param::required("topic", ParamType::String, "What the meeting is about.")],
            },
            |s, args, ctx| s.call("book_meeting", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "check_calendar",
                description: "Returns all meetings scheduled for the given date.",
                mutates_state: false,
                params: &[DATE],
            },
            |s, args, ctx| s.call("check_calendar", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "cancel_meeting",
                description: "Cancels the meeting at the specified slot.",
                mutates_state: true,
                params: &[DATE, TIME],
            },
            |s, args, ctx| s.call("cancel_meeting", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "list_meetings",
                description: "Lists all meetings in the date range (inclusive).",
                mutates_state: false,
                params: &[
                    Param::required("start_date", ParamType::String, "First date, YYYY-MM-DD."),
                    Param::required("end_date", ParamType::String, "Last date, YYYY-MM-DD."),
                ],
            },
            |s, args, ctx| s.call("list_meetings", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "reschedule_meeting",
                description: "Moves the meeting at one slot to another free slot, keeping its topic.",
                mutates_state: true,
                params: &[
                    DATE,
                    TIME,
                    Param::required("new_date", ParamType::String, "New date, YYYY-MM-DD."),
                    Param::required("new_time", ParamType::String, "New start time, HH:MM."),
                ],
            },
            |s, args, ctx| s.call("reschedule_meeting", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "check_availability",
                description: "Detects conflicts: says whether a slot is free, which meeting holds it if not, and the free slots left that day.",
                mutates_state: false,
                params: &[DATE, TIME],
            },
            |s, args, ctx| s.call("check_availability", args, ctx),
        ),
    ];
    const DRIFT: Mapping = views::DRIFT;
    const SYNONYMS: &'static [Synonym] = phrasing::SYNONYMS;
    const DISTRACTORS: &'static [&'static str] = phrasing::DISTRACTORS;

    fn tasks() -> Vec<Task> {
        tasks()
    }
}

impl State {
    fn call(&mut self, tool: &str, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
        match tool {
            "book_meeting" => {
                let (date, time) = self.free_slot(args.str("date"), args.str("time"), ctx)?;
                let topic = args.str("topic").trim();
                if topic.is_empty() || topic.len() > 200 {
                    return Err(DomainError::new("INVALID_TOPIC", "topic must be 1 to 200 characters"));
                }
                let reply = Reply::wrote(&Field("booked", Meeting { date: &date, time: &time, topic }));
                self.calendar.entry(date).or_default().insert(time, topic.to_owned());
                Ok(reply)
            }
            "check_calendar" => {
                let date = parse_date(args.str("date"), "date")?;
                let meetings = Seq(|| self.calendar.get(&date).into_iter().flatten().map(|(time, topic)| SlotTopic { time, topic }));
                Ok(Reply::read(&Day { date: &date, meetings }))
            }
            "cancel_meeting" => {
                let (date, time, topic) = self.take(args.str("date"), args.str("time"))?;
                Ok(Reply::wrote(&Field("cancelled", Meeting { date: &date, time: &time, topic: &topic })))
            }
            "list_meetings" => {
                let start = parse_date(args.str("start_date"), "start_date")?;
                let end = parse_date(args.str("end_date"), "end_date")?;
                let days = Date::parse(&end).map_or(0, |e| Date::parse(&start).map_or(0, |s| e.days_since(s)));
                if days < 0 {
                    return Err(DomainError::new("INVALID_RANGE", format!("end_date {end} is before start_date {start}")));
                }
                if days >= MAX_RANGE_DAYS {
                    return Err(DomainError::new("RANGE_TOO_LONG", format!("a range may span at most {MAX_RANGE_DAYS} days")));
                }
                let meetings = Seq(|| {
                    self.calendar
                        .range::<str, _>((Bound::Included(start.as_str()), Bound::Included(end.as_str())))
                        .flat_map(|(date, slots)| slots.iter().map(move |(time, topic)| Meeting { date, time, topic }))
                });
                Ok(Reply::read(&Field("meetings", meetings)))
            }
            "reschedule_meeting" => {
                let (new_date, new_time) = self.free_slot(args.str("new_date"), args.str("new_time"), ctx)?;
                let (date, time, topic) = self.take(args.str("date"), args.str("time"))?;
                let reply = Reply::wrote(&Field(
                    "rescheduled",
                    Rescheduled { from: Slot { date: &date, time: &time }, to: Slot { date: &new_date, time: &new_time }, topic: &topic },
                ));
                self.calendar.entry(new_date).or_default().insert(new_time, topic);
                Ok(reply)
            }
            "check_availability" => {
                let date = parse_date(args.str("date"), "date")?;
                let time = parse_slot(args.str("time"))?;
                let day = self.calendar.get(&date);
                let conflict = day.and_then(|d| d.get(&time)).map(|topic| SlotTopic { time: &time, topic });
                let free_slots: Vec<&str> = SLOTS.iter().copied().filter(|t| day.is_none_or(|d| !d.contains_key(*t))).collect();
                Ok(Reply::read(&Availability { available: conflict.is_none(), conflict, date: &date, free_slots, time: &time }))
            }
            _ => Err(DomainError::new("UNKNOWN_TOOL", format!("scheduling has no tool '{}'", echo(tool)))),
        }
    }
}

// Results, written straight to canonical JSON: fields in key order.

/// A meeting in a result.
#[derive(Serialize)]
struct Meeting<'a> {
    date: &'a str,
    time: &'a str,
    topic: &'a str,
}

/// A meeting of a known day.
#[derive(Serialize)]
struct SlotTopic<'a> {
    time: &'a str,
    topic: &'a str,
}

/// A slot of a rescheduled meeting.
#[derive(Serialize)]
struct Slot<'a> {
    date: &'a str,
    time: &'a str,
}

#[derive(Serialize)]
struct Rescheduled<'a> {
    from: Slot<'a>,
    to: Slot<'a>,
    topic: &'a str,
}

#[derive(Serialize)]
struct Day<'a, M: Serialize> {
    date: &'a str,
    meetings: M,
}

#[derive(Serialize)]
struct Availability<'a> {
    available: bool,
    conflict: Option<SlotTopic<'a>>,
    date: &'a str,
    free_slots: Vec<&'static str>,
    time: &'a str,
}

impl State {
    /// Checks that a slot may hold a new meeting; returns it normalized.
    fn free_slot(&self, date: &str, time: &str, ctx: &Context) -> Result<(String, String), DomainError> {
        let date = parse_date(date, "date")?;
        let time = parse_slot(time)?;
        let day = Date::parse(&date).unwrap_or(ctx.today);
        if day < ctx.today {
            return Err(DomainError::new("DATE_IN_PAST", format!("{date} is before today ({})", ctx.today)));
        }
        if day.weekday() >= 5 {
            return Err(DomainError::new(
                "OUTSIDE_BUSINESS_HOURS",
                format!("{date} is a weekend day; meetings are booked Monday to Friday"),
            ));
        }
        if let Some(topic) = self.calendar.get(&date).and_then(|d| d.get(&time)) {
            return Err(DomainError::new("SLOT_TAKEN", format!("{time} on {date} is already booked ('{topic}')")));
        }
        Ok((date, time))
    }

    /// Removes the meeting at a slot; returns (date, time, topic).
    fn take(&mut self, date: &str, time: &str) -> Result<(String, String, String), DomainError> {
        let date = parse_date(date, "date")?;
        let time = parse_slot(time)?;
        let Some(day) = self.calendar.get_mut(&date) else {
            return Err(no_meeting(&date, &time));
        };
        let topic = day.remove(&time).ok_or_else(|| no_meeting(&date, &time))?;
        if day.is_empty() {
            self.calendar.remove(&date);
        }
        Ok((date, time, topic))
    }
}

fn no_meeting(date: &str, time: &str) -> DomainError {
    DomainError::new("NO_SUCH_MEETING", format!("no meeting at {time} on {date}"))
}

fn parse_date(text: &str, field: &str) -> Result<String, DomainError> {
    let date = Date::parse(text.trim())
        .ok_or_else(|| DomainError::new("INVALID_DATE", format!("{field} '{}' is not a date in YYYY-MM-DD form", echo(text))))?;
    Ok(date.to_string())
}

fn parse_slot(text: &str) -> Result<String, DomainError> {
    let minutes =
        parse_time(text.trim()).ok_or_else(|| DomainError::new("INVALID_TIME", format!("time '{}' is not HH:MM (24-hour)", echo(text))))?;
    if minutes % 60 != 0 || !(FIRST_START..=LAST_START).contains(&minutes) {
        return Err(DomainError::new(
            "OUTSIDE_BUSINESS_HOURS",
            format!("meetings start on the hour between {} and {}; got {}", format_time(FIRST_START), format_time(LAST_START), echo(text)),
        ));
    }
    Ok(format_time(minutes))
}

fn world(state: Value) -> World {
    World::Scheduling(serde_json::from_value(state).expect("scheduling task states are valid"))
}

/// The verified scheduling tasks.
pub(crate) fn tasks() -> Vec<Task> {
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
            domain: crate::Domain::Scheduling,
            level: 1,
            template: &phrasing::BOOK_MEETING,
            slots: slots(&[("topic", "Review"), ("date", "2026-01-01"), ("time", "09:00")]),
            today,
            initial: world(json!({"calendar": {}})),
            reference: vec![Call::new("book_meeting", json!({"date": "2026-01-01", "time": "09:00", "topic": "Review"}))],
            checks: vec![Check::equals("'Review' booked on 2026-01-01 at 09:00", "/calendar/2026-01-01/09:00", json!("Review"))],
            may_change: vec!["/calendar/2026-01-01/09:00"],
        },
        Task {
            id: "scheduling/book-meeting/002".into(),
            domain: crate::Domain::Scheduling,
            level: 1,
            template: &phrasing::BOOK_MEETING,
            slots: slots(&[("topic", "Budget sync"), ("date", "2026-01-07"), ("time", "14:00")]),
            today,
            initial: world(busy_week.clone()),
            reference: vec![Call::new("book_meeting", json!({"date": "2026-01-07", "time": "14:00", "topic": "Budget sync"}))],
            checks: vec![Check::equals("'Budget sync' booked on 2026-01-07 at 14:00", "/calendar/2026-01-07/14:00", json!("Budget sync"))],
            may_change: vec!["/calendar/2026-01-07/14:00"],
        },
        Task {
            id: "scheduling/conflict/003".into(),
            domain: crate::Domain::Scheduling,
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
            may_change: vec!["/calendar/2026-01-08/12:00"],
        },
        Task {
            id: "scheduling/reschedule/004".into(),
            domain: crate::Domain::Scheduling,
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
            may_change: vec!["/calendar/2026-01-12/15:00", "/calendar/2026-01-13/11:00"],
        },
        Task {
            id: "scheduling/cancel/005".into(),
            domain: crate::Domain::Scheduling,
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
            may_change: vec!["/calendar/2026-01-14/11:00"],
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::testing::Answer;
    use pretty_assertions::assert_eq;

    fn call(state: &mut State, tool: &str, args: Value) -> Answer {
        crate::world::testing::call(state, Date::from_ymd(2025, 12, 29).unwrap(), tool, args)
    }

    fn code(result: Answer) -> &'static str {
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
        let moved = call(
            &mut s,
            "reschedule_meeting",
            json!({"date": "2026-01-05", "time": "10:00", "new_date": "2026-01-06", "new_time": "09:00"}),
        );
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
}
