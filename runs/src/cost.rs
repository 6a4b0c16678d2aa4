//! The paper's Table 10: tokens and cost per agent (a model under an
//! architecture, e.g. `react@gpt-4o`), per episode and per 100 episodes, and
//! the ratio of each agent to the cheapest; with the LLM agents' protocol
//! figures (model turns, calls written as text, protocol errors), so that a
//! protocol mismatch between a model and its endpoint is visible next to the
//! pass rates instead of hiding in them.

use std::fmt::Write as _;

use serde::Serialize;

use crate::metrics::{self, EpisodeResult};

/// One agent's row of Table 10.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostRow {
    /// The agent's label.
    pub agent: String,
    /// Episodes recorded for the agent.
    pub episodes: u64,
    /// Tokens and cost over the episodes that reported them.
    pub usage: metrics::UsageTotals,
    /// Mean input + output tokens per episode that reported tokens.
    pub tokens_per_episode: Option<f64>,
    /// Mean tool calls per episode (all of the agent's played episodes).
    pub calls_per_episode: Option<f64>,
    /// Mean model turns per episode with a conversation (`None` without one).
    pub turns_per_episode: Option<f64>,
    /// The LLM agents' protocol figures summed over the agent's episodes.
    pub llm: metrics::LlmCounts,
    /// Episodes with a conversation (played by a built-in LLM agent).
    pub llm_episodes: u64,
    /// Tokens per episode over the fewest of any agent's.
    pub tokens_ratio: Option<f64>,
    /// Cost per 100 episodes over the lowest of any agent's.
    pub cost_ratio: Option<f64>,
}

/// Table 10's rows, one per agent that reported tokens or cost or played
/// as a built-in LLM agent, in label order; empty when none did.
pub fn table(episodes: &[EpisodeResult]) -> Vec<CostRow> {
    let mut labels: Vec<&str> = episodes.iter().map(|e| e.agent.as_str()).collect();
    labels.sort_unstable();
    labels.dedup();
    let mut rows: Vec<CostRow> = labels
        .into_iter()
        .filter_map(|label| {
            let mine: Vec<&EpisodeResult> = episodes.iter().filter(|e| e.agent == label).collect();
            let usage = metrics::usage_totals(mine.iter().copied());
            let mut llm = metrics::LlmCounts::default();
            let mut llm_episodes = 0;
            for counts in mine.iter().filter_map(|e| e.llm) {
                llm_episodes += 1;
                llm.model_turns += counts.model_turns;
                llm.native_calls += counts.native_calls;
                llm.text_form_calls += counts.text_form_calls;
                llm.protocol_errors += counts.protocol_errors;
                llm.context_exhausted += counts.context_exhausted;
            }
            if usage.episodes_with_tokens == 0 && usage.episodes_with_cost == 0 && llm_episodes == 0 {
                return None;
            }
            let played: Vec<&&EpisodeResult> = mine.iter().filter(|e| !e.is_infra_error()).collect();
            let calls_per_episode =
                (!played.is_empty()).then(|| played.iter().map(|e| f64::from(e.calls)).sum::<f64>() / played.len() as f64);
            let tokens_per_episode =
                (usage.episodes_with_tokens > 0).then(|| usage.total_tokens() as f64 / usage.episodes_with_tokens as f64);
            Some(CostRow {
                agent: label.to_owned(),
                episodes: mine.len() as u64,
                usage,
                tokens_per_episode,
                calls_per_episode,
                turns_per_episode: (llm_episodes > 0).then(|| f64::from(llm.model_turns) / llm_episodes as f64),
                llm,
                llm_episodes,
                tokens_ratio: None,
                cost_ratio: None,
            })
        })
        .collect();
    let least = |value: fn(&CostRow) -> Option<f64>| rows.iter().filter_map(value).filter(|v| *v > 0.0).reduce(f64::min);
    let (fewest_tokens, lowest_cost) = (least(|r| r.tokens_per_episode), least(|r| r.usage.cost_per_100_episodes_usd));
    for row in &mut rows {
        row.tokens_ratio = row.tokens_per_episode.zip(fewest_tokens).map(|(v, min)| v / min);
        row.cost_ratio = row.usage.cost_per_100_episodes_usd.zip(lowest_cost).map(|(v, min)| v / min);
    }
    rows
}

/// Table 10 as text, or nothing when no agent reported usage.
pub fn render(episodes: &[EpisodeResult]) -> String {
    render_rows(&table(episodes))
}

