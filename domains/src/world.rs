//! What a domain is, and the registry that lists them.
//!
//! A domain is a folder, `domains/src/<name>/`, whose state type implements
//! [`DomainState`]: its tools (each declared once, with its handler), its
//! drifted result shape, its perturbation lexicon and its tasks. The
//! registry (the [`registry!`] invocation in `lib.rs`) lists the domains
//! once; [`Domain`], [`World`] and everything that iterates domains are
//! generated from it, so a domain that lacks a piece does not compile.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::Domain;
use crate::cheats::Undo;
use crate::date::Date;
use crate::drift;
use crate::oracle::Changes;
use crate::perturb::Synonym;
use crate::task::Task;
use crate::tool::{Args, DomainError, ToolResult, ToolSpec};

/// What a domain provides.
///
/// A call is a pure transition of the state. A tool checks every rule before
/// it changes anything, so a call that returns a [`DomainError`] leaves the
/// state exactly as it was, and it says whether it changed the state;
/// [`World::apply`] checks both in debug builds (so every test does) instead
/// of copying and comparing the state on every call. Read-only tools must not
/// change the state. Fields kept out of the JSON (next-id counters) may
/// change only together with the JSON.
///
/// Its solver strategy (the [`crate::solver::Strategy`] supertrait) lives in
/// the domain's `solver.rs`.
pub(crate) trait DomainState: Clone + PartialEq + Serialize + Sized + crate::solver::Strategy + 'static {
    /// The tools, in the order agents see them.
    const TOOLS: &'static [Tool<Self>];
    /// How the domain's results look after schema drift (the v2 shape).
    const DRIFT: drift::Mapping;
    /// Words and phrases the perturbation layer may replace, with their
    /// meaning-preserving alternatives.
    const SYNONYMS: &'static [Synonym];
    /// Irrelevant sentences the perturbation layer may add to a description.
    const DISTRACTORS: &'static [&'static str];
    /// How writes are undone with the domain's own tools (for the cheat
    /// corpus: a wrong write undone still leaves a trace).
    const UNDO: &'static [Undo];

    /// The domain's tasks of the suite, in a fixed order.
    fn tasks() -> Vec<Task>;

    /// The generated task of an origin of this domain (its `generate.rs`).
    fn generate(origin: &crate::generate::Origin) -> Task;

    /// The records `end` changed in `initial`, collection by collection
    /// (each collection as [`Changes::map`] or [`Changes::list`] with the
    /// name its JSON gives it), found without writing the states as JSON.
    fn changes(initial: &Self, end: &Self) -> Changes;
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
pub(crate) type Handler<S> = fn(&mut S, &Args, &Context) -> Result<Reply, DomainError>;

/// How a read-only tool runs: a pure function of its domain's state, so it
/// runs on a state shared by many episodes without copying it.
pub(crate) type Reader<S> = fn(&S, &Args, &Context) -> Result<Reply, DomainError>;

/// A tool's handler: a write or a read.
pub(crate) enum Run<S> {
    /// A tool that may change the state.
    Write(Handler<S>),
    /// A tool that never does.
    Read(Reader<S>),
}

/// One tool of a domain: what agents are told of it, and what it does.
pub(crate) struct Tool<S> {
    /// The name, description and parameters.
    pub(crate) spec: ToolSpec,
    /// The handler, called with arguments already validated against `spec`.
    pub(crate) run: Run<S>,
}

impl<S> Tool<S> {
    /// Declares a tool that may write (its spec says `mutates_state`).
    pub(crate) const fn new(spec: ToolSpec, run: Handler<S>) -> Self {
        assert!(spec.mutates_state, "a tool that writes says so in its spec");
        Self { spec, run: Run::Write(run) }
    }

    /// Declares a read-only tool.
    pub(crate) const fn read(spec: ToolSpec, run: Reader<S>) -> Self {
        assert!(!spec.mutates_state, "a read-only tool says so in its spec");
        Self { spec, run: Run::Read(run) }
    }

