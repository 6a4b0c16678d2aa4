//! The e-commerce task generator: catalogs of dozens to hundreds of
//! products with near-duplicate names ("Aero Wireless Mouse" and "Aero
//! Wireless Mouse Pro"), customers with several addresses, coupons with
//! minimums and expiry dates, and an order history; tasks from one order
//! with every identifier given (level 1) to multi-item orders under stock
//! limits and coupon rules, partial returns with computed refunds, catalog
//! questions and returns the policy forbids (level 3).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::phrasing::{
    self, BRANDS, CITIES, FIRST, LAST, LATE_RETURN, MULTI_5, MULTI_6, PARTIAL_RETURN, REASONS, SKU_QUESTION, STREETS, TYPES, VARIANTS,
    WINDOW_CLOSED,
};
use crate::generate::{Gen, Origin, monday};
use toolenv_core::{Call, Check, Fact, Slot, Task, World, date::Date, phrasing::Template, slots};

/// The generated e-commerce task of an origin.
pub(super) fn generate(origin: &Origin, mut g: Gen) -> Task {
    let today = monday(&mut g).add_days(2);
    let (products, customers, orders) = match origin.level {
        1 => (g.range(20, 40), g.range(4, 8), g.range(2, 5)),
        2 => (g.range(50, 90), g.range(8, 14), g.range(5, 10)),
        _ => (g.range(150, 250), g.range(15, 30), g.range(15, 30)),
    };
    let mut b = Builder {
        origin: *origin,
        g,
        today,
        products: BTreeMap::new(),
        skus: BTreeMap::new(),
        customers: Vec::new(),
        coupons: BTreeMap::new(),
        orders: Vec::new(),
    };
    for _ in 0..products {
        b.product(None);
    }
    for _ in 0..customers {
        b.customer();
    }
    b.coupons();
    for _ in 0..orders {
        let c = b.g.below(b.customers.len());
        let ago = b.g.range(1, 90);
        let lines = b.g.range(1, 3) as usize;
        b.past_order(c, lines, ago, None);
    }
    match origin.level {
        1 => b.simple_order(),
        2 => match b.g.weighted(&[55, 45]) {
            0 => b.cheapest_coupon(),
            _ => b.single_return(),
        },
        _ => match b.g.weighted(&[60, 14, 13, 13]) {
            0 => b.multi_order(),
            1 => b.partial_return(),
            2 => b.sku_question(),
            _ => b.late_return(),
        },
    }
}

fn money(cents: i64) -> Value {
    json!(cents as f64 / 100.0)
}

#[derive(Debug, Clone)]
struct Product {
    name: String,
    category: &'static str,
    cents: i64,
    stock: u32,
}

struct Builder {
    origin: Origin,
    g: Gen,
    today: Date,
    products: BTreeMap<String, Product>,
    /// The products' skus by name (names are distinct).
    skus: BTreeMap<String, String>,
    /// (name, addresses as (label, address)).
    customers: Vec<(String, Vec<(String, String)>)>,
    coupons: BTreeMap<String, Value>,
    orders: Vec<Value>,
}

impl Builder {
    /// Adds a product (a near-duplicate of `near` when given, the first one if all are there); returns its sku.
    fn product(&mut self, near: Option<&str>) -> String {
        if let Some(near) = near
            && VARIANTS.iter().all(|v| self.skus.contains_key(&format!("{near}{v}")))
        {
            return self.skus.get(&format!("{near}{}", VARIANTS[0])).cloned().unwrap_or_default();
        }
        let (name, category) = loop {
            let (category, types) = *self.g.pick(&TYPES);
            let name = match near {
                Some(near) => format!("{near}{}", self.g.pick(&VARIANTS)),
                None => format!("{} {}", self.g.pick(&BRANDS), self.g.pick(types)),
            };
            let category = near.and_then(|n| Some(self.products[self.skus.get(n)?].category)).unwrap_or(category);
            if !self.skus.contains_key(&name) {
                break (name, category);
            }
        };
        let cents = i64::from(self.g.range(5, 300)) * 100 - [1, 10, 51][self.g.below(3)];
        let stock = if self.g.chance(12) { 0 } else { self.g.range(1, 60) };
        self.add(Product { name, category, cents, stock })
    }

