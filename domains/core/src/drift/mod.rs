//! Schema drift: the v2 shape of every tool result, as an API version bump
//! would change it, and the way back.
//!
//! The SchemaDrift fault makes an episode's results arrive, from some call
//! on, in a v2 shape: fields renamed, fields nested into objects, and dates
//! in another format. Retrying does not undo it; adapting does. So the v2
//! shape is not noise: each domain has one mapping, applied to every object
//! of every tool's result, so a flight (or a ticket, a meeting, an order)
//! looks the same in every v2 result and a field is always renamed the same
//! way. [`to_v2`] applies a domain's mapping, [`from_v2`] inverts it:
//! `from_v2(d, t, &to_v2(d, t, &r)) == r` for every real result `r` of every
//! tool, so no information is lost.
//!
//! Every v2 object result carries a top-level `"api_version": "v2"`.
//!
//! The mapping works on keys, wherever they occur: a row `a` → `b.c` moves
//! the value of key `a` of any object of the result to key `c` of an object
//! under key `b` of that same object (created as needed), converting the
//! value as the row says. Rows apply to a domain's result objects at every
//! depth, so nested records (a flight inside a hold, the tickets of a
//! customer) change the same way as top-level ones.
//!
//! ## Scheduling: dates `DD/MM/YYYY` (`05/01/2026`), times 12-hour (`9:00 AM`)
//!
//! | v1 | v2 |
//! |---|---|
//! | `topic` | `title` |
//! | `date` | `when.day`, `DD/MM/YYYY` |
//! | `time` | `when.start`, 12-hour (`09:00` → `9:00 AM`, `16:00` → `4:00 PM`) |
//! | `meetings` | `events` |
//! | `available` | `is_free` |
//! | `free_slots` | `open_slots`, each 12-hour |
//!
//! A rescheduled meeting's `from`/`to` slots become `from.when`/`to.when`.
//!
//! ## Travel: dates `DDMONYYYY` (`05JAN2026`, airline style)
//!
//! | v1 | v2 |
//! |---|---|
//! | `id` (a flight's) | `flight_number` |
//! | `origin`, `dest` | `route.from`, `route.to` |
//! | `date` | `departure_date`, `DDMONYYYY` |
//! | `price` | `fare.amount` |
//! | `seats_left` | `availability.seats` |
//! | `reservation_id` | `booking_ref` |
//! | `reservations` | `bookings` |
//! | `payment_info` | `payment_method` |
//! | `name` (a traveler's) | `traveler` |
//!
//! A reservation's flat `flight_id`, `origin`, `dest` and `date` become a
//! nested `flight` object (`flight.flight_number`, `flight.route`,
//! `flight.departure_date`), so a reservation's flight looks like the flight
//! of a hold or a search. No currency is added: the travel domain has none.
//!
//! ## Support: no date fields
//!
//! Support results have no date fields (dates occur only inside free text,
//! which is never rewritten), so only names and nesting change. The tier
//! becomes a number.
//!
//! | v1 | v2 |
//! |---|---|
//! | `ticket_id` | `ticket_ref` |
//! | `customer_id` | `account_id` |
//! | `customer` (get_customer's record) | `account` |
//! | `subject` | `summary` |
//! | `status`, `priority` | `state.status`, `state.priority` |
//! | `tier` | `escalation.level`, a number (`tier2` → `2`) |
//! | `escalation_reason` | `escalation.reason` |
//! | `name` (a customer's) | `display_name` |
//! | `plan` | `subscription.plan` |
//! | `id` (an article's) | `article_id` |
//! | `body` | `content` |
//! | `matched_words` | `relevance.matched_words` |
//! | `total_matches` | `total` |
//!
//! ## E-commerce: dates `MM/DD/YYYY` (`01/05/2026`, US style); money in cents
//!
//! | v1 | v2 |
//! |---|---|
//! | `sku`, `skus`, `returned_skus` | `product_id`, `product_ids`, `returned_product_ids` |
//! | `order_id` | `order_number` |
//! | money: `price`, `unit_price`, `subtotal`, `discount`, `total`, `refunded`, `refund`, `amount`, `order_subtotal` | same key, `{"amount_cents": 2499, "currency": "USD"}` for `24.99` |
//! | `stock`, `in_stock` | `inventory.available`, `inventory.in_stock` |
//! | `status` | `fulfillment.status` |
//! | `delivered_on` | `fulfillment.delivered_on`, `MM/DD/YYYY` |
//! | `returnable_until` | `fulfillment.return_by`, `MM/DD/YYYY` |
//! | `shipping_address` | `shipping.address` |
//! | `coupon_code` | `coupon.code` |
//! | `addresses` | `address_book` |
//! | `terms` (a coupon's, generated text) | same key, its dates `MM/DD/YYYY` |
//!
//! ## What does not change
//!
//! Free text an agent or a customer wrote (topics, subjects, descriptions,
//! notes, reasons, queries, addresses) and echoed codes pass through
//! verbatim, even when they contain a date: an API does not rewrite its
//! users' text. Values, ids and list order are kept; `null` stays `null` in
//! its new place. Only results change shape: tool arguments and domain errors
//! are not part of this mapping.
//!
//! ## Unexpected shapes
//!
//! Both functions accept any JSON value and never panic. A value a row does
//! not recognize keeps its form in its v2 place (a date field that holds no
//! date, money that is not a whole number of cents, a tier that is not
//! `tierN`); a key whose v2 place is already taken stays where it is.
//! Objects and arrays nested deeper than 64 levels are copied unchanged.
//! Neither function reads anything but its arguments; output maps are
//! `serde_json` maps built in a fixed order.
//!
//! The travel domain's `views.rs` (in `toolenv-domains`) shows one
//! result in both shapes.