    /// Runs the handler on a state it may change.
    pub(crate) fn call(&self, state: &mut S, args: &Args, ctx: &Context) -> Result<Reply, DomainError> {
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
    pub(crate) domain: Domain,
    pub(crate) index: usize,
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
pub(crate) struct Reply {
    /// The result, canonical JSON (see [`crate::json::to_canonical`]).
    pub(crate) text: String,
    /// Whether the state changed.
    pub(crate) changed: bool,
}

impl Reply {
    /// The answer of a call that left the state as it was.
    pub(crate) fn read<T: Serialize + ?Sized>(result: &T) -> Self {
        Self { text: crate::json::to_canonical(result), changed: false }
    }

    /// The answer of a call that changed the state.
    pub(crate) fn wrote<T: Serialize + ?Sized>(result: &T) -> Self {
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
pub(crate) fn apply<S: DomainState>(state: &mut S, index: usize, args: &Args, ctx: &Context) -> (ToolResult, bool) {
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
pub(crate) fn read<S: DomainState>(state: &S, index: usize, args: &Args, ctx: &Context) -> Option<ToolResult> {
    match S::TOOLS[index].run {
        Run::Read(run) => Some(run(state, args, ctx).map(|reply| reply.text)),
        Run::Write(_) => None,
    }
}

/// Generates [`Domain`], [`World`] and their per-domain dispatch from the
/// list of domains: `Variant => module`, where `module` is the domain's
/// folder, its name and the prefix of its task ids. (The `pub mod` lines sit
/// beside the invocation, not inside the macro, so rustfmt finds the files.)
macro_rules! registry {
    ($($(#[doc = $doc:literal])+ $variant:ident => $module:ident,)+) => {
        /// One of the simulated domains.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        #[serde(rename_all = "lowercase")]
        pub enum Domain {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl Domain {
            /// How many domains there are.
            pub const COUNT: usize = [$(stringify!($variant)),+].len();

            /// Every domain, in registry order.
            pub const ALL: [Domain; Domain::COUNT] = [$(Domain::$variant),+];

            /// The domain's lowercase name, as used in task ids.
            pub fn name(self) -> &'static str {
                match self {
                    $(Domain::$variant => stringify!($module),)+
                }
            }

            /// The domain's place in [`Domain::ALL`].
            pub fn index(self) -> usize {
                self as usize
            }

            fn tool_count(self) -> usize {
                match self {
                    $(Domain::$variant => <$module::State as $crate::world::DomainState>::TOOLS.len(),)+
                }
            }

            /// The spec of the tool at `index` (< `tool_count`).
            fn tool_spec(self, index: usize) -> &'static $crate::ToolSpec {
                match self {
                    $(Domain::$variant => &<$module::State as $crate::world::DomainState>::TOOLS[index].spec,)+
                }
            }

            /// The domain's drifted result shape.
            pub(crate) fn drift(self) -> &'static $crate::drift::Mapping {
                match self {
                    $(Domain::$variant => &<$module::State as $crate::world::DomainState>::DRIFT,)+
                }
            }

            /// The domain's perturbation synonyms.
            pub(crate) fn synonyms(self) -> &'static [$crate::perturb::Synonym] {
                match self {
                    $(Domain::$variant => <$module::State as $crate::world::DomainState>::SYNONYMS,)+
                }
            }

            /// The domain's own distractor sentences.
            pub(crate) fn distractors(self) -> &'static [&'static str] {
                match self {
                    $(Domain::$variant => <$module::State as $crate::world::DomainState>::DISTRACTORS,)+
                }
            }

            /// How the domain's writes are undone.
            pub(crate) fn undo_rules(self) -> &'static [$crate::cheats::Undo] {
                match self {
                    $(Domain::$variant => <$module::State as $crate::world::DomainState>::UNDO,)+
                }
            }

            /// Plays a task of the domain with the solver's strategy.
            pub(crate) fn solve(self, task: &$crate::Task, session: &mut $crate::solver::Session<'_>) -> $crate::solver::Step<()> {
                match self {
                    $(Domain::$variant => <$module::State as $crate::solver::Strategy>::solve(task, session),)+
                }
            }

            /// The generated task of an origin of the domain.
            pub(crate) fn generate(self, origin: $crate::generate::Origin) -> $crate::Task {
                match self {
                    $(Domain::$variant => <$module::State as $crate::world::DomainState>::generate(&origin),)+
                }
            }

            /// The domain's tasks of the suite.
            fn tasks(self) -> Vec<$crate::Task> {
                match self {
                    $(Domain::$variant => <$module::State as $crate::world::DomainState>::tasks(),)+
                }
            }
        }

        /// The state of one episode's world, in one of the domains.
        #[derive(Debug, Clone, PartialEq)]
        pub enum World {
            $($(#[doc = $doc])+ $variant($module::State),)+
        }

        impl World {
            /// The world's domain.
            pub fn domain(&self) -> Domain {
                match self {
                    $(World::$variant(_) => Domain::$variant,)+
                }
            }

            /// The state as JSON: what the oracle judges, diffs and hashes.
            pub fn to_json(&self) -> serde_json::Value {
                let value = match self {
                    $(World::$variant(s) => serde_json::to_value(s),)+
                };
                // The states are plain structs of strings, numbers and ordered maps.
                value.unwrap_or(serde_json::Value::Null)
            }

            /// The records this state changed in `initial` (see
            /// [`crate::oracle::Changes`]): what the oracle judges.
            pub(crate) fn changes(&self, initial: &World) -> $crate::oracle::Changes {
                let changes = match (initial, self) {
                    $((World::$variant(start), World::$variant(end)) => <$module::State as $crate::world::DomainState>::changes(start, end),)+
                    _ => $crate::oracle::Changes::between(&initial.to_json(), &self.to_json()),
                };
                #[cfg(debug_assertions)]
                {
                    let initial = initial.to_json();
                    let view = $crate::oracle::View { initial: &initial, changes: &changes };
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
            pub fn apply(&mut self, tool: $crate::world::ToolRef, args: &$crate::Args, ctx: &$crate::Context) -> ($crate::ToolResult, bool) {
                assert_eq!(tool.domain, self.domain(), "{} is not a tool of {}", tool.name, self.domain());
                match self {
                    $(World::$variant(s) => $crate::world::apply(s, tool.index, args, ctx),)+
                }
            }

            /// Runs one validated call of a read-only tool on a state that
            /// may be shared; `None` when the tool writes.
            ///
            /// # Panics
            /// If `tool` is not one of this world's domain's tools.
            pub fn read(&self, tool: $crate::world::ToolRef, args: &$crate::Args, ctx: &$crate::Context) -> Option<$crate::ToolResult> {
                assert_eq!(tool.domain, self.domain(), "{} is not a tool of {}", tool.name, self.domain());
                match self {
                    $(World::$variant(s) => $crate::world::read(s, tool.index, args, ctx),)+
                }
            }

            /// Applies one validated call to a state shared copy-on-write: a
            /// read runs on it as it is, a write copies it first when another
            /// holder shares it.
            pub fn apply_shared(world: &mut std::sync::Arc<World>, tool: $crate::world::ToolRef, args: &$crate::Args, ctx: &$crate::Context) -> ($crate::ToolResult, bool) {
                match world.read(tool, args, ctx) {
                    Some(result) => (result, false),
                    None => std::sync::Arc::make_mut(world).apply(tool, args, ctx),
                }
            }
        }
    };
}

pub(crate) use registry;

impl Domain {
    /// Parses a domain name (as [`Domain::name`] writes it).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The domain's tools.
    pub fn tools(self) -> Tools {
        Tools(self)
    }

    /// Finds one of the domain's tools by name.
    pub fn tool(self, name: &str) -> Option<ToolRef> {
        self.tools().find(name)
    }

    /// The suite's tasks of every domain, in registry order.
    pub(crate) fn suite() -> Vec<Task> {
        Self::ALL.into_iter().flat_map(Domain::tasks).collect()
    }
}

impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Helpers for the domains' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use serde_json::Value;

    use super::{Context, DomainState};
    use crate::date::Date;
    use crate::tool::DomainError;

    /// A tool's result read back as a JSON value, or its domain error.
    pub(crate) type Answer = Result<Value, DomainError>;

    /// Calls one tool of a domain state directly, with arguments that must be
    /// valid for its schema, on the given day. No rollback on error; the
    /// result text must be canonical JSON.
    pub(crate) fn call<S: DomainState>(state: &mut S, today: Date, tool: &str, args: Value) -> Answer {
        let tool = S::TOOLS.iter().find(|t| t.spec.name == tool).unwrap_or_else(|| panic!("no tool {tool}"));
        let name = tool.spec.name;
        let args = tool.spec.parse_arguments(&args.to_string()).unwrap_or_else(|e| panic!("invalid arguments for {name}: {e}"));
        let reply = tool.call(state, &args, &Context { today })?;
        let value: Value = serde_json::from_str(&reply.text).unwrap_or_else(|e| panic!("{name} wrote invalid json: {e}"));
        assert_eq!(crate::json::canonical(&value), reply.text, "{name} writes canonical json");
        Ok(value)
    }
}
