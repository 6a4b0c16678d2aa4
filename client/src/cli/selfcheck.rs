//! `toolenv selfcheck`: every task's oracle, checked in-process.

use std::process::ExitCode;

use toolenv_domains::agent::{RANDOM_AGENT_SEEDS, SelfCheck};

/// Checks every oracle: the reference solution passes, doing nothing fails,
/// a seeded random agent fails; prints a row per task and any problem.
pub(crate) fn selfcheck() -> ExitCode {
    println!("{:<36} {:<9} {:<9} {:<13}", "TASK", "REFERENCE", "INACTION", "RANDOM AGENT");
    let mut problems = Vec::new();
    for task in toolenv_domains::suite() {
        let check = SelfCheck::run(task);
        let random = format!("{}/{RANDOM_AGENT_SEEDS} fail", RANDOM_AGENT_SEEDS as usize - check.random_passes.len());
        println!(
            "{:<36} {:<9} {:<9} {:<13}",
            task.id,
            if check.reference.passed { "pass" } else { "FAIL" },
            if check.inaction.passed { "PASS" } else { "fail" },
            random
        );
        problems.extend(check.problems().into_iter().map(|p| format!("{}: {p}", task.id)));
    }
    if problems.is_empty() {
        println!("\nevery oracle passes its reference solution and fails inaction and random agents");
        ExitCode::SUCCESS
    } else {
        println!();
        for problem in &problems {
            println!("problem: {problem}");
        }
        ExitCode::FAILURE
    }
}
