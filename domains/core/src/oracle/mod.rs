//! State-based oracles: checks over (S0, Sf), content checks on free text,
//! the exact collateral check, verdicts.

mod answer;
pub mod ruling;
mod text;
pub mod typed;
mod words;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Value, json};

use crate::{
    check::{Check, Fact},
    diff::{self, Changes, View},
    json::{self, Change},
    task::Task,
};

impl Check {
    /// The value at `path` must equal `expected` (`null`: must be absent).
    pub fn equals(name: impl Into<String>, path: impl Into<String>, expected: Value) -> Self {
        Check::Equals { name: name.into(), path: path.into(), expected }
    }

    /// The value at `path` must be present and not empty.
    pub fn present(name: impl Into<String>, path: impl Into<String>) -> Self {
        Check::Present { name: name.into(), path: path.into() }
    }

    /// The text at `path` must state `facts`.
    pub fn text(name: impl Into<String>, path: impl Into<String>, facts: impl Into<Vec<Fact>>) -> Self {
        Check::Text { name: name.into(), path: path.into(), facts: facts.into() }
    }

    /// Exactly `expected` members of the collection at `path` must match `pattern`.
    pub fn count(name: impl Into<String>, path: impl Into<String>, pattern: Value, expected: usize) -> Self {
        Check::Count { name: name.into(), path: path.into(), pattern, expected }
    }

    /// The final answer must state `facts`; `example` is one that does.
    pub fn answer(name: impl Into<String>, facts: impl Into<Vec<Fact>>, example: impl Into<String>) -> Self {
        Check::Answer { name: name.into(), facts: facts.into(), example: example.into() }
    }

    /// Evaluates the check against a final state, with no final answer.
    pub fn evaluate(&self, final_state: &Value) -> CheckOutcome {
        self.evaluate_with(final_state, None)
    }

    /// Evaluates the check against a final state and the agent's final answer.
    /// Without its task, an answer is held to its facts only, not to what
    /// it commits to (see [`Verdict::judge_answered`]).
    pub fn evaluate_with(&self, final_state: &Value, answer: Option<&str>) -> CheckOutcome {
        self.evaluate_in(View::of(final_state), answer.into(), None)
    }

    /// Evaluates the check against an end state given as its changes; an
    /// answer is held to what it commits to when `task` is given.
    fn evaluate_in(&self, final_state: View<'_>, answer: Answer<'_>, task: Option<&Task>) -> CheckOutcome {
        let at = |path: &str| final_state.get(path);
        match self {
            Check::Equals { name, path, expected } => {
                let actual = at(path).map_or(Value::Null, Cow::into_owned);
                let passed = json::matches(expected, &actual) && json::matches(&actual, expected);
                CheckOutcome { name: name.clone(), passed, expected: expected.clone(), actual }
            }
            Check::Present { name, path } => {
                let actual = at(path).map_or(Value::Null, Cow::into_owned);
                let passed = match &actual {
                    Value::Null => false,
                    Value::String(text) => !text.trim().is_empty(),
                    Value::Array(items) => !items.is_empty(),
                    Value::Object(map) => !map.is_empty(),
                    Value::Bool(_) | Value::Number(_) => true,
                };
                CheckOutcome { name: name.clone(), passed, expected: Value::from("a non-empty value"), actual }
            }
            Check::Text { name, path, facts } => {
                let (passed, actual) = text::judge(at(path).as_deref().and_then(Value::as_str), facts);
                CheckOutcome { name: name.clone(), passed, expected: text::expected(facts), actual }
            }
            Check::Count { name, path, pattern, expected } => {
                let found = final_state.count_members(path, |m| json::matches(pattern, m));
                CheckOutcome {
                    name: name.clone(),
                    passed: found == *expected,
                    expected: Value::from(*expected),
                    actual: Value::from(found),
                }
            }
            Check::Answer { name, facts, .. } => {
                let answer = match answer {
                    Answer::Typed(given) => {
                        let fields = typed::fields(facts);
                        let (passed, actual) = typed::judge(&fields, given);
                        return CheckOutcome { name: name.clone(), passed, expected: typed::example(&fields), actual };
                    }
                    Answer::Ruled(text, ruling) => {
                        let actual = json!({"text": text, "judged_by": ruling.judge, "reason": ruling.reason});
                        return CheckOutcome { name: name.clone(), passed: ruling.correct, expected: text::expected(facts), actual };
                    }
                    Answer::Prose(text) => Some(text),
                    Answer::None => None,
                };
                let (passed, actual) = match task {
                    Some(task) => {
                        let commitment = task.commitment();
                        let year = Some(task.today.ymd().0);
                        let names: Vec<&str> = task.slots.iter().map(|s| s.value.as_str()).collect();
                        text::judge_named(answer, facts, year, &names, |read| commitment.breaches(read))
                    }
                    None => text::judge(answer, facts),
                };
                CheckOutcome { name: name.clone(), passed, expected: text::expected(facts), actual }
            }
        }
    }
}

