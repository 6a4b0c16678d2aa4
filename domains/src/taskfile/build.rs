//! From a task as a file writes it to a [`Task`], checked on the way: the
//! one place a loaded task is made.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::format::{CheckSpec, FactSpec, TaskSpec};
use crate::registry::Extensions;
use toolenv_core::{
    Call, Check, Domain, Fact, Registered, Slot, Task, World,
    date::Date,
    phrasing::{Level, Relation, Template, Variant},
};

/// A problem with one task: the JSON pointer within the task, and what.
pub(super) type Problem = (String, String);

/// A domain state that does not read as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StateError {
    /// The JSON pointer within the state.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
}

/// Reads a domain's state from JSON, with the domain's own checks (its
/// deserializer's invariants), and refuses one that does not write back
/// as given: a value the domain would drop or change is an error, not a
/// surprise in an episode.
pub fn world_of<S: Registered + DeserializeOwned>(state: Value) -> Result<World, StateError> {
    let read: S =
        serde_path_to_error::deserialize(&state).map_err(|e| StateError { pointer: pointer(e.path()), message: e.inner().to_string() })?;
    let world = World::new(read);
    if let Some((pointer, written)) = first_difference(&state, &world.to_json(), String::new()) {
        let message = format!("the domain writes this value back as {written}: write it that way");
        return Err(StateError { pointer, message });
    }
    Ok(world)
}

/// The first place where `given` says something `written` does not, with
/// what `written` has there (keys `written` adds, defaults, do not count).
fn first_difference(given: &Value, written: &Value, at: String) -> Option<(String, String)> {
    match (given, written) {
        (Value::Object(a), Value::Object(b)) => a.iter().find_map(|(key, value)| {
            let at = format!("{at}/{}", escape(key));
            match b.get(key) {
                Some(other) => first_difference(value, other, at),
                None => Some((at, "nothing".to_owned())),
            }
        }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).enumerate().find_map(|(i, (x, y))| first_difference(x, y, format!("{at}/{i}")))
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => None,
        _ if given == written => None,
        _ => Some((at, written.to_string())),
    }
}

/// A path serde_path_to_error found, as a JSON pointer.
pub(super) fn pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    path.iter()
        .map(|segment| match segment {
            Segment::Seq { index } => format!("/{index}"),
            Segment::Map { key } => format!("/{}", escape(key)),
            Segment::Enum { variant } => format!("/{}", escape(variant)),
            Segment::Unknown => "/?".to_owned(),
        })
        .collect()
}

/// One JSON pointer segment, escaped.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Builds a task from its spec and validates it as the suite's tasks are
/// validated; the problem's pointer is relative to the task.
pub(super) fn validated(spec: &TaskSpec) -> Result<Arc<Task>, Problem> {
    let task = Arc::new(task(spec)?);
    check_reference(&task)?;
    let check = crate::selfcheck::SelfCheck::run(Arc::clone(&task));
    if let Some(problem) = check.problems().into_iter().next() {
        // A built-in id on another task: that is what to fix (an exported
        // built-in task, unchanged, passes and is refused when installed).
        if crate::task(&task.id).is_some() || crate::generate::domain_and_level(&task.id).is_some() {
            return Err((
                "/id".to_owned(),
                format!("'{}' is a built-in task's id, on another task ({problem}): give the task its own id", task.id),
            ));
        }
        if !problem.starts_with("the solver") {
            return Err(("/expect".to_owned(), problem));
        }
        // Why the solver stopped says more than the checks it failed.
        let ended = crate::solver::solve(&mut toolenv_core::Episode::new(Arc::clone(&task), 0, 0)).ended;
        let why = match ended {
            Err(give_up) => format!(" ({give_up})"),
            // It finished and failed: what it did otherwise than the reference.
            Ok(()) => check.solver.failures().next().map_or(String::new(), |c| {
                let shown = |v: &serde_json::Value| v.to_string().chars().take(160).collect::<String>();
                format!(" (expected {}, the solver's: {})", shown(&c.expected), shown(&c.actual))
            }),
        };
        if why.contains("no strategy") {
            let hint = "the kind, the id's middle part, picks the solver's strategy: use one of the domain's task kinds";
            return Err(("/id".to_owned(), format!("{problem}{why}; {hint}")));
        }
        return Err(("/expect".to_owned(), format!("{problem}{why}: the expected outcome is not one the solver reaches")));
    }
    Ok(task)
}

