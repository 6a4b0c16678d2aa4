//! The perturbation layer's pure core: Action Metamorphic Relations that
//! rephrase a task's description without changing what the task asks for,
//! composed by perturbation level ε.
//!
//! A perturbed description is rendered, not edited: a phrasing (the
//! canonical template, an alternative from the template bank, or a
//! user-supplied paraphrase) is filled with the task's slot values, each
//! written in a chosen format. So identifiers, names, amounts and quoted texts
//! always appear verbatim; only dates, times and the wording around the slots
//! vary. A correction always ends on the true value, and a relative date
//! always resolves to the true date from the task's `today`.
//!
//! Two rules (in `meaning.rs`) keep what the words refer to: a distractor is
//! never placed right before a sentence that refers back ("Cancel it.",
//! "If that slot is taken, …"), and a correction's wrong value is always one
//! that would make an agent who followed it fail the oracle; a task with no
//! such value gets no correction. The tests prove both, with every slot value
//! readable and number agreement, for every task × ε × 1,000 seeds.
//!
//! The result is a pure function of (task, level, seed, bank): the only
//! randomness is a ChaCha8 generator seeded from the seed, a stable hash of
//! the task id and the level.
//!
//! ```
//! use toolenv_domains::perturb::{Level, perturb};
//!
//! let task = toolenv_domains::task("scheduling/book-meeting/001").expect("a suite task");
//! assert_eq!(perturb(task, Level::Canonical, 7, None).description, task.description());
//!
//! let light = perturb(task, Level::Light, 7, None);
//! assert_ne!(light.description, task.description());
//! assert!(light.applied.iter().all(|a| Level::Light.relations().contains(&a.relation)));
//! assert_eq!(light, perturb(task, Level::Light, 7, None), "same inputs, same text");
//! ```

mod bank;
mod brittle;
mod engine;
pub(crate) mod lexicon;
mod meaning;
mod phrasing;
pub(crate) mod templates;
mod temporal;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

pub use bank::{MAX_BANK_BYTES, MAX_ENTRIES_PER_TASK, MAX_ENTRY_BYTES, ParaphraseBank};
pub use brittle::brittle_calls;
pub use engine::perturb;
pub use lexicon::Synonym;
pub use templates::Template;

/// A perturbation level ε: how hard a description is rephrased.
///
/// Levels are cumulative: each adds its own relations to those of the level
/// below and applies at least one of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// ε = 0: the canonical description, unchanged.
    Canonical,
    /// ε = 0.1: synonyms, date and time formats, reordered constraints.
    Light,
    /// ε = 0.2: adds distractors, corrections and paraphrases.
    Medium,
    /// ε = 0.3: adds voice changes, split/merged instructions, relative
    /// dates, and combines at least three relations.
    Heavy,
}

impl Level {
    /// Every level, from ε = 0 up.
    pub const ALL: [Level; 4] = [Level::Canonical, Level::Light, Level::Medium, Level::Heavy];

    /// The level of ε ∈ {0, 0.1, 0.2, 0.3} (within 1e-6).
    pub fn from_epsilon(epsilon: f64) -> Result<Level, PerturbError> {
        Self::ALL.into_iter().find(|l| (l.epsilon() - epsilon).abs() < 1e-6).ok_or(PerturbError::Epsilon(epsilon))
    }

    /// The level's ε.
    pub fn epsilon(self) -> f64 {
        match self {
            Level::Canonical => 0.0,
            Level::Light => 0.1,
            Level::Medium => 0.2,
            Level::Heavy => 0.3,
        }
    }

    /// The relations a perturbation at this level may apply: its own and
    /// those of every level below.
    pub fn relations(self) -> &'static [Relation] {
        use Relation::*;
        const ALL: [Relation; 9] = [Synonym, DateFormat, Reordering, Distractor, Correction, Paraphrase, Voice, SplitMerge, RelativeTime];
        match self {
            Level::Canonical => &[],
            Level::Light => &ALL[..3],
            Level::Medium => &ALL[..6],
            Level::Heavy => &ALL,
        }
    }

    /// The relations this level adds to the one below.
    pub fn own_relations(self) -> &'static [Relation] {
        let below = match self {
            Level::Canonical | Level::Light => 0,
            Level::Medium => 3,
            Level::Heavy => 6,
        };
        &self.relations()[below..]
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.epsilon())
    }
}

/// An Action Metamorphic Relation (the paper's Table 2): a change to a
/// description that keeps the task's goal state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// Replaces phrases with synonyms from the domain's lexicon.
    Synonym,
    /// Uses another phrasing from the template bank or the paraphrase bank.
    Paraphrase,
    /// Switches between active and passive voice.
    Voice,
    /// Permutes the order of the constraints.
    Reordering,
    /// Splits an instruction into several sentences, or merges sentences.
    SplitMerge,
    /// Adds an irrelevant sentence, never right before a sentence that
    /// refers back.
    Distractor,
    /// Gives a wrong value first, then corrects it to the true one; the
    /// wrong value is one an agent that followed it would fail with.
    Correction,
    /// Writes dates and times in another format.
    DateFormat,
    /// Writes a date relative to the episode's today.
    RelativeTime,
}

