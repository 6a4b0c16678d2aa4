//! The durable log of episodes, for replicas: how an episode was created
//! (its trajectory before any call), every call it accepted, appended before
//! the call's reply is sent, and its finish (its trajectory with the
//! verdict). A replica that does not hold an episode reads it back here and
//! rebuilds it by replay, or keeps it as finished. The log of an episode
//! finished longer ago than the idle timeout is dropped
//! ([`PgStore::prune_finished`]).
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
    /// order, up to the first gap); for a finished episode, its trajectory
    /// as finished, with the verdict.
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
    /// Whether the finish given ([`PgStore::log_finish`]) went in (false:
    /// the log holds a call or a finish in its place).
    pub finish_logged: bool,
}

/// How far an episode is in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogPosition {
    /// How many of its calls are logged.
    pub calls: usize,
    /// Its finish is logged.
    pub finished: bool,
}

impl LoggedEpisode {
    /// Whether it is finished (its trajectory has the verdict).
    pub fn finished(&self) -> bool {
        self.trajectory.verdict.is_some()
    }
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
        let appended = self.write(Append { episode_id, created: Some(created), first: 0, records: calls, leased: false, finished: None });
        async move { appended.await.map(drop) }
    }

    /// Logs an episode's finish: its trajectory with the verdict (without its
    /// calls, which the log holds), in the call log in the place of its next
    /// call (the log's key), so that no call goes in after it. It goes in
    /// only if no call or finish took that place first: resolves to whether
    /// it went in (false: the episode was finished before, or played further,
    /// on another replica or by a request that raced this one; read the log
    /// with [`PgStore::load_episode`]). Written by the log writer, as appends
    /// are.
    ///
    /// Its calls from `first` on, not logged yet, go in with it (the log
    /// holds the calls before).
    pub fn log_finish(
        &self,
        episode_id: String,
        finished: &pb::Trajectory,
        first: usize,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send + 'static {
        let records = finished.calls.get(first..).unwrap_or_default().iter().map(|call| call.encode_to_vec()).collect();
        let finish = pb::Trajectory { calls: Vec::new(), ..finished.clone() }.encode_to_vec();
        let first = u32::try_from(first).unwrap_or(u32::MAX);
        let append = Append { episode_id, created: None, first, records, leased: false, finished: Some(finish) };
        let appended = self.write(append);
        async move { appended.await.map(|appended| appended.finish_logged) }
    }

    /// Drops the log of every episode finished longer than `ago` ago (a
    /// server forgets a finished episode after its idle timeout); returns
    /// how many episodes it dropped.
    pub fn prune_finished(&self, ago: std::time::Duration) -> impl Future<Output = Result<u64, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        let ago_ms = i64::try_from(ago.as_millis()).unwrap_or(i64::MAX);
        self.background(async move {
            let client = client(&pool, &url).await?;
            let row = client
                .query_one(
                    "WITH gone AS (
                         DELETE FROM call_log WHERE finished_at < now() - $1::BIGINT * INTERVAL '1 millisecond' RETURNING episode_id),
                     -- Arrays, not joins: the planner could walk the whole log's index to join.
                     calls AS (DELETE FROM call_log WHERE episode_id = ANY (ARRAY(SELECT episode_id FROM gone)) AND finished_at IS NULL),
                     episodes AS (DELETE FROM episode_log WHERE episode_id = ANY (ARRAY(SELECT episode_id FROM gone)))
                     SELECT COUNT(*) FROM gone",
                    &[&ago_ms],
                )
                .await
                .map_err(client.errors(&url))?;
            Ok(row.get::<_, i64>(0).max(0) as u64)
        })
    }

    /// Every logged episode not finished, with the index of its last logged
    /// call (-1: none yet): what a replica watches to find episodes
    /// abandoned.
    pub fn unfinished_heads(&self) -> impl Future<Output = Result<Vec<(String, i32)>, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.background(async move {
            let client = client(&pool, &url).await?;
            let rows = client
                .query(
                    "SELECT e.episode_id, COALESCE(c.call_index, -1) FROM episode_log e
                     LEFT JOIN LATERAL (SELECT call_index, finished_at FROM call_log
                                        WHERE episode_id = e.episode_id ORDER BY call_index DESC LIMIT 1) c ON true
                     WHERE c.finished_at IS NULL",
                    &[],
                )
                .await
                .map_err(client.errors(&url))?;
            Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
        })
    }

    /// Drops the log of each episode whose last logged call is still the one
    /// given (-1: none), that is, whose log has not grown since it was read;
    /// returns how many episodes it dropped.
    pub fn drop_unchanged(&self, heads: Vec<(String, i32)>) -> impl Future<Output = Result<u64, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        let (ids, heads): (Vec<String>, Vec<i32>) = heads.into_iter().unzip();
        self.background(async move {
            let client = client(&pool, &url).await?;
            let row = client
                .query_one(
                    "WITH gone AS (
                         DELETE FROM episode_log e USING unnest($1::TEXT[], $2::INTEGER[]) AS h (episode_id, head)
                         WHERE e.episode_id = h.episode_id
                           AND COALESCE((SELECT MAX(c.call_index) FROM call_log c WHERE c.episode_id = h.episode_id), -1) = h.head
                         RETURNING e.episode_id),
                     calls AS (DELETE FROM call_log WHERE episode_id = ANY (ARRAY(SELECT episode_id FROM gone)))
                     SELECT COUNT(*) FROM gone",
                    &[&ids, &heads],
                )
                .await
                .map_err(client.errors(&url))?;
            Ok(row.get::<_, i64>(0).max(0) as u64)
        })
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
        self.write(Append { episode_id, created: None, first, records, leased, finished: None })
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

    /// How far the episode is in the log (`None`: not logged).
    pub fn log_position(&self, episode_id: String) -> impl Future<Output = Result<Option<LogPosition>, StoreError>> + Send + 'static {
        let (pool, url) = (self.pool.clone(), self.url.clone());
        self.background(async move {
            let client = client(&pool, &url).await?;
            let row = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM episode_log WHERE episode_id = $1),
                            COUNT(*) FILTER (WHERE finished_at IS NULL), COUNT(*) FILTER (WHERE finished_at IS NOT NULL) > 0
                     FROM call_log WHERE episode_id = $1",
                    &[&episode_id],
                )
                .await
                .map_err(client.errors(&url))?;
            let (calls, finished) = (row.get::<_, i64>(1).max(0) as usize, row.get(2));
            Ok(row.get::<_, bool>(0).then_some(LogPosition { calls, finished }))
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
            let lease = match (row.get::<_, Option<String>>(3), row.get::<_, Option<i64>>(4)) {
                (Some(run), Some(plan_index)) => Some((run, index(plan_index)?)),
                _ => None,
            };
            let (in_band, time_scale) = (row.get(1), row.get(2));
            let mut trajectory = pb::Trajectory::decode(row.get::<_, &[u8]>(0)).map_err(|e| corrupt("header", e))?;
            let calls = client
                .query(
                    "SELECT call_index, record, finished_at IS NOT NULL FROM call_log WHERE episode_id = $1 ORDER BY call_index",
                    &[&episode_id],
                )
                .await
                .map_err(client.errors(&url))?;
            for call in &calls {
                // Only the calls in order: a gap ends what was acknowledged.
                if call.get::<_, i32>(0) as usize != trajectory.calls.len() {
                    break;
                }
                let record = call.get::<_, &[u8]>(1);
                if call.get::<_, bool>(2) {
                    // The finish, in the place of the next call: the trajectory as
                    // its replica answered it (without the agent's keys).
                    let mut finished = pb::Trajectory::decode(record).map_err(|e| corrupt("finish", e))?;
                    finished.calls = std::mem::take(&mut trajectory.calls);
                    finished.calls.iter_mut().for_each(|call| call.idempotency_key.clear());
                    return Ok(Some(LoggedEpisode { trajectory: finished, in_band, time_scale, lease }));
                }
                trajectory.calls.push(pb::ToolCallRecord::decode(record).map_err(|e| corrupt("call", e))?);
            }
            Ok(Some(LoggedEpisode { trajectory, in_band, time_scale, lease }))
        })
    }
}

