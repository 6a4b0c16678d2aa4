//! The durable log of live episodes, for replicas: how an episode was
//! created (its trajectory before any call) and every call it accepted,
//! appended before the call's reply is sent. A replica that does not hold an
//! episode reads it back here and rebuilds it by replay.
//!
//! These are asynchronous (a server awaits them on its request path); each
//! runs on the store's runtime.

use std::collections::HashMap;
use std::future::Future;

use prost::Message as _;
use toolenv::pb;

use super::{PgStore, big, client, index};
use crate::StoreError;

/// An episode as the log holds it.
#[derive(Debug, Clone)]
pub struct LoggedEpisode {
    /// Its trajectory: the header as created, with every logged call (in
    /// order, up to the first gap).
    pub trajectory: pb::Trajectory,
    /// Faults arrive in band.
    pub in_band: bool,
    /// Its time scale.
    pub time_scale: f64,
    /// For a hosted run's episode: the run and plan index it plays.
    pub lease: Option<(String, usize)>,
}

/// What [`PgStore::append_calls`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    /// How many of the given calls were appended.
    pub calls: usize,
    /// Whether the episode still holds a lease of a hosted run (renewed
    /// now); false for an episode of no run, or one whose entry another
    /// worker claimed after its lease expired.
    pub lease_held: bool,
}

impl PgStore {
    /// Runs `future` on the store's runtime; the returned future (awaitable
    /// from any runtime) resolves to its output.
    pub fn background<T: Send + 'static>(
        &self,
        future: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static {
        let (handle, url) = (self.handle.spawn(future), self.url.clone());
        async move { handle.await.unwrap_or_else(|_| Err(StoreError::Postgres { url, message: "the store's task stopped".into() })) }
    }

    /// Logs a new episode: its trajectory before any call, how its faults
    /// arrive, its time scale and, for a hosted run's episode, its plan
    /// entry; with `calls` (a fork's, encoded) logged from index 0. Written
    /// by the log writer, in the commit of whatever else is waiting
    /// ([`PgStore::append_calls`]).
    pub fn log_episode(
        &self,
        episode_id: String,
        header: &pb::Trajectory,
        in_band: bool,
        time_scale: f64,
        lease: Option<(String, usize)>,
        calls: Vec<Vec<u8>>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        let created = Created { header: header.encode_to_vec(), in_band, time_scale, lease };
        let appended = self.write(Append { episode_id, created: Some(created), first: 0, records: calls, leased: false });
        async move { appended.await.map(drop) }
    }

