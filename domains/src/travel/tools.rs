//! The travel tools: one handler per tool, each a pure transition of the
//! flights, reservations and travelers.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::views::{FlightHold, FlightView, Held, Profile, ReservationView, Search};
use super::{Flight, MAX_RESERVATION_NUMBER, Reservation, State, Status, Traveler};
use toolenv_core::{
    Args, Context, DomainError, Param, ParamType, Reply, Shared, Tool, ToolSpec,
    date::Date,
    echo,
    json::{Field, Seq},
};

/// Most characters a text argument (a name, a payment method) may have.
pub(super) const MAX_TEXT_CHARS: usize = 200;

const FLIGHT_ID: Param = Param::required("flight_id", ParamType::String, "Flight id, e.g. AA-500.");

/// The tools, in the order agents see them.
pub(super) const TOOLS: &[Tool<State>] = &[
    Tool::read(
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
        search_flights,
    ),
    Tool::new(
        ToolSpec {
            name: "hold_flight",
            description: "Places a temporary hold on a flight, taking one seat; confirm it with confirm_booking.",
            mutates_state: true,
            params: &[FLIGHT_ID],
        },
        hold_flight,
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
        confirm_booking,
    ),
    Tool::read(
        ToolSpec { name: "get_itinerary", description: "Returns current reservations.", mutates_state: false, params: &[] },
        get_itinerary,
    ),
    Tool::new(
        ToolSpec {
            name: "release_hold",
            description: "Releases the active hold on a flight, giving its seat back.",
            mutates_state: true,
            params: &[FLIGHT_ID],
        },
        release_hold,
    ),
    Tool::new(
        ToolSpec {
            name: "cancel_reservation",
            description: "Cancels a confirmed reservation, giving its seat back.",
            mutates_state: true,
            params: &[Param::required("reservation_id", ParamType::String, "Reservation id, e.g. R-0001.")],
        },
        cancel_reservation,
    ),
    Tool::read(
        ToolSpec {
            name: "get_traveler_profile",
            description: "Returns a traveler's payment methods on file and reservation ids.",
            mutates_state: false,
            params: &[Param::required("name", ParamType::String, "The traveler's name, e.g. Bob.")],
        },
        get_traveler_profile,
    ),
];

fn search_flights(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let origin = code_arg(args, "origin")?;
    let dest = code_arg(args, "dest")?;
    for (field, value) in [("origin", &origin), ("dest", &dest)] {
        if value.is_empty() {
            return Err(DomainError::new("INVALID_AIRPORT", format!("{field} is blank; give an airport or city code such as LON")));
        }
    }
    let date_text = args.str("date").trim();
    let date = Date::parse(date_text)
        .ok_or_else(|| DomainError::new("INVALID_DATE", format!("date {} is not a date in YYYY-MM-DD form", quoted(args.str("date")))))?;
    let date = date.text_of(date_text);
    let flights = Seq(|| s.flights_db.iter().filter(|f| f.origin == origin && f.dest == dest && f.date == date).map(|f| FlightView::of(f)));
    Ok(Reply::read(&Search { date: &date, dest: &dest, flights, origin: &origin }))
}

fn hold_flight(s: &mut State, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
    let flight_id = code_arg(args, "flight_id")?;
    let flight = find_flight_mut(&mut s.flights_db, &flight_id)?;
    if Date::parse(&flight.date).is_some_and(|d| d < ctx.today) {
        return Err(DomainError::new("DATE_IN_PAST", format!("flight {flight_id} left on {}, before today ({})", flight.date, ctx.today)));
    }
    if let Some(held) = active_hold(&s.reservations, &flight_id) {
        return Err(DomainError::new(
            "ALREADY_HELD",
            format!("flight {flight_id} is already held ({held}); confirm it with confirm_booking or release it with release_hold"),
        ));
    }
    let seats_left = flight.seats_left.checked_sub(1).ok_or_else(|| {
        DomainError::new(
            "FLIGHT_FULL",
            format!("flight {flight_id} has no seats left; search_flights shows the seats left on other flights"),
        )
    })?;
    let number = s.last_reservation.checked_add(1).filter(|n| *n <= MAX_RESERVATION_NUMBER).ok_or_else(|| {
        DomainError::new("RESERVATION_LIMIT", format!("an episode may create at most {MAX_RESERVATION_NUMBER} reservations"))
    })?;
    flight.seats_left = seats_left;
    s.last_reservation = number;
    let id = toolenv_core::date::numbered_id("R-", number);
    let reply = Reply::wrote(&Held {
        held: FlightHold { flight: FlightView::of(flight), reservation_id: &id },
        next: "confirm with confirm_booking(flight_id, passenger, payment_info)",
    });
    let reservation =
        Reservation { flight_id: flight_id.into_owned(), passenger: None, status: Status::Held, payment_info: None, price: None };
    s.reservations.insert(id, reservation.into());
    Ok(reply)
}

