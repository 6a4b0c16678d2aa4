//! The rules that keep a perturbed description's meaning, each defined once
//! here and used both by the engine (to decide what it may do) and by the
//! tests (to prove over many seeds that it never did otherwise).
//!
//! - **Sentences that refer back are glued to their predecessor.** A
//!   distractor is never placed right before a sentence that
//!   [`refers_back`]: "Cancel it.", "If that slot is taken, …", "The route
//!   is …" would otherwise be read as being about the distractor.
//! - **A correction's wrong value must fail.** A correction first gives a
//!   wrong value; if an agent that followed the wrong value could still pass,
//!   the correction tests nothing. [`wrong_value_fails`] decides it with the
//!   oracle.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::Value;

use super::phrasing::{PRIORITIES, SlotKind, find_verbatim};
use toolenv_core::{
    Task, Verdict,
    date::{Date, format_time},
};

/// Words that point back at something said before: pronouns, demonstratives,
/// and adverbs whose meaning comes from the previous sentence ("then",
/// "instead", "also"), and "one" as in "the one that is valid" (which also
/// glues a closing correction, "One correction: …", "… wrong: it is …").
const BACK_REFERENCES: &[&str] = &[
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "she",
    "her",
    "hers",
    "herself",
    "he",
    "him",
    "his",
    "himself",
    "this",
    "that",
    "these",
    "those",
    "then",
    "there",
    "instead",
    "also",
    "too",
    "same",
    "either",
    "both",
    "one",
    "other",
    "otherwise",
    "such",
    "again",
    "so",
    "still",
];

/// Whether a sentence refers back to what came before it, so that nothing
/// may be inserted between it and its predecessor.
///
/// A sentence refers back when it contains a [`BACK_REFERENCES`] word
/// anywhere ("Cancel it.", "Refund it to …", "If that slot is taken, …",
/// "… later that day instead."), when it opens with a definite description
/// ("The route is …", "The topic is …": the route of what was just said), or
/// when it names none of the task's slot values (`names_a_slot` false:
/// "Pick the cheapest flight." acts on something named before). The rule is
/// deliberately conservative: gluing a sentence that did not need it only
/// removes one place a distractor could go; the end of a description is
/// always free.
pub(crate) fn refers_back(sentence: &str, names_a_slot: bool) -> bool {
    if !names_a_slot {
        return true;
    }
    let mut words = sentence.split(|c: char| !c.is_alphabetic()).filter(|w| !w.is_empty());
    if words.clone().next() == Some("The") {
        return true;
    }
    words.any(|w| BACK_REFERENCES.iter().any(|b| w.eq_ignore_ascii_case(b)))
}

/// The byte offsets at which the sentences of `text` start: 0, and every
/// offset right after a ". ", "? " or "! " whose mark `protected` does not
/// claim (a slot value may hold a full stop that ends no sentence).
pub(crate) fn sentence_starts(text: &str, protected: impl Fn(usize) -> bool) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    for i in 0..bytes.len().saturating_sub(1) {
        if matches!(bytes[i], b'.' | b'?' | b'!') && bytes[i + 1] == b' ' && !protected(i) {
            starts.push(i + 2);
        }
    }
    starts
}

/// A wrong value a correction may give first, before the true one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wrong {
    /// A date near the true one.
    Date(Date),
    /// A time near the true one, as minutes after midnight.
    Time(u32),
    /// Another ticket priority.
    Priority(&'static str),
}

impl Wrong {
    /// The value as a task's slot or a tool argument writes it.
    pub(crate) fn canonical(self) -> String {
        match self {
            Wrong::Date(date) => date.to_string(),
            Wrong::Time(minutes) => format_time(minutes),
            Wrong::Priority(priority) => priority.to_owned(),
        }
    }
}

