//! Typed answers: every generated task that asks something publishes a
//! schema of typed fields; after the reference's calls its example (the
//! right value of each field, written the way the schema asks) passes, the
//! same values in other common formats pass, and each field given wrong,
//! missing or as two candidates fails — a typed answer's verdict is right
//! by construction, with no reading of prose.

use serde_json::{Value, json};
use toolenv_core::typed::{self, FieldKind};
use toolenv_core::{Answer, CallOptions, Episode, TaskRef, Verdict};
use toolenv_domains::generate::{Origin, generate};

/// A right value written another common way.
fn restyled(kind: FieldKind, expected: &str) -> Value {
    match kind {
        FieldKind::Id | FieldKind::Reason => json!(expected.to_lowercase()),
        FieldKind::Name => json!(format!("  {}  ", expected.to_uppercase())),
        FieldKind::Date => {
            let (y, rest) = expected.split_once('-').unwrap();
            let (m, d) = rest.split_once('-').unwrap();
            const MONTHS: [&str; 12] =
                ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
            json!(format!("{} {}, {y}", MONTHS[m.parse::<usize>().unwrap() - 1], d.trim_start_matches('0')))
        }
        FieldKind::Time => {
            let (h, m) = expected.split_once(':').unwrap();
            let h: u32 = h.parse().unwrap();
            json!(format!("{}:{m} {}", if h.is_multiple_of(12) { 12 } else { h % 12 }, if h < 12 { "am" } else { "pm" }))
        }
        FieldKind::Count => json!(expected),
        FieldKind::Amount => json!(format!("${expected}")),
    }
}

/// The same field given wrong: another value of its kind.
fn wrong(kind: FieldKind, expected: &str) -> Value {
    match kind {
        FieldKind::Id | FieldKind::Name => json!(format!("{expected}x")),
        FieldKind::Reason => json!(typed::reasons().find(|r| *r != expected).unwrap()),
        FieldKind::Date => json!(if expected.ends_with("-01") { expected.replace("-01", "-02") } else { "2020-01-01".to_owned() }),
        FieldKind::Time => json!(if expected == "23:59" { "00:00" } else { "23:59" }),
        FieldKind::Count => json!(expected.parse::<i64>().unwrap() + 1),
        FieldKind::Amount => json!(expected.parse::<f64>().unwrap() + 1.0),
    }
}

#[test]
fn typed_answers_are_judged_right_by_construction() {
    let mut tasks = 0;
    for domain in toolenv_domains::registry::ALL {
        for index in 0..60 {
            let task = TaskRef::from(generate(Origin { domain, level: 3, seed: 7, index }));
            let fields = task.answer_fields();
            if !task.asks_for_answer() {
                assert!(fields.is_empty() && task.answer_schema().is_none(), "{}", task.id);
                continue;
            }
            assert!(!fields.is_empty(), "{}: an answer task publishes typed fields", task.id);
            tasks += 1;
            let mut episode = Episode::new(&task, 0, 0);
            for call in &task.reference {
                episode.call_with(call.tool, &call.arguments, &CallOptions::default()).expect("a reference call is recorded");
            }
            let changes = episode.changes();
            let judged = |answer: &Value| Verdict::judge_changes(&task, &changes, None, Answer::Typed(answer)).passed;
            let example = typed::example(&fields);
            assert!(judged(&example), "{}: the example {example} fails", task.id);
            let mut other_style = example.clone();
            for field in &fields {
                other_style[&field.name] = restyled(field.kind, &field.expected);
            }
            assert!(judged(&other_style), "{}: {other_style} fails", task.id);
            for field in &fields {
                let mut answer = example.clone();
                answer[&field.name] = wrong(field.kind, &field.expected);
                assert!(!judged(&answer), "{}: {} = {} passes", task.id, field.name, answer[&field.name]);
                answer[&field.name] = json!(format!("{} or {}", field.expected, wrong(field.kind, &field.expected)));
                if field.kind != FieldKind::Name {
                    assert!(!judged(&answer), "{}: two candidates for {} pass", task.id, field.name);
                }
                answer.as_object_mut().unwrap().remove(&field.name);
                assert!(!judged(&answer), "{}: without {} passes", task.id, field.name);
            }
        }
    }
    assert!(tasks >= 40, "only {tasks} answer tasks checked");
}
