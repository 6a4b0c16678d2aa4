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
//! use toolenv_core::phrasing::Level;
//! use toolenv_domains::perturb::perturb;
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

use toolenv_core::phrasing::{Applied, EpsilonError, Level, Perturbed, Relation};

pub use bank::{MAX_BANK_BYTES, MAX_ENTRIES_PER_TASK, MAX_ENTRY_BYTES, ParaphraseBank};
pub use brittle::brittle_calls;
pub use engine::perturb;
pub use lexicon::Synonym;

/// The words of a domain the perturbation layer may rephrase.
pub(crate) trait Lexicon {
    /// Words and phrases that may be replaced, with their meaning-preserving alternatives.
    const SYNONYMS: &'static [Synonym];
    /// Irrelevant sentences that may be added to a description.
    const DISTRACTORS: &'static [&'static str];
}

/// Why a perturbation input was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PerturbError {
    /// ε is not one of the levels.
    #[error(transparent)]
    Epsilon(#[from] EpsilonError),
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
