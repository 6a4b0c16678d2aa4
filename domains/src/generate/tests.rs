//! The generators' own tests: every domain × level sampled and self-checked,
//! ids resolved, levels getting harder.

use super::*;
use crate::selfcheck::SelfCheck;

/// Tasks self-checked per domain and level on every test run (docs/suite.md
/// documents a larger sample through `toolenv selfcheck --suite`).
const SAMPLE: u32 = 6;

fn sample(domain: Domain, level: u8) -> impl Iterator<Item = Task> {
    (0..SAMPLE).map(move |index| generate(Origin { domain, level, seed: 7, index }))
}

#[test]
fn a_sample_of_every_domain_and_level_passes_the_self_check() {
    let mut problems = Vec::new();
    for domain in crate::registry::ALL {
        for level in LEVELS {
            for task in sample(domain, level) {
                assert_eq!((task.domain, task.level), (domain, level), "{}", task.id);
                let check = SelfCheck::run_with(task, 4);
                problems.extend(check.problems().into_iter().map(|p| format!("{}: {p}", check.task.id)));
            }
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn generated_ids_resolve_to_the_same_task() {
    for domain in crate::registry::ALL {
        for level in LEVELS {
            let task = generate(Origin { domain, level, seed: 11, index: 3 });
            let again = resolve(&task.id).expect("a generated id resolves");
            assert_eq!(again.id, task.id);
            assert_eq!(again.description(), task.description());
            assert_eq!(again.initial.to_json(), task.initial.to_json());
            assert_eq!(again.reference, task.reference);
        }
    }
    assert!(matches!(resolve("scheduling/book-meeting/g999-1-1-0001"), Err(SuiteError::Version { version: 999, .. })));
    let v = GENERATOR_VERSION;
    assert!(
        matches!(resolve(&format!("scheduling/reschedule-chain/g{v}-1-1-0001")), Err(SuiteError::UnknownTask(_))),
        "the kind must be the generator's"
    );
    assert!(matches!(resolve(&format!("nowhere/x/g{v}-1-1-0001")), Err(SuiteError::UnknownTask(_))));
    assert!(matches!(resolve(&format!("scheduling/x/g{v}-4-1-0001")), Err(SuiteError::UnknownTask(_))));
    assert!(
        matches!(resolve("scheduling/book-meeting/g1-1-1-0001"), Err(SuiteError::Version { version: 1, .. })),
        "a task of generator version 1 is not rebuilt"
    );
}

#[test]
fn suites_parse_and_print() {
    for name in ["paper", "standard", "generated:5:10"] {
        assert_eq!(name.parse::<Suite>().map(|s| s.to_string()).as_deref(), Ok(name));
    }
    for bad in ["papers", "generated:5", "generated:x:1", "generated:1:0", "generated:1:1:1"] {
        assert!(bad.parse::<Suite>().is_err(), "{bad}");
    }
    let suite: Suite = "generated:5:2".parse().expect("a suite");
    assert_eq!(suite.len(), crate::registry::COUNT * 3 * 2);
    assert_eq!(suite.tasks(None, None).len(), suite.len());
    assert_eq!(suite.tasks(Some(crate::registry::TRAVEL), Some(3)).len(), 2);
    assert_eq!(Suite::Paper.tasks(None, None).len(), crate::suite().len());
}

#[test]
fn level_three_takes_many_calls_and_asks_for_answers() {
    for domain in crate::registry::ALL {
        let mut calls: Vec<usize> = (0..40).map(|index| generate(Origin { domain, level: 3, seed: 1, index }).reference.len()).collect();
        calls.sort_unstable();
        assert!(calls[calls.len() / 2] >= 8, "{domain}: median level-3 reference calls {calls:?}");
        let answers = (0..40).filter(|&index| generate(Origin { domain, level: 3, seed: 1, index }).asks_for_answer()).count();
        assert!(answers > 0, "{domain}: some level-3 tasks ask for an answer");
    }
}

#[test]
fn a_runs_suite_is_read_from_its_task_ids() {
    let ids = |suite: Suite| suite.origins().map(|o| generate(o).id).collect::<Vec<_>>();
    let small = ids("generated:9:2".parse().expect("a suite"));
    assert_eq!(suite_of(small.iter().map(String::as_str)), ("generated:9:2".to_owned(), GENERATOR_VERSION));
    assert_eq!(suite_of(crate::suite().iter().map(|t| t.id.as_str())), ("paper".to_owned(), 0));
    let both = [small[0].as_str(), "travel/cheapest-flight/001"];
    assert_eq!(suite_of(both).0, "mixed");
    let standard = format!("scheduling/book-meeting/g{GENERATOR_VERSION}-1-{STANDARD_SEED}-{:04}", STANDARD_PER_CELL - 1);
    assert_eq!(suite_of([standard.as_str()]).0, "standard");
}

#[test]
fn a_draw_whose_count_check_matches_a_record_of_the_initial_state_is_drawn_again() {
    use crate::registry::Extensions;
    // Seed 1's e-commerce level-1 task 142 first drew an order C-201 already had (issue #33).
    let origin = Origin { domain: crate::registry::ECOMMERCE, level: 1, seed: 1, index: 142 };
    let first = origin.domain.generate(origin, Gen::new(&origin, 0));
    let why = ambiguity(&first).expect("the first draw is ambiguous");
    assert!(why.contains("one order for C-201"), "{why}");
    let check = SelfCheck::run_with(first, 4);
    assert!(!check.reference.passed, "the ambiguous draw's own reference solution fails");
    let task = generate(origin);
    assert_eq!(task.id, format!("ecommerce/simple-order/g{GENERATOR_VERSION}-1-1-0142"));
    assert_eq!(ambiguity(&task), None);
    let check = SelfCheck::run_with(task, 4);
    assert!(check.problems().is_empty(), "{:?}", check.problems());
}
