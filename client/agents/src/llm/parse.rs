//! Reading a model's reply as tool calls, whatever way the model wrote them:
//! the API's native `tool_calls`, or calls written as text — a JSON object
//! `{"name": …, "arguments": {…}}` fenced in a code block or bare in the
//! text, or ReAct's `Action: tool` / `Action Input: {…}` lines. A reply that
//! was meant as a call but cannot be read is a protocol error, told apart
//! from a final answer, so that a mismatch between the model and the
//! endpoint is never scored as "the agent chose to stop".

use serde_json::Value;

/// How a call reached the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallForm {
    /// The API's `tool_calls`.
    Native,
    /// A JSON object in a fenced code block.
    FencedJson,
    /// A JSON object in the text, unfenced.
    BareJson,
    /// ReAct's `Action:` and `Action Input:` lines.
    ReactAction,
}

/// One tool call read from a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    /// The native call's id (to answer it with a `tool` message); `None` for a text-form call.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments as a JSON object.
    pub arguments: Value,
}

/// What a reply says.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelReply {
    /// One or more tool calls, all in one form.
    Calls(CallForm, Vec<ParsedCall>),
    /// No call: the model considers the task done (its text, possibly empty).
    Final(String),
    /// A reply meant as a call that cannot be read, and why (told back to the model).
    Malformed(String),
}

/// Reads an assistant message (`choices[0].message`) against the names of
/// the episode's tools.
pub fn parse_reply(message: &Value, tools: &[&str]) -> ModelReply {
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty()) {
        return native_calls(calls, tools);
    }
    let text = message.get("content").and_then(Value::as_str).unwrap_or_default();
    parse_text(text, tools)
}

fn native_calls(calls: &[Value], tools: &[&str]) -> ModelReply {
    let mut parsed = Vec::with_capacity(calls.len());
    for call in calls {
        let function = call.get("function").unwrap_or(call);
        let Some(name) = function.get("name").and_then(Value::as_str) else {
            return ModelReply::Malformed("a tool call has no function name".into());
        };
        let arguments = match function.get("arguments") {
            // The API sends arguments as JSON text; some servers send the object.
            Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Default::default()),
            Some(Value::String(text)) => match lenient_object(text) {
                Some(value) => value,
                None => return ModelReply::Malformed(format!("the arguments of {name} are not a JSON object: {}", clip(text))),
            },
            Some(value @ Value::Object(_)) => value.clone(),
            None | Some(Value::Null) => Value::Object(Default::default()),
            Some(other) => {
                return ModelReply::Malformed(format!("the arguments of {name} are not a JSON object: {}", clip(&other.to_string())));
            }
        };
        if let Some(error) = unknown_tool(name, tools) {
            return ModelReply::Malformed(error);
        }
        let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
        parsed.push(ParsedCall { id, name: name.to_owned(), arguments });
    }
    ModelReply::Calls(CallForm::Native, parsed)
}

/// Reads calls written as text.
pub fn parse_text(text: &str, tools: &[&str]) -> ModelReply {
    if let Some(reply) = react_action(text, tools) {
        return reply;
    }
    let fenced = fenced_blocks(text);
    let (form, candidates) = if fenced.is_empty() { (CallForm::BareJson, json_objects(text)) } else { (CallForm::FencedJson, fenced) };
    let mut calls = Vec::new();
    let mut meant = false;
    'candidates: for candidate in &candidates {
        let Some(value) = lenient_object(candidate) else {
            // A fenced block is meant as something; an unbalanced `{` in prose is not.
            meant |= form == CallForm::FencedJson && looks_like_call(candidate);
            continue;
        };
        for object in call_objects(&value) {
            if made_up_result(object) {
                // The model imagined the call's result: what follows is its
                // imagined continuation, not calls.
                meant = true;
                break 'candidates;
            }
            match call_of(object) {
                Some((name, arguments)) => {
                    if let Some(error) = unknown_tool(&name, tools) {
                        return ModelReply::Malformed(error);
                    }
                    calls.push(ParsedCall { id: None, name, arguments });
                }
                None => meant |= looks_like_call(candidate),
            }
        }
    }
    if !calls.is_empty() {
        return ModelReply::Calls(form, calls);
    }
    if meant || (!candidates.is_empty() && looks_like_call(text)) {
        return ModelReply::Malformed("the reply looks like a tool call but is not a JSON object with \"name\" and \"arguments\"".into());
    }
    ModelReply::Final(text.trim().to_owned())
}

