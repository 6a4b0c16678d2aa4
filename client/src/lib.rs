//! The typed toolenv client: a connection to a server ([`Client`]) with its
//! own error type ([`ClientError`]), an episode on a server as the
//! environment agents play against ([`RemoteEnv`]), the driver that plays
//! any agent over gRPC ([`play`]), the run planner that plays a grid's
//! episodes concurrently ([`run_plan`]) and the hosted-run [`worker`].
//!
//! # What a call returned
//!
//! [`Client::call`] (and its JSON-text convenience [`Client::call_json`])
//! gives one of five things; the same words are used throughout:
//!
//! - a **result**: `Ok` with `Outcome::ResultJson`, the tool ran. The text
//!   may be empty, cut short, in a drifted shape or, with in-band delivery,
//!   a fault's `{"error": {…, "reason"}}` object.
//! - a **rejection**: `Ok` with `Outcome::Error`, a rule of the domain said
//!   no (slot taken, out of stock); data for the agent, not an error.
//! - a **fault**: [`ClientError::Status`] with an injected fault's code
//!   (DEADLINE_EXCEEDED, UNAVAILABLE, RESOURCE_EXHAUSTED, PERMISSION_DENIED)
//!   and its `ErrorInfo`; retry advice in `retry_after_virtual_ms`.
//! - a **refusal**: [`ClientError::Status`] INVALID_ARGUMENT or NOT_FOUND (a
//!   malformed call, no tool ran) or FAILED_PRECONDITION (the episode takes
//!   no more calls).
//! - an **infrastructure error**: any other [`ClientError`]; the episode
//!   cannot go on.
//!
//! [`RemoteEnv`] turns these into the solver's observations
//! (`Result`, `DomainError`, `Failure`, `Invalid`, `Closed`), so that an
//! agent sees the same over gRPC as in-process.
//!
//! May import: the protocol crate, `toolenv-domains`, `toolenv-runs` (plans
//! and results), `toolenv-agents` without its LLM agents, tonic. Never the
//! server, clap, indicatif, rmcp, axum or an HTTP stack for LLMs; and it
//! re-exports none of these crates: depend on them directly.
#![forbid(unsafe_code)]

mod client;
mod play;
mod remote;
mod retry;
mod tls;
pub mod worker;

pub use client::{Bearer, CONNECTION_BROKE, Client, ClientError, Credentials, EPISODE_HEADER, Transport, broken_connection_hint};
pub use play::{FinishedEpisode, play, play_episode, run_plan};
pub use remote::RemoteEnv;
pub use retry::call_with_index;
pub use tls::TlsSetupError;
