//! User-supplied paraphrases: alternative descriptions per task (written
//! offline, for example by an LLM), validated against the task's slots when
//! loaded and then used like the template bank's paraphrases.
//!
//! An entry is accepted only if it carries every slot value: dates in ISO or
//! any format the date-format relation writes, times as `HH:MM` or any format
//! it writes, everything else verbatim as a whole token. It may mention no
//! other date or time, so a paraphrase cannot quietly change a value. Loading
//! turns each entry into a phrasing whose slots are placeholders again, so the
//! slot-level relations (date format, correction, relative time) and
//! distractors still apply on top of it; synonyms do not, since the entry's
//! wording is the user's.

use std::collections::BTreeMap;

use super::PerturbError;
use super::phrasing::{Piece, SlotKind, find_verbatim};
use super::temporal::{scan_dates, scan_times};
use toolenv_core::Task;

/// Most bytes of JSON a bank may have.
pub const MAX_BANK_BYTES: usize = 4 * 1024 * 1024;
/// Most entries per task.
pub const MAX_ENTRIES_PER_TASK: usize = 256;
/// Most bytes per entry.
pub const MAX_ENTRY_BYTES: usize = 4096;

/// Alternative descriptions per task id, validated against the tasks' slots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParaphraseBank {
    entries: BTreeMap<String, Vec<Entry>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    text: String,
    pieces: Vec<Piece>,
}

impl ParaphraseBank {
    /// Loads a bank from JSON text `{"<task id>": ["alternative description", …], …}`
    /// and validates it against the suite's tasks.
    pub fn from_json(text: &str) -> Result<Self, PerturbError> {
        Self::from_json_for(text, crate::suite())
    }

    /// Loads a bank like [`ParaphraseBank::from_json`], against the given tasks.
    pub fn from_json_for(text: &str, tasks: &[Task]) -> Result<Self, PerturbError> {
        if text.len() > MAX_BANK_BYTES {
            return Err(PerturbError::BankTooLarge { bytes: text.len(), limit: MAX_BANK_BYTES });
        }
        let raw: BTreeMap<String, Vec<String>> = serde_json::from_str(text).map_err(|e| PerturbError::BankJson(e.to_string()))?;
        let mut entries = BTreeMap::new();
        for (id, descriptions) in raw {
            let Some(task) = tasks.iter().find(|t| t.id == id) else {
                return Err(PerturbError::UnknownTask(id));
            };
            if descriptions.len() > MAX_ENTRIES_PER_TASK {
                return Err(PerturbError::TooManyEntries { task: id, count: descriptions.len(), limit: MAX_ENTRIES_PER_TASK });
            }
            let parsed = descriptions.into_iter().enumerate().map(|(index, text)| entry(task, index, text)).collect::<Result<_, _>>()?;
            entries.insert(id, parsed);
        }
        Ok(Self { entries })
    }

    /// The alternative descriptions of a task, as loaded.
    pub fn descriptions(&self, task_id: &str) -> impl Iterator<Item = &str> {
        self.entries.get(task_id).into_iter().flatten().map(|e| e.text.as_str())
    }

    /// How many descriptions the bank holds in all.
    pub fn len(&self) -> usize {
        self.entries.values().map(Vec::len).sum()
    }

    /// Whether the bank holds no description.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The task's entries as phrasings.
    pub(crate) fn phrasings(&self, task_id: &str) -> Vec<Vec<Piece>> {
        self.entries.get(task_id).into_iter().flatten().map(|e| e.pieces.clone()).collect()
    }
}

