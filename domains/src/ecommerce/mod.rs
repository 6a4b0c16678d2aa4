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

mod phrasing;
mod solver;
mod views;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

use crate::World;
use crate::cheats::Undo;
use crate::date::Date;
use crate::drift::Mapping;
use crate::json::{Field, Seq};
use crate::oracle::Check;
use crate::perturb::Synonym;
use crate::task::{Call, Task, slots};
use crate::tool::{Args, DomainError, Param, ParamType, ToolSpec, echo};
use crate::world::{Context, DomainState, Reply, Tool};

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
    /// Products by sku.
    pub products: BTreeMap<String, Product>,
    /// Customers by id.
    pub customers: BTreeMap<String, Customer>,
    /// Coupons by code.
    pub coupons: BTreeMap<String, Coupon>,
    /// Orders by id.
    pub orders: BTreeMap<String, Order>,
    /// The number of the next new order; derived from the orders when a state
    /// is read, so it is not part of the state's JSON.
    #[serde(skip)]
    next_order: u32,
}

/// The serialized form of [`State`], checked before it becomes one.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateData {
    products: BTreeMap<String, Product>,
    customers: BTreeMap<String, Customer>,
    coupons: BTreeMap<String, Coupon>,
    orders: BTreeMap<String, Order>,
}

impl TryFrom<StateData> for State {
    type Error = String;

    fn try_from(data: StateData) -> Result<Self, String> {
        let next_order = data.orders.keys().filter_map(|id| order_number(id)).max().unwrap_or(0).saturating_add(1);
        let state = State { products: data.products, customers: data.customers, coupons: data.coupons, orders: data.orders, next_order };
        state.validate()?;
        Ok(state)
    }
}

fn order_number(id: &str) -> Option<u32> {
    id.strip_prefix("O-")?.parse().ok()
}

const CUSTOMER_ID: Param = Param::required("customer_id", ParamType::String, "Customer id, e.g. C-201.");
const SKU: Param = Param::required("sku", ParamType::String, "Product sku, e.g. SKU-101.");
const ORDER_ID: Param = Param::required("order_id", ParamType::String, "Order id, e.g. O-0001.");
const ORDER_ITEM: &[Param] = &[SKU, Param::required("quantity", ParamType::Integer, "Units to order, 1 to 100.")];

impl DomainState for State {
    const TOOLS: &'static [Tool<Self>] = &[
        Tool::new(
            ToolSpec {
                name: "search_products",
                description: "Searches the product catalog; every filter is optional. Results come in sku order, with price and stock.",
                mutates_state: false,
                params: &[
                    Param::optional("query", ParamType::String, "Words that must all appear in the product's name, category or sku."),
                    Param::optional("category", ParamType::String, "Only products of this category."),
                    Param::optional("min_price", ParamType::Number, "Lowest unit price, in dollars."),
                    Param::optional("max_price", ParamType::Number, "Highest unit price, in dollars."),
                ],
            },
            |s, args, ctx| s.call("search_products", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "check_inventory",
                description: "Checks the stock and price of one product.",
                mutates_state: false,
                params: &[SKU],
            },
            |s, args, ctx| s.call("check_inventory", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "create_order",
                description: "Places an order for a customer, shipped to one of their addresses on file, with at most one coupon. \
                              Takes the items out of stock.",
                mutates_state: true,
                params: &[
                    CUSTOMER_ID,
                    Param::required("items", ParamType::ObjectList(ORDER_ITEM), "The order's lines, 1 to 20, each sku once."),
                    Param::required(
                        "shipping_address",
                        ParamType::String,
                        "One of the customer's addresses on file, as get_customer shows it.",
                    ),
                    Param::optional("coupon_code", ParamType::String, "One coupon code."),
                ],
            },
            |s, args, ctx| s.call("create_order", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "check_order_status",
                description: "Returns an order's details and status, with the last day it can be returned once delivered.",
                mutates_state: false,
                params: &[ORDER_ID],
            },
            |s, args, ctx| s.call("check_order_status", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "process_return",
                description: "Returns whole lines of a delivered order within 30 days of delivery and refunds what was paid for them.",
                mutates_state: true,
                params: &[
                    ORDER_ID,
                    Param::required("items", ParamType::StringList, "Skus of the order's lines to return."),
                    Param::required("reason", ParamType::String, "Why the items come back."),
                    Param::required("refund_method", ParamType::OneOf(REFUND_METHODS), "Where the refund goes."),
                ],
            },
            |s, args, ctx| s.call("process_return", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "apply_coupon",
                description: "Validates a coupon against an order subtotal and calculates the discount; changes nothing.",
                mutates_state: false,
                params: &[
                    Param::required("code", ParamType::String, "The coupon code."),
                    Param::required("order_subtotal", ParamType::Number, "The order's subtotal in dollars, before any discount."),
                ],
            },
            |s, args, ctx| s.call("apply_coupon", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "get_customer",
                description: "Returns a customer's name, addresses on file and the coupons they have used.",
                mutates_state: false,
                params: &[CUSTOMER_ID],
            },
            |s, args, ctx| s.call("get_customer", args, ctx),
        ),
        Tool::new(
            ToolSpec {
                name: "list_orders",
                description: "Lists a customer's orders with their items, totals, status and delivery dates.",
                mutates_state: false,
                params: &[CUSTOMER_ID],
            },
            |s, args, ctx| s.call("list_orders", args, ctx),
        ),
    ];
    const DRIFT: Mapping = views::DRIFT;
    const SYNONYMS: &'static [Synonym] = phrasing::SYNONYMS;
    const DISTRACTORS: &'static [&'static str] = phrasing::DISTRACTORS;
    // Orders cannot be cancelled, and a return is final.
    const UNDO: &'static [Undo] = &[];

    fn tasks() -> Vec<Task> {
        tasks()
    }
}

