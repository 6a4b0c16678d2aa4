//! What a domain is: a state type with a table of tools ([`DomainState`]),
//! the handle of a registered domain ([`Domain`]) and one episode's state in
//! any domain ([`World`]).
//!
//! A domain is a folder of `toolenv-domains` whose state type implements
//! [`DomainState`]; the registry there lists the domains once and makes each
//! one's [`DomainDef`], so the engine reaches a domain's tools, drift and
//! changes through the handle without naming the domain. What the layers
//! above need of a domain (a solver strategy, undo rules, a lexicon, a
//! generator) are extension traits of that crate, which its registry
//! requires as it requires this one.

use std::any::Any;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    date::Date,
    diff::Changes,
    drift,
    task::Task,
    tool::{Args, DomainError, ToolResult, ToolSpec},
};

/// What a domain provides.
///
/// A call is a pure transition of the state. A tool checks every rule before
/// it changes anything, so a call that returns a [`DomainError`] leaves the
/// state exactly as it was, and it says whether it changed the state;
/// [`World::apply`] checks both in debug builds (so every test does) instead
/// of copying and comparing the state on every call. Read-only tools must not
/// change the state. Fields kept out of the JSON (next-id counters) may
/// change only together with the JSON.
pub trait DomainState: Clone + PartialEq + fmt::Debug + Serialize + Send + Sync + Sized + 'static {
    /// The tools, in the order agents see them.
    const TOOLS: &'static [Tool<Self>];
    /// How the domain's results look after schema drift (the v2 shape).
    const DRIFT: drift::Mapping;

    /// The domain's tasks of the suite, in a fixed order.
    fn tasks() -> Vec<Task>;

    /// The records `end` changed in `initial`, collection by collection
    /// (each collection as [`Changes::map`] or [`Changes::list`] with the
    /// name its JSON gives it), found without writing the states as JSON.
    fn changes(initial: &Self, end: &Self) -> Changes;
}

/// A domain state the registry has listed: it knows its own [`Domain`].
/// Implemented by the registry, never by hand.
pub trait Registered: DomainState {
    /// The state's domain.
    const DOMAIN: Domain;
}

#[derive(Debug)]
/// What the engine knows of a registered domain; made by the registry of
/// `toolenv-domains` for each domain, once ([`DomainDef::of`]).
pub struct DomainDef {
    /// The domain's lowercase name, as used in task ids.
    pub name: &'static str,
    /// The domain's place in the registry.
    pub index: usize,
    tool_count: usize,
    tool_spec: fn(usize) -> &'static ToolSpec,
    drift: fn() -> &'static drift::Mapping,
    tasks: fn() -> Vec<Task>,
}

impl DomainDef {
    /// The definition of the domain whose state is `S`, at `index` in the registry.
    pub const fn of<S: DomainState>(name: &'static str, index: usize) -> Self {
        Self { name, index, tool_count: S::TOOLS.len(), tool_spec: spec_of::<S>, drift: drift_of::<S>, tasks: S::tasks }
    }
}

fn spec_of<S: DomainState>(index: usize) -> &'static ToolSpec {
    &S::TOOLS[index].spec
}

fn drift_of<S: DomainState>() -> &'static drift::Mapping {
    &S::DRIFT
}

/// One of the simulated domains: a handle to its [`DomainDef`]. Domains
/// compare and order by their place in the registry.
#[derive(Clone, Copy)]
pub struct Domain(&'static DomainDef);

impl Domain {
    /// The handle of a definition (for the registry).
    pub const fn new(def: &'static DomainDef) -> Self {
        Self(def)
    }

    /// The domain's lowercase name, as used in task ids.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The domain's place in the registry.
    pub fn index(self) -> usize {
        self.0.index
    }

    /// The domain's tools.
    pub fn tools(self) -> Tools {
        Tools(self)
    }

    /// Finds one of the domain's tools by name.
    pub fn tool(self, name: &str) -> Option<ToolRef> {
        self.tools().find(name)
    }

    /// The domain's drifted result shape.
    pub fn drift(self) -> &'static drift::Mapping {
        (self.0.drift)()
    }

    /// The domain's tasks of the suite, in a fixed order.
    pub fn tasks(self) -> Vec<Task> {
        (self.0.tasks)()
    }

    fn tool_count(self) -> usize {
        self.0.tool_count
    }

    fn tool_spec(self, index: usize) -> &'static ToolSpec {
        (self.0.tool_spec)(index)
    }
}

