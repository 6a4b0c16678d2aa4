//! The user's turns in an episode of a conversational task: `ask_user`
//! answered by the task's simulated user ([`crate::user::hear`]), the
//! user's own tool calls when asked to act (dual control), and the refusal
//! of a tool only the user may call.
//!
//! A turn is one call of the episode, recorded like any other (the question
//! as its arguments, the answer as its result), with the user's action, if
//! it made one, recorded inside it as a [`UserCall`]. No λ fault meets a
//! turn: the user always answers, and the fault schedule of the domain's
//! calls stays a function of their call indices.
//!
//! An answer may come from outside the episode (an LLM user, which the core
//! never calls): then the reply's `answer` is that text (cut to
//! [`user::MAX_ANSWER_BYTES`]), `heard` is still the rule-based hearing,
//! and `told` is what the text actually says for each slot the question
//! named ([`user::told_in`]), right or wrong. An action asked for is still
//! the rule-based user's. The record keeps the text (`user_answer`), so a
//! replay feeds the same answer back.

use serde::Serialize;
use serde_json::{Value, json};

use super::{CallError, Caller, Episode, Reached};
use crate::{
    bus,
    delivery::{Answer, Delivery, Outcome},
    json,
    tool::DomainError,
    user,
};

/// A tool call the user made during a turn: what it called and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserCall {
    /// The domain tool.
    pub tool: String,
    /// Its arguments, canonical JSON.
    pub arguments: String,
    /// What the tool returned.
    pub outcome: Outcome,
}

impl Episode {
    /// Whether this episode has a simulated user to ask (a conversational task).
    pub fn has_user(&self) -> bool {
        self.task.conversation.is_some()
    }

    /// One `ask_user` call of a conversational task: the question heard,
    /// the action asked for played, the exchange returned for recording.
    pub(super) fn user_turn(
        &mut self,
        index: u32,
        arguments: super::Arguments<'_>,
        caller: Option<Caller>,
        waited_ms: u64,
        supplied: Option<&str>,
    ) -> Result<(Reached, Delivery), CallError> {
        let Some(spec) = bus::bus_tool(bus::ASK_USER) else { return Err(CallError::UnknownTool(bus::ASK_USER.to_owned())) };
        let parsed = match arguments {
            super::Arguments::Text(text) => spec.parse_arguments(text),
            super::Arguments::Json(value) => spec.arguments_of(value),
        };
        let args = match parsed {
            Ok(args) => args,
            Err(error) => {
                self.record_invalid_as(bus::ASK_USER, &arguments.text(), waited_ms, error.clone(), caller, Vec::new());
                return Err(CallError::InvalidArgument(error));
            }
        };
        let Some(conversation) = self.task.conversation.clone() else { return Err(CallError::UnknownTool(bus::ASK_USER.to_owned())) };
        let mut hearing = user::hear(&conversation, &self.task.slots, args.str("question"));
        let mut reached = Reached::plain(index, bus::ASK_USER, args.canonical(), waited_ms);
        reached.caller = caller;
        if let Some(supplied) = supplied {
            // An answer from outside: its words, and what they say for the named slots.
            let supplied = crate::codec::cut(supplied, user::MAX_ANSWER_BYTES);
            let named: Vec<&str> = hearing.told.keys().copied().collect();
            hearing.told = user::told_in(&conversation, &named, supplied);
            supplied.clone_into(&mut hearing.text);
            reached.user_answer = Some(supplied.to_owned());
        }
        // Reading a code off the phone is an action, the rule-based user's in every case.
        let read = self.read_code(&mut hearing);
        let mut text = hearing.text;
        let mut acted = None;
        if let Some((i, call)) = hearing.action {
            let action = &conversation.actions[i];
            let said = match call {
                Err(why) => why,
                Ok(arguments) => {
                    let (outcome, changed) = self.user_call(action.tool, &arguments);
                    reached.record.state_changed = changed;
                    let said = match &outcome {
                        Outcome::Result(_) => format!("Done ({}).", action.what),
                        Outcome::Error(e) => {
                            format!("I tried to {}, but it did not work: {}", action.what, crate::codec::cut(&e.message, 200))
                        }
                        _ => format!("I could not {}.", action.what),
                    };
                    acted = Some(UserCall { tool: action.tool.to_owned(), arguments: json::canonical(&arguments), outcome });
                    said
                }
            };
            text = if text.is_empty() { said } else { format!("{text} {said}") };
        }
        let acted = acted.or(read);
        let told: serde_json::Map<String, Value> = hearing.told.into_iter().map(|(k, v)| (k.to_owned(), Value::from(v))).collect();
        let heard = serde_json::to_value(&hearing.heard).unwrap_or_default();
        let mut reply = json!({"answer": text, "heard": heard, "told": told});
        // What the user's own call returned, for the agent to read on.
        match acted.as_ref().map(|call| &call.outcome) {
            Some(Outcome::Result(result)) => reply["result"] = serde_json::from_str(result).unwrap_or(Value::Null),
            Some(Outcome::Error(e)) => reply["error"] = json!({"code": e.code, "message": e.message}),
            _ => {}
        }
        reached.user = acted.map(Box::new);
        Ok((reached, Delivery::Reply(Answer::Result(json::canonical(&reply)))))
    }

    /// The user calls a domain tool on the episode's state, with no fault.
    fn user_call(&mut self, tool: &str, arguments: &Value) -> (Outcome, bool) {
        let Some(spec) = self.task.domain.tool(tool) else {
            return (Outcome::Error(Box::new(DomainError::new("UNKNOWN_TOOL", format!("no tool {tool}")))), false);
        };
        let args = match spec.arguments_of(arguments) {
            Ok(args) => args,
            Err(e) => return (Outcome::Invalid(Box::new(e)), false),
        };
        let context = self.task.context();
        let (result, changed) = crate::World::apply_shared(&mut self.world, spec, &args, &context);
        match result {
            Ok(text) => (Outcome::Result(text), changed),
            Err(error) => (Outcome::Error(Box::new(error)), false),
        }
    }

    /// The refusal of an agent's call to a tool only the user may call, if
    /// `tool` is one in this task: a domain error the agent can read.
    pub(super) fn user_only(&self, tool: &str) -> Option<Answer> {
        let action = self.task.conversation.as_ref()?.action_on(tool)?;
        Some(Answer::Error(DomainError::new(
            "USER_ACTION_REQUIRED",
            format!("only the user can {}: ask the user (ask_user) to do it, naming the {}", action.what, user::readable(action.id_param)),
        )))
    }
}
