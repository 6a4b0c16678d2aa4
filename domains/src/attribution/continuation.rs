//! The ideal continuation of a forked episode: can any agent still pass from here?
//!
//! Two continuations are tried, cheapest first, each on its own copy of the
//! fork (whose finish decides no feasibility):
//! 1. the task's remaining reference writes: the reference solution's writes
//!    the prefix has not applied yet (matched by tool and canonical
//!    arguments, in order), each made through the solver's [`Session`] with
//!    a fresh idempotency key and retried until its reply confirms it; reads
//!    are skipped (they change nothing, and a continuation that makes fewer
//!    calls meets fewer faults);
//! 2. the result-reading solver, playing the task from where the fork stands.
//!
//! A continuation that passes is a witness that the prefix was recoverable.

use serde_json::Value;

use crate::{
    Finish,
    solver::{GiveUp, Session},
};
use toolenv_core::{Episode, Task};

/// One reference write, as the continuation compares and makes it.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub(crate) tool: &'static str,
    pub(crate) canonical: String,
    pub(crate) arguments: Value,
}

/// The task's reference writes, computed once per attribution.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) writes: Vec<Write>,
}

impl Plan {
    /// The reference solution's writes, in order; a request to the user to
    /// act (dual control) stands for the user's own call.
    pub(crate) fn of(task: &Task) -> Self {
        let writes = task
            .reference
            .iter()
            .filter_map(|call| {
                let (tool, arguments) = task.user_action_of(call.tool, &call.arguments).unwrap_or((call.tool, call.arguments.clone()));
                let spec = task.domain.tool(tool).filter(|t| t.mutates_state)?;
                let canonical = spec.arguments_of(&arguments).ok()?.canonical();
                Some(Write { tool, canonical, arguments })
            })
            .collect();
        Self { writes }
    }

    /// The writes the prefix of `episode` has not applied yet, in order.
    pub(crate) fn remaining<'p>(&'p self, episode: &Episode) -> Vec<&'p Write> {
        let mut applied: Vec<(&str, &str)> = episode.trajectory().calls.iter().filter(|c| c.state_changed).map(applied_as).collect();
        self.writes
            .iter()
            .filter(|w| match applied.iter().position(|&(tool, args)| tool == w.tool && args == w.canonical) {
                Some(i) => {
                    applied.remove(i);
                    false
                }
                None => true,
            })
            .collect()
    }
}

/// The write a call that changed the state applied: the user's own call
/// within an `ask_user` turn (dual control), else the call itself.
pub(crate) fn applied_as(call: &toolenv_core::CallRecord) -> (&str, &str) {
    match call.user() {
        Some(user) => (user.tool.as_str(), user.arguments.as_str()),
        None => (&*call.tool, call.arguments.as_str()),
    }
}

/// How a continuation from a fork ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Continuation {
    /// Whether some continuation passed.
    pub passed: bool,
    /// Why the last one tried gave up, if it did.
    pub gave_up: Option<GiveUp>,
}

/// Plays the continuations from `fork` (on copies); with `spare_suspension`,
/// under the same schedule without its suspensions.
pub(crate) fn continue_from(task: &Task, plan: &Plan, fork: &Episode, spare_suspension: bool) -> Continuation {
    // 1. The remaining reference writes.
    let mut episode = fork.counterfactual(spare_suspension);
    let mut gave_up = None;
    {
        // A write only the user may make (dual control) is asked of the user.
        let mut session = Session::new(&mut episode, task.domain).asking_for(task);
        for write in plan.remaining(fork) {
            if let Err(why) = session.write(write.tool, write.arguments.clone()) {
                gave_up = Some(why);
                break;
            }
        }
    }
    if episode.finish().passed {
        return Continuation { passed: true, gave_up: None };
    }
    // 2. The solver, from where the fork stands.
    let mut episode = fork.counterfactual(spare_suspension);
    let ended = crate::solver::run(task, &mut episode);
    let passed = episode.finish().passed;
    Continuation { passed, gave_up: if passed { None } else { ended.err().or(gave_up) } }
}
