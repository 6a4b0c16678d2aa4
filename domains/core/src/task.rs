//! Tasks: what an agent is asked to do, from which state, and how the end
//! state is judged.

use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::Value;

use crate::{
    check::Check,
    date::Date,
    diff::{Changes, View},
    phrasing::Template,
    world::{Context, Domain, Tools, World},
};

/// A named value in a task's description, e.g. `date = 2026-01-05`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slot {
    /// The slot's name, as written in the template (`{date}`).
    pub name: &'static str,
    /// Its value.
    pub value: String,
}

/// Builds a task's slots from (name, value) pairs.
pub fn slots(pairs: &[(&'static str, &str)]) -> Vec<Slot> {
    pairs.iter().map(|&(name, value)| Slot { name, value: value.to_owned() }).collect()
}

/// One tool call of a reference solution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    /// The tool's name.
    pub tool: &'static str,
    /// The arguments, a JSON object.
    pub arguments: Value,
}

impl Call {
    /// A call of `tool` with `arguments`.
    pub fn new(tool: &'static str, arguments: Value) -> Self {
        Self { tool, arguments }
    }
}

/// An agentic task τ = (d, S0, T, v).
#[derive(Debug, Clone)]
pub struct Task {
    /// Stable id such as `travel/cheapest-flight/001`.
    pub id: String,
    /// The task's domain, which fixes its tools.
    pub domain: Domain,
    /// Complexity level: 1 or 2 as in the paper's Table 4, or 3 (several
    /// constraints and steps, refusals and answers; generated tasks only).
    pub level: u8,
    /// The description with `{slot}` placeholders, and its alternative
    /// phrasings.
    pub template: &'static Template,
    /// The values the placeholders stand for.
    pub slots: Vec<Slot>,
    /// The episode's "today".
    pub today: Date,
    /// The initial state S0, shared by every episode of the task until it
    /// writes (copy on write).
    pub initial: Arc<World>,
    /// The calls a perfect agent makes.
    pub reference: Vec<Call>,
    /// Predicates over (S0, Sf), in the order the verdict lists them.
    pub checks: Vec<Check>,
    /// JSON-pointer patterns (`*`: any one segment; `+`: a key absent from
    /// S0, i.e. a new record) where the end state may legitimately differ
    /// from the reference solution's: alternatives the task allows, named
    /// explicitly. Everywhere else the end state must be exactly the
    /// reference's (free text aside, which [`crate::Check::Text`] judges).
    pub alternatives: Vec<&'static str>,
    /// What is derived from the task once and kept: the end state the
    /// reference solution reaches, the initial state's JSON and hash.
    /// Always `Default::default()` when a task is made.
    pub expected: Derived,
    /// What the task's simulated user holds, in a conversational task: the
    /// slots the description leaves out (their slots hold stand-in words)
    /// and the actions only the user may take. `None`: no user to ask.
    pub conversation: Option<crate::user::Conversation>,
}

/// What a task computes once, on first use.
#[derive(Debug, Clone, Default)]
pub struct Derived {
    /// The end state the reference solution reaches.
    end_state: OnceLock<Value>,
    /// The same, as the records it changed in S0.
    end_changes: OnceLock<Changes>,
    /// S0 as JSON.
    initial: OnceLock<Value>,
    /// The hash of S0's canonical JSON.
    initial_hash: OnceLock<String>,
    /// Every string of S0 (keys included) in document order.
    strings: OnceLock<Vec<String>>,
    /// What the final answer may state besides what it must.
    pub(crate) commitment: OnceLock<Commitment>,
}

/// What an answer of a task may state besides what it must: derived once
/// per task from its state, slots and reference answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Commitment {
    /// Values of the task the answer may name: its slots, and the state's
    /// values the reference answer names.
    pub(crate) allowed: Vec<String>,
    /// The other candidates of the kinds the reference answer names.
    pub(crate) others: Vec<String>,
    /// The words of `allowed` and of `others`, read once.
    pub(crate) allowed_words: Vec<Vec<String>>,
    pub(crate) others_words: Vec<Vec<String>>,
    /// When the answer must state a date: the date words it may state.
    pub(crate) dates: Option<Vec<String>>,
    /// When it must state a time: the time words it may state.
    pub(crate) times: Option<Vec<String>>,
    /// When it must state a count: the counts it may state.
    pub(crate) numbers: Option<Vec<String>>,
    /// When it must state an amount: the amounts (cents) it may state.
    pub(crate) amounts: Option<Vec<i64>>,
    /// The actions the reference answer says the speaker did not take
    /// ("I booked nothing", "I cannot close it"), as stems: an answer that
    /// claims one contradicts the refusal.
    pub(crate) refused: Vec<String>,
}

/// A task an episode plays: one of the paper suite's (which live for the
/// whole program) or a generated one, shared by its episodes and dropped
/// with the last of them, so generated tasks never leak.
#[derive(Debug, Clone)]
pub struct TaskRef(Held);

#[derive(Debug, Clone)]
enum Held {
    Static(&'static Task),
    Shared(Arc<Task>),
}

impl std::ops::Deref for TaskRef {
    type Target = Task;

    fn deref(&self) -> &Task {
        match &self.0 {
            Held::Static(task) => task,
            Held::Shared(task) => task,
        }
    }
}

impl From<&'static Task> for TaskRef {
    fn from(task: &'static Task) -> Self {
        Self(Held::Static(task))
    }
}

