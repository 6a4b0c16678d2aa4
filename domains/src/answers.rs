//! The answer corpus of the self-check, for a task that asks for a final
//! answer: wrong answers built from its reference answer, which its oracle
//! must fail (shotgun, negated, hedged, contrary-role, empty), and right
//! answers written differently, which it must pass (facts in another order,
//! other formats of dates, times and amounts, synonyms, politeness, a
//! restated question).
//!
//! Both are derived from the task alone: its reference answer, the facts its
//! answer check asks for, and the other candidates its state holds
//! ([`Task::answer_candidates`]).

use toolenv_core::{
    Check, Fact, Task,
    date::{Date, format_time, parse_time},
};

/// How many other candidates a shotgun answer lists.
const SHOTGUN: usize = 6;

/// How many synonyms of each statement a right answer is tried with.
const SYNONYMS: usize = 3;

/// Answers that state nothing.
const EMPTY: [&str; 3] = ["", "   ", "\n"];

/// The wrong answers of a task, each with what it does wrong.
pub(crate) fn wrong(task: &Task) -> Vec<(String, String)> {
    let (Some(example), Some(facts)) = (task.reference_answer(), facts(task)) else { return Vec::new() };
    let mut out: Vec<(String, String)> = EMPTY.iter().map(|e| (format!("empty answer {e:?}"), (*e).to_owned())).collect();
    let named = task.answer_candidates();
    let typed = typed_others(task, facts);
    let trimmed = example.trim_end_matches(['.', ' ']);
    let other = named.first().or(typed.first());
    // Shotgun: the right answer, then many other candidates of the same kinds.
    for (kind, list) in [("candidates", named), ("values", typed.as_slice())] {
        if !list.is_empty() {
            let listed = list.iter().take(SHOTGUN).map(String::as_str).collect::<Vec<_>>().join(", ");
            out.push((format!("shotgun: the answer, then other {kind} ({listed})"), format!("{example} Also {listed}.")));
        }
    }
    // Negated: each required statement negated in its own clause.
    for (i, fact) in facts.iter().enumerate() {
        let phrases: Vec<&str> = match fact {
            Fact::Says { any_of, .. } => any_of.to_vec(),
            Fact::Mentions { phrase, .. } => vec![phrase.as_str()],
            Fact::Amount { .. } | Fact::Never { .. } | Fact::Omits { .. } => continue,
        };
        let negation = ["not", "no longer", "never"][i % 3];
        let negated = phrases.iter().fold(example.to_owned(), |text, phrase| negate(&text, phrase, negation));
        if negated != example {
            out.push((format!("negated: {} with \"{negation}\"", describe(fact)), negated));
        }
    }
    // Hedged.
    out.push(("hedged: maybe".to_owned(), format!("Maybe: {example}")));
    out.push(("hedged: perhaps".to_owned(), format!("Perhaps {}{}", lower_first(example), "")));
    if let Some(other) = other {
        out.push((format!("hedged: either … or {other}"), format!("Either {trimmed}, or {other}.")));
        out.push((format!("hedged: one of, with {other}"), format!("It is one of these: {trimmed}; {other}.")));
        out.push((format!("hedged: or possibly {other}"), format!("{example} Or possibly {other}.")));
    }
    // Contrary role: the right values said about another candidate.
    for value in task.slots.iter().map(|s| s.value.as_str()).chain(mentioned(facts)) {
        if !example.contains(value) {
            continue;
        }
        let shape = crate::shape::shape(value);
        if let Some(other) = named.iter().find(|o| crate::shape::shape(o) == shape && !o.contains(value) && !value.contains(o.as_str())) {
            let swapped = example.replace(value, other);
            out.push((format!("contrary role: {other} in place of {value}"), swapped));
        }
    }
    out.retain(|(_, answer)| answer != example);
    out
}

