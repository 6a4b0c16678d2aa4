//! The parts of `--help` that come from the lists the code uses — the
//! built-in agents ([`Builtin::ALL`]), the MAS-FIRE fault types
//! ([`MasFault::ALL`]), the λ presets and ablation profiles — and the global flags each command leaves out of
//! its help and refuses, because they mean nothing there.

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory as _};
use toolenv_agents::Builtin;
use toolenv_core::masfire::MasFault;

/// Global flags that do not apply to a command: (command, flags' ids).
/// `serve` is the server (its --addr says where), `selfcheck` runs in
/// process, and the store commands read the local store file.
const NOT_FOR: [(&str, &[&str]); 6] = [
    ("serve", &["url", "ca_cert"]),
    ("selfcheck", &["url", "token", "ca_cert"]),
    ("export", &["url", "token", "ca_cert"]),
    ("site", &["url", "token", "ca_cert"]),
    ("attribute", &["url", "token", "ca_cert"]),
    ("score-attribution", &["url", "token", "ca_cert"]),
];

/// The built-in agents, one per line with the first sentence of its doc.
pub(crate) fn builtin_agents() -> String {
    let width = Builtin::ALL.iter().map(|a| a.name().len()).max().unwrap_or(0);
    Builtin::ALL
        .iter()
        .map(|agent| {
            let doc = agent.doc().split_whitespace().collect::<Vec<_>>().join(" ");
            let first = doc.split_once(". ").map_or(doc.as_str(), |(first, _)| first).trim_end_matches('.');
            format!("  {:<width$}  {first}", agent.name())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The MAS-FIRE fault types' names, comma-separated.
fn mas_faults() -> String {
    MasFault::ALL.map(MasFault::name).join(", ")
}

/// The command line's definition, with the generated help.
pub(crate) fn command() -> clap::Command {
    let names: Vec<&str> = Builtin::ALL.iter().map(|a| a.name()).collect();
    let agents = format!(
        "Agents to compare (comma-separated): built-in agents ({}) or LLM agents react@MODEL and reflexion@MODEL \
         (see the LLM agents' flags)",
        names.join(", ")
    );
    let agent = format!(
        "The agent to play with: a built-in agent ({}), or react@MODEL / reflexion@MODEL (see the LLM agents' flags)",
        names.join(", ")
    );
    let faults = format!(
        "MAS-FIRE fault types to inject (comma-separated): {}. For one episode, one profile holding them all; in a grid, \
         each its own fault profile (mas:NAME@RATE) next to the fault-free profile 0.0 its RS_f is measured against",
        mas_faults()
    );
    let lambdas: Vec<String> = toolenv_runs::LAMBDA_LEVELS.iter().map(|l| format!("{l:.1}")).collect();
    let profiles = format!(
        "λ presets ({}), ablations at λ = 0.2 ({}), MAS-FIRE labels mas:NAME@RATE, or names from the server's profile file",
        lambdas.join(", "),
        toolenv_runs::ABLATION_PROFILES.join(", ")
    );
    let grid_faults = format!("Fault profiles (comma-separated): {profiles}. None by default");
    let episode_faults = format!("Fault profile: {profiles}");
    let mut command = super::args::Cli::command().after_help(format!("Built-in agents (--agent):\n{}", builtin_agents()));
    for name in ["play", "run", "host", "mcp"] {
        command = command.mut_subcommand(name, |sub| {
            if sub.get_arguments().any(|a| a.get_id() == "mas_faults") {
                sub.mut_arg("mas_faults", |a| a.help(faults.clone()))
            } else {
                sub
            }
        });
    }
    for name in ["play", "run", "host", "mcp"] {
        let help = if matches!(name, "run" | "host") { &grid_faults } else { &episode_faults };
        command = command.mut_subcommand(name, |sub| sub.mut_arg("faults", |a| a.help(help.clone())));
    }
    command = command.mut_subcommand("run", |sub| sub.mut_arg("agents", |a| a.help(agents.clone())));
    command = command.mut_subcommand("work", |sub| sub.mut_arg("agent", |a| a.help(agent.clone())));
    // Globals are copied into each command when it is built, unless it has
    // its own: a hidden copy keeps them out of the help where they do not apply.
    let globals: Vec<clap::Arg> = command.get_arguments().cloned().collect();
    for (name, flags) in NOT_FOR {
        command = command.mut_subcommand(name, |mut sub| {
            for arg in globals.iter().filter(|a| flags.contains(&a.get_id().as_str())) {
                sub = sub.arg(arg.clone().hide(true));
            }
            sub
        });
    }
    command
}

/// Refuses a global flag given on the command line to a command it does not
/// apply to (a value from the environment is ignored there).
pub(crate) fn check_flags(matches: &ArgMatches) -> Result<(), String> {
    let Some((name, sub)) = matches.subcommand() else { return Ok(()) };
    for (command, flags) in NOT_FOR.iter().filter(|(command, _)| *command == name) {
        for flag in *flags {
            if sub.value_source(flag) == Some(ValueSource::CommandLine) || matches.value_source(flag) == Some(ValueSource::CommandLine) {
                let flag = flag.replace('_', "-");
                return Err(format!(
                    "`toolenv {command}` takes no --{flag}: it does not talk to a server as a client (see `toolenv {command} --help`)"
                ));
            }
        }
    }
    Ok(())
}
