//! A brittle built-in agent: it reads slot values with fixed patterns that
//! only understand the canonical phrasing, the way a hard-coded parser (or an
//! over-fitted prompt) does, so its pass rate falls as ε rises while the
//! reference agent's does not.
//!
//! For each slot it looks for the literal template word right before the
//! slot's first placeholder (` on `, ` about '`, ` (customer `), exactly as
//! written, and reads the value that follows by its shape, like a regular
//! expression such as `on (\d{4}-\d{2}-\d{2})`: an ISO date, an `HH:MM` time,
//! a code, capitalised words for a name, text up to the closing quote, or
//! other text up to the template's next word. A placeholder with no word
//! before it is read right after the previous slot's value, or at the very
//! start of the description. It takes the first place that matches, so a
//! distractor with the same shape can fool it and a correction is read as its
//! wrong value.

use serde_json::Value;

use super::phrasing::{PRIORITIES, Piece, SlotKind, parse_template};
use toolenv_core::{
    Call, Task,
    date::{Date, parse_time},
};

/// Longest free-text value the agent accepts.
const MAX_TEXT_CHARS: usize = 80;

/// The calls of the brittle agent for a task given a description: the task's
/// reference solution with the values it read substituted for the slot
/// values, or no calls at all when it cannot read every slot.
pub fn brittle_calls(task: &Task, description: &str) -> Vec<Call> {
    let Some(found) = read_slots(task, description) else {
        return Vec::new();
    };
    // The reference holds a withheld slot's true value: what the agent read (the stand-in words) replaces it.
    let truth: Vec<&str> = task
        .slots
        .iter()
        .map(|slot| task.conversation.as_ref().and_then(|c| c.withheld(slot.name)).map_or(slot.value.as_str(), |w| w.value.as_str()))
        .collect();
    let changes: Vec<(&str, &str)> = truth
        .iter()
        .zip(&found)
        .filter(|(truth, value)| **truth != value.as_str())
        .map(|(truth, value)| (*truth, value.as_str()))
        .collect();
    task.reference
        .iter()
        .map(|call| {
            let mut arguments = call.arguments.clone();
            substitute(&mut arguments, &changes);
            Call::new(call.tool, arguments)
        })
        .collect()
}

