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

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tonic::{Request, Response, Status};
use toolenv::pb;
use toolenv_runs::metrics::{InfraConvention, Population};
use toolenv_runs::store::{RunId, RunSummary, Store, StoreError};
use toolenv_runs::{Grid, PlannedEpisode, compare, report, trials_of};

use crate::{error::Error, limits, registry::Registry, service::ToolEnvService};

/// The lease timeout of a run that does not choose one.
pub const DEFAULT_LEASE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Most episodes one run may plan.
const MAX_PLANNED: usize = 200_000;

/// Longest a `NextEpisode` waits for a leased episode to come back before
/// it answers "ask again".
const LONG_POLL: Duration = Duration::from_secs(5);

/// Marks an episode as a run's planned episode: finishing it records it.
#[derive(Debug, Clone)]
pub(crate) struct LeaseTag {
    queue: Arc<Queue>,
    index: usize,
}

/// The state of one planned episode.
#[derive(Debug, Clone, PartialEq)]
enum Slot {
    /// No verdict and no lease: the next worker gets it.
    Waiting,
    /// Leased; `None` while its episode is being created.
    Leased(Option<String>),
    /// Has a verdict in the store.
    Done,
}

/// A hosted run in memory: its plan and the state of each planned episode.
#[derive(Debug)]
pub(crate) struct Queue {
    run: RunId,
    plan: Vec<PlannedEpisode>,
    /// The plan's agent labels, in plan order.
    agents: Vec<String>,
    /// The plan indices a worker may get, by the agent label it asks for
    /// ("" for any), in plan order.
    lanes: HashMap<String, Vec<usize>>,
    /// Woken when a slot is done or waiting again, for long-polling workers.
    changed: tokio::sync::Notify,
    lease_timeout: Duration,
    state: Mutex<QueueState>,
}

#[derive(Debug)]
struct QueueState {
    slots: Vec<Slot>,
    /// The run as stored, its pass and fail counts kept current.
    summary: RunSummary,
    /// Per lane (see [`Queue::lanes`]), how many of its first slots are
    /// done (a done slot never changes again): a pick starts there, so it
    /// costs about the episodes in flight, not the plan's length.
    done_prefix: HashMap<String, usize>,
    /// For a multi-agent run: the roles each leased slot's episode was
    /// handed out for, so that each role goes to one worker.
    roles_handed: HashMap<usize, Vec<String>>,
}

impl QueueState {
    /// The run's progress as the wire shows it.
    fn progress(&self, agents: &[String]) -> pb::Run {
        let leased = self.slots.iter().filter(|s| matches!(s, Slot::Leased(_))).count() as u64;
        let waiting = self.slots.iter().filter(|s| **s == Slot::Waiting).count() as u64;
        run_message(&self.summary, waiting, leased, agents.to_vec())
    }
}

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

/// What [`Queue::pick`] found.
#[derive(Debug)]
enum Pick {
    /// This slot, now leased.
    Slot(usize),
    /// Every remaining slot is leased; the soonest lease expires after this.
    Busy(Duration),
    /// Every slot has a verdict.
    Done,
}

impl Queue {
    fn new(summary: RunSummary, plan: Vec<PlannedEpisode>, slots: Vec<Slot>, lease_timeout: Duration) -> Queue {
        let mut agents: Vec<String> = Vec::new();
        let mut lanes: HashMap<String, Vec<usize>> = HashMap::new();
        lanes.insert(String::new(), (0..plan.len()).collect());
        for (index, planned) in plan.iter().enumerate() {
            if !agents.contains(&planned.agent) {
                agents.push(planned.agent.clone());
            }
            lanes.entry(planned.agent.clone()).or_default().push(index);
        }
        let state = QueueState { slots, summary, done_prefix: HashMap::new(), roles_handed: HashMap::new() };
        Queue {
            run: state.summary.id.clone(),
            plan,
            agents,
            lanes,
            changed: tokio::sync::Notify::new(),
            lease_timeout,
            state: Mutex::new(state),
        }
    }