use serde_json::{Map, Value};

use crate::{
    date::{Date, format_time, parse_time},
    world::Domain,
};

/// The top-level key marking a v2 result.
pub const API_VERSION_KEY: &str = "api_version";
/// The value of [`API_VERSION_KEY`] in a v2 result.
pub const API_VERSION: &str = "v2";

/// Deepest nesting that is converted; anything deeper is copied as it is.
const MAX_DEPTH: usize = 64;

/// The currency of every e-commerce amount (the shop prices in dollars).
const CURRENCY: &str = "USD";

/// Returns a tool's v1 result in its domain's v2 shape.
///
/// The mapping depends only on the domain (see the module documentation), so
/// a record looks the same whichever tool returned it; `_tool` names the tool
/// for callers' convenience and may be anything. An object result gains
/// `"api_version": "v2"`.
pub fn to_v2(domain: Domain, _tool: &str, result: &Value) -> Value {
    let mut v2 = convert(domain, Direction::ToV2, result, 0);
    if let Value::Object(map) = &mut v2 {
        map.insert(API_VERSION_KEY.to_owned(), Value::from(API_VERSION));
    }
    v2
}

/// Returns a v2 result in its v1 shape: the inverse of [`to_v2`].
///
/// For every real result `r`, `from_v2(d, t, &to_v2(d, t, &r)) == r`.
pub fn from_v2(domain: Domain, _tool: &str, v2: &Value) -> Value {
    match v2 {
        Value::Object(map) if map.get(API_VERSION_KEY).and_then(Value::as_str) == Some(API_VERSION) => {
            let mut map = map.clone();
            map.remove(API_VERSION_KEY);
            convert(domain, Direction::ToV1, &Value::Object(map), 0)
        }
        other => convert(domain, Direction::ToV1, other, 0),
    }
}

/// Which way a conversion goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    ToV2,
    ToV1,
}

