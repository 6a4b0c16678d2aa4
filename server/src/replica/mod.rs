//! Replicas: several servers on one PostgreSQL store form one service.
//!
//! An episode is a pure function of how it was created and the calls it
//! accepted, so its durability is its call log, not a copy of its state.
//! With a PostgreSQL store, a server logs each episode it creates (its
//! trajectory before any call) and **every call an episode accepts is
//! appended to the log before the call's reply is sent**: a reply a client
//! received is in the log (a call whose append failed is answered
//! UNAVAILABLE, and the episode is dropped here so that its next request
//! rebuilds it from the log, without that call). A server asked about an
//! episode it does not hold reads the log and rebuilds the episode by
//! replay (`toolenv_runs::fork`, each replayed call checked byte for byte against
//! its record), then answers; it continues byte-identically.
//!
//! An episode's finish is logged too (its trajectory with the verdict,
//! before the verdict is sent; the first finish logged stands), and from
//! then on the log takes no call of it: every replica answers for it as
//! finished, as one process would, whether it rebuilds it or holds a copy
//! from before the finish. The log of an episode finished longer ago than
//! the idle timeout is dropped, as a single process forgets the episode.
//!
//! Calls of one episode are logged in order: a per-episode lock (held only
//! by the episode's own requests, across the append) lets a call's reply go
//! only once its record, and every record before it, is in the log. Not
//! logged: the real time between calls (at time scale 0, which hosted runs
//! use, only declared waits count, and those are in the records).
//!
//! Without a PostgreSQL store nothing here runs: the single-process path
//! has no new per-call cost.

mod runs;

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use prometheus_client::metrics::counter::Counter;
use prost::Message as _;
use toolenv::pb;
use toolenv_store::PgStore;

use crate::Durability;
use crate::error::Error;
use crate::registry::{Registry, Session};
use crate::runs::{LeaseTag, RunHost};

/// The copy of an episode a request played on, and how many of its calls
/// the log must hold before the request's reply goes.
#[derive(Debug, Default)]
pub(crate) struct PlayedCopy {
    /// The copy's log gate (`None`: an episode this server does not log).
    pub(crate) gate: Option<Arc<tokio::sync::Mutex<usize>>>,
    pub(crate) calls: usize,
}

impl PlayedCopy {
    /// What the request played on `session`, read just after it played.
    pub(crate) fn on(session: &Session) -> Self {
        Self { gate: session.logged.clone(), calls: session.episode.trajectory().calls.len() }
    }
}

/// What [`Replica::sync`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Synced {
    /// Every call of the episode is in the log.
    Logged,
    /// Every call of the episode was in the log already: nothing was
    /// written (and no lease renewed or checked).
    Unchanged,
    /// This copy was stale and is dropped: rebuild it and play the call again.
    Stale,
}

/// The durable log of a replica's episodes, over the shared store.
#[derive(Debug)]
pub(crate) struct Replica {
    store: Arc<PgStore>,
    durability: Durability,
    /// Episodes this server rebuilt from the log (`toolenv_episodes_rebuilt_total`).
    pub(crate) rebuilt: Counter,
}

/// A call as the log keeps it: its wire record, with the idempotency key as
/// the agent sent it on the call that sent it first (a rebuilt episode must
/// recognise the agent's retries; trajectories record only the index).
fn logged_record(episode: &toolenv_core::Episode, mut record: pb::ToolCallRecord) -> Vec<u8> {
    if let Some(key) = record.idempotency_key_call.filter(|&first| first == record.index).and_then(|first| episode.idempotency_key(first)) {
        key.clone_into(&mut record.idempotency_key);
    }
    record.encode_to_vec()
}

impl Replica {
    pub(crate) fn new(store: Arc<PgStore>, durability: Durability) -> Self {
        Self { store, durability, rebuilt: Counter::default() }
    }

    /// Logs an episode just created here, before its id is sent; for a
    /// hosted run's episode, with the plan entry it plays.
    pub(crate) async fn created(&self, registry: &Registry, id: &str) -> Result<(), Error> {
        let (header, calls, in_band, time_scale, lease, logged) = registry.with(id, |session| {
            let logged = Arc::new(tokio::sync::Mutex::new(session.episode.trajectory().calls.len()));
            session.logged = Some(logged.clone());
            let lease = session.lease.as_ref().map(|tag| (tag.queue.run.to_string(), tag.index));
            // A fork starts with calls: they are logged with it.
            let mut header = session.trajectory();
            let calls = header.calls.drain(..).map(|c| logged_record(&session.episode, c)).collect::<Vec<_>>();
            (header, calls, session.in_band, session.time_scale, lease, logged)
        })?;
        let logged_calls = logged.lock().await;
        let result = self.store.log_episode(id.to_owned(), &header, in_band, time_scale, lease, calls).await;
        drop(logged_calls);
        result.map_err(|error| {
            registry.evict(id);
            Error::store(error)
        })
    }