    /// Adds a product under the next sku; returns the sku.
    fn add(&mut self, product: Product) -> String {
        let sku = format!("SKU-{}", 1001 + self.products.len());
        self.skus.insert(product.name.clone(), sku.clone());
        self.products.insert(sku.clone(), product);
        sku
    }

    fn customer(&mut self) {
        let name = loop {
            let name = format!("{} {}", self.g.pick(&FIRST), self.g.pick(&LAST));
            if !self.customers.iter().any(|(n, _)| *n == name) {
                break name;
            }
        };
        let mut addresses = vec![("home".to_owned(), self.address())];
        if self.g.chance(70) {
            let label = if self.g.chance(50) { "work" } else { "office" };
            addresses.push((label.to_owned(), self.address()));
        }
        self.customers.push((name, addresses));
    }

    fn address(&mut self) -> String {
        format!("{} {}, {}", self.g.range(1, 999), self.g.pick(&STREETS), self.g.pick(&CITIES))
    }

    fn customer_id(c: usize) -> String {
        format!("C-{}", 201 + c)
    }

    fn coupons(&mut self) {
        let day = |d: i64| self.today.add_days(d).to_string();
        let coupons = [
            ("SAVE10", json!({"percent_off": 10, "min_subtotal": 0, "expires": day(60)})),
            ("HOME5", json!({"amount_off": 5.00, "min_subtotal": 25.00, "expires": day(30)})),
            ("FLASH25", json!({"percent_off": 25, "min_subtotal": 0, "expires": day(-3)})),
            ("TECH15", json!({"percent_off": 15, "min_subtotal": 50.00, "expires": day(20)})),
            ("BIG20", json!({"amount_off": 20.00, "min_subtotal": 150.00, "expires": day(90)})),
            ("BULK30", json!({"amount_off": 30.00, "min_subtotal": 400.00, "expires": day(45)})),
        ];
        self.coupons = coupons.into_iter().map(|(code, c)| (code.to_owned(), c)).collect();
    }

    /// Adds a past order of `lines` random products (or `skus`), delivered
    /// `ago` days before today; returns its id.
    fn past_order(&mut self, c: usize, lines: usize, ago: u32, skus: Option<&[String]>) -> String {
        let all: Vec<&String> = self.products.keys().collect();
        let skus: Vec<String> = skus.map_or_else(|| self.g.sample(&all, lines).into_iter().cloned().collect(), <[String]>::to_vec);
        let items: Vec<(String, u32, i64)> = skus.iter().map(|s| (s.clone(), self.g.range(1, 2), self.products[s].cents)).collect();
        let subtotal: i64 = items.iter().map(|(_, q, p)| i64::from(*q) * p).sum();
        // A tenth off with a coupon in about half the orders (never one the task's coupon).
        let discount = if self.g.chance(50) { subtotal / 10 } else { 0 };
        let coupon = (discount > 0).then_some("SAVE10");
        let delivered = ago <= 60 || self.g.chance(80);
        let address = self.customers[c].1[0].1.clone();
        self.orders.push(json!({
            "customer_id": Self::customer_id(c),
            "items": items.iter().map(|(sku, q, p)| json!({"sku": sku, "quantity": q, "unit_price": money(*p)})).collect::<Vec<_>>(),
            "subtotal": money(subtotal),
            "discount": money(discount),
            "total": money(subtotal - discount),
            "coupon_code": coupon,
            "shipping_address": address,
            "status": if delivered { "delivered" } else { "shipped" },
            "delivered_on": delivered.then(|| self.today.add_days(-i64::from(ago)).to_string()),
            "refunded": 0, "returned_skus": [], "returns": []
        }));
        format!("O-{:04}", self.orders.len())
    }

