//! The trajectory bytes of a fixed corpus of episodes, pinned by a snapshot.
//!
//! Result text is what agents see and what trajectories record, so a change
//! to how a tool builds or writes its result must not change a single byte.
//! The corpus plays, for every task and several seeds, the reference calls of
//! every task of the domain, random calls and the task's own reference
//! solution, with argument text written in a non-canonical form (reversed
//! keys, spaces) for some calls and idempotency keys on others, under no
//! faults, the paper's presets and a profile of the faults that let the tool
//! run (stale reads, schema drift, cut replies, lost replies).
//!
//! The snapshot (`golden/trajectories.txt`) has one line per episode: its
//! profile, task and seed, its call count, its verdict and the SHA-256 of its
//! trajectory's bytes, so a change shows as a diff of the episodes it
//! touched. If a change to a domain is meant to change results, write the
//! new snapshot with `TOOLENV_BLESS=1 cargo test -p toolenv-domains --test
//! tests golden` and say why in the commit message.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;
use sha2::{Digest, Sha256};
use toolenv_core::{
    CallOptions, Episode, Outcome,
    chaos::{Chaos, FaultKind, FaultParams, FaultProfile},
};
use toolenv_domains::{Finish, suite};

/// The snapshot of the corpus, beside this file.
const SNAPSHOT: &str = "tests/golden/trajectories.txt";

/// An object's JSON text with its keys in reverse order and spaces after the
/// separators: valid arguments that are not canonical.
fn scrambled(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let entries: Vec<String> =
                map.iter().rev().map(|(k, v)| format!("{}: {}", serde_json::to_string(k).unwrap(), scrambled(v))).collect();
            format!("{{ {} }}", entries.join(", "))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(scrambled).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

fn profiles() -> Vec<(&'static str, Chaos)> {
    let running = [FaultKind::StaleData, FaultKind::SchemaDrift, FaultKind::PartialResponse, FaultKind::AmbiguousCommit];
    let weights: BTreeMap<String, f64> = running.iter().map(|k| (k.name().to_owned(), 0.25)).collect();
    let running = FaultProfile::custom(0.5, &weights, FaultParams::default()).unwrap();
    let mut profiles = vec![("none", Chaos::default()), ("running", Chaos::new(running).unwrap())];
    for preset in ["0.1", "0.2", "0.3"] {
        profiles.push((preset, Chaos::new(FaultProfile::preset(preset).unwrap()).unwrap()));
    }
    profiles
}

#[test]
fn trajectories_of_the_corpus_are_pinned() {
    let mut snapshot = String::new();
    // Tools that returned a whole result at least once, with and without drift.
    let mut answered: BTreeSet<&str> = BTreeSet::new();
    for (profile, chaos) in profiles() {
        for task in suite() {
            let domain_reference: Vec<_> = suite().iter().filter(|t| t.domain == task.domain).flat_map(|t| t.reference.clone()).collect();
            for seed in 0..6u64 {
                let random = toolenv_domains::agent::random_calls(task, seed, 40);
                let calls: Vec<_> = domain_reference.iter().chain(&random).chain(&task.reference).collect();
                let mut episode = Episode::new(task, seed, 0).with_chaos(chaos.clone()).with_max_calls(1000);
                for (i, call) in calls.iter().enumerate() {
                    let text = if i % 3 == 1 { scrambled(&call.arguments) } else { call.arguments.to_string() };
                    let key = format!("k-{}", i % 4);
                    let options = CallOptions {
                        agent: None,
                        idempotency_key: (i % 5 == 2).then_some(key.as_str()),
                        waited_ms: (i % 2 == 0).then_some(i as u64 * 37),
                        user_answer: None,
                    };
                    if let Ok(record) = episode.call_with(call.tool, &text, &options)
                        && matches!(record.outcome, Outcome::Result(ref r) if r != "{}")
                    {
                        answered.insert(call.tool);
                    }
                }
                episode.finish_with_feasibility();
                let bytes = serde_json::to_string(episode.trajectory()).unwrap();
                let digest: String = Sha256::digest(bytes.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
                let verdict = episode.trajectory().verdict.as_ref().map_or("unjudged", |v| if v.passed { "passed" } else { "failed" });
                let calls = episode.trajectory().calls.len();
                snapshot.push_str(&format!("{profile} {} seed {seed}: {calls} calls, {verdict}, {digest}\n", task.id));
            }
        }
    }
    let all_tools: BTreeSet<&str> = toolenv_domains::registry::ALL.iter().flat_map(|d| d.tools()).map(|t| t.name).collect();
    let missing: Vec<_> = all_tools.difference(&answered).collect();
    assert!(missing.is_empty(), "the corpus never gets a result from {missing:?}");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT);
    toolenv_core::testing::assert_snapshot(&path, snapshot.as_bytes(), "trajectory bytes changed in the episodes marked");
}