    /// Appends calls `first`, `first + 1`, … (their wire records, encoded)
    /// to an episode's log and, for an episode that plays a hosted run's
    /// plan entry (`leased`), renews its lease if it still holds it. A call
    /// index logged before is left as it was: fewer appended than given
    /// means another replica played the episode further (this copy is
    /// stale).
    ///
    /// Group commit: what every episode has waiting at that moment goes to
    /// the database together, in one statement (one transaction, one
    /// flush), written by the store's single log writer; each resolves when
    /// the commit that holds it is done. A failed commit fails all of them
    /// (their outcome unknown: the commit may have happened).
    pub fn append_calls(
        &self,
        episode_id: String,
        first: u32,
        records: Vec<Vec<u8>>,
        leased: bool,
    ) -> impl Future<Output = Result<Appended, StoreError>> + Send + 'static {
        self.write(Append { episode_id, created: None, first, records, leased })
    }

    /// Hands `append` to the log writer; resolves with its commit.
    fn write(&self, append: Append) -> impl Future<Output = Result<Appended, StoreError>> + Send + 'static {
        let (done, appended) = tokio::sync::oneshot::channel();
        let sent = self.log_writer.send((append, done));
        let url = self.url.clone();
        async move {
            let stopped = || StoreError::Postgres { url: url.clone(), message: "the store's log writer stopped".into() };
            sent.map_err(|_| stopped())?;
            appended.await.unwrap_or_else(|_| Err(stopped()))
        }
    }

    /// How many calls of the episode are in the log (`None`: not logged).
    pub fn logged_calls(&self, episode_id: String) -> impl Future<Output = Result<Option<usize>, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.background(async move {
            let client = client(&pool, &url).await?;
            let row = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM episode_log WHERE episode_id = $1),
                            (SELECT COUNT(*) FROM call_log WHERE episode_id = $1)",
                    &[&episode_id],
                )
                .await
                .map_err(client.errors(&url))?;
            Ok(row.get::<_, bool>(0).then(|| row.get::<_, i64>(1).max(0) as usize))
        })
    }

    /// An episode as logged, or `None` when no replica logged it.
    pub fn load_episode(&self, episode_id: String) -> impl Future<Output = Result<Option<LoggedEpisode>, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.background(async move {
            let client = client(&pool, &url).await?;
            let Some(row) = client
                .query_opt("SELECT header, in_band, time_scale, run_id, plan_index FROM episode_log WHERE episode_id = $1", &[&episode_id])
                .await
                .map_err(client.errors(&url))?
            else {
                return Ok(None);
            };
            let corrupt = |what: &str, error: prost::DecodeError| StoreError::Corrupt(format!("episode {episode_id}: {what}: {error}"));
            let mut trajectory = pb::Trajectory::decode(row.get::<_, &[u8]>(0)).map_err(|e| corrupt("header", e))?;
            let lease = match (row.get::<_, Option<String>>(3), row.get::<_, Option<i64>>(4)) {
                (Some(run), Some(plan_index)) => Some((run, index(plan_index)?)),
                _ => None,
            };
            let calls = client
                .query("SELECT call_index, record FROM call_log WHERE episode_id = $1 ORDER BY call_index", &[&episode_id])
                .await
                .map_err(client.errors(&url))?;
            for call in &calls {
                // Only the calls in order: a gap ends what was acknowledged.
                if call.get::<_, i32>(0) as usize != trajectory.calls.len() {
                    break;
                }
                trajectory.calls.push(pb::ToolCallRecord::decode(call.get::<_, &[u8]>(1)).map_err(|e| corrupt("call", e))?);
            }
            Ok(Some(LoggedEpisode { trajectory, in_band: row.get(1), time_scale: row.get(2), lease }))
        })
    }
}

/// What an episode has waiting for the log writer: its creation, calls, or both.
#[derive(Debug)]
pub(super) struct Append {
    episode_id: String,
    created: Option<Created>,
    first: u32,
    records: Vec<Vec<u8>>,
    /// Renew the lease of the plan entry it plays.
    leased: bool,
}

/// An append and where its outcome goes.
pub(super) type Waiting = (Append, tokio::sync::oneshot::Sender<Result<Appended, StoreError>>);

/// A new episode's row of `episode_log`.
#[derive(Debug)]
struct Created {
    header: Vec<u8>,
    in_band: bool,
    time_scale: f64,
    lease: Option<(String, usize)>,
}

/// Most appends one commit holds.
const MAX_BATCH: usize = 256;

/// The store's log writer: takes every append waiting, commits them in one
/// statement, answers each, and again, until the store is dropped.
pub(super) async fn write_log(pool: deadpool_postgres::Pool, url: String, mut waiting: tokio::sync::mpsc::UnboundedReceiver<Waiting>) {
    let mut batch = Vec::new();
    while waiting.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let appends: Vec<&Append> = batch.iter().map(|(append, _)| append).collect();
        let answers = commit(&pool, &url, &appends).await;
        for (i, (_, done)) in batch.drain(..).enumerate() {
            let answer = match &answers {
                Ok(appended) => Ok(appended[i]),
                // Every append of the batch is told, each with its own copy of the error.
                Err(StoreError::Postgres { message, .. }) => Err(StoreError::Postgres { url: url.clone(), message: message.clone() }),
                Err(other) => Err(StoreError::Postgres { url: url.clone(), message: other.to_string() }),
            };
            let _ = done.send(answer);
        }
    }
}