    /// Appends the calls this copy of the episode accepted since its last
    /// append, before the caller replies: the reply is sent only once the log
    /// holds every call up to `played.calls` as this copy played them.
    ///
    /// A failed append drops the copy here (its next request rebuilds it from
    /// the log) and is UNAVAILABLE, saying that the call's outcome is unknown
    /// (its commit may have happened). A copy dropped or finished by another
    /// request before this one's calls were logged is UNAVAILABLE too: its
    /// reply was never confirmed (a retry with the same index is answered
    /// from the log). A copy found stale (another replica played it further)
    /// is [`Synced::Stale`], dropped here, to be rebuilt and the call played
    /// again.
    ///
    /// With [`Durability::Finish`], only an episode's first call is logged
    /// here (so that another replica can tell it was played); the rest are
    /// logged with its finish ([`Replica::finish`]).
    pub(crate) async fn sync(&self, registry: &Registry, id: &str, played: &PlayedCopy) -> Result<Synced, Error> {
        if self.durability == Durability::Finish && played.calls > 1 {
            return Ok(Synced::Logged);
        }
        self.append(registry, id, played).await
    }

    /// Before a hosted run's episode is judged: refuses it as expired if
    /// its entry went to another worker (its lease expired, on any replica),
    /// as one process would. With [`Durability::Finish`], its calls not
    /// logged yet are logged now, and the append tells (other episodes'
    /// calls go in with their finish); otherwise the log is asked.
    pub(crate) async fn seal_leased(&self, registry: &Registry, id: &str) -> Result<(), Error> {
        let Ok(Some((played, timeout))) =
            registry.with(id, |session| session.lease.as_ref().map(|lease| (PlayedCopy::on(session), lease.timeout())))
        else {
            return Ok(());
        };
        if self.durability == Durability::Finish && self.append(registry, id, &played).await? != Synced::Unchanged {
            return Ok(());
        }
        if self.store.holds_lease(id.to_owned()).await.map_err(Error::store)? {
            return Ok(());
        }
        Err(lease_lost(registry, id, timeout))
    }

    /// How many calls of this server's live copy of the episode are logged,
    /// held until its finish is logged ([`Replica::finish`]): a call of the
    /// copy sent meanwhile waits, and is logged with the finish if the
    /// finish holds it. `None` for an episode not live here.
    pub(crate) async fn hold_log(registry: &Registry, id: &str) -> Option<tokio::sync::OwnedMutexGuard<usize>> {
        let gate = registry.with(id, |session| session.logged.clone()).ok().flatten()?;
        Some(gate.lock_owned().await)
    }

    async fn append(&self, registry: &Registry, id: &str, played: &PlayedCopy) -> Result<Synced, Error> {
        let Some(gate) = &played.gate else { return Ok(Synced::Unchanged) };
        let mut logged = gate.lock().await;
        if *logged >= played.calls {
            return Ok(Synced::Unchanged);
        }
        let first = *logged;
        let this_copy = |session: &Session| session.logged.as_ref().is_some_and(|held| Arc::ptr_eq(held, gate));
        let pending = registry.with(id, |session| {
            this_copy(session).then(|| {
                let calls = &session.episode.trajectory().calls;
                let pending =
                    calls.get(first..).unwrap_or_default().iter().map(|c| logged_record(&session.episode, c.into())).collect::<Vec<_>>();
                (pending, session.lease.as_ref().map(LeaseTag::timeout))
            })
        });
        let Ok(Some((pending, lease_timeout))) = pending else {
            return Err(Error::Unavailable(format!(
                "episode {id}: the call was not confirmed by the durable log (this server's copy of the episode was dropped \
                 meanwhile); send it again with the same expected_index"
            )));
        };
        let count = pending.len();
        match self.store.append_calls(id.to_owned(), first as u32, pending, lease_timeout.is_some()).await {
            Ok(appended) if appended.calls == count => {
                *logged = first + count;
                match lease_timeout {
                    // A hosted episode whose entry another worker claimed (its lease
                    // expired, on any replica): refused from now on, as in one process.
                    Some(timeout) if !appended.lease_held => Err(lease_lost(registry, id, timeout)),
                    _ => Ok(Synced::Logged),
                }
            }
            Ok(_) => {
                registry.evict_if(id, this_copy);
                tracing::info!(episode_id = %id, "stale copy (another replica played the episode further); rebuilding it");
                Ok(Synced::Stale)
            }
            Err(error) => {
                registry.evict_if(id, this_copy);
                tracing::warn!(episode_id = %id, %error, "call not confirmed by the log; the episode is dropped here and rebuilt from the log");
                // The commit's outcome is unknown: the call may be in the log.
                Err(match Error::store(error) {
                    Error::Unavailable(why) => Error::Unavailable(format!(
                        "{why}; the call may have been logged all the same: send it again with the same expected_index, \
                         or read GetTrajectory before calling again"
                    )),
                    other => other,
                })
            }
        }
    }

