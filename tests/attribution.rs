//! Fork and replay over gRPC, and counterfactual attribution of a real run.

use crate::support::start;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::run_plan;
use toolenv_domains::taskfile::Catalogue;
use toolenv_domains::{
    Finish,
    attribution::{ErrorType, Responsible},
};
use toolenv_runs::Grid;
use toolenv_store::Store;

fn fault_profile(name: &str) -> Option<pb::FaultProfile> {
    Some(pb::FaultProfile { name: name.to_owned(), ..Default::default() })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stored_trajectory_of_a_run_with_faults_replays_to_its_verdict_and_is_attributed() {
    let (server, client) = start().await;
    let agents = [Builtin::Reference, Builtin::ReferenceNoRetry, Builtin::Brittle, Builtin::Random, Builtin::Solver];
    let grid = Grid {
        seed: 3,
        time_scale: Some(0.0),
        epsilons: vec![0.0, 0.3],
        fault_profiles: vec!["0.0".into(), "0.3".into()],
        ..Grid::single(agents.iter().map(|a| a.name().to_owned()).collect())
    };
    let plan = grid.plan(toolenv_domains::suite().iter().map(|t| t.id.as_str()));
    let store = Store::open_in_memory().unwrap();
    let run = store.create_run(&plan, "attribution test").unwrap();
    run_plan(&client, &plan, 16, &toolenv_agents::builtin::agent, |index, result, trajectory| {
        store.record(&run, index, result, trajectory).unwrap()
    })
    .await;
    let episodes = store.episodes(&run).unwrap();
    assert_eq!(episodes.len(), plan.len());
    let mut failed = 0;
    for episode in &episodes {
        let trajectory = episode.trajectory.as_ref().expect("every episode reached a verdict");
        // The whole trajectory, replayed in-process: every call and the verdict byte for byte.
        let replayed = toolenv_runs::fork::replay(&Catalogue::new(), trajectory, toolenv_core::DEFAULT_MAX_CALLS).unwrap();
        assert_eq!(pb::Trajectory::from(replayed.trajectory()), pb::Trajectory { usage: None, ..trajectory.clone() });
        failed += usize::from(!trajectory.verdict.as_ref().unwrap().passed);
    }
    let (attributed, unattributed) =
        toolenv_runs::attribution::attribute_run(&Catalogue::new(), &episodes, toolenv_core::DEFAULT_MAX_CALLS);
    assert!(unattributed.is_empty(), "{unattributed:?}");
    assert_eq!(attributed.len(), failed);
    assert!(failed > 50, "only {failed} failed episodes");
    // The faults are real, so both parties are found responsible somewhere, and agents fail for different reasons.
    let decisive = |agent: &str, error: ErrorType| attributed.iter().any(|e| e.agent == agent && e.attribution.errors[0].error == error);
    assert!(attributed.iter().any(|e| e.attribution.responsible == Some(Responsible::Environment)));
    assert!(decisive("reference-no-retry", ErrorType::GaveUpAfterRecoverableFault));
    assert!(decisive("brittle", ErrorType::StoppedEarly) || decisive("brittle", ErrorType::WrongValue));
    let mut infeasible = 0;
    for e in &attributed {
        // Forking at the decisive step and continuing passes; one step later does not.
        let recorded = episodes[e.plan_index].trajectory.as_ref().unwrap();
        let replayed = toolenv_runs::fork::replay(&Catalogue::new(), recorded, toolenv_core::DEFAULT_MAX_CALLS).unwrap();
        let source = toolenv_runs::fork::source(&Catalogue::new(), recorded, toolenv_core::DEFAULT_MAX_CALLS).unwrap();
        let calls = &replayed.trajectory().calls;
        // One feasibility: the episode the report counts infeasible is the
        // environment's, from the start; a feasible failure is an agent's.
        let feasible = episodes[e.plan_index].result.feasible.expect("feasibility decided");
        assert_eq!(e.attribution.infeasible_from_start, !feasible, "{e:?}");
        assert_eq!(e.attribution.responsible == Some(Responsible::Environment), !feasible, "{e:?}");
        infeasible += usize::from(!feasible);
        match e.attribution.decisive_step {
            Some(s) => {
                assert!(toolenv_domains::attribution::passes_from(&source, calls, s as usize).unwrap(), "{e:?}");
                if (s as usize) < calls.len() {
                    assert!(!toolenv_domains::attribution::passes_from(&source, calls, s as usize + 1).unwrap(), "{e:?}");
                }
            }
            None => assert!(e.attribution.infeasible_from_start || !toolenv_domains::attribution::passes_from(&source, calls, 0).unwrap()),
        }
        assert_eq!(e.mistake_agent() == Some("environment"), e.attribution.responsible == Some(Responsible::Environment));
        let who_when = toolenv_runs::attribution::who_when(e, episodes[e.plan_index].trajectory.as_ref().unwrap());
        assert_eq!(who_when["history"].as_array().unwrap().len() as u32, e.attribution.steps + 1);
        let hypotheses = toolenv_runs::attribution::hypotheses(e);
        assert_eq!(hypotheses.len(), 14);
        let entailed = hypotheses.iter().filter(|h| h["label"] == "entail").count();
        assert_eq!(entailed == 0, e.attribution.errors.iter().all(|x| x.mast.is_none()), "{e:?}");
    }
    let counted = episodes.iter().filter(|e| e.result.feasible == Some(false)).count();
    assert_eq!(infeasible, counted, "every episode the report counts infeasible is attributed to the environment");
    assert!(infeasible > 0, "the grid has infeasible episodes");
    let table = toolenv_runs::attribution::table(&attributed);
    assert!(table.contains("gave_up_after_recoverable_fault") && table.contains("environment"), "{table}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_episode_recreates_an_episode_after_any_number_of_calls() {
    let (server, mut client) = start().await;
    let task = toolenv_domains::task("travel/cheapest-flight/001").unwrap();
    let request = pb::CreateEpisodeRequest {
        task_id: task.id.clone(),
        seed: 11,
        fault_profile: fault_profile("0.3"),
        time_scale: Some(0.0),
        ..Default::default()
    };
    let outcome = toolenv_client::play(&mut client, Builtin::Reference, request).await.unwrap();
    let recorded = outcome.trajectory;
    let calls = &recorded.calls;
    assert!(calls.iter().any(|c| c.fault.is_some()), "the schedule meets faults");
    assert!(calls.iter().any(|c| c.idempotency_key_call.is_some()), "the reference agent sends keys");
    for t in 0..=calls.len() {
        // From the recorded trajectory, replaying the rest of the calls over gRPC gives the same episode.
        let fork =
            pb::ForkEpisodeRequest { trajectory: Some(recorded.clone()), calls: t as u32, time_scale: Some(0.0), ..Default::default() };
        let episode = client.raw().fork_episode(fork).await.unwrap().into_inner();
        assert_eq!(episode.task_id, task.id);
        for call in &calls[t..] {
            let key = call.idempotency_key_call.map(toolenv_core::replay_key);
            let _ = client
                .call(pb::CallToolRequest {
                    episode_id: episode.episode_id.clone(),
                    tool_name: call.tool_name.clone(),
                    arguments_json: call.arguments_json.clone(),
                    idempotency_key: key.as_deref().unwrap_or_default().to_owned(),
                    waited_ms: Some(call.waited_ms),
                    agent_id: String::new(),
                    user_answer: call.user_answer.clone(),
                    expected_index: None,
                })
                .await;
        }
        let verdict = client.finish(crate::support::finishing(&episode.episode_id)).await.unwrap();
        assert_eq!(Some(&verdict), recorded.verdict.as_ref(), "forked at {t}");
        let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
        assert_eq!(trajectory.calls, recorded.calls, "forked at {t}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_episode_from_a_live_episode_and_its_errors() {
    let (server, mut client) = start().await;
    let created = client.create(crate::support::new_episode("scheduling/book-meeting/001", 0, 0)).await.unwrap();
    let listed = toolenv_domains::task("scheduling/book-meeting/001").unwrap().reference.clone();
    for call in &listed {
        client.call_json(&created.episode_id, call.tool, &call.arguments.to_string()).await.unwrap();
    }
    let forker = client.clone();
    let fork = |request: pb::ForkEpisodeRequest| {
        let mut client = forker.clone();
        async move { client.raw().fork_episode(request).await }
    };
    // Forked before the booking: the slot is free again, and booking it passes.
    let before = fork(pb::ForkEpisodeRequest { episode_id: created.episode_id.clone(), calls: 0, ..Default::default() }).await.unwrap();
    let before = before.into_inner();
    assert_ne!(before.episode_id, created.episode_id);
    for call in &listed {
        client.call_json(&before.episode_id, call.tool, &call.arguments.to_string()).await.unwrap();
    }
    assert!(client.finish(crate::support::finishing(&before.episode_id)).await.unwrap().passed);
    // The source is untouched, and still live.
    assert_eq!(client.trajectory(&created.episode_id).await.unwrap().calls.len(), listed.len());

    let past = fork(pb::ForkEpisodeRequest { episode_id: created.episode_id.clone(), calls: 99, ..Default::default() }).await.unwrap_err();
    assert_eq!(past.code(), tonic::Code::InvalidArgument, "{past:?}");
    assert!(past.message().contains("calls"), "{}", past.message());
    let unknown = fork(pb::ForkEpisodeRequest { episode_id: "nope".into(), ..Default::default() }).await.unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    let neither = fork(pb::ForkEpisodeRequest::default()).await.unwrap_err();
    assert_eq!(neither.code(), tonic::Code::InvalidArgument);
    let mut edited = client.trajectory(&created.episode_id).await.unwrap();
    edited.calls[0].state_changed = !edited.calls[0].state_changed;
    let diverged = fork(pb::ForkEpisodeRequest { trajectory: Some(edited), calls: 1, ..Default::default() }).await.unwrap_err();
    assert_eq!(diverged.code(), tonic::Code::InvalidArgument);
    assert!(diverged.message().contains("call 0 diverged"), "{}", diverged.message());
    // A finished episode forks too, from what the server keeps of it.
    client.finish(crate::support::finishing(&created.episode_id)).await.unwrap();
    let after = fork(pb::ForkEpisodeRequest { episode_id: created.episode_id.clone(), calls: 1, ..Default::default() }).await.unwrap();
    assert_ne!(after.into_inner().episode_id, created.episode_id);
    server.shutdown().await.unwrap();
}

/// A team's trajectory in its wire form (roles, MAS-FIRE profile, prompt
/// faults, agent ids) replays byte for byte, verdict included.
#[test]
fn a_team_trajectory_on_the_wire_replays_byte_for_byte() {
    use toolenv_core::masfire::{MasFault, MasProfile};
    use toolenv_domains::masfire::team::{Topology, run};
    for task in toolenv_domains::suite() {
        for fault in [MasFault::InstructionAmbiguity, MasFault::Hallucination, MasFault::MessageStorm] {
            let topology = Topology::ALL[1];
            let profile = MasProfile::of(vec![fault], 0.5);
            let mut episode = toolenv_core::Episode::new(task, 5, 0).with_team(topology.roles(), Some(profile)).unwrap();
            let _ = run(task, topology, &mut episode);
            episode.finish_with_feasibility();
            let recorded = pb::Trajectory::from(episode.trajectory());
            let replayed = toolenv_runs::fork::replay(&Catalogue::new(), &recorded, toolenv_core::DEFAULT_MAX_CALLS).unwrap();
            assert_eq!(pb::Trajectory::from(replayed.trajectory()), recorded, "{} under {fault}", task.id);
        }
    }
}

#[test]
fn toolenv_labels_scored_as_predictions_score_perfectly() {
    use toolenv_runs::attribution::EpisodeAttribution;
    use toolenv_runs::attribution_score::{Gold, Prediction, Taxonomy, score};
    // A failed episode of the brittle agent, attributed in-process.
    let task = toolenv_domains::task("support/create-close/001").unwrap();
    let mut episode = toolenv_core::Episode::new(task, 0, 0);
    let _ = episode.call("create_ticket", r#"{"customer_id": "C-0001", "subject": "x", "description": "y", "priority": "low"}"#);
    episode.finish();
    let source = toolenv_core::Source::of(task, episode.trajectory());
    let attribution = toolenv_domains::attribution::attribute(&source, episode.trajectory()).unwrap();
    let attributed = EpisodeAttribution {
        plan_index: 4,
        task_id: task.id.clone(),
        agent: "brittle".into(),
        fault_profile: "none".into(),
        epsilon: 0.0,
        attribution,
    };
    let line = attributed.to_json().to_string();
    let prediction: Prediction = serde_json::from_str(&line).unwrap();
    for taxonomy in [Taxonomy::Toolenv, Taxonomy::Mast] {
        let gold = [Gold::of(&attributed, taxonomy)];
        let s = score(&gold, std::slice::from_ref(&prediction), 0);
        assert_eq!((s.agent_accuracy, s.step_accuracy), (1.0, 1.0), "{line}");
        if taxonomy == Taxonomy::Toolenv {
            assert_eq!((s.error_accuracy, s.pair.micro.f1, s.pair.macro_.f1), (1.0, 1.0, 1.0), "{line}");
        }
    }
}
