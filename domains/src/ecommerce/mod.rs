//! E-commerce: a shop's catalog, customers, coupons, orders and returns.
//!
//! The state is `{"products", "customers", "coupons", "orders"}`, maps keyed by
//! sku, customer id, coupon code and order id. Money is kept in integer cents
//! ([`Money`]) and written to JSON as dollars with at most two decimals, so no
//! float error ever reaches a total; dollar arguments are rounded to the cent.
//!
//! Rules:
//! - Customers, skus, orders and coupons must exist. Ids and codes are matched
//!   after trimming and, failing an exact match, ignoring ASCII case.
//! - An order has 1 to 20 lines, each sku once (quantities of a repeated sku
//!   must be merged), quantities 1 to 100, and ships to one of the customer's
//!   addresses on file. Every line must be in stock; placing the order takes
//!   the quantities out of stock.
//! - One coupon per order. A coupon must not have expired (its `expires` date
//!   is before today), the subtotal must reach its `min_subtotal`, and a
//!   customer may use each coupon once. Percentages round half up to the
//!   cent; a discount never exceeds the subtotal.
//! - Returns are of whole lines, only for delivered orders, within 30 days of
//!   `delivered_on`, only of skus in the order not already returned. The
//!   refund is what was paid for those lines: the order's discount is spread
//!   over its lines in proportion to their amounts, rounded in cents on the
//!   running total, so the refunds of all lines add up to the order's total
//!   exactly; a refund never exceeds `total - refunded`. Returned goods are
//!   not restocked (they go to inspection).
//! - New orders get sequential ids per episode (`O-0001`, `O-0002`, …),
//!   continuing after the highest id already in the state.
//! - Free text (addresses, reasons, queries) is at most 500 characters.

mod generate;
mod phrasing;
mod solver;
mod tasks;
#[cfg(test)]
mod tests;
mod tools;
mod views;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{cheats::Undo, perturb::Synonym};
use toolenv_core::{Context, DomainError, DomainState, Shared, Task, Tool, date::Date, diff::Changes, drift::Mapping, echo};

/// Most lines one order may have.
const MAX_LINES: usize = 20;
/// Largest quantity of one order line.
const MAX_QUANTITY: u32 = 100;
/// Longest free-text argument, in characters.
const MAX_TEXT_CHARS: usize = 500;
/// Days after delivery during which an order may be returned (inclusive).
const RETURN_WINDOW_DAYS: i64 = 30;
/// Largest amount a price, a state value or a dollar argument may carry, in cents ($1,000,000.00).
const MAX_AMOUNT_CENTS: i64 = 100_000_000;
/// Most products one search returns.
const MAX_SEARCH_RESULTS: usize = 50;

/// An amount of money in whole cents. JSON shows it as a dollar number with
/// at most two decimals (`19.99`), which reads back to the same cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(i64);

impl Money {
    /// No money.
    pub const ZERO: Money = Money(0);

    /// An amount of `cents` cents.
    pub const fn from_cents(cents: i64) -> Self {
        Self(cents)
    }

    /// The amount in cents.
    pub const fn cents(self) -> i64 {
        self.0
    }

    /// Converts a dollar amount to cents, rounding to the nearest cent;
    /// `None` when it is not finite, negative or above $1,000,000.00.
    pub fn from_dollars(dollars: f64) -> Option<Self> {
        let cents = (dollars * 100.0).round();
        (cents.is_finite() && (0.0..=MAX_AMOUNT_CENTS as f64).contains(&cents)).then_some(Self(cents as i64))
    }

    /// The amount in dollars, the nearest `f64` to the exact decimal.
    pub fn dollars(self) -> f64 {
        self.0 as f64 / 100.0
    }

    fn plus(self, other: Money) -> Money {
        Money(self.0.saturating_add(other.0))
    }

    fn minus(self, other: Money) -> Money {
        Money(self.0.saturating_sub(other.0))
    }

    fn times(self, quantity: u32) -> Money {
        Money(self.0.saturating_mul(i64::from(quantity)))
    }