/// Per slot of a task, the wrong values a correction may give: the dates
/// up to three days either side of a date slot (after today, and no other
/// slot's value), the times up to two hours either side of a time slot
/// (between 07:00 and 20:00), the other priorities of a priority slot —
/// each kept only if [`wrong_value_fails`]. Empty for any other slot.
///
/// Computed once for the suite's tasks (every perturbation from ε = 0.2 up
/// needs them, and each candidate costs a replay), fresh for any other task.
pub(crate) fn wrong_values(task: &Task) -> Cow<'static, [Vec<Wrong>]> {
    static SUITE: OnceLock<Vec<Vec<Vec<Wrong>>>> = OnceLock::new();
    let suite = crate::suite();
    // The id alone is not enough: a task built outside the suite may reuse one.
    match suite.iter().position(|t| std::ptr::eq(t, task)) {
        Some(index) => Cow::Borrowed(&SUITE.get_or_init(|| suite.iter().map(failing_wrong_values).collect())[index]),
        None => Cow::Owned(failing_wrong_values(task)),
    }
}

fn failing_wrong_values(task: &Task) -> Vec<Vec<Wrong>> {
    (0..task.slots.len())
        .map(|slot| {
            let value = task.slots[slot].value.as_str();
            let candidates: Vec<Wrong> = match SlotKind::of(&task.slots[slot]) {
                SlotKind::Date(date) => [-3, -2, -1, 1, 2, 3]
                    .into_iter()
                    .map(|d| date.add_days(d))
                    .filter(|w| *w > task.today && task.slots.iter().all(|s| s.value != w.to_string()))
                    .map(Wrong::Date)
                    .collect(),
                SlotKind::Time(minutes) => [-120, -60, 60, 120]
                    .into_iter()
                    .filter_map(|d: i64| u32::try_from(i64::from(minutes) + d).ok())
                    .filter(|m| (7 * 60..=20 * 60).contains(m))
                    .map(Wrong::Time)
                    .collect(),
                SlotKind::Priority => PRIORITIES.into_iter().filter(|p| *p != value).map(Wrong::Priority).collect(),
                _ => Vec::new(),
            };
            candidates.into_iter().filter(|w| wrong_value_fails(task, slot, &w.canonical())).collect()
        })
        .collect()
}

/// Whether an agent that took a slot's wrong value for the true one would
/// fail the task: the task's reference solution, with the slot's value
/// replaced by `wrong` (canonical form, e.g. `2026-01-09`, `11:00`, `high`)
/// wherever it appears in an argument (the whole argument or a whole word in
/// it), ends in a state the oracle fails.
///
/// Conservative: if no argument of the reference solution holds the slot's
/// value, nothing says how the wrong value would change what an agent does,
/// and the answer is `false`. So is it when the substituted calls still pass
/// (scheduling/conflict/003: a wrong start time that is also taken ends in
/// the same booking). The replay runs the calls on the task's initial state
/// without faults, as a fault-free episode would, and judges the end state
/// with [`Verdict::judge_changes`].
///
/// This replays what the reference *would* call, not what an agent that
/// reads results would do: a wrong flight date changes which flight a search
/// finds, yet the reference's `hold_flight` names the same flight, so the
/// replay passes and travel date corrections are rejected. When the
/// result-reading solver (`crate::solver`) lands, this is the one function
/// to switch to it: let the solver play the task with the wrong value
/// substituted in its description and require a failing verdict.
pub(crate) fn wrong_value_fails(task: &Task, slot: usize, wrong: &str) -> bool {
    let value = task.slots[slot].value.as_str();
    if value == wrong || value.is_empty() || wrong.is_empty() {
        return false;
    }
    let mut depends = false;
    let calls: Vec<(&str, Value)> = task
        .reference
        .iter()
        .map(|call| {
            let mut arguments = call.arguments.clone();
            depends |= substitute_token(&mut arguments, value, wrong);
            (call.tool, arguments)
        })
        .collect();
    if !depends {
        return false;
    }
    // An argument the wrong value made invalid is rejected, as in an episode;
    // only the end state matters.
    let world = task.replay(calls.iter().map(|(tool, arguments)| (*tool, arguments)));
    !Verdict::judge_changes(task, &world.changes(&task.initial), None, None).passed
}