    /// A value of the end state the task asks for.
    fn expected(task: &Task, pointer: &str) -> Value {
        task.expected_at(pointer).map_or(Value::Null, std::borrow::Cow::into_owned)
    }

    fn task(self, kind: &str, template: &'static Template, slots: Vec<Slot>, reference: Vec<Call>, checks: Vec<Check>) -> Task {
        // Products and customers built as records, coupons and orders read from JSON; the state checks all.
        let products = self.products.into_iter().map(|(sku, p)| {
            let Product { name, category, cents, stock } = p;
            (sku, super::Product { name, category: category.to_owned(), price: super::Money(cents), stock }.into())
        });
        let customers = self.customers.into_iter().enumerate().map(|(i, (name, addresses))| {
            let addresses = addresses.into_iter().map(|(label, address)| super::Address { label, address }).collect();
            (Self::customer_id(i), super::Customer { name, addresses })
        });
        let orders: BTreeMap<String, Value> = self.orders.into_iter().enumerate().map(|(i, o)| (format!("O-{:04}", i + 1), o)).collect();
        let data = super::StateData {
            products: products.collect(),
            customers: customers.collect(),
            coupons: serde_json::from_value(Value::from_iter(self.coupons)).expect("generated coupons are valid"),
            orders: serde_json::from_value(Value::from_iter(orders)).expect("generated orders are valid"),
        };
        let state = super::State::try_from(data).expect("generated e-commerce states are valid");
        Task {
            id: self.origin.id(kind),
            domain: crate::registry::ECOMMERCE,
            level: self.origin.level,
            template,
            slots,
            today: self.today,
            initial: Arc::new(World::new::<crate::ecommerce::State>(state)),
            reference,
            checks,
            alternatives: vec![],
            expected: Default::default(),
            conversation: None,
        }
    }

    /// A product with stock (at least `min` units).
    fn stocked(&mut self, min: u32) -> String {
        let skus: Vec<String> = self.products.iter().filter(|(_, p)| p.stock >= min).map(|(s, _)| s.clone()).collect();
        if skus.is_empty() {
            let sku = self.product(None);
            self.products.get_mut(&sku).expect("just added").stock = min + 5;
            return sku;
        }
        self.g.pick(&skus).clone()
    }

    /// Checks on the order a task asks for, with its total and the stock
    /// left as the reference leaves them.
    fn order_checks(task: &mut Task, customer: &str, items: &[(String, u32)], coupon: Option<&str>, address: &str) {
        let lines: Vec<Value> = items.iter().map(|(sku, q)| json!({"sku": sku, "quantity": q})).collect();
        let what: Vec<String> = items.iter().map(|(sku, q)| format!("{q} x {sku}")).collect();
        task.checks.push(Check::count(
            format!("one order for {customer}: {}, coupon {}, to {address}", what.join(", "), coupon.unwrap_or("none")),
            "/orders",
            json!({"customer_id": customer, "items": lines, "coupon_code": coupon, "shipping_address": address}),
            1,
        ));
        let new_order = {
            let orders = task.expected_at("/orders");
            let initial = task.initial_json();
            orders.as_deref().and_then(Value::as_object).and_then(|o| o.keys().find(|k| initial["orders"].get(*k).is_none()).cloned())
        };
        if let Some(id) = new_order {
            let total = Self::expected(task, &format!("/orders/{id}/total"));
            task.checks.push(Check::equals(format!("order {id} totals {total}"), format!("/orders/{id}/total"), total));
        }
        for (sku, _) in items {
            let stock = Self::expected(task, &format!("/products/{sku}/stock"));
            task.checks.push(Check::equals(format!("{sku} stock down to {stock}"), format!("/products/{sku}/stock"), stock));
        }
    }

