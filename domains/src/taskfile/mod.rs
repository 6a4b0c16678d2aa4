//! Tasks of the user's own: the task file format (JSON, versioned), its
//! loader and validator, the [`Catalogue`] that finds a server's or a
//! client's tasks by id, and [`TaskBuilder`] for tasks written in Rust tests.
//!
//! A task from a file is held to what the built-in suite is held to, before
//! any of it is used: the file parses with no unknown field; its domain,
//! tools and arguments exist; its state is one the domain reads back as
//! written (its invariants hold); the reference solution runs without a
//! refusal and passes; the result-reading solver reaches the expected
//! outcome; doing nothing, random agents and every generated cheat fail
//! ([`crate::selfcheck::SelfCheck`]). The first problem is one [`LoadError`]
//! naming the file, the task and the JSON pointer (and the line, for a
//! file that does not parse); a set with a problem loads nothing.
//!
//! The few `&'static` pieces a [`Task`] holds (its template, slot and label
//! names, alternatives) are interned, like the paper suite's statics, so
//! parsing the same text again leaks nothing more. This module reads no
//! file: the CLI reads them (`toolenv_runs::taskfiles`) and hands over the
//! text.

mod build;
mod builder;
mod catalogue;
mod format;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use toolenv_core::Task;

pub use build::{StateError, world_of};
pub use builder::TaskBuilder;
pub use catalogue::Catalogue;
pub use format::{CallSpec, CheckSpec, FactSpec, File, TaskSpec, VERSION, VariantSpec};

/// Most bytes of one task file (a suite of thousands of tasks fits).
pub const MAX_FILE_BYTES: usize = 4 << 20;
/// Most tasks one set (a file or a folder of files) may hold.
pub const MAX_TASKS: usize = 2000;
/// Most files one folder may hold.
pub const MAX_FILES: usize = 256;

