//! How the solver plays travel tasks: from the task's slots, the flight
//! search, the itinerary and the traveler's profile.

use serde_json::{Value, json};

use crate::solver::{GiveUp, Session, Step, Strategy, Usable, accepted, field, kind, list_at, slot, text_at, unknown};
use toolenv_core::Task;

impl Strategy for super::State {
    fn solve(task: &Task, s: &mut Session<'_>) -> Step<()> {
        match kind(task) {
            // "Book the cheapest (available) flight from {origin} to {dest} on {date} for {passenger}."
            "cheapest-flight" => {
                let flights = cheapest_first(s, slot(task, "origin")?, slot(task, "dest")?, slot(task, "date")?)?;
                book_first_free(s, &flights, slot(task, "passenger")?)
            }
            // "Book flight {flight_id} … for {passenger}."
            "direct-booking" => book_first_free(s, &[slot(task, "flight_id")?.to_owned()], slot(task, "passenger")?),
            // "Cancel {passenger}'s round trip from {origin} to {dest}: out on {date}, back on {return_date}."
            "cancel-trip" => {
                for id in trip_reservations(task, s)? {
                    match s.write("cancel_reservation", json!({"reservation_id": id}))? {
                        Usable::Ok(_) => {}
                        Usable::Rejected(code, _) if code == "ALREADY_CANCELLED" => {}
                        rejected => return accepted("cancel_reservation", rejected).map(drop),
                    }
                }
                Ok(())
            }
            // "Flight {held_flight} was held by mistake … Release that hold and book
            // {passenger} on the cheapest flight from {origin} to {dest} on {date}."
            "change-hold" => {
                // Every read before the first write: no stale snapshot can mislead.
                let flights = cheapest_first(s, slot(task, "origin")?, slot(task, "dest")?, slot(task, "date")?)?;
                let payment = payment_method(s, slot(task, "passenger")?)?;
                match s.write("release_hold", json!({"flight_id": slot(task, "held_flight")?}))? {
                    Usable::Ok(_) => {}
                    // Nothing held any more: nothing to release.
                    Usable::Rejected(code, _) if code == "NOT_HELD" => {}
                    rejected => return accepted("release_hold", rejected).map(drop),
                }
                book_with(s, &flights, slot(task, "passenger")?, &payment)
            }
            // "Book {passenger1}, {passenger2} … from {origin} to {dest} on {date}, in that order: each on the cheapest
            // flight that still has a seat when it is their turn, each paying with the first payment method in their profile."
            "group-booking" => {
                let flights = cheapest_first(s, slot(task, "origin")?, slot(task, "dest")?, slot(task, "date")?)?;
                let passengers = ["passenger1", "passenger2", "passenger3", "passenger4"].into_iter().map_while(|name| task.slot(name));
                for passenger in passengers {
                    book_first_free(s, &flights, passenger)?;
                }
                Ok(())
            }
            // "Book {passenger} a round trip … on the cheapest available flight each way … only if the two fares
            // together come to at most {budget} dollars. If they come to more, book nothing and tell me the total."
            "trip-budget" => {
                let (origin, dest) = (slot(task, "origin")?, slot(task, "dest")?);
                let out = fares(s, origin, dest, slot(task, "date")?)?;
                let back = fares(s, dest, origin, slot(task, "return_date")?)?;
                let (Some((out_fare, _)), Some((back_fare, _))) = (out.first(), back.first()) else {
                    return Err(GiveUp::Stuck("no flight with a seat left one way".into()));
                };
                let total = out_fare + back_fare;
                let budget: u64 = slot(task, "budget")?.parse().map_err(|_| GiveUp::Stuck("the budget is not a number".into()))?;
                if total > budget {
                    s.answer(&format!(
                        "I booked nothing: the cheapest round trip comes to {total} dollars, more than the budget of {budget}."
                    ));
                    return Ok(());
                }
                let passenger = slot(task, "passenger")?;
                let payment = payment_method(s, passenger)?;
                let ids = |list: &[(u64, String)]| list.iter().map(|(_, id)| id.clone()).collect::<Vec<_>>();
                book_with(s, &ids(&out), passenger, &payment)?;
                book_with(s, &ids(&back), passenger, &payment)
            }
            // "Which flight from {origin} to {dest} on {date} has the cheapest fare that can still be booked …?"
            "fare-question" => {
                let list = fares(s, slot(task, "origin")?, slot(task, "dest")?, slot(task, "date")?)?;
                let (fare, id) = list.first().ok_or_else(|| GiveUp::Stuck("no flight with a seat left".into()))?;
                s.answer(&format!("The cheapest flight with a seat left is {id}, at {fare} dollars."));
                Ok(())
            }
            _ => Err(unknown(task)),
        }
    }
}

