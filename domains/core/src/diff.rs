//! An end state as the records an episode changed in its task's initial
//! state, so judging it costs what the episode changed, not the size of the
//! state.
//!
//! A state's JSON is an object of collections: objects of records by key
//! (`/orders/O-1001`) or arrays of records by index (`/flights_db/3`).
//! [`Changes`] keeps, per collection, the records that differ from the
//! initial state's (the record after, or `None` where it was removed), and
//! [`View`] reads the end state through them: a pointer into a record the
//! episode did not touch reads the initial state's JSON, which the task
//! computes once. A typed state lists its changes by comparing its records
//! with the initial state's (see [`crate::World::changes`]), without writing
//! the whole state as JSON.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::json::{self, Change};

/// What an end state changed in one collection.
#[derive(Debug, Clone, PartialEq)]
enum Changed {
    /// Records by key (an object's key, an array's index in decimal): the
    /// record after, `None` where it was removed.
    Records(BTreeMap<String, Option<Value>>),
    /// The whole collection, after (`None`: removed): an array whose length
    /// changed, or a value that is not a collection.
    Whole(Option<Value>),
}

/// The records an end state changed, by collection (see the module docs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes(BTreeMap<String, Changed>);

impl Changes {
    /// Records the changed records of a collection kept as a map by key.
    pub fn map<T: Serialize + PartialEq>(&mut self, name: &str, before: &BTreeMap<String, T>, after: &BTreeMap<String, T>) {
        if std::ptr::eq(before, after) {
            return; // one collection, shared by both states (see `Shared`)
        }
        // Both in key order: one pass over the two, no lookups.
        let mut records = BTreeMap::new();
        let mut old = before.iter().peekable();
        for (key, record) in after {
            while let Some((gone, _)) = old.next_if(|(k, _)| *k < key) {
                records.insert(gone.clone(), None);
            }
            if old.next_if(|(k, _)| *k == key).is_none_or(|(_, was)| was != record) {
                records.insert(key.clone(), Some(to_value(record)));
            }
        }
        records.extend(old.map(|(gone, _)| (gone.clone(), None)));
        self.insert(name, records);
    }

    /// Records the changed records of a collection kept as a list.
    pub fn list<T: Serialize + PartialEq>(&mut self, name: &str, before: &[T], after: &[T]) {
        if std::ptr::eq(before, after) {
            return;
        }
        if before.len() != after.len() {
            self.0.insert(name.to_owned(), Changed::Whole(Some(to_value(after))));
            return;
        }
        let records = before.iter().zip(after).enumerate().filter(|(_, (b, a))| b != a);
        self.insert(name, records.map(|(i, (_, a))| (i.to_string(), Some(to_value(a)))).collect());
    }

    fn insert(&mut self, name: &str, records: BTreeMap<String, Option<Value>>) {
        if !records.is_empty() {
            self.0.insert(name.to_owned(), Changed::Records(records));
        }
    }

    /// The changes that turn `initial` into `end`, both any JSON.
    pub fn between(initial: &Value, end: &Value) -> Self {
        let (Value::Object(before), Value::Object(after)) = (initial, end) else {
            // Not a state of collections: the whole state is one change.
            return Self(BTreeMap::from([(String::new(), Changed::Whole(Some(end.clone())))]));
        };
        let mut changes = Self::default();
        for (name, b) in before {
            match (b, after.get(name)) {
                (_, None) => drop(changes.0.insert(name.clone(), Changed::Whole(None))),
                (b, Some(a)) if b == a => {}
                (Value::Object(b), Some(Value::Object(a))) => {
                    let mut records: BTreeMap<String, Option<Value>> =
                        a.iter().filter(|(k, r)| b.get(*k) != Some(*r)).map(|(k, r)| (k.clone(), Some(r.clone()))).collect();
                    records.extend(b.keys().filter(|k| !a.contains_key(*k)).map(|k| (k.clone(), None)));
                    changes.insert(name, records);
                }
                (Value::Array(b), Some(Value::Array(a))) if b.len() == a.len() => {
                    let records = b.iter().zip(a).enumerate().filter(|(_, (x, y))| x != y);
                    changes.insert(name, records.map(|(i, (_, y))| (i.to_string(), Some(y.clone()))).collect());
                }
                (_, Some(a)) => drop(changes.0.insert(name.clone(), Changed::Whole(Some(a.clone())))),
            }
        }
        for (name, a) in after.iter().filter(|(name, _)| !before.contains_key(*name)) {
            changes.0.insert(name.clone(), Changed::Whole(Some(a.clone())));
        }
        changes
    }

