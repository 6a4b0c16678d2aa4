//! Replicas on one PostgreSQL store (a real cluster from initdb): an
//! episode moves between servers mid-play and continues byte for byte as in
//! a single process (rebuilt from the durable call log by replay, a stale
//! copy detected and rebuilt); a hosted run shared by two replicas, one of
//! them shut down mid-run, ends with exactly one verdict per plan entry and
//! the report of a single SQLite process.

use crate::support::{finishing, start};
use prost::Message as _;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::Client;
use toolenv_client::worker::work;
use toolenv_core::Task;
use toolenv_domains::suite;
use toolenv_server::{Config, RunningServer};
use toolenv_tests::postgres::TempPostgres;

use crate::pg_store::{grid, hosted_run, without_time};

async fn replica(url: &str) -> (RunningServer, Client) {
    crate::support::start_with(Config { store: Some(url.into()), ..Config::default() }).await
}

/// An episode request with faults (λ = 0.2), so the fault schedule must survive the moves too.
fn faulty(task_id: &str, seed: u64) -> pb::CreateEpisodeRequest {
    pb::CreateEpisodeRequest {
        fault_profile: Some(pb::FaultProfile { name: "0.2".into(), ..Default::default() }),
        time_scale: Some(0.0),
        ..crate::support::new_episode(task_id, seed, 0)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_episode_moves_between_replicas_and_continues_byte_for_byte() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("moves");
    let (single, mut reference) = start().await;
    let (a, mut on_a) = replica(&url).await;
    let (b, mut on_b) = replica(&url).await;
    for (n, task) in suite().iter().take(8).enumerate() {
        let calls = toolenv_domains::agent::random_calls(task, n as u64, 12);
        let seed = 100 + n as u64;
        // The single process: the whole episode on one server.
        let expected_episode = reference.create(faulty(&task.id, seed)).await.unwrap();
        let mut expected_replies = Vec::new();
        for call in &calls {
            let reply = reference.call_json(&expected_episode.episode_id, call.tool, &call.arguments.to_string()).await;
            expected_replies.push(reply.is_ok());
        }
        let expected_verdict = reference.finish(finishing(&expected_episode.episode_id)).await.unwrap();
        let expected = reference.trajectory(&expected_episode.episode_id).await.unwrap();

        // Replicas: created on A, three calls on A, three on B (rebuilt
        // there from the log), three on A again (a stale copy there), the
        // rest on B, finished on A.
        let episode = on_a.create(faulty(&task.id, seed)).await.unwrap();
        assert_eq!(episode.description, expected_episode.description);
        let id = episode.episode_id.clone();
        let mut replies = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let client = if (i / 3) % 2 == 0 { &mut on_a } else { &mut on_b };
            replies.push(client.call_json(&id, call.tool, &call.arguments.to_string()).await.is_ok());
        }
        assert_eq!(replies, expected_replies, "{}: the replies differ", task.id);
        let verdict = on_a.finish(finishing(&id)).await.unwrap();
        assert_eq!(verdict.encode_to_vec(), expected_verdict.encode_to_vec(), "{}: the verdicts differ", task.id);
        let moved = on_a.trajectory(&id).await.unwrap();
        assert_eq!(moved.calls.len(), 12);
        assert!(moved.encode_to_vec() == expected.encode_to_vec(), "{}: the trajectories differ", task.id);
        assert_eq!(in_log(&pg, "moves", &id), "12|1", "12 calls and the finish");
    }
    // An id no replica logged is still NOT_FOUND.
    let unknown = on_b.call_json("ep-0123456789abcdef0123456789abcdef", "x", "{}").await.unwrap_err();
    assert!(format!("{unknown:?}").contains("NotFound"), "{unknown:?}");
    for server in [single, a, b] {
        server.shutdown().await.unwrap();
    }
}

/// An agent's idempotency keys survive a move: a retry sent with the same
/// key to the replica that rebuilt the episode is recognised as a retry
/// (the log keeps the key as sent; trajectories keep only its first call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_idempotency_keys_survive_a_move_between_replicas() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("keys");
    let (single, mut reference) = start().await;
    let (a, mut on_a) = replica(&url).await;
    let (b, mut on_b) = replica(&url).await;
    let task = suite().iter().find(|t| t.id == "travel/cheapest-flight/001").expect("the task");
    // The reference's calls, each write sent twice with one key (a retry), moving between replicas at every call.
    let mut calls = Vec::new();
    for (n, call) in task.reference.iter().enumerate() {
        let writes = task.domain.tool(call.tool).is_some_and(|t| t.spec().mutates_state);
        let key = if writes { format!("agent-key-{n}") } else { String::new() };
        calls.push((call.tool, call.arguments.to_string(), key.clone()));
        if writes {
            calls.push((call.tool, call.arguments.to_string(), key));
        }
    }
    let mut trajectories = Vec::new();
    for clients in [vec![&mut reference], vec![&mut on_a, &mut on_b]] {
        let mut clients = clients;
        let episode = clients[0].create(faulty(&task.id, 7)).await.unwrap();
        let mut replies = Vec::new();
        for (i, (tool, arguments, key)) in calls.iter().enumerate() {
            let n = clients.len();
            let request = pb::CallToolRequest {
                episode_id: episode.episode_id.clone(),
                tool_name: (*tool).to_owned(),
                arguments_json: arguments.clone(),
                idempotency_key: key.clone(),
                ..Default::default()
            };
            replies.push(format!("{:?}", clients[i % n].call(request).await.map(|r| r.outcome)));
        }
        clients[0].finish(finishing(&episode.episode_id)).await.unwrap();
        let trajectory = clients[0].trajectory(&episode.episode_id).await.unwrap();
        trajectories.push((replies, trajectory));
    }
    let [(expected_replies, expected), (replies, moved)] = <[_; 2]>::try_from(trajectories).unwrap();
    assert_eq!(replies, expected_replies);
    let retries = expected.calls.iter().filter(|c| c.idempotency_key_call.is_some_and(|first| first != c.index)).count();
    assert!(retries >= 2, "the retries were recognised in the single process: {retries}");
    assert!(moved.encode_to_vec() == expected.encode_to_vec(), "the trajectories differ:\n{moved:?}\n{expected:?}");
    assert!(moved.calls.iter().all(|c| c.idempotency_key.is_empty()), "keys stay in the log, out of trajectories");
    for server in [single, a, b] {
        server.shutdown().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_run_shared_by_replicas_survives_one_and_reports_as_one_process() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("shared");
    let dir = tempfile::tempdir().unwrap();
    let single = hosted_run(dir.path().join("single.db")).await;

    let (a, mut on_a) = replica(&url).await;
    let (b, on_b) = replica(&url).await;
    let run = on_a.runs().create_run(grid()).await.unwrap().into_inner();
    let spawn = |workers: &mut tokio::task::JoinSet<_>, i: usize, agent: Builtin, client: &Client| {
        let (mut client, run_id) = (client.clone(), run.run_id.clone());
        workers.spawn(async move { (i, agent, work(&mut client, &run_id, agent, agent.name(), &format!("w{i}"), |_, _, _| ()).await) });
    };
    let mut workers = tokio::task::JoinSet::new();
    for (i, agent) in [Builtin::Reference, Builtin::Brittle, Builtin::Reference, Builtin::Brittle].into_iter().enumerate() {
        spawn(&mut workers, i, agent, if i < 2 { &on_a } else { &on_b });
    }
    // A stops after a few episodes; its workers end (in error, or done) and come back on B.
    while pg.psql("shared", "SELECT COUNT(*) FROM episodes").parse::<u32>().unwrap() < 20 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    a.shutdown().await.unwrap();
    while let Some(joined) = workers.join_next().await {
        match joined.unwrap() {
            (i @ (0 | 1), agent, _) => spawn(&mut workers, i + 10, agent, &on_b),
            (i, _, outcome) => assert!(outcome.is_ok(), "worker {i} on B: {outcome:?}"),
        }
    }
    assert_eq!(pg.psql("shared", "SELECT COUNT(*), COUNT(DISTINCT plan_index) FROM episodes WHERE passed IS NOT NULL"), "120|120");
    let report = pb::GetRunReportRequest { run_id: run.run_id.clone(), ..Default::default() };
    let shared = on_b.clone().runs().get_run_report(report).await.unwrap().into_inner();
    assert!(without_time(&shared) == without_time(&single), "the replicas' report differs from a single process's");
    b.shutdown().await.unwrap();
}

