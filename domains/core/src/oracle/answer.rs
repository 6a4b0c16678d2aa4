//! What a final answer commits to: the value a question asks for, and no
//! other candidate of its kind; no hedge.
//!
//! The candidates come from the task itself, never from hand lists:
//! - the values of the kinds the reference answer names (a ticket id, a
//!   topic, a sku, a flight): every value of the task's initial state at
//!   the same place in its records (`/tickets/*`, `/calendar/*/*`), when
//!   that place identifies records (its values mostly differ);
//! - the dates, times, counts and amounts of money the answer must state:
//!   any other one the answer states.
//!
//! The task's own values (its slots, as a restated question names them) and
//! those the reference answer names are allowed: a refusal may name the
//! record that blocks it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::text::{Fact, Read, money};
use super::words::{self, Kind};
use crate::task::Task;

/// Words and phrases that hedge: an answer that gives several possibilities
/// or none for sure.
const HEDGES: [&str; 18] = [
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "either",
    "likely",
    "unsure",
    "presumably",
    "might",
    "guess",
    "one of",
    "not sure",
    "i think",
    "i believe",
    "could be",
    "may be",
    "or possibly",
    "or perhaps",
];

/// How many records a place needs, and what share of distinct values, to
/// identify records (ids, names, topics) rather than classify them
/// (statuses, priorities).
const MIN_VALUES: usize = 2;
const MIN_DISTINCT_PERCENT: usize = 60;

/// What an answer of a task may state besides what it must: derived once
/// per task from its state, slots and reference answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Commitment {
    /// Values of the task the answer may name: its slots, and the state's
    /// values the reference answer names.
    allowed: Vec<String>,
    /// The other candidates of the kinds the reference answer names.
    others: Vec<String>,
    /// The words of `allowed` and of `others`, read once.
    allowed_words: Vec<Vec<String>>,
    others_words: Vec<Vec<String>>,
    /// When the answer must state a date: the date words it may state.
    dates: Option<Vec<String>>,
    /// When it must state a time: the time words it may state.
    times: Option<Vec<String>>,
    /// When it must state a count: the counts it may state.
    numbers: Option<Vec<String>>,
    /// When it must state an amount: the amounts (cents) it may state.
    amounts: Option<Vec<i64>>,
}

impl Commitment {
    /// The commitment of a task's answer (none when it asks for none).
    pub(crate) fn of(task: &Task) -> Self {
        let (Some(example), Some(facts)) = (task.reference_answer(), answer_facts(task)) else { return Self::default() };
        let year = Some(task.today.ymd().0);
        let description = task.description();
        let asked = Read::new(&description, year, []);
        let mut commitment = Commitment { allowed: task.slots.iter().map(|s| s.value.clone()).collect(), ..Self::default() };
        let described = |kind: Kind| asked.words.iter().filter(move |w| w.kind == kind).map(|w| w.text.clone());
        for fact in facts {
            match fact {
                Fact::Mentions { phrase, .. } => {
                    let read = words::read(phrase, year);
                    let [word] = read.as_slice() else { continue };
                    let (slot, kind) = match word.kind {
                        Kind::Date => (&mut commitment.dates, Kind::Date),
                        Kind::Time => (&mut commitment.times, Kind::Time),
                        Kind::Number => (&mut commitment.numbers, Kind::Number),
                        Kind::Plain | Kind::Part => continue,
                    };
                    let allowed = slot.get_or_insert_with(|| described(kind).collect());
                    allowed.push(word.text.clone());
                    if kind == Kind::Date {
                        allowed.push(format!("@{}", task.today));
                    }
                }
                Fact::Amount { cents } => {
                    let allowed = commitment.amounts.get_or_insert_with(|| money(&description).into_iter().map(|(c, _)| c).collect());
                    allowed.push(*cents);
                }
                Fact::Says { .. } | Fact::Never { .. } | Fact::Omits { .. } => {}
            }
        }
        // The places whose values identify records, and the kinds the reference names.
        let mut places: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        collect(task.initial_json(), &mut String::new(), &mut places);
        let example = Read::new(example, year, []);
        for values in places.values_mut() {
            values.sort_unstable();
            let total = values.len();
            values.dedup();
            if values.len() < MIN_VALUES || values.len() * 100 < total * MIN_DISTINCT_PERCENT {
                continue;
            }
            let named: Vec<&str> = values.iter().copied().filter(|v| nameable(v, year) && example.find(v).next().is_some()).collect();
            if named.is_empty() {
                continue;
            }
            for value in values.iter().copied().filter(|v| nameable(v, year)) {
                let list = if named.contains(&value) || asked.find(value).next().is_some() {
                    &mut commitment.allowed
                } else {
                    &mut commitment.others
                };
                if !list.iter().any(|v| v == value) {
                    list.push(value.to_owned());
                }
            }
        }
        let read = |values: &[String]| values.iter().map(|v| words::read(v, year).into_iter().map(|w| w.text).collect()).collect();
        commitment.allowed_words = read(&commitment.allowed);
        commitment.others_words = read(&commitment.others);
        commitment
    }