    /// Takes the first slot for `agent` (any when empty) that is waiting or
    /// whose lease expired, marking it leased; or says why there is none.
    fn pick(&self, agent: &str, registry: &Registry) -> Pick {
        let Some(lane) = self.lanes.get(agent) else { return Pick::Done };
        let mut state = self.state.lock();
        let mut start = state.done_prefix.get(agent).copied().unwrap_or(0);
        while lane.get(start).is_some_and(|&index| state.slots[index] == Slot::Done) {
            start += 1;
        }
        state.done_prefix.insert(agent.to_owned(), start);
        let mut soonest: Option<Duration> = None;
        for &index in &lane[start..] {
            let left = match &state.slots[index] {
                Slot::Done => continue,
                Slot::Waiting => None,
                // Being created for another worker: it will be busy for a while.
                Slot::Leased(None) => Some(self.lease_timeout),
                Slot::Leased(Some(episode_id)) => match registry.idle_for(episode_id) {
                    Some(idle) if idle < self.lease_timeout => Some(self.lease_timeout - idle),
                    // Expired, or the episode is gone (it idled out).
                    _ => {
                        registry.revoke(episode_id, self.lease_timeout);
                        tracing::info!(run = %self.run, index, %episode_id, "lease expired; handing the episode out again");
                        None
                    }
                },
            };
            match left {
                Some(left) => soonest = Some(soonest.map_or(left, |s| s.min(left))),
                None => {
                    state.slots[index] = Slot::Leased(None);
                    return Pick::Slot(index);
                }
            }
        }
        soonest.map_or(Pick::Done, Pick::Busy)
    }

    /// A leased episode of `agent`'s lane whose `role` was not handed out
    /// yet, now handed out for it: its plan index and episode id; or
    /// `Err(())` when such an episode is being created (ask again soon).
    fn open_for_role(&self, agent: &str, role: &str) -> Result<Option<(usize, String)>, ()> {
        let Some(lane) = self.lanes.get(agent) else { return Ok(None) };
        let mut state = self.state.lock();
        let start = state.done_prefix.get(agent).copied().unwrap_or(0);
        let open = |index: &usize| !state.roles_handed.get(index).is_some_and(|r| r.iter().any(|h| h == role));
        let mut pending = false;
        let found = lane[start.min(lane.len())..].iter().find_map(|&index| match &state.slots[index] {
            Slot::Leased(Some(id)) if open(&index) => Some((index, id.clone())),
            Slot::Leased(None) if open(&index) => {
                pending = true;
                None
            }
            _ => None,
        });
        match found {
            Some((index, id)) => {
                state.roles_handed.entry(index).or_default().push(role.to_owned());
                Ok(Some((index, id)))
            }
            None if pending => Err(()),
            None => Ok(None),
        }
    }

    /// Puts a leased slot back in the queue (its episode could not be
    /// created or recorded), unless it went to another episode meanwhile.
    fn free(&self, index: usize, episode_id: Option<&str>) {
        let mut state = self.state.lock();
        if state.slots[index] == Slot::Leased(episode_id.map(str::to_owned)) {
            state.slots[index] = Slot::Waiting;
            state.roles_handed.remove(&index);
        }
        self.changed.notify_waiters();
    }

    /// The run's progress as the wire shows it.
    fn progress(&self) -> pb::Run {
        let run = self.state.lock().progress(&self.agents);
        with_suite(run, self.plan.iter().map(|p| p.request.task_id.as_str()))
    }
}

/// The hosted runs of a server, over its store.
#[derive(Debug)]
pub(crate) struct RunHost {
    store: Arc<std::sync::Mutex<Store>>,
    /// Runs loaded so far, by id.
    queues: Mutex<HashMap<String, Arc<Queue>>>,
}

impl RunHost {
    pub(crate) fn new(store: Store) -> Self {
        Self { store: Arc::new(std::sync::Mutex::new(store)), queues: Mutex::default() }
    }

