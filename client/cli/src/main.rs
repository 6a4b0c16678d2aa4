//! `toolenv`: serve the environments, browse tasks, play episodes with the
//! built-in agents, run the suite, and self-check the oracles.
//!
//! The command line is in [`cli`]; this file only parses it, sets up
//! logging and the runtime, and turns the outcome into the exit code.
//!
//! The crate (`toolenv-cli`) is the top floor: it may import every other
//! crate of the workspace (the typed client, the agents with their LLM
//! agents, the MCP bridge, the server for `serve` and embedded servers,
//! the runs crate) and is the only one with clap, indicatif,
//! tracing-subscriber and the allocator. Nothing imports it.
#![forbid(unsafe_code)]
// Doc comments of the argument structs are the --help text, where
// `generated:<seed>:<n>` is literal text, not HTML.
#![allow(rustdoc::invalid_html_tags)]

mod cli;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::FromArgMatches as _;
use cli::args::{Cli, Command, LogFormat};

/// Episodes, verdicts and wire messages are many small allocations.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The one place an exit code is decided: the command's own, 0 when the
/// reader of stdout went away early (`toolenv … | head`), or 2 after an error.
fn main() -> ExitCode {
    quiet_on_closed_stdout();
    let matches = cli::help::command().get_matches();
    if let Err(message) = cli::help::check_flags(&matches) {
        eprintln!("error: {message}");
        return ExitCode::from(2);
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let default_level = if matches!(cli.command, Command::Serve(_)) { "info" } else { "warn" };
    let logs = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_level.into()))
        .with_writer(std::io::stderr)
        // Colour codes only for a person reading a terminal, not in log files.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match cli.log_format {
        LogFormat::Text => logs.init(),
        // Structured: one object per line, the event's fields flattened, its spans listed.
        LogFormat::Json => logs.json().flatten_event(true).with_current_span(false).with_span_list(true).init(),
    }
    let url = cli.url.clone();
    let outcome =
        tokio::runtime::Runtime::new().context("cannot start the async runtime").and_then(|runtime| runtime.block_on(cli::run(cli)));
    match outcome {
        Ok(code) => code,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", error_text(&error, url.as_deref()));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, each said once: a cause whose
/// text its parent already printed (`Address already in use (os error 98)`
/// wrapped by an error that repeats it) is left out; then a hint where the
/// error has a usual cause the user can fix. A connection that broke under
/// a request to `url` is told apart by asking the server again
/// ([`toolenv_client::broken_connection_hint`]).
fn error_text(error: &anyhow::Error, url: Option<&str>) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let cause = cause.to_string();
        if cause.is_empty() || text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    let broke = format!(" ({})", toolenv_client::CONNECTION_BROKE);
    if let Some(hint) = text.contains(&broke).then(|| url.and_then(toolenv_client::broken_connection_hint)).flatten() {
        return format!("{}\nhint: {hint}", text.replace(&broke, ""));
    }
    for (symptom, hint) in HINTS {
        if text.contains(symptom) {
            text.push_str("\nhint: ");
            text.push_str(hint);
            break;
        }
    }
    text
}

/// Errors whose message does not say what to do, and what usually fixes them.
const HINTS: [(&str, &str); 5] = [
    ("NotFound: task '", "`toolenv tasks` lists the task ids (`--suite standard` or `generated:<seed>:<n>` for generated ones)"),
    ("Address already in use", "another process (maybe another `toolenv serve`) has this address: stop it, or pick another with --addr"),
    (
        "CaUsedAsEndEntity",
        "the server's certificate is marked CA:TRUE: pass that same certificate with --ca-cert, or make a CA and a leaf (docs/operations-and-security.md, \"Exposing a server safely\")",
    ),
    (
        "UnknownIssuer",
        "the server's certificate is not signed by a trusted authority: pass its CA (or the certificate itself) with --ca-cert",
    ),
    ("cannot connect to ", "is a toolenv server running at that address (`toolenv serve`)? check --url (or TOOLENV_URL)"),
];

/// Whether an error is a write to a pipe whose reader closed it.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Makes a closed stdout end the process quietly with status 0, whichever
/// command was printing: `print!` panics on a write error, and a reader
/// that stopped reading (`| head`) is not an error of ours. Every other
/// panic is reported as before.
fn quiet_on_closed_stdout() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        report(info);
    }));
}