/// The final answer an agent finished with: prose that content checks read,
/// prose an answer judge ruled on (its ruling decides), or a typed answer
/// (a JSON object of the fields [`typed::fields`] names).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Answer<'a> {
    #[default]
    None,
    Prose(&'a str),
    Ruled(&'a str, &'a ruling::AnswerRuling),
    Typed(&'a Value),
}

impl<'a> From<Option<&'a str>> for Answer<'a> {
    fn from(answer: Option<&'a str>) -> Self {
        answer.map_or(Answer::None, Answer::Prose)
    }
}

/// The name of the check every verdict ends with.
pub const COLLATERAL_CHECK: &str = "collateral: nothing changed that the task did not ask for";

/// The name of the check that flags a write applied twice: a blind retry of
/// a call whose reply was lost (an ambiguous commit) without an idempotency key.
pub const DUPLICATE_CHECK: &str = "collateral: no write applied twice by a blind retry";

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckOutcome {
    /// What the check asserts.
    pub name: String,
    /// Whether it held.
    pub passed: bool,
    /// The expected value.
    pub expected: Value,
    /// The value found.
    pub actual: Value,
}

/// The oracle's judgement of an end state: its checks, the state diff and
/// the states' hashes. An episode's [`crate::Judgement`] adds what the
/// episode and the layers above know.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// True when every check passed.
    pub passed: bool,
    /// Every check in the task's order, the collateral check last.
    pub checks: Vec<CheckOutcome>,
    /// What changed between S0 and Sf.
    pub diff: Vec<Change>,
    /// SHA-256 of S0's canonical JSON.
    pub initial_state_hash: String,
    /// SHA-256 of Sf's canonical JSON.
    pub final_state_hash: String,
}

impl Verdict {
    /// Judges a final state of the task (its initial state after an
    /// episode), with no final answer.
    pub fn judge(task: &Task, final_state: &Value) -> Self {
        Self::judge_answered(task, final_state, Answer::None)
    }

    /// Judges a final state of the task and the agent's final answer.
    pub fn judge_answered<'a>(task: &Task, final_state: &Value, answer: impl Into<Answer<'a>>) -> Self {
        let changes = Changes::between(task.initial_json(), final_state);
        Self::judge_changes(task, &changes, Some(json::state_hash(final_state)), answer)
    }

    /// Judges an end state given as the changes it made to the task's
    /// initial state. A verdict for the record has the end state's hash,
    /// which the caller knows, and lists the state diff; a verdict only for
    /// pass or fail (`None`) has neither, nor the initial state's hash.
    pub fn judge_changes<'a>(task: &Task, changes: &Changes, final_state_hash: Option<String>, answer: impl Into<Answer<'a>>) -> Self {
        Self::judge_compared(task, changes, final_state_hash, answer).0
    }

    /// [`Verdict::judge_changes`], and whether the end state differs from
    /// the one the task asks for outside the task's alternatives (free text
    /// included; see [`unexpected_leaves`]).
    pub fn judge_compared<'a>(
        task: &Task,
        changes: &Changes,
        final_state_hash: Option<String>,
        answer: impl Into<Answer<'a>>,
    ) -> (Self, bool) {
        let answer = answer.into();
        let initial = task.initial_json();
        let end = View { initial, changes };
        let mut checks: Vec<CheckOutcome> = task.checks.iter().map(|c| c.evaluate_in(end, answer, Some(task))).collect();
        let leaves = unexpected_leaves(task, changes).1;
        let differs = !leaves.is_empty();
        let stray = stray_changes(task, leaves);
        checks.push(CheckOutcome {
            name: COLLATERAL_CHECK.to_owned(),
            passed: stray.is_empty(),
            expected: Value::Array(Vec::new()),
            actual: Value::Array(stray),
        });
        let verdict = Verdict {
            passed: checks.iter().all(|c| c.passed),
            checks,
            diff: if final_state_hash.is_some() { View::of(initial).diff(&end) } else { Vec::new() },
            initial_state_hash: if final_state_hash.is_some() { task.initial_hash().to_owned() } else { String::new() },
            final_state_hash: final_state_hash.unwrap_or_default(),
        };
        (verdict, differs)
    }

    /// The checks that failed.
    pub fn failures(&self) -> impl Iterator<Item = &CheckOutcome> {
        self.checks.iter().filter(|c| !c.passed)
    }

    /// The state diff as readable lines (`+` added, `-` removed, `~` changed).
    pub fn diff_text(&self) -> String {
        self.diff.iter().map(|c| format!("{c}\n")).collect()
    }
}

