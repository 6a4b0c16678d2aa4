//! Agent labels as `--agent` takes them: a built-in agent's name
//! (`reference`, `brittle`, …) or an LLM agent `react@MODEL` /
//! `reflexion@MODEL`. The label is also what a run records as the agent.

/// The loop an LLM agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// Think, act with a tool, observe, until done.
    React,
    /// ReAct with a self-reflection after a failed call and before finishing.
    Reflexion,
}

impl Architecture {
    /// The name used in agent labels (`react@MODEL`).
    pub fn name(self) -> &'static str {
        match self {
            Architecture::React => "react",
            Architecture::Reflexion => "reflexion",
        }
    }
}

/// What an agent label names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spec<'a> {
    /// A built-in agent.
    Builtin(crate::Builtin),
    /// An LLM agent: its loop and the model as the endpoint names it.
    Llm(Architecture, &'a str),
}

impl<'a> Spec<'a> {
    /// Reads a label, or says what labels there are.
    pub fn parse(label: &'a str) -> Result<Spec<'a>, String> {
        if let Some(agent) = crate::Builtin::parse(label) {
            return Ok(Spec::Builtin(agent));
        }
        let llm = label.split_once('@').and_then(|(architecture, model)| {
            let architecture = match architecture {
                "react" => Architecture::React,
                "reflexion" => Architecture::Reflexion,
                _ => return None,
            };
            (!model.trim().is_empty()).then_some(Spec::Llm(architecture, model))
        });
        llm.ok_or_else(|| {
            let names: Vec<&str> = crate::Builtin::ALL.iter().map(|a| a.name()).collect();
            format!("'{label}' is neither a built-in agent ({}) nor react@MODEL or reflexion@MODEL", names.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(Spec::parse("reference"), Ok(Spec::Builtin(crate::Builtin::Reference)));
        assert_eq!(Spec::parse("react@qwen2.5"), Ok(Spec::Llm(Architecture::React, "qwen2.5")));
        assert_eq!(Spec::parse("reflexion@gpt-4o"), Ok(Spec::Llm(Architecture::Reflexion, "gpt-4o")));
        for bad in ["react@", "react", "cot@gpt-4o", ""] {
            assert!(Spec::parse(bad).is_err(), "{bad}");
        }
    }
}
