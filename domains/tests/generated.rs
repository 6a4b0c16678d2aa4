//! The generated suites' bytes, pinned by a snapshot: the same (suite, seed)
//! gives byte-identical tasks on every machine and run, and a generator
//! change that alters a task is caught (bump `GENERATOR_VERSION` and write
//! the new snapshot with `TOOLENV_BLESS=1 cargo test -p toolenv-domains
//! --test tests generated`).
//!
//! The snapshot (`golden/generated.txt`) has one line per task: its id and,
//! for each part of the task — domain, level, description, today, canonical
//! initial state, reference calls and answer, checks and alternatives — the
//! SHA-256 of its canonical JSON, so a change shows as a diff naming the task
//! and the part. The determinism of what the oracle and episodes do with a
//! task is pinned by `golden.rs` and the suite tests.

use pretty_assertions::assert_eq;
use serde_json::json;
use sha2::{Digest, Sha256};
use toolenv_core::json::canonical;
use toolenv_domains::generate::{GENERATOR_VERSION, Suite};

/// The snapshot of `generated:2026:8`, generator version 2 (the same tasks
/// as version 1's, under `g2-` ids: version 2 redraws only ambiguous draws,
/// and this suite has none), beside this file.
const SNAPSHOT: &str = "tests/golden/generated.txt";

fn task_lines(suite: &Suite) -> String {
    let mut text = String::new();
    for task in suite.tasks(None, None) {
        let parts = [
            ("domain", json!(task.domain)),
            ("level", json!(task.level)),
            ("description", json!(task.description())),
            ("today", json!(task.today.to_string())),
            ("initial", task.initial.to_json()),
            ("reference", json!(task.reference)),
            ("answer", json!(task.reference_answer())),
            ("checks", json!(task.checks)),
            ("alternatives", json!(task.alternatives)),
        ];
        text.push_str(&task.id);
        for (name, value) in parts {
            let digest: String = Sha256::digest(canonical(&value).as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
            text.push_str(&format!(" {name}={}", &digest[..16]));
        }
        text.push('\n');
    }
    text
}

#[test]
fn a_generated_suite_is_byte_identical_to_the_pinned_one() {
    assert_eq!(GENERATOR_VERSION, 2, "a new generator version needs a new snapshot");
    let suite: Suite = "generated:2026:8".parse().expect("a suite");
    let text = task_lines(&suite);
    assert_eq!(text, task_lines(&suite), "generating twice gives the same bytes");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT);
    toolenv_core::testing::assert_snapshot(
        &path,
        text.as_bytes(),
        "generated suite changed; if meant, bump GENERATOR_VERSION and write the snapshot",
    );
}

#[test]
fn suites_are_prefixes_of_larger_ones_with_the_same_seed() {
    let small = Suite::Generated { seed: 5, per_cell: 2 }.tasks(None, None);
    let large = Suite::Generated { seed: 5, per_cell: 3 }.tasks(None, None);
    let large_ids: Vec<&str> = large.iter().map(|t| t.id.as_str()).collect();
    for task in &small {
        assert!(large_ids.contains(&task.id.as_str()), "{} is in the larger suite", task.id);
    }
    assert_ne!(
        Suite::Generated { seed: 6, per_cell: 2 }.tasks(None, None)[0].initial.to_json(),
        small[0].initial.to_json(),
        "another seed, other tasks"
    );
}