/// Why a task file (or a task built in code) cannot be used: one problem,
/// located.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    /// The file (or the builder's name for a task built in code).
    pub file: String,
    /// Line and column, for a file that does not parse.
    pub line: Option<(usize, usize)>,
    /// The task's id, when the problem is one task's.
    pub task: Option<String>,
    /// The JSON pointer of what is wrong in the file ("" for the whole).
    pub pointer: String,
    /// What is wrong, lowercase.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((line, column)) = self.line {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(task) = &self.task {
            write!(f, ": task {task}")?;
        }
        if !self.pointer.is_empty() {
            write!(f, ": at {}", self.pointer)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl LoadError {
    /// A problem with a whole file.
    pub fn file(file: &str, message: impl Into<String>) -> Self {
        Self { file: file.to_owned(), line: None, task: None, pointer: String::new(), message: message.into() }
    }
}

/// A validated set of tasks: one file's, or one folder's files' in name
/// order. Its tasks' ids are the file's with `@` and the set's hash after
/// them (`scheduling/book-meeting/acme-001@1f2e3d4c5b6a`): stored runs keep
/// task ids, so results of an edited file never share a task with the
/// file's earlier results, and [`crate::generate::suite_of`] names the file
/// a run played from its ids alone.
#[derive(Debug)]
pub struct TaskSet {
    /// Where the tasks came from (a path, or a builder's name).
    pub name: String,
    /// The first 12 hex digits of the SHA-256 of the set's content.
    pub hash: String,
    /// The tasks, in file order.
    pub tasks: Arc<[Arc<Task>]>,
}

impl TaskSet {
    /// Parses and validates the task files of one set, given as (name,
    /// text) in the order their tasks are listed: all of their tasks, or
    /// the first problem.
    pub fn parse(name: &str, files: &[(String, String)]) -> Result<Self, LoadError> {
        if files.len() > MAX_FILES {
            return Err(LoadError::file(name, format!("{} files; a set holds at most {MAX_FILES}", files.len())));
        }
        let mut hasher = Sha256::new();
        let mut tasks: Vec<Arc<Task>> = Vec::new();
        for (file, text) in files {
            hasher.update((file.len() as u64).to_le_bytes());
            hasher.update(file.as_bytes());
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
            let specs = read(file, text)?;
            if tasks.len() + specs.len() > MAX_TASKS {
                return Err(LoadError::file(file, format!("more than {MAX_TASKS} tasks in {name}")));
            }
            for (index, spec) in specs.iter().enumerate() {
                let at = |pointer: &str, message: String| LoadError {
                    file: file.clone(),
                    line: None,
                    task: Some(spec.id.clone()),
                    pointer: format!("/tasks/{index}{pointer}"),
                    message,
                };
                if let Some(other) = tasks.iter().find(|t| t.id == spec.id) {
                    return Err(at("/id", format!("the id {} is given twice", other.id)));
                }
                tasks.push(build::validated(spec).map_err(|(pointer, message)| at(&pointer, message))?);
            }
        }
        let hash: String = hasher.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect();
        for task in &mut tasks {
            Arc::make_mut(task).id = format!("{}@{hash}", task.id);
        }
        Ok(Self { name: name.to_owned(), hash, tasks: tasks.into() })
    }

    /// The set as a suite, `file:<hash>`.
    pub fn suite(&self) -> crate::generate::Suite {
        crate::generate::Suite::File { hash: self.hash.clone(), tasks: Arc::clone(&self.tasks) }
    }

    /// Parses and validates one task file.
    pub fn parse_file(name: &str, text: &str) -> Result<Self, LoadError> {
        Self::parse(name, &[(name.to_owned(), text.to_owned())])
    }

    /// The task file that writes these tasks (with the ids they were loaded with).
    pub fn to_file(&self) -> File {
        export(self.tasks.iter().map(|t| t.as_ref()))
    }
}

/// A task file that writes `tasks` with every field (whole states): what
/// `toolenv tasks export` prints, and what reloads into the same tasks.
pub fn export<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> File {
    File { version: VERSION, comment: String::new(), tasks: tasks.into_iter().map(TaskSpec::of).collect() }
}

/// Reads a file's tasks, not yet built: the format's version, its shape,
/// no unknown field, within the size limit.
fn read(file: &str, text: &str) -> Result<Vec<TaskSpec>, LoadError> {
    if text.len() > MAX_FILE_BYTES {
        return Err(LoadError::file(file, format!("{} bytes; a task file holds at most {MAX_FILE_BYTES}", text.len())));
    }
    let parse_error = |pointer: String, e: &serde_json::Error| LoadError {
        file: file.to_owned(),
        line: (e.line() > 0).then_some((e.line(), e.column())),
        task: None,
        pointer,
        message: e.to_string().split(" at line ").next().unwrap_or_default().to_owned(),
    };
    // The whole text first (its syntax), then the version, so a file of
    // another version is named as such rather than by a field it lacks.
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| parse_error(String::new(), &e))?;
    let Some(object) = value.as_object() else {
        return Err(LoadError::file(file, format!("a task file is a JSON object {{\"version\": {VERSION}, \"tasks\": [...]}}")));
    };
    match object.get("version") {
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(u64::from(VERSION)) => {}
        Some(other) => {
            return Err(LoadError {
                pointer: "/version".into(),
                ..LoadError::file(file, format!("version {other} is not one this build reads: use {VERSION}"))
            });
        }
        None => {
            return Err(LoadError { pointer: "/version".into(), ..LoadError::file(file, format!("missing field `version` ({VERSION})")) });
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed: File = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let pointer = build::pointer(e.path());
        let mut error = parse_error(pointer, e.inner());
        error.task = task_at(&value, &error.pointer);
        error
    })?;
    Ok(parsed.tasks)
}

/// The id of the task a pointer points into, if the file says it.
fn task_at(value: &serde_json::Value, pointer: &str) -> Option<String> {
    let index: usize = pointer.strip_prefix("/tasks/")?.split('/').next()?.parse().ok()?;
    value.pointer(&format!("/tasks/{index}/id"))?.as_str().map(str::to_owned)
}
