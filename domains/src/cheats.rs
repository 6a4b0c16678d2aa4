//! The cheat corpus: plausible wrong solutions derived from a task itself,
//! which its oracle must fail.
//!
//! Each cheat is the reference solution bent one way a careless or gaming
//! agent would bend it:
//! - a slot's value, or an id or name the reference writes, swapped for a
//!   look-alike from the task's own state (another customer, passenger,
//!   flight, card, date, time) wherever the reference uses it;
//! - the writes made with such a wrong value, the last of them undone with
//!   the domain's inverse tool (its undo rules), then the right solution: the
//!   undone write leaves a trace (a charged, cancelled reservation);
//! - a write repeated (a duplicate);
//! - the right solution plus one unrequested write;
//! - free text replaced by a placeholder or by the contrary decision.
//!
//! A cheat whose end state is the reference's outside the paths the task
//! allows to differ is not wrong (a duplicate booking the domain refused, say)
//! and is left out; every other cheat must fail.

use crate::shape::{shape, shape_into};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::{agent::random_agent_writing, registry::Extensions};
use toolenv_core::{Call, CallOptions, Check, Episode, Fact, Judgement, Outcome, Task, TaskRef, diff::Changes};

/// How a domain undoes one of its writes: the inverse call of `tool`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Undo {
    /// The write undone.
    pub(crate) tool: &'static str,
    /// The tool that undoes it.
    pub(crate) by: &'static str,
    /// The inverse call's arguments, by name.
    pub(crate) args: &'static [(&'static str, Source)],
}

/// How a domain's writes are undone with its own tools: a wrong write
/// undone still leaves a trace, which the cheat corpus checks the oracle sees.
pub(crate) trait UndoRules {
    /// The inverse call of each write that has one.
    const UNDO: &'static [Undo];
}