    /// Level 1: an order with the product, its sku and the quantity given.
    fn simple_order(mut self) -> Task {
        let quantity = self.g.range(1, 4);
        let sku = self.stocked(quantity);
        let c = self.g.below(self.customers.len());
        let (customer, address) = (Self::customer_id(c), self.customers[c].1[0].1.clone());
        let product = self.products[&sku].name.clone();
        let item = json!([{"sku": sku, "quantity": quantity}]);
        let reference = vec![
            Call::new("get_customer", json!({"customer_id": customer})),
            Call::new("check_inventory", json!({"sku": sku})),
            Call::new("create_order", json!({"customer_id": customer, "items": item, "shipping_address": address})),
        ];
        let slots = slots(&[("quantity", &quantity.to_string()), ("product", &product), ("sku", &sku), ("customer", &customer)]);
        let mut task = self.task("simple-order", &phrasing::SIMPLE_ORDER, slots, reference, Vec::new());
        Self::order_checks(&mut task, &customer, &[(sku, quantity)], None, &address);
        task
    }

    /// Level 2: the cheapest product of a kind in stock (the cheapest of
    /// all may be sold out), with a coupon, to a named address.
    fn cheapest_coupon(mut self) -> Task {
        let (category, types) = *self.g.pick(&TYPES);
        let kind = *self.g.pick(types);
        // Four to six products of the kind, with distinct prices.
        let n = self.g.range(4, 6) as usize;
        let brands = self.g.sample(&BRANDS, n);
        let mut skus = Vec::new();
        for (i, brand) in brands.iter().enumerate() {
            let name = format!("{brand} {kind}");
            let sku = match self.skus.get(&name) {
                Some(sku) => sku.clone(),
                None => self.add(Product { name, category, cents: 0, stock: 0 }),
            };
            let product = self.products.get_mut(&sku).expect("a product");
            product.cents = 1_999 + 1_000 * i as i64 + i64::from(self.g.range(0, 9)) * 50;
            product.stock = self.g.range(2, 20);
            skus.push(sku);
        }
        // Every other product of the kind costs more than those.
        let kind_lower = kind.to_lowercase();
        for (sku, p) in &mut self.products {
            if !skus.contains(sku) && p.name.to_lowercase().contains(&kind_lower) {
                p.cents = p.cents.max(20_000);
            }
        }
        if self.g.chance(50) {
            self.products.get_mut(&skus[0]).expect("a product").stock = 0;
            skus.remove(0);
        }
        let sku = skus[0].clone();
        let price = self.products[&sku].cents;
        let c = self.g.below(self.customers.len());
        let (label, address) = self.customers[c].1[self.g.below(self.customers[c].1.len())].clone();
        let customer = Self::customer_id(c);
        let coupon = "SAVE10";
        let reference = vec![
            Call::new("search_products", json!({"query": kind_lower})),
            Call::new("get_customer", json!({"customer_id": customer})),
            Call::new("apply_coupon", json!({"code": coupon, "order_subtotal": price as f64 / 100.0})),
            Call::new(
                "create_order",
                json!({"customer_id": customer, "items": [{"sku": sku, "quantity": 1}], "shipping_address": address, "coupon_code": coupon}),
            ),
        ];
        // The customer has not used the coupon before.
        let id = customer.clone();
        for o in &mut self.orders {
            if o["customer_id"] == id.as_str() {
                o["coupon_code"] = Value::Null;
            }
        }
        let slots = slots(&[("kind", &kind_lower), ("customer", &customer), ("label", &label), ("coupon", coupon)]);
        let mut task = self.task("cheapest-coupon", &phrasing::CHEAPEST_COUPON, slots, reference, Vec::new());
        Self::order_checks(&mut task, &customer, &[(sku, 1)], Some(coupon), &address);
        task
    }

