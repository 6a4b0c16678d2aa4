//! JSON helpers the oracle stands on: canonical text, state hash, state diff,
//! pattern matching over values and paths; and the canonical writer
//! (`writer/`) that tools write their results with, tested against the
//! `serde_json` code it replaces.

pub(crate) mod writer;

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Writes a value as canonical JSON: object keys sorted, no whitespace.
///
/// `serde_json` sorts keys only while no crate in the build enables its
/// `preserve_order` feature; this does not depend on that (it sorts when the
/// keys are not already in order). Strings are written as serde_json writes
/// them (by the codec's writer), numbers by serde_json itself, straight into
/// one buffer.
pub fn canonical(value: &Value) -> String {
    writer::text(|out| write_canonical(value, out))
}

/// Writes an object given as entries sorted by key, each key once, as
/// canonical JSON: [`canonical`] without building a `Value` around them.
pub fn canonical_entries<'a>(entries: impl Iterator<Item = (&'a str, &'a Value)>) -> String {
    writer::text(|out| {
        out.push(b'{');
        for (i, (key, value)) in entries.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            writer::write_str(out, key);
            out.push(b':');
            write_canonical(value, out);
        }
        out.push(b'}');
    })
}

/// Writes a typed value as canonical JSON, straight from its fields: no
/// `Value` tree in between.
///
/// The text is canonical only if the type writes object keys in sorted order:
/// structs declare their fields in key order, maps are `BTreeMap`s keyed by
/// strings. Debug builds (and so every test) check that the text is exactly
/// what [`canonical`] writes for it.
pub fn to_canonical<T: Serialize + ?Sized>(value: &T) -> String {
    // The results are plain structs of strings, numbers, options, vectors and
    // string-keyed maps, which serde_json always writes; the fallback is
    // there so that a bug shows in the result instead of a panic.
    let mut written = Ok(());
    let text = writer::text(|out| written = writer::write(value, out));
    let text = match written {
        Ok(()) => text,
        Err(e) => serde_json::json!({"error": e.to_string()}).to_string(),
    };
    debug_assert_eq!(
        serde_json::from_str::<Value>(&text).map(|v| canonical(&v)).ok().as_deref(),
        Some(text.as_str()),
        "a result type writes its keys out of order"
    );
    text
}

/// A one-key object, `{key: value}`, for results that wrap a record
/// (`{"booked": …}`) without a struct of their own.
#[derive(Debug)]
pub struct Field<T>(pub &'static str, pub T);

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(self.0, &self.1)?;
        map.end()
    }
}

/// A list written straight from an iterator, without collecting it first:
/// the closure makes the iterator each time the list is written.
#[derive(Debug)]
pub struct Seq<F>(pub F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail, so the writers' results carry nothing.
    match value {
        Value::Object(map) => write_object(map, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::String(text) => writer::write_str(out, text),
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

fn write_object(map: &serde_json::Map<String, Value>, out: &mut Vec<u8>) {
    out.push(b'{');
    let mut entry = |i: usize, key: &str, value: &Value| {
        if i > 0 {
            out.push(b',');
        }
        writer::write_str(out, key);
        out.push(b':');
        write_canonical(value, out);
    };
    if map.keys().is_sorted() {
        map.iter().enumerate().for_each(|(i, (key, value))| entry(i, key, value));
    } else {
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_by_key(|&(key, _)| key);
        entries.into_iter().enumerate().for_each(|(i, (key, value))| entry(i, key, value));
    }
    out.push(b'}');
}

/// SHA-256 (lowercase hex) of a value's canonical JSON.
pub fn state_hash(value: &Value) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(canonical(value).as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    hex
}

/// One changed location between two states.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// JSON pointer (RFC 6901) of the location.
    pub path: String,
    /// The value before; `None` when the location was added.
    pub before: Option<Value>,
    /// The value after; `None` when the location was removed.
    pub after: Option<Value>,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.before, &self.after) {
            (None, Some(after)) => write!(f, "+ {}: {}", self.path, canonical(after)),
            (Some(before), None) => write!(f, "- {}: {}", self.path, canonical(before)),
            (Some(before), Some(after)) => write!(f, "~ {}: {} -> {}", self.path, canonical(before), canonical(after)),
            (None, None) => write!(f, "  {}", self.path),
        }
    }
}

