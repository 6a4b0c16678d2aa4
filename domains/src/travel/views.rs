//! What travel results look like: the v1 shapes, written straight to
//! canonical JSON (fields in key order), and the v2 shape schema drift
//! switches to.
//!
//! ## Example: one result in both shapes
//!
//! ```
//! use serde_json::json;
//! use toolenv_core::drift;
//! use toolenv_domains::registry::TRAVEL;
//!
//! let v1 = json!({"held": {"reservation_id": "R-0001", "flight": {
//!     "id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 9
//! }}});
//! let v2 = drift::to_v2(TRAVEL, "hold_flight", &v1);
//! assert_eq!(v2, json!({"api_version": "v2", "held": {"booking_ref": "R-0001", "flight": {
//!     "flight_number": "AA-500", "route": {"from": "LON", "to": "PAR"}, "departure_date": "05JAN2026",
//!     "fare": {"amount": 300}, "availability": {"seats": 9}
//! }}}));
//! assert_eq!(drift::from_v2(TRAVEL, "hold_flight", &v2), v1);
//! ```

use serde::Serialize;

use super::{Flight, Reservation, Status};
use toolenv_core::{
    Shared,
    drift::{Conv, DateStyle, Field, Mapping, NestedRecord},
};

/// The v2 shape: renamed, nested and reformatted fields (see [`toolenv_core::drift`]).
pub(super) const DRIFT: Mapping =
    Mapping { fields: FIELDS, nested_record: Some(NestedRecord { key: "flight", id: "flight_id", fields: &["origin", "dest", "date"] }) };

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

/// A flight as tools show it.
#[derive(Serialize)]
pub(super) struct FlightView<'a> {
    date: &'a str,
    dest: &'a str,
    id: &'a str,
    origin: &'a str,
    price: u32,
    seats_left: u32,
}

impl<'a> FlightView<'a> {
    pub(super) fn of(flight: &'a Flight) -> Self {
        let Flight { id, origin, dest, date, price, seats_left } = flight;
        Self { date, dest, id, origin, price: *price, seats_left: *seats_left }
    }
}

/// A reservation as tools show it: its fields plus its flight's route and date.
#[derive(Serialize)]
pub(super) struct ReservationView<'a> {
    date: Option<&'a str>,
    dest: Option<&'a str>,
    flight_id: &'a str,
    origin: Option<&'a str>,
    passenger: Option<&'a str>,
    payment_info: Option<&'a str>,
    price: Option<u32>,
    reservation_id: &'a str,
    status: Status,
}

impl<'a> ReservationView<'a> {
    pub(super) fn of(flights: &'a [Shared<Flight>], id: &'a str, reservation: &'a Reservation) -> Self {
        let flight = flights.iter().find(|f| f.id == reservation.flight_id);
        Self {
            date: flight.map(|f| f.date.as_str()),
            dest: flight.map(|f| f.dest.as_str()),
            flight_id: &reservation.flight_id,
            origin: flight.map(|f| f.origin.as_str()),
            passenger: reservation.passenger.as_deref(),
            payment_info: reservation.payment_info.as_deref(),
            price: reservation.price,
            reservation_id: id,
            status: reservation.status,
        }
    }
}

#[derive(Serialize)]
pub(super) struct Search<'a, F: Serialize> {
    pub(super) date: &'a str,
    pub(super) dest: &'a str,
    pub(super) flights: F,
    pub(super) origin: &'a str,
}

/// A held or released flight.
#[derive(Serialize)]
pub(super) struct FlightHold<'a> {
    pub(super) flight: FlightView<'a>,
    pub(super) reservation_id: &'a str,
}

#[derive(Serialize)]
pub(super) struct Held<'a> {
    pub(super) held: FlightHold<'a>,
    pub(super) next: &'a str,
}

#[derive(Serialize)]
pub(super) struct Profile<'a, R: Serialize> {
    pub(super) name: &'a str,
    pub(super) payment_methods: &'a [String],
    pub(super) reservations: R,
}