/// Replaces `from` with `to` in every string of a JSON value, as a whole
/// word; returns whether anything was replaced.
fn substitute_token(value: &mut Value, from: &str, to: &str) -> bool {
    match value {
        Value::String(text) => {
            let found = find_verbatim(text, from);
            for &(start, end) in found.iter().rev() {
                text.replace_range(start..end, to);
            }
            !found.is_empty()
        }
        Value::Array(items) => items.iter_mut().fold(false, |any, v| substitute_token(v, from, to) | any),
        Value::Object(map) => map.values_mut().fold(false, |any, v| substitute_token(v, from, to) | any),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn sentences_that_refer_back_are_recognised() {
        for sentence in [
            "Cancel it.",
            "It starts at 9am.",
            "If that slot is taken, book the next free slot later that day instead.",
            "Release that hold and book Frank on the cheapest flight that day.",
            "Refund it to the original payment method.",
            "Then close it with a resolution saying what was done.",
            "They have two coupons, WINTER25 and HOME5.",
            "Her account was changed.",
            "This is urgent for C-104.",
            "There, cancel the 'Review' meeting.",
            "Book the 10:00 slot instead.",
            "One correction: the date is not 2026-01-02 but 2026-01-01.",
            "Sorry, I got the date wrong: it is 2026-01-01.",
            "The route is LON to PAR, on 2026-01-05.",
            "The topic is 'Review'.",
        ] {
            assert!(refers_back(sentence, true), "{sentence}");
        }
        // Naming no slot value, a sentence acts on something named before.
        assert!(refers_back("Pick the cheapest flight.", false));
        assert!(refers_back("Find the ticket.", false));
        for sentence in [
            "Book a meeting about 'Review' on 2026-01-01 at 09:00.",
            "Apply coupon SAVE10.",
            "Cancel Evan's flight from LON to ROM on 2026-01-15.",
            "Ithaca and Thebes are cities.",
        ] {
            assert!(!refers_back(sentence, true), "{sentence}");
        }
    }

    #[test]
    fn sentences_start_after_their_marks_unless_protected() {
        let text = "Book it. Is it free? Yes! Pay $4. 50 later.";
        assert_eq!(sentence_starts(text, |_| false), [0, 9, 21, 26, 34]);
        assert_eq!(sentence_starts(text, |i| i == 32), [0, 9, 21, 26]);
        assert_eq!(sentence_starts("", |_| false), [0]);
    }

    #[test]
    fn substitutes_whole_words_in_every_string() {
        let mut value =
            serde_json::json!({"date": "2026-01-08", "note": "moved from 2026-01-08 to 2026-01-080", "n": 2, "xs": ["low", "below"]});
        assert!(substitute_token(&mut value, "2026-01-08", "2026-01-09"));
        assert!(substitute_token(&mut value, "low", "high"));
        assert_eq!(
            value,
            serde_json::json!({"date": "2026-01-09", "note": "moved from 2026-01-09 to 2026-01-080", "n": 2, "xs": ["high", "below"]})
        );
        assert!(!substitute_token(&mut value, "urgent", "low"));
    }

    #[test]
    fn a_wrong_value_fails_only_if_the_oracle_says_so() {
        let task = |id: &str| crate::task(id).expect("a suite task");
        let slot = |task: &Task, name: &str| task.slots.iter().position(|s| s.name == name).expect("a slot");
        let book = task("scheduling/book-meeting/001");
        assert!(wrong_value_fails(book, slot(book, "time"), "10:00"));
        assert!(wrong_value_fails(book, slot(book, "date"), "2026-01-02"));
        assert!(!wrong_value_fails(book, slot(book, "date"), "2026-01-01"), "the true value");
        // The booking of conflict/003 does not depend on the requested time.
        let conflict = task("scheduling/conflict/003");
        for wrong in ["08:00", "09:00", "11:00", "12:00"] {
            assert!(!wrong_value_fails(conflict, slot(conflict, "time"), wrong), "{wrong}");
        }
        assert!(wrong_value_fails(conflict, slot(conflict, "date"), "2026-01-09"));
        // No reference argument holds the trip's dates: rejected, conservatively.
        let trip = task("travel/cancel-trip/004");
        assert!(!wrong_value_fails(trip, slot(trip, "date"), "2026-01-16"));
        let ticket = task("support/create-close/001");
        assert!(wrong_value_fails(ticket, slot(ticket, "priority"), "high"));
    }
}
