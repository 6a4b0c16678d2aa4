//! The task file format, version 1, as serde reads and writes it: every
//! struct refuses unknown fields, so a misspelt field is an error with its
//! JSON pointer, not a silently ignored line. `schema/task-file.v1.json`
//! describes the same shape for editors.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use toolenv_core::{Check, Fact, Task, phrasing::Relation};

/// The format's version; a file says which it is written in.
pub const VERSION: u32 = 1;

/// A task file: one or many tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// The format's version: 1.
    pub version: u32,
    /// What the file is for, for people (optional).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// The tasks, in the order they are listed and played.
    pub tasks: Vec<TaskSpec>,
}

/// One task as a file writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// `domain/kind/name`: the kind picks the solver's strategy (one the
    /// domain's tasks have, such as `book-meeting`), the name is the file's.
    pub id: String,
    /// What the task is for, for people (optional; JSON has no comments).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// The domain's name: `scheduling`, `travel`, `support` or `ecommerce`.
    pub domain: String,
    /// Complexity level, 1 to 3.
    pub level: u8,
    /// What the agent is asked, with `{slot}` placeholders.
    pub description: String,
    /// Alternative phrasings the perturbation layer may use (optional).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantSpec>,
    /// The placeholders' values, in order: `{"topic": "Review", …}`.
    #[serde(default, serialize_with = "write_slots", deserialize_with = "read_slots")]
    pub slots: Vec<(String, String)>,
    /// The episode's "today", `YYYY-MM-DD` (default: the fixture's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub today: Option<String>,
    /// The whole initial state (or `fixture`, not both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// A built-in task whose initial state (and today) this task starts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture: Option<String>,
    /// Changes to the fixture's state: JSON pointer → new value (`null`
    /// removes the key), applied in pointer order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub changes: BTreeMap<String, Value>,
    /// The reference solution: the calls a perfect agent makes.
    pub reference: Vec<CallSpec>,
    /// The expected outcome: checks over the end state and the final answer.
    pub expect: Vec<CheckSpec>,
    /// Where the end state may differ from the reference's (JSON-pointer
    /// patterns; `*` any one segment, `+` a new record). Everywhere else the
    /// collateral check wants exactly the reference's end state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<String>,
}

/// One alternative phrasing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// The structural relations it applies: `reordering`, `paraphrase`,
    /// `voice`, `split_merge`.
    pub tags: Vec<String>,
    /// The phrasing, with the same placeholders.
    pub text: String,
}

/// One call of the reference solution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// The tool's name.
    pub tool: String,
    /// Its arguments, a JSON object.
    pub arguments: Value,
}

/// One check of the expected outcome: the core's [`Check`], field for field
/// (`name` is what the check asserts, for people; paths are JSON pointers
/// into the end state).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CheckSpec {
    /// [`Check::Equals`]: the value at `path` equals `expected` (`null`: absent).
    Equals { name: String, path: String, expected: Value },
    /// [`Check::Present`]: the value at `path` exists and is not empty.
    Present { name: String, path: String },
    /// [`Check::Text`]: the free text at `path` states `facts`.
    Text { name: String, path: String, facts: Vec<FactSpec> },
    /// [`Check::Count`]: exactly `expected` members at `path` match `pattern`.
    Count { name: String, path: String, pattern: Value, expected: usize },
    /// [`Check::Answer`]: the final answer states `facts`; `example` does.
    Answer { name: String, facts: Vec<FactSpec>, example: String },
}

/// One thing a text must or must not say: the core's [`Fact`], field for
/// field (`label` says what the phrases or the value stand for).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FactSpec {
    /// [`Fact::Says`]: one of the phrases, asserted.
    Says { label: String, any_of: Vec<String> },
    /// [`Fact::Amount`]: an amount of money, in cents, in any common format.
    Amount { cents: i64 },
    /// [`Fact::Never`]: none of the phrases (the contrary).
    Never { label: String, any_of: Vec<String> },
    /// [`Fact::Mentions`]: a value the text must name.
    Mentions { label: String, phrase: String },
    /// [`Fact::Omits`]: a value the text must not name.
    Omits { label: String, phrase: String },
}

