//! Command-line values made from the project's own lists: the registry's
//! domains and the built-in agents, so that a new one needs no CLI change.

use clap::ValueEnum;
use clap::builder::PossibleValue;
use toolenv_agents::Builtin;
use toolenv_core::Domain;

/// A domain as a command-line value: the registry's domains, by name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DomainArg(pub(crate) Domain);

impl ValueEnum for DomainArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [DomainArg; toolenv_domains::registry::COUNT] = {
            let mut all = [DomainArg(toolenv_domains::registry::ALL[0]); toolenv_domains::registry::COUNT];
            let mut i = 1;
            while i < toolenv_domains::registry::COUNT {
                all[i] = DomainArg(toolenv_domains::registry::ALL[i]);
                i += 1;
            }
            all
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()))
    }
}

impl From<DomainArg> for Domain {
    fn from(arg: DomainArg) -> Self {
        arg.0
    }
}

/// A built-in agent as a command-line value: every agent, by name, with its help.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AgentArg(pub(crate) Builtin);

impl ValueEnum for AgentArg {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [AgentArg; Builtin::ALL.len()] = {
            let mut all = [AgentArg(Builtin::ALL[0]); Builtin::ALL.len()];
            let mut i = 1;
            while i < Builtin::ALL.len() {
                all[i] = AgentArg(Builtin::ALL[i]);
                i += 1;
            }
            all
        };
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let about = self.0.doc();
        // The first sentence is the help line.
        let first = about.split_once(". ").map_or(about, |(first, _)| first);
        Some(PossibleValue::new(self.0.name()).help(first.trim_end_matches('.').to_owned()))
    }
}

impl From<AgentArg> for Builtin {
    fn from(arg: AgentArg) -> Self {
        arg.0
    }
}
