//! Suites: named, reproducible sets of tasks. `paper` is the paper's 20
//! tasks, unchanged; `generated:<seed>:<n>` is `n` generated tasks per
//! domain and level from `seed`; `standard` is the preset
//! `generated:2026:100`; `conversational:<seed>:<n>` is the conversational
//! variants of `generated:<seed>:<n>` (see [`super::conversation`]), and
//! `conversational` those of the standard suite; `conversational-paired[:<seed>:<n>]`
//! puts each variant before its task given in full.
//! `file:<hash>` is a task file's tasks, which only a catalogue of task
//! files finds by that name.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::{GENERATOR_VERSION, LEVELS, Origin};
use toolenv_core::{Domain, Task, TaskRef};

/// The standard suite's seed.
pub const STANDARD_SEED: u64 = 2026;
/// The standard suite's tasks per domain and level.
pub const STANDARD_PER_CELL: u32 = 100;
/// Most tasks per domain and level a generated suite may ask for.
pub const MAX_PER_CELL: u32 = 10_000;
/// Generated tasks kept for reuse by [`resolve`].
const CACHE_CAPACITY: usize = 4096;

/// A named set of tasks.
#[derive(Debug, Clone, Default)]
pub enum Suite {
    /// The paper's 20 tasks.
    #[default]
    Paper,
    /// The standard preset: `generated:2026:100`.
    Standard,
    /// `per_cell` generated tasks per domain and level from `seed`.
    Generated {
        /// The suite's seed.
        seed: u64,
        /// Tasks per domain and level.
        per_cell: u32,
    },
    /// The conversational variants of `generated:<seed>:<per_cell>`.
    Conversational {
        /// The suite's seed.
        seed: u64,
        /// Tasks per domain and level.
        per_cell: u32,
        /// Each variant followed by its generated task, given in full
        /// (`conversational-paired`), so that one run measures both.
        paired: bool,
    },
    /// The tasks of a task file (or folder).
    File {
        /// The file's hash, which its tasks' ids carry after `@`.
        hash: String,
        /// Its tasks, in file order.
        tasks: Arc<[Arc<Task>]>,
    },
}

impl PartialEq for Suite {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Suite::File { hash: a, .. }, Suite::File { hash: b, .. }) => a == b,
            (Suite::File { .. }, _) | (_, Suite::File { .. }) => false,
            _ => {
                let paired = |s: &Suite| match s {
                    Suite::Conversational { paired, .. } => Some(*paired),
                    _ => None,
                };
                self.generated() == other.generated()
                    && matches!(self, Suite::Paper) == matches!(other, Suite::Paper)
                    && paired(self) == paired(other)
            }
        }
    }
}

impl Eq for Suite {}

/// Why a suite or a generated task id cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteError {
    /// The suite's name is not `paper`, `standard` or `generated:<seed>:<n>`.
    #[error(
        "unknown suite '{0}': use paper, standard, generated:<seed>:<n>, conversational[-paired][:<seed>:<n>] (n from 1 to {MAX_PER_CELL}) or file:<hash>"
    )]
    UnknownSuite(String),
    /// `file:<hash>` names no task file loaded here.
    #[error("no task file with hash '{0}' is loaded here (load it with --tasks FILE)")]
    NoTaskFile(String),
    /// No task has this id.
    #[error("unknown task '{0}'")]
    UnknownTask(String),
    /// The id is a generated task's (or a conversational variant's) of another generator version.
    #[error("task '{id}' comes from generator version {version}; this build generates version {current}")]
    Version {
        /// The task id.
        id: String,
        /// The generator version it names.
        version: u32,
        /// The version this build generates for such an id.
        current: u32,
    },
}

impl std::str::FromStr for Suite {
    type Err = SuiteError;

