//! What scheduling results look like: the v1 shapes, written straight to
//! canonical JSON (fields in key order), and the v2 shape schema drift
//! switches to.

use serde::Serialize;

use toolenv_core::drift::{Conv, DateStyle, Field, Mapping};

/// The v2 shape: renamed, nested and reformatted fields (see [`toolenv_core::drift`]).
pub(super) const DRIFT: Mapping = Mapping { fields: FIELDS, nested_record: None };

const FIELDS: &[Field] = &[
    Field::renamed("topic", "title"),
    Field::nested("date", "when", "day").with(Conv::Date(DateStyle::DayFirst)),
    Field::nested("time", "when", "start").with(Conv::Time),
    Field::renamed("meetings", "events"),
    Field::renamed("available", "is_free"),
    Field::renamed("free_slots", "open_slots").with(Conv::Times),
];

/// A meeting in a result.
#[derive(Serialize)]
pub(super) struct Meeting<'a> {
    pub(super) date: &'a str,
    pub(super) time: &'a str,
    pub(super) topic: &'a str,
}

/// A meeting of a known day.
#[derive(Serialize)]
pub(super) struct SlotTopic<'a> {
    pub(super) time: &'a str,
    pub(super) topic: &'a str,
}

/// A slot of a rescheduled meeting.
#[derive(Serialize)]
pub(super) struct Slot<'a> {
    pub(super) date: &'a str,
    pub(super) time: &'a str,
}

#[derive(Serialize)]
pub(super) struct Rescheduled<'a> {
    pub(super) from: Slot<'a>,
    pub(super) to: Slot<'a>,
    pub(super) topic: &'a str,
}

#[derive(Serialize)]
pub(super) struct Day<'a, M: Serialize> {
    pub(super) date: &'a str,
    pub(super) meetings: M,
}

#[derive(Serialize)]
pub(super) struct Availability<'a> {
    pub(super) available: bool,
    pub(super) conflict: Option<SlotTopic<'a>>,
    pub(super) date: &'a str,
    pub(super) free_slots: Vec<&'static str>,
    pub(super) time: &'a str,
}