impl PartialEq for Domain {
    fn eq(&self, other: &Self) -> bool {
        self.index() == other.index()
    }
}

impl Eq for Domain {}

impl PartialOrd for Domain {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Domain {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index().cmp(&other.index())
    }
}

impl std::hash::Hash for Domain {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index().hash(state);
    }
}

impl fmt::Debug for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl Serialize for Domain {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// The state of one episode's world, in any registered domain.
pub struct World(Box<dyn State>);

/// A registered domain state, behind [`World`].
trait State: Send + Sync + fmt::Debug {
    fn domain(&self) -> Domain;
    fn boxed(&self) -> Box<dyn State>;
    fn as_any(&self) -> &dyn Any;
    fn to_json(&self) -> Value;
    fn same(&self, other: &dyn State) -> bool;
    fn apply(&mut self, index: usize, args: &Args, ctx: &Context) -> (ToolResult, bool);
    fn read(&self, index: usize, args: &Args, ctx: &Context) -> Option<ToolResult>;
    fn changes_from(&self, initial: &dyn State) -> Option<Changes>;
}

impl<S: Registered> State for S {
    fn domain(&self) -> Domain {
        S::DOMAIN
    }

    fn boxed(&self) -> Box<dyn State> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn to_json(&self) -> Value {
        // The states are plain structs of strings, numbers and ordered maps.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn same(&self, other: &dyn State) -> bool {
        other.as_any().downcast_ref::<S>() == Some(self)
    }

    fn apply(&mut self, index: usize, args: &Args, ctx: &Context) -> (ToolResult, bool) {
        apply(self, index, args, ctx)
    }

    fn read(&self, index: usize, args: &Args, ctx: &Context) -> Option<ToolResult> {
        read(self, index, args, ctx)
    }

    fn changes_from(&self, initial: &dyn State) -> Option<Changes> {
        initial.as_any().downcast_ref::<S>().map(|initial| S::changes(initial, self))
    }
}

impl World {
    /// The world of a registered domain's state.
    pub fn new<S: Registered>(state: S) -> Self {
        Self(Box::new(state))
    }

    /// The state, when it is of domain state type `S`.
    pub fn state<S: Registered>(&self) -> Option<&S> {
        self.0.as_any().downcast_ref()
    }

    /// The world's domain.
    pub fn domain(&self) -> Domain {
        self.0.domain()
    }

    /// The state as JSON: what the oracle judges, diffs and hashes.
    pub fn to_json(&self) -> Value {
        self.0.to_json()
    }

    /// The records this state changed in `initial` (see [`Changes`]): what
    /// the oracle judges.
    pub fn changes(&self, initial: &World) -> Changes {
        let changes = self.0.changes_from(initial.0.as_ref()).unwrap_or_else(|| Changes::between(&initial.to_json(), &self.to_json()));
        #[cfg(debug_assertions)]
        {
            let initial = initial.to_json();
            let view = crate::diff::View { initial: &initial, changes: &changes };
            assert_eq!(view.materialize(), self.to_json(), "a domain's changes() lists every collection its JSON has");
        }
        changes
    }

    /// Applies one validated call of one of the domain's tools; returns
    /// its result (canonical JSON text) and whether the state changed.
    /// On a domain error the state is left exactly as it was.
    ///
    /// # Panics
    /// If `tool` is not one of this world's domain's tools: a tool is
    /// found through the episode's own domain.
    pub fn apply(&mut self, tool: ToolRef, args: &Args, ctx: &Context) -> (ToolResult, bool) {
        assert_eq!(tool.domain, self.domain(), "{} is not a tool of {}", tool.name, self.domain());
        self.0.apply(tool.index, args, ctx)
    }