/// Converts a value bottom-up: the children of an object first, then the
/// object's own keys, so a row sees its nested records already converted
/// and only moves them.
fn convert(domain: Domain, direction: Direction, value: &Value, depth: usize) -> Value {
    if depth >= MAX_DEPTH {
        return value.clone();
    }
    match value {
        Value::Object(map) => {
            let children: Map<String, Value> =
                map.iter().map(|(key, child)| (key.clone(), convert(domain, direction, child, depth + 1))).collect();
            let converted = match direction {
                Direction::ToV2 => object_to_v2(domain, children),
                Direction::ToV1 => object_to_v1(domain, children),
            };
            Value::Object(converted)
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| convert(domain, direction, item, depth + 1)).collect()),
        scalar => scalar.clone(),
    }
}

/// One row of a domain's mapping: a v1 key, its place in v2 and how its
/// value changes.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The key in v1.
    pub v1: &'static str,
    /// The object the value moves into in v2, if it is nested.
    pub within: Option<&'static str>,
    /// The key in v2 (inside `within` when nested).
    pub v2: &'static str,
    /// How the value is written in v2.
    conv: Conv,
}

impl Field {
    pub const fn renamed(v1: &'static str, v2: &'static str) -> Self {
        Self { v1, within: None, v2, conv: Conv::Same }
    }

    /// A key that keeps its name; only its value's form changes.
    pub const fn kept(key: &'static str) -> Self {
        Self::renamed(key, key)
    }

    pub const fn nested(v1: &'static str, within: &'static str, v2: &'static str) -> Self {
        Self { v1, within: Some(within), v2, conv: Conv::Same }
    }

    pub const fn with(self, conv: Conv) -> Self {
        Self { conv, ..self }
    }
}

/// How a value is written in v2.
#[derive(Debug, Clone, Copy)]
pub enum Conv {
    /// As it is.
    Same,
    /// A `YYYY-MM-DD` date, in another format.
    Date(DateStyle),
    /// Text whose `YYYY-MM-DD` dates are rewritten in another format.
    DatesInText(DateStyle),
    /// An `HH:MM` time, 12-hour (`9:00 AM`).
    Time,
    /// A list of `HH:MM` times, each 12-hour.
    Times,
    /// A support tier (`tier2`) as its number (`2`).
    Tier,
    /// A dollar amount as `{"amount_cents", "currency"}`.
    Money,
}

/// A v2 date format.
#[derive(Debug, Clone, Copy)]
pub enum DateStyle {
    /// `05/01/2026`, day first (scheduling).
    DayFirst,
    /// `05JAN2026`, airline style (travel).
    Airline,
    /// `01/05/2026`, month first (e-commerce).
    MonthFirst,
}

/// A domain's v2 shape: its rows, and the record (if any) whose flight-like
/// fields v2 nests in an object of their own.
#[derive(Debug, Clone, Copy)]
pub struct Mapping {
    /// The rows, applied in order (and undone in reverse).
    pub fields: &'static [Field],
    /// A record whose reference fields v2 nests under one key.
    pub nested_record: Option<NestedRecord>,
}

/// Fields of a record that describe another record and move, in v2, into an
/// object shaped like that record (a reservation's flight, in travel).
#[derive(Debug, Clone, Copy)]
pub struct NestedRecord {
    /// The v2 key of the nested object (`flight`).
    pub key: &'static str,
    /// The v1 key of the referenced record's id (`flight_id`); `id` inside.
    pub id: &'static str,
    /// The other v1 keys that move with it.
    pub fields: &'static [&'static str],
}

/// Applies a domain's rows to one object whose children are already v2.
fn object_to_v2(domain: Domain, mut map: Map<String, Value>) -> Map<String, Value> {
    if let Some(nested) = domain.drift().nested_record {
        nest_record(domain, nested, &mut map);
    }
    for field in domain.drift().fields {
        let Some(value) = map.get(field.v1) else { continue };
        match field.within {
            None => {
                // Never overwrite: a key already in the v2 place keeps both values.
                if field.v2 != field.v1 && map.contains_key(field.v2) {
                    continue;
                }
                let value = field.conv.to_v2(value);
                map.remove(field.v1);
                map.insert(field.v2.to_owned(), value);
            }
            Some(within) => {
                let free = match map.get(within) {
                    None => true,
                    Some(Value::Object(inner)) => !inner.contains_key(field.v2),
                    Some(_) => false,
                };
                if !free {
                    continue;
                }
                let value = field.conv.to_v2(value);
                map.remove(field.v1);
                if let Value::Object(inner) = map.entry(within).or_insert_with(|| Value::Object(Map::new())) {
                    inner.insert(field.v2.to_owned(), value);
                }
            }
        }
    }
    map
}

