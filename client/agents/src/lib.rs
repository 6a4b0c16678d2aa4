//! The agents toolenv ships, behind one [`Agent`] trait, and the one
//! driver ([`drive`]) that plays any of them.
//!
//! An agent plays against [`Env`]: the environment the result-reading
//! solver already plays against ([`toolenv_domains::solver::Env`]), plus
//! joining a multi-agent episode under a role
//! ([`toolenv_domains::masfire::team::TeamEnv`]). An in-process episode
//! ([`toolenv_core::Episode`]) is one; the typed client's remote episode
//! (`toolenv_client::RemoteEnv`) is the other. So every agent plays the
//! same way in-process and over gRPC, and nothing here knows about gRPC.
//!
//! - [`builtin`]: the agents that need no model — reference,
//!   reference-no-retry, brittle, random, idle, solver and the two MAS-FIRE
//!   teams — as [`Builtin`], the agent-name enum `--agent` parses. Their
//!   policies live in `toolenv-domains`; this crate only delegates to them.
//! - [`llm`] (feature `llm`, on by default): the ReAct and Reflexion agents
//!   over an OpenAI-compatible endpoint, with their HTTP stack.
//! - [`spec`]: agent labels as `--agent` takes them (`reference`,
//!   `react@MODEL`).
//!
//! May import: `toolenv-domains` (tasks, the solver, teams), the protocol
//! crate `toolenv` for its message types (tool schemas, usage,
//! conversations), and, for the LLM agents only, the HTTP client. Never the
//! typed client, the server, the runs crate or anything of the command line.
#![forbid(unsafe_code)]

pub mod builtin;
#[cfg(feature = "llm")]
pub mod llm;
pub mod paced;
pub mod spec;

use std::sync::Arc;

use toolenv::pb;
use toolenv_core::TaskRef;
use toolenv_domains::masfire::team::TeamEnv;

pub use builtin::Builtin;
pub use paced::Paced;
pub use spec::Spec;

/// Where an agent plays: the solver's environment plus joining roles; an
/// in-process episode or a remote one.
pub trait Env: toolenv_domains::solver::Env + TeamEnv {}

impl<T: toolenv_domains::solver::Env + TeamEnv + ?Sized> Env for T {}

/// What an agent is told about its episode before its first call.
#[derive(Debug, Clone, Default)]
pub struct Briefing {
    /// The episode's id (what idempotency keys are made of).
    pub episode_id: String,
    /// The task's id.
    pub task_id: String,
    /// The task itself, when this side knows it (the paper's suite, or a
    /// generated task rebuilt from its id); the built-in agents need it.
    pub task: Option<TaskRef>,
    /// The description as the episode tells it (perturbed at ε > 0).
    pub description: String,
    /// The episode's "today", YYYY-MM-DD.
    pub today: String,
    /// The tools the agent may call, with their schemas.
    pub tools: Vec<pb::ToolSpec>,
    /// Most tool calls the episode accepts.
    pub max_calls: u32,
    /// The seed of an agent's own randomness (the random agent's calls).
    pub seed: u64,
    /// Names the episode in a recording of model exchanges.
    pub tape_key: String,
    /// The JSON Schema of the task's typed answer, when it asks for values
    /// (the episode's `answer_schema_json`).
    pub answer_schema: Option<serde_json::Value>,
}

impl Briefing {
    /// The briefing of an episode a server created: what the server told,
    /// plus the task when this side knows it.
    pub fn of(episode: &pb::Episode, task: Option<TaskRef>, seed: u64, tape_key: String) -> Briefing {
        Briefing {
            episode_id: episode.episode_id.clone(),
            task_id: episode.task_id.clone(),
            task,
            description: episode.description.clone(),
            today: episode.today.clone(),
            tools: episode.tools.clone(),
            max_calls: episode.max_calls,
            seed,
            tape_key,
            answer_schema: serde_json::from_str(&episode.answer_schema_json).ok(),
        }
    }
}

/// What an agent reports when it is done, besides its calls: sent with the
/// episode's finish. The final answer, if any, went to [`Env`] already
/// (`answer`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentReport {
    /// What the agent spent (tokens, cost).
    pub usage: Option<pb::Usage>,
    /// An LLM agent's conversation.
    pub conversation: Option<pb::Conversation>,
}

