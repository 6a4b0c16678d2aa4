//! pass^1, pass^k and mean tool calls per group of episodes — per agent,
//! domain, ε, λ or fault profile (ReliabilityBench Tables 5–7) — each with
//! its ceiling and its infeasible episodes.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{EpisodeResult, InfraConvention, Level, MetricsError, PassK, ceiling, pass_hat_k};

/// What [`breakdown`] groups episodes by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Breakdown {
    /// By agent label (Table 6).
    Agent,
    /// By domain (Table 7).
    Domain,
    /// By perturbation level ε (Table 5's columns).
    Epsilon,
    /// By fault intensity λ.
    Lambda,
    /// By fault profile name.
    FaultProfile,
}

/// The label of the ε or λ group of episodes that have no numeric level: a
/// fault profile with no single λ (a MAS-FIRE profile, or a named one from
/// the server's profile file); its `level` is `None`.
pub const NO_LEVEL: &str = "no level";

/// One group of a [`breakdown`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakdownRow {
    /// The group: the agent, domain or profile name, or the level as written
    /// by `{}` ([`NO_LEVEL`] for episodes without a numeric level).
    pub label: String,
    /// The level, when grouping by ε or λ and the episodes have one.
    pub level: Option<f64>,
    /// Episodes in the group, infrastructure errors included.
    pub episodes: u64,
    /// pass^1 (the paper's pass@1: the mean per-task success rate).
    pub pass_1: PassK,
    /// pass^k.
    pub pass_k: PassK,
    /// Mean tool calls per episode, infrastructure errors included.
    pub mean_calls: Option<f64>,
    /// The ceiling of pass^1 and of pass^k: what an agent passing every
    /// feasible episode would score ([`ceiling`]); `None` when unknown.
    pub ceiling_1: Option<PassK>,
    /// The ceiling of pass^k.
    pub ceiling_k: Option<PassK>,
    /// Episodes no agent could have passed under their fault schedule.
    pub infeasible: u64,
}

/// pass^1, pass^k and mean tool calls per agent, domain, ε, λ or fault
/// profile, in the group's order (names by byte order, levels ascending).
pub fn breakdown<'a>(
    episodes: impl IntoIterator<Item = &'a EpisodeResult>,
    by: Breakdown,
    k: u32,
    convention: InfraConvention,
) -> Result<Vec<BreakdownRow>, MetricsError> {
    let mut groups: BTreeMap<(Level, &str), Vec<&EpisodeResult>> = BTreeMap::new();
    for e in episodes {
        let key = match by {
            Breakdown::Agent => (Level(0.0), e.agent.as_str()),
            Breakdown::Domain => (Level(0.0), e.domain_name()),
            Breakdown::FaultProfile => (Level(0.0), e.fault_profile.as_str()),
            Breakdown::Epsilon => (Level::new(e.epsilon), ""),
            Breakdown::Lambda => (Level::new(e.lambda), ""),
        };
        groups.entry(key).or_default().push(e);
    }
    let numeric = matches!(by, Breakdown::Epsilon | Breakdown::Lambda);
    groups
        .into_iter()
        .map(|((level, name), group)| {
            let calls: u64 = group.iter().map(|e| u64::from(e.calls)).sum();
            Ok(BreakdownRow {
                label: match (numeric, level.0.is_nan()) {
                    (false, _) => name.to_owned(),
                    (true, false) => level.0.to_string(),
                    (true, true) => NO_LEVEL.to_owned(),
                },
                level: (numeric && !level.0.is_nan()).then_some(level.0),
                episodes: group.len() as u64,
                pass_1: pass_hat_k(group.iter().copied(), 1, convention)?,
                pass_k: pass_hat_k(group.iter().copied(), k, convention)?,
                mean_calls: (!group.is_empty()).then(|| calls as f64 / group.len() as f64),
                ceiling_1: ceiling(group.iter().copied(), 1, convention)?,
                ceiling_k: ceiling(group.iter().copied(), k, convention)?,
                infeasible: group.iter().filter(|e| e.feasible == Some(false)).count() as u64,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Ratio;
    use crate::metrics::tests::{close, r, task};

    #[test]
    fn table_7_by_domain() {
        // Table 7 (λ = 0, ReAct), k = 2 with 2 trials per task. Travel: 8
        // tasks, 6 pass both trials, 2 pass one: pass^1 = (6 + 2·½)/8 = 7/8 =
        // 87.5 %, pass^2 = 6/8 = 75 %. Support: 12 tasks, 10 both, 2 one:
        // 11/12 = 91.7 %, 10/12 = 83.3 %. Scheduling: 5 tasks, all both: 100 %.
        let mut episodes = Vec::new();
        for (domain, both, one) in [("travel", 6, 2), ("support", 10, 2), ("scheduling", 5, 0)] {
            for i in 0..both + one {
                let passes = if i < both { 2 } else { 1 };
                episodes.extend(task(&format!("{domain}/t/{i:03}"), passes, 2).into_iter().map(|mut e| {
                    e.calls = 5;
                    e
                }));
            }
        }
        let rows = breakdown(&episodes, Breakdown::Domain, 2, InfraConvention::default()).unwrap();
        let got: Vec<_> = rows.iter().map(|r| (r.label.as_str(), r.pass_1.value.unwrap(), r.pass_k.value.unwrap())).collect();
        assert_eq!(got, [("scheduling", Ratio::ONE, Ratio::ONE), ("support", r(11, 12), r(5, 6)), ("travel", r(7, 8), r(3, 4))]);
        assert_eq!(rows[2].episodes, 16);
        assert_eq!(rows[2].mean_calls, Some(5.0));
        assert!(close(rows[1].pass_1.as_f64().unwrap(), 0.9167) && close(rows[1].pass_k.as_f64().unwrap(), 0.8333));
    }

    #[test]
    fn breakdown_by_level_is_in_ascending_order() {
        let mut episodes = Vec::new();
        for (eps, passes) in [(0.2, 1), (0.0, 2), (0.1, 0)] {
            episodes.extend(task("x/a", passes, 2).into_iter().map(|mut e| {
                e.epsilon = eps;
                e
            }));
        }
        let rows = breakdown(&episodes, Breakdown::Epsilon, 2, InfraConvention::default()).unwrap();
        let got: Vec<_> = rows.iter().map(|r| (r.label.as_str(), r.level, r.pass_1.value)).collect();
        assert_eq!(got, [("0", Some(0.0), Some(Ratio::ONE)), ("0.1", Some(0.1), Some(Ratio::ZERO)), ("0.2", Some(0.2), Some(r(1, 2)))]);
    }

    #[test]
    fn episodes_without_a_level_are_one_named_group_never_nan() {
        let mut episodes = task("x/a", 1, 2);
        episodes.extend(task("x/b", 2, 2).into_iter().map(|mut e| {
            e.lambda = f64::NAN;
            e.epsilon = f64::NAN;
            e
        }));
        for by in [Breakdown::Lambda, Breakdown::Epsilon] {
            let rows = breakdown(&episodes, by, 2, InfraConvention::default()).unwrap();
            let got: Vec<_> = rows.iter().map(|r| (r.label.as_str(), r.level, r.episodes)).collect();
            assert_eq!(got, [("0", Some(0.0), 2), (NO_LEVEL, None, 2)], "{by:?}");
            let json = serde_json::to_string(&rows).unwrap();
            assert!(!json.contains("NaN") && json.contains(r#""level":null"#), "{json}");
        }
    }
}
