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
    pub calendar: BTreeMap<String, BTreeMap<String, String>>,
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
