//! The store of runs: every run's plan and every finished episode (its
//! result, verdict flag and trajectory), in an embedded SQLite file, so that
//! nothing finished is lost and an interrupted run resumes where it stopped.
//!
//! Synchronous and small on purpose: the CLI calls it between episodes, and
//! a server can call it from a blocking thread. Each recorded episode is one
//! statement, committed at once (WAL journal), so killing the process loses
//! at most the episodes in flight.
//!
//! An episode is *finished* when it reached a verdict (passed or failed). An
//! infrastructure error is stored too, but is not finished: a resumed run
//! plays it again and the new outcome replaces it (the row counts how many
//! infrastructure errors it replaced). A finished episode is never replaced:
//! recording it again is refused with [`StoreError::AlreadyRecorded`].

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use prost::Message as _;
use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior, params};
use serde::Serialize;
use toolenv::pb;

use crate::PlannedEpisode;
use crate::metrics::{EpisodeResult, Outcome};

/// The schema this code reads and writes. Version 1 (no hosted runs) is
/// upgraded in place when opened.
pub const SCHEMA_VERSION: i64 = 2;

/// The default store file of the CLI, in the current directory.
pub const DEFAULT_PATH: &str = "toolenv.db";

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

/// One recorded episode, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEpisode {
    /// Its index in the run's plan.
    pub plan_index: usize,
    /// The run's session (1 for the first process, 2 after one resume, …) that played it.
    pub session: u32,
    /// Infrastructure errors this row replaced (attempts before the recorded one).
    pub replaced_infra_errors: u32,
    /// Its result.
    pub result: EpisodeResult,
    /// Its trajectory, when it reached the server's.
    pub trajectory: Option<pb::Trajectory>,
}

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

    fn init(conn: Connection, path: PathBuf) -> Result<Store, StoreError> {
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

    /// The file this store is in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a new run and its plan, and returns its id (the next `run-NNNN`).
    pub fn create_run(&self, plan: &[PlannedEpisode], description: &str) -> Result<RunId, StoreError> {
        self.insert_run(plan, description, None)
    }

    /// Records a new run that a server hosts for workers, whose leases
    /// expire after `lease_timeout` without a call.
    pub fn host_run(&self, plan: &[PlannedEpisode], description: &str, lease_timeout: Duration) -> Result<RunId, StoreError> {
        self.insert_run(plan, description, Some(lease_timeout))
    }

    fn insert_run(&self, plan: &[PlannedEpisode], description: &str, lease_timeout: Option<Duration>) -> Result<RunId, StoreError> {
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let seq: i64 = tx.query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM runs", [], |row| row.get(0))?;
        let id = RunId(format!("run-{seq:04}"));
        let lease_ms = lease_timeout.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        tx.execute(
            "INSERT INTO runs (seq, id, description, planned, lease_timeout_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![seq, id.0, description, plan.len(), lease_ms],
        )?;
        {
            let mut insert = tx.prepare(
                "INSERT INTO planned_episodes (run_id, plan_index, agent, task_id, epsilon, trial, fault_profile, lambda, request)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for (index, planned) in plan.iter().enumerate() {
                let request = &planned.request;
                insert.execute(params![
                    id.0,
                    index,
                    planned.agent,
                    request.task_id,
                    request.epsilon,
                    request.trial,
                    planned.fault_profile,
                    finite(planned.lambda),
                    request.encode_to_vec(),
                ])?;
            }
        }
        tx.commit()?;
        Ok(id)
    }

    /// Looks a run up by the id a user typed.
    pub fn find_run(&self, id: &str) -> Result<RunId, StoreError> {
        let found: Option<String> = self.conn.query_row("SELECT id FROM runs WHERE id = ?1", [id], |row| row.get(0)).optional()?;
        found.map(RunId).ok_or_else(|| StoreError::UnknownRun { run: id.to_owned(), path: self.path.clone() })
    }

    /// Counts a new session of the run (a resume) and returns its number.
    pub fn begin_session(&self, run: &RunId) -> Result<u32, StoreError> {
        let session: Option<u32> = self
            .conn
            .query_row("UPDATE runs SET sessions = sessions + 1 WHERE id = ?1 RETURNING sessions", [&run.0], |row| row.get(0))
            .optional()?;
        session.ok_or_else(|| self.unknown(run))
    }

    /// The run's whole plan, in order.
    pub fn plan(&self, run: &RunId) -> Result<Vec<PlannedEpisode>, StoreError> {
        self.planned_where(run, "TRUE").map(|rows| rows.into_iter().map(|(_, planned)| planned).collect())
    }

    /// The run's agent labels, in plan order.
    pub fn agents(&self, run: &RunId) -> Result<Vec<String>, StoreError> {
        let mut query =
            self.conn.prepare("SELECT agent FROM planned_episodes WHERE run_id = ?1 GROUP BY agent ORDER BY MIN(plan_index)")?;
        let agents = query.query_map([&run.0], |row| row.get(0))?.collect::<Result<_, _>>()?;
        Ok(agents)
    }

    /// The distinct task ids of the run's plan, sorted: what names its
    /// suite and generator version.
    pub fn task_ids(&self, run: &RunId) -> Result<Vec<String>, StoreError> {
        let mut query = self.conn.prepare("SELECT DISTINCT task_id FROM planned_episodes WHERE run_id = ?1 ORDER BY task_id")?;
        let ids = query.query_map([&run.0], |row| row.get(0))?.collect::<Result<_, _>>()?;
        Ok(ids)
    }

    /// The planned episodes without a verdict yet, in plan order: those never
    /// recorded and those whose last attempt was an infrastructure error.
    pub fn pending(&self, run: &RunId) -> Result<Vec<(usize, PlannedEpisode)>, StoreError> {
        self.planned_where(run, "(e.plan_index IS NULL OR e.infra_error IS NOT NULL)")
    }

    fn planned_where(&self, run: &RunId, condition: &str) -> Result<Vec<(usize, PlannedEpisode)>, StoreError> {
        self.summary(run)?;
        let mut query = self.conn.prepare(&format!(
            "SELECT p.plan_index, p.agent, p.fault_profile, p.lambda, p.request FROM planned_episodes p
             LEFT JOIN episodes e ON e.run_id = p.run_id AND e.plan_index = p.plan_index
             WHERE p.run_id = ?1 AND {condition} ORDER BY p.plan_index"
        ))?;
        let rows = query.query_map([&run.0], |row| {
            Ok((
                row.get::<_, usize>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, Option<f64>>(3)?,
                row.get::<_, Vec<u8>>(4)?,
            ))
        })?;
        let mut planned = Vec::new();
        for row in rows {
            let (index, agent, fault_profile, lambda, request) = row?;
            let request = pb::CreateEpisodeRequest::decode(request.as_slice())
                .map_err(|error| StoreError::Corrupt(format!("{run} #{index}: planned request: {error}")))?;
            planned.push((index, PlannedEpisode { agent, request, fault_profile, lambda: lambda.unwrap_or(f64::NAN) }));
        }
        Ok(planned)
    }

    /// Records how an episode ended, in one statement committed at once.
    ///
    /// Replaces an infrastructure error recorded before; refuses
    /// ([`StoreError::AlreadyRecorded`]) an episode that already has a verdict.
    pub fn record(&self, run: &RunId, index: usize, result: &EpisodeResult, trajectory: Option<&pb::Trajectory>) -> Result<(), StoreError> {
        let (passed, infra_error) = match &result.outcome {
            Outcome::Passed => (Some(true), None),
            Outcome::Failed => (Some(false), None),
            Outcome::InfraError(reason) => (None, Some(reason.as_str())),
        };
        let changed = self.conn.execute(
            "INSERT INTO episodes (run_id, plan_index, session, passed, infra_error, result, trajectory)
             VALUES (?1, ?2, (SELECT sessions FROM runs WHERE id = ?1), ?3, ?4, ?5, ?6)
             ON CONFLICT (run_id, plan_index) DO UPDATE SET
                 session = excluded.session, passed = excluded.passed, infra_error = excluded.infra_error,
                 result = excluded.result, trajectory = excluded.trajectory,
                 replaced_infra_errors = episodes.replaced_infra_errors + 1
             WHERE episodes.infra_error IS NOT NULL",
            params![run.0, index, passed, infra_error, serde_json::to_string(result)?, trajectory.map(|t| t.encode_to_vec())],
        );
        match changed {
            Ok(0) => Err(StoreError::AlreadyRecorded { run: run.clone(), index }),
            Ok(_) => Ok(()),
            Err(rusqlite::Error::SqliteFailure(error, _)) if error.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                Err(StoreError::NotInPlan { run: run.clone(), index })
            }
            Err(error) => Err(error.into()),
        }
    }

    /// The run's recorded episodes in plan order, trajectories included.
    pub fn episodes(&self, run: &RunId) -> Result<Vec<StoredEpisode>, StoreError> {
        self.summary(run)?;
        let mut query = self.conn.prepare(
            "SELECT plan_index, session, replaced_infra_errors, result, trajectory FROM episodes WHERE run_id = ?1 ORDER BY plan_index",
        )?;
        let rows = query.query_map([&run.0], |row| {
            Ok((row.get::<_, usize>(0)?, row.get(1)?, row.get(2)?, row.get::<_, String>(3)?, row.get::<_, Option<Vec<u8>>>(4)?))
        })?;
        let mut episodes = Vec::new();
        for row in rows {
            let (plan_index, session, replaced_infra_errors, result, trajectory) = row?;
            let result = read_result(run, plan_index, &result)?;
            let trajectory = trajectory
                .map(|bytes| pb::Trajectory::decode(bytes.as_slice()))
                .transpose()
                .map_err(|error| StoreError::Corrupt(format!("{run} #{plan_index}: trajectory: {error}")))?;
            episodes.push(StoredEpisode { plan_index, session, replaced_infra_errors, result, trajectory });
        }
        Ok(episodes)
    }

    /// The run's recorded results in plan order (infrastructure errors
    /// included, episodes never played left out).
    pub fn results(&self, run: &RunId) -> Result<Vec<EpisodeResult>, StoreError> {
        self.summary(run)?;
        let mut query = self.conn.prepare("SELECT plan_index, result FROM episodes WHERE run_id = ?1 ORDER BY plan_index")?;
        let rows = query.query_map([&run.0], |row| Ok((row.get::<_, usize>(0)?, row.get::<_, String>(1)?)))?;
        let mut results = Vec::new();
        for row in rows {
            let (index, json) = row?;
            results.push(read_result(run, index, &json)?);
        }
        Ok(results)
    }

    /// One run and how far it got.
    pub fn summary(&self, run: &RunId) -> Result<RunSummary, StoreError> {
        self.summaries(Some(&run.0))?.pop().ok_or_else(|| self.unknown(run))
    }

    /// Every run in the store, oldest first.
    pub fn runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        self.summaries(None)
    }

    fn summaries(&self, only: Option<&str>) -> Result<Vec<RunSummary>, StoreError> {
        let mut query = self.conn.prepare(
            "SELECT r.id, r.description, r.created_at, r.planned, r.sessions, r.lease_timeout_ms,
                    COALESCE(SUM(e.passed = 1), 0), COALESCE(SUM(e.passed = 0), 0), COALESCE(SUM(e.infra_error IS NOT NULL), 0)
             FROM runs r LEFT JOIN episodes e ON e.run_id = r.id
             WHERE ?1 IS NULL OR r.id = ?1
             GROUP BY r.seq ORDER BY r.seq",
        )?;
        let rows = query.query_map([only], |row| {
            Ok(RunSummary {
                id: RunId(row.get(0)?),
                description: row.get(1)?,
                created_at: row.get(2)?,
                planned: row.get(3)?,
                sessions: row.get(4)?,
                lease_timeout: row.get::<_, Option<u64>>(5)?.map(Duration::from_millis),
                passed: row.get(6)?,
                failed: row.get(7)?,
                infra_errors: row.get(8)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Writes the run's recorded episodes as JSON lines, in plan order, and
    /// returns how many. Each line is
    /// `{"run", "plan_index", "session", "planned": {…}, "result": EpisodeResult, "trajectory": {…} | null}`,
    /// the trajectory as [`pb::Trajectory::to_json`] writes it.
    pub fn export_jsonl(&self, run: &RunId, mut writer: impl Write) -> Result<u64, StoreError> {
        let plan = self.plan(run)?;
        let mut count = 0;
        for episode in self.episodes(run)? {
            let planned = plan
                .get(episode.plan_index)
                .ok_or_else(|| StoreError::Corrupt(format!("{run} #{}: recorded but not planned", episode.plan_index)))?;
            let request = &planned.request;
            let line = serde_json::json!({
                "run": run,
                "plan_index": episode.plan_index,
                "session": episode.session,
                "replaced_infra_errors": episode.replaced_infra_errors,
                "planned": {
                    "agent": planned.agent,
                    "task_id": request.task_id,
                    "seed": request.seed,
                    "trial": request.trial,
                    "epsilon": request.epsilon,
                    "fault_profile": planned.fault_profile,
                    "lambda": finite(planned.lambda),
                    "only": request.fault_profile.as_ref().map(|p| p.only.clone()).unwrap_or_default(),
                    "fault_delivery": request.fault_delivery().as_str_name(),
                    "time_scale": request.time_scale,
                },
                "result": episode.result,
                "trajectory": episode.trajectory.as_ref().map(pb::Trajectory::to_json),
            });
            serde_json::to_writer(&mut writer, &line)?;
            writer.write_all(b"\n")?;
            count += 1;
        }
        writer.flush()?;
        Ok(count)
    }

    fn unknown(&self, run: &RunId) -> StoreError {
        StoreError::UnknownRun { run: run.0.clone(), path: self.path.clone() }
    }
}

/// NaN (an unknown λ) as NULL, which is what SQLite and JSON make of it anyway.
fn finite(value: f64) -> Option<f64> {
    (!value.is_nan()).then_some(value)
}

fn read_result(run: &RunId, index: usize, json: &str) -> Result<EpisodeResult, StoreError> {
    serde_json::from_str(json).map_err(|error| StoreError::Corrupt(format!("{run} #{index}: result: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::FaultCounts;

    fn plan(n: u32) -> Vec<PlannedEpisode> {
        (0..n)
            .map(|trial| PlannedEpisode {
                agent: if trial % 2 == 0 { "reference" } else { "reference-no-retry" }.into(),
                request: pb::CreateEpisodeRequest {
                    task_id: "travel/cheapest-flight/001".into(),
                    seed: 7,
                    trial,
                    epsilon: 0.1,
                    fault_profile: Some(pb::FaultProfile { name: "0.2".into(), only: vec!["SoftRateLimit".into()], ..Default::default() }),
                    time_scale: Some(0.0),
                    ..Default::default()
                },
                fault_profile: if trial == 3 { "custom".into() } else { "0.2".into() },
                lambda: if trial == 3 { f64::NAN } else { 0.2 },
            })
            .collect()
    }

    fn result(planned: &PlannedEpisode, outcome: Outcome) -> EpisodeResult {
        EpisodeResult {
            task_id: planned.request.task_id.clone(),
            domain: Some(toolenv_domains::Domain::Travel),
            agent: planned.agent.clone(),
            epsilon: planned.request.epsilon,
            lambda: planned.lambda,
            fault_profile: planned.fault_profile.clone(),
            trial: planned.request.trial,
            seed: planned.request.seed,
            outcome,
            fault_stats: FaultCounts { injected: 2, encountered: 1, recovered: 1, extra_calls: 1 },
            faults_by_kind: Default::default(),
            tokens: None,
            cost_usd: None,
            calls: 3,
            feasible: None,
            llm: None,
            mas_faults: Vec::new(),
        }
    }

    fn trajectory(planned: &PlannedEpisode, passed: bool) -> pb::Trajectory {
        pb::Trajectory {
            task_id: planned.request.task_id.clone(),
            trial: planned.request.trial,
            epsilon: planned.request.epsilon,
            description: "Find the cheapest flight.".into(),
            verdict: Some(pb::Verdict { passed, final_state_hash: "abc".into(), ..Default::default() }),
            ..Default::default()
        }
    }

    #[test]
    fn a_run_records_its_episodes_and_reopens_intact() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let plan = plan(5);
        let (run, planned_back) = {
            let store = Store::open(&path).unwrap();
            let run = store.create_run(&plan, "toolenv run --grid paper").unwrap();
            assert_eq!(run.as_str(), "run-0001");
            assert_eq!(store.create_run(&plan[..1], "second").unwrap().as_str(), "run-0002", "ids are sequential");
            assert_eq!(store.pending(&run).unwrap().len(), 5);
            // Out of order, as concurrent episodes finish.
            for (index, outcome) in [(3, Outcome::Failed), (0, Outcome::Passed), (4, Outcome::InfraError("server gone".into()))] {
                let passed = outcome == Outcome::Passed;
                let traj = (!matches!(outcome, Outcome::InfraError(_))).then(|| trajectory(&plan[index], passed));
                store.record(&run, index, &result(&plan[index], outcome), traj.as_ref()).unwrap();
            }
            let pending: Vec<usize> = store.pending(&run).unwrap().into_iter().map(|(i, _)| i).collect();
            assert_eq!(pending, [1, 2, 4], "an infrastructure error is not finished");
            let planned_back = store.plan(&run).unwrap();
            (run, planned_back)
        };
        // The plan round-trips, NaN λ included.
        assert_eq!(planned_back.len(), plan.len());
        for (back, planned) in planned_back.iter().zip(&plan) {
            assert_eq!((&back.agent, &back.request, &back.fault_profile), (&planned.agent, &planned.request, &planned.fault_profile));
            assert!(back.lambda == planned.lambda || (back.lambda.is_nan() && planned.lambda.is_nan()));
        }

        let store = Store::open(&path).unwrap();
        let results = store.results(&run).unwrap();
        assert_eq!(results.iter().map(|r| r.trial).collect::<Vec<_>>(), [0, 3, 4], "plan order");
        assert!(results[1].lambda.is_nan(), "an unknown λ reads back as NaN");
        assert_eq!(results[0], result(&plan[0], Outcome::Passed));
        let episodes = store.episodes(&run).unwrap();
        assert_eq!(episodes[0].trajectory, Some(trajectory(&plan[0], true)));
        assert_eq!(episodes[2].trajectory, None);
        let summary = store.summary(&run).unwrap();
        assert_eq!((summary.planned, summary.passed, summary.failed, summary.infra_errors), (5, 1, 1, 1));
        assert_eq!((summary.pending(), summary.status(), summary.sessions), (3, "incomplete", 1));
        assert_eq!(store.runs().unwrap().iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["run-0001", "run-0002"]);

        // Resume: a new session plays the pending episodes; the infrastructure error is replaced.
        assert_eq!(store.begin_session(&run).unwrap(), 2);
        for index in [1, 2, 4] {
            store.record(&run, index, &result(&plan[index], Outcome::Passed), Some(&trajectory(&plan[index], true))).unwrap();
        }
        assert!(store.pending(&run).unwrap().is_empty());
        let episodes = store.episodes(&run).unwrap();
        let sessions: Vec<(usize, u32, u32)> = episodes.iter().map(|e| (e.plan_index, e.session, e.replaced_infra_errors)).collect();
        assert_eq!(sessions, [(0, 1, 0), (1, 2, 0), (2, 2, 0), (3, 1, 0), (4, 2, 1)]);
        assert_eq!(store.summary(&run).unwrap().status(), "complete");
    }

    #[test]
    fn rows_written_by_the_previous_version_still_load_and_report_the_same() {
        use crate::metrics::record::tests::STORED;
        let store = Store::open_in_memory().unwrap();
        let plan = plan(2);
        let run = store.create_run(&plan, "old").unwrap();
        // Two rows as the version that kept domain and fault kinds as strings
        // wrote them: a failed episode with its trajectory, and an
        // infrastructure error without one.
        let old_trajectory = trajectory(&plan[1], false).encode_to_vec();
        store
            .conn
            .execute(
                "INSERT INTO episodes (run_id, plan_index, session, passed, infra_error, result, trajectory)
                 VALUES (?1, 1, 1, 0, NULL, ?2, ?3), (?1, 0, 1, NULL, 'server gone', ?4, NULL)",
                params![run.as_str(), STORED[0], old_trajectory, STORED[1]],
            )
            .unwrap();
        let results = store.results(&run).unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!((results[1].domain, results[1].calls), (Some(toolenv_domains::Domain::Travel), 7));
        assert_eq!(results[1].faults_by_kind[&toolenv_domains::chaos::FaultKind::SoftRateLimit].hits, 2);
        let report = crate::report::render(&results, 2, crate::metrics::InfraConvention::CountAsFailure, Default::default()).unwrap();
        assert!(report.contains("infrastructure errors: 1 (counted as failures)"), "{report}");
        assert!(report.contains("fault recovery: 3 injected, 2 encountered, 1 recovered (50.0%)"), "{report}");
        let summary =
            serde_json::to_value(crate::report::summary(&results, 2, 2, Default::default(), Default::default()).unwrap()).unwrap();
        let by_kind = summary["agents"][1]["recovery"]["by_kind"].as_object().unwrap();
        assert_eq!(by_kind.keys().collect::<Vec<_>>(), ["CascadingFailure", "SoftRateLimit", "TransientTimeout"]);
        assert_eq!(summary["agents"][1]["by_domain"][0]["label"], "travel");
        // The export writes the stored results back byte for byte.
        let mut out = Vec::new();
        store.export_jsonl(&run, &mut out).unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        for (line, stored) in lines.iter().zip([STORED[1], STORED[0]]) {
            assert_eq!(line["result"], serde_json::from_str::<serde_json::Value>(stored).unwrap());
        }
        assert_eq!(lines[1]["trajectory"]["verdict"]["final_state_hash"], "abc");
    }

    #[test]
    fn a_finished_episode_is_never_recorded_twice() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("store.db")).unwrap();
        let plan = plan(2);
        let run = store.create_run(&plan, "").unwrap();
        store.record(&run, 0, &result(&plan[0], Outcome::Failed), Some(&trajectory(&plan[0], false))).unwrap();
        let again = store.record(&run, 0, &result(&plan[0], Outcome::Passed), Some(&trajectory(&plan[0], true)));
        assert!(matches!(again, Err(StoreError::AlreadyRecorded { index: 0, .. })), "{again:?}");
        let late_error = store.record(&run, 0, &result(&plan[0], Outcome::InfraError("late".into())), None);
        assert!(matches!(late_error, Err(StoreError::AlreadyRecorded { .. })));
        assert_eq!(store.results(&run).unwrap(), [result(&plan[0], Outcome::Failed)], "the first verdict stands");
        let outside = store.record(&run, 9, &result(&plan[0], Outcome::Passed), None);
        assert!(matches!(outside, Err(StoreError::NotInPlan { index: 9, .. })), "{outside:?}");
    }

    #[test]
    fn hosted_runs_keep_their_lease_timeout_and_version_1_stores_are_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let plan = plan(2);
        {
            let store = Store::open(&path).unwrap();
            store.create_run(&plan, "cli").unwrap();
            // Back to the version 1 schema, which had no hosted runs.
            store.conn.execute_batch("ALTER TABLE runs DROP COLUMN lease_timeout_ms; UPDATE schema_version SET version = 1;").unwrap();
        }
        let store = Store::open(&path).unwrap();
        let version: i64 = store.conn.query_row("SELECT version FROM schema_version", [], |row| row.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let hosted = store.host_run(&plan, "hosted", Duration::from_millis(1500)).unwrap();
        let runs = store.runs().unwrap();
        assert_eq!(runs.iter().map(|r| r.lease_timeout).collect::<Vec<_>>(), [None, Some(Duration::from_millis(1500))]);
        assert_eq!(store.agents(&hosted).unwrap(), ["reference", "reference-no-retry"]);
        let json = serde_json::to_value(&runs[1]).unwrap();
        assert_eq!(json["lease_timeout"], 1500);
    }

    #[test]
    fn unknown_runs_and_missing_stores_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.db");
        let missing = Store::open_existing(&path).unwrap_err();
        assert!(missing.to_string().contains("store.db"), "{missing}");
        let store = Store::open(&path).unwrap();
        let error = store.find_run("run-0042").unwrap_err();
        assert!(matches!(error, StoreError::UnknownRun { .. }));
        assert!(error.to_string().contains("run-0042") && error.to_string().contains("store.db"), "{error}");
        assert!(store.runs().unwrap().is_empty());
    }

    #[test]
    fn export_writes_one_parsable_line_per_recorded_episode() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("store.db")).unwrap();
        let plan = plan(4);
        let run = store.create_run(&plan, "").unwrap();
        store.record(&run, 2, &result(&plan[2], Outcome::Passed), Some(&trajectory(&plan[2], true))).unwrap();
        store.record(&run, 1, &result(&plan[1], Outcome::InfraError("unreachable".into())), None).unwrap();
        store.record(&run, 3, &result(&plan[3], Outcome::Failed), Some(&trajectory(&plan[3], false))).unwrap();
        let mut out = Vec::new();
        assert_eq!(store.export_jsonl(&run, &mut out).unwrap(), 3);
        let lines: Vec<serde_json::Value> = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.iter().map(|l| l["plan_index"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(lines[0]["run"], "run-0001");
        assert_eq!(lines[0]["trajectory"], serde_json::Value::Null);
        assert_eq!(lines[0]["result"]["outcome"]["infra_error"], "unreachable");
        assert_eq!(lines[1]["trajectory"]["verdict"]["passed"], true);
        assert_eq!(lines[1]["planned"]["agent"], "reference");
        assert_eq!(lines[1]["planned"]["only"][0], "SoftRateLimit");
        assert_eq!(lines[2]["planned"]["lambda"], serde_json::Value::Null, "NaN λ is null");
        let back: EpisodeResult = serde_json::from_value(lines[2]["result"].clone()).unwrap();
        assert!(back.lambda.is_nan());
    }
}