/// Applies a domain's rows backwards to one object whose children are already v1.
fn object_to_v1(domain: Domain, mut map: Map<String, Value>) -> Map<String, Value> {
    // Undone in reverse order, as a sequence of moves is.
    for field in domain.drift().fields.iter().rev() {
        // Never overwrite: a v1 key already present keeps its value, and the v2 one stays.
        let moves = field.within.is_some() || field.v1 != field.v2;
        if moves && map.contains_key(field.v1) {
            continue;
        }
        match field.within {
            None => {
                if let Some(value) = map.remove(field.v2) {
                    map.insert(field.v1.to_owned(), field.conv.to_v1(&value));
                }
            }
            Some(within) => {
                let Some(Value::Object(inner)) = map.get_mut(within) else { continue };
                let Some(value) = inner.remove(field.v2) else { continue };
                if inner.is_empty() {
                    map.remove(within);
                }
                map.insert(field.v1.to_owned(), field.conv.to_v1(&value));
            }
        }
    }
    if let Some(nested) = domain.drift().nested_record {
        flatten_record(nested, &mut map);
    }
    map
}

/// Moves a v1 record's reference fields (a reservation's flight) into a v2
/// object shaped like the record they refer to.
fn nest_record(domain: Domain, nested: NestedRecord, map: &mut Map<String, Value>) {
    if map.contains_key(nested.key) {
        return;
    }
    let Some(id) = map.remove(nested.id) else { return };
    let mut inner = Map::new();
    inner.insert("id".to_owned(), id);
    for key in nested.fields {
        if let Some(value) = map.remove(*key) {
            inner.insert((*key).to_owned(), value);
        }
    }
    map.insert(nested.key.to_owned(), Value::Object(object_to_v2(domain, inner)));
}

/// Undoes [`nest_record`]: an object holding only a record's reference
/// fields (already back in v1) is flattened. A full record (the flight of a
/// hold also has a price and seats) stays nested.
fn flatten_record(nested: NestedRecord, map: &mut Map<String, Value>) {
    let is_reference = match map.get(nested.key) {
        Some(Value::Object(inner)) => {
            inner.contains_key("id")
                && inner.keys().all(|k| k == "id" || nested.fields.contains(&k.as_str()))
                && !map.contains_key(nested.id)
                && nested.fields.iter().all(|k| !map.contains_key(*k))
        }
        _ => false,
    };
    if !is_reference {
        return;
    }
    if let Some(Value::Object(inner)) = map.remove(nested.key) {
        for (key, value) in inner {
            let key = if key == "id" { nested.id.to_owned() } else { key };
            map.insert(key, value);
        }
    }
}

impl Conv {
    /// The v2 form of a v1 value; unchanged when it is not what the row expects.
    fn to_v2(self, value: &Value) -> Value {
        let converted = match (self, value) {
            (Conv::Same, _) => None,
            (Conv::Date(style), Value::String(s)) => Date::parse(s).map(|d| Value::from(style.format(d))),
            (Conv::DatesInText(style), Value::String(s)) => Some(Value::from(rewrite_dates(s, Date::parse, ISO_LEN, |d| style.format(d)))),
            (Conv::Time, Value::String(s)) => parse_time(s).map(|m| Value::from(format_12h(m))),
            (Conv::Times, Value::Array(items)) => Some(Value::Array(items.iter().map(|item| Conv::Time.to_v2(item)).collect())),
            (Conv::Tier, Value::String(s)) => tier_number(s).map(Value::from),
            (Conv::Money, Value::Number(n)) => n.as_f64().and_then(whole_cents).map(money),
            _ => None,
        };
        converted.unwrap_or_else(|| value.clone())
    }

