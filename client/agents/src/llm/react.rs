//! The agent loop: the model is given the task and the tools, and each turn
//! either calls tools (natively or as text), whose results go back to it, or
//! says it is done. Reflexion adds its reflection turns to the same loop
//! (`super::reflexion`). Tool calls go to the episode through
//! [`crate::Env`] as any agent's do; injected faults come back to the model
//! as error objects with the advised delay, which the loop declares (and
//! the environment waits) before the next call.

use serde_json::{Value, json};
use toolenv::pb;
use toolenv_core::FailureCode;
use toolenv_domains::solver::{Observation, Request};

use super::parse::{self, CallForm, ModelReply, ParsedCall};
use super::{Architecture, EndpointError, LlmAgent, ToolChoice, reflexion};
use crate::{Briefing, Env};

/// The pseudo-tool that ends an episode when `tool_choice` is `required`.
pub const FINISH_TOOL: &str = "finish";

/// An episode as the loop played it.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// The conversation, with its protocol figures.
    pub conversation: pb::Conversation,
    /// Prompt tokens over every turn.
    pub input_tokens: u64,
    /// Completion tokens over every turn.
    pub output_tokens: u64,
}

/// The instructions every episode starts with.
fn system_prompt(architecture: Architecture, finish_tool: bool, typed: bool) -> String {
    let finish = if finish_tool && typed {
        format!(
            "When the task is complete, call the `{FINISH_TOOL}` tool with your final answer to the user, and fill its \
             other fields with the exact values the task asks for (ids and names as the records write them, dates \
             YYYY-MM-DD, times HH:MM, amounts in dollars; for a refusal, the reason from the list)."
        )
    } else if finish_tool {
        format!("When the task is complete, call the `{FINISH_TOOL}` tool with your final answer to the user.")
    } else {
        "When the task is complete, reply with your final answer to the user and no tool call.".to_owned()
    };
    let reflect = match architecture {
        Architecture::React => "",
        Architecture::Reflexion => " After a failed call you will be asked to reflect before you go on.",
    };
    format!(
        "You are an agent that completes the user's task by calling tools. \
         Think step by step, then call one tool at a time and read its result before the next call. \
         Use the tool-calling interface if you can; otherwise write the call as a JSON object \
         {{\"name\": \"<tool>\", \"arguments\": {{...}}}} and nothing else. A result with an \"error\" \
         object means the call failed: a transient failure may be retried (after retry_after_ms if given), \
         a business rule must be respected.{reflect} {finish} {ANSWER_HINT}"
    )
}

/// What the final answer must hold: the model's own words are the episode's answer.
const ANSWER_HINT: &str = "The final answer is what the user reads: if the task asks a question, answer it \
     with the exact values (identifiers, names, dates, times, amounts); if the task cannot be done, say so \
     and why; otherwise say briefly what was done.";

/// The `tools` of every request, in the chat-completions shape.
fn tools_json(tools: &[pb::ToolSpec], finish_tool: bool, answer_schema: Option<&Value>) -> Vec<Value> {
    let mut tools: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let parameters: Value =
                serde_json::from_str(&tool.parameters_json_schema).unwrap_or_else(|_| json!({"type": "object", "properties": {}}));
            json!({"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": parameters}})
        })
        .collect();
    if finish_tool {
        let mut parameters = json!({"type": "object", "properties": {"answer": {"type": "string", "description":
            "Your final answer to the user: what the task asks, with its exact values, or why it cannot be done."}},
            "required": ["answer"]});
        // The task's typed answer: its fields beside the text, required too.
        if let Some(schema) = answer_schema {
            for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                parameters["properties"][name] = property.clone();
            }
            for name in schema["required"].as_array().into_iter().flatten() {
                parameters["required"].as_array_mut().expect("an array").push(name.clone());
            }
        }
        tools.push(json!({"type": "function", "function": {
            "name": FINISH_TOOL,
            "description": "Ends the task. Call it once everything the task asks is done.",
            "parameters": parameters
        }}));
    }
    tools
}

