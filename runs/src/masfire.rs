//! MAS-FIRE runs: the `mas-fire` grid and its tables — RS_f (eq. 1) and
//! O_f, L_f, S_f (eq. 2) per fault type, per agent label and per role —
//! computed from the ground truth every verdict carries
//! ([`toolenv_domains::masfire::judge`]), not from an LLM judge.
//!
//! The paper's definitions, as applied here (the unit is an episode, one
//! run of one task):
//!
//! - RS_f = N_f,success / |T_base|: "the fraction of originally successful
//!   tasks that remain solvable after fault injection" — computed by
//!   [`metrics::robustness_scores`] against the fault-free profile `0.0` of
//!   the same agent, tasks and ε.
//! - O_f = N_f,trigger / N_total, where N_total is "the total number of
//!   injected tasks" (episodes fault f took effect in, at least once) and
//!   N_f,trigger "the number of tasks in which the system detects
//!   abnormality and activates at least one fault-tolerant behavior" (at
//!   least one of the episode's injections of f detected).
//! - L_f = N_f,fixed / N_f,trigger, N_f,fixed being "the number of tasks in
//!   which the triggered fault-tolerant behavior successfully corrects the
//!   injected fault" (every injection of f in the episode fixed).
//! - S_f = N_f,final_success / N_f,trigger: the triggered episodes that
//!   "ultimately achieve their intended goal" (the verdict passed).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use std::fmt::Write as _;

use toolenv::pb;
use toolenv_core::masfire::{LABEL_PREFIX, MasFault, MasProfile};

use crate::{
    Grid, GridError,
    metrics::{self, EpisodeResult, FaultTolerance, InfraConvention, Rate},
};

/// The fault-free profile the `mas-fire` grid compares against.
pub const BASELINE_PROFILE: &str = "0.0";

/// Whether a fault profile name is a MAS-FIRE profile's label (`mas:…`).
pub fn is_mas(name: &str) -> bool {
    name.starts_with(LABEL_PREFIX)
}

/// The wire profile of a `mas:` label (`None` for any other name, or a label
/// that does not read: [`Grid::validate`] refuses those first).
pub fn wire_profile(name: &str) -> Option<pb::MasFaultProfile> {
    MasProfile::from_label(name)?.ok().map(|p| pb::MasFaultProfile::from(&p))
}

/// Checks a `mas:` label.
pub fn check_label(name: &str) -> Result<(), GridError> {
    match MasProfile::from_label(name) {
        Some(profile) => profile.map(drop).map_err(GridError::from),
        None => Ok(()),
    }
}

impl Grid {
    /// The `mas-fire` grid: the fault-free baseline and each of MAS-FIRE's
    /// fifteen fault types alone ([`MasProfile::presets`]: rate 0.3 on the
    /// planner and executor), 2 trials.
    pub fn mas_fire(agents: Vec<String>) -> Grid {
        let mut profiles = vec![BASELINE_PROFILE.to_owned()];
        profiles.extend(MasProfile::presets().iter().map(MasProfile::label));
        Grid { fault_profiles: profiles, trials: 2, ..Grid::single(agents) }
    }
}

/// MAS-FIRE's process-level figures of one fault type for one group (an
/// agent label, or a role): the row [`metrics::fault_tolerance`] gives per
/// fault kind, here with N_total the episodes the fault took effect in (on
/// this group's agents).
pub type MasTolerance = FaultTolerance<MasFault>;

/// How [`tolerance`] groups episodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// By the run's agent label.
    Agent,
    /// By the role of the agent each fault met (`-` for a fault in the
    /// description, or an agent without a role).
    Role,
}

/// O_f, L_f and S_f of every fault type met, per group, in (group, fault) order.
/// Infrastructure errors are left out (they carry no verdict) or, with
/// `conv` counting them as failures, have no MAS outcomes to count anyway.
pub fn tolerance<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>, by: GroupBy, conv: InfraConvention) -> Vec<MasTolerance> {
    // (group, fault) → (injected, triggered, fixed, final_success)
    let mut counts: BTreeMap<(String, MasFault), [u64; 4]> = BTreeMap::new();
    for e in episodes {
        let passed = conv.judge(&e.outcome) == Some(true);
        let mut groups: BTreeMap<(String, MasFault), (bool, bool)> = BTreeMap::new();
        for o in &e.mas_faults {
            let group = match by {
                GroupBy::Agent => e.agent.clone(),
                GroupBy::Role => o.role.clone().unwrap_or_else(|| "-".to_owned()),
            };
            let entry = groups.entry((group, o.fault)).or_insert((false, true));
            entry.0 |= o.detected;
            entry.1 &= o.fixed;
        }
        for (key, (detected, fixed)) in groups {
            let c = counts.entry(key).or_default();
            c[0] += 1;
            c[1] += u64::from(detected);
            c[2] += u64::from(detected && fixed);
            c[3] += u64::from(detected && passed);
        }
    }
    counts.into_iter().map(|((group, fault), counts)| FaultTolerance::new(fault, Some(group), counts)).collect()
}