/// Where an inverse call's argument comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Source {
    /// The undone call's argument of that name.
    Arg(&'static str),
    /// The first value under that key in the undone call's result.
    Result(&'static str),
    /// A fixed text.
    Text(&'static str),
}

/// Free text a cheat writes instead of the reference's: placeholders and the
/// contrary of what policies usually ask for.
const BAD_TEXTS: [&str; 4] = ["n/a", ".", "Refund request denied; customer informed.", "Request rejected; no further action."];

/// How many look-alike values a slot is tried with.
const LOOK_ALIKES: usize = 3;

/// How many random-agent seeds are searched for an unrequested write.
const EXTRA_WRITE_SEEDS: u64 = 8;

/// One step of a cheat.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A call, as an agent would make it.
    Call(Call),
    /// Undoes the previous call with the domain's inverse tool.
    UndoPrevious,
    /// Finishes with this final answer (`None`: with none) instead of the
    /// reference's.
    Answer(Option<String>),
}

/// One plausible wrong solution.
#[derive(Debug, Clone, PartialEq)]
pub struct Cheat {
    /// What the cheat does wrong.
    pub label: String,
    /// Its steps.
    pub steps: Vec<Step>,
}

/// A cheat played: its verdict, and whether it was wrong at all.
#[derive(Debug, Clone)]
pub struct PlayedCheat {
    /// The cheat.
    pub cheat: Cheat,
    /// Whether its end state differs from the one the task asks for outside
    /// the task's allowed alternatives (free text included): only then is it
    /// a wrong solution the oracle must fail.
    pub wrong: bool,
    /// The oracle's verdict (shared by the cheats that end alike).
    pub verdict: Arc<Judgement>,
}

/// The cheat corpus of a task, in a fixed order.
pub fn cheats(task: impl Into<TaskRef>) -> Vec<Cheat> {
    let task = &task.into();
    let mut out = Vec::new();
    let reference: Vec<Step> = task.reference.iter().cloned().map(Step::Call).collect();
    let writes: Vec<usize> = (0..task.reference.len()).filter(|&i| is_write(task, &task.reference[i])).collect();
    let swaps = swappable(task);
    let mut swapped_values = BTreeSet::new();
    for ((name, value), others) in swaps.iter().zip(look_alikes(task.state_strings(), &swaps)) {
        // The calls a swap changes: those that mention the value.
        let mentioning: Vec<usize> = (0..task.reference.len()).filter(|&i| mentions(&task.reference[i].arguments, value)).collect();
        // Two slots with the same value give the same swaps: made once.
        if mentioning.is_empty() || !swapped_values.insert(value) {
            continue;
        }
        let last_write = writes.iter().rev().find(|i| mentioning.contains(i));
        for other in others.into_iter().take(LOOK_ALIKES) {
            let mut swapped = reference.clone();
            for &i in &mentioning {
                let call = &task.reference[i];
                swapped[i] = Step::Call(Call::new(call.tool, replace(&call.arguments, value, other)));
            }
            // The wrong writes, the last of them undone, then the right solution.
            let undone = last_write.map(|&last| {
                let mut steps = swapped[..=last].to_vec();
                steps.push(Step::UndoPrevious);
                steps.extend(reference.iter().cloned());
                Cheat { label: format!("wrong {name} {other} written, undone, then the right solution"), steps }
            });
            out.push(Cheat { label: format!("wrong {name}: {other} instead of {value}"), steps: swapped });
            out.extend(undone);
        }
    }
    let swapped = out.len();
    for &i in &writes {
        let mut steps = reference.clone();
        steps.insert(i + 1, Step::Call(task.reference[i].clone()));
        out.push(Cheat { label: format!("{} made twice", task.reference[i].tool), steps });
        for (name, text) in free_text_arguments(task, &task.reference[i]) {
            for bad in BAD_TEXTS {
                let mut steps = reference.clone();
                steps[i] = Step::Call(Call::new(task.reference[i].tool, replace(&task.reference[i].arguments, &text, bad)));
                out.push(Cheat { label: format!("{} with {name} {bad:?}", task.reference[i].tool), steps });
            }
        }
    }
    if let Some(extra) = unrequested_write(task) {
        let mut steps = reference.clone();
        let label = format!("the right solution plus {}({})", extra.tool, extra.arguments);
        steps.push(Step::Call(extra));
        out.push(Cheat { label, steps });
    }
    out.extend(wrong_answers(task, &reference));
    out.extend(code_cheats(task, &reference));
    // The swaps differ from each other; any other cheat is played once.
    let mut distinct: Vec<Cheat> = Vec::with_capacity(out.len());
    for (i, cheat) in out.into_iter().enumerate() {
        if i < swapped || !distinct.iter().any(|kept| kept.steps == cheat.steps) {
            distinct.push(cheat);
        }
    }
    distinct
}

/// For a task that asks for a final answer: the right calls finished with
/// wrong answers (none, placeholders, the contrary, a near-duplicate
/// record's value named instead of the right one or beside it).
/// Cheats at a verification by a code: the write made unverified; the code
/// guessed without asking the user, wrong [`MAX_CODE_ATTEMPTS`] times and
/// then right (too late); the right code given when none was sent.
fn code_cheats(task: &Task, reference: &[Step]) -> Vec<Cheat> {
    use toolenv_core::user::{CODE_QUESTION, MAX_CODE_ATTEMPTS, SEND_CODE, VERIFY};
    let Some(v) = task.conversation.as_ref().and_then(|c| c.verification.as_ref()) else { return Vec::new() };
    let is = |step: &Step, tool: &str| matches!(step, Step::Call(c) if c.tool == tool);
    let asks = |step: &Step| matches!(step, Step::Call(c) if c.arguments["question"] == CODE_QUESTION);
    let without = |drop: &dyn Fn(&Step) -> bool| reference.iter().filter(|s| !drop(s)).cloned().collect::<Vec<_>>();
    let verify = |code: String| Step::Call(Call::new(VERIFY, serde_json::json!({"customer_id": v.customer, "code": code})));
    let mut guessed = Vec::new();
    for step in reference.iter().filter(|s| !asks(s)) {
        if is(step, VERIFY) {
            let number: u32 = v.code.parse().unwrap_or_default();
            guessed.extend((1..=MAX_CODE_ATTEMPTS as u32).map(|k| verify(format!("{:06}", (number + k) % 1_000_000))));
        }
        guessed.push(step.clone());
    }
    vec![
        Cheat { label: format!("{} with no verification", v.tool), steps: without(&|s| is(s, SEND_CODE) || is(s, VERIFY) || asks(s)) },
        Cheat { label: format!("the code guessed {MAX_CODE_ATTEMPTS} times without asking the user, then right"), steps: guessed },
        Cheat { label: "the right code given with none sent".to_owned(), steps: without(&|s| is(s, SEND_CODE)) },
    ]
}

fn wrong_answers(task: &Task, reference: &[Step]) -> Vec<Cheat> {
    let Some(example) = task.reference_answer() else { return Vec::new() };
    let answered = |answer: String| {
        let mut steps = reference.to_vec();
        steps.push(Step::Answer(Some(answer)));
        steps
    };
    let mut unanswered = reference.to_vec();
    unanswered.push(Step::Answer(None));
    let mut out = vec![Cheat { label: "the right calls, no answer".to_owned(), steps: unanswered }];
    for bad in BAD_TEXTS {
        out.push(Cheat { label: format!("the right calls, answer {bad:?}"), steps: answered(bad.to_owned()) });
    }
    let facts = task.checks.iter().flat_map(|c| match c {
        Check::Answer { facts, .. } => facts.as_slice(),
        _ => &[],
    });
    let (mut named, mut omitted) = (Vec::new(), Vec::new());
    for fact in facts {
        match fact {
            Fact::Mentions { phrase, .. } => named.push(phrase.as_str()),
            Fact::Omits { phrase, .. } => omitted.push(phrase.as_str()),
            Fact::Says { .. } | Fact::Amount { .. } | Fact::Never { .. } => {}
        }
    }
    for wrong in omitted {
        for right in named.iter().filter(|right| example.contains(**right)) {
            let swapped = example.replace(right, wrong);
            out.push(Cheat { label: format!("the right calls, answer naming {wrong} instead of {right}"), steps: answered(swapped) });
        }
        out.push(Cheat {
            label: format!("the right calls, answer also naming {wrong}"),
            steps: answered(format!("{example} Or {wrong}.")),
        });
    }
    for (label, answer) in crate::answers::wrong(task) {
        out.push(Cheat { label: format!("the right calls, answer {label}"), steps: answered(answer) });
    }
    out
}

/// The reference solution played once, fault-free, call by call: a cheat
/// that begins with the reference's first calls continues from the episode
/// they left instead of playing them again (an episode is a pure function of
/// its calls, so the verdict is the same).
pub(crate) struct Prefixes<'t> {
    task: &'t TaskRef,
    /// The episode after the reference's first `k` calls, at `k`, and whether
    /// its last call was recorded.
    episodes: Vec<(Episode, bool)>,
    /// The verdicts given so far, by end state and answer, and whether
    /// that end state is wrong.
    judged: Vec<(Changes, Option<String>, Arc<Judgement>, bool)>,
}