/// Lists the leaf-most locations where `before` and `after` differ, in key order.
/// Objects are compared key by key; arrays of equal length element by element;
/// anything else that differs is one change.
pub fn diff(before: &Value, after: &Value) -> Vec<Change> {
    let mut changes = Vec::new();
    diff_into(before, after, &mut String::new(), &mut changes);
    changes
}

/// [`diff`] of the values at one location, `path`, either of which may be
/// absent, appending to `out`.
pub fn diff_at(mut path: String, before: Option<&Value>, after: Option<&Value>, out: &mut Vec<Change>) {
    match (before, after) {
        (Some(b), Some(a)) => diff_into(b, a, &mut path, out),
        (None, None) => {}
        (b, a) => out.push(Change { path, before: b.cloned(), after: a.cloned() }),
    }
}

/// The value at a JSON pointer, as [`Value::pointer`] finds it, without
/// allocating for segments that need no unescaping.
pub fn at<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    pointer.strip_prefix('/')?.split('/').try_fold(value, |target, segment| match target {
        Value::Object(map) => map.get(unescape(segment).as_ref()),
        // As RFC 6901 reads an index: digits, no sign, no leading zero.
        Value::Array(items) if segment == "0" || !segment.starts_with(['0', '+']) => items.get(segment.parse::<usize>().ok()?),
        _ => None,
    })
}

/// A JSON pointer segment with `~1` and `~0` read as `/` and `~`.
pub fn unescape(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') { Cow::Owned(segment.replace("~1", "/").replace("~0", "~")) } else { Cow::Borrowed(segment) }
}

/// The JSON pointer of a location given by its keys.
pub fn pointer(keys: &[&str]) -> String {
    let mut path = String::new();
    keys.iter().for_each(|key| push_segment(&mut path, key));
    path
}

fn diff_into(before: &Value, after: &Value, path: &mut String, out: &mut Vec<Change>) {
    if before == after {
        return;
    }
    let len = path.len();
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let mut keys: Vec<&String> = b.keys().chain(a.keys().filter(|k| !b.contains_key(*k))).collect();
            keys.sort();
            for key in keys {
                push_segment(path, key);
                match (b.get(key), a.get(key)) {
                    (Some(x), Some(y)) => diff_into(x, y, path, out),
                    (x, y) => out.push(Change { path: path.clone(), before: x.cloned(), after: y.cloned() }),
                }
                path.truncate(len);
            }
        }
        (Value::Array(b), Value::Array(a)) if b.len() == a.len() => {
            for (i, (x, y)) in b.iter().zip(a).enumerate() {
                push_segment(path, &i.to_string());
                diff_into(x, y, path, out);
                path.truncate(len);
            }
        }
        _ => out.push(Change { path: path.clone(), before: Some(before.clone()), after: Some(after.clone()) }),
    }
}

fn push_segment(path: &mut String, segment: &str) {
    path.push('/');
    if segment.contains(['~', '/']) {
        path.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    } else {
        path.push_str(segment);
    }
}

/// Whether `pattern` describes `value`: objects match when every key of the
/// pattern matches (extra keys in the value are fine), arrays when they have
/// the same length and match element by element, numbers by value, anything
/// else by equality.
pub fn matches(pattern: &Value, value: &Value) -> bool {
    match (pattern, value) {
        (Value::Object(p), Value::Object(v)) => p.iter().all(|(k, pv)| v.get(k).is_some_and(|vv| matches(pv, vv))),
        (Value::Array(p), Value::Array(v)) => p.len() == v.len() && p.iter().zip(v).all(|(a, b)| matches(a, b)),
        (Value::Number(p), Value::Number(v)) => p.as_f64() == v.as_f64(),
        _ => pattern == value,
    }
}

