//! Tool descriptions and argument validation.
//!
//! A tool's parameters are declared once, as a list of [`Param`]s; the same
//! list yields the JSON Schema handed to agents and the validation applied to
//! every call, so the two cannot disagree. Validation checks the JSON shape
//! (object, required fields, types, no unknown fields); what the values mean
//! (a date that does not exist, an unknown flight) is a business rule, checked
//! by the tool and reported as a [`DomainError`].

use std::borrow::Cow;

use serde::Serialize;
use serde::de::DeserializeSeed;
use serde_json::{Map, Value, json};

mod args;

use args::{ParamsSeed, Parsed};

/// Most bytes of argument JSON a call may carry.
pub const MAX_ARGUMENTS_BYTES: usize = 64 * 1024;

/// The JSON type of a parameter.
#[derive(Debug, Clone, Copy)]
pub enum ParamType {
    /// A JSON string.
    String,
    /// A JSON string, one of the listed values (checked by the tool, so the
    /// agent gets a readable domain error).
    OneOf(&'static [&'static str]),
    /// A JSON number.
    Number,
    /// A JSON number with no fractional part.
    Integer,
    /// An array of strings.
    StringList,
    /// An array of objects, each with the given fields.
    ObjectList(&'static [Param]),
}

/// One parameter of a tool.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The argument's name.
    pub name: &'static str,
    /// Its JSON type.
    pub ty: ParamType,
    /// What it means, for the model.
    pub description: &'static str,
    /// Whether a call must carry it.
    pub required: bool,
}

impl Param {
    /// A parameter every call must carry.
    pub const fn required(name: &'static str, ty: ParamType, description: &'static str) -> Self {
        Self { name, ty, description, required: true }
    }

    /// A parameter a call may leave out (or send as `null`).
    pub const fn optional(name: &'static str, ty: ParamType, description: &'static str) -> Self {
        Self { name, ty, description, required: false }
    }
}

/// A tool an episode offers.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// The function name, e.g. `book_meeting`.
    pub name: &'static str,
    /// What the tool does, for the model.
    pub description: &'static str,
    /// Its parameters.
    pub params: &'static [Param],
    /// Whether a call can change the episode's state.
    pub mutates_state: bool,
}

impl ToolSpec {
    /// Returns the JSON Schema of the tool's arguments, in the shape LLM
    /// function-calling APIs accept.
    pub fn parameters_schema(&self) -> Value {
        object_schema(self.params)
    }

    /// Parses and validates a call's argument text. Empty text means `{}`.
    ///
    /// The text is read straight into [`Args`]: names the tool knows are
    /// matched against its parameters as they are read, so only values are
    /// allocated. Errors are the ones a `serde_json::Value` parse followed by
    /// validation gives: the same parser reads the same text the same way.
    pub fn parse_arguments(&self, text: &str) -> Result<Args, ArgError> {
        if text.len() > MAX_ARGUMENTS_BYTES {
            return Err(ArgError::new("", format!("arguments are larger than {MAX_ARGUMENTS_BYTES} bytes")));
        }
        self.read_arguments(text)
    }

    /// [`ToolSpec::parse_arguments`] without the size limit: for argument
    /// text the core wrote itself (a recorded call's canonical arguments).
    pub(crate) fn read_arguments(&self, text: &str) -> Result<Args, ArgError> {
        let parsed = if text.trim().is_empty() {
            Parsed::Object { entries: Vec::new(), first_unknown: None, duplicate: None }
        } else if let Some(entries) = args::read_flat(text, self.params) {
            // A flat object's canonical text is written as it is read, not serialized again.
            let mut args = self.validate(Parsed::Object { entries, first_unknown: None, duplicate: None })?;
            let canonical = args::flat_canonical(&args.entries);
            debug_assert_eq!(canonical, args.canonical(), "{text}");
            args.canonical = Some(canonical);
            return Ok(args);
        } else {
            let mut deserializer = serde_json::Deserializer::from_str(text);
            let parsed = ParamsSeed(self.params).deserialize(&mut deserializer).and_then(|parsed| deserializer.end().map(|()| parsed));
            parsed.map_err(|e| ArgError::new("", format!("arguments are not valid json: {e}")))?
        };
        self.validate(parsed)
    }

