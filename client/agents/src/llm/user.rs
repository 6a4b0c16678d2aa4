//! An LLM as the simulated user of conversational tasks: an option beside
//! the task's rule-based user ([`toolenv_core::user::hear`], the default).
//!
//! The model is told the task as the customer knows it (the description,
//! the details the description leaves out with their values, the actions
//! only the customer may take) and the agent's question, and answers as
//! the customer, tersely, only what is asked. The driver routes the
//! agent's `ask_user` calls through it ([`WithLlmUser`]): the question goes
//! to the episode with the model's answer supplied
//! ([`toolenv_domains::solver::Request::user_answer`]), the episode reads
//! what the answer says for the slots the question named (its `told`) and
//! records the answer, so the episode replays byte for byte without the
//! model. An action the agent asks for (dual control) is still made by the
//! rule-based user. Each exchange goes through the same
//! [`ModelEndpoint`] the LLM agents use (retries, timeouts, recording to a
//! tape and playing it back), at temperature 0 with a fixed seed; an
//! endpoint that keeps failing ends the episode as an infrastructure error
//! ([`crate::AgentError::User`]), never scored.

use std::sync::Arc;

use serde_json::{Value, json};
use toolenv_core::{Task, bus::ASK_USER, user};
use toolenv_domains::{
    masfire::team::TeamEnv,
    solver::{Env, Observation, Request},
};

use super::{EndpointError, ModelEndpoint, Sampling};
use crate::{Agent, AgentError, AgentReport, Briefing};

/// The sampling of the user's model: deterministic where the endpoint allows.
pub const USER_SAMPLING: Sampling = Sampling { temperature: Some(0.0), top_p: None, max_tokens: Some(256), seed: Some(0) };

/// An LLM user: a model behind an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct LlmUser {
    /// The model as the endpoint names it.
    pub model: String,
    /// Where the model is served.
    pub endpoint: ModelEndpoint,
    /// Sampling settings ([`USER_SAMPLING`] unless changed).
    pub sampling: Sampling,
}

impl LlmUser {
    /// A user on `model` at `endpoint`, with [`USER_SAMPLING`].
    pub fn new(model: impl Into<String>, endpoint: ModelEndpoint) -> Self {
        LlmUser { model: model.into(), endpoint, sampling: USER_SAMPLING }
    }

    /// The chat-completions request that asks the model for the customer's
    /// answer to `question` in an episode of `task`.
    pub fn request(&self, task: &Task, question: &str) -> Value {
        let mut request = json!({"model": self.model, "messages": [
            {"role": "system", "content": instructions(task)},
            {"role": "user", "content": question},
        ]});
        if let (Value::Object(request), Value::Object(sampling)) = (&mut request, self.sampling.to_json()) {
            request.extend(sampling);
        }
        request
    }

    /// The customer's answer to `question`, as the model gives it (its
    /// text without reasoning; empty when it said nothing; the episode
    /// keeps at most [`user::MAX_ANSWER_BYTES`] of it). `tape_key` names
    /// the exchange in a recording.
    pub async fn answer(&self, tape_key: &str, task: &Task, question: &str) -> Result<String, EndpointError> {
        let reply = self.endpoint.complete(tape_key, &self.request(task, question)).await?;
        let text = reply.pointer("/choices/0/message/content").and_then(Value::as_str).unwrap_or_default();
        Ok(without_reasoning(text).trim().to_owned())
    }
}

/// What the customer is told: who they are, what they hold, how to answer.
fn instructions(task: &Task) -> String {
    let conversation = task.conversation.clone().unwrap_or_default();
    let mut known: Vec<String> = conversation.withheld.iter().map(|w| format!("- {}: {}", user::readable(w.slot), w.value)).collect();
    // A customer to verify knows their own id, unless the request gives it.
    if let Some(v) = &conversation.verification
        && !task.slots.iter().any(|s| s.name == user::CUSTOMER_ID)
    {
        known.push(format!("- {}: {}", user::readable(user::CUSTOMER_ID), v.customer));
    }
    if known.is_empty() {
        known.push("- (nothing beyond your request)".to_owned());
    }
    let actions: Vec<String> =
        conversation.actions.iter().map(|a| format!("- {} (for the {} the agent names)", a.what, user::readable(a.id_param))).collect();
    let actions = if actions.is_empty() {
        String::new()
    } else {
        format!("\n\nOnly you can do these; when the agent asks you to, say that you do it:\n{}", actions.join("\n"))
    };
    format!(
        "You are a customer talking to a support agent, who asks you questions. Your request, as you gave it:\n\n{}\n\n\
         Details you know that your request leaves out:\n{}{actions}\n\n\
         Answer the agent's question as the customer, in one or two short sentences: give only the details the question asks \
         for, written exactly as above, and nothing else. If it asks for something you do not know, say you do not know.",
        task.description(),
        known.join("\n"),
    )
}

