//! Every limit on what a request may carry.
//!
//! Each string, list and map of every request is checked here before any
//! handler uses it, so an oversized value is refused as `INVALID_ARGUMENT`
//! naming the request's own field and the limit. Errors quote a client's
//! value through [`cut`] only (in `error`), and [`bound_message`] is the backstop for
//! whole messages, so a status with its `grpc-status-details-bin` trailer
//! stays far below common client metadata limits (grpcio's is 16 KiB; the
//! tests assert < 4 KiB for every field of every RPC).

use crate::error::Error;
pub use crate::error::{MAX_ECHO_CHARS, MAX_MESSAGE_BYTES, bound_message, cut};

/// Longest id the server hands out or reads: episode ids, run ids, task ids.
pub const MAX_ID_BYTES: usize = 128;
/// Longest name: tool names, fault profile names, fault kinds, presets,
/// agent labels, worker names.
pub const MAX_NAME_BYTES: usize = 128;
/// Longest idempotency key. Keys and the results kept for them also count
/// against the episode's idempotency budget (`toolenv_core::MAX_IDEMPOTENCY_BYTES`).
pub const MAX_KEY_BYTES: usize = 256;
/// Longest run description.
pub const MAX_DESCRIPTION_BYTES: usize = 4096;
/// Longest final answer of an episode.
pub const MAX_ANSWER_BYTES: usize = 16 * 1024;
/// Most entries of a repeated field (agents, ε values, fault profiles, fault kinds).
pub const MAX_LIST_LEN: usize = 64;
/// Most entries of a map field (fault weights).
pub const MAX_MAP_LEN: usize = 32;

/// Most tasks in one ListTasks response (and its default page size).
pub const MAX_TASK_PAGE: usize = 5_000;

/// Checks a string field's length.
pub fn text(field: &str, value: &str, max: usize) -> Result<(), Error> {
    if value.len() > max {
        return Err(Error::invalid(field, format!("at most {max} bytes, got {}", value.len())));
    }
    Ok(())
}

/// Checks an id field: present and not too long.
pub fn id<'a>(field: &'static str, value: &'a str) -> Result<&'a str, Error> {
    if value.is_empty() {
        return Err(Error::MissingField(field));
    }
    text(field, value, MAX_ID_BYTES)?;
    Ok(value)
}

/// Checks a repeated string field: its length and each entry's.
pub fn list(field: &str, values: &[String], max_each: usize) -> Result<(), Error> {
    if values.len() > MAX_LIST_LEN {
        return Err(Error::invalid(field, format!("at most {MAX_LIST_LEN} entries, got {}", values.len())));
    }
    for value in values {
        text(field, value, max_each)?;
    }
    Ok(())
}

/// Checks a list of roles (a multi-agent episode's or a run's): how many,
/// and each name's and prompt's length.
pub fn roles(field: &str, roles: &[toolenv::pb::Role]) -> Result<(), Error> {
    if roles.len() > MAX_LIST_LEN {
        return Err(Error::invalid(field, format!("at most {MAX_LIST_LEN} entries, got {}", roles.len())));
    }
    for role in roles {
        text(&format!("{field}.name"), &role.name, MAX_NAME_BYTES)?;
        text(&format!("{field}.prompt"), &role.prompt, MAX_DESCRIPTION_BYTES)?;
    }
    Ok(())
}

/// Checks a MAS-FIRE fault profile's lists.
pub fn mas_profile(field: &str, profile: Option<&toolenv::pb::MasFaultProfile>) -> Result<(), Error> {
    if let Some(profile) = profile {
        list(&format!("{field}.faults"), &profile.faults, MAX_NAME_BYTES)?;
        list(&format!("{field}.roles"), &profile.roles, MAX_NAME_BYTES)?;
    }
    Ok(())
}

/// Checks a finite, non-negative number.
pub fn figure(field: &str, value: f64) -> Result<f64, Error> {
    if !value.is_finite() || value < 0.0 {
        return Err(Error::invalid(field, format!("must be a finite number ≥ 0, got {value}")));
    }
    Ok(value)
}

/// Checks an enum field's value against the values this server knows.
pub fn known_enum<E: TryFrom<i32>>(field: &str, value: i32) -> Result<E, Error> {
    E::try_from(value).map_err(|_| Error::invalid(field, format!("unknown enum value {value}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_refuse_nan_infinite_and_negative() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.5] {
            assert!(figure("usage.cost_usd", bad).is_err(), "{bad}");
        }
        assert_eq!(figure("usage.cost_usd", 0.25).unwrap(), 0.25);
    }
}