/// The right answers of a task written otherwise than its reference answer,
/// each with how it differs.
pub fn right(task: &Task) -> Vec<(String, String)> {
    let (Some(example), Some(facts)) = (task.reference_answer(), facts(task)) else { return Vec::new() };
    let mut out = vec![
        ("politeness".to_owned(), format!("Thanks for your patience! {example} Let me know if there is anything else I can do for you.")),
        ("restated question, quoted".to_owned(), format!("You asked: \"{}\" Here is the answer: {example}", task.description())),
    ];
    if let Some(slot) = task.slots.first() {
        out.push(("restated question, one value".to_owned(), format!("About {}: {example}", slot.value)));
    }
    // Facts in another order: the parts of the answer reversed.
    let parts: Vec<&str> =
        example.trim_end_matches('.').split("; ").flat_map(|p| p.split(": ")).map(str::trim).filter(|p| !p.is_empty()).collect();
    if parts.len() > 1 {
        let reversed: Vec<String> = parts.iter().rev().map(|p| upper_first(p)).collect();
        out.push(("facts in another order".to_owned(), format!("{}.", reversed.join(". "))));
    } else {
        let values: Vec<&str> = mentioned(facts).collect();
        let listed: Vec<&str> = values.iter().rev().copied().collect();
        out.push(("facts in another order".to_owned(), format!("In short, {}: {example}", listed.join(" and "))));
    }
    // Other formats of the dates, times and amounts it states.
    for fact in facts {
        match fact {
            Fact::Mentions { phrase, .. } => {
                if let Some(date) = Date::parse(phrase) {
                    let (y, m, d) = date.ymd();
                    let month = MONTHS[m as usize - 1];
                    for (format, text) in [("Month D, YYYY", format!("{month} {d}, {y}")), ("D Month YYYY", format!("{d} {month} {y}"))] {
                        out.push((format!("the date as {format}"), example.replace(phrase.as_str(), &text)));
                    }
                } else if let Some(minutes) = parse_time(phrase) {
                    let (h, m) = (minutes / 60, minutes % 60);
                    let (h12, half) = (if h % 12 == 0 { 12 } else { h % 12 }, if h < 12 { "am" } else { "pm" });
                    let short = if m == 0 { format!("{h12} {half}") } else { format!("{h12}:{m:02} {half}") };
                    out.push(("the time as h am/pm".to_owned(), example.replace(phrase.as_str(), &short)));
                    out.push((
                        "the time as h:mm AM/PM".to_owned(),
                        example.replace(phrase.as_str(), &format!("{h12}:{m:02} {}", half.to_uppercase())),
                    ));
                }
            }
            Fact::Amount { cents } => {
                let (whole, part) = (cents / 100, cents % 100);
                for written in [format!("${whole}.{part:02}"), format!("{whole} dollars"), format!("${whole}")] {
                    if example.contains(&written) {
                        for (format, text) in
                            [("USD after", format!("{whole}.{part:02} USD")), ("USD before", format!("USD {whole}.{part:02}"))]
                        {
                            out.push((format!("the amount as {format}"), example.replace(&written, &text)));
                        }
                        break;
                    }
                }
            }
            Fact::Says { .. } | Fact::Never { .. } | Fact::Omits { .. } => {}
        }
    }
    // Synonyms: each statement in other words the check accepts.
    for fact in facts {
        let Fact::Says { any_of, .. } = fact else { continue };
        let Some(used) = any_of.iter().find(|p| contains_word(example, p)) else { continue };
        for synonym in any_of.iter().filter(|p| *p != used).take(SYNONYMS) {
            out.push((format!("synonym: {synonym} for {used}"), replace_words(example, used, synonym)));
        }
    }
    out.retain(|(_, answer)| answer != example);
    out
}

const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

fn facts(task: &Task) -> Option<&[Fact]> {
    task.checks.iter().find_map(|c| match c {
        Check::Answer { facts, .. } => Some(facts.as_slice()),
        _ => None,
    })
}

fn mentioned(facts: &[Fact]) -> impl Iterator<Item = &str> {
    facts.iter().filter_map(|f| match f {
        Fact::Mentions { phrase, .. } => Some(phrase.as_str()),
        _ => None,
    })
}

fn describe(fact: &Fact) -> String {
    match fact {
        Fact::Says { label, .. } => (*label).to_owned(),
        Fact::Mentions { label, phrase } => format!("{label} ({phrase})"),
        other => format!("{other:?}"),
    }
}

/// Other values of the typed kinds the answer must state: dates, times,
/// counts and amounts next to the right ones, none of them the task's own.
fn typed_others(task: &Task, facts: &[Fact]) -> Vec<String> {
    let description = task.description();
    let mut out = Vec::new();
    for fact in facts {
        let candidates: Vec<String> = match fact {
            Fact::Mentions { phrase, .. } => {
                if let Some(date) = Date::parse(phrase) {
                    [1, 2, -1].iter().map(|&d| date.add_days(d).to_string()).collect()
                } else if let Some(minutes) = parse_time(phrase) {
                    [60, 120, 180].iter().map(|&m| format_time((minutes + m) % (24 * 60))).collect()
                } else if let Ok(count) = phrase.parse::<u32>() {
                    [1, 2, 7].iter().map(|&n| (count + n).to_string()).collect()
                } else {
                    continue;
                }
            }
            Fact::Amount { cents } => {
                [100, 550, *cents].iter().map(|&more| format!("${}.{:02}", (cents + more) / 100, (cents + more) % 100)).collect()
            }
            Fact::Says { .. } | Fact::Never { .. } | Fact::Omits { .. } => continue,
        };
        out.extend(candidates.into_iter().filter(|c| !description.contains(c.trim_start_matches('$'))));
    }
    out
}