    /// The other candidates of the kinds the reference answer names.
    pub(crate) fn others(&self) -> &[String] {
        &self.others
    }

    /// What a read answer states that it must not: hedges, other
    /// candidates, other dates, times, counts or amounts.
    pub(crate) fn breaches(&self, read: &Read<'_>) -> Option<(&'static str, Value)> {
        let free = |i: usize| !read.named.get(i).copied().unwrap_or(false);
        let hedges: Vec<&str> = HEDGES.iter().copied().filter(|h| read.find_words(&h.split(' ').collect::<Vec<_>>()).any(free)).collect();
        // Words inside a value the answer may name are that value's.
        let mut allowed = vec![false; read.words.len()];
        for value in &self.allowed_words {
            for at in read.find_words(value) {
                allowed[at..at + value.len()].iter_mut().for_each(|a| *a = true);
            }
        }
        let mut others: Vec<String> = Vec::new();
        for (value, words) in self.others.iter().zip(&self.others_words) {
            if read.find_words(words).any(|at| !allowed[at..at + words.len()].iter().all(|a| *a)) {
                others.push(value.clone());
            }
        }
        for (_, word) in read.words.iter().enumerate().filter(|(i, _)| !allowed[*i]) {
            let list = match word.kind {
                Kind::Date => &self.dates,
                Kind::Time => &self.times,
                Kind::Number => &self.numbers,
                Kind::Plain | Kind::Part => continue,
            };
            if list.as_ref().is_some_and(|l| !l.contains(&word.text)) && !others.contains(&word.text) {
                others.push(word.text.clone());
            }
        }
        if let Some(amounts) = &self.amounts {
            for (cents, _) in money(read.text).into_iter().filter(|(c, marked)| *marked && !amounts.contains(c)) {
                others.push(format!("{}.{:02}", cents / 100, cents % 100));
            }
        }
        if hedges.is_empty() && others.is_empty() {
            return None;
        }
        Some(("not_committed", json!({"hedges": hedges, "others": others})))
    }
}

/// The facts of a task's answer check.
fn answer_facts(task: &Task) -> Option<&[Fact]> {
    task.checks.iter().find_map(|c| match c {
        super::Check::Answer { facts, .. } => Some(facts.as_slice()),
        _ => None,
    })
}

/// Whether a state value can be told apart in an answer as a name: a date,
/// a time or a number is a typed value, and a word of two letters is no name.
fn nameable(value: &str, year: Option<i64>) -> bool {
    let read = words::read(value, year);
    match read.as_slice() {
        [] => false,
        [word] => word.kind == Kind::Plain && word.text.chars().count() >= 3 || word.kind == Kind::Part,
        _ => true,
    }
}

/// Every string of a state (keys of records too) by its place: the path
/// with every segment that holds a digit (a record's key, an index) as `*`,
/// and `/#` after a key's place.
fn collect<'v>(value: &'v Value, place: &mut String, out: &mut BTreeMap<String, Vec<&'v str>>) {
    match value {
        Value::String(text) => out.entry(place.clone()).or_default().push(text),
        Value::Array(items) => {
            let len = place.len();
            place.push_str("/*");
            items.iter().for_each(|item| collect(item, place, out));
            place.truncate(len);
        }
        Value::Object(map) => {
            let len = place.len();
            for (key, item) in map {
                let record = key.bytes().any(|b| b.is_ascii_digit());
                if record {
                    out.entry(format!("{place}/#")).or_default().push(key);
                    place.push_str("/*");
                } else {
                    place.push('/');
                    place.push_str(key);
                }
                collect(item, place, out);
                place.truncate(len);
            }
        }
        _ => {}
    }
}
