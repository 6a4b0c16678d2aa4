//! Which tasks a command is about: the suite (`--suite`), or a task file
//! (`--tasks FILE|DIR`, `--suite file:PATH`) read and validated while the
//! arguments are parsed, and the domain and level.

use std::sync::Arc;

use toolenv_domains::generate::Suite;
use toolenv_domains::taskfile::{Catalogue, TaskSet};

use super::values::DomainArg;

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Filter {
    /// The suite: "paper" (the paper's 20 tasks), "standard" (100 generated
    /// tasks per domain and level), "generated:<seed>:<n>" (n generated
    /// tasks per domain and level from seed), "conversational" /
    /// "conversational:<seed>:<n>" (their conversational variants: slots
    /// withheld, a simulated user to ask; "conversational-paired…" puts each
    /// before its task in full) or "file:PATH" (as --tasks).
    #[arg(long, default_value = "paper", value_parser = parse_suite)]
    pub(crate) suite: SuiteArg,
    /// A task file, or a folder of them (*.json), as the suite: validated as
    /// the built-in suite is (see examples/tasks/), then loaded; its tasks'
    /// ids carry the file's hash (`id@hash`).
    #[arg(long, value_name = "FILE|DIR", value_parser = parse_tasks, conflicts_with = "suite")]
    pub(crate) tasks: Option<Arc<TaskSet>>,
    /// Only tasks of this domain.
    #[arg(long, value_enum)]
    pub(crate) domain: Option<DomainArg>,
    /// Only tasks of this level (1 to 3; level 3 exists in generated suites).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=3))]
    pub(crate) level: Option<u8>,
}

/// `--suite`: a suite by name, or a task file's (`file:PATH`).
#[derive(Debug, Clone)]
pub(crate) enum SuiteArg {
    Named(Suite),
    File(Arc<TaskSet>),
}

impl Filter {
    /// The task file asked for (--tasks, or --suite file:PATH), if any.
    fn set(&self) -> Option<&Arc<TaskSet>> {
        match (&self.suite, &self.tasks) {
            (SuiteArg::File(set), _) | (SuiteArg::Named(_), Some(set)) => Some(set),
            (SuiteArg::Named(_), None) => None,
        }
    }

    /// The suite asked for: the task file's, or --suite.
    pub(crate) fn suite(&self) -> Suite {
        match (&self.suite, &self.tasks) {
            (SuiteArg::File(set), _) | (SuiteArg::Named(_), Some(set)) => set.suite(),
            (SuiteArg::Named(suite), None) => suite.clone(),
        }
    }

    /// The tasks the command's server and agents find by id: the built-in
    /// ones, and the task file's if the suite is one.
    pub(crate) fn catalogue(&self) -> anyhow::Result<Catalogue> {
        catalogue(self.set())
    }
}

fn parse_suite(name: &str) -> Result<SuiteArg, String> {
    match name.parse() {
        // `file:PATH`: a task file.
        Err(toolenv_domains::generate::SuiteError::NoTaskFile(path)) => parse_tasks(&path).map(SuiteArg::File),
        parsed => parsed.map(SuiteArg::Named).map_err(|e| e.to_string()),
    }
}

/// Reads and validates a task file (or folder), its ids not the built-in tasks'.
pub(crate) fn parse_tasks(path: &str) -> Result<Arc<TaskSet>, String> {
    let set = toolenv_runs::taskfiles::read(std::path::Path::new(path)).map_err(|e| e.to_string())?;
    Catalogue::new().add(set).map_err(|e| e.to_string())
}

/// The catalogue of `--tasks` sets: the built-in tasks and theirs, or the
/// first set whose ids another one has.
pub(crate) fn catalogue<'a>(sets: impl IntoIterator<Item = &'a Arc<TaskSet>>) -> anyhow::Result<Catalogue> {
    Ok(Catalogue::of(sets.into_iter().cloned())?)
}
