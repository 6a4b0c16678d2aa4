//! Task files: the paper's suite written as one reloads into the same
//! tasks, byte for byte; bad files give one clear error each.

use std::sync::Arc;

use serde_json::{Value, json};
use toolenv_core::{
    Episode, Task,
    chaos::{Chaos, FaultProfile},
    phrasing::Level,
};

use super::*;
use crate::{Finish, perturb::perturb, solver::solve};

/// The paper's suite as a task file (checked in, as `toolenv tasks export` writes it).
const PAPER: &str = include_str!("../../../examples/tasks/paper/paper.json");

/// The example task files, one per domain.
const EXAMPLES: [(&str, &str); 4] = [
    ("scheduling.json", include_str!("../../../examples/tasks/scheduling.json")),
    ("travel.json", include_str!("../../../examples/tasks/travel.json")),
    ("support.json", include_str!("../../../examples/tasks/support.json")),
    ("ecommerce.json", include_str!("../../../examples/tasks/ecommerce.json")),
];

/// The paper's suite as a task file, reloaded.
fn paper_reloaded() -> TaskSet {
    TaskSet::parse_file("paper.json", PAPER).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_checked_in_paper_file_is_the_export_of_the_suite() {
    let file: File = serde_json::from_str(PAPER).unwrap();
    assert_eq!(file, export(crate::suite()), "regenerate it: toolenv tasks export --suite paper > examples/tasks/paper/paper.json");
}

#[test]
fn the_schema_names_every_domain_of_the_registry() {
    let schema: Value = serde_json::from_str(include_str!("../../../schema/task-file.v1.json")).unwrap();
    let mut enums = Vec::new();
    let mut stack = vec![&schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(domain)) = map.get("domain")
                    && let Some(Value::Array(names)) = domain.get("enum")
                {
                    enums.push(names.iter().filter_map(Value::as_str).collect::<Vec<_>>());
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    let registry: Vec<&str> = crate::registry::ALL.iter().map(|d| d.name()).collect();
    assert!(!enums.is_empty(), "schema/task-file.v1.json has no domain enum");
    for names in enums {
        assert_eq!(names, registry, "schema/task-file.v1.json's domain enum is the registry's domains, in order");
    }
}

#[test]
fn every_example_loads_and_each_domain_has_one() {
    let files: Vec<(String, String)> = EXAMPLES.iter().map(|(n, t)| ((*n).to_owned(), (*t).to_owned())).collect();
    let set = TaskSet::parse("examples/tasks", &files).unwrap_or_else(|e| panic!("{e}"));
    for domain in crate::registry::ALL {
        assert!(set.tasks.iter().any(|t| t.domain == domain), "no example of {domain}");
    }
}

/// An episode's trajectory and verdict, as text.
fn played(task: Arc<Task>, builtin: &'static Task, preset: &str, level: Level, seed: u64) -> String {
    let chaos = Chaos::new(FaultProfile::preset(preset).unwrap()).unwrap();
    let perturbed = perturb(builtin, level, seed, None);
    let mut episode = Episode::new(task, seed, 0).with_chaos(chaos).with_perturbation(level, perturbed);
    let calls = crate::agent::random_calls(builtin, seed, 12);
    for call in &calls {
        let _ = episode.call(call.tool, &call.arguments.to_string());
    }
    let solution = solve(&mut episode);
    format!(
        "{}\n{:?}\n{}",
        serde_json::to_string(episode.trajectory()).unwrap(),
        solution.ended,
        serde_json::to_string(&solution.verdict).unwrap()
    )
}

#[test]
fn the_paper_suite_written_as_a_task_file_plays_byte_for_byte_as_the_built_in_one() {
    let reloaded = paper_reloaded();
    assert_eq!(reloaded.tasks.len(), crate::suite().len());
    for (file, builtin) in reloaded.tasks.iter().zip(crate::suite()) {
        assert_eq!(file.id, format!("{}@{}", builtin.id, reloaded.hash));
        // Under the built-in id, so that trajectories compare byte for byte.
        let file = &Arc::new(Task { id: builtin.id.clone(), ..Task::clone(file) });
        assert_eq!(file.description(), builtin.description());
        assert_eq!(format!("{:?}", file.template), format!("{:?}", builtin.template), "{}", builtin.id);
        assert_eq!((&file.slots, file.today, file.level), (&builtin.slots, builtin.today, builtin.level));
        assert_eq!((&file.reference, &file.checks, &file.alternatives), (&builtin.reference, &builtin.checks, &builtin.alternatives));
        assert_eq!(file.initial, builtin.initial, "{}", builtin.id);
        assert_eq!(file.initial_hash(), builtin.initial_hash());
        // Perturbed descriptions follow the template and slots: the same.
        for level in Level::ALL {
            for seed in 0..3 {
                assert_eq!(perturb(file, level, seed, None), perturb(builtin, level, seed, None), "{} ε={level}", builtin.id);
            }
        }
        for (preset, level, seed) in [("0.0", Level::Canonical, 0), ("0.2", Level::Medium, 3), ("0.3", Level::Heavy, 7)] {
            assert_eq!(
                played(Arc::clone(file), builtin, preset, level, seed),
                played(Arc::new(Task::clone(builtin)), builtin, preset, level, seed)
            );
        }
        // And the verdicts the built-in task gives: the reference passes, inaction fails.
        let mut episode = Episode::new(Arc::clone(file), 0, 0);
        assert!(!episode.finish().passed, "{}: doing nothing passes", builtin.id);
    }
    // Export again: the same file.
    assert_eq!(reloaded.to_file(), export(crate::suite()));
}

/// A valid one-task file to break in the tests below.
fn good() -> Value {
    json!({"version": 1, "tasks": [{
        "id": "scheduling/book-meeting/t-001", "domain": "scheduling", "level": 1,
        "description": "Book a meeting about '{topic}' on {date} at {time}.",
        "slots": {"topic": "Design sync", "date": "2026-01-07", "time": "11:00"},
        "fixture": "scheduling/book-meeting/002",
        "reference": [{"tool": "book_meeting", "arguments": {"date": "2026-01-07", "time": "11:00", "topic": "Design sync"}}],
        "expect": [{"kind": "equals", "name": "booked", "path": "/calendar/2026-01-07/11:00", "expected": "Design sync"}]
    }]})
}

fn error_of(file: &Value) -> LoadError {
    TaskSet::parse_file("t.json", &file.to_string()).expect_err("a bad file")
}

fn broken(pointer: &str, value: Value) -> LoadError {
    let mut file = good();
    *file.pointer_mut(pointer).unwrap_or_else(|| panic!("{pointer}")) = value;
    error_of(&file)
}

#[test]
fn a_good_file_loads_and_its_task_passes_the_self_check() {
    let set = TaskSet::parse_file("t.json", &good().to_string()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.tasks.len(), 1);
    assert_eq!(set.hash.len(), 12);
    let task = &set.tasks[0];
    assert_eq!(task.initial_json().pointer("/calendar/2026-01-07/10:00"), Some(&json!("Standup")));
    assert!(crate::selfcheck::SelfCheck::run(Arc::clone(task)).problems().is_empty());
}

#[test]
fn each_bad_file_gives_one_error_naming_the_file_task_and_place() {
    let cases: Vec<(LoadError, &str, &str)> = vec![
        (broken("/tasks/0/domain", json!("bakery")), "/tasks/0/domain", "no domain 'bakery'"),
        (broken("/tasks/0/level", json!("one")), "/tasks/0/level", "invalid type: string \"one\""),
        (broken("/tasks/0/level", json!(7)), "/tasks/0/level", "level 7 is not 1, 2 or 3"),
        (broken("/tasks/0/reference/0/tool", json!("book_room")), "/tasks/0/reference/0/tool", "no tool 'book_room'"),
        (broken("/tasks/0/reference/0/arguments/time", json!(11)), "/tasks/0/reference/0/arguments/time", "time"),
        (broken("/tasks/0/reference/0/arguments/time", json!("10:00")), "/tasks/0/reference/0", "SLOT_TAKEN"),
        (broken("/tasks/0/expect/0/expected", json!("Standup")), "/tasks/0/expect", "reference solution fails"),
        (broken("/tasks/0/id", json!("scheduling/tidy-calendar/t-001")), "/tasks/0/id", "no strategy"),
        (broken("/tasks/0/description", json!("Book '{topic}' at {hour}.")), "/tasks/0/description", "{hour} is not a slot"),
        (broken("/tasks/0/fixture", json!("travel/cheapest-flight/001")), "/tasks/0/fixture", "is a travel task"),
        (broken("/tasks/0/expect/0/kind", json!("close_to")), "/tasks/0/expect/0/kind", "unknown variant `close_to`"),
        (broken("/version", json!(2)), "/version", "version 2 is not one this build reads"),
    ];
    for (error, pointer, message) in cases {
        assert_eq!(error.file, "t.json");
        assert_eq!(error.pointer, pointer, "{error}");
        assert!(error.to_string().contains(message), "{error} lacks {message}");
        if pointer.starts_with("/tasks/0") {
            assert!(error.task.is_some(), "{error}");
        }
    }
    // An outcome doing nothing has already.
    let mut file = good();
    file["tasks"][0]["expect"][0] = json!({"kind": "equals", "name": "kept", "path": "/calendar/2026-01-07/10:00", "expected": "Standup"});
    assert!(error_of(&file).to_string().contains("at /tasks/0/expect: doing nothing passes"), "{}", error_of(&file));
    // An unknown field, named with its task and line.
    let mut file = good();
    file["tasks"][0]["expected"] = json!([]);
    let error = error_of(&file);
    assert!(error.to_string().contains("unknown field `expected`"), "{error}");
    assert_eq!(error.task.as_deref(), Some("scheduling/book-meeting/t-001"));
    assert!(error.line.is_some());
    // A state the domain does not read: a time that is not one.
    let mut file = good();
    let task = file["tasks"][0].as_object_mut().unwrap();
    task.remove("fixture");
    task.insert("today".into(), json!("2025-12-29"));
    task.insert("state".into(), json!({"calendar": {"2026-01-07": {"25:00": "Standup"}}}));
    let error = error_of(&file);
    assert!(error.pointer.starts_with("/tasks/0/state") && error.message.contains("'25:00' on 2026-01-07 is not a time"), "{error}");
    // A fixture changed into a state the domain refuses.
    let mut file = good();
    file["tasks"][0]["changes"] = json!({"/calendar/2026-02-30": {"10:00": "Ghost"}});
    let error = error_of(&file);
    assert_eq!(error.pointer, "/tasks/0/changes", "{error}");
    assert!(error.message.contains("'2026-02-30' is not a date"), "{error}");
}

#[test]
fn malformed_huge_deep_and_empty_files_give_one_error_and_never_panic() {
    let cases = [
        ("{\"version\": 1, \"tasks\": [", "EOF"),
        ("not json", "expected"),
        ("", "EOF"),
        ("[]", "a task file is a JSON object"),
        ("{\"tasks\": []}", "missing field `version`"),
    ];
    for (text, message) in cases {
        let error = TaskSet::parse_file("bad.json", text).expect_err(text);
        assert!(error.to_string().starts_with("bad.json"), "{error}");
        assert!(error.to_string().contains(message), "{error} lacks {message}");
    }
    let deep = format!("{{\"version\": 1, \"tasks\": [{}{}]}}", "[".repeat(100_000), "]".repeat(100_000));
    let error = TaskSet::parse_file("deep.json", &deep).expect_err("too deep");
    assert!(error.to_string().contains("recursion limit"), "{error}");
    let huge = format!("{{\"version\": 1, \"comment\": \"{}\", \"tasks\": []}}", "x".repeat(10 << 20));
    let error = TaskSet::parse_file("huge.json", &huge).expect_err("too big");
    assert!(error.to_string().contains("a task file holds at most"), "{error}");
}

#[test]
fn a_set_with_one_bad_task_loads_nothing_and_ids_are_unique() {
    let mut file = good();
    let mut second = file["tasks"][0].clone();
    second["level"] = json!(9);
    second["id"] = json!("scheduling/book-meeting/t-002");
    file["tasks"].as_array_mut().unwrap().push(second);
    assert_eq!(error_of(&file).pointer, "/tasks/1/level");
    let mut file = good();
    let twin = file["tasks"][0].clone();
    file["tasks"].as_array_mut().unwrap().push(twin);
    assert!(error_of(&file).to_string().contains("given twice"));
}

#[test]
fn a_catalogue_s_tasks_carry_the_file_hash_and_refuse_built_in_ids() {
    let mut file = good();
    file["tasks"][0]["id"] = json!("scheduling/book-meeting/install-001");
    let mut catalogue = Catalogue::new();
    let set = catalogue.add(TaskSet::parse_file("i.json", &file.to_string()).unwrap()).unwrap();
    let id = format!("scheduling/book-meeting/install-001@{}", set.hash);
    assert_eq!(set.tasks[0].id, id);
    for asked in ["scheduling/book-meeting/install-001", id.as_str()] {
        assert_eq!(catalogue.resolve(asked).map(|t| t.id.clone()), Ok(id.clone()));
    }
    assert_eq!(catalogue.domain_and_level(&id), crate::registry::parse("scheduling").map(|d| (d, 1)));
    assert_eq!(catalogue.set(&set.hash[..6]).map(|s| s.hash.as_str()), Some(set.hash.as_str()));
    assert_eq!(catalogue.suite(&format!("file:{}", set.hash)).map(|s| s.len()), Ok(1));
    assert_eq!(crate::generate::suite_of([id.as_str()]).0, format!("file:{}", set.hash));
    // A value: another catalogue (and the free lookups) know nothing of it.
    assert_eq!(crate::generate::resolve(&id).map(|t| t.id.clone()), Err(crate::generate::SuiteError::NoTaskFile(set.hash.clone())));
    assert!(Catalogue::new().resolve("scheduling/book-meeting/install-001").is_err());
    assert!(matches!(Catalogue::new().suite(&format!("file:{}", set.hash)), Err(crate::generate::SuiteError::NoTaskFile(_))));
    // The same text again is the same set; the paper's ids are not to be had.
    let again = catalogue.add(TaskSet::parse_file("i.json", &file.to_string()).unwrap()).unwrap();
    assert!(Arc::ptr_eq(&again, &set));
    assert_eq!(catalogue.sets().len(), 1);
    let paper = TaskSet::parse_file("p.json", &serde_json::to_string(&export(&crate::suite()[..1])).unwrap()).unwrap();
    assert!(catalogue.add(paper).unwrap_err().to_string().contains("a built-in task's"));
    // Another set with the same bare id is refused: an id names one task.
    let mut edited = file.clone();
    edited["comment"] = json!("edited");
    let error = catalogue.add(TaskSet::parse_file("e.json", &edited.to_string()).unwrap()).unwrap_err();
    assert!(error.to_string().contains("the id is a task's of i.json"), "{error}");
    // A built-in id on a task of its own is told as such, not as the solver failing on it.
    let mut other = good();
    other["tasks"][0]["id"] = json!("scheduling/book-meeting/001");
    other["tasks"][0]["expect"][0]["expected"] = json!("Another meeting");
    let error = error_of(&other).to_string();
    assert!(error.contains("is a built-in task's id, on another task") && error.contains("/id"), "{error}");
}

#[test]
fn a_text_that_leaves_a_slot_unsaid_is_refused() {
    // The solver reads the slots; an agent reads the text: each must say every slot.
    let mut file = good();
    let slot = file["tasks"][0]["slots"].as_object().unwrap().keys().next().unwrap().clone();
    file["tasks"][0]["description"] = json!("Do the task.");
    let error = TaskSet::parse_file("unsaid.json", &file.to_string()).unwrap_err().to_string();
    assert!(error.contains(&format!("slot '{slot}' is not in this text")) && error.contains("/description"), "{error}");
}
