//! Whether a team detected and fixed each MAS-FIRE fault it met: rules over
//! the trajectory's ground truth, one per fault type.
//!
//! MAS-FIRE (§3.3.2) counts, per fault type f, the tasks "in which the
//! system detects abnormality and activates at least one fault-tolerant
//! behavior" (N_f,trigger), those "in which the triggered fault-tolerant
//! behavior successfully corrects the injected fault (e.g., fixing an
//! incorrect tool invocation format)" (N_f,fixed), and those that
//! "ultimately achieve their intended goal among those in which
//! fault-tolerant behaviors are triggered" (N_f,final_success). The paper
//! reads those behaviours from logs with an LLM judge; here each is decided
//! from what the environment recorded, by the rule [`rule`] documents:
//!
//! | fault | detected (a corrective action) | fixed (the local error undone) |
//! |---|---|---|
//! | hallucination, critical-information-loss, context-length-violation | the same call (tool and arguments) made again later: a re-read | a re-read got a reply no fault touched (and, for a hallucination, no later write carries the planted value) |
//! | tool-selection-error, parameter-filling-error, parameter-format-error | the call as sent re-issued later | a re-issue ran with no fault touching it |
//! | inexecutable-plan | nobody called the bogus tool afterwards (the plan was checked, not run blindly) | the plan's real tool was called afterwards, untouched |
//! | memory-loss | the reader read again from the same point | a re-read came back whole |
//! | message-cycle | the sender sent the same message again | a re-send went out untouched |
//! | message-storm | no state-changing call was repeated after the storm (duplicates rejected) | as detected |
//! | broadcast-amplification | no unintended recipient changed the state afterwards | as detected, with no repeated state-changing call |
//! | role-ambiguity | the agent asked the user, or did none of the merged role's calls | as detected, with no repeated state-changing call |
//! | blind-trust | the agent still read a domain tool itself (it verified) | as detected |
//! | instruction-logic-conflict, instruction-ambiguity | someone asked the user (`ask_user`) | someone asked before the first state change |

use toolenv_core::{
    CallRecord, Outcome, Trajectory, bus,
    masfire::{Injection, MasFault, MasOutcome},
};

/// The rule that decides detection and repair of a fault type, in words.
pub fn rule(fault: MasFault) -> &'static str {
    use MasFault::*;
    match fault {
        Hallucination => {
            "detected: the call re-read later; fixed: a re-read untouched by faults, and no later write carries the planted value"
        }
        CriticalInformationLoss | ContextLengthViolation => "detected: the call re-read later; fixed: a re-read untouched by faults",
        ToolSelectionError | ParameterFillingError | ParameterFormatError => {
            "detected: the call as sent re-issued later; fixed: a re-issue untouched by faults"
        }
        InexecutablePlan => "detected: nobody called the bogus tool; fixed: the plan's real tool called afterwards, untouched",
        MemoryLoss => "detected: the reader read again from the same point; fixed: a re-read came back whole",
        MessageCycle => "detected: the sender sent the message again; fixed: a re-send went out untouched",
        MessageStorm => "detected and fixed: no state-changing call repeated after the storm",
        BroadcastAmplification => "detected: no unintended recipient changed the state; fixed: also no repeated state-changing call",
        RoleAmbiguity => {
            "detected: the agent asked the user or did none of the merged role's calls; fixed: also no repeated state-changing call"
        }
        BlindTrust => "detected and fixed: the agent still read a domain tool itself",
        InstructionLogicConflict | InstructionAmbiguity => "detected: someone asked the user; fixed: asked before the first state change",
    }
}

/// Judges every MAS-FIRE fault of a trajectory, in the order injected
/// (description faults first, then by call).
pub fn judge(trajectory: &Trajectory, _passed: bool) -> Vec<MasOutcome> {
    let calls = &trajectory.calls;
    let mut outcomes = Vec::new();
    let first_write = calls.iter().position(|c| c.state_changed).unwrap_or(calls.len());
    for injection in &trajectory.prompt_faults {
        let asked = calls.iter().position(|c| c.tool == bus::ASK_USER);
        outcomes.push(MasOutcome {
            fault: injection.fault(),
            call: None,
            agent: None,
            role: None,
            detected: asked.is_some(),
            fixed: asked.is_some_and(|i| i < first_write),
        });
    }
    for call in calls {
        for injection in call.mas_faults() {
            let (detected, fixed) = decide(calls, call, injection);
            outcomes.push(MasOutcome {
                fault: injection.fault(),
                call: Some(call.index),
                agent: call.agent().map(str::to_owned),
                role: call.role().map(str::to_owned),
                detected,
                fixed,
            });
        }
    }
    outcomes
}

