//! The SQLite store against real files: runs round-trip, resume, refuse a
//! second verdict, upgrade version 1 files, and export what they hold.

use std::time::Duration;

use prost::Message as _;
use rusqlite::params;
use toolenv::pb;

use super::*;
use toolenv_core::chaos::FaultKind;
use toolenv_runs::{
    PlannedEpisode,
    metrics::{EpisodeOutcome, EpisodeResult, FaultCounts},
};

use crate::StoreError;

fn plan(n: u32) -> Vec<PlannedEpisode> {
    (0..n)
        .map(|trial| PlannedEpisode {
            agent: if trial % 2 == 0 { "reference" } else { "reference-no-retry" }.into(),
            request: pb::CreateEpisodeRequest {
                task_id: "travel/cheapest-flight/001".into(),
                seed: 7,
                trial,
                epsilon: 0.1,
                fault_profile: Some(pb::FaultProfile { name: "0.2".into(), only: vec!["SoftRateLimit".into()], ..Default::default() }),
                time_scale: Some(0.0),
                ..Default::default()
            },
            fault_profile: if trial == 3 { "custom".into() } else { "0.2".into() },
            lambda: if trial == 3 { f64::NAN } else { 0.2 },
        })
        .collect()
}

fn result(planned: &PlannedEpisode, outcome: EpisodeOutcome) -> EpisodeResult {
    EpisodeResult {
        task_id: planned.request.task_id.clone(),
        domain: Some(toolenv_domains::registry::TRAVEL),
        agent: planned.agent.clone(),
        epsilon: planned.request.epsilon,
        lambda: planned.lambda,
        fault_profile: planned.fault_profile.clone(),
        trial: planned.request.trial,
        seed: planned.request.seed,
        outcome,
        fault_stats: FaultCounts { injected: 2, encountered: 1, recovered: 1, extra_calls: 1 },
        faults_by_kind: Default::default(),
        tokens: None,
        cost_usd: None,
        calls: 3,
        feasible: None,
        llm: None,
        mas_faults: Vec::new(),
        user_turns: 0,
        llm_user_turns: 0,
        answer_judge: None,
    }
}

fn trajectory(planned: &PlannedEpisode, passed: bool) -> pb::Trajectory {
    pb::Trajectory {
        task_id: planned.request.task_id.clone(),
        trial: planned.request.trial,
        epsilon: planned.request.epsilon,
        description: "Find the cheapest flight.".into(),
        verdict: Some(pb::Verdict { passed, final_state_hash: "abc".into(), ..Default::default() }),
        ..Default::default()
    }
}

#[test]
fn a_run_records_its_episodes_and_reopens_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    let plan = plan(5);
    let (run, planned_back) = {
        let store = Store::open(&path).unwrap();
        let run = store.create_run(&plan, "toolenv run --grid paper").unwrap();
        assert_eq!(run.as_str(), "run-0001");
        assert_eq!(store.create_run(&plan[..1], "second").unwrap().as_str(), "run-0002", "ids are sequential");
        assert_eq!(store.pending(&run).unwrap().len(), 5);
        // Out of order, as concurrent episodes finish.
        for (index, outcome) in
            [(3, EpisodeOutcome::Failed), (0, EpisodeOutcome::Passed), (4, EpisodeOutcome::InfraError("server gone".into()))]
        {
            let passed = outcome == EpisodeOutcome::Passed;
            let traj = (!matches!(outcome, EpisodeOutcome::InfraError(_))).then(|| trajectory(&plan[index], passed));
            store.record(&run, index, &result(&plan[index], outcome), traj.as_ref()).unwrap();
        }
        let pending: Vec<usize> = store.pending(&run).unwrap().into_iter().map(|(i, _)| i).collect();
        assert_eq!(pending, [1, 2, 4], "an infrastructure error is not finished");
        let planned_back = store.plan(&run).unwrap();
        (run, planned_back)
    };
    // The plan round-trips, NaN λ included.
    assert_eq!(planned_back.len(), plan.len());
    for (back, planned) in planned_back.iter().zip(&plan) {
        assert_eq!((&back.agent, &back.request, &back.fault_profile), (&planned.agent, &planned.request, &planned.fault_profile));
        assert!(back.lambda == planned.lambda || (back.lambda.is_nan() && planned.lambda.is_nan()));
    }

    let store = Store::open(&path).unwrap();
    let results = store.results(&run).unwrap();
    assert_eq!(results.iter().map(|r| r.trial).collect::<Vec<_>>(), [0, 3, 4], "plan order");
    assert!(results[1].lambda.is_nan(), "an unknown λ reads back as NaN");
    assert_eq!(results[0], result(&plan[0], EpisodeOutcome::Passed));
    let episodes = store.episodes(&run).unwrap();
    assert_eq!(episodes[0].trajectory, Some(trajectory(&plan[0], true)));
    assert_eq!(episodes[2].trajectory, None);
    let summary = store.summary(&run).unwrap();
    assert_eq!((summary.planned, summary.passed, summary.failed, summary.infra_errors), (5, 1, 1, 1));
    assert_eq!((summary.pending(), summary.status(), summary.sessions), (3, "incomplete", 1));
    assert_eq!(store.runs().unwrap().iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["run-0001", "run-0002"]);

    // Resume: a new session plays the pending episodes; the infrastructure error is replaced.
    assert_eq!(store.begin_session(&run).unwrap(), 2);
    for index in [1, 2, 4] {
        store.record(&run, index, &result(&plan[index], EpisodeOutcome::Passed), Some(&trajectory(&plan[index], true))).unwrap();
    }
    assert!(store.pending(&run).unwrap().is_empty());
    let episodes = store.episodes(&run).unwrap();
    let sessions: Vec<(usize, u32, u32)> = episodes.iter().map(|e| (e.plan_index, e.session, e.replaced_infra_errors)).collect();
    assert_eq!(sessions, [(0, 1, 0), (1, 2, 0), (2, 2, 0), (3, 1, 0), (4, 2, 1)]);
    assert_eq!(store.summary(&run).unwrap().status(), "complete");
}

