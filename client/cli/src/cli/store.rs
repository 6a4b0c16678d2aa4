//! Commands over the store of runs: `runs`, `report`, `export` and `copy-store`.

use std::path::Path;
use std::process::ExitCode;

use toolenv_runs::metrics::{InfraConvention, Population};
use toolenv_runs::trials_of;
use toolenv_store::{AnyStore, StoreError};

use super::args::{ExportFormat, ReplayArgs};
use super::render;

/// `toolenv runs`: the store's runs.
pub(crate) fn list_runs(path: &Path) -> anyhow::Result<ExitCode> {
    let store = AnyStore::open_existing(path)?;
    render::stored_runs(&store.runs()?);
    Ok(ExitCode::SUCCESS)
}

/// `toolenv report RUN`: a stored run's report.
pub(crate) fn report(
    replay: &ReplayArgs,
    run: &str,
    json: bool,
    conv: InfraConvention,
    population: Population,
) -> anyhow::Result<ExitCode> {
    let store = AnyStore::open_existing(&replay.store.store)?;
    let run = store.find_run(run)?;
    let summary = store.summary(&run)?;
    let results = store.results(&run)?;
    let k = trials_of(&store.plan(&run)?);
    render::stored_report(&summary, &results, k, json, conv, population)?;
    if !json {
        // Failed episodes attributed by counterfactual replay (`toolenv attribute RUN` for each).
        let tasks = super::filter::catalogue(&replay.tasks)?;
        let (attributed, unattributed) = toolenv_runs::attribution::attribute_run(&tasks, &store.episodes(&run)?, replay.max_calls);
        println!();
        print!("{}", toolenv_runs::attribution::table(&attributed));
        if !unattributed.is_empty() {
            let failed = toolenv_runs::report::counted(unattributed.len() as u64, "failed episode");
            let hint = if super::attribute::needs_tasks(&unattributed) { "; a task file's tasks need --tasks FILE|DIR" } else { "" };
            println!("  {failed} not attributed (`toolenv attribute RUN` says why for each{hint})");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `toolenv export RUN`: a stored run's episodes as JSON lines on stdout,
/// or their traces as OTLP/JSON lines.
pub(crate) fn export(path: &Path, run: &str, format: ExportFormat) -> anyhow::Result<ExitCode> {
    let store = AnyStore::open_existing(path)?;
    let run = store.find_run(run)?;
    let stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let written = match format {
        ExportFormat::Jsonl => store.export_jsonl(&run, stdout),
        ExportFormat::OtlpJson => {
            toolenv_runs::otlp::write_jsonl(run.as_str(), &store.plan(&run)?, &store.episodes(&run)?, stdout).map_err(StoreError::Io)
        }
    };
    match written {
        Ok(_) => Ok(ExitCode::SUCCESS),
        // `toolenv export RUN | head` is not an error.
        Err(StoreError::Io(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(StoreError::Json(error)) if error.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) => Ok(ExitCode::SUCCESS),
        Err(error) => Err(error.into()),
    }
}

/// `toolenv copy-store --to URL`: every run of the store, copied into PostgreSQL.
pub(crate) fn copy(path: &Path, to: &str) -> anyhow::Result<ExitCode> {
    if !toolenv_store::postgres::is_url(to) {
        anyhow::bail!("--to must be a PostgreSQL URL (postgres://user:password@host:port/db), got {to:?}");
    }
    let from = AnyStore::open_existing(path)?;
    let into = toolenv_store::PgStore::connect(to)?;
    let copied = from.copy_into(&into)?;
    for (old, new) in &copied {
        println!("{old} -> {new}");
    }
    eprintln!("copied {} run{} from {} into {}", copied.len(), if copied.len() == 1 { "" } else { "s" }, from.location(), into.url());
    Ok(ExitCode::SUCCESS)
}
