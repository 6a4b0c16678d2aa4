//! Travel: flight search, holds, bookings and cancellations.
//!
//! The state is the paper's `flights_db` (Appendix C.2) plus `reservations`
//! (id → reservation) and `travelers` (name → payment methods on file).
//! Rules:
//! - a hold takes one seat; a full flight (no seats left) or a flight dated
//!   before today cannot be held, and a flight has at most one active hold;
//! - confirming needs an active hold on the flight, a traveler on file and a
//!   payment method of that traveler's (the paper's failure mode: agents
//!   confirm without payment); it records passenger, payment and price;
//! - releasing a hold deletes the held reservation and gives the seat back;
//! - only a confirmed reservation of a flight not yet flown can be
//!   cancelled; it stays on record as cancelled and gives the seat back.
//!
//! Reservation ids are sequential per episode (`R-0001`, `R-0002`, …) and
//! never reused, so a released hold's id is not handed out again.

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
use toolenv_core::{DomainState, Shared, Task, Tool, date::Date, diff::Changes, drift::Mapping};

/// Most reservations an episode's state may number (`R-9999`).
const MAX_RESERVATION_NUMBER: u32 = 9999;

/// Flights, reservations and travelers.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "Records")]
pub struct State {
    /// Every flight, in a fixed order (search results keep it).
    pub flights_db: Shared<Vec<Shared<Flight>>>,
    /// Reservations by id (`R-0001`).
    pub reservations: Shared<BTreeMap<String, Shared<Reservation>>>,
    /// Travelers by name.
    pub travelers: Shared<BTreeMap<String, Traveler>>,
    /// The number of the last reservation id handed out; not part of the
    /// judged state, rebuilt from the highest id when a state is read.
    #[serde(skip)]
    last_reservation: u32,
}

/// One flight of `flights_db`, as in the paper's Appendix C.2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flight {
    /// Flight id, e.g. `AA-500`.
    pub id: String,
    /// Origin airport or city code, e.g. `LON`.
    pub origin: String,
    /// Destination code, e.g. `PAR`.
    pub dest: String,
    /// Departure date, `YYYY-MM-DD`.
    pub date: String,
    /// Fare per seat.
    pub price: u32,
    /// Seats still free.
    pub seats_left: u32,
}

/// Where a reservation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A seat is held; not yet paid.
    Held,
    /// Paid and booked.
    Confirmed,
    /// Booked, then cancelled; the seat went back.
    Cancelled,
}

/// One reservation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reservation {
    /// The flight reserved.
    pub flight_id: String,
    /// The traveler flying; `None` while held.
    pub passenger: Option<String>,
    /// Where the reservation stands.
    pub status: Status,
    /// The payment method charged; `None` while held.
    pub payment_info: Option<String>,
    /// The fare paid; `None` while held.
    pub price: Option<u32>,
}

/// A traveler on file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traveler {
    /// Payment methods a booking may be charged to, e.g. `card_4242`.
    pub payment_methods: Vec<String>,
}

/// The serialized state, checked before it becomes a [`State`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Records {
    flights_db: Vec<Shared<Flight>>,
    #[serde(default)]
    reservations: BTreeMap<String, Shared<Reservation>>,
    #[serde(default)]
    travelers: BTreeMap<String, Traveler>,
}

impl TryFrom<Records> for State {
    type Error = String;

    fn try_from(records: Records) -> Result<Self, String> {
        let Records { flights_db, reservations, travelers } = records;
        for (i, flight) in flights_db.iter().enumerate() {
            if flight.id.trim().is_empty() || flights_db.iter().take(i).any(|f| f.id == flight.id) {
                return Err(format!("flight id '{}' is blank or not unique", flight.id));
            }
            if Date::parse(&flight.date).is_none() {
                return Err(format!("flight {} has date '{}', not YYYY-MM-DD", flight.id, flight.date));
            }
        }
        let mut last_reservation = 0;
        for (id, reservation) in &reservations {
            let number = reservation_number(id).ok_or_else(|| format!("reservation id '{id}' is not R-0001 … R-9999"))?;
            last_reservation = last_reservation.max(number);
            if !flights_db.iter().any(|f| f.id == reservation.flight_id) {
                return Err(format!("reservation {id} is for unknown flight '{}'", reservation.flight_id));
            }
            if reservation.status == Status::Held
                && reservations.iter().any(|(other, r)| other < id && r.status == Status::Held && r.flight_id == reservation.flight_id)
            {
                return Err(format!("flight {} has more than one active hold", reservation.flight_id));
            }
        }
        Ok(State { flights_db: flights_db.into(), reservations: reservations.into(), travelers: travelers.into(), last_reservation })
    }
}

fn reservation_number(id: &str) -> Option<u32> {
    let digits = id.strip_prefix("R-")?;
    let valid = digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit());
    digits.parse().ok().filter(|n| valid && (1..=MAX_RESERVATION_NUMBER).contains(n))
}

impl DomainState for State {
    const TOOLS: &'static [Tool<Self>] = tools::TOOLS;
    const DRIFT: Mapping = views::DRIFT;

    fn tasks() -> Vec<Task> {
        tasks::tasks()
    }

    fn changes(initial: &Self, end: &Self) -> Changes {
        let mut changes = Changes::default();
        changes.list("flights_db", &initial.flights_db, &end.flights_db);
        changes.map("reservations", &initial.reservations, &end.reservations);
        changes.map("travelers", &initial.travelers, &end.travelers);
        changes
    }
}

impl crate::perturb::Lexicon for State {
    const SYNONYMS: &'static [Synonym] = phrasing::SYNONYMS;
    const DISTRACTORS: &'static [&'static str] = phrasing::DISTRACTORS;
}

impl crate::cheats::UndoRules for State {
    const UNDO: &'static [Undo] = &[
        Undo { tool: "hold_flight", by: "release_hold", args: &[("reservation_id", Source::Result("reservation_id"))] },
        Undo { tool: "confirm_booking", by: "cancel_reservation", args: &[("reservation_id", Source::Arg("reservation_id"))] },
    ];
}

impl crate::generate::Generator for State {
    fn generate(origin: &crate::generate::Origin, g: crate::generate::Gen) -> Task {
        generate::generate(origin, g)
    }
}
