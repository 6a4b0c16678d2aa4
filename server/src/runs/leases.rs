//! The lease queue of a hosted run: pure bookkeeping of which planned
//! episode is waiting, leased (to which episode) or done, which worker lane
//! gets which slot next, and which roles of a multi-agent episode were
//! handed out. No store, no transport: the service asks, the queue answers.
//!
//! The state sits behind one mutex per run, never held across an `.await`
//! or while an episode is locked.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use toolenv::pb;
use toolenv_runs::PlannedEpisode;
use toolenv_store::{RunId, RunSummary};

use super::{run_message, with_suite};
use crate::registry::Registry;

/// Marks an episode as a run's planned episode: finishing it records it.
#[derive(Debug, Clone)]
pub(crate) struct LeaseTag {
    pub(crate) queue: Arc<Queue>,
    pub(crate) index: usize,
}

impl LeaseTag {
    /// How long the episode may go unused before its lease expires.
    pub(crate) fn timeout(&self) -> Duration {
        self.queue.lease_timeout
    }

    /// Hands the planned episode back to the run's queue: its episode's lease
    /// expired (and the episode was revoked).
    pub(crate) fn release(&self, episode_id: &str) {
        tracing::info!(run = %self.queue.run, index = self.index, %episode_id, "lease expired; the episode is handed out again");
        self.queue.free(self.index, Some(episode_id));
    }
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
    pub(crate) run: RunId,
    pub(crate) plan: Vec<PlannedEpisode>,
    /// The plan's agent labels, in plan order.
    agents: Vec<String>,
    /// The plan indices a worker may get, by the agent label it asks for
    /// ("" for any), in plan order.
    lanes: HashMap<String, Vec<usize>>,
    /// Woken when a slot is done or waiting again, for long-polling workers.
    pub(super) changed: tokio::sync::Notify,
    pub(crate) lease_timeout: Duration,
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

/// What [`Queue::pick`] found.
#[derive(Debug)]
pub(super) enum Pick {
    /// This slot, now leased.
    Slot(usize),
    /// Every remaining slot is leased; the soonest lease expires after this.
    Busy(Duration),
    /// Every slot has a verdict.
    Done,
}

impl Queue {
    /// A new run's queue: every planned episode waiting.
    pub(super) fn fresh(summary: RunSummary, plan: Vec<PlannedEpisode>, lease_timeout: Duration) -> Queue {
        let slots = vec![Slot::Waiting; plan.len()];
        Queue::new(summary, plan, slots, lease_timeout)
    }

    /// A stored run's queue: the planned episodes at `pending` waiting, the
    /// others done.
    pub(super) fn loaded(summary: RunSummary, plan: Vec<PlannedEpisode>, pending: &[usize], lease_timeout: Duration) -> Queue {
        let mut slots = vec![Slot::Done; plan.len()];
        for &index in pending {
            slots[index] = Slot::Waiting;
        }
        Queue::new(summary, plan, slots, lease_timeout)
    }

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
    pub(super) fn pick(&self, agent: &str, registry: &Registry) -> Pick {
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
    pub(super) fn open_for_role(&self, agent: &str, role: &str) -> Result<Option<(usize, String)>, ()> {
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
    pub(super) fn free(&self, index: usize, episode_id: Option<&str>) {
        let mut state = self.state.lock();
        if state.slots[index] == Slot::Leased(episode_id.map(str::to_owned)) {
            state.slots[index] = Slot::Waiting;
            state.roles_handed.remove(&index);
        }
        self.changed.notify_waiters();
    }

    /// Hands a picked slot out for `role` (none: a single-agent run): a
    /// slot handed out again (its lease expired) starts with no roles taken.
    pub(super) fn hand_out(&self, index: usize, role: &str) {
        let mut state = self.state.lock();
        state.roles_handed.remove(&index);
        if !role.is_empty() {
            state.roles_handed.insert(index, vec![role.to_owned()]);
        }
    }

    /// Notes the episode a picked slot is now leased to; the run's progress
    /// just after.
    pub(super) fn leased(&self, index: usize, episode_id: &str) -> pb::Run {
        let mut state = self.state.lock();
        state.slots[index] = Slot::Leased(Some(episode_id.to_owned()));
        state.progress(&self.agents)
    }

    /// Marks a slot done once its result is in the store (`recorded`: by this
    /// episode, not before), counting the verdict, and wakes waiting workers.
    pub(super) fn done(&self, index: usize, recorded: bool, passed: bool) {
        {
            let mut state = self.state.lock();
            state.slots[index] = Slot::Done;
            if recorded {
                if passed {
                    state.summary.passed += 1;
                } else {
                    state.summary.failed += 1;
                }
            }
        }
        self.changed.notify_waiters();
    }

    /// The run's progress as the wire shows it.
    pub(crate) fn progress(&self) -> pb::Run {
        let run = self.state.lock().progress(&self.agents);
        with_suite(run, self.plan.iter().map(|p| p.request.task_id.as_str()))
    }
}
