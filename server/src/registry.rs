//! Live episodes, sharded so that no lock is shared by all episodes.
//!
//! A request locks one shard just long enough to find its episode, then
//! locks that episode alone; no lock is ever held across an `.await`.
//! Episode ids are 128 random bits, so a live episode is found by those bits
//! (parsed from the id, hashed by taking them as they are): a lookup hashes
//! no text and follows no pointer to compare keys.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;
use toolenv_core::{CallError, CallOptions, Episode};

use crate::{
    error::Error,
    fault::{self, Outgoing},
    finished::FinishedEpisodes,
    runs::LeaseTag,
};

/// An episode with how the server delivers its faults.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) episode: Episode,
    /// Faults arrive as error objects inside OK replies, not as statuses.
    pub(crate) in_band: bool,
    /// Real milliseconds per simulated millisecond.
    pub(crate) time_scale: f64,
    /// When the previous reply went out (after its delay).
    pub(crate) last_reply: Option<Instant>,
    /// The run and planned episode this episode plays, until it is recorded.
    pub(crate) lease: Option<LeaseTag>,
    /// Set when its lease expired and its planned episode went to another
    /// worker: the lease timeout in milliseconds. Every request is refused.
    pub(crate) revoked: Option<u64>,
    /// What the agent reported spending, with its first finish.
    pub(crate) usage: Option<toolenv::pb::Usage>,
    /// The conversation a built-in LLM agent reported with its first finish.
    pub(crate) conversation: Option<toolenv::pb::Conversation>,
    /// With a PostgreSQL store: how many of its calls are in the durable log
    /// (`crate::replica`), behind a lock held while more are appended.
    pub(crate) logged: Option<Arc<tokio::sync::Mutex<usize>>>,
}

impl Session {
    /// A new episode's session: no call made, nothing revoked or reported.
    pub(crate) fn new(episode: Episode, in_band: bool, time_scale: f64, lease: Option<LeaseTag>) -> Self {
        Self { episode, in_band, time_scale, last_reply: None, lease, revoked: None, usage: None, conversation: None, logged: None }
    }

    /// A call with no agent id, as a single-agent episode gets it.
    #[cfg(test)]
    pub(crate) fn call(
        &mut self,
        tool: &str,
        arguments: &str,
        idempotency_key: Option<&str>,
        declared_wait_ms: Option<u64>,
    ) -> Result<Outgoing, Error> {
        let declared = CallOptions { idempotency_key, waited_ms: declared_wait_ms, ..CallOptions::default() };
        self.call_as(Instant::now(), tool, arguments, declared)
    }

    /// Plays one tool call arriving at `now`, with the request's options
    /// (the agent of a multi-agent episode, its key, its user answer, and
    /// the wait it declared), and says what to send back, and when.
    ///
    /// The agent's pause since the previous reply goes to the episode in
    /// virtual time ([`fault::virtual_wait_ms`]: at time scale 0 only the
    /// wait the agent declares passes); the reply goes out after the call's
    /// simulated delay, which the caller sleeps with no lock held.
    pub(crate) fn call_as(&mut self, now: Instant, tool: &str, arguments: &str, declared: CallOptions<'_>) -> Result<Outgoing, Error> {
        let real_wait = self.last_reply.map(|last| now.saturating_duration_since(last));
        let waited_ms = fault::virtual_wait_ms(declared.waited_ms, real_wait, self.time_scale);
        let options = CallOptions { waited_ms, ..declared };
        let (index, delay_ms, outcome) = match self.episode.call_with(tool, arguments, &options) {
            Ok(record) => (record.index, record.delay_ms, record.outcome.clone()),
            Err(error) => return Err(self.refusal(error)),
        };
        let delay = fault::real_delay(delay_ms, self.time_scale);
        self.last_reply = Some(now + delay);
        Ok(Outgoing { index, outcome, delay, in_band: self.in_band, time_scale: self.time_scale })
    }

    /// The episode's next call index: how many calls it holds.
    pub(crate) fn next_index(&self) -> u32 {
        self.episode.trajectory().calls.len() as u32
    }

