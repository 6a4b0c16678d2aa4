//! `toolenv selfcheck`: every task's oracle, checked in-process, over a suite.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use toolenv_domains::agent::{RANDOM_AGENT_SEEDS, SelfCheck};
use toolenv_domains::generate::Suite;
use toolenv_domains::{Domain, TaskRef};

use super::args::SelfcheckArgs;

/// Random-agent episodes per task in a generated suite's check.
const GENERATED_RANDOM_SEEDS: u64 = 4;

/// Checks every oracle of a suite: the reference solution and the
/// result-reading solver pass; doing nothing, seeded random agents and every
/// wrong cheat of the task's corpus fail. Prints a row per task (paper suite
/// or --verbose), the rejects by cause per domain and level, and every
/// problem. A generator that produces an unsound task is a bug: the command
/// fails when any task is rejected.
pub(crate) fn selfcheck(args: &SelfcheckArgs) -> ExitCode {
    let suite = args.filter.suite;
    let random_seeds = args.random_seeds.unwrap_or(if suite == Suite::Paper { RANDOM_AGENT_SEEDS } else { GENERATED_RANDOM_SEEDS });
    let verbose = args.verbose || suite == Suite::Paper;
    let started = Instant::now();
    let tasks = suite.tasks(args.filter.domain.map(Into::into), args.filter.level);
    let generated = started.elapsed();
    let checks = check_all(&tasks, random_seeds);
    let row = |task: &str, reference: &str, solver: &str, inaction: &str, random: &str, cheats: &str| {
        println!("{task:<40} {reference:<9} {solver:<6} {inaction:<9} {random:<13} {cheats}")
    };
    if verbose {
        row("TASK", "REFERENCE", "SOLVER", "INACTION", "RANDOM AGENT", "CHEATS (wrong ones that fail)");
    }
    let mut problems = Vec::new();
    // Per (domain, level): tasks checked, tasks rejected, and rejects by cause.
    let mut cells: BTreeMap<(Domain, u8), Cell> = BTreeMap::new();
    for check in &checks {
        let task = &check.task;
        if verbose {
            let random = format!("{}/{random_seeds} fail", random_seeds as usize - check.random_passes.len());
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
        }
        let cell = cells.entry((task.domain, task.level)).or_default();
        cell.0 += 1;
        let causes = causes(check);
        cell.1 += usize::from(!causes.is_empty());
        for cause in causes {
            *cell.2.entry(cause).or_default() += 1;
        }
        problems.extend(check.problems().into_iter().map(|p| format!("{}: {p}", task.id)));
    }
    println!(
        "\n{} tasks of the {suite} suite: generated in {:.2} s, checked in {:.2} s ({random_seeds} random-agent episodes per task)",
        checks.len(),
        generated.as_secs_f64(),
        (started.elapsed() - generated).as_secs_f64()
    );
    println!("{:<11} {:>5} {:>6} {:>8}  REJECTS BY CAUSE", "DOMAIN", "LEVEL", "TASKS", "REJECTED");
    for ((domain, level), (tasks, rejected, causes)) in &cells {
        let causes: Vec<String> = causes.iter().map(|(cause, n)| format!("{cause}: {n}")).collect();
        let causes = if causes.is_empty() { "none".to_owned() } else { causes.join(", ") };
        println!("{domain:<11} {level:>5} {tasks:>6} {rejected:>8}  {causes}");
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

/// Per domain and level: tasks checked, tasks rejected, and rejects by cause.
type Cell = (usize, usize, BTreeMap<&'static str, usize>);

/// Self-checks tasks on every core, in order.
fn check_all(tasks: &[TaskRef], random_seeds: u64) -> Vec<SelfCheck> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(tasks.len().max(1));
    let chunk = tasks.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = tasks
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(|t| SelfCheck::run_with(t, random_seeds)).collect::<Vec<_>>()))
            .collect();
        // A panic in a check is a bug in a generator or a tool: let it show.
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

/// Why a task is rejected, one cause per kind of problem.
fn causes(check: &SelfCheck) -> Vec<&'static str> {
    let mut causes = Vec::new();
    if !check.reference.passed {
        causes.push("reference fails");
    }
    if !check.solver.passed {
        causes.push("solver fails");
    }
    if check.inaction.passed {
        causes.push("inaction passes");
    }
    if !check.random_passes.is_empty() {
        causes.push("random agent passes");
    }
    if check.cheats.iter().any(|c| c.wrong && c.verdict.passed) {
        causes.push("a cheat passes");
    }
    causes
}
