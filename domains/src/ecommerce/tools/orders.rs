//! The order tools: placing an order, looking orders up, and the customer
//! views orders are placed from.

use serde::Serialize;
use serde_json::Value;

use super::coupons::applicable_discount;
use super::text;
use crate::{
    ecommerce::views::{AddressView, CustomerView, LineView, OrderView, Orders, ReturnRecordView},
    ecommerce::{Customer, MAX_LINES, MAX_QUANTITY, Money, Order, OrderLine, OrderStatus, RETURN_WINDOW_DAYS, State},
};
use toolenv_core::{
    Args, Context, DomainError, Reply,
    date::Date,
    echo,
    json::{Field, Seq},
};

pub(super) fn create_order(s: &mut State, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
    let (customer_id, customer) = s.customer(text(args, "customer_id")?)?;
    let lines = s.order_lines(args.list("items"))?;
    let shipping_address = address_on_file(customer_id, customer, text(args, "shipping_address")?)?;
    let subtotal = lines.iter().fold(Money::ZERO, |sum, l| sum.plus(l.unit_price.times(l.quantity)));
    let (coupon_code, discount) = match text(args, "coupon_code")? {
        "" => (None, Money::ZERO),
        requested => {
            let (code, coupon) = s.valid_coupon(requested, ctx)?;
            if let Some((used_in, _)) =
                s.orders.iter().find(|(_, o)| o.customer_id == customer_id && o.coupon_code.as_deref() == Some(code))
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
            let stock = s.products.get(&line.sku).map_or(0, |p| p.stock);
            stock.checked_sub(line.quantity).ok_or_else(|| insufficient_stock(&line.sku, stock, line.quantity))
        })
        .collect::<Result<Vec<u32>, DomainError>>()?;
    for (line, left) in lines.iter().zip(left) {
        if let Some(product) = s.products.get_mut(&line.sku) {
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
    let id = s.new_order_id();
    let reply = Reply::wrote(&Field("order", s.order_view(&id, &order)));
    s.orders.insert(id, order.into());
    Ok(reply)
}

pub(super) fn check_order_status(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (id, order) = s.order(text(args, "order_id")?)?;
    Ok(Reply::read(&Field("order", s.order_view(id, order))))
}

pub(super) fn get_customer(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (id, customer) = s.customer(text(args, "customer_id")?)?;
    let addresses = Seq(|| customer.addresses.iter().map(|a| AddressView { address: &a.address, label: &a.label }));
    let coupons_used = Seq(|| s.orders.values().filter(|o| o.customer_id == id).filter_map(|o| o.coupon_code.as_deref()));
    Ok(Reply::read(&CustomerView { addresses, coupons_used, customer_id: id, name: &customer.name }))
}

pub(super) fn list_orders(s: &State, args: &Args, _ctx: &Context) -> Result<Reply, DomainError> {
    let (id, _) = s.customer(text(args, "customer_id")?)?;
    let orders = Seq(|| s.orders.iter().filter(|(_, o)| o.customer_id == id).map(|(oid, o)| s.order_view(oid, o)));
    Ok(Reply::read(&Orders { customer_id: id, orders }))
}

impl State {
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
                toolenv_core::as_integer(&quantity).and_then(|q| u32::try_from(q).ok()).filter(|q| (1..=MAX_QUANTITY).contains(q))
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

fn insufficient_stock(sku: &str, stock: u32, quantity: u32) -> DomainError {
    DomainError::new("INSUFFICIENT_STOCK", format!("only {stock} of {sku} in stock; {quantity} requested"))
}
