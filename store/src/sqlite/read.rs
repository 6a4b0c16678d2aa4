//! Reading a SQLite store back: runs and their summaries, plans and what is
//! pending of them, recorded episodes and results, and the export.

use std::io::Write;
use std::time::Duration;

use prost::Message as _;
use rusqlite::OptionalExtension as _;
use toolenv::pb;

use super::Store;
use toolenv_runs::{PlannedEpisode, metrics::EpisodeResult};

use crate::{RunId, RunSummary, StoreError, StoredEpisode, export, read_result};

impl Store {
    /// Looks a run up by the id a user typed.
    pub fn find_run(&self, id: &str) -> Result<RunId, StoreError> {
        let found: Option<String> = self.conn.query_row("SELECT id FROM runs WHERE id = ?1", [id], |row| row.get(0)).optional()?;
        found.map(RunId).ok_or_else(|| StoreError::UnknownRun { run: id.to_owned(), path: self.path.clone() })
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
    pub fn export_jsonl(&self, run: &RunId, writer: impl Write) -> Result<u64, StoreError> {
        let plan = self.plan(run)?;
        export::write_jsonl(run, &plan, self.episodes(run)?, writer)
    }
}
