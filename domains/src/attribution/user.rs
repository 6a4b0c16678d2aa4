//! The user as a responsible party: an answer supplied from outside (an
//! LLM user) that told a slot wrong, or not at all, when the episode would
//! have passed had it told the truth.
//!
//! The ground truth of a turn is the rule-based user's answer to the same
//! question ([`toolenv_core::user::hear`]): it tells every slot the question
//! names, right, so it is never responsible. For each supplied answer whose
//! `told` differs from that truth, the recorded calls are replayed from the
//! start with that answer replaced by the truth (the turn answered by the
//! rule-based user) and, in every later call's arguments and in the final
//! answer, each wrong value the answer told replaced by the true one. If
//! that replay passes, the user is responsible at that turn's step. So it
//! is when the agent used a wrong value (or was told none) and, with the
//! truth, its calls leave nothing an ideal continuation cannot finish (it
//! stopped on the consequences of the wrong answer). A value the agent
//! derived from a wrong one (a flight found on a wrong date) is not
//! replaced: such an episode stays the agent's.

use std::collections::BTreeMap;

use serde_json::Value;
use toolenv_core::{Episode, Outcome, ReplayCall, Source, Trajectory, bus::ASK_USER, user};

use super::continuation::{Plan, continue_from};
use super::{AttributedError, ErrorType, Responsible};
use crate::Finish;

/// A supplied answer that told slots wrong: the turn's index, and each slot's told value (if any) and truth.
struct Misinformed {
    step: u32,
    wrong: Vec<(String, Option<String>, String)>,
}

/// The user's error, if an answer it was supplied told a slot wrong and
/// the episode passes with the truth in its place (the first such turn).
pub(super) fn misinformed(source: &Source, trajectory: &Trajectory) -> Option<AttributedError> {
    let conversation = source.task.conversation.as_ref()?;
    trajectory
        .calls
        .iter()
        .filter(|c| c.tool == ASK_USER && c.user_answer().is_some())
        .filter_map(|call| {
            let question = serde_json::from_str::<Value>(&call.arguments).ok()?.get("question")?.as_str()?.to_owned();
            let truth = user::hear(conversation, &source.task.slots, &question).told;
            let Outcome::Result(reply) = &call.outcome else { return None };
            let told = serde_json::from_str::<Value>(reply).ok()?.get("told")?.as_object()?.clone();
            let wrong: Vec<(String, Option<String>, String)> = truth
                .into_iter()
                .map(|(slot, value)| (slot.to_owned(), told.get(slot).and_then(Value::as_str).map(str::to_owned), value))
                .filter(|(_, said, value)| said.as_ref() != Some(value))
                .collect();
            (!wrong.is_empty()).then_some(Misinformed { step: call.index, wrong })
        })
        .find(|m| passes_with_truth(source, trajectory, m))
        .map(|m| {
            let said: Vec<String> = m
                .wrong
                .iter()
                .map(|(slot, said, value)| match said {
                    Some(said) => format!("{} {said} (it is {value})", user::readable(slot)),
                    None => format!("no {} (it is {value})", user::readable(slot)),
                })
                .collect();
            let reason = format!("the user's answer at call {} told {}; with the true answer the episode passes", m.step, said.join(", "));
            AttributedError::new(m.step, Responsible::User, ErrorType::UserMisinformed, reason)
        })
}

/// Whether the recorded calls pass when replayed with the turn's answer the
/// rule-based user's and the wrong values it told replaced by the truth.
fn passes_with_truth(source: &Source, trajectory: &Trajectory, misinformed: &Misinformed) -> bool {
    let Ok(mut episode) = Episode::recreate(source) else { return false };
    let fixes: BTreeMap<&str, &str> =
        misinformed.wrong.iter().filter_map(|(_, said, value)| Some((said.as_deref()?, value.as_str()))).collect();
    // Whether the wrong answer reached the agent's calls: a wrong value used, or a value never told.
    let mut used = misinformed.wrong.iter().any(|(_, said, _)| said.is_none());
    for record in &trajectory.calls {
        let mut call = ReplayCall::from(record);
        if record.index == misinformed.step {
            call.user_answer = None;
        } else if record.index > misinformed.step
            && let Ok(mut arguments) = serde_json::from_str::<Value>(&record.arguments)
        {
            let before = arguments.clone();
            fix_value(&mut arguments, &fixes);
            used |= arguments != before;
            call.arguments = arguments.to_string();
        }
        if episode.replay_call(&call).is_err() {
            break;
        }
    }
    let mut replayed = episode.counterfactual(false);
    if let Some(answer) = &trajectory.answer {
        replayed.answer(fix_text(answer, &fixes));
    }
    if let Some(typed) = &trajectory.answer_json {
        let mut typed = typed.clone();
        fix_value(&mut typed, &fixes);
        replayed.answer_typed(typed);
    }
    replayed.finish().passed || (used && continue_from(&source.task, &Plan::of(&source.task), &episode, false).passed)
}

/// `value` with every wrong value in it replaced by the true one: a string
/// wherever it says the wrong value as a token, a number equal to it.
fn fix_value(value: &mut Value, fixes: &BTreeMap<&str, &str>) {
    match value {
        Value::String(text) => *text = fix_text(text, fixes),
        Value::Number(n) => {
            if let Some(right) = fixes.get(n.to_string().as_str()).and_then(|r| r.parse::<serde_json::Number>().ok()) {
                *n = right;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| fix_value(v, fixes)),
        Value::Object(map) => map.values_mut().for_each(|v| fix_value(v, fixes)),
        Value::Bool(_) | Value::Null => {}
    }
}

/// `text` with each wrong value said as a whole token (not inside a longer
/// word or number) replaced by the true one.
fn fix_text(text: &str, fixes: &BTreeMap<&str, &str>) -> String {
    let mut text = text.to_owned();
    for (wrong, right) in fixes.iter().filter(|(wrong, _)| !wrong.is_empty()) {
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(wrong) {
            let after = &rest[at + wrong.len()..];
            let bounded = !rest[..at].ends_with(char::is_alphanumeric) && !after.starts_with(char::is_alphanumeric);
            out.push_str(&rest[..at]);
            out.push_str(if bounded { right } else { wrong });
            rest = after;
        }
        out.push_str(rest);
        text = out;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_values_are_fixed_as_whole_tokens() {
        let fixes = BTreeMap::from([("2026-03-09", "2026-03-04"), ("FL-9", "FL-2"), ("3", "4")]);
        assert_eq!(fix_text("Move it to 2026-03-09, flight FL-9 (not FL-90).", &fixes), "Move it to 2026-03-04, flight FL-2 (not FL-90).");
        let mut value = serde_json::json!({"date": "2026-03-09", "quantity": 3, "n": 33, "note": ["3 items", "item 13"]});
        fix_value(&mut value, &fixes);
        assert_eq!(value, serde_json::json!({"date": "2026-03-04", "quantity": 4, "n": 33, "note": ["4 items", "item 13"]}));
    }
}