    /// Whether the end state is the initial state.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The same changes with every string and key equal to a renamed one
    /// rewritten (see `oracle::renumbered`); `None` when a renamed string
    /// occurs in the initial state (`initial_strings`), which the records
    /// left as they were would then need rewriting too.
    pub fn renamed(&self, renames: &[(&str, &str)], initial_strings: &[String]) -> Option<Self> {
        if renames.iter().any(|(from, _)| initial_strings.iter().any(|s| s == from)) {
            return None;
        }
        let changed = |c: &Changed| match c {
            Changed::Records(records) => {
                Changed::Records(records.iter().map(|(k, r)| (rename_text(k, renames), r.as_ref().map(|r| rename(r, renames)))).collect())
            }
            Changed::Whole(value) => Changed::Whole(value.as_ref().map(|v| rename(v, renames))),
        };
        Some(Self(self.0.iter().map(|(name, c)| (name.clone(), changed(c))).collect()))
    }
}

/// `value` with every string and key equal to a renamed one rewritten.
pub fn rename(value: &Value, renames: &[(&str, &str)]) -> Value {
    match value {
        Value::String(text) => Value::String(rename_text(text, renames)),
        Value::Array(items) => Value::Array(items.iter().map(|v| rename(v, renames)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (rename_text(k, renames), rename(v, renames))).collect()),
        other => other.clone(),
    }
}

fn rename_text(text: &str, renames: &[(&str, &str)]) -> String {
    renames.iter().find(|(from, _)| *from == text).map_or(text, |(_, to)| *to).to_owned()
}

/// A record as JSON: the domains' records are plain structs of strings,
/// numbers and ordered maps, which always serialize.
fn to_value<T: Serialize + ?Sized>(record: &T) -> Value {
    serde_json::to_value(record).unwrap_or(Value::Null)
}

/// An end state: an initial state's JSON and the changes made to it.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The initial state's JSON.
    pub initial: &'a Value,
    /// What changed since.
    pub changes: &'a Changes,
}

/// No changes: a view of a state as it is.
static UNCHANGED: Changes = Changes(BTreeMap::new());

impl<'a> View<'a> {
    /// A view of `state` itself.
    pub fn of(state: &'a Value) -> Self {
        Self { initial: state, changes: &UNCHANGED }
    }

