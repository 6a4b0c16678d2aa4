//! Phrasings (a description as literal text and slot references) and slot
//! kinds (what a slot's value is, and so what may vary in how it is written).

use toolenv_core::{
    Slot,
    date::{Date, parse_time},
};

use super::temporal::{boundary_after, boundary_before};

/// One piece of a phrasing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Literal wording, which relations may change.
    Text(String),
    /// The task's slot at this index, rendered by the slot's rendering.
    Slot(usize),
}

/// Parses a template with `{slot}` placeholders against a task's slots.
/// Braces that do not enclose a slot name stay literal text, as in
/// [`toolenv_core::Task::description`].
pub(crate) fn parse_template(template: &str, slots: &[Slot]) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            text.push('{');
            rest = after;
            continue;
        };
        let Some(index) = slots.iter().position(|s| s.name == &after[..close]) else {
            text.push('{');
            rest = after;
            continue;
        };
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        pieces.push(Piece::Slot(index));
        rest = &after[close + 1..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    pieces
}

/// What a slot's value is. Only dates and times are ever written differently
/// from the value; every other kind appears verbatim in every description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotKind {
    /// A value that [`Date::parse`]s.
    Date(Date),
    /// An `HH:MM` time, as minutes after midnight.
    Time(u32),
    /// A code that must never change: `SKU-101`, `C-201`, `AA-500`, `LON`, `SAVE10`.
    Identifier,
    /// A person's name (`passenger`, `customer` that is not an id).
    Person,
    /// A count, such as a quantity.
    Number,
    /// A money amount such as `$45.00`.
    Amount,
    /// A ticket priority (`low`, `medium`, `high`, `urgent`).
    Priority,
    /// Any other text (topics, subjects, notes, product names, reasons):
    /// verbatim.
    Text,
}

/// Ticket priorities, in rising order.
pub(crate) const PRIORITIES: [&str; 4] = ["low", "medium", "high", "urgent"];

impl SlotKind {
    /// Infers a slot's kind from its name and value.
    pub(crate) fn of(slot: &Slot) -> Self {
        let value = slot.value.as_str();
        if let Some(date) = Date::parse(value) {
            return SlotKind::Date(date);
        }
        if let Some(minutes) = parse_time(value) {
            return SlotKind::Time(minutes);
        }
        if slot.name == "priority" && PRIORITIES.contains(&value) {
            return SlotKind::Priority;
        }
        if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
            return SlotKind::Number;
        }
        if let Some(rest) = value.strip_prefix(['$', '€', '£'])
            && rest.starts_with(|c: char| c.is_ascii_digit())
            && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
        {
            return SlotKind::Amount;
        }
        let code = value.len() >= 2
            && value.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-')
            && value.bytes().any(|b| b.is_ascii_uppercase());
        if code {
            return SlotKind::Identifier;
        }
        if matches!(slot.name, "passenger" | "customer" | "traveler" | "name") {
            return SlotKind::Person;
        }
        SlotKind::Text
    }

    /// Whether the kind is a date or a time (the only kinds whose writing varies).
    pub(crate) fn is_temporal(self) -> bool {
        matches!(self, SlotKind::Date(_) | SlotKind::Time(_))
    }
}

/// Every occurrence of `value` in `text` as a whole token (not inside a
/// longer word or number), as byte ranges.
pub(crate) fn find_verbatim(text: &str, value: &str) -> Vec<(usize, usize)> {
    if value.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find(value) {
        let start = from + offset;
        let end = start + value.len();
        if boundary_before(text, start) && boundary_after(text, end) {
            found.push((start, end));
            from = end;
        } else {
            from = start + value[..].chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}

/// The literal text right before the piece at `index`, if it is text.
pub(crate) fn text_before(pieces: &[Piece], index: usize) -> &str {
    match index.checked_sub(1).map(|i| &pieces[i]) {
        Some(Piece::Text(text)) => text,
        _ => "",
    }
}

/// Whether the text before a slot ends with the word `word` and a space
/// (`on {date}`, `priority {priority}`), at a word boundary, any case of its
/// first letter.
pub(crate) fn preceded_by_word(before: &str, word: &str) -> bool {
    let Some(head) = before.strip_suffix(' ') else {
        return false;
    };
    let len = word.len();
    if head.len() < len || !head.is_char_boundary(head.len() - len) {
        return false;
    }
    let tail = &head[head.len() - len..];
    tail.eq_ignore_ascii_case(word) && tail[1..] == word[1..] && boundary_before(head, head.len() - len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use toolenv_core::slots;

    #[test]
    fn parses_templates_like_description_does() {
        let slots = slots(&[("topic", "Review"), ("date", "2026-01-01")]);
        assert_eq!(
            parse_template("Book '{topic}' on {date}; {x} {} {{date}", &slots),
            vec![
                Piece::Text("Book '".into()),
                Piece::Slot(0),
                Piece::Text("' on ".into()),
                Piece::Slot(1),
                Piece::Text("; {x} {} {".into()),
                Piece::Slot(1),
            ]
        );
    }

    #[test]
    fn infers_kinds_from_names_and_values() {
        let kind = |name: &'static str, value: &str| SlotKind::of(&Slot { name, value: value.into() });
        assert_eq!(kind("date", "2026-01-05"), SlotKind::Date(Date::parse("2026-01-05").unwrap()));
        assert_eq!(kind("time", "09:30"), SlotKind::Time(570));
        for id in ["SKU-101", "C-201", "T-0001", "AA-500", "LON", "SAVE10", "WINTER25"] {
            assert_eq!(kind("x", id), SlotKind::Identifier, "{id}");
        }
        assert_eq!(kind("customer", "C-201"), SlotKind::Identifier);
        assert_eq!(kind("customer", "Tom Becker"), SlotKind::Person);
        assert_eq!(kind("passenger", "Bob"), SlotKind::Person);
        assert_eq!(kind("quantity", "2"), SlotKind::Number);
        assert_eq!(kind("amount", "$45.00"), SlotKind::Amount);
        assert_eq!(kind("priority", "urgent"), SlotKind::Priority);
        assert_eq!(kind("topic", "Budget sync"), SlotKind::Text);
        assert_eq!(kind("label", "office"), SlotKind::Text);
    }

    #[test]
    fn finds_whole_tokens_only() {
        assert_eq!(find_verbatim("2 of 2026-01-02, C-2020 and C-202.", "2"), [(0, 1)]);
        assert_eq!(find_verbatim("C-2020 and C-202.", "C-202"), [(11, 16)]);
        assert_eq!(find_verbatim("Bobby and Bob", "Bob"), [(10, 13)]);
        assert_eq!(find_verbatim("it is low-cost, low", "low"), [(6, 9), (16, 19)]);
    }

    #[test]
    fn recognises_a_preceding_word() {
        assert!(preceded_by_word("Book it on ", "on"));
        assert!(preceded_by_word("On ", "on"));
        assert!(!preceded_by_word("Book it upon ", "on"));
        assert!(!preceded_by_word("Book it on", "on"));
        assert!(preceded_by_word("and priority ", "priority"));
    }
}
