//! Finishing an episode: the verdict on its end state, with the checks
//! only an episode can make (writes applied twice, clarification) and its
//! fault figures, and beside it what the layers above decide ([`Assess`]):
//! whether an ideal agent could have passed it, what became of its MAS-FIRE
//! faults.

use serde::Serialize;
use serde_json::{Value, json};

use super::{Episode, FaultStats, Trajectory, ledger};
use crate::{
    diff::Changes,
    masfire::MasOutcome,
    oracle::{CheckOutcome, Verdict},
};

/// An episode's judgement: the oracle's [`Verdict`] (which it dereferences
/// to) with the episode's own checks among its checks, its fault figures,
/// and what the layers above attach beside it. Serialized as one object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    /// The oracle's verdict, with the episode's checks.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Fault recovery figures of the episode.
    pub fault_stats: FaultStats,
    /// What the faults met may explain, e.g. a suspension or a schema change.
    pub fault_notes: Vec<String>,
    /// Whether an ideal agent could still have passed the episode under its
    /// fault schedule (see [`Assess::feasible`]). `None` when not decided.
    pub feasible: Option<bool>,
    /// What became of each MAS-FIRE fault injected (detected, fixed), in a
    /// multi-agent episode or one under a MAS-FIRE profile.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mas_faults: Vec<MasOutcome>,
}

impl std::ops::Deref for Judgement {
    type Target = Verdict;

    fn deref(&self) -> &Verdict {
        &self.verdict
    }
}

/// What the layers above the engine decide about a finished episode; the
/// domains crate's implementations judge MAS-FIRE faults by their rules and,
/// when feasibility is asked for, replay the episode with its solver.
pub trait Assess {
    /// Whether an ideal agent could pass the episode (asked only when its
    /// agent did not and its verdict is for the record); `None` when this
    /// assessment does not decide it.
    fn feasible(&self, episode: &Episode) -> Option<bool>;

    /// What became of each MAS-FIRE fault of a team's trajectory.
    fn mas_outcomes(&self, trajectory: &Trajectory, passed: bool) -> Vec<MasOutcome>;
}

impl Episode {
    /// The records the episode has changed in the task's initial state.
    pub fn changes(&self) -> Changes {
        if std::sync::Arc::ptr_eq(&self.world, &self.task.initial) { Changes::default() } else { self.world.changes(&self.task.initial) }
    }

    /// Finishes the episode and judges its end state, with `assess`
    /// deciding what the engine cannot. Finishing again returns the same
    /// judgement, with its feasibility decided now if it was not before and
    /// `assess` decides it.
    pub fn finish_with(&mut self, assess: &dyn Assess) -> &Judgement {
        let mut judgement = match self.trajectory.verdict.take() {
            Some(judgement) => judgement,
            None => self.judge(&self.changes(), Some(assess)).0,
        };
        if judgement.feasible.is_none() && self.records_verdict {
            // An episode the agent passed was passable; otherwise the layer above decides.
            judgement.feasible = if judgement.passed { Some(true) } else { assess.feasible(self) };
        }
        self.trajectory.verdict.insert(judgement)
    }

    /// The verdict finishing gives (the episode is done with),
    /// and whether the end state differs from the one the task asks for
    /// outside the task's alternatives (see [`Verdict::judge_compared`]),
    /// given the episode's [`Episode::changes`].
    pub fn into_verdict_compared(self, changes: &Changes) -> (Judgement, bool) {
        self.judge(changes, None)
    }

    /// The verdict on the episode's end state (given as its changes), and
    /// whether that state differs from the one the task asks for.
    fn judge(&self, changes: &Changes, assess: Option<&dyn Assess>) -> (Judgement, bool) {
        let final_state_hash = match (self.records_verdict, changes.is_empty()) {
            (false, _) => None,
            (true, true) => Some(self.task.initial_hash().to_owned()),
            (true, false) => Some(crate::json::state_hash(&self.world.to_json())),
        };
        let trajectory = &self.trajectory;
        let answer = match (&trajectory.answer_json, &trajectory.answer, &trajectory.answer_ruling) {
            (Some(typed), ..) => crate::Answer::Typed(typed),
            (None, Some(prose), Some(ruling)) => crate::Answer::Ruled(prose, ruling),
            (None, prose, _) => crate::Answer::from(prose.as_deref()),
        };
        let (mut verdict, differs) = Verdict::judge_compared(&self.task, changes, final_state_hash, answer);
        let duplicates: Vec<Value> =
            self.faults.duplicates.iter().map(|&(first, repeat)| json!({"call": repeat, "repeats_lost_reply_of_call": first})).collect();
        verdict.passed &= duplicates.is_empty();
        verdict.checks.push(CheckOutcome {
            name: crate::oracle::DUPLICATE_CHECK.to_owned(),
            passed: duplicates.is_empty(),
            expected: Value::Array(Vec::new()),
            actual: Value::Array(duplicates),
        });
        if let Some(check) = self.clarification_check() {
            verdict.passed &= check.passed;
            verdict.checks.push(check);
        }
        let passed = verdict.passed;
        let judgement = Judgement {
            verdict,
            fault_stats: ledger::fault_stats(&self.trajectory.calls),
            fault_notes: ledger::fault_notes(&self.trajectory.calls),
            // Decided by `finish_with`.
            feasible: None,
            mas_faults: match assess {
                Some(assess) if self.team.is_some() => assess.mas_outcomes(&self.trajectory, passed),
                _ => Vec::new(),
            },
        };
        (judgement, differs)
    }

    /// A fresh episode of the same task, seed, trial, fault profile,
    /// perturbation and call limit, judged only for pass or fail: what an
    /// [`Assess::feasible`] plays to decide feasibility. Fault draws are pure
    /// functions of the episode and the call index, so it meets the schedule
    /// the agent met at the same call indices; an agent that makes other
    /// calls meets other draws, which is why a passed episode counts as
    /// feasible whatever the replay meets.
    pub fn feasibility_replay(&self) -> Episode {
        let mut replay = Episode::new(&self.task, self.trajectory.seed, self.trajectory.trial)
            .with_max_calls(self.max_calls)
            .with_chaos(self.chaos.clone());
        replay.trajectory.description.clone_from(&self.trajectory.description);
        replay.trajectory.epsilon = self.trajectory.epsilon;
        replay.trajectory.perturbations.clone_from(&self.trajectory.perturbations);
        replay.records_verdict = false;
        replay
    }
}