    /// The value at a JSON pointer, borrowed unless the pointer names a
    /// collection (or the whole state) that changed.
    pub fn get(&self, path: &str) -> Option<Cow<'a, Value>> {
        let Some(rest) = path.strip_prefix('/') else {
            return if path.is_empty() { Some(Cow::Owned(self.materialize())) } else { None };
        };
        let (name, rest) = split(rest);
        let name = json::unescape(name);
        let (changed, whole) = match (self.changes.0.get(name.as_ref()), self.changes.0.get("")) {
            (Some(changed), _) => (changed, false),
            (None, Some(whole)) => (whole, true),
            (None, None) => return json::at(self.initial, path).map(Cow::Borrowed),
        };
        match changed {
            Changed::Whole(value) if whole => json::at(value.as_ref()?, path).map(Cow::Borrowed),
            Changed::Whole(value) => json::at(value.as_ref()?, rest.map_or("", |r| &path[path.len() - r.len() - 1..])).map(Cow::Borrowed),
            Changed::Records(records) => {
                let Some(rest) = rest else { return self.collection(&name).map(Cow::Owned) };
                let (key, within) = split(rest);
                match records.get(json::unescape(key).as_ref()) {
                    Some(record) => json::at(record.as_ref()?, within.map_or("", |w| &path[path.len() - w.len() - 1..])).map(Cow::Borrowed),
                    None => json::at(self.initial, path).map(Cow::Borrowed),
                }
            }
        }
    }

    /// How many members of the collection at a pointer (an object's values,
    /// an array's elements) satisfy `wanted`, read through the changes.
    pub fn count_members(&self, path: &str, mut wanted: impl FnMut(&Value) -> bool) -> usize {
        let name = path.strip_prefix('/').filter(|rest| !rest.contains('/')).map(json::unescape);
        let changed = name.as_ref().and_then(|name| Some((self.changes.0.get(name.as_ref())?, self.initial.get(name.as_ref())?)));
        match changed {
            Some((Changed::Records(records), Value::Object(start))) => {
                let kept = start.iter().filter(|(key, _)| !records.contains_key(*key)).map(|(_, record)| record);
                kept.chain(records.values().flatten()).filter(|record| wanted(record)).count()
            }
            Some((Changed::Records(records), Value::Array(items))) => {
                let changed: BTreeMap<usize, &Value> = records.iter().filter_map(|(k, r)| Some((k.parse().ok()?, r.as_ref()?))).collect();
                items.iter().enumerate().filter(|&(i, item)| wanted(changed.get(&i).copied().unwrap_or(item))).count()
            }
            _ => json::members(self.get(path).as_deref()).into_iter().filter(|member| wanted(member)).count(),
        }
    }

    /// A changed collection, whole.
    fn collection(&self, name: &str) -> Option<Value> {
        let initial = self.initial.get(name);
        match self.changes.0.get(name) {
            None => initial.cloned(),
            Some(Changed::Whole(value)) => value.clone(),
            Some(Changed::Records(records)) => {
                let mut collection = initial.cloned().unwrap_or(Value::Null);
                match &mut collection {
                    Value::Object(map) => {
                        for (key, record) in records {
                            match record {
                                Some(record) => drop(map.insert(key.clone(), record.clone())),
                                None => drop(map.remove(key)),
                            }
                        }
                    }
                    Value::Array(items) => {
                        for (key, record) in records {
                            if let (Ok(i), Some(record)) = (key.parse::<usize>(), record) {
                                items[i] = record.clone();
                            }
                        }
                    }
                    _ => {}
                }
                Some(collection)
            }
        }
    }

    /// The whole end state as JSON.
    pub fn materialize(&self) -> Value {
        if let Some(Changed::Whole(whole)) = self.changes.0.get("") {
            return whole.clone().unwrap_or(Value::Null);
        }
        let mut state = self.initial.clone();
        if let Value::Object(map) = &mut state {
            for name in self.changes.0.keys() {
                match self.collection(name) {
                    Some(collection) => drop(map.insert(name.clone(), collection)),
                    None => drop(map.remove(name)),
                }
            }
        }
        state
    }

    /// What changed from `self` to `other` (a view of the same initial
    /// state), as [`json::diff`] of the two states lists it.
    pub fn diff(&self, other: &View<'a>) -> Vec<Change> {
        if self.changes.0.contains_key("") || other.changes.0.contains_key("") {
            return json::diff(&self.materialize(), &other.materialize());
        }
        let names: BTreeSet<&String> = self.changes.0.keys().chain(other.changes.0.keys()).collect();
        let mut out = Vec::new();
        for name in names {
            let path = json::pointer(&[name]);
            let (mine, theirs) = (self.changes.0.get(name), other.changes.0.get(name));
            let (Some(Changed::Records(_)) | None, Some(Changed::Records(_)) | None) = (mine, theirs) else {
                let (before, after) = (self.collection(name), other.collection(name));
                json::diff_at(path, before.as_ref(), after.as_ref(), &mut out);
                continue;
            };
            let initial = self.initial.get(name);
            for key in record_keys(initial, [mine, theirs]) {
                let record = |changed: Option<&'a Changed>| -> Option<&Value> {
                    match changed {
                        Some(Changed::Records(records)) if records.contains_key(key) => records[key].as_ref(),
                        _ => record_of(initial, key),
                    }
                };
                let (before, after) = (record(mine), record(theirs));
                if before != after {
                    json::diff_at(json::pointer(&[name, key]), before, after, &mut out);
                }
            }
        }
        out
    }
}

