//! The SQLite schema and its migrations: the tables a store file holds,
//! the version it is at, and the upgrade of older files when opened.

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior};

use super::Store;
use crate::StoreError;

/// The schema this code reads and writes. Version 1 (no hosted runs) is
/// upgraded in place when opened.
pub const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    seq         INTEGER PRIMARY KEY,          -- run-0001 is seq 1
    id          TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL,             -- what started it, e.g. the command line
    planned     INTEGER NOT NULL,             -- episodes in the plan
    sessions    INTEGER NOT NULL DEFAULT 1,   -- processes that played it: 1 + resumes
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    lease_timeout_ms INTEGER                  -- hosted for workers by a server; NULL: played by the CLI
);
CREATE TABLE IF NOT EXISTS planned_episodes (
    run_id        TEXT    NOT NULL REFERENCES runs (id),
    plan_index    INTEGER NOT NULL,
    agent         TEXT    NOT NULL,           -- the agent's label
    task_id       TEXT    NOT NULL,           -- copied from the request, for queries
    epsilon       REAL    NOT NULL,
    trial         INTEGER NOT NULL,
    fault_profile TEXT    NOT NULL,           -- the report's label, 'none' without faults
    lambda        REAL,                       -- NULL: unknown (NaN)
    request       BLOB    NOT NULL,           -- toolenv.v1.CreateEpisodeRequest
    PRIMARY KEY (run_id, plan_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS episodes (
    run_id               TEXT    NOT NULL,
    plan_index           INTEGER NOT NULL,
    session              INTEGER NOT NULL,    -- the run's session that played it
    passed               INTEGER,             -- the verdict's flag; NULL for an infrastructure error
    infra_error          TEXT,                -- NULL unless an infrastructure error
    replaced_infra_errors INTEGER NOT NULL DEFAULT 0,
    result               TEXT    NOT NULL,    -- metrics::EpisodeResult as JSON
    trajectory           BLOB,                -- toolenv.v1.Trajectory; NULL for an infrastructure error
    UNIQUE (run_id, plan_index),
    FOREIGN KEY (run_id, plan_index) REFERENCES planned_episodes (run_id, plan_index),
    CHECK ((passed IS NULL) = (infra_error IS NOT NULL))
);
";

impl Store {
    /// Sets the connection up and brings its schema to [`SCHEMA_VERSION`]:
    /// created in a new file, upgraded in place from version 1.
    pub(super) fn init(conn: Connection, path: PathBuf) -> Result<Store, StoreError> {
        let open_error = |source| StoreError::Open { path: path.clone(), source };
        // Readers (`toolenv runs`) may poll while a run writes: wait for locks.
        conn.busy_timeout(Duration::from_secs(10)).map_err(open_error)?;
        // WAL: readers do not block the writer; NORMAL sync is durable across
        // a killed process (not across a power cut), and keeps commits cheap.
        conn.pragma_update(None, "journal_mode", "WAL").map_err(open_error)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)?;
        tx.execute_batch(SCHEMA)?;
        let found: Option<i64> = tx.query_row("SELECT version FROM schema_version", [], |row| row.get(0)).optional()?;
        match found {
            None => {
                tx.execute("INSERT INTO schema_version (version) VALUES (?1)", [SCHEMA_VERSION])?;
            }
            Some(SCHEMA_VERSION) => {}
            Some(1) => {
                tx.execute_batch("ALTER TABLE runs ADD COLUMN lease_timeout_ms INTEGER; UPDATE schema_version SET version = 2;")?;
            }
            Some(found) => return Err(StoreError::SchemaVersion { path, found }),
        }
        tx.commit()?;
        Ok(Store { conn, path })
    }
}
