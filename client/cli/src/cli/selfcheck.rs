//! `toolenv selfcheck`: every task's oracle, checked in-process, over a suite.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use toolenv_core::Domain;
use toolenv_domains::{
    agent::RANDOM_AGENT_SEEDS,
    generate::Suite,
    selfcheck::{ProseCounts, SelfCheck},
};

use toolenv_runs::report::counted;

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
    let suite = args.filter.suite();
    let small = matches!(suite, Suite::Paper | Suite::File { .. });
    let random_seeds = args.random_seeds.unwrap_or(if small { RANDOM_AGENT_SEEDS } else { GENERATED_RANDOM_SEEDS });
    let verbose = args.verbose || small;
    let started = Instant::now();
    let (domain, level) = (args.filter.domain.map(Into::into), args.filter.level);
    let checked = check_all(&suite, domain, level, random_seeds);
    if verbose {
        println!("{:<40} {:<9} {:<6} {:<9} {:<13} WRONG CHEATS FAILED", "TASK", "REFERENCE", "SOLVER", "INACTION", "RANDOM AGENT");
    }
    let mut problems = Vec::new();
    // Per (domain, level): tasks checked, tasks rejected, and rejects by cause.
    let mut cells: BTreeMap<(Domain, u8), Cell> = BTreeMap::new();
    // Per (domain, level): the answer cheats and the right answers written otherwise.
    let mut answer_cells: BTreeMap<(Domain, u8), Answers> = BTreeMap::new();
    let mut rejected_right = Vec::new();
    // Per answer kind: the prose corpus's figures.
    let mut prose: BTreeMap<&str, ProseCounts> = BTreeMap::new();
    for check in &checked {
        if verbose {
            println!("{}", check.row);
        }
        let cell = cells.entry((check.domain, check.level)).or_default();
        cell.0 += 1;
        cell.1 += usize::from(!check.causes.is_empty());
        for cause in &check.causes {
            *cell.2.entry(cause).or_default() += 1;
        }
        problems.extend(check.problems.iter().map(|p| format!("{}: {p}", check.id)));
        let answers = answer_cells.entry((check.domain, check.level)).or_default();
        answers.add(&check.answers);
        rejected_right.extend(check.answers.rejected.iter().map(|label| format!("{}: {label}", check.id)));
        if check.prose.right + check.prose.wrong > 0 {
            prose.entry(check.kind.as_str()).or_default().add(check.prose);
        }
    }
    println!(
        "\n{} of the {suite} suite checked in {:.2} s ({} per task)",
        counted(checked.len() as u64, "task"),
        started.elapsed().as_secs_f64(),
        counted(random_seeds, "random-agent episode")
    );
    println!("{:<11} {:>5} {:>6} {:>8}  REJECTS BY CAUSE", "DOMAIN", "LEVEL", "TASKS", "REJECTED");
    for ((domain, level), (tasks, rejected, causes)) in &cells {
        let causes: Vec<String> = causes.iter().map(|(cause, n)| format!("{cause}: {n}")).collect();
        let causes = if causes.is_empty() { "none".to_owned() } else { causes.join(", ") };
        println!("{domain:<11} {level:>5} {tasks:>6} {rejected:>8}  {causes}");
    }
    print_answers(&answer_cells, &rejected_right);
    print_prose(&prose);
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

/// The answer corpus's figures, per domain and level: answer cheats that
/// must fail and right answers written otherwise that must pass.
#[derive(Debug, Default)]
struct Answers {
    /// Answer cheats played.
    cheats: usize,
    /// Of those, how many passed (target 0).
    cheats_passing: usize,
    /// Right answers played.
    right: usize,
    /// The labels of the right answers rejected (target under 1 %).
    rejected: Vec<String>,
}

impl Answers {
    fn of(check: &SelfCheck) -> Self {
        let (cheats, cheats_passing) = check.answer_cheats();
        let rejected = check.rejected_right_answers().map(str::to_owned).collect();
        Answers { cheats, cheats_passing, right: check.right_answers.len(), rejected }
    }

    fn add(&mut self, other: &Answers) {
        self.cheats += other.cheats;
        self.cheats_passing += other.cheats_passing;
        self.right += other.right;
        self.rejected.extend(other.rejected.iter().cloned());
    }
}

