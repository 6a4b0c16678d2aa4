//! The scheduling tools: one handler per tool, each a pure transition of the
//! calendar.

use std::ops::Bound;

use super::State;
use super::views::{Availability, Day, Meeting, Rescheduled, Slot, SlotTopic};
use toolenv_core::{
    Args, Context, DomainError, Param, ParamType, Reply, Tool, ToolSpec,
    date::{Date, format_time, parse_time},
    echo,
    json::{Field, Seq},
};

/// First and last allowed meeting start, in minutes after midnight.
pub(super) const FIRST_START: u32 = 9 * 60;
pub(super) const LAST_START: u32 = 16 * 60;
/// Every allowed meeting start, `FIRST_START` to `LAST_START` on the hour.
pub(super) const SLOTS: [&str; 8] = ["09:00", "10:00", "11:00", "12:00", "13:00", "14:00", "15:00", "16:00"];
/// Longest span `list_meetings` accepts, in days.
const MAX_RANGE_DAYS: i64 = 366;

const DATE: Param = Param::required("date", ParamType::String, "Date, YYYY-MM-DD.");
const TIME: Param = Param::required("time", ParamType::String, "Start time, HH:MM (24-hour, on the hour, 09:00-16:00).");

/// The tools, in the order agents see them.
pub(super) const TOOLS: &[Tool<State>] = &[
    Tool::new(
        ToolSpec {
            name: "book_meeting",
            description: "Books a one-hour meeting on the specified date and time.",
            mutates_state: true,
            params: &[DATE, TIME, Param::required("topic", ParamType::String, "What the meeting is about.")],
        },
        book_meeting,
    ),
    Tool::read(
        ToolSpec {
            name: "check_calendar",
            description: "Returns all meetings scheduled for the given date.",
            mutates_state: false,
            params: &[DATE],
        },
        check_calendar,
    ),
    Tool::new(
        ToolSpec {
            name: "cancel_meeting",
            description: "Cancels the meeting at the specified slot.",
            mutates_state: true,
            params: &[DATE, TIME],
        },
        cancel_meeting,
    ),
    Tool::read(
        ToolSpec {
            name: "list_meetings",
            description: "Lists all meetings in the date range (inclusive).",
            mutates_state: false,
            params: &[
                Param::required("start_date", ParamType::String, "First date, YYYY-MM-DD."),
                Param::required("end_date", ParamType::String, "Last date, YYYY-MM-DD."),
            ],
        },
        list_meetings,
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
        reschedule_meeting,
    ),
    Tool::read(
        ToolSpec {
            name: "check_availability",
            description: "Detects conflicts: says whether a slot is free, which meeting holds it if not, and the free slots left that day.",
            mutates_state: false,
            params: &[DATE, TIME],
        },
        check_availability,
    ),
];

fn book_meeting(s: &mut State, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
    let (date, time) = s.free_slot(args.str("date"), args.str("time"), ctx)?;
    let topic = args.str("topic").trim();
    if topic.is_empty() || topic.len() > 200 {
        return Err(DomainError::new("INVALID_TOPIC", "topic must be 1 to 200 characters"));
    }
    let reply = Reply::wrote(&Field("booked", Meeting { date: &date, time: &time, topic }));
    s.calendar.entry(date).or_default().insert(time, topic.to_owned());
    Ok(reply)
}

fn check_calendar(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let date = parse_date(args.str("date"), "date")?;
    let meetings = Seq(|| s.calendar.get(&date).into_iter().flatten().map(|(time, topic)| SlotTopic { time, topic }));
    Ok(Reply::read(&Day { date: &date, meetings }))
}

fn cancel_meeting(s: &mut State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (date, time, topic) = s.take(args.str("date"), args.str("time"))?;
    Ok(Reply::wrote(&Field("cancelled", Meeting { date: &date, time: &time, topic: &topic })))
}

fn list_meetings(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
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
        s.calendar
            .range::<str, _>((Bound::Included(start.as_str()), Bound::Included(end.as_str())))
            .flat_map(|(date, slots)| slots.iter().map(move |(time, topic)| Meeting { date, time, topic }))
    });
    Ok(Reply::read(&Field("meetings", meetings)))
}

fn reschedule_meeting(s: &mut State, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
    let (new_date, new_time) = s.free_slot(args.str("new_date"), args.str("new_time"), ctx)?;
    let (date, time, topic) = s.take(args.str("date"), args.str("time"))?;
    let reply = Reply::wrote(&Field(
        "rescheduled",
        Rescheduled { from: Slot { date: &date, time: &time }, to: Slot { date: &new_date, time: &new_time }, topic: &topic },
    ));
    s.calendar.entry(new_date).or_default().insert(new_time, topic);
    Ok(reply)
}

fn check_availability(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let date = parse_date(args.str("date"), "date")?;
    let time = parse_slot(args.str("time"))?;
    let day = s.calendar.get(&date);
    let conflict = day.and_then(|d| d.get(&time)).map(|topic| SlotTopic { time: &time, topic });
    let free_slots: Vec<&str> = SLOTS.iter().copied().filter(|t| day.is_none_or(|d| !d.contains_key(*t))).collect();
    Ok(Reply::read(&Availability { available: conflict.is_none(), conflict, date: &date, free_slots, time: &time }))
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
