//! Reading a PostgreSQL store back: the same reads as the SQLite file's,
//! in the same order, so reports from either are byte for byte the same.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use prost::Message as _;
use tokio_postgres::Row;
use toolenv::pb;

use super::{PgStore, client, index};
use toolenv_runs::PlannedEpisode;

use crate::{RunId, RunSummary, StoreError, StoredEpisode, export, read_result};

impl PgStore {
    /// Rows of one query with its parameters (owned strings).
    fn rows(&self, sql: &'static str, run: Option<String>) -> Result<Vec<Row>, StoreError> {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.block(async move {
            let client = client(&pool, &url).await?;
            client.query(sql, &[&run]).await.map_err(client.errors(&url))
        })
    }

    /// Looks a run up by the id a user typed.
    pub fn find_run(&self, id: &str) -> Result<RunId, StoreError> {
        let rows = self.rows("SELECT id FROM runs WHERE id = $1", Some(id.to_owned()))?;
        rows.first()
            .map(|row| RunId(row.get(0)))
            .ok_or_else(|| StoreError::UnknownRun { run: id.to_owned(), path: PathBuf::from(&self.url) })
    }

    /// The run's whole plan, in order.
    pub fn plan(&self, run: &RunId) -> Result<Vec<PlannedEpisode>, StoreError> {
        self.planned(run, false).map(|rows| rows.into_iter().map(|(_, planned)| planned).collect())
    }

    /// The run's agent labels, in plan order.
    pub fn agents(&self, run: &RunId) -> Result<Vec<String>, StoreError> {
        let rows =
            self.rows("SELECT agent FROM planned_episodes WHERE run_id = $1 GROUP BY agent ORDER BY MIN(plan_index)", Some(run.0.clone()))?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// The distinct task ids of the run's plan, sorted (byte order, as SQLite sorts).
    pub fn task_ids(&self, run: &RunId) -> Result<Vec<String>, StoreError> {
        let rows =
            self.rows("SELECT DISTINCT task_id COLLATE \"C\" FROM planned_episodes WHERE run_id = $1 ORDER BY 1", Some(run.0.clone()))?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// The planned episodes without a verdict yet, in plan order.
    pub fn pending(&self, run: &RunId) -> Result<Vec<(usize, PlannedEpisode)>, StoreError> {
        self.planned(run, true)
    }

    fn planned(&self, run: &RunId, pending_only: bool) -> Result<Vec<(usize, PlannedEpisode)>, StoreError> {
        self.summary(run)?;
        let sql = if pending_only {
            "SELECT p.plan_index, p.agent, p.fault_profile, p.lambda, p.request FROM planned_episodes p
             LEFT JOIN episodes e ON e.run_id = p.run_id AND e.plan_index = p.plan_index
             WHERE p.run_id = $1 AND (e.plan_index IS NULL OR e.infra_error IS NOT NULL) ORDER BY p.plan_index"
        } else {
            "SELECT p.plan_index, p.agent, p.fault_profile, p.lambda, p.request FROM planned_episodes p
             WHERE p.run_id = $1 ORDER BY p.plan_index"
        };
        let rows = self.rows(sql, Some(run.0.clone()))?;
        rows.iter()
            .map(|row| {
                let index = index(row.get(0))?;
                let request = pb::CreateEpisodeRequest::decode(row.get::<_, &[u8]>(4))
                    .map_err(|error| StoreError::Corrupt(format!("{run} #{index}: planned request: {error}")))?;
                let lambda: Option<f64> = row.get(3);
                Ok((index, PlannedEpisode { agent: row.get(1), request, fault_profile: row.get(2), lambda: lambda.unwrap_or(f64::NAN) }))
            })
            .collect()
    }

    /// The run's recorded episodes in plan order, trajectories included.
    pub fn episodes(&self, run: &RunId) -> Result<Vec<StoredEpisode>, StoreError> {
        self.summary(run)?;
        let rows = self.rows(
            "SELECT plan_index, session, replaced_infra_errors, result, trajectory FROM episodes WHERE run_id = $1 ORDER BY plan_index",
            Some(run.0.clone()),
        )?;
        rows.iter()
            .map(|row| {
                let plan_index = index(row.get(0))?;
                let result = read_result(run, plan_index, row.get(3))?;
                let trajectory = row
                    .get::<_, Option<&[u8]>>(4)
                    .map(pb::Trajectory::decode)
                    .transpose()
                    .map_err(|error| StoreError::Corrupt(format!("{run} #{plan_index}: trajectory: {error}")))?;
                let (session, replaced): (i32, i32) = (row.get(1), row.get(2));
                Ok(StoredEpisode {
                    plan_index,
                    session: session.max(0) as u32,
                    replaced_infra_errors: replaced.max(0) as u32,
                    result,
                    trajectory,
                })
            })
            .collect()
    }

    /// The run's recorded results in plan order.
    pub fn results(&self, run: &RunId) -> Result<Vec<toolenv_runs::metrics::EpisodeResult>, StoreError> {
        self.summary(run)?;
        let rows = self.rows("SELECT plan_index, result FROM episodes WHERE run_id = $1 ORDER BY plan_index", Some(run.0.clone()))?;
        rows.iter().map(|row| read_result(run, index(row.get(0))?, row.get(1))).collect()
    }

    /// One run and how far it got.
    pub fn summary(&self, run: &RunId) -> Result<RunSummary, StoreError> {
        self.summaries(Some(run.0.clone()))?.pop().ok_or_else(|| self.unknown(run))
    }

    /// Every run in the store, oldest first.
    pub fn runs(&self) -> Result<Vec<RunSummary>, StoreError> {
        self.summaries(None)
    }

    fn summaries(&self, only: Option<String>) -> Result<Vec<RunSummary>, StoreError> {
        let rows = self.rows(
            "SELECT r.id, r.description, r.created_at, r.planned, r.sessions, r.lease_timeout_ms,
                    COUNT(*) FILTER (WHERE e.passed), COUNT(*) FILTER (WHERE NOT e.passed),
                    COUNT(*) FILTER (WHERE e.infra_error IS NOT NULL)
             FROM runs r LEFT JOIN episodes e ON e.run_id = r.id
             WHERE $1::TEXT IS NULL OR r.id = $1
             GROUP BY r.seq ORDER BY r.seq",
            only,
        )?;
        let count = |row: &Row, i: usize| row.get::<_, i64>(i).max(0) as u64;
        Ok(rows
            .iter()
            .map(|row| RunSummary {
                id: RunId(row.get(0)),
                description: row.get(1),
                created_at: row.get(2),
                planned: count(row, 3),
                sessions: row.get::<_, i32>(4).max(0) as u32,
                lease_timeout: row.get::<_, Option<i64>>(5).map(|ms| Duration::from_millis(ms.max(0) as u64)),
                passed: count(row, 6),
                failed: count(row, 7),
                infra_errors: count(row, 8),
            })
            .collect())
    }

    /// Writes the run's recorded episodes as JSON lines (as
    /// [`crate::Store::export_jsonl`] does) and returns how many.
    pub fn export_jsonl(&self, run: &RunId, writer: impl Write) -> Result<u64, StoreError> {
        let plan = self.plan(run)?;
        export::write_jsonl(run, &plan, self.episodes(run)?, writer)
    }
}