    /// Runs one validated call of a read-only tool on a state that may be
    /// shared; `None` when the tool writes.
    ///
    /// # Panics
    /// If `tool` is not one of this world's domain's tools.
    pub fn read(&self, tool: ToolRef, args: &Args, ctx: &Context) -> Option<ToolResult> {
        assert_eq!(tool.domain, self.domain(), "{} is not a tool of {}", tool.name, self.domain());
        self.0.read(tool.index, args, ctx)
    }

    /// Applies one validated call to a state shared copy-on-write: a read
    /// runs on it as it is, a write copies it first when another holder
    /// shares it.
    pub fn apply_shared(world: &mut Arc<World>, tool: ToolRef, args: &Args, ctx: &Context) -> (ToolResult, bool) {
        match world.read(tool, args, ctx) {
            Some(result) => (result, false),
            None => Arc::make_mut(world).apply(tool, args, ctx),
        }
    }
}

impl Clone for World {
    fn clone(&self) -> Self {
        Self(self.0.boxed())
    }
}

impl PartialEq for World {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_ref())
    }
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A collection of a domain's state, shared by the states copied from one
/// another until one of them writes to it (copy on write): copying a state
/// (an episode's first write) copies only the collections it writes, and
/// finding what an episode changed skips the collections it never wrote.
/// Reads and writes go through `Deref`/`DerefMut`; it serializes as the
/// collection itself.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Shared<T>(Arc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T> From<T> for Shared<T> {
    fn from(collection: T) -> Self {
        Self(Arc::new(collection))
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Arc::make_mut(&mut self.0)
    }
}

impl<'a, T> IntoIterator for &'a Shared<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        self.0.as_ref().into_iter()
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Shared<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Self::from)
    }
}

/// How a tool that writes runs: a pure transition of its domain's state.
pub type Handler<S> = fn(&mut S, &Args, &Context) -> Result<Reply, DomainError>;

/// How a read-only tool runs: a pure function of its domain's state, so it
/// runs on a state shared by many episodes without copying it.
pub type Reader<S> = fn(&S, &Args, &Context) -> Result<Reply, DomainError>;

/// A tool's handler: a write or a read.
#[derive(Debug)]
pub enum Run<S> {
    /// A tool that may change the state.
    Write(Handler<S>),
    /// A tool that never does.
    Read(Reader<S>),
}

/// One tool of a domain: what agents are told of it, and what it does.
#[derive(Debug)]
pub struct Tool<S> {
    /// The name, description and parameters.
    pub spec: ToolSpec,
    /// The handler, called with arguments already validated against `spec`.
    pub run: Run<S>,
}

impl<S> Tool<S> {
    /// Declares a tool that may write (its spec says `mutates_state`).
    pub const fn new(spec: ToolSpec, run: Handler<S>) -> Self {
        assert!(spec.mutates_state, "a tool that writes says so in its spec");
        Self { spec, run: Run::Write(run) }
    }

    /// Declares a read-only tool.
    pub const fn read(spec: ToolSpec, run: Reader<S>) -> Self {
        assert!(!spec.mutates_state, "a read-only tool says so in its spec");
        Self { spec, run: Run::Read(run) }
    }

    /// Runs the handler on a state it may change.
    pub fn call(&self, state: &mut S, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
        match self.run {
            Run::Write(run) => run(state, args, ctx),
            Run::Read(run) => run(state, args, ctx),
        }
    }
}

/// One of a domain's tools, as found by name: its spec (which it
/// dereferences to) and its place in the domain's table, so a call is
/// dispatched without a second lookup.
#[derive(Debug, Clone, Copy)]
pub struct ToolRef {
    domain: Domain,
    index: usize,
    spec: &'static ToolSpec,
}