    /// Level 2: return one product of a recent order; an older order with
    /// the same product is outside the return window.
    fn single_return(mut self) -> Task {
        let c = self.g.below(self.customers.len());
        let id = Self::customer_id(c);
        // Products the customer never ordered, so only the task's orders hold them.
        let ordered = |b: &Self, sku: &str| {
            let name = &b.products[sku].name;
            b.orders.iter().filter(|o| o["customer_id"] == id.as_str()).any(|o| {
                o["items"].as_array().into_iter().flatten().any(|l| l["sku"].as_str().is_some_and(|s| b.products[s].name == *name))
            })
        };
        let sku = loop {
            let s = self.stocked(0);
            if !ordered(&self, &s) {
                break s;
            }
        };
        let other = loop {
            let o = self.stocked(0);
            if o != sku && !ordered(&self, &o) && self.products[&o].name != self.products[&sku].name {
                break o;
            }
        };
        let ago = self.g.range(45, 80);
        self.past_order(c, 1, ago, Some(std::slice::from_ref(&sku)));
        let old = format!("O-{:04}", self.orders.len());
        let i_old = self.orders.len() - 1;
        self.orders[i_old]["status"] = json!("delivered");
        self.orders[i_old]["delivered_on"] = json!(self.today.add_days(-60).to_string());
        let ago = self.g.range(2, 20);
        let recent = self.past_order(c, 2, ago, Some(&[sku.clone(), other]));
        let i = self.orders.len() - 1;
        self.orders[i]["status"] = json!("delivered");
        let (reason, keep) = *self.g.pick(&REASONS);
        let customer = Self::customer_id(c);
        let product = self.products[&sku].name.clone();
        let reference = vec![
            Call::new("list_orders", json!({"customer_id": customer})),
            Call::new("check_order_status", json!({"order_id": recent})),
            Call::new("process_return", json!({"order_id": recent, "items": [sku], "reason": reason, "refund_method": "original_payment"})),
        ];
        let slots = slots(&[("customer", &customer), ("product", &product), ("reason", reason)]);
        let mut task = self.task("return", &phrasing::RETURN, slots, reference, Vec::new());
        let refunded = Self::expected(&task, &format!("/orders/{recent}/refunded"));
        task.checks = vec![
            Check::equals(
                format!("{sku} of the recent order {recent} returned, and nothing else"),
                format!("/orders/{recent}/returned_skus"),
                json!([sku]),
            ),
            Check::equals(
                format!("{recent} refunds {refunded}: what was paid for the line"),
                format!("/orders/{recent}/refunded"),
                refunded,
            ),
            Check::equals(format!("{recent} is partially returned"), format!("/orders/{recent}/status"), json!("partially_returned")),
            Check::equals(
                "the refund goes to the original payment",
                format!("/orders/{recent}/returns/0/refund_method"),
                json!("original_payment"),
            ),
            Check::equals(
                format!("the old order {old}, outside the return window, is untouched"),
                format!("/orders/{old}/returned_skus"),
                json!([]),
            ),
            Check::text(
                "the return gives the customer's reason",
                format!("/orders/{recent}/returns/0/reason"),
                [Fact::Mentions { label: "the reason".into(), phrase: keep.to_owned() }],
            ),
        ];
        task
    }

