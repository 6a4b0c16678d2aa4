//! What ecommerce results look like: the v1 shapes, written straight to
//! canonical JSON (fields in key order), and the v2 shape schema drift
//! switches to.

use serde::Serialize;

use super::{Money, OrderStatus, RefundMethod};
use toolenv_core::drift::{Conv, DateStyle, Field, Mapping};

/// The v2 shape: renamed, nested and reformatted fields (see [`toolenv_core::drift`]).
pub(super) const DRIFT: Mapping = Mapping { fields: FIELDS, nested_record: None };

const FIELDS: &[Field] = &[
    Field::renamed("sku", "product_id"),
    Field::renamed("skus", "product_ids"),
    Field::renamed("returned_skus", "returned_product_ids"),
    Field::renamed("order_id", "order_number"),
    Field::kept("price").with(Conv::Money),
    Field::kept("unit_price").with(Conv::Money),
    Field::kept("subtotal").with(Conv::Money),
    Field::kept("discount").with(Conv::Money),
    Field::kept("total").with(Conv::Money),
    Field::kept("refunded").with(Conv::Money),
    Field::kept("refund").with(Conv::Money),
    Field::kept("amount").with(Conv::Money),
    Field::kept("order_subtotal").with(Conv::Money),
    Field::nested("stock", "inventory", "available"),
    Field::nested("in_stock", "inventory", "in_stock"),
    Field::nested("status", "fulfillment", "status"),
    Field::nested("delivered_on", "fulfillment", "delivered_on").with(Conv::Date(DateStyle::MonthFirst)),
    Field::nested("returnable_until", "fulfillment", "return_by").with(Conv::Date(DateStyle::MonthFirst)),
    Field::nested("shipping_address", "shipping", "address"),
    Field::nested("coupon_code", "coupon", "code"),
    Field::renamed("addresses", "address_book"),
    Field::kept("terms").with(Conv::DatesInText(DateStyle::MonthFirst)),
];

#[derive(Serialize)]
pub(super) struct OrderView<'a, I: Serialize, R: Serialize> {
    pub(super) coupon_code: Option<&'a str>,
    pub(super) customer_id: &'a str,
    pub(super) delivered_on: Option<&'a str>,
    pub(super) discount: Money,
    pub(super) items: I,
    pub(super) order_id: &'a str,
    pub(super) refunded: Money,
    pub(super) returnable_until: Option<String>,
    pub(super) returned_skus: &'a [String],
    pub(super) returns: R,
    pub(super) shipping_address: &'a str,
    pub(super) status: OrderStatus,
    pub(super) subtotal: Money,
    pub(super) total: Money,
}

/// An order line with its product's name.
#[derive(Serialize)]
pub(super) struct LineView<'a> {
    pub(super) name: Option<&'a str>,
    pub(super) quantity: u32,
    pub(super) sku: &'a str,
    pub(super) unit_price: Money,
}

#[derive(Serialize)]
pub(super) struct ReturnRecordView<'a> {
    pub(super) amount: Money,
    pub(super) reason: &'a str,
    pub(super) refund_method: RefundMethod,
    pub(super) skus: &'a [String],
}

#[derive(Serialize)]
pub(super) struct Inventory<'a> {
    pub(super) in_stock: bool,
    pub(super) name: &'a str,
    pub(super) price: Money,
    pub(super) sku: &'a str,
    pub(super) stock: u32,
}

#[derive(Serialize)]
pub(super) struct CouponCheck<'a> {
    pub(super) code: &'a str,
    pub(super) discount: Money,
    pub(super) note: &'static str,
    pub(super) order_subtotal: Money,
    pub(super) terms: String,
    pub(super) total: Money,
    pub(super) valid: bool,
}

#[derive(Serialize)]
pub(super) struct AddressView<'a> {
    pub(super) address: &'a str,
    pub(super) label: &'a str,
}

#[derive(Serialize)]
pub(super) struct CustomerView<'a, A: Serialize, C: Serialize> {
    pub(super) addresses: A,
    pub(super) coupons_used: C,
    pub(super) customer_id: &'a str,
    pub(super) name: &'a str,
}

#[derive(Serialize)]
pub(super) struct Orders<'a, O: Serialize> {
    pub(super) customer_id: &'a str,
    pub(super) orders: O,
}

#[derive(Serialize)]
pub(super) struct ProductView<'a> {
    pub(super) category: &'a str,
    pub(super) in_stock: bool,
    pub(super) name: &'a str,
    pub(super) price: Money,
    pub(super) sku: &'a str,
    pub(super) stock: u32,
}

#[derive(Serialize)]
pub(super) struct Search<P: Serialize> {
    pub(super) count: usize,
    pub(super) products: P,
    pub(super) truncated: bool,
}

#[derive(Serialize)]
pub(super) struct ReturnedOrder<'a> {
    pub(super) order_id: &'a str,
    pub(super) refunded: Money,
    pub(super) returned_skus: &'a [String],
    pub(super) status: OrderStatus,
    pub(super) total: Money,
}

#[derive(Serialize)]
pub(super) struct ReturnView<'a> {
    pub(super) order_id: &'a str,
    pub(super) refund: Money,
    pub(super) refund_method: RefundMethod,
    pub(super) skus: &'a [String],
}

#[derive(Serialize)]
pub(super) struct Returned<'a> {
    pub(super) order: ReturnedOrder<'a>,
    pub(super) r#return: ReturnView<'a>,
}
