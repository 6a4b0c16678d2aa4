//! The performance machinery behind tool calls, apart from the domains: the
//! canonical JSON writer tools write their results with, and the argument
//! reader that parses a call's arguments straight into typed values. Each is
//! tested byte for byte against the `serde_json` code it replaces.

pub(crate) mod args;
pub(crate) mod writer;
