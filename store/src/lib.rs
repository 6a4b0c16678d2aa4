//! The store of runs: every run's plan and every finished episode (its
//! result, verdict flag and trajectory), so that nothing finished is lost
//! and an interrupted run resumes where it stopped.
//!
//! An episode is *finished* when it reached a verdict (passed or failed). An
//! infrastructure error is stored too, but is not finished: a resumed run
//! plays it again and the new outcome replaces it (the row counts how many
//! infrastructure errors it replaced). A finished episode is never replaced:
//! recording it again is refused with [`StoreError::AlreadyRecorded`].
//!
//! This module holds what does not depend on where runs are kept: the
//! error, run ids, a run's summary, a recorded episode as read back, and
//! the JSON-lines export (`export`). The backends are [`sqlite`], an embedded
//! file and the default ([`Store`]), and [`postgres`], a database that
//! several servers (replicas) share ([`PgStore`]), with the same methods;
//! [`AnyStore`] is either, chosen by the location a user gives (a path or a
//! `postgres://` URL).

mod any;
mod export;
pub mod postgres;
pub mod sqlite;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

pub use any::AnyStore;
pub use postgres::PgStore;
pub use sqlite::{DEFAULT_PATH, SCHEMA_VERSION, Store};
pub use toolenv_runs::StoredEpisode;
use toolenv_runs::metrics::EpisodeResult;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened or is not a SQLite database.
    #[error("cannot open the store at {path}")]
    Open { path: PathBuf, source: rusqlite::Error },
    /// [`Store::open_existing`] found no file.
    #[error("no store at {0} (`toolenv run` creates one; --store names another)")]
    Missing(PathBuf),
    /// The file was written by another version of the schema.
    #[error("the store at {path} has schema version {found}; this toolenv reads version {SCHEMA_VERSION}")]
    SchemaVersion { path: PathBuf, found: i64 },
    /// The PostgreSQL store cannot be reached or refused a statement.
    #[error("PostgreSQL store {url}: {message}")]
    Postgres { url: String, message: String },
    /// The database was migrated by a newer toolenv.
    #[error(
        "the PostgreSQL store {url} has schema version {found}; this toolenv reads version {} (upgrade toolenv)",
        postgres::PG_SCHEMA_VERSION
    )]
    PgSchemaVersion { url: String, found: i64 },
    /// No run of that id.
    #[error("no run '{run}' in the store at {path} (`toolenv runs --store {path}` lists them)")]
    UnknownRun { run: String, path: PathBuf },
    /// The episode reached a verdict already; it is never recorded twice.
    #[error("episode {index} of {run} is already recorded")]
    AlreadyRecorded { run: RunId, index: usize },
    /// The index is not in the run's plan.
    #[error("run {run} has no planned episode {index}")]
    NotInPlan { run: RunId, index: usize },
    /// A stored row cannot be read back.
    #[error("unreadable row in the store: {0}")]
    Corrupt(String),
    /// SQLite failed.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// A result could not be written as JSON.
    #[error("encoding a result as JSON")]
    Json(#[from] serde_json::Error),
    /// Writing an export failed.
    #[error("writing the export")]
    Io(#[from] std::io::Error),
}

impl StoreError {
    /// Whether the store is down or busy rather than wrong: PostgreSQL
    /// unreachable (or restarting), SQLite locked by another writer. A
    /// request that met it may succeed when tried again.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Postgres { .. } => true,
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(error, _)) => {
                matches!(error.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            }
            _ => false,
        }
    }
}

/// A run's id in its store: `run-0001`, `run-0002`, … in order of creation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RunId(String);

impl RunId {
    /// The id as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&self.0)
    }
}

/// A run and how far it got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// The run's id.
    pub id: RunId,
    /// What started it (the CLI stores its command line).
    pub description: String,
    /// When it was created (UTC, ISO 8601); for people, nothing reads it.
    pub created_at: String,
    /// Episodes in the plan.
    pub planned: u64,
    /// Episodes with a verdict that passed.
    pub passed: u64,
    /// Episodes with a verdict that failed.
    pub failed: u64,
    /// Episodes whose last attempt was an infrastructure error (played again on resume).
    pub infra_errors: u64,
    /// Processes that played the run: 1 + the number of resumes.
    pub sessions: u32,
    /// For a run hosted by a server for workers, how long a leased episode
    /// may go without a call before it is handed out again.
    #[serde(serialize_with = "millis")]
    pub lease_timeout: Option<Duration>,
}

fn millis<S: serde::Serializer>(duration: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_some(&duration.map(|d| d.as_millis() as u64))
}

impl RunSummary {
    /// Episodes that reached a verdict.
    pub fn finished(&self) -> u64 {
        self.passed + self.failed
    }

    /// Planned episodes without a verdict yet: not played, or an infrastructure error.
    pub fn pending(&self) -> u64 {
        self.planned.saturating_sub(self.finished())
    }

    /// `complete` when every planned episode reached a verdict, `incomplete` otherwise.
    /// Derived, never stored: a killed process cannot leave a stale status behind.
    pub fn status(&self) -> &'static str {
        if self.pending() == 0 { "complete" } else { "incomplete" }
    }
}

/// NaN (an unknown λ) as NULL, which is what SQL and JSON make of it anyway.
fn finite(value: f64) -> Option<f64> {
    (!value.is_nan()).then_some(value)
}

/// A stored result (its JSON) read back, or why it cannot be.
fn read_result(run: &RunId, index: usize, json: &str) -> Result<EpisodeResult, StoreError> {
    serde_json::from_str(json).map_err(|error| StoreError::Corrupt(format!("{run} #{index}: result: {error}")))
}
