//! Finishing an episode with what only this crate can decide: whether an
//! ideal agent could have passed it (the solver replays it) and what became
//! of its MAS-FIRE faults (the judging rules).

use toolenv_core::{Assess, Episode, Judgement, Trajectory, masfire::MasOutcome};

/// The engine's [`Assess`] with the solver and the MAS-FIRE rules.
#[derive(Debug, Clone, Copy, Default)]
pub struct Assessor;

impl Assess for Assessor {
    fn feasible(&self, episode: &Episode) -> bool {
        crate::solver::solve(&mut episode.feasibility_replay()).feasible()
    }

    fn mas_outcomes(&self, trajectory: &Trajectory, passed: bool) -> Vec<MasOutcome> {
        crate::masfire::judge::judge(trajectory, passed)
    }
}

/// Finishing an episode and judging it completely: the oracle's verdict,
/// the episode's fault figures, feasibility and MAS-FIRE outcomes.
pub trait Finish {
    /// Finishes the episode and judges it; finishing again returns the same judgement.
    fn finish(&mut self) -> &Judgement;

    /// Finishes the episode with a final answer (see [`Episode::answer`]),
    /// or with whatever answer it was given before when `None`.
    fn finish_with_answer(&mut self, answer: Option<&str>) -> &Judgement;
}

impl Finish for Episode {
    fn finish(&mut self) -> &Judgement {
        self.finish_with(&Assessor)
    }

    fn finish_with_answer(&mut self, answer: Option<&str>) -> &Judgement {
        if let Some(answer) = answer {
            self.answer(answer);
        }
        self.finish()
    }
}