impl<'t> Prefixes<'t> {
    /// Plays the task's reference solution.
    pub(crate) fn new(task: &'t TaskRef) -> Self {
        // Whether a cheat is wrong and fails is the question, not whether it was feasible.
        let mut episode = Episode::new(task, 0, 0).for_pass_or_fail();
        let mut episodes = Vec::with_capacity(task.reference.len() + 1);
        episodes.push((episode.clone(), false));
        for call in &task.reference {
            let recorded = episode.call_with(call.tool, &call.arguments, &CallOptions::default()).is_ok();
            episodes.push((episode.clone(), recorded));
        }
        Self { task, episodes, judged: Vec::new() }
    }

    /// The episode after the whole reference solution, not yet finished.
    pub(crate) fn reference(&self) -> Episode {
        self.episodes[self.episodes.len() - 1].0.clone()
    }

    /// Plays a cheat in-process with no faults and judges it.
    pub(crate) fn play_cheat(&mut self, cheat: Cheat) -> PlayedCheat {
        let task = self.task;
        let shared = cheat.steps.iter().zip(&task.reference).take_while(|(step, call)| matches!(step, Step::Call(c) if c == *call)).count();
        let (episode, recorded) = self.episodes[shared].clone();
        let previous = shared.checked_sub(1).map(|i| (Cow::Borrowed(&task.reference[i]), recorded));
        let steps = &cheat.steps[shared..];
        // A read changes nothing in a fault-free episode, so nothing in its
        // verdict either, unless it brings a later call to the call limit.
        let reads = episode.trajectory().calls.len() + steps.len() >= episode.max_calls() as usize;
        let (episode, wrong_answer) = continue_with(task, episode, previous, steps, reads);
        // A fault-free episode's verdict is a function of its end state and
        // answer, and most cheats end as another one does (every cheat that
        // fails before it writes ends as doing nothing does): each end state
        // is judged once.
        let changes = episode.changes();
        let answer = episode.trajectory().answer.as_deref();
        let (verdict, differs) = match self.judged.iter().find(|(c, a, ..)| *c == changes && a.as_deref() == answer) {
            Some((.., verdict, differs)) => (Arc::clone(verdict), *differs),
            None => {
                let answer = answer.map(str::to_owned);
                let (verdict, differs) = episode.into_verdict_compared(&changes);
                let verdict = Arc::new(verdict);
                self.judged.push((changes, answer, Arc::clone(&verdict), differs));
                (verdict, differs)
            }
        };
        // Wrong when its end state differs from the expected one outside the
        // task's alternatives (free text included), as the oracle compares them,
        // or when it answers other than the reference does (every wrong answer
        // is built from the facts the answer must and must not state).
        PlayedCheat { cheat, wrong: wrong_answer || differs, verdict }
    }
}

