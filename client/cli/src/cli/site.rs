//! `toolenv site RUN… --out DIR`: a static results site of stored runs (a
//! leaderboard per suite, generator version and k, each run's report, and
//! comparisons), as [`toolenv_runs::html::site`] lays it out.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use toolenv_runs::html::{self, SiteRun};
use toolenv_runs::metrics::Population;
use toolenv_store::AnyStore;

use super::args::SiteArgs;

/// Writes the site and says where its index is.
pub(crate) fn site(args: &SiteArgs) -> anyhow::Result<ExitCode> {
    let store = AnyStore::open_existing(&args.store.store)?;
    let ids: Vec<String> =
        if args.runs.is_empty() { store.runs()?.into_iter().map(|r| r.id.as_str().to_owned()).collect() } else { args.runs.clone() };
    if ids.is_empty() {
        anyhow::bail!("the store at {} has no runs (`toolenv run` makes one)", store.location());
    }
    let mut runs = Vec::with_capacity(ids.len());
    for run in &ids {
        let figures = super::html::run_figures(&store, run, args.infra.convention(), Population::AllEpisodes)?;
        let plan = store.plan(&store.find_run(run)?)?;
        let (suite, generator_version) = toolenv_domains::generate::suite_of(plan.iter().map(|p| p.request.task_id.as_str()));
        runs.push(SiteRun { figures, suite, generator_version });
    }
    let pages = html::site(&runs);
    for page in &pages {
        write(&args.out, &page.path, &page.html)?;
    }
    eprintln!("wrote {} pages for {} runs; open {}", pages.len(), runs.len(), args.out.join("index.html").display());
    Ok(ExitCode::SUCCESS)
}

fn write(dir: &Path, path: &str, text: &str) -> anyhow::Result<()> {
    let file = dir.join(path);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))
}