/// The changes the task did not ask for, as `{path, expected, actual}`
/// rows: every leaf that changed from S0 to Sf and differs from the end state
/// the task asks for (its reference solution's, see
/// [`Task::expected_final_state`]), except free text a [`Check::Text`] judges
/// and the alternatives the task allows explicitly
/// ([`Task::alternatives`]). So a wrong record created and then cancelled, a
/// charge refunded or a note on another ticket all fail, while the wording of
/// a resolution is left to its content check.
///
/// Records the episode added are compared by content, not by the number the
/// domain gave them: a hold taken and released on the way (which leaves no
/// record) shifts later numbers without being wrong, so added records are
/// renumbered in order onto the expected ones first (see [`renumbered`]).
///
/// `leaves` are what [`unexpected_leaves`] gives for the end state.
fn stray_changes(task: &Task, leaves: Leaves) -> Vec<Value> {
    let initial = task.initial_json();
    let free_text: Vec<&str> =
        task.checks.iter().filter_map(|c| if let Check::Text { path, .. } = c { Some(path.as_str()) } else { None }).collect();
    // A leaf the episode left as it was in S0 is a change it did not make,
    // which the task's own checks report.
    leaves
        .into_iter()
        .filter(|(path, _)| !free_text.iter().any(|p| json::path_within(path, p, initial)))
        .filter_map(|(path, [want, got])| {
            (want != got && got.as_ref() != json::at(initial, &path)).then(|| json!({"path": path, "expected": want, "actual": got}))
        })
        .collect()
}

/// Leaves by JSON pointer, each with the value the task asks for there and
/// the end state's (`None`: absent).
pub type Leaves = BTreeMap<String, [Option<Value>; 2]>;

/// The leaves where an end state (given as its changes) differs from the
/// one the task asks for, outside the task's alternatives, with the end
/// state as compared (its added records renumbered onto the expected ones,
/// see `renumbered`).
pub fn unexpected_leaves<'a>(task: &Task, changes: &'a Changes) -> (Cow<'a, Changes>, Leaves) {
    let initial = task.initial_json();
    let expected = task.expected_changes();
    let end = renumbered(task, expected, changes).map_or(Cow::Borrowed(changes), Cow::Owned);
    let (want, got) = (View { initial, changes: expected }, View { initial, changes: &end });
    let mut leaves = Leaves::new();
    let mut paths = BTreeSet::new();
    for change in want.diff(&got) {
        for value in [&change.before, &change.after].into_iter().flatten() {
            json::leaf_paths(&change.path, value, &mut paths);
        }
        // A leaf's values sit in the change's, below its path.
        for path in std::mem::take(&mut paths) {
            let below = |value: &Option<Value>| json::at(value.as_ref()?, &path[change.path.len()..]).cloned();
            let values = [below(&change.before), below(&change.after)];
            leaves.entry(path).or_insert(values);
        }
    }
    leaves.retain(|path, _| !task.alternatives.iter().any(|p| json::path_within(path, p, initial)));
    (end, leaves)
}

/// The end state `actual` with the keys of records it added (keys absent
/// from the initial state in an object the initial state has) renamed, in
/// sorted order, to the keys the expected state added at the same place,
/// and every string equal to a renamed key rewritten the same way; `None`
/// when nothing needs renaming or the numbers of added records differ
/// somewhere (then the records differ). Only the records either end state
/// changed can add keys, so only they are read.
fn renumbered(task: &Task, expected: &Changes, actual: &Changes) -> Option<Changes> {
    if actual == expected {
        return None;
    }
    let initial = task.initial_json();
    let renames = diff::added_keys(initial, expected, actual).filter(|r| !r.is_empty())?;
    Some(actual.renamed(&renames, task.state_strings()).unwrap_or_else(|| {
        // A renamed key also occurs in records left as they were: rename the whole state.
        let end = View { initial, changes: actual }.materialize();
        Changes::between(initial, &diff::rename(&end, &renames))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checks_report_expected_and_actual_values() {
        let state = json!({"a": {"x": 1, "text": "  ", "list": [], "note": "ok"}, "items": [{"k": 1}, {"k": 2}, {"k": 1, "z": 0}]});
        let eq = Check::equals("x is 1", "/a/x", json!(1.0)).evaluate(&state);
        assert!(eq.passed, "numbers compare by value");
        let absent = Check::equals("gone", "/a/missing", Value::Null).evaluate(&state);
        assert!(absent.passed);
        let wrong = Check::equals("x is 2", "/a/x", json!(2)).evaluate(&state);
        assert_eq!((wrong.passed, wrong.expected, wrong.actual), (false, json!(2), json!(1)));
        let extra_keys = Check::equals("a is exactly", "/a", json!({"x": 1})).evaluate(&state);
        assert!(!extra_keys.passed, "equality is exact, not a pattern match");
        assert!(Check::present("note", "/a/note").evaluate(&state).passed);
        for blank in ["/a/text", "/a/list", "/a/missing"] {
            assert!(!Check::present("blank", blank).evaluate(&state).passed, "{blank}");
        }
        let count = Check::count("two k=1", "/items", json!({"k": 1}), 2).evaluate(&state);
        assert_eq!((count.passed, count.actual), (true, json!(2)));
        let count = Check::count("one k=2", "/missing", json!({"k": 2}), 1).evaluate(&state);
        assert_eq!((count.passed, count.actual), (false, json!(0)));
    }
}
