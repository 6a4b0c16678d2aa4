//! Unit tests of the e-commerce tools, and of the suite's e-commerce tasks
//! against plausible wrong agents.

use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

use super::tasks::{shop, tasks};
use super::{Coupon, Money, Order, OrderLine, OrderStatus, State};
use crate::agent::play_calls;
use toolenv_core::{Args, Call, Context, DomainError, DomainState, Reply, date::Date};

fn today() -> Date {
    Date::from_ymd(2026, 1, 20).unwrap()
}

fn state() -> State {
    serde_json::from_value(shop()).unwrap()
}

fn call(state: &mut State, tool: &str, args: Value) -> Result<Value, DomainError> {
    toolenv_core::testing::call(state, today(), tool, args)
}

/// Runs the handler of a tool of the table with arguments as they are, on
/// the context's day.
fn run(state: &mut State, tool: &str, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
    let tool = State::TOOLS.iter().find(|t| t.spec.name == tool).unwrap_or_else(|| panic!("no tool {tool}"));
    tool.call(state, args, ctx)
}

/// Calls a tool and asserts it failed with `code` and left the state as it was.
fn rejects(state: &mut State, tool: &str, args: Value, code: &str) -> String {
    let before = state.clone();
    let error = call(state, tool, args).unwrap_err();
    assert_eq!(error.code, code, "{}", error.message);
    assert_eq!(*state, before, "a rejected call changes nothing");
    error.message
}

fn order(customer: &str, items: Value, address: &str, coupon: Option<&str>) -> Value {
    json!({"customer_id": customer, "items": items, "shipping_address": address, "coupon_code": coupon})
}

const HOME_201: &str = "12 Elm Street, Springfield, IL 62704";
const HOME_202: &str = "88 Harbor Road, Portland, ME 04101";

fn ret(order_id: &str, items: &[&str]) -> Value {
    json!({"order_id": order_id, "items": items, "reason": "too tight", "refund_method": "original_payment"})
}

fn to_json(state: &State) -> Value {
    serde_json::to_value(state).unwrap()
}

/// The names of the checks an episode of `task_id` playing `calls` fails.
fn failed(task_id: &str, calls: &[Call]) -> Vec<String> {
    let task = crate::task(task_id).unwrap();
    let episode = play_calls(task, 0, 0, calls);
    episode.verdict().unwrap().failures().map(|c| c.name.clone()).collect()
}

fn create(customer: &str, sku: &str, quantity: u32, address: &str, coupon: Option<&str>) -> Call {
    Call::new("create_order", order(customer, json!([{"sku": sku, "quantity": quantity}]), address, coupon))
}

// --- money ---

#[test]
fn three_times_19_99_with_ten_percent_off_is_exact() {
    let mut s = state();
    let placed = call(&mut s, "create_order", order("C-201", json!([{"sku": "SKU-201", "quantity": 3}]), HOME_201, None)).unwrap();
    assert_eq!(placed["order"]["subtotal"], json!(59.97));
    let quote = call(&mut s, "apply_coupon", json!({"code": "SAVE10", "order_subtotal": 59.97})).unwrap();
    assert_eq!((quote["discount"].clone(), quote["total"].clone()), (json!(6.0), json!(53.97)));
    let mut s = state();
    call(
        &mut s,
        "create_order",
        order("C-203", json!([{"sku": "SKU-201", "quantity": 3}]), "5 Birch Lane, Austin, TX 78704", Some("SAVE10")),
    )
    .unwrap();
    let o = &s.orders["O-0004"];
    assert_eq!((o.subtotal, o.discount, o.total), (Money(5997), Money(600), Money(5397)));
    assert_eq!(to_json(&s)["orders"]["O-0004"]["total"].to_string(), "53.97");
}

#[test]
fn money_reads_and_writes_dollars_with_two_decimals() {
    for cents in [0, 1, 10, 1999, 2150, 5397, 8010, 99_999_999] {
        let text = serde_json::to_string(&Money(cents)).unwrap();
        assert_eq!(serde_json::from_str::<Money>(&text).unwrap(), Money(cents), "{text}");
    }
    assert_eq!(serde_json::to_string(&Money(1935)).unwrap(), "19.35");
    assert_eq!(Money::from_dollars(0.1 + 0.2), Some(Money(30)));
    assert_eq!(Money::from_dollars(-1.0), None);
    assert_eq!(Money::from_dollars(f64::MAX), None);
    assert!(serde_json::from_str::<Money>("19.999").is_err());
    assert!(serde_json::from_str::<Money>("-5").is_err());
    assert_eq!(Money(-1250).to_string(), "-$12.50");
    assert_eq!(Money(5).percent(50), Money(3), "half a cent rounds up");
}

