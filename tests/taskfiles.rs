//! Tasks of the user's own over gRPC: a task built in the test with
//! `TaskBuilder`, in a catalogue given to a server and its client, listed
//! under `file:<hash>`, played by id, hosted as a run that names its file;
//! an id of a file not given is refused, not taken for another, and a
//! server not given the catalogue knows none of it.

use crate::support::{start, start_with};
use serde_json::json;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::play_episode;
use toolenv_client::worker::work;
use toolenv_core::Check;
use toolenv_domains::taskfile::{Catalogue, TaskBuilder};
use toolenv_server::Config;

fn builder(name: &str) -> TaskBuilder {
    TaskBuilder::new(&format!("travel/direct-booking/{name}"))
        .level(1)
        .description("Book flight {flight_id} from {origin} to {dest} on {date} for {passenger}.")
        .slot("flight_id", "BA-200")
        .slot("origin", "LON")
        .slot("dest", "PAR")
        .slot("date", "2026-01-05")
        .slot("passenger", "Bob")
        .fixture("travel/cheapest-flight/001")
        .call("get_traveler_profile", json!({"name": "Bob"}))
        .call("hold_flight", json!({"flight_id": "BA-200"}))
        .call("confirm_booking", json!({"flight_id": "BA-200", "passenger": "Bob", "payment_info": "card_4242"}))
        .expect(Check::count(
            "BA-200 confirmed for Bob at 500",
            "/reservations",
            json!({"flight_id": "BA-200", "passenger": "Bob", "price": 500, "status": "confirmed"}),
            1,
        ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_built_in_a_test_is_served_played_and_hosted_under_its_hash() {
    let mut tasks = Catalogue::new();
    let set = tasks.add(builder("e2e-001").set().unwrap_or_else(|e| panic!("{e}"))).unwrap();
    let id = &set.tasks[0].id;
    assert_eq!(id, &format!("travel/direct-booking/e2e-001@{}", set.hash));
    let (server, client) = start_with(Config { tasks: tasks.clone(), ..Config::default() }).await;
    let mut client = client.with_tasks(tasks.clone());
    let suite = format!("file:{}", set.hash);
    let listed = client.list_suite_tasks(&suite, None, None).await.unwrap();
    assert_eq!(listed.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), [id.as_str()]);
    for (agent, passes) in [(Builtin::Reference, true), (Builtin::Solver, true), (Builtin::Idle, false)] {
        let outcome = play_episode(&mut client, agent, id, 3, 0).await.unwrap();
        assert_eq!(outcome.verdict.passed, passes, "{agent:?}: {:#?}", outcome.verdict.checks);
    }
    // By its bare id too, as one loaded task has it.
    let outcome = play_episode(&mut client, Builtin::Reference, "travel/direct-booking/e2e-001", 3, 0).await.unwrap();
    assert!(outcome.verdict.passed);
    // A hosted run of the file names it.
    let request = pb::CreateRunRequest { agents: vec!["solver".into()], suite: suite.clone(), time_scale: Some(0.0), ..Default::default() };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    assert_eq!((run.planned, run.suite.as_str(), run.generator_version), (1, suite.as_str(), 0));
    let summary = work(&mut client, &run.run_id, Builtin::Solver, "solver", "w", |_, _, _| {}).await.unwrap();
    assert_eq!((summary.played, summary.passed), (1, 1));
    // An edited file is another set: not added beside the first under the same ids,
    // and an id of a file not given here is refused, clearly.
    let edited = tasks.add(builder("e2e-001").level(2).set().unwrap()).unwrap_err();
    assert!(edited.to_string().contains("the id is a task's of TaskBuilder"), "{edited}");
    let gone =
        client.raw().create_episode(crate::support::new_episode("travel/direct-booking/e2e-001@000000000000", 0, 0)).await.unwrap_err();
    assert_eq!(gone.code(), tonic::Code::InvalidArgument);
    assert!(gone.message().contains("no task file with hash '000000000000' is loaded"), "{}", gone.message());
    let unknown = client.list_suite_tasks("file:abcdef", None, None).await.unwrap_err();
    assert!(
        matches!(&unknown, toolenv_client::ClientError::Status(s) if s.code() == tonic::Code::InvalidArgument && s.message().contains("no task file")),
        "{unknown:?}"
    );
    // Another server of this process, not given the catalogue, knows none of it.
    let (other, mut plain) = start().await;
    let refused = plain.raw().create_episode(crate::support::new_episode(id, 0, 0)).await.unwrap_err();
    assert!(refused.message().contains(&format!("no task file with hash '{}'", set.hash)), "{}", refused.message());
    assert!(plain.list_suite_tasks(&suite, None, None).await.is_err());
    // Nor does a client not given it: a built-in agent cannot read the task.
    let mut blind = client.clone().with_tasks(Catalogue::new());
    assert!(play_episode(&mut blind, Builtin::Reference, id, 3, 0).await.is_err());
    other.shutdown().await.unwrap();
    server.shutdown().await.unwrap();
}
