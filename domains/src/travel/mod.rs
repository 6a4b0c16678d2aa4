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

mod phrasing;
mod solver;
mod views;

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::date::Date;
use crate::json::{Field, Seq};
use crate::oracle::Check;
use crate::task::{Call, Task, slots};
use crate::tool::{Args, DomainError, Param, ParamType, ToolSpec, echo};
use crate::drift::Mapping;
use crate::perturb::Synonym;
use crate::World;
use crate::world::{Context, DomainState, Reply, Tool};

/// Most characters a text argument (a name, a payment method) may have.
const MAX_TEXT_CHARS: usize = 200;
/// Most reservations an episode's state may number (`R-9999`).
const MAX_RESERVATION_NUMBER: u32 = 9999;

/// Flights, reservations and travelers.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "Records")]
pub struct State {
    /// Every flight, in a fixed order (search results keep it).
    pub flights_db: Vec<Flight>,
    /// Reservations by id (`R-0001`).
    pub reservations: BTreeMap<String, Reservation>,
    /// Travelers by name.
    pub travelers: BTreeMap<String, Traveler>,
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
    flights_db: Vec<Flight>,
    #[serde(default)]
    reservations: BTreeMap<String, Reservation>,
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
        Ok(State { flights_db, reservations, travelers, last_reservation })
    }
}

fn reservation_number(id: &str) -> Option<u32> {
    let digits = id.strip_prefix("R-")?;
    let valid = digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit());
    digits.parse().ok().filter(|n| valid && (1..=MAX_RESERVATION_NUMBER).contains(n))
}

const FLIGHT_ID: Param = Param::required("flight_id", ParamType::String, "Flight id, e.g. AA-500.");

impl DomainState for State {
    const TOOLS: &'static [Tool<Self>] = &[
        Tool::new(
            ToolSpec {
                name: "search_flights",
                description: "Searches for available flights on a route and date; lists each with its price and seats left.",
                mutates_state: false,
                params: &[
                    Param::required("origin", ParamType::String, "Origin airport or city code, e.g. LON."),
                    Param::required("dest", ParamType::String, "Destination airport or city code, e.g. PAR."),
                    Param::required("date", ParamType::String, "Departure date, YYYY-MM-DD."),
                ],
            },
            |s, args, ctx| s.call("search_flights", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "hold_flight",
                description: "Places a temporary hold on a flight, taking one seat; confirm it with confirm_booking.",
                mutates_state: true,
                params: &[FLIGHT_ID],
            },
            |s, args, ctx| s.call("hold_flight", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "confirm_booking",
                description: "Confirms a held flight booking for a passenger, charging one of the passenger's payment methods on file.",
                mutates_state: true,
                params: &[
                    FLIGHT_ID,
                    Param::required("passenger", ParamType::String, "The traveler's name as on file, e.g. Bob."),
                    Param::required("payment_info", ParamType::String, "A payment method on file for the passenger, e.g. card_4242."),
                ],
            },
            |s, args, ctx| s.call("confirm_booking", args, ctx),
        ),
        Tool::new(
            ToolSpec { name: "get_itinerary", description: "Returns current reservations.", mutates_state: false, params: &[] },
            |s, args, ctx| s.call("get_itinerary", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "release_hold",
                description: "Releases the active hold on a flight, giving its seat back.",
                mutates_state: true,
                params: &[FLIGHT_ID],
            },
            |s, args, ctx| s.call("release_hold", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "cancel_reservation",
                description: "Cancels a confirmed reservation, giving its seat back.",
                mutates_state: true,
                params: &[Param::required("reservation_id", ParamType::String, "Reservation id, e.g. R-0001.")],
            },
            |s, args, ctx| s.call("cancel_reservation", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "get_traveler_profile",
                description: "Returns a traveler's payment methods on file and reservation ids.",
                mutates_state: false,
                params: &[Param::required("name", ParamType::String, "The traveler's name, e.g. Bob.")],
            },
            |s, args, ctx| s.call("get_traveler_profile", args, ctx),
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
            "search_flights" => {
                let origin = code_arg(args, "origin")?;
                let dest = code_arg(args, "dest")?;
                for (field, value) in [("origin", &origin), ("dest", &dest)] {
                    if value.is_empty() {
                        return Err(DomainError::new(
                            "INVALID_AIRPORT",
                            format!("{field} is blank; give an airport or city code such as LON"),
                        ));
                    }
                }
                let date_text = args.str("date").trim();
                let date = Date::parse(date_text).ok_or_else(|| {
                    DomainError::new("INVALID_DATE", format!("date {} is not a date in YYYY-MM-DD form", quoted(args.str("date"))))
                })?;
                let date = date.text_of(date_text);
                let flights =
                    Seq(|| self.flights_db.iter().filter(|f| f.origin == origin && f.dest == dest && f.date == date).map(FlightView::of));
                Ok(Reply::read(&Search { date: &date, dest: &dest, flights, origin: &origin }))
            }
            "hold_flight" => {
                let flight_id = code_arg(args, "flight_id")?;
                let flight = find_flight_mut(&mut self.flights_db, &flight_id)?;
                if Date::parse(&flight.date).is_some_and(|d| d < ctx.today) {
                    return Err(DomainError::new(
                        "DATE_IN_PAST",
                        format!("flight {flight_id} left on {}, before today ({})", flight.date, ctx.today),
                    ));
                }
                if let Some(held) = active_hold(&self.reservations, &flight_id) {
                    return Err(DomainError::new(
                        "ALREADY_HELD",
                        format!(
                            "flight {flight_id} is already held ({held}); confirm it with confirm_booking or release it with release_hold"
                        ),
                    ));
                }
                let seats_left = flight.seats_left.checked_sub(1).ok_or_else(|| {
                    DomainError::new(
                        "FLIGHT_FULL",
                        format!("flight {flight_id} has no seats left; search_flights shows the seats left on other flights"),
                    )
                })?;
                let number = self.last_reservation.checked_add(1).filter(|n| *n <= MAX_RESERVATION_NUMBER).ok_or_else(|| {
                    DomainError::new("RESERVATION_LIMIT", format!("an episode may create at most {MAX_RESERVATION_NUMBER} reservations"))
                })?;
                flight.seats_left = seats_left;
                self.last_reservation = number;
                let id = crate::date::numbered_id("R-", number);
                let reply = Reply::wrote(&Held {
                    held: FlightHold { flight: FlightView::of(flight), reservation_id: &id },
                    next: "confirm with confirm_booking(flight_id, passenger, payment_info)",
                });
                let reservation = Reservation {
                    flight_id: flight_id.into_owned(),
                    passenger: None,
                    status: Status::Held,
                    payment_info: None,
                    price: None,
                };
                self.reservations.insert(id, reservation);
                Ok(reply)
            }
            "confirm_booking" => {
                let flight_id = code_arg(args, "flight_id")?;
                let passenger = text_arg(args, "passenger")?;
                let payment_info = text_arg(args, "payment_info")?;
                let price = find_flight(&self.flights_db, &flight_id)?.price;
                let id = active_hold(&self.reservations, &flight_id).cloned().ok_or_else(|| {
                    DomainError::new("NOT_HELD", format!("flight {flight_id} has no active hold; hold it first with hold_flight"))
                })?;
                let traveler = find_traveler(&self.travelers, passenger)?;
                if payment_info.is_empty() {
                    return Err(DomainError::new(
                        "PAYMENT_REQUIRED",
                        format!(
                            "payment_info is blank; a booking is confirmed only with a payment method on file for {passenger} (see get_traveler_profile)"
                        ),
                    ));
                }
                if !traveler.payment_methods.iter().any(|m| m == payment_info) {
                    return Err(DomainError::new(
                        "UNKNOWN_PAYMENT_METHOD",
                        format!(
                            "payment_info {} is not a payment method on file for {passenger}; get_traveler_profile lists them",
                            quoted(payment_info)
                        ),
                    ));
                }
                let reservation = self.reservations.get_mut(&id).ok_or_else(|| no_reservation(&id))?;
                reservation.status = Status::Confirmed;
                reservation.passenger = Some(passenger.to_owned());
                reservation.payment_info = Some(payment_info.to_owned());
                reservation.price = Some(price);
                Ok(Reply::wrote(&Field("confirmed", ReservationView::of(&self.flights_db, &id, reservation))))
            }
            "get_itinerary" => {
                let reservations = Seq(|| self.reservations.iter().map(|(id, r)| ReservationView::of(&self.flights_db, id, r)));
                Ok(Reply::read(&Field("reservations", reservations)))
            }
            "release_hold" => {
                let flight_id = code_arg(args, "flight_id")?;
                let flight = find_flight_mut(&mut self.flights_db, &flight_id)?;
                let id = active_hold(&self.reservations, &flight_id)
                    .cloned()
                    .ok_or_else(|| DomainError::new("NOT_HELD", format!("flight {flight_id} has no active hold to release")))?;
                self.reservations.remove(&id);
                flight.seats_left = flight.seats_left.saturating_add(1);
                Ok(Reply::wrote(&Field("released", FlightHold { flight: FlightView::of(flight), reservation_id: &id })))
            }
            "cancel_reservation" => {
                let id = code_arg(args, "reservation_id")?;
                let reservation = self.reservations.get_mut(id.as_ref()).ok_or_else(|| no_reservation(&id))?;
                let flight = find_flight_mut(&mut self.flights_db, &reservation.flight_id)?;
                match reservation.status {
                    Status::Confirmed => {}
                    Status::Held => {
                        return Err(DomainError::new(
                            "NOT_CONFIRMED",
                            format!("reservation {id} is only held, not booked; release it with release_hold(flight_id={})", flight.id),
                        ));
                    }
                    Status::Cancelled => {
                        return Err(DomainError::new("ALREADY_CANCELLED", format!("reservation {id} is already cancelled")));
                    }
                }
                if Date::parse(&flight.date).is_some_and(|d| d < ctx.today) {
                    return Err(DomainError::new(
                        "DATE_IN_PAST",
                        format!(
                            "flight {} of reservation {id} left on {}, before today ({}); it cannot be cancelled",
                            flight.id, flight.date, ctx.today
                        ),
                    ));
                }
                reservation.status = Status::Cancelled;
                flight.seats_left = flight.seats_left.saturating_add(1);
                Ok(Reply::wrote(&Field("cancelled", ReservationView::of(&self.flights_db, &id, reservation))))
            }
            "get_traveler_profile" => {
                let name = text_arg(args, "name")?;
                let traveler = find_traveler(&self.travelers, name)?;
                let reservations = Seq(|| self.reservations.iter().filter(|(_, r)| r.passenger.as_deref() == Some(name)).map(|(id, _)| id));
                Ok(Reply::read(&Profile { name, payment_methods: &traveler.payment_methods, reservations }))
            }
            _ => Err(DomainError::new("UNKNOWN_TOOL", format!("travel has no tool '{tool}'"))),
        }
    }
}