/// The ids of the flights of a route and day with seats left, cheapest first
/// (ties in search order), from a search confirmed against silent truncation.
fn cheapest_first(s: &mut Session<'_>, origin: &str, dest: &str, date: &str) -> Step<Vec<String>> {
    Ok(fares(s, origin, dest, date)?.into_iter().map(|(_, id)| id).collect())
}

/// The (fare, id) of the flights of a route and day with seats left, cheapest
/// first (ties in search order), from a search confirmed against silent truncation.
fn fares(s: &mut Session<'_>, origin: &str, dest: &str, date: &str) -> Step<Vec<(u64, String)>> {
    let answer = s.read_confirmed("search_flights", json!({"origin": origin, "dest": dest, "date": date}), "/flights")?;
    let result = accepted("search_flights", answer)?;
    let mut flights: Vec<(u64, String)> = list_at(&result, "/flights")
        .iter()
        .filter(|f| f.get("seats_left").and_then(Value::as_u64).is_some_and(|n| n > 0))
        .filter_map(|f| Some((f.get("price")?.as_u64()?, field(f, "id").to_owned())))
        .collect();
    flights.sort_by_key(|(price, _)| *price);
    Ok(flights)
}

/// A payment method the traveler has on file, read from the profile.
fn payment_method(s: &mut Session<'_>, passenger: &str) -> Step<String> {
    let answer = s.read_if("get_traveler_profile", json!({"name": passenger}), &|v| !list_at(v, "/payment_methods").is_empty())?;
    let profile = accepted("get_traveler_profile", answer)?;
    Ok(text_at(&profile, "/payment_methods/0")?.to_owned())
}

/// Looks up the passenger's payment method, then books the first flight that can be held.
fn book_first_free(s: &mut Session<'_>, flights: &[String], passenger: &str) -> Step<()> {
    let payment = payment_method(s, passenger)?;
    book_with(s, flights, passenger, &payment)
}

/// Holds the first of `flights` that still has a seat and confirms it.
fn book_with(s: &mut Session<'_>, flights: &[String], passenger: &str, payment: &str) -> Step<()> {
    for flight in flights {
        match s.write("hold_flight", json!({"flight_id": flight}))? {
            Usable::Ok(_) => {
                let args = json!({"flight_id": flight, "passenger": passenger, "payment_info": payment});
                return accepted("confirm_booking", s.write("confirm_booking", args)?).map(drop);
            }
            // Full since the search: the next cheapest.
            Usable::Rejected(code, _) if code == "FLIGHT_FULL" => {}
            rejected => return accepted("hold_flight", rejected).map(drop),
        }
    }
    Err(GiveUp::Stuck(format!("none of the flights {flights:?} has a seat")))
}

/// The confirmed reservations of the passenger's trip: out on the route on
/// `date`, back on `return_date`. The itinerary is read again until both legs show.
fn trip_reservations(task: &Task, s: &mut Session<'_>) -> Step<Vec<String>> {
    let passenger = slot(task, "passenger")?;
    let out = (slot(task, "origin")?, slot(task, "dest")?, slot(task, "date")?);
    let back = (out.1, out.0, slot(task, "return_date")?);
    let leg = |r: &Value, (origin, dest, date): (&str, &str, &str)| {
        field(r, "passenger") == passenger
            && field(r, "status") == "confirmed"
            && field(r, "origin") == origin
            && field(r, "dest") == dest
            && field(r, "date") == date
    };
    let legs = |v: &Value| -> (Vec<String>, bool, bool) {
        let reservations = list_at(v, "/reservations");
        let ids = reservations.iter().filter(|r| leg(r, out) || leg(r, back)).map(|r| field(r, "reservation_id").to_owned());
        (ids.collect(), reservations.iter().any(|r| leg(r, out)), reservations.iter().any(|r| leg(r, back)))
    };
    let answer = s.read_if("get_itinerary", json!({}), &|v| matches!(legs(v), (_, true, true)))?;
    Ok(legs(&accepted("get_itinerary", answer)?).0)
}