/// A hosted episode whose lease expired and whose entry another worker
/// claimed is refused on every replica, not only the one that saw it idle:
/// its next call, on a replica that rebuilds it from the log, is
/// LEASE_EXPIRED, and the new episode plays on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_episode_whose_entry_went_to_another_worker_is_refused_on_every_replica() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("lost");
    let (a, mut on_a) = replica(&url).await;
    let (b, mut on_b) = replica(&url).await;
    let (_, task, old, new) = entry_lost(&mut on_a, &mut on_b, |task| task.reference[..1].to_vec()).await;
    let (tool, arguments) = (task.reference[0].tool, task.reference[0].arguments.to_string());
    let refused = on_b.call_json(&old, tool, &arguments).await.unwrap_err();
    let toolenv_client::ClientError::Status(status) = &refused else { panic!("{refused:?}") };
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("lease"), "{status:?}");
    let refused_again = on_b.call_json(&old, tool, &arguments).await.unwrap_err();
    assert!(format!("{refused_again:?}").contains("FailedPrecondition"), "still refused: {refused_again:?}");
    on_b.call_json(&new, tool, &arguments).await.expect("the new episode plays on");
    for server in [a, b] {
        server.shutdown().await.unwrap();
    }
}

/// A hosted episode whose entry another worker claimed after its last call
/// is refused as expired at its finish, and not recorded in the run, as in
/// one process: with every call logged (the log is asked whether the entry
/// is still the episode's) and with `--durability finish` (its calls after
/// the first are logged then, and the append finds the lease gone).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_episode_whose_entry_went_to_another_worker_is_refused_at_its_finish() {
    let Some(pg) = TempPostgres::start() else { return };
    for (database, durability) in [("lostcall", toolenv_server::Durability::Call), ("lostfinish", toolenv_server::Durability::Finish)] {
        let url = pg.database(database);
        let (server, mut client) = crate::support::start_with(Config { store: Some(url.into()), durability, ..Config::default() }).await;
        // Two calls or more: with durability at finish, the first is logged at once, the rest wait for the finish.
        let calls = |task: &Task| [&task.reference[..], &task.reference[..1]].concat();
        let (run, _, old, _) = entry_lost(&mut client.clone(), &mut client, calls).await;
        let refused = client.finish(finishing(&old)).await.unwrap_err();
        let toolenv_client::ClientError::Status(status) = &refused else { panic!("{durability:?}: {refused:?}") };
        assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{durability:?}: {status:?}");
        assert!(status.message().contains("lease"), "{durability:?}: {status:?}");
        let recorded = pg.psql(database, &format!("SELECT COUNT(*) FROM episodes WHERE run_id = '{run}'"));
        assert_eq!(recorded, "0", "{durability:?}: the refused finish is not recorded in the run");
        server.shutdown().await.unwrap();
    }
}

