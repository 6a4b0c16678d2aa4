//! `toolenv`: serve the environments, browse tasks, play episodes with the
//! built-in agents, run the suite, and self-check the oracles.
//!
//! The command line is in [`cli`]; this file only parses it, sets up
//! logging and the runtime, and turns the outcome into the exit code.

mod cli;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser as _;
use cli::args::{Cli, Command, LogFormat};

/// The one place an exit code is decided: the command's own, or 2 after an error.
fn main() -> ExitCode {
    let cli = Cli::parse();
    let default_level = if matches!(cli.command, Command::Serve(_)) { "info" } else { "warn" };
    let logs = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_level.into()))
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => logs.init(),
        // Structured: one object per line, the event's fields flattened, its spans listed.
        LogFormat::Json => logs.json().flatten_event(true).with_current_span(false).with_span_list(true).init(),
    }
    let outcome =
        tokio::runtime::Runtime::new().context("cannot start the async runtime").and_then(|runtime| runtime.block_on(cli::run(cli)));
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
