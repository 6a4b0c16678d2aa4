//! The coupon tool: checking a coupon against a subtotal, and the discount
//! rule orders share.

use super::{amount, text};
use crate::{
    ecommerce::views::CouponCheck,
    ecommerce::{Coupon, Money, State},
};
use toolenv_core::{Args, Context, DomainError, Reply};

pub(super) fn apply_coupon(s: &State, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
    let (code, coupon) = s.valid_coupon(text(args, "code")?, ctx)?;
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

/// The coupon's discount on `subtotal`, if the subtotal reaches its minimum.
pub(super) fn applicable_discount(code: &str, coupon: &Coupon, subtotal: Money) -> Result<Money, DomainError> {
    if subtotal < coupon.min_subtotal {
        return Err(DomainError::new(
            "COUPON_MINIMUM_NOT_MET",
            format!("coupon {code} needs a subtotal of at least {}; the subtotal is {subtotal}", coupon.min_subtotal),
        ));
    }
    Ok(coupon.discount(subtotal))
}