/// One statement for a batch: the new episodes inserted, the calls inserted
/// (a call index logged before is left as it was), the leases of the leased
/// episodes renewed; per append, in order, how many of its calls went in
/// and whether its episode holds a lease.
async fn commit(pool: &deadpool_postgres::Pool, url: &str, batch: &[&Append]) -> Result<Vec<Appended>, StoreError> {
    let client = client(pool, url).await?;
    let (mut ids, mut indices, mut records) = (Vec::new(), Vec::new(), Vec::new());
    let (mut created, mut headers, mut in_band, mut time_scales, mut runs, mut plan_indices) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for append in batch {
        if let Some(new) = &append.created {
            created.push(append.episode_id.as_str());
            headers.push(new.header.as_slice());
            in_band.push(new.in_band);
            time_scales.push(new.time_scale);
            runs.push(new.lease.as_ref().map(|(run, _)| run.as_str()));
            plan_indices.push(new.lease.as_ref().map(|&(_, index)| big(index)));
        }
        for (i, record) in append.records.iter().enumerate() {
            ids.push(append.episode_id.as_str());
            indices.push(i32::try_from(append.first as usize + i).unwrap_or(i32::MAX));
            records.push(record.as_slice());
        }
    }
    let leased: Vec<&str> = batch.iter().filter(|a| a.leased).map(|a| a.episode_id.as_str()).collect();
    // No subquery per episode: what went in comes back as rows (a call's
    // index, or NULL for a renewed lease), counted here.
    let statement = client
        .prepare_cached(
            "WITH created AS (
                 INSERT INTO episode_log (episode_id, header, in_band, time_scale, run_id, plan_index)
                 SELECT * FROM unnest($1::TEXT[], $2::BYTEA[], $3::BOOLEAN[], $4::DOUBLE PRECISION[], $5::TEXT[], $6::BIGINT[])
                 ON CONFLICT (episode_id) DO NOTHING),
             logged AS (
                 INSERT INTO call_log (episode_id, call_index, record)
                 SELECT * FROM unnest($7::TEXT[], $8::INTEGER[], $9::BYTEA[])
                 ON CONFLICT DO NOTHING RETURNING call_index, episode_id),
             renewed AS (
                 UPDATE planned_episodes p SET leased_until = now() + r.lease_timeout_ms * INTERVAL '1 millisecond'
                 FROM leases l, runs r
                 WHERE l.episode_id = ANY($10::TEXT[]) AND p.run_id = l.run_id AND p.plan_index = l.plan_index
                       AND r.id = l.run_id
                 RETURNING l.episode_id)
             SELECT call_index, episode_id FROM logged UNION ALL SELECT NULL, episode_id FROM renewed",
        )
        .await
        .map_err(client.errors(url))?;
    let rows = client
        .query(&statement, &[&created, &headers, &in_band, &time_scales, &runs, &plan_indices, &ids, &indices, &records, &leased])
        .await;
    let rows = rows.map_err(client.errors(url))?;
    // Each row goes to its episode's append (an episode's appends in one
    // batch, if ever more than one, hold different call indices).
    let mut appends: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, append) in batch.iter().enumerate() {
        appends.entry(append.episode_id.as_str()).or_default().push(i);
    }
    let mut appended = vec![Appended { calls: 0, lease_held: false }; batch.len()];
    for row in &rows {
        let (call, id) = (row.get::<_, Option<i32>>(0), row.get::<_, &str>(1));
        for &i in appends.get(id).into_iter().flatten() {
            match call {
                Some(call) if (batch[i].first as usize..batch[i].first as usize + batch[i].records.len()).contains(&(call as usize)) => {
                    appended[i].calls += 1;
                }
                Some(_) => {}
                None => appended[i].lease_held = true,
            }
        }
    }
    Ok(appended)
}
