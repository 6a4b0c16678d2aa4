//! What travel results look like: the v2 shape schema drift switches to.

use crate::drift::{Conv, DateStyle, Field, Mapping, NestedRecord};

/// The v2 shape: renamed, nested and reformatted fields (see [`crate::drift`]).
pub(super) const DRIFT: Mapping = Mapping { fields: FIELDS, nested_record: Some(NestedRecord { key: "flight", id: "flight_id", fields: &["origin", "dest", "date"] }) };

const FIELDS: &[Field] = &[
    Field::renamed("id", "flight_number"),
    Field::nested("origin", "route", "from"),
    Field::nested("dest", "route", "to"),
    Field::renamed("date", "departure_date").with(Conv::Date(DateStyle::Airline)),
    Field::nested("price", "fare", "amount"),
    Field::nested("seats_left", "availability", "seats"),
    Field::renamed("reservation_id", "booking_ref"),
    Field::renamed("reservations", "bookings"),
    Field::renamed("payment_info", "payment_method"),
    Field::renamed("name", "traveler"),
];