    /// The arguments of a call the core holds as JSON (a reference or a
    /// generated call), checked as [`ToolSpec::parse_arguments`] checks
    /// their text, without writing and reading it.
    pub fn arguments_of(&self, value: &Value) -> Result<Args, ArgError> {
        let parsed = ParamsSeed(self.params).deserialize(value);
        self.validate(parsed.map_err(|e| ArgError::new("", format!("arguments are not valid json: {e}")))?)
    }

    /// Checks parsed arguments against the parameters.
    fn validate(&self, parsed: Parsed) -> Result<Args, ArgError> {
        let Parsed::Object { mut entries, first_unknown, duplicate } = parsed else {
            return Err(ArgError::new("", "arguments must be a json object"));
        };
        if let Some(name) = duplicate {
            return Err(ArgError::new(name, "argument given twice"));
        }
        if let Some(key) = first_unknown {
            return Err(ArgError::new(key, "unknown argument"));
        }
        for param in self.params {
            let field = || param.name.to_owned();
            match entries.iter().find(|(name, _)| name == param.name).map(|(_, value)| value) {
                None | Some(Value::Null) if param.required => return Err(ArgError::new(field(), "missing required argument")),
                None | Some(Value::Null) => {}
                Some(value) => validate_value(param.ty, value, field)?,
            }
        }
        entries.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        Ok(Args { entries, canonical: None })
    }
}

fn object_schema(params: &[Param]) -> Value {
    let properties: Map<String, Value> = params.iter().map(|p| (p.name.to_owned(), param_schema(p))).collect();
    let required: Vec<&str> = params.iter().filter(|p| p.required).map(|p| p.name).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn param_schema(param: &Param) -> Value {
    let mut schema = match param.ty {
        ParamType::String => json!({"type": "string"}),
        ParamType::OneOf(values) => json!({"type": "string", "enum": values}),
        ParamType::Number => json!({"type": "number"}),
        ParamType::Integer => json!({"type": "integer"}),
        ParamType::StringList => json!({"type": "array", "items": {"type": "string"}}),
        ParamType::ObjectList(fields) => json!({"type": "array", "items": object_schema(fields)}),
    };
    schema["description"] = Value::from(param.description);
    schema
}

fn validate_object(params: &[Param], map: &Map<String, Value>, prefix: &str) -> Result<(), ArgError> {
    for key in map.keys() {
        if !params.iter().any(|p| p.name == key) {
            return Err(ArgError::new(format!("{prefix}{key}"), "unknown argument"));
        }
    }
    for param in params {
        // The field's full name is built only for an error (or a nested list).
        let field = || format!("{prefix}{}", param.name);
        match map.get(param.name) {
            None | Some(Value::Null) if param.required => return Err(ArgError::new(field(), "missing required argument")),
            None | Some(Value::Null) => {}
            Some(value) => validate_value(param.ty, value, field)?,
        }
    }
    Ok(())
}

fn validate_value(ty: ParamType, value: &Value, field: impl Fn() -> String) -> Result<(), ArgError> {
    let expected = match ty {
        ParamType::String | ParamType::OneOf(_) if value.is_string() => return Ok(()),
        ParamType::String | ParamType::OneOf(_) => "a string",
        ParamType::Number if value.is_number() => return Ok(()),
        ParamType::Number => "a number",
        ParamType::Integer if as_integer(value).is_some() => return Ok(()),
        ParamType::Integer => "an integer",
        ParamType::StringList => match value.as_array() {
            Some(items) => {
                return match items.iter().position(|v| !v.is_string()) {
                    None => Ok(()),
                    Some(i) => Err(ArgError::new(format!("{}[{i}]", field()), "must be a string")),
                };
            }
            None => "an array of strings",
        },
        ParamType::ObjectList(fields) => match value.as_array() {
            Some(items) => {
                let field = field();
                for (i, item) in items.iter().enumerate() {
                    let Some(map) = item.as_object() else {
                        return Err(ArgError::new(format!("{field}[{i}]"), "must be an object"));
                    };
                    validate_object(fields, map, &format!("{field}[{i}]."))?;
                }
                return Ok(());
            }
            None => "an array of objects",
        },
    };
    Err(ArgError::new(field(), format!("must be {expected}, got {}", json_type(value))))
}

/// A JSON integer, accepting `2.0` for 2 as argument validation does.
pub fn as_integer(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        let f = value.as_f64()?;
        // Models often write 2.0 for 2; anything with a fraction is not an integer.
        (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
    })
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A malformed call: the argument at fault and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}{message}", if field.is_empty() { String::new() } else { format!("{field}: ") })]
pub struct ArgError {
    /// The argument's name (with `[i].` paths inside lists); empty when the
    /// whole argument text is at fault.
    pub field: String,
    /// Why the call was rejected, lowercase.
    pub message: String,
}

