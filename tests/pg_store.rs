//! The PostgreSQL store against a real cluster (`initdb` in a temporary
//! directory, a loopback port, a password): a hosted run stored in
//! PostgreSQL reads back exactly as one stored in SQLite (report, export),
//! a SQLite store copied into PostgreSQL reads back the same, one verdict
//! per plan entry is the database's rule, and bad configuration is one
//! clear error at start.

use std::time::{Duration, Instant};

use crate::support::start_with;
use prost::Message as _;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::worker::work;
use toolenv_server::Config;
use toolenv_store::{AnyStore, PgStore, StoreError};
use toolenv_tests::postgres::{PASSWORD, TempPostgres};

/// The small paper grid the tests host: scheduling, the reference and brittle agents (120 episodes).
pub(crate) fn grid() -> pb::CreateRunRequest {
    pb::CreateRunRequest {
        description: "hosted".into(),
        agents: vec!["reference".into(), "brittle".into()],
        preset: "paper".into(),
        domain: pb::Domain::Scheduling.into(),
        time_scale: Some(0.0),
        // Short: a replica's test stops one and its leases go to other workers soon.
        lease_timeout_ms: 1500,
        ..Default::default()
    }
}

/// A report without when its run was created: what two stores of the same run share.
pub(crate) fn without_time(report: &pb::RunReport) -> (serde_json::Value, String, Vec<u8>) {
    let mut summary: serde_json::Value = serde_json::from_str(&report.summary_json).unwrap();
    summary["run"]["created_at"] = serde_json::Value::Null;
    let run = pb::Run { created_at: String::new(), ..report.run.clone().unwrap() };
    (summary, report.text.clone(), run.encode_to_vec())
}

/// Plays [`grid`] as a hosted run on a server storing runs at `store`, with
/// two workers; returns the run's report.
pub(crate) async fn hosted_run(store: std::path::PathBuf) -> pb::RunReport {
    let (server, mut client) = start_with(Config { store: Some(store), ..Config::default() }).await;
    let run = client.runs().create_run(grid()).await.expect("run created").into_inner();
    let mut workers = tokio::task::JoinSet::new();
    for (i, agent) in [Builtin::Reference, Builtin::Brittle].into_iter().enumerate() {
        let (mut client, run_id) = (client.clone(), run.run_id.clone());
        workers
            .spawn(async move { work(&mut client, &run_id, agent, agent.name(), &format!("w{i}"), |_, _, _| {}).await.expect("worker") });
    }
    while let Some(done) = workers.join_next().await {
        done.unwrap();
    }
    let report = pb::GetRunReportRequest { run_id: run.run_id.clone(), ..Default::default() };
    let report = client.runs().get_run_report(report).await.expect("report").into_inner();
    server.shutdown().await.unwrap();
    report
}

