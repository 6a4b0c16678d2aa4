//! Either backend behind one type, chosen by where the user says runs are:
//! a `postgres://` URL is a [`PgStore`], anything else a SQLite file
//! ([`Store`]). Every read and write is the backend's own; this only
//! dispatches (one `match`, nothing on the SQLite path besides).

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use toolenv::pb;

use super::{PgStore, RunId, RunSummary, Store, StoreError, StoredEpisode, postgres};
use toolenv_runs::{PlannedEpisode, metrics::EpisodeResult};

/// A store of runs in a SQLite file or a PostgreSQL database.
#[derive(Debug)]
pub enum AnyStore {
    /// The embedded default.
    Sqlite(Store),
    /// A database shared by replicas.
    Postgres(std::sync::Arc<PgStore>),
}

impl From<Store> for AnyStore {
    fn from(store: Store) -> Self {
        AnyStore::Sqlite(store)
    }
}

/// The same call on whichever backend.
macro_rules! dispatch {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            AnyStore::Sqlite(store) => store.$method($($arg),*),
            AnyStore::Postgres(store) => store.$method($($arg),*),
        }
    };
}

impl AnyStore {
    /// Opens (creating if needed) the store at `location`: a PostgreSQL URL
    /// or a SQLite file's path.
    pub fn open(location: impl AsRef<Path>) -> Result<AnyStore, StoreError> {
        match location.as_ref().to_str().filter(|l| postgres::is_url(l)) {
            Some(url) => PgStore::connect(url).map(|store| AnyStore::Postgres(store.into())),
            None => Store::open(location).map(AnyStore::Sqlite),
        }
    }

    /// Opens the store at `location`, which must exist (a SQLite file must
    /// be there; a database must be reachable).
    pub fn open_existing(location: impl AsRef<Path>) -> Result<AnyStore, StoreError> {
        match location.as_ref().to_str().filter(|l| postgres::is_url(l)) {
            Some(url) => PgStore::connect(url).map(|store| AnyStore::Postgres(store.into())),
            None => Store::open_existing(location).map(AnyStore::Sqlite),
        }
    }

    /// The PostgreSQL store, when it is one (replicas share its log and leases).
    pub fn postgres(&self) -> Option<&std::sync::Arc<PgStore>> {
        match self {
            AnyStore::Postgres(store) => Some(store),
            AnyStore::Sqlite(_) => None,
        }
    }

    /// Where the store is, for messages (a file path, or a URL without password).
    pub fn location(&self) -> String {
        match self {
            AnyStore::Sqlite(store) => store.path().display().to_string(),
            AnyStore::Postgres(store) => store.url().to_owned(),
        }
    }

    /// Records a new run and its plan, and returns its id.
    pub fn create_run(&self, plan: &[PlannedEpisode], description: &str) -> Result<RunId, StoreError> {
        dispatch!(self.create_run(plan, description))
    }

    /// Records a new run hosted for workers.
    pub fn host_run(&self, plan: &[PlannedEpisode], description: &str, lease_timeout: Duration) -> Result<RunId, StoreError> {
        dispatch!(self.host_run(plan, description, lease_timeout))
    }

    /// Counts a new session of the run (a resume) and returns its number.
    pub fn begin_session(&self, run: &RunId) -> Result<u32, StoreError> {
        dispatch!(self.begin_session(run))
    }

    /// Records how an episode ended (at most one verdict per plan entry).
    pub fn record(&self, run: &RunId, index: usize, result: &EpisodeResult, trajectory: Option<&pb::Trajectory>) -> Result<(), StoreError> {
        dispatch!(self.record(run, index, result, trajectory))
    }

    /// Looks a run up by the id a user typed.
    pub fn find_run(&self, id: &str) -> Result<RunId, StoreError> {
        dispatch!(self.find_run(id))
    }

    /// The run's whole plan, in order.
    pub fn plan(&self, run: &RunId) -> Result<Vec<PlannedEpisode>, StoreError> {
        dispatch!(self.plan(run))
    }

    /// The run's agent labels, in plan order.
    pub fn agents(&self, run: &RunId) -> Result<Vec<String>, StoreError> {
        dispatch!(self.agents(run))
    }

    /// The distinct task ids of the run's plan, sorted.
    pub fn task_ids(&self, run: &RunId) -> Result<Vec<String>, StoreError> {
        dispatch!(self.task_ids(run))
    }

    /// The planned episodes without a verdict yet, in plan order.
    pub fn pending(&self, run: &RunId) -> Result<Vec<(usize, PlannedEpisode)>, StoreError> {
        dispatch!(self.pending(run))
    }

    /// The run's recorded episodes in plan order, trajectories included.
    pub fn episodes(&self, run: &RunId) -> Result<Vec<StoredEpisode>, StoreError> {
        dispatch!(self.episodes(run))
    }

    /// The run's recorded results in plan order.
    pub fn results(&self, run: &RunId) -> Result<Vec<EpisodeResult>, StoreError> {
        dispatch!(self.results(run))
    }

    /// One run and how far it got.
    pub fn summary(&self, run: &RunId) -> Result<RunSummary, StoreError> {
        dispatch!(self.summary(run))
    }

    /// Every run in the store, oldest first.
    pub fn runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        dispatch!(self.runs())
    }

    /// Writes the run's recorded episodes as JSON lines and returns how many.
    pub fn export_jsonl(&self, run: &RunId, writer: impl Write) -> Result<u64, StoreError> {
        dispatch!(self.export_jsonl(run, writer))
    }

    /// Copies every run of `self` into the PostgreSQL store `into` (new ids
    /// there); returns each run's (old id, new id).
    pub fn copy_into(&self, into: &PgStore) -> Result<Vec<(RunId, RunId)>, StoreError> {
        let mut copied = Vec::new();
        for summary in self.runs()? {
            let plan = self.plan(&summary.id)?;
            let episodes = self.episodes(&summary.id)?;
            let new = into.import_run(&summary, &plan, &episodes)?;
            copied.push((summary.id, new));
        }
        Ok(copied)
    }
}
