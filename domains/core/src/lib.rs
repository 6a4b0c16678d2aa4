//! The toolenv engine: what a domain, a task and an episode are, and how a
//! tool call is played, faulted, recorded and judged.
//!
//! A domain is a state type with a table of tools ([`DomainState`]); a call
//! is a pure transition of that state. A [`Task`] holds an initial state, a
//! description template, a reference solution and the checks of its
//! oracle. An [`Episode`] is one attempt at a task: its own state, its fault
//! schedule (the chaos layer, schema drift, MAS-FIRE's boundary faults) and
//! its [`Trajectory`], judged by the pure oracle into a [`Verdict`].
//! Nothing here does I/O, reads a clock or uses unseeded randomness, so the
//! same inputs always give the same trajectory and verdict.
//!
//! This crate knows nothing of the domains built on it, nor of solvers,
//! cheats, generators, the perturbation engine, MAS-FIRE judging or
//! attribution: those live in `toolenv-domains`, which also holds the
//! registry of domains. What a domain must provide for them is declared
//! there as extension traits the registry requires.
#![forbid(unsafe_code)]

pub mod chaos;
mod check;
mod codec;
pub mod date;
mod delivery;
pub mod diff;
pub mod drift;
mod episode;
pub mod json;
pub mod masfire;
mod names;
mod oracle;
pub mod phrasing;
mod task;
pub mod testing;
mod tool;
pub mod user;
mod world;

pub use check::{Check, Fact};
pub use delivery::{Failure, FailureCode, Outcome};
pub use episode::{
    Arguments, Assess, CLARIFICATION_CHECK, CallError, CallOptions, CallRecord, DEFAULT_MAX_CALLS, Episode, FaultRecord, FaultStats,
    ForkError, Judgement, KindCounts, LedgerCall, LedgerReply, MAX_IDEMPOTENCY_BYTES, ReplayCall, RoleSpec, Source, TeamError, Trajectory,
    bus, fault_ledger, replay_key,
};
pub use oracle::ruling::{self, AnswerRuling, JudgeQuestion};
pub use oracle::{Answer, COLLATERAL_CHECK, CheckOutcome, DUPLICATE_CHECK, Leaves, Verdict, typed, unexpected_leaves};
pub use task::{Call, Slot, Task, TaskRef, slots};
pub use tool::{ArgError, Args, DomainError, MAX_ARGUMENTS_BYTES, Param, ParamType, ToolResult, ToolSpec, as_integer, echo};
pub use world::{
    Context, Domain, DomainDef, DomainState, Handler, Reader, Registered, Reply, Shared, Tool, ToolRef, Tools, ToolsIter, World,
};