impl Relation {
    /// The relation's snake_case name, as serialized.
    pub fn name(self) -> &'static str {
        match self {
            Relation::Synonym => "synonym",
            Relation::Paraphrase => "paraphrase",
            Relation::Voice => "voice",
            Relation::Reordering => "reordering",
            Relation::SplitMerge => "split_merge",
            Relation::Distractor => "distractor",
            Relation::Correction => "correction",
            Relation::DateFormat => "date_format",
            Relation::RelativeTime => "relative_time",
        }
    }

    /// The lowest level that applies the relation.
    pub fn tier(self) -> Level {
        match self {
            Relation::Synonym | Relation::DateFormat | Relation::Reordering => Level::Light,
            Relation::Distractor | Relation::Correction | Relation::Paraphrase => Level::Medium,
            Relation::Voice | Relation::SplitMerge | Relation::RelativeTime => Level::Heavy,
        }
    }

    /// Whether the relation picks the phrasing (rather than acting on words or slots).
    fn is_structural(self) -> bool {
        matches!(self, Relation::Paraphrase | Relation::Voice | Relation::Reordering | Relation::SplitMerge)
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One relation as applied to a description, with its parameters.
///
/// Parameters by relation: synonym `from`, `to`; paraphrase, voice,
/// reordering and split/merge `source` (`template_bank` or `paraphrase_bank`)
/// and `variant` (index in that bank); date format `slot`, `format` (a pattern
/// such as `Month D, YYYY`), `text`; relative time `slot`, `text`, `today`,
/// `resolves_to`; correction `slot`, `wrong`, `true` (both as written) and
/// `style` (`sorry_i_meant`, `make_that`, `correction`: inline, as in `2026-01-02
/// (sorry, I meant 2026-01-01)`; `got_it_wrong`, `not_but`: a closing
/// sentence, as in `One correction: the date is not 2026-01-02 but
/// 2026-01-01.`); distractor `position` (`start`, `end` or `after sentence N`)
/// and `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// The relation.
    pub relation: Relation,
    /// Its parameters, in a stable order.
    pub params: BTreeMap<String, String>,
}

impl Applied {
    fn new<const N: usize>(relation: Relation, params: [(&str, String); N]) -> Self {
        Self { relation, params: params.into_iter().map(|(k, v)| (k.to_owned(), v)).collect() }
    }

    /// A parameter's value, if it has one.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }
}

/// A perturbed description and what was done to get it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Perturbed {
    /// The description the agent sees.
    pub description: String,
    /// The relations applied, in the order they were applied.
    pub applied: Vec<Applied>,
}

/// Why a perturbation input was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PerturbError {
    /// ε is not one of the levels.
    #[error("epsilon {0} is not a perturbation level: use 0, 0.1, 0.2 or 0.3")]
    Epsilon(f64),
    /// The paraphrase bank is too large.
    #[error("paraphrase bank is {bytes} bytes, more than the limit of {limit}")]
    BankTooLarge {
        /// Its size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The paraphrase bank is not a JSON object of task id to list of strings.
    #[error("paraphrase bank is not a json object of task id to a list of descriptions: {0}")]
    BankJson(String),
    /// The paraphrase bank names a task the suite does not have.
    #[error("paraphrase bank names unknown task {0}")]
    UnknownTask(String),
    /// A task has more entries than allowed.
    #[error("paraphrase bank has {count} entries for {task}, more than the limit of {limit}")]
    TooManyEntries {
        /// The task id.
        task: String,
        /// How many entries it has.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// An entry is too long.
    #[error("paraphrase bank entry {index} of {task} is {bytes} bytes, more than the limit of {limit}")]
    EntryTooLong {
        /// The task id.
        task: String,
        /// The entry's index in the task's list.
        index: usize,
        /// Its size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// An entry lacks a slot value (in every accepted format).
    #[error("paraphrase bank entry {index} of {task} lacks slot {slot} (value {value})")]
    MissingSlot {
        /// The task id.
        task: String,
        /// The entry's index in the task's list.
        index: usize,
        /// The slot's name.
        slot: String,
        /// The slot's value.
        value: String,
    },
    /// An entry mentions a date or time that is no slot's value.
    #[error("paraphrase bank entry {index} of {task} mentions {text}, which is no slot's value")]
    StrayValue {
        /// The task id.
        task: String,
        /// The entry's index in the task's list.
        index: usize,
        /// The date or time as written.
        text: String,
    },
    /// An entry is the canonical description itself.
    #[error("paraphrase bank entry {index} of {task} is the canonical description")]
    Canonical {
        /// The task id.
        task: String,
        /// The entry's index in the task's list.
        index: usize,
    },
}