    fn from_str(name: &str) -> Result<Self, SuiteError> {
        let unknown = || SuiteError::UnknownSuite(name.to_owned());
        match name {
            "" | "paper" => Ok(Suite::Paper),
            "standard" => Ok(Suite::Standard),
            "conversational" | "conversational-paired" => {
                Ok(Suite::Conversational { seed: STANDARD_SEED, per_cell: STANDARD_PER_CELL, paired: name.ends_with("paired") })
            }
            // Only a catalogue knows its sets: `Catalogue::suite`.
            _ if name.starts_with("file:") => Err(SuiteError::NoTaskFile(name["file:".len()..].to_owned())),
            _ => {
                let (conversational, rest) = match (name.strip_prefix("conversational:"), name.strip_prefix("conversational-paired:")) {
                    (Some(rest), _) => (Some(false), rest),
                    (_, Some(rest)) => (Some(true), rest),
                    _ => (None, name.strip_prefix("generated:").ok_or_else(unknown)?),
                };
                let (seed, per_cell) = rest.split_once(':').ok_or_else(unknown)?;
                let seed: u64 = seed.parse().map_err(|_| unknown())?;
                let per_cell: u32 = per_cell.parse().map_err(|_| unknown())?;
                if per_cell == 0 || per_cell > MAX_PER_CELL {
                    return Err(unknown());
                }
                Ok(match conversational {
                    Some(paired) => Suite::Conversational { seed, per_cell, paired },
                    None => Suite::Generated { seed, per_cell },
                })
            }
        }
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Suite::Paper => f.write_str("paper"),
            Suite::Standard => f.write_str("standard"),
            Suite::Generated { seed, per_cell } => write!(f, "generated:{seed}:{per_cell}"),
            Suite::Conversational { seed, per_cell, paired } => {
                f.write_str(if *paired { "conversational-paired" } else { "conversational" })?;
                if (*seed, *per_cell) == (STANDARD_SEED, STANDARD_PER_CELL) { Ok(()) } else { write!(f, ":{seed}:{per_cell}") }
            }
            Suite::File { hash, .. } => write!(f, "file:{hash}"),
        }
    }
}

impl Suite {
    /// The (seed, tasks per domain and level) of a generated suite.
    pub fn generated(&self) -> Option<(u64, u32)> {
        match self {
            Suite::Paper | Suite::File { .. } => None,
            Suite::Standard => Some((STANDARD_SEED, STANDARD_PER_CELL)),
            Suite::Generated { seed, per_cell } | Suite::Conversational { seed, per_cell, .. } => Some((*seed, *per_cell)),
        }
    }

    /// Whether the suite's tasks are conversational variants.
    pub fn conversational(&self) -> bool {
        matches!(self, Suite::Conversational { .. })
    }

    /// The generator version of a generated suite's tasks (`None` for the paper's).
    pub fn generator_version(&self) -> Option<u32> {
        match self {
            Suite::Conversational { .. } => Some(super::conversation::VERSION),
            suite => suite.generated().map(|_| GENERATOR_VERSION),
        }
    }

    /// How many tasks the suite has.
    pub fn len(&self) -> usize {
        if let Suite::File { tasks, .. } = self {
            return tasks.len();
        }
        match self.generated() {
            None => crate::suite().len(),
            Some((_, per_cell)) => crate::registry::COUNT * LEVELS.len() * per_cell as usize * self.per_origin(),
        }
    }

    /// Whether the suite has no tasks (none has).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The origins of a generated suite's tasks, domain by domain, level by
    /// level, in index order (none for the paper's).
    pub fn origins(&self) -> impl Iterator<Item = Origin> {
        let (seed, per_cell) = self.generated().unwrap_or((0, 0));
        crate::registry::ALL.into_iter().flat_map(move |domain| {
            LEVELS.into_iter().flat_map(move |level| (0..per_cell).map(move |index| Origin { domain, level, seed, index }))
        })
    }

    /// Every task of the suite, in order, optionally of one domain and one
    /// level only (generating only those).
    pub fn tasks(&self, domain: Option<Domain>, level: Option<u8>) -> Vec<TaskRef> {
        self.page(domain, level, 0, usize::MAX)
    }

