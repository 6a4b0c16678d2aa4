//! Placeholder until the v2 result shapes land.

use serde_json::Value;

use crate::world::Domain;

/// The v2 shape of a result.
pub fn to_v2(_domain: Domain, _tool: &str, result: &Value) -> Value {
    result.clone()
}
