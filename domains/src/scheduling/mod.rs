//! Scheduling: a calendar of one-hour meetings.
//!
//! The state is exactly the paper's shape, `{"calendar": {date: {time: topic}}}`.
//! Rules: meetings start on the hour within business hours (09:00–16:00
//! starts, so they end by 17:00) on weekdays, never in the past, one meeting
//! per slot; a day with no meetings left disappears from the calendar.

mod generate;
mod phrasing;
mod solver;
mod tasks;
#[cfg(test)]
mod tests;
mod tools;
mod views;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{
    cheats::{Source, Undo},
    perturb::Synonym,
};
use toolenv_core::{DomainState, Task, Tool, diff::Changes, drift::Mapping};

/// A calendar: date → start time → topic.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// Meetings by date (`YYYY-MM-DD`) and start time (`HH:MM`).
    #[serde(deserialize_with = "calendar")]
    pub calendar: BTreeMap<String, BTreeMap<String, String>>,
}

/// A calendar read from JSON (a task file's): real dates, `HH:MM` times,
/// topics that say something, no empty day (the tools remove them).
fn calendar<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, BTreeMap<String, String>>, D::Error> {
    use serde::de::Error;
    let calendar = BTreeMap::<String, BTreeMap<String, String>>::deserialize(deserializer)?;
    for (date, day) in &calendar {
        if toolenv_core::date::Date::parse(date).is_none() {
            return Err(D::Error::custom(format!("'{date}' is not a date (YYYY-MM-DD)")));
        }
        if day.is_empty() {
            return Err(D::Error::custom(format!("{date} has no meeting: leave the day out")));
        }
        for (time, topic) in day {
            if toolenv_core::date::parse_time(time).is_none() {
                return Err(D::Error::custom(format!("'{time}' on {date} is not a time (HH:MM)")));
            }
            if topic.trim().is_empty() {
                return Err(D::Error::custom(format!("the meeting at {time} on {date} has no topic")));
            }
        }
    }
    Ok(calendar)
}

impl DomainState for State {
    const TOOLS: &'static [Tool<Self>] = tools::TOOLS;
    const DRIFT: Mapping = views::DRIFT;

    fn tasks() -> Vec<Task> {
        tasks::tasks()
    }

    fn changes(initial: &Self, end: &Self) -> Changes {
        let mut changes = Changes::default();
        changes.map("calendar", &initial.calendar, &end.calendar);
        changes
    }
}

impl crate::perturb::Lexicon for State {
    const SYNONYMS: &'static [Synonym] = phrasing::SYNONYMS;
    const DISTRACTORS: &'static [&'static str] = phrasing::DISTRACTORS;
}

impl crate::cheats::UndoRules for State {
    const UNDO: &'static [Undo] = &[
        Undo { tool: "book_meeting", by: "cancel_meeting", args: &[("date", Source::Arg("date")), ("time", Source::Arg("time"))] },
        Undo {
            tool: "reschedule_meeting",
            by: "reschedule_meeting",
            args: &[
                ("date", Source::Arg("new_date")),
                ("time", Source::Arg("new_time")),
                ("new_date", Source::Arg("date")),
                ("new_time", Source::Arg("time")),
            ],
        },
    ];
}

impl crate::generate::Generator for State {
    fn generate(origin: &crate::generate::Origin, g: crate::generate::Gen) -> Task {
        generate::generate(origin, g)
    }
}
