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

use super::text::{Read, money};
use super::words::{self, Kind};
use crate::check::{Check, Fact};
use crate::task::{Commitment, Task};

/// Words and phrases that hedge: an answer that gives several possibilities
/// or none for sure.
const HEDGES: [&str; 25] = [
    "may",
    "not certain",
    "uncertain",
    "say for sure",
    "not 100",
    "looks like",
    "seems",
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

/// Words that alone make no statement of their own: a sentence of only
/// these and hedges hedges the answer ("I'm not sure.").
const FILLER: [&str; 21] = [
    "i",
    "m",
    "am",
    "it",
    "s",
    "is",
    "this",
    "that",
    "so",
    "but",
    "though",
    "not",
    "sure",
    "100",
    "really",
    "about",
    "be",
    "something",
    "else",
    "wrong",
    "said",
];

/// First-person words: "I booked …" claims what the speaker did.
const SPEAKERS: [&str; 2] = ["i", "we"];

/// How many records a place needs, and what share of distinct values, to
/// identify records (ids, names, topics) rather than classify them
/// (statuses, priorities).
const MIN_VALUES: usize = 2;
const MIN_DISTINCT_PERCENT: usize = 60;

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
        for (i, word) in example.words.iter().enumerate() {
            let speaker = example.words[i.saturating_sub(2)..i].iter().any(|w| SPEAKERS.contains(&w.text.as_str()));
            if speaker && word.kind == Kind::Plain && word.text.len() > 3 && example.negated(i, 1) {
                commitment.refused.push(stem(&word.text).to_owned());
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
        let free = |i: usize| !read.named.get(i).copied().unwrap_or(false) && !read.words[i].restated;
        // Words inside a value the answer may name are that value's; a
        // restated question's are the question's.
        let mut allowed: Vec<bool> = read.words.iter().map(|w| w.restated).collect();
        for value in &self.allowed_words {
            for at in read.find_words(value) {
                allowed[at..at + value.len()].iter_mut().for_each(|a| *a = true);
            }
        }
        let valued = |i: usize| allowed[i] && !read.words[i].restated || !matches!(read.words[i].kind, Kind::Plain);
        // A hedge hedges the answer when its sentence states a value, or its
        // clause nothing but the hedge ("But I'm not sure, it may be something else").
        let hedges: Vec<&str> = HEDGES
            .iter()
            .copied()
            .filter(|h| {
                let words: Vec<&str> = h.split(' ').collect();
                read.find_words(&words).any(|at| {
                    let (sentence, clause) = (read.words[at].sentence, read.words[at].clause);
                    let mut same = (0..read.words.len()).filter(|&i| read.words[i].sentence == sentence);
                    let bare = same.clone().filter(|&i| read.words[i].clause == clause).all(|i| {
                        let text = read.words[i].text.as_str();
                        FILLER.contains(&text) || HEDGES.iter().any(|h| h.split(' ').any(|p| p == text))
                    });
                    free(at)
                        && (bare || same.any(|i| valued(i) || self.others_words.iter().any(|o| o.first() == Some(&read.words[i].text))))
                })
            })
            .collect();
        let mut others: Vec<String> = Vec::new();
        for (i, word) in read.words.iter().enumerate() {
            let speaker = read.words[i.saturating_sub(2)..i].iter().any(|w| SPEAKERS.contains(&w.text.as_str()))
                || i == 0
                || read.words[i - 1].sentence != word.sentence;
            if speaker && free(i) && self.refused.iter().any(|r| *r == stem(&word.text)) && !read.negated(i, 1) {
                return Some(("contradicts_refusal", json!({"claims": word.text})));
            }
        }
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
            let marked: Vec<(i64, usize)> = money(read.text)
                .into_iter()
                .zip(&read.amount_words)
                .filter(|((_, marked), at)| *marked && !read.words.get(**at).is_some_and(|w| w.restated))
                .map(|((c, _), at)| (c, *at))
                .collect();
            for &(cents, _) in &marked {
                // A part of a breakdown: it and another amount stated make up one it may state.
                let part = marked.iter().any(|(other, _)| amounts.contains(&(cents + other)));
                if !amounts.contains(&cents) && !part {
                    others.push(format!("{}.{:02}", cents / 100, cents % 100));
                }
            }
        }
        if hedges.is_empty() && others.is_empty() {
            return None;
        }
        Some(("not_committed", json!({"hedges": hedges, "others": others})))
    }
}

/// A word's stem: "booked", "booking", "books" → "book"; "closed", "close" → "clos".
fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es", "e", "s"] {
        if let Some(stem) = word.strip_suffix(suffix).filter(|s| s.len() >= 3) {
            return stem;
        }
    }
    word
}

/// The facts of a task's answer check.
fn answer_facts(task: &Task) -> Option<&[Fact]> {
    task.checks.iter().find_map(|c| match c {
        crate::check::Check::Answer { facts, .. } => Some(facts.as_slice()),
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

/// What the oracle derives from a task's answer check.
impl Task {
    /// What the task's final answer may state besides what it must (its
    /// candidates and values of the asked kinds), derived once.
    pub(crate) fn commitment(&self) -> &Commitment {
        self.expected.commitment.get_or_init(|| Commitment::of(self))
    }

    /// The values of the task's state an answer must not name: the other
    /// candidates of the kinds its reference answer names (other tickets,
    /// topics, skus, flights), in a fixed order.
    pub fn answer_candidates(&self) -> &[String] {
        self.commitment().others()
    }

    /// The fields of the task's typed answer (none for a task that asks
    /// for no value: a plain action).
    pub fn answer_fields(&self) -> Vec<super::typed::AnswerField> {
        self.checks
            .iter()
            .find_map(|check| match check {
                Check::Answer { facts, .. } => Some(super::typed::fields(facts)),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The JSON Schema of the task's typed answer, when it asks for one.
    pub fn answer_schema(&self) -> Option<serde_json::Value> {
        let fields = self.answer_fields();
        (!fields.is_empty()).then(|| super::typed::schema(&fields))
    }
}