    /// `percent` % of the amount, rounded half up to the cent.
    fn percent(self, percent: u32) -> Money {
        let cents = (i128::from(self.0) * i128::from(percent) + 50).div_euclid(100);
        Money(i64::try_from(cents).unwrap_or(i64::MAX))
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let cents = self.0.unsigned_abs();
        write!(f, "{sign}${}.{:02}", cents / 100, cents % 100)
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.dollars())
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let dollars = f64::deserialize(deserializer)?;
        let money = Money::from_dollars(dollars)
            .ok_or_else(|| serde::de::Error::custom(format!("amount {dollars} is not between 0 and {}", Money(MAX_AMOUNT_CENTS))))?;
        // The tolerance is far above f64 error at these magnitudes and far below a tenth of a cent.
        if (dollars * 100.0 - money.0 as f64).abs() > 1e-3 {
            return Err(serde::de::Error::custom(format!("amount {dollars} has more than two decimals")));
        }
        Ok(money)
    }
}

/// A product of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Product {
    /// Display name.
    pub name: String,
    /// Category, e.g. `audio`.
    pub category: String,
    /// Current unit price.
    pub price: Money,
    /// Units on hand; never below zero.
    pub stock: u32,
}

/// One of a customer's addresses on file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Address {
    /// What the customer calls it: `home`, `work`, …
    pub label: String,
    /// The address as orders are shipped to it.
    pub address: String,
}

/// A customer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    /// Full name.
    pub name: String,
    /// The addresses orders may ship to.
    pub addresses: Vec<Address>,
}

/// A coupon: a percentage or a fixed amount off, from a minimum subtotal,
/// until its expiry date. Exactly one of `percent_off` and `amount_off` is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coupon {
    /// Percentage off the subtotal, 1 to 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_off: Option<u32>,
    /// Fixed amount off the subtotal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_off: Option<Money>,
    /// Smallest subtotal the coupon applies to.
    pub min_subtotal: Money,
    /// Last day the coupon can be used, `YYYY-MM-DD`.
    pub expires: String,
}

impl Coupon {
    /// The discount on `subtotal`, never more than the subtotal.
    fn discount(&self, subtotal: Money) -> Money {
        let off = match (self.percent_off, self.amount_off) {
            (Some(percent), _) => subtotal.percent(percent),
            (None, Some(amount)) => amount,
            (None, None) => Money::ZERO,
        };
        off.min(subtotal)
    }

    fn terms(&self) -> String {
        let off = match (self.percent_off, self.amount_off) {
            (Some(percent), _) => format!("{percent}% off"),
            (None, Some(amount)) => format!("{amount} off"),
            (None, None) => "nothing off".to_owned(),
        };
        format!("{off} subtotals of at least {}, until {}", self.min_subtotal, self.expires)
    }
}

/// One line of an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderLine {
    /// The product.
    pub sku: String,
    /// Units ordered, 1 to 100.
    pub quantity: u32,
    /// The unit price when the order was placed.
    pub unit_price: Money,
}

/// Where an order is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderStatus {
    /// Placed, not yet shipped.
    Placed,
    /// On its way.
    Shipped,
    /// Delivered on `delivered_on`.
    Delivered,
    /// Every line returned.
    Returned,
    /// Some lines returned.
    PartiallyReturned,
}

impl OrderStatus {
    fn name(self) -> &'static str {
        match self {
            OrderStatus::Placed => "placed",
            OrderStatus::Shipped => "shipped",
            OrderStatus::Delivered => "delivered",
            OrderStatus::Returned => "returned",
            OrderStatus::PartiallyReturned => "partially_returned",
        }
    }

    fn delivered(self) -> bool {
        matches!(self, OrderStatus::Delivered | OrderStatus::Returned | OrderStatus::PartiallyReturned)
    }
}

/// Where a refund goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundMethod {
    /// Back to the card or account the order was paid with.
    OriginalPayment,
    /// To the customer's store credit.
    StoreCredit,
}