/// The task a spec describes, checked field by field (not yet played).
pub(super) fn task(spec: &TaskSpec) -> Result<Task, Problem> {
    let bad = |pointer: &str, message: String| Err((pointer.to_owned(), message));
    let Some(domain) = crate::registry::parse(&spec.domain) else {
        let names: Vec<&str> = crate::registry::ALL.iter().map(|d| d.name()).collect();
        return bad("/domain", format!("no domain '{}': use one of {}", spec.domain, names.join(", ")));
    };
    check_id(&spec.id, domain).map_err(|m| ("/id".to_owned(), m))?;
    if !(1..=3).contains(&spec.level) {
        return bad("/level", format!("level {} is not 1, 2 or 3", spec.level));
    }
    let slots = slots(spec)?;
    let template = template(spec)?;
    let (initial, today) = initial(spec, domain)?;
    let mut reference = Vec::new();
    for (i, call) in spec.reference.iter().enumerate() {
        let Some(tool) = domain.tool(&call.tool) else {
            let names: Vec<&str> = domain.tools().iter().map(|t| t.name).collect();
            return bad(&format!("/reference/{i}/tool"), format!("no tool '{}' in {domain}: use one of {}", call.tool, names.join(", ")));
        };
        if let Err(e) = tool.arguments_of(&call.arguments) {
            let field = if e.field.is_empty() { String::new() } else { format!("/{}", e.field.replace("].", "/").replace('[', "/")) };
            return bad(&format!("/reference/{i}/arguments{field}"), e.message);
        }
        reference.push(Call::new(tool.name, call.arguments.clone()));
    }
    if spec.expect.is_empty() {
        return bad("/expect", "no check: a task needs at least one".to_owned());
    }
    let mut checks = Vec::new();
    for (i, check) in spec.expect.iter().enumerate() {
        checks.push(self::check(check).map_err(|(p, m)| (format!("/expect/{i}{p}"), m))?);
    }
    let mut alternatives = Vec::new();
    for (i, pattern) in spec.alternatives.iter().enumerate() {
        if !pattern.starts_with('/') {
            return bad(&format!("/alternatives/{i}"), format!("'{pattern}' is not a JSON pointer (it starts with /)"));
        }
        alternatives.push(intern(pattern));
    }
    // The one place a task from a file is made.
    Ok(Task {
        id: spec.id.clone(),
        domain,
        level: spec.level,
        template,
        slots,
        today,
        initial: Arc::new(initial),
        reference,
        checks,
        alternatives,
        // Task files hold no conversations yet: every slot is in the description.
        conversation: None,
        expected: Default::default(),
    })
}

/// An id is `domain/kind/name` in plain characters.
fn check_id(id: &str, domain: Domain) -> Result<(), String> {
    let parts: Vec<&str> = id.split('/').collect();
    let plain = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if id.len() > 100 || parts.len() != 3 || !parts.iter().all(|p| plain(p)) {
        return Err(format!("'{id}' is not domain/kind/name (letters, digits, - _ . only, at most 100 characters)"));
    }
    if parts[0] != domain.name() {
        return Err(format!("'{id}' does not start with its domain, {domain}/"));
    }
    Ok(())
}

/// The slots, with names a template can hold.
fn slots(spec: &TaskSpec) -> Result<Vec<Slot>, Problem> {
    spec.slots
        .iter()
        .map(|(name, value)| {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err((format!("/slots/{}", escape(name)), format!("slot name '{name}' is not letters, digits and _")));
            }
            Ok(Slot { name: intern(name), value: value.clone() })
        })
        .collect()
}

/// The placeholders of a phrasing, or the first one it does not close.
fn placeholders(text: &str) -> Result<Vec<&str>, String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| format!("a '{{' is not closed in '{text}'"))?;
        found.push(&after[..close]);
        rest = &after[close + 1..];
    }
    Ok(found)
}

