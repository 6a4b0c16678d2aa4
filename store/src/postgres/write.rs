//! Writing to a PostgreSQL store: new runs and their plans, sessions,
//! episode results (at most one verdict per plan entry: the table's key),
//! and whole runs copied from another store.

use std::time::Duration;

use prost::Message as _;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use toolenv::pb;

use super::{PgStore, big, client};
use toolenv_runs::{
    PlannedEpisode,
    metrics::{EpisodeOutcome, EpisodeResult},
};

use crate::{RunId, RunSummary, StoreError, StoredEpisode, finite};

/// A planned episode as its row's values.
struct PlanRow {
    agent: String,
    task_id: String,
    epsilon: f64,
    trial: i64,
    fault_profile: String,
    lambda: Option<f64>,
    request: Vec<u8>,
}

impl PlanRow {
    fn of(planned: &PlannedEpisode) -> Self {
        let request = &planned.request;
        Self {
            agent: planned.agent.clone(),
            task_id: request.task_id.clone(),
            epsilon: request.epsilon,
            trial: i64::from(request.trial),
            fault_profile: planned.fault_profile.clone(),
            lambda: finite(planned.lambda),
            request: request.encode_to_vec(),
        }
    }
}

/// A recorded episode as its row's values.
struct EpisodeRow {
    plan_index: i64,
    session: i32,
    replaced: i32,
    passed: Option<bool>,
    infra_error: Option<String>,
    result: String,
    trajectory: Option<Vec<u8>>,
}

impl EpisodeRow {
    fn of(plan_index: usize, result: &EpisodeResult, trajectory: Option<&pb::Trajectory>) -> Result<Self, StoreError> {
        let (passed, infra_error) = match &result.outcome {
            EpisodeOutcome::Passed => (Some(true), None),
            EpisodeOutcome::Failed => (Some(false), None),
            EpisodeOutcome::InfraError(reason) => (None, Some(reason.clone())),
        };
        Ok(Self {
            plan_index: big(plan_index),
            session: 0,
            replaced: 0,
            passed,
            infra_error,
            result: serde_json::to_string(result)?,
            trajectory: trajectory.map(|t| t.encode_to_vec()),
        })
    }
}

/// What a new run starts with, besides its plan.
struct NewRun {
    description: String,
    lease_ms: Option<i64>,
    /// Copied runs keep their creation time and session count.
    created_at: Option<String>,
    sessions: i32,
}

impl PgStore {
    /// Records a new run and its plan, and returns its id (the next `run-NNNN`).
    pub fn create_run(&self, plan: &[PlannedEpisode], description: &str) -> Result<RunId, StoreError> {
        self.insert_run(plan, NewRun { description: description.into(), lease_ms: None, created_at: None, sessions: 1 }, Vec::new())
    }

    /// Records a new run that servers host for workers, whose leases expire
    /// after `lease_timeout` without a call.
    pub fn host_run(&self, plan: &[PlannedEpisode], description: &str, lease_timeout: Duration) -> Result<RunId, StoreError> {
        let lease_ms = Some(i64::try_from(lease_timeout.as_millis()).unwrap_or(i64::MAX));
        self.insert_run(plan, NewRun { description: description.into(), lease_ms, created_at: None, sessions: 1 }, Vec::new())
    }