/// Whether a JSON pointer lies at or under a path pattern. Pattern segments
/// are literal, `*` (any one segment) or `+` (a key that `initial` does not
/// have at that place: a record added by the episode, not an existing one).
pub fn path_within(path: &str, pattern: &str, initial: &Value) -> bool {
    let mut path_segments = path.split('/').skip(1);
    let mut prefix = String::new();
    for want in pattern.split('/').skip(1) {
        let Some(got) = path_segments.next() else { return false };
        prefix.push('/');
        prefix.push_str(got);
        let fits = match want {
            "*" => true,
            "+" => initial.pointer(&prefix).is_none(),
            literal => literal == got,
        };
        if !fits {
            return false;
        }
    }
    true
}

/// Collects the JSON pointers of a value's leaves (scalars, empty objects and
/// empty arrays), the value itself sitting at `path`.
pub fn leaf_paths(path: &str, value: &Value, out: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                let mut p = path.to_owned();
                push_segment(&mut p, key);
                leaf_paths(&p, v, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                leaf_paths(&format!("{path}/{i}"), v, out);
            }
        }
        _ => {
            out.insert(path.to_owned());
        }
    }
}

/// The members of a collection: an object's values or an array's elements.
pub fn members(collection: Option<&Value>) -> Vec<&Value> {
    match collection {
        Some(Value::Object(map)) => map.values().collect(),
        Some(Value::Array(items)) => items.iter().collect(),
        _ => Vec::new(),
    }
}

/// Every string in a value, keys included, in document order.
pub fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                out.push(key.clone());
                collect_strings(v, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn at_finds_what_value_pointer_finds() {
        let value = json!({"a": {"b/c": [10, {"~d": 1, "": 2}], "e": null}, "0": "zero", "": {"x": 3}});
        let pointers = [
            "",
            "/",
            "a",
            "/a",
            "/a/",
            "/a/b~1c",
            "/a/b/c",
            "/a/b~1c/0",
            "/a/b~1c/1/~0d",
            "/a/b~1c/1/",
            "/a/b~1c/01",
            "/a/b~1c/+1",
            "/a/b~1c/-1",
            "/a/b~1c/2",
            "/a/b~1c/-",
            "/a/b~1c/1/~01",
            "/a/e",
            "/a/e/x",
            "/0",
            "//x",
            "/~2",
        ];
        for pointer in pointers {
            assert_eq!(at(&value, pointer), value.pointer(pointer), "{pointer}");
        }
    }

    #[test]
    fn canonical_sorts_keys_at_every_depth() {
        let value = json!({"b": {"y": 1, "x": [true, null]}, "a": "s/\"q\""});
        assert_eq!(canonical(&value), r#"{"a":"s/\"q\"","b":{"x":[true,null],"y":1}}"#);
    }

    #[test]
    fn hash_is_sha256_of_canonical_text() {
        // sha256("{}")
        assert_eq!(state_hash(&json!({})), "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
        assert_eq!(state_hash(&json!({"a": 1, "b": 2})), state_hash(&json!({"b": 2, "a": 1})));
    }

    #[test]
    fn diff_reports_leaf_changes_with_escaped_pointers() {
        let before = json!({"calendar": {"2026-01-01": {"09:00": "A"}}, "list": [1, 2], "gone": 1});
        let after = json!({"calendar": {"2026-01-01": {"09:00": "A", "10:00": "B"}}, "list": [1, 3], "a/b": 0});
        let lines: Vec<String> = diff(&before, &after).iter().map(ToString::to_string).collect();
        assert_eq!(lines, ["+ /a~1b: 0", "+ /calendar/2026-01-01/10:00: \"B\"", "- /gone: 1", "~ /list/1: 2 -> 3"]);
        assert!(diff(&before, &before).is_empty());
    }

    #[test]
    fn matching_and_paths() {
        assert!(matches(&json!({"a": 1}), &json!({"a": 1.0, "b": 2})));
        assert!(!matches(&json!({"a": [1]}), &json!({"a": [1, 2]})));
        let initial = json!({"reservations": {"R-001": {"status": "held"}}});
        assert!(path_within("/reservations/R-001/status", "/reservations/*", &initial));
        assert!(!path_within("/reservations/R-001/status", "/reservations/+", &initial), "+ allows only new keys");
        assert!(path_within("/reservations/R-002/status", "/reservations/+", &initial));
        assert!(!path_within("/flights", "/flights/*/seats_left", &initial));
        assert!(!path_within("/flights/1/price", "/flights/*/seats_left", &initial));
    }
}