/// The names `process_return` accepts for [`RefundMethod`], in its order.
const REFUND_METHODS: &[&str] = &["original_payment", "store_credit"];

impl RefundMethod {
    fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "original_payment" => Some(RefundMethod::OriginalPayment),
            "store_credit" => Some(RefundMethod::StoreCredit),
            _ => None,
        }
    }
}

/// One return processed on an order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReturnRecord {
    /// The skus of the lines returned, in the order's line order.
    pub skus: Vec<String>,
    /// Why they came back.
    pub reason: String,
    /// Where the refund went.
    pub refund_method: RefundMethod,
    /// The amount refunded.
    pub amount: Money,
}

/// An order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Order {
    /// Who placed it.
    pub customer_id: String,
    /// Its lines, each sku once.
    pub items: Vec<OrderLine>,
    /// Sum of quantity × unit price over the lines.
    pub subtotal: Money,
    /// The coupon's discount; zero without one.
    pub discount: Money,
    /// What the customer paid: subtotal − discount.
    pub total: Money,
    /// The coupon applied, if any.
    pub coupon_code: Option<String>,
    /// Where it ships: one of the customer's addresses.
    pub shipping_address: String,
    /// Where the order is in its life.
    pub status: OrderStatus,
    /// Delivery date, `YYYY-MM-DD`, once delivered.
    pub delivered_on: Option<String>,
    /// Sum of the refunds so far; never above the total.
    pub refunded: Money,
    /// Skus of the lines returned so far, in line order.
    pub returned_skus: Vec<String>,
    /// The returns processed, oldest first.
    #[serde(default)]
    pub returns: Vec<ReturnRecord>,
}

impl Order {
    /// What was paid for each line: its amount less its share of the
    /// discount. Shares are proportional to line amounts and rounded (half up)
    /// on the running total, so they add up to the discount exactly and the
    /// payments add up to the total.
    pub fn line_payments(&self) -> Vec<Money> {
        let amounts: Vec<i128> = self.items.iter().map(|l| i128::from(l.unit_price.times(l.quantity).cents())).collect();
        let subtotal: i128 = amounts.iter().sum();
        let discount = i128::from(self.discount.cents()).min(subtotal);
        let (mut running, mut shared) = (0_i128, 0_i128);
        amounts
            .iter()
            .map(|&amount| {
                running += amount;
                let shared_so_far = if subtotal == 0 { 0 } else { (2 * discount * running + subtotal).div_euclid(2 * subtotal) };
                let paid = amount - (shared_so_far - shared);
                shared = shared_so_far;
                Money(i64::try_from(paid).unwrap_or(i64::MAX))
            })
            .collect()
    }
}

/// A shop: catalog, customers, coupons and orders.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "StateData")]
pub struct State {
    /// Products by sku, each shared too: a write copies the catalog's
    /// index, not every product.
    pub products: Shared<BTreeMap<String, Shared<Product>>>,
    /// Customers by id.
    pub customers: Shared<BTreeMap<String, Customer>>,
    /// Coupons by code.
    pub coupons: Shared<BTreeMap<String, Coupon>>,
    /// Orders by id.
    pub orders: Shared<BTreeMap<String, Shared<Order>>>,
    /// The number of the next new order; derived from the orders when a state
    /// is read, so it is not part of the state's JSON.
    #[serde(skip)]
    next_order: u32,
}

/// The serialized form of [`State`], checked before it becomes one.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateData {
    products: BTreeMap<String, Shared<Product>>,
    customers: BTreeMap<String, Customer>,
    coupons: BTreeMap<String, Coupon>,
    orders: BTreeMap<String, Shared<Order>>,
}

impl TryFrom<StateData> for State {
    type Error = String;

    fn try_from(data: StateData) -> Result<Self, String> {
        let next_order = data.orders.keys().filter_map(|id| order_number(id)).max().unwrap_or(0).saturating_add(1);
        let state = State {
            products: data.products.into(),
            customers: data.customers.into(),
            coupons: data.coupons.into(),
            orders: data.orders.into(),
            next_order,
        };
        state.validate()?;
        Ok(state)
    }
}