#[test]
fn rows_written_by_the_previous_version_still_load_and_report_the_same() {
    let store = Store::open_in_memory().unwrap();
    let plan = plan(2);
    let run = store.create_run(&plan, "old").unwrap();
    // Two rows as the version that kept domain and fault kinds as strings
    // wrote them: a failed episode with its trajectory, and an
    // infrastructure error without one.
    let old_trajectory = trajectory(&plan[1], false).encode_to_vec();
    store
        .conn
        .execute(
            "INSERT INTO episodes (run_id, plan_index, session, passed, infra_error, result, trajectory)
             VALUES (?1, 1, 1, 0, NULL, ?2, ?3), (?1, 0, 1, NULL, 'server gone', ?4, NULL)",
            params![run.as_str(), STORED[0], old_trajectory, STORED[1]],
        )
        .unwrap();
    let results = store.results(&run).unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!((results[1].domain, results[1].calls), (Some(toolenv_domains::registry::TRAVEL), 7));
    assert_eq!(results[1].faults_by_kind[&toolenv_core::chaos::FaultKind::SoftRateLimit].hits, 2);
    let report =
        toolenv_runs::report::render(&results, 2, toolenv_runs::metrics::InfraConvention::CountAsFailure, Default::default()).unwrap();
    assert!(report.contains("infrastructure errors: 1 (counted as failures)"), "{report}");
    assert!(report.contains("fault recovery: 3 injected, 2 encountered, 1 recovered (50.0%)"), "{report}");
    let summary =
        serde_json::to_value(toolenv_runs::report::summary(&results, 2, 2, Default::default(), Default::default()).unwrap()).unwrap();
    let by_kind = summary["agents"][1]["recovery"]["by_kind"].as_object().unwrap();
    assert_eq!(by_kind.keys().collect::<Vec<_>>(), ["CascadingFailure", "SoftRateLimit", "TransientTimeout"]);
    // The older per-kind ledger restated: the kinds sum to the totals (the
    // extra calls given to the one kind that recovered).
    let recovery = &summary["agents"][1]["recovery"];
    for figure in ["injected", "encountered", "recovered", "extra_calls"] {
        let sum: u64 = by_kind.values().map(|k| k[figure].as_u64().unwrap()).sum();
        assert_eq!(sum, recovery[figure].as_u64().unwrap(), "{figure}: {recovery}");
    }
    assert_eq!(by_kind["TransientTimeout"]["extra_calls"], 2);
    assert_eq!(summary["agents"][1]["by_domain"][0]["label"], "travel");
    // The export writes the stored results back as this version reads them
    // (a per-kind ledger in its current form).
    let mut out = Vec::new();
    store.export_jsonl(&run, &mut out).unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (line, stored) in lines.iter().zip([STORED[1], STORED[0]]) {
        let read: toolenv_runs::metrics::EpisodeResult = serde_json::from_str(stored).unwrap();
        assert_eq!(line["result"], serde_json::to_value(read).unwrap());
    }
    assert_eq!(lines[0]["result"], serde_json::from_str::<serde_json::Value>(STORED[1]).unwrap(), "no ledger, as stored");
    assert_eq!(lines[1]["trajectory"]["verdict"]["final_state_hash"], "abc");
}

