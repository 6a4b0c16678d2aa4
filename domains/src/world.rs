//! The four domains and the state of one episode's world.

use serde::Serialize;
use serde_json::Value;

use crate::date::Date;
use crate::tool::{Args, DomainError, ToolResult, ToolSpec};
use crate::{ecommerce, scheduling, support, travel};

/// What a domain's state type provides: its tools and their semantics.
///
/// A call is a pure transition of the state. A tool checks every rule before
/// it changes anything, so a call that returns a [`crate::DomainError`]
/// leaves the state exactly as it was, and it says whether it changed the
/// state; [`World::apply`] checks both in debug builds (so every test does)
/// instead of copying and comparing the state on every call. Read-only tools
/// must not change the state. Fields kept out of the JSON (next-id counters)
/// may change only together with the JSON.
pub(crate) trait DomainState: Clone + PartialEq + Serialize {
    /// The tools of the domain, in the order agents see them.
    const TOOLS: &'static [ToolSpec];

    /// Applies one validated call.
    fn call(&mut self, tool: &str, args: &Args, ctx: &Context) -> Result<Reply, DomainError>;
}

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

/// One of the four simulated domains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    /// Calendar management.
    Scheduling,
    /// Flight search and booking.
    Travel,
    /// Support tickets, knowledge base and escalation.
    Support,
    /// Catalog, orders, coupons and returns.
    Ecommerce,
}

impl Domain {
    /// Every domain, in a fixed order.
    pub const ALL: [Domain; 4] = [Domain::Scheduling, Domain::Travel, Domain::Support, Domain::Ecommerce];

    /// The domain's lowercase name, as used in task ids.
    pub fn name(self) -> &'static str {
        match self {
            Domain::Scheduling => "scheduling",
            Domain::Travel => "travel",
            Domain::Support => "support",
            Domain::Ecommerce => "ecommerce",
        }
    }

    /// Parses a domain name (as [`Domain::name`] writes it).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The domain's tools.
    pub fn tools(self) -> &'static [ToolSpec] {
        match self {
            Domain::Scheduling => scheduling::State::TOOLS,
            Domain::Travel => travel::State::TOOLS,
            Domain::Support => support::State::TOOLS,
            Domain::Ecommerce => ecommerce::State::TOOLS,
        }
    }

    /// Finds one of the domain's tools by name.
    pub fn tool(self, name: &str) -> Option<&'static ToolSpec> {
        self.tools().iter().find(|t| t.name == name)
    }
}

impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The state of one episode's world, in one of the domains.
#[derive(Debug, Clone, PartialEq)]
pub enum World {
    /// A calendar.
    Scheduling(scheduling::State),
    /// Flights and reservations.
    Travel(travel::State),
    /// Tickets and a knowledge base.
    Support(support::State),
    /// A shop.
    Ecommerce(ecommerce::State),
}

impl World {
    /// The world's domain.
    pub fn domain(&self) -> Domain {
        match self {
            World::Scheduling(_) => Domain::Scheduling,
            World::Travel(_) => Domain::Travel,
            World::Support(_) => Domain::Support,
            World::Ecommerce(_) => Domain::Ecommerce,
        }
    }

    /// The state as JSON: what the oracle judges, diffs and hashes.
    pub fn to_json(&self) -> Value {
        let value = match self {
            World::Scheduling(s) => serde_json::to_value(s),
            World::Travel(s) => serde_json::to_value(s),
            World::Support(s) => serde_json::to_value(s),
            World::Ecommerce(s) => serde_json::to_value(s),
        };
        // The states are plain structs of strings, numbers and ordered maps.
        value.unwrap_or(Value::Null)
    }

    /// Applies one validated call of one of the domain's tools; returns its
    /// result (canonical JSON text) and whether the state changed. On a
    /// domain error the state is left exactly as it was.
    pub fn apply(&mut self, tool: &ToolSpec, args: &Args, ctx: &Context) -> (ToolResult, bool) {
        fn apply<S: DomainState>(state: &mut S, tool: &ToolSpec, args: &Args, ctx: &Context) -> (ToolResult, bool) {
            // The tools' contract, checked where it costs nothing in release builds.
            #[cfg(debug_assertions)]
            let before = state.clone();
            let result = state.call(tool.name, args, ctx);
            #[cfg(debug_assertions)]
            match &result {
                Err(error) => assert!(*state == before, "{} changed the state, then rejected the call: {error}", tool.name),
                Ok(reply) => {
                    assert_eq!(reply.changed, *state != before, "{} says whether it changed the state", tool.name);
                    assert!(tool.mutates_state || !reply.changed, "read-only {} changed the state", tool.name);
                }
            }
            match result {
                Ok(Reply { text, changed }) => (Ok(text), changed),
                Err(error) => (Err(error), false),
            }
        }
        match self {
            World::Scheduling(s) => apply(s, tool, args, ctx),
            World::Travel(s) => apply(s, tool, args, ctx),
            World::Support(s) => apply(s, tool, args, ctx),
            World::Ecommerce(s) => apply(s, tool, args, ctx),
        }
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
        let spec = S::TOOLS.iter().find(|t| t.name == tool).unwrap_or_else(|| panic!("no tool {tool}"));
        let args = spec.parse_arguments(&args.to_string()).unwrap_or_else(|e| panic!("invalid arguments for {tool}: {e}"));
        let reply = state.call(tool, &args, &Context { today })?;
        let value: Value = serde_json::from_str(&reply.text).unwrap_or_else(|e| panic!("{tool} wrote invalid json: {e}"));
        assert_eq!(crate::json::canonical(&value), reply.text, "{tool} writes canonical json");
        Ok(value)
    }
}
