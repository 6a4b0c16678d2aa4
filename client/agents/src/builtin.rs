//! The agents that need no model, by name ([`Builtin`]): thin wrappers
//! that delegate to the policies in `toolenv-domains` (the reference
//! solution, the brittle reader, the random agent, the solver, the MAS-FIRE
//! teams). The only policy of this module's own is the reference agent's
//! retrying of faults (`call_with_retries`).

use toolenv_core::{Call, Task};
use toolenv_domains::solver::{Observation, Request};

use crate::{Agent, AgentError, AgentReport, Briefing, Env};

toolenv_core::named_enum! {
    /// The agents built into toolenv, which need no model.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Builtin {
        /// Plays the task's reference solution, retrying what faults break: knows
        /// the answer and never reads a result.
        Reference = "reference",
        /// The reference solution without retries: each call is made once.
        ReferenceNoRetry = "reference-no-retry",
        /// Reads the slots from the description with fixed patterns that only
        /// understand the canonical phrasing, then plays the reference solution
        /// with what it read: robustness falls with ε.
        Brittle = "brittle",
        /// Makes seeded random calls with plausible arguments; should fail every task.
        Random = "random",
        /// Does nothing and finishes; should fail every task.
        Idle = "idle",
        /// Knows only what the task asks (its slots) and decides from what the
        /// tools return: the result-reading solver that decides feasibility.
        Solver = "solver",
        /// A team of two in a multi-agent episode: the solver as planner, an
        /// executor running each planned write once, over the message bus;
        /// nobody checks anything (a linear, waterfall-style pipeline).
        TeamPipeline = "team-pipeline",
        /// A team of three: planner and executor as in the pipeline, plus a
        /// verifier that re-reads what the planner relies on, and an executor
        /// that checks plans and replies (a closed loop).
        TeamClosedLoop = "team-closed-loop",
    }
}

/// The built-in agent a label names, as an agent to play (for
/// `toolenv_client::run_plan`); `None` for any other label.
pub fn agent(label: &str) -> Option<std::sync::Arc<dyn Agent>> {
    Builtin::parse(label).map(|agent| std::sync::Arc::new(agent) as std::sync::Arc<dyn Agent>)
}

/// Most attempts the retrying reference agent makes per call.
pub const MAX_ATTEMPTS: u32 = 8;

impl Builtin {
    /// The team topology of a built-in team agent.
    pub fn topology(self) -> Option<toolenv_domains::masfire::team::Topology> {
        use toolenv_domains::masfire::team::Topology;
        match self {
            Builtin::TeamPipeline => Some(Topology::Pipeline),
            Builtin::TeamClosedLoop => Some(Topology::ClosedLoop),
            Builtin::Reference | Builtin::ReferenceNoRetry | Builtin::Brittle | Builtin::Random | Builtin::Idle | Builtin::Solver => None,
        }
    }

    /// The calls this agent makes on a task, given the description it was
    /// told; none for the agents that decide call by call.
    fn calls(self, task: &Task, seed: u64, description: &str) -> Vec<Call> {
        match self {
            Builtin::Reference | Builtin::ReferenceNoRetry => task.reference.clone(),
            Builtin::Brittle => toolenv_domains::perturb::brittle_calls(task, description),
            Builtin::Random => toolenv_domains::agent::random_calls(task, seed, toolenv_domains::agent::RANDOM_AGENT_CALLS),
            Builtin::Idle | Builtin::Solver | Builtin::TeamPipeline | Builtin::TeamClosedLoop => Vec::new(),
        }
    }
}

impl Agent for Builtin {
    fn label(&self) -> String {
        self.name().to_owned()
    }

    fn roles(&self) -> Vec<toolenv_core::RoleSpec> {
        self.topology().map(|topology| topology.roles()).unwrap_or_default()
    }