    /// The v1 form of a v2 value; unchanged when it is not what the row writes.
    fn to_v1(self, value: &Value) -> Value {
        let converted = match (self, value) {
            (Conv::Same, _) => None,
            (Conv::Date(style), Value::String(s)) => style.parse(s).map(|d| Value::from(d.to_string())),
            (Conv::DatesInText(style), Value::String(s)) => {
                Some(Value::from(rewrite_dates(s, |t| style.parse(t), style.len(), |d| d.to_string())))
            }
            (Conv::Time, Value::String(s)) => parse_12h(s).map(|m| Value::from(format_time(m))),
            (Conv::Times, Value::Array(items)) => Some(Value::Array(items.iter().map(|item| Conv::Time.to_v1(item)).collect())),
            (Conv::Tier, Value::Number(n)) => n.as_u64().map(|level| Value::from(format!("tier{level}"))),
            (Conv::Money, Value::Object(m)) => dollars(m),
            _ => None,
        };
        converted.unwrap_or_else(|| value.clone())
    }
}

/// Length of a `YYYY-MM-DD` date.
const ISO_LEN: usize = 10;

const MONTHS: [&str; 12] = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];

impl DateStyle {
    fn format(self, date: Date) -> String {
        let (y, m, d) = date.ymd();
        match self {
            DateStyle::DayFirst => format!("{d:02}/{m:02}/{y:04}"),
            DateStyle::Airline => format!("{d:02}{}{y:04}", MONTHS[(m - 1) as usize % 12]),
            DateStyle::MonthFirst => format!("{m:02}/{d:02}/{y:04}"),
        }
    }

    /// Length of a date written in this style.
    fn len(self) -> usize {
        match self {
            DateStyle::DayFirst | DateStyle::MonthFirst => 10,
            DateStyle::Airline => 9,
        }
    }

    /// Reads a date written by [`DateStyle::format`]; `None` for anything else.
    fn parse(self, text: &str) -> Option<Date> {
        if text.len() != self.len() || !text.is_ascii() {
            return None;
        }
        let number = |range: std::ops::Range<usize>| -> Option<i64> {
            let part = text.get(range)?;
            // Digits only: `parse` would also take a sign.
            part.bytes().all(|b| b.is_ascii_digit()).then(|| part.parse().ok())?
        };
        let (year, month, day) = match self {
            DateStyle::DayFirst | DateStyle::MonthFirst => {
                if text.as_bytes()[2] != b'/' || text.as_bytes()[5] != b'/' {
                    return None;
                }
                let (first, second) = (number(0..2)?, number(3..5)?);
                let (month, day) = if matches!(self, DateStyle::MonthFirst) { (first, second) } else { (second, first) };
                (number(6..10)?, month, day)
            }
            DateStyle::Airline => {
                let month = MONTHS.iter().position(|m| Some(*m) == text.get(2..5))? + 1;
                (number(5..9)?, month as i64, number(0..2)?)
            }
        };
        Date::from_ymd(year, u32::try_from(month).ok()?, u32::try_from(day).ok()?)
    }
}

