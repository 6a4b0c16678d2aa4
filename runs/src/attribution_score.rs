//! Scoring an external attributor's predictions against toolenv's ground
//! truth, with the metrics Who&When and VerifyMAS report.
//!
//! Per failed episode, the ground truth is the responsible party and the
//! decisive step, and the set of agent–error pairs. A prediction is one JSON
//! line: `{"plan_index": 3, "mistake_agent": "reference-no-retry",
//! "mistake_step": 4, "errors": [{"agent": "…", "error": "FM-3.1"}]}` (every
//! field but `plan_index` optional; `error` is a MAST mode, or a toolenv type
//! when scoring at that level; other fields are ignored, so `toolenv attribute
//! --json` lines are predictions too). A gold episode without a prediction
//! counts as predicted empty.
//!
//! - Accuracy: agent-level (`mistake_agent` equals the responsible party),
//!   step-level exact and within ±k of the decisive step, error-level (the
//!   decisive error's type is among the predicted errors').
//! - F1 at three levels, as VerifyMAS's §4 defines them: pair (agent, error),
//!   agent (agents regardless of error), error (errors regardless of agent),
//!   each compared as sets per episode. Micro: precision, recall and F1 over
//!   the summed true/false positives and false negatives. Macro (class-wise):
//!   the mean over every class (pair, agent or error) seen in the ground
//!   truth or the predictions of that class's F1, a class with no true
//!   positive scoring 0.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::attribution::EpisodeAttribution;

/// Which error names are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taxonomy {
    /// VerifyMAS's MAST modes (FM-1.1 … FM-3.3).
    Mast,
    /// toolenv's finer types (wrong_entity, …).
    Toolenv,
}

/// One episode's ground truth.
#[derive(Debug, Clone, PartialEq)]
pub struct Gold {
    /// Its index in the run's plan.
    pub plan_index: usize,
    /// The responsible party of the decisive error.
    pub agent: String,
    /// The decisive step, if any.
    pub step: Option<u32>,
    /// The decisive error's name.
    pub error: Option<String>,
    /// Every agent–error pair.
    pub pairs: BTreeSet<(String, String)>,
}

impl Gold {
    /// The ground truth of an attributed episode, errors named in `taxonomy`
    /// (the environment's error has no MAST mode and drops out of a MAST pair set).
    pub fn of(episode: &EpisodeAttribution, taxonomy: Taxonomy) -> Self {
        let name = |e: &toolenv_domains::attribution::AttributedError| match taxonomy {
            Taxonomy::Mast => e.mast.map(|m| m.name().to_owned()),
            Taxonomy::Toolenv => Some(e.error.name().to_owned()),
        };
        Self {
            plan_index: episode.plan_index,
            agent: episode.mistake_agent().unwrap_or_default().to_owned(),
            step: episode.attribution.decisive_step,
            error: episode.attribution.errors.first().and_then(name),
            pairs: episode.pairs().filter_map(|(party, e)| Some((party.to_owned(), name(e)?))).collect(),
        }
    }
}

/// One predicted agent–error pair.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PredictedError {
    /// The agent.
    #[serde(default)]
    pub agent: String,
    /// The error's name.
    pub error: String,
}

/// One line of a predictions file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Prediction {
    /// The episode's index in the run's plan.
    pub plan_index: usize,
    /// The predicted responsible agent.
    #[serde(default)]
    pub mistake_agent: Option<String>,
    /// The predicted decisive step (a number, or a number in a string as Who&When writes it).
    #[serde(default, deserialize_with = "step")]
    pub mistake_step: Option<u32>,
    /// The predicted agent–error pairs.
    #[serde(default)]
    pub errors: Vec<PredictedError>,
}

fn step<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Step {
        Number(u32),
        Text(String),
    }
    match Option::<Step>::deserialize(d)? {
        None => Ok(None),
        Some(Step::Number(n)) => Ok(Some(n)),
        Some(Step::Text(t)) => {
            t.trim().parse().map(Some).map_err(|_| serde::de::Error::custom(format!("mistake_step '{t}' is not a step number")))
        }
    }
}

/// Precision, recall and F1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Prf {
    /// Precision.
    pub precision: f64,
    /// Recall.
    pub recall: f64,
    /// F1.
    pub f1: f64,
}

