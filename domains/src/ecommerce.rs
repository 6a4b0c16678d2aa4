//! Placeholder, replaced by the domain's real module.

use serde::{Deserialize, Serialize};

use crate::task::Task;
use crate::tool::{Args, DomainError, ToolResult, ToolSpec};
use crate::world::{Context, DomainState};

/// The domain's state.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct State {}

impl DomainState for State {
    const TOOLS: &'static [ToolSpec] = &[];

    fn call(&mut self, tool: &str, _args: &Args, _ctx: &Context) -> ToolResult {
        Err(DomainError::new("UNKNOWN_TOOL", format!("no tool '{tool}'")))
    }
}

pub(crate) fn tasks() -> Vec<Task> {
    Vec::new()
}