/// Rewrites every date in `text` that `parse` reads from exactly `len` bytes
/// not touching other digits.
fn rewrite_dates(text: &str, parse: impl Fn(&str) -> Option<Date>, len: usize, write: impl Fn(Date) -> String) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut i) = (0, 0);
    while i + len <= bytes.len() {
        let bounded = (i == 0 || !bytes[i - 1].is_ascii_digit()) && bytes.get(i + len).is_none_or(|b| !b.is_ascii_digit());
        match text.get(i..i + len).filter(|_| bounded).and_then(&parse) {
            Some(date) => {
                out.push_str(&text[copied..i]);
                out.push_str(&write(date));
                i += len;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// `570` (minutes after midnight) → `9:30 AM`.
fn format_12h(minutes: u32) -> String {
    let (hour, minute) = (minutes / 60, minutes % 60);
    let suffix = if hour < 12 { "AM" } else { "PM" };
    let hour = match hour % 12 {
        0 => 12,
        h => h,
    };
    format!("{hour}:{minute:02} {suffix}")
}

/// Reads what [`format_12h`] writes; `None` for anything else.
fn parse_12h(text: &str) -> Option<u32> {
    let (clock, suffix) = text.split_once(' ')?;
    let (hour, minute) = clock.split_once(':')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(hour) || !digits(minute) || hour.len() > 2 || hour.starts_with('0') || minute.len() != 2 {
        return None;
    }
    let (hour, minute): (u32, u32) = (hour.parse().ok()?, minute.parse().ok()?);
    if !(1..=12).contains(&hour) || minute >= 60 {
        return None;
    }
    let afternoon = match suffix {
        "AM" => 0,
        "PM" => 12,
        _ => return None,
    };
    Some(((hour % 12) + afternoon) * 60 + minute)
}

/// `tier2` → 2; `None` unless written exactly so (no sign, no leading zero).
fn tier_number(text: &str) -> Option<u64> {
    let digits = text.strip_prefix("tier")?;
    let canonical = !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit()) && !digits.starts_with('0');
    canonical.then(|| digits.parse().ok())?
}

/// A dollar amount in whole cents, if it is one exactly (as every amount the
/// shop writes is), so that the cents read back to the same number.
fn whole_cents(dollars: f64) -> Option<i64> {
    let cents = (dollars * 100.0).round();
    // 2^53: every integer up to it is an exact f64.
    let exact = cents.abs() <= 9_007_199_254_740_992.0 && cents / 100.0 == dollars;
    exact.then_some(cents as i64)
}

fn money(cents: i64) -> Value {
    let mut map = Map::new();
    map.insert("amount_cents".to_owned(), Value::from(cents));
    map.insert("currency".to_owned(), Value::from(CURRENCY));
    Value::Object(map)
}

/// Reads what [`money`] writes back as dollars.
fn dollars(map: &Map<String, Value>) -> Option<Value> {
    if map.len() != 2 || map.get("currency").and_then(Value::as_str) != Some(CURRENCY) {
        return None;
    }
    let cents = map.get("amount_cents")?.as_i64()?;
    Some(Value::from(cents as f64 / 100.0))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn date_and_time_formats_round_trip() {
        let start = Date::parse("1999-12-25").unwrap();
        for i in 0..20_000 {
            let date = start.add_days(i);
            for style in [DateStyle::DayFirst, DateStyle::Airline, DateStyle::MonthFirst] {
                let text = style.format(date);
                assert_eq!(text.len(), style.len());
                assert_eq!(style.parse(&text), Some(date), "{text}");
            }
        }
        assert_eq!(DateStyle::Airline.format(Date::parse("2026-12-31").unwrap()), "31DEC2026");
        for minutes in 0..24 * 60 {
            assert_eq!(parse_12h(&format_12h(minutes)), Some(minutes));
        }
        assert_eq!([0, 60, 719, 720, 780].map(format_12h), ["12:00 AM", "1:00 AM", "11:59 AM", "12:00 PM", "1:00 PM"]);
        for bad in ["09:00 AM", "13:00 PM", "0:30 AM", "9:00", "9:0 AM", "9:00 am", "+9:00 AM"] {
            assert_eq!(parse_12h(bad), None, "{bad}");
        }
        for bad in ["31/02/2026", "5/01/2026", "+5/01/2026", "05/01/26", "05jan2026", "05JAN+026"] {
            assert_eq!(DateStyle::DayFirst.parse(bad).or(DateStyle::Airline.parse(bad)), None, "{bad}");
        }
    }
}
