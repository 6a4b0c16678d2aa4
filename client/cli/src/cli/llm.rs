//! The LLM agents on the command line: agent specs (`react@MODEL`,
//! `reflexion@MODEL`, or a built-in agent's name) and the flags that say
//! where each model is served, how it is sampled and priced, and whether
//! its exchanges are recorded or replayed; turned into [`LlmAgents`] once,
//! before anything is played.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::ValueEnum;
use toolenv_agents::Spec;
use toolenv_agents::llm::{self, LlmAgent, LlmAgents, ModelEndpoint, Price, RetryPolicy, Sampling, Tape, ToolChoice};

/// An agent as `--agent` takes it: a built-in agent's name, or an LLM agent
/// `react@MODEL` / `reflexion@MODEL`; the text is the agent's label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentSpec(pub(crate) String);

/// Parses `--agent`'s values ([`Spec::parse`]).
pub(crate) fn parse_agent_spec(text: &str) -> Result<AgentSpec, String> {
    Spec::parse(text).map(|_| AgentSpec(text.to_owned()))
}

/// How `tool_choice` is sent, as a flag value.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ToolChoiceArg {
    /// Not sent (the endpoint's default, `auto` when tools are given).
    Omit,
    /// "auto".
    Auto,
    /// "required", with a `finish` tool added to end the episode (for
    /// servers that only return native tool calls when required).
    Required,
}

/// Settings of the LLM agents (`--agent react@MODEL,reflexion@MODEL`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "LLM agents (react@MODEL, reflexion@MODEL)")]
pub(crate) struct LlmArgs {
    /// The OpenAI-compatible endpoint's base URL (before /chat/completions);
    /// MODEL=URL sets one model's endpoint (repeatable).
    #[arg(long, value_name = "URL", env = "OPENAI_BASE_URL", default_value = "https://api.openai.com/v1")]
    pub(crate) base_url: Vec<String>,
    /// The environment variable holding the API key (sent as a bearer
    /// token; none is sent when it is unset); MODEL=VAR sets one model's (repeatable).
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    pub(crate) api_key_env: Vec<String>,
    /// Sampling temperature sent with every request.
    #[arg(long, default_value_t = 0.0)]
    pub(crate) temperature: f64,
    /// Nucleus sampling `top_p`, when set.
    #[arg(long)]
    pub(crate) top_p: Option<f64>,
    /// Most tokens per model reply.
    #[arg(long, default_value_t = 1024)]
    pub(crate) max_tokens: u32,
    /// The sampling `seed` sent to endpoints that support it.
    #[arg(long)]
    pub(crate) sampling_seed: Option<u64>,
    /// How `tool_choice` is sent.
    #[arg(long, value_enum, default_value = "omit")]
    pub(crate) tool_choice: ToolChoiceArg,
    /// Send `parallel_tool_calls` with this value (not sent by default).
    #[arg(long)]
    pub(crate) parallel_tool_calls: Option<bool>,
    /// Most model turns per episode.
    #[arg(long, default_value_t = llm::DEFAULT_MAX_TURNS, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub(crate) max_turns: u32,
    /// A model's price in US dollars per million input and output tokens,
    /// MODEL=INPUT,OUTPUT (repeatable), e.g. gpt-4o=2.5,10.
    #[arg(long, value_name = "MODEL=IN,OUT")]
    pub(crate) price: Vec<String>,
    /// A JSON file of prices: {"MODEL": {"input": 2.5, "output": 10}} (USD per million tokens).
    #[arg(long, value_name = "FILE")]
    pub(crate) prices: Option<PathBuf>,
    /// Write every HTTP exchange with the model endpoints under DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub(crate) record: Option<PathBuf>,
    /// Answer every model turn from the exchanges recorded under DIR,
    /// offline: the run is reproduced byte for byte.
    #[arg(long, value_name = "DIR")]
    pub(crate) replay: Option<PathBuf>,
    /// Seconds allowed for one model request.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) request_timeout_secs: u64,
    /// Attempts per model turn when the endpoint fails (HTTP 429, 5xx,
    /// timeouts), with backoff honouring Retry-After; then the episode is an
    /// infrastructure error.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=50))]
    pub(crate) max_attempts: u32,
}

/// Who answers the agent's `ask_user` questions in conversational tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum UserKind {
    /// The task's rule-based user: deterministic, no model (the default).
    Rules,
    /// A model (--user-model) behind an OpenAI-compatible endpoint; its
    /// answers are recorded in the trajectory, so the episode replays
    /// without it. The --api-key-env, --record/--replay,
    /// --request-timeout-secs and --max-attempts of the LLM agents apply.
    Llm,
}

