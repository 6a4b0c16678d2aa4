//! Rates and their intervals: the 95 % Wilson score interval ([`wilson`]),
//! a proportion of whole counts with it ([`Rate`]), and the pooled pass
//! rate of some episodes ([`pass_rate`]). Every rate a report shows is a
//! [`Rate`], so each carries its interval and minimum detectable difference.

use serde::Serialize;

use super::stats::{self, Interval, wilson};
use super::{EpisodeResult, InfraConvention};

/// A proportion of whole counts, with its Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    /// The numerator.
    pub successes: u64,
    /// The denominator.
    pub total: u64,
    /// successes / total, or `None` when total = 0.
    pub value: Option<f64>,
    /// The 95 % Wilson interval, or `None` when total = 0.
    pub ci: Option<Interval>,
    /// The minimum difference detectable against another rate over as many
    /// units (α = 0.05 two-sided, 80 % power; [`stats::mde`]), each unit
    /// (a fault, an episode) taken as independent.
    pub mde: Option<f64>,
}

impl Rate {
    /// successes out of total.
    pub fn new(successes: u64, total: u64) -> Self {
        let value = (total > 0).then(|| successes as f64 / total as f64);
        Rate { successes, total, value, ci: value.and_then(|p| wilson(p, total)), mde: value.and_then(|p| stats::mde(p, total as f64)) }
    }
}

/// The pooled pass rate: passed episodes over counted episodes, with the
/// infrastructure errors seen. Unlike pass^1 it weighs tasks by their trial
/// counts; the two agree when every task has the same number of trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PassRate {
    /// Passed over counted episodes.
    pub rate: Rate,
    /// Infrastructure errors among the episodes, under either convention.
    pub infra_errors: u64,
}

/// The pooled pass rate of some episodes.
pub fn pass_rate<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>, convention: InfraConvention) -> PassRate {
    let (mut passes, mut total, mut infra_errors) = (0, 0, 0);
    for e in episodes {
        infra_errors += u64::from(e.is_infra_error());
        if let Some(passed) = convention.judge(&e.outcome) {
            total += 1;
            passes += u64::from(passed);
        }
    }
    PassRate { rate: Rate::new(passes, total), infra_errors }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::close;

    #[test]
    fn wilson_intervals_by_hand() {
        // 8/10: z² = 3.841459, centre = (0.8 + 0.192073)/1.384146 = 0.716740,
        // half = 1.959964·√(0.016 + 0.009604)/1.384146 = 0.226572 → [0.4902, 0.9433].
        let ci = wilson(0.8, 10).unwrap();
        assert!(close(ci.lower, 0.4902) && close(ci.upper, 0.9433), "{ci:?}");
        // 0/10: centre = half = 0.192073/1.384146 = 0.138766 → [0, 0.2775].
        let ci = wilson(0.0, 10).unwrap();
        assert!(close(ci.lower, 0.0) && close(ci.upper, 0.2775), "{ci:?}");
        // 10/10 mirrors it: [0.7225, 1].
        let ci = wilson(1.0, 10).unwrap();
        assert!(close(ci.lower, 0.7225) && close(ci.upper, 1.0), "{ci:?}");
        // 38/47 (Table 8's ReAct recoveries): centre = (0.808511 + 0.040866)/1.081733
        // = 0.785196, half = 1.959964·√(0.003294 + 0.000435)/1.081733 = 0.110642
        // → [0.6746, 0.8958].
        let rate = Rate::new(38, 47);
        let ci = rate.ci.unwrap();
        assert!(close(ci.lower, 0.6746) && close(ci.upper, 0.8958), "{ci:?}");
        assert_eq!(wilson(0.5, 0), None);
        assert_eq!(wilson(1.5, 10), None);
        assert_eq!(Rate::new(0, 0).ci, None);
    }
}
