//! Lexicons: the shape of the meaning-preserving synonyms each domain lists
//! in its `phrasing.rs` (for the synonym relation), and the generic
//! irrelevant sentences added to each domain's own (for the distractor
//! relation), written for this project.
//!
//! A synonym entry matches its exact text at word boundaries (so `Cancel the`
//! does not match `cancelled`, and `Order` does not match the noun `order`).
//! Entries avoid the words that carry a task's meaning (which address, which
//! tier, open or closed) and the tool vocabulary an agent maps to calls.

use crate::registry::Extensions;
use toolenv_core::Domain;

/// A phrase and the phrases that may replace it.
#[derive(Debug, Clone, Copy)]
pub struct Synonym {
    /// The phrase as it appears in a phrasing.
    pub(crate) from: &'static str,
    /// Its replacements, any of which keeps the meaning.
    pub(crate) to: &'static [&'static str],
}

pub(crate) const fn syn(from: &'static str, to: &'static [&'static str]) -> Synonym {
    Synonym { from, to }
}

/// The marker for a date before the episode's today, filled in when a
/// distractor is used.
pub(crate) const PAST_DATE: &str = "{past_date}";

const GENERIC: &[&str] = &[
    "Thanks in advance; it has been a hectic week.",
    "I am writing this from my phone, so please excuse the brevity.",
    "By the way, the coffee machine on our floor is broken again.",
];

/// The irrelevant sentences a distractor may add in a domain: the domain's
/// own, then generic ones. None gives an instruction (starts with a verb an
/// instruction starts with, asks for anything, or is a question), names a
/// slot value or a name, code, date or time of any task's state, or mentions
/// a date but the `{past_date}` marker (always before the episode's today).
/// The test `distractors_give_no_instruction_and_name_nothing_any_task_knows`
/// enforces it for every domain.
pub(crate) fn distractors(domain: Domain) -> impl Iterator<Item = &'static str> {
    domain.distractors().iter().chain(GENERIC).copied()
}
