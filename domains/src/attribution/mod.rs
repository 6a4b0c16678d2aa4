//! Failure attribution by counterfactual replay.
//!
//! An episode is a pure function of its inputs, so "would it still have
//! passed had the agent done otherwise from step t on?" is answered, not
//! guessed: fork the recorded trajectory after its first t calls
//! ([`Episode::fork`]) and let an ideal continuation play on under the same
//! remaining fault schedule (the draws are functions of the call index).
//!
//! - The **decisive step** is the last fork point from which a continuation
//!   passes: every later fork fails (Who&When's `mistake_step`). Step `n`
//!   (the number of calls) is the agent's stop: when every prefix stays
//!   recoverable, the agent stopped prematurely.
//! - **One feasibility.** Whether any agent could have passed is the
//!   verdict's `feasible` (the result-reading solver replaying the episode's
//!   fault schedule from its start), the figure the run report's ceilings and
//!   infeasible counts read; attribution reads it and never decides it
//!   otherwise. An infeasible episode is the **environment's**, infeasible
//!   from the start, its error at the call where the fault no agent gets past
//!   took effect (the suspension), else at step 0; the agent's errors follow.
//!   A feasible failure is an **agent's** (or the user's, below): its
//!   decisive step's agent, or when no continuation tried passes from any
//!   fork (the solver gave up for a reason of its own), its first error.
//! - Error types follow VerifyMAS/MAST (FM-1.1 … FM-3.3) with finer toolenv
//!   types beneath ([`ErrorType`]), by rules over the calls, the oracle's
//!   failed checks and the fault ledger (`classify.rs`); an episode can carry
//!   several agent–error pairs, the decisive one first.
//!
//! - In a conversational episode whose user's answers came from outside (an
//!   LLM user), the **user** is responsible when an answer told a slot
//!   wrong and the episode passes with the true answer in its place
//!   (`user.rs`); the rule-based user, always right, never is.
//!
//! The continuation (`continuation.rs`) tries the task's remaining reference
//! writes (with retries and idempotency keys, skipping the writes the prefix
//! already applied), then the result-reading solver from where the fork stands.

use crate::Finish;
use serde::Serialize;

use toolenv_core::{Episode, ForkError, Source, Task, Verdict};

mod classify;
mod continuation;
mod taxonomy;
#[cfg(test)]
mod tests;
mod user;

pub use continuation::Continuation;
use continuation::continue_from;
pub use taxonomy::{ErrorType, Mast};

/// The name attribution gives the environment as a responsible party.
pub const ENVIRONMENT: &str = "environment";

/// Who is responsible for an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Responsible {
    /// An agent of the episode (see [`AttributedError::agent`]).
    Agent,
    /// The environment: an injected fault no agent gets past.
    Environment,
    /// The simulated user (an LLM user): an answer that told a slot wrong.
    User,
}

/// One agent–error pair of a failed episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttributedError {
    /// The step: a call's index, or the number of calls for the agent's stop.
    pub step: u32,
    /// Who is responsible.
    pub responsible: Responsible,
    /// The agent's id when the step names one (multi-agent episodes); `None`
    /// for the episode's only agent, or for the environment or the user.
    pub agent: Option<String>,
    /// The toolenv error type.
    pub error: ErrorType,
    /// The MAST failure mode it maps to (`None` for the environment; FM-2.4 for the user).
    pub mast: Option<Mast>,
    /// Why, in one sentence.
    pub reason: String,
}

impl AttributedError {
    fn new(step: u32, responsible: Responsible, error: ErrorType, reason: String) -> Self {
        Self { step, responsible, agent: None, error, mast: error.mast(), reason }
    }

    /// The responsible party's name: the environment, the step's agent, or `episode_agent`.
    pub fn party<'a>(&'a self, episode_agent: &'a str) -> &'a str {
        match self.responsible {
            Responsible::Environment => ENVIRONMENT,
            Responsible::User => toolenv_core::user::USER,
            Responsible::Agent => self.agent.as_deref().unwrap_or(episode_agent),
        }
    }
}

/// The attribution of one episode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Attribution {
    /// Whether the episode passed (then nothing is attributed).
    pub passed: bool,
    /// The number of calls of the trajectory (the agent's stop is step `steps`).
    pub steps: u32,
    /// The decisive step: forking there and continuing passes, forking at
    /// any later step does not. `None` when the episode passed, was
    /// infeasible, or no fork passes.
    pub decisive_step: Option<u32>,
    /// The verdict found the episode infeasible: no agent could pass it
    /// under its fault schedule (the verdict's `feasible`, false).
    pub infeasible_from_start: bool,
    /// Every prefix stayed recoverable: the agent stopped too early.
    pub premature_stop: bool,
    /// Who is responsible for the decisive error.
    pub responsible: Option<Responsible>,
    /// The call at which the unrecoverable fault took effect, when the environment is responsible.
    pub fault_step: Option<u32>,
    /// The agent–error pairs, the decisive one first.
    pub errors: Vec<AttributedError>,
    /// How many counterfactual continuations were played.
    pub continuations: u32,
}