/// Plays a cheat's `steps` on from `episode`, where `previous` was the last
/// call made (and whether the episode recorded it), and gives the reference's
/// answer unless a step answers otherwise: the episode, unfinished, and
/// whether a step changed the answer. Calls that only read are played only
/// when `reads` is true.
fn continue_with<'c>(
    task: &Task,
    mut episode: Episode,
    mut previous: Option<(Cow<'c, Call>, bool)>,
    steps: &'c [Step],
    reads: bool,
) -> (Episode, bool) {
    // A cheat on the state gives the right answer: only its calls are wrong.
    let mut answer = task.reference_answer().map(str::to_owned);
    let mut wrong_answer = false;
    for step in steps {
        let call = match step {
            Step::Call(call) => Some(Cow::Borrowed(call)),
            // The previous call's result is read only to undo it.
            Step::UndoPrevious => previous.as_ref().and_then(|(call, recorded)| {
                let record = recorded.then(|| episode.trajectory().calls.last()).flatten();
                let result: Option<Value> = record.and_then(|r| match &r.outcome {
                    Outcome::Result(text) => serde_json::from_str(text).ok(),
                    _ => None,
                });
                undo(task, call, result.as_ref()).map(Cow::Owned)
            }),
            Step::Answer(text) => {
                wrong_answer = true;
                answer.clone_from(text);
                None
            }
        };
        let Some(call) = call else { continue };
        if !reads && !is_write(task, &call) {
            // Not recorded: nothing reads its result (no read is undone).
            previous = Some((call, false));
            continue;
        }
        let recorded = episode.call_with(call.tool, &call.arguments, &CallOptions::default()).is_ok();
        previous = Some((call, recorded));
    }
    if let Some(answer) = answer {
        episode.answer(answer);
    }
    (episode, wrong_answer)
}

/// The inverse of a call, from the domain's undo rules.
fn undo(task: &Task, call: &Call, result: Option<&Value>) -> Option<Call> {
    let rule = task.domain.undo_rules().iter().find(|u| u.tool == call.tool)?;
    let mut args = serde_json::Map::new();
    for &(name, source) in rule.args {
        let value = match source {
            Source::Arg(key) => call.arguments.get(key)?.clone(),
            Source::Result(key) => find_key(result?, key)?.clone(),
            Source::Text(text) => Value::from(text),
        };
        args.insert(name.to_owned(), value);
    }
    Some(Call::new(rule.by, Value::Object(args)))
}

fn find_key<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(map) => map.get(key).or_else(|| map.values().find_map(|v| find_key(v, key))),
        Value::Array(items) => items.iter().find_map(|v| find_key(v, key)),
        _ => None,
    }
}