    /// Logs the finish of an episode judged here, before its verdict goes:
    /// `finished` is its trajectory with the verdict. Returns the finish that
    /// stands: this one, or one logged before (the episode was finished on
    /// another replica, or by a request that raced this one), which this
    /// server then keeps instead of its own. `None` for a finish judged on a
    /// copy the log has moved past (another replica played a call
    /// meanwhile): it is not logged, and the copy is forgotten here, so that
    /// the finish is judged again on the episode rebuilt from the log.
    ///
    /// `logged` (from [`Replica::hold_log`]) says how many of its calls the
    /// log holds: the rest (with [`Durability::Finish`], all but the first)
    /// are logged with the finish, in the same write.
    pub(crate) async fn finish(
        &self,
        registry: &Registry,
        id: &str,
        finished: pb::Trajectory,
        logged: Option<tokio::sync::OwnedMutexGuard<usize>>,
    ) -> Result<Option<pb::Trajectory>, Error> {
        let calls = finished.calls.len();
        let first = logged.as_deref().map_or(calls, |&logged| logged.min(calls));
        if self.store.log_finish(id.to_owned(), &finished, first).await.map_err(Error::store)? {
            if let Some(mut logged) = logged {
                *logged = calls;
            }
            return Ok(Some(finished));
        }
        match self.store.load_episode(id.to_owned()).await.map_err(Error::store)? {
            Some(logged) if logged.finished() => {
                registry.keep_finished(id, &logged.trajectory);
                Ok(Some(logged.trajectory))
            }
            Some(_) => {
                registry.forget_finished(id);
                tracing::info!(episode_id = %id, "finish on a stale copy (another replica played the episode further); not logged");
                Ok(None)
            }
            // Its log was dropped (finished longer ago than the idle timeout):
            // this server's own finish is all there is.
            None => Ok(Some(finished)),
        }
    }

    /// Drops this server's live copy of the episode if the log holds more
    /// calls than it (another replica played it further) or holds its finish,
    /// so that [`Replica::ensure`] rebuilds it: before a trajectory is read,
    /// or a call whose index is ahead of the copy is played. Whether it
    /// dropped it.
    pub(crate) async fn drop_if_stale(&self, registry: &Registry, id: &str) -> Result<bool, Error> {
        let Ok(Some(held)) = registry.with(id, |session| session.logged.is_some().then(|| session.episode.trajectory().calls.len())) else {
            return Ok(false);
        };
        if let Some(logged) = self.store.log_position(id.to_owned()).await.map_err(Error::store)?
            && (logged.calls > held || logged.finished)
        {
            registry.evict(id);
            return Ok(true);
        }
        Ok(false)
    }

