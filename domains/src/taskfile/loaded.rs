//! The task sets this process has loaded, which [`crate::generate::resolve`]
//! and the `file:<hash>` suite find tasks in.
//!
//! A loaded task's id is the file's id with `@` and the set's hash after it
//! (`scheduling/book-meeting/acme-001@1f2e3d4c5b6a`): stored runs keep task
//! ids, so results of an edited file never share a task with the file's
//! earlier results, and `suite_of` names the file a run played.

use std::sync::{Arc, RwLock};

use super::{LoadError, TaskSet};
use toolenv_core::{Task, TaskRef};

static LOADED: RwLock<Vec<&'static TaskSet>> = RwLock::new(Vec::new());

fn sets() -> Vec<&'static TaskSet> {
    // The lock guards a plain list; a panic elsewhere leaves it usable.
    LOADED.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Makes a validated set's tasks findable for the rest of the process,
/// under ids with the set's hash (`id@hash`); a set of the same hash loaded
/// before is returned as it was. Refuses an id of the built-in or generated
/// suites, or one another loaded set has, so an id names one task.
pub fn install(set: TaskSet) -> Result<&'static TaskSet, LoadError> {
    let mut loaded = LOADED.write().unwrap_or_else(|e| e.into_inner());
    if let Some(same) = loaded.iter().find(|s| s.hash == set.hash) {
        return Ok(same);
    }
    for task in &set.tasks {
        let clash = if crate::task(&task.id).is_some() || crate::generate::domain_and_level(&task.id).is_some() {
            Some("a built-in task's".to_owned())
        } else {
            loaded.iter().find(|s| s.tasks.iter().any(|t| bare(&t.id) == task.id)).map(|s| format!("a task's of {}", s.name))
        };
        if let Some(whose) = clash {
            let message = format!("the id is {whose}: give the task another");
            return Err(LoadError { task: Some(task.id.clone()), ..LoadError::file(&set.name, message) });
        }
    }
    let tasks = set
        .tasks
        .iter()
        .map(|task| {
            let mut task = Task::clone(task);
            task.id = format!("{}@{}", task.id, set.hash);
            Arc::new(task)
        })
        .collect();
    let kept: &'static TaskSet = Box::leak(Box::new(TaskSet { tasks, ..set }));
    loaded.push(kept);
    Ok(kept)
}

/// Every loaded set, in the order they were loaded.
pub fn loaded() -> Vec<&'static TaskSet> {
    sets()
}

/// A loaded set by its hash (or a prefix of it of 6 digits or more).
pub fn lookup(hash: &str) -> Option<&'static TaskSet> {
    let mut found = sets().into_iter().filter(|s| hash.len() >= 6 && s.hash.starts_with(hash));
    let set = found.next()?;
    found.next().is_none().then_some(set)
}

/// A loaded task by its id, with its hash (`id@hash`) or, when one loaded
/// task has it, without.
pub fn find(id: &str) -> Option<TaskRef> {
    let sets = sets();
    let all = || sets.iter().flat_map(|s| s.tasks.iter());
    if id.contains('@') {
        return all().find(|t| t.id == id).map(|t| TaskRef::from(Arc::clone(t)));
    }
    let mut found = all().filter(|t| bare(&t.id) == id);
    let task = found.next()?;
    found.next().is_none().then(|| TaskRef::from(Arc::clone(task)))
}

/// An id without its set's hash.
fn bare(id: &str) -> &str {
    id.split_once('@').map_or(id, |(bare, _)| bare)
}
