//! Generated suites over gRPC: listing, episodes of generated task ids
//! resolved on demand, final answers judged next to the end state, and
//! hosted runs that name their suite and generator version.

use crate::support::start;
use tonic::Code;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::play_episode;
use toolenv_client::worker::work;
use toolenv_domains::generate::GENERATOR_VERSION;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_suite_is_listed_and_played_by_the_built_in_agents() {
    let (server, mut client) = start().await;
    let tasks = client.list_suite_tasks("generated:3:2", None, None).await.unwrap();
    assert_eq!(tasks.len(), 4 * 3 * 2);
    assert!(tasks.iter().all(|t| t.reference_calls > 0 && t.summary.starts_with(t.id.split('/').nth(1).unwrap())));
    let level_3 = client.list_suite_tasks("generated:3:2", None, Some(3)).await.unwrap();
    assert_eq!(level_3.len(), 8);
    for task in &tasks {
        for agent in [Builtin::Reference, Builtin::Solver] {
            let outcome = play_episode(&mut client, agent, &task.id, 1, 0).await.unwrap();
            assert!(outcome.verdict.passed, "{} with {agent:?}: {:#?}", task.id, outcome.verdict.checks);
        }
        let idle = play_episode(&mut client, Builtin::Idle, &task.id, 1, 0).await.unwrap();
        assert!(!idle.verdict.passed, "{} passes on inaction", task.id);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_answer_task_is_judged_on_its_answer() {
    let (server, mut client) = start().await;
    // A level-3 task that asks a question: the same calls pass or fail with the answer.
    let task = (0..)
        .map(|index| {
            toolenv_domains::generate::generate(toolenv_domains::generate::Origin {
                domain: toolenv_domains::registry::TRAVEL,
                level: 3,
                seed: 4,
                index,
            })
        })
        .find(|t| t.kind() == "fare-question")
        .expect("a fare question among the level-3 travel tasks");
    let right = task.reference_answer().expect("a question has an example answer").to_owned();
    for (answer, passes) in [(Some(right.clone()), true), (None, false), (Some("I could not find out.".to_owned()), false)] {
        let episode = client.create(crate::support::new_episode(&task.id, 0, 0)).await.unwrap();
        for call in &task.reference {
            client.call_json(&episode.episode_id, call.tool, &call.arguments.to_string()).await.unwrap();
        }
        let verdict = client
            .finish(pb::FinishEpisodeRequest {
                episode_id: episode.episode_id.clone(),
                usage: None,
                answer: answer.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(verdict.passed, passes, "{answer:?}: {:#?}", verdict.checks);
        let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
        assert_eq!(trajectory.answer, answer, "the trajectory records the answer");
    }

    // Typed: the episode publishes the schema; its fields, in other formats, pass; a wrong field fails.
    let schema: serde_json::Value =
        serde_json::from_str(&client.create(crate::support::new_episode(&task.id, 0, 0)).await.unwrap().answer_schema_json)
            .expect("an answer task's episode publishes its answer schema");
    let fields = task.answer_fields();
    assert_eq!(schema, toolenv_core::typed::schema(&fields));
    let example = toolenv_core::typed::example(&fields);
    let mut wrong = example.clone();
    wrong["amount"] = serde_json::json!(1.0);
    let mut restyled = example.clone();
    restyled["amount"] = serde_json::json!(format!("${}", fields.iter().find(|f| f.name == "amount").unwrap().expected));
    for (typed, passes) in [(example.to_string(), true), (restyled.to_string(), true), (wrong.to_string(), false)] {
        let episode = client.create(crate::support::new_episode(&task.id, 0, 0)).await.unwrap();
        for call in &task.reference {
            client.call_json(&episode.episode_id, call.tool, &call.arguments.to_string()).await.unwrap();
        }
        let finish =
            pb::FinishEpisodeRequest { episode_id: episode.episode_id.clone(), answer_json: Some(typed.clone()), ..Default::default() };
        let verdict = client.finish(finish).await.unwrap();
        assert_eq!(verdict.passed, passes, "{typed}: {:#?}", verdict.checks);
        let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
        let recorded: serde_json::Value = serde_json::from_str(trajectory.answer_json.as_deref().unwrap()).unwrap();
        assert_eq!(recorded.to_string(), typed, "the trajectory records the typed answer");
    }
    for bad in ["not json", "[1, 2]"] {
        let episode = client.create(crate::support::new_episode(&task.id, 0, 0)).await.unwrap();
        let finish =
            pb::FinishEpisodeRequest { episode_id: episode.episode_id.clone(), answer_json: Some(bad.into()), ..Default::default() };
        let refused = client.finish(finish).await.unwrap_err();
        assert!(format!("{refused:?}").contains("InvalidArgument") && format!("{refused:?}").contains("answer_json"), "{refused:?}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_large_suite_is_listed_page_by_page() {
    let (server, mut client) = start().await;
    // 120 000 tasks would not fit one message (at most 5 000 per page): the
    // server generates only the page asked for.
    let request = pb::ListTasksRequest { suite: "generated:4:10000".into(), page_size: 3, ..Default::default() };
    let first = client.raw().list_tasks(request).await.unwrap().into_inner();
    assert_eq!((first.tasks.len(), first.next_page_token.as_str()), (3, "3"));
    // Pages of 7 over a filtered suite concatenate to the whole listing, in order.
    let filtered = pb::ListTasksRequest { suite: "generated:4:10".into(), level: 2, page_size: 7, ..Default::default() };
    let mut paged = Vec::new();
    let mut page = client.raw().list_tasks(filtered.clone()).await.unwrap().into_inner();
    loop {
        assert!(page.tasks.len() <= 7);
        paged.extend(page.tasks.iter().map(|t| t.id.clone()));
        if page.next_page_token.is_empty() {
            break;
        }
        let next = pb::ListTasksRequest { page_token: page.next_page_token.clone(), ..filtered.clone() };
        page = client.raw().list_tasks(next).await.unwrap().into_inner();
    }
    let whole: Vec<String> = client.list_suite_tasks("generated:4:10", None, Some(2)).await.unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!((paged.len(), &paged), (40, &whole));
    for (bad, field) in [
        (pb::ListTasksRequest { page_token: "x".into(), ..filtered.clone() }, "page_token"),
        (pb::ListTasksRequest { page_token: "41".into(), ..filtered.clone() }, "page_token"),
        (pb::ListTasksRequest { page_size: 5_001, ..filtered.clone() }, "page_size"),
    ] {
        let status = client.raw().list_tasks(bad).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(field), "{status:?}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_suites_and_unknown_generated_ids_are_refused() {
    let (server, mut client) = start().await;
    let status = client.list_suite_tasks("generated:1", None, None).await.unwrap_err();
    assert!(
        matches!(&status, toolenv_client::ClientError::Status(s) if s.code() == Code::InvalidArgument && s.message().contains("suite"))
    );
    for (id, code) in [
        ("travel/fare-question/g999-3-1-0000", Code::InvalidArgument),
        ("travel/no-such-kind/g2-3-1-0000", Code::NotFound),
        ("travel/fare-question/g1-3-1-0000", Code::InvalidArgument),
        ("travel/fare-question/g2-7-1-0000", Code::NotFound),
    ] {
        let status = client.raw().get_task(pb::GetTaskRequest { task_id: id.into() }).await.unwrap_err();
        assert_eq!(status.code(), code, "{id}: {status:?}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hosted_run_of_a_generated_suite_names_its_suite_and_generator_version() {
    let (server, mut client) = start().await;
    let request = pb::CreateRunRequest {
        description: "generated".into(),
        agents: vec!["solver".into()],
        suite: "generated:8:1".into(),
        time_scale: Some(0.0),
        ..Default::default()
    };
    let run = client.runs().create_run(request).await.unwrap().into_inner();
    assert_eq!((run.planned, run.suite.as_str(), run.generator_version), (12, "generated:8:1", GENERATOR_VERSION));
    let summary = work(&mut client, &run.run_id, Builtin::Solver, "solver", "w", |_, _, _| {}).await.unwrap();
    assert_eq!((summary.played, summary.passed), (12, 12));
    let listed = client.runs().list_runs(pb::ListRunsRequest {}).await.unwrap().into_inner();
    assert_eq!(listed.runs[0].suite, "generated:8:1");
    let paper = pb::CreateRunRequest { agents: vec!["a".into()], time_scale: Some(0.0), ..Default::default() };
    let run = client.runs().create_run(paper).await.unwrap().into_inner();
    assert_eq!((run.suite.as_str(), run.generator_version), ("paper", 0));
    server.shutdown().await.unwrap();
}