// Results, written straight to canonical JSON: fields in key order.

/// A flight as tools show it.
#[derive(Serialize)]
struct FlightView<'a> {
    date: &'a str,
    dest: &'a str,
    id: &'a str,
    origin: &'a str,
    price: u32,
    seats_left: u32,
}

impl<'a> FlightView<'a> {
    fn of(flight: &'a Flight) -> Self {
        let Flight { id, origin, dest, date, price, seats_left } = flight;
        Self { date, dest, id, origin, price: *price, seats_left: *seats_left }
    }
}

/// A reservation as tools show it: its fields plus its flight's route and date.
#[derive(Serialize)]
struct ReservationView<'a> {
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
    fn of(flights: &'a [Flight], id: &'a str, reservation: &'a Reservation) -> Self {
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
struct Search<'a, F: Serialize> {
    date: &'a str,
    dest: &'a str,
    flights: F,
    origin: &'a str,
}

/// A held or released flight.
#[derive(Serialize)]
struct FlightHold<'a> {
    flight: FlightView<'a>,
    reservation_id: &'a str,
}

#[derive(Serialize)]
struct Held<'a> {
    held: FlightHold<'a>,
    next: &'a str,
}

#[derive(Serialize)]
struct Profile<'a, R: Serialize> {
    name: &'a str,
    payment_methods: &'a [String],
    reservations: R,
}

fn find_flight<'a>(flights: &'a [Flight], id: &str) -> Result<&'a Flight, DomainError> {
    flights.iter().find(|f| f.id == id).ok_or_else(|| unknown_flight(id))
}

fn find_flight_mut<'a>(flights: &'a mut [Flight], id: &str) -> Result<&'a mut Flight, DomainError> {
    flights.iter_mut().find(|f| f.id == id).ok_or_else(|| unknown_flight(id))
}

fn unknown_flight(id: &str) -> DomainError {
    DomainError::new("UNKNOWN_FLIGHT", format!("no flight {}; search_flights lists flight ids", quoted(id)))
}

fn active_hold<'a>(reservations: &'a BTreeMap<String, Reservation>, flight_id: &str) -> Option<&'a String> {
    reservations.iter().find(|(_, r)| r.status == Status::Held && r.flight_id == flight_id).map(|(id, _)| id)
}

fn find_traveler<'a>(travelers: &'a BTreeMap<String, Traveler>, name: &str) -> Result<&'a Traveler, DomainError> {
    travelers.get(name).ok_or_else(|| {
        DomainError::new("UNKNOWN_TRAVELER", format!("no traveler named {} on file; give the name exactly as on file", quoted(name)))
    })
}