    /// Level 3: five or six products named (each with a near-duplicate in
    /// the catalog), some short of stock or sold out, and a coupon whose
    /// minimum the order may or may not reach.
    fn multi_order(mut self) -> Task {
        let count = if self.g.chance(50) { 5 } else { 6 };
        let mut wanted: Vec<(String, u32)> = Vec::new();
        while wanted.len() < count {
            let sku = self.stocked(1);
            if wanted.iter().any(|(s, _)| *s == sku) || self.products[&sku].name.split(' ').count() > 3 {
                continue;
            }
            let name = self.products[&sku].name.clone();
            self.product(Some(&name));
            wanted.push((sku, self.g.range(1, 5)));
        }
        // One line short of stock, one sold out (sometimes).
        let short = self.g.below(count);
        let asked = wanted[short].1.max(3);
        wanted[short].1 = asked;
        self.products.get_mut(&wanted[short].0).expect("a product").stock = self.g.range(1, asked - 1);
        if self.g.chance(50) {
            let gone = (short + 1) % count;
            self.products.get_mut(&wanted[gone].0).expect("a product").stock = 0;
        }
        let items: Vec<(String, u32)> =
            wanted.iter().map(|(sku, q)| (sku.clone(), (*q).min(self.products[sku].stock))).filter(|(_, q)| *q > 0).collect();
        let subtotal: i64 = items.iter().map(|(sku, q)| i64::from(*q) * self.products[sku].cents).sum();
        // A coupon whose minimum the subtotal reaches or not, or one that expired.
        let coupon = *self.g.pick(&["TECH15", "BIG20", "BULK30", "FLASH25", "HOME5"]);
        let min_cents = match coupon {
            "TECH15" => 5_000,
            "BIG20" => 15_000,
            "BULK30" => 40_000,
            "HOME5" => 2_500,
            _ => 0,
        };
        let valid = coupon != "FLASH25" && subtotal >= min_cents;
        let c = self.g.below(self.customers.len());
        let customer = Self::customer_id(c);
        for o in &mut self.orders {
            if o["customer_id"] == customer.as_str() {
                o["coupon_code"] = Value::Null;
            }
        }
        let (label, address) = self.customers[c].1[self.g.below(self.customers[c].1.len())].clone();
        let mut reference = vec![Call::new("get_customer", json!({"customer_id": customer}))];
        for (sku, _) in &wanted {
            reference.push(Call::new("search_products", json!({"query": self.products[sku].name})));
        }
        reference.push(Call::new("apply_coupon", json!({"code": coupon, "order_subtotal": subtotal as f64 / 100.0})));
        let lines: Vec<Value> = items.iter().map(|(sku, q)| json!({"sku": sku, "quantity": q})).collect();
        let mut order = json!({"customer_id": customer, "items": lines, "shipping_address": address});
        if valid {
            order["coupon_code"] = json!(coupon);
        }
        reference.push(Call::new("create_order", order));
        let mut slots = vec![Slot { name: "customer", value: customer.clone() }, Slot { name: "label", value: label }];
        let names = [("q1", "p1"), ("q2", "p2"), ("q3", "p3"), ("q4", "p4"), ("q5", "p5"), ("q6", "p6")];
        for (&(q, p), (sku, quantity)) in names.iter().zip(&wanted) {
            slots.push(Slot { name: q, value: quantity.to_string() });
            slots.push(Slot { name: p, value: self.products[sku].name.clone() });
        }
        slots.push(Slot { name: "coupon", value: coupon.to_owned() });
        let template = if count == 6 { &MULTI_6 } else { &MULTI_5 };
        let mut task = self.task("multi-order", template, slots, reference, Vec::new());
        Self::order_checks(&mut task, &customer, &items, valid.then_some(coupon), &address);
        task
    }

    /// A delivered order of `lines` products with a coupon discount, `ago`
    /// days ago; returns its id and skus.
    fn delivered_order(&mut self, c: usize, lines: usize, ago: u32) -> (String, Vec<String>) {
        let mut skus: Vec<String> = Vec::new();
        while skus.len() < lines {
            let sku = self.stocked(0);
            let name = &self.products[&sku].name;
            if !skus.iter().any(|s| s == &sku || self.products[s].name == *name) {
                skus.push(sku);
            }
        }
        let id = self.past_order(c, lines, ago, Some(&skus));
        let i = self.orders.len() - 1;
        let subtotal = (self.orders[i]["subtotal"].as_f64().unwrap_or(0.0) * 100.0).round() as i64;
        let discount = subtotal * 15 / 100;
        self.orders[i]["status"] = json!("delivered");
        self.orders[i]["delivered_on"] = json!(self.today.add_days(-i64::from(ago)).to_string());
        self.orders[i]["coupon_code"] = json!("TECH15");
        self.orders[i]["discount"] = money(discount);
        self.orders[i]["total"] = money(subtotal - discount);
        (id, skus)
    }

