//! Finished episodes, kept compact until they are read, recorded or expire.
//!
//! Finishing an episode frees its place among the live episodes at once:
//! its state, tools and fault bookkeeping are dropped, and only its
//! trajectory (which holds the verdict and the usage) stays, encoded as
//! protobuf bytes, for `GetTrajectory` and a repeated `FinishEpisode`.
//!
//! Bounds: at most [`MAX_FINISHED_BYTES`] of encoded trajectories and at
//! most as many finished episodes as the server holds live ones
//! (`--max-episodes`, but at least [`MIN_FINISHED`]); beyond either, the oldest finished episodes are
//! dropped first. A finished episode also expires after the server's idle
//! timeout from its last use (its finish, or the last read).

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use parking_lot::Mutex;
use prost::Message;
use tokio::time::Instant;
use toolenv::pb;

/// Most bytes of encoded trajectories kept for finished episodes.
pub const MAX_FINISHED_BYTES: usize = 256 * 1024 * 1024;

/// Finished episodes kept even when `--max-episodes` is smaller.
pub const MIN_FINISHED: usize = 1024;

const SHARDS: usize = 16;

#[derive(Debug)]
struct Kept {
    trajectory: Vec<u8>,
    last_used: Instant,
}

#[derive(Debug, Default)]
struct Shard {
    by_id: HashMap<String, Kept>,
    /// Ids in the order they finished, oldest first (may name ids already gone).
    order: VecDeque<String>,
    bytes: usize,
}

impl Shard {
    fn remove(&mut self, id: &str) -> bool {
        match self.by_id.remove(id) {
            Some(kept) => {
                self.bytes -= kept.trajectory.len();
                true
            }
            None => false,
        }
    }
}

/// The finished episodes of a server, by id.
#[derive(Debug)]
pub(crate) struct FinishedEpisodes {
    shards: Box<[Mutex<Shard>]>,
    max_per_shard: usize,
    max_bytes_per_shard: usize,
}

impl FinishedEpisodes {
    /// Keeps at most `max_count` (or [`MIN_FINISHED`]) finished episodes and [`MAX_FINISHED_BYTES`].
    pub(crate) fn new(max_count: usize) -> Self {
        Self::with_bounds(max_count.max(MIN_FINISHED), MAX_FINISHED_BYTES)
    }

    pub(crate) fn with_bounds(max_count: usize, max_bytes: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            max_per_shard: max_count.div_ceil(SHARDS).max(1),
            max_bytes_per_shard: (max_bytes / SHARDS).max(1),
        }
    }

    /// Keeps a finished episode's trajectory, dropping the oldest ones
    /// beyond the bounds.
    pub(crate) fn insert(&self, id: String, trajectory: &pb::Trajectory) {
        let bytes = trajectory.encode_to_vec();
        let mut shard = self.shard(&id).lock();
        shard.remove(&id);
        shard.bytes += bytes.len();
        shard.order.push_back(id.clone());
        shard.by_id.insert(id, Kept { trajectory: bytes, last_used: Instant::now() });
        while shard.by_id.len() > self.max_per_shard || shard.bytes > self.max_bytes_per_shard {
            let Some(oldest) = shard.order.pop_front() else { break };
            shard.remove(&oldest);
        }
        if shard.order.len() > 2 * shard.by_id.len() + 64 {
            let Shard { by_id, order, .. } = &mut *shard;
            order.retain(|id| by_id.contains_key(id));
        }
    }

    /// A finished episode's trajectory, marking it used.
    pub(crate) fn get(&self, id: &str) -> Option<pb::Trajectory> {
        let mut shard = self.shard(id).lock();
        let kept = shard.by_id.get_mut(id)?;
        kept.last_used = Instant::now();
        // Bytes this server encoded itself: they decode.
        pb::Trajectory::decode(kept.trajectory.as_slice()).ok()
    }

    /// Stops keeping a finished episode.
    pub(crate) fn remove(&self, id: &str) {
        self.shard(id).lock().remove(id);
    }

    /// Whether an episode is kept here.
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.shard(id).lock().by_id.contains_key(id)
    }

    /// How many finished episodes are kept.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().by_id.len()).sum()
    }

    /// Drops finished episodes unused for longer than `idle`; returns how many.
    pub(crate) fn expire(&self, idle: Duration) -> usize {
        let now = Instant::now();
        let mut removed = 0;
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            let Shard { by_id, order, bytes } = &mut *shard;
            let before = by_id.len();
            by_id.retain(|_, kept| {
                let keep = now.duration_since(kept.last_used) < idle;
                if !keep {
                    *bytes -= kept.trajectory.len();
                }
                keep
            });
            order.retain(|id| by_id.contains_key(id));
            removed += before - by_id.len();
        }
        removed
    }

    fn shard(&self, id: &str) -> &Mutex<Shard> {
        let index = id.bytes().rev().take(8).fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(usize::from(b)));
        &self.shards[index % SHARDS]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trajectory(task: &str) -> pb::Trajectory {
        pb::Trajectory { task_id: task.to_owned(), ..Default::default() }
    }

    #[tokio::test(start_paused = true)]
    async fn keeps_the_newest_within_bounds_and_expires_unused_ones() {
        let finished = FinishedEpisodes::with_bounds(SHARDS, usize::MAX);
        // More than one shard holds: the oldest of each shard go first.
        for i in 0..10 * SHARDS {
            finished.insert(format!("ep-{i:04}"), &trajectory(&format!("t{i}")));
        }
        assert!(finished.len() <= SHARDS, "{}", finished.len());
        assert_eq!(finished.get(&format!("ep-{:04}", 10 * SHARDS - 1)).unwrap().task_id, format!("t{}", 10 * SHARDS - 1));
        tokio::time::advance(Duration::from_secs(10)).await;
        let read = format!("ep-{:04}", 10 * SHARDS - 2);
        let _ = finished.get(&read);
        let held = finished.len();
        assert!(!finished.contains("ep-0000"), "the oldest was dropped");
        let still_held = finished.contains(&read);
        assert_eq!(finished.expire(Duration::from_secs(5)), held - usize::from(still_held), "a read renews");
        tokio::time::advance(Duration::from_secs(10)).await;
        finished.expire(Duration::from_secs(5));
        assert_eq!(finished.len(), 0);
    }

    #[test]
    fn a_byte_budget_drops_the_oldest() {
        let finished = FinishedEpisodes::with_bounds(1_000, SHARDS * 64);
        let big = pb::Trajectory { description: "x".repeat(40), ..Default::default() };
        for i in 0..200 {
            finished.insert(format!("ep-{i:04}"), &big);
        }
        let kept: usize = finished.shards.iter().map(|s| s.lock().bytes).sum();
        assert!(kept <= SHARDS * 64, "{kept}");
        assert!(finished.contains("ep-0199"));
        assert!(!finished.contains("ep-0000"));
    }
}
