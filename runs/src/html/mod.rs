//! HTML reports of one run, or of two side by side: one self-contained file
//! (no network, no script, inline SVG and CSS) with the paper's figures —
//! the reliability surface R(ε, λ) as a heat map per agent, pass^k over k,
//! per-domain bars with average calls, fault recovery (Table 8), the
//! fault-type ablation (Table 9 / Figure 5), tokens and cost, and the
//! validity figures (ceilings, infeasible episodes, infrastructure errors).
//!
//! The numbers come from one place: [`RunFigures`] holds the run's
//! [`Summary`] (what `toolenv report --json` prints) plus the pass^j curves
//! for j = 1..=k, computed by the same [`crate::metrics`] functions. Every
//! number on the page carries a `data-ptr` attribute, the JSON pointer of
//! the value it shows within `{"runs": [RunFigures, …]}`, so a test (or a
//! reader) can check each one against the data.
//!
//! The page is a list of sections (`sections::SECTIONS`); each renders one
//! run's part, and the page lays the runs side by side. A new figure is a
//! new entry at the end of that list.
//!
//! Imports point one way: `page` lays out `sections`, which draw with `svg`,
//! and all three write through `markup` (escaping, numbers tied to their
//! data, tables).

mod conversation;
mod markup;
mod page;
mod sections;
mod site;
#[cfg(test)]
mod site_tests;
mod svg;
#[cfg(test)]
mod tests;

use serde::Serialize;
pub use site::{SitePage, SiteRun, site};

use crate::{
    metrics::{self, EpisodeResult, InfraConvention, MetricsError, PassK, Population, Surface},
    report::{Summary, in_main_grid},
};

/// What the HTML report shows of one run, all of it serializable: the
/// numbers on the page are exactly these.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFigures {
    /// The run's id, e.g. `run-0003`.
    pub run: String,
    /// What started the run (the CLI stores its command line).
    pub description: String,
    /// The run's report, as `toolenv report --json` gives it.
    pub report: Summary,
    /// pass^j for j = 1..=k per agent, in the order of `report.agents`.
    pub curves: Vec<AgentCurves>,
}

/// One agent's pass^j curves for j = 1..=k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentCurves {
    /// The agent's label.
    pub agent: String,
    /// pass^j over all the agent's episodes, index j − 1.
    pub overall: Vec<PassK>,
    /// pass^j per (ε, λ) cell of the main grid (ablation profiles left
    /// out), for every j = 1..=k.
    pub cells: Surface,
}

/// The figures of a run's recorded episodes, of which `planned` were
/// planned, with the same conventions as [`crate::report::summary`].
pub fn figures(
    run: &str,
    description: &str,
    episodes: &[EpisodeResult],
    k: u32,
    planned: u64,
    conv: InfraConvention,
    population: Population,
) -> Result<RunFigures, MetricsError> {
    let report = crate::report::summary(episodes, k, planned, conv, population)?;
    let selected = population.select(episodes);
    let ks: Vec<u32> = (1..=k.max(1)).collect();
    let mut curves = Vec::with_capacity(report.agents.len());
    for agent in &report.agents {
        let mine: Vec<&EpisodeResult> = selected.iter().filter(|e| e.agent == agent.agent).collect();
        let overall = ks.iter().map(|&j| metrics::pass_hat_k(mine.iter().copied(), j, conv)).collect::<Result<Vec<_>, _>>()?;
        let main_grid = mine.iter().copied().filter(|e| in_main_grid(e));
        let cells = metrics::reliability_surface(main_grid, &ks, conv)?;
        curves.push(AgentCurves { agent: agent.agent.clone(), overall, cells });
    }
    Ok(RunFigures { run: run.to_owned(), description: description.to_owned(), report, curves })
}

/// The report page of one run, or of several side by side (the first is
/// the baseline of the comparison).
pub fn render(runs: &[RunFigures]) -> String {
    page::render(runs)
}