impl ToolRef {
    /// The tool's spec.
    pub fn spec(&self) -> &'static ToolSpec {
        self.spec
    }
}

impl std::ops::Deref for ToolRef {
    type Target = ToolSpec;

    fn deref(&self) -> &ToolSpec {
        self.spec
    }
}

/// A domain's tools, in the order agents see them.
#[derive(Debug, Clone, Copy)]
pub struct Tools(Domain);

impl Tools {
    /// How many tools the domain has.
    pub fn len(self) -> usize {
        self.0.tool_count()
    }

    /// Whether the domain has no tools (none has).
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The spec of the tool at `index`, in the order agents see them.
    pub fn get(self, index: usize) -> Option<&'static ToolSpec> {
        (index < self.len()).then(|| self.0.tool_spec(index))
    }

    /// The tools' specs, in order.
    pub fn iter(self) -> ToolsIter {
        ToolsIter { domain: self.0, range: 0..self.len() }
    }

    /// Finds a tool by name.
    pub fn find(self, name: &str) -> Option<ToolRef> {
        self.iter().position(|spec| spec.name == name).map(|index| ToolRef { domain: self.0, index, spec: self.0.tool_spec(index) })
    }
}

impl IntoIterator for Tools {
    type Item = &'static ToolSpec;
    type IntoIter = ToolsIter;

    fn into_iter(self) -> ToolsIter {
        self.iter()
    }
}

/// An iterator over a domain's tool specs, in order.
#[derive(Debug, Clone)]
pub struct ToolsIter {
    domain: Domain,
    range: std::ops::Range<usize>,
}

impl Iterator for ToolsIter {
    type Item = &'static ToolSpec;

    fn next(&mut self) -> Option<&'static ToolSpec> {
        self.range.next().map(|index| self.domain.tool_spec(index))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl ExactSizeIterator for ToolsIter {}

/// A tool's answer to a call it accepted: the result as canonical JSON text
/// and whether the call changed the state.
#[derive(Debug)]
pub struct Reply {
    /// The result, canonical JSON (see [`crate::json::to_canonical`]).
    pub text: String,
    /// Whether the state changed.
    pub changed: bool,
}

impl Reply {
    /// The answer of a call that left the state as it was.
    pub fn read<T: Serialize + ?Sized>(result: &T) -> Self {
        Self { text: crate::json::to_canonical(result), changed: false }
    }

    /// The answer of a call that changed the state.
    pub fn wrote<T: Serialize + ?Sized>(result: &T) -> Self {
        Self { text: crate::json::to_canonical(result), changed: true }
    }
}

/// What a tool call may read besides the state: fixed per episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// The episode's "today": the date relative phrases and time windows
    /// are measured from.
    pub today: Date,
}

/// Runs one tool of a state's table, checking the tools' contract where it
/// costs nothing in release builds.
fn apply<S: DomainState>(state: &mut S, index: usize, args: &Args, ctx: &Context) -> (ToolResult, bool) {
    let tool = &S::TOOLS[index];
    #[cfg(debug_assertions)]
    let before = state.clone();
    let result = tool.call(state, args, ctx);
    #[cfg(debug_assertions)]
    match &result {
        Err(error) => assert!(*state == before, "{} changed the state, then rejected the call: {error}", tool.spec.name),
        Ok(reply) => {
            assert_eq!(reply.changed, *state != before, "{} says whether it changed the state", tool.spec.name);
            assert!(tool.spec.mutates_state || !reply.changed, "read-only {} changed the state", tool.spec.name);
        }
    }
    match result {
        Ok(Reply { text, changed }) => (Ok(text), changed),
        Err(error) => (Err(error), false),
    }
}

/// Runs one read-only tool of a state's table; `None` for a tool that writes.
fn read<S: DomainState>(state: &S, index: usize, args: &Args, ctx: &Context) -> Option<ToolResult> {
    match S::TOOLS[index].run {
        Run::Read(run) => Some(run(state, args, ctx).map(|reply| reply.text)),
        Run::Write(_) => None,
    }
}