fn confirm_booking(s: &mut State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let flight_id = code_arg(args, "flight_id")?;
    let passenger = text_arg(args, "passenger")?;
    let payment_info = text_arg(args, "payment_info")?;
    let price = find_flight(&s.flights_db, &flight_id)?.price;
    let id = active_hold(&s.reservations, &flight_id)
        .cloned()
        .ok_or_else(|| DomainError::new("NOT_HELD", format!("flight {flight_id} has no active hold; hold it first with hold_flight")))?;
    let traveler = find_traveler(&s.travelers, passenger)?;
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
    let reservation = s.reservations.get_mut(&id).ok_or_else(|| no_reservation(&id))?;
    reservation.status = Status::Confirmed;
    reservation.passenger = Some(passenger.to_owned());
    reservation.payment_info = Some(payment_info.to_owned());
    reservation.price = Some(price);
    Ok(Reply::wrote(&Field("confirmed", ReservationView::of(&s.flights_db, &id, reservation))))
}

fn get_itinerary(s: &State, _args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let reservations = Seq(|| s.reservations.iter().map(|(id, r)| ReservationView::of(&s.flights_db, id, r)));
    Ok(Reply::read(&Field("reservations", reservations)))
}

fn release_hold(s: &mut State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let flight_id = code_arg(args, "flight_id")?;
    let flight = find_flight_mut(&mut s.flights_db, &flight_id)?;
    let id = active_hold(&s.reservations, &flight_id)
        .cloned()
        .ok_or_else(|| DomainError::new("NOT_HELD", format!("flight {flight_id} has no active hold to release")))?;
    s.reservations.remove(&id);
    flight.seats_left = flight.seats_left.saturating_add(1);
    Ok(Reply::wrote(&Field("released", FlightHold { flight: FlightView::of(flight), reservation_id: &id })))
}

fn cancel_reservation(s: &mut State, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
    let id = code_arg(args, "reservation_id")?;
    let reservation = s.reservations.get_mut(id.as_ref()).ok_or_else(|| no_reservation(&id))?;
    let flight = find_flight_mut(&mut s.flights_db, &reservation.flight_id)?;
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
    Ok(Reply::wrote(&Field("cancelled", ReservationView::of(&s.flights_db, &id, reservation))))
}

fn get_traveler_profile(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let name = text_arg(args, "name")?;
    let traveler = find_traveler(&s.travelers, name)?;
    let reservations = Seq(|| s.reservations.iter().filter(|(_, r)| r.passenger.as_deref() == Some(name)).map(|(id, _)| id));
    Ok(Reply::read(&Profile { name, payment_methods: &traveler.payment_methods, reservations }))
}

fn find_flight<'a>(flights: &'a [Shared<Flight>], id: &str) -> Result<&'a Shared<Flight>, DomainError> {
    flights.iter().find(|f| f.id == id).ok_or_else(|| unknown_flight(id))
}

/// The flight, to write to: copied (if shared) on the first write, not here.
fn find_flight_mut<'a>(flights: &'a mut [Shared<Flight>], id: &str) -> Result<&'a mut Shared<Flight>, DomainError> {
    flights.iter_mut().find(|f| f.id == id).ok_or_else(|| unknown_flight(id))
}

fn unknown_flight(id: &str) -> DomainError {
    DomainError::new("UNKNOWN_FLIGHT", format!("no flight {}; search_flights lists flight ids", quoted(id)))
}

fn active_hold<'a>(reservations: &'a BTreeMap<String, Shared<Reservation>>, flight_id: &str) -> Option<&'a String> {
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