/// The answer table: per domain and level with answer tasks, the answer
/// cheats passing and the right answers rejected, with their rates; then
/// every right answer rejected.
fn print_answers(cells: &BTreeMap<(Domain, u8), Answers>, rejected: &[String]) {
    if cells.values().all(|a| a.cheats + a.right == 0) {
        return;
    }
    let rate = |n: usize, of: usize| if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 };
    println!(
        "\n{:<11} {:>5} {:>14} {:>8} {:>14} {:>8}  (answers: cheats must fail, right answers written otherwise must pass)",
        "DOMAIN", "LEVEL", "ANSWER CHEATS", "PASSING", "RIGHT ANSWERS", "REJECTED"
    );
    for ((domain, level), a) in cells.iter().filter(|(_, a)| a.cheats + a.right > 0) {
        let (passing, rejected) = (rate(a.cheats_passing, a.cheats), rate(a.rejected.len(), a.right));
        println!(
            "{domain:<11} {level:>5} {:>14} {:>7.2}% {:>14} {:>7.2}%",
            format!("{}/{}", a.cheats_passing, a.cheats),
            passing,
            format!("{}/{}", a.rejected.len(), a.right),
            rejected
        );
    }
    for label in rejected {
        println!("right answer rejected: {label}");
    }
}

/// The prose corpus's table: per answer kind, right answers and those
/// rejected, wrong answers and those passed, with their rates.
fn print_prose(kinds: &BTreeMap<&str, ProseCounts>) {
    if kinds.is_empty() {
        return;
    }
    let rate = |n: usize, of: usize| if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 };
    println!(
        "\n{:<16} {:>6} {:>9} {:>8} {:>6} {:>7} {:>8}  (the prose corpus: answers written as chat models write them)",
        "ANSWER KIND", "RIGHT", "REJECTED", "", "WRONG", "PASSED", ""
    );
    for (kind, p) in kinds {
        println!(
            "{kind:<16} {:>6} {:>9} {:>7.2}% {:>6} {:>7} {:>7.2}%",
            p.right,
            p.right_rejected,
            rate(p.right_rejected, p.right),
            p.wrong,
            p.wrong_passed,
            rate(p.wrong_passed, p.wrong)
        );
    }
}