impl State {
    fn call(&mut self, tool: &str, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
        match tool {
            "search_products" => self.search_products(args),
            "check_inventory" => {
                let (sku, product) = self.product(text(args, "sku")?)?;
                Ok(Reply::read(&Inventory {
                    in_stock: product.stock > 0,
                    name: &product.name,
                    price: product.price,
                    sku,
                    stock: product.stock,
                }))
            }
            "create_order" => self.create_order(args, ctx),
            "check_order_status" => {
                let (id, order) = self.order(text(args, "order_id")?)?;
                Ok(Reply::read(&Field("order", self.order_view(id, order))))
            }
            "process_return" => self.process_return(args, ctx),
            "apply_coupon" => {
                let (code, coupon) = self.valid_coupon(text(args, "code")?, ctx)?;
                let subtotal = amount(args, "order_subtotal")?.unwrap_or(Money::ZERO);
                let discount = applicable_discount(code, coupon, subtotal)?;
                Ok(Reply::read(&CouponCheck {
                    code,
                    discount,
                    note: "one coupon per order; each customer may use a coupon once",
                    order_subtotal: subtotal,
                    terms: coupon.terms(),
                    total: subtotal.minus(discount),
                    valid: true,
                }))
            }
            "get_customer" => {
                let (id, customer) = self.customer(text(args, "customer_id")?)?;
                let addresses = Seq(|| customer.addresses.iter().map(|a| AddressView { address: &a.address, label: &a.label }));
                let coupons_used = Seq(|| self.orders.values().filter(|o| o.customer_id == id).filter_map(|o| o.coupon_code.as_deref()));
                Ok(Reply::read(&CustomerView { addresses, coupons_used, customer_id: id, name: &customer.name }))
            }
            "list_orders" => {
                let (id, _) = self.customer(text(args, "customer_id")?)?;
                let orders = Seq(|| self.orders.iter().filter(|(_, o)| o.customer_id == id).map(|(oid, o)| self.order_view(oid, o)));
                Ok(Reply::read(&Orders { customer_id: id, orders }))
            }
            _ => Err(DomainError::new("UNKNOWN_TOOL", format!("e-commerce has no tool '{}'", echo(tool)))),
        }
    }
}

impl State {
    fn search_products(&self, args: &Args) -> Result<Reply, DomainError> {
        let words: Vec<String> = text(args, "query")?.split_whitespace().map(str::to_lowercase).collect();
        let category = text(args, "category")?;
        if !category.is_empty() && !self.products.values().any(|p| p.category.eq_ignore_ascii_case(category)) {
            let known: BTreeSet<&str> = self.products.values().map(|p| p.category.as_str()).collect();
            let known: Vec<&str> = known.into_iter().collect();
            return Err(DomainError::new(
                "UNKNOWN_CATEGORY",
                format!("no category '{}'; categories: {}", echo(category), known.join(", ")),
            ));
        }
        let min = amount(args, "min_price")?;
        let max = amount(args, "max_price")?;
        if let (Some(min), Some(max)) = (min, max)
            && min > max
        {
            return Err(DomainError::new("INVALID_RANGE", format!("min_price {min} is above max_price {max}")));
        }
        // Each product's text is lowercased into one buffer, not a string of its own.
        let mut haystack = String::new();
        let matching: Vec<(&String, &Product)> = self
            .products
            .iter()
            .filter(|(_, p)| category.is_empty() || p.category.eq_ignore_ascii_case(category))
            .filter(|(_, p)| min.is_none_or(|m| p.price >= m) && max.is_none_or(|m| p.price <= m))
            .filter(|(sku, p)| {
                if words.is_empty() {
                    return true;
                }
                haystack.clear();
                for (i, part) in [sku.as_str(), &p.name, &p.category].into_iter().enumerate() {
                    if i > 0 {
                        haystack.push(' ');
                    }
                    haystack.push_str(part);
                }
                if haystack.is_ascii() {
                    haystack.make_ascii_lowercase();
                } else {
                    haystack = haystack.to_lowercase();
                }
                words.iter().all(|w| haystack.contains(w.as_str()) || w.strip_suffix('s').is_some_and(|stem| haystack.contains(stem)))
            })
            .collect();
        let products = Seq(|| {
            matching.iter().take(MAX_SEARCH_RESULTS).map(|&(sku, p)| ProductView {
                category: &p.category,
                in_stock: p.stock > 0,
                name: &p.name,
                price: p.price,
                sku,
                stock: p.stock,
            })
        });
        Ok(Reply::read(&Search { count: matching.len(), products, truncated: matching.len() > MAX_SEARCH_RESULTS }))
    }

