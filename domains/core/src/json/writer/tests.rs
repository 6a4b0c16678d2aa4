//! Tests of the parent module.

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use serde::Serialize;
use serde_json::json;

use super::*;

fn ours<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    write(value, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn same<T: Serialize + ?Sized>(value: &T) {
    assert_eq!(ours(value), serde_json::to_string(value).unwrap());
}

#[test]
fn strings_are_escaped_as_serde_json_escapes_them() {
    // Every byte that could need escaping, at every offset of a long run of plain text.
    for c in (0u8..=0x7f).map(char::from).chain(['é', '€', '𝄞', '\u{2028}']) {
        for at in 0..20 {
            let mut text: String = "abcdefghijklmnopqrstuvwxyz".chars().take(at).collect();
            text.push(c);
            text.push_str("0123456789 plain ascii after it");
            same(&text);
        }
    }
    for text in ["", "\"", "\\\\\"\"", "\u{1f}\u{0}\n\r\t\u{8}\u{c}", "tab\there and a \"quote\" and a \\ slash /"] {
        same(text);
    }
}

#[test]
fn short_strings_are_escaped_at_every_position() {
    // Strings of up to 16 bytes take a word-at-a-time look of their own.
    for len in 1..=17 {
        for at in 0..len {
            for c in (0u8..0x20).chain([b'"', b'\\', b' ', b'~', 0x7f]).map(char::from) {
                let text: String = (0..len).map(|i| if i == at { c } else { 'a' }).collect();
                same(&text);
            }
        }
    }
}

#[test]
fn every_kind_of_value_is_written_as_serde_json_writes_it() {
    #[derive(Serialize)]
    enum Kind {
        Unit,
        Newtype(u8),
        Tuple(i32, String),
        Struct { a: Option<f64>, b: Vec<bool> },
    }
    #[derive(Serialize)]
    struct Record<'a> {
        name: &'a str,
        kinds: Vec<Kind>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u32>,
        nothing: Option<u32>,
        unit: (),
        pair: (u8, char),
    }
    let record = Record {
        name: "a \"record\"",
        kinds: vec![Kind::Unit, Kind::Newtype(7), Kind::Tuple(-3, "x".into()), Kind::Struct { a: Some(19.99), b: vec![true, false] }],
        skipped: None,
        nothing: None,
        unit: (),
        pair: (255, 'q'),
    };
    same(&record);
    for n in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX] {
        same(&n);
    }
    for n in [i64::MIN, -1, 0, 1, i64::MAX] {
        same(&n);
    }
    for f in [0.0, -0.0, 0.1, 19.99, 250.0, 1e21, 1.5e-7, f64::MAX, f64::NAN, f64::INFINITY] {
        same(&f);
    }
    same(&[1u128 << 100]);
    same(&BTreeMap::from([("b", 1), ("a", 2)]));
    same(&BTreeMap::from([(3u32, "x"), (10, "y")]));
    same(&json!({"nested": [{"x": null}, [], {}], "text": "\u{7f}"}));
    assert!(write(&BTreeMap::from([(vec![1], 1)]), &mut Vec::new()).is_err(), "a list is no key");
}

#[test]
fn texts_are_kept_without_spare_capacity() {
    // Texts an episode keeps for its whole life come out exactly their size,
    // whatever the buffer grew to while they were written.
    let long = "x".repeat(300);
    for value in [json!({"a": 1}), json!({"flights": [{"id": long.as_str(), "price": 120}], "origin": "LON"})] {
        let text = crate::json::canonical(&value);
        assert_eq!((text.as_str(), text.capacity()), (serde_json::to_string(&value).unwrap().as_str(), text.len()));
    }
    // A text written while another is being written gets a buffer of its own.
    let nested = text(|out| {
        out.extend_from_slice(b"[");
        out.extend_from_slice(crate::json::canonical(&json!({"b": [1, 2]})).as_bytes());
        out.extend_from_slice(b"]");
    });
    assert_eq!(nested, r#"[{"b":[1,2]}]"#);
}
