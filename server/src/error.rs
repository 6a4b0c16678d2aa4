//! Why a request failed, and the one place that maps it to a gRPC status;
//! the one function that cuts what an error quotes back.

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};
use toolenv_core::ArgError;

/// A request the server refuses. Broken business rules are not errors:
/// they are ordinary tool results.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A required request field is empty.
    #[error("{0} is required")]
    MissingField(&'static str),
    /// A request field has a value the server does not accept.
    #[error("{}: {}", cut(field), message)]
    InvalidField { field: String, message: String },
    /// No task has this id.
    #[error("task '{}' not found", cut(.0))]
    UnknownTask(String),
    /// No live episode has this id.
    #[error("episode not found (it may have expired or never existed)")]
    UnknownEpisode(String),
    /// The episode's task has no such tool.
    #[error("unknown tool '{}'; this episode's tools are: {available}", cut(tool))]
    UnknownTool { tool: String, available: String },
    /// The tool's arguments are malformed.
    #[error("invalid arguments: {}", quote_arg(.0))]
    InvalidArguments(ArgError),
    /// The episode is finished.
    #[error("episode is finished; start a new episode to call tools again")]
    EpisodeFinished,
    /// The episode has had all the calls it accepts.
    #[error("episode reached its limit of {0} tool calls")]
    CallLimit(u32),
    /// The server holds as many episodes as it accepts.
    #[error(
        "server holds its limit of {0} live episodes; finishing an episode frees its place at once (idle ones expire after the idle timeout), or raise --max-episodes"
    )]
    TooManyEpisodes(usize),
    /// No run has this id.
    #[error("run '{}' not found in the server's store", cut(.0))]
    UnknownRun(String),
    /// The run was played by the command-line tool, not hosted for workers.
    #[error("run '{}' is not hosted for workers (the command-line tool played it); create one with Runs.CreateRun", cut(.0))]
    RunNotHosted(String),
    /// A call's `expected_index` is beyond the episode's next call.
    #[error("expected_index {expected} is ahead of the episode: its next call is index {next}")]
    IndexAhead { expected: u32, next: u32 },
    /// A call's `expected_index` holds a call of another tool.
    #[error("expected_index {expected} is taken by a call of {}: resend that call, or send this one with the episode's next index", cut(.tool))]
    IndexTaken { expected: u32, tool: String },
    /// The episode's lease expired and its plan entry went to another worker.
    #[error("this episode's lease expired (no call for {0} ms) and it was handed to another worker; ask for the next episode")]
    LeaseExpired(u64),
    /// The store of runs failed in a way retrying will not fix.
    #[error("the store of runs failed: {}", cut_long(.0))]
    Store(String),
    /// The store (a replica's durable log, or the store of runs) could not
    /// be reached or is busy: try again.
    #[error("the store is unavailable: {}", cut_long(.0))]
    Unavailable(String),
    /// The answer judge gave no ruling (its endpoint failed, or it replied
    /// with something else): nothing was finished, try again.
    #[error("the answer judge gave no ruling: {}", cut_long(.0))]
    JudgeUnavailable(String),
    /// The episode lived on a replica that was lost, and its calls were not
    /// logged as played (`--durability finish`).
    #[error(
        "episode {0} was lost with the replica that played it (its calls are logged only at the finish: --durability finish); start it again"
    )]
    EpisodeLost(String),
    /// The server itself failed.
    #[error("internal error: {0}")]
    Internal(&'static str),
    /// A limit of a multi-agent episode's bus (messages, agents) was reached.
    #[error("{0}")]
    BusLimit(String),
}

impl Error {
    /// The error of a request the store of runs failed: UNAVAILABLE (with
    /// retry advice) when the store is down or busy, so a client retries
    /// every RPC alike; an unknown run is NOT_FOUND; anything else is the
    /// server's fault (INTERNAL).
    pub(crate) fn store(error: toolenv_store::StoreError) -> Self {
        match error {
            toolenv_store::StoreError::UnknownRun { run, .. } => Error::UnknownRun(run),
            error if error.is_unavailable() => Error::Unavailable(error.to_string()),
            error => Error::Store(error.to_string()),
        }
    }

    /// A field with a value the server does not accept.
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidField { field: field.into(), message: message.into() }
    }
}

/// An argument error as a message: the field (a client's argument name,
/// cut) and why.
fn quote_arg(arg: &ArgError) -> String {
    if arg.field.is_empty() { arg.message.clone() } else { format!("{}: {}", cut(&arg.field), arg.message) }
}

/// A server-side message (a store error) may name a client's value deep
/// inside; keep it readable but bounded.
fn cut_long(message: &str) -> String {
    bound_message(message.to_owned())
}

