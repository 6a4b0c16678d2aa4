//! The argument reader: a call's argument text read straight into the
//! tool's known parameters, so only values are allocated. Its errors are the
//! ones a `serde_json::Value` parse followed by validation gives (tested
//! against that in `tool/mod.rs`).

use std::borrow::Cow;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::tool::Param;

/// An argument object as read: each known name once and the first unknown
/// name in sorted order, the one a map's validation would report. A name
/// given twice is refused (JSON leaves its meaning open: one parser keeps
/// the first value, another the last), at any depth.
pub(crate) enum Parsed {
    Object {
        entries: Vec<(Cow<'static, str>, Value)>,
        first_unknown: Option<String>,
        /// The first known argument given twice.
        duplicate: Option<&'static str>,
    },
    /// Valid JSON that is not an object.
    NotAnObject,
}

/// Reads the common argument object without serde: a flat object of the
/// tool's parameters, each once, whose values are strings without escapes,
/// integers, `true`, `false` or `null`, as agents nearly always send them.
/// `None` for anything else (nested values, escapes, fractions, exponents,
/// unknown or repeated names, any error): [`ParamsSeed`] then reads the
/// text, so every error and every unusual value is still its own.
pub(crate) fn read_flat(text: &str, params: &'static [Param]) -> Option<Vec<(Cow<'static, str>, Value)>> {
    let mut cursor = Cursor { text, at: 0 };
    let mut entries: Vec<(Cow<'static, str>, Value)> = Vec::with_capacity(params.len());
    // The parameters seen, by index.
    let mut seen = 0u64;
    if params.len() > 64 {
        return None;
    }
    cursor.space();
    cursor.eat(b'{')?;
    cursor.space();
    if cursor.eat(b'}').is_none() {
        loop {
            let key = cursor.string()?;
            let index = params.iter().position(|p| p.name == key)?;
            if seen & 1 << index != 0 {
                return None;
            }
            seen |= 1 << index;
            let name = params[index].name;
            cursor.space();
            cursor.eat(b':')?;
            cursor.space();
            entries.push((Cow::Borrowed(name), cursor.value()?));
            cursor.space();
            if cursor.eat(b',').is_some() {
                cursor.space();
            } else {
                cursor.eat(b'}')?;
                break;
            }
        }
    }
    cursor.space();
    (cursor.at == text.len()).then_some(entries)
}

/// The canonical text of the entries [`read_flat`] read, sorted by name:
/// their names and strings need no escape and their numbers are integers,
/// so each is written as it is.
pub(crate) fn flat_canonical(entries: &[(Cow<'static, str>, Value)]) -> String {
    crate::json::writer::text(|out| write_flat(entries, out))
}

fn write_flat(entries: &[(Cow<'static, str>, Value)], out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (name, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        match value {
            Value::String(text) => {
                out.push(b'"');
                out.extend_from_slice(text.as_bytes());
                out.push(b'"');
            }
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(n), _) => crate::json::writer::write_u64(out, n),
                (None, Some(n)) => crate::json::writer::write_i64(out, n),
                (None, None) => out.extend_from_slice(n.to_string().as_bytes()),
            },
            Value::Bool(true) => out.extend_from_slice(b"true"),
            Value::Bool(false) => out.extend_from_slice(b"false"),
            Value::Null => out.extend_from_slice(b"null"),
            // `read_flat` reads no arrays or objects; were it to, they are written in full.
            nested => out.extend_from_slice(crate::json::canonical(nested).as_bytes()),
        }
    }
    out.push(b'}');
}

/// A position in argument text, for [`read_flat`].
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek() == Some(byte)).then(|| self.at += 1)
    }

    /// JSON's whitespace.
    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    /// A string without escapes or control characters.
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        let len = self.text.as_bytes()[start..].iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        self.at = start + len;
        self.eat(b'"')?;
        self.text.get(start..start + len)
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Value> {
        self.text[self.at..].starts_with(word).then(|| {
            self.at += word.len();
            value
        })
    }

    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'"' => self.string().map(|s| Value::String(s.to_owned())),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            _ => self.integer(),
        }
    }

    /// An integer of at most 18 digits without a leading zero, as serde_json
    /// reads it (`u64` if not negative); `-0`, fractions and exponents are
    /// left to serde_json.
    fn integer(&mut self) -> Option<Value> {
        let negative = self.eat(b'-').is_some();
        let start = self.at;
        let digits = self.text.as_bytes()[start..].iter().take_while(|b| b.is_ascii_digit()).count();
        let leading_zero = self.peek() == Some(b'0') && (digits > 1 || negative);
        if digits == 0 || digits > 18 || leading_zero {
            return None;
        }
        self.at += digits;
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let n: u64 = self.text[start..self.at].parse().ok()?;
        Some(if negative { Value::from(-(n as i64)) } else { Value::from(n) })
    }
}

/// Reads an argument object for a tool's parameters.
pub(crate) struct ParamsSeed(pub(crate) &'static [Param]);

impl<'de> DeserializeSeed<'de> for ParamsSeed {
    type Value = Parsed;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Parsed, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ParamsSeed {
    type Value = Parsed;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a json value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        let mut entries: Vec<(Cow<'static, str>, Value)> = Vec::with_capacity(self.0.len());
        let mut first_unknown: Option<String> = None;
        let mut duplicate: Option<&'static str> = None;
        while let Some(key) = map.next_key_seed(KeySeed(self.0))? {
            // Every value is read as a `Value`, known or not, so a value that a
            // map would refuse (a number out of range) is refused here too.
            let value: Value = map.next_value_seed(UniqueValue)?;
            match key {
                Key::Param(name) => match entries.iter_mut().find(|(n, _)| n == name) {
                    Some(_) => duplicate = duplicate.or(Some(name)),
                    None => entries.push((Cow::Borrowed(name), value)),
                },
                Key::Unknown(name) => {
                    if first_unknown.as_ref().is_none_or(|first| name < *first) {
                        first_unknown = Some(name);
                    }
                }
            }
        }
        Ok(Parsed::Object { entries, first_unknown, duplicate })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsed, A::Error> {
        while seq.next_element_seed(UniqueValue)?.is_some() {}
        Ok(Parsed::NotAnObject)
    }

    fn visit_bool<E: serde::de::Error>(self, _v: bool) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject)
    }
    fn visit_i64<E: serde::de::Error>(self, _v: i64) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject)
    }
    fn visit_u64<E: serde::de::Error>(self, _v: u64) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject)
    }
    fn visit_f64<E: serde::de::Error>(self, _v: f64) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject)
    }
    fn visit_str<E: serde::de::Error>(self, _v: &str) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Parsed, E> {
        Ok(Parsed::NotAnObject)
    }
}

/// An argument name: one of the tool's parameters, or not.
enum Key {
    Param(&'static str),
    Unknown(String),
}

struct KeySeed(&'static [Param]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an argument name")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Key, E> {
        Ok(match self.0.iter().find(|p| p.name == name) {
            Some(param) => Key::Param(param.name),
            None => Key::Unknown(name.to_owned()),
        })
    }
}

/// Reads any JSON value as a `Value`, refusing an object that names a key
/// twice (a `Value` read keeps the last one silently).
struct UniqueValue;

impl<'de> DeserializeSeed<'de> for UniqueValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for UniqueValue {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a json value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(UniqueValue)?;
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!("key {:?} given twice", crate::tool::echo(&key))));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed(UniqueValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}
