//! Exact non-negative rationals over `u128` and binomial coefficients, so
//! that pass^k and its relatives are computed without rounding.

use std::fmt;

use serde::Serialize;

/// Greatest common divisor; `gcd(0, 0) = 0`.
pub fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The binomial coefficient C(n, k), or `None` when it does not fit in a `u128`.
///
/// C(n, k) = 0 when k > n. Each step multiplies by (n − i)/(i + 1) after
/// cancelling common factors, so an intermediate never exceeds the result
/// by more than a factor of n.
pub fn binomial(n: u64, k: u64) -> Option<u128> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    let mut result: u128 = 1;
    for i in 0..k {
        // result · (n − i) / (i + 1) is an integer (it is C(n, i + 1)); with
        // g = gcd(result, i + 1), (i + 1)/g divides n − i.
        let divisor = u128::from(i) + 1;
        let g = gcd(result, divisor);
        let factor = u128::from(n - i) / (divisor / g);
        result = (result / g).checked_mul(factor)?;
    }
    Some(result)
}

/// An exact non-negative rational, always in lowest terms with a positive denominator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Ratio {
    num: u128,
    den: u128,
}

impl Ratio {
    /// Zero.
    pub const ZERO: Ratio = Ratio { num: 0, den: 1 };
    /// One.
    pub const ONE: Ratio = Ratio { num: 1, den: 1 };

    /// `num / den` in lowest terms, or `None` when `den` is zero.
    pub fn new(num: u128, den: u128) -> Option<Self> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den);
        Some(Ratio { num: num / g, den: den / g })
    }

    /// The numerator (in lowest terms).
    pub fn numer(self) -> u128 {
        self.num
    }

    /// The denominator (in lowest terms, never zero).
    pub fn denom(self) -> u128 {
        self.den
    }

    /// The nearest `f64`, for display.
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// The sum, or `None` on overflow.
    pub fn checked_add(self, other: Ratio) -> Option<Ratio> {
        // Over the least common multiple of the denominators, so that sums of
        // many terms with the same denominator stay small.
        let g = gcd(self.den, other.den);
        let den = (self.den / g).checked_mul(other.den)?;
        let a = self.num.checked_mul(other.den / g)?;
        let b = other.num.checked_mul(self.den / g)?;
        Ratio::new(a.checked_add(b)?, den)
    }

    /// The difference, or `None` when it would be negative or on overflow.
    pub fn checked_sub(self, other: Ratio) -> Option<Ratio> {
        let g = gcd(self.den, other.den);
        let den = (self.den / g).checked_mul(other.den)?;
        let a = self.num.checked_mul(other.den / g)?;
        let b = other.num.checked_mul(self.den / g)?;
        Ratio::new(a.checked_sub(b)?, den)
    }

    /// The product, or `None` on overflow.
    pub fn checked_mul(self, other: Ratio) -> Option<Ratio> {
        // Cross-cancel first: both inputs are in lowest terms, so the result is too.
        let g1 = gcd(self.num, other.den);
        let g2 = gcd(other.num, self.den);
        let num = (self.num / g1).checked_mul(other.num / g2)?;
        let den = (self.den / g2).checked_mul(other.den / g1)?;
        Some(Ratio { num, den })
    }

    /// The quotient, or `None` when `other` is zero or on overflow.
    pub fn checked_div(self, other: Ratio) -> Option<Ratio> {
        if other.num == 0 {
            return None;
        }
        self.checked_mul(Ratio { num: other.den, den: other.num })
    }

    /// The quotient by a whole number, or `None` when it is zero or on overflow.
    pub fn checked_div_int(self, divisor: u64) -> Option<Ratio> {
        self.checked_div(Ratio::new(u128::from(divisor), 1)?)
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(num: u128, den: u128) -> Ratio {
        Ratio::new(num, den).unwrap()
    }

    #[test]
    fn binomials_by_hand() {
        assert_eq!(binomial(4, 2), Some(6));
        assert_eq!(binomial(5, 0), Some(1));
        assert_eq!(binomial(5, 5), Some(1));
        assert_eq!(binomial(0, 0), Some(1));
        assert_eq!(binomial(3, 5), Some(0));
        assert_eq!(binomial(10, 3), Some(120));
        // C(60, 30), a textbook value.
        assert_eq!(binomial(60, 30), Some(118_264_581_564_861_424));
        // C(130, 65) ≈ 9.5e37 fits in a u128 (max ≈ 3.4e38); C(140, 70) ≈ 9.4e40 does not.
        assert!(binomial(130, 65).is_some());
        assert_eq!(binomial(140, 70), None);
        // Pascal's rule over a small triangle.
        for n in 1..40 {
            for k in 1..n {
                assert_eq!(binomial(n, k).unwrap(), binomial(n - 1, k - 1).unwrap() + binomial(n - 1, k).unwrap());
            }
        }
    }

    #[test]
    fn ratios_stay_in_lowest_terms() {
        assert_eq!(r(3, 6), r(1, 2));
        assert_eq!(r(3, 6).numer(), 1);
        assert_eq!(r(3, 6).denom(), 2);
        assert_eq!(r(0, 7), Ratio::ZERO);
        assert_eq!(Ratio::new(1, 0), None);
        // 1/2 + 1/3 = 5/6; 1/2 − 1/3 = 1/6; 1/3 − 1/2 is negative.
        assert_eq!(r(1, 2).checked_add(r(1, 3)), Some(r(5, 6)));
        assert_eq!(r(1, 2).checked_sub(r(1, 3)), Some(r(1, 6)));
        assert_eq!(r(1, 3).checked_sub(r(1, 2)), None);
        // (2/3)·(9/4) = 3/2; (3/5)/(4/5) = 3/4; x/0 is undefined.
        assert_eq!(r(2, 3).checked_mul(r(9, 4)), Some(r(3, 2)));
        assert_eq!(r(3, 5).checked_div(r(4, 5)), Some(r(3, 4)));
        assert_eq!(r(3, 5).checked_div(Ratio::ZERO), None);
        assert_eq!(r(3, 2).checked_div_int(3), Some(r(1, 2)));
        assert_eq!(Ratio::ZERO.checked_mul(r(3, 4)), Some(Ratio::ZERO));
        assert_eq!(r(7, 8).to_string(), "7/8");
        assert_eq!(r(7, 8).to_f64(), 0.875);
        // Overflow is reported, not wrapped.
        assert_eq!(r(u128::MAX, 1).checked_add(Ratio::ONE), None);
        assert_eq!(r(1, u128::MAX).checked_mul(r(1, 2)), None);
    }
}
