//! [`Paced`]: any agent with a real pause before each of its calls, as a
//! model's latency would put there — for load tests, and for probing what a
//! server does with an episode whose worker is slow but alive (its lease
//! held, its copy idle).

use std::sync::Arc;
use std::time::Duration;

use toolenv_domains::masfire::team::TeamEnv;
use toolenv_domains::solver::{Env as SolverEnv, Observation, Request};

use crate::{Agent, AgentError, AgentReport, Briefing, Env};

/// An agent that waits `think` (real time) before each call its inner agent makes.
#[derive(Debug, Clone)]
pub struct Paced {
    agent: Arc<dyn Agent>,
    think: Duration,
}

impl Paced {
    /// `agent`, pausing `think` before each call.
    pub fn new(agent: Arc<dyn Agent>, think: Duration) -> Self {
        Self { agent, think }
    }
}

impl Agent for Paced {
    fn label(&self) -> String {
        self.agent.label()
    }

    fn play(&self, briefing: &Briefing, env: &mut dyn Env) -> Result<AgentReport, AgentError> {
        self.agent.play(briefing, &mut Pausing { env, think: self.think })
    }

    fn roles(&self) -> Vec<toolenv_core::RoleSpec> {
        self.agent.roles()
    }

    fn needs_task(&self) -> bool {
        self.agent.needs_task()
    }

    fn reads_in_band_text(&self) -> bool {
        self.agent.reads_in_band_text()
    }
}

/// The environment a paced agent plays: the real one, each call after a pause.
struct Pausing<'a> {
    env: &'a mut dyn Env,
    think: Duration,
}

impl SolverEnv for Pausing<'_> {
    fn call(&mut self, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        std::thread::sleep(self.think);
        self.env.call(tool, arguments_json, request)
    }

    fn answer(&mut self, text: &str) {
        self.env.answer(text);
    }

    fn answer_typed(&mut self, answer: &serde_json::Value) {
        self.env.answer_typed(answer);
    }
}

impl TeamEnv for Pausing<'_> {
    fn join(&mut self, role: &str) -> Result<String, String> {
        self.env.join(role)
    }

    fn call_as(&mut self, agent: &str, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        std::thread::sleep(self.think);
        self.env.call_as(agent, tool, arguments_json, request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Builtin;

    /// Counts calls and the time between them.
    struct Clocked {
        episode: toolenv_core::Episode,
        at: Vec<std::time::Instant>,
    }

    impl SolverEnv for Clocked {
        fn call(&mut self, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
            self.at.push(std::time::Instant::now());
            SolverEnv::call(&mut self.episode, tool, arguments_json, request)
        }
    }

    impl TeamEnv for Clocked {
        fn join(&mut self, role: &str) -> Result<String, String> {
            TeamEnv::join(&mut self.episode, role)
        }

        fn call_as(&mut self, agent: &str, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
            TeamEnv::call_as(&mut self.episode, agent, tool, arguments_json, request)
        }
    }

    #[test]
    fn a_paced_agent_plays_the_same_calls_a_pause_apart() {
        use toolenv_domains::Finish;
        let task = toolenv_domains::task("travel/cheapest-flight/001").unwrap();
        let briefing = Briefing { task_id: task.id.clone(), task: Some(task.into()), ..Briefing::default() };
        let play = |agent: &dyn Agent| {
            let mut env = Clocked { episode: toolenv_core::Episode::new(task, 3, 0), at: Vec::new() };
            agent.play(&briefing, &mut env).unwrap();
            let passed = env.episode.finish().passed;
            (serde_json::to_string(&env.episode.trajectory().calls).unwrap(), passed, env.at)
        };
        let think = Duration::from_millis(30);
        let paced = Paced::new(Builtin::Reference.into(), think);
        let (plain_calls, plain_passed, _) = play(&Builtin::Reference);
        let (paced_calls, paced_passed, at) = play(&paced);
        assert_eq!((paced_calls, paced_passed), (plain_calls, plain_passed), "the same calls and verdict");
        assert!(at.len() >= 2 && at.windows(2).all(|w| w[1] - w[0] >= think), "a pause before every call");
        assert_eq!(paced.label(), "reference");
    }
}