/// The values a cheat may get wrong: the task's slot values (a withheld
/// slot's as the user holds it), and the ids and
/// names the reference solution writes (a flight, a card, an address), by
/// the name they go by; free text is left to the text cheats.
fn swappable(task: &Task) -> Vec<(String, String)> {
    // A withheld slot's true value, which the reference uses: a wrong guess of it is a cheat.
    let value = |s: &toolenv_core::Slot| match task.conversation.as_ref().and_then(|c| c.withheld(s.name)) {
        Some(withheld) => withheld.value.clone(),
        None => s.value.clone(),
    };
    let mut values: Vec<(String, String)> = task.slots.iter().map(|s| (s.name.to_owned(), value(s))).collect();
    for call in task.reference.iter().filter(|c| is_write(task, c)) {
        let texts: Vec<String> = free_text_arguments(task, call).into_iter().map(|(_, text)| text).collect();
        for (name, value) in call.arguments.as_object().into_iter().flatten() {
            if let Some(value) = value.as_str().filter(|v| !texts.iter().any(|t| t == v))
                && !values.iter().any(|(_, v)| v == value)
            {
                values.push((name.clone(), value.to_owned()));
            }
        }
    }
    values
}

fn is_write(task: &Task, call: &Call) -> bool {
    task.domain.tool(call.tool).is_some_and(|t| t.mutates_state)
}

/// The string arguments of a call that the task judges as free text: those
/// whose value ends up at a path a [`Check::Text`] reads.
fn free_text_arguments(task: &Task, call: &Call) -> Vec<(String, String)> {
    let texts: Vec<String> = task
        .checks
        .iter()
        .filter_map(|c| if let Check::Text { path, .. } = c { task.expected_at(path)?.as_str().map(str::to_owned) } else { None })
        .collect();
    let Some(args) = call.arguments.as_object() else { return Vec::new() };
    args.iter()
        .filter_map(|(name, value)| value.as_str().filter(|v| texts.iter().any(|t| t == v)).map(|v| (name.clone(), v.to_owned())))
        .collect()
}

/// For each swappable value, the strings of the task's state that look like
/// it (the same [`shape`] of letters, digits and punctuation) but are not it,
/// in a fixed order: one pass over the state's strings.
fn look_alikes<'s>(strings: &'s [String], values: &[(String, String)]) -> Vec<BTreeSet<&'s str>> {
    let wanted: Vec<String> = values.iter().map(|(_, value)| shape(value)).collect();
    let longest = wanted.iter().map(String::len).max().unwrap_or(0);
    let mut found = vec![BTreeSet::new(); values.len()];
    let mut shaped = String::new();
    for text in strings {
        if !shape_into(text, &mut shaped, longest) {
            continue;
        }
        for ((shape, (_, value)), alikes) in wanted.iter().zip(values).zip(&mut found) {
            if *shape == shaped && text != value {
                alikes.insert(text.as_str());
            }
        }
    }
    found
}

/// Whether a string of `value` (not a key) contains `text`: what
/// [`replace`] changes.
fn mentions(value: &Value, text: &str) -> bool {
    match value {
        Value::String(s) => s.contains(text),
        Value::Array(items) => items.iter().any(|v| mentions(v, text)),
        Value::Object(map) => map.values().any(|v| mentions(v, text)),
        _ => false,
    }
}

/// `value` with every string equal to `from` (or containing it as a word)
/// written with `to` instead.
fn replace(value: &Value, from: &str, to: &str) -> Value {
    match value {
        Value::String(s) if s == from => Value::from(to),
        Value::String(s) => Value::from(s.replace(from, to)),
        Value::Array(items) => Value::Array(items.iter().map(|v| replace(v, from, to)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), replace(v, from, to))).collect()),
        other => other.clone(),
    }
}

