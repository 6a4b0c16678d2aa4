//! Leases of hosted runs shared by replicas: a planned episode without a
//! verdict is claimed with `SELECT … FOR UPDATE SKIP LOCKED`, so two replicas
//! never hand out the same entry at once; a lease lives while calls renew it
//! (each logged call does) and is claimed again once it is older than the
//! run's lease timeout.

use std::future::Future;
use std::time::Duration;

use super::{PgStore, big, client, index, pg};
use crate::store::StoreError;

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
/// partial index of pending entries), and no lease or an expired one.
const CLAIM: &str = "
WITH pick AS (
    SELECT p.plan_index FROM planned_episodes p
    WHERE p.run_id = $1 AND NOT p.done AND ($2 = '' OR p.agent = $2)
      AND NOT EXISTS (SELECT 1 FROM leases l
                      WHERE l.run_id = p.run_id AND l.plan_index = p.plan_index
                        AND l.renewed_at > now() - $3 * INTERVAL '1 millisecond')
    ORDER BY p.plan_index LIMIT 1
    FOR UPDATE OF p SKIP LOCKED)
INSERT INTO leases (run_id, plan_index, episode_id, renewed_at)
SELECT $1, plan_index, '', now() FROM pick
ON CONFLICT (run_id, plan_index) DO UPDATE SET episode_id = '', renewed_at = now()
    WHERE leases.renewed_at <= now() - $3 * INTERVAL '1 millisecond'
RETURNING plan_index";

/// Without a claimable entry: how many lack a verdict, and when the soonest lease expires (ms).
const STATUS: &str = "
SELECT COUNT(*), MIN(EXTRACT(EPOCH FROM (l.renewed_at + $3 * INTERVAL '1 millisecond' - now())) * 1000)::DOUBLE PRECISION,
       COUNT(*) FILTER (WHERE l.plan_index IS NULL)
FROM planned_episodes p
LEFT JOIN leases l ON l.run_id = p.run_id AND l.plan_index = p.plan_index
WHERE p.run_id = $1 AND NOT p.done AND ($2 = '' OR p.agent = $2)";

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
                let claimed = client.query_opt(CLAIM, &[&run, &agent, &timeout_ms]).await.map_err(pg(&url))?;
                if let Some(row) = claimed {
                    return Ok(Claim::Slot(index(row.get(0))?));
                }
                let status = client.query_one(STATUS, &[&run, &agent, &timeout_ms]).await.map_err(pg(&url))?;
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
                    "UPDATE leases SET episode_id = $3, renewed_at = now() WHERE run_id = $1 AND plan_index = $2",
                    &[&run, &big(plan_index), &episode_id],
                )
                .await
                .map_err(pg(&url))?;
            Ok(())
        })
    }

    /// Gives a claimed entry back (its episode could not be created).
    pub fn release(&self, run: String, plan_index: usize) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.background(async move {
            let client = client(&pool, &url).await?;
            client
                .execute("DELETE FROM leases WHERE run_id = $1 AND plan_index = $2", &[&run, &big(plan_index)])
                .await
                .map_err(pg(&url))?;
            Ok(())
        })
    }

    /// Leases of `run` now held (not expired), for progress reports.
    pub fn leased_count(&self, run: String, lease_timeout: Duration) -> impl Future<Output = Result<u64, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        let timeout_ms = lease_timeout.as_millis() as f64;
        self.background(async move {
            let client = client(&pool, &url).await?;
            let row = client
                .query_one(
                    "SELECT COUNT(*) FROM leases l WHERE l.run_id = $1 AND l.renewed_at > now() - $2 * INTERVAL '1 millisecond'
                       AND NOT EXISTS (SELECT 1 FROM episodes e
                                       WHERE e.run_id = l.run_id AND e.plan_index = l.plan_index AND e.infra_error IS NULL)",
                    &[&run, &timeout_ms],
                )
                .await
                .map_err(pg(&url))?;
            Ok(row.get::<_, i64>(0).max(0) as u64)
        })
    }
}