impl TaskSpec {
    /// A task written in the format: the whole initial state, every field
    /// the task has (what `toolenv tasks export` writes); a loaded task's
    /// id without its file's hash.
    pub fn of(task: &Task) -> Self {
        let name = |tags: &[Relation]| tags.iter().map(|t| t.name().to_owned()).collect();
        Self {
            id: task.id.split('@').next().unwrap_or_default().to_owned(),
            comment: String::new(),
            domain: task.domain.name().to_owned(),
            level: task.level,
            description: task.template.text.to_owned(),
            variants: task.template.variants.iter().map(|v| VariantSpec { tags: name(v.tags), text: v.text.to_owned() }).collect(),
            slots: task.slots.iter().map(|s| (s.name.to_owned(), s.value.clone())).collect(),
            today: Some(task.today.to_string()),
            state: Some(task.initial_json().clone()),
            fixture: None,
            changes: BTreeMap::new(),
            reference: task.reference.iter().map(|c| CallSpec { tool: c.tool.to_owned(), arguments: c.arguments.clone() }).collect(),
            expect: task.checks.iter().map(CheckSpec::of).collect(),
            alternatives: task.alternatives.iter().map(|&a| a.to_owned()).collect(),
        }
    }
}

impl CheckSpec {
    /// The check as a file writes it.
    pub fn of(check: &Check) -> Self {
        let facts = |facts: &[Fact]| facts.iter().map(FactSpec::of).collect();
        match check {
            Check::Equals { name, path, expected } => {
                CheckSpec::Equals { name: name.clone(), path: path.clone(), expected: expected.clone() }
            }
            Check::Present { name, path } => CheckSpec::Present { name: name.clone(), path: path.clone() },
            Check::Text { name, path, facts: f } => CheckSpec::Text { name: name.clone(), path: path.clone(), facts: facts(f) },
            Check::Count { name, path, pattern, expected } => {
                CheckSpec::Count { name: name.clone(), path: path.clone(), pattern: pattern.clone(), expected: *expected }
            }
            Check::Answer { name, facts: f, example } => {
                CheckSpec::Answer { name: name.clone(), facts: facts(f), example: example.clone() }
            }
        }
    }
}

impl FactSpec {
    /// The fact as a file writes it.
    pub fn of(fact: &Fact) -> Self {
        let list = |any_of: &[&str]| any_of.iter().map(|&p| p.to_owned()).collect();
        match fact {
            Fact::Says { label, any_of } => FactSpec::Says { label: (*label).to_owned(), any_of: list(any_of) },
            Fact::Amount { cents } => FactSpec::Amount { cents: *cents },
            Fact::Never { label, any_of } => FactSpec::Never { label: (*label).to_owned(), any_of: list(any_of) },
            Fact::Mentions { label, phrase } => FactSpec::Mentions { label: label.clone(), phrase: phrase.clone() },
            Fact::Omits { label, phrase } => FactSpec::Omits { label: label.clone(), phrase: phrase.clone() },
        }
    }
}

/// Writes slots as one JSON object, in their order.
fn write_slots<S: Serializer>(slots: &[(String, String)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(slots.iter().map(|(k, v)| (k, v)))
}

/// Reads slots from one JSON object, keeping their order (which the
/// perturbation layer's draws follow) and refusing a name given twice.
fn read_slots<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<(String, String)>, D::Error> {
    struct Slots;
    impl<'de> Visitor<'de> for Slots {
        type Value = Vec<(String, String)>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of slot names to text values")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut slots: Vec<(String, String)> = Vec::new();
            while let Some((name, value)) = map.next_entry::<String, String>()? {
                if slots.iter().any(|(n, _)| *n == name) {
                    return Err(serde::de::Error::custom(format!("slot '{name}' is given twice")));
                }
                slots.push((name, value));
            }
            Ok(slots)
        }
    }
    deserializer.deserialize_map(Slots)
}
