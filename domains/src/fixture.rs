//! The domains as test fixtures, from one import: `use
//! toolenv_domains::fixture::*;` brings the registry, the suite's tasks, an
//! episode and its outcomes, finishing and judging, and the task builder —
//! without a dependency on `toolenv-core` or a trait to find.
//!
//! ```
//! use toolenv_domains::fixture::*;
//!
//! // A task of the suite, or one of your own (validated like a task file's).
//! let task = task("scheduling/book-meeting/001").expect("a suite task");
//! let mine = TaskBuilder::new("scheduling/book-meeting/mine-001")
//!     .description("Book a meeting about '{topic}' on {date} at {time}.")
//!     .slot("topic", "Retro").slot("date", "2026-01-07").slot("time", "11:00")
//!     .fixture("scheduling/book-meeting/002")
//!     .call("book_meeting", serde_json::json!({"date": "2026-01-07", "time": "11:00", "topic": "Retro"}))
//!     .expect(Check::equals("booked", "/calendar/2026-01-07/11:00", serde_json::json!("Retro")))
//!     .build()?;
//!
//! for task in [task.clone(), mine] {
//!     let reference = task.reference.clone();
//!     let mut episode = Episode::new(task, 7, 0);
//!     for call in &reference {
//!         let record = episode.call(call.tool, &call.arguments.to_string())?;
//!         assert!(matches!(record.outcome, Outcome::Result(_)));
//!     }
//!     let judgement: &Judgement = episode.finish();
//!     assert!(judgement.passed, "{}", judgement.diff_text());
//! }
//! assert!(registry::ALL.iter().all(|domain| suite().iter().any(|t| t.domain == *domain)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Finish::finish`] judges the end state. Whether any agent could have
//! passed a failed episode (`Judgement::feasible`) is decided on request:
//! [`Finish::finish_with_feasibility`] replays the episode with the solver,
//! as a server does, so its judgement is the one a run would record.

pub use crate::taskfile::{Catalogue, TaskBuilder, TaskSet};
pub use crate::{Finish, registry, suite, task};
pub use toolenv_core::chaos::{Chaos, FaultKind, FaultProfile};
pub use toolenv_core::{CallError, CallOptions, CallRecord, Check, Domain, DomainError, Episode, Judgement, Outcome, Task};
