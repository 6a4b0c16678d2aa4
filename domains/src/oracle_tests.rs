//! The engine's oracle and argument reader on every domain's tasks: the
//! state diff reads, diffs and renumbers every cheat's end state as the whole
//! state's JSON does, and JSON arguments are checked as their text is.

use std::borrow::Cow;
use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use serde_json::Value;
use toolenv_core::{
    Check, Episode, Task, TaskRef,
    diff::{Changes, View, rename, renames_of},
    json, unexpected_leaves,
};

use crate::{
    cheats::{self, Step},
    generate::Suite,
};

/// The unexpected leaves as the oracle found them on whole states
/// before it judged changes: the reference this module must agree with.
fn whole_state_leaves(task: &Task, initial: &Value, end: &Value) -> BTreeSet<String> {
    let expected = task.expected_final_state();
    let mut renames = Vec::new();
    let renamed = renames_of(initial, expected, end, &mut renames) && !renames.is_empty();
    let end = if renamed { rename(end, &renames) } else { end.clone() };
    let mut leaves = BTreeSet::new();
    for change in json::diff(expected, &end) {
        for value in [&change.before, &change.after].into_iter().flatten() {
            json::leaf_paths(&change.path, value, &mut leaves);
        }
    }
    leaves.retain(|path| !task.alternatives.iter().any(|p| json::path_within(path, p, initial)));
    leaves
}

/// Every end state the cheat corpus reaches, on the paper's tasks and a
/// sample of every generated domain and level: as the typed state lists
/// its changes, the view reads, diffs and renumbers exactly what the
/// whole state's JSON gives.
#[test]
fn changes_read_diff_and_renumber_as_the_whole_state_does() {
    let mut tasks = Suite::Paper.tasks(None, None);
    tasks.extend(Suite::Generated { seed: 5, per_cell: 2 }.tasks(None, None));
    let mut renumbered = 0;
    for task in &tasks {
        let initial = task.initial_json();
        for cheat in cheats::cheats(task) {
            let mut episode = Episode::new(TaskRef::clone(task), 0, 0).for_pass_or_fail();
            for step in &cheat.steps {
                if let Step::Call(call) = step {
                    let _ = episode.call(call.tool, &call.arguments.to_string());
                }
            }
            let (end, changes) = (episode.state(), episode.changes());
            let label = format!("{}: {}", task.id, cheat.label);
            assert_eq!(changes, Changes::between(initial, &end), "{label}");
            let view = View { initial, changes: &changes };
            assert_eq!(view.materialize(), end, "{label}");
            assert_eq!(View::of(initial).diff(&view), json::diff(initial, &end), "{label}");
            let mut paths = BTreeSet::new();
            json::leaf_paths("", &end, &mut paths);
            for path in paths.iter().chain(task.checks.iter().filter_map(check_path)) {
                assert_eq!(view.get(path).as_deref(), end.pointer(path), "{label}: {path}");
            }
            for check in &task.checks {
                if let Check::Count { path, pattern, .. } = check {
                    let found = json::members(end.pointer(path)).into_iter().filter(|m| json::matches(pattern, m)).count();
                    assert_eq!(view.count_members(path, |m| json::matches(pattern, m)), found, "{label}: {path}");
                }
            }
            let (compared, leaves) = unexpected_leaves(task, &changes);
            renumbered += usize::from(compared.as_ref() != &changes);
            let (want, got) = (View { initial, changes: task.expected_changes() }, View { initial, changes: &compared });
            for (path, values) in &leaves {
                assert_eq!(values, &[want.get(path).map(Cow::into_owned), got.get(path).map(Cow::into_owned)], "{label}: {path}");
            }
            assert_eq!(leaves.into_keys().collect::<BTreeSet<_>>(), whole_state_leaves(task, initial, &end), "{label}");
        }
    }
    assert!(renumbered > 0, "some cheat's added records are renumbered");
}

fn check_path(check: &Check) -> Option<&String> {
    use Check;
    match check {
        Check::Equals { path, .. } | Check::Present { path, .. } | Check::Text { path, .. } | Check::Count { path, .. } => Some(path),
        Check::Answer { .. } => None,
    }
}

#[test]
fn json_arguments_are_checked_as_their_text_is() {
    let mut values = vec![serde_json::json!([]), serde_json::json!("x"), serde_json::json!({"date": "x", "max": 3, "extra": 1})];
    for task in crate::suite().iter().map(TaskRef::from) {
        values.extend(task.reference.iter().map(|c| c.arguments.clone()));
        values.extend((0..4).flat_map(|seed| crate::agent::random_calls(&task, seed, 40)).map(|c| c.arguments));
    }
    for value in &values {
        for tool in crate::registry::ALL.into_iter().flat_map(|d| d.tools()) {
            assert_eq!(tool.arguments_of(value), tool.parse_arguments(&value.to_string()), "{}({value})", tool.name);
        }
    }
}
