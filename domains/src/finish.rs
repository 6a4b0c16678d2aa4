//! Finishing an episode with what only this crate can decide: whether an
//! ideal agent could have passed it (the solver replays it) and what became
//! of its MAS-FIRE faults (the judging rules).

use toolenv_core::{Assess, Episode, Judgement, Trajectory, masfire::MasOutcome};

/// The engine's [`Assess`] with the solver and the MAS-FIRE rules: what a
/// run records.
#[derive(Debug, Clone, Copy, Default)]
pub struct Assessor;

impl Assess for Assessor {
    fn feasible(&self, episode: &Episode) -> Option<bool> {
        Some(feasible(episode))
    }

    fn mas_outcomes(&self, trajectory: &Trajectory, passed: bool) -> Vec<MasOutcome> {
        crate::masfire::judge::judge(trajectory, passed)
    }
}

/// The MAS-FIRE rules with a feasibility already known, or left undecided
/// (`None`): no solver replay.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Known(pub(crate) Option<bool>);

impl Assess for Known {
    fn feasible(&self, _: &Episode) -> Option<bool> {
        self.0
    }

    fn mas_outcomes(&self, trajectory: &Trajectory, passed: bool) -> Vec<MasOutcome> {
        crate::masfire::judge::judge(trajectory, passed)
    }
}

/// Whether an ideal agent could have passed the episode: the solver replays
/// it ([`Episode::feasibility_replay`]).
pub(crate) fn feasible(episode: &Episode) -> bool {
    crate::solver::solve(&mut episode.feasibility_replay()).feasible()
}

/// Finishing an episode and judging it: the oracle's verdict, the episode's
/// fault figures and MAS-FIRE outcomes and, on request, its feasibility.
pub trait Finish {
    /// Finishes the episode and judges it; finishing again returns the same
    /// judgement. Feasibility is decided on request
    /// ([`Finish::finish_with_feasibility`]): until then
    /// `Judgement::feasible` is `Some(true)` for a passed episode and `None`
    /// for a failed one.
    fn finish(&mut self) -> &Judgement;

    /// Finishes the episode with a final answer (see [`Episode::answer`]),
    /// or with whatever answer it was given before when `None`.
    fn finish_with_answer(&mut self, answer: Option<&str>) -> &Judgement;

    /// Finishes the episode (or takes the judgement it finished with) as a
    /// run records it: a failed episode is also replayed with the solver to
    /// decide whether an ideal agent could have passed it
    /// (`Judgement::feasible`).
    fn finish_with_feasibility(&mut self) -> &Judgement;
}

impl Finish for Episode {
    fn finish(&mut self) -> &Judgement {
        self.finish_with(&Known(None))
    }

    fn finish_with_answer(&mut self, answer: Option<&str>) -> &Judgement {
        if let Some(answer) = answer {
            self.answer(answer);
        }
        self.finish()
    }

    fn finish_with_feasibility(&mut self) -> &Judgement {
        self.finish_with(&Assessor)
    }
}
