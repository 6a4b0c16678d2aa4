//! The built-in LLM agents: ReAct ([`react`]) and Reflexion (`reflexion`)
//! over any OpenAI-compatible chat-completions endpoint ([`endpoint`]),
//! reading tool calls however the model writes them ([`parse`]). Each
//! episode reports its tokens and cost with its finish call and leaves its
//! conversation in the trajectory; an endpoint that keeps failing ends the
//! episode as an infrastructure error, never as an agent failure.
//!
//! The agents play through [`crate::Env`] like every other agent, from a
//! thread that may block: each model turn is an async request the loop
//! waits for on the current tokio runtime.
//!
//! [`user`] is the LLM user of conversational tasks, an option beside the
//! rule-based one, over the same endpoint client; [`judge`] the LLM judge of
//! prose answers, an option beside the rule-based reader.
//!
//! [`scripted`] is an OpenAI-compatible endpoint that plays a task's
//! reference solution in every protocol variant, for tests and benchmarks.

pub mod endpoint;
pub mod judge;
pub mod parse;
pub mod react;
mod reflexion;
pub mod scripted;
pub mod user;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use toolenv::pb;

pub use crate::spec::Architecture;
pub use endpoint::{EndpointError, ModelEndpoint, RetryPolicy, Tape};
pub use judge::LlmJudge;
pub use user::{LlmUser, WithLlmUser};

/// How `tool_choice` is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// Not sent: the endpoint's default (`auto` wherever tools are given).
    #[default]
    Omit,
    /// `"auto"`.
    Auto,
    /// `"required"`, with a `finish` tool added so that the model can end the episode.
    Required,
}

/// Sampling settings sent with every request (and recorded in the conversation).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    /// `temperature`, when set.
    pub temperature: Option<f64>,
    /// `top_p`, when set.
    pub top_p: Option<f64>,
    /// `max_tokens` per reply, when set.
    pub max_tokens: Option<u32>,
    /// `seed`, when set (endpoints that support it sample reproducibly).
    pub seed: Option<u64>,
}

impl Sampling {
    /// The settings as request fields.
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        if let Some(t) = self.temperature {
            map.insert("temperature".into(), json!(t));
        }
        if let Some(p) = self.top_p {
            map.insert("top_p".into(), json!(p));
        }
        if let Some(m) = self.max_tokens {
            map.insert("max_tokens".into(), json!(m));
        }
        if let Some(s) = self.seed {
            map.insert("seed".into(), json!(s));
        }
        Value::Object(map)
    }
}

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per million input (prompt) tokens.
    pub input_per_million: f64,
    /// Per million output (completion) tokens.
    pub output_per_million: f64,
}

impl Price {
    /// The cost of an episode's tokens.
    pub fn cost_usd(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.input_per_million + output_tokens as f64 * self.output_per_million) / 1e6
    }
}

/// One LLM agent: an architecture on a model behind an endpoint.
#[derive(Debug, Clone)]
pub struct LlmAgent {
    /// ReAct or Reflexion.
    pub architecture: Architecture,
    /// The model as the endpoint names it.
    pub model: String,
    /// Where the model is served.
    pub endpoint: ModelEndpoint,
    /// Sampling settings.
    pub sampling: Sampling,
    /// How `tool_choice` is sent.
    pub tool_choice: ToolChoice,
    /// `parallel_tool_calls`, when sent.
    pub parallel_tool_calls: Option<bool>,
    /// Most model turns per episode.
    pub max_turns: u32,
    /// The model's price, for the cost figures.
    pub price: Option<Price>,
}

/// Default most model turns per episode.
pub const DEFAULT_MAX_TURNS: u32 = 24;

/// The LLM agents of a run, by label (`react@MODEL`), and the LLM user
/// every agent of the run plays with, if one is set.
#[derive(Debug, Clone, Default)]
pub struct LlmAgents {
    agents: Arc<BTreeMap<String, LlmAgent>>,
    user: Option<LlmUser>,
}

impl LlmAgents {
    /// The agents, by label.
    pub fn new(agents: BTreeMap<String, LlmAgent>) -> Self {
        LlmAgents { agents: Arc::new(agents), user: None }
    }

    /// The same agents, each playing with `user` (an LLM) as the simulated
    /// user of conversational tasks; `None`: the rule-based user.
    pub fn with_user(self, user: Option<LlmUser>) -> Self {
        LlmAgents { user, ..self }
    }

    /// The LLM agent of a label.
    pub fn get(&self, label: &str) -> Option<&LlmAgent> {
        self.agents.get(label)
    }

    /// The agent a label names: a built-in agent, or one of these; with the
    /// LLM user, if one is set.
    pub fn agent(&self, label: &str) -> Option<Arc<dyn crate::Agent>> {
        let agent = crate::builtin::agent(label).or_else(|| self.get(label).map(|llm| Arc::new(llm.clone()) as Arc<dyn crate::Agent>))?;
        Some(match &self.user {
            Some(user) => Arc::new(WithLlmUser { agent, user: user.clone() }),
            None => agent,
        })
    }
}

impl crate::Agent for LlmAgent {
    fn label(&self) -> String {
        format!("{}@{}", self.architecture.name(), self.model)
    }

    fn play(&self, briefing: &crate::Briefing, env: &mut dyn crate::Env) -> Result<crate::AgentReport, crate::AgentError> {
        // The model's requests are async; this thread may block on them.
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| crate::AgentError::NoRuntime)?;
        let played = react::run(&runtime, self, briefing, env)?;
        let usage = pb::Usage {
            input_tokens: played.input_tokens,
            output_tokens: played.output_tokens,
            cost_usd: self.price.map(|p| p.cost_usd(played.input_tokens, played.output_tokens)),
        };
        Ok(crate::AgentReport { usage: Some(usage), conversation: Some(played.conversation) })
    }

    fn needs_task(&self) -> bool {
        false
    }

    fn reads_in_band_text(&self) -> bool {
        true
    }
}

impl From<LlmAgent> for Arc<dyn crate::Agent> {
    fn from(agent: LlmAgent) -> Self {
        Arc::new(agent)
    }
}