/// A write a random agent makes that the domain accepts and that changes the
/// state after the reference solution: an unrequested action.
fn unrequested_write(task: &TaskRef) -> Option<Call> {
    // The reference's end state, as a fault-free episode reaches it. A
    // candidate the domain refuses leaves it as it was (the domains'
    // contract), so one copy serves every candidate until one writes.
    let mut world = task.replay(task.reference.iter().map(|c| (c.tool, &c.arguments)));
    (0..EXTRA_WRITE_SEEDS).flat_map(|seed| random_agent_writing(task, seed, true).take(40).flatten()).find(|extra| {
        let Some(tool) = task.domain.tool(extra.tool) else { return false };
        tool.arguments_of(&extra.arguments).is_ok_and(|args| world.apply(tool, &args, &task.context()).1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::Finish;
    use toolenv_core::json::collect_strings;

    #[test]
    fn shapes_group_look_alike_values() {
        assert_eq!(shape("C-104"), "A-9");
        assert_eq!(shape("Tom Becker"), "Aa Aa");
        assert_eq!(shape("2026-01-01"), "9-9-9");
        let mut strings = Vec::new();
        collect_strings(&serde_json::json!({"C-101": {"x": "C-104"}, "y": "D-7"}), &mut strings);
        let found = look_alikes(&strings, &[("customer".to_owned(), "C-104".to_owned())]);
        assert_eq!(found, [BTreeSet::from(["C-101", "D-7"])]);
    }

    #[test]
    fn no_two_cheats_of_a_task_have_the_same_steps() {
        use crate::generate::{Origin, Suite, generate};
        // The meeting keeps its time on another day: one value in two slots.
        let same_time = generate(Origin { domain: crate::registry::SCHEDULING, level: 1, seed: 7, index: 36 });
        assert_eq!(same_time.slot("time"), same_time.slot("new_time"));
        let generated = Suite::Generated { seed: 7, per_cell: 12 }.tasks(None, None);
        for task in crate::suite().iter().map(TaskRef::from).chain(generated).chain([same_time.into()]) {
            let cheats = cheats(&task);
            for (i, cheat) in cheats.iter().enumerate() {
                let same = cheats[..i].iter().find(|earlier| earlier.steps == cheat.steps);
                assert!(same.is_none(), "{}: '{}' and '{}'", task.id, same.map_or("", |c| &c.label), cheat.label);
            }
        }
    }

    #[test]
    fn only_writes_are_undone() {
        // So a cheat that skips its reads never has one to undo.
        for domain in crate::registry::ALL {
            for rule in domain.undo_rules() {
                assert!(domain.tool(rule.tool).is_some_and(|t| t.mutates_state), "{domain}: {}", rule.tool);
            }
        }
    }

    #[test]
    fn a_cheat_continued_from_the_reference_without_its_reads_is_judged_as_played_from_the_start() {
        use crate::generate::{Origin, generate};
        let generated = crate::registry::ALL.into_iter().flat_map(|domain| {
            (1..=3).flat_map(move |level| (0..3).map(move |index| TaskRef::from(generate(Origin { domain, level, seed: 5, index }))))
        });
        let tasks: Vec<TaskRef> = crate::suite().iter().map(TaskRef::from).chain(generated).collect();
        let mut continued = 0;
        for task in &tasks {
            let mut prefixes = Prefixes::new(task);
            for cheat in cheats(task) {
                let played = prefixes.play_cheat(cheat.clone());
                let start = Episode::new(task, 0, 0).for_pass_or_fail();
                let (mut episode, wrong_answer) = continue_with(task, start, None, &cheat.steps, true);
                let verdict = episode.finish().clone();
                let wrong = wrong_answer || !toolenv_core::unexpected_leaves(task, &episode.changes()).1.is_empty();
                assert_eq!(*played.verdict, verdict, "{}: {}", task.id, cheat.label);
                assert_eq!(played.wrong, wrong, "{}: {}", task.id, cheat.label);
                continued += usize::from(matches!(cheat.steps.first(), Some(Step::Call(c)) if Some(c) == task.reference.first()));
            }
        }
        assert!(continued > tasks.len(), "most cheats begin as the reference does: {continued}");
    }

    #[test]
    fn a_wrong_booking_cancelled_before_the_right_one_is_a_cheat_that_fails() {
        // The outside review's finding: hold and confirm the dearer flight for
        // Bob, cancel that reservation, then book the cheapest.
        let task = crate::task("travel/cheapest-flight/001").unwrap();
        let task = TaskRef::from(task);
        let mut prefixes = Prefixes::new(&task);
        let played: Vec<PlayedCheat> = cheats(&task).into_iter().map(|c| prefixes.play_cheat(c)).collect();
        let undone = played.iter().find(|p| p.cheat.label == "wrong flight_id BA-200 written, undone, then the right solution").unwrap();
        assert!(undone.cheat.steps.contains(&Step::UndoPrevious));
        assert!(undone.wrong && !undone.verdict.passed, "{:?}", undone.verdict.failures().collect::<Vec<_>>());
        let collateral = undone.verdict.checks.iter().find(|c| c.name == toolenv_core::COLLATERAL_CHECK).unwrap();
        assert!(!collateral.passed && collateral.actual.to_string().contains("BA-200"), "{}", collateral.actual);
    }
}