fn order_number(id: &str) -> Option<u32> {
    id.strip_prefix("O-")?.parse().ok()
}

impl DomainState for State {
    const TOOLS: &'static [Tool<Self>] = tools::TOOLS;
    const DRIFT: Mapping = views::DRIFT;

    fn tasks() -> Vec<Task> {
        tasks::tasks()
    }

    fn changes(initial: &Self, end: &Self) -> Changes {
        let mut changes = Changes::default();
        changes.map("products", &initial.products, &end.products);
        changes.map("customers", &initial.customers, &end.customers);
        changes.map("coupons", &initial.coupons, &end.coupons);
        changes.map("orders", &initial.orders, &end.orders);
        changes
    }
}

impl crate::perturb::Lexicon for State {
    const SYNONYMS: &'static [Synonym] = phrasing::SYNONYMS;
    const DISTRACTORS: &'static [&'static str] = phrasing::DISTRACTORS;
}

impl crate::cheats::UndoRules for State {
    const UNDO: &'static [Undo] = &[];
}

impl crate::generate::Generator for State {
    fn generate(origin: &crate::generate::Origin, g: crate::generate::Gen) -> Task {
        generate::generate(origin, g)
    }
}

impl State {
    /// Finds a coupon that exists and has not expired; the code must name one coupon.
    fn valid_coupon(&self, requested: &str, ctx: &Context) -> Result<(&str, &Coupon), DomainError> {
        let several = requested.contains([',', ';', '+', '&', '/', '|'])
            || requested.split_whitespace().filter(|part| lookup(&self.coupons, part).is_some()).count() > 1;
        if several {
            return Err(DomainError::new(
                "ONE_COUPON_PER_ORDER",
                format!("'{}' names more than one coupon; an order takes exactly one coupon code", echo(requested)),
            ));
        }
        let (code, coupon) = lookup(&self.coupons, requested)
            .ok_or_else(|| DomainError::new("UNKNOWN_COUPON", format!("no coupon '{}'", echo(requested))))?;
        if Date::parse(&coupon.expires).is_none_or(|expires| expires < ctx.today) {
            return Err(DomainError::new("COUPON_EXPIRED", format!("coupon {code} expired on {}; today is {}", coupon.expires, ctx.today)));
        }
        Ok((code, coupon))
    }

    fn product(&self, sku: &str) -> Result<(&str, &Product), DomainError> {
        lookup(&self.products, sku).map(|(sku, p)| (sku, &**p)).ok_or_else(|| {
            DomainError::new("UNKNOWN_SKU", format!("no product with sku '{}'; search_products lists the catalog", echo(sku)))
        })
    }

    fn customer(&self, id: &str) -> Result<(&str, &Customer), DomainError> {
        lookup(&self.customers, id).ok_or_else(|| DomainError::new("UNKNOWN_CUSTOMER", format!("no customer '{}'", echo(id))))
    }

    fn order(&self, id: &str) -> Result<(&str, &Order), DomainError> {
        lookup(&self.orders, id).map(|(id, o)| (id, &**o)).ok_or_else(|| unknown_order(id))
    }

    /// Takes the next sequential order id, skipping any already in use.
    fn new_order_id(&mut self) -> String {
        let mut number = self.next_order.max(1);
        let mut id = toolenv_core::date::numbered_id("O-", number);
        while self.orders.contains_key(&id) {
            number = number.saturating_add(1);
            id = toolenv_core::date::numbered_id("O-", number);
        }
        self.next_order = number.saturating_add(1);
        id
    }