/// With its store down, a replica answers every RPC that needs the store
/// UNAVAILABLE with retry advice — never INTERNAL — so one retry policy
/// covers them all; once the store is back, the same requests succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_outage_is_unavailable_on_every_rpc() {
    let Some(mut pg) = TempPostgres::start() else { return };
    let url = pg.database("outage");
    let (server, mut client) = replica(&url).await;
    let run = client.runs().create_run(crate::pg_store::grid()).await.unwrap().into_inner();
    let next =
        || pb::NextEpisodeRequest { run_id: run.run_id.clone(), agent: "reference".into(), worker: "w".into(), ..Default::default() };
    let lease = client.runs().next_episode(next()).await.unwrap().into_inner().lease.expect("a lease");
    let episode = lease.episode.expect("the leased episode");
    let task = toolenv_domains::task(&episode.task_id).expect("a paper task");
    let call = &task.reference[0];

    pg.stop();
    let unavailable = |what: &str, status: tonic::Status| {
        assert_eq!(status.code(), tonic::Code::Unavailable, "{what}: {status:?}");
        use tonic_types::StatusExt as _;
        assert!(status.get_details_retry_info().and_then(|r| r.retry_delay).is_some(), "{what}: no retry advice in {status:?}");
    };
    let called = client.call_json(&episode.episode_id, call.tool, &call.arguments.to_string()).await;
    let status = |error: toolenv_client::ClientError| match error {
        toolenv_client::ClientError::Status(status) => status,
        other => panic!("not a status: {other:?}"),
    };
    unavailable("CallTool", status(called.unwrap_err()));
    unavailable("NextEpisode", client.runs().next_episode(next()).await.unwrap_err());
    let get_run = pb::GetRunRequest { run_id: run.run_id.clone() };
    unavailable("GetRun", client.runs().get_run(get_run.clone()).await.unwrap_err());
    let report = pb::GetRunReportRequest { run_id: run.run_id.clone(), ..Default::default() };
    unavailable("GetRunReport", client.runs().get_run_report(report).await.unwrap_err());
    unavailable("ListRuns", client.runs().list_runs(pb::ListRunsRequest::default()).await.unwrap_err());
    unavailable("FinishEpisode", status(client.finish(finishing(&episode.episode_id)).await.unwrap_err()));

    pg.restart();
    let mut back = None;
    for _ in 0..100 {
        match client.runs().get_run(get_run.clone()).await {
            Ok(run) => {
                back = Some(run.into_inner());
                break;
            }
            Err(status) => {
                unavailable("GetRun while the store comes back", status);
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
    assert_eq!(back.expect("the store is back").planned, run.planned);
    server.shutdown().await.unwrap();
}

/// The typed client's environment sends each call with its index and sends
/// it again while the answer leaves its outcome unknown: with PostgreSQL
/// stopped under a replica mid-episode and started again, every call is
/// applied exactly once and the trajectory equals a single process's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_retried_through_a_store_restart_are_applied_once() {
    use toolenv_domains::solver::{Env as _, Observation, Request};
    let Some(mut pg) = TempPostgres::start() else { return };
    let url = pg.database("retried");
    let (single, mut reference) = start().await;
    let (server, mut on_replica) = replica(&url).await;
    let task = &suite()[0];
    let calls = toolenv_domains::agent::random_calls(task, 7, 10);
    let play = |client: toolenv_client::Client, episode: pb::Episode, stop_after: Option<std::sync::mpsc::SyncSender<()>>| {
        let calls = calls.clone();
        tokio::task::spawn_blocking(move || {
            let mut env = toolenv_client::RemoteEnv::new(client, &episode, false);
            let mut observations = Vec::new();
            for (i, call) in calls.iter().enumerate() {
                if i == 4
                    && let Some(stop) = &stop_after
                {
                    // The store goes down before this call; the call waits it out.
                    stop.send(()).unwrap();
                    stop.send(()).unwrap();
                }
                let observation = env.call(call.tool, &call.arguments.to_string(), &Request::default());
                assert!(!matches!(observation, Observation::Closed(_)), "call {i}: {observation:?}");
                observations.push(observation);
            }
            observations
        })
    };
    let expected_episode = reference.create(crate::support::new_episode(&task.id, 7, 0)).await.unwrap();
    let expected = play(reference.clone(), expected_episode.clone(), None).await.unwrap();

    let episode = on_replica.create(crate::support::new_episode(&task.id, 7, 0)).await.unwrap();
    let (stop, stopping) = std::sync::mpsc::sync_channel(0);
    let played = play(on_replica.clone(), episode.clone(), Some(stop));
    tokio::task::block_in_place(|| {
        stopping.recv().unwrap();
        pg.stop();
        stopping.recv().unwrap();
        // The call is being sent again meanwhile.
        std::thread::sleep(std::time::Duration::from_millis(700));
        pg.restart();
    });
    let observations = played.await.unwrap();
    assert_eq!(observations, expected);
    let moved = on_replica.trajectory(&episode.episode_id).await.unwrap();
    let single_trajectory = reference.trajectory(&expected_episode.episode_id).await.unwrap();
    assert_eq!(moved.calls.len(), calls.len(), "each call applied once");
    assert!(moved.calls == single_trajectory.calls, "the trajectory differs from one process's");
    assert_eq!(pg.psql("retried", &format!("SELECT COUNT(*) FROM call_log WHERE episode_id = '{}'", episode.episode_id)), "10");
    for server in [single, server] {
        server.shutdown().await.unwrap();
    }
}

/// A call's reply goes only once the call is in the log as the copy that
/// answered played it. Here a retry of a call reaches the replica while the
/// first attempt's append waits on a lock; the retry is answered from the
/// copy in memory; then the first attempt's connection is terminated (its
/// append fails and the copy is dropped). The retry must not be answered
/// OK for a call the log does not hold: it is UNAVAILABLE, and the next
/// attempt (rebuilt from the log) applies the call once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_is_sent_only_for_a_call_in_the_log() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("confirmed");
    let (server, mut client) = replica(&url).await;
    let task = &suite()[0];
    let episode = client.create(crate::support::new_episode(&task.id, 3, 0)).await.unwrap();
    let call = &task.reference[0];
    let request = pb::CallToolRequest {
        episode_id: episode.episode_id.clone(),
        tool_name: call.tool.to_owned(),
        arguments_json: call.arguments.to_string(),
        expected_index: Some(0),
        ..Default::default()
    };
    let lock = pg.lock("confirmed", "call_log", "ACCESS EXCLUSIVE");
    let waiting = || pg.psql("confirmed", "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
    let first = tokio::spawn({
        let (mut client, request) = (client.clone(), request.clone());
        async move { client.call(request).await }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while waiting() != "1" {
        assert!(
            std::time::Instant::now() < deadline,
            "the first attempt never waited on the lock: {}",
            pg.psql("confirmed", "SELECT wait_event_type, wait_event, query FROM pg_stat_activity")
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let retry = tokio::spawn({
        let (mut client, request) = (client.clone(), request.clone());
        async move { client.call(request).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    pg.psql("confirmed", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
    let first = first.await.unwrap();
    let retry = retry.await.unwrap();
    lock.release();
    let logged = pg.psql("confirmed", &format!("SELECT COUNT(*) FROM call_log WHERE episode_id = '{}'", episode.episode_id));
    for (what, answer) in [("first attempt", &first), ("retry", &retry)] {
        match answer {
            Ok(_) => assert_eq!(logged, "1", "the {what} was answered OK for a call the log does not hold"),
            Err(toolenv_client::ClientError::Status(status)) => assert_eq!(status.code(), tonic::Code::Unavailable, "{what}: {status:?}"),
            Err(other) => panic!("{what}: {other:?}"),
        }
    }
    // The next attempt is answered from the log, or applies the call there: once.
    client.call(request).await.expect("the call, sent again with its index");
    assert_eq!(client.trajectory(&episode.episode_id).await.unwrap().calls.len(), 1);
    assert_eq!(pg.psql("confirmed", &format!("SELECT COUNT(*) FROM call_log WHERE episode_id = '{}'", episode.episode_id)), "1");
    server.shutdown().await.unwrap();
}

/// A finish that waits for its copy while a call's append is in flight,
/// and the append then fails (the copy is dropped, the call UNAVAILABLE):
/// the finish is judged on the episode rebuilt from the log, not refused
/// as NOT_FOUND.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finish_whose_copy_a_failed_append_dropped_is_judged_on_the_log() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("dropped");
    let (server, mut client) = replica(&url).await;
    let task = &suite()[0];
    let id = client.create(crate::support::new_episode(&task.id, 3, 0)).await.unwrap().episode_id;
    let call = &task.reference[0];
    let lock = pg.lock("dropped", "call_log", "ACCESS EXCLUSIVE");
    let calling = tokio::spawn({
        let (mut client, id) = (client.clone(), id.clone());
        let (tool, arguments) = (call.tool.to_owned(), call.arguments.to_string());
        async move {
            client
                .call(pb::CallToolRequest {
                    episode_id: id,
                    tool_name: tool,
                    arguments_json: arguments,
                    expected_index: Some(0),
                    ..Default::default()
                })
                .await
        }
    });
    let appending = "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
    until(&pg, "dropped", appending).await;
    let finish = tokio::spawn({
        let (mut client, request) = (client.clone(), finishing(&id));
        async move { client.finish(request).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!finish.is_finished(), "the finish did not wait for the call's append: {:?}", finish.await);
    pg.psql("dropped", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock'");
    match calling.await.unwrap() {
        Err(toolenv_client::ClientError::Status(status)) => assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}"),
        other => panic!("the call's append failed, yet: {other:?}"),
    }
    lock.release();
    let verdict = finish.await.unwrap().expect("the finish, judged on the episode rebuilt from the log");
    let trajectory = client.trajectory(&id).await.unwrap();
    assert!(trajectory.calls.is_empty(), "a call the log does not hold was judged: {:?}", trajectory.calls);
    assert_eq!(trajectory.verdict, Some(verdict));
    assert_eq!(in_log(&pg, "dropped", &id), "0|1");
    server.shutdown().await.unwrap();
}

/// A copy of an episode behind the log (the replica that created it, while
/// the calls went to another) answers a call whose index is ahead of it by
/// rebuilding itself from the log, not by refusing the call as ahead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_behind_the_log_catches_up_for_a_call_with_its_index() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("behind");
    let (single, mut reference) = start().await;
    let (a, mut on_a) = replica(&url).await;
    let (b, mut on_b) = replica(&url).await;
    let task = &suite()[0];
    let calls = toolenv_domains::agent::random_calls(task, 5, 6);
    let request = |id: &str, index: usize| pb::CallToolRequest {
        episode_id: id.to_owned(),
        tool_name: calls[index].tool.to_owned(),
        arguments_json: calls[index].arguments.to_string(),
        expected_index: Some(index as u32),
        ..Default::default()
    };
    let create = || pb::CreateEpisodeRequest { time_scale: Some(0.0), ..crate::support::new_episode(&task.id, 5, 0) };
    let expected_episode = reference.create(create()).await.unwrap();
    for index in 0..calls.len() {
        let _ = reference.call(request(&expected_episode.episode_id, index)).await;
    }
    let expected = reference.trajectory(&expected_episode.episode_id).await.unwrap();
    let id = on_a.create(create()).await.unwrap().episode_id;
    for index in 0..calls.len() {
        // Calls 0-2 on B (which rebuilds the episode), the rest on A, whose copy has none of them.
        let client = if index < 3 { &mut on_b } else { &mut on_a };
        if let Err(toolenv_client::ClientError::Status(status)) = client.call(request(&id, index)).await {
            assert_ne!(status.code(), tonic::Code::FailedPrecondition, "call {index}: {status:?}");
        }
    }
    let moved = on_a.trajectory(&id).await.unwrap();
    for (replicas, single) in moved.calls.iter().zip(&expected.calls) {
        assert!(replicas == single, "the call differs from one process's: {replicas:?} {single:?}");
    }
    assert_eq!(moved.calls.len(), expected.calls.len());
    for server in [single, a, b] {
        server.shutdown().await.unwrap();
    }
}

/// With replicas, the database owns a hosted episode's lease: the replica
/// that created the episode (by `NextEpisode`) and sees no call of it, as
/// the calls go to another replica that renews the lease with each one,
/// drops its idle copy without revoking the episode; when that other
/// replica goes away, the calls play on at the first, none refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_lease_is_not_revoked_by_an_idle_copy() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("live");
    let quick = || Config { store: Some(url.clone().into()), episode_idle_timeout: std::time::Duration::from_secs(2), ..Config::default() };
    let (a, mut on_a) = crate::support::start_with(quick()).await;
    let (b, mut on_b) = crate::support::start_with(quick()).await;
    let request = pb::CreateRunRequest { lease_timeout_ms: 600, ..grid() };
    let run = on_a.runs().create_run(request).await.unwrap().into_inner().run_id;
    let (lease, _) = on_a.lease(&run, "reference", "w1", &[]).await.unwrap().expect("a lease");
    let episode = lease.episode.unwrap();
    let task = suite().iter().find(|t| t.id == episode.task_id).expect("a suite task");
    let (tool, arguments) = (task.reference[0].tool, task.reference[0].arguments.to_string());
    // Calls on B every 200 ms for 1.6 s: the lease lives; A's copy idles past it.
    for _ in 0..8 {
        let _ = on_b.call_json(&episode.episode_id, tool, &arguments).await;
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // B goes away; the calls go on at A, which created the episode and idled past the lease.
    b.shutdown().await.unwrap();
    for _ in 0..6 {
        if let Err(toolenv_client::ClientError::Status(status)) = on_a.call_json(&episode.episode_id, tool, &arguments).await {
            assert!(!status.message().contains("lease"), "a live lease refused on the replica that created it: {status:?}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    on_a.finish(finishing(&episode.episode_id)).await.expect("the episode finishes");
    a.shutdown().await.unwrap();
}

/// A worker rides out a store restart: its leases, calls and finishes are
/// sent again while their answers leave the outcome unknown, so it plays
/// the whole run without stopping, one verdict per plan entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_rides_out_a_store_restart() {
    let Some(mut pg) = TempPostgres::start() else { return };
    let url = pg.database("restart");
    let (server, mut client) = replica(&url).await;
    let run = client.runs().create_run(grid()).await.unwrap().into_inner();
    let workers = [Builtin::Reference, Builtin::Brittle].map(|agent| {
        let (mut client, run_id) = (client.clone(), run.run_id.clone());
        tokio::spawn(async move { work(&mut client, &run_id, agent, agent.name(), agent.name(), |_, _, _| ()).await })
    });
    while pg.psql("restart", "SELECT COUNT(*) FROM episodes").parse::<u64>().unwrap() < 10 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::task::block_in_place(|| {
        pg.stop();
        std::thread::sleep(std::time::Duration::from_millis(700));
        pg.restart();
    });
    // A lease that lapsed while the store was down is lost and its entry
    // played again, so each entry is finished once whatever was lost.
    let (mut played, mut lost) = (0, 0);
    for worker in workers {
        let summary = worker.await.unwrap().expect("the worker plays on through the restart");
        (played, lost) = (played + summary.played, lost + summary.lost_leases);
    }
    assert_eq!(played, run.planned, "each plan entry finished once ({lost} leases lost and played again)");
    let counts = pg.psql("restart", "SELECT COUNT(*), COUNT(DISTINCT plan_index) FROM episodes WHERE passed IS NOT NULL");
    assert_eq!(counts, format!("{0}|{0}", run.planned));
    server.shutdown().await.unwrap();
}

/// A finish the store could not record is answered UNAVAILABLE, and sent
/// again once the store is back it records the verdict in the run, so the
/// entry is not played twice. (A repeat used to get the verdict the server
/// kept, answered as if recorded, and the entry was handed out again.) Two
/// repeats sent at once: neither is answered before the verdict is stored,
/// and when the one recording fails, the other records.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finish_the_store_missed_is_recorded_when_sent_again() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("missed");
    let (server, mut client) = replica(&url).await;
    let run = client.runs().create_run(grid()).await.unwrap().into_inner().run_id;
    let (lease, _) = client.lease(&run, "reference", "w1", &[]).await.unwrap().expect("a lease");
    let episode = lease.episode.unwrap().episode_id;
    // The finish gets as far as recording its verdict, which waits on a lock; then its connection is cut.
    let lock = pg.lock("missed", "episodes", "ACCESS EXCLUSIVE");
    // Only the verdict's INSERT counts: the server may read the table meanwhile.
    let recording = "FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                     WHERE l.relation = 'episodes'::regclass AND NOT l.granted AND a.query LIKE '%INSERT INTO episodes%'";
    let finishing_first = {
        let (mut client, request) = (client.clone(), finishing(&episode));
        tokio::spawn(async move { client.finish(request).await })
    };
    until(&pg, "missed", &format!("SELECT COUNT(*) {recording}")).await;
    let unavailable = |refused: &toolenv_client::ClientError| matches!(refused, toolenv_client::ClientError::Status(status) if status.code() == tonic::Code::Unavailable);
    pg.psql("missed", &format!("SELECT pg_terminate_backend(l.pid) {recording}"));
    let refused = finishing_first.await.unwrap().expect_err("the connection lost, no verdict recorded");
    assert!(unavailable(&refused), "{refused:?}");
    // Two repeats at once, the table still locked: one waits on the INSERT, the other on it.
    let repeat = || {
        let (mut client, request) = (client.clone(), finishing(&episode));
        tokio::spawn(async move { client.finish(request).await })
    };
    let first_repeat = repeat();
    until(&pg, "missed", &format!("SELECT COUNT(*) {recording}")).await;
    let second_repeat = repeat();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!second_repeat.is_finished(), "a repeat was answered before the verdict was stored: {:?}", second_repeat.await);
    // The one recording loses its connection: it is UNAVAILABLE, and the other records.
    pg.psql("missed", &format!("SELECT pg_terminate_backend(l.pid) {recording}"));
    let refused = first_repeat.await.unwrap().expect_err("the connection lost again");
    assert!(unavailable(&refused), "{refused:?}");
    until(&pg, "missed", &format!("SELECT COUNT(*) {recording}")).await;
    lock.release();
    let verdict = second_repeat.await.unwrap().expect("recorded once the store is back");
    let recorded = pg.psql("missed", &format!("SELECT passed FROM episodes WHERE run_id = '{run}' AND plan_index = {}", lease.plan_index));
    assert_eq!(recorded, if verdict.passed { "t" } else { "f" }, "the verdict answered is the one recorded");
    server.shutdown().await.unwrap();
}

/// Waits until `count` (a query in `database`) is 1, for at most 30 s.
async fn until(pg: &TempPostgres, database: &str, count: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while pg.psql(database, count) != "1" {
        assert!(std::time::Instant::now() < deadline, "still not 1 after 30 s: {count}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Group commit: what episodes have waiting together goes to the database
/// in one transaction. Eight episodes call and four more are created at once
/// while the log is locked; once it is free, the eight calls and the four
/// episodes are in at most two transactions (the first that waited on the
/// lock, and the rest), where a commit per call and per episode would take
/// twelve.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_waiting_together_are_committed_together() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("grouped");
    let (server, mut client) = replica(&url).await;
    let task = &suite()[0];
    let call = &task.reference[0];
    let mut episodes = Vec::new();
    for seed in 0..8 {
        episodes.push(client.create(crate::support::new_episode(&task.id, seed, 0)).await.unwrap().episode_id);
    }
    let lock = pg.lock("grouped", "call_log", "ACCESS EXCLUSIVE");
    let calls: Vec<_> = episodes
        .iter()
        .map(|id| {
            let (mut client, id, arguments) = (client.clone(), id.clone(), call.arguments.to_string());
            let tool = call.tool;
            tokio::spawn(async move { client.call_json(&id, tool, &arguments).await })
        })
        .collect();
    let created: Vec<_> = (8..12)
        .map(|seed| {
            let (mut client, request) = (client.clone(), crate::support::new_episode(&task.id, seed, 0));
            tokio::spawn(async move { client.create(request).await })
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    lock.release();
    for call in calls {
        call.await.unwrap().expect("the call is answered once logged");
    }
    let mut new_episodes = Vec::new();
    for created in created {
        new_episodes.push(format!("'{}'", created.await.unwrap().expect("the episode is created once logged").episode_id));
    }
    let transactions = pg.psql(
        "grouped",
        &format!(
            "SELECT COUNT(*), COUNT(DISTINCT x) FROM (SELECT xmin::TEXT AS x FROM call_log
             UNION ALL SELECT xmin::TEXT FROM episode_log WHERE episode_id IN ({})) AS logged",
            new_episodes.join(",")
        ),
    );
    let (rows, commits) = transactions.split_once('|').unwrap();
    assert_eq!(rows, "12");
    assert!(commits.parse::<u32>().unwrap() <= 2, "8 calls and 4 episodes in {commits} transactions");
    server.shutdown().await.unwrap();
}

/// `--durability finish`: an episode's first call and its finish reach the
/// log, not the calls between; its verdict and trajectory are a single
/// process's. Another replica asked about an episode played elsewhere
/// answers DATA_LOSS (the calls it would need are not in the log), never a
/// rebuilt copy that forgot them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_durability_at_finish_an_episode_is_logged_at_its_first_call_and_its_finish() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("finish");
    let at_finish = || Config { store: Some(url.clone().into()), durability: toolenv_server::Durability::Finish, ..Config::default() };
    let (single, mut reference) = start().await;
    let (a, mut on_a) = crate::support::start_with(at_finish()).await;
    let (b, mut on_b) = crate::support::start_with(at_finish()).await;
    let task = suite().iter().find(|t| t.reference.len() >= 3).expect("a task of three calls or more");
    let create = || pb::CreateEpisodeRequest { time_scale: Some(0.0), ..crate::support::new_episode(&task.id, 9, 0) };
    let expected_episode = reference.create(create()).await.unwrap();
    let id = on_a.create(create()).await.unwrap().episode_id;
    let logged = || in_log(&pg, "finish", &id);
    for call in &task.reference {
        let _ = reference.call_json(&expected_episode.episode_id, call.tool, &call.arguments.to_string()).await;
        on_a.call_json(&id, call.tool, &call.arguments.to_string()).await.unwrap();
        assert_eq!(logged(), "1|0", "only the first call is logged before the finish");
    }
    let lost = on_b.call_json(&id, task.reference[0].tool, &task.reference[0].arguments.to_string()).await.unwrap_err();
    let toolenv_client::ClientError::Status(status) = &lost else { panic!("{lost:?}") };
    assert_eq!(status.code(), tonic::Code::DataLoss, "{status:?}");
    let expected_verdict = reference.finish(finishing(&expected_episode.episode_id)).await.unwrap();
    let verdict = on_a.finish(finishing(&id)).await.unwrap();
    assert_eq!(verdict.encode_to_vec(), expected_verdict.encode_to_vec());
    assert_eq!(logged(), format!("{}|1", task.reference.len()), "every call is logged at the finish, and the finish");
    let writes = format!("SELECT COUNT(DISTINCT xmin::TEXT) FROM call_log WHERE episode_id = '{id}' AND call_index > 0");
    assert_eq!(pg.psql("finish", &writes), "1", "the calls after the first go in with the finish, in one write");
    let expected = reference.trajectory(&expected_episode.episode_id).await.unwrap();
    assert!(on_a.trajectory(&id).await.unwrap().calls == expected.calls);
    // Once finished, the episode is whole in the log: any replica answers for it.
    assert_eq!(on_b.trajectory(&id).await.unwrap(), on_a.trajectory(&id).await.unwrap());
    for server in [single, a, b] {
        server.shutdown().await.unwrap();
    }
}

/// A finish is in the log, so every replica answers for a finished episode
/// as one process would: the same trajectory and verdict, a finish sent
/// again gets the same verdict, and a call is refused as finished. Asked of
/// a replica that never held the episode (a failover), and of one that holds
/// a copy from before the finish (a copy as far on as the log, whose next
/// call would otherwise go in after the finish).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_episode_stays_finished_on_every_replica() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("finished");
    let (single, mut reference) = start().await;
    let task = &suite()[3];
    let calls = toolenv_domains::agent::random_calls(task, 7, 8);
    let expected_episode = reference.create(faulty(&task.id, 5)).await.unwrap();
    let expected_id = expected_episode.episode_id.clone();
    play(&mut reference, &expected_id, &calls).await;
    let expected_verdict = reference.finish(finishing(&expected_id)).await.unwrap();
    let expected = reference.trajectory(&expected_id).await.unwrap();
    let refusal = |error: toolenv_client::ClientError| match error {
        toolenv_client::ClientError::Status(status) => (status.code(), status.message().replace(&expected_id, "ID")),
        other => panic!("not a status: {other:?}"),
    };
    let expected_refusal = refusal(reference.call_json(&expected_id, calls[0].tool, &calls[0].arguments.to_string()).await.unwrap_err());

    let (a, mut on_a) = replica(&url).await;
    let (b, mut on_b) = replica(&url).await;
    let (c, mut on_c) = replica(&url).await;
    let id = on_a.create(faulty(&task.id, 5)).await.unwrap().episode_id;
    play(&mut on_a, &id, &calls[..4]).await;
    // B rebuilds the episode and plays the rest: its copy is as far on as the log when A finishes.
    play(&mut on_b, &id, &calls[4..]).await;
    let verdict = on_a.finish(finishing(&id)).await.unwrap();
    assert_eq!(verdict.encode_to_vec(), expected_verdict.encode_to_vec());
    for (name, client) in [("the replica holding a copy", &mut on_b), ("a replica that never held it", &mut on_c)] {
        let refused = client.call_json(&id, calls[0].tool, &calls[0].arguments.to_string()).await.unwrap_err();
        let (code, message) = refusal(refused);
        assert_eq!((code, message.replace(&id, "ID")), expected_refusal, "{name}: a call after the finish");
        let trajectory = client.trajectory(&id).await.unwrap();
        assert!(trajectory.encode_to_vec() == expected.encode_to_vec(), "{name}: the trajectory differs: {trajectory:?}");
        let again = client.finish(finishing(&id)).await.unwrap();
        assert_eq!(again.encode_to_vec(), expected_verdict.encode_to_vec(), "{name}: a finish sent again");
    }
    assert_eq!(in_log(&pg, "finished", &id), format!("{}|1", calls.len()), "the calls and the finish, once each");
    for server in [single, a, b, c] {
        server.shutdown().await.unwrap();
    }
}

/// Two finishes of one episode on two replicas at once, with different
/// answers: the first logged stands, both are answered with it and both
/// replicas keep it, as one process answers a second finish with the first
/// verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_finishes_on_two_replicas_the_first_logged_stands() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("twice");
    let (a, mut on_a) = replica(&url).await;
    let (b, mut on_b) = replica(&url).await;
    let task = &suite()[0];
    let id = on_a.create(crate::support::new_episode(&task.id, 1, 0)).await.unwrap().episode_id;
    play(&mut on_a, &id, &task.reference[..1]).await;
    // B holds a copy as far on as A's: each judges its own finish, and the log decides.
    on_b.trajectory(&id).await.unwrap();
    let lock = pg.lock("twice", "episode_log", "EXCLUSIVE");
    let waiting = |n: usize| {
        let pg = &pg;
        async move {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            // The log writers' statements only (a replica's pruning may wait too).
            let count = "SELECT COUNT(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                         WHERE l.relation = 'episode_log'::regclass AND NOT l.granted AND a.query LIKE '%INSERT INTO episode_log%'";
            while pg.psql("twice", count) != n.to_string() {
                assert!(std::time::Instant::now() < deadline, "{n} writers never waited");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    };
    let locked = "SELECT COUNT(*) FROM pg_locks WHERE relation = 'episode_log'::regclass AND granted AND mode = 'ExclusiveLock'";
    while pg.psql("twice", locked) != "1" {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let finish = |client: &mut Client, answer: &str| {
        let (mut client, request) = (client.clone(), pb::FinishEpisodeRequest { answer: Some(answer.into()), ..finishing(&id) });
        tokio::spawn(async move { client.finish(request).await })
    };
    let first = finish(&mut on_a, "the first answer");
    waiting(1).await;
    let second = finish(&mut on_b, "the second answer");
    waiting(2).await;
    lock.release();
    let (first, second) = (first.await.unwrap().unwrap(), second.await.unwrap().unwrap());
    assert_eq!(second.encode_to_vec(), first.encode_to_vec(), "both finishes are answered with the verdict that stands");
    // Both go ahead at once when the lock goes: either may be logged first, and the other replica keeps it.
    let (on_a, on_b) = (on_a.trajectory(&id).await.unwrap(), on_b.trajectory(&id).await.unwrap());
    assert!(on_a.answer.as_deref().is_some_and(|answer| answer.ends_with("answer")), "{:?}", on_a.answer);
    assert_eq!(on_b.answer, on_a.answer, "the replicas keep the same finish");
    assert_eq!(on_a.verdict.as_ref(), Some(&first));
    assert_eq!(in_log(&pg, "twice", &id), "1|1", "one call and one finish");
    for server in [a, b] {
        server.shutdown().await.unwrap();
    }
}

/// A call on one replica and a finish on another, sent at once, again and
/// again: each time they end as in one process. The call answered OK is in
/// the finished trajectory and the one refused is not: a finish judged on
/// the copy before the call (the finishing replica never sees the call) is
/// not logged, and is judged again on the episode rebuilt from the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_and_a_finish_racing_on_two_replicas_end_as_in_one_process() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("racing");
    let (a, mut on_a) = replica(&url).await;
    let (b, mut on_b) = replica(&url).await;
    let task = suite().iter().find(|t| t.reference.len() >= 2).expect("a task of two calls or more");
    let (first, last) = (&task.reference[..task.reference.len() - 1], task.reference.last().unwrap());
    let mut judged_again = 0;
    for seed in 0..24 {
        let id = on_a.create(crate::support::new_episode(&task.id, seed, 0)).await.unwrap().episode_id;
        play(&mut on_a, &id, first).await;
        // B holds a copy as far on as the log.
        assert_eq!(on_b.trajectory(&id).await.unwrap().calls.len(), first.len());
        let call = {
            let (mut client, id, arguments) = (on_a.clone(), id.clone(), last.arguments.to_string());
            let tool = last.tool;
            tokio::spawn(async move { client.call_json(&id, tool, &arguments).await })
        };
        let finish = {
            let (mut client, request) = (on_b.clone(), finishing(&id));
            tokio::spawn(async move { client.finish(request).await })
        };
        let called = call.await.unwrap().is_ok();
        let verdict = finish.await.unwrap().expect("the finish");
        // B's copy never saw the call: a finish with it was judged again.
        judged_again += usize::from(called);
        let calls = if called { task.reference.len() } else { first.len() };
        for client in [&mut on_a, &mut on_b] {
            let trajectory = client.trajectory(&id).await.unwrap();
            assert_eq!(trajectory.calls.len(), calls, "seed {seed}: the call answered {called}");
            assert_eq!(trajectory.verdict.as_ref(), Some(&verdict), "seed {seed}");
        }
        assert_eq!(in_log(&pg, "racing", &id), format!("{calls}|1"), "seed {seed}");
    }
    eprintln!("{judged_again} of 24 finishes were judged again on the episode rebuilt from the log");
    assert!(judged_again > 0, "the call never went first");
    for server in [a, b] {
        server.shutdown().await.unwrap();
    }
}

/// The log of an episode finished longer ago than the idle timeout is
/// dropped, as one process forgets the episode then; an episode still in
/// play keeps its log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_of_an_episode_finished_before_the_idle_timeout_is_dropped() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("pruned");
    let idle = std::time::Duration::from_millis(500);
    let (server, mut client) =
        crate::support::start_with(Config { store: Some(url.into()), episode_idle_timeout: idle, ..Config::default() }).await;
    let task = &suite()[0];
    let finished = client.create(crate::support::new_episode(&task.id, 1, 0)).await.unwrap().episode_id;
    let in_play = client.create(crate::support::new_episode(&task.id, 2, 0)).await.unwrap().episode_id;
    for id in [&finished, &in_play] {
        play(&mut client, id, &task.reference).await;
    }
    client.finish(finishing(&finished)).await.unwrap();
    let logged = |id: &str| {
        pg.psql("pruned", &format!("SELECT (SELECT COUNT(*) FROM episode_log WHERE episode_id = '{id}') + (SELECT COUNT(*) FROM call_log WHERE episode_id = '{id}')"))
    };
    // The episode's row, its calls and, for the finished one, its finish.
    let rows = task.reference.len() + 1;
    assert_eq!(logged(&finished), (rows + 1).to_string(), "kept while the idle timeout runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while logged(&finished) != "0" {
        assert!(std::time::Instant::now() < deadline, "the finished episode's log was never dropped");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(logged(&in_play), rows.to_string(), "an episode in play keeps its log");
    let forgotten = client.trajectory(&finished).await.unwrap_err();
    assert!(format!("{forgotten:?}").contains("NotFound"), "{forgotten:?}");
    server.shutdown().await.unwrap();
}

/// The log of an unfinished episode that goes without a call for
/// `abandoned_after` is dropped (every replica then answers NOT_FOUND, as
/// one process does for an episode idle past its timeout), while an episode
/// still called keeps its log, though each of its copies is dropped from
/// memory between calls (idle timeout) and rebuilt from the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_of_an_episode_abandoned_unfinished_is_dropped() {
    let Some(pg) = TempPostgres::start() else { return };
    let url = pg.database("abandoned");
    let (idle, abandoned_after) = (std::time::Duration::from_millis(300), std::time::Duration::from_secs(2));
    let config = Config { store: Some(url.into()), episode_idle_timeout: idle, abandoned_after, ..Config::default() };
    let (server, mut client) = crate::support::start_with(config).await;
    let task = &suite()[0];
    let abandoned = client.create(crate::support::new_episode(&task.id, 1, 0)).await.unwrap().episode_id;
    let called = client.create(crate::support::new_episode(&task.id, 2, 0)).await.unwrap().episode_id;
    let started = std::time::Instant::now();
    play(&mut client, &abandoned, &task.reference[..1]).await;
    let episodes = |id: &str| pg.psql("abandoned", &format!("SELECT COUNT(*) FROM episode_log WHERE episode_id = '{id}'"));
    let mut calls = 0;
    while episodes(&abandoned) != "0" {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "the abandoned episode's log was never dropped");
        play(&mut client, &called, &task.reference[..1]).await;
        calls += 1;
        tokio::time::sleep(idle * 2).await;
    }
    assert!(started.elapsed() >= abandoned_after, "dropped after {:?}, before {abandoned_after:?} without a call", started.elapsed());
    assert_eq!(in_log(&pg, "abandoned", &abandoned), "0|0", "its calls are dropped with it");
    assert_eq!(episodes(&called), "1", "an episode still called keeps its log");
    assert_eq!(in_log(&pg, "abandoned", &called), format!("{calls}|0"));
    let forgotten = client.trajectory(&abandoned).await.unwrap_err();
    assert!(format!("{forgotten:?}").contains("NotFound"), "{forgotten:?}");
    assert_eq!(client.trajectory(&called).await.unwrap().calls.len(), calls, "rebuilt from its log");
    server.shutdown().await.unwrap();
}

/// A hosted run (leases of 600 ms) whose first entry's episode plays
/// `calls` of its task on `first`, then goes idle past its lease, and whose
/// entry a second worker claims on `second`: the run, the task, the idle
/// episode's id and the second worker's.
async fn entry_lost(
    first: &mut Client,
    second: &mut Client,
    calls: impl FnOnce(&Task) -> Vec<toolenv_core::Call>,
) -> (String, &'static Task, String, String) {
    let request = pb::CreateRunRequest { lease_timeout_ms: 600, ..grid() };
    let run = first.runs().create_run(request).await.unwrap().into_inner().run_id;
    let (lease, _) = first.lease(&run, "reference", "w1", &[]).await.unwrap().expect("a lease");
    let old = lease.episode.unwrap();
    let task = suite().iter().find(|t| t.id == old.task_id).expect("a suite task");
    play(first, &old.episode_id, &calls(task)).await;
    tokio::time::sleep(std::time::Duration::from_millis(900)).await;
    let (claimed, _) = second.lease(&run, "reference", "w2", &[]).await.unwrap().expect("the expired entry again");
    assert_eq!(claimed.plan_index, lease.plan_index, "the lowest claimable entry is the expired one");
    let new = claimed.episode.unwrap().episode_id;
    assert_ne!(new, old.episode_id);
    (run, task, old.episode_id, new)
}

/// How many calls of an episode the log holds, and whether it holds its
/// finish (in the place of the next call): "calls|0 or 1".
fn in_log(pg: &TempPostgres, database: &str, id: &str) -> String {
    let sql = format!(
        "SELECT COUNT(*) FILTER (WHERE finished_at IS NULL), COUNT(*) FILTER (WHERE finished_at IS NOT NULL) FROM call_log WHERE episode_id = '{id}'"
    );
    pg.psql(database, &sql)
}

/// Sends `calls` to an episode; refusals are part of play.
async fn play(client: &mut Client, id: &str, calls: &[toolenv_core::Call]) {
    for call in calls {
        let _ = client.call_json(id, call.tool, &call.arguments.to_string()).await;
    }
}
