//! The command line's integration tests, in one binary: each file is a module, so the
//! crate's tests link once.

mod answer_judge;
mod chaos_proxy;
mod cli;
mod deploy;
mod frameworks;
mod help;
mod mcp_stdio;
mod operations;
mod otlp;
mod python;
mod readme;
