//! Typed answers: a task that asks something declares its answer as fields
//! with types, derived from the facts its answer check holds it to (a date,
//! a time, a count, an amount, an id or a name it must give; for a refusal
//! a reason from a closed set). The episode publishes them as a JSON Schema
//! and an agent may finish with a JSON object of those fields instead of
//! prose. Each field is judged after normalising its type (any common date
//! or time format, amounts to cents, ids and names case-insensitively), so
//! a typed answer's verdict is right by construction.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::text::money;
use super::words::{self, Kind};
use crate::check::Fact;

/// The reasons a refusal may give, by the label of the fact that says it.
/// A fact not listed gets a code made of its label's words.
const REASONS: [(&str, &str); 4] = [
    ("that the slot is taken", "slot_taken"),
    ("that the 30-day return window has closed", "window_closed"),
    ("that the ticket belongs to another customer", "not_owner"),
    ("that the trip is over budget", "over_budget"),
];

/// What a field of a typed answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldKind {
    /// A record's id (`T-0043`, `AF-1021`), compared case-insensitively.
    Id,
    /// A name or subject, compared case-insensitively, spaces collapsed.
    Name,
    /// A date, in any common format.
    Date,
    /// A time of day, in any common format.
    Time,
    /// A whole number.
    Count,
    /// An amount of money, as a number or text (`295`, `"$295.00"`).
    Amount,
    /// A refusal's reason: one code of [`reasons`].
    Reason,
}

/// One field of a typed answer: its name, kind, what it stands for, and
/// the value that is right.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerField {
    /// The property's name in the answer object (`start_time`).
    pub name: String,
    pub kind: FieldKind,
    /// What it stands for ("its start time").
    pub label: String,
    /// The right value, as the task states it (`14:30`, `295.00`, `slot_taken`).
    pub expected: String,
}

/// Every reason code a refusal may give.
pub fn reasons() -> impl Iterator<Item = &'static str> {
    REASONS.iter().map(|(_, code)| *code)
}

/// The fields of the typed answer of a check holding an answer to `facts`
/// (none when no fact asks for a value).
pub fn fields(facts: &[Fact]) -> Vec<AnswerField> {
    let mut fields: Vec<AnswerField> = Vec::new();
    let mut add = |name: String, kind, label: String, expected: String| {
        let taken = |name: &str| fields.iter().any(|f| f.name == name);
        let name = if taken(&name) { (2..).map(|n| format!("{name}_{n}")).find(|n| !taken(n)).unwrap_or(name) } else { name };
        fields.push(AnswerField { name, kind, label, expected });
    };
    for fact in facts {
        match fact {
            Fact::Mentions { label, phrase } => {
                let kind = match words::read(phrase, None).as_slice() {
                    [word] if word.kind == Kind::Date => FieldKind::Date,
                    [word] if word.kind == Kind::Time => FieldKind::Time,
                    [word] if word.kind == Kind::Number => FieldKind::Count,
                    _ if is_id(phrase) => FieldKind::Id,
                    _ => FieldKind::Name,
                };
                add(field_name(label), kind, label.clone(), phrase.clone());
            }
            Fact::Amount { cents } => {
                add("amount".into(), FieldKind::Amount, "the amount".into(), format!("{}.{:02}", cents / 100, cents % 100));
            }
            Fact::Says { label, .. } => add("reason".into(), FieldKind::Reason, (*label).to_owned(), reason_code(label)),
            Fact::Never { .. } | Fact::Omits { .. } => {}
        }
    }
    fields
}

/// The JSON Schema of a typed answer with these fields.
pub fn schema(fields: &[AnswerField]) -> Value {
    let mut properties = Map::new();
    for field in fields {
        let property = match field.kind {
            FieldKind::Id => json!({"type": "string", "description": format!("{}: the id as the records write it", field.label)}),
            FieldKind::Name => json!({"type": "string", "description": format!("{}: as the records write it", field.label)}),
            FieldKind::Date => json!({"type": "string", "description": format!("{}: a date, YYYY-MM-DD", field.label)}),
            FieldKind::Time => json!({"type": "string", "description": format!("{}: a time of day, HH:MM (24-hour)", field.label)}),
            FieldKind::Count => json!({"type": "integer", "description": field.label}),
            FieldKind::Amount => json!({"type": "number", "description": format!("{}: in dollars", field.label)}),
            FieldKind::Reason => json!({
                "type": "string",
                "enum": reasons().map(str::to_owned).chain((!reasons().any(|r| r == field.expected)).then(|| field.expected.clone())).collect::<Vec<_>>(),
                "description": "why the request was refused",
            }),
        };
        properties.insert(field.name.clone(), property);
    }
    let required: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    json!({"type": "object", "properties": properties, "required": required})
}

/// Judges a typed answer: every field present and equal to the right value
/// once normalised. Returns whether it passed and, per field, what was
/// given and whether it matched. A field not asked for is ignored.
pub fn judge(fields: &[AnswerField], answer: &Value) -> (bool, Value) {
    let Some(given) = answer.as_object() else {
        return (false, json!({"error": "a typed answer is a JSON object of the answer's fields", "given": answer}));
    };
    let mut report = Map::new();
    let mut passed = true;
    for field in fields {
        let value = given.get(&field.name);
        let right = value.is_some_and(|value| matches(field, value));
        passed &= right;
        report.insert(field.name.clone(), json!({"given": value, "right": right}));
    }
    (passed, Value::Object(report))
}