/// A reply without the reasoning some local models write first (`<think>…</think>`).
pub(super) fn without_reasoning(text: &str) -> &str {
    match text.rfind("</think>") {
        Some(end) => &text[end + "</think>".len()..],
        None => text,
    }
}

/// An agent whose `ask_user` questions the LLM user answers: the agent
/// plays as ever, through an environment that asks the model first and
/// sends each question with its answer. Its label is the agent's.
#[derive(Debug, Clone)]
pub struct WithLlmUser {
    /// The agent.
    pub agent: Arc<dyn Agent>,
    /// The user.
    pub user: LlmUser,
}

impl Agent for WithLlmUser {
    fn label(&self) -> String {
        self.agent.label()
    }

    fn play(&self, briefing: &Briefing, env: &mut dyn crate::Env) -> Result<AgentReport, AgentError> {
        // The user needs the task's conversation, which only the task holds.
        let Some(task) = briefing.task.clone() else { return Err(AgentError::UnknownTask(briefing.task_id.clone())) };
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| AgentError::NoRuntime)?;
        let mut asking = UserEnv { env, user: &self.user, task: &task, runtime, tape_key: &briefing.tape_key, turns: 0, error: None };
        let played = self.agent.play(briefing, &mut asking);
        match asking.error {
            Some(error) => Err(AgentError::User(error)),
            None => played,
        }
    }

    fn roles(&self) -> Vec<toolenv_core::RoleSpec> {
        self.agent.roles()
    }

    fn needs_task(&self) -> bool {
        true
    }

    fn reads_in_band_text(&self) -> bool {
        self.agent.reads_in_band_text()
    }
}

/// The environment an agent with an LLM user plays against.
struct UserEnv<'a> {
    env: &'a mut dyn crate::Env,
    user: &'a LlmUser,
    task: &'a Task,
    runtime: tokio::runtime::Handle,
    tape_key: &'a str,
    turns: u32,
    /// The endpoint's failure: the episode stops there.
    error: Option<EndpointError>,
}

impl UserEnv<'_> {
    /// The model's answer to an `ask_user` call of a conversational task;
    /// `None` for any other call (or one whose question cannot be read:
    /// the episode refuses it as malformed, as without a model).
    fn ask(&mut self, tool: &str, arguments_json: &str) -> Option<Result<String, Observation>> {
        if self.error.is_some() {
            return Some(Err(Observation::Closed("stopped after the LLM user failed".into())));
        }
        if tool != ASK_USER || self.task.conversation.is_none() {
            return None;
        }
        let arguments: Value = serde_json::from_str(arguments_json).ok()?;
        let question = arguments.get("question")?.as_str()?;
        let conversation = self.task.conversation.as_ref()?;
        let hearing = user::hear(conversation, &self.task.slots, question);
        if hearing.read_code && hearing.told.is_empty() && hearing.action.is_none() {
            // Reading the code off the phone is the user's own action, which
            // the episode plays: there is nothing to ask the model.
            return None;
        }
        let key = format!("{}/user-{:03}", self.tape_key, self.turns);
        self.turns += 1;
        match self.runtime.block_on(self.user.answer(&key, self.task, question)) {
            Ok(answer) => Some(Ok(answer)),
            Err(error) => {
                let why = format!("the LLM user failed: {error}");
                self.error = Some(error);
                Some(Err(Observation::Closed(why)))
            }
        }
    }
}

impl Env for UserEnv<'_> {
    fn call(&mut self, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        match self.ask(tool, arguments_json) {
            None => self.env.call(tool, arguments_json, request),
            Some(Err(stopped)) => stopped,
            Some(Ok(answer)) => self.env.call(tool, arguments_json, &Request { user_answer: Some(&answer), ..*request }),
        }
    }

    fn answer(&mut self, text: &str) {
        self.env.answer(text);
    }

    fn answer_typed(&mut self, answer: &serde_json::Value) {
        self.env.answer_typed(answer);
    }
}

impl TeamEnv for UserEnv<'_> {
    fn join(&mut self, role: &str) -> Result<String, String> {
        self.env.join(role)
    }

    fn call_as(&mut self, agent: &str, tool: &str, arguments_json: &str, request: &Request<'_>) -> Observation {
        match self.ask(tool, arguments_json) {
            None => self.env.call_as(agent, tool, arguments_json, request),
            Some(Err(stopped)) => stopped,
            Some(Ok(answer)) => self.env.call_as(agent, tool, arguments_json, &Request { user_answer: Some(&answer), ..*request }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_is_dropped() {
        assert_eq!(without_reasoning("<think>the date is in March</think>\nIt is 2026-03-04."), "\nIt is 2026-03-04.");
        assert_eq!(without_reasoning("It is 2026-03-04."), "It is 2026-03-04.");
    }
}
