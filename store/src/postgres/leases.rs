//! Leases of hosted runs shared by replicas: a planned episode without a
//! verdict is claimed with `SELECT … FOR UPDATE SKIP LOCKED`, so two replicas
//! never hand out the same entry at once; a lease lives while calls renew it
//! (each logged call does) and is claimed again once it is older than the
//! run's lease timeout.

use std::future::Future;
use std::time::Duration;

use super::{PgStore, big, client, index};
use crate::StoreError;

/// What a claim found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// This plan entry, now leased to the claimer.
    Slot(usize),
    /// Every entry without a verdict is leased; the soonest lease expires after this.
    Busy(Duration),
    /// Every entry has a verdict.
    Done,
}

/// Claims the first claimable entry: no verdict (`NOT done`, read from the
/// partial index of pending entries), and no lease or an expired one. The
/// entry's own row is locked and its lease set in one statement: a claimer
/// that meets an entry another just claimed rechecks it and moves on.
const CLAIM: &str = "
WITH claimed AS (
    UPDATE planned_episodes SET leased_until = now() + $3 * INTERVAL '1 millisecond'
    WHERE run_id = $1 AND plan_index = (
        SELECT plan_index FROM planned_episodes
        WHERE run_id = $1 AND NOT done AND ($2 = '' OR agent = $2)
          AND (leased_until IS NULL OR leased_until <= now())
        ORDER BY plan_index LIMIT 1
        FOR UPDATE SKIP LOCKED)
    RETURNING plan_index)
INSERT INTO leases (run_id, plan_index, episode_id)
SELECT $1, plan_index, '' FROM claimed
ON CONFLICT (run_id, plan_index) DO UPDATE SET episode_id = ''
RETURNING plan_index";

/// Without a claimable entry: how many lack a verdict, when the soonest
/// lease expires (ms), and how many are not leased.
const STATUS: &str = "
SELECT COUNT(*), MIN(EXTRACT(EPOCH FROM (leased_until - now())) * 1000)::DOUBLE PRECISION,
       COUNT(*) FILTER (WHERE leased_until IS NULL OR leased_until <= now())
FROM planned_episodes
WHERE run_id = $1 AND NOT done AND ($2 = '' OR agent = $2)";

impl PgStore {
    /// Claims a planned episode of `run` for `agent` (any when empty) whose
    /// lease expires after `lease_timeout` without a call.
    pub fn claim(
        &self,
        run: String,
        agent: String,
        lease_timeout: Duration,
    ) -> impl Future<Output = Result<Claim, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        let timeout_ms = lease_timeout.as_millis() as f64;
        self.background(async move {
            let client = client(&pool, &url).await?;
            // A claim that lost a race to another replica finds nothing; try again.
            for _ in 0..8 {
                let claimed = client.query_opt(CLAIM, &[&run, &agent, &timeout_ms]).await.map_err(client.errors(&url))?;
                if let Some(row) = claimed {
                    return Ok(Claim::Slot(index(row.get(0))?));
                }
                let status = client.query_one(STATUS, &[&run, &agent]).await.map_err(client.errors(&url))?;
                let (pending, soonest, unleased): (i64, Option<f64>, i64) = (status.get(0), status.get(1), status.get(2));
                if pending == 0 {
                    return Ok(Claim::Done);
                }
                if unleased == 0
                    && let Some(ms) = soonest.filter(|&ms| ms > 0.0)
                {
                    return Ok(Claim::Busy(Duration::from_millis(ms.ceil() as u64)));
                }
            }
            Ok(Claim::Busy(Duration::from_millis(20)))
        })
    }

    /// Notes the episode a claimed entry is played by (renewing its lease).
    pub fn lease_to(
        &self,
        run: String,
        plan_index: usize,
        episode_id: String,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.background(async move {
            let client = client(&pool, &url).await?;
            client
                .execute(
                    "WITH noted AS (UPDATE leases SET episode_id = $3 WHERE run_id = $1 AND plan_index = $2)
                     UPDATE planned_episodes p SET leased_until = now() + r.lease_timeout_ms * INTERVAL '1 millisecond'
                     FROM runs r WHERE p.run_id = $1 AND p.plan_index = $2 AND r.id = $1",
                    &[&run, &big(plan_index), &episode_id],
                )
                .await
                .map_err(client.errors(&url))?;
            Ok(())
        })
    }

    /// Whether the episode still holds the lease of its plan entry: no other
    /// worker claimed the entry since it was handed to the episode.
    pub fn holds_lease(&self, episode_id: String) -> impl Future<Output = Result<bool, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.background(async move {
            let client = client(&pool, &url).await?;
            let row = client
                .query_one("SELECT EXISTS (SELECT 1 FROM leases WHERE episode_id = $1)", &[&episode_id])
                .await
                .map_err(client.errors(&url))?;
            Ok(row.get(0))
        })
    }

    /// Gives a claimed entry back (its episode could not be created).
    pub fn release(&self, run: String, plan_index: usize) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.background(async move {
            let client = client(&pool, &url).await?;
            client
                .execute(
                    "WITH released AS (DELETE FROM leases WHERE run_id = $1 AND plan_index = $2)
                     UPDATE planned_episodes SET leased_until = NULL WHERE run_id = $1 AND plan_index = $2",
                    &[&run, &big(plan_index)],
                )
                .await
                .map_err(client.errors(&url))?;
            Ok(())
        })
    }
}