/// Attributes a recorded episode: replays it (each call checked against its
/// record) and forks it backwards from its end until a continuation passes.
/// The verdict is the recorded one, or judged again when not recorded; its
/// feasibility is the recorded one, or decided as finishing decides it
/// (the solver's replay) when not recorded.
pub fn attribute(source: &Source, trajectory: &toolenv_core::Trajectory) -> Result<Attribution, ForkError> {
    let task = &source.task;
    let n = trajectory.calls.len();
    // One forward replay, keeping the episode at every fork point.
    let mut forks = Vec::with_capacity(n + 1);
    let mut episode = Episode::recreate(source)?;
    for (index, recorded) in trajectory.calls.iter().enumerate() {
        forks.push(episode.clone());
        let replayed = episode.replay_call(&recorded.into()).map_err(|error| ForkError::Refused { index, error })?;
        if replayed != recorded {
            let json = |r| serde_json::to_string(r).unwrap_or_default();
            return Err(ForkError::Diverged { index, expected: json(recorded), actual: json(replayed) });
        }
    }
    let (verdict, recorded_feasibility) = match &trajectory.verdict {
        Some(judgement) => (judgement.verdict.clone(), judgement.feasible),
        None => {
            let mut finished = episode.counterfactual(false);
            finished.answer_as(trajectory);
            (finished.finish().verdict.clone(), None)
        }
    };
    // One feasibility: the verdict's, the figure the report's ceilings read.
    let feasible = verdict.passed || recorded_feasibility.unwrap_or_else(|| crate::finish::feasible(&episode));
    forks.push(episode);
    let mut attribution = attribute_forks(task, trajectory, &verdict, feasible, &forks);
    if !attribution.passed
        && feasible
        && let Some(error) = user::misinformed(source, trajectory)
    {
        // The user's wrong answer is the decisive error; the agent's that followed from it stay listed.
        attribution.decisive_step = Some(error.step);
        attribution.responsible = Some(Responsible::User);
        attribution.premature_stop = false;
        attribution.errors.insert(0, error);
    }
    Ok(attribution)
}

/// Whether an ideal continuation passes from the fork of a recorded episode
/// after its first `steps` calls (the question attribution asks at every step).
pub fn passes_from(source: &Source, calls: &[toolenv_core::CallRecord], steps: usize) -> Result<bool, ForkError> {
    let fork = Episode::fork(source, calls, steps)?;
    Ok(continue_from(&source.task, &continuation::Plan::of(&source.task), &fork, false).passed)
}

/// The attribution given the episode at every fork point (`forks[p]`: after
/// `p` calls) and whether the verdict found it feasible.
fn attribute_forks(
    task: &Task,
    trajectory: &toolenv_core::Trajectory,
    verdict: &Verdict,
    feasible: bool,
    forks: &[Episode],
) -> Attribution {
    let n = trajectory.calls.len() as u32;
    let mut attribution = Attribution {
        passed: verdict.passed,
        steps: n,
        decisive_step: None,
        infeasible_from_start: false,
        premature_stop: false,
        responsible: None,
        fault_step: None,
        errors: Vec::new(),
        continuations: 0,
    };
    if verdict.passed {
        return attribution;
    }
    let calls = &trajectory.calls;
    let evidence = classify::Evidence::of(task, trajectory, verdict);
    // A team that acted on a corrupted description without asking: at its first write.
    let unasked = verdict.checks.iter().any(|c| c.name == toolenv_core::CLARIFICATION_CHECK && !c.passed).then(|| {
        let step = calls.iter().find(|c| c.state_changed).map_or(n, |c| c.index);
        AttributedError::new(
            step,
            Responsible::Agent,
            ErrorType::NoClarificationAsked,
            "the description was made ambiguous or contradictory and the team acted without asking the user".to_owned(),
        )
    });
    let plan = continuation::Plan::of(task);
    let mut continuations = 0;
    let mut passes = |p: usize| {
        continuations += 1;
        continue_from(task, &plan, &forks[p], false).passed
    };
    // An infeasible episode has no fork to search: no agent could pass it from the start.
    let decisive = if feasible { (0..forks.len()).rev().find(|&p| passes(p)) } else { None };
    match decisive {
        None if !feasible => {
            // The environment's, from the call where the fault no agent gets past
            // (a suspension) took effect in the agent's episode, else from the start.
            let suspension =
                calls.iter().find(|c| c.fault.is_some_and(|f| f.kind == toolenv_core::chaos::FaultKind::HardRateLimit && f.new));
            attribution.infeasible_from_start = true;
            attribution.responsible = Some(Responsible::Environment);
            attribution.fault_step = suspension.map(|c| c.index);
            attribution.errors.push(classify::environment(attribution.fault_step.unwrap_or(0), suspension));
            attribution.errors.extend(evidence.agent_errors());
        }
        None => {
            // Feasible, yet no continuation tried passes from any fork: the
            // agent's errors, the first one decisive.
            attribution.errors.extend(evidence.agent_errors());
            if attribution.errors.is_empty() {
                attribution.errors.push(evidence.decisive(n));
            }
        }
        Some(s) => {
            attribution.decisive_step = Some(s as u32);
            attribution.premature_stop = s as u32 == n;
            attribution.errors.push(evidence.decisive(s as u32));
            for error in evidence.agent_errors() {
                if !attribution.errors.iter().any(|e| e.error == error.error && e.step == error.step) {
                    attribution.errors.push(error);
                }
            }
        }
    }
    if let Some(unasked) = unasked
        && !attribution.errors.iter().any(|e| e.error == ErrorType::NoClarificationAsked)
    {
        attribution.errors.push(unasked);
    }
    if attribution.responsible.is_none() {
        attribution.responsible = attribution.errors.first().map(|e| e.responsible);
    }
    // In a team's episode, each agent error names the agent that made the step.
    for error in attribution.errors.iter_mut().filter(|e| e.responsible == Responsible::Agent) {
        error.agent = calls.get(error.step as usize).and_then(|c| c.agent().map(str::to_owned));
    }
    attribution.continuations = continuations;
    attribution
}
