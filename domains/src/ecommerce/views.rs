//! What ecommerce results look like: the v2 shape schema drift switches to.

use crate::drift::{Conv, DateStyle, Field, Mapping};

/// The v2 shape: renamed, nested and reformatted fields (see [`crate::drift`]).
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