/// The keys of the records changed in either view of a collection, in the
/// collection's order: by key for an object, by index for an array.
fn record_keys<'c>(initial: Option<&Value>, changed: [Option<&'c Changed>; 2]) -> Vec<&'c str> {
    let mut keys: Vec<&str> = changed
        .into_iter()
        .flat_map(|c| match c {
            Some(Changed::Records(records)) => Some(records.keys().map(String::as_str)),
            _ => None,
        })
        .flatten()
        .collect();
    if matches!(initial, Some(Value::Array(_))) {
        keys.sort_by_key(|k| k.parse::<usize>().unwrap_or(usize::MAX));
    } else {
        keys.sort_unstable();
    }
    keys.dedup();
    keys
}

/// The record of a collection of the initial state at a key.
fn record_of<'v>(collection: Option<&'v Value>, key: &str) -> Option<&'v Value> {
    match collection? {
        Value::Object(map) => map.get(key),
        Value::Array(items) => items.get(key.parse::<usize>().ok()?),
        _ => None,
    }
}

/// The first segment of a pointer's rest and what follows it.
fn split(rest: &str) -> (&str, Option<&str>) {
    match rest.split_once('/') {
        Some((segment, more)) => (segment, Some(more)),
        None => (rest, None),
    }
}

/// The keys two end states added, paired for renumbering (see
/// `oracle::renumbered`): at every object of the initial state and below,
/// the keys `b` added paired in sorted order with those `a` added, where
/// they differ; `None` when the numbers of added keys differ somewhere.
/// Only the collections and records either end state changed can add keys,
/// so only they are read, in place. A collection kept as an array holds no
/// keys to renumber.
pub fn added_keys<'a>(initial: &'a Value, a: &'a Changes, b: &'a Changes) -> Option<Vec<(&'a str, &'a str)>> {
    let mut renames = Vec::new();
    if a.0.contains_key("") || b.0.contains_key("") {
        // Not a state of collections (JSON only `Changes::between` reads):
        // compared whole, when the other side is whole or unchanged too;
        // otherwise nothing is renumbered.
        let whole = |changes: &'a Changes| match changes.0.get("") {
            Some(Changed::Whole(value)) => value.as_ref(),
            _ => Some(initial),
        };
        let other_changed = |c: &Changes| !c.0.contains_key("") && !c.is_empty();
        if other_changed(a) || other_changed(b) {
            return None;
        }
        let (Some(x), Some(y)) = (whole(a), whole(b)) else { return Some(renames) };
        return renames_of(initial, x, y, &mut renames).then_some(renames);
    }
    let names: BTreeSet<&'a String> = a.0.keys().chain(b.0.keys()).collect();
    // Collections the initial state lacks: their names, added.
    let added_collections = |changes: &'a Changes| {
        names
            .iter()
            .filter(|n| initial.get(n.as_str()).is_none() && matches!(changes.0.get(**n), Some(Changed::Whole(Some(_)))))
            .map(|n| n.as_str())
    };
    if !pair(added_collections(a).collect(), added_collections(b).collect(), &mut renames) {
        return None;
    }
    for name in names {
        let Some(Value::Object(start)) = initial.get(name) else { continue };
        let (x, y) = (Side::of(a.0.get(name)), Side::of(b.0.get(name)));
        if !pair(x.added(start), y.added(start), &mut renames) {
            return None;
        }
        // The records left as they were in both add no key.
        let kept: Box<dyn Iterator<Item = &String>> = match (x, y) {
            (Side::Records(x), Side::Records(y)) => {
                let changed: BTreeSet<&String> = x.keys().chain(y.keys()).filter(|k| start.contains_key(*k)).collect();
                Box::new(changed.into_iter())
            }
            _ => Box::new(start.keys()),
        };
        for key in kept {
            if let (Some(want), Some(got)) = (x.get(start, key), y.get(start, key))
                && !renames_of(&start[key], want, got, &mut renames)
            {
                return None;
            }
        }
    }
    Some(renames)
}