#[test]
fn proportional_refund_of_part_of_a_discounted_order() {
    let s = state();
    // $79.99 + 2 x $9.99 = $99.97, less $15.00: the headphones carry 79.99/99.97 of the discount.
    assert_eq!(s.orders["O-0003"].line_payments(), vec![Money(6799), Money(1698)]);
    let mut s = state();
    let r = call(&mut s, "process_return", ret("O-0003", &["SKU-204"])).unwrap();
    assert_eq!(r["return"]["refund"], json!(67.99));
    assert_eq!(r["order"]["status"], json!("partially_returned"));
    let r = call(&mut s, "process_return", ret("O-0003", &["SKU-106"])).unwrap();
    assert_eq!(r["return"]["refund"], json!(16.98));
    let o = &s.orders["O-0003"];
    assert_eq!((o.status, o.refunded, o.returned_skus.clone()), (OrderStatus::Returned, o.total, vec!["SKU-204".into(), "SKU-106".into()]));
}

#[test]
fn refunds_over_all_lines_add_up_to_the_total_for_every_discount() {
    let items = vec![
        OrderLine { sku: "A".into(), quantity: 3, unit_price: Money(333) },
        OrderLine { sku: "B".into(), quantity: 1, unit_price: Money(1) },
        OrderLine { sku: "C".into(), quantity: 2, unit_price: Money(777) },
        OrderLine { sku: "D".into(), quantity: 7, unit_price: Money(1299) },
    ];
    let subtotal = Money(3 * 333 + 1 + 2 * 777 + 7 * 1299);
    for discount in 0..=subtotal.0 {
        let order = Order {
            customer_id: "C-1".into(),
            items: items.clone(),
            subtotal,
            discount: Money(discount),
            total: Money(subtotal.0 - discount),
            coupon_code: None,
            shipping_address: String::new(),
            status: OrderStatus::Delivered,
            delivered_on: Some("2026-01-19".into()),
            refunded: Money::ZERO,
            returned_skus: Vec::new(),
            returns: Vec::new(),
        };
        let payments = order.line_payments();
        assert_eq!(payments.iter().map(|m| m.0).sum::<i64>(), order.total.0, "discount {discount}");
        for (line, paid) in items.iter().zip(&payments) {
            assert!(Money::ZERO <= *paid && *paid <= line.unit_price.times(line.quantity), "discount {discount}: {paid}");
        }
    }
}

#[test]
fn returning_every_line_one_by_one_refunds_exactly_the_total() {
    let mut s = state();
    let items = json!([{"sku": "SKU-101", "quantity": 3}, {"sku": "SKU-106", "quantity": 1}, {"sku": "SKU-303", "quantity": 1}]);
    call(&mut s, "create_order", order("C-201", items, HOME_201, Some("TECH15"))).unwrap();
    let o = s.orders.get_mut("O-0004").unwrap();
    (o.status, o.delivered_on) = (OrderStatus::Delivered, Some("2026-01-19".into()));
    let total = o.total;
    for sku in ["SKU-303", "SKU-101", "SKU-106"] {
        call(&mut s, "process_return", ret("O-0004", &[sku])).unwrap();
    }
    let o = &s.orders["O-0004"];
    assert_eq!((o.refunded, o.status), (total, OrderStatus::Returned));
    assert_eq!(o.returns.iter().map(|r| r.amount.0).sum::<i64>(), total.0);
}

// --- ids ---