/// Keys of a call's result, which a model sometimes writes itself after its
/// call (with the call's `name` and `arguments` beside them).
const RESULT_KEYS: [&str; 7] = ["result", "results", "output", "observation", "response", "return", "content"];

/// Whether an object is a call's result the model wrote itself.
fn made_up_result(object: &Value) -> bool {
    RESULT_KEYS.iter().any(|k| object.get(*k).is_some())
        || object.get("role").and_then(Value::as_str).is_some_and(|role| matches!(role, "tool" | "function" | "ipython"))
}

/// The objects a parsed value holds as calls: itself, or each element of an
/// array, or the elements of a `tool_calls` list.
fn call_objects(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(items) => items.iter().filter(|v| v.is_object()).collect(),
        Value::Object(map) => match map.get("tool_calls").and_then(Value::as_array) {
            Some(items) => items.iter().collect(),
            None => vec![value],
        },
        _ => Vec::new(),
    }
}

/// A call's name and arguments, under the keys models use for them.
fn call_of(object: &Value) -> Option<(String, Value)> {
    let object = object.get("function").filter(|f| f.is_object()).unwrap_or(object);
    let name = ["name", "tool", "tool_name", "function", "action"].iter().find_map(|k| object.get(*k)?.as_str())?;
    let arguments = ["arguments", "parameters", "args", "input", "action_input"].iter().find_map(|k| object.get(*k));
    let arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(text)) => lenient_object(text)?,
        Some(value @ Value::Object(_)) => value.clone(),
        Some(_) => return None,
    };
    Some((name.to_owned(), arguments))
}

/// ReAct's `Action: name` then `Action Input: {…}` (the input may run over
/// several lines or sit in a fence). `None` when the text has no `Action:` line.
fn react_action(text: &str, tools: &[&str]) -> Option<ModelReply> {
    let start = find_line_prefix(text, "action:")?;
    let rest = &text[start + "action:".len()..];
    let (name_line, after) = rest.split_once('\n').unwrap_or((rest, ""));
    let name = name_line.trim().trim_matches(|c| c == '`' || c == '"' || c == '\'').trim();
    if name.is_empty() {
        return Some(ModelReply::Malformed("an `Action:` line names no tool".into()));
    }
    if let Some(error) = unknown_tool(name, tools) {
        return Some(ModelReply::Malformed(error));
    }
    let arguments = match find_line_prefix(after, "action input:") {
        None => Value::Object(Default::default()),
        Some(at) => {
            let input = &after[at + "action input:".len()..];
            // Up to the next ReAct keyword, if the model went on.
            let end = ["\nobservation:", "\nthought:", "\naction:"]
                .iter()
                .filter_map(|k| input.to_ascii_lowercase().find(k))
                .min()
                .unwrap_or(input.len());
            let input = &input[..end];
            let candidate = fenced_blocks(input).into_iter().next().or_else(|| json_objects(input).into_iter().next());
            match candidate.as_deref().and_then(lenient_object) {
                Some(value) => value,
                None if input.trim().is_empty() || input.trim() == "{}" => Value::Object(Default::default()),
                None => {
                    return Some(ModelReply::Malformed(format!(
                        "the `Action Input:` of {name} is not a JSON object: {}",
                        clip(input.trim())
                    )));
                }
            }
        }
    };
    Some(ModelReply::Calls(CallForm::ReactAction, vec![ParsedCall { id: None, name: name.to_owned(), arguments }]))
}

/// The byte offset just before `prefix` at the start of a line (ASCII case-insensitive).
fn find_line_prefix(text: &str, prefix: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.len() >= prefix.len() && trimmed.is_char_boundary(prefix.len()) && trimmed[..prefix.len()].eq_ignore_ascii_case(prefix) {
            return Some(offset + indent);
        }
        offset += line.len();
    }
    None
}

