//! `CallTools`: calls over one stream give what unary `CallTool` gives, byte for byte.

use crate::support::{finishing, new_episode, start};
use prost::Message;
use serde_json::json;
use tokio_stream::StreamExt;
use toolenv::pb;

const TASK: &str = "travel/cheapest-flight/001";

fn call(episode_id: &str, tool: &str, arguments: serde_json::Value) -> pb::CallToolRequest {
    pb::CallToolRequest {
        episode_id: episode_id.into(),
        tool_name: tool.into(),
        arguments_json: arguments.to_string(),
        ..Default::default()
    }
}

/// A faulty episode (λ = 0.3, seed 3) plus a clean one, played with the same calls
/// over unary CallTool and over the stream.
fn episode(seed: u64) -> pb::CreateEpisodeRequest {
    let mut request = new_episode(TASK, seed, 0);
    request.fault_profile = Some(pb::FaultProfile { name: "0.3".into(), ..Default::default() });
    request.time_scale = Some(0.0);
    request
}

fn plan(episode_id: &str) -> Vec<pb::CallToolRequest> {
    vec![
        call(episode_id, "search_flights", json!({"origin": "LON", "dest": "PAR", "date": "2026-01-05"})),
        call(episode_id, "no_such_tool", json!({})),
        call(episode_id, "search_flights", json!({"origin": 5})),
        call(episode_id, "get_traveler_profile", json!({"name": "Bob"})),
        call(episode_id, "hold_flight", json!({"flight_id": "AA-500"})),
        call(episode_id, "confirm_booking", json!({"flight_id": "AA-500", "passenger": "Bob", "payment_info": "card_4242"})),
    ]
}

#[tokio::test]
async fn calls_over_the_stream_are_the_unary_calls_byte_for_byte() {
    let (server, mut client) = start().await;
    let seeds: Vec<u64> = (0..8).collect();
    // Unary, one episode after another: outcomes and trajectories.
    let mut unary_outcomes = Vec::new();
    let mut unary_trajectories = Vec::new();
    for &seed in &seeds {
        let episode = client.create(episode(seed)).await.unwrap();
        for request in plan(&episode.episode_id) {
            let outcome = match client.raw().call_tool(request).await {
                Ok(reply) => format!("reply {:?}", reply.into_inner()),
                Err(status) => format!("status {:?} {} {:?}", status.code(), status.message(), status.details()),
            };
            unary_outcomes.push(outcome);
        }
        client.finish(finishing(&episode.episode_id)).await.unwrap();
        unary_trajectories.push(client.trajectory(&episode.episode_id).await.unwrap().encode_to_vec());
    }
    // The stream: every episode's k-th call in one request.
    let mut episodes = Vec::new();
    for &seed in &seeds {
        episodes.push(client.create(episode(seed)).await.unwrap().episode_id);
    }
    let (sender, receiver) = tokio::sync::mpsc::channel(4);
    let mut responses = client.raw().call_tools(tokio_stream::wrappers::ReceiverStream::new(receiver)).await.unwrap().into_inner();
    let mut streamed: Vec<Vec<String>> = vec![Vec::new(); seeds.len()];
    for k in 0..plan("").len() {
        let calls = episodes.iter().map(|id| plan(id).swap_remove(k)).collect();
        sender.send(pb::CallToolsRequest { tag: k as u64, calls }).await.unwrap();
        let response = responses.next().await.unwrap().unwrap();
        assert_eq!(response.tag, k as u64);
        for (i, outcome) in response.outcomes.into_iter().enumerate() {
            streamed[i].push(match outcome.outcome.unwrap() {
                pb::call_outcome::Outcome::Reply(reply) => format!("reply {reply:?}"),
                pb::call_outcome::Outcome::Status(status) => {
                    let code = tonic::Code::from(status.code);
                    format!("status {code:?} {} {:?}", status.message, status.details)
                }
            });
        }
    }
    drop(sender);
    assert!(responses.next().await.is_none(), "the stream ends when the client's does");
    assert_eq!(streamed.concat(), unary_outcomes);
    assert!(
        unary_outcomes.iter().any(|o| o.starts_with("status Unavailable") || o.starts_with("status ResourceExhausted")),
        "λ = 0.3 injects faults"
    );
    for (i, id) in episodes.iter().enumerate() {
        client.finish(finishing(id)).await.unwrap();
        assert_eq!(client.trajectory(id).await.unwrap().encode_to_vec(), unary_trajectories[i], "seed {}", seeds[i]);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_second_call_to_one_episode_is_refused_and_an_overlong_request_ends_the_stream() {
    let (server, mut client) = start().await;
    let id = client.create(new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    let (sender, receiver) = tokio::sync::mpsc::channel(4);
    let mut responses = client.raw().call_tools(tokio_stream::wrappers::ReceiverStream::new(receiver)).await.unwrap().into_inner();
    let profile = call(&id, "get_traveler_profile", json!({"name": "Bob"}));
    sender.send(pb::CallToolsRequest { tag: 7, calls: vec![profile.clone(), profile.clone()] }).await.unwrap();
    let response = responses.next().await.unwrap().unwrap();
    assert!(matches!(response.outcomes[0].outcome, Some(pb::call_outcome::Outcome::Reply(_))));
    let Some(pb::call_outcome::Outcome::Status(refused)) = &response.outcomes[1].outcome else { panic!("{response:?}") };
    assert_eq!((tonic::Code::from(refused.code), refused.message.contains("same episode")), (tonic::Code::InvalidArgument, true));
    assert_eq!(client.trajectory(&id).await.unwrap().calls.len(), 1, "the refused call never reached the episode");
    sender.send(pb::CallToolsRequest { tag: 8, calls: vec![profile; 65] }).await.unwrap();
    let status = responses.next().await.unwrap().unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("64"), "{}", status.message());
    server.shutdown().await.unwrap();
}