impl From<Error> for Status {
    fn from(error: Error) -> Self {
        // Every quoted value is cut already; this bounds the whole message.
        let message = bound_message(error.to_string());
        match error {
            // The client left out a field it must send.
            Error::MissingField(field) => {
                Status::with_error_details(Code::InvalidArgument, message.clone(), ErrorDetails::with_bad_request_violation(field, message))
            }
            // The client sent a value outside what the field accepts.
            Error::InvalidField { field, .. } => Status::with_error_details(
                Code::InvalidArgument,
                message.clone(),
                ErrorDetails::with_bad_request_violation(cut(&field), message),
            ),
            // The client named a task that does not exist.
            Error::UnknownTask(id) => Status::with_error_details(
                Code::NotFound,
                message,
                ErrorDetails::with_resource_info("task", cut(&id), "", "no such task in the suite"),
            ),
            // The client named an episode that does not (or no longer) exist.
            Error::UnknownEpisode(id) => Status::with_error_details(
                Code::NotFound,
                message,
                ErrorDetails::with_resource_info("episode", cut(&id), "", "episodes expire after being idle"),
            ),
            // The client named a tool the episode does not offer.
            Error::UnknownTool { tool, .. } => Status::with_error_details(
                Code::NotFound,
                message,
                ErrorDetails::with_resource_info("tool", cut(&tool), "", "not a tool of this episode"),
            ),
            // The client's arguments do not fit the tool's schema; name the field.
            Error::InvalidArguments(arg) => {
                let field = if arg.field.is_empty() { "arguments_json".to_owned() } else { format!("arguments_json.{}", cut(&arg.field)) };
                let description = bound_message(arg.message);
                Status::with_error_details(Code::InvalidArgument, message, ErrorDetails::with_bad_request_violation(field, description))
            }
            // The episode is over; calling on is a client bug, not a retryable condition.
            Error::EpisodeFinished => Status::failed_precondition(message),
            // A per-episode quota is used up.
            Error::CallLimit(_) => Status::resource_exhausted(message),
            // A server-wide quota is used up.
            Error::TooManyEpisodes(_) => Status::with_error_details(
                Code::ResourceExhausted,
                message.clone(),
                ErrorDetails::with_quota_failure_violation(toolenv::SERVER_QUOTA, message),
            ),
            // The client named a run that does not exist.
            Error::UnknownRun(id) => Status::with_error_details(
                Code::NotFound,
                message,
                ErrorDetails::with_resource_info("run", cut(&id), "", "Runs.ListRuns lists the runs"),
            ),
            // The run exists but is not one workers may lease from.
            Error::RunNotHosted(_) | Error::IndexAhead { .. } | Error::IndexTaken { .. } => Status::failed_precondition(message),
            // The worker was too slow; another one has its episode now.
            Error::LeaseExpired(_) => Status::with_error_details(
                Code::FailedPrecondition,
                message,
                ErrorDetails::with_error_info("LEASE_EXPIRED", "toolenv.runs", std::collections::HashMap::new()),
            ),
            // Not the client's doing.
            Error::Store(_) | Error::Internal(_) => Status::internal(message),
            // The store is down or busy: worth retrying after a pause.
            Error::Unavailable(_) | Error::JudgeUnavailable(_) => {
                Status::with_error_details(Code::Unavailable, message, ErrorDetails::with_retry_info(Some(STORE_RETRY_AFTER)))
            }
            // Gone for good: no retry brings it back.
            Error::EpisodeLost(_) => Status::data_loss(message),
            // A multi-agent episode's quota (messages sent, agents joined) is used up.
            Error::BusLimit(_) => Status::resource_exhausted(message),
        }
    }
}

/// The pause a client is advised to take before retrying a request the
/// store could not serve.
pub const STORE_RETRY_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

/// Most characters of a client's value an error quotes.
pub const MAX_ECHO_CHARS: usize = 64;
/// Longest status message the server sends (a backstop: every quoted value
/// is already [`cut`]).
pub const MAX_MESSAGE_BYTES: usize = 512;

/// A client's value as an error quotes it: at most [`MAX_ECHO_CHARS`]
/// characters, and when longer, marked with how long it was.
pub fn cut(value: &str) -> String {
    match value.char_indices().nth(MAX_ECHO_CHARS) {
        Some((end, _)) => format!("{}…(cut, {} bytes)", &value[..end], value.len()),
        None => value.to_owned(),
    }
}

/// A whole message cut to [`MAX_MESSAGE_BYTES`] at a character boundary,
/// marked when cut.
pub fn bound_message(message: String) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    let mut end = MAX_MESSAGE_BYTES - 32;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…(cut, {} bytes)", &message[..end], message.len())
}

#[cfg(test)]
mod cut_tests {
    use super::*;

    #[test]
    fn cut_keeps_short_values_and_marks_long_ones() {
        assert_eq!(cut("book_meeting"), "book_meeting");
        let long = "é".repeat(10_000);
        let quoted = cut(&long);
        assert!(quoted.starts_with(&"é".repeat(MAX_ECHO_CHARS)));
        assert!(quoted.ends_with("…(cut, 20000 bytes)"), "{quoted}");
        assert_eq!(cut(&"x".repeat(MAX_ECHO_CHARS)), "x".repeat(MAX_ECHO_CHARS));
    }

    #[test]
    fn bound_message_cuts_at_a_character_boundary() {
        let message = "ü".repeat(1000);
        let bounded = bound_message(message);
        assert!(bounded.len() <= MAX_MESSAGE_BYTES, "{}", bounded.len());
        assert!(bounded.ends_with("(cut, 2000 bytes)"));
    }
}