/// A collection of an end state, as [`added_keys`] reads it.
#[derive(Clone, Copy)]
enum Side<'a> {
    /// The initial collection with these records changed.
    Records(&'a BTreeMap<String, Option<Value>>),
    /// Another value (`None`: removed).
    Whole(Option<&'a Value>),
}

impl<'a> Side<'a> {
    fn of(changed: Option<&'a Changed>) -> Self {
        static UNCHANGED: BTreeMap<String, Option<Value>> = BTreeMap::new();
        match changed {
            None => Side::Records(&UNCHANGED),
            Some(Changed::Records(records)) => Side::Records(records),
            Some(Changed::Whole(value)) => Side::Whole(value.as_ref()),
        }
    }

    /// The keys it has that `start` lacks, in order.
    fn added(self, start: &serde_json::Map<String, Value>) -> Vec<&'a str> {
        let keys: Box<dyn Iterator<Item = &'a String>> = match self {
            Side::Records(records) => Box::new(records.iter().filter(|(_, r)| r.is_some()).map(|(k, _)| k)),
            Side::Whole(value) => Box::new(value.and_then(Value::as_object).into_iter().flat_map(|m| m.keys())),
        };
        keys.filter(|k| !start.contains_key(*k)).map(String::as_str).collect()
    }

    /// Its record at `key`.
    fn get(self, start: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
        match self {
            Side::Records(records) => records.get(key).map_or(start.get(key), Option::as_ref),
            Side::Whole(value) => value?.get(key),
        }
    }
}

/// Pairs the keys `got` added with those `want` added, in order, where they
/// differ; false when their numbers differ.
fn pair<'a>(want: Vec<&'a str>, got: Vec<&'a str>, renames: &mut Vec<(&'a str, &'a str)>) -> bool {
    if want.len() != got.len() {
        return false;
    }
    renames.extend(got.into_iter().zip(want).filter(|(g, w)| g != w));
    true
}

/// Collects, at every object of `initial` and below, the keys `actual`
/// added paired in sorted order with those `expected` added (only where they
/// differ); false when the numbers of added keys differ somewhere.
pub fn renames_of<'a>(initial: &Value, expected: &'a Value, actual: &'a Value, renames: &mut Vec<(&'a str, &'a str)>) -> bool {
    let Value::Object(before) = initial else { return true };
    let added = |state: &'a Value| Side::Whole(Some(state)).added(before);
    pair(added(expected), added(actual), renames)
        && before.iter().all(|(key, child)| match (expected.get(key), actual.get(key)) {
            (Some(e), Some(a)) => renames_of(child, e, a, renames),
            _ => true,
        })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn any_json_round_trips_through_changes() {
        let initial = json!({"a": {"x": 1, "y": {"z": 2}}, "list": [1, 2, 3], "gone": {"k": 1}, "n": 5, "same": [0]});
        let end = json!({"a": {"x": 1, "y": {"z": 3}, "w": 4}, "list": [1, 5, 3, 4], "n": 6, "new": {"q": 1}, "same": [0]});
        let changes = Changes::between(&initial, &end);
        let view = View { initial: &initial, changes: &changes };
        assert_eq!(view.materialize(), end);
        assert_eq!(View::of(&initial).diff(&view), json::diff(&initial, &end));
        for path in ["", "/a", "/a/y/z", "/a/w", "/list/3", "/list", "/gone", "/gone/k", "/n", "/new/q", "/same/0", "/missing/x"] {
            assert_eq!(view.get(path).as_deref(), end.pointer(path), "{path}");
            assert_eq!(view.count_members(path, |_| true), json::members(end.pointer(path)).len(), "{path}");
        }
        let initial = json!({"list": [1, 2, 3], "map": {"a": 1, "b": 2, "c": 3}});
        let end = json!({"list": [1, 5, 3], "map": {"a": 1, "c": 5, "d": 5}});
        let changes = Changes::between(&initial, &end);
        let view = View { initial: &initial, changes: &changes };
        for path in ["/list", "/map"] {
            assert_eq!(view.count_members(path, |v| v == &json!(5)), 1 + usize::from(path == "/map"), "{path}");
        }
        let not_a_state = Changes::between(&initial, &json!([1]));
        assert_eq!(View { initial: &initial, changes: &not_a_state }.materialize(), json!([1]));
    }
}