#[test]
fn order_ids_are_sequential_per_episode() {
    let mut s = state();
    let place = |s: &mut State| call(s, "create_order", order("C-201", json!([{"sku": "SKU-106", "quantity": 1}]), HOME_201, None));
    assert_eq!(place(&mut s).unwrap()["order"]["order_id"], json!("O-0004"));
    rejects(&mut s, "create_order", order("C-201", json!([{"sku": "SKU-102", "quantity": 1}]), HOME_201, None), "OUT_OF_STOCK");
    assert_eq!(place(&mut s).unwrap()["order"]["order_id"], json!("O-0005"));
    let mut empty = State { products: s.products.clone(), customers: s.customers.clone(), ..State::default() };
    assert_eq!(place(&mut empty).unwrap()["order"]["order_id"], json!("O-0001"));
    let mut sparse = shop();
    let o3 = sparse["orders"]["O-0003"].clone();
    sparse["orders"].as_object_mut().unwrap().insert("O-0009".into(), o3);
    let mut sparse: State = serde_json::from_value(sparse).unwrap();
    assert_eq!(place(&mut sparse).unwrap()["order"]["order_id"], json!("O-0010"));
    assert!(!to_json(&sparse).as_object().unwrap().contains_key("next_order"), "the counter is not state");
}

// --- state ---

#[test]
fn states_round_trip_and_inconsistent_states_are_refused() {
    // Everything reads back as written (numbers compared by value).
    let (written, read) = (shop(), to_json(&state()));
    assert!(
        toolenv_core::json::matches(&written, &read) && toolenv_core::json::matches(&read, &written),
        "{}",
        toolenv_core::json::canonical(&read)
    );
    let mut unknown = shop();
    unknown["products"]["SKU-101"]["colour"] = json!("red");
    assert!(serde_json::from_value::<State>(unknown).is_err());
    let mut total = shop();
    total["orders"]["O-0003"]["total"] = json!(84.96);
    assert!(serde_json::from_value::<State>(total).unwrap_err().to_string().contains("do not add up"));
    let mut coupon = shop();
    coupon["coupons"]["HOME5"]["percent_off"] = json!(5);
    assert!(serde_json::from_value::<State>(coupon).is_err());
    let mut refunded = shop();
    refunded["orders"]["O-0003"]["status"] = json!("partially_returned");
    refunded["orders"]["O-0003"]["returned_skus"] = json!(["SKU-204"]);
    refunded["orders"]["O-0003"]["refunded"] = json!(79.99);
    refunded["orders"]["O-0003"]["returns"] =
        json!([{"skus": ["SKU-204"], "reason": "r", "refund_method": "original_payment", "amount": 79.99}]);
    let refused = serde_json::from_value::<State>(refunded.clone()).unwrap_err().to_string();
    assert!(refused.contains("what was paid for the returned lines, $67.99"), "{refused}");
    refunded["orders"]["O-0003"]["refunded"] = json!(67.99);
    refunded["orders"]["O-0003"]["returns"][0]["amount"] = json!(67.99);
    serde_json::from_value::<State>(refunded).unwrap();
    let mut delivered = shop();
    delivered["orders"]["O-0001"]["delivered_on"] = Value::Null;
    assert!(serde_json::from_value::<State>(delivered).is_err());
}

// --- lookups and search ---

#[test]
fn unknown_ids_are_errors() {
    let mut s = state();
    rejects(&mut s, "get_customer", json!({"customer_id": "C-999"}), "UNKNOWN_CUSTOMER");
    rejects(&mut s, "list_orders", json!({"customer_id": ""}), "UNKNOWN_CUSTOMER");
    rejects(&mut s, "check_inventory", json!({"sku": "SKU-999"}), "UNKNOWN_SKU");
    rejects(&mut s, "check_order_status", json!({"order_id": "O-0099"}), "UNKNOWN_ORDER");
    rejects(&mut s, "apply_coupon", json!({"code": "FREE", "order_subtotal": 10}), "UNKNOWN_COUPON");
    rejects(&mut s, "create_order", order("C-999", json!([{"sku": "SKU-101", "quantity": 1}]), HOME_201, None), "UNKNOWN_CUSTOMER");
    rejects(&mut s, "create_order", order("C-201", json!([{"sku": "SKU-999", "quantity": 1}]), HOME_201, None), "UNKNOWN_SKU");
    rejects(&mut s, "create_order", order("C-201", json!([{"sku": "SKU-101", "quantity": 1}]), HOME_201, Some("FREE")), "UNKNOWN_COUPON");
    rejects(&mut s, "process_return", ret("O-0099", &["SKU-101"]), "UNKNOWN_ORDER");
    // Ids are matched ignoring case and surrounding spaces.
    assert_eq!(call(&mut s, "check_inventory", json!({"sku": " sku-101 "})).unwrap()["sku"], json!("SKU-101"));
}