#[test]
fn a_finished_episode_is_never_recorded_twice() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("store.db")).unwrap();
    let plan = plan(2);
    let run = store.create_run(&plan, "").unwrap();
    store.record(&run, 0, &result(&plan[0], EpisodeOutcome::Failed), Some(&trajectory(&plan[0], false))).unwrap();
    let again = store.record(&run, 0, &result(&plan[0], EpisodeOutcome::Passed), Some(&trajectory(&plan[0], true)));
    assert!(matches!(again, Err(StoreError::AlreadyRecorded { index: 0, .. })), "{again:?}");
    let late_error = store.record(&run, 0, &result(&plan[0], EpisodeOutcome::InfraError("late".into())), None);
    assert!(matches!(late_error, Err(StoreError::AlreadyRecorded { .. })));
    assert_eq!(store.results(&run).unwrap(), [result(&plan[0], EpisodeOutcome::Failed)], "the first verdict stands");
    let outside = store.record(&run, 9, &result(&plan[0], EpisodeOutcome::Passed), None);
    assert!(matches!(outside, Err(StoreError::NotInPlan { index: 9, .. })), "{outside:?}");
}

#[test]
fn hosted_runs_keep_their_lease_timeout_and_version_1_stores_are_upgraded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    let plan = plan(2);
    {
        let store = Store::open(&path).unwrap();
        store.create_run(&plan, "cli").unwrap();
        // Back to the version 1 schema, which had no hosted runs.
        store.conn.execute_batch("ALTER TABLE runs DROP COLUMN lease_timeout_ms; UPDATE schema_version SET version = 1;").unwrap();
    }
    let store = Store::open(&path).unwrap();
    let version: i64 = store.conn.query_row("SELECT version FROM schema_version", [], |row| row.get(0)).unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let hosted = store.host_run(&plan, "hosted", Duration::from_millis(1500)).unwrap();
    let runs = store.runs().unwrap();
    assert_eq!(runs.iter().map(|r| r.lease_timeout).collect::<Vec<_>>(), [None, Some(Duration::from_millis(1500))]);
    assert_eq!(store.agents(&hosted).unwrap(), ["reference", "reference-no-retry"]);
    let json = serde_json::to_value(&runs[1]).unwrap();
    assert_eq!(json["lease_timeout"], 1500);
}

#[test]
fn unknown_runs_and_missing_stores_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    let missing = Store::open_existing(&path).unwrap_err();
    assert!(missing.to_string().contains("store.db"), "{missing}");
    let store = Store::open(&path).unwrap();
    let error = store.find_run("run-0042").unwrap_err();
    assert!(matches!(error, StoreError::UnknownRun { .. }));
    assert!(error.to_string().contains("run-0042") && error.to_string().contains("store.db"), "{error}");
    assert!(store.runs().unwrap().is_empty());
}