    /// Runs `f` on the store on a blocking thread.
    async fn blocking<T: Send + 'static>(&self, f: impl FnOnce(&Store) -> Result<T, StoreError> + Send + 'static) -> Result<T, Error> {
        let store = self.store.clone();
        let joined = tokio::task::spawn_blocking(move || {
            // A panic while the lock was held cannot leave a half-written
            // store (SQLite transactions), so the store stays usable.
            let store = store.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            f(&store)
        })
        .await;
        match joined {
            Ok(result) => result.map_err(store_error),
            Err(_) => Err(Error::Internal("the store's thread failed")),
        }
    }

    /// A hosted run's queue, loaded from the store on first use.
    async fn queue(&self, run_id: &str) -> Result<Arc<Queue>, Error> {
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
        let mut slots = vec![Slot::Done; plan.len()];
        for index in pending {
            slots[index] = Slot::Waiting;
        }
        let queue = Arc::new(Queue::new(summary, plan, slots, lease_timeout));
        // Two first requests may race to load it: keep whichever came first.
        Ok(self.queues.lock().entry(run_id.to_owned()).or_insert(queue).clone())
    }

    /// The progress of every run loaded since the server started, by id.
    pub(crate) fn progress_all(&self) -> Vec<pb::Run> {
        let queues: Vec<Arc<Queue>> = self.queues.lock().values().cloned().collect();
        let mut runs: Vec<pb::Run> = queues.iter().map(|queue| queue.progress()).collect();
        runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        runs
    }

    /// Records a leased episode's end: its result and trajectory.
    pub(crate) async fn record(&self, lease: LeaseTag, episode_id: &str, trajectory: pb::Trajectory) -> Result<(), Error> {
        let LeaseTag { queue, index } = lease;
        let planned = &queue.plan[index];
        let result = planned.result(&trajectory);
        let passed = result.outcome == toolenv_runs::metrics::Outcome::Passed;
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
                {
                    let mut state = queue.state.lock();
                    state.slots[index] = Slot::Done;
                    if recorded {
                        if passed {
                            state.summary.passed += 1;
                        } else {
                            state.summary.failed += 1;
                        }
                    }
                }
                queue.changed.notify_waiters();
                tracing::debug!(run = %queue.run, index, episode_id, passed, recorded, "run episode ended");
                Ok(())
            }
            Err(error) => {
                // Not stored: another worker plays it again.
                queue.free(index, Some(episode_id));
                tracing::error!(run = %queue.run, index, %error, "run episode not recorded");
                Err(error)
            }
        }
    }
}

fn store_error(error: StoreError) -> Error {
    match error {
        StoreError::UnknownRun { run, .. } => Error::UnknownRun(run),
        other => Error::Store(other.to_string()),
    }
}

/// The `toolenv.v1.Runs` service.
#[derive(Debug, Clone)]
pub struct RunsService {
    env: ToolEnvService,
}

impl RunsService {
    pub(crate) fn new(env: ToolEnvService) -> Self {
        Self { env }
    }

    fn host(&self) -> &RunHost {
        self.env.runs()
    }

    /// Checks a create-run request and turns it into a plan.
    fn plan(&self, request: &pb::CreateRunRequest) -> Result<Vec<PlannedEpisode>, Error> {
        if request.agents.is_empty() {
            return Err(Error::MissingField("agents"));
        }
        limits::text("description", &request.description, limits::MAX_DESCRIPTION_BYTES)?;
        limits::list("agents", &request.agents, limits::MAX_NAME_BYTES)?;
        limits::text("preset", &request.preset, limits::MAX_NAME_BYTES)?;
        limits::list("fault_profiles", &request.fault_profiles, limits::MAX_NAME_BYTES)?;
        limits::text("suite", &request.suite, limits::MAX_NAME_BYTES)?;
        limits::roles("roles", &request.roles)?;
        if request.epsilons.len() > limits::MAX_LIST_LEN {
            return Err(Error::invalid("epsilons", format!("at most {} entries", limits::MAX_LIST_LEN)));
        }
        if let Some(epsilon) = request.epsilons.iter().find(|e| !e.is_finite()) {
            return Err(Error::invalid("epsilons", format!("must be finite numbers, got {epsilon}")));
        }
        let fault_delivery: pb::FaultDelivery = limits::known_enum("fault_delivery", request.fault_delivery)?;
        let agents = request.agents.clone();
        let customised = !request.epsilons.is_empty() || !request.fault_profiles.is_empty() || request.trials != 0;
        let mut grid = match request.preset.as_str() {
            "" => Grid {
                epsilons: if request.epsilons.is_empty() { vec![0.0] } else { request.epsilons.clone() },
                fault_profiles: request.fault_profiles.clone(),
                trials: request.trials.max(1),
                ..Grid::single(agents)
            },
            preset @ ("paper" | "ablation" | "mas-fire") if customised => {
                return Err(Error::invalid("preset", format!("the {preset} preset fixes ε, fault profiles and trials; leave them unset")));
            }
            "paper" => Grid::paper(agents),
            "ablation" => Grid::ablation(agents),
            "mas-fire" => Grid::mas_fire(agents),
            other => return Err(Error::invalid("preset", format!("presets are \"paper\", \"ablation\" and \"mas-fire\", got {other:?}"))),
        };
        if let Some(role) = request.roles.iter().find(|r| !toolenv_core::masfire::valid_name(&r.name)) {
            return Err(Error::invalid("roles", format!("'{}' is not a role name (1–64 letters, digits, '-', '_')", role.name)));
        }
        grid.seed = request.seed;
        grid.seeds = request.seeds.max(1);
        grid.time_scale = request.time_scale;
        grid.fault_delivery = fault_delivery;
        let named = &self.env.config().fault_profiles;
        grid.validate(|name| named.contains_key(name)).map_err(|e| Error::invalid(e.field(), e.to_string()))?;
        let (suite, domain, level) = self.env.suite_filter(&request.suite, request.domain, request.level)?;
        let tasks = suite.count(domain, level);
        if tasks == 0 {
            return Err(Error::invalid("level", "no task matches the domain and level"));
        }
        // Sized before any task is generated.
        let size = [grid.agents.len(), grid.epsilons.len(), grid.fault_profiles.len().max(1), tasks, grid.trials as usize]
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n))
            .unwrap_or(usize::MAX);
        if size > MAX_PLANNED {
            return Err(Error::invalid("agents", format!("the grid has {size} episodes; a run may plan at most {MAX_PLANNED}")));
        }
        let tasks = suite.tasks(domain, level);
        let mut plan = grid.plan(tasks.iter().map(|t| t.id.as_str()));
        for planned in &mut plan {
            planned.request.roles.clone_from(&request.roles);
        }
        Ok(plan)
    }
}