    fn play(&self, briefing: &Briefing, env: &mut dyn Env) -> Result<AgentReport, AgentError> {
        let task = briefing.task.as_ref().ok_or_else(|| AgentError::UnknownTask(briefing.task_id.clone()))?;
        // Giving up is an outcome of the episode, judged by its verdict.
        if *self == Builtin::Solver {
            let _ = toolenv_domains::solver::run(task, env);
            return Ok(AgentReport::default());
        }
        if let Some(topology) = self.topology() {
            let _ = toolenv_domains::masfire::team::run(task, topology, env);
            return Ok(AgentReport::default());
        }
        let calls = self.calls(task, briefing.seed, &briefing.description);
        // The reference agents know the answer; the brittle agent gives it when it read the task right.
        let answer = match self {
            Builtin::Reference | Builtin::ReferenceNoRetry => task.reference_answer(),
            Builtin::Brittle if calls == task.reference => task.reference_answer(),
            Builtin::Brittle | Builtin::Random | Builtin::Idle | Builtin::Solver | Builtin::TeamPipeline | Builtin::TeamClosedLoop => None,
        };
        if let Some(answer) = answer {
            env.answer(answer);
        }
        for (i, call) in calls.iter().enumerate() {
            let arguments = call.arguments.to_string();
            if *self == Builtin::Reference {
                let mutates = task.domain.tool(call.tool).is_some_and(|t| t.mutates_state);
                let key = mutates.then(|| format!("{}-{i}", briefing.episode_id));
                call_with_retries(env, call.tool, &arguments, key.as_deref(), mutates);
            } else {
                // Declared waits of 0: these agents honour no advice, and
                // their own pauses are not waits, so the trajectory is the
                // same at every time scale. What comes back is not read.
                env.call(call.tool, &arguments, &Request::default());
            }
        }
        Ok(AgentReport::default())
    }
}

/// What one attempt of a call came to.
enum Attempt {
    /// A usable reply (a result or a domain error), or one not worth
    /// retrying (a suspension, a malformed call, a closed episode): move on.
    Done,
    /// A failure worth retrying, after the advised delay (virtual
    /// milliseconds) if any.
    Retry(Option<u64>),
}

/// Makes one call, retrying faults: bounded attempts, backoff that honours
/// the advised delay (or the in-band one), no retry when told not to
/// (pushback -1, a suspension), and a write whose reply is empty or
/// unreadable counts as unconfirmed. The idempotency key makes each retried
/// write safe; each wait is declared with the next attempt (the
/// environment waits it, where waits are real).
fn call_with_retries(env: &mut dyn Env, tool: &str, arguments: &str, key: Option<&str>, mutates: bool) {
    let mut waited_ms = 0;
    for attempt in 0..MAX_ATTEMPTS {
        let request = Request { idempotency_key: key, waited_ms: std::mem::take(&mut waited_ms), user_answer: None };
        let outcome = match env.call(tool, arguments, &request) {
            Observation::Result(text) => judge_result(&text, mutates),
            Observation::Failure(fault) if fault.is_final() => Attempt::Done,
            Observation::Failure(fault) => Attempt::Retry(fault.retry_after_ms.and_then(|ms| u64::try_from(ms).ok())),
            Observation::DomainError { .. } | Observation::Invalid { .. } | Observation::Closed(_) => Attempt::Done,
        };
        match outcome {
            Attempt::Done => return,
            // The advised delay in virtual milliseconds or, without advice,
            // a short exponential backoff.
            Attempt::Retry(delay_ms) => waited_ms = delay_ms.unwrap_or(1 << attempt.min(7)),
        }
    }
}

/// Reads a result: a fault delivered in-band, an unconfirmed write, or done.
fn judge_result(text: &str, mutates: bool) -> Attempt {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return if mutates { Attempt::Retry(None) } else { Attempt::Done };
    };
    if let Some(error) = value.get("error").filter(|e| e.get("reason").is_some()) {
        let retry_ms = error.get("retry_after_ms").and_then(serde_json::Value::as_i64);
        let virtual_ms = error.get("retry_after_virtual_ms").and_then(serde_json::Value::as_u64);
        return match (error.get("code").and_then(serde_json::Value::as_str), retry_ms) {
            (Some("PERMISSION_DENIED"), _) | (_, Some(-1)) => Attempt::Done,
            _ => Attempt::Retry(virtual_ms),
        };
    }
    if mutates && value.as_object().is_some_and(serde_json::Map::is_empty) {
        return Attempt::Retry(None);
    }
    Attempt::Done
}
