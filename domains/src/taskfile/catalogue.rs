//! A [`Catalogue`]: the tasks a server, a client or a command finds by id,
//! as a value. It knows the paper's tasks and the generated suites' (each
//! rebuilt from its id) and the task sets it was handed, nothing else: two
//! catalogues of one process share nothing, and a task file is known where
//! it was given only.

use std::sync::Arc;

use super::{LoadError, TaskSet};
use crate::generate::{Suite, SuiteError};
use toolenv_core::{Domain, Task, TaskRef};

/// The tasks one server or client finds by id: the built-in and generated
/// suites' and those of the task sets added to it. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    sets: Vec<Arc<TaskSet>>,
}

impl Catalogue {
    /// A catalogue of the built-in and generated tasks only.
    pub fn new() -> Self {
        Self::default()
    }

    /// A catalogue of `sets` besides the built-in tasks, or the first set
    /// [`Catalogue::add`] refuses.
    pub fn of(sets: impl IntoIterator<Item = impl Into<Arc<TaskSet>>>) -> Result<Self, LoadError> {
        let mut catalogue = Self::new();
        for set in sets {
            catalogue.add(set)?;
        }
        Ok(catalogue)
    }

    /// Adds a validated set, and returns it; a set of the same hash added
    /// before is returned as it was. Refuses an id of the built-in or
    /// generated suites, or one another set of the catalogue has (with or
    /// without its hash), so that an id names one task.
    pub fn add(&mut self, set: impl Into<Arc<TaskSet>>) -> Result<Arc<TaskSet>, LoadError> {
        let set = set.into();
        if let Some(same) = self.sets.iter().find(|s| s.hash == set.hash) {
            return Ok(Arc::clone(same));
        }
        for task in set.tasks.iter() {
            let id = bare(&task.id);
            let clash = if crate::task(id).is_some() || crate::generate::domain_and_level(id).is_some() {
                Some("a built-in task's".to_owned())
            } else {
                self.sets.iter().find(|s| s.tasks.iter().any(|t| bare(&t.id) == id)).map(|s| format!("a task's of {}", s.name))
            };
            if let Some(whose) = clash {
                let message = format!("the id is {whose}: give the task another");
                return Err(LoadError { task: Some(id.to_owned()), ..LoadError::file(&set.name, message) });
            }
        }
        self.sets.push(Arc::clone(&set));
        Ok(set)
    }

    /// The sets added, in the order they were.
    pub fn sets(&self) -> &[Arc<TaskSet>] {
        &self.sets
    }

    /// An added set by its hash (or a prefix of it of 6 digits or more,
    /// when one set has it).
    pub fn set(&self, hash: &str) -> Option<&Arc<TaskSet>> {
        let mut found = self.sets.iter().filter(|s| hash.len() >= 6 && s.hash.starts_with(hash));
        let set = found.next()?;
        found.next().is_none().then_some(set)
    }

    /// A suite by name, as [`Suite`]'s `FromStr` reads it, and also
    /// `file:<hash>` for an added set.
    pub fn suite(&self, name: &str) -> Result<Suite, SuiteError> {
        match name.parse() {
            Err(SuiteError::NoTaskFile(hash)) => self.set(&hash).map(|set| set.suite()).ok_or(SuiteError::NoTaskFile(hash)),
            parsed => parsed,
        }
    }

    /// Finds a task by id: an added set's (with its hash, or without when
    /// one set's task has it), or else as [`crate::generate::resolve`] does.
    pub fn resolve(&self, id: &str) -> Result<TaskRef, SuiteError> {
        match self.file_task(id) {
            Some(task) => Ok(TaskRef::from(Arc::clone(task))),
            None => crate::generate::resolve(id),
        }
    }

    /// The domain and level of a task id: an added set's task's, or as
    /// [`crate::generate::domain_and_level`] reads them.
    pub fn domain_and_level(&self, id: &str) -> Option<(Domain, u8)> {
        match self.file_task(id) {
            Some(task) => Some((task.domain, task.level)),
            None => crate::generate::domain_and_level(id),
        }
    }

    fn file_task(&self, id: &str) -> Option<&Arc<Task>> {
        let mut all = self.sets.iter().flat_map(|s| s.tasks.iter());
        if id.contains('@') {
            return all.find(|t| t.id == id);
        }
        let mut found = all.filter(|t| bare(&t.id) == id);
        let task = found.next()?;
        found.next().is_none().then_some(task)
    }
}

/// An id without its set's hash.
fn bare(id: &str) -> &str {
    id.split_once('@').map_or(id, |(bare, _)| bare)
}
