//! Seeded procedural task generators: tasks as pure functions of (domain,
//! level, seed, index), and the suites made of them.
//!
//! Each domain's generator lives in its folder (`<domain>/generate.rs`) and
//! builds a whole [`Task`]: description slots over a template, an initial
//! state of realistic size with near-duplicate distractor records, the
//! reference solution, the oracle's checks (exact records, content checks on
//! free text and on final answers) and the alternatives it allows; the cheat
//! corpus follows from the task (see [`crate::cheats`]). Levels follow the
//! paper's Table 4: 1, one direct action with every identifier given; 2,
//! search and choose under one constraint or a trap; 3, several constraints
//! and steps over large states, and tasks whose right outcome is to refuse
//! or to answer a question.
//!
//! Randomness comes only from ChaCha8 seeded by a SHA-256 of the task's
//! [`Origin`] (and [`DRAWS_VERSION`]), so a task is byte-identical on every
//! machine and run; its id names its origin and [`GENERATOR_VERSION`], so any
//! process resolves it on demand ([`resolve`]).
//!
//! A generated task is sound for every seed, not only the ones the tests
//! use: no check that counts records ([`Check::Count`]: "one order for
//! C-201: …") may match a record of the initial state, so what it counts is
//! what the episode created or changed, and the right outcome never depends
//! on a look-alike record the customer already had. A draw that breaks the
//! rule is drawn again from the origin's next stream ([`generate`]);
//! `tests/soundness.rs` self-checks generated tasks over many seeds.

pub mod conversation;
mod suite;

use crate::registry::Extensions;
use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

pub use suite::{MAX_PER_CELL, STANDARD_PER_CELL, STANDARD_SEED, Suite, SuiteError, domain_and_level, domain_of, resolve, suite_of};

use toolenv_core::{Check, Domain, Task, json};

/// The version of every generator: part of each generated task's id and of
/// every stored run, so results on other tasks are never silently compared.
/// Bump it whenever a generator's output changes.
///
/// Version 2: a draw whose count check matched a record of the initial
/// state (an order the customer already had, say) is drawn again.
pub const GENERATOR_VERSION: u32 = 2;

/// The version of the key of every origin's random stream. A generator
/// change that keeps most tasks (version 2 redraws only the draws it
/// rejects) keeps it, so the other tasks stay as they were, under new ids.
pub const DRAWS_VERSION: u32 = 1;

/// Draws of one origin tried before the last is kept as it is (then the
/// soundness sweep reports it): a redraw is rare, several in a row rarer.
const MAX_DRAWS: u32 = 16;

/// The levels a generator produces.
pub const LEVELS: [u8; 3] = [1, 2, 3];

/// How a domain generates tasks: the task of an origin (its `generate.rs`).
pub(crate) trait Generator {
    /// The generated task of an origin of this domain, every random choice
    /// drawn from `g`.
    fn generate(origin: &Origin, g: Gen) -> Task;
}

/// Where a generated task comes from: its domain, level, the suite seed and
/// its index among the suite's tasks of that domain and level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    /// The task's domain.
    pub domain: Domain,
    /// Its level, 1 to 3.
    pub level: u8,
    /// The suite's seed.
    pub seed: u64,
    /// Its index within (domain, level) of the suite.
    pub index: u32,
}

impl Origin {
    /// The id of the task of this origin whose kind is `kind`:
    /// `scheduling/reschedule-chain/g1-3-2026-0017`.
    pub fn id(&self, kind: &str) -> String {
        format!("{}/{kind}/g{GENERATOR_VERSION}-{}-{}-{:04}", self.domain, self.level, self.seed, self.index)
    }

    /// Reads the origin back from a generated task's id; `None` for an id
    /// that is not one (a paper task's, say). The version must be this
    /// build's: a task of another generator version cannot be rebuilt.
    pub fn parse(id: &str) -> Option<Result<Self, SuiteError>> {
        let mut parts = id.split('/');
        let (domain, _kind, tail) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let rest = tail.strip_prefix('g')?;
        let mut fields = rest.split('-');
        let version: u32 = fields.next()?.parse().ok()?;
        let level: u8 = fields.next()?.parse().ok()?;
        let seed: u64 = fields.next()?.parse().ok()?;
        let index: u32 = fields.next()?.parse().ok()?;
        if fields.next().is_some() {
            return None;
        }
        if version != GENERATOR_VERSION {
            return Some(Err(SuiteError::Version { id: id.to_owned(), version, current: GENERATOR_VERSION }));
        }
        let Some(domain) = crate::registry::parse(domain) else { return Some(Err(SuiteError::UnknownTask(id.to_owned()))) };
        if !LEVELS.contains(&level) {
            return Some(Err(SuiteError::UnknownTask(id.to_owned())));
        }
        Some(Ok(Self { domain, level, seed, index }))
    }
}