impl ArgError {
    /// Creates an error about one field.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

/// Validated arguments of a call. The accessors never panic: validation has
/// already checked the types, and absent optional arguments read as `None`.
#[derive(Debug, Clone)]
pub struct Args {
    /// By name, sorted, each name once; `null` values kept (they are part
    /// of the canonical text).
    entries: Vec<(Cow<'static, str>, Value)>,
    /// The canonical text, when the reader wrote it on the way.
    canonical: Option<String>,
}

impl PartialEq for Args {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Args {
    /// Builds arguments from a JSON object without validation (for tests and
    /// in-process callers that already hold a `Value`).
    pub fn from_map(map: Map<String, Value>) -> Self {
        let mut entries: Vec<(Cow<'static, str>, Value)> = map.into_iter().map(|(name, value)| (Cow::Owned(name), value)).collect();
        entries.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        Self { entries, canonical: None }
    }

    /// The arguments as a JSON object.
    pub fn to_map(&self) -> Map<String, Value> {
        self.entries.iter().map(|(name, value)| (name.to_string(), value.clone())).collect()
    }

    /// The arguments as canonical JSON text (keys sorted, no whitespace), as
    /// [`crate::json::canonical`] writes their object.
    pub fn canonical(&self) -> String {
        if let Some(text) = &self.canonical {
            return text.clone();
        }
        crate::json::canonical_entries(self.entries.iter().map(|(name, value)| (name.as_ref(), value)))
    }

    /// An argument's value as sent, `null` included; `None` when absent.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, value)| value)
    }

    /// A string argument; empty when absent.
    pub fn str(&self, name: &str) -> &str {
        self.opt_str(name).unwrap_or_default()
    }

    /// An optional string argument; `None` when absent, null or blank.
    pub fn opt_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str).filter(|s| !s.trim().is_empty())
    }

    /// An optional number argument.
    pub fn opt_f64(&self, name: &str) -> Option<f64> {
        self.get(name).and_then(Value::as_f64)
    }

    /// An optional integer argument.
    pub fn opt_i64(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(as_integer)
    }