fn no_reservation(id: &str) -> DomainError {
    DomainError::new("UNKNOWN_RESERVATION", format!("no reservation {}; get_itinerary lists the reservations", quoted(id)))
}

/// A text argument, trimmed; empty when blank; at most [`MAX_TEXT_CHARS`].
fn text_arg<'a>(args: &'a Args, field: &str) -> Result<&'a str, DomainError> {
    let value = args.str(field).trim();
    let chars = value.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(DomainError::new("TEXT_TOO_LONG", format!("{field} has {chars} characters; at most {MAX_TEXT_CHARS} are allowed")));
    }
    Ok(value)
}

/// A code argument (flight, airport, reservation id): trimmed and
/// upper-cased (borrowed when it already is, as agents usually send it).
fn code_arg<'a>(args: &'a Args, field: &str) -> Result<Cow<'a, str>, DomainError> {
    let code = text_arg(args, field)?;
    Ok(if code.bytes().any(|b| b.is_ascii_lowercase()) { Cow::Owned(code.to_ascii_uppercase()) } else { Cow::Borrowed(code) })
}

/// Quotes an argument in an error message, cut to a readable length.
fn quoted(text: &str) -> String {
    format!("'{}'", echo(text))
}

fn world(state: Value) -> World {
    World::Travel(serde_json::from_value(state).expect("travel task states are valid"))
}

fn flight(id: &str, origin: &str, dest: &str, date: &str, price: u32, seats_left: u32) -> Value {
    json!({"id": id, "origin": origin, "dest": dest, "date": date, "price": price, "seats_left": seats_left})
}

fn confirmed(flight_id: &str, passenger: &str, payment_info: &str, price: u32) -> Value {
    json!({"flight_id": flight_id, "passenger": passenger, "status": "confirmed", "payment_info": payment_info, "price": price})
}

/// Exactly one confirmed reservation of `flight_id` for `passenger`.
fn booked(flight_id: &str, passenger: &str) -> Check {
    Check::count(
        format!("{flight_id} confirmed for {passenger}"),
        "/reservations",
        json!({"flight_id": flight_id, "passenger": passenger, "status": "confirmed"}),
        1,
    )
}

/// The booking of `flight_id` for `passenger` charged `payment_info` at `price`.
fn paid(flight_id: &str, passenger: &str, payment_info: &str, price: u32) -> Check {
    Check::count(
        format!("{passenger}'s {flight_id} booking paid with {payment_info} at {price}"),
        "/reservations",
        confirmed(flight_id, passenger, payment_info, price),
        1,
    )
}

/// The flight at `index` of `flights_db` (named `flight_id`) has `seats_left` seats free.
fn seats(flight_id: &str, index: usize, seats_left: u32) -> Check {
    Check::equals(format!("{flight_id} seats_left is {seats_left}"), format!("/flights_db/{index}/seats_left"), json!(seats_left))
}

