//! Schema drift of any JSON result, by generic rules: what a tool's new
//! release might do to its output. Keys are renamed (snake_case to
//! camelCase), the top-level object is nested under `"data"`, and ISO dates
//! are written the other way round (`2026-01-05` as `01/05/2026`, a
//! date-time's date part likewise). Every other value is kept as it was.
//! The tool list drifts by the same key rule (`--drift-tools`): parameters
//! offered renamed, and calls' arguments renamed back for the server.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// A JSON value in the drifted shape.
pub fn drift(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut data = Map::new();
            data.insert("data".to_owned(), reshape(value));
            // An empty object stays empty: there is nothing to nest.
            if map.is_empty() { Value::Object(Map::new()) } else { Value::Object(data) }
        }
        other => reshape(other),
    }
}

fn reshape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (camel(k), reshape(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(reshape).collect()),
        Value::String(text) => Value::String(redate(text).unwrap_or_else(|| text.clone())),
        other => other.clone(),
    }
}

/// `depart_date` → `departDate`; a key without underscores is kept.
pub fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for (i, c) in key.chars().enumerate() {
        if c == '_' && i > 0 {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if upper {
        out.push('_');
    }
    out
}

/// An ISO date `YYYY-MM-DD` (alone or starting a date-time) as `MM/DD/YYYY`.
pub fn redate(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let iso = b.len() >= 10 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10);
    if !iso || (b.len() > 10 && b[10] != b'T' && b[10] != b' ') {
        return None;
    }
    let rest = text[10..].replacen('T', " ", 1);
    Some(format!("{}/{}/{}{rest}", &text[5..7], &text[8..10], &text[0..4]))
}

/// An MCP tool result in the drifted shape: each text content that is JSON,
/// and the structured content, drifted.
pub(super) fn shaped(result: &Value) -> Value {
    let mut result = result.clone();
    if let Some(items) = result.get_mut("content").and_then(Value::as_array_mut) {
        for item in items {
            if item["type"] == "text"
                && let Some(Ok(value)) = item["text"].as_str().map(serde_json::from_str::<Value>)
            {
                item["text"] = Value::String(drift(&value).to_string());
            }
        }
    }
    if let Some(structured) = result.get_mut("structuredContent") {
        *structured = drift(structured);
    }
    result
}

/// A `tools/call` line with its drifted argument names renamed back to the
/// upstream's; `None` when it names none of them (the line goes as it came).
pub(super) fn undrifted_call(line: &str, names: &Renamed) -> Option<String> {
    let mut message: Value = serde_json::from_str(line).ok()?;
    let arguments = message.get_mut("params")?.get_mut("arguments")?.as_object_mut()?;
    if !arguments.keys().any(|k| names.contains_key(k)) {
        return None;
    }
    let renamed = std::mem::take(arguments).into_iter().map(|(k, v)| (names.get(&k).cloned().unwrap_or(k), v)).collect();
    *arguments = renamed;
    Some(message.to_string())
}

/// A tool's drifted parameter names, to the upstream's.
pub(super) type Renamed = HashMap<String, String>;

/// A `tools/list` reply with each tool's parameters renamed by the drift
/// rules (top-level `inputSchema` properties and `required`), and the names
/// to map back, per tool; `None` when nothing is renamed.
pub(super) fn drifted_tools(message: &Value) -> Option<(Value, Vec<(String, Renamed)>)> {
    let mut message = message.clone();
    let tools = message.get_mut("result")?.get_mut("tools")?.as_array_mut()?;
    let mut maps = Vec::new();
    for tool in tools.iter_mut() {
        let Some(name) = tool.get("name").and_then(Value::as_str).map(str::to_owned) else { continue };
        let Some(schema) = tool.get_mut("inputSchema").and_then(Value::as_object_mut) else { continue };
        let mut names = HashMap::new();
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            let old = std::mem::take(properties);
            for (key, value) in old {
                let new = camel(&key);
                if new != key {
                    names.insert(new.clone(), key);
                }
                properties.insert(new, value);
            }
        }
        if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
            for entry in required.iter_mut() {
                if let Some(key) = entry.as_str() {
                    *entry = Value::String(camel(key));
                }
            }
        }
        if !names.is_empty() {
            maps.push((name, names));
        }
    }
    (!maps.is_empty()).then_some((message, maps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_renamed_and_nested_dates_rewritten_values_kept() {
        let v =
            json!({"flight_id": "AA-1", "depart_date": "2026-01-05", "legs": [{"arrive_at": "2026-01-05T10:00:00Z", "price_usd": 120}]});
        assert_eq!(
            drift(&v),
            json!({"data": {"flightId": "AA-1", "departDate": "01/05/2026", "legs": [{"arriveAt": "01/05/2026 10:00:00Z", "priceUsd": 120}]}})
        );
        assert_eq!(drift(&json!({})), json!({}));
        assert_eq!(drift(&json!([1, "x"])), json!([1, "x"]));
        assert_eq!(camel("_private"), "_private");
        assert_eq!(camel("trailing_"), "trailing_");
        assert_eq!(redate("2026-01-05x"), None);
        assert_eq!(redate("not a date"), None);
    }
}