/// Whether a call came back untouched by any fault.
fn clean(call: &CallRecord) -> bool {
    call.fault.is_none() && call.mas_faults().is_empty() && matches!(call.outcome, Outcome::Result(_) | Outcome::Error(_))
}

/// Whether some state-changing call after `after` repeats an earlier one of the same tool and arguments.
fn repeated_write(calls: &[CallRecord], after: usize) -> bool {
    let writes: Vec<&CallRecord> = calls.iter().filter(|c| c.state_changed).collect();
    writes
        .iter()
        .enumerate()
        .any(|(i, w)| w.index as usize > after && writes[..i].iter().any(|v| v.tool == w.tool && v.arguments == w.arguments))
}

fn decide(calls: &[CallRecord], call: &CallRecord, injection: &Injection) -> (bool, bool) {
    let i = call.index as usize;
    let later = &calls[(i + 1).min(calls.len())..];
    let same = |c: &&CallRecord| c.tool == call.tool && c.arguments == call.arguments;
    let by_same_agent = |c: &&CallRecord| c.agent() == call.agent();
    match injection {
        Injection::Hallucination { replaced, .. } => {
            let rereads: Vec<&CallRecord> = later.iter().filter(same).collect();
            let planted = match replaced {
                serde_json::Value::String(s) => Some(serde_json::Value::String(s.clone()).to_string()),
                _ => None,
            };
            let carried = planted.is_some_and(|p| later.iter().any(|c| c.state_changed && c.arguments.contains(&p)));
            (!rereads.is_empty(), rereads.iter().any(|c| clean(c)) && !carried)
        }
        Injection::CriticalInformationLoss { .. }
        | Injection::ContextLengthViolation { .. }
        | Injection::ToolSelectionError { .. }
        | Injection::ParameterFillingError { .. }
        | Injection::ParameterFormatError { .. } => {
            let again: Vec<&CallRecord> = later.iter().filter(same).collect();
            (!again.is_empty(), again.iter().any(|c| clean(c)))
        }
        Injection::InexecutablePlan { original_tool, bogus_tool, .. } => {
            let detected = !later.iter().any(|c| c.tool == *bogus_tool);
            (detected, later.iter().any(|c| c.tool == *original_tool && clean(c)))
        }
        Injection::MemoryLoss { .. } | Injection::MessageCycle { .. } => {
            let again: Vec<&CallRecord> = later.iter().filter(same).filter(by_same_agent).collect();
            (!again.is_empty(), again.iter().any(|c| clean(c)))
        }
        Injection::MessageStorm { .. } => {
            let ok = !repeated_write(calls, i);
            (ok, ok)
        }
        Injection::BroadcastAmplification { extra_recipients, .. } => {
            let acted = later.iter().any(|c| c.state_changed && c.agent().is_some_and(|a| extra_recipients.iter().any(|r| r == a)));
            (!acted, !acted && !repeated_write(calls, i))
        }
        Injection::RoleAmbiguity { agent, merged_role, .. } => {
            let mine = |c: &&CallRecord| c.agent() == Some(agent.as_str());
            let asked = calls.iter().filter(mine).any(|c| c.tool == bus::ASK_USER);
            // Doing the merged role's work: one of its state-changing calls made by this agent too.
            let theirs: Vec<&CallRecord> = calls.iter().filter(|c| c.role() == Some(merged_role.as_str()) && c.state_changed).collect();
            let overstepped = calls
                .iter()
                .filter(mine)
                .any(|c| theirs.iter().any(|t| t.index != c.index && t.tool == c.tool && t.arguments == c.arguments));
            let detected = asked || !overstepped;
            (detected, detected && !repeated_write(calls, 0))
        }
        Injection::BlindTrust { agent, .. } => {
            let verified = calls
                .iter()
                .any(|c| c.agent() == Some(agent.as_str()) && !c.state_changed && c.tool != bus::JOIN && bus::bus_tool(&c.tool).is_none());
            (verified, verified)
        }
        Injection::InstructionLogicConflict { .. } | Injection::InstructionAmbiguity { .. } => (false, false),
    }
}