/// Plays an episode with an LLM agent, without finishing it; each model
/// turn blocks this thread on `runtime`.
pub fn run(runtime: &tokio::runtime::Handle, agent: &LlmAgent, episode: &Briefing, env: &mut dyn Env) -> Result<Transcript, EndpointError> {
    let finish_tool = agent.tool_choice == ToolChoice::Required;
    let tools = tools_json(&episode.tools, finish_tool, episode.answer_schema.as_ref());
    let mut names: Vec<&str> = episode.tools.iter().map(|t| t.name.as_str()).collect();
    if finish_tool {
        names.push(FINISH_TOOL);
    }
    let mut messages = vec![
        json!({"role": "system", "content": system_prompt(agent.architecture, finish_tool, episode.answer_schema.is_some())}),
        // The date goes with the task, not the instructions: a system prompt
        // that is the same for every episode lets a server reuse its cached prefix.
        json!({"role": "user", "content": format!("{}\n\n(Today is {}.)", episode.description, episode.today)}),
    ];
    let sampling = agent.sampling.to_json();
    let mut played = Transcript {
        conversation: pb::Conversation {
            agent: agent.architecture.name().to_owned(),
            model: agent.model.clone(),
            sampling_json: sampling.to_string(),
            ..Default::default()
        },
        ..Transcript::default()
    };
    let mut tool_loop = ToolLoop { waited_ms: 0, calls_left: episode.max_calls };
    let tape_key = &episode.tape_key;
    let mut told_malformed = false;
    let mut reflected_before_finishing = false;
    for turn in 0..agent.max_turns {
        let mut request = json!({"model": agent.model, "messages": messages, "tools": tools});
        if let (Value::Object(request), Value::Object(sampling)) = (&mut request, &sampling) {
            request.extend(sampling.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        match agent.tool_choice {
            ToolChoice::Omit => {}
            ToolChoice::Auto => request["tool_choice"] = json!("auto"),
            ToolChoice::Required => request["tool_choice"] = json!("required"),
        }
        if let Some(parallel) = agent.parallel_tool_calls {
            request["parallel_tool_calls"] = json!(parallel);
        }
        let reply = match runtime.block_on(agent.endpoint.complete(&format!("{tape_key}/turn-{turn:03}"), &request)) {
            Ok(reply) => reply,
            // The conversation outgrew the model: the episode ends as it stands.
            Err(EndpointError::ContextExceeded { .. }) => {
                played.conversation.context_exhausted = true;
                break;
            }
            Err(error) => return Err(error),
        };
        played.conversation.model_turns += 1;
        played.input_tokens += reply.pointer("/usage/prompt_tokens").and_then(Value::as_u64).unwrap_or(0);
        played.output_tokens += reply.pointer("/usage/completion_tokens").and_then(Value::as_u64).unwrap_or(0);
        let message = reply.pointer("/choices/0/message").cloned().unwrap_or(Value::Null);
        messages.push(assistant_message(&message));
        match parse::parse_reply(&message, &names) {
            ModelReply::Calls(form, calls) => {
                told_malformed = false;
                match form {
                    CallForm::Native => played.conversation.native_calls += calls.len() as u32,
                    _ => played.conversation.text_form_calls += calls.len() as u32,
                }
                let mut observations = Vec::with_capacity(calls.len());
                let mut failed = None;
                let mut finished = false;
                for call in &calls {
                    if call.name == FINISH_TOOL {
                        // The answer in finish's arguments, or in the text the model wrote beside the call.
                        let text = message.get("content").and_then(Value::as_str).unwrap_or_default();
                        let answer = finish_answer(&call.arguments).or_else(|| Some(text.trim()).filter(|t| !t.is_empty()));
                        give_answer(env, &mut played.conversation, answer, "finish");
                        if let Some(typed) = typed_answer(&call.arguments, episode.answer_schema.as_ref()) {
                            env.answer_typed(&typed);
                            played.conversation.answer_from = "finish_typed".to_owned();
                        }
                        finished = true;
                        observations.push((call, "{\"finished\": true}".to_owned()));
                        break;
                    }
                    let Some(observation) = tool_loop.call(env, call) else {
                        finished = true;
                        break;
                    };
                    if reflexion::is_failure(&observation) {
                        failed.get_or_insert(call.name.clone());
                    }
                    observations.push((call, observation));
                }
                answer_calls(&mut messages, form, &observations);
                if finished {
                    break;
                }
                if let (Architecture::Reflexion, Some(tool)) = (agent.architecture, failed) {
                    messages.push(json!({"role": "user", "content": reflexion::after_failure(&tool)}));
                }
            }
            ModelReply::Final(text) => {
                // Reflexion's reflection may follow: a later final answer replaces this one.
                give_answer(env, &mut played.conversation, Some(text.as_str()).filter(|t| !t.is_empty()), "text");
                if agent.architecture == Architecture::Reflexion && !reflected_before_finishing {
                    reflected_before_finishing = true;
                    messages.push(json!({"role": "user", "content": reflexion::before_finishing()}));
                    continue;
                }
                break;
            }
            ModelReply::Malformed(reason) => {
                played.conversation.protocol_errors += 1;
                if told_malformed {
                    // Told once already: the model cannot produce a readable call.
                    break;
                }
                told_malformed = true;
                messages.push(json!({"role": "user", "content": format!(
                    "Your last reply looks like a tool call, but it could not be read: {reason}. \
                     Call a tool with the tool-calling interface, or write exactly one JSON object \
                     {{\"name\": \"<tool>\", \"arguments\": {{...}}}}; if the task is complete, reply with a short summary."
                )}));
            }
        }
    }
    played.conversation.messages_json = messages.iter().map(Value::to_string).collect();
    Ok(played)
}

/// Gives the model's final answer, if it gave one, to the episode, and
/// records where it was read (`text` or `finish`).
fn give_answer(env: &mut dyn Env, conversation: &mut pb::Conversation, answer: Option<&str>, from: &str) {
    if let Some(answer) = answer {
        env.answer(answer);
        conversation.answer_from = from.to_owned();
    }
}

/// The answer in `finish`'s arguments however the model named it: the
/// `answer` parameter, else another string it wrote (`summary`, `result`,
/// …; the first non-empty by name), else nothing.
fn finish_answer(arguments: &Value) -> Option<&str> {
    let object = arguments.as_object()?;
    object.get("answer").and_then(non_empty).or_else(|| object.values().find_map(non_empty))
}

/// The typed answer in `finish`'s arguments: the fields of the task's
/// answer schema the model filled (none when it filled none).
fn typed_answer(arguments: &Value, answer_schema: Option<&Value>) -> Option<Value> {
    let (arguments, properties) = (arguments.as_object()?, answer_schema?["properties"].as_object()?);
    let fields: serde_json::Map<String, Value> =
        properties.keys().filter_map(|name| Some((name.clone(), arguments.get(name).filter(|v| !v.is_null())?.clone()))).collect();
    (!fields.is_empty()).then_some(Value::Object(fields))
}

/// A JSON string's text, trimmed, when it is not empty.
fn non_empty(value: &Value) -> Option<&str> {
    value.as_str().map(str::trim).filter(|text| !text.is_empty())
}

/// The assistant message to send back: its role, text and native calls only
/// (servers refuse fields of their own, such as reasoning, in requests).
fn assistant_message(message: &Value) -> Value {
    let mut out = json!({"role": "assistant", "content": message.get("content").cloned().unwrap_or(Value::Null)});
    if let Some(calls) = message.get("tool_calls").filter(|c| c.as_array().is_some_and(|c| !c.is_empty())) {
        out["tool_calls"] = calls.clone();
    }
    out
}

/// The results of a turn's calls, in the form the model made them: a `tool`
/// message per native call, one user message of observations otherwise.
fn answer_calls(messages: &mut Vec<Value>, form: CallForm, observations: &[(&ParsedCall, String)]) {
    if observations.is_empty() {
        return;
    }
    if form == CallForm::Native {
        for (call, observation) in observations {
            messages.push(json!({"role": "tool", "tool_call_id": call.id.clone().unwrap_or_default(), "content": observation}));
        }
    } else {
        let text = observations
            .iter()
            .map(|(call, observation)| format!("Observation ({}): {observation}", call.name))
            .collect::<Vec<_>>()
            .join("\n");
        messages.push(json!({"role": "user", "content": text}));
    }
}

/// The tool side of the loop: makes calls on the episode and declares the
/// delay a failed call advised with the next one.
struct ToolLoop {
    /// The virtual milliseconds to declare with the next call: the delay the
    /// previous failure advised (waited for real at the episode's time scale).
    waited_ms: u64,
    calls_left: u32,
}

impl ToolLoop {
    /// Makes one call and returns its observation for the model; `None` when
    /// the episode takes no more calls.
    fn call(&mut self, env: &mut dyn Env, call: &ParsedCall) -> Option<String> {
        if self.calls_left == 0 {
            return None;
        }
        self.calls_left -= 1;
        let request = Request { idempotency_key: None, waited_ms: std::mem::take(&mut self.waited_ms), user_answer: None };
        let observation = match env.call(&call.name, &call.arguments.to_string(), &request) {
            Observation::Result(text) => {
                self.waited_ms = in_band_retry_ms(&text).unwrap_or(0);
                text
            }
            Observation::DomainError { code, message } => json!({"error": {"code": code, "message": message}}).to_string(),
            Observation::Invalid { message, .. } => json!({"error": {"code": "INVALID_ARGUMENT", "message": message}}).to_string(),
            Observation::Failure(fault) => {
                self.waited_ms = fault.retry_after_ms.and_then(|ms| u64::try_from(ms).ok()).unwrap_or(0);
                let code = status_name(fault.code);
                json!({"error": {"code": code, "message": fault.message, "retry_after_ms": fault.retry_after_ms}}).to_string()
            }
            Observation::Closed(_) => return None,
        };
        Some(observation)
    }
}

/// A fault's status code as the loop has always named it to the model
/// (tonic's spelling, e.g. `DeadlineExceeded`).
fn status_name(code: FailureCode) -> &'static str {
    match code {
        FailureCode::DeadlineExceeded => "DeadlineExceeded",
        FailureCode::Unavailable => "Unavailable",
        FailureCode::ResourceExhausted => "ResourceExhausted",
        FailureCode::PermissionDenied => "PermissionDenied",
    }
}

/// The virtual delay an in-band fault advises.
fn in_band_retry_ms(text: &str) -> Option<u64> {
    let value: Value = serde_json::from_str(text).ok()?;
    let error = value.get("error")?;
    error.get("retry_after_virtual_ms").and_then(Value::as_u64).or_else(|| error.get("retry_after_ms").and_then(Value::as_u64))
}