    /// A list argument; empty when absent.
    pub fn list(&self, name: &str) -> &[Value] {
        self.get(name).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
    }
}

/// Most characters of an argument value quoted back in an error message.
const MAX_ECHO_CHARS: usize = 60;

/// An argument value as quoted back in an error message: trimmed and cut
/// short, so a huge argument never comes back whole.
pub fn echo(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A broken business rule: an ordinary tool result the agent reads and acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct DomainError {
    /// A stable upper-case code, e.g. `SLOT_TAKEN`.
    pub code: &'static str,
    /// A readable explanation, addressed to the agent.
    pub message: String,
}

impl DomainError {
    /// Creates a domain error.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

/// What a tool returns: its result as canonical JSON text (keys sorted, no
/// whitespace, as [`crate::json::canonical`] writes it), or a broken rule.
pub type ToolResult = Result<String, DomainError>;

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const ITEM: &[Param] =
        &[Param::required("sku", ParamType::String, "product"), Param::required("quantity", ParamType::Integer, "how many")];
    const TOOL: ToolSpec = ToolSpec {
        name: "t",
        description: "d",
        mutates_state: false,
        params: &[
            Param::required("date", ParamType::String, "a date"),
            Param::optional("max", ParamType::Number, "a price"),
            Param::optional("items", ParamType::ObjectList(ITEM), "items"),
        ],
    };

    fn err(text: &str) -> ArgError {
        TOOL.parse_arguments(text).unwrap_err()
    }

    #[test]
    fn names_the_field_at_fault() {
        assert_eq!(err("{").field, "");
        assert_eq!(err("[]").message, "arguments must be a json object");
        assert_eq!(err("{}"), ArgError::new("date", "missing required argument"));
        assert_eq!(err(r#"{"date": null}"#).field, "date");
        assert_eq!(err(r#"{"date": 3}"#), ArgError::new("date", "must be a string, got a number"));
        assert_eq!(err(r#"{"date": "x", "when": 1}"#), ArgError::new("when", "unknown argument"));
        assert_eq!(err(r#"{"date": "x", "max": "9"}"#).field, "max");
        assert_eq!(
            err(r#"{"date": "x", "items": [{"sku": "a", "quantity": 1.5}]}"#),
            ArgError::new("items[0].quantity", "must be an integer, got a number")
        );
    }

    /// What parsing was before arguments were read straight into `Args`: a
    /// `Value` parse, then validation of the map.
    fn through_a_map(spec: &ToolSpec, text: &str) -> Result<String, ArgError> {
        let value: Value = if text.trim().is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_str(text).map_err(|e| ArgError::new("", format!("arguments are not valid json: {e}")))?
        };
        let Value::Object(map) = value else {
            return Err(ArgError::new("", "arguments must be a json object"));
        };
        validate_object(spec.params, &map, "")?;
        Ok(crate::json::canonical(&Value::Object(map)))
    }

    #[test]
    fn reads_arguments_as_a_map_would() {
        let texts = [
            "",
            "  ",
            "{}",
            r#"{"date": "2026-01-01"}"#,
            r#"{"max": 3, "date": "x", "items": []}"#,
            r#"{"d\u0061te": "escaped name"}"#,
            r#"{"date": "x", "zeta": 1, "alpha": 2, "mid": 3}"#,
            r#"{"zeta": 1, "date": 5}"#,
            r#"{"unknown": 1e400, "date": "x"}"#,
            r#"{"date": "x", "max": 1e400}"#,
            r#"{"date": "x", "max": null, "items": null}"#,
            r#"{"date": "x", "items": [{"sku": "a", "quantity": 1}, {"sku": "b"}]}"#,
            r#"{"date": "x", "items": [{"sku": "a", "quantity": 1, "extra": true}]}"#,
            r#"{"date": "x", "items": [{"sku": "a", "quantity": 1.0}], "max": 19.99}"#,
            r#"{"date": "x"} trailing"#,
            r#"{"date": "x",}"#,
            r#"{"date" "x"}"#,
            r#"{date: "x"}"#,
            r#"{"date": "x""#,
            r#"{"date": [1, 2,]}"#,
            "[1, 2]",
            "[1, 2,]",
            r#""text""#,
            "42",
            "true",
            "null",
            "1e400",
            "{\"date\": \"\u{1}\"}",
            r#"{"date": "\ud800"}"#,
        ];
        for text in texts {
            let direct = TOOL.parse_arguments(text).map(|args| args.canonical());
            assert_eq!(direct, through_a_map(&TOOL, text), "{text}");
        }
        // Where a map keeps the last value silently, a key given twice is refused.
        for text in [r#"{"date": "a", "date": "b"}"#, r#"{"date": null, "date": "b"}"#, r#"{"d\u0061te": "b", "date": null}"#] {
            let error = TOOL.parse_arguments(text).unwrap_err();
            assert_eq!((error.field.as_str(), error.message.as_str()), ("date", "argument given twice"), "{text}");
        }
        let nested = TOOL.parse_arguments(r#"{"date": "x", "items": [{"sku": "a", "sku": "b", "quantity": 1}]}"#).unwrap_err();
        assert!(nested.message.contains("given twice"), "{nested:?}");
    }

    /// The reader without its flat fast path: serde_json all the way.
    fn through_serde(text: &str) -> Result<String, ArgError> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let parsed = ParamsSeed(TOOL.params).deserialize(&mut deserializer).and_then(|parsed| deserializer.end().map(|()| parsed));
        TOOL.validate(parsed.map_err(|e| ArgError::new("", format!("arguments are not valid json: {e}")))?).map(|args| args.canonical())
    }

    #[test]
    fn the_flat_reader_reads_as_serde_json_does() {
        use rand::{RngExt, SeedableRng};
        // Flat objects the fast reader takes, and near misses it must leave
        // to serde_json: each text must read as serde_json reads it.
        let keys = ["\"date\"", "\"max\"", "\"items\"", "\"other\"", "\"d\\u0061te\"", "date"];
        let values = [
            "\"x\"",
            "\"2026-01-01\"",
            "\"a\\\"b\"",
            "\"\"",
            "\"é €\"",
            "\"\u{1}\"",
            "0",
            "-0",
            "7",
            "-12",
            "007",
            "-",
            "1.5",
            "1e3",
            "2E1",
            "123456789012345678",
            "-123456789012345678",
            "1234567890123456789",
            "18446744073709551616",
            "true",
            "false",
            "null",
            "tru",
            "nul",
            "[]",
            "{}",
            "[{\"sku\": \"a\", \"quantity\": 1}]",
        ];
        let spaces = ["", " ", "\n\t ", "\r"];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(27);
        let mut pick = |items: &[&'static str]| items[rng.random_range(0..items.len())];
        let (mut flat, mut total) = (0, 0);
        for _ in 0..20_000 {
            let mut text = format!("{}{{", pick(&spaces));
            let n = pick(&["0", "1", "2", "3", "4"]).parse::<usize>().unwrap();
            for i in 0..n {
                let comma = if i + 1 < n { pick(&[",", ",", ",", ",", ";", ""]) } else { pick(&["", "", "", "", "", ","]) };
                let colon = pick(&[":", ":", ":", ":", ":", ""]);
                text += &format!(
                    "{}{}{}{colon}{}{}{}{comma}",
                    pick(&spaces),
                    pick(&keys),
                    pick(&spaces),
                    pick(&spaces),
                    pick(&values),
                    pick(&spaces)
                );
            }
            text += &format!("{}{}{}", pick(&spaces), pick(&["}", "}", "}", "}", "", "} x", "}}"]), pick(&spaces));
            total += 1;
            flat += usize::from(args::read_flat(&text, TOOL.params).is_some());
            let direct = TOOL.parse_arguments(&text).map(|args| args.canonical());
            assert_eq!(direct, through_serde(&text), "{text}");
        }
        // Both paths are exercised.
        assert!(flat > total / 20 && flat < total / 2, "{flat} of {total} texts read flat");
    }

    #[test]
    fn accepts_valid_arguments() {
        let args = TOOL.parse_arguments(r#"{"date": "2026-01-01", "max": null, "items": [{"sku": "a", "quantity": 2.0}]}"#).unwrap();
        assert_eq!(args.str("date"), "2026-01-01");
        assert_eq!(args.opt_f64("max"), None);
        assert_eq!(args.list("items")[0]["quantity"], json!(2.0));
    }

    #[test]
    fn schema_lists_required_fields_and_forbids_others() {
        let schema = TOOL.parameters_schema();
        assert_eq!(schema["required"], json!(["date"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["properties"]["items"]["items"]["required"], json!(["sku", "quantity"]));
    }
}