impl From<Arc<Task>> for TaskRef {
    fn from(task: Arc<Task>) -> Self {
        Self(Held::Shared(task))
    }
}

impl From<Task> for TaskRef {
    fn from(task: Task) -> Self {
        Self(Held::Shared(Arc::new(task)))
    }
}

impl From<&TaskRef> for TaskRef {
    fn from(task: &TaskRef) -> Self {
        task.clone()
    }
}

impl Task {
    /// The canonical description: the template with every slot filled in.
    pub fn description(&self) -> String {
        let mut text = self.template.text.to_owned();
        for slot in &self.slots {
            text = text.replace(&format!("{{{}}}", slot.name), &slot.value);
        }
        text
    }

    /// The value of a slot, if the task has it.
    pub fn slot(&self, name: &str) -> Option<&str> {
        self.slots.iter().find(|s| s.name == name).map(|s| s.value.as_str())
    }

    /// The tools an episode of the task offers.
    pub fn tools(&self) -> Tools {
        self.domain.tools()
    }

    /// The end state the task asks for: its initial state after the
    /// reference solution, with no faults.
    pub fn expected_final_state(&self) -> &Value {
        self.expected.end_state.get_or_init(|| View { initial: self.initial_json(), changes: self.expected_changes() }.materialize())
    }

    /// The value at a JSON pointer in the end state the task asks for, read
    /// through the records it changes (without the whole state's JSON).
    pub fn expected_at(&self, path: &str) -> Option<std::borrow::Cow<'_, Value>> {
        View { initial: self.initial_json(), changes: self.expected_changes() }.get(path)
    }

    /// The end state the task asks for, as the records it changes in S0.
    pub fn expected_changes(&self) -> &Changes {
        // A reference call that fails is caught by the suite tests; it changes nothing.
        self.expected.end_changes.get_or_init(|| self.replay(self.reference.iter().map(|c| (c.tool, &c.arguments))).changes(&self.initial))
    }

    /// The initial state as JSON, computed once.
    pub fn initial_json(&self) -> &Value {
        self.expected.initial.get_or_init(|| self.initial.to_json())
    }

    /// The hash of the initial state's canonical JSON, computed once.
    pub fn initial_hash(&self) -> &str {
        self.expected.initial_hash.get_or_init(|| crate::json::state_hash(self.initial_json()))
    }

    /// Every string of the initial state, keys included, in document order
    /// (what random agents and cheats draw values from), computed once.
    pub fn state_strings(&self) -> &[String] {
        self.expected.strings.get_or_init(|| {
            let mut strings = Vec::new();
            crate::json::collect_strings(self.initial_json(), &mut strings);
            strings
        })
    }

    /// The final answer the reference solution gives, for a task that asks
    /// for one (an information request or a refusal): the example its answer
    /// check carries.
    pub fn reference_answer(&self) -> Option<&str> {
        self.checks.iter().find_map(|c| match c {
            Check::Answer { example, .. } => Some(example.as_str()),
            _ => None,
        })
    }

    /// The task's kind: the middle part of its id (`cheapest-flight` in
    /// `travel/cheapest-flight/001`).
    pub fn kind(&self) -> &str {
        self.id.split('/').nth(1).unwrap_or_default()
    }

    /// What the task asks, in one line: its kind, the reference's calls and
    /// what the verdict judges.
    pub fn summary(&self) -> String {
        let calls = self.reference.len();
        let judged = if self.asks_for_answer() { "end state + answer" } else { "end state" };
        format!("{}: {calls} reference call{}, {judged}", self.kind(), if calls == 1 { "" } else { "s" })
    }

    /// Whether the task's verdict reads a final answer.
    pub fn asks_for_answer(&self) -> bool {
        self.reference_answer().is_some()
    }

    /// The initial state after the given calls, with no faults: a call to an
    /// unknown tool or with arguments its tool refuses changes nothing, as a
    /// domain rule it breaks does not.
    pub fn replay<'a>(&self, calls: impl IntoIterator<Item = (&'a str, &'a Value)>) -> World {
        let mut world = World::clone(&self.initial);
        for (tool, arguments) in calls {
            if let Some((tool, arguments)) = self.user_action_of(tool, arguments) {
                if let Some(tool) = self.domain.tool(tool)
                    && let Ok(args) = tool.arguments_of(&arguments)
                {
                    let _ = world.apply(tool, &args, &self.context());
                }
                continue;
            }
            let Some(tool) = self.domain.tool(tool) else { continue };
            if let Ok(args) = tool.arguments_of(arguments) {
                let _ = world.apply(tool, &args, &self.context());
            }
        }
        world
    }

    /// The user's action a call asks for: an `ask_user` call whose question
    /// the task's user hears as a request to act, as (tool, arguments). A
    /// reference solution asks the user this way; replaying it plays the action.
    pub fn user_action_of(&self, tool: &str, arguments: &Value) -> Option<(&'static str, Value)> {
        let conversation = self.conversation.as_ref().filter(|_| tool == crate::bus::ASK_USER)?;
        let question = arguments.get("question").and_then(Value::as_str)?;
        let (index, call) = crate::user::hear(conversation, &self.slots, question).action?;
        Some((conversation.actions[index].tool, call.ok()?))
    }

    /// What tool calls of an episode of this task may read besides the state.
    pub fn context(&self) -> Context {
        Context { today: self.today }
    }
}