/// Table 10 as text from its rows ([`table`]), or nothing without rows.
pub fn render_rows(rows: &[CostRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n== tokens and cost (Table 10)\n");
    let line = |cells: [&str; 11]| {
        format!(
            "  {:<28} {:>8} {:>10} {:>9} {:>10} {:>11} {:>9} {:>9} {:>9} {:>10} {:>16}",
            cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7], cells[8], cells[9], cells[10]
        )
    };
    let _ = writeln!(
        out,
        "{}",
        line([
            "agent",
            "episodes",
            "tokens/ep",
            "calls/ep",
            "turns/ep",
            "text calls",
            "protocol",
            "ctx full",
            "cost $",
            "$/100 ep",
            "ratio tok/cost"
        ])
    );
    for row in rows {
        let opt = |v: Option<f64>, digits: usize| v.map_or("-".to_owned(), |v| format!("{v:.digits$}"));
        let ratio = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.2}×"));
        let text_calls = if row.llm_episodes == 0 {
            "-".to_owned()
        } else {
            format!("{}/{}", row.llm.text_form_calls, row.llm.text_form_calls + row.llm.native_calls)
        };
        let cost = opt(row.usage.cost_usd, 4);
        let _ = writeln!(
            out,
            "{}",
            line([
                &row.agent,
                &row.episodes.to_string(),
                &opt(row.tokens_per_episode, 0),
                &opt(row.calls_per_episode, 1),
                &opt(row.turns_per_episode, 1),
                &text_calls,
                &if row.llm_episodes == 0 { "-".to_owned() } else { row.llm.protocol_errors.to_string() },
                &if row.llm_episodes == 0 { "-".to_owned() } else { row.llm.context_exhausted.to_string() },
                &cost,
                &opt(row.usage.cost_per_100_episodes_usd, 4),
                &format!("{} / {}", ratio(row.tokens_ratio), ratio(row.cost_ratio)),
            ])
        );
    }
    out.push_str(
        "  (text calls: tool calls the model wrote as text, of all its calls; protocol: replies meant as a call that \
         could not be read; ctx full: episodes ended because the conversation outgrew the model's context, judged as \
         the agent's; ratios to the agent with the fewest tokens / lowest cost per episode)\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::tests::episode;
    use crate::metrics::{EpisodeOutcome, LlmCounts, TokenUsage};

    #[test]
    fn two_models_side_by_side_with_ratios() {
        let mut episodes = Vec::new();
        for (agent, input, cost) in [("react@small", 1000, 0.001), ("react@large", 3000, 0.004)] {
            for trial in 0..4 {
                let mut e = episode("travel/t/001", trial, EpisodeOutcome::Passed);
                e.agent = agent.to_owned();
                e.tokens = Some(TokenUsage { input, output: 100 });
                e.cost_usd = Some(cost);
                e.calls = 3;
                e.llm = Some(LlmCounts {
                    model_turns: 4,
                    native_calls: 2,
                    text_form_calls: 1,
                    protocol_errors: u32::from(trial == 0),
                    context_exhausted: 0,
                });
                episodes.push(e);
            }
        }
        episodes.push(episode("travel/t/001", 0, EpisodeOutcome::Passed)); // agent "a": no usage, no row
        let rows = table(&episodes);
        assert_eq!(rows.iter().map(|r| r.agent.as_str()).collect::<Vec<_>>(), ["react@large", "react@small"]);
        let (large, small) = (&rows[0], &rows[1]);
        assert_eq!(small.tokens_per_episode, Some(1100.0));
        assert_eq!(small.tokens_ratio, Some(1.0));
        assert!((large.tokens_ratio.unwrap() - 3100.0 / 1100.0).abs() < 1e-9);
        assert!((large.cost_ratio.unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(large.llm, LlmCounts { model_turns: 16, native_calls: 8, text_form_calls: 4, protocol_errors: 1, context_exhausted: 0 });
        let text = render(&episodes);
        assert!(text.contains("Table 10"), "{text}");
        assert!(text.contains("4/12"), "{text}");
        assert!(text.contains("2.82× / 4.00×"), "{text}");
        assert!(render(&[episode("travel/t/001", 0, EpisodeOutcome::Passed)]).is_empty());
        // The JSON summary carries the same rows, and no "cost" key without any.
        let conv = crate::metrics::InfraConvention::excluding(false);
        let all = crate::metrics::Population::AllEpisodes;
        let summary = crate::report::summary(&episodes, 4, episodes.len() as u64, conv, all).unwrap();
        assert_eq!(summary.cost, rows);
        let plain = [episode("travel/t/001", 0, EpisodeOutcome::Passed)];
        let json = serde_json::to_value(crate::report::summary(&plain, 1, 1, conv, all).unwrap()).unwrap();
        assert!(json.get("cost").is_none(), "{json}");
    }
}
