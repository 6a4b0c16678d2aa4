//! The e-commerce tools: the table agents see, one handler per tool (grouped
//! by theme in the submodules), each a pure transition of the shop, and the
//! argument readers they share.

mod catalog;
mod coupons;
mod orders;
mod returns;

use super::{MAX_AMOUNT_CENTS, MAX_TEXT_CHARS, Money, REFUND_METHODS, State};
use toolenv_core::{Args, DomainError, Param, ParamType, Tool, ToolSpec};

const CUSTOMER_ID: Param = Param::required("customer_id", ParamType::String, "Customer id, e.g. C-201.");
const SKU: Param = Param::required("sku", ParamType::String, "Product sku, e.g. SKU-101.");
const ORDER_ID: Param = Param::required("order_id", ParamType::String, "Order id, e.g. O-0001.");
const ORDER_ITEM: &[Param] = &[SKU, Param::required("quantity", ParamType::Integer, "Units to order, 1 to 100.")];

/// The tools, in the order agents see them.
pub(super) const TOOLS: &[Tool<State>] = &[
    Tool::read(
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
        catalog::search_products,
    ),
    Tool::read(
        ToolSpec {
            name: "check_inventory",
            description: "Checks the stock and price of one product.",
            mutates_state: false,
            params: &[SKU],
        },
        catalog::check_inventory,
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
        orders::create_order,
    ),
    Tool::read(
        ToolSpec {
            name: "check_order_status",
            description: "Returns an order's details and status, with the last day it can be returned once delivered.",
            mutates_state: false,
            params: &[ORDER_ID],
        },
        orders::check_order_status,
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
        returns::process_return,
    ),
    Tool::read(
        ToolSpec {
            name: "apply_coupon",
            description: "Validates a coupon against an order subtotal and calculates the discount; changes nothing.",
            mutates_state: false,
            params: &[
                Param::required("code", ParamType::String, "The coupon code."),
                Param::required("order_subtotal", ParamType::Number, "The order's subtotal in dollars, before any discount."),
            ],
        },
        coupons::apply_coupon,
    ),
    Tool::read(
        ToolSpec {
            name: "get_customer",
            description: "Returns a customer's name, addresses on file and the coupons they have used.",
            mutates_state: false,
            params: &[CUSTOMER_ID],
        },
        orders::get_customer,
    ),
    Tool::read(
        ToolSpec {
            name: "list_orders",
            description: "Lists a customer's orders with their items, totals, status and delivery dates.",
            mutates_state: false,
            params: &[CUSTOMER_ID],
        },
        orders::list_orders,
    ),
];

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
