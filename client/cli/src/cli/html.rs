//! `toolenv report RUN [RUN_B] --html FILE`: a stored run's report (or two
//! runs side by side) as one self-contained HTML page.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use toolenv_runs::metrics::{InfraConvention, Population};
use toolenv_runs::{html, trials_of};
use toolenv_store::AnyStore;

/// Writes the page of `runs` (the first is the baseline) to `file`.
pub(crate) fn report(path: &Path, runs: &[String], file: &Path, conv: InfraConvention, population: Population) -> anyhow::Result<ExitCode> {
    let store = AnyStore::open_existing(path)?;
    let figures = runs.iter().map(|run| run_figures(&store, run, conv, population)).collect::<anyhow::Result<Vec<_>>>()?;
    let page = html::render(&figures);
    std::fs::write(file, page).with_context(|| format!("writing {}", file.display()))?;
    eprintln!("wrote {} ({} run{})", file.display(), figures.len(), if figures.len() == 1 { "" } else { "s" });
    Ok(ExitCode::SUCCESS)
}

/// The figures of one stored run, as its report page shows them.
pub(crate) fn run_figures(store: &AnyStore, run: &str, conv: InfraConvention, population: Population) -> anyhow::Result<html::RunFigures> {
    let id = store.find_run(run)?;
    let summary = store.summary(&id)?;
    let results = store.results(&id)?;
    let k = trials_of(&store.plan(&id)?);
    html::figures(summary.id.as_str(), &summary.description, &results, k, summary.planned, conv, population)
        .with_context(|| format!("computing the figures of {run}"))
}
