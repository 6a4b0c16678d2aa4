//! Calls sent with the index they are to take (`expected_index`): a repeat
//! is answered with the recorded reply and applied once, an index ahead of
//! the episode or taken by another tool is refused, and every answer says
//! the episode's next index.

use crate::support::{new_episode, start};
use toolenv::pb;
use toolenv_client::ClientError;

fn call(episode_id: &str, tool: &str, arguments: serde_json::Value, index: u32) -> pb::CallToolRequest {
    pb::CallToolRequest {
        episode_id: episode_id.to_owned(),
        tool_name: tool.to_owned(),
        arguments_json: arguments.to_string(),
        expected_index: Some(index),
        ..Default::default()
    }
}

fn status(error: ClientError) -> tonic::Status {
    match error {
        ClientError::Status(status) => status,
        other => panic!("not a status: {other:?}"),
    }
}

fn next_index(status: &tonic::Status) -> Option<u32> {
    status.metadata().get(toolenv::NEXT_INDEX_KEY).and_then(|v| v.to_str().ok()?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_sent_again_with_its_index_is_applied_once() {
    let (server, mut client) = start().await;
    let task = toolenv_domains::task("scheduling/book-meeting/001").expect("a paper task");
    let episode = client.create(new_episode(&task.id, 0, 0)).await.unwrap();
    let id = &episode.episode_id;
    let booking = &task.reference[task.reference.len() - 1];
    let write = call(id, booking.tool, booking.arguments.clone(), 0);

    // The write, then the same write again (its first reply "lost"): one booking, the same reply.
    let first = client.call(write.clone()).await.unwrap();
    let again = client.call(write.clone()).await.unwrap();
    assert_eq!(first, again);
    assert_eq!(first.call_index, 0);
    assert_eq!(client.trajectory(id).await.unwrap().calls.len(), 1, "applied once");

    // Ahead of the episode, or another tool's index: refused, saying the next index.
    let ahead = status(client.call(call(id, booking.tool, booking.arguments.clone(), 5)).await.unwrap_err());
    assert_eq!(ahead.code(), tonic::Code::FailedPrecondition, "{ahead:?}");
    assert!(ahead.message().contains("next call is index 1"), "{ahead:?}");
    assert_eq!(next_index(&ahead), Some(1));
    let taken = status(client.call(call(id, "check_calendar", serde_json::json!({"date": "2026-01-01"}), 0)).await.unwrap_err());
    assert_eq!(taken.code(), tonic::Code::FailedPrecondition, "{taken:?}");
    assert!(taken.message().contains(booking.tool), "{taken:?}");

    // A call the episode refuses is recorded and takes its index; so is its repeat's answer.
    let invalid = call(id, booking.tool, serde_json::json!({"date": "not a date"}), 1);
    let refused = status(client.call(invalid.clone()).await.unwrap_err());
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert_eq!(next_index(&refused), Some(2));
    let refused_again = status(client.call(invalid).await.unwrap_err());
    assert_eq!((refused_again.code(), next_index(&refused_again)), (tonic::Code::InvalidArgument, Some(2)));
    assert_eq!(client.trajectory(id).await.unwrap().calls.len(), 2);

    // Without an index every call is applied, as before.
    let unindexed = pb::CallToolRequest { expected_index: None, ..write };
    client.call(unindexed).await.unwrap();
    assert_eq!(client.trajectory(id).await.unwrap().calls.len(), 3);
    server.shutdown().await.unwrap();
}