    /// Checks the invariants a state read from JSON must hold.
    fn validate(&self) -> Result<(), String> {
        for (sku, p) in &self.products {
            if p.name.trim().is_empty() || p.category.trim().is_empty() {
                return Err(format!("product {sku} needs a name and a category"));
            }
        }
        for (code, c) in &self.coupons {
            match (c.percent_off, c.amount_off) {
                (Some(percent), None) if (1..=100).contains(&percent) => {}
                (None, Some(amount)) if amount > Money::ZERO => {}
                _ => return Err(format!("coupon {code} needs exactly one of percent_off (1 to 100) and amount_off (above 0)")),
            }
            if Date::parse(&c.expires).is_none() {
                return Err(format!("coupon {code}: expires '{}' is not a YYYY-MM-DD date", c.expires));
            }
        }
        for (id, o) in &self.orders {
            if !self.customers.contains_key(&o.customer_id) {
                return Err(format!("order {id}: unknown customer {}", o.customer_id));
            }
            if o.items.is_empty() || o.items.len() > MAX_LINES {
                return Err(format!("order {id} needs 1 to {MAX_LINES} lines"));
            }
            let mut skus = BTreeSet::new();
            for line in &o.items {
                if !skus.insert(line.sku.as_str()) || !(1..=MAX_QUANTITY).contains(&line.quantity) {
                    return Err(format!("order {id}: {} is repeated or has a quantity outside 1 to {MAX_QUANTITY}", line.sku));
                }
            }
            let subtotal = o.items.iter().fold(Money::ZERO, |sum, l| sum.plus(l.unit_price.times(l.quantity)));
            if o.subtotal != subtotal || o.discount > o.subtotal || o.total != o.subtotal.minus(o.discount) {
                return Err(format!("order {id}: subtotal, discount and total do not add up (subtotal of the lines is {subtotal})"));
            }
            if o.refunded > o.total || o.returns.iter().fold(Money::ZERO, |sum, r| sum.plus(r.amount)) != o.refunded {
                return Err(format!("order {id}: refunded must be the sum of its returns and at most the total"));
            }
            let paid_for_returned = o
                .items
                .iter()
                .zip(o.line_payments())
                .filter(|(line, _)| o.returned_skus.contains(&line.sku))
                .fold(Money::ZERO, |sum, (_, paid)| sum.plus(paid));
            if o.refunded != paid_for_returned {
                return Err(format!("order {id}: refunded must be what was paid for the returned lines, {paid_for_returned}"));
            }
            if o.returned_skus.iter().any(|s| !skus.contains(s.as_str()))
                || o.returned_skus.iter().collect::<BTreeSet<_>>().len() != o.returned_skus.len()
            {
                return Err(format!("order {id}: returned_skus must be distinct skus of the order"));
            }
            if o.coupon_code.as_ref().is_some_and(|c| !self.coupons.contains_key(c)) {
                return Err(format!("order {id}: unknown coupon"));
            }
            let delivered = o.delivered_on.as_deref().map(Date::parse);
            match (o.status.delivered(), delivered) {
                (true, Some(Some(_))) | (false, None) => {}
                _ => return Err(format!("order {id}: delivered_on must be a date exactly when the order is delivered or returned")),
            }
            let all_returned = o.returned_skus.len() == o.items.len();
            let consistent = match o.status {
                OrderStatus::Placed | OrderStatus::Shipped | OrderStatus::Delivered => o.returned_skus.is_empty(),
                OrderStatus::PartiallyReturned => !o.returned_skus.is_empty() && !all_returned,
                OrderStatus::Returned => all_returned,
            };
            if !consistent {
                return Err(format!("order {id}: status {} does not match returned_skus", o.status.name()));
            }
        }
        Ok(())
    }
}

/// Finds a key, exactly after trimming or else ignoring ASCII case.
fn lookup<'a, V>(map: &'a BTreeMap<String, V>, key: &str) -> Option<(&'a str, &'a V)> {
    let key = key.trim();
    map.get_key_value(key).or_else(|| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key))).map(|(k, v)| (k.as_str(), v))
}

fn unknown_order(id: &str) -> DomainError {
    DomainError::new("UNKNOWN_ORDER", format!("no order '{}'; list_orders shows a customer's orders", echo(id)))
}