    fn create_order(&mut self, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
        let (customer_id, customer) = self.customer(text(args, "customer_id")?)?;
        let lines = self.order_lines(args.list("items"))?;
        let shipping_address = address_on_file(customer_id, customer, text(args, "shipping_address")?)?;
        let subtotal = lines.iter().fold(Money::ZERO, |sum, l| sum.plus(l.unit_price.times(l.quantity)));
        let (coupon_code, discount) = match text(args, "coupon_code")? {
            "" => (None, Money::ZERO),
            requested => {
                let (code, coupon) = self.valid_coupon(requested, ctx)?;
                if let Some((used_in, _)) =
                    self.orders.iter().find(|(_, o)| o.customer_id == customer_id && o.coupon_code.as_deref() == Some(code))
                {
                    return Err(DomainError::new(
                        "COUPON_ALREADY_USED",
                        format!(
                            "customer {customer_id} already used coupon {code} in order {used_in}; each coupon is usable once per customer"
                        ),
                    ));
                }
                (Some(code.to_owned()), applicable_discount(code, coupon, subtotal)?)
            }
        };
        let customer_id = customer_id.to_owned();
        // Every line was checked against its stock above; the checked
        // subtraction keeps stock from ever going below zero all the same,
        // and nothing changes until every line has passed it.
        let left = lines
            .iter()
            .map(|line| {
                let stock = self.products.get(&line.sku).map_or(0, |p| p.stock);
                stock.checked_sub(line.quantity).ok_or_else(|| insufficient_stock(&line.sku, stock, line.quantity))
            })
            .collect::<Result<Vec<u32>, DomainError>>()?;
        for (line, left) in lines.iter().zip(left) {
            if let Some(product) = self.products.get_mut(&line.sku) {
                product.stock = left;
            }
        }
        let order = Order {
            customer_id,
            items: lines,
            subtotal,
            discount,
            total: subtotal.minus(discount),
            coupon_code,
            shipping_address,
            status: OrderStatus::Placed,
            delivered_on: None,
            refunded: Money::ZERO,
            returned_skus: Vec::new(),
            returns: Vec::new(),
        };
        let id = self.new_order_id();
        let reply = Reply::wrote(&Field("order", self.order_view(&id, &order)));
        self.orders.insert(id, order);
        Ok(reply)
    }

    /// Checks the requested lines against the catalog and its stock.
    fn order_lines(&self, items: &[Value]) -> Result<Vec<OrderLine>, DomainError> {
        if items.is_empty() {
            return Err(DomainError::new("EMPTY_ORDER", "an order needs at least one item"));
        }
        if items.len() > MAX_LINES {
            return Err(DomainError::new("TOO_MANY_LINES", format!("an order has at most {MAX_LINES} lines; got {}", items.len())));
        }
        let mut lines: Vec<OrderLine> = Vec::with_capacity(items.len());
        for item in items {
            let (sku, product) = self.product(item.get("sku").and_then(Value::as_str).unwrap_or_default())?;
            let quantity = item.get("quantity").cloned().unwrap_or(Value::Null);
            let Some(quantity) =
                crate::tool::as_integer(&quantity).and_then(|q| u32::try_from(q).ok()).filter(|q| (1..=MAX_QUANTITY).contains(q))
            else {
                return Err(DomainError::new(
                    "INVALID_QUANTITY",
                    format!("quantity of {sku} must be a whole number from 1 to {MAX_QUANTITY}; got {}", echo(&quantity.to_string())),
                ));
            };
            if lines.iter().any(|l| l.sku == sku) {
                return Err(DomainError::new(
                    "DUPLICATE_SKU",
                    format!("{sku} appears on more than one line; put it on one line with the quantities added up"),
                ));
            }
            if product.stock == 0 {
                return Err(DomainError::new("OUT_OF_STOCK", format!("{sku} ({}) is out of stock: 0 available", product.name)));
            }
            if quantity > product.stock {
                return Err(insufficient_stock(sku, product.stock, quantity));
            }
            lines.push(OrderLine { sku: sku.to_owned(), quantity, unit_price: product.price });
        }
        Ok(lines)
    }