    /// A call sent with the index it is to take (`expected_index`): `None`
    /// when that is the episode's next one (play it); the recorded reply when
    /// the episode holds a call of this tool there already (a retry whose
    /// first reply was lost: nothing is applied again); refused when the
    /// index is ahead of the episode, or taken by another tool's call.
    pub(crate) fn replayed(&self, expected: u32, tool: &str) -> Result<Option<Outgoing>, Error> {
        let next = self.next_index();
        if expected == next {
            return Ok(None);
        }
        let Some(record) = self.episode.trajectory().calls.get(expected as usize) else {
            return Err(Error::IndexAhead { expected, next });
        };
        if record.tool != tool {
            return Err(Error::IndexTaken { expected, tool: record.tool.to_string() });
        }
        match &record.outcome {
            toolenv_core::Outcome::Invalid(arg) => Err(self.refusal(CallError::InvalidArgument(arg.as_ref().clone()))),
            outcome => Ok(Some(Outgoing {
                index: expected,
                outcome: outcome.clone(),
                delay: Duration::ZERO,
                in_band: self.in_band,
                time_scale: self.time_scale,
            })),
        }
    }

    /// Why the episode refused a call, as the server says it.
    pub(crate) fn refusal(&self, error: CallError) -> Error {
        match error {
            CallError::UnknownTool(tool) => {
                let mut available: Vec<&str> = self.episode.task().tools().iter().map(|t| t.name).collect();
                available.extend(self.episode.bus_tools().iter().map(|t| t.name));
                Error::UnknownTool { tool, available: available.join(", ") }
            }
            // Who calls, and under which role, are request fields, not arguments.
            CallError::InvalidArgument(arg) if arg.field == "agent_id" || arg.field == "role" => Error::invalid(arg.field, arg.message),
            CallError::InvalidArgument(arg) => Error::InvalidArguments(arg),
            CallError::Finished => Error::EpisodeFinished,
            CallError::CallLimit(limit) => Error::CallLimit(limit),
            CallError::BusLimit(why) => Error::BusLimit(why),
        }
    }

    /// The episode's trajectory, with the usage the agent reported.
    pub(crate) fn trajectory(&self) -> toolenv::pb::Trajectory {
        toolenv::pb::Trajectory { usage: self.usage, conversation: self.conversation.clone(), ..self.episode.trajectory().into() }
    }
}

const SHARDS: usize = 64;

/// A live episode and when it was last used.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) session: Session,
    last_used: Instant,
}

impl Entry {
    /// How long the episode has been idle at `now`: since its last request,
    /// or since its last reply went out if that is later (a call sleeping
    /// its simulated delay is still in use).
    fn idle_for(&self, now: Instant) -> Duration {
        let busy_until = self.session.last_reply.map_or(self.last_used, |reply| reply.max(self.last_used));
        now.saturating_duration_since(busy_until)
    }
}

type Shared = Arc<Mutex<Entry>>;

/// The 128 random bits of an episode id (`ep-` and 32 lowercase hex digits).
type Key = u128;

/// The key of a well-formed episode id; any other text names no episode.
/// (A table look-up a digit: `from_str_radix` on a `u128` costs more than
/// hashing the whole id.)
fn key(id: &str) -> Option<Key> {
    /// Each byte's value as a lowercase hex digit; 0xff for any other byte.
    const DIGIT: [u8; 256] = {
        let mut table = [0xff; 256];
        let mut i = 0;
        while i < 16 {
            table[b"0123456789abcdef"[i] as usize] = i as u8;
            i += 1;
        }
        table
    };
    let digits: &[u8; 32] = id.strip_prefix("ep-")?.as_bytes().try_into().ok()?;
    let (mut key, mut seen) = (0 as Key, 0u8);
    for &b in digits {
        let digit = DIGIT[usize::from(b)];
        seen |= digit;
        key = key << 4 | Key::from(digit & 0xf);
    }
    (seen < 16).then_some(key)
}

/// Hashes a [`Key`] by folding its bits: they are random already (the
/// server draws them), so no client can choose keys that collide.
#[derive(Debug, Default, Clone, Copy)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u128(&mut self, key: u128) {
        self.0 = (key as u64) ^ ((key >> 64) as u64);
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only keys are hashed; bytes (never written) still spread.
        for &b in bytes {
            self.0 = self.0.rotate_left(5) ^ u64::from(b);
        }
    }
}

type Shard = Mutex<HashMap<Key, Shared, BuildHasherDefault<KeyHasher>>>;