/// The bodies of the text's fenced code blocks (```json … ``` or ``` … ```).
fn fenced_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        // The info string (`json`, `tool_call`, …) ends the opening line.
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let info = after[..body_start].trim();
        let body = &after[body_start..];
        let (body, next) = match body.find("```") {
            Some(close) => (&body[..close], &body[close + 3..]),
            None => (body, ""),
        };
        // ```{"name": …}``` on one line: the "info string" is the object.
        let body = if info.starts_with('{') && body.trim().is_empty() { info } else { body };
        if !body.trim().is_empty() {
            blocks.push(body.trim().to_owned());
        }
        rest = next;
    }
    blocks
}

/// The top-level `{…}` spans of a text, balanced outside JSON strings.
fn json_objects(text: &str) -> Vec<String> {
    let mut objects = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        let (mut depth, mut in_string, mut escaped, mut end) = (0usize, false, false, None);
        for (j, &b) in bytes.iter().enumerate().skip(i) {
            match (in_string, escaped, b) {
                (true, true, _) => escaped = false,
                (true, false, b'\\') => escaped = true,
                (true, false, b'"') => in_string = false,
                (true, false, _) => {}
                (false, _, b'"') => in_string = true,
                (false, _, b'{') => depth += 1,
                (false, _, b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        match end {
            Some(j) => {
                objects.push(text[i..=j].to_owned());
                i = j + 1;
            }
            None => {
                // Unbalanced to the end: keep it, so that a cut-off call is seen as meant.
                objects.push(text[i..].to_owned());
                break;
            }
        }
    }
    objects
}

/// A JSON value from text, forgiving what models commonly get wrong:
/// surrounding prose and a trailing comma before a closing bracket.
fn lenient_object(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(value @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(text) {
        return Some(value);
    }
    let start = text.find(['{', '['])?;
    let end = text.rfind(['}', ']'])?;
    let inner = text.get(start..=end)?;
    if let Ok(value @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(inner) {
        return Some(value);
    }
    let without_trailing_commas = strip_trailing_commas(inner);
    serde_json::from_str::<Value>(&without_trailing_commas).ok().filter(|v| v.is_object() || v.is_array())
}

/// Removes a comma followed (after whitespace) by `}` or `]`, outside strings.
fn strip_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' && chars[i + 1..].iter().find(|c| !c.is_whitespace()).is_some_and(|n| *n == '}' || *n == ']') {
            continue;
        }
        out.push(c);
    }
    out
}

/// Whether a text carries the marks of an intended call.
fn looks_like_call(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["\"name\"", "\"arguments\"", "\"tool\"", "\"parameters\"", "\"function\""].iter().any(|k| lower.contains(k))
}

fn unknown_tool(name: &str, tools: &[&str]) -> Option<String> {
    (!tools.contains(&name)).then(|| format!("there is no tool named '{}'; the tools are: {}", clip(name), tools.join(", ")))
}

