//! Runs hosted as work queues: the `toolenv.v1.Runs` service.
//!
//! A hosted run is a plan stored in the server's SQLite store. Each planned
//! episode is a slot: waiting, leased to a worker, or done. `NextEpisode`
//! hands out the first waiting slot in plan order (or one whose lease
//! expired) by creating its episode in the registry with a [`LeaseTag`];
//! `FinishEpisode` of such an episode records its result and trajectory in
//! the store, one committed statement, and marks the slot done.
//!
//! A lease lives as long as its episode is used: every call renews it. One
//! untouched for the run's lease timeout expires lazily, when a worker asks
//! for an episode: the old episode is revoked (its worker's next request is
//! refused with LEASE_EXPIRED) and the slot goes to the asking worker. The
//! store is the truth: a server restarted on the same file resumes every run
//! with its finished episodes kept and its unfinished ones waiting again.
//!
//! The store is synchronous; it is used on blocking threads only, behind a
//! mutex. The slots of a run sit behind their own mutex, never held across an
//! `.await` or while an episode is locked.
//!
//! Here: the runs a server hosts over its store ([`RunHost`]: loading,
//! recording) and the wire form of a run's progress; [`leases`] holds the
//! queue's bookkeeping, [`service`] the thin gRPC handlers.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use toolenv::pb;
use toolenv_store::{AnyStore, RunSummary, StoreError};

use crate::error::Error;
use crate::limits;

mod leases;
mod service;

pub(crate) use leases::LeaseTag;
pub(crate) use leases::Queue;
pub use service::RunsService;

/// The lease timeout of a run that does not choose one.
pub const DEFAULT_LEASE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// A run as the wire shows it: its stored summary with the live counts of
/// waiting and leased episodes.
fn run_message(summary: &RunSummary, waiting: u64, leased: u64, agents: Vec<String>) -> pb::Run {
    pb::Run {
        run_id: summary.id.to_string(),
        description: summary.description.clone(),
        created_at: summary.created_at.clone(),
        planned: summary.planned,
        passed: summary.passed,
        failed: summary.failed,
        waiting,
        leased,
        complete: summary.pending() == 0,
        lease_timeout_ms: summary.lease_timeout.map_or(0, |d| d.as_millis() as u64),
        agents,
        suite: String::new(),
        generator_version: 0,
    }
}

/// A run message with its suite and generator version, read from its task ids.
fn with_suite<'a>(mut run: pb::Run, task_ids: impl IntoIterator<Item = &'a str>) -> pb::Run {
    (run.suite, run.generator_version) = toolenv_domains::generate::suite_of(task_ids);
    run
}

/// The hosted runs of a server, over its store.
#[derive(Debug)]
pub(crate) struct RunHost {
    store: Arc<std::sync::Mutex<AnyStore>>,
    /// Runs loaded so far, by id.
    queues: Mutex<HashMap<String, Arc<Queue>>>,
    /// The store is shared by replicas: a run's progress is the store's,
    /// not what this server's queue saw.
    shared: bool,
    /// Leased episodes finished while the store could not record them, by
    /// id, with when: the finish was answered UNAVAILABLE, and a repeat of
    /// it records them (or finds another worker's verdict standing).
    unrecorded: Mutex<HashMap<String, (Unrecorded, Instant)>>,
}

/// The lease of a finish the store missed, taken by the repeat that records
/// it; repeats sent at once wait on the lock for that one's outcome.
type Unrecorded = Arc<tokio::sync::Mutex<Option<LeaseTag>>>;

/// How long a finish that could not be recorded waits for its repeat.
const UNRECORDED_KEPT: Duration = Duration::from_secs(10 * 60);

impl RunHost {
    pub(crate) fn new(store: AnyStore) -> Self {
        let shared = store.postgres().is_some();
        Self { store: Arc::new(std::sync::Mutex::new(store)), queues: Mutex::default(), shared, unrecorded: Mutex::default() }
    }