/// Why an agent could not play its episode: an infrastructure error of the
/// episode, never the agent's failure (which the verdict judges).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A built-in agent needs the task itself, and this side does not know it.
    #[error(
        "task '{0}' is not in this client's suite, so the built-in agent cannot play it (a task file's: load it here too, with --tasks)"
    )]
    UnknownTask(String),
    /// The model endpoint failed after its retries.
    #[cfg(feature = "llm")]
    #[error(transparent)]
    Endpoint(#[from] llm::EndpointError),
    /// The LLM user's endpoint failed after its retries.
    #[cfg(feature = "llm")]
    #[error("the LLM user got no answer: {0}")]
    User(llm::EndpointError),
    /// The episode could not be set up for the agent (its team's roles).
    #[error("cannot set up the episode: {0}")]
    Setup(String),
    /// An LLM agent was played outside a tokio runtime.
    #[error("an LLM agent plays inside a tokio runtime")]
    NoRuntime,
}

/// An agent: plays one episode through an [`Env`], from a thread that may
/// block (each call waits for its reply).
pub trait Agent: std::fmt::Debug + Send + Sync {
    /// The agent's default label: its name, or `architecture@model`.
    fn label(&self) -> String;

    /// Makes the agent's calls on the episode (and gives its final answer,
    /// if any, to `env`); does not finish it. Giving up is an outcome of the
    /// episode, judged by its verdict, not an error.
    fn play(&self, briefing: &Briefing, env: &mut dyn Env) -> Result<AgentReport, AgentError>;

    /// The roles a multi-agent episode of this agent declares (a team's);
    /// none for a single agent.
    fn roles(&self) -> Vec<toolenv_core::RoleSpec> {
        Vec::new()
    }

    /// Whether the agent needs the task itself ([`Briefing::task`]): the
    /// built-in agents do, an LLM agent reads only what the episode tells.
    fn needs_task(&self) -> bool {
        true
    }

    /// Whether a fault delivered in-band reaches the agent as the reply's
    /// text (as an LLM reads it), rather than read as a failure.
    fn reads_in_band_text(&self) -> bool {
        false
    }
}

impl From<Builtin> for Arc<dyn Agent> {
    fn from(agent: Builtin) -> Self {
        Arc::new(agent)
    }
}

/// The driver: plays `agent` on `env` (an in-process episode or a remote
/// one) after checking that it knows what it needs; the episode is
/// finished by the caller, with the answer `env` was given and the
/// returned [`AgentReport`].
pub fn drive(agent: &dyn Agent, briefing: &Briefing, env: &mut dyn Env) -> Result<AgentReport, AgentError> {
    if agent.needs_task() && briefing.task.is_none() {
        return Err(AgentError::UnknownTask(briefing.task_id.clone()));
    }
    agent.play(briefing, env)
}

/// Plays `agent` on an in-process episode of `task` (no faults, no
/// perturbation) with the [`drive`]r, and returns the episode, answered
/// but not finished; `Episode::finish` judges it.
pub fn play_in_process(agent: &dyn Agent, task: TaskRef, seed: u64, trial: u32) -> Result<toolenv_core::Episode, AgentError> {
    let mut episode = toolenv_core::Episode::new(task.clone(), seed, trial);
    let roles = agent.roles();
    if !roles.is_empty() {
        episode = episode.with_team(roles, None).map_err(|error| AgentError::Setup(error.to_string()))?;
    }
    let briefing = Briefing {
        episode_id: "in-process".to_owned(),
        task_id: task.id.clone(),
        description: episode.description().to_owned(),
        today: task.today.to_string(),
        max_calls: episode.max_calls(),
        seed,
        answer_schema: task.answer_schema(),
        task: Some(task),
        ..Briefing::default()
    };
    drive(agent, &briefing, &mut episode)?;
    Ok(episode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolenv_domains::Finish;

    #[test]
    fn the_driver_plays_built_in_agents_in_process() {
        let task = TaskRef::from(toolenv_domains::task("scheduling/book-meeting/001").expect("a paper task"));
        for (agent, passes) in [(Builtin::Reference, true), (Builtin::Solver, true), (Builtin::Idle, false)] {
            let mut episode = play_in_process(&agent, task.clone(), 0, 0).expect("plays");
            assert_eq!(episode.finish().passed, passes, "{}", agent.label());
        }
    }

    #[test]
    fn an_unknown_task_is_an_error_of_the_episode_not_of_the_agent() {
        let briefing = Briefing { task_id: "nope/nope/001".into(), ..Briefing::default() };
        let task = TaskRef::from(toolenv_domains::task("scheduling/book-meeting/001").expect("a paper task"));
        let mut episode = toolenv_core::Episode::new(task, 0, 0);
        assert!(matches!(drive(&Builtin::Reference, &briefing, &mut episode), Err(AgentError::UnknownTask(id)) if id == "nope/nope/001"));
    }
}