/// Generates the task of an origin: the first of its draws that is
/// unambiguous (see [`ambiguity`]).
pub fn generate(origin: Origin) -> Task {
    let mut draw = 0;
    loop {
        let task = origin.domain.generate(origin, Gen::new(&origin, draw));
        draw += 1;
        if draw == MAX_DRAWS || ambiguity(&task).is_none() {
            return task;
        }
    }
}

/// Why a task's right outcome is ambiguous, if it is: a check that counts
/// records ([`Check::Count`]) already matches a record of the initial state,
/// so it would count a record the episode did not make (the reference
/// solution's order and the one the customer already had), and an agent
/// could read the look-alike as the work already done.
pub fn ambiguity(task: &Task) -> Option<String> {
    let initial = task.initial_json();
    task.checks.iter().find_map(|check| {
        let Check::Count { name, path, pattern, .. } = check else { return None };
        let found = json::members(initial.pointer(path)).into_iter().filter(|m| json::matches(pattern, m)).count();
        (found > 0).then(|| format!("'{name}' already matches {found} record(s) of the initial state"))
    })
}

/// Generates the task with a generated id (or a conversational variant's,
/// see [`conversation`]), if the id is one this build can rebuild and names
/// the kind the generator produces for its origin.
pub fn generate_id(id: &str) -> Result<Arc<Task>, SuiteError> {
    if let Some(version) = conversation::version_of(id).filter(|&v| v != conversation::VERSION) {
        return Err(SuiteError::Version { id: id.to_owned(), version, current: conversation::VERSION });
    }
    if let Some(generated) = conversation::generated_id(id) {
        let origin = Origin::parse(&generated).ok_or_else(|| SuiteError::UnknownTask(id.to_owned()))??;
        let task = conversation::variant(generate(origin), &origin);
        return if task.id == id { Ok(Arc::new(task)) } else { Err(SuiteError::UnknownTask(id.to_owned())) };
    }
    let origin = Origin::parse(id).ok_or_else(|| SuiteError::UnknownTask(id.to_owned()))??;
    let task = generate(origin);
    if task.id != id {
        return Err(SuiteError::UnknownTask(id.to_owned()));
    }
    Ok(Arc::new(task))
}

/// A generator's seeded random source (ChaCha8: the same draws on every
/// platform and version of the crate).
pub(crate) struct Gen {
    rng: ChaCha8Rng,
}

impl Gen {
    /// The random source of one draw of an origin (the first is 0).
    pub(crate) fn new(origin: &Origin, draw: u32) -> Self {
        let mut key = format!("toolenv-generator/v{DRAWS_VERSION}/{}/{}/{}/{}", origin.domain, origin.level, origin.seed, origin.index);
        if draw > 0 {
            key.push_str(&format!("/draw-{draw}"));
        }
        let seed: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        Self { rng: ChaCha8Rng::from_seed(seed) }
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        // Rejection sampling: no modulo bias, so the distribution is exact.
        let n = n as u64;
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.rng.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }

    /// A number in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below((hi - lo + 1) as usize) as u32
    }

    /// True with probability `percent`/100.
    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `items`.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// `items` in a random order (Fisher–Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// `k` distinct members of `items` (all of them when fewer), in a random order.
    pub(crate) fn sample<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        // Shuffles positions, not the items: the same draws, no copy of every item.
        let mut order: Vec<usize> = (0..items.len()).collect();
        self.shuffle(&mut order);
        order.into_iter().take(k).map(|i| items[i].clone()).collect()
    }

    /// Picks an index by weight.
    pub(crate) fn weighted(&mut self, weights: &[usize]) -> usize {
        let mut draw = self.below(weights.iter().sum());
        for (i, &w) in weights.iter().enumerate() {
            if draw < w {
                return i;
            }
            draw -= w;
        }
        weights.len() - 1
    }
}

/// A Monday between 2026-01-05 and late 2026: the generated tasks' "today"
/// (weekdays ahead of it are business days).
pub(crate) fn monday(g: &mut Gen) -> toolenv_core::date::Date {
    let first = toolenv_core::date::Date::from_ymd(2026, 1, 5).expect("a valid date");
    first.add_days(7 * g.below(40) as i64)
}

#[cfg(test)]
mod tests;