#[tonic::async_trait]
impl pb::runs_server::Runs for RunsService {
    async fn create_run(&self, request: Request<pb::CreateRunRequest>) -> Result<Response<pb::Run>, Status> {
        let request = request.into_inner();
        let plan = self.plan(&request)?;
        let lease_timeout = match request.lease_timeout_ms {
            0 => DEFAULT_LEASE_TIMEOUT,
            ms if ms > 7 * 24 * 3_600_000 => return Err(Error::invalid("lease_timeout_ms", "at most 7 days").into()),
            ms => Duration::from_millis(ms),
        };
        let description = request.description;
        let stored_plan = plan.clone();
        let summary = self
            .host()
            .blocking(move |store| {
                let run = store.host_run(&stored_plan, &description, lease_timeout)?;
                store.summary(&run)
            })
            .await?;
        let slots = vec![Slot::Waiting; plan.len()];
        let queue = Queue::new(summary, plan, slots, lease_timeout);
        let reply = queue.progress();
        tracing::info!(run = %queue.run, planned = queue.plan.len(), "run created");
        self.host().queues.lock().insert(queue.run.to_string(), Arc::new(queue));
        Ok(Response::new(reply))
    }

    async fn get_run(&self, request: Request<pb::GetRunRequest>) -> Result<Response<pb::Run>, Status> {
        let run_id = request.into_inner().run_id;
        match self.host().queue(&run_id).await {
            Ok(queue) => Ok(Response::new(queue.progress())),
            // A run the command-line tool played: as stored.
            Err(Error::RunNotHosted(_)) => {
                let (summary, agents, task_ids) = self
                    .host()
                    .blocking(move |store| {
                        let run = store.find_run(&run_id)?;
                        Ok((store.summary(&run)?, store.agents(&run)?, store.task_ids(&run)?))
                    })
                    .await?;
                let run = run_message(&summary, summary.pending(), 0, agents);
                Ok(Response::new(with_suite(run, task_ids.iter().map(String::as_str))))
            }
            Err(error) => Err(error.into()),
        }
    }

    async fn list_runs(&self, _: Request<pb::ListRunsRequest>) -> Result<Response<pb::ListRunsResponse>, Status> {
        let stored = self
            .host()
            .blocking(|store| {
                let runs = store.runs()?.into_iter();
                runs.map(|summary| Ok((store.agents(&summary.id)?, store.task_ids(&summary.id)?, summary))).collect::<Result<Vec<_>, _>>()
            })
            .await?;
        let queues = self.host().queues.lock().clone();
        let runs = stored
            .into_iter()
            .map(|(agents, task_ids, summary)| match queues.get(summary.id.as_str()) {
                // Loaded: the live counts, leases included.
                Some(queue) => queue.progress(),
                None => with_suite(run_message(&summary, summary.pending(), 0, agents), task_ids.iter().map(String::as_str)),
            })
            .collect();
        Ok(Response::new(pb::ListRunsResponse { runs }))
    }

