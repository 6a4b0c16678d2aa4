//! Schema drift on every domain's real results: the v2 shapes round-trip,
//! hide every ISO date, never collide and survive garbage.

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde_json::json;

use serde_json::{Map, Value};
use toolenv_core::{
    Domain,
    date::Date,
    drift::{API_VERSION_KEY, from_v2, to_v2},
};

use crate::agent::{play_calls, random_calls};

/// The length of an ISO date, `YYYY-MM-DD`.
const ISO_LEN: usize = 10;

/// Random-agent seeds per task in the round-trip corpus.
const SEEDS: u64 = 30;
/// Calls per random-agent episode.
const CALLS: usize = 40;

/// One real result: its domain, tool and v1 value.
type Sample = (Domain, String, Value);

/// Real results of every tool: each task's reference solution, seeded
/// random agents from the initial state, and seeded random agents after
/// the reference solution (so reads see what the writes made). Played once
/// for all the tests here.
fn corpus() -> &'static [Sample] {
    static CORPUS: std::sync::LazyLock<Vec<Sample>> = std::sync::LazyLock::new(play_corpus);
    &CORPUS
}

fn play_corpus() -> Vec<Sample> {
    let mut samples = Vec::new();
    for task in crate::suite() {
        let mut episodes = vec![play_calls(task, 0, 0, &task.reference)];
        for seed in 0..SEEDS {
            let random = random_calls(task, seed, CALLS);
            episodes.push(play_calls(task, seed, 0, &random));
            episodes.push(play_calls(task, seed, 1, &[task.reference.clone(), random].concat()));
        }
        for episode in &episodes {
            for record in &episode.trajectory().calls {
                if let Some(value) = record.outcome.result_value() {
                    samples.push((task.domain, record.tool.to_string(), value));
                }
            }
        }
    }
    samples
}

#[test]
fn every_real_result_of_every_tool_round_trips() {
    let samples = corpus();
    let mut per_tool: BTreeMap<(Domain, &str), usize> = BTreeMap::new();
    let mut changed: BTreeMap<(Domain, &str), usize> = BTreeMap::new();
    let (mut empty_lists, mut nulls) = (BTreeMap::new(), BTreeMap::new());
    for (domain, tool, v1) in samples {
        let v2 = to_v2(*domain, tool, v1);
        assert_eq!(from_v2(*domain, tool, &v2), *v1, "{domain} {tool}: v2 was {v2:#}");
        assert_eq!(to_v2(*domain, tool, v1), v2, "{domain} {tool}: not deterministic");
        *per_tool.entry((*domain, tool.as_str())).or_default() += 1;
        let mut unmarked = v2.clone();
        if let Some(map) = unmarked.as_object_mut() {
            map.remove(API_VERSION_KEY);
        }
        if unmarked != *v1 {
            *changed.entry((*domain, tool.as_str())).or_default() += 1;
        }
        if contains(v1, &|v| v.as_array().is_some_and(Vec::is_empty)) {
            *empty_lists.entry(*domain).or_insert(0) += 1;
        }
        if contains(v1, &Value::is_null) {
            *nulls.entry(*domain).or_insert(0) += 1;
        }
    }
    for domain in crate::registry::ALL {
        for tool in domain.tools().iter() {
            assert!(per_tool.contains_key(&(domain, tool.name)), "no real result of {domain} {}", tool.name);
            assert!(changed.contains_key(&(domain, tool.name)), "v2 never changes {domain} {}", tool.name);
        }
        assert!(empty_lists.contains_key(&domain), "no {domain} result with an empty list");
        assert!(nulls.contains_key(&domain), "no {domain} result with a null");
    }
    assert!(samples.len() > 5_000, "only {} samples", samples.len());
}

fn contains(value: &Value, pred: &dyn Fn(&Value) -> bool) -> bool {
    pred(value)
        || match value {
            Value::Object(map) => map.values().any(|v| contains(v, pred)),
            Value::Array(items) => items.iter().any(|v| contains(v, pred)),
            _ => false,
        }
}