/// Episodes by id: live ones, and finished ones in compact form
/// ([`FinishedEpisodes`]).
#[derive(Debug)]
pub(crate) struct Registry {
    shards: Box<[Shard]>,
    len: AtomicUsize,
    max_episodes: usize,
    finished: FinishedEpisodes,
    /// Episodes whose lease expired, by key, with the lease timeout in
    /// milliseconds: no longer live (their place is free), kept readable
    /// among the finished ones, and refused as expired.
    revoked: Mutex<HashMap<Key, u64, BuildHasherDefault<KeyHasher>>>,
}

impl Registry {
    pub(crate) fn new(max_episodes: usize) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            len: AtomicUsize::new(0),
            max_episodes,
            finished: FinishedEpisodes::new(max_episodes),
            revoked: Mutex::default(),
        }
    }

    /// How many live (unfinished) episodes are held.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Stores a new episode under a fresh, unguessable id.
    pub(crate) fn insert(&self, session: Session) -> Result<String, Error> {
        // Reserve a place first, so concurrent creations cannot overshoot the limit.
        if self.len.fetch_add(1, Ordering::AcqRel) >= self.max_episodes {
            self.len.fetch_sub(1, Ordering::AcqRel);
            return Err(Error::TooManyEpisodes(self.max_episodes));
        }
        let Some(key) = new_key() else {
            self.len.fetch_sub(1, Ordering::AcqRel);
            return Err(Error::Internal("the operating system's random number generator failed"));
        };
        let entry = Arc::new(Mutex::new(Entry { session, last_used: Instant::now() }));
        self.shard(key).lock().insert(key, entry);
        Ok(format!("ep-{key:032x}"))
    }

    /// Whether an episode of this id is held here, live or finished.
    pub(crate) fn holds(&self, id: &str) -> bool {
        self.get(id).is_some() || self.finished.contains(id)
    }

    /// Stores an episode under a given id (one rebuilt from the durable log);
    /// an episode held under that id already stays.
    pub(crate) fn insert_as(&self, id: &str, session: Session) -> Result<(), Error> {
        let key = key(id).ok_or_else(|| Error::UnknownEpisode(id.to_owned()))?;
        if self.len.fetch_add(1, Ordering::AcqRel) >= self.max_episodes {
            self.len.fetch_sub(1, Ordering::AcqRel);
            return Err(Error::TooManyEpisodes(self.max_episodes));
        }
        match self.shard(key).lock().entry(key) {
            std::collections::hash_map::Entry::Occupied(_) => {
                self.len.fetch_sub(1, Ordering::AcqRel);
            }
            std::collections::hash_map::Entry::Vacant(place) => {
                place.insert(Arc::new(Mutex::new(Entry { session, last_used: Instant::now() })));
            }
        }
        Ok(())
    }

    /// Drops a live episode: its durable log fell behind it, so its next
    /// request rebuilds it from the log.
    /// Drops the live episode `id` if `which` says it is the copy meant (a
    /// copy rebuilt meanwhile by another request is kept).
    pub(crate) fn evict_if(&self, id: &str, which: impl Fn(&Session) -> bool) {
        let Some(key) = key(id) else { return };
        let mut shard = self.shard(key).lock();
        let meant = shard.get(&key).is_some_and(|entry| entry.try_lock().is_none_or(|entry| which(&entry.session)));
        if meant && shard.remove(&key).is_some() {
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
    }

    pub(crate) fn evict(&self, id: &str) {
        if let Some(key) = key(id)
            && self.shard(key).lock().remove(&key).is_some()
        {
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Runs `f` on a live episode, marking it used.
    pub(crate) fn with<T>(&self, id: &str, f: impl FnOnce(&mut Session) -> T) -> Result<T, Error> {
        self.with_at(id, |session, _| f(session))
    }

    /// Runs `f` on a live episode with the time it was marked used (one
    /// clock reading serves both).
    fn with_at<T>(&self, id: &str, f: impl FnOnce(&mut Session, Instant) -> T) -> Result<T, Error> {
        let entry = self.live(id)?;
        let mut entry = entry.lock();
        let now = Instant::now();
        entry.last_used = now;
        Ok(f(&mut entry.session, now))
    }

    /// A live episode's entry, if any.
    fn get(&self, id: &str) -> Option<Shared> {
        let key = key(id)?;
        self.shard(key).lock().get(&key).cloned()
    }

    /// A live episode's entry; a finished one's id says it is finished.
    fn live(&self, id: &str) -> Result<Shared, Error> {
        let revoked = || key(id).and_then(|key| self.revoked.lock().get(&key).copied());
        match self.get(id) {
            Some(entry) => Ok(entry),
            None => match revoked() {
                Some(timeout_ms) => Err(Error::LeaseExpired(timeout_ms)),
                None if self.finished.contains(id) => Err(Error::EpisodeFinished),
                None => Err(Error::UnknownEpisode(id.to_owned())),
            },
        }
    }

    /// Runs `f` on an episode in play and then, when it left the episode
    /// finished, moves it to the finished ones: its live place is free at
    /// once. Returns `f`'s answer and the trajectory when it finished.
    pub(crate) fn finish<T>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Session) -> Result<T, Error>,
    ) -> Result<(T, Option<toolenv::pb::Trajectory>), Error> {
        let shared = self.live(id)?;
        let (answer, trajectory) = {
            let mut entry = shared.lock();
            entry.last_used = Instant::now();
            if let Some(timeout_ms) = entry.session.revoked {
                return Err(Error::LeaseExpired(timeout_ms));
            }
            let answer = f(&mut entry.session)?;
            let trajectory = entry.session.episode.verdict().is_some().then(|| entry.session.trajectory());
            (answer, trajectory)
        };
        if let Some(trajectory) = &trajectory {
            // Kept as finished before it leaves the live map, so a reader never misses it.
            self.finished.insert(id.to_owned(), trajectory);
            // A live episode's id is a key.
            let key = key(id).unwrap_or_default();
            let mut shard = self.shard(key).lock();
            if shard.get(&key).is_some_and(|entry| Arc::ptr_eq(entry, &shared)) {
                shard.remove(&key);
                self.len.fetch_sub(1, Ordering::AcqRel);
            }
        }
        Ok((answer, trajectory))
    }

    /// An episode's trajectory, live or finished.
    pub(crate) fn trajectory(&self, id: &str) -> Result<toolenv::pb::Trajectory, Error> {
        match self.with(id, |session| session.trajectory()) {
            Err(Error::EpisodeFinished | Error::UnknownEpisode(_) | Error::LeaseExpired(_)) => {
                self.finished.get(id).ok_or_else(|| Error::UnknownEpisode(id.to_owned()))
            }
            other => other,
        }
    }

    /// Keeps an episode as finished, with `trajectory` (its finish as the
    /// durable log holds it), in place of any finish kept before.
    pub(crate) fn keep_finished(&self, id: &str, trajectory: &toolenv::pb::Trajectory) {
        self.finished.insert(id.to_owned(), trajectory);
    }

    /// Forgets a finished episode (its finish was judged on a stale copy).
    pub(crate) fn forget_finished(&self, id: &str) {
        self.finished.remove(id);
    }

    /// A finished episode's trajectory.
    pub(crate) fn finished(&self, id: &str) -> Option<toolenv::pb::Trajectory> {
        self.finished.get(id)
    }

    /// Runs `f` on an episode still in play: one whose lease did not expire
    /// (a revoked episode refuses every call and finish).
    pub(crate) fn with_live<T>(&self, id: &str, f: impl FnOnce(&mut Session) -> Result<T, Error>) -> Result<T, Error> {
        self.with_live_at(id, |session, _| f(session))
    }

    /// [`Registry::with_live`], with the time the episode was marked used:
    /// a tool call's arrival ([`Session::call_as`]).
    pub(crate) fn with_live_at<T>(&self, id: &str, f: impl FnOnce(&mut Session, Instant) -> Result<T, Error>) -> Result<T, Error> {
        self.with_at(id, |session, now| match session.revoked {
            Some(timeout_ms) => Err(Error::LeaseExpired(timeout_ms)),
            None => f(session, now),
        })?
    }

    /// How long an episode has gone unused; `None` when it is not held.
    ///
    /// A call in flight holds its episode: the episode is busy until the
    /// call's reply goes out (after its simulated delay), so a lease never
    /// expires under a slow call; a finished episode (being recorded) is
    /// busy too.
    pub(crate) fn idle_for(&self, id: &str) -> Option<std::time::Duration> {
        let Some(entry) = self.get(id) else {
            return self.finished.contains(id).then_some(Duration::ZERO);
        };
        let idle = entry.try_lock().map_or(Duration::ZERO, |e| e.idle_for(Instant::now()));
        Some(idle)
    }

    /// Refuses every further request on an episode whose lease expired after
    /// `timeout` (its planned episode goes to another worker), and frees its
    /// live place at once. The episode stays readable, as refused, among the
    /// finished ones until it expires.
    pub(crate) fn revoke(&self, id: &str, timeout: Duration) {
        let (Some(key), Some(shared)) = (key(id), self.get(id)) else { return };
        let timeout_ms = timeout.as_millis() as u64;
        let trajectory = {
            let mut entry = shared.lock();
            entry.session.revoked = Some(timeout_ms);
            entry.session.lease = None;
            entry.session.trajectory()
        };
        // Refused as expired before it leaves the live map, so a request never sees it unknown.
        self.revoked.lock().insert(key, timeout_ms);
        self.finished.insert(id.to_owned(), &trajectory);
        let mut shard = self.shard(key).lock();
        if shard.get(&key).is_some_and(|entry| Arc::ptr_eq(entry, &shared)) {
            shard.remove(&key);
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Drops episodes idle for longer than `idle`, and revokes those whose
    /// run lease expired (handing their planned episodes back to the run);
    /// with replicas, drops a leased episode idle for its lease timeout
    /// without revoking it (see below). Returns how many were dropped.
    pub(crate) fn expire(&self, idle: Duration) -> usize {
        let now = Instant::now();
        let mut removed = 0;
        let mut lapsed: Vec<(String, LeaseTag)> = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            let before = shard.len();
            // An episode busy in a call is in use, not idle: skip it.
            shard.retain(|key, entry| {
                let Some(entry) = entry.try_lock() else { return true };
                let idle_for = entry.idle_for(now);
                if let Some(lease) = entry.session.lease.as_ref().filter(|lease| idle_for >= lease.timeout()) {
                    // With replicas the database owns the lease (each logged call
                    // renews it; an append says when it was lost): an idle copy
                    // here is only dropped, and rebuilt from the log if asked for.
                    if entry.session.logged.is_some() {
                        return false;
                    }
                    lapsed.push((format!("ep-{key:032x}"), lease.clone()));
                }
                idle_for < idle
            });
            removed += before - shard.len();
        }
        self.len.fetch_sub(removed, Ordering::AcqRel);
        for (id, lease) in lapsed {
            self.revoke(&id, lease.timeout());
            lease.release(&id);
        }
        let removed = removed + self.finished.expire(idle);
        self.revoked.lock().retain(|key, _| self.finished.contains(&format!("ep-{key:032x}")));
        removed
    }

    /// Episodes held (live, or finished and kept readable), and of those the
    /// live ones (an episode busy in a request counts as live). Locks one
    /// shard at a time.
    pub(crate) fn census(&self) -> (usize, usize) {
        let (mut held, mut live) = (self.finished.len(), 0);
        for shard in self.shards.iter() {
            let shard = shard.lock();
            held += shard.len();
            live += shard.values().filter(|entry| entry.try_lock().is_none_or(|e| e.session.episode.verdict().is_none())).count();
        }
        (held, live)
    }

    fn shard(&self, key: Key) -> &Shard {
        // Keys are random: their top bits spread evenly over the shards
        // (and are not the bits a shard's table indexes by).
        &self.shards[(key >> 96) as usize % SHARDS]
    }
}

/// 128 random bits from the operating system: an episode id's key.
fn new_key() -> Option<Key> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).ok()?;
    Some(Key::from_be_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn episode() -> Session {
        Session::new(Episode::new(&toolenv_domains::suite()[0], 0, 0), false, 0.0, None)
    }

    #[test]
    fn only_well_formed_ids_are_keys_and_new_ids_read_back() {
        let id = format!("ep-{:032x}", 0x0123_4567_89ab_cdef_u128 << 64 | 0xfedc);
        assert_eq!(key(&id), Some(0x0123_4567_89ab_cdef_u128 << 64 | 0xfedc));
        for bad in
            ["", "ep-", "ep-nope", &id.to_uppercase(), &id.replacen("ep-", "EP-", 1), &format!("{id}0"), &id[..34], &id.replace('e', "+")]
        {
            assert_eq!(key(bad), None, "{bad}");
        }
        let registry = Registry::new(4);
        let id = registry.insert(episode()).unwrap();
        assert!(id.len() == 35 && key(&id).is_some(), "{id}");
        assert!(registry.with(&id, |_| ()).is_ok());
        assert!(matches!(registry.with(&id.to_uppercase(), |_| ()), Err(Error::UnknownEpisode(_))));
    }

    #[tokio::test(start_paused = true)]
    async fn enforces_the_limit_and_expires_idle_episodes() {
        let registry = Registry::new(2);
        let a = registry.insert(episode()).unwrap();
        tokio::time::advance(Duration::from_secs(30)).await;
        let b = registry.insert(episode()).unwrap();
        assert_ne!(a, b);
        assert!(matches!(registry.insert(episode()), Err(Error::TooManyEpisodes(2))));
        tokio::time::advance(Duration::from_secs(40)).await;
        assert_eq!(registry.expire(Duration::from_secs(60)), 1, "only the episode idle for 70 s expires");
        assert!(matches!(registry.with(&a, |_| ()), Err(Error::UnknownEpisode(_))));
        assert!(registry.with(&b, |_| ()).is_ok());
        assert_eq!(registry.len(), 1);
        registry.insert(episode()).unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_notes_when_its_reply_goes_out_and_a_revoked_episode_refuses_calls() {
        use toolenv_core::chaos::{Chaos, FaultParams, FaultProfile};
        let weights = std::collections::BTreeMap::from([("TransientTimeout".to_owned(), 1.0)]);
        let params = FaultParams { timeout_ms: 100, ..FaultParams::default() };
        let chaos = Chaos::new(FaultProfile::custom(1.0, &weights, params).unwrap()).unwrap();
        let task = toolenv_domains::task("scheduling/book-meeting/001").unwrap();
        let registry = Registry::new(1);
        let id = registry.insert(Session::new(Episode::new(task, 0, 0).with_chaos(chaos), false, 2.0, None)).unwrap();
        let started = Instant::now();
        let outgoing = registry.with_live(&id, |s| s.call("check_calendar", r#"{"date": "2026-01-01"}"#, None, None)).unwrap();
        assert_eq!(outgoing.delay, Duration::from_millis(200), "100 simulated ms at time scale 2");
        assert_eq!(registry.with(&id, |s| s.last_reply).unwrap(), Some(started + outgoing.delay));
        let status = outgoing.into_response().unwrap_err();
        assert_eq!(status.code(), tonic::Code::DeadlineExceeded);
        let refused = registry.with_live(&id, |s| s.call("fly", "{}", None, None));
        assert!(matches!(refused, Err(Error::UnknownTool { ref available, .. }) if available.contains("book_meeting")), "{refused:?}");

        registry.revoke(&id, Duration::from_secs(3));
        assert!(matches!(registry.with_live(&id, |s| s.call("check_calendar", "{}", None, None)), Err(Error::LeaseExpired(3000))));
        assert_eq!(registry.trajectory(&id).unwrap().calls.len(), 2, "a refused call is not played");
    }

    #[tokio::test(start_paused = true)]
    async fn an_episode_whose_lease_expired_frees_its_live_place_at_once() {
        let registry = Registry::new(1);
        let id = registry.insert(episode()).unwrap();
        assert!(matches!(registry.insert(episode()), Err(Error::TooManyEpisodes(1))));
        registry.revoke(&id, Duration::from_secs(3));
        assert_eq!(registry.len(), 0, "no longer live");
        let next = registry.insert(episode()).expect("its place is free for the worker that takes the planned episode over");
        assert!(matches!(registry.with_live(&id, |_| Ok(())), Err(Error::LeaseExpired(3000))), "still refused as expired");
        assert!(matches!(registry.finish(&id, |_| Ok(())), Err(Error::LeaseExpired(3000))));
        assert!(registry.trajectory(&id).is_ok(), "still readable");
        assert!(registry.with_live(&next, |_| Ok(())).is_ok());
        tokio::time::advance(Duration::from_secs(120)).await;
        registry.with(&next, |_| ()).unwrap();
        registry.expire(Duration::from_secs(60));
        assert!(matches!(registry.with_live(&id, |_| Ok(())), Err(Error::UnknownEpisode(_))), "forgotten once it expires");
    }
}