    /// The `take` tasks after the first `skip` of [`Suite::tasks`],
    /// generating only those.
    pub fn page(&self, domain: Option<Domain>, level: Option<u8>, skip: usize, take: usize) -> Vec<TaskRef> {
        let wanted = wanted(domain, level);
        match self {
            Suite::Paper => crate::suite().iter().filter(|t| wanted(t.domain, t.level)).skip(skip).take(take).map(TaskRef::from).collect(),
            Suite::File { tasks, .. } => {
                tasks.iter().filter(|t| wanted(t.domain, t.level)).skip(skip).take(take).map(|t| TaskRef::from(Arc::clone(t))).collect()
            }
            _ => {
                let n = self.per_origin();
                self.origins()
                    .filter(|o| wanted(o.domain, o.level))
                    .skip(skip / n)
                    .flat_map(|o| self.tasks_of(o))
                    .skip(skip % n)
                    .take(take)
                    .collect()
            }
        }
    }

    /// The tasks of one origin: its generated task, or its conversational
    /// variant (followed by the task in full in a paired suite).
    fn tasks_of(&self, origin: Origin) -> Vec<TaskRef> {
        let task = super::generate(origin);
        match self {
            Suite::Conversational { paired: false, .. } => vec![TaskRef::from(super::conversation::variant(task, &origin))],
            Suite::Conversational { paired: true, .. } => {
                vec![TaskRef::from(super::conversation::variant(task.clone(), &origin)), TaskRef::from(task)]
            }
            _ => vec![TaskRef::from(task)],
        }
    }

    /// Tasks per origin: 2 in a paired conversational suite, else 1.
    fn per_origin(&self) -> usize {
        if matches!(self, Suite::Conversational { paired: true, .. }) { 2 } else { 1 }
    }

    /// How many tasks [`Suite::tasks`] gives, generating none.
    pub fn count(&self, domain: Option<Domain>, level: Option<u8>) -> usize {
        let wanted = wanted(domain, level);
        match self {
            Suite::Paper => crate::suite().iter().filter(|t| wanted(t.domain, t.level)).count(),
            Suite::File { tasks, .. } => tasks.iter().filter(|t| wanted(t.domain, t.level)).count(),
            _ => self.origins().filter(|o| wanted(o.domain, o.level)).count() * self.per_origin(),
        }
    }
}

/// Whether a task of a domain and level passes an optional domain and level filter.
fn wanted(domain: Option<Domain>, level: Option<u8>) -> impl Fn(Domain, u8) -> bool {
    move |d, l| domain.is_none_or(|x| x == d) && level.is_none_or(|x| x == l)
}

/// Finds a task by id: one of the paper's, or a generated one, rebuilt
/// from its id (deterministically) and kept in a bounded cache of recent
/// ones. A task file's task (`id@hash`) is a catalogue's to find.
pub fn resolve(id: &str) -> Result<TaskRef, SuiteError> {
    if let Some(task) = crate::task(id) {
        return Ok(TaskRef::from(task));
    }
    if let Some((_, hash)) = id.split_once('@') {
        return Err(SuiteError::NoTaskFile(hash.to_owned()));
    }
    static CACHE: Mutex<Cache> = Mutex::new(Cache { tasks: BTreeMap::new(), order: VecDeque::new() });
    // The lock guards a plain map; a panic elsewhere leaves it usable.
    if let Some(task) = CACHE.lock().unwrap_or_else(|e| e.into_inner()).tasks.get(id) {
        return Ok(TaskRef::from(Arc::clone(task)));
    }
    // Generated outside the lock: a generation never waits for another.
    let task = super::generate_id(id)?;
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if !cache.tasks.contains_key(id) {
        if cache.order.len() >= CACHE_CAPACITY
            && let Some(oldest) = cache.order.pop_front()
        {
            cache.tasks.remove(&oldest);
        }
        cache.order.push_back(id.to_owned());
        cache.tasks.insert(id.to_owned(), Arc::clone(&task));
    }
    Ok(TaskRef::from(task))
}

/// Recently generated tasks, oldest first out.
struct Cache {
    tasks: BTreeMap<String, Arc<Task>>,
    order: VecDeque<String>,
}