    async fn next_episode(&self, request: Request<pb::NextEpisodeRequest>) -> Result<Response<pb::NextEpisodeResponse>, Status> {
        let request = request.into_inner();
        limits::text("agent", &request.agent, limits::MAX_NAME_BYTES)?;
        limits::text("worker", &request.worker, limits::MAX_NAME_BYTES)?;
        limits::text("role", &request.role, limits::MAX_NAME_BYTES)?;
        let queue = self.host().queue(&request.run_id).await?;
        let registry = self.env.registry();
        if !request.role.is_empty() {
            let planned_roles =
                queue.plan.first().map(|p| p.request.roles.iter().map(|r| r.name.as_str()).collect::<Vec<_>>()).unwrap_or_default();
            if !planned_roles.contains(&request.role.as_str()) {
                let message = format!("the run's episodes declare the roles [{}]; '{}' is not one", planned_roles.join(", "), request.role);
                return Err(Error::invalid("role", message).into());
            }
            // A leased episode still missing this role first: one episode, several workers.
            loop {
                let lead = planned_roles.first() == Some(&request.role.as_str());
                let (index, episode_id) = match queue.open_for_role(&request.agent, &request.role) {
                    Ok(Some(open)) => open,
                    // The first role opens episodes; the others only join them.
                    Ok(None) if lead => break,
                    Ok(None) => {
                        let run = queue.progress();
                        let retry_after_ms = if run.complete || run.waiting + run.leased == 0 { 0 } else { 20 };
                        return Ok(Response::new(pb::NextEpisodeResponse { lease: None, run: Some(run), retry_after_ms }));
                    }
                    // Another worker is creating an episode this role can join: ask again in a moment.
                    Err(()) => {
                        return Ok(Response::new(pb::NextEpisodeResponse { lease: None, run: Some(queue.progress()), retry_after_ms: 20 }));
                    }
                };
                let shared = registry.with_live(&episode_id, |session| match session.episode.verdict() {
                    Some(_) => Err(Error::EpisodeFinished),
                    None => Ok(crate::team::episode_message(&episode_id, session)),
                });
                // Finished or expired meanwhile: look further.
                let Ok(episode) = shared else { continue };
                tracing::debug!(run = %queue.run, index, worker = %request.worker, role = %request.role, %episode_id, "episode shared");
                let lease = pb::Lease {
                    episode: Some(episode),
                    plan_index: index as u64,
                    agent: queue.plan[index].agent.clone(),
                    lease_timeout_ms: queue.lease_timeout.as_millis() as u64,
                };
                return Ok(Response::new(pb::NextEpisodeResponse { lease: Some(lease), run: Some(queue.progress()), retry_after_ms: 0 }));
            }
        }
        // Long poll: while every remaining episode is leased, wait for one to
        // be recorded or freed, or for the soonest lease to expire.
        let deadline = tokio::time::Instant::now() + LONG_POLL;
        let index = loop {
            let changed = queue.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            match queue.pick(&request.agent, registry) {
                Pick::Slot(index) => {
                    // A slot handed out again (its lease expired) starts with no roles taken.
                    let mut state = queue.state.lock();
                    state.roles_handed.remove(&index);
                    if !request.role.is_empty() {
                        state.roles_handed.insert(index, vec![request.role.clone()]);
                    }
                    break index;
                }
                Pick::Busy(left) if tokio::time::Instant::now() < deadline => {
                    let _ = tokio::time::timeout_at(deadline.min(tokio::time::Instant::now() + left), changed).await;
                }
                pick => {
                    // Nothing left (0), or ask again soon, not in a tight loop.
                    let retry_after_ms = match pick {
                        Pick::Busy(left) => left.clamp(Duration::from_millis(50), Duration::from_secs(1)).as_millis() as u64,
                        _ => 0,
                    };
                    return Ok(Response::new(pb::NextEpisodeResponse { lease: None, run: Some(queue.progress()), retry_after_ms }));
                }
            }
        };
        let planned = &queue.plan[index];
        let tag = LeaseTag { queue: queue.clone(), index };
        let episode = match self.env.open_episode(planned.request.clone(), Some(tag)) {
            Ok(episode) => episode,
            Err(error) => {
                queue.free(index, None);
                return Err(error.into());
            }
        };
        let run = {
            let mut state = queue.state.lock();
            state.slots[index] = Slot::Leased(Some(episode.episode_id.clone()));
            state.progress(&queue.agents)
        };
        tracing::debug!(run = %queue.run, index, worker = %request.worker, episode_id = %episode.episode_id, "episode leased");
        let lease = pb::Lease {
            episode: Some(episode),
            plan_index: index as u64,
            agent: planned.agent.clone(),
            lease_timeout_ms: queue.lease_timeout.as_millis() as u64,
        };
        Ok(Response::new(pb::NextEpisodeResponse { lease: Some(lease), run: Some(run), retry_after_ms: 0 }))
    }

