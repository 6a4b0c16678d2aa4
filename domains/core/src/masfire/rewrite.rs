//! Rule-based, deterministic equivalents of MAS-FIRE's mutations.
//!
//! The paper hands semantic mutations to an LLM injector ("replacing
//! verified facts with plausible but factually incorrect info", "altering
//! arguments to introduce domain-specific mistakes"). Here each is a rule
//! over the JSON the tools speak, so it is exact and repeatable: a price is
//! raised by a quarter, a date moves a day, a time an hour, an id is swapped
//! with a sibling record's, a numbered id moves to the next number, a record
//! is dropped. The value chosen and the variant come from one draw each.

use serde_json::{Map, Value};

use crate::{
    date::{Date, format_time, parse_time},
    tool::ToolSpec,
};

/// Keys whose numbers are amounts (a hallucinated amount is off by a quarter).
const AMOUNT_KEYS: [&str; 9] = ["price", "fare", "amount", "total", "cost", "balance", "refund", "subtotal", "discount"];

/// A plausible wrong value for `value` at key `key`, or `None` when the rule knows none.
pub fn plausible_wrong(key: &str, value: &Value) -> Option<Value> {
    match value {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(Value::from(if AMOUNT_KEYS.iter().any(|k| key.contains(k)) { i + (i / 4).max(1) } else { i + 1 }))
            } else {
                let f = n.as_f64()?;
                let wrong = ((f * 1.25) * 100.0).round() / 100.0;
                (wrong != f).then(|| Value::from(wrong))
            }
        }
        Value::String(s) => {
            if let Some(date) = Date::parse(s).filter(|_| s.len() == 10) {
                return Some(Value::from(date.add_days(1).to_string()));
            }
            if s.len() == 5
                && let Some(minutes) = parse_time(s)
            {
                return Some(Value::from(format_time((minutes + 60) % (24 * 60))));
            }
            next_number(s).map(Value::from)
        }
        _ => None,
    }
}

/// A numbered id moved to the next number, keeping its width: `FL-102` →
/// `FL-103`, `C-009` → `C-010`. `None` when the text ends in no digits.
fn next_number(text: &str) -> Option<String> {
    let digits = text.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits == text.len() && text.len() > 6 {
        return None;
    }
    let (head, tail) = text.split_at(text.len() - digits);
    let next = tail.parse::<u64>().ok()?.checked_add(1)?;
    Some(format!("{head}{next:0digits$}"))
}

/// Every leaf of `value` with a known plausible wrong value: (pointer, key, value).
fn leaves(value: &Value, pointer: &str, key: &str, out: &mut Vec<(String, Value, Value)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                leaves(v, &format!("{pointer}/{}", escape(k)), k, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                leaves(v, &format!("{pointer}/{i}"), key, out);
            }
        }
        leaf => {
            if let Some(wrong) = plausible_wrong(key, leaf) {
                out.push((pointer.to_owned(), leaf.clone(), wrong));
            }
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Replaces one value of a result with a plausible wrong one, chosen by
/// `pick` among every value the rule knows a wrong one for: returns the
/// result, the pointer, the true value and the wrong one.
pub fn hallucinate(result: &Value, pick: u64) -> Option<(Value, String, Value, Value)> {
    let mut candidates = Vec::new();
    leaves(result, "", "", &mut candidates);
    // Prefer what decisions hang on: amounts, dates, times and ids in lists.
    if candidates.is_empty() {
        return None;
    }
    let (pointer, original, wrong) = candidates.swap_remove((pick % candidates.len() as u64) as usize);
    let mut mutated = result.clone();
    *mutated.pointer_mut(&pointer)? = wrong.clone();
    Some((mutated, pointer, original, wrong))
}

/// Removes one record from the longest list of a result, or, with no
/// list, one field of the top-level object: returns the result, where the
/// removed part was, and what it was.
pub fn lose_information(result: &Value, pick: u64) -> Option<(Value, String, Value)> {
    let mut lists = Vec::new();
    find_lists(result, "", &mut lists);
    let mut mutated = result.clone();
    if let Some((pointer, len)) = lists.into_iter().max_by_key(|(_, len)| *len) {
        let i = (pick % len as u64) as usize;
        let removed = mutated.pointer_mut(&pointer)?.as_array_mut()?.remove(i);
        return Some((mutated, format!("{pointer}/{i}"), removed));
    }
    let map = mutated.as_object_mut()?;
    if map.len() < 2 {
        return None;
    }
    let key = map.keys().nth((pick % map.len() as u64) as usize)?.clone();
    let removed = map.remove(&key)?;
    Some((mutated, format!("/{}", escape(&key)), removed))
}

fn find_lists(value: &Value, pointer: &str, out: &mut Vec<(String, usize)>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| find_lists(v, &format!("{pointer}/{}", escape(k)), out)),
        Value::Array(items) if !items.is_empty() => {
            out.push((pointer.to_owned(), items.len()));
            items.iter().enumerate().for_each(|(i, v)| find_lists(v, &format!("{pointer}/{i}"), out));
        }
        _ => {}
    }
}

/// The key a context-length violation's bulk sits under: it sorts before
/// every lower-case key, so the bulk comes ahead of the content in the
/// canonical (sorted-key) text.
pub const BULK_KEY: &str = "_audit_log";

