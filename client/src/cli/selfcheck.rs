//! `toolenv selfcheck`: every task's oracle, checked in-process.

use std::process::ExitCode;

use toolenv_domains::agent::{RANDOM_AGENT_SEEDS, SelfCheck};

/// Checks every oracle: the reference solution and the result-reading solver
/// pass; doing nothing, a seeded random agent and every wrong cheat of the
/// task's corpus fail. Prints a row per task and any problem.
pub(crate) fn selfcheck() -> ExitCode {
    let row = |task: &str, reference: &str, solver: &str, inaction: &str, random: &str, cheats: &str| {
        println!("{task:<36} {reference:<9} {solver:<6} {inaction:<9} {random:<13} {cheats}")
    };
    row("TASK", "REFERENCE", "SOLVER", "INACTION", "RANDOM AGENT", "CHEATS (wrong ones that fail)");
    let mut problems = Vec::new();
    for task in toolenv_domains::suite() {
        let check = SelfCheck::run(task);
        let random = format!("{}/{RANDOM_AGENT_SEEDS} fail", RANDOM_AGENT_SEEDS as usize - check.random_passes.len());
        let wrong = check.cheats.iter().filter(|c| c.wrong).count();
        let caught = check.cheats.iter().filter(|c| c.wrong && !c.verdict.passed).count();
        let cheats = format!("{caught}/{wrong} fail ({} generated)", check.cheats.len());
        let verdict = |passed: bool, expected: bool| match (passed, expected) {
            (true, true) => "pass",
            (false, false) => "fail",
            (true, false) => "PASS",
            (false, true) => "FAIL",
        };
        row(
            &task.id,
            verdict(check.reference.passed, true),
            verdict(check.solver.passed, true),
            verdict(check.inaction.passed, false),
            &random,
            &cheats,
        );
        problems.extend(check.problems().into_iter().map(|p| format!("{}: {p}", task.id)));
    }
    if problems.is_empty() {
        println!("\nevery oracle passes the reference solution and the solver, and fails inaction, random agents and every cheat");
        ExitCode::SUCCESS
    } else {
        println!();
        for problem in &problems {
            println!("problem: {problem}");
        }
        ExitCode::FAILURE
    }
}
