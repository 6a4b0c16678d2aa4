//! Built-in agents that need no model: the reference agent (a task's
//! reference solution), a seeded random-call agent and the guesser of a
//! conversational task's withheld slots; [`crate::selfcheck`] plays them
//! against the oracle.

use std::borrow::Cow;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde_json::{Map, Value};

use crate::Finish;
use toolenv_core::{Call, CallOptions, Episode, Param, ParamType, Task, TaskRef, date::Date};

/// How many calls the random agent makes per episode in the self-check.
pub const RANDOM_AGENT_CALLS: usize = 25;
/// How many random-agent seeds the self-check tries per task.
pub const RANDOM_AGENT_SEEDS: u64 = 20;

/// Plays a list of calls in-process and finishes the episode. Rejected calls
/// (bad arguments) are recorded like any other, as a server would.
pub fn play_calls(task: impl Into<TaskRef>, seed: u64, trial: u32, calls: &[Call]) -> Episode {
    play_answering(task, seed, trial, calls, None)
}

/// [`play_calls`], finishing with a final answer.
pub fn play_answering(task: impl Into<TaskRef>, seed: u64, trial: u32, calls: &[Call], answer: Option<&str>) -> Episode {
    play_in(Episode::new(task, seed, trial), calls, answer)
}

/// Plays calls in an episode and finishes it with an answer, as a server
/// records it (feasibility decided).
fn play_in(mut episode: Episode, calls: &[Call], answer: Option<&str>) -> Episode {
    call_all(&mut episode, calls);
    if let Some(answer) = answer {
        episode.answer(answer);
    }
    episode.finish_with_feasibility();
    episode
}

/// Plays calls in an episode, leaving it unfinished.
pub(crate) fn call_all(episode: &mut Episode, calls: &[Call]) {
    for call in calls {
        // A rejected call is already in the trajectory; the agent moves on.
        let _ = episode.call_with(call.tool, &call.arguments, &CallOptions::default());
    }
}

/// The calls of a seeded random agent: random tools of the task's domain with
/// arguments drawn from the values found in the task's initial state, dates
/// around the episode's today, and common words. A pure function of
/// (task, seed, count), using ChaCha8 so the calls are the same on every
/// platform and version.
pub fn random_calls(task: &Task, seed: u64, count: usize) -> Vec<Call> {
    random_agent(task, seed).take(count).collect()
}

/// [`random_calls`] as an endless sequence, drawn as it is read.
pub(crate) fn random_agent(task: &Task, seed: u64) -> impl Iterator<Item = Call> + '_ {
    random_agent_writing(task, seed, false).flatten()
}

/// The random agent's calls in turn, each `None` when `writes_only` and it
/// is a read: a read's arguments are drawn but not built, so the writes are
/// the ones [`random_agent`] makes.
pub(crate) fn random_agent_writing(task: &Task, seed: u64, writes_only: bool) -> impl Iterator<Item = Option<Call>> + '_ {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let pool = Pool { strings: task.state_strings(), today: task.today };
    let tools = task.tools();
    std::iter::repeat_with(move || {
        let tool = tools.get(below(&mut rng, tools.len())).expect("an index below the tool count");
        let build = tool.mutates_state || !writes_only;
        let arguments = random_object(tool.params, &pool, &mut rng, build);
        build.then(|| Call::new(tool.name, arguments))
    })
}

/// The strings a random agent draws from, in order: the task's state
/// strings, the dates around its today ([`Pool::DAYS`]), then
/// [`Pool::WORDS`] (read in place, not copied into one list).
struct Pool<'t> {
    strings: &'t [String],
    today: Date,
}

impl<'t> Pool<'t> {
    /// The dates drawn, in days from today.
    const DAYS: std::ops::Range<i64> = -3..30;
    const WORDS: [&'static str; 13] =
        ["09:00", "10:00", "13:00", "16:00", "high", "low", "open", "closed", "tier2", "Alice", "Bob", "refund", "SAVE10"];

    fn len(&self) -> usize {
        self.strings.len() + Self::DAYS.count() + Self::WORDS.len()
    }

    /// Draws the index of a string.
    fn draw(&self, rng: &mut ChaCha8Rng) -> usize {
        below(rng, self.len())
    }

    /// The string at an index (a date is written only when read).
    fn at(&self, i: usize) -> Cow<'t, str> {
        let day = i.wrapping_sub(self.strings.len());
        match self.strings.get(i) {
            Some(s) => Cow::Borrowed(s),
            None if day < Self::DAYS.count() => Cow::Owned(self.today.add_days(Self::DAYS.start + day as i64).to_string()),
            None => Cow::Borrowed(Self::WORDS[day - Self::DAYS.count()]),
        }
    }
}

fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    // Modulo bias is irrelevant for a random agent.
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// Random arguments for `params`; with `build` false, the same draws
/// and an empty object (nothing built).
fn random_object(params: &[Param], pool: &Pool, rng: &mut ChaCha8Rng, build: bool) -> Value {
    let mut map = Map::new();
    let text = |text: &str| if build { Value::from(text) } else { Value::Null };
    let drawn = |i| if build { Value::from(pool.at(i)) } else { Value::Null };
    for param in params {
        if !param.required && below(rng, 2) == 0 {
            continue;
        }
        let value = match param.ty {
            ParamType::String => drawn(pool.draw(rng)),
            ParamType::OneOf(values) => text(values[below(rng, values.len())]),
            ParamType::Number => Value::from(below(rng, 1000) as f64),
            ParamType::Integer => Value::from(below(rng, 4) as i64),
            ParamType::StringList => Value::Array(vec![drawn(pool.draw(rng))]),
            ParamType::ObjectList(fields) => {
                let items: Vec<Value> = (0..=below(rng, 2)).map(|_| random_object(fields, pool, rng, build)).collect();
                Value::Array(items)
            }
        };
        if build {
            map.insert(param.name.to_owned(), value);
        }
    }
    Value::Object(map)
}

/// How many wrong guesses of a conversational task's withheld slots the self-check plays.
pub const GUESSES: usize = 3;

/// A conversational task as an agent that guesses instead of asking sees
/// it: each withheld slot filled with its `k`-th look-alike of the same
/// kind (a value of the task's state, the latest first for dates and times,
/// then days after today), never the
/// true value, and nothing left to ask. `None` when the task withholds
/// nothing.
pub fn guessed(task: &Task, k: usize) -> Option<Task> {
    use toolenv_core::user::Entity;
    let conversation = task.conversation.as_ref().filter(|c| !c.withheld.is_empty())?;
    let mut guessed = task.clone();
    for withheld in &conversation.withheld {
        let entity = withheld.entity;
        let mut look_alikes: Vec<String> = Vec::new();
        for s in task.state_strings() {
            if *s != withheld.value && s.len() < 40 && Entity::of(withheld.slot, s) == entity && !look_alikes.contains(s) {
                look_alikes.push(s.clone());
            }
        }
        // The latest first: a guess past the true date or time leads past what it leads to.
        if matches!(entity, Entity::Date | Entity::Time) {
            look_alikes.sort_by(|a, b| b.cmp(a));
        }
        let days = (1..).map(|d| task.today.add_days(d).to_string()).filter(|d| *d != withheld.value);
        let fallback = (0..).map(|n| format!("{}-{n}", withheld.value));
        let guess = match entity {
            Entity::Date => look_alikes.into_iter().chain(days).nth(k),
            _ => look_alikes.into_iter().chain(fallback).nth(k),
        };
        if let (Some(slot), Some(guess)) = (guessed.slots.iter_mut().find(|s| s.name == withheld.slot), guess) {
            slot.value = guess;
        }
    }
    guessed.conversation = Some(toolenv_core::user::Conversation { withheld: Vec::new(), ..conversation.clone() });
    Some(guessed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_random_agent_draws_the_same_writes_when_its_reads_are_not_built() {
        for task in (crate::generate::Suite::Generated { seed: 4, per_cell: 2 }).tasks(None, None) {
            for seed in 0..3 {
                let all: Vec<Call> = random_agent(&task, seed).take(50).collect();
                let writes: Vec<Option<Call>> = random_agent_writing(&task, seed, true).take(50).collect();
                let expected: Vec<Option<Call>> =
                    all.into_iter().map(|c| task.domain.tool(c.tool).is_some_and(|t| t.mutates_state).then_some(c)).collect();
                assert_eq!(writes, expected, "{} seed {seed}", task.id);
            }
        }
    }

    #[test]
    fn a_call_given_as_json_is_recorded_as_its_text_is() {
        let tasks =
            crate::suite().iter().map(TaskRef::from).chain(crate::generate::Suite::Generated { seed: 3, per_cell: 1 }.tasks(None, None));
        for task in tasks {
            let mut calls = task.reference.clone();
            calls.extend(random_calls(&task, 1, 60));
            calls.push(Call::new("no_such_tool", serde_json::json!({"x": 1})));
            let (mut as_text, mut as_json) = (Episode::new(&task, 0, 0), Episode::new(&task, 0, 0));
            for call in &calls {
                let text = as_text.call(call.tool, &call.arguments.to_string()).cloned();
                assert_eq!(
                    text,
                    as_json.call_with(call.tool, &call.arguments, &CallOptions::default()).cloned(),
                    "{}: {}({})",
                    task.id,
                    call.tool,
                    call.arguments
                );
            }
            assert_eq!(as_text.finish(), as_json.finish(), "{}", task.id);
        }
    }
}
