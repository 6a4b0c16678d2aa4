//! Finishing an episode: the verdict on its end state, with the checks
//! only an episode can make (writes applied twice, clarification), its fault
//! figures and whether an ideal agent could have passed it.

use serde_json::{Value, json};

use super::{Episode, ledger};
use crate::oracle::{Changes, CheckOutcome, Verdict};

impl Episode {
    /// The records the episode has changed in the task's initial state.
    pub(crate) fn changes(&self) -> Changes {
        if std::sync::Arc::ptr_eq(&self.world, &self.task.initial) { Changes::default() } else { self.world.changes(&self.task.initial) }
    }

    /// Finishes the episode and judges its end state. Finishing again
    /// returns the same verdict.
    pub fn finish(&mut self) -> &Verdict {
        let verdict = match self.trajectory.verdict.take() {
            Some(verdict) => verdict,
            None => self.judge(&self.changes()).0,
        };
        self.trajectory.verdict.insert(verdict)
    }

    /// The verdict [`Episode::finish`] gives (the episode is done with),
    /// and whether the end state differs from the one the task asks for
    /// outside the task's alternatives (see [`Verdict::judge_compared`]),
    /// given the episode's [`Episode::changes`].
    pub(crate) fn into_verdict_compared(self, changes: &Changes) -> (Verdict, bool) {
        self.judge(changes)
    }

    /// The verdict on the episode's end state (given as its changes), and
    /// whether that state differs from the one the task asks for.
    fn judge(&self, changes: &Changes) -> (Verdict, bool) {
        let final_state_hash = match (self.records_verdict, changes.is_empty()) {
            (false, _) => None,
            (true, true) => Some(self.task.initial_hash().to_owned()),
            (true, false) => Some(crate::json::state_hash(&self.world.to_json())),
        };
        let answer = self.trajectory.answer.as_deref();
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
        verdict.fault_stats = ledger::fault_stats(&self.trajectory.calls);
        verdict.fault_notes = ledger::fault_notes(&self.trajectory.calls);
        // An episode the agent passed was passable; otherwise the solver decides.
        verdict.feasible = self.records_verdict.then(|| verdict.passed || self.feasible());
        if self.team.is_some() {
            verdict.mas_faults = crate::masfire::judge::judge(&self.trajectory, verdict.passed);
        }
        (verdict, differs)
    }

    /// Whether an ideal agent could pass this episode: the solver plays a
    /// fresh episode of the same task, seed, trial, fault profile,
    /// perturbation and call limit in-process. Fault draws are pure functions
    /// of the episode and the call index, so it meets the schedule the agent
    /// met at the same call indices; an agent that makes other calls meets
    /// other draws, which is why a passed episode counts as feasible whatever
    /// the solver meets.
    fn feasible(&self) -> bool {
        let mut replay = Episode::new(&self.task, self.trajectory.seed, self.trajectory.trial)
            .with_max_calls(self.max_calls)
            .with_chaos(self.chaos.clone());
        replay.trajectory.description.clone_from(&self.trajectory.description);
        replay.trajectory.epsilon = self.trajectory.epsilon;
        replay.trajectory.perturbations.clone_from(&self.trajectory.perturbations);
        replay.records_verdict = false;
        crate::solver::solve(&mut replay).feasible()
    }
}
