//! The prose corpus, judged by the real path: every right answer of
//! [`toolenv_domains::prose::corpus`] must pass after the reference's calls,
//! every wrong one must fail, at most 2 % of either the other way per
//! answer kind. The table is printed (`--nocapture`).

use std::collections::BTreeMap;

use toolenv_core::{CallOptions, Episode, Task, TaskRef};
use toolenv_domains::Finish;
use toolenv_domains::generate::{Origin, generate};
use toolenv_domains::prose::corpus;

/// Answer tasks per kind in the corpus.
const PER_KIND: usize = 24;

/// Target: at most this share (percent) of right answers rejected, and of wrong answers passed, per kind.
const TARGET_PERCENT: f64 = 2.0;

fn answer_tasks() -> Vec<TaskRef> {
    let mut per_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for domain in toolenv_domains::registry::ALL {
        for index in 0..400 {
            let task = generate(Origin { domain, level: 3, seed: 46, index });
            if !task.asks_for_answer() || corpus(&task).is_empty() {
                continue;
            }
            let n = per_kind.entry(task.kind().to_owned()).or_default();
            if *n < PER_KIND {
                *n += 1;
                out.push(TaskRef::from(task));
            }
        }
    }
    out
}

#[test]
fn the_prose_corpus_is_judged_within_target() {
    let tasks = answer_tasks();
    // kind -> (right, right rejected, wrong, wrong passed)
    let mut table: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut styles: BTreeMap<String, usize> = BTreeMap::new();
    // (kind, verdict, style) -> (how many, one example)
    let mut misses: BTreeMap<(String, &str, String), (usize, String)> = BTreeMap::new();
    for task in &tasks {
        let mut reference = Episode::new(task, 0, 0);
        for call in &task.reference {
            reference.call_with(call.tool, &call.arguments, &CallOptions::default()).expect("a reference call is recorded");
        }
        for case in corpus(task) {
            let verdict = reference.clone().finish_with_answer(Some(&case.text)).clone();
            let passed = verdict.passed;
            let row = table.entry(Task::kind(task).to_owned()).or_default();
            let (all, missed) = if case.right { (0, 1) } else { (2, 3) };
            row[all] += 1;
            *styles.entry(case.style.split(" + ").next().unwrap_or_default().to_owned()).or_default() += 1;
            if passed != case.right {
                row[missed] += 1;
                let which = if case.right { "right rejected" } else { "wrong passed" };
                let miss = misses.entry((Task::kind(task).to_owned(), which, case.style.clone())).or_insert_with(|| {
                    let why: Vec<String> = verdict.failures().map(|c| c.actual.to_string()).collect();
                    (0, format!("{}: {:?} {}", task.id, case.text, why.join("; ")))
                });
                miss.0 += 1;
            }
        }
    }
    let rate = |n: usize, of: usize| if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 };
    println!("{:<16} {:>6} {:>9} {:>8} {:>6} {:>9} {:>8}", "KIND", "RIGHT", "REJECTED", "RATE", "WRONG", "PASSED", "RATE");
    let mut total = [0usize; 4];
    for (kind, row) in &table {
        println!(
            "{kind:<16} {:>6} {:>9} {:>7.2}% {:>6} {:>9} {:>7.2}%",
            row[0],
            row[1],
            rate(row[1], row[0]),
            row[2],
            row[3],
            rate(row[3], row[2])
        );
        total.iter_mut().zip(row).for_each(|(t, r)| *t += r);
    }
    println!(
        "{:<16} {:>6} {:>9} {:>7.2}% {:>6} {:>9} {:>7.2}%",
        "all",
        total[0],
        total[1],
        rate(total[1], total[0]),
        total[2],
        total[3],
        rate(total[3], total[2])
    );
    println!("{} core styles: {styles:?}", styles.len());
    for ((kind, which, style), (n, example)) in &misses {
        println!("{kind} [{which}] {style} ({n}): {example}");
    }
    assert!(table.len() >= 8, "every answer kind is in the corpus: {:?}", table.keys());
    assert!(total[0] + total[2] >= 3000, "at least 3,000 cases: {}", total[0] + total[2]);
    for (kind, row) in &table {
        assert!(rate(row[1], row[0]) <= TARGET_PERCENT, "{kind}: {} of {} right answers rejected", row[1], row[0]);
        assert!(rate(row[3], row[2]) <= TARGET_PERCENT, "{kind}: {} of {} wrong answers passed", row[3], row[2]);
    }
}