    fn process_return(&mut self, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
        let (id, order) = self.order(text(args, "order_id")?)?;
        match order.status {
            OrderStatus::Placed | OrderStatus::Shipped => return Err(not_delivered(id, order.status)),
            OrderStatus::Returned => {
                return Err(DomainError::new("ALREADY_RETURNED", format!("every item of order {id} has already been returned")));
            }
            OrderStatus::Delivered | OrderStatus::PartiallyReturned => {}
        }
        let delivered = order.delivered_on.as_deref().and_then(Date::parse).ok_or_else(|| not_delivered(id, order.status))?;
        let closes = delivered.add_days(RETURN_WINDOW_DAYS);
        if ctx.today > closes {
            return Err(DomainError::new(
                "RETURN_WINDOW_CLOSED",
                format!(
                    "order {id} was delivered on {delivered}; returns are accepted for {RETURN_WINDOW_DAYS} days, \
                     until {closes}, and today is {}",
                    ctx.today
                ),
            ));
        }
        let requested = args.list("items");
        if requested.is_empty() {
            return Err(DomainError::new("EMPTY_RETURN", "a return needs at least one sku of the order"));
        }
        let mut returning: Vec<&str> = Vec::with_capacity(requested.len());
        for value in requested {
            let wanted = value.as_str().unwrap_or_default().trim();
            let Some(line) =
                order.items.iter().find(|l| l.sku == wanted).or_else(|| order.items.iter().find(|l| l.sku.eq_ignore_ascii_case(wanted)))
            else {
                let skus: Vec<&str> = order.items.iter().map(|l| l.sku.as_str()).collect();
                return Err(DomainError::new(
                    "SKU_NOT_IN_ORDER",
                    format!("order {id} has no item '{}'; its items: {}", echo(wanted), skus.join(", ")),
                ));
            };
            if order.returned_skus.contains(&line.sku) {
                return Err(DomainError::new("ALREADY_RETURNED", format!("{} of order {id} has already been returned", line.sku)));
            }
            if returning.contains(&line.sku.as_str()) {
                return Err(DomainError::new("DUPLICATE_SKU", format!("{} is listed more than once in the return", line.sku)));
            }
            returning.push(&line.sku);
        }
        let reason = text(args, "reason")?;
        if reason.is_empty() {
            return Err(DomainError::new("INVALID_REASON", "reason must not be empty"));
        }
        let method = args.str("refund_method");
        let refund_method = RefundMethod::parse(method).ok_or_else(|| {
            DomainError::new(
                "INVALID_REFUND_METHOD",
                format!("refund_method '{}' is not one of {}", echo(method), REFUND_METHODS.join(", ")),
            )
        })?;
        let paid = order
            .items
            .iter()
            .zip(order.line_payments())
            .filter(|(line, _)| returning.contains(&line.sku.as_str()))
            .fold(Money::ZERO, |sum, (_, paid)| sum.plus(paid));
        let remaining = order.total.minus(order.refunded);
        debug_assert!(paid <= remaining, "order {id}: refund {paid} exceeds what is left of the total, {remaining}");
        let refund = paid.min(remaining);
        let skus: Vec<String> = order.items.iter().filter(|l| returning.contains(&l.sku.as_str())).map(|l| l.sku.clone()).collect();
        let id = id.to_owned();
        let Some(order) = self.orders.get_mut(&id) else {
            return Err(unknown_order(&id));
        };
        order.refunded = order.refunded.plus(refund);
        let returned: Vec<String> =
            order.items.iter().filter(|l| order.returned_skus.contains(&l.sku) || skus.contains(&l.sku)).map(|l| l.sku.clone()).collect();
        order.status = if returned.len() == order.items.len() { OrderStatus::Returned } else { OrderStatus::PartiallyReturned };
        order.returned_skus = returned;
        let reply = Reply::wrote(&Returned {
            order: ReturnedOrder {
                order_id: &id,
                refunded: order.refunded,
                returned_skus: &order.returned_skus,
                status: order.status,
                total: order.total,
            },
            r#return: ReturnView { order_id: &id, refund, refund_method, skus: &skus },
        });
        order.returns.push(ReturnRecord { skus, reason: reason.to_owned(), refund_method, amount: refund });
        Ok(reply)
    }

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
        lookup(&self.products, sku).ok_or_else(|| {
            DomainError::new("UNKNOWN_SKU", format!("no product with sku '{}'; search_products lists the catalog", echo(sku)))
        })
    }

    fn customer(&self, id: &str) -> Result<(&str, &Customer), DomainError> {
        lookup(&self.customers, id).ok_or_else(|| DomainError::new("UNKNOWN_CUSTOMER", format!("no customer '{}'", echo(id))))
    }

    fn order(&self, id: &str) -> Result<(&str, &Order), DomainError> {
        lookup(&self.orders, id).ok_or_else(|| unknown_order(id))
    }

    /// Takes the next sequential order id, skipping any already in use.
    fn new_order_id(&mut self) -> String {
        let mut number = self.next_order.max(1);
        let mut id = crate::date::numbered_id("O-", number);
        while self.orders.contains_key(&id) {
            number = number.saturating_add(1);
            id = crate::date::numbered_id("O-", number);
        }
        self.next_order = number.saturating_add(1);
        id
    }

    /// An order as the tools show it: the stored order with its id, product
    /// names and, once delivered, the last day it can be returned.
    fn order_view<'a>(&'a self, id: &'a str, order: &'a Order) -> OrderView<'a, impl Serialize + 'a, impl Serialize + 'a> {
        let items = Seq(move || {
            order.items.iter().map(|l| LineView {
                name: self.products.get(&l.sku).map(|p| p.name.as_str()),
                quantity: l.quantity,
                sku: &l.sku,
                unit_price: l.unit_price,
            })
        });
        let returns = Seq(move || {
            order.returns.iter().map(|r| ReturnRecordView {
                amount: r.amount,
                reason: &r.reason,
                refund_method: r.refund_method,
                skus: &r.skus,
            })
        });
        OrderView {
            coupon_code: order.coupon_code.as_deref(),
            customer_id: &order.customer_id,
            delivered_on: order.delivered_on.as_deref(),
            discount: order.discount,
            items,
            order_id: id,
            refunded: order.refunded,
            returnable_until: order.delivered_on.as_deref().and_then(Date::parse).map(|d| d.add_days(RETURN_WINDOW_DAYS).to_string()),
            returned_skus: &order.returned_skus,
            returns,
            shipping_address: &order.shipping_address,
            status: order.status,
            subtotal: order.subtotal,
            total: order.total,
        }
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

// Results, written straight to canonical JSON: fields in key order.

#[derive(Serialize)]
struct OrderView<'a, I: Serialize, R: Serialize> {
    coupon_code: Option<&'a str>,
    customer_id: &'a str,
    delivered_on: Option<&'a str>,
    discount: Money,
    items: I,
    order_id: &'a str,
    refunded: Money,
    returnable_until: Option<String>,
    returned_skus: &'a [String],
    returns: R,
    shipping_address: &'a str,
    status: OrderStatus,
    subtotal: Money,
    total: Money,
}

/// An order line with its product's name.
#[derive(Serialize)]
struct LineView<'a> {
    name: Option<&'a str>,
    quantity: u32,
    sku: &'a str,
    unit_price: Money,
}

#[derive(Serialize)]
struct ReturnRecordView<'a> {
    amount: Money,
    reason: &'a str,
    refund_method: RefundMethod,
    skus: &'a [String],
}

#[derive(Serialize)]
struct Inventory<'a> {
    in_stock: bool,
    name: &'a str,
    price: Money,
    sku: &'a str,
    stock: u32,
}

#[derive(Serialize)]
struct CouponCheck<'a> {
    code: &'a str,
    discount: Money,
    note: &'static str,
    order_subtotal: Money,
    terms: String,
    total: Money,
    valid: bool,
}

