//! Perturbed descriptions over gRPC: recorded, deterministic, meaning-preserving.

use std::sync::Arc;

use crate::support::{start, start_with};
use tonic::Code;
use tonic_types::StatusExt;
use toolenv::pb;
use toolenv_agents::Builtin;
use toolenv_client::play;
use toolenv_domains::perturb::ParaphraseBank;

fn request(task: &str, seed: u64, trial: u32, epsilon: f64) -> pb::CreateEpisodeRequest {
    pb::CreateEpisodeRequest { task_id: task.into(), seed, trial, epsilon, ..Default::default() }
}

#[tokio::test]
async fn robustness_of_a_brittle_agent_falls_with_epsilon_and_the_reference_does_not_move() {
    let (server, mut client) = start().await;
    let mut brittle = Vec::new();
    for epsilon in [0.0, 0.1, 0.2, 0.3] {
        let (mut passes, mut reference) = (0, 0);
        for task in toolenv_domains::suite() {
            for seed in 0..5 {
                passes += u32::from(play(&mut client, Builtin::Brittle, request(&task.id, seed, 0, epsilon)).await.unwrap().verdict.passed);
                reference +=
                    u32::from(play(&mut client, Builtin::Reference, request(&task.id, seed, 0, epsilon)).await.unwrap().verdict.passed);
            }
        }
        assert_eq!(reference, 100, "the reference agent passes at ε = {epsilon}");
        brittle.push(passes);
    }
    assert_eq!(brittle[0], 100, "the brittle agent reads the canonical phrasing");
    assert!(brittle.windows(2).all(|w| w[1] < w[0]), "brittle passes fall with ε: {brittle:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn perturbations_are_recorded_and_the_same_for_every_trial() {
    let (server, mut client) = start().await;
    for task in toolenv_domains::suite() {
        let canonical = task.description();
        let a = client.create(request(&task.id, 3, 0, 0.2)).await.unwrap();
        let b = client.create(request(&task.id, 3, 1, 0.2)).await.unwrap();
        assert_eq!(a.description, b.description, "{}: trials of one configuration read the same text", task.id);
        assert_ne!(a.description, canonical, "{}", task.id);
        assert_eq!(a.today, task.today.to_string(), "the episode's today comes with it");
        let trajectory = client.trajectory(&a.episode_id).await.unwrap();
        assert_eq!(trajectory.epsilon, 0.2);
        assert!(!trajectory.perturbations.is_empty());
        assert_eq!(trajectory.description, a.description);
        let plain = client.create(request(&task.id, 3, 0, 0.0)).await.unwrap();
        assert_eq!(plain.description, canonical);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_unknown_epsilon_is_an_invalid_argument() {
    let (server, mut client) = start().await;
    for epsilon in [0.15, -0.1, 1.0, f64::NAN] {
        let status = client.raw().create_episode(request("scheduling/book-meeting/001", 0, 0, epsilon)).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{epsilon}");
        assert_eq!(status.get_details_bad_request().unwrap().field_violations[0].field, "epsilon");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_paraphrase_file_is_used_at_medium_perturbation() {
    let bank = r#"{"scheduling/book-meeting/001": ["Could you put a 'Review' meeting in my calendar on 2026-01-01, at 09:00?"]}"#;
    let paraphrases = Some(Arc::new(ParaphraseBank::from_json(bank).unwrap()));
    let (server, mut client) = start_with(toolenv_server::Config { paraphrases, ..Default::default() }).await;
    let mut used = 0;
    for seed in 0..40 {
        let episode = client.create(request("scheduling/book-meeting/001", seed, 0, 0.2)).await.unwrap();
        let trajectory = client.trajectory(&episode.episode_id).await.unwrap();
        if trajectory.perturbations.iter().any(|p| p.params.get("source").map(String::as_str) == Some("paraphrase_bank")) {
            used += 1;
            assert!(episode.description.contains("put a 'Review' meeting in my calendar"), "{}", episode.description);
        }
        let outcome = play(&mut client, Builtin::Reference, request("scheduling/book-meeting/001", seed, 0, 0.2)).await.unwrap();
        assert!(outcome.verdict.passed);
    }
    assert!(used > 0, "the bank's paraphrase was drawn for some seed");
    // An entry missing a slot is refused with a message naming the task and the slot.
    let error = ParaphraseBank::from_json(r#"{"scheduling/book-meeting/001": ["Book a meeting about 'Review' tomorrow at 09:00."]}"#)
        .unwrap_err()
        .to_string();
    assert!(error.contains("scheduling/book-meeting/001") && error.contains("date"), "{error}");
    server.shutdown().await.unwrap();
}