#[test]
fn export_writes_one_parsable_line_per_recorded_episode() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("store.db")).unwrap();
    let plan = plan(4);
    let run = store.create_run(&plan, "").unwrap();
    store.record(&run, 2, &result(&plan[2], EpisodeOutcome::Passed), Some(&trajectory(&plan[2], true))).unwrap();
    store.record(&run, 1, &result(&plan[1], EpisodeOutcome::InfraError("unreachable".into())), None).unwrap();
    store.record(&run, 3, &result(&plan[3], EpisodeOutcome::Failed), Some(&trajectory(&plan[3], false))).unwrap();
    let mut out = Vec::new();
    assert_eq!(store.export_jsonl(&run, &mut out).unwrap(), 3);
    let lines: Vec<serde_json::Value> = String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.iter().map(|l| l["plan_index"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(lines[0]["run"], "run-0001");
    assert_eq!(lines[0]["trajectory"], serde_json::Value::Null);
    assert_eq!(lines[0]["result"]["outcome"]["infra_error"], "unreachable");
    assert_eq!(lines[1]["trajectory"]["verdict"]["passed"], true);
    assert_eq!(lines[1]["planned"]["agent"], "reference");
    assert_eq!(lines[1]["planned"]["only"][0], "SoftRateLimit");
    assert_eq!(lines[2]["planned"]["lambda"], serde_json::Value::Null, "NaN λ is null");
    let back: EpisodeResult = serde_json::from_value(lines[2]["result"].clone()).unwrap();
    assert!(back.lambda.is_nan());
}

/// What the store holds for two episodes, as the code before this
/// record had domain and fault kinds as strings wrote it.
const STORED: [&str; 2] = [
    r#"{"task_id":"travel/cheapest-flight/001","domain":"travel","agent":"reference","epsilon":0.1,"lambda":null,"fault_profile":"custom","trial":1,"outcome":"failed","fault_stats":{"injected":3,"encountered":2,"recovered":1,"extra_calls":2},"faults_by_kind":{"CascadingFailure":{"hits":1,"injected":1,"encountered":0,"retried":0,"recovered":0},"SoftRateLimit":{"hits":2,"injected":1,"encountered":1,"retried":1,"recovered":0},"TransientTimeout":{"hits":1,"injected":1,"encountered":1,"retried":1,"recovered":1}},"tokens":{"input":1200,"output":340},"cost_usd":0.0125,"calls":7}"#,
    r#"{"task_id":"support/refund/002","domain":"support","agent":"a","epsilon":0.0,"lambda":0.0,"fault_profile":"0.0","trial":0,"outcome":{"infra_error":"server gone"},"fault_stats":{"injected":0,"encountered":0,"recovered":0,"extra_calls":0},"faults_by_kind":{},"tokens":null,"cost_usd":null,"calls":0}"#,
];

#[test]
fn records_stored_before_read_back_with_their_ledger_restated() {
    let first: EpisodeResult = serde_json::from_str(STORED[0]).unwrap();
    assert_eq!(
        (first.domain, first.trial, first.calls, &first.outcome),
        (Some(toolenv_domains::registry::TRAVEL), 1, 7, &EpisodeOutcome::Failed)
    );
    assert!(first.lambda.is_nan());
    let kinds: Vec<FaultKind> = first.faults_by_kind.keys().copied().collect();
    assert_eq!(kinds, [FaultKind::TransientTimeout, FaultKind::SoftRateLimit, FaultKind::CascadingFailure]);
    assert_eq!(first.faults_by_kind[&FaultKind::SoftRateLimit].hits, 2);
    // The older `recovered` counted every hit later answered: it is read as
    // `answered_after`, and `recovered` as its part over encountered hits.
    let restated: Vec<_> = first.faults_by_kind.values().map(|c| (c.encountered, c.recovered, c.answered_after, c.extra_calls)).collect();
    assert_eq!(restated, [(1, 1, 1, 0), (1, 0, 0, 0), (0, 0, 0, 0)]);
    let second: EpisodeResult = serde_json::from_str(STORED[1]).unwrap();
    assert_eq!(
        (second.domain, &second.outcome),
        (Some(toolenv_domains::registry::SUPPORT), &EpisodeOutcome::InfraError("server gone".into()))
    );
    // Without a per-kind ledger a record writes the same bytes; with one, it
    // writes the ledger's current form, which reads back the same.
    assert_eq!(serde_json::to_string(&second).unwrap(), STORED[1]);
    let rewritten = serde_json::to_string(&first).unwrap();
    assert_eq!(
        rewritten,
        STORED[0]
            .replace(r#""retried":1,"recovered":1}"#, r#""retried":1,"recovered":1,"extra_calls":0,"answered_after":1}"#)
            .replace(r#""recovered":0}"#, r#""recovered":0,"extra_calls":0,"answered_after":0}"#)
    );
    let reread: EpisodeResult = serde_json::from_str(&rewritten).unwrap();
    assert_eq!(serde_json::to_string(&reread).unwrap(), rewritten, "λ is NaN: compared as written");
    // A silent kind's older `recovered` (every hit later answered) is not a recovery.
    let silent = STORED[0].replace(
        r#""CascadingFailure":{"hits":1,"injected":1,"encountered":0,"retried":0,"recovered":0}"#,
        r#""PartialResponse":{"hits":2,"injected":2,"encountered":0,"retried":2,"recovered":2}"#,
    );
    let silent: EpisodeResult = serde_json::from_str(&silent).unwrap();
    let cut = silent.faults_by_kind[&FaultKind::PartialResponse];
    assert_eq!((cut.encountered, cut.recovered, cut.answered_after, cut.retried), (0, 0, 2, 2));
    // A fault kind nobody knows is refused; an unknown domain reads as none.
    assert!(
        serde_json::from_str::<EpisodeResult>(&STORED[1].replace(
            r#""faults_by_kind":{}"#,
            r#""faults_by_kind":{"Gremlins":{"hits":1,"injected":1,"encountered":0,"retried":0,"recovered":0}}"#
        ))
        .is_err()
    );
    let elsewhere: EpisodeResult = serde_json::from_str(&STORED[1].replace(r#""domain":"support""#, r#""domain":"banking""#)).unwrap();
    assert_eq!((elsewhere.domain, elsewhere.domain_name()), (None, "unknown"));
}