    /// Makes sure the episode is held here: one this server does not hold
    /// is rebuilt from the log by replay, or kept as finished if the log
    /// holds its finish. An id no replica logged is left for the caller to
    /// refuse (NOT_FOUND).
    pub(crate) async fn ensure(&self, registry: &Registry, runs: &RunHost, id: &str, config: &crate::Config) -> Result<(), Error> {
        if registry.holds(id) {
            return Ok(());
        }
        let Some(logged) = self.store.load_episode(id.to_owned()).await.map_err(Error::store)? else { return Ok(()) };
        let calls = logged.trajectory.calls.len();
        if logged.finished() {
            registry.keep_finished(id, &logged.trajectory);
            tracing::info!(episode_id = %id, calls, "finished episode read from the durable log");
            return Ok(());
        }
        // PlayedCopy on another replica, whose calls after the first were never logged.
        if self.durability == Durability::Finish && calls > 0 {
            return Err(Error::EpisodeLost(id.to_owned()));
        }
        let episode = toolenv_runs::fork::fork(&config.tasks, &logged.trajectory, calls, config.max_calls_per_episode)
            .map_err(|error| Error::Store(format!("episode {id} cannot be rebuilt from its log: {error}")))?;
        let lease = match logged.lease {
            Some((run, index)) => Some(LeaseTag { queue: runs.queue(&run).await?, index }),
            None => None,
        };
        let mut session = Session::new(episode, logged.in_band, logged.time_scale, lease);
        session.logged = Some(Arc::new(tokio::sync::Mutex::new(calls)));
        registry.insert_as(id, session)?;
        self.rebuilt.inc();
        tracing::info!(episode_id = %id, calls, "episode rebuilt from the durable log");
        Ok(())
    }
}

/// Revokes a hosted episode whose entry another worker claimed: it is
/// refused as expired from now on, as in one process.
fn lease_lost(registry: &Registry, id: &str, timeout: Duration) -> Error {
    registry.revoke(id, timeout);
    tracing::info!(episode_id = %id, "lease lost to another worker; the episode is revoked");
    Error::LeaseExpired(timeout.as_millis() as u64)
}

/// Drops, every so often until the replica is gone, the log of episodes
/// finished longer ago than `idle_timeout` (one process forgets a finished
/// episode then) and of unfinished episodes whose log has not grown for
/// `abandoned_after`, or the idle timeout if longer (a copy idle that long
/// is dropped from memory, and rebuilt from the log). Every replica does: a
/// deletion finds nothing to do when another replica just did it.
pub(crate) fn spawn_pruning(replica: Weak<Replica>, idle_timeout: Duration, abandoned_after: Duration) {
    let abandoned_after = abandoned_after.max(idle_timeout);
    let period = |of: Duration| (of / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    tokio::spawn(async move {
        let tick = period(idle_timeout);
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + tick, tick);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut heads = Heads::new();
        let mut watched: Option<Instant> = None;
        loop {
            ticker.tick().await;
            let Some(replica) = replica.upgrade() else { break };
            match replica.store.prune_finished(idle_timeout).await {
                Ok(0) => {}
                Ok(pruned) => tracing::info!(pruned, "dropped the durable log of episodes finished before the idle timeout"),
                Err(error) => tracing::warn!(%error, "could not drop the log of finished episodes; trying again later"),
            }
            if watched.is_some_and(|at| at.elapsed() < period(abandoned_after)) {
                continue;
            }
            watched = Some(Instant::now());
            match drop_abandoned(&replica.store, &mut heads, abandoned_after).await {
                Ok(0) => {}
                Ok(dropped) => {
                    tracing::info!(dropped, "dropped the durable log of episodes abandoned unfinished (no call for --abandoned-after-secs)")
                }
                Err(error) => tracing::warn!(%error, "could not drop the log of abandoned episodes; trying again later"),
            }
        }
    });
}

/// Each unfinished episode's last logged call (-1: none), and since when
/// this server has seen it so.
type Heads = HashMap<String, (i32, Instant)>;

/// Reads the last logged call of every unfinished episode, and drops the
/// log of those whose last call has not changed for `after`: no call was
/// logged for them in that time, on any replica. An episode first seen
/// (or seen by a server just started) counts from then.
async fn drop_abandoned(store: &PgStore, heads: &mut Heads, after: Duration) -> Result<u64, toolenv_store::StoreError> {
    let now = Instant::now();
    let logged = store.unfinished_heads().await?;
    *heads = logged
        .into_iter()
        .map(|(id, head)| {
            let since = heads.get(&id).filter(|&&(was, _)| was == head).map_or(now, |&(_, since)| since);
            (id, (head, since))
        })
        .collect();
    let abandoned: Vec<(String, i32)> =
        heads.extract_if(|_, (_, since)| now.duration_since(*since) >= after).map(|(id, (head, _))| (id, head)).collect();
    if abandoned.is_empty() {
        return Ok(0);
    }
    store.drop_unchanged(abandoned).await
}
