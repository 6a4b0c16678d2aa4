use std::time::Duration;

use crate::support::start_with;
use tonic::Code;
use toolenv_client::{Client, ClientError};
use toolenv_server::{Config, RunningServer};

const TASK: &str = "scheduling/book-meeting/001";
const ARGS: &str = r#"{"date": "2026-01-01"}"#;

fn code<T: std::fmt::Debug>(result: Result<T, ClientError>) -> Code {
    match result {
        Err(ClientError::Status(status)) => status.code(),
        other => panic!("expected an error status, got {other:?}"),
    }
}

#[tokio::test]
async fn calls_per_episode_are_limited() {
    let (server, mut client) = start_with(Config { max_calls_per_episode: 3, ..Config::default() }).await;
    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap();
    assert_eq!(episode.max_calls, 3);
    for _ in 0..3 {
        client.call_json(&episode.episode_id, "check_calendar", ARGS).await.unwrap();
    }
    assert_eq!(code(client.call_json(&episode.episode_id, "check_calendar", ARGS).await), Code::ResourceExhausted);
    // The episode can still be finished and read; the refused call is not recorded.
    assert!(!client.finish(crate::support::finishing(&episode.episode_id)).await.unwrap().passed);
    assert_eq!(client.trajectory(&episode.episode_id).await.unwrap().calls.len(), 3);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn episodes_held_are_limited() {
    let (server, mut client) = start_with(Config { max_episodes: 2, ..Config::default() }).await;
    client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap();
    client.create(crate::support::new_episode(TASK, 1, 0)).await.unwrap();
    assert_eq!(code(client.create(crate::support::new_episode(TASK, 2, 0)).await), Code::ResourceExhausted);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn idle_episodes_expire_and_free_their_place() {
    let config = Config { max_episodes: 1, episode_idle_timeout: Duration::from_millis(100), ..Config::default() };
    let (server, mut client) = start_with(config).await;
    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    // Polling the old episode would keep it alive; poll for its place instead.
    let mut created = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        match client.create(crate::support::new_episode(TASK, 1, 0)).await {
            Ok(_) => {
                created = true;
                break;
            }
            Err(error) => assert_eq!(code::<()>(Err(error)), Code::ResourceExhausted),
        }
    }
    assert!(created, "the idle episode expired within 5 s and freed its place");
    assert_eq!(code(client.trajectory(&episode).await), Code::NotFound);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn finishing_twice_gives_the_same_verdict() {
    let (server, mut client) = start_with(Config::default()).await;
    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    client.call_json(&episode, "book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#).await.unwrap();
    let first = client.finish(crate::support::finishing(&episode)).await.unwrap();
    let second = client.finish(crate::support::finishing(&episode)).await.unwrap();
    assert!(first.passed);
    assert_eq!(first, second);
    assert_eq!(client.trajectory(&episode).await.unwrap().verdict, Some(first));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn episode_ids_are_unguessable() {
    let (server, mut client) = start_with(Config::default()).await;
    let mut ids = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let id = client.create(crate::support::new_episode(TASK, seed % 2, 0)).await.unwrap().episode_id;
        assert_eq!(id.len(), 35, "ep- and 128 bits in hex: {id}");
        assert!(ids.insert(id), "ids never repeat");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn shutdown_is_graceful_and_final() {
    let server = RunningServer::start(Config::default()).await.unwrap();
    let url = server.url();
    let mut client = Client::connect(&url).await.unwrap();
    client.list_tasks(None, None).await.unwrap();
    drop(client);
    server.shutdown().await.unwrap();
    assert!(Client::connect(&url).await.is_err(), "nothing listens after shutdown");
}