    /// Runs `f` on the store on a blocking thread.
    pub(super) async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&AnyStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, Error> {
        let store = self.store.clone();
        let joined = tokio::task::spawn_blocking(move || {
            // A panic while the lock was held cannot leave a half-written
            // store (SQLite transactions), so the store stays usable.
            let store = store.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&store)
        })
        .await;
        match joined {
            Ok(result) => result.map_err(Error::store),
            Err(_) => Err(Error::Internal("the store's thread failed")),
        }
    }

    /// A hosted run's queue, loaded from the store on first use.
    pub(crate) async fn queue(&self, run_id: &str) -> Result<Arc<Queue>, Error> {
        limits::id("run_id", run_id)?;
        if let Some(queue) = self.queues.lock().get(run_id) {
            return Ok(queue.clone());
        }
        let id = run_id.to_owned();
        let (summary, plan, pending) = self
            .blocking(move |store| {
                let run = store.find_run(&id)?;
                let summary = store.summary(&run)?;
                if summary.lease_timeout.is_none() {
                    return Ok((summary, Vec::new(), Vec::new()));
                }
                let pending: Vec<usize> = store.pending(&run)?.into_iter().map(|(index, _)| index).collect();
                Ok((summary, store.plan(&run)?, pending))
            })
            .await?;
        let Some(lease_timeout) = summary.lease_timeout else { return Err(Error::RunNotHosted(run_id.to_owned())) };
        let queue = Arc::new(Queue::loaded(summary, plan, &pending, lease_timeout));
        // Two first requests may race to load it: keep whichever came first.
        Ok(self.queues.lock().entry(run_id.to_owned()).or_insert(queue).clone())
    }

    /// A run's queue, if it is loaded (never with a shared store: the
    /// store's counts are the progress there).
    pub(super) fn loaded(&self, run_id: &str) -> Option<Arc<Queue>> {
        if self.shared {
            return None;
        }
        self.queues.lock().get(run_id).cloned()
    }

    /// Keeps a new run's queue.
    pub(super) fn insert(&self, queue: Arc<Queue>) {
        self.queues.lock().insert(queue.run.to_string(), queue);
    }

    /// The progress of every run loaded since the server started, by id.
    pub(crate) fn progress_all(&self) -> Vec<pb::Run> {
        let queues: Vec<Arc<Queue>> = self.queues.lock().values().cloned().collect();
        let mut runs: Vec<pb::Run> = queues.iter().map(|queue| queue.progress()).collect();
        runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        runs
    }

    /// Records, at a repeat of its finish, a finished episode whose first
    /// finish the store missed; nothing to do for any other. A repeat
    /// returns only once the verdict is stored (or another worker's found
    /// standing): repeats sent at once wait for the one recording.
    pub(crate) async fn record_again(&self, episode_id: &str, trajectory: pb::Trajectory) -> Result<(), Error> {
        let Some(missed) = self.unrecorded.lock().get(episode_id).map(|(missed, _)| Arc::clone(missed)) else {
            return Ok(());
        };
        let mut lease = missed.lock().await;
        let Some(tag) = lease.take() else {
            return Ok(()); // recorded by a repeat sent at the same time
        };
        match self.store_result(tag, episode_id, trajectory).await {
            Ok(()) => {
                self.unrecorded.lock().remove(episode_id);
                Ok(())
            }
            Err((error, tag)) => {
                *lease = Some(tag);
                Err(error)
            }
        }
    }

    /// Records a leased episode's end: its result and trajectory. When the
    /// store fails, the lease is kept for a repeated finish
    /// ([`RunHost::record_again`]) and the slot goes back to the queue.
    pub(crate) async fn record(&self, lease: LeaseTag, episode_id: &str, trajectory: pb::Trajectory) -> Result<(), Error> {
        self.store_result(lease, episode_id, trajectory).await.map_err(|(error, lease)| {
            let mut unrecorded = self.unrecorded.lock();
            unrecorded.retain(|_, (_, since)| since.elapsed() < UNRECORDED_KEPT);
            unrecorded.insert(episode_id.to_owned(), (Arc::new(tokio::sync::Mutex::new(Some(lease))), Instant::now()));
            error
        })
    }

    /// Stores a leased episode's result and trajectory and marks its slot
    /// done; when the store fails, the slot goes back to the queue and the
    /// lease comes back with the error.
    async fn store_result(&self, lease: LeaseTag, episode_id: &str, trajectory: pb::Trajectory) -> Result<(), (Error, LeaseTag)> {
        let (queue, index) = (&lease.queue, lease.index);
        let result = queue.plan[index].result(&trajectory);
        let passed = result.outcome == toolenv_runs::metrics::EpisodeOutcome::Passed;
        let run = queue.run.clone();
        // `Ok(false)`: this plan entry has a verdict already (which stands).
        let stored = self
            .blocking(move |store| match store.record(&run, index, &result, Some(&trajectory)) {
                Ok(()) => Ok(true),
                Err(StoreError::AlreadyRecorded { .. }) => Ok(false),
                Err(error) => Err(error),
            })
            .await;
        match stored {
            Ok(recorded) => {
                queue.done(index, recorded, passed);
                tracing::debug!(run = %queue.run, index, episode_id, passed, recorded, "run episode ended");
                Ok(())
            }
            Err(error) => {
                // Not stored: another worker plays it again, unless a repeat of this finish records it first.
                queue.free(index, Some(episode_id));
                tracing::error!(run = %queue.run, index, %error, "run episode not recorded");
                Err((error, lease))
            }
        }
    }
}
