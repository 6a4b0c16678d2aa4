//! The oracle self-check of a task: the reference solution and the
//! result-reading solver must pass; doing nothing, the random agent, the
//! guesser of withheld slots and every wrong cheat of the corpus must fail;
//! right answers written otherwise must pass and the prose corpus is
//! judged.

use crate::Finish;
use crate::agent::{GUESSES, RANDOM_AGENT_CALLS, RANDOM_AGENT_SEEDS, call_all, guessed, random_agent_writing};
use crate::cheats::{self, PlayedCheat};
use toolenv_core::{Call, Episode, Judgement, TaskRef};

/// The oracle self-check of one task.
#[derive(Debug, Clone)]
pub struct SelfCheck {
    /// The task checked.
    pub task: TaskRef,
    /// The verdict on the reference solution: must pass.
    pub reference: Judgement,
    /// The verdict on the result-reading solver's play: must pass.
    pub solver: Judgement,
    /// The verdict on doing nothing: must fail.
    pub inaction: Judgement,
    /// Random-agent seeds whose episode passed: must be none.
    pub random_passes: Vec<u64>,
    /// The cheat corpus, played: every wrong one must fail.
    pub cheats: Vec<PlayedCheat>,
    /// The verdicts on the solver that guesses a conversational task's
    /// withheld slots (wrongly: [`GUESSES`] look-alikes) instead of asking
    /// the user: every one must fail (a slot a wrong guess gets past is not
    /// needed). Empty when the task withholds nothing.
    pub guesser: Vec<Judgement>,
    /// Right answers written otherwise than the reference's (see
    /// [`crate::answers::right`]), each with whether the oracle passes it
    /// after the reference's calls: all should.
    pub right_answers: Vec<(String, bool)>,
    /// The prose corpus ([`crate::prose::corpus`]) judged after the
    /// reference's calls: how it went.
    pub prose: ProseCounts,
}

/// How a task's prose corpus was judged: right answers and those rejected,
/// wrong answers and those passed (targets: under 2 % each).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProseCounts {
    pub right: usize,
    pub right_rejected: usize,
    pub wrong: usize,
    pub wrong_passed: usize,
}

impl ProseCounts {
    /// Judges the corpus of `task` after the reference's calls in `reference`.
    pub fn of(task: &toolenv_core::Task, reference: &Episode) -> Self {
        let mut counts = ProseCounts::default();
        for case in crate::prose::corpus(task) {
            let passed = reference.clone().finish_with_answer(Some(&case.text)).passed;
            if case.right {
                counts.right += 1;
                counts.right_rejected += usize::from(!passed);
            } else {
                counts.wrong += 1;
                counts.wrong_passed += usize::from(passed);
            }
        }
        counts
    }

    /// Adds another task's counts.
    pub fn add(&mut self, other: ProseCounts) {
        self.right += other.right;
        self.right_rejected += other.right_rejected;
        self.wrong += other.wrong;
        self.wrong_passed += other.wrong_passed;
    }
}

impl SelfCheck {
    /// Runs the self-check of a task.
    pub fn run(task: impl Into<TaskRef>) -> Self {
        Self::run_with(task, RANDOM_AGENT_SEEDS)
    }

    /// Runs the self-check of a task with `random_seeds` random-agent
    /// episodes (the check at scale uses fewer than [`RANDOM_AGENT_SEEDS`]).
    pub fn run_with(task: impl Into<TaskRef>, random_seeds: u64) -> Self {
        let task = &task.into();
        // Feasibility is not what the self-check asks: no solver replay per failing episode.
        let episode = |seed| Episode::new(task, seed, 0).for_pass_or_fail();
        let inaction = episode(0).finish().clone();
        let random_passes = (0..random_seeds)
            .filter(|&seed| {
                // A fault-free read changes nothing: the random agent's writes
                // alone reach the same end state, so the same verdict.
                let writes: Vec<Call> = random_agent_writing(task, seed, true).take(RANDOM_AGENT_CALLS).flatten().collect();
                let mut episode = episode(seed);
                call_all(&mut episode, &writes);
                // An episode that changed nothing ends as doing nothing does.
                if episode.changes().is_empty() { inaction.passed } else { episode.finish().passed }
            })
            .collect();
        let mut prefixes = cheats::Prefixes::new(task);
        let cheats = cheats::cheats(task).into_iter().map(|cheat| prefixes.play_cheat(cheat)).collect();
        let right_answers = crate::answers::right(task)
            .into_iter()
            .map(|(label, answer)| {
                let mut steps: Vec<cheats::Step> = task.reference.iter().cloned().map(cheats::Step::Call).collect();
                steps.push(cheats::Step::Answer(Some(answer)));
                let passed = prefixes.play_cheat(cheats::Cheat { label: label.clone(), steps }).verdict.passed;
                (label, passed)
            })
            .collect();
        let solver = crate::solver::solve(&mut episode(0)).verdict;
        let guesser = (0..GUESSES)
            .map_while(|k| guessed(task, k))
            .map(|guessed| {
                let mut played = episode(0);
                let _ = crate::solver::run(&guessed, &mut played);
                played.finish().clone()
            })
            .collect();
        let prose = ProseCounts::of(task, &prefixes.reference());
        let reference = prefixes.reference().finish_with_answer(task.reference_answer()).clone();
        Self { task: task.clone(), reference, solver, inaction, random_passes, cheats, guesser, right_answers, prose }
    }

    /// What is wrong with the task's oracle, if anything.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.reference.passed {
            let failed: Vec<&str> = self.reference.failures().map(|c| c.name.as_str()).collect();
            problems.push(format!("reference solution fails: {}", failed.join("; ")));
        }
        if !self.solver.passed {
            let failed: Vec<&str> = self.solver.failures().map(|c| c.name.as_str()).collect();
            problems.push(format!("the solver fails: {}", failed.join("; ")));
        }
        let lucky: Vec<usize> = self.guesser.iter().enumerate().filter(|(_, g)| g.passed).map(|(k, _)| k).collect();
        if !lucky.is_empty() {
            problems.push(format!("an agent that guesses the withheld slots instead of asking passes with guesses {lucky:?}"));
        }
        if self.inaction.passed {
            problems.push("doing nothing passes".to_owned());
        }
        if !self.random_passes.is_empty() {
            problems.push(format!("random agent passes with seeds {:?}", self.random_passes));
        }
        for played in self.cheats.iter().filter(|p| p.wrong && p.verdict.passed) {
            problems.push(format!("a cheat passes: {}", played.cheat.label));
        }
        problems
    }

    /// The answer cheats played (wrong final answers after the right calls)
    /// and how many of them pass: `(played, passing)`.
    pub fn answer_cheats(&self) -> (usize, usize) {
        let answered = self.cheats.iter().filter(|p| p.wrong && matches!(p.cheat.steps.last(), Some(cheats::Step::Answer(_))));
        answered.fold((0, 0), |(n, passing), p| (n + 1, passing + usize::from(p.verdict.passed)))
    }

    /// The right answers written otherwise the oracle rejects, by label.
    pub fn rejected_right_answers(&self) -> impl Iterator<Item = &str> {
        self.right_answers.iter().filter(|(_, passed)| !passed).map(|(label, _)| label.as_str())
    }
}
