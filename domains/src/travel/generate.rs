//! The travel task generator: dozens of flights over a dozen cities and
//! three weeks, with near-duplicate flight numbers, full flights and cheaper
//! fares on the wrong day or route; tasks from one named booking (level 1)
//! to group bookings, round trips under a budget (or refused over it) and
//! fare questions (level 3).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};

use super::phrasing;
use super::tasks::confirmed;
use crate::generate::{Gen, Origin, monday};
use toolenv_core::{Call, Check, Fact, Slot, Task, World, date::Date, phrasing::Template, slots};

const CITIES: [&str; 12] = ["LON", "PAR", "FRA", "MAD", "ROM", "AMS", "DUB", "NYC", "LAX", "SFO", "BER", "VIE"];
const AIRLINES: [&str; 12] = ["AA", "BA", "LH", "AF", "KL", "IB", "AZ", "DL", "UA", "EI", "EZ", "LX"];
const NAMES: [&str; 16] =
    ["Alice", "Bob", "Carol", "Dana", "Evan", "Frank", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Liam", "Mona", "Nils", "Omar", "Pia"];

const GROUP_3: Template = Template::plain(
    "Book {passenger1}, {passenger2} and {passenger3} on flights from {origin} to {dest} on {date}, in that order: each on the \
     cheapest flight that still has a seat when it is their turn, each paying with the first payment method in their profile.",
);
const GROUP_4: Template = Template::plain(
    "Book {passenger1}, {passenger2}, {passenger3} and {passenger4} on flights from {origin} to {dest} on {date}, in that \
     order: each on the cheapest flight that still has a seat when it is their turn, each paying with the first payment method \
     in their profile.",
);
const TRIP_BUDGET: Template = Template::plain(
    "Book {passenger} a round trip from {origin} to {dest}, out on {date} and back on {return_date}, on the cheapest available \
     flight each way, paying with the first payment method in their profile, but only if the two fares together come to at \
     most {budget} dollars. If they come to more, book nothing and tell me the total.",
);
const FARE_QUESTION: Template = Template::plain(
    "Which flight from {origin} to {dest} on {date} has the cheapest fare that can still be booked, and what is that fare? \
     Answer with the flight number and the fare; book nothing.",
);

/// Words that say a booking was not made because of the budget.
const OVER_BUDGET: Fact = Fact::Says {
    label: "that the trip is over budget",
    any_of: &["over budget", "over the budget", "exceeds", "exceed", "above", "more than", "too expensive", "over your budget"],
};

/// The generated travel task of an origin.
pub(super) fn generate(origin: &Origin, mut g: Gen) -> Task {
    let today = monday(&mut g);
    let mut b = Builder {
        origin: *origin,
        g,
        today,
        flights: Vec::new(),
        ids: BTreeSet::new(),
        reservations: Vec::new(),
        travelers: BTreeMap::new(),
    };
    let (flights, travelers) = match origin.level {
        1 => (b.g.range(10, 18), 5),
        2 => (b.g.range(20, 32), 7),
        _ => (b.g.range(40, 64), 12),
    };
    for _ in 0..flights {
        b.random_flight();
    }
    for name in b.g.sample(&NAMES, travelers) {
        b.traveler(name);
    }
    for _ in 0..b.g.range(2, 2 + travelers as u32) {
        let passenger = b.any_traveler();
        let flight = b.g.below(b.flights.len());
        b.book_existing(flight, &passenger);
    }
    match origin.level {
        1 => match b.g.weighted(&[60, 40]) {
            0 => b.direct(),
            _ => b.cancel_trip(),
        },
        2 => match b.g.weighted(&[55, 45]) {
            0 => b.cheapest(),
            _ => b.change_hold(),
        },
        _ => match b.g.weighted(&[62, 23, 15]) {
            0 => b.group(),
            1 => b.trip_budget(),
            _ => b.fare_question(),
        },
    }
}

/// One flight as generated: `flight` writes it.
#[derive(Debug, Clone)]
struct Flight {
    id: String,
    origin: String,
    dest: String,
    date: String,
    price: u32,
    seats: u32,
}

struct Builder {
    origin: Origin,
    g: Gen,
    today: Date,
    flights: Vec<Flight>,
    ids: BTreeSet<String>,
    /// Reservations in id order: (flight id, passenger, payment, price), or a hold.
    reservations: Vec<Value>,
    travelers: BTreeMap<String, Vec<String>>,
}

impl Builder {
    /// A flight id not used yet; `near` makes it a near-duplicate of another
    /// id (the same airline, the number 2 to 8 higher) while one is free.
    fn flight_id(&mut self, near: Option<&str>) -> String {
        let near = near.map(|near| {
            let (airline, number) = near.split_once('-').unwrap_or(("LH", "100"));
            (airline.to_owned(), number.parse::<u32>().unwrap_or(100))
        });
        // When every near-duplicate is taken, any free id will do.
        let near = near.filter(|(airline, number)| (1..=4).any(|k| !self.ids.contains(&format!("{airline}-{}", number + k * 2))));
        loop {
            let id = match &near {
                Some((airline, number)) => format!("{airline}-{}", number + self.g.range(1, 4) * 2),
                None => format!("{}-{}", self.g.pick(&AIRLINES), self.g.range(100, 9899)),
            };
            if self.ids.insert(id.clone()) {
                return id;
            }
        }
    }

    fn date(&mut self, from: i64, to: i64) -> String {
        self.today.add_days(from + self.g.below((to - from + 1) as usize) as i64).to_string()
    }

    fn random_flight(&mut self) -> usize {
        let origin = (*self.g.pick(&CITIES)).to_owned();
        let dest = loop {
            let d = *self.g.pick(&CITIES);
            if d != origin {
                break d.to_owned();
            }
        };
        let date = self.date(1, 20);
        let price = self.g.range(16, 180) * 5;
        let seats = if self.g.chance(12) { 0 } else { self.g.range(1, 30) };
        let id = self.flight_id(None);
        self.push(Flight { id, origin, dest, date, price, seats })
    }

    fn push(&mut self, flight: Flight) -> usize {
        // Flights go in at a random place: a search lists them in that order.
        let at = self.g.below(self.flights.len() + 1);
        self.flights.insert(at, flight);
        at
    }

    fn index(&self, id: &str) -> usize {
        self.flights.iter().position(|f| f.id == id).expect("a generated flight")
    }

    fn traveler(&mut self, name: &str) {
        let lower = name.to_lowercase();
        let mut methods = vec![match self.g.below(3) {
            0 => format!("card_{}", self.g.range(1000, 9999)),
            1 => format!("amex_{}", self.g.range(1000, 9999)),
            _ => format!("paypal_{lower}"),
        }];
        if self.g.chance(50) {
            methods.push(format!("card_{}", self.g.range(1000, 9999)));
        }
        self.travelers.insert(name.to_owned(), methods);
    }

    fn any_traveler(&mut self) -> String {
        let names: Vec<String> = self.travelers.keys().cloned().collect();
        self.g.pick(&names).clone()
    }

    /// A traveler not among `taken`.
    fn other_traveler(&mut self, taken: &[String]) -> String {
        let names: Vec<String> = self.travelers.keys().filter(|n| !taken.contains(n)).cloned().collect();
        self.g.pick(&names).clone()
    }

    fn payment(&self, name: &str) -> String {
        self.travelers[name][0].clone()
    }

    /// A confirmed reservation of `passenger` on the flight at `index`.
    fn book_existing(&mut self, index: usize, passenger: &str) {
        let f = &self.flights[index];
        let payment = self.payment(passenger);
        self.reservations.push(confirmed(&f.id, passenger, &payment, f.price));
    }

    /// `count` flights on a route and day with distinct fares (each with a
    /// near-duplicate id of the first), the cheapest first; returns their ids.
    fn route(&mut self, origin: &str, dest: &str, date: &str, count: usize) -> Vec<String> {
        let mut prices: Vec<u32> = Vec::new();
        while prices.len() < count {
            let p = self.g.range(16, 180) * 5;
            if !prices.contains(&p) {
                prices.push(p);
            }
        }
        prices.sort_unstable();
        let first = self.flight_id(None);
        let mut ids = vec![first.clone()];
        for _ in 1..count {
            let id = self.flight_id(Some(&first));
            ids.push(id);
        }
        self.g.shuffle(&mut ids);
        for (id, &price) in ids.iter().zip(&prices) {
            let seats = self.g.range(2, 20);
            self.push(Flight { id: id.clone(), origin: origin.into(), dest: dest.into(), date: date.into(), price, seats });
        }
        // A cheaper flight the day after and one on another route: not the one asked for.
        let cheaper = prices[0].saturating_sub(self.g.range(1, 6) * 5).max(40);
        let next_day = Date::parse(date).map_or_else(|| date.to_owned(), |d| d.add_days(1).to_string());
        let id = self.flight_id(None);
        self.push(Flight { id, origin: origin.into(), dest: dest.into(), date: next_day, price: cheaper, seats: 9 });
        let id = self.flight_id(None);
        let elsewhere = CITIES.iter().find(|c| **c != origin && **c != dest).copied().unwrap_or("DUB");
        self.push(Flight { id, origin: origin.into(), dest: elsewhere.into(), date: date.into(), price: cheaper, seats: 9 });
        ids.sort_by_key(|id| self.flights[self.index(id)].price);
        ids
    }

    fn pick_route(&mut self) -> (String, String, String) {
        let origin = (*self.g.pick(&CITIES)).to_owned();
        let dest = loop {
            let d = *self.g.pick(&CITIES);
            if d != origin {
                break d.to_owned();
            }
        };
        let date = self.date(2, 16);
        // No other flight on that route and day than those `route` adds.
        self.clear_route(&origin, &dest, &date);
        (origin, dest, date)
    }

    /// Removes the flights of a route and day, and their reservations.
    fn clear_route(&mut self, origin: &str, dest: &str, date: &str) {
        self.flights.retain(|f| !(f.origin == origin && f.dest == dest && f.date == date));
        let flights = &self.flights;
        self.reservations.retain(|r| flights.iter().any(|f| f.id == r["flight_id"]));
    }

    fn seats_check(&self, id: &str, seats: u32) -> Check {
        Check::equals(format!("{id} seats_left is {seats}"), format!("/flights_db/{}/seats_left", self.index(id)), json!(seats))
    }

    fn booked_checks(&self, id: &str, passenger: &str) -> Vec<Check> {
        let payment = self.payment(passenger);
        let price = self.flights[self.index(id)].price;
        vec![
            Check::count(
                format!("{id} confirmed for {passenger}"),
                "/reservations",
                json!({"flight_id": id, "passenger": passenger, "status": "confirmed"}),
                1,
            ),
            Check::count(
                format!("{passenger}'s {id} booking paid with {payment} at {price}"),
                "/reservations",
                confirmed(id, passenger, &payment, price),
                1,
            ),
        ]
    }

    fn booking_calls(&self, id: &str, passenger: &str) -> [Call; 2] {
        [
            Call::new("hold_flight", json!({"flight_id": id})),
            Call::new("confirm_booking", json!({"flight_id": id, "passenger": passenger, "payment_info": self.payment(passenger)})),
        ]
    }

    fn task(self, kind: &str, template: &'static Template, slots: Vec<Slot>, reference: Vec<Call>, checks: Vec<Check>) -> Task {
        // Flights and travelers built as records, reservations read from JSON; the state checks all.
        let flights_db = self.flights.into_iter().map(|f| {
            let Flight { id, origin, dest, date, price, seats } = f;
            super::Flight { id, origin, dest, date, price, seats_left: seats }.into()
        });
        let reservations = self
            .reservations
            .into_iter()
            .enumerate()
            .map(|(i, r)| (format!("R-{:04}", i + 1), serde_json::from_value(r).expect("generated reservations are valid")));
        let travelers = self.travelers.into_iter().map(|(name, payment_methods)| (name, super::Traveler { payment_methods }));
        let records =
            super::Records { flights_db: flights_db.collect(), reservations: reservations.collect(), travelers: travelers.collect() };
        let state = super::State::try_from(records).expect("generated travel states are valid");
        Task {
            id: self.origin.id(kind),
            domain: crate::registry::TRAVEL,
            level: self.origin.level,
            template,
            slots,
            today: self.today,
            initial: Arc::new(World::new::<crate::travel::State>(state)),
            reference,
            checks,
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        }
    }

    /// Level 1: book a named flight (near-duplicate numbers on the same route and day).
    fn direct(mut self) -> Task {
        let (origin, dest, date) = self.pick_route();
        let ids = self.route(&origin, &dest, &date, 3);
        let id = self.g.pick(&ids).clone();
        let passenger = self.any_traveler();
        let seats = self.flights[self.index(&id)].seats;
        let mut reference = vec![Call::new("get_traveler_profile", json!({"name": passenger}))];
        reference.extend(self.booking_calls(&id, &passenger));
        let mut checks = self.booked_checks(&id, &passenger);
        checks.push(self.seats_check(&id, seats - 1));
        let slots = slots(&[("flight_id", &id), ("origin", &origin), ("dest", &dest), ("date", &date), ("passenger", &passenger)]);
        self.task("direct-booking", &phrasing::DIRECT_BOOKING, slots, reference, checks)
    }

    /// Level 1: cancel both legs of a round trip; a past trip, another
    /// trip and a fellow traveler's seat stay.
    fn cancel_trip(mut self) -> Task {
        let (origin, dest, date) = self.pick_route();
        let out = self.route(&origin, &dest, &date, 2)[1].clone();
        let return_date = Date::parse(&date).map_or(date.clone(), |d| d.add_days(i64::from(self.g.range(2, 6))).to_string());
        self.clear_route(&dest, &origin, &return_date);
        let back = self.route(&dest, &origin, &return_date, 2)[0].clone();
        let passenger = self.any_traveler();
        let friend = self.other_traveler(std::slice::from_ref(&passenger));
        // Another trip of the passenger's that stays booked.
        let legs = [(&origin, &dest, &date), (&dest, &origin, &return_date)];
        let others: Vec<usize> = (0..self.flights.len())
            .filter(|&i| {
                !legs.iter().any(|(o, d, t)| self.flights[i].origin == **o && self.flights[i].dest == **d && self.flights[i].date == **t)
            })
            .collect();
        if !others.is_empty() {
            let other = *self.g.pick(&others);
            self.book_existing(other, &passenger);
        }
        let (i_out, i_back) = (self.index(&out), self.index(&back));
        self.book_existing(i_out, &passenger);
        let out_id = format!("R-{:04}", self.reservations.len());
        self.book_existing(i_out, &friend);
        let friend_id = format!("R-{:04}", self.reservations.len());
        self.book_existing(i_back, &passenger);
        let back_id = format!("R-{:04}", self.reservations.len());
        let (seats_out, seats_back) = (self.flights[i_out].seats, self.flights[i_back].seats);
        let reference = vec![
            Call::new("get_itinerary", json!({})),
            Call::new("cancel_reservation", json!({"reservation_id": out_id})),
            Call::new("cancel_reservation", json!({"reservation_id": back_id})),
        ];
        let friend_booking = self.reservations[self.reservations.len() - 2].clone();
        let checks = vec![
            Check::equals(
                format!("{passenger}'s outbound {out} ({out_id}) cancelled"),
                format!("/reservations/{out_id}/status"),
                json!("cancelled"),
            ),
            Check::equals(
                format!("{passenger}'s return {back} ({back_id}) cancelled"),
                format!("/reservations/{back_id}/status"),
                json!("cancelled"),
            ),
            self.seats_check(&out, seats_out + 1),
            self.seats_check(&back, seats_back + 1),
            Check::equals(
                format!("{friend}'s {out} booking ({friend_id}) untouched"),
                format!("/reservations/{friend_id}"),
                friend_booking,
            ),
        ];
        let slots =
            slots(&[("passenger", &passenger), ("origin", &origin), ("dest", &dest), ("date", &date), ("return_date", &return_date)]);
        self.task("cancel-trip", &phrasing::CANCEL_TRIP, slots, reference, checks)
    }

    /// Makes the cheapest of `ids` full (a trap), in half of the tasks;
    /// returns the cheapest that has a seat.
    fn maybe_full(&mut self, ids: &[String]) -> String {
        if self.g.chance(50) {
            let i = self.index(&ids[0]);
            self.flights[i].seats = 0;
            ids[1].clone()
        } else {
            ids[0].clone()
        }
    }

    /// Level 2: the cheapest flight with a seat left.
    fn cheapest(mut self) -> Task {
        let (origin, dest, date) = self.pick_route();
        let count = self.g.range(3, 5) as usize;
        let ids = self.route(&origin, &dest, &date, count);
        let id = self.maybe_full(&ids);
        let passenger = self.any_traveler();
        let seats = self.flights[self.index(&id)].seats;
        let mut reference = vec![
            Call::new("search_flights", json!({"origin": origin, "dest": dest, "date": date})),
            Call::new("get_traveler_profile", json!({"name": passenger})),
        ];
        reference.extend(self.booking_calls(&id, &passenger));
        let mut checks = self.booked_checks(&id, &passenger);
        checks.push(self.seats_check(&id, seats - 1));
        let slots = slots(&[("origin", &origin), ("dest", &dest), ("date", &date), ("passenger", &passenger)]);
        self.task("cheapest-flight", &phrasing::CHEAPEST_FLIGHT_003, slots, reference, checks)
    }

    /// Level 2: release a mistaken hold, book the cheapest flight instead.
    fn change_hold(mut self) -> Task {
        let (origin, dest, date) = self.pick_route();
        let count = self.g.range(3, 4) as usize;
        let ids = self.route(&origin, &dest, &date, count);
        let id = self.maybe_full(&ids);
        let passenger = self.any_traveler();
        // The mistaken hold: a flight of the same route on another day.
        let held_date = Date::parse(&date).map_or(date.clone(), |d| d.add_days(-1).to_string());
        let held = self.flight_id(None);
        let held_seats = self.g.range(2, 12);
        self.push(Flight { id: held.clone(), origin: origin.clone(), dest: dest.clone(), date: held_date, price: 90, seats: held_seats });
        let someone = self.other_traveler(std::slice::from_ref(&passenger));
        let i_held = self.index(&held);
        self.book_existing(i_held, &someone);
        self.reservations.push(json!({"flight_id": held, "passenger": null, "status": "held", "payment_info": null, "price": null}));
        let hold_id = format!("R-{:04}", self.reservations.len());
        let seats = self.flights[self.index(&id)].seats;
        let mut reference = vec![
            Call::new("get_itinerary", json!({})),
            Call::new("release_hold", json!({"flight_id": held})),
            Call::new("search_flights", json!({"origin": origin, "dest": dest, "date": date})),
            Call::new("get_traveler_profile", json!({"name": passenger})),
        ];
        reference.extend(self.booking_calls(&id, &passenger));
        let mut checks = vec![
            Check::equals(format!("the mistaken hold on {held} ({hold_id}) released"), format!("/reservations/{hold_id}"), Value::Null),
            self.seats_check(&held, held_seats + 1),
        ];
        checks.extend(self.booked_checks(&id, &passenger));
        checks.push(self.seats_check(&id, seats - 1));
        let slots = slots(&[("held_flight", &held), ("passenger", &passenger), ("origin", &origin), ("dest", &dest), ("date", &date)]);
        self.task("change-hold", &phrasing::CHANGE_HOLD, slots, reference, checks)
    }

    /// Level 3: three or four travelers in turn, each on the cheapest flight
    /// with a seat left; the cheapest flights have few seats.
    fn group(mut self) -> Task {
        let (origin, dest, date) = self.pick_route();
        let group = if self.g.chance(35) { 4 } else { 3 };
        let ids = self.route(&origin, &dest, &date, 4);
        // Few seats on the cheap flights, so the group spreads out.
        let i0 = self.index(&ids[0]);
        self.flights[i0].seats = self.g.range(0, 2);
        let i1 = self.index(&ids[1]);
        self.flights[i1].seats = self.g.range(1, 2);
        let mut passengers: Vec<String> = Vec::new();
        for _ in 0..group {
            let p = self.other_traveler(&passengers);
            passengers.push(p);
        }
        let mut seats: BTreeMap<String, u32> = ids.iter().map(|id| (id.clone(), self.flights[self.index(id)].seats)).collect();
        let mut reference = vec![Call::new("search_flights", json!({"origin": origin, "dest": dest, "date": date}))];
        let mut checks = Vec::new();
        for p in &passengers {
            let id = ids.iter().find(|id| seats[*id] > 0).expect("the dearest flights have seats").clone();
            *seats.get_mut(&id).expect("a route flight") -= 1;
            reference.push(Call::new("get_traveler_profile", json!({"name": p})));
            reference.extend(self.booking_calls(&id, p));
            checks.extend(self.booked_checks(&id, p));
        }
        for (id, left) in &seats {
            checks.push(self.seats_check(id, *left));
        }
        let names = ["passenger1", "passenger2", "passenger3", "passenger4"];
        let mut slots: Vec<Slot> = names.iter().zip(&passengers).map(|(&name, p)| Slot { name, value: p.clone() }).collect();
        slots.extend([("origin", &origin), ("dest", &dest), ("date", &date)].map(|(name, v)| Slot { name, value: v.clone() }));
        let template = if group == 4 { &GROUP_4 } else { &GROUP_3 };
        self.task("group-booking", template, slots, reference, checks)
    }

    /// Level 3: a round trip on the cheapest flight each way, within a
    /// budget; over it, nothing is booked and the answer gives the total.
    fn trip_budget(mut self) -> Task {
        let (origin, dest, date) = self.pick_route();
        let out_ids = self.route(&origin, &dest, &date, 3);
        let out = self.maybe_full(&out_ids);
        let return_date = Date::parse(&date).map_or(date.clone(), |d| d.add_days(i64::from(self.g.range(2, 6))).to_string());
        self.clear_route(&dest, &origin, &return_date);
        let back_ids = self.route(&dest, &origin, &return_date, 3);
        let back = self.maybe_full(&back_ids);
        let passenger = self.any_traveler();
        let (i_out, i_back) = (self.index(&out), self.index(&back));
        let total = self.flights[i_out].price + self.flights[i_back].price;
        let over = self.g.chance(35);
        let budget = if over { total - self.g.range(1, 8) * 5 } else { total + self.g.range(0, 20) * 5 };
        let searches = vec![
            Call::new("search_flights", json!({"origin": origin, "dest": dest, "date": date})),
            Call::new("search_flights", json!({"origin": dest, "dest": origin, "date": return_date})),
        ];
        let slots = slots(&[
            ("passenger", &passenger),
            ("origin", &origin),
            ("dest", &dest),
            ("date", &date),
            ("return_date", &return_date),
            ("budget", &budget.to_string()),
        ]);
        if over {
            let example = format!("I booked nothing: the cheapest round trip comes to {total} dollars, more than the budget of {budget}.");
            let facts = vec![OVER_BUDGET, Fact::Amount { cents: i64::from(total) * 100 }];
            let checks = vec![Check::answer(format!("the answer refuses and gives the total, {total}"), facts, example)];
            return self.task("trip-budget", &TRIP_BUDGET, slots, searches, checks);
        }
        let (seats_out, seats_back) = (self.flights[i_out].seats, self.flights[i_back].seats);
        let mut reference = searches;
        reference.push(Call::new("get_traveler_profile", json!({"name": passenger})));
        reference.extend(self.booking_calls(&out, &passenger));
        reference.extend(self.booking_calls(&back, &passenger));
        let mut checks = self.booked_checks(&out, &passenger);
        checks.extend(self.booked_checks(&back, &passenger));
        checks.push(self.seats_check(&out, seats_out - 1));
        checks.push(self.seats_check(&back, seats_back - 1));
        self.task("trip-budget", &TRIP_BUDGET, slots, reference, checks)
    }

    /// Level 3: answer which flight has the cheapest fare with a seat left;
    /// a cheaper full flight, a near-duplicate number and cheaper flights on
    /// the wrong day or route are there to mislead.
    fn fare_question(mut self) -> Task {
        let (origin, dest, date) = self.pick_route();
        let count = self.g.range(3, 5) as usize;
        let ids = self.route(&origin, &dest, &date, count);
        let full = self.index(&ids[0]);
        self.flights[full].seats = 0;
        let id = ids[1].clone();
        let price = self.flights[self.index(&id)].price;
        let reference = vec![Call::new("search_flights", json!({"origin": origin, "dest": dest, "date": date}))];
        let example = format!("The cheapest flight with a seat left is {id}, at {price} dollars.");
        let facts = vec![
            Fact::Mentions { label: "the flight".into(), phrase: id.clone() },
            Fact::Amount { cents: i64::from(price) * 100 },
            Fact::Omits { label: "the full flight".into(), phrase: ids[0].clone() },
        ];
        let checks = vec![Check::answer(format!("the answer names {id} at {price}"), facts, example)];
        let slots = slots(&[("origin", &origin), ("dest", &dest), ("date", &date)]);
        self.task("fare-question", &FARE_QUESTION, slots, reference, checks)
    }
}