fn pct(rate: &Rate) -> String {
    rate.value.map_or("n/a".to_owned(), |v| format!("{:.1}%", v * 100.0))
}

/// An agent's MAS-FIRE tables, as data: what [`render_agent`] prints and
/// `report --json` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MasFireSummary {
    /// The fault-free profile RS_f compares against.
    pub baseline_profile: String,
    /// Tasks of the baseline profile: 0 when the run has no such profile,
    /// and every RS_f is then undefined.
    pub baseline_tasks: u64,
    /// RS_f per MAS-FIRE profile (the paper's Table 2 shape).
    pub robustness: Vec<metrics::RobustnessScore>,
    /// O_f, L_f, S_f per fault type, for the agent (its Table 3 shape).
    pub by_agent: Vec<metrics::FaultTolerance>,
    /// The same per role of the agent each fault met.
    pub by_role: Vec<metrics::FaultTolerance>,
}

/// The MAS-FIRE tables of an agent's episodes, `None` when none ran under a
/// MAS-FIRE profile.
pub fn summary(mine: &[&EpisodeResult], conv: InfraConvention) -> Result<Option<MasFireSummary>, metrics::MetricsError> {
    if !mine.iter().any(|e| is_mas(&e.fault_profile)) {
        return Ok(None);
    }
    let scores = metrics::robustness_scores(mine.iter().copied(), BASELINE_PROFILE, conv)?;
    let baseline_tasks =
        mine.iter().filter(|e| e.fault_profile == BASELINE_PROFILE).map(|e| e.task_id.as_str()).collect::<BTreeSet<_>>().len() as u64;
    let named = |rows: Vec<MasTolerance>| -> Vec<metrics::FaultTolerance> {
        rows.into_iter()
            .map(|r| {
                metrics::FaultTolerance::new(
                    r.fault.name().to_owned(),
                    r.group,
                    [r.injected_episodes, r.triggered, r.fixed, r.final_success],
                )
            })
            .collect()
    };
    Ok(Some(MasFireSummary {
        baseline_profile: BASELINE_PROFILE.to_owned(),
        baseline_tasks,
        robustness: scores.into_iter().filter(|s| is_mas(&s.fault_profile)).collect(),
        by_agent: named(tolerance(mine.iter().copied(), GroupBy::Agent, conv)),
        by_role: named(tolerance(mine.iter().copied(), GroupBy::Role, conv)),
    }))
}

/// Writes an agent's MAS-FIRE tables: RS_f by profile (the paper's Table 2
/// shape), then O_f, L_f, S_f by fault type, for the agent and by role (its
/// Table 3 shape).
pub fn render_agent(out: &mut String, mas: &MasFireSummary) {
    let base = &mas.baseline_profile;
    let _ = writeln!(out, "  MAS-FIRE robustness RS_f (vs the fault-free profile {base}):");
    if mas.baseline_tasks == 0 {
        let _ = writeln!(
            out,
            "    (no episode ran under the fault-free profile {base}, so RS_f is n/a: add `{base}` to the run's fault profiles)"
        );
    }
    let _ = writeln!(out, "    {:<48} {:>6} {:>8}", "fault profile", "tasks", "RS_f");
    for s in &mas.robustness {
        let score = s.score.map_or("n/a".to_owned(), |r| format!("{:.1}%", r.to_f64() * 100.0));
        let _ = writeln!(out, "    {:<48} {:>6} {:>8}", s.fault_profile, s.tasks, score);
    }
    for (title, rows) in [("the agent", &mas.by_agent), ("role", &mas.by_role)] {
        if rows.is_empty() {
            continue;
        }
        let width = rows.iter().filter_map(|r| r.group.as_ref()).map(|g| g.chars().count()).max().unwrap_or(0).max(10);
        let _ = writeln!(out, "  MAS-FIRE process metrics by {title} (O_f detected, L_f fixed, S_f succeeded):");
        let _ = writeln!(out, "    {:<28} {:<width$} {:>8} {:>8} {:>8} {:>8}", "fault", "group", "N_total", "O_f", "L_f", "S_f");
        for r in rows {
            let _ = writeln!(
                out,
                "    {:<28} {:<width$} {:>8} {:>8} {:>8} {:>8}",
                r.fault,
                r.group.as_deref().unwrap_or("-"),
                r.injected_episodes,
                pct(&r.occurrence),
                pct(&r.local_success),
                pct(&r.success)
            );
        }
    }
}