    async fn get_run_report(&self, request: Request<pb::GetRunReportRequest>) -> Result<Response<pb::RunReport>, Status> {
        let pb::GetRunReportRequest { run_id, exclude_infra_errors, feasible_only } = request.into_inner();
        limits::id("run_id", &run_id)?;
        let conv = InfraConvention::excluding(exclude_infra_errors);
        let population = Population::feasible_only(feasible_only);
        let (summary, agents, results, k, task_ids) = self
            .host()
            .blocking(move |store| {
                let run = store.find_run(&run_id)?;
                let k = trials_of(&store.plan(&run)?);
                Ok((store.summary(&run)?, store.agents(&run)?, store.results(&run)?, k, store.task_ids(&run)?))
            })
            .await?;
        let metrics_error = |e: toolenv_runs::metrics::MetricsError| Error::Store(format!("computing the report: {e}"));
        let text = report::render(&results, k, conv, population).map_err(metrics_error)?;
        let figures = report::summary(&results, k, summary.planned, conv, population).map_err(metrics_error)?;
        let summary_json = serde_json::json!({"run": summary, "report": figures}).to_string();
        let queue = self.host().queues.lock().get(summary.id.as_str()).cloned();
        let run = match queue {
            Some(queue) => queue.progress(),
            None => with_suite(run_message(&summary, summary.pending(), 0, agents), task_ids.iter().map(String::as_str)),
        };
        Ok(Response::new(pb::RunReport { run: Some(run), text, summary_json }))
    }

    async fn compare_runs(&self, request: Request<pb::CompareRunsRequest>) -> Result<Response<pb::RunComparison>, Status> {
        let pb::CompareRunsRequest { run_a, run_b, agents, exclude_infra_errors } = request.into_inner();
        limits::id("run_a", &run_a)?;
        limits::text("run_b", &run_b, limits::MAX_ID_BYTES)?;
        limits::list("agents", &agents, limits::MAX_NAME_BYTES)?;
        let run_b = Some(run_b).filter(|b| !b.is_empty());
        let read = move |store: &Store| {
            let mut sides = Vec::new();
            for id in std::iter::once(run_a).chain(run_b) {
                let run = store.find_run(&id)?;
                sides.push((run.as_str().to_owned(), store.agents(&run)?, store.results(&run)?));
            }
            Ok(sides)
        };
        let sides = self.host().blocking(read).await?;
        let invalid = |error: compare::CompareError| {
            let field = match error {
                compare::CompareError::UnknownAgent { .. } | compare::CompareError::Agents(_) => "agents",
                compare::CompareError::GridMismatch { .. } | compare::CompareError::NoSharedTasks { .. } => "run_b",
                compare::CompareError::Metrics(_) => "run_a",
            };
            Error::invalid(field, error.to_string())
        };
        let (a, b) = (&sides[0], sides.get(1));
        let (first, second) = compare::select_agents((&a.0, &a.1), b.map(|b| (b.0.as_str(), b.1.as_slice())), &agents).map_err(invalid)?;
        let episodes_a = compare::episodes_of(&a.2, &first.agent);
        let episodes_b = compare::episodes_of(&b.unwrap_or(a).2, &second.agent);
        let comparison = compare::compare((first, &episodes_a), (second, &episodes_b), InfraConvention::excluding(exclude_infra_errors))
            .map_err(invalid)?;
        let comparison_json = serde_json::to_string(&comparison).map_err(|e| Error::Store(format!("writing the comparison: {e}")))?;
        Ok(Response::new(pb::RunComparison { text: compare::render(&comparison), comparison_json }))
    }
}
