use crate::support::start;
use serde_json::json;
use tonic::Code;
use tonic_types::StatusExt;
use toolenv::pb;
use toolenv_client::{Client, ClientError};

const TASK: &str = "scheduling/book-meeting/001";

/// What a request should get back: a status code and, for field problems,
/// the field named in the BadRequest details.
struct Expect {
    code: Code,
    field: Option<&'static str>,
}

fn status(result: Result<impl std::fmt::Debug, ClientError>) -> tonic::Status {
    match result {
        Err(ClientError::Status(status)) => status,
        other => panic!("expected an error status, got {other:?}"),
    }
}

fn check(case: &str, status: tonic::Status, expect: Expect) {
    assert_eq!(status.code(), expect.code, "{case}: {status:?}");
    assert!(!status.message().is_empty(), "{case}: the message says what is wrong");
    let field = status.get_details_bad_request().and_then(|b| b.field_violations.first().map(|v| v.field.clone()));
    assert_eq!(field.as_deref(), expect.field, "{case}: field named in BadRequest details");
}

#[tokio::test]
async fn bad_requests_get_clear_statuses() {
    let (server, mut client) = start().await;
    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    let big = format!(r#"{{"date": "2026-01-01", "time": "09:00", "topic": "{}"}}"#, "x".repeat(100 * 1024));

    let calls: Vec<(&str, &str, &str, &str, Expect)> = vec![
        ("empty episode id", "", "book_meeting", "{}", Expect { code: Code::InvalidArgument, field: Some("episode_id") }),
        ("unknown episode", "ep-00000000000000000000000000000000", "book_meeting", "{}", Expect { code: Code::NotFound, field: None }),
        ("empty tool name", &episode, "", "{}", Expect { code: Code::InvalidArgument, field: Some("tool_name") }),
        ("unknown tool", &episode, "launch_rocket", "{}", Expect { code: Code::NotFound, field: None }),
        ("tool of another domain", &episode, "hold_flight", r#"{"flight_id": "AA-500"}"#, Expect { code: Code::NotFound, field: None }),
        ("malformed json", &episode, "book_meeting", "{\"date\": ", Expect { code: Code::InvalidArgument, field: Some("arguments_json") }),
        ("json array", &episode, "book_meeting", "[1, 2]", Expect { code: Code::InvalidArgument, field: Some("arguments_json") }),
        ("json string", &episode, "book_meeting", "\"hello\"", Expect { code: Code::InvalidArgument, field: Some("arguments_json") }),
        (
            "missing argument",
            &episode,
            "book_meeting",
            r#"{"date": "2026-01-01", "time": "09:00"}"#,
            Expect { code: Code::InvalidArgument, field: Some("arguments_json.topic") },
        ),
        (
            "null for a required argument",
            &episode,
            "book_meeting",
            r#"{"date": null, "time": "09:00", "topic": "x"}"#,
            Expect { code: Code::InvalidArgument, field: Some("arguments_json.date") },
        ),
        (
            "mistyped argument",
            &episode,
            "book_meeting",
            r#"{"date": 20260101, "time": "09:00", "topic": "x"}"#,
            Expect { code: Code::InvalidArgument, field: Some("arguments_json.date") },
        ),
        (
            "unknown argument",
            &episode,
            "check_calendar",
            r#"{"date": "2026-01-01", "timezone": "UTC"}"#,
            Expect { code: Code::InvalidArgument, field: Some("arguments_json.timezone") },
        ),
        ("oversized arguments", &episode, "book_meeting", &big, Expect { code: Code::InvalidArgument, field: Some("arguments_json") }),
    ];
    for (case, episode_id, tool, arguments, expect) in calls {
        check(case, status(client.call_json(episode_id, tool, arguments).await), expect);
    }

    check(
        "create without task",
        status(client.create(crate::support::new_episode("", 0, 0)).await),
        Expect { code: Code::InvalidArgument, field: Some("task_id") },
    );
    check(
        "create unknown task",
        status(client.create(crate::support::new_episode("travel/nope/999", 0, 0)).await),
        Expect { code: Code::NotFound, field: None },
    );
    check("get unknown task", status(client.get_task("nope").await), Expect { code: Code::NotFound, field: None });
    check(
        "finish unknown episode",
        status(client.finish(crate::support::finishing("ep-nope")).await),
        Expect { code: Code::NotFound, field: None },
    );
    check("trajectory of unknown episode", status(client.trajectory("ep-nope").await), Expect { code: Code::NotFound, field: None });
    let level = client.raw().list_tasks(pb::ListTasksRequest { domain: 0, level: 7, ..Default::default() }).await.unwrap_err();
    check("unknown level", level, Expect { code: Code::InvalidArgument, field: Some("level") });
    let domain = client.raw().list_tasks(pb::ListTasksRequest { domain: 99, level: 0, ..Default::default() }).await.unwrap_err();
    check("unknown domain", domain, Expect { code: Code::InvalidArgument, field: Some("domain") });

    // A broken business rule is not an error status: it is a result the agent reads.
    let reply = client
        .call_json(&episode, "book_meeting", &json!({"date": "2026-01-03", "time": "09:00", "topic": "x"}).to_string())
        .await
        .unwrap();
    match reply.outcome {
        Some(pb::call_tool_response::Outcome::Error(error)) => assert_eq!(error.code, "OUTSIDE_BUSINESS_HOURS"),
        other => panic!("expected a domain error, got {other:?}"),
    }

    // Malformed calls are recorded in the trajectory, with the field at fault.
    let trajectory = client.trajectory(&episode).await.unwrap();
    let invalid: Vec<_> = trajectory
        .calls
        .iter()
        .filter_map(|c| match &c.outcome {
            Some(pb::tool_call_record::Outcome::Invalid(i)) => Some(i.field.as_str()),
            _ => None,
        })
        .collect();
    assert!(invalid.contains(&"topic") && invalid.contains(&"tool_name"), "{invalid:?}");

    // After finishing, calls are refused.
    client.finish(crate::support::finishing(&episode)).await.unwrap();
    let after = status(client.call_json(&episode, "check_calendar", r#"{"date": "2026-01-01"}"#).await);
    check("call after finish", after, Expect { code: Code::FailedPrecondition, field: None });
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn garbage_never_hurts_the_server() {
    let (server, mut client) = start().await;
    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    let garbage = [
        "\u{0}\u{1}\u{2}",
        "{\"date\": \"\u{0}\", \"time\": \"\u{202e}09:00\", \"topic\": \"\u{1F600}\"}",
        "{\"date\": \"9999-99-99\", \"time\": \"99:99\", \"topic\": \"x\"}",
        "{\"date\": \"2026-01-01\", \"time\": \"09:00\", \"topic\": 1e999}",
        "{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}}}}}}}}",
        "{\"date\": \"2026-01-01\", \"time\": \"09:00\", \"topic\": \"\", \"topic\": \"dup\"}",
        "   ",
        "null",
    ];
    for text in garbage {
        for tool in ["book_meeting", "check_calendar", "list_meetings", "reschedule_meeting"] {
            // Any answer is fine, as long as it is an answer.
            let _ = client.call_json(&episode, tool, text).await;
        }
    }
    // Deeply nested JSON past serde's recursion limit is rejected, not a crash.
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(status(client.call_json(&episode, "book_meeting", &deep).await).code(), Code::InvalidArgument);
    // The server still serves everyone.
    assert_eq!(client.list_tasks(None, None).await.unwrap().len(), toolenv_domains::suite().len());
    let mut other = Client::connect(&server.url()).await.unwrap();
    assert!(other.create(crate::support::new_episode(TASK, 1, 0)).await.is_ok());
    server.shutdown().await.unwrap();
}