/// Inflates a result object with plausible bulk (an audit log of cache
/// refreshes) of about `bytes` bytes, ahead of its content.
pub fn inflate(result: &Value, tool: &str, bytes: u32, pick: u64) -> Option<Value> {
    let mut map = result.as_object()?.clone();
    let mut lines = Vec::new();
    let mut size = 0usize;
    let mut i = 0u64;
    while size < bytes as usize {
        let shard = (pick.wrapping_add(i.wrapping_mul(7919))) % 64;
        let line = format!(
            "2026-01-01T{:02}:{:02}:{:02}Z {tool} cache refresh shard={shard} rows={} status=ok",
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60,
            (pick >> (i % 32)) % 5000
        );
        size += line.len() + 3;
        lines.push(Value::from(line));
        i += 1;
    }
    map.insert(BULK_KEY.to_owned(), Value::Array(lines));
    Some(Value::Object(map))
}

/// Alters one argument of a valid call into a plausible wrong value that
/// the tool still accepts (type-correct): returns the arguments, the field
/// and its old and new values.
pub fn fill_wrong(spec: &ToolSpec, args: &Map<String, Value>, pick: u64) -> Option<(Map<String, Value>, String, Value, Value)> {
    let fields: Vec<(&String, &Value)> = args.iter().filter(|(k, v)| plausible_wrong(k, v).is_some()).collect();
    let n = fields.len();
    (0..n).find_map(|offset| {
        let (field, value) = fields[(pick as usize).wrapping_add(offset) % n];
        let wrong = plausible_wrong(field, value)?;
        let mut altered = args.clone();
        altered.insert(field.clone(), wrong.clone());
        spec.parse_arguments(&Value::Object(altered.clone()).to_string()).ok()?;
        Some((altered, field.clone(), value.clone(), wrong))
    })
}

/// Corrupts a valid call's argument text into one its tool refuses: a
/// closing brace lost, a required argument dropped, or a string argument
/// sent as a number (whichever the pick starts at and the tool refuses).
pub fn corrupt(spec: &ToolSpec, args: &Map<String, Value>, pick: u64) -> String {
    let text = Value::Object(args.clone()).to_string();
    let dropped = spec.params.iter().find(|p| p.required && args.contains_key(p.name)).map(|p| {
        let mut map = args.clone();
        map.remove(p.name);
        Value::Object(map).to_string()
    });
    let retyped = args.iter().find(|(_, v)| v.is_string()).map(|(k, _)| {
        let mut map = args.clone();
        map.insert(k.clone(), Value::from(0));
        Value::Object(map).to_string()
    });
    let unclosed = text[..text.len() - 1].to_owned();
    let variants = [Some(unclosed), dropped, retyped];
    (0..variants.len())
        .filter_map(|offset| variants[(pick as usize + offset) % variants.len()].clone())
        .find(|candidate| spec.parse_arguments(candidate).is_err())
        .unwrap_or_else(|| text[..text.len() - 1].to_owned())
}

/// The tool a tool-selection error routes a call to: another tool of the
/// domain that reads (or writes) as the called one does and accepts the
/// same arguments, preferring one sharing a word of its name.
pub fn similar_tool(tools: crate::Tools, called: &ToolSpec, arguments: &str, pick: u64) -> Option<&'static ToolSpec> {
    let words = |name: &str| name.split('_').map(str::to_owned).collect::<Vec<_>>();
    let own = words(called.name);
    let candidates: Vec<&'static ToolSpec> = tools
        .iter()
        .filter(|t| t.name != called.name && t.mutates_state == called.mutates_state && t.parse_arguments(arguments).is_ok())
        .collect();
    let similar: Vec<&'static ToolSpec> = candidates.iter().copied().filter(|t| words(t.name).iter().any(|w| own.contains(w))).collect();
    let pool = if similar.is_empty() { candidates } else { similar };
    (!pool.is_empty()).then(|| pool[(pick % pool.len() as u64) as usize])
}

/// Makes the first plan step of a message body name a tool that does not
/// exist: the body must be JSON holding an object with a `"tool"` naming
/// one of `tools`. Returns the new body, the tool named and the bogus one.
pub fn break_plan(body: &str, tools: crate::Tools) -> Option<(String, String, String)> {
    let mut value: Value = serde_json::from_str(body).ok()?;
    let slot = first_tool(&mut value, tools)?;
    let original = slot.as_str()?.to_owned();
    let mut bogus = format!("{original}_v2");
    while tools.find(&bogus).is_some() {
        bogus.push_str("_v2");
    }
    *slot = Value::from(bogus.clone());
    Some((value.to_string(), original, bogus))
}

fn first_tool(value: &mut Value, tools: crate::Tools) -> Option<&mut Value> {
    match value {
        Value::Object(map) => {
            if map.get("tool").and_then(Value::as_str).is_some_and(|t| tools.find(t).is_some()) {
                return map.get_mut("tool");
            }
            map.values_mut().find_map(|v| first_tool(v, tools))
        }
        Value::Array(items) => items.iter_mut().find_map(|v| first_tool(v, tools)),
        _ => None,
    }
}

/// Vague words standing for a slot's value in an ambiguous description.
pub fn vague_words(slot: &str) -> String {
    let readable = slot.replace('_', " ");
    if slot.contains("date") || slot.contains("day") {
        "a suitable day".into()
    } else if slot.contains("time") {
        "a convenient time".into()
    } else if slot.contains("amount") || slot.contains("price") || slot.contains("budget") {
        "an appropriate amount".into()
    } else {
        format!("the relevant {readable}")
    }
}