/// The value the agent reads for each slot, in slot order; `None` if any slot
/// cannot be read.
fn read_slots(task: &Task, description: &str) -> Option<Vec<String>> {
    let pieces = parse_template(task.template.text, &task.slots);
    let text = |j: Option<usize>| match j.and_then(|j| pieces.get(j)) {
        Some(Piece::Text(t)) => t.as_str(),
        _ => "",
    };
    let slot_pieces: Vec<(usize, usize)> =
        pieces.iter().enumerate().filter_map(|(k, p)| if let Piece::Slot(i) = p { Some((k, *i)) } else { None }).collect();
    // Anchor on the last word before each placeholder; where two slots would
    // share it (` on {date} … on {new_date}`), on as many words as it takes.
    let mut words = vec![1; slot_pieces.len()];
    for _ in 0..8 {
        let anchors: Vec<Option<&str>> =
            slot_pieces.iter().zip(&words).map(|(&(k, _), &n)| last_words(text(k.checked_sub(1)), n)).collect();
        let mut changed = false;
        for a in 0..slot_pieces.len() {
            let shared =
                (0..slot_pieces.len()).any(|b| slot_pieces[a].1 != slot_pieces[b].1 && anchors[a].is_some() && anchors[a] == anchors[b]);
            if shared {
                words[a] += 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let mut found: Vec<Option<String>> = vec![None; task.slots.len()];
    // Where the previous slot's value ended in the description, if it was read.
    let mut previous_end: Option<usize> = None;
    for (&(k, i), &n) in slot_pieces.iter().zip(&words) {
        let before = text(k.checked_sub(1));
        let anchor = if k == 0 {
            Anchor::Start
        } else if let Some(prefix) = last_words(before, n) {
            Anchor::After(prefix)
        } else {
            // No word to anchor on (`{quantity} {product}`): right after the previous value.
            Anchor::At(previous_end.map(|end| end + before.len()))
        };
        let hit = read_one(description, &anchor, before, first_word(text(Some(k + 1))), SlotKind::of(&task.slots[i]));
        previous_end = hit.as_ref().map(|(_, end)| *end);
        if found[i].is_none() {
            found[i] = hit.map(|(value, _)| value);
        }
    }
    found.into_iter().collect()
}

enum Anchor<'a> {
    /// The value starts the description.
    Start,
    /// The value follows this literal text.
    After(&'a str),
    /// The value starts right after the previous value and the literal
    /// text between them (unknown if the previous value was not read).
    At(Option<usize>),
}

/// Reads one value: the first place after the anchor where a value of the
/// slot's shape starts. Returns the value and where it ends.
fn read_one(description: &str, anchor: &Anchor, between: &str, suffix: &str, kind: SlotKind) -> Option<(String, usize)> {
    let quoted = matches!(anchor, Anchor::After(prefix) if prefix.ends_with('\''));
    let starts: Vec<usize> = match anchor {
        Anchor::Start => vec![0],
        Anchor::After(prefix) => description.match_indices(prefix).map(|(i, _)| i + prefix.len()).collect(),
        Anchor::At(Some(end)) => {
            let at = end - between.len();
            (description.get(at..*end) == Some(between)).then_some(*end).into_iter().collect()
        }
        Anchor::At(None) => Vec::new(),
    };
    starts.into_iter().find_map(|start| {
        let rest = &description[start..];
        let len = if quoted { rest.find('\'')? } else { shaped_len(rest, suffix, kind)? };
        (len > 0).then(|| (rest[..len].to_owned(), start + len))
    })
}

/// The length of the value of `kind` that starts `rest`, read by shape like
/// a regular expression would: `\d{4}-\d{2}-\d{2}` for a date, `\d{2}:\d{2}`
/// for a time, `[A-Z0-9-]+` for a code, capitalised words for a name, and
/// free text up to the literal that follows the slot in the template.
fn shaped_len(rest: &str, suffix: &str, kind: SlotKind) -> Option<usize> {
    let run = |ok: fn(char) -> bool| rest.find(|c: char| !ok(c)).unwrap_or(rest.len());
    let len = match kind {
        SlotKind::Date(_) => rest.get(..10).filter(|v| Date::parse(v).is_some())?.len(),
        SlotKind::Time(_) => rest.get(..5).filter(|v| parse_time(v).is_some())?.len(),
        SlotKind::Identifier => run(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-'),
        SlotKind::Number => run(|c| c.is_ascii_digit()),
        SlotKind::Amount => {
            let digits = rest.strip_prefix('$')?;
            1 + digits.find(|c: char| !c.is_ascii_digit() && c != '.' && c != ',').unwrap_or(digits.len())
        }
        SlotKind::Priority => PRIORITIES.iter().find(|p| rest.starts_with(**p))?.len(),
        SlotKind::Person => {
            // Up to three capitalised words.
            let mut len = 0;
            for (i, word) in rest.split(' ').take(3).enumerate() {
                if !word.starts_with(char::is_uppercase) {
                    break;
                }
                let name_len = word.find(|c: char| !c.is_alphabetic() && c != '-').unwrap_or(word.len());
                len += usize::from(i > 0) + name_len;
                if name_len < word.len() {
                    break;
                }
            }
            len
        }
        SlotKind::Text => {
            let len = if suffix.is_empty() { rest.len() } else { rest.find(suffix)? };
            if rest[..len].chars().count() > MAX_TEXT_CHARS || rest[..len].contains(". ") {
                return None;
            }
            len
        }
    };
    Some(len)
}

/// The last `n` words of a literal text with what follows them (and the
/// space before them), e.g. ` on ` of `… 'Review' on ` for one word; as many
/// as there are when it has fewer; `None` if it has no word.
fn last_words(text: &str, n: usize) -> Option<&str> {
    let mut end = text.len();
    let mut start = 0;
    for _ in 0..n {
        let Some(word_end) = text[..end].rfind(|c: char| c.is_alphabetic()) else {
            return (end < text.len()).then(|| &text[start..]);
        };
        start = text[..word_end].rfind(char::is_whitespace).unwrap_or(0);
        end = start;
    }
    Some(&text[start..])
}

/// A literal text up to the end of its first word (`' on` of `' on {date}`),
/// or all of it when it has no word (`.`).
fn first_word(text: &str) -> &str {
    match text.find(|c: char| c.is_alphabetic()) {
        Some(start) => {
            let end = text[start..].find(|c: char| !c.is_alphanumeric() && c != '\'').map_or(text.len(), |e| start + e);
            &text[..end]
        }
        // `.` of `{time}.`; a lone space (`{quantity} {product}`) stays a space.
        None if text.trim_end().is_empty() => text,
        None => text.trim_end(),
    }
}

/// Replaces, anywhere in a JSON value, a string equal to a `from` (or a
/// number written as one) with its `to`, all at once (so swapped values stay
/// swapped).
fn substitute(value: &mut Value, changes: &[(&str, &str)]) {
    match value {
        Value::String(s) => {
            if let Some((_, to)) = changes.iter().find(|(from, _)| s == from) {
                *s = (*to).to_owned();
            }
        }
        Value::Number(n) => {
            let written = n.to_string();
            if let Some((_, to)) = changes.iter().find(|(from, _)| written == *from) {
                *value = to.parse::<serde_json::Number>().map_or_else(|_| Value::from(*to), Value::Number);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute(v, changes)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute(v, changes)),
        Value::Null | Value::Bool(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn anchors_are_the_words_around_each_slot() {
        assert_eq!(last_words("Book a meeting about '", 1), Some(" about '"));
        assert_eq!(last_words("' meeting on ", 1), Some(" on "));
        assert_eq!(last_words("' meeting on ", 2), Some(" meeting on "));
        assert_eq!(last_words("' meeting on ", 3), Some(" meeting on "));
        assert_eq!(last_words(" (customer ", 1), Some(" (customer "));
        assert_eq!(last_words("Flight ", 1), Some("Flight "));
        assert_eq!(last_words(" (", 1), None);
        assert_eq!(first_word("' on "), "' on");
        assert_eq!(first_word("'s round trip"), "'s");
        assert_eq!(first_word(") for customer "), ") for");
        assert_eq!(first_word("."), ".");
        assert_eq!(first_word(""), "");
        assert_eq!(first_word(" "), " ");
    }

    #[test]
    fn reads_only_the_canonical_words_and_formats() {
        let task = crate::task("scheduling/book-meeting/001").unwrap();
        assert_eq!(brittle_calls(task, &task.description()), task.reference);
        // The same words around each value, in another order, still read.
        assert_eq!(brittle_calls(task, "Set up a meeting at 09:00 on 2026-01-01 about 'Review'."), task.reference);
        assert_eq!(brittle_calls(task, "Book a meeting about 'Review' on January 1, 2026 at 09:00."), []);
        assert_eq!(brittle_calls(task, "Book a meeting about 'Review' on 2026-01-01 at 9 AM."), []);
        assert_eq!(brittle_calls(task, "On 2026-01-01 at 09:00, book a meeting about 'Review'."), [], "`On` is not ` on `");
        assert_eq!(brittle_calls(task, "Book a meeting on 'Review' on 2026-01-01 at 09:00."), []);
        // A correction is read as its wrong value: a wrong guess.
        let wrong =
            brittle_calls(task, "Book a meeting about 'Review' on 2026-01-02 at 09:00. Sorry, I got the date wrong: it is 2026-01-01.");
        assert_eq!(wrong[0].arguments["date"], "2026-01-02");
        // Two slots after the same word are told apart by more words.
        let task = crate::task("scheduling/reschedule/004").unwrap();
        assert_eq!(brittle_calls(task, &task.description()), task.reference);
        let swapped = "Reschedule the 'Client call' meeting on 2026-01-13 to the first free slot on 2026-01-12.";
        assert_eq!(brittle_calls(task, swapped)[0].arguments["date"], "2026-01-13");
    }

    #[test]
    fn substitutes_strings_and_numbers() {
        let mut value = serde_json::json!({"items": [{"sku": "SKU-101", "quantity": 2}], "note": "SKU-101 x 2"});
        substitute(&mut value, &[("2", "3"), ("SKU-101", "SKU-102"), ("SKU-102", "SKU-101")]);
        assert_eq!(value, serde_json::json!({"items": [{"sku": "SKU-102", "quantity": 3}], "note": "SKU-101 x 2"}));
    }
}