impl Prf {
    fn of(tp: u32, fp: u32, fn_: u32) -> Self {
        let ratio = |a: u32, b: u32| if b == 0 { 0.0 } else { f64::from(a) / f64::from(b) };
        let (precision, recall) = (ratio(tp, tp + fp), ratio(tp, tp + fn_));
        let f1 = if precision + recall == 0.0 { 0.0 } else { 2.0 * precision * recall / (precision + recall) };
        Self { precision, recall, f1 }
    }
}

/// Micro and macro scores at one level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Level {
    /// Over summed counts.
    pub micro: Prf,
    /// The mean over classes.
    pub macro_: Prf,
}

/// The scores of a predictions file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scores {
    /// Gold episodes scored.
    pub episodes: usize,
    /// Predictions for no gold episode (ignored).
    pub unmatched_predictions: usize,
    /// Agent-level accuracy.
    pub agent_accuracy: f64,
    /// Step-level accuracy, exact.
    pub step_accuracy: f64,
    /// Step-level accuracy within ±k.
    pub step_accuracy_within_k: f64,
    /// The k of the tolerance.
    pub k: u32,
    /// Error-level accuracy: the decisive error's type is predicted.
    pub error_accuracy: f64,
    /// Pair-level F1.
    pub pair: Level,
    /// Agent-level F1.
    pub agent: Level,
    /// Error-level F1.
    pub error: Level,
}

/// Micro and macro scores of per-episode (gold, predicted) sets.
fn level<T: Ord + Clone>(sets: &[(BTreeSet<T>, BTreeSet<T>)]) -> Level {
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    let mut classes: BTreeMap<T, (u32, u32, u32)> = BTreeMap::new();
    for (gold, predicted) in sets {
        for item in gold.union(predicted) {
            let class = classes.entry(item.clone()).or_default();
            match (gold.contains(item), predicted.contains(item)) {
                (true, true) => (tp += 1, class.0 += 1),
                (false, true) => (fp += 1, class.1 += 1),
                _ => (fn_ += 1, class.2 += 1),
            };
        }
    }
    let per_class: Vec<Prf> = classes.values().map(|&(tp, fp, fn_)| Prf::of(tp, fp, fn_)).collect();
    let mean = |f: fn(&Prf) -> f64| if per_class.is_empty() { 0.0 } else { per_class.iter().map(f).sum::<f64>() / per_class.len() as f64 };
    Level { micro: Prf::of(tp, fp, fn_), macro_: Prf { precision: mean(|p| p.precision), recall: mean(|p| p.recall), f1: mean(|p| p.f1) } }
}

