//! The embedded SQLite backend of the store, the default: one file (or
//! memory, for a server told to keep nothing), no setup.
//!
//! Synchronous and small on purpose: the CLI calls it between episodes, and
//! a server can call it from a blocking thread. Each recorded episode is one
//! statement, committed at once (WAL journal), so killing the process loses
//! at most the episodes in flight.
//!
//! [`Store`] is split by what its methods do: opening here, the schema and
//! its migrations in `schema`, writing runs, plans and results in `write`,
//! reading them back (and exporting them) in `read`.

mod read;
mod schema;
#[cfg(test)]
mod tests;
mod write;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::{RunId, StoreError};
pub use schema::SCHEMA_VERSION;

/// The default store file of the CLI, in the current directory.
pub const DEFAULT_PATH: &str = "toolenv.db";

/// An open store file.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens the store at `path`, creating the file and its schema if needed.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        let conn = Connection::open(&path).map_err(|source| StoreError::Open { path: path.clone(), source })?;
        Store::init(conn, path)
    }

    /// Opens a store that lives in memory only, gone when dropped: for a
    /// server told to keep nothing.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open { path: path.clone(), source })?;
        Store::init(conn, path)
    }

    /// Opens the store at `path`, which must exist (for reading runs back).
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        if !path.is_file() {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        Store::open(path)
    }

    /// The file this store is in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn unknown(&self, run: &RunId) -> StoreError {
        StoreError::UnknownRun { run: run.0.clone(), path: self.path.clone() }
    }
}