/// v2 keys whose values are free text or echoed codes, passed through
/// verbatim even when they hold a date.
fn free_text(domain: Domain) -> &'static [&'static str] {
    match domain.name() {
        "scheduling" => &["title"],
        // search_flights echoes the codes searched for, whatever they were.
        "travel" => &["from", "to"],
        "support" => &["summary", "description", "notes", "resolution", "reason", "query", "content", "title", "display_name"],
        "ecommerce" => &["reason", "address", "name"],
        other => panic!("no free text listed for {other}"),
    }
}

/// Where a string holds a `YYYY-MM-DD` date outside free text: (key, text).
fn iso_dates(domain: Domain, value: &Value) -> Vec<(String, String)> {
    fn walk(domain: Domain, key: &str, value: &Value, out: &mut Vec<(String, String)>) {
        match value {
            Value::String(s) if !free_text(domain).contains(&key) && has_iso_date(s) => out.push((key.to_owned(), s.clone())),
            Value::Object(map) => {
                for (k, v) in map {
                    if has_iso_date(k) {
                        out.push((k.clone(), "(a key)".to_owned()));
                    }
                    walk(domain, k, v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(domain, key, v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(domain, "", value, &mut out);
    out
}

fn has_iso_date(text: &str) -> bool {
    (0..text.len()).any(|i| text.get(i..i + ISO_LEN).is_some_and(|t| Date::parse(t).is_some()))
}

#[test]
fn no_iso_date_survives_in_v2() {
    let mut v1_dates: BTreeMap<Domain, usize> = BTreeMap::new();
    for (domain, tool, v1) in corpus() {
        *v1_dates.entry(*domain).or_default() += iso_dates(*domain, v1).len();
        let v2 = to_v2(*domain, tool, v1);
        assert_eq!(iso_dates(*domain, &v2), Vec::<(String, String)>::new(), "{domain} {tool}: {v2:#}");
    }
    // The check has teeth: v1 results are full of dates (support has none outside free text).
    for domain in [crate::registry::SCHEDULING, crate::registry::TRAVEL, crate::registry::ECOMMERCE] {
        assert!(v1_dates.get(&domain).is_some_and(|n| *n > 100), "{domain}: {v1_dates:?}");
    }
}

#[test]
fn every_object_result_is_marked_v2() {
    for (domain, tool, v1) in corpus().iter().step_by(7) {
        assert_eq!(to_v2(*domain, tool, v1)[API_VERSION_KEY], json!("v2"), "{domain} {tool}");
    }
    assert_eq!(to_v2(crate::registry::TRAVEL, "x", &json!({})), json!({"api_version": "v2"}));
    assert_eq!(from_v2(crate::registry::TRAVEL, "x", &json!({"api_version": "v2"})), json!({}));
    assert_eq!(to_v2(crate::registry::TRAVEL, "x", &json!([1])), json!([1]), "only objects are marked");
}

/// The result of call `index` of a task's reference solution, played from its initial state.
fn reference_result(task_id: &str, index: usize) -> Value {
    let task = crate::task(task_id).unwrap_or_else(|| panic!("no task {task_id}"));
    let episode = play_calls(task, 0, 0, &task.reference);
    let outcome = &episode.trajectory().calls[index].outcome;
    outcome.result_value().unwrap_or_else(|| panic!("{task_id} call {index}: {outcome:?}"))
}

/// Checks that `v1` is the real result of a reference call, that its v2
/// form is `v2` exactly, and that `v2` reads back to `v1`.
fn check_example(domain: Domain, (task_id, index): (&str, usize), v1: Value, v2: Value) {
    let tool = crate::task(task_id).unwrap().reference[index].tool;
    assert_eq!(reference_result(task_id, index), v1, "the v1 example is not what {task_id} call {index} returns");
    assert_eq!(to_v2(domain, tool, &v1), v2);
    assert_eq!(from_v2(domain, tool, &v2), v1);
}

#[test]
fn scheduling_v2_examples() {
    check_example(
        crate::registry::SCHEDULING,
        ("scheduling/conflict/003", 0),
        json!({
            "date": "2026-01-08", "time": "10:00", "available": false,
            "conflict": {"time": "10:00", "topic": "Hiring sync"},
            "free_slots": ["12:00", "13:00", "14:00", "15:00"]
        }),
        json!({
            "api_version": "v2",
            "when": {"day": "08/01/2026", "start": "10:00 AM"},
            "is_free": false,
            "conflict": {"title": "Hiring sync", "when": {"start": "10:00 AM"}},
            "open_slots": ["12:00 PM", "1:00 PM", "2:00 PM", "3:00 PM"]
        }),
    );
    check_example(
        crate::registry::SCHEDULING,
        ("scheduling/reschedule/004", 2),
        json!({"rescheduled": {
            "topic": "Client call", "from": {"date": "2026-01-12", "time": "15:00"}, "to": {"date": "2026-01-13", "time": "11:00"}
        }}),
        json!({"api_version": "v2", "rescheduled": {
            "title": "Client call",
            "from": {"when": {"day": "12/01/2026", "start": "3:00 PM"}},
            "to": {"when": {"day": "13/01/2026", "start": "11:00 AM"}}
        }}),
    );
}

#[test]
fn travel_v2_examples() {
    let flight = |number: &str, price: u32| {
        json!({
            "flight_number": number, "route": {"from": "LON", "to": "PAR"}, "departure_date": "05JAN2026",
            "fare": {"amount": price}, "availability": {"seats": 10}
        })
    };
    check_example(
        crate::registry::TRAVEL,
        ("travel/cheapest-flight/001", 0),
        json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05", "flights": [
            {"id": "BA-200", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 500, "seats_left": 10},
            {"id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05", "price": 300, "seats_left": 10}
        ]}),
        json!({
            "api_version": "v2", "route": {"from": "LON", "to": "PAR"}, "departure_date": "05JAN2026",
            "flights": [flight("BA-200", 500), flight("AA-500", 300)]
        }),
    );
    // A reservation's flight is nested and looks like the flights above.
    check_example(
        crate::registry::TRAVEL,
        ("travel/cheapest-flight/001", 3),
        json!({"confirmed": {
            "reservation_id": "R-0001", "flight_id": "AA-500", "origin": "LON", "dest": "PAR", "date": "2026-01-05",
            "passenger": "Bob", "status": "confirmed", "payment_info": "card_4242", "price": 300
        }}),
        json!({"api_version": "v2", "confirmed": {
            "booking_ref": "R-0001",
            "flight": {"flight_number": "AA-500", "route": {"from": "LON", "to": "PAR"}, "departure_date": "05JAN2026"},
            "passenger": "Bob", "status": "confirmed", "payment_method": "card_4242", "fare": {"amount": 300}
        }}),
    );
}

#[test]
fn support_v2_example() {
    let description = "Customer disputes our refusal to refund the $749.00 annual Pro renewal charged on 2025-12-20. \
                       She says she cancelled on 2025-12-18, before the renewal date.";
    let reason = "Refund dispute over $500: customer contests the refused $749.00 annual renewal refund.";
    check_example(
        crate::registry::SUPPORT,
        ("support/escalate-dispute/003", 4),
        json!({"escalated": {
            "ticket_id": "T-0002", "customer_id": "C-101", "subject": "Disputed refund for annual plan renewal",
            "description": description, "priority": "high", "status": "escalated", "tier": "tier2",
            "notes": [], "resolution": null, "escalation_reason": reason
        }}),
        json!({"api_version": "v2", "escalated": {
            "ticket_ref": "T-0002", "account_id": "C-101", "summary": "Disputed refund for annual plan renewal",
            "description": description, "state": {"priority": "high", "status": "escalated"},
            "escalation": {"level": 2, "reason": reason}, "notes": [], "resolution": null
        }}),
    );
}

#[test]
fn ecommerce_v2_examples() {
    let usd = |cents: i64| json!({"amount_cents": cents, "currency": "USD"});
    check_example(
        crate::registry::ECOMMERCE,
        ("ecommerce/return/005", 1),
        json!({"order": {
            "order_id": "O-0003", "customer_id": "C-202", "status": "delivered",
            "items": [
                {"sku": "SKU-204", "name": "Studio Over-Ear Headphones", "quantity": 1, "unit_price": 79.99},
                {"sku": "SKU-106", "name": "USB-C Cable 2 m", "quantity": 2, "unit_price": 9.99}
            ],
            "subtotal": 99.97, "discount": 15.0, "total": 84.97, "coupon_code": "TECH15",
            "shipping_address": "88 Harbor Road, Portland, ME 04101",
            "delivered_on": "2026-01-14", "returnable_until": "2026-02-13",
            "refunded": 0.0, "returned_skus": [], "returns": []
        }}),
        json!({"api_version": "v2", "order": {
            "order_number": "O-0003", "customer_id": "C-202",
            "fulfillment": {"status": "delivered", "delivered_on": "01/14/2026", "return_by": "02/13/2026"},
            "items": [
                {"product_id": "SKU-204", "name": "Studio Over-Ear Headphones", "quantity": 1, "unit_price": usd(7999)},
                {"product_id": "SKU-106", "name": "USB-C Cable 2 m", "quantity": 2, "unit_price": usd(999)}
            ],
            "subtotal": usd(9997), "discount": usd(1500), "total": usd(8497), "coupon": {"code": "TECH15"},
            "shipping": {"address": "88 Harbor Road, Portland, ME 04101"},
            "refunded": usd(0), "returned_product_ids": [], "returns": []
        }}),
    );
    // A coupon's terms are generated text: their date changes format too.
    let note = "one coupon per order; each customer may use a coupon once";
    check_example(
        crate::registry::ECOMMERCE,
        ("ecommerce/cheapest-coupon/002", 2),
        json!({
            "code": "SAVE10", "valid": true, "order_subtotal": 21.5, "discount": 2.15, "total": 19.35,
            "terms": "10% off subtotals of at least $0.00, until 2026-03-31", "note": note
        }),
        json!({
            "api_version": "v2", "code": "SAVE10", "valid": true,
            "order_subtotal": usd(2150), "discount": usd(215), "total": usd(1935),
            "terms": "10% off subtotals of at least $0.00, until 03/31/2026", "note": note
        }),
    );
}

#[test]
fn rows_never_collide() {
    // No v2 key of a domain is another row's v1 key, so the inverse reads each key one way.
    for domain in crate::registry::ALL {
        let rows = domain.drift().fields;
        for row in rows {
            let v2_top = row.within.unwrap_or(row.v2);
            for other in rows {
                let same_row = std::ptr::eq(row, other);
                assert!(same_row || other.v1 != v2_top, "{domain}: {} → {v2_top} is {}'s v1 key", row.v1, other.v1);
                assert!(same_row || other.v1 != row.v1, "{domain}: {} mapped twice", row.v1);
            }
        }
    }
}

/// Awkward values for every domain: wrong types under every key the
/// mappings know, v2 shapes where v1 ones are expected, extremes.
fn garbage() -> Vec<Value> {
    let mut keys: Vec<&str> = crate::registry::ALL
        .iter()
        .flat_map(|d| d.drift().fields)
        .flat_map(|f| [f.v1, f.v2].into_iter().chain(f.within))
        .chain(["flight", "flight_id", "api_version", "amount_cents", "currency", "day", "start"])
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let scalars = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e308),
        json!(-0.0),
        json!(0.1),
        json!(19.99),
        json!(""),
        json!("2026-01-05"),
        json!("05/01/2026"),
        json!("05JAN2026"),
        json!("99/99/9999"),
        json!("12:00 PM"),
        json!("23:59"),
        json!("tier0"),
        json!("tier99999999999999999999"),
        json!("ü2026-01-05ü until 2026-02-30 and 12/31/2026"),
        json!({"amount_cents": i64::MAX, "currency": "USD"}),
        json!({"amount_cents": 1e300, "currency": "USD"}),
        json!({"amount_cents": 5}),
    ];
    let mut values: Vec<Value> = scalars.to_vec();
    values.push(Value::Array(scalars.to_vec()));
    values.push(json!([1, "a", null, [], {}, [[{"date": 3}]], {"time": ["09:00", 9]}]));
    for key in &keys {
        for scalar in &scalars {
            values.push(json!({ *key: scalar }));
            values.push(json!({ *key: [scalar, {*key: scalar}] }));
        }
        values.push(json!({*key: {"from": 1, "to": [], "day": 2, "start": {}, "amount": null, "seats": "x", "flight_number": 1}}));
    }
    // Every key at once, with a date, a v2 shape and a v1 shape.
    let all: Map<String, Value> = keys.iter().map(|k| (k.to_string(), json!("2026-01-05"))).collect();
    values.push(Value::Object(all.clone()));
    let mut shaped = all;
    for container in ["when", "route", "fare", "availability", "state", "escalation", "fulfillment", "flight", "coupon"] {
        shaped.insert(container.to_owned(), json!({"day": "05/01/2026", "from": "x", "id": "AA-1", "status": 1, "level": 3}));
    }
    values.push(Value::Object(shaped));
    // Deep nesting, past the conversion limit.
    let (mut deep_object, mut deep_array) = (json!({"date": "2026-01-05"}), json!(["09:00"]));
    for i in 0..1000 {
        let key = keys[i % keys.len()];
        deep_object = json!({ key: deep_object, "date": "2026-01-05" });
        deep_array = json!([deep_array, {"free_slots": ["09:00"]}]);
    }
    values.push(deep_object);
    values.push(deep_array);
    values.extend(random_values(&keys, &scalars, 2_000));
    values
}

/// Seeded random JSON built from the mappings' keys and awkward scalars.
fn random_values(keys: &[&str], scalars: &[Value], count: usize) -> Vec<Value> {
    fn build(rng: &mut ChaCha8Rng, keys: &[&str], scalars: &[Value], depth: u32) -> Value {
        let pick = |rng: &mut ChaCha8Rng, n: usize| (rng.next_u64() % n as u64) as usize;
        match pick(rng, if depth > 4 { 1 } else { 3 }) {
            0 => scalars[pick(rng, scalars.len())].clone(),
            1 => Value::Array((0..pick(rng, 4)).map(|_| build(rng, keys, scalars, depth + 1)).collect()),
            _ => Value::Object(
                (0..pick(rng, 6)).map(|_| (keys[pick(rng, keys.len())].to_owned(), build(rng, keys, scalars, depth + 1))).collect(),
            ),
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    (0..count).map(|_| build(&mut rng, keys, scalars, 0)).collect()
}

#[test]
fn garbage_never_panics() {
    let values = garbage();
    for domain in crate::registry::ALL {
        for value in &values {
            let v2 = to_v2(domain, "no_such_tool", value);
            let back = from_v2(domain, "no_such_tool", &v2);
            assert_eq!(to_v2(domain, "no_such_tool", value), v2, "deterministic");
            let _ = from_v2(domain, "", value);
            let _ = to_v2(domain, "", &back);
        }
    }
}

#[test]
fn unrecognized_values_pass_through() {
    // A date field that holds no date, money that is not whole cents, a taken v2 place.
    let odd = json!({"date": "soon", "time": 9, "free_slots": "all"});
    assert_eq!(
        to_v2(crate::registry::SCHEDULING, "check_availability", &odd),
        json!({"api_version": "v2", "when": {"day": "soon", "start": 9}, "open_slots": "all"})
    );
    let odd = json!({"price": 0.125, "total": "n/a", "sku": "A", "product_id": "B"});
    let v2 = to_v2(crate::registry::ECOMMERCE, "check_inventory", &odd);
    assert_eq!(v2, json!({"api_version": "v2", "price": 0.125, "total": "n/a", "sku": "A", "product_id": "B"}));
    assert_eq!(from_v2(crate::registry::ECOMMERCE, "check_inventory", &v2), odd);
    assert_eq!(
        to_v2(crate::registry::SUPPORT, "get_ticket", &json!({"tier": "gold"})),
        json!({"api_version": "v2", "escalation": {"level": "gold"}})
    );
}