/// The suite a set of task ids comes from, as [`Suite`] names it, and the
/// generator version of its generated tasks (0 for the paper's alone; for
/// conversational variants, their own [`super::conversation::VERSION`]):
/// `paper`; `standard`; `generated:<seed>:<n>` with `n` the highest index
/// seen + 1 (a run over part of a suite, one domain say, names the whole);
/// `conversational[-paired]:<seed>:<n>` likewise for conversational
/// variants (with their tasks in full); `file:<hash>` for the tasks of one
/// task file (their ids carry its hash); or `mixed` for ids of several
/// suites or versions.
pub fn suite_of<'a>(task_ids: impl IntoIterator<Item = &'a str>) -> (String, u32) {
    let mut paper = false;
    // (seed, version, highest index, kinds seen: 1 generated, 2 conversational)
    let mut generated: Option<(u64, u32, u32, u8)> = None;
    let mut file: Option<&str> = None;
    let mut mixed = false;
    for id in task_ids {
        if crate::task(id).is_some() {
            paper = true;
            continue;
        }
        if let Some((_, hash)) = id.split_once('@') {
            mixed |= file.is_some_and(|f| f != hash);
            file = Some(hash);
            continue;
        }
        let conversational = super::conversation::generated_id(id);
        let Some((version, seed, index)) = generated_parts(conversational.as_deref().unwrap_or(id)) else {
            mixed = true;
            continue;
        };
        let kind = if conversational.is_some() { 2 } else { 1 };
        match &mut generated {
            None => generated = Some((seed, version, index, kind)),
            Some((s, v, highest, kinds)) if *s == seed && *v == version => {
                *highest = (*highest).max(index);
                *kinds |= kind;
            }
            Some(_) => mixed = true,
        }
    }
    if let Some(hash) = file {
        let alone = !paper && generated.is_none() && !mixed;
        return if alone { (format!("file:{hash}"), 0) } else { ("mixed".to_owned(), generated.map_or(0, |(_, v, _, _)| v)) };
    }
    match (paper, generated, mixed) {
        (_, _, true) | (true, Some(_), _) => ("mixed".to_owned(), generated.map_or(0, |(_, v, _, _)| v)),
        (_, None, false) => ("paper".to_owned(), 0),
        (false, Some((seed, version, highest, kinds)), false) => {
            let per_cell = highest + 1;
            let suite = match kinds {
                1 => Suite::Generated { seed, per_cell },
                kinds => Suite::Conversational { seed, per_cell, paired: kinds == 3 },
            };
            let name = if suite == (Suite::Generated { seed: STANDARD_SEED, per_cell: STANDARD_PER_CELL }) {
                Suite::Standard.to_string()
            } else {
                suite.to_string()
            };
            // Conversational variants have a version of their own.
            (name, if kinds == 1 { version } else { super::conversation::VERSION })
        }
    }
}

/// The (generator version, seed, index) a generated task id names, whatever its version.
fn generated_parts(id: &str) -> Option<(u32, u64, u32)> {
    let tail = id.rsplit('/').next()?.strip_prefix('g')?;
    parts_of(tail)
}

/// The (generator version, seed, index) of a generated or conversational task id's last part, after its letter.
fn parts_of(tail: &str) -> Option<(u32, u64, u32)> {
    let mut fields = tail.split('-');
    let version = fields.next()?.parse().ok()?;
    let _level: u8 = fields.next()?.parse().ok()?;
    let seed = fields.next()?.parse().ok()?;
    let index = fields.next()?.parse().ok()?;
    Some((version, seed, index))
}

/// The domain and level of a task id, without building the task: a paper
/// task's, or those a generated id names (any generator version). A task
/// file's are a catalogue's to tell.
pub fn domain_and_level(id: &str) -> Option<(Domain, u8)> {
    if let Some(task) = crate::task(id) {
        return Some((task.domain, task.level));
    }
    if id.contains('@') {
        return None;
    }
    let domain = domain_of(id)?;
    let tail = id.rsplit('/').next()?;
    let tail = tail.strip_prefix('g').or_else(|| tail.strip_prefix('c'))?;
    let level = tail.split('-').nth(1)?.parse().ok()?;
    parts_of(tail).map(|_| (domain, level))
}

/// The domain of any task id: its first part (every task's id starts with
/// its domain, a task file's too).
pub fn domain_of(id: &str) -> Option<Domain> {
    crate::registry::parse(id.split('/').next()?)
}