/// The description and its variants, checked against the slots and interned.
fn template(spec: &TaskSpec) -> Result<&'static Template, Problem> {
    let declared: BTreeSet<&str> = spec.slots.iter().map(|(n, _)| n.as_str()).collect();
    // Every slot is said in every phrasing: the agent reads the description, not the slots.
    let check = |pointer: String, text: &str| -> Result<(), Problem> {
        if text.trim().is_empty() {
            return Err((pointer, "the description is empty".to_owned()));
        }
        let used = placeholders(text).map_err(|m| (pointer.clone(), m))?;
        for name in &used {
            if !declared.contains(name) {
                return Err((pointer, format!("placeholder {{{name}}} is not a slot: add it to slots")));
            }
        }
        if let Some(unsaid) = declared.iter().find(|name| !used.contains(name)) {
            let message = format!(
                "slot '{unsaid}' is not in this text: the agent reads the text, not the slots, so write {{{unsaid}}} where it belongs"
            );
            return Err((pointer, message));
        }
        Ok(())
    };
    check("/description".to_owned(), &spec.description)?;
    let mut variants = Vec::new();
    for (i, variant) in spec.variants.iter().enumerate() {
        check(format!("/variants/{i}/text"), &variant.text)?;
        let mut tags = Vec::new();
        for (j, tag) in variant.tags.iter().enumerate() {
            let structural = Level::Heavy.relations().iter().copied().filter(|r| r.is_structural());
            let Some(relation) = structural.clone().find(|r| r.name() == tag) else {
                let names: Vec<&str> = structural.map(Relation::name).collect();
                return Err((format!("/variants/{i}/tags/{j}"), format!("'{tag}' is not a structural relation: use {}", names.join(", "))));
            };
            tags.push(relation);
        }
        variants.push((tags, variant.text.clone()));
    }
    Ok(intern_template(&spec.description, variants))
}

/// The initial state and today: the whole state, or a fixture with changes.
fn initial(spec: &TaskSpec, domain: Domain) -> Result<(World, Date), Problem> {
    let today = match &spec.today {
        Some(text) => Some(Date::parse(text).ok_or_else(|| ("/today".to_owned(), format!("'{text}' is not a date (YYYY-MM-DD)")))?),
        None => None,
    };
    let (state, today) = match (&spec.state, &spec.fixture) {
        (Some(state), None) => {
            if !spec.changes.is_empty() {
                return Err(("/changes".to_owned(), "changes apply to a fixture: give the whole state or a fixture".to_owned()));
            }
            (
                state.clone(),
                today.ok_or_else(|| ("/today".to_owned(), "missing field `today` (a task with a whole state needs one)".to_owned()))?,
            )
        }
        (None, Some(id)) => {
            let Some(fixture) = crate::task(id) else {
                return Err(("/fixture".to_owned(), format!("no built-in task '{id}' (`toolenv tasks` lists them)")));
            };
            if fixture.domain != domain {
                return Err(("/fixture".to_owned(), format!("'{id}' is a {} task, not {domain}", fixture.domain)));
            }
            let mut state = fixture.initial_json().clone();
            for (path, value) in &spec.changes {
                change(&mut state, path, value).map_err(|m| (format!("/changes/{}", escape(path)), m))?;
            }
            (state, today.unwrap_or(fixture.today))
        }
        (Some(_), Some(_)) => return Err(("/fixture".to_owned(), "give the whole state or a fixture, not both".to_owned())),
        (None, None) => return Err(("/state".to_owned(), "missing field `state` (or `fixture`)".to_owned())),
    };
    let world = domain.world_of(state).map_err(|e| match spec.fixture {
        // The state a fixture and changes make has no place in the file: said in the message.
        Some(_) => ("/changes".to_owned(), format!("the fixture's state after the changes, at {}: {}", e.pointer, e.message)),
        None => (format!("/state{}", e.pointer), e.message),
    })?;
    Ok((world, today))
}

/// Sets (or with `null` removes) the value at a JSON pointer whose parent exists.
fn change(state: &mut Value, path: &str, value: &Value) -> Result<(), String> {
    let (parent, key) = path.rsplit_once('/').ok_or_else(|| format!("'{path}' is not a JSON pointer (it starts with /)"))?;
    let key = key.replace("~1", "/").replace("~0", "~");
    let Some(Value::Object(map)) = state.pointer_mut(parent) else {
        return Err(format!("the fixture has no object at '{parent}'"));
    };
    if value.is_null() {
        map.remove(&key).map(drop).ok_or_else(|| format!("the fixture has no '{key}' to remove"))
    } else {
        map.insert(key, value.clone());
        Ok(())
    }
}