    /// Level 3: two lines of a delivered order with a coupon come back; the
    /// refund is what was paid for them, their share of the discount off.
    fn partial_return(mut self) -> Task {
        let c = self.g.below(self.customers.len());
        let lines = self.g.range(3, 4) as usize;
        let ago = self.g.range(2, 25);
        let (order, skus) = self.delivered_order(c, lines, ago);
        let back = self.g.sample(&skus, 2);
        let (reason, keep) = *self.g.pick(&REASONS);
        let customer = Self::customer_id(c);
        let reference = vec![
            Call::new("check_order_status", json!({"order_id": order})),
            Call::new("process_return", json!({"order_id": order, "items": back, "reason": reason, "refund_method": "store_credit"})),
        ];
        let mut slots = slots(&[("customer", &customer), ("order_id", &order), ("reason", reason)]);
        slots.push(Slot { name: "product1", value: self.products[&back[0]].name.clone() });
        slots.push(Slot { name: "product2", value: self.products[&back[1]].name.clone() });
        let mut task = self.task("partial-return", &PARTIAL_RETURN, slots, reference, Vec::new());
        let refunded = Self::expected(&task, &format!("/orders/{order}/refunded"));
        let returned = Self::expected(&task, &format!("/orders/{order}/returned_skus"));
        task.checks = vec![
            Check::equals(
                format!("{} returned from {order}, and nothing else", back.join(" and ")),
                format!("/orders/{order}/returned_skus"),
                returned,
            ),
            Check::equals(
                format!("{order} refunds {refunded}: what was paid for the two lines, their share of the coupon off"),
                format!("/orders/{order}/refunded"),
                refunded,
            ),
            Check::equals(format!("{order} is partially returned"), format!("/orders/{order}/status"), json!("partially_returned")),
            Check::equals("the refund goes to store credit", format!("/orders/{order}/returns/0/refund_method"), json!("store_credit")),
            Check::text(
                "the return gives the customer's reason",
                format!("/orders/{order}/returns/0/reason"),
                [Fact::Mentions { label: "the reason".into(), phrase: keep.to_owned() }],
            ),
        ];
        task
    }

    /// Level 3: answer a product's sku, price and stock; a near-duplicate
    /// product is in the catalog.
    fn sku_question(mut self) -> Task {
        let sku = loop {
            let sku = self.stocked(1);
            if self.products[&sku].name.split(' ').count() <= 3 {
                break sku;
            }
        };
        let name = self.products[&sku].name.clone();
        let twin = self.product(Some(&name));
        let Product { cents, stock, .. } = self.products[&sku].clone();
        let reference = vec![Call::new("search_products", json!({"query": name}))];
        let price = format!("{}.{:02}", cents / 100, cents % 100);
        let example = format!("The {name} is {sku}; it costs ${price} and {stock} are in stock.");
        let facts = vec![
            Fact::Mentions { label: "the sku".into(), phrase: sku.clone() },
            Fact::Amount { cents },
            Fact::Mentions { label: "the stock".into(), phrase: stock.to_string() },
            Fact::Omits { label: "the near-duplicate's sku".into(), phrase: twin },
        ];
        let checks = vec![Check::answer(format!("the answer gives {sku}, ${price} and {stock} in stock"), facts, example)];
        let slots = slots(&[("product", &name)]);
        self.task("sku-question", &SKU_QUESTION, slots, reference, checks)
    }

    /// Level 3: the order was delivered more than 30 days ago: no return,
    /// and the answer says why.
    fn late_return(mut self) -> Task {
        let c = self.g.below(self.customers.len());
        let ago = self.g.range(35, 80);
        let (order, skus) = self.delivered_order(c, 2, ago);
        let sku = self.g.pick(&skus).clone();
        let (reason, _) = *self.g.pick(&REASONS);
        let customer = Self::customer_id(c);
        let product = self.products[&sku].name.clone();
        let reference = vec![Call::new("check_order_status", json!({"order_id": order}))];
        let example = format!("I changed nothing: order {order} was delivered more than 30 days ago, so the return window has closed.");
        let checks = vec![
            Check::answer("the answer says the 30-day return window has closed", [WINDOW_CLOSED], example),
            Check::equals(format!("{order} is still delivered, nothing returned"), format!("/orders/{order}/returned_skus"), json!([])),
        ];
        let slots = slots(&[("customer", &customer), ("product", &product), ("order_id", &order), ("reason", reason)]);
        self.task("late-return", &LATE_RETURN, slots, reference, checks)
    }
}