/// A text cut to a readable length for an error message.
fn clip(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOOLS: &[&str] = &["search_flights", "book_flight"];

    fn text(content: &str) -> ModelReply {
        parse_reply(&json!({"role": "assistant", "content": content}), TOOLS)
    }

    fn one(form: CallForm, name: &str, arguments: Value) -> ModelReply {
        ModelReply::Calls(form, vec![ParsedCall { id: None, name: name.into(), arguments }])
    }

    /// The cases the Python worker's `llm_calls.py` checks too: both paths agree.
    #[test]
    fn the_shared_cases_with_the_python_worker() {
        let shared: Value = serde_json::from_str(include_str!("../../../../examples/python/llm_call_cases.json")).unwrap();
        let tools: Vec<&str> = shared["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        for case in shared["cases"].as_array().unwrap() {
            let got = parse_reply(&case["message"], &tools);
            let expect = &case["expect"];
            let ok = match (&got, expect.get("calls").and_then(Value::as_str)) {
                (ModelReply::Calls(form, calls), Some(name)) => {
                    let form_name = match form {
                        CallForm::Native => "native",
                        CallForm::FencedJson => "fenced_json",
                        CallForm::BareJson => "bare_json",
                        CallForm::ReactAction => "react_action",
                    };
                    let list: Vec<Value> = calls.iter().map(|c| json!([c.name, c.arguments])).collect();
                    form_name == name && Value::Array(list) == expect["list"]
                }
                (ModelReply::Final(text), None) => expect.get("final").and_then(Value::as_str) == Some(text.as_str()),
                (ModelReply::Malformed(_), None) => expect.get("malformed").is_some(),
                _ => false,
            };
            assert!(ok, "{} gave {got:?}, expected {expect}", case["message"]);
        }
    }

    #[test]
    fn native_tool_calls_with_text_or_object_arguments() {
        let message = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search_flights", "arguments": "{\"origin\": \"SFO\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "book_flight", "arguments": {"flight_id": "F1"}}}
        ]});
        let ModelReply::Calls(CallForm::Native, calls) = parse_reply(&message, TOOLS) else { panic!("not native calls") };
        assert_eq!(calls[0], ParsedCall { id: Some("c1".into()), name: "search_flights".into(), arguments: json!({"origin": "SFO"}) });
        assert_eq!(calls[1].arguments, json!({"flight_id": "F1"}));
    }

    #[test]
    fn fenced_json_as_llama_cpp_sends_it() {
        let reply = text("I'll search first.\n```json\n{\"name\": \"search_flights\", \"arguments\": {\"origin\": \"SFO\",}}\n```");
        assert_eq!(reply, one(CallForm::FencedJson, "search_flights", json!({"origin": "SFO"})));
        let reply = text("```\n{\"tool\": \"book_flight\", \"parameters\": \"{\\\"flight_id\\\": \\\"F1\\\"}\"}\n```");
        assert_eq!(reply, one(CallForm::FencedJson, "book_flight", json!({"flight_id": "F1"})));
    }

    #[test]
    fn bare_json_and_several_calls() {
        let reply = text("{\"name\": \"search_flights\", \"arguments\": {\"note\": \"a } in a string\"}}");
        assert_eq!(reply, one(CallForm::BareJson, "search_flights", json!({"note": "a } in a string"})));
        let ModelReply::Calls(CallForm::BareJson, calls) = text(
            "[{\"name\": \"search_flights\", \"arguments\": {}}, {\"name\": \"book_flight\", \"arguments\": {\"flight_id\": \"F2\"}}]",
        ) else {
            panic!("not two calls")
        };
        assert_eq!(calls.len(), 2);
    }

    #[test]
    fn react_action_lines() {
        let reply = text("Thought: I need flights.\nAction: search_flights\nAction Input: {\"origin\": \"SFO\"}\nObservation:");
        assert_eq!(reply, one(CallForm::ReactAction, "search_flights", json!({"origin": "SFO"})));
        let reply = text("action: `book_flight`\naction input:\n```json\n{\"flight_id\": \"F1\"}\n```");
        assert_eq!(reply, one(CallForm::ReactAction, "book_flight", json!({"flight_id": "F1"})));
    }

    #[test]
    fn final_answers_are_not_calls() {
        assert_eq!(text("All done: the flight is booked."), ModelReply::Final("All done: the flight is booked.".into()));
        assert_eq!(text(""), ModelReply::Final(String::new()));
        assert_eq!(text("The set {a, b} is small."), ModelReply::Final("The set {a, b} is small.".into()));
    }

    #[test]
    fn meant_calls_that_cannot_be_read_are_protocol_errors() {
        for garbage in [
            "```json\n{\"name\": \"search_flights\", \"arguments\": {\"origin\": \n```",
            "{\"name\": \"search_flights\", \"arguments\": {\"origin\": ",
            "Action: search_flights\nAction Input: origin=SFO",
            "Action: fly_me_there\nAction Input: {}",
            "```json\n{\"name\": \"cancel_everything\", \"arguments\": {}}\n```",
        ] {
            assert!(matches!(text(garbage), ModelReply::Malformed(_)), "{garbage:?} gave {:?}", text(garbage));
        }
        let bad_native = json!({"tool_calls": [{"id": "c", "function": {"name": "book_flight", "arguments": "{oops"}}]});
        assert!(matches!(parse_reply(&bad_native, TOOLS), ModelReply::Malformed(m) if m.contains("book_flight")));
    }
}
