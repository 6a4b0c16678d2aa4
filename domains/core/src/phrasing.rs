//! What a description is made of and what was done to it: a task's
//! template with its alternative phrasings, the perturbation levels ε, the
//! Action Metamorphic Relations and the record of those applied. Data only:
//! the engine that perturbs a description lives in `toolenv_domains::perturb`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// ε is not one of the perturbation levels.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("epsilon {0} is not a perturbation level: use 0, 0.1, 0.2 or 0.3")]
pub struct EpsilonError(pub f64);

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
    pub fn from_epsilon(epsilon: f64) -> Result<Level, EpsilonError> {
        Self::ALL.into_iter().find(|l| (l.epsilon() - epsilon).abs() < 1e-6).ok_or(EpsilonError(epsilon))
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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
    /// The relation of a snake_case name (as [`Relation::name`] writes it).
    pub fn from_name(name: &str) -> Option<Relation> {
        Relation::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(name)).ok()
    }

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
    pub fn is_structural(self) -> bool {
        matches!(self, Relation::Paraphrase | Relation::Voice | Relation::Reordering | Relation::SplitMerge)
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
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
    /// A relation applied with its parameters.
    pub fn new<const N: usize>(relation: Relation, params: [(&str, String); N]) -> Self {
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

/// One alternative phrasing of a template.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// The structural relations this phrasing applies to the canonical one.
    pub tags: &'static [Relation],
    /// The phrasing, with `{slot}` placeholders.
    pub text: &'static str,
}

/// A task's description template, with its alternative phrasings.
#[derive(Debug, Clone, Copy)]
pub struct Template {
    /// The canonical description, with `{slot}` placeholders.
    pub text: &'static str,
    /// Its alternatives (none for a template written outside the suite).
    pub variants: &'static [Variant],
}

impl Template {
    /// A template without alternative phrasings.
    pub const fn plain(text: &'static str) -> Self {
        Self { text, variants: &[] }
    }
}

#[cfg(test)]
mod relation_tests {
    use super::Relation;

    #[test]
    fn a_relation_is_read_back_from_its_name() {
        use Relation::*;
        for relation in [Synonym, Paraphrase, Voice, Reordering, SplitMerge, Distractor, Correction, DateFormat, RelativeTime] {
            assert_eq!(Relation::from_name(relation.name()), Some(relation));
            assert_eq!(serde_json::to_value(relation).unwrap(), relation.name());
        }
        assert_eq!(Relation::from_name("Synonym"), None);
        assert_eq!(Relation::from_name("teleport"), None);
    }
}