/// Per domain and level: tasks checked, tasks rejected, and rejects by cause.
type Cell = (usize, usize, BTreeMap<&'static str, usize>);

/// How many tasks a thread generates at a time: a check over a large suite
/// holds a few tasks per thread and a short summary of each, never the suite.
const BATCH: usize = 64;

/// What the report keeps of one task's check.
struct Checked {
    id: String,
    domain: Domain,
    level: u8,
    /// The task's row in the verbose table.
    row: String,
    causes: Vec<&'static str>,
    problems: Vec<String>,
    answers: Answers,
    /// The task's kind (`refuse-booking`) and its prose corpus's figures.
    kind: String,
    prose: ProseCounts,
}

impl Checked {
    fn of(check: &SelfCheck, random_seeds: u64) -> Self {
        let task = &check.task;
        let random = format!("{}/{random_seeds} fail", random_seeds as usize - check.random_passes.len());
        let wrong = check.cheats.iter().filter(|c| c.wrong).count();
        let caught = check.cheats.iter().filter(|c| c.wrong && !c.verdict.passed).count();
        let cheats = format!("{caught}/{wrong} (of {} tried)", check.cheats.len());
        let verdict = |passed: bool, expected: bool| match (passed, expected) {
            (true, true) => "pass",
            (false, false) => "fail",
            (true, false) => "PASS",
            (false, true) => "FAIL",
        };
        let (reference, solver, inaction) =
            (verdict(check.reference.passed, true), verdict(check.solver.passed, true), verdict(check.inaction.passed, false));
        Self {
            id: task.id.clone(),
            domain: task.domain,
            level: task.level,
            row: format!("{:<40} {reference:<9} {solver:<6} {inaction:<9} {random:<13} {cheats}", task.id),
            causes: causes(check),
            problems: check.problems(),
            answers: Answers::of(check),
            kind: task.kind().to_owned(),
            prose: check.prose,
        }
    }
}

/// Generates and self-checks a suite's tasks on every core, each thread a
/// contiguous part of the suite, a batch at a time; the summaries in suite
/// order. A progress bar on stderr counts the tasks checked.
fn check_all(suite: &Suite, domain: Option<Domain>, level: Option<u8>, random_seeds: u64) -> Vec<Checked> {
    let total = suite.count(domain, level);
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(total.max(1));
    let chunk = total.div_ceil(threads).max(1);
    let bar = super::render::progress_bar(total as u64, "tasks checked");
    let checked = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..total)
            .step_by(chunk)
            .map(|start| {
                let bar = bar.clone();
                scope.spawn(move || {
                    let end = (start + chunk).min(total);
                    let mut out = Vec::with_capacity(end - start);
                    for first in (start..end).step_by(BATCH) {
                        for task in suite.page(domain, level, first, BATCH.min(end - first)) {
                            out.push(Checked::of(&SelfCheck::run_with(task, random_seeds), random_seeds));
                            bar.inc(1);
                        }
                    }
                    out
                })
            })
            .collect();
        // A panic in a check is a bug in a generator or a tool: let it show.
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    bar.finish_and_clear();
    checked
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

/// `selfcheck --answer-judge llm`: the judge on a sample of the prose
/// corpus, against its labels and beside the rule-based reader on the same
/// answers; per answer kind, right answers rejected and wrong ones passed,
/// then each of the judge's mistakes with its reason. Fails when the judge
/// gave no ruling for an answer.
pub(crate) async fn measure_judge(args: &SelfcheckArgs, judge: &dyn toolenv_server::AnswerJudge) -> anyhow::Result<ExitCode> {
    let tasks = args.filter.suite().tasks(args.filter.domain.map(Into::into), args.filter.level);
    let sample = toolenv_domains::prose::sample(&tasks, args.judge_sample as usize);
    anyhow::ensure!(!sample.is_empty(), "no task of this suite asks a question: try --suite standard --level 3");
    let started = Instant::now();
    let bar = super::render::progress_bar(sample.len() as u64, "answers");
    // Per kind: [right, judge rejected, reader rejected, wrong, judge passed, reader passed].
    let mut kinds: BTreeMap<&str, [usize; 6]> = BTreeMap::new();
    let (mut mistakes, mut unruled) = (Vec::new(), Vec::new());
    let mut judge_name = String::new();
    for s in &sample {
        let question = toolenv_core::ruling::question(&s.task, &s.task.description(), &s.case.text).expect("a corpus answers a question");
        let row = kinds.entry(s.task.kind()).or_default();
        let offset = if s.case.right { 0 } else { 3 };
        row[offset] += 1;
        // A right answer counts when rejected, a wrong one when passed.
        row[offset + 2] += usize::from(s.reader_passed != s.case.right);
        match judge.rule(&question).await {
            Ok(ruling) => {
                row[offset + 1] += usize::from(ruling.correct != s.case.right);
                if ruling.correct != s.case.right {
                    mistakes.push(format!(
                        "{} [{}, {}]: {:?} -> {}",
                        s.task.id,
                        if s.case.right { "right" } else { "wrong" },
                        s.case.style,
                        s.case.text,
                        ruling.reason
                    ));
                }
                judge_name = ruling.judge;
            }
            Err(error) => unruled.push(format!("{}: {error}", s.task.id)),
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let rate = |n: usize, of: usize| if of == 0 { "n/a".to_owned() } else { format!("{}/{of} ({:.1}%)", n, 100.0 * n as f64 / of as f64) };
    println!(
        "\nthe answer judge ({judge_name}) on {} of the prose corpus in {:.0} s, beside the rule-based reader on the same answers:",
        counted(sample.len() as u64, "answer"),
        started.elapsed().as_secs_f64()
    );
    println!("{:<16} {:>22} {:>22} {:>22} {:>22}", "ANSWER KIND", "RIGHT REJECTED: JUDGE", "READER", "WRONG PASSED: JUDGE", "READER");
    let mut total = [0; 6];
    for (kind, row) in &kinds {
        println!(
            "{kind:<16} {:>22} {:>22} {:>22} {:>22}",
            rate(row[1], row[0]),
            rate(row[2], row[0]),
            rate(row[4], row[3]),
            rate(row[5], row[3])
        );
        for (sum, n) in total.iter_mut().zip(row) {
            *sum += n;
        }
    }
    println!(
        "{:<16} {:>22} {:>22} {:>22} {:>22}",
        "all",
        rate(total[1], total[0]),
        rate(total[2], total[0]),
        rate(total[4], total[3]),
        rate(total[5], total[3])
    );
    for mistake in &mistakes {
        println!("judge mistaken: {mistake}");
    }
    for error in &unruled {
        println!("no ruling: {error}");
    }
    Ok(if unruled.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