    /// Copies a run read from another store (its summary, plan and recorded
    /// episodes) as a new run of this one, and returns its new id.
    pub fn import_run(&self, summary: &RunSummary, plan: &[PlannedEpisode], episodes: &[StoredEpisode]) -> Result<RunId, StoreError> {
        let lease_ms = summary.lease_timeout.map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let new = NewRun {
            description: summary.description.clone(),
            lease_ms,
            created_at: Some(summary.created_at.clone()),
            sessions: i32::try_from(summary.sessions).unwrap_or(i32::MAX),
        };
        let rows = episodes
            .iter()
            .map(|e| {
                let mut row = EpisodeRow::of(e.plan_index, &e.result, e.trajectory.as_ref())?;
                row.session = i32::try_from(e.session).unwrap_or(i32::MAX);
                row.replaced = i32::try_from(e.replaced_infra_errors).unwrap_or(i32::MAX);
                Ok(row)
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        self.insert_run(plan, new, rows)
    }

    fn insert_run(&self, plan: &[PlannedEpisode], new: NewRun, episodes: Vec<EpisodeRow>) -> Result<RunId, StoreError> {
        let rows: Vec<PlanRow> = plan.iter().map(PlanRow::of).collect();
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.block(async move {
            let url = url.as_str();
            let mut client = client(&pool, url).await?;
            let pg = client.errors(url);
            let tx = client.transaction().await.map_err(&pg)?;
            // Run ids are sequential: one new run at a time.
            tx.batch_execute("LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE").await.map_err(&pg)?;
            let seq: i64 = tx.query_one("SELECT COALESCE(MAX(seq), 0) + 1 FROM runs", &[]).await.map_err(&pg)?.get(0);
            let id = format!("run-{seq:04}");
            tx.execute(
                "INSERT INTO runs (seq, id, description, planned, lease_timeout_ms, sessions, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')))",
                &[&seq, &id, &new.description, &big(rows.len()), &new.lease_ms, &new.sessions, &new.created_at],
            )
            .await
            .map_err(&pg)?;
            // Many rows per statement: a large plan is a few round trips.
            for (chunk_number, chunk) in rows.chunks(500).enumerate() {
                let mut sql = String::from(
                    "INSERT INTO planned_episodes (run_id, plan_index, agent, task_id, epsilon, trial, fault_profile, lambda, request) VALUES ",
                );
                let indices: Vec<i64> = (0..chunk.len()).map(|i| big(chunk_number * 500 + i)).collect();
                let mut values: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(chunk.len() * 8 + 1);
                values.push(&id);
                for (i, row) in chunk.iter().enumerate() {
                    let n = values.len();
                    if i > 0 {
                        sql.push(',');
                    }
                    sql.push_str(&format!("($1, ${}, ${}, ${}, ${}, ${}, ${}, ${}, ${})", n + 1, n + 2, n + 3, n + 4, n + 5, n + 6, n + 7, n + 8));
                    values.extend([
                        &indices[i] as &(dyn ToSql + Sync),
                        &row.agent,
                        &row.task_id,
                        &row.epsilon,
                        &row.trial,
                        &row.fault_profile,
                        &row.lambda,
                        &row.request,
                    ]);
                }
                tx.execute(sql.as_str(), &values).await.map_err(&pg)?;
            }
            for row in &episodes {
                tx.execute(
                    "INSERT INTO episodes (run_id, plan_index, session, passed, infra_error, replaced_infra_errors, result, trajectory)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    &[&id, &row.plan_index, &row.session, &row.passed, &row.infra_error, &row.replaced, &row.result, &row.trajectory],
                )
                .await
                .map_err(&pg)?;
            }
            tx.execute(
                "UPDATE planned_episodes p SET done = true FROM episodes e
                 WHERE p.run_id = $1 AND e.run_id = p.run_id AND e.plan_index = p.plan_index AND e.infra_error IS NULL",
                &[&id],
            )
            .await
            .map_err(&pg)?;
            tx.commit().await.map_err(&pg)?;
            Ok(RunId(id))
        })
    }

    /// Counts a new session of the run (a resume) and returns its number.
    pub fn begin_session(&self, run: &RunId) -> Result<u32, StoreError> {
        let (pool, url, id) = (self.pool.clone(), self.url.clone(), run.0.clone());
        let session = self.block(async move {
            let client = client(&pool, &url).await?;
            let row = client
                .query_opt("UPDATE runs SET sessions = sessions + 1 WHERE id = $1 RETURNING sessions", &[&id])
                .await
                .map_err(client.errors(&url))?;
            Ok(row.map(|row| row.get::<_, i32>(0)))
        })?;
        session.map(|s| s.max(0) as u32).ok_or_else(|| self.unknown(run))
    }

    /// Records how an episode ended, in one statement committed at once.
    ///
    /// Replaces an infrastructure error recorded before; refuses
    /// ([`StoreError::AlreadyRecorded`]) an episode that already has a verdict.
    pub fn record(&self, run: &RunId, index: usize, result: &EpisodeResult, trajectory: Option<&pb::Trajectory>) -> Result<(), StoreError> {
        let row = EpisodeRow::of(index, result, trajectory)?;
        let (pool, url, id) = (self.pool.clone(), self.url.clone(), run.0.clone());
        let changed = self.block(async move { record(&pool, &url, &id, row).await })?;
        match changed {
            Some(0) => Err(StoreError::AlreadyRecorded { run: run.clone(), index }),
            Some(_) => Ok(()),
            None => Err(StoreError::NotInPlan { run: run.clone(), index }),
        }
    }
}

/// The upsert of a result: rows changed, or `None` when the plan has no such entry.
async fn record(pool: &deadpool_postgres::Pool, url: &str, run: &str, row: EpisodeRow) -> Result<Option<u64>, StoreError> {
    let client = client(pool, url).await?;
    let changed = client
        .query_one(
            "WITH recorded AS (
                 INSERT INTO episodes (run_id, plan_index, session, passed, infra_error, result, trajectory)
                 VALUES ($1, $2, COALESCE((SELECT sessions FROM runs WHERE id = $1), 1), $3, $4, $5, $6)
                 ON CONFLICT (run_id, plan_index) DO UPDATE SET
                     session = excluded.session, passed = excluded.passed, infra_error = excluded.infra_error,
                     result = excluded.result, trajectory = excluded.trajectory,
                     replaced_infra_errors = episodes.replaced_infra_errors + 1
                 WHERE episodes.infra_error IS NOT NULL
                 RETURNING passed),
             done AS (
                 UPDATE planned_episodes SET done = true
                 WHERE run_id = $1 AND plan_index = $2 AND EXISTS (SELECT 1 FROM recorded WHERE passed IS NOT NULL))
             SELECT COUNT(*) FROM recorded",
            &[&run, &row.plan_index, &row.passed, &row.infra_error, &row.result, &row.trajectory],
        )
        .await;
    match changed {
        Ok(row) => Ok(Some(row.get::<_, i64>(0).max(0) as u64)),
        Err(error) if error.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) => Ok(None),
        Err(error) => Err(client.errors(url)(error)),
    }
}
