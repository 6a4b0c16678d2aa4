//! The return tool: returning whole lines of a delivered order and refunding
//! what was paid for them.

use super::text;
use crate::{
    ecommerce::views::{ReturnView, Returned, ReturnedOrder},
    ecommerce::{Money, OrderStatus, REFUND_METHODS, RETURN_WINDOW_DAYS, RefundMethod, ReturnRecord, State, unknown_order},
};
use toolenv_core::{Args, Context, DomainError, Reply, date::Date, echo};

pub(super) fn process_return(s: &mut State, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
    let (id, order) = s.order(text(args, "order_id")?)?;
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
        DomainError::new("INVALID_REFUND_METHOD", format!("refund_method '{}' is not one of {}", echo(method), REFUND_METHODS.join(", ")))
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
    let Some(order) = s.orders.get_mut(&id) else {
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

fn not_delivered(id: &str, status: OrderStatus) -> DomainError {
    DomainError::new("NOT_DELIVERED", format!("order {id} is {}, not delivered; only delivered orders can be returned", status.name()))
}