#[test]
fn search_filters_in_sku_order() {
    let mut s = state();
    let skus = |r: Value| r["products"].as_array().unwrap().iter().map(|p| p["sku"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
    let r = call(&mut s, "search_products", json!({"query": "wireless mouse"})).unwrap();
    assert_eq!(
        r["products"][1],
        json!({
            "sku": "SKU-102", "name": "Glide Wireless Mouse", "category": "accessories", "price": 19.99, "stock": 0, "in_stock": false
        })
    );
    assert_eq!(skus(r), ["SKU-101", "SKU-102", "SKU-103"]);
    assert_eq!(skus(call(&mut s, "search_products", json!({"query": "Electric kettles"})).unwrap()), ["SKU-301", "SKU-302", "SKU-303"]);
    let r = call(&mut s, "search_products", json!({"category": "Audio", "min_price": 10, "max_price": 34.99})).unwrap();
    assert_eq!(skus(r), ["SKU-201", "SKU-202"]);
    assert_eq!(call(&mut s, "search_products", json!({})).unwrap()["count"], json!(14));
    let m = rejects(&mut s, "search_products", json!({"category": "garden"}), "UNKNOWN_CATEGORY");
    assert_eq!(m, "no category 'garden'; categories: accessories, audio, kitchen");
    rejects(&mut s, "search_products", json!({"min_price": 30, "max_price": 20}), "INVALID_RANGE");
    rejects(&mut s, "search_products", json!({"max_price": -1}), "INVALID_AMOUNT");
    rejects(&mut s, "search_products", json!({"query": "x".repeat(501)}), "TEXT_TOO_LONG");
}

#[test]
fn views_show_addresses_used_coupons_and_the_return_window() {
    let mut s = state();
    let c = call(&mut s, "get_customer", json!({"customer_id": "C-201"})).unwrap();
    assert_eq!(c["addresses"][1], json!({"label": "work", "address": "400 Market Street, Suite 210, Springfield, IL 62701"}));
    assert_eq!(c["coupons_used"], json!(["SAVE10"]));
    let o = call(&mut s, "check_order_status", json!({"order_id": "O-0003"})).unwrap();
    assert_eq!(o["order"]["returnable_until"], json!("2026-02-13"));
    assert_eq!(o["order"]["items"][0]["name"], json!("Studio Over-Ear Headphones"));
    let listed = call(&mut s, "list_orders", json!({"customer_id": "C-202"})).unwrap();
    let ids: Vec<&Value> = listed["orders"].as_array().unwrap().iter().map(|o| &o["order_id"]).collect();
    assert_eq!(ids, [&json!("O-0001"), &json!("O-0003")]);
}

// --- orders ---

#[test]
fn an_order_takes_its_items_out_of_stock() {
    let mut s = state();
    let items = json!([{"sku": "SKU-303", "quantity": 3}, {"sku": "SKU-106", "quantity": 10}]);
    let r = call(&mut s, "create_order", order("C-201", items, "  12 elm street,  springfield, IL 62704 ", None)).unwrap();
    assert_eq!(r["order"]["shipping_address"], json!(HOME_201), "the address on file is stored");
    assert_eq!((s.products["SKU-303"].stock, s.products["SKU-106"].stock), (0, 90));
    assert_eq!(s.orders["O-0004"].status, OrderStatus::Placed);
    assert_eq!(s.orders["O-0004"].total, Money(3 * 4490 + 10 * 999));
    assert_eq!(call(&mut s, "check_inventory", json!({"sku": "SKU-303"})).unwrap()["in_stock"], json!(false));
}

#[test]
fn out_of_stock_is_an_error() {
    let m =
        rejects(&mut state(), "create_order", order("C-201", json!([{"sku": "SKU-102", "quantity": 1}]), HOME_201, None), "OUT_OF_STOCK");
    assert_eq!(m, "SKU-102 (Glide Wireless Mouse) is out of stock: 0 available");
}

#[test]
fn insufficient_stock_names_what_is_available() {
    let items = json!([{"sku": "SKU-101", "quantity": 1}, {"sku": "SKU-303", "quantity": 4}]);
    let m = rejects(&mut state(), "create_order", order("C-201", items, HOME_201, None), "INSUFFICIENT_STOCK");
    assert_eq!(m, "only 3 of SKU-303 in stock; 4 requested");
}

#[test]
fn the_same_sku_twice_must_be_merged() {
    let items = json!([{"sku": "SKU-101", "quantity": 1}, {"sku": "sku-101", "quantity": 2}]);
    rejects(&mut state(), "create_order", order("C-201", items, HOME_201, None), "DUPLICATE_SKU");
}

#[test]
fn quantities_are_1_to_100() {
    let mut s = state();
    s.products.get_mut("SKU-106").unwrap().stock = 500;
    for quantity in [0, 101, -1] {
        let items = json!([{"sku": "SKU-106", "quantity": quantity}]);
        rejects(&mut s, "create_order", order("C-201", items, HOME_201, None), "INVALID_QUANTITY");
    }
    call(&mut s, "create_order", order("C-201", json!([{"sku": "SKU-106", "quantity": 100}]), HOME_201, None)).unwrap();
}

#[test]
fn an_order_has_1_to_20_lines() {
    let mut s = state();
    rejects(&mut s, "create_order", order("C-201", json!([]), HOME_201, None), "EMPTY_ORDER");
    let many: Vec<Value> = (0..21).map(|i| json!({"sku": format!("SKU-{i}"), "quantity": 1})).collect();
    rejects(&mut s, "create_order", order("C-201", Value::from(many), HOME_201, None), "TOO_MANY_LINES");
}

#[test]
fn the_address_must_be_on_file() {
    let items = json!([{"sku": "SKU-101", "quantity": 1}]);
    let m = rejects(&mut state(), "create_order", order("C-201", items.clone(), "home", None), "ADDRESS_NOT_ON_FILE");
    assert_eq!(
        m,
        "'home' is not an address on file for C-201; addresses on file: home: 12 Elm Street, Springfield, IL 62704; \
         work: 400 Market Street, Suite 210, Springfield, IL 62701"
    );
    rejects(&mut state(), "create_order", order("C-201", items, HOME_202, None), "ADDRESS_NOT_ON_FILE");
}

// --- coupons ---

#[test]
fn an_expired_coupon_is_refused() {
    let mut s = state();
    let m = rejects(&mut s, "apply_coupon", json!({"code": "WINTER25", "order_subtotal": 27.49}), "COUPON_EXPIRED");
    assert_eq!(m, "coupon WINTER25 expired on 2026-01-15; today is 2026-01-20");
    let items = json!([{"sku": "SKU-302", "quantity": 1}]);
    rejects(&mut s, "create_order", order("C-201", items, HOME_201, Some("WINTER25")), "COUPON_EXPIRED");
    // A coupon is still good on its expiry date.
    let ctx = Context { today: Date::from_ymd(2026, 1, 15).unwrap() };
    let args = Args::from_map(json!({"code": "WINTER25", "order_subtotal": 10}).as_object().unwrap().clone());
    let reply = run(&mut s, "apply_coupon", &args, &ctx).unwrap();
    assert!(!reply.changed);
    assert_eq!(serde_json::from_str::<Value>(&reply.text).unwrap()["discount"], json!(2.5));
}

#[test]
fn a_coupon_needs_its_minimum_subtotal() {
    let mut s = state();
    let m = rejects(&mut s, "apply_coupon", json!({"code": "BIG20", "order_subtotal": 149.99}), "COUPON_MINIMUM_NOT_MET");
    assert_eq!(m, "coupon BIG20 needs a subtotal of at least $150.00; the subtotal is $149.99");
    assert_eq!(call(&mut s, "apply_coupon", json!({"code": "BIG20", "order_subtotal": 150})).unwrap()["total"], json!(130.0));
    let items = json!([{"sku": "SKU-304", "quantity": 1}]);
    rejects(&mut s, "create_order", order("C-201", items, HOME_201, Some("HOME5")), "COUPON_MINIMUM_NOT_MET");
}

#[test]
fn one_coupon_per_order() {
    let mut s = state();
    let items = json!([{"sku": "SKU-302", "quantity": 1}]);
    for codes in ["HOME5,SAVE10", "HOME5, SAVE10", "HOME5 SAVE10", "HOME5;WINTER25", "HOME5+SAVE10"] {
        rejects(
            &mut s,
            "create_order",
            order("C-204", items.clone(), "27 Willow Court, Madison, WI 53703", Some(codes)),
            "ONE_COUPON_PER_ORDER",
        );
    }
    rejects(&mut s, "apply_coupon", json!({"code": "SAVE10,HOME5", "order_subtotal": 30}), "ONE_COUPON_PER_ORDER");
}

#[test]
fn a_customer_uses_each_coupon_once() {
    let mut s = state();
    let items = json!([{"sku": "SKU-101", "quantity": 1}]);
    let m = rejects(&mut s, "create_order", order("C-201", items.clone(), HOME_201, Some("save10")), "COUPON_ALREADY_USED");
    assert_eq!(m, "customer C-201 already used coupon SAVE10 in order O-0002; each coupon is usable once per customer");
    call(&mut s, "create_order", order("C-202", items.clone(), HOME_202, Some("SAVE10"))).unwrap();
    rejects(&mut s, "create_order", order("C-202", items, HOME_202, Some("SAVE10")), "COUPON_ALREADY_USED");
}

#[test]
fn a_discount_never_exceeds_the_subtotal() {
    let mut s = state();
    s.coupons.insert(
        "TAKE50".into(),
        Coupon { percent_off: None, amount_off: Some(Money(5000)), min_subtotal: Money::ZERO, expires: "2026-12-31".into() },
    );
    let r = call(&mut s, "apply_coupon", json!({"code": "TAKE50", "order_subtotal": 9.99})).unwrap();
    assert_eq!((r["discount"].clone(), r["total"].clone()), (json!(9.99), json!(0.0)));
    call(&mut s, "create_order", order("C-201", json!([{"sku": "SKU-203", "quantity": 1}]), HOME_201, Some("TAKE50"))).unwrap();
    let o = &s.orders["O-0004"];
    assert_eq!((o.discount, o.total), (Money(999), Money::ZERO));
}

#[test]
fn apply_coupon_changes_nothing_and_checks_the_amount() {
    let mut s = state();
    let before = s.clone();
    let r = call(&mut s, "apply_coupon", json!({"code": "HOME5", "order_subtotal": 27.49})).unwrap();
    assert_eq!((r["discount"].clone(), r["total"].clone()), (json!(5.0), json!(22.49)));
    assert_eq!(s, before);
    rejects(&mut s, "apply_coupon", json!({"code": "HOME5", "order_subtotal": -3}), "INVALID_AMOUNT");
    rejects(&mut s, "apply_coupon", json!({"code": "HOME5", "order_subtotal": 1e300}), "INVALID_AMOUNT");
}

// --- returns ---

#[test]
fn only_delivered_orders_can_be_returned() {
    let m = rejects(&mut state(), "process_return", ret("O-0002", &["SKU-105"]), "NOT_DELIVERED");
    assert_eq!(m, "order O-0002 is shipped, not delivered; only delivered orders can be returned");
}

#[test]
fn returns_close_30_days_after_delivery() {
    let mut s = state();
    let m = rejects(&mut s, "process_return", ret("O-0001", &["SKU-204"]), "RETURN_WINDOW_CLOSED");
    assert_eq!(m, "order O-0001 was delivered on 2025-12-02; returns are accepted for 30 days, until 2026-01-01, and today is 2026-01-20");
    let args = Args::from_map(ret("O-0003", &["SKU-106"]).as_object().unwrap().clone());
    let last_day = Context { today: Date::from_ymd(2026, 2, 13).unwrap() };
    let day_after = Context { today: Date::from_ymd(2026, 2, 14).unwrap() };
    assert_eq!(run(&mut s.clone(), "process_return", &args, &day_after).unwrap_err().code, "RETURN_WINDOW_CLOSED");
    run(&mut s, "process_return", &args, &last_day).unwrap();
}

#[test]
fn only_skus_of_the_order_can_be_returned() {
    let m = rejects(&mut state(), "process_return", ret("O-0003", &["SKU-101"]), "SKU_NOT_IN_ORDER");
    assert_eq!(m, "order O-0003 has no item 'SKU-101'; its items: SKU-204, SKU-106");
    rejects(&mut state(), "process_return", ret("O-0003", &[]), "EMPTY_RETURN");
    rejects(&mut state(), "process_return", ret("O-0003", &["SKU-204", "sku-204"]), "DUPLICATE_SKU");
}

#[test]
fn nothing_is_returned_twice() {
    let mut s = state();
    call(&mut s, "process_return", ret("O-0003", &["SKU-204"])).unwrap();
    rejects(&mut s, "process_return", ret("O-0003", &["SKU-204"]), "ALREADY_RETURNED");
    call(&mut s, "process_return", ret("O-0003", &["SKU-106"])).unwrap();
    let m = rejects(&mut s, "process_return", ret("O-0003", &["SKU-106"]), "ALREADY_RETURNED");
    assert_eq!(m, "every item of order O-0003 has already been returned");
}

#[test]
fn a_return_needs_a_reason_and_a_refund_method() {
    let mut s = state();
    let mut args = ret("O-0003", &["SKU-204"]);
    args["reason"] = json!("  ");
    rejects(&mut s, "process_return", args.clone(), "INVALID_REASON");
    args["reason"] = json!("r".repeat(501));
    rejects(&mut s, "process_return", args.clone(), "TEXT_TOO_LONG");
    args["reason"] = json!("broken");
    args["refund_method"] = json!("cash");
    let m = rejects(&mut s, "process_return", args.clone(), "INVALID_REFUND_METHOD");
    assert_eq!(m, "refund_method 'cash' is not one of original_payment, store_credit");
    args["refund_method"] = json!("store_credit");
    let r = call(&mut s, "process_return", args).unwrap();
    assert_eq!(r["return"], json!({"order_id": "O-0003", "skus": ["SKU-204"], "refund": 67.99, "refund_method": "store_credit"}));
    assert_eq!(s.orders["O-0003"].returns[0].reason, "broken");
}

#[test]
fn no_argument_value_makes_a_tool_panic() {
    let odd = [
        Value::Null,
        json!(""),
        json!("x".repeat(10_000)),
        json!("SKU-101"),
        json!("O-0003"),
        json!("C-202"),
        json!("SAVE10"),
        json!(-1),
        json!(0),
        json!(1e308),
        json!(-1e308),
        json!(u64::MAX),
        json!(2.5),
        json!(true),
        json!([]),
        json!(["SKU-204", 7, null]),
        json!([{"sku": "SKU-101", "quantity": 1e300}, {"sku": 3}, "x"]),
        json!({"a": 1}),
    ];
    let ctx = Context { today: today() };
    for tool in State::TOOLS {
        for value in &odd {
            let map: Map<String, Value> = tool.spec.params.iter().map(|p| (p.name.to_owned(), value.clone())).collect();
            let mut s = state();
            let _ = tool.call(&mut s, &Args::from_map(map), &ctx);
        }
    }
}

// --- tasks: plausible wrong agents fail a named check ---

#[test]
fn five_tasks_on_both_levels_with_every_slot_filled() {
    let tasks = tasks();
    assert_eq!(tasks.len(), 5);
    assert_eq!(tasks.iter().map(|t| t.level).collect::<Vec<_>>(), [1, 2, 2, 1, 2]);
    for task in &tasks {
        assert!(task.id.starts_with("ecommerce/"), "{}", task.id);
        assert_eq!(task.initial.domain(), crate::registry::ECOMMERCE);
        assert!(!task.description().contains('{'), "{}", task.description());
        assert_eq!(task.today.to_string(), "2026-01-20");
    }
}

#[test]
fn every_task_passes_its_reference_and_fails_inaction() {
    for task in tasks() {
        let task = crate::task(&task.id).unwrap();
        assert_eq!(failed(&task.id, &task.reference), Vec::<String>::new(), "{}", task.id);
        assert!(!failed(&task.id, &[]).is_empty(), "{}", task.id);
    }
}

#[test]
fn simple_order_fails_with_the_wrong_product_quantity_or_address() {
    let id = "ecommerce/simple-order/001";
    let one = "one order for C-201: 2 x SKU-101, no coupon, to the home address";
    let pricier = failed(id, &[create("C-201", "SKU-105", 2, HOME_201, None)]);
    assert!(pricier.contains(&one.to_owned()) && pricier.contains(&toolenv_core::COLLATERAL_CHECK.to_owned()), "{pricier:?}");
    assert!(failed(id, &[create("C-201", "SKU-101", 1, HOME_201, None)]).contains(&one.to_owned()));
    let work = failed(id, &[create("C-201", "SKU-101", 2, "400 Market Street, Suite 210, Springfield, IL 62701", None)]);
    assert_eq!(work, [one, toolenv_core::COLLATERAL_CHECK]);
    let twice = failed(id, &[create("C-201", "SKU-101", 2, HOME_201, None), create("C-201", "SKU-101", 2, HOME_201, None)]);
    assert!(twice.contains(&one.to_owned()), "{twice:?}");
}

#[test]
fn cheapest_wireless_mouse_fails_with_the_out_of_stock_or_a_pricier_mouse() {
    let id = "ecommerce/cheapest-coupon/002";
    let office = "900 Congress Avenue, Floor 3, Austin, TX 78701";
    let one = "one order for C-203: 1 x SKU-103 (the cheapest wireless mouse in stock) with coupon SAVE10, to the office address";
    // The cheapest wireless mouse is out of stock: the order is refused and nothing is bought.
    let out_of_stock = failed(id, &[create("C-203", "SKU-102", 1, office, Some("SAVE10"))]);
    assert!(out_of_stock.contains(&one.to_owned()), "{out_of_stock:?}");
    let pricier = failed(id, &[create("C-203", "SKU-101", 1, office, Some("SAVE10"))]);
    assert!(pricier.contains(&one.to_owned()) && pricier.contains(&toolenv_core::COLLATERAL_CHECK.to_owned()), "{pricier:?}");
    let wired = failed(id, &[create("C-203", "SKU-104", 1, office, Some("SAVE10"))]);
    assert!(wired.contains(&one.to_owned()), "{wired:?}");
    let no_coupon = failed(id, &[create("C-203", "SKU-103", 1, office, None)]);
    assert!(no_coupon.contains(&"order O-0004 totals $19.35 ($21.50 less 10%)".to_owned()), "{no_coupon:?}");
}

#[test]
fn cheapest_kettle_fails_with_the_expired_coupon_both_coupons_or_none() {
    let id = "ecommerce/cheapest-coupon/003";
    let home = "27 Willow Court, Madison, WI 53703";
    let one = "one order for C-204: 1 x SKU-302 (the cheapest electric kettle) with the valid coupon HOME5";
    for coupon in [Some("WINTER25"), Some("WINTER25, HOME5"), None] {
        let failures = failed(id, &[create("C-204", "SKU-302", 1, home, coupon)]);
        assert!(failures.contains(&one.to_owned()), "{coupon:?}: {failures:?}");
    }
    let stovetop = failed(id, &[create("C-204", "SKU-304", 1, home, Some("SAVE10"))]);
    assert!(stovetop.contains(&one.to_owned()), "{stovetop:?}");
}

#[test]
fn earbuds_order_fails_without_the_coupon() {
    let id = "ecommerce/simple-order/004";
    let failures = failed(id, &[create("C-202", "SKU-201", 3, "2 Monument Square, Portland, ME 04101", None)]);
    assert!(failures.contains(&"order O-0004 totals $53.97".to_owned()), "{failures:?}");
    let home = failed(id, &[create("C-202", "SKU-201", 3, HOME_202, Some("SAVE10"))]);
    assert_eq!(home, ["one order for C-202: 3 x SKU-201 with coupon SAVE10, to the work address", toolenv_core::COLLATERAL_CHECK]);
}

#[test]
fn return_fails_for_the_old_order_both_items_or_store_credit() {
    let id = "ecommerce/return/005";
    let returned = "the headphones (SKU-204) of the recent order O-0003 are returned, and nothing else";
    let refund = "the refund goes to the original payment";
    // The old order is outside the window: refused, so nothing is returned.
    let old = failed(id, &[Call::new("process_return", ret("O-0001", &["SKU-204"]))]);
    assert!(old.contains(&returned.to_owned()), "{old:?}");
    let both = failed(id, &[Call::new("process_return", ret("O-0003", &["SKU-204", "SKU-106"]))]);
    assert!(both.contains(&returned.to_owned()), "{both:?}");
    let mut credit = ret("O-0003", &["SKU-204"]);
    credit["refund_method"] = json!("store_credit");
    assert_eq!(failed(id, &[Call::new("process_return", credit)]), [refund, toolenv_core::COLLATERAL_CHECK]);
}
