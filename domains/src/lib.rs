//! Pure, deterministic simulated tool domains for testing LLM agents.
//!
//! Four domains (scheduling, travel, customer support, e-commerce), each a
//! state with tools whose calls are pure transitions; a suite of tasks, each
//! with an initial state, a reference solution and a state-based oracle; and
//! episodes that record every call. Nothing here does I/O, reads a clock or
//! uses unseeded randomness, so the same inputs always give the same
//! trajectory and verdict.
//!
//! Use a domain as a test fixture, in-process and without a network:
//!
//! ```
//! use toolenv_domains::{Episode, Outcome};
//!
//! let task = toolenv_domains::task("scheduling/book-meeting/001").expect("a suite task");
//! assert_eq!(task.description(), "Book a meeting about 'Review' on 2026-01-01 at 09:00.");
//!
//! let mut episode = Episode::new(task, 7, 0);
//! let record = episode.call("book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#)?;
//! assert!(matches!(record.outcome, Outcome::Result(_)));
//!
//! // A broken business rule is an ordinary outcome the agent can read.
//! let again = episode.call("book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Other"}"#)?;
//! assert!(matches!(&again.outcome, Outcome::Error(e) if e.code == "SLOT_TAKEN"));
//!
//! let verdict = episode.finish();
//! assert!(verdict.passed, "{}", verdict.diff_text());
//! assert_eq!(episode.state(), serde_json::json!({"calendar": {"2026-01-01": {"09:00": "Review"}}}));
//! # Ok::<(), toolenv_domains::CallError>(())
//! ```
#![forbid(unsafe_code)]

use std::sync::OnceLock;

pub mod agent;
pub mod attribution;
pub mod chaos;
pub mod cheats;
mod codec;
pub mod date;
mod delivery;
pub mod drift;
mod episode;
pub mod generate;
pub mod json;
pub mod masfire;
mod names;
mod oracle;
pub mod perturb;
pub mod solver;
mod task;
mod tool;
mod world;

pub use delivery::{Answer, Delivered, Delivery, Failure, FailureCode, Outcome};
pub use episode::{
    CLARIFICATION_CHECK, CallError, CallOptions, CallRecord, DEFAULT_MAX_CALLS, Episode, FaultRecord, FaultStats, ForkError,
    MAX_IDEMPOTENCY_BYTES, ReplayCall, RoleSpec, Source, TeamError, Trajectory, bus, replay_key,
};
pub use oracle::{COLLATERAL_CHECK, Check, CheckOutcome, DUPLICATE_CHECK, Fact, Verdict};
pub use task::{Call, Slot, Task, TaskRef};
pub use tool::{ArgError, Args, DomainError, MAX_ARGUMENTS_BYTES, Param, ParamType, ToolResult, ToolSpec};
pub use world::{Context, Shared, ToolRef, Tools, ToolsIter};

// The registry: every domain, once. Adding a domain is a folder under
// `src/`, its `pub mod` line and one line in the list (see README.md).
pub mod ecommerce;
pub mod scheduling;
pub mod support;
pub mod travel;

world::registry! {
    /// Calendar management.
    Scheduling => scheduling,
    /// Flight search and booking.
    Travel => travel,
    /// Support tickets, knowledge base and escalation.
    Support => support,
    /// Catalog, orders, coupons and returns.
    Ecommerce => ecommerce,
}

/// The verified suite: every domain's tasks, in registry order.
pub fn suite() -> &'static [Task] {
    static SUITE: OnceLock<Vec<Task>> = OnceLock::new();
    SUITE.get_or_init(Domain::suite)
}

/// Finds a task of the suite by id.
pub fn task(id: &str) -> Option<&'static Task> {
    suite().iter().find(|t| t.id == id)
}
