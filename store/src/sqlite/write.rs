//! Writing to a SQLite store: new runs and their plans (played by the CLI,
//! or hosted for workers with a lease timeout), sessions, and episode
//! results.

use std::time::Duration;

use prost::Message as _;
use rusqlite::{OptionalExtension as _, TransactionBehavior, params};
use toolenv::pb;

use super::Store;
use toolenv_runs::{
    PlannedEpisode,
    metrics::{EpisodeOutcome, EpisodeResult},
};

use crate::{RunId, StoreError, finite};

impl Store {
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

    /// Counts a new session of the run (a resume) and returns its number.
    pub fn begin_session(&self, run: &RunId) -> Result<u32, StoreError> {
        let session: Option<u32> = self
            .conn
            .query_row("UPDATE runs SET sessions = sessions + 1 WHERE id = ?1 RETURNING sessions", [&run.0], |row| row.get(0))
            .optional()?;
        session.ok_or_else(|| self.unknown(run))
    }

    /// Records how an episode ended, in one statement committed at once.
    ///
    /// Replaces an infrastructure error recorded before; refuses
    /// ([`StoreError::AlreadyRecorded`]) an episode that already has a verdict.
    pub fn record(&self, run: &RunId, index: usize, result: &EpisodeResult, trajectory: Option<&pb::Trajectory>) -> Result<(), StoreError> {
        let (passed, infra_error) = match &result.outcome {
            EpisodeOutcome::Passed => (Some(true), None),
            EpisodeOutcome::Failed => (Some(false), None),
            EpisodeOutcome::InfraError(reason) => (None, Some(reason.as_str())),
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
}