/// The simulated user of conversational tasks (`run`, `play`, `work`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "The simulated user of conversational tasks")]
pub(crate) struct UserArgs {
    /// Who answers the agent's ask_user questions.
    #[arg(long, value_enum, default_value = "rules")]
    pub(crate) user: UserKind,
    /// The LLM user's endpoint base URL (default: --base-url's for its model).
    #[arg(long, value_name = "URL")]
    pub(crate) user_endpoint: Option<String>,
    /// The LLM user's model, as its endpoint names it (required with --user llm).
    #[arg(long, value_name = "NAME", required_if_eq("user", "llm"))]
    pub(crate) user_model: Option<String>,
}

/// The LLM user the flags ask for, if any (`--user llm`).
pub(crate) fn user(user: &UserArgs, args: &LlmArgs) -> anyhow::Result<Option<llm::LlmUser>> {
    let (UserKind::Llm, Some(model)) = (user.user, &user.user_model) else { return Ok(None) };
    let base_url = match &user.user_endpoint {
        Some(url) => url.clone(),
        None => per_model(&args.base_url, model, is_url).context("--user-endpoint: no URL for the user's model")?,
    };
    let endpoint = endpoint(&base_url, model, args).with_context(|| format!("invalid --user-endpoint {base_url}"))?;
    Ok(Some(llm::LlmUser::new(model.clone(), endpoint)))
}

fn is_url(value: &str) -> bool {
    value.starts_with("http://") || value.starts_with("https://")
}

/// The endpoint of `model` at `base_url`, with the flags' key, retries and tape.
fn endpoint(base_url: &str, model: &str, args: &LlmArgs) -> anyhow::Result<ModelEndpoint> {
    let key_var = per_model(&args.api_key_env, model, |v| !v.contains('=')).context("--api-key-env: no variable for this model")?;
    let api_key = std::env::var(&key_var).ok().filter(|k| !k.is_empty());
    let retry = RetryPolicy {
        max_attempts: args.max_attempts,
        request_timeout: Duration::from_secs(args.request_timeout_secs),
        ..Default::default()
    };
    let tape = match (&args.record, &args.replay) {
        (Some(dir), _) => Tape::Record(dir.clone()),
        (_, Some(dir)) => Tape::Replay(dir.clone()),
        _ => Tape::Off,
    };
    Ok(ModelEndpoint::new(base_url, api_key, retry, tape)?)
}

/// The LLM agents among `labels`, configured by the flags, with the user they play with.
pub(crate) fn agents<'a>(labels: impl IntoIterator<Item = &'a str>, args: &LlmArgs, user_args: &UserArgs) -> anyhow::Result<LlmAgents> {
    let mut agents = BTreeMap::new();
    let prices = prices(args)?;
    for label in labels {
        let Ok(Spec::Llm(architecture, model)) = Spec::parse(label) else { continue };
        let base_url = per_model(&args.base_url, model, is_url).context("--base-url: no URL for this model")?;
        let endpoint = endpoint(&base_url, model, args).with_context(|| format!("invalid --base-url for {label}"))?;
        let agent = LlmAgent {
            architecture,
            model: model.to_owned(),
            endpoint,
            sampling: Sampling {
                temperature: Some(args.temperature),
                top_p: args.top_p,
                max_tokens: Some(args.max_tokens),
                seed: args.sampling_seed,
            },
            tool_choice: match args.tool_choice {
                ToolChoiceArg::Omit => ToolChoice::Omit,
                ToolChoiceArg::Auto => ToolChoice::Auto,
                ToolChoiceArg::Required => ToolChoice::Required,
            },
            parallel_tool_calls: args.parallel_tool_calls,
            max_turns: args.max_turns,
            price: prices.get(model).copied(),
        };
        agents.insert(label.to_owned(), agent);
    }
    Ok(LlmAgents::new(agents).with_user(user(user_args, args)?))
}

/// The value of a repeatable MODEL=VALUE flag for a model: its own, else the
/// default (a value `is_default` accepts; the last one given wins).
fn per_model(values: &[String], model: &str, is_default: impl Fn(&str) -> bool) -> Option<String> {
    let own = values.iter().rev().find_map(|v| {
        if is_default(v) {
            return None;
        }
        let (m, value) = v.split_once('=')?;
        (m == model).then(|| value.to_owned())
    });
    own.or_else(|| values.iter().rev().find(|v| is_default(v)).cloned())
}