/// The right value of each field, as an answer object that passes.
pub fn example(fields: &[AnswerField]) -> Value {
    let value = |field: &AnswerField| match field.kind {
        FieldKind::Count => field.expected.parse::<i64>().map_or_else(|_| json!(field.expected), |n| json!(n)),
        FieldKind::Amount => field.expected.parse::<f64>().map_or_else(|_| json!(field.expected), |n| json!(n)),
        _ => json!(field.expected),
    };
    Value::Object(fields.iter().map(|f| (f.name.clone(), value(f))).collect())
}

/// Whether a given value is the field's right value, normalised by kind.
fn matches(field: &AnswerField, value: &Value) -> bool {
    let text = match value {
        Value::String(text) => text.trim().to_owned(),
        Value::Number(number) => number.to_string(),
        _ => return false,
    };
    match field.kind {
        FieldKind::Id | FieldKind::Reason => text.eq_ignore_ascii_case(&field.expected),
        FieldKind::Name => {
            folded(text.trim_matches(['"', '\'', '\u{2018}', '\u{2019}', '\u{201c}', '\u{201d}'])) == folded(&field.expected)
        }
        FieldKind::Date | FieldKind::Time | FieldKind::Count => {
            let kind = match field.kind {
                FieldKind::Date => Kind::Date,
                FieldKind::Time => Kind::Time,
                _ => Kind::Number,
            };
            let one = |text: &str| match words::read(text, None).as_slice() {
                [word] if word.kind == kind => Some(word.text.clone()),
                _ => None,
            };
            one(&text).is_some_and(|given| Some(given) == one(&field.expected))
        }
        FieldKind::Amount => {
            let expected = match money(&field.expected).as_slice() {
                [(cents, _)] => Some(*cents),
                _ => None,
            };
            expected.is_some() && dollars(&text).map(|dollars| (dollars * 100.0).round() as i64) == expected
        }
    }
}

/// An amount written alone, in dollars: `295`, `295.00`, `$1,295.50`,
/// `USD 295`, `295 dollars`; `None` for anything else (two amounts, words).
fn dollars(text: &str) -> Option<f64> {
    let mut text = text.to_lowercase().replace([',', '$'], "");
    for unit in ["usd", "dollars", "dollar"] {
        text = text.replace(unit, "");
    }
    text.trim().parse::<f64>().ok().filter(|d| d.is_finite())
}

/// Lowercase with runs of whitespace as one space.
fn folded(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Letters and digits joined by a hyphen, with a digit: `T-0043`, `AF-1021`.
fn is_id(phrase: &str) -> bool {
    !phrase.contains(' ') && phrase.chars().any(|c| c.is_ascii_digit()) && phrase.chars().any(|c| c.is_ascii_alphabetic())
}

/// A label as a property name: "its start time" → `start_time`.
fn field_name(label: &str) -> String {
    let words: Vec<String> = label
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && !matches!(*w, "its" | "the" | "a" | "an" | "that"))
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() { "value".to_owned() } else { words.join("_") }
}

/// The reason code of a refusal's fact.
fn reason_code(label: &str) -> String {
    REASONS.iter().find(|(known, _)| *known == label).map_or_else(|| field_name(label), |(_, code)| (*code).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheduling() -> Vec<AnswerField> {
        fields(&[
            Fact::Mentions { label: "its date".into(), phrase: "2026-06-29".into() },
            Fact::Mentions { label: "its start time".into(), phrase: "14:30".into() },
            Fact::Mentions { label: "the ticket id".into(), phrase: "T-0043".into() },
            Fact::Mentions { label: "its subject".into(), phrase: "Launch checklist".into() },
            Fact::Amount { cents: 29_500 },
            Fact::Says { label: "that the trip is over budget", any_of: &["over budget"] },
            Fact::Omits { label: "the twin".into(), phrase: "Launch checklist 2".into() },
        ])
    }

    #[test]
    fn fields_take_their_kinds_and_names_from_the_facts() {
        let fields = scheduling();
        let kinds: Vec<(&str, FieldKind)> = fields.iter().map(|f| (f.name.as_str(), f.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("date", FieldKind::Date),
                ("start_time", FieldKind::Time),
                ("ticket_id", FieldKind::Id),
                ("subject", FieldKind::Name),
                ("amount", FieldKind::Amount),
                ("reason", FieldKind::Reason),
            ]
        );
        let schema = schema(&fields);
        assert_eq!(schema["required"].as_array().unwrap().len(), 6);
        assert!(schema["properties"]["reason"]["enum"].as_array().unwrap().contains(&json!("over_budget")));
    }

    #[test]
    fn a_right_answer_passes_in_any_common_format_and_a_wrong_one_fails() {
        let fields = scheduling();
        assert!(judge(&fields, &example(&fields)).0, "the example passes");
        let right = json!({"date": "June 29, 2026", "start_time": "2:30 pm", "ticket_id": "t-0043", "subject": "  launch   CHECKLIST ",
                           "amount": "$295.00", "reason": "OVER_BUDGET", "extra": "ignored"});
        assert!(judge(&fields, &right).0, "{}", judge(&fields, &right).1);
        for (field, wrong) in [
            ("date", json!("2026-06-30")),
            ("start_time", json!("14:00")),
            ("ticket_id", json!("T-0044")),
            ("subject", json!("Launch checklist 2")),
            ("amount", json!(265)),
            ("reason", json!("slot_taken")),
            ("amount", json!("$265 or $295")),
            ("date", json!(null)),
        ] {
            let mut answer = right.clone();
            answer[field] = wrong.clone();
            assert!(!judge(&fields, &answer).0, "{field} = {wrong} passed");
        }
        let mut missing = right.clone();
        missing.as_object_mut().unwrap().remove("subject");
        assert!(!judge(&fields, &missing).0);
        assert!(!judge(&fields, &json!("T-0043")).0, "not an object");
    }
}