/// A run's export from a store, as bytes.
fn export(store: &AnyStore, run: &str) -> Vec<u8> {
    let mut out = Vec::new();
    store.export_jsonl(&store.find_run(run).unwrap(), &mut out).unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_store_reads_back_as_sqlite_does_and_takes_copies() {
    let Some(pg) = TempPostgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("runs.db");
    let url = pg.database("hosted");

    let from_sqlite = hosted_run(sqlite.clone()).await;
    let from_postgres = hosted_run(url.clone().into()).await;
    // The same report but for when each run was created.
    let (sqlite_report, pg_report) = (without_time(&from_sqlite), without_time(&from_postgres));
    assert_eq!(sqlite_report.0["report"]["counts"]["recorded"], 120);
    assert!(sqlite_report == pg_report, "the reports differ");

    let (sqlite_store, pg_store) = (AnyStore::open_existing(&sqlite).unwrap(), AnyStore::open_existing(&url).unwrap());
    let (lines, pg_lines) = (export(&sqlite_store, "run-0001"), export(&pg_store, "run-0001"));
    assert_eq!(String::from_utf8_lossy(&lines).lines().count(), 120);
    assert!(lines == pg_lines, "the exports differ");
    let (a, b) = (sqlite_store.runs().unwrap(), pg_store.runs().unwrap());
    assert_eq!((a[0].planned, a[0].passed, a[0].failed), (b[0].planned, b[0].passed, b[0].failed));
    assert_eq!(sqlite_store.task_ids(&a[0].id).unwrap(), pg_store.task_ids(&b[0].id).unwrap());
    assert_eq!(sqlite_store.agents(&a[0].id).unwrap(), pg_store.agents(&b[0].id).unwrap());

    // At most one verdict per plan entry: the table's key refuses a second.
    let run = pg_store.find_run("run-0001").unwrap();
    let first = pg_store.episodes(&run).unwrap().remove(0);
    let again = pg_store.record(&run, first.plan_index, &first.result, first.trajectory.as_ref());
    assert!(matches!(again, Err(StoreError::AlreadyRecorded { .. })), "{again:?}");
    assert!(matches!(pg_store.record(&run, 10_000, &first.result, None), Err(StoreError::NotInPlan { .. })));
    assert_eq!(pg.psql("hosted", "SELECT COUNT(*), COUNT(DISTINCT plan_index) FROM episodes"), "120|120");

    // The SQLite store copied into an empty database reads back the same.
    let copy_url = pg.database("copy");
    let copied = sqlite_store.copy_into(&PgStore::connect(&copy_url).unwrap()).unwrap();
    assert_eq!(copied.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>(), [("run-0001".into(), "run-0001".into())]);
    let copy = AnyStore::open_existing(&copy_url).unwrap();
    assert!(export(&copy, "run-0001") == lines, "the copy's export differs");
    assert_eq!(copy.runs().unwrap(), sqlite_store.runs().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_postgres_configuration_is_one_clear_error_at_start() {
    let Some(pg) = TempPostgres::start() else { return };
    let started = Instant::now();
    let error = |url: &str| PgStore::connect(url).expect_err("refused").to_string();

    let (_held, closed) = toolenv_tests::held_port();
    let unreachable = error(&format!("postgres://toolenv:{PASSWORD}@{closed}/x"));
    assert!(unreachable.contains("127.0.0.1") && !unreachable.contains(PASSWORD), "{unreachable}");
    assert!(unreachable.to_lowercase().contains("connect"), "{unreachable}");

    let wrong = error(&format!("postgres://toolenv:wrong@127.0.0.1:{}/postgres", pg.port()));
    assert!(wrong.contains("password authentication failed"), "{wrong}");
    assert!(!wrong.contains("wrong"), "the password is not shown: {wrong}");

    let missing = error(&pg.url("no_such_db"));
    assert!(missing.contains("no_such_db") && missing.contains("does not exist"), "{missing}");

    assert!(error("postgres://toolenv@127.0.0.1:notaport/x").contains("not a PostgreSQL URL"));

    let url = pg.database("newer");
    drop(PgStore::connect(&url).expect("a new database is migrated"));
    drop(PgStore::connect(&url).expect("and opened again"));
    let call_log_keys = "SELECT COUNT(*) FROM pg_constraint WHERE conrelid = 'call_log'::regclass AND contype = 'f'";
    assert_eq!(pg.psql("newer", call_log_keys), "0", "the call log checks no foreign key per call (version 4)");
    // A version-3 database (the foreign key still there, no finishes in the log) is brought to the current version.
    pg.psql(
        "newer",
        "ALTER TABLE call_log ADD FOREIGN KEY (episode_id) REFERENCES episode_log (episode_id);
         ALTER TABLE call_log DROP COLUMN finished_at;
         UPDATE schema_version SET version = 3",
    );
    drop(PgStore::connect(&url).expect("a version-3 database is migrated"));
    assert_eq!(pg.psql("newer", call_log_keys), "0");
    let finish_column = "SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'call_log' AND column_name = 'finished_at'";
    assert_eq!(pg.psql("newer", finish_column), "1", "the log holds finishes (version 5)");
    assert_eq!(pg.psql("newer", "SELECT version FROM schema_version"), toolenv_store::postgres::PG_SCHEMA_VERSION.to_string());
    pg.psql("newer", "UPDATE schema_version SET version = 99");
    let newer = error(&url);
    assert!(newer.contains("schema version 99") && newer.contains("upgrade toolenv"), "{newer}");
    // The server says the same, at start.
    let serve = toolenv_server::RunningServer::start(Config { store: Some(url.into()), ..Config::default() }).await;
    let serve_error = serve.expect_err("the server refuses to start").to_string();
    assert!(serve_error.contains("store"), "{serve_error}");
    assert!(started.elapsed() < Duration::from_secs(20), "errors came slowly: {:?}", started.elapsed());
}

/// Leases claimed in the database: sixteen claimers at once get every plan
/// entry exactly once; an expired lease is claimed again, a released one at
/// once, and a run with every entry leased answers when the soonest expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claims_take_each_entry_once_and_expired_leases_come_back() {
    use toolenv_store::postgres::Claim;
    let Some(pg) = TempPostgres::start() else { return };
    let store = std::sync::Arc::new(PgStore::connect(&pg.database("claims")).expect("the store"));
    let plan = toolenv_runs::Grid { trials: 20, ..toolenv_runs::Grid::single(vec!["reference".into()]) }
        .plan(toolenv_domains::suite().iter().map(|t| t.id.as_str()));
    let long = Duration::from_secs(600);
    let run = store.host_run(&plan, "claims", long).expect("a run").to_string();
    let mut claimers = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (store, run) = (store.clone(), run.clone());
        claimers.spawn(async move {
            let mut claimed = Vec::new();
            while let Claim::Slot(index) = store.claim(run.clone(), String::new(), long).await.expect("a claim") {
                claimed.push(index);
            }
            claimed
        });
    }
    let mut claimed = Vec::new();
    while let Some(done) = claimers.join_next().await {
        claimed.extend(done.unwrap());
    }
    claimed.sort_unstable();
    assert_eq!(claimed, (0..plan.len()).collect::<Vec<_>>(), "every entry once, none twice");

    let short = Duration::from_millis(400);
    let run = store.host_run(&plan[..2], "expiry", short).expect("a run").to_string();
    let claim = || store.claim(run.clone(), String::new(), short);
    assert_eq!(claim().await.unwrap(), Claim::Slot(0));
    assert_eq!(claim().await.unwrap(), Claim::Slot(1));
    let Claim::Busy(left) = claim().await.unwrap() else { panic!("every entry is leased") };
    assert!(left <= short, "{left:?}");
    store.release(run.clone(), 1).await.unwrap();
    assert_eq!(claim().await.unwrap(), Claim::Slot(1), "a released entry at once");
    tokio::time::sleep(short + Duration::from_millis(100)).await;
    assert_eq!(claim().await.unwrap(), Claim::Slot(0), "an expired lease comes back");
}