/// What an episode has waiting for the log writer: its creation, calls, or
/// both; or its finish.
#[derive(Debug)]
pub(super) struct Append {
    episode_id: String,
    created: Option<Created>,
    first: u32,
    records: Vec<Vec<u8>>,
    /// Renew the lease of the plan entry it plays.
    leased: bool,
    /// Its finish: its trajectory with the verdict, encoded, in the place
    /// after its records.
    finished: Option<Vec<u8>>,
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

/// One statement for a batch: the new episodes inserted, the calls and
/// finishes inserted (a finish is a row in the place of the episode's next
/// call; a place taken before is left as it was), the leases of the leased
/// episodes renewed; per append, in order, how many of its calls went in,
/// whether its finish went in and whether its episode holds a lease.
async fn commit(pool: &deadpool_postgres::Pool, url: &str, batch: &[&Append]) -> Result<Vec<Appended>, StoreError> {
    let client = client(pool, url).await?;
    let (mut ids, mut indices, mut records, mut finishes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
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
        let rows = append.records.iter().map(|record| (record, false)).chain(append.finished.iter().map(|finish| (finish, true)));
        for (i, (record, finish)) in rows.enumerate() {
            ids.push(append.episode_id.as_str());
            indices.push(i32::try_from(append.first as usize + i).unwrap_or(i32::MAX));
            records.push(record.as_slice());
            finishes.push(finish);
        }
    }
    let leased: Vec<&str> = batch.iter().filter(|a| a.leased).map(|a| a.episode_id.as_str()).collect();
    // No subquery per episode: what went in comes back as rows (a call's or
    // a finish's index, or NULL for a renewed lease), counted here.
    let statement = client
        .prepare_cached(
            "WITH created AS (
                 INSERT INTO episode_log (episode_id, header, in_band, time_scale, run_id, plan_index)
                 SELECT * FROM unnest($1::TEXT[], $2::BYTEA[], $3::BOOLEAN[], $4::DOUBLE PRECISION[], $5::TEXT[], $6::BIGINT[])
                 ON CONFLICT (episode_id) DO NOTHING),
             logged AS (
                 INSERT INTO call_log (episode_id, call_index, record, finished_at)
                 SELECT c.episode_id, c.call_index, c.record, CASE WHEN c.finish THEN now() END
                 FROM unnest($7::TEXT[], $8::INTEGER[], $9::BYTEA[], $11::BOOLEAN[]) AS c (episode_id, call_index, record, finish)
                 ON CONFLICT DO NOTHING RETURNING call_index, episode_id, finished_at IS NOT NULL AS finish),
             renewed AS (
                 UPDATE planned_episodes p SET leased_until = now() + r.lease_timeout_ms * INTERVAL '1 millisecond'
                 FROM leases l, runs r
                 WHERE l.episode_id = ANY($10::TEXT[]) AND p.run_id = l.run_id AND p.plan_index = l.plan_index
                       AND r.id = l.run_id
                 RETURNING l.episode_id)
             SELECT call_index, episode_id, finish FROM logged UNION ALL SELECT NULL, episode_id, false FROM renewed",
        )
        .await
        .map_err(client.errors(url))?;
    let rows = client
        .query(
            &statement,
            &[&created, &headers, &in_band, &time_scales, &runs, &plan_indices, &ids, &indices, &records, &leased, &finishes],
        )
        .await
        .map_err(client.errors(url))?;
    // Each row goes to its episode's append (an episode's appends in one
    // batch, if ever more than one, hold different call indices).
    let mut appends: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, append) in batch.iter().enumerate() {
        appends.entry(append.episode_id.as_str()).or_default().push(i);
    }
    let mut appended = vec![Appended { calls: 0, lease_held: false, finish_logged: false }; batch.len()];
    for row in &rows {
        let (call, id, finish) = (row.get::<_, Option<i32>>(0), row.get::<_, &str>(1), row.get::<_, bool>(2));
        for &i in appends.get(id).into_iter().flatten() {
            let (first, calls) = (batch[i].first as usize, batch[i].records.len());
            match call.map(|call| call as usize) {
                Some(call) if finish => appended[i].finish_logged |= batch[i].finished.is_some() && call == first + calls,
                Some(call) if (first..first + calls).contains(&call) => appended[i].calls += 1,
                Some(_) => {}
                None => appended[i].lease_held = true,
            }
        }
    }
    Ok(appended)
}