#[derive(Serialize)]
struct AddressView<'a> {
    address: &'a str,
    label: &'a str,
}

#[derive(Serialize)]
struct CustomerView<'a, A: Serialize, C: Serialize> {
    addresses: A,
    coupons_used: C,
    customer_id: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
struct Orders<'a, O: Serialize> {
    customer_id: &'a str,
    orders: O,
}

#[derive(Serialize)]
struct ProductView<'a> {
    category: &'a str,
    in_stock: bool,
    name: &'a str,
    price: Money,
    sku: &'a str,
    stock: u32,
}

#[derive(Serialize)]
struct Search<P: Serialize> {
    count: usize,
    products: P,
    truncated: bool,
}

#[derive(Serialize)]
struct ReturnedOrder<'a> {
    order_id: &'a str,
    refunded: Money,
    returned_skus: &'a [String],
    status: OrderStatus,
    total: Money,
}

#[derive(Serialize)]
struct ReturnView<'a> {
    order_id: &'a str,
    refund: Money,
    refund_method: RefundMethod,
    skus: &'a [String],
}

#[derive(Serialize)]
struct Returned<'a> {
    order: ReturnedOrder<'a>,
    r#return: ReturnView<'a>,
}

/// The coupon's discount on `subtotal`, if the subtotal reaches its minimum.
fn applicable_discount(code: &str, coupon: &Coupon, subtotal: Money) -> Result<Money, DomainError> {
    if subtotal < coupon.min_subtotal {
        return Err(DomainError::new(
            "COUPON_MINIMUM_NOT_MET",
            format!("coupon {code} needs a subtotal of at least {}; the subtotal is {subtotal}", coupon.min_subtotal),
        ));
    }
    Ok(coupon.discount(subtotal))
}

/// The address on file matching `requested` (ignoring case and spacing).
fn address_on_file(customer_id: &str, customer: &Customer, requested: &str) -> Result<String, DomainError> {
    let normal = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    let same = |on_file: &str| {
        if on_file.is_ascii() && requested.is_ascii() {
            // What `normal` compares, without building the strings.
            let (mut a, mut b) = (on_file.split_whitespace(), requested.split_whitespace());
            loop {
                match (a.next(), b.next()) {
                    (None, None) => return true,
                    (Some(x), Some(y)) if x.eq_ignore_ascii_case(y) => {}
                    _ => return false,
                }
            }
        }
        normal(on_file) == normal(requested)
    };
    if let Some(found) = customer.addresses.iter().find(|a| same(&a.address)) {
        return Ok(found.address.clone());
    }
    let on_file: Vec<String> = customer.addresses.iter().map(|a| format!("{}: {}", a.label, a.address)).collect();
    let on_file = if on_file.is_empty() { "none".to_owned() } else { on_file.join("; ") };
    Err(DomainError::new(
        "ADDRESS_NOT_ON_FILE",
        format!("'{}' is not an address on file for {customer_id}; addresses on file: {on_file}", echo(requested)),
    ))
}

/// Finds a key, exactly after trimming or else ignoring ASCII case.
fn lookup<'a, V>(map: &'a BTreeMap<String, V>, key: &str) -> Option<(&'a str, &'a V)> {
    let key = key.trim();
    map.get_key_value(key).or_else(|| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key))).map(|(k, v)| (k.as_str(), v))
}

/// A string argument, trimmed; empty when absent; at most 500 characters.
fn text<'a>(args: &'a Args, name: &str) -> Result<&'a str, DomainError> {
    let value = args.str(name).trim();
    if value.chars().count() > MAX_TEXT_CHARS {
        return Err(DomainError::new("TEXT_TOO_LONG", format!("{name} is longer than {MAX_TEXT_CHARS} characters")));
    }
    Ok(value)
}

/// A dollar argument in cents; `None` when absent.
fn amount(args: &Args, name: &str) -> Result<Option<Money>, DomainError> {
    let Some(dollars) = args.opt_f64(name) else {
        return Ok(None);
    };
    Money::from_dollars(dollars).map(Some).ok_or_else(|| {
        DomainError::new("INVALID_AMOUNT", format!("{name} must be between $0.00 and {}; got {dollars}", Money(MAX_AMOUNT_CENTS)))
    })
}

fn insufficient_stock(sku: &str, stock: u32, quantity: u32) -> DomainError {
    DomainError::new("INSUFFICIENT_STOCK", format!("only {stock} of {sku} in stock; {quantity} requested"))
}

fn not_delivered(id: &str, status: OrderStatus) -> DomainError {
    DomainError::new("NOT_DELIVERED", format!("order {id} is {}, not delivered; only delivered orders can be returned", status.name()))
}

fn unknown_order(id: &str) -> DomainError {
    DomainError::new("UNKNOWN_ORDER", format!("no order '{}'; list_orders shows a customer's orders", echo(id)))
}

fn world(state: Value) -> World {
    World::Ecommerce(serde_json::from_value(state).expect("e-commerce task states are valid"))
}

