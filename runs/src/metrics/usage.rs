//! Tokens and cost, when agents report them (ReliabilityBench Table 10).

use serde::Serialize;

use super::EpisodeResult;

/// Token and cost totals over the episodes whose agents reported them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UsageTotals {
    /// All episodes given.
    pub episodes: u64,
    /// Episodes that reported tokens.
    pub episodes_with_tokens: u64,
    /// Input tokens over those; `None` (JSON null) when no episode reported
    /// tokens: unknown usage is not zero tokens.
    pub input_tokens: Option<u64>,
    /// Output tokens over those; `None` as for `input_tokens`.
    pub output_tokens: Option<u64>,
    /// Episodes that reported a cost (a finite, non-negative number).
    pub episodes_with_cost: u64,
    /// Total cost in US dollars over those; `None` (JSON null) when no
    /// episode reported a cost (an LLM agent with no price set reports
    /// tokens only): an unknown cost is not a cost of zero.
    pub cost_usd: Option<f64>,
    /// Cost per 100 episodes that reported a cost (Table 10's "Cost/100 ep").
    pub cost_per_100_episodes_usd: Option<f64>,
}

impl UsageTotals {
    /// Input plus output tokens (0 when no episode reported any).
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens.unwrap_or(0).saturating_add(self.output_tokens.unwrap_or(0))
    }
}

/// Sums tokens and cost. Costs are summed as whole nano-dollars (each
/// episode's cost rounded to 1e-9 USD), so the total does not depend on the
/// order of the episodes; a cost that is negative or not finite counts as
/// not reported.
pub fn usage_totals<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>) -> UsageTotals {
    let mut totals = UsageTotals {
        episodes: 0,
        episodes_with_tokens: 0,
        input_tokens: None,
        output_tokens: None,
        episodes_with_cost: 0,
        cost_usd: None,
        cost_per_100_episodes_usd: None,
    };
    let mut cost_nano_usd: u128 = 0;
    for e in episodes {
        totals.episodes += 1;
        if let Some(tokens) = e.tokens {
            totals.episodes_with_tokens += 1;
            totals.input_tokens = Some(totals.input_tokens.unwrap_or(0).saturating_add(tokens.input));
            totals.output_tokens = Some(totals.output_tokens.unwrap_or(0).saturating_add(tokens.output));
        }
        if let Some(cost) = e.cost_usd.filter(|c| c.is_finite() && *c >= 0.0) {
            totals.episodes_with_cost += 1;
            // A float-to-int `as` saturates, so an absurd cost cannot wrap.
            cost_nano_usd = cost_nano_usd.saturating_add((cost * 1e9).round() as u128);
        }
    }
    totals.cost_usd = (totals.episodes_with_cost > 0).then(|| cost_nano_usd as f64 / 1e9);
    totals.cost_per_100_episodes_usd = totals.cost_usd.map(|cost| cost * 100.0 / totals.episodes_with_cost as f64);
    totals
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::{close, episode};
    use crate::metrics::{EpisodeOutcome, TokenUsage};

    #[test]
    fn usage_totals_like_table_10() {
        // 480 episodes at 2,483.77 tokens and $0.00025 each: $0.12 in all,
        // $0.025 per 100 episodes; one more episode reported nothing and one
        // a NaN cost.
        let mut episodes: Vec<_> = (0..480)
            .map(|t| {
                let mut e = episode("x/a", t, EpisodeOutcome::Passed);
                e.tokens = Some(TokenUsage { input: 2000, output: 483 });
                e.cost_usd = Some(0.00025);
                e
            })
            .collect();
        episodes.push(episode("x/a", 480, EpisodeOutcome::Passed));
        let mut nan = episode("x/a", 481, EpisodeOutcome::Passed);
        nan.cost_usd = Some(f64::NAN);
        episodes.push(nan);
        let totals = usage_totals(&episodes);
        assert_eq!((totals.episodes, totals.episodes_with_tokens, totals.episodes_with_cost), (482, 480, 480));
        assert_eq!((totals.input_tokens, totals.output_tokens, totals.total_tokens()), (Some(960_000), Some(231_840), 1_191_840));
        assert!(close(totals.cost_usd.unwrap(), 0.12), "{:?}", totals.cost_usd);
        assert!(close(totals.cost_per_100_episodes_usd.unwrap(), 0.025));
        // The total does not depend on the order.
        let mut reversed = episodes.clone();
        reversed.reverse();
        assert_eq!(usage_totals(&reversed), totals);
        let empty = usage_totals(&[]);
        assert_eq!((empty.episodes, empty.cost_usd, empty.cost_per_100_episodes_usd), (0, None, None));
        // No episode reported tokens: unknown, written as null, never 0.
        assert_eq!((empty.input_tokens, empty.output_tokens), (None, None));
        assert_eq!(serde_json::to_value(empty).unwrap()["input_tokens"], serde_json::Value::Null);
        // Tokens with no cost (no price set): the cost is unknown, not zero.
        let mut unpriced = episode("x/a", 0, EpisodeOutcome::Passed);
        unpriced.tokens = Some(TokenUsage { input: 10, output: 2 });
        let totals = usage_totals([&unpriced]);
        assert_eq!((totals.episodes_with_tokens, totals.episodes_with_cost, totals.cost_usd), (1, 0, None));
        assert_eq!(serde_json::to_value(totals).unwrap()["cost_usd"], serde_json::Value::Null);
    }
}
