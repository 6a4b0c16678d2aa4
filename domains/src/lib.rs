//! The simulated tool domains and everything built on the engine
//! (`toolenv-core`) that knows them.
//!
//! Four domains (scheduling, travel, customer support, e-commerce), each a
//! folder whose state implements the engine's `DomainState` and this crate's
//! extension traits, listed once in the [`registry`]; the verified suite of
//! tasks; the task generators; the perturbation engine; the result-reading
//! solver; the cheat corpus and the oracle self-check; the MAS-FIRE teams
//! and judging rules; failure attribution by counterfactual replay. Nothing
//! here does I/O, reads a clock or uses unseeded randomness.
//!
//! Use a domain as a test fixture, in-process and without a network (one
//! import: [`fixture`]):
//!
//! ```
//! use toolenv_domains::fixture::*;
//!
//! let task = task("scheduling/book-meeting/001").expect("a suite task");
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
//! # Ok::<(), CallError>(())
//! ```
#![forbid(unsafe_code)]

use std::sync::OnceLock;

use toolenv_core::Task;

pub mod agent;
pub mod answers;
pub mod attribution;
pub mod cheats;
mod finish;
pub mod fixture;
pub mod generate;
mod macros;
pub mod masfire;
pub mod perturb;
pub mod prose;
pub mod selfcheck;
mod shape;
pub mod solver;
pub mod taskfile;

pub use finish::{Assessor, Finish};

// The registry: every domain, once. Adding a domain is a folder under
// `src/`, its `pub mod` line and one line in the list (see ARCHITECTURE.md).
pub mod ecommerce;
pub mod scheduling;
pub mod support;
pub mod travel;

macros::registry! {
    /// Calendar management.
    SCHEDULING => scheduling,
    /// Flight search and booking.
    TRAVEL => travel,
    /// Support tickets, knowledge base and escalation.
    SUPPORT => support,
    /// Catalog, orders, coupons and returns.
    ECOMMERCE => ecommerce,
}

/// The verified suite: every domain's tasks, in registry order.
pub fn suite() -> &'static [Task] {
    static SUITE: OnceLock<Vec<Task>> = OnceLock::new();
    SUITE.get_or_init(|| registry::ALL.into_iter().flat_map(toolenv_core::Domain::tasks).collect())
}

/// Finds a task of the suite by id.
pub fn task(id: &str) -> Option<&'static Task> {
    suite().iter().find(|t| t.id == id)
}

#[cfg(test)]
mod drift_tests;
#[cfg(test)]
mod oracle_tests;