/// `text` with `negation` put before every occurrence of `phrase` (as whole
/// words, ignoring case; before the quote that opens it, if any).
fn negate(text: &str, phrase: &str, negation: &str) -> String {
    let starts = word_starts(text, phrase);
    let mut out = text.to_owned();
    for &at in starts.iter().rev() {
        let at = if at > 0 && matches!(text.as_bytes()[at - 1], b'\'' | b'"') { at - 1 } else { at };
        out.insert_str(at, &format!("{negation} "));
    }
    out
}

/// Where `phrase` starts in `text` as whole words, ignoring ASCII case.
fn word_starts(text: &str, phrase: &str) -> Vec<usize> {
    let (lower, phrase) = (text.to_ascii_lowercase(), phrase.to_ascii_lowercase());
    let bytes = lower.as_bytes();
    let boundary = |at: usize| at == 0 || at >= bytes.len() || !bytes[at].is_ascii_alphanumeric() || !bytes[at - 1].is_ascii_alphanumeric();
    lower.match_indices(&phrase).map(|(at, _)| at).filter(|&at| boundary(at) && boundary(at + phrase.len())).collect()
}

fn contains_word(text: &str, phrase: &str) -> bool {
    !word_starts(text, phrase).is_empty()
}

fn replace_words(text: &str, from: &str, to: &str) -> String {
    let mut out = text.to_owned();
    for at in word_starts(text, from).into_iter().rev() {
        out.replace_range(at..at + from.len(), to);
    }
    out
}

fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Finish;
    use crate::generate::{Origin, generate};
    use toolenv_core::{Episode, TaskRef};

    /// The answer tasks of a sample of level 3, by kind.
    fn answer_tasks(per_domain: u32) -> Vec<TaskRef> {
        crate::registry::ALL
            .into_iter()
            .flat_map(|domain| (0..per_domain).map(move |index| generate(Origin { domain, level: 3, seed: 31, index })))
            .filter(Task::asks_for_answer)
            .map(TaskRef::from)
            .collect()
    }

    fn passes(task: &TaskRef, answer: &str) -> bool {
        let mut episode = Episode::new(task, 0, 0);
        for call in &task.reference {
            episode.call_with(call.tool, &call.arguments, &toolenv_core::CallOptions::default()).expect("a reference call is recorded");
        }
        episode.finish_with_answer(Some(answer)).passed
    }

    #[test]
    fn every_wrong_answer_fails_and_every_right_one_passes() {
        let tasks = answer_tasks(30);
        let kinds: std::collections::BTreeSet<&str> = tasks.iter().map(|t| t.kind()).collect();
        assert!(kinds.len() >= 8, "every kind of answer task is sampled: {kinds:?}");
        let mut classes = std::collections::BTreeMap::<String, usize>::new();
        for task in &tasks {
            assert!(passes(task, task.reference_answer().unwrap()), "{}", task.id);
            for (label, answer) in wrong(task) {
                assert!(!passes(task, &answer), "{}: {label}: {answer:?} passes", task.id);
                *classes.entry(label.split(':').next().unwrap_or_default().to_owned()).or_default() += 1;
            }
            for (label, answer) in right(task) {
                assert!(passes(task, &answer), "{}: {label}: {answer:?} fails", task.id);
            }
        }
        for class in ["shotgun", "negated", "hedged", "contrary role", "empty answer \"\""] {
            assert!(classes.keys().any(|c| c.starts_with(class)), "no {class} answer among {classes:?}");
        }
    }

    #[test]
    fn the_review_s_answers_fail() {
        // Found by the outside review: a shotgun list after the right fact,
        // and a refusal whose reason is negated in its own clause.
        for task in answer_tasks(30) {
            let example = task.reference_answer().unwrap();
            let others = task.answer_candidates().iter().take(8).cloned().collect::<Vec<_>>().join(", ");
            if !others.is_empty() {
                assert!(!passes(&task, &format!("{example} Other matches: {others}.")), "{}", task.id);
            }
            if task.kind() == "refuse-booking" {
                let negated = example.replace("is already taken", "is not already taken");
                assert_ne!(negated, example);
                assert!(!passes(&task, &negated), "{}: {negated}", task.id);
            }
        }
    }
}