/// Scores predictions against the ground truth; `k` is the step tolerance.
pub fn score(gold: &[Gold], predictions: &[Prediction], k: u32) -> Scores {
    let by_index: BTreeMap<usize, &Prediction> = predictions.iter().map(|p| (p.plan_index, p)).collect();
    let empty = Prediction { plan_index: 0, mistake_agent: None, mistake_step: None, errors: Vec::new() };
    let (mut agent_hits, mut step_hits, mut near_hits, mut error_hits) = (0u32, 0u32, 0u32, 0u32);
    let (mut pairs, mut agents, mut errors) = (Vec::new(), Vec::new(), Vec::new());
    for g in gold {
        let p = by_index.get(&g.plan_index).copied().unwrap_or(&empty);
        agent_hits += u32::from(p.mistake_agent.as_deref() == Some(g.agent.as_str()));
        if let (Some(gs), Some(ps)) = (g.step, p.mistake_step) {
            step_hits += u32::from(gs == ps);
            near_hits += u32::from(gs.abs_diff(ps) <= k);
        }
        error_hits += u32::from(g.error.as_ref().is_some_and(|e| p.errors.iter().any(|pe| &pe.error == e)));
        let predicted: BTreeSet<(String, String)> = p.errors.iter().map(|e| (e.agent.clone(), e.error.clone())).collect();
        agents.push((g.pairs.iter().map(|(a, _)| a.clone()).collect(), predicted.iter().map(|(a, _)| a.clone()).collect()));
        errors.push((g.pairs.iter().map(|(_, e)| e.clone()).collect(), predicted.iter().map(|(_, e)| e.clone()).collect()));
        pairs.push((g.pairs.clone(), predicted));
    }
    let gold_indices: BTreeSet<usize> = gold.iter().map(|g| g.plan_index).collect();
    let share = |hits: u32| if gold.is_empty() { 0.0 } else { f64::from(hits) / gold.len() as f64 };
    Scores {
        episodes: gold.len(),
        unmatched_predictions: by_index.keys().filter(|i| !gold_indices.contains(i)).count(),
        agent_accuracy: share(agent_hits),
        step_accuracy: share(step_hits),
        step_accuracy_within_k: share(near_hits),
        k,
        error_accuracy: share(error_hits),
        pair: level(&pairs),
        agent: level::<String>(&agents),
        error: level::<String>(&errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(plan_index: usize, agent: &str, step: u32, pairs: &[(&str, &str)]) -> Gold {
        Gold {
            plan_index,
            agent: agent.to_owned(),
            step: Some(step),
            error: pairs.first().map(|p| p.1.to_owned()),
            pairs: pairs.iter().map(|(a, e)| (a.to_string(), e.to_string())).collect(),
        }
    }

    fn predicted(line: &str) -> Prediction {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn metrics_on_fixed_data_match_hand_computed_values() {
        let gold =
            [gold(0, "a", 3, &[("a", "FM-1.1")]), gold(1, "b", 5, &[("b", "FM-3.1"), ("a", "FM-2.1")]), gold(2, "environment", 0, &[])];
        let predictions = [
            predicted(r#"{"plan_index": 0, "mistake_agent": "a", "mistake_step": "3", "errors": [{"agent": "a", "error": "FM-1.1"}]}"#),
            predicted(
                r#"{"plan_index": 1, "mistake_agent": "a", "mistake_step": 7, "errors": [{"agent": "b", "error": "FM-3.1"}, {"agent": "b", "error": "FM-1.1"}]}"#,
            ),
            predicted(r#"{"plan_index": 9, "mistake_agent": "x"}"#),
        ];
        let s = score(&gold, &predictions, 2);
        assert_eq!((s.episodes, s.unmatched_predictions), (3, 1));
        // Agent: #0 right, #1 wrong, #2 no prediction.
        assert_eq!(s.agent_accuracy, 1.0 / 3.0);
        // Step: #0 exact; #1 off by 2 (within k = 2).
        assert_eq!(s.step_accuracy, 1.0 / 3.0);
        assert_eq!(s.step_accuracy_within_k, 2.0 / 3.0);
        // Decisive errors FM-1.1 (predicted) and FM-3.1 (predicted); #2 has none.
        assert_eq!(s.error_accuracy, 2.0 / 3.0);
        // Pairs: tp (a,1.1) (b,3.1) = 2; fp (b,1.1) = 1; fn (a,2.1) = 1.
        assert_eq!(s.pair.micro, Prf { precision: 2.0 / 3.0, recall: 2.0 / 3.0, f1: 2.0 / 3.0 });
        // Classes: (a,1.1) F1 1; (b,3.1) 1; (b,1.1) 0; (a,2.1) 0 → mean F1 0.5.
        assert_eq!(s.pair.macro_.f1, 0.5);
        // Agents per episode: #0 {a}/{a}: tp 1; #1 {a,b}/{b}: tp 1, fn 1 → P 1, R 2/3.
        assert_eq!(s.agent.micro.precision, 1.0);
        assert_eq!(s.agent.micro.recall, 2.0 / 3.0);
        assert!((s.agent.micro.f1 - 0.8).abs() < 1e-12);
        // Agent classes: a: tp 1, fn 1 → F1 2/3; b: tp 1 → 1. Mean 5/6.
        assert!((s.agent.macro_.f1 - 5.0 / 6.0).abs() < 1e-12);
        // Errors: #0 {1.1}/{1.1} tp; #1 {3.1,2.1}/{3.1,1.1}: tp 3.1, fp 1.1, fn 2.1 → tp 2, fp 1, fn 1.
        assert_eq!(s.error.micro.f1, 2.0 / 3.0);
        // Error classes: 1.1: tp 1, fp 1 → 2/3; 3.1: 1; 2.1: 0. Mean 5/9.
        assert!((s.error.macro_.f1 - 5.0 / 9.0).abs() < 1e-12);
    }

    #[test]
    fn a_bad_step_is_a_clear_error() {
        let error = serde_json::from_str::<Prediction>(r#"{"plan_index": 0, "mistake_step": "four"}"#).unwrap_err();
        assert!(error.to_string().contains("mistake_step 'four'"), "{error}");
        assert!(serde_json::from_str::<Prediction>(r#"{"mistake_step": 1}"#).is_err(), "plan_index is required");
    }
}