/// The shop every task starts from: three past orders, so new orders begin at O-0004.
fn shop() -> Value {
    json!({
        "products": {
            "SKU-101": {"name": "Aero Wireless Mouse", "category": "accessories", "price": 24.99, "stock": 40},
            "SKU-102": {"name": "Glide Wireless Mouse", "category": "accessories", "price": 19.99, "stock": 0},
            "SKU-103": {"name": "Pulse Wireless Mouse", "category": "accessories", "price": 21.50, "stock": 12},
            "SKU-104": {"name": "Pro Wired Mouse", "category": "accessories", "price": 12.99, "stock": 30},
            "SKU-105": {"name": "K2 Mechanical Keyboard", "category": "accessories", "price": 89.00, "stock": 8},
            "SKU-106": {"name": "USB-C Cable 2 m", "category": "accessories", "price": 9.99, "stock": 100},
            "SKU-201": {"name": "Trail Wireless Earbuds", "category": "audio", "price": 19.99, "stock": 25},
            "SKU-202": {"name": "Nova Wireless Earbuds", "category": "audio", "price": 34.99, "stock": 14},
            "SKU-203": {"name": "Basic Wired Earphones", "category": "audio", "price": 9.99, "stock": 50},
            "SKU-204": {"name": "Studio Over-Ear Headphones", "category": "audio", "price": 79.99, "stock": 5},
            "SKU-301": {"name": "Steel Electric Kettle 1.7 L", "category": "kitchen", "price": 32.00, "stock": 6},
            "SKU-302": {"name": "Compact Electric Kettle 1.0 L", "category": "kitchen", "price": 27.49, "stock": 9},
            "SKU-303": {"name": "Glass Electric Kettle 1.5 L", "category": "kitchen", "price": 44.90, "stock": 3},
            "SKU-304": {"name": "Stovetop Whistling Kettle", "category": "kitchen", "price": 18.99, "stock": 15}
        },
        "customers": {
            "C-201": {"name": "Maya Chen", "addresses": [
                {"label": "home", "address": "12 Elm Street, Springfield, IL 62704"},
                {"label": "work", "address": "400 Market Street, Suite 210, Springfield, IL 62701"}
            ]},
            "C-202": {"name": "Jonas Weber", "addresses": [
                {"label": "home", "address": "88 Harbor Road, Portland, ME 04101"},
                {"label": "work", "address": "2 Monument Square, Portland, ME 04101"}
            ]},
            "C-203": {"name": "Priya Nair", "addresses": [
                {"label": "home", "address": "5 Birch Lane, Austin, TX 78704"},
                {"label": "office", "address": "900 Congress Avenue, Floor 3, Austin, TX 78701"}
            ]},
            "C-204": {"name": "Sam Okafor", "addresses": [
                {"label": "home", "address": "27 Willow Court, Madison, WI 53703"}
            ]}
        },
        "coupons": {
            "SAVE10": {"percent_off": 10, "min_subtotal": 0, "expires": "2026-03-31"},
            "HOME5": {"amount_off": 5.00, "min_subtotal": 25.00, "expires": "2026-02-28"},
            "WINTER25": {"percent_off": 25, "min_subtotal": 0, "expires": "2026-01-15"},
            "TECH15": {"percent_off": 15, "min_subtotal": 50.00, "expires": "2026-01-31"},
            "BIG20": {"amount_off": 20.00, "min_subtotal": 150.00, "expires": "2026-06-30"}
        },
        "orders": {
            "O-0001": {
                "customer_id": "C-202",
                "items": [{"sku": "SKU-204", "quantity": 1, "unit_price": 84.99}],
                "subtotal": 84.99, "discount": 0, "total": 84.99, "coupon_code": null,
                "shipping_address": "88 Harbor Road, Portland, ME 04101",
                "status": "delivered", "delivered_on": "2025-12-02",
                "refunded": 0, "returned_skus": [], "returns": []
            },
            "O-0002": {
                "customer_id": "C-201",
                "items": [{"sku": "SKU-105", "quantity": 1, "unit_price": 89.00}],
                "subtotal": 89.00, "discount": 8.90, "total": 80.10, "coupon_code": "SAVE10",
                "shipping_address": "12 Elm Street, Springfield, IL 62704",
                "status": "shipped", "delivered_on": null,
                "refunded": 0, "returned_skus": [], "returns": []
            },
            "O-0003": {
                "customer_id": "C-202",
                "items": [
                    {"sku": "SKU-204", "quantity": 1, "unit_price": 79.99},
                    {"sku": "SKU-106", "quantity": 2, "unit_price": 9.99}
                ],
                "subtotal": 99.97, "discount": 15.00, "total": 84.97, "coupon_code": "TECH15",
                "shipping_address": "88 Harbor Road, Portland, ME 04101",
                "status": "delivered", "delivered_on": "2026-01-14",
                "refunded": 0, "returned_skus": [], "returns": []
            }
        }
    })
}

