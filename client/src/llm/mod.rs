//! The built-in LLM agents: ReAct ([`react`]) and Reflexion ([`reflexion`])
//! over any OpenAI-compatible chat-completions endpoint ([`endpoint`]),
//! reading tool calls however the model writes them ([`parse`]). Each
//! episode reports its tokens and cost with its finish call and leaves its
//! conversation in the trajectory; an endpoint that keeps failing ends the
//! episode as an infrastructure error, never as an agent failure.
//!
//! [`scripted`] is an OpenAI-compatible endpoint that plays a task's
//! reference solution in every protocol variant, for tests and benchmarks.

pub mod endpoint;
pub mod parse;
pub mod react;
mod reflexion;
pub mod scripted;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};
use toolenv::pb;

use crate::{Client, ClientError, EpisodeOutcome, PlannedEpisode};
pub use endpoint::{EndpointError, ModelEndpoint, RetryPolicy, Tape};

/// The agent loop an LLM agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// Think, act with a tool, observe, until done.
    React,
    /// ReAct with a self-reflection after a failed call and before finishing.
    Reflexion,
}

impl Architecture {
    /// The name used in agent specs (`react@MODEL`).
    pub fn name(self) -> &'static str {
        match self {
            Architecture::React => "react",
            Architecture::Reflexion => "reflexion",
        }
    }
}

/// An agent spec `react@MODEL` or `reflexion@MODEL`: the architecture and the
/// model; `None` for anything else.
pub fn parse_spec(spec: &str) -> Option<(Architecture, &str)> {
    let (architecture, model) = spec.split_once('@')?;
    let architecture = match architecture {
        "react" => Architecture::React,
        "reflexion" => Architecture::Reflexion,
        _ => return None,
    };
    (!model.trim().is_empty()).then_some((architecture, model))
}

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

/// The LLM agents of a run, by label (`react@MODEL`).
#[derive(Debug, Clone, Default)]
pub struct LlmAgents(Arc<BTreeMap<String, LlmAgent>>);

impl LlmAgents {
    /// The agents, by label.
    pub fn new(agents: BTreeMap<String, LlmAgent>) -> Self {
        LlmAgents(Arc::new(agents))
    }

    /// The agent of a label.
    pub fn get(&self, label: &str) -> Option<&LlmAgent> {
        self.0.get(label)
    }
}

/// Why an LLM agent's episode could not be played: an infrastructure error.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The model endpoint failed after its retries.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The toolenv server failed.
    #[error(transparent)]
    Client(#[from] ClientError),
}

impl From<tonic::Status> for LlmError {
    fn from(status: tonic::Status) -> Self {
        LlmError::Client(ClientError::Status(status))
    }
}

/// Plays one planned episode with an LLM agent: creates it, runs the
/// agent's loop, finishes it with the tokens, cost and conversation, and
/// returns its verdict and trajectory.
pub async fn play(client: &mut Client, agent: &LlmAgent, planned: &PlannedEpisode) -> Result<EpisodeOutcome, LlmError> {
    let episode = client.create_episode_with(planned.request.clone()).await?;
    let request = &planned.request;
    let tape_key = format!(
        "{}/{}/s{}-t{}-e{}-{}",
        planned.agent, request.task_id, request.seed, request.trial, request.epsilon, planned.fault_profile
    );
    let verdict = play_created(client, agent, &episode, &tape_key).await?;
    let trajectory = client.trajectory(&episode.episode_id).await?;
    Ok(EpisodeOutcome { task_id: request.task_id.clone(), verdict, trajectory })
}

/// Plays an episode created already (a hosted run's lease, say) and finishes
/// it; `tape_key` names it in a recording.
pub async fn play_created(client: &mut Client, agent: &LlmAgent, episode: &pb::Episode, tape_key: &str) -> Result<pb::Verdict, LlmError> {
    let played = react::run(client, agent, episode, tape_key).await?;
    let usage = pb::Usage {
        input_tokens: played.input_tokens,
        output_tokens: played.output_tokens,
        cost_usd: agent.price.map(|p| p.cost_usd(played.input_tokens, played.output_tokens)),
    };
    // Fields other requests add stay at their defaults.
    #[allow(clippy::needless_update)]
    let request = pb::FinishEpisodeRequest {
        episode_id: episode.episode_id.clone(),
        usage: Some(usage),
        conversation: Some(played.conversation),
        ..Default::default()
    };
    Ok(client.raw().finish_episode(request).await?.into_inner())
}