/// The verified travel tasks.
pub(crate) fn tasks() -> Vec<Task> {
    let today = Date::from_ymd(2026, 1, 2).expect("valid date");
    let alice = json!({"payment_methods": ["card_1111", "paypal_alice"]});
    let bob = json!({"payment_methods": ["card_4242"]});
    vec![
        Task {
            id: "travel/cheapest-flight/001".into(),
            domain: crate::Domain::Travel,
            level: 2,
            template: &phrasing::CHEAPEST_FLIGHT,
            slots: slots(&[("origin", "LON"), ("dest", "PAR"), ("date", "2026-01-05"), ("passenger", "Bob")]),
            today,
            // The paper's Appendix C.2, with the traveler the booking needs.
            initial: world(json!({
                "flights_db": [
                    flight("BA-200", "LON", "PAR", "2026-01-05", 500, 10),
                    flight("AA-500", "LON", "PAR", "2026-01-05", 300, 10),
                ],
                "reservations": {},
                "travelers": {"Bob": bob},
            })),
            reference: vec![
                Call::new("search_flights", json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"})),
                Call::new("get_traveler_profile", json!({"name": "Bob"})),
                Call::new("hold_flight", json!({"flight_id": "AA-500"})),
                Call::new("confirm_booking", json!({"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"})),
            ],
            checks: vec![booked("AA-500", "Bob"), paid("AA-500", "Bob", "card_4242", 300), seats("AA-500", 1, 9)],
            may_change: vec!["/reservations/+", "/flights_db/1/seats_left"],
        },
        Task {
            id: "travel/direct-booking/002".into(),
            domain: crate::Domain::Travel,
            level: 1,
            template: &phrasing::DIRECT_BOOKING,
            slots: slots(&[("flight_id", "LH-1122"), ("origin", "FRA"), ("dest", "MAD"), ("date", "2026-01-09"), ("passenger", "Dana")]),
            today,
            initial: world(json!({
                "flights_db": [
                    flight("LH-1120", "FRA", "MAD", "2026-01-09", 260, 6),
                    flight("IB-3501", "FRA", "MAD", "2026-01-09", 180, 12),
                    flight("LH-1122", "FRA", "MAD", "2026-01-09", 290, 3),
                    flight("LH-1124", "FRA", "MAD", "2026-01-10", 210, 9),
                    flight("IB-3510", "MAD", "FRA", "2026-01-14", 175, 20),
                    flight("LH-400", "FRA", "NYC", "2026-01-09", 640, 2),
                ],
                "reservations": {
                    "R-0001": confirmed("LH-1120", "Alice", "paypal_alice", 260),
                    "R-0002": confirmed("IB-3510", "Dana", "amex_3782", 175),
                },
                "travelers": {
                    "Alice": alice,
                    "Dana": {"payment_methods": ["amex_3782"]},
                    "Frank": {"payment_methods": ["card_9001"]},
                },
            })),
            reference: vec![
                Call::new("get_traveler_profile", json!({"name": "Dana"})),
                Call::new("hold_flight", json!({"flight_id": "LH-1122"})),
                Call::new("confirm_booking", json!({"flight_id": "LH-1122", "passenger": "Dana", "payment_info": "amex_3782"})),
            ],
            checks: vec![booked("LH-1122", "Dana"), paid("LH-1122", "Dana", "amex_3782", 290), seats("LH-1122", 2, 2)],
            may_change: vec!["/reservations/+", "/flights_db/2/seats_left"],
        },
        Task {
            id: "travel/cheapest-flight/003".into(),
            domain: crate::Domain::Travel,
            level: 2,
            template: &phrasing::CHEAPEST_FLIGHT_003,
            slots: slots(&[("origin", "NYC"), ("dest", "LAX"), ("date", "2026-01-12"), ("passenger", "Carol")]),
            today,
            // The cheapest flight that day (DL-410) is full; the next day and
            // another destination have cheaper flights still.
            initial: world(json!({
                "flights_db": [
                    flight("AA-100", "NYC", "LAX", "2026-01-12", 310, 20),
                    flight("DL-410", "NYC", "LAX", "2026-01-12", 180, 0),
                    flight("UA-215", "NYC", "LAX", "2026-01-12", 240, 3),
                    flight("B6-623", "NYC", "LAX", "2026-01-13", 205, 8),
                    flight("B6-101", "NYC", "SFO", "2026-01-12", 150, 14),
                    flight("DL-411", "LAX", "NYC", "2026-01-16", 195, 7),
                ],
                "reservations": {
                    "R-0001": confirmed("DL-410", "Bob", "card_4242", 180),
                    "R-0002": confirmed("AA-100", "Alice", "card_1111", 310),
                    "R-0003": confirmed("DL-411", "Carol", "card_5555", 195),
                },
                "travelers": {"Alice": alice, "Bob": bob, "Carol": {"payment_methods": ["card_5555"]}},
            })),
            reference: vec![
                Call::new("search_flights", json!({"origin": "NYC", "dest": "LAX", "date": "2026-01-12"})),
                Call::new("get_traveler_profile", json!({"name": "Carol"})),
                Call::new("hold_flight", json!({"flight_id": "UA-215"})),
                Call::new("confirm_booking", json!({"flight_id": "UA-215", "passenger": "Carol", "payment_info": "card_5555"})),
            ],
            checks: vec![booked("UA-215", "Carol"), paid("UA-215", "Carol", "card_5555", 240), seats("UA-215", 2, 2)],
            may_change: vec!["/reservations/+", "/flights_db/2/seats_left"],
        },
        Task {
            id: "travel/cancel-trip/004".into(),
            domain: crate::Domain::Travel,
            level: 1,
            template: &phrasing::CANCEL_TRIP,
            slots: slots(&[
                ("passenger", "Evan"),
                ("origin", "LON"),
                ("dest", "ROM"),
                ("date", "2026-01-15"),
                ("return_date", "2026-01-19"),
            ]),
            today,
            // Evan's return is AZ-208 (an earlier BA-549 booking is already
            // cancelled); his past trip and his Dublin flight stay, and so
            // does Alice's seat on his outbound flight.
            initial: world(json!({
                "flights_db": [
                    flight("BA-548", "LON", "ROM", "2026-01-15", 220, 4),
                    flight("AZ-203", "LON", "ROM", "2026-01-15", 175, 0),
                    flight("BA-549", "ROM", "LON", "2026-01-19", 210, 11),
                    flight("AZ-208", "ROM", "LON", "2026-01-19", 160, 6),
                    flight("EI-155", "LON", "DUB", "2026-01-25", 95, 30),
                    flight("BA-546", "LON", "ROM", "2025-12-20", 190, 0),
                ],
                "reservations": {
                    "R-0001": confirmed("BA-546", "Evan", "card_7777", 190),
                    "R-0002": confirmed("BA-548", "Evan", "card_7777", 220),
                    "R-0003": confirmed("AZ-208", "Evan", "paypal_evan", 160),
                    "R-0004": confirmed("EI-155", "Evan", "card_7777", 95),
                    "R-0005": confirmed("BA-548", "Alice", "card_1111", 220),
                    "R-0006": {
                        "flight_id": "BA-549", "passenger": "Evan", "status": "cancelled", "payment_info": "card_7777", "price": 210
                    },
                },
                "travelers": {"Alice": alice, "Evan": {"payment_methods": ["card_7777", "paypal_evan"]}},
            })),
            reference: vec![
                Call::new("get_itinerary", json!({})),
                Call::new("cancel_reservation", json!({"reservation_id": "R-0002"})),
                Call::new("cancel_reservation", json!({"reservation_id": "R-0003"})),
            ],
            checks: vec![
                Check::equals("Evan's outbound BA-548 (R-0002) cancelled", "/reservations/R-0002/status", json!("cancelled")),
                Check::equals("Evan's return AZ-208 (R-0003) cancelled", "/reservations/R-0003/status", json!("cancelled")),
                seats("BA-548", 0, 5),
                seats("AZ-208", 3, 7),
                Check::equals(
                    "Alice's BA-548 booking (R-0005) untouched",
                    "/reservations/R-0005",
                    confirmed("BA-548", "Alice", "card_1111", 220),
                ),
            ],
            may_change: vec![
                "/reservations/R-0002/status",
                "/reservations/R-0003/status",
                "/flights_db/0/seats_left",
                "/flights_db/3/seats_left",
            ],
        },
        Task {
            id: "travel/change-hold/005".into(),
            domain: crate::Domain::Travel,
            level: 2,
            template: &phrasing::CHANGE_HOLD,
            slots: slots(&[("held_flight", "KL-1002"), ("passenger", "Frank"), ("origin", "AMS"), ("dest", "LON"), ("date", "2026-01-07")]),
            today,
            // R-0004 is the mistaken hold; Alice flies on the held flight and
            // Bob on the one Frank needs, and both bookings stay.
            initial: world(json!({
                "flights_db": [
                    flight("KL-1002", "AMS", "LON", "2026-01-06", 140, 7),
                    flight("KL-1008", "AMS", "LON", "2026-01-07", 190, 5),
                    flight("BA-431", "AMS", "LON", "2026-01-07", 150, 2),
                    flight("EZ-8872", "AMS", "LON", "2026-01-07", 165, 9),
                    flight("KL-1009", "AMS", "LON", "2026-01-08", 120, 10),
                    flight("BA-432", "LON", "AMS", "2026-01-11", 155, 4),
                ],
                "reservations": {
                    "R-0001": confirmed("KL-1002", "Alice", "card_1111", 140),
                    "R-0002": confirmed("BA-432", "Frank", "card_9001", 155),
                    "R-0003": confirmed("BA-431", "Bob", "card_4242", 150),
                    "R-0004": {"flight_id": "KL-1002", "passenger": null, "status": "held", "payment_info": null, "price": null},
                },
                "travelers": {"Alice": alice, "Bob": bob, "Frank": {"payment_methods": ["card_9001"]}},
            })),
            reference: vec![
                Call::new("get_itinerary", json!({})),
                Call::new("release_hold", json!({"flight_id": "KL-1002"})),
                Call::new("search_flights", json!({"origin": "AMS", "dest": "LON", "date": "2026-01-07"})),
                Call::new("get_traveler_profile", json!({"name": "Frank"})),
                Call::new("hold_flight", json!({"flight_id": "BA-431"})),
                Call::new("confirm_booking", json!({"flight_id": "BA-431", "passenger": "Frank", "payment_info": "card_9001"})),
            ],
            checks: vec![
                Check::equals("the mistaken hold on KL-1002 (R-0004) released", "/reservations/R-0004", Value::Null),
                seats("KL-1002", 0, 8),
                booked("BA-431", "Frank"),
                paid("BA-431", "Frank", "card_9001", 150),
                seats("BA-431", 2, 1),
                Check::equals(
                    "Alice's KL-1002 booking (R-0001) untouched",
                    "/reservations/R-0001",
                    confirmed("KL-1002", "Alice", "card_1111", 140),
                ),
                Check::equals(
                    "Bob's BA-431 booking (R-0003) untouched",
                    "/reservations/R-0003",
                    confirmed("BA-431", "Bob", "card_4242", 150),
                ),
            ],
            may_change: vec!["/reservations/R-0004", "/reservations/+", "/flights_db/0/seats_left", "/flights_db/2/seats_left"],
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{play, random_calls};
    use crate::oracle::COLLATERAL_CHECK;
    use crate::world::testing::Answer;
    use pretty_assertions::assert_eq;

    fn ctx() -> Context {
        Context { today: Date::from_ymd(2026, 1, 2).unwrap() }
    }

    fn call(state: &mut State, tool: &str, args: Value) -> Answer {
        crate::world::testing::call(state, ctx().today, tool, args)
    }

    fn code(result: Answer) -> &'static str {
        result.unwrap_err().code
    }

    fn state(value: Value) -> State {
        serde_json::from_value(value).unwrap()
    }

    /// The initial state of a suite task.
    fn initial(id: &str) -> State {
        match &crate::task(id).unwrap().initial {
            World::Travel(s) => s.clone(),
            other => panic!("{id} is not a travel task: {other:?}"),
        }
    }

    /// A small world: one open flight, one full, one flown; Bob and Alice on file.
    fn small() -> State {
        state(json!({
            "flights_db": [
                flight("AA-500", "LON", "PAR", "2026-01-05", 300, 2),
                flight("AF-900", "LON", "PAR", "2026-01-05", 250, 0),
                flight("BA-100", "LON", "PAR", "2025-12-30", 200, 5),
            ],
            "reservations": {"R-0001": confirmed("BA-100", "Alice", "card_1111", 200)},
            "travelers": {"Bob": {"payment_methods": ["card_4242"]}, "Alice": {"payment_methods": ["card_1111", "paypal_alice"]}},
        }))
    }

    fn hold(s: &mut State, flight_id: &str) -> Answer {
        call(s, "hold_flight", json!({"flight_id": flight_id}))
    }

    fn confirm(s: &mut State, flight_id: &str, passenger: &str, payment_info: &str) -> Answer {
        call(s, "confirm_booking", json!({"flight_id": flight_id, "passenger": passenger, "payment_info": payment_info}))
    }

    fn seats_of(s: &State, flight_id: &str) -> u32 {
        s.flights_db.iter().find(|f| f.id == flight_id).unwrap().seats_left
    }

    #[test]
    fn appendix_c2_booking_gives_the_exact_final_state() {
        let mut s = initial("travel/cheapest-flight/001");
        let found = call(&mut s, "search_flights", json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"})).unwrap();
        let fares: Vec<(&str, u64)> =
            found["flights"].as_array().unwrap().iter().map(|f| (f["id"].as_str().unwrap(), f["price"].as_u64().unwrap())).collect();
        assert_eq!(fares, [("BA-200", 500), ("AA-500", 300)]);
        let profile = call(&mut s, "get_traveler_profile", json!({"name": "Bob"})).unwrap();
        assert_eq!(profile, json!({"name": "Bob", "payment_methods": ["card_4242"], "reservations": []}));
        let held = hold(&mut s, "AA-500").unwrap();
        assert_eq!(held["held"]["reservation_id"], json!("R-0001"));
        assert_eq!(held["held"]["flight"]["seats_left"], json!(9));
        let booked = confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap();
        assert_eq!(booked["confirmed"]["status"], json!("confirmed"));
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({
                "flights_db": [
                    {"id": "BA-200", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 500, "seats_left": 10},
                    {"id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 9}
                ],
                "reservations": {
                    "R-0001": {"flight_id": "AA-500", "passenger": "Bob", "status": "confirmed", "payment_info": "card_4242", "price": 300}
                },
                "travelers": {"Bob": {"payment_methods": ["card_4242"]}}
            })
        );
    }

    #[test]
    fn the_papers_initial_state_reads_as_is() {
        let paper = json!({"flights_db": [
            {"id": "BA-200", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 500, "seats_left": 10},
            {"id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 10}
        ]});
        let s = state(paper.clone());
        let mut expected = paper;
        expected["reservations"] = json!({});
        expected["travelers"] = json!({});
        assert_eq!(serde_json::to_value(&s).unwrap(), expected);
        assert_eq!(serde_json::to_value(initial("travel/cheapest-flight/001")).unwrap()["flights_db"], expected["flights_db"]);
    }

    #[test]
    fn search_validates_and_lists_matches_in_database_order() {
        let mut s = small();
        let search = |s: &mut State, origin: &str, dest: &str, date: &str| {
            call(s, "search_flights", json!({"origin": origin, "dest": dest, "date": date}))
        };
        assert_eq!(code(search(&mut s, "LON", "PAR", "05/01/2026")), "INVALID_DATE");
        assert_eq!(code(search(&mut s, "LON", "PAR", "2026-02-30")), "INVALID_DATE");
        assert_eq!(code(search(&mut s, " ", "PAR", "2026-01-05")), "INVALID_AIRPORT");
        assert_eq!(code(search(&mut s, "LON", "", "2026-01-05")), "INVALID_AIRPORT");
        assert_eq!(code(search(&mut s, &"L".repeat(201), "PAR", "2026-01-05")), "TEXT_TOO_LONG");
        let found = search(&mut s, " lon", "par ", "2026-01-05").unwrap();
        assert_eq!(
            found,
            json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05", "flights": [
                {"id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 2},
                {"id": "AF-900", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 250, "seats_left": 0}
            ]})
        );
        assert_eq!(search(&mut s, "PAR", "LON", "2026-01-05").unwrap()["flights"], json!([]));
        assert_eq!(s, small(), "searching changes nothing");
    }

    #[test]
    fn hold_rules() {
        let mut s = small();
        assert_eq!(code(hold(&mut s, "ZZ-1")), "UNKNOWN_FLIGHT");
        assert_eq!(code(hold(&mut s, "")), "UNKNOWN_FLIGHT");
        assert_eq!(code(hold(&mut s, "AF-900")), "FLIGHT_FULL");
        assert_eq!(code(hold(&mut s, "BA-100")), "DATE_IN_PAST");
        assert_eq!(s, small(), "rejected holds change nothing");
        hold(&mut s, " aa-500 ").unwrap();
        assert_eq!(code(hold(&mut s, "AA-500")), "ALREADY_HELD");
        assert_eq!(seats_of(&s, "AA-500"), 1);
    }

    #[test]
    fn confirm_rules() {
        let mut s = small();
        assert_eq!(code(confirm(&mut s, "ZZ-1", "Bob", "card_4242")), "UNKNOWN_FLIGHT");
        let not_held = confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap_err();
        assert_eq!(not_held, DomainError::new("NOT_HELD", "flight AA-500 has no active hold; hold it first with hold_flight"));
        hold(&mut s, "AA-500").unwrap();
        let held = s.clone();
        assert_eq!(code(confirm(&mut s, "AA-500", "Zed", "card_4242")), "UNKNOWN_TRAVELER");
        assert_eq!(code(confirm(&mut s, "AA-500", "bob", "card_4242")), "UNKNOWN_TRAVELER");
        assert_eq!(code(confirm(&mut s, "AA-500", &"B".repeat(201), "card_4242")), "TEXT_TOO_LONG");
        assert_eq!(code(confirm(&mut s, "AA-500", "Bob", "")), "PAYMENT_REQUIRED");
        assert_eq!(code(confirm(&mut s, "AA-500", "Bob", "  ")), "PAYMENT_REQUIRED");
        let wrong = confirm(&mut s, "AA-500", "Bob", "card_1111").unwrap_err();
        assert_eq!(wrong.code, "UNKNOWN_PAYMENT_METHOD");
        assert!(wrong.message.contains("get_traveler_profile"), "{}", wrong.message);
        assert_eq!(s, held, "rejected confirmations change nothing");
        let booked = confirm(&mut s, "AA-500", "Bob", " card_4242 ").unwrap();
        assert_eq!(
            booked,
            json!({"confirmed": {
                "reservation_id": "R-0002", "flight_id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05",
                "passenger": "Bob", "status": "confirmed", "payment_info": "card_4242", "price": 300
            }})
        );
        assert_eq!(code(confirm(&mut s, "AA-500", "Bob", "card_4242")), "NOT_HELD", "a confirmed booking is no longer a hold");
    }

    #[test]
    fn release_rules() {
        let mut s = small();
        assert_eq!(code(call(&mut s, "release_hold", json!({"flight_id": "ZZ-1"}))), "UNKNOWN_FLIGHT");
        assert_eq!(code(call(&mut s, "release_hold", json!({"flight_id": "AA-500"}))), "NOT_HELD");
        hold(&mut s, "AA-500").unwrap();
        let released = call(&mut s, "release_hold", json!({"flight_id": "AA-500"})).unwrap();
        assert_eq!(released["released"]["reservation_id"], json!("R-0002"));
        assert_eq!(serde_json::to_value(&s).unwrap(), serde_json::to_value(small()).unwrap(), "a released hold leaves no trace");
        hold(&mut s, "AA-500").unwrap();
        confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap();
        assert_eq!(code(call(&mut s, "release_hold", json!({"flight_id": "AA-500"}))), "NOT_HELD", "a booking is not a hold");
    }

    #[test]
    fn cancel_rules() {
        let mut s = small();
        let cancel = |s: &mut State, id: &str| call(s, "cancel_reservation", json!({"reservation_id": id}));
        assert_eq!(code(cancel(&mut s, "R-0999")), "UNKNOWN_RESERVATION");
        assert_eq!(code(cancel(&mut s, "R-0001")), "DATE_IN_PAST");
        hold(&mut s, "AA-500").unwrap();
        let held = cancel(&mut s, "R-0002").unwrap_err();
        assert_eq!(held.code, "NOT_CONFIRMED");
        assert!(held.message.contains("release_hold"), "{}", held.message);
        confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap();
        let cancelled = cancel(&mut s, "r-0002").unwrap();
        assert_eq!(cancelled["cancelled"]["status"], json!("cancelled"));
        assert_eq!(
            s.reservations["R-0002"],
            Reservation {
                flight_id: "AA-500".into(),
                passenger: Some("Bob".into()),
                status: Status::Cancelled,
                payment_info: Some("card_4242".into()),
                price: Some(300),
            }
        );
        assert_eq!(code(cancel(&mut s, "R-0002")), "ALREADY_CANCELLED");
    }

    #[test]
    fn traveler_profile_and_itinerary() {
        let mut s = small();
        assert_eq!(code(call(&mut s, "get_traveler_profile", json!({"name": "Zed"}))), "UNKNOWN_TRAVELER");
        assert_eq!(code(call(&mut s, "get_traveler_profile", json!({"name": ""}))), "UNKNOWN_TRAVELER");
        let alice = call(&mut s, "get_traveler_profile", json!({"name": "Alice"})).unwrap();
        assert_eq!(alice, json!({"name": "Alice", "payment_methods": ["card_1111", "paypal_alice"], "reservations": ["R-0001"]}));
        hold(&mut s, "AA-500").unwrap();
        let itinerary = call(&mut s, "get_itinerary", json!({})).unwrap();
        assert_eq!(
            itinerary,
            json!({"reservations": [
                {"reservation_id": "R-0001", "flight_id": "BA-100", "origin": "LON", "dest": "PAR", "date": "2025-12-30",
                 "passenger": "Alice", "status": "confirmed", "payment_info": "card_1111", "price": 200},
                {"reservation_id": "R-0002", "flight_id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05",
                 "passenger": null, "status": "held", "payment_info": null, "price": null}
            ]})
        );
        assert_eq!(s.call("no_such_tool", &Args::from_map(Default::default()), &ctx()).unwrap_err().code, "UNKNOWN_TOOL");
    }

    #[test]
    fn seats_are_accounted_through_hold_release_confirm_and_cancel() {
        let mut s = small();
        assert_eq!(seats_of(&s, "AA-500"), 2);
        hold(&mut s, "AA-500").unwrap();
        assert_eq!(seats_of(&s, "AA-500"), 1, "a hold takes a seat");
        call(&mut s, "release_hold", json!({"flight_id": "AA-500"})).unwrap();
        assert_eq!(seats_of(&s, "AA-500"), 2, "a release gives it back");
        hold(&mut s, "AA-500").unwrap();
        confirm(&mut s, "AA-500", "Bob", "card_4242").unwrap();
        assert_eq!(seats_of(&s, "AA-500"), 1, "confirming keeps the held seat");
        hold(&mut s, "AA-500").unwrap();
        confirm(&mut s, "AA-500", "Alice", "paypal_alice").unwrap();
        assert_eq!(seats_of(&s, "AA-500"), 0);
        assert_eq!(code(hold(&mut s, "AA-500")), "FLIGHT_FULL");
        call(&mut s, "cancel_reservation", json!({"reservation_id": "R-0003"})).unwrap();
        assert_eq!(seats_of(&s, "AA-500"), 1, "a cancellation gives the seat back");
        let held = hold(&mut s, "AA-500").unwrap();
        assert_eq!(held["held"]["reservation_id"], json!("R-0005"), "ids are never reused");
        let ids: Vec<&str> = s.reservations.keys().map(String::as_str).collect();
        assert_eq!(ids, ["R-0001", "R-0003", "R-0004", "R-0005"]);
    }

    #[test]
    fn numbering_continues_from_a_task_state() {
        let mut s = initial("travel/direct-booking/002");
        assert_eq!(hold(&mut s, "LH-1122").unwrap()["held"]["reservation_id"], json!("R-0003"));
        let mut s = initial("travel/change-hold/005");
        call(&mut s, "release_hold", json!({"flight_id": "KL-1002"})).unwrap();
        assert_eq!(hold(&mut s, "BA-431").unwrap()["held"]["reservation_id"], json!("R-0005"));
        let mut s = State::default();
        s.flights_db.push(Flight {
            id: "X-1".into(),
            origin: "A".into(),
            dest: "B".into(),
            date: "2026-01-05".into(),
            price: 1,
            seats_left: 1,
        });
        assert_eq!(hold(&mut s, "X-1").unwrap()["held"]["reservation_id"], json!("R-0001"));
        assert!(serde_json::to_value(&s).unwrap().get("last_reservation").is_none(), "the counter is not judged state");
    }

    #[test]
    fn malformed_states_are_refused() {
        let base = serde_json::to_value(small()).unwrap();
        let refused = |edit: &dyn Fn(&mut Value)| {
            let mut value = base.clone();
            edit(&mut value);
            serde_json::from_value::<State>(value).is_err()
        };
        assert!(!refused(&|_| {}));
        assert!(refused(&|v| v["extra"] = json!(1)));
        assert!(refused(&|v| v["flights_db"][0]["gate"] = json!("B7")));
        assert!(refused(&|v| v["flights_db"][1]["id"] = json!("AA-500")));
        assert!(refused(&|v| v["flights_db"][0]["date"] = json!("2026-1-5")));
        assert!(refused(&|v| v["flights_db"][0]["seats_left"] = json!(-1)));
        assert!(refused(&|v| v["reservations"]["X-1"] = confirmed("AA-500", "Bob", "card_4242", 300)));
        assert!(refused(&|v| v["reservations"]["R-0002"] = confirmed("ZZ-1", "Bob", "card_4242", 300)));
        assert!(refused(&|v| v["reservations"]["R-0002"]["status"] = json!("pending")));
        let hold = json!({"flight_id": "AA-500", "passenger": null, "status": "held", "payment_info": null, "price": null});
        assert!(!refused(&|v| v["reservations"]["R-0002"] = hold.clone()));
        assert!(refused(&|v| {
            v["reservations"]["R-0002"] = hold.clone();
            v["reservations"]["R-0003"] = hold.clone();
        }));
    }

    #[test]
    fn odd_arguments_get_short_errors_and_never_panic() {
        let mut s = small();
        let long = "é".repeat(150);
        let unknown = hold(&mut s, &long).unwrap_err();
        assert_eq!(unknown.code, "UNKNOWN_FLIGHT");
        assert!(unknown.message.chars().count() < 120, "{}", unknown.message);
        assert_eq!(code(hold(&mut s, &"x".repeat(MAX_TEXT_CHARS + 1))), "TEXT_TOO_LONG");
        for id in ["", "\u{0}", "R-", "R-00001", "R-0000", "../R-0001", "R-0001/status"] {
            assert_eq!(code(call(&mut s, "cancel_reservation", json!({"reservation_id": id}))), "UNKNOWN_RESERVATION", "{id:?}");
        }
        for task in tasks() {
            let task = crate::task(&task.id).unwrap();
            for seed in 0..100 {
                play(task, seed, 0, &random_calls(task, seed, 40));
            }
        }
    }

    /// The checks the verdict of an episode of `id` playing `calls` fails.
    fn failures(id: &str, calls: &[Call]) -> Vec<String> {
        let episode = play(crate::task(id).unwrap(), 0, 0, calls);
        episode.verdict().unwrap().failures().map(|c| c.name.clone()).collect()
    }

    fn search(origin: &str, dest: &str, date: &str) -> Call {
        Call::new("search_flights", json!({"origin": origin, "dest": dest, "date": date}))
    }

    fn hold_call(flight_id: &str) -> Call {
        Call::new("hold_flight", json!({"flight_id": flight_id}))
    }

    fn confirm_call(flight_id: &str, passenger: &str, payment_info: &str) -> Call {
        Call::new("confirm_booking", json!({"flight_id": flight_id, "passenger": passenger, "payment_info": payment_info}))
    }

    fn release_call(flight_id: &str) -> Call {
        Call::new("release_hold", json!({"flight_id": flight_id}))
    }

    fn cancel_call(reservation_id: &str) -> Call {
        Call::new("cancel_reservation", json!({"reservation_id": reservation_id}))
    }

    #[test]
    fn cheapest_flight_001_fails_the_dearer_flight_and_a_booking_without_payment() {
        let id = "travel/cheapest-flight/001";
        assert_eq!(
            failures(id, &[search("LON", "PAR", "2026-01-05"), hold_call("BA-200"), confirm_call("BA-200", "Bob", "card_4242")]),
            ["AA-500 confirmed for Bob", "Bob's AA-500 booking paid with card_4242 at 300", "AA-500 seats_left is 9", COLLATERAL_CHECK]
        );
        // The paper's failure mode: confirming without payment information.
        assert_eq!(
            failures(id, &[search("LON", "PAR", "2026-01-05"), hold_call("AA-500"), confirm_call("AA-500", "Bob", "")]),
            ["AA-500 confirmed for Bob", "Bob's AA-500 booking paid with card_4242 at 300"]
        );
        // Guessing a payment method instead of looking it up.
        assert_eq!(
            failures(id, &[hold_call("AA-500"), confirm_call("AA-500", "Bob", "visa")]),
            ["AA-500 confirmed for Bob", "Bob's AA-500 booking paid with card_4242 at 300"]
        );
        // Holding both flights to compare leaves a stray seat taken.
        assert_eq!(
            failures(id, &[hold_call("BA-200"), hold_call("AA-500"), confirm_call("AA-500", "Bob", "card_4242")]),
            [COLLATERAL_CHECK]
        );
        assert_eq!(
            failures(id, &[hold_call("BA-200"), release_call("BA-200"), hold_call("AA-500"), confirm_call("AA-500", "Bob", "card_4242")]),
            Vec::<String>::new(),
            "an agent that corrects itself passes"
        );
    }

    #[test]
    fn direct_booking_002_fails_the_cheaper_flight_and_a_guessed_card() {
        let id = "travel/direct-booking/002";
        assert_eq!(
            failures(id, &[hold_call("IB-3501"), confirm_call("IB-3501", "Dana", "amex_3782")]),
            [
                "LH-1122 confirmed for Dana",
                "Dana's LH-1122 booking paid with amex_3782 at 290",
                "LH-1122 seats_left is 2",
                COLLATERAL_CHECK
            ]
        );
        assert_eq!(
            failures(id, &[hold_call("LH-1122"), confirm_call("LH-1122", "Dana", "card_4242")]),
            ["LH-1122 confirmed for Dana", "Dana's LH-1122 booking paid with amex_3782 at 290"]
        );
    }

    #[test]
    fn cheapest_flight_003_needs_the_cheapest_flight_with_seats_that_day() {
        let id = "travel/cheapest-flight/003";
        let tried_full = [search("NYC", "LAX", "2026-01-12"), hold_call("DL-410")];
        // Giving up when the cheapest flight is full.
        assert_eq!(
            failures(id, &tried_full),
            ["UA-215 confirmed for Carol", "Carol's UA-215 booking paid with card_5555 at 240", "UA-215 seats_left is 2"]
        );
        // A cheaper flight, but on the next day.
        assert_eq!(
            failures(id, &[hold_call("B6-623"), confirm_call("B6-623", "Carol", "card_5555")]),
            ["UA-215 confirmed for Carol", "Carol's UA-215 booking paid with card_5555 at 240", "UA-215 seats_left is 2", COLLATERAL_CHECK]
        );
        let recovered = [tried_full.as_slice(), &[hold_call("UA-215"), confirm_call("UA-215", "Carol", "card_5555")]].concat();
        assert_eq!(failures(id, &recovered), Vec::<String>::new(), "moving on to the next cheapest passes");
    }

    #[test]
    fn cancel_trip_004_needs_both_flights_and_nothing_else() {
        let id = "travel/cancel-trip/004";
        assert_eq!(failures(id, &[cancel_call("R-0002")]), ["Evan's return AZ-208 (R-0003) cancelled", "AZ-208 seats_left is 7"]);
        // The BA-549 return booking is already cancelled: the live one is AZ-208.
        assert_eq!(
            failures(id, &[cancel_call("R-0002"), cancel_call("R-0006")]),
            ["Evan's return AZ-208 (R-0003) cancelled", "AZ-208 seats_left is 7"]
        );
        // Cancelling all of Evan's bookings takes his Dublin flight too.
        let all = ["R-0001", "R-0002", "R-0003", "R-0004"].map(cancel_call);
        assert_eq!(failures(id, &all), [COLLATERAL_CHECK]);
        // Cancelling Alice's seat on the same flight instead of Evan's.
        assert_eq!(
            failures(id, &[cancel_call("R-0005"), cancel_call("R-0003")]),
            ["Evan's outbound BA-548 (R-0002) cancelled", "Alice's BA-548 booking (R-0005) untouched", COLLATERAL_CHECK]
        );
    }

    #[test]
    fn change_hold_005_needs_the_release_and_the_new_booking() {
        let id = "travel/change-hold/005";
        let book = [hold_call("BA-431"), confirm_call("BA-431", "Frank", "card_9001")];
        assert_eq!(
            failures(id, &book),
            ["the mistaken hold on KL-1002 (R-0004) released", "KL-1002 seats_left is 8"],
            "booking without releasing the hold"
        );
        // Confirming the mistaken hold instead of releasing it.
        assert_eq!(
            failures(id, &[confirm_call("KL-1002", "Frank", "card_9001")]),
            [
                "the mistaken hold on KL-1002 (R-0004) released",
                "KL-1002 seats_left is 8",
                "BA-431 confirmed for Frank",
                "Frank's BA-431 booking paid with card_9001 at 150",
                "BA-431 seats_left is 1",
            ]
        );
        // The next day's flight is cheaper, but not the day asked for.
        assert_eq!(
            failures(id, &[release_call("KL-1002"), hold_call("KL-1009"), confirm_call("KL-1009", "Frank", "card_9001")]),
            ["BA-431 confirmed for Frank", "Frank's BA-431 booking paid with card_9001 at 150", "BA-431 seats_left is 1", COLLATERAL_CHECK]
        );
        let detour = [release_call("KL-1002"), hold_call("KL-1008"), release_call("KL-1008"), book[0].clone(), book[1].clone()];
        assert_eq!(failures(id, &detour), Vec::<String>::new(), "a hold taken and released on the way leaves no trace");
    }

    #[test]
    fn seat_checks_and_seat_patterns_name_their_flights() {
        for task in tasks() {
            let s0 = task.initial.to_json();
            let flight_at = |path: &str| -> Option<String> {
                let index = path.strip_prefix("/flights_db/")?.strip_suffix("/seats_left")?;
                Some(s0["flights_db"][index.parse::<usize>().ok()?]["id"].as_str()?.to_owned())
            };
            let mut named = Vec::new();
            for check in &task.checks {
                if let Check::Equals { name, path, .. } = check
                    && let Some(flight_id) = flight_at(path)
                {
                    assert!(name.starts_with(&format!("{flight_id} ")), "{}: check '{name}' reads {path}", task.id);
                    named.push(flight_id);
                }
            }
            for pattern in &task.may_change {
                if pattern.starts_with("/flights_db/") {
                    let flight_id = flight_at(pattern).unwrap_or_else(|| panic!("{}: {pattern} is not a seat count", task.id));
                    assert!(named.contains(&flight_id), "{}: {pattern} ({flight_id}) may change but no check reads it", task.id);
                }
            }
        }
    }

    #[test]
    fn random_agents_fail_every_task_over_many_seeds() {
        for task in tasks() {
            let task = crate::task(&task.id).unwrap();
            let passes: Vec<u64> = (0..300)
                .filter(|&seed| play(task, seed, 0, &random_calls(task, seed, crate::agent::RANDOM_AGENT_CALLS)).verdict().unwrap().passed)
                .collect();
            assert_eq!(passes, Vec::<u64>::new(), "{}", task.id);
        }
    }

    #[test]
    fn tasks_cover_both_levels_with_unique_ids() {
        let tasks = tasks();
        let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "travel/cheapest-flight/001",
                "travel/direct-booking/002",
                "travel/cheapest-flight/003",
                "travel/cancel-trip/004",
                "travel/change-hold/005"
            ]
        );
        assert_eq!(tasks.iter().map(|t| t.level).collect::<Vec<_>>(), [2, 1, 2, 1, 2]);
        assert_eq!(tasks[0].description(), "Book the cheapest flight from LON to PAR on 2026-01-05 for Bob.");
        for task in &tasks {
            assert_eq!(task.today.to_string(), "2026-01-02");
            let text = task.description();
            assert!(!text.contains("card") && !text.contains("paypal") && !text.contains("amex"), "{}: {text}", task.id);
        }
    }
}
