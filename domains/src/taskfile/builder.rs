//! [`TaskBuilder`]: a task of a test's own, written in Rust, validated as a
//! task file's is.

use serde_json::Value;

use super::{File, LoadError, TaskSet, VERSION, format::CallSpec, format::CheckSpec, format::TaskSpec};
use toolenv_core::{Check, Task};

/// Builds a task in code: its domain (the id's first part), description,
/// state, reference solution and expected outcome. [`TaskBuilder::build`]
/// validates it as a task file's tasks are (the reference passes, the
/// solver reaches it, doing nothing, random agents and the cheat corpus
/// fail); [`TaskBuilder::set`] gives it as a one-task set, which a
/// [`super::Catalogue`] holds for a server or a client to play it by id.
///
/// ```
/// use serde_json::json;
/// use toolenv_core::{Check, Episode};
/// use toolenv_domains::{Finish, taskfile::TaskBuilder};
///
/// let builder = TaskBuilder::new("scheduling/book-meeting/doc-001")
///     .description("Book a meeting about '{topic}' on {date} at {time}.")
///     .slot("topic", "Quarterly plan")
///     .slot("date", "2026-01-07")
///     .slot("time", "11:00")
///     // The suite's busy week, with one more meeting that day.
///     .fixture("scheduling/book-meeting/002")
///     .change("/calendar/2026-01-07/09:00", json!("Standup"))
///     .call("book_meeting", json!({"date": "2026-01-07", "time": "11:00", "topic": "Quarterly plan"}))
///     .expect(Check::equals("booked at 11:00", "/calendar/2026-01-07/11:00", json!("Quarterly plan")));
/// let task = builder.build()?;
///
/// let mut episode = Episode::new(task, 1, 0);
/// episode.call("book_meeting", r#"{"date": "2026-01-07", "time": "11:00", "topic": "Quarterly plan"}"#)?;
/// assert!(episode.finish().passed);
///
/// // A task whose outcome doing nothing already has is refused, with where.
/// let idle = TaskBuilder::new("scheduling/book-meeting/doc-002")
///     .description("Book a meeting about '{topic}' on {date} at {time}.")
///     .slot("topic", "Standup").slot("date", "2026-01-07").slot("time", "10:00")
///     .fixture("scheduling/book-meeting/002")
///     .call("check_calendar", json!({"date": "2026-01-07"}))
///     .expect(Check::equals("standup kept", "/calendar/2026-01-07/10:00", json!("Standup")))
///     .build()
///     .unwrap_err();
/// assert!(idle.to_string().contains("at /tasks/0/expect"), "{idle}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TaskBuilder {
    spec: TaskSpec,
}

impl TaskBuilder {
    /// A task with this id (`domain/kind/name`), level 1, and nothing else yet.
    pub fn new(id: &str) -> Self {
        let domain = id.split('/').next().unwrap_or_default().to_owned();
        Self {
            spec: TaskSpec {
                id: id.to_owned(),
                comment: String::new(),
                domain,
                level: 1,
                description: String::new(),
                variants: Vec::new(),
                slots: Vec::new(),
                today: None,
                state: None,
                fixture: None,
                changes: Default::default(),
                reference: Vec::new(),
                expect: Vec::new(),
                alternatives: Vec::new(),
            },
        }
    }

    /// The complexity level (1 to 3).
    pub fn level(mut self, level: u8) -> Self {
        self.spec.level = level;
        self
    }

    /// What the agent is asked, with `{slot}` placeholders.
    pub fn description(mut self, text: &str) -> Self {
        self.spec.description = text.to_owned();
        self
    }

    /// A slot's value, in the order slots are given.
    pub fn slot(mut self, name: &str, value: &str) -> Self {
        self.spec.slots.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The episode's "today" (`YYYY-MM-DD`); a fixture's by default.
    pub fn today(mut self, date: &str) -> Self {
        self.spec.today = Some(date.to_owned());
        self
    }

    /// The whole initial state.
    pub fn state(mut self, state: Value) -> Self {
        self.spec.state = Some(state);
        self
    }

    /// Starts from a built-in task's initial state (and today).
    pub fn fixture(mut self, task_id: &str) -> Self {
        self.spec.fixture = Some(task_id.to_owned());
        self
    }

    /// Sets the value at a JSON pointer of the fixture's state (`null` removes it).
    pub fn change(mut self, pointer: &str, value: Value) -> Self {
        self.spec.changes.insert(pointer.to_owned(), value);
        self
    }

    /// One more call of the reference solution.
    pub fn call(mut self, tool: &str, arguments: Value) -> Self {
        self.spec.reference.push(CallSpec { tool: tool.to_owned(), arguments });
        self
    }

    /// One more check of the expected outcome.
    pub fn expect(mut self, check: Check) -> Self {
        self.spec.expect.push(CheckSpec::of(&check));
        self
    }

    /// A JSON-pointer pattern where the end state may differ from the reference's.
    pub fn alternative(mut self, pattern: &str) -> Self {
        self.spec.alternatives.push(pattern.to_owned());
        self
    }

    /// The task as a task file writes it.
    pub fn spec(&self) -> &TaskSpec {
        &self.spec
    }

    /// The task file of this one task, as text.
    pub fn to_file_text(&self) -> String {
        let file = File { version: VERSION, comment: String::new(), tasks: vec![self.spec.clone()] };
        serde_json::to_string_pretty(&file).unwrap_or_default()
    }

    /// The task, validated as a task file's, with the id it was given.
    pub fn build(&self) -> Result<Task, LoadError> {
        let task = self.set()?.tasks.first().cloned().ok_or_else(|| LoadError::file(&self.name(), "no task"))?;
        Ok(Task { id: self.spec.id.clone(), ..std::sync::Arc::unwrap_or_clone(task) })
    }

    /// The task as a set of one, validated as a task file's, its id
    /// `id@hash`: added to a [`super::Catalogue`], it is played by id on a
    /// server and through a client given that catalogue.
    pub fn set(&self) -> Result<TaskSet, LoadError> {
        TaskSet::parse_file(&self.name(), &self.to_file_text())
    }

    fn name(&self) -> String {
        format!("TaskBuilder({})", self.spec.id)
    }
}