/// Validates one entry and turns it into a phrasing.
fn entry(task: &Task, index: usize, text: String) -> Result<Entry, PerturbError> {
    if text.len() > MAX_ENTRY_BYTES {
        return Err(PerturbError::EntryTooLong { task: task.id.clone(), index, bytes: text.len(), limit: MAX_ENTRY_BYTES });
    }
    if text == task.description() {
        return Err(PerturbError::Canonical { task: task.id.clone(), index });
    }
    let kinds: Vec<SlotKind> = task.slots.iter().map(SlotKind::of).collect();
    let dates = scan_dates(&text, None);
    let times = scan_times(&text);
    let stray = |start: usize, end: usize| PerturbError::StrayValue { task: task.id.clone(), index, text: text[start..end].to_owned() };
    for &(start, end, date) in &dates {
        if !kinds.contains(&SlotKind::Date(date)) {
            return Err(stray(start, end));
        }
    }
    for &(start, end, minutes) in &times {
        if !kinds.contains(&SlotKind::Time(minutes)) {
            return Err(stray(start, end));
        }
    }

    // Dates and times first, then the other values, longest first, so a
    // short value is never found inside a longer one.
    let mut order: Vec<usize> = (0..task.slots.len()).collect();
    order.sort_by_key(|&i| (!kinds[i].is_temporal(), std::cmp::Reverse(task.slots[i].value.len())));
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for i in order {
        let found: Vec<(usize, usize)> = match kinds[i] {
            SlotKind::Date(d) => dates.iter().filter(|m| m.2 == d).map(|m| (m.0, m.1)).collect(),
            SlotKind::Time(t) => times.iter().filter(|m| m.2 == t).map(|m| (m.0, m.1)).collect(),
            _ => find_verbatim(&text, &task.slots[i].value),
        };
        let free: Vec<(usize, usize)> = found.into_iter().filter(|&(s, e)| spans.iter().all(|&(s2, e2, _)| e <= s2 || s >= e2)).collect();
        if free.is_empty() {
            return Err(PerturbError::MissingSlot {
                task: task.id.clone(),
                index,
                slot: task.slots[i].name.to_owned(),
                value: task.slots[i].value.clone(),
            });
        }
        spans.extend(free.into_iter().map(|(s, e)| (s, e, i)));
    }
    spans.sort_unstable();
    let mut pieces = Vec::new();
    let mut pos = 0;
    for (start, end, slot) in spans {
        if start > pos {
            pieces.push(Piece::Text(text[pos..start].to_owned()));
        }
        pieces.push(Piece::Slot(slot));
        pos = end;
    }
    if pos < text.len() {
        pieces.push(Piece::Text(text[pos..].to_owned()));
    }
    Ok(Entry { text, pieces })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn load(json: &str) -> Result<ParaphraseBank, String> {
        ParaphraseBank::from_json(json).map_err(|e| e.to_string())
    }

    #[test]
    fn accepts_a_good_bank_with_dates_in_any_accepted_format() {
        let json = r#"{
            "scheduling/book-meeting/001": [
                "Please add a 'Review' meeting to my calendar on January 1, 2026 at 9:00 AM.",
                "On 2026-01-01, at 09:00, I would like a meeting about 'Review'."
            ],
            "travel/cancel-trip/004": [
                "Evan is not travelling any more: cancel both flights of his LON to ROM round trip, out on Thursday, January 15, 2026 and back on the 19th of January 2026."
            ],
            "ecommerce/simple-order/001": ["Customer C-201 needs 2 of the Aero Wireless Mouse (SKU-101) sent to their home address."]
        }"#;
        let bank = load(json).unwrap();
        assert_eq!(bank.len(), 4);
        assert_eq!(bank.descriptions("scheduling/book-meeting/001").count(), 2);
        assert_eq!(bank.descriptions("support/create-close/001").count(), 0);
        let pieces = bank.phrasings("scheduling/book-meeting/001");
        assert_eq!(
            pieces[0],
            [
                Piece::Text("Please add a '".into()),
                Piece::Slot(0),
                Piece::Text("' meeting to my calendar on ".into()),
                Piece::Slot(1),
                Piece::Text(" at ".into()),
                Piece::Slot(2),
                Piece::Text(".".into()),
            ]
        );
        assert!(load("{}").unwrap().is_empty());
    }

    #[test]
    fn rejects_bad_banks_naming_the_task_entry_and_slot() {
        let cases = [
            (r#"{"scheduling/nope/009": ["x"]}"#, "paraphrase bank names unknown task scheduling/nope/009"),
            (
                r#"{"scheduling/book-meeting/001": ["Book a meeting about 'Review' on 2026-01-01 at 09:00 sharp.", "Book a meeting about 'Reviews' on 2026-01-01 at 09:00."]}"#,
                "paraphrase bank entry 1 of scheduling/book-meeting/001 lacks slot topic (value Review)",
            ),
            (
                r#"{"scheduling/book-meeting/001": ["A meeting about 'Review' on 01/01/2026 at 09:00."]}"#,
                "paraphrase bank entry 0 of scheduling/book-meeting/001 lacks slot date (value 2026-01-01)",
            ),
            (
                r#"{"scheduling/book-meeting/001": ["A meeting about 'Review' on January 2, 2026 at 09:00, or 2026-01-01."]}"#,
                "paraphrase bank entry 0 of scheduling/book-meeting/001 mentions January 2, 2026, which is no slot's value",
            ),
            (
                r#"{"scheduling/book-meeting/001": ["A meeting about 'Review' on 2026-01-01 at 9 AM or 10 AM."]}"#,
                "paraphrase bank entry 0 of scheduling/book-meeting/001 mentions 10 AM, which is no slot's value",
            ),
            (
                r#"{"ecommerce/simple-order/001": ["Order 2 of the Aero Wireless Mouse (SKU-1010) for customer C-201, to their home."]}"#,
                "paraphrase bank entry 0 of ecommerce/simple-order/001 lacks slot sku (value SKU-101)",
            ),
            (
                r#"{"ecommerce/simple-order/001": ["Order 20 of the Aero Wireless Mouse (SKU-101) for customer C-201, to their home."]}"#,
                "paraphrase bank entry 0 of ecommerce/simple-order/001 lacks slot quantity (value 2)",
            ),
            (
                r#"{"scheduling/cancel/005": ["Cancel the 'Vendor demo' meeting on 2026-01-14."]}"#,
                "paraphrase bank entry 0 of scheduling/cancel/005 is the canonical description",
            ),
        ];
        for (json, message) in cases {
            assert_eq!(load(json).unwrap_err(), message, "{json}");
        }
        for (json, start) in [
            ("[1, 2]", "paraphrase bank is not a json object"),
            (r#"{"scheduling/cancel/005": "one"}"#, "paraphrase bank is not a json object"),
            ("{", "paraphrase bank is not a json object"),
        ] {
            let error = load(json).unwrap_err();
            assert!(error.starts_with(start), "{json}: {error}");
        }
        let long = format!(r#"{{"scheduling/cancel/005": ["{}"]}}"#, "x".repeat(MAX_ENTRY_BYTES + 1));
        assert_eq!(load(&long).unwrap_err(), "paraphrase bank entry 0 of scheduling/cancel/005 is 4097 bytes, more than the limit of 4096");
    }
}