/// A check of the expected outcome; the pointer is relative to it.
fn check(spec: &CheckSpec) -> Result<Check, Problem> {
    let path = |path: &str| {
        if path.is_empty() || path.starts_with('/') {
            Ok(path.to_owned())
        } else {
            Err(("/path".to_owned(), format!("'{path}' is not a JSON pointer")))
        }
    };
    let facts = |facts: &[FactSpec]| -> Result<Vec<Fact>, Problem> {
        if facts.is_empty() {
            return Err(("/facts".to_owned(), "no fact: say what the text must state".to_owned()));
        }
        Ok(facts.iter().map(fact).collect())
    };
    Ok(match spec {
        CheckSpec::Equals { name, path: p, expected } => Check::equals(name, path(p)?, expected.clone()),
        CheckSpec::Present { name, path: p } => Check::present(name, path(p)?),
        CheckSpec::Text { name, path: p, facts: f } => Check::text(name, path(p)?, facts(f)?),
        CheckSpec::Count { name, path: p, pattern, expected } => Check::count(name, path(p)?, pattern.clone(), *expected),
        CheckSpec::Answer { name, facts: f, example } => Check::answer(name, facts(f)?, example),
    })
}

fn fact(spec: &FactSpec) -> Fact {
    match spec {
        FactSpec::Says { label, any_of } => Fact::Says { label: intern(label), any_of: intern_list(any_of) },
        FactSpec::Amount { cents } => Fact::Amount { cents: *cents },
        FactSpec::Never { label, any_of } => Fact::Never { label: intern(label), any_of: intern_list(any_of) },
        FactSpec::Mentions { label, phrase } => Fact::Mentions { label: label.clone(), phrase: phrase.clone() },
        FactSpec::Omits { label, phrase } => Fact::Omits { label: label.clone(), phrase: phrase.clone() },
    }
}

/// Runs the reference solution on the initial state: every call must be
/// accepted (a refusal is a reference that does not do what it says).
fn check_reference(task: &Task) -> Result<(), Problem> {
    let mut world = World::clone(&task.initial);
    for (i, call) in task.reference.iter().enumerate() {
        let tool = task.domain.tool(call.tool).ok_or_else(|| (format!("/reference/{i}/tool"), "no such tool".to_owned()))?;
        let args = tool.arguments_of(&call.arguments).map_err(|e| (format!("/reference/{i}/arguments"), e.message))?;
        if let (Err(e), _) = world.apply(tool, &args, &task.context()) {
            return Err((format!("/reference/{i}"), format!("the domain refuses this call: {}: {}", e.code, e.message)));
        }
    }
    Ok(())
}

/// A template's phrasings: the canonical text and each variant's tags and text.
type Phrasings = (String, Vec<(Vec<Relation>, String)>);

/// What loaded tasks keep for the program's life, once per distinct value.
#[derive(Default)]
struct Interned {
    texts: BTreeSet<&'static str>,
    lists: BTreeMap<Vec<String>, &'static [&'static str]>,
    templates: BTreeMap<Phrasings, &'static Template>,
}

static INTERNED: Mutex<Option<Interned>> = Mutex::new(None);

fn with_interned<T>(f: impl FnOnce(&mut Interned) -> T) -> T {
    // The lock guards plain maps; a panic elsewhere leaves them usable.
    let mut guard = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Interned::default))
}

/// A text that lives as long as the program, leaked once per distinct text.
fn intern(text: &str) -> &'static str {
    with_interned(|i| intern_in(i, text))
}

fn intern_in(interned: &mut Interned, text: &str) -> &'static str {
    if let Some(&kept) = interned.texts.get(text) {
        return kept;
    }
    let kept: &'static str = Box::leak(text.to_owned().into_boxed_str());
    interned.texts.insert(kept);
    kept
}

fn intern_list(list: &[String]) -> &'static [&'static str] {
    with_interned(|i| {
        if let Some(&kept) = i.lists.get(list) {
            return kept;
        }
        let items: Vec<&'static str> = list.iter().map(|t| intern_in(i, t)).collect();
        let kept: &'static [&'static str] = Box::leak(items.into_boxed_slice());
        i.lists.insert(list.to_vec(), kept);
        kept
    })
}

fn intern_template(text: &str, variants: Vec<(Vec<Relation>, String)>) -> &'static Template {
    with_interned(|i| {
        let key = (text.to_owned(), variants);
        if let Some(&kept) = i.templates.get(&key) {
            return kept;
        }
        let leaked: Vec<Variant> = key
            .1
            .iter()
            .map(|(tags, text)| Variant { tags: Box::leak(tags.clone().into_boxed_slice()), text: intern_in(i, text) })
            .collect();
        let template = Template { text: intern_in(i, text), variants: Box::leak(leaked.into_boxed_slice()) };
        let kept: &'static Template = Box::leak(Box::new(template));
        i.templates.insert(key, kept);
        kept
    })
}