/// Every model's price, from --prices then --price.
fn prices(args: &LlmArgs) -> anyhow::Result<BTreeMap<String, Price>> {
    let mut prices = BTreeMap::new();
    if let Some(path) = &args.prices {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading --prices {}", path.display()))?;
        let file: BTreeMap<String, serde_json::Value> =
            serde_json::from_str(&text).with_context(|| format!("--prices {}: not a JSON object of models", path.display()))?;
        for (model, price) in file {
            let field = |name: &str| price.get(name).and_then(serde_json::Value::as_f64);
            let (Some(input), Some(output)) = (field("input"), field("output")) else {
                bail!("--prices {}: {model} needs numbers \"input\" and \"output\" (USD per million tokens)", path.display());
            };
            let price = checked_price(input, output).with_context(|| format!("--prices {}: {model}", path.display()))?;
            prices.insert(model, price);
        }
    }
    for text in &args.price {
        let parsed = text.rsplit_once('=').and_then(|(model, pair)| {
            let (input, output) = pair.split_once(',')?;
            Some((model, input.trim().parse::<f64>().ok()?, output.trim().parse::<f64>().ok()?))
        });
        let Some((model, input, output)) = parsed else { bail!("--price {text}: expected MODEL=INPUT,OUTPUT, e.g. gpt-4o=2.5,10") };
        prices.insert(model.to_owned(), checked_price(input, output).with_context(|| format!("--price {text}"))?);
    }
    Ok(prices)
}

fn checked_price(input: f64, output: f64) -> anyhow::Result<Price> {
    if !(input.is_finite() && output.is_finite() && input >= 0.0 && output >= 0.0) {
        bail!("a price is a finite, non-negative number of US dollars per million tokens");
    }
    Ok(Price { input_per_million: input, output_per_million: output })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_model_values_and_defaults() {
        let urls = vec!["http://a/v1".to_owned(), "big=http://b/v1?x=1".to_owned()];
        let is_url = |v: &str| v.starts_with("http://");
        assert_eq!(per_model(&urls, "big", is_url).as_deref(), Some("http://b/v1?x=1"));
        assert_eq!(per_model(&urls, "small", is_url).as_deref(), Some("http://a/v1"));
    }
}

/// Who judges prose answers (`run` with its embedded server, `serve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum JudgeKind {
    /// The rule-based reader: deterministic, no model (the default).
    Rules,
    /// A model (--judge-model) behind an OpenAI-compatible endpoint, at
    /// temperature 0; its ruling is recorded in the trajectory, so replays
    /// and forks judge the same way without it.
    Llm,
}

/// The judge of prose answers. The server judges, so with `run --url` it is
/// the server's (`serve --answer-judge`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "The judge of prose answers")]
pub(crate) struct JudgeArgs {
    /// Who rules on an answer given in prose (typed answers are judged field by field).
    #[arg(long, value_enum, default_value = "rules")]
    pub(crate) answer_judge: JudgeKind,
    /// The judge's model, as its endpoint names it (required with --answer-judge llm).
    #[arg(long, value_name = "NAME", required_if_eq("answer_judge", "llm"))]
    pub(crate) judge_model: Option<String>,
    /// The judge's OpenAI-compatible endpoint base URL (before /chat/completions).
    #[arg(long, value_name = "URL", env = "OPENAI_BASE_URL", default_value = "https://api.openai.com/v1")]
    pub(crate) judge_base_url: String,
    /// The environment variable holding the judge endpoint's API key (none is sent when unset).
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    pub(crate) judge_api_key_env: String,
    /// Seconds allowed for one request to the judge.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) judge_timeout_secs: u64,
}

impl JudgeArgs {
    /// The judge the flags ask for; `None`: the rules.
    pub(crate) fn judge(&self) -> anyhow::Result<Option<std::sync::Arc<dyn toolenv_server::AnswerJudge>>> {
        let (JudgeKind::Llm, Some(model)) = (self.answer_judge, &self.judge_model) else { return Ok(None) };
        let api_key = std::env::var(&self.judge_api_key_env).ok().filter(|k| !k.is_empty());
        let retry = RetryPolicy { request_timeout: Duration::from_secs(self.judge_timeout_secs), ..Default::default() };
        let endpoint = ModelEndpoint::new(&self.judge_base_url, api_key, retry, Tape::Off)
            .with_context(|| format!("invalid --judge-base-url {}", self.judge_base_url))?;
        Ok(Some(std::sync::Arc::new(ModelJudge(llm::LlmJudge::new(model.clone(), endpoint)))))
    }
}

/// The LLM judge as the server asks it.
#[derive(Debug)]
struct ModelJudge(llm::LlmJudge);

impl toolenv_server::AnswerJudge for ModelJudge {
    fn rule<'a>(
        &'a self,
        question: &'a toolenv_core::JudgeQuestion,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<toolenv_core::AnswerRuling, String>> + Send + 'a>> {
        Box::pin(self.0.rule(question))
    }
}