/// The verified e-commerce tasks.
pub(crate) fn tasks() -> Vec<Task> {
    let today = Date::from_ymd(2026, 1, 20).expect("valid date");
    vec![
        Task {
            id: "ecommerce/simple-order/001".into(),
            domain: crate::Domain::Ecommerce,
            level: 1,
            template: &phrasing::SIMPLE_ORDER,
            slots: slots(&[("quantity", "2"), ("product", "Aero Wireless Mouse"), ("sku", "SKU-101"), ("customer", "C-201")]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("get_customer", json!({"customer_id": "C-201"})),
                Call::new("check_inventory", json!({"sku": "SKU-101"})),
                Call::new(
                    "create_order",
                    json!({
                        "customer_id": "C-201",
                        "items": [{"sku": "SKU-101", "quantity": 2}],
                        "shipping_address": "12 Elm Street, Springfield, IL 62704"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one order for C-201: 2 x SKU-101, no coupon, to the home address",
                    "/orders",
                    json!({
                        "customer_id": "C-201",
                        "items": [{"sku": "SKU-101", "quantity": 2}],
                        "coupon_code": null,
                        "shipping_address": "12 Elm Street, Springfield, IL 62704"
                    }),
                    1,
                ),
                Check::equals("order O-0004 totals $49.98 (2 x $24.99)", "/orders/O-0004/total", json!(49.98)),
                Check::equals("SKU-101 stock down from 40 to 38", "/products/SKU-101/stock", json!(38)),
            ],
            alternatives: vec!["/orders/O-0004", "/products/SKU-101/stock"],
            expected: Default::default(),
        },
        Task {
            id: "ecommerce/cheapest-coupon/002".into(),
            domain: crate::Domain::Ecommerce,
            level: 2,
            template: &phrasing::CHEAPEST_COUPON,
            slots: slots(&[("kind", "wireless mouse"), ("customer", "C-203"), ("label", "office"), ("coupon", "SAVE10")]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("search_products", json!({"query": "wireless mouse"})),
                Call::new("get_customer", json!({"customer_id": "C-203"})),
                Call::new("apply_coupon", json!({"code": "SAVE10", "order_subtotal": 21.50})),
                Call::new(
                    "create_order",
                    json!({
                        "customer_id": "C-203",
                        "items": [{"sku": "SKU-103", "quantity": 1}],
                        "shipping_address": "900 Congress Avenue, Floor 3, Austin, TX 78701",
                        "coupon_code": "SAVE10"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one order for C-203: 1 x SKU-103 (the cheapest wireless mouse in stock) with coupon SAVE10, to the office address",
                    "/orders",
                    json!({
                        "customer_id": "C-203",
                        "items": [{"sku": "SKU-103", "quantity": 1}],
                        "coupon_code": "SAVE10",
                        "shipping_address": "900 Congress Avenue, Floor 3, Austin, TX 78701"
                    }),
                    1,
                ),
                Check::equals("order O-0004 totals $19.35 ($21.50 less 10%)", "/orders/O-0004/total", json!(19.35)),
                Check::equals("SKU-103 stock down from 12 to 11", "/products/SKU-103/stock", json!(11)),
            ],
            alternatives: vec!["/orders/O-0004", "/products/SKU-103/stock"],
            expected: Default::default(),
        },
        Task {
            id: "ecommerce/cheapest-coupon/003".into(),
            domain: crate::Domain::Ecommerce,
            level: 2,
            template: &phrasing::CHEAPEST_COUPON_003,
            slots: slots(&[("kind", "electric kettle"), ("customer", "C-204"), ("coupon_a", "WINTER25"), ("coupon_b", "HOME5")]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("search_products", json!({"query": "electric kettle"})),
                Call::new("get_customer", json!({"customer_id": "C-204"})),
                Call::new("apply_coupon", json!({"code": "HOME5", "order_subtotal": 27.49})),
                Call::new(
                    "create_order",
                    json!({
                        "customer_id": "C-204",
                        "items": [{"sku": "SKU-302", "quantity": 1}],
                        "shipping_address": "27 Willow Court, Madison, WI 53703",
                        "coupon_code": "HOME5"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one order for C-204: 1 x SKU-302 (the cheapest electric kettle) with the valid coupon HOME5",
                    "/orders",
                    json!({
                        "customer_id": "C-204",
                        "items": [{"sku": "SKU-302", "quantity": 1}],
                        "coupon_code": "HOME5",
                        "shipping_address": "27 Willow Court, Madison, WI 53703"
                    }),
                    1,
                ),
                Check::equals("order O-0004 totals $22.49 ($27.49 less $5.00)", "/orders/O-0004/total", json!(22.49)),
                Check::equals("SKU-302 stock down from 9 to 8", "/products/SKU-302/stock", json!(8)),
            ],
            alternatives: vec!["/orders/O-0004", "/products/SKU-302/stock"],
            expected: Default::default(),
        },
        Task {
            id: "ecommerce/simple-order/004".into(),
            domain: crate::Domain::Ecommerce,
            level: 1,
            template: &phrasing::SIMPLE_ORDER_004,
            slots: slots(&[
                ("quantity", "3"),
                ("product", "Trail Wireless Earbuds"),
                ("sku", "SKU-201"),
                ("customer", "C-202"),
                ("coupon", "SAVE10"),
            ]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("get_customer", json!({"customer_id": "C-202"})),
                Call::new(
                    "create_order",
                    json!({
                        "customer_id": "C-202",
                        "items": [{"sku": "SKU-201", "quantity": 3}],
                        "shipping_address": "2 Monument Square, Portland, ME 04101",
                        "coupon_code": "SAVE10"
                    }),
                ),
            ],
            checks: vec![
                Check::count(
                    "one order for C-202: 3 x SKU-201 with coupon SAVE10, to the work address",
                    "/orders",
                    json!({
                        "customer_id": "C-202",
                        "items": [{"sku": "SKU-201", "quantity": 3}],
                        "coupon_code": "SAVE10",
                        "shipping_address": "2 Monument Square, Portland, ME 04101"
                    }),
                    1,
                ),
                Check::equals("order O-0004 has a $6.00 discount (10% of $59.97)", "/orders/O-0004/discount", json!(6.00)),
                Check::equals("order O-0004 totals $53.97", "/orders/O-0004/total", json!(53.97)),
                Check::equals("SKU-201 stock down from 25 to 22", "/products/SKU-201/stock", json!(22)),
            ],
            alternatives: vec!["/orders/O-0004", "/products/SKU-201/stock"],
            expected: Default::default(),
        },
        Task {
            id: "ecommerce/return/005".into(),
            domain: crate::Domain::Ecommerce,
            level: 2,
            template: &phrasing::RETURN,
            slots: slots(&[("customer", "C-202"), ("product", "Studio Over-Ear Headphones"), ("reason", "they are too tight")]),
            today,
            initial: world(shop()),
            reference: vec![
                Call::new("list_orders", json!({"customer_id": "C-202"})),
                Call::new("check_order_status", json!({"order_id": "O-0003"})),
                Call::new(
                    "process_return",
                    json!({"order_id": "O-0003", "items": ["SKU-204"], "reason": "too tight", "refund_method": "original_payment"}),
                ),
            ],
            checks: vec![
                Check::equals(
                    "the headphones (SKU-204) of the recent order O-0003 are returned, and nothing else",
                    "/orders/O-0003/returned_skus",
                    json!(["SKU-204"]),
                ),
                Check::equals(
                    "O-0003 refunds $67.99: the headphones' $79.99 less their share of the $15.00 coupon discount",
                    "/orders/O-0003/refunded",
                    json!(67.99),
                ),
                Check::equals("O-0003 is partially returned", "/orders/O-0003/status", json!("partially_returned")),
                Check::equals(
                    "the refund goes to the original payment",
                    "/orders/O-0003/returns/0/refund_method",
                    json!("original_payment"),
                ),
                Check::equals("the old order O-0001, outside the return window, is untouched", "/orders/O-0001/status", json!("delivered")),
            ],
            alternatives: vec![
                "/orders/O-0003/status",
                "/orders/O-0003/refunded",
                "/orders/O-0003/returned_skus",
                "/orders/O-0003/returns",
            ],
            expected: Default::default(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::play;
    use crate::world::testing::Answer;
    use pretty_assertions::assert_eq;
    use serde_json::Map;

    fn today() -> Date {
        Date::from_ymd(2026, 1, 20).unwrap()
    }

    fn state() -> State {
        serde_json::from_value(shop()).unwrap()
    }

    fn call(state: &mut State, tool: &str, args: Value) -> Answer {
        crate::world::testing::call(state, today(), tool, args)
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
        json!({"order_id": order_id, "items": items, "reason": "changed my mind", "refund_method": "original_payment"})
    }

    fn to_json(state: &State) -> Value {
        serde_json::to_value(state).unwrap()
    }

    /// The names of the checks an episode of `task_id` playing `calls` fails.
    fn failed(task_id: &str, calls: &[Call]) -> Vec<String> {
        let task = crate::task(task_id).unwrap();
        let episode = play(task, 0, 0, calls);
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
        assert_eq!(
            (o.status, o.refunded, o.returned_skus.clone()),
            (OrderStatus::Returned, o.total, vec!["SKU-204".into(), "SKU-106".into()])
        );
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
        assert!(crate::json::matches(&written, &read) && crate::json::matches(&read, &written), "{}", crate::json::canonical(&read));
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
        rejects(
            &mut s,
            "create_order",
            order("C-201", json!([{"sku": "SKU-101", "quantity": 1}]), HOME_201, Some("FREE")),
            "UNKNOWN_COUPON",
        );
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
        let m = rejects(
            &mut state(),
            "create_order",
            order("C-201", json!([{"sku": "SKU-102", "quantity": 1}]), HOME_201, None),
            "OUT_OF_STOCK",
        );
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
        let reply = s.call("apply_coupon", &args, &ctx).unwrap();
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
        assert_eq!(
            m,
            "order O-0001 was delivered on 2025-12-02; returns are accepted for 30 days, until 2026-01-01, and today is 2026-01-20"
        );
        let args = Args::from_map(ret("O-0003", &["SKU-106"]).as_object().unwrap().clone());
        let last_day = Context { today: Date::from_ymd(2026, 2, 13).unwrap() };
        let day_after = Context { today: Date::from_ymd(2026, 2, 14).unwrap() };
        assert_eq!(s.clone().call("process_return", &args, &day_after).unwrap_err().code, "RETURN_WINDOW_CLOSED");
        s.call("process_return", &args, &last_day).unwrap();
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
        for spec in State::TOOLS.iter().map(|t| &t.spec) {
            for value in &odd {
                let map: Map<String, Value> = spec.params.iter().map(|p| (p.name.to_owned(), value.clone())).collect();
                let mut s = state();
                let _ = s.call(spec.name, &Args::from_map(map), &ctx);
            }
        }
        assert_eq!(state().call("drop_tables", &Args::from_map(Map::new()), &ctx).unwrap_err().code, "UNKNOWN_TOOL");
    }

    // --- tasks: plausible wrong agents fail a named check ---

    #[test]
    fn five_tasks_on_both_levels_with_every_slot_filled() {
        let tasks = tasks();
        assert_eq!(tasks.len(), 5);
        assert_eq!(tasks.iter().map(|t| t.level).collect::<Vec<_>>(), [1, 2, 2, 1, 2]);
        for task in &tasks {
            assert!(task.id.starts_with("ecommerce/"), "{}", task.id);
            assert_eq!(task.initial.domain(), crate::Domain::Ecommerce);
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
        assert!(pricier.contains(&one.to_owned()) && pricier.contains(&crate::COLLATERAL_CHECK.to_owned()), "{pricier:?}");
        assert!(failed(id, &[create("C-201", "SKU-101", 1, HOME_201, None)]).contains(&one.to_owned()));
        let work = failed(id, &[create("C-201", "SKU-101", 2, "400 Market Street, Suite 210, Springfield, IL 62701", None)]);
        assert_eq!(work, [one]);
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
        assert!(pricier.contains(&one.to_owned()) && pricier.contains(&crate::COLLATERAL_CHECK.to_owned()), "{pricier:?}");
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
        assert_eq!(home, ["one order for C-202: 3 x SKU-201 with coupon SAVE10, to the work address"]);
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
        assert_eq!(failed(id, &[Call::new("process_return", credit)]), [refund]);
    }
}
