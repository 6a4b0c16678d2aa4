//! What a task's verdict checks, as data: [`Check`]s over the end state
//! and the final answer, and the [`Fact`]s free text must state. The task
//! holds them; the oracle (`oracle/`) evaluates them.

use serde::Serialize;
use serde_json::Value;

/// A predicate over the final state (with the initial state for reference).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    /// The value at a JSON pointer equals the expected value; `null`
    /// expects the location to be absent.
    Equals {
        /// What the check asserts, for people.
        name: String,
        /// JSON pointer into the final state.
        path: String,
        /// The expected value.
        expected: Value,
    },
    /// The value at a JSON pointer is present and not empty (not null, not
    /// blank text, not an empty list or object): for free text such as a
    /// resolution, whose wording no check can predict.
    Present {
        /// What the check asserts, for people.
        name: String,
        /// JSON pointer into the final state.
        path: String,
    },
    /// The free text at a JSON pointer says what the task or its policy
    /// requires, and not the contrary (see [`Fact`]); a placeholder fails.
    /// The text's wording is otherwise free: the collateral check leaves it
    /// to this check.
    Text {
        /// What the check asserts, for people.
        name: String,
        /// JSON pointer of the text in the final state.
        path: String,
        /// What the text must (and must not) say.
        facts: Vec<Fact>,
    },
    /// Exactly `expected` members of the collection (object or array) at a
    /// JSON pointer match a pattern (see [`crate::json::matches`]).
    Count {
        /// What the check asserts, for people.
        name: String,
        /// JSON pointer of the collection in the final state.
        path: String,
        /// The pattern members must match.
        pattern: Value,
        /// How many members must match.
        expected: usize,
    },
    /// The agent's final answer (the text it finishes the episode with)
    /// says what the task asks for, and not the contrary (see [`Fact`]): an
    /// information request's facts, a refusal's reason. No answer fails.
    Answer {
        /// What the check asserts, for people.
        name: String,
        /// What the answer must (and must not) say.
        facts: Vec<Fact>,
        /// An answer that passes: what the reference solution answers.
        example: String,
    },
}

/// One thing free text must (or must not) say.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fact {
    /// At least one of the phrases, asserted (not negated in its clause): a
    /// decision, a reason.
    Says {
        /// What the phrases stand for ("approval").
        label: &'static str,
        /// The phrases, any of which states it.
        any_of: &'static [&'static str],
    },
    /// An amount of money, in any common format.
    Amount {
        /// The amount in cents.
        cents: i64,
    },
    /// None of the phrases: the contrary decision.
    Never {
        /// What the phrases stand for ("denial").
        label: &'static str,
        /// The phrases, none of which may appear (negated or not).
        any_of: &'static [&'static str],
    },
    /// A value of the task's own (a flight number, a topic, a time), its
    /// words in a row and asserted: what an answer must name.
    Mentions {
        /// What the value is ("the cheapest flight").
        label: String,
        /// The value.
        phrase: String,
    },
    /// A value that must not appear at all: a near-duplicate record the
    /// answer must not name instead of (or besides) the right one.
    Omits {
        /// What the value is ("the dearer flight").
        label: String,
        /// The value.
        phrase: String,
    },
}
