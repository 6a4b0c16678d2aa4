//! What scheduling results look like: the v2 shape schema drift switches to.

use crate::drift::{Conv, DateStyle, Field, Mapping};

/// The v2 shape: renamed, nested and reformatted fields (see [`crate::drift`]).
pub(super) const DRIFT: Mapping = Mapping { fields: FIELDS, nested_record: None };

const FIELDS: &[Field] = &[
    Field::renamed("topic", "title"),
    Field::nested("date", "when", "day").with(Conv::Date(DateStyle::DayFirst)),
    Field::nested("time", "when", "start").with(Conv::Time),
    Field::renamed("meetings", "events"),
    Field::renamed("available", "is_free"),
    Field::renamed("free_slots", "open_slots").with(Conv::Times),
];
