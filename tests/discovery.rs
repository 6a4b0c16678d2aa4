use crate::support::start;
use tokio_stream::StreamExt;
use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient};
use tonic_reflection::pb::v1::{
    ServerReflectionRequest, server_reflection_client::ServerReflectionClient, server_reflection_request::MessageRequest,
    server_reflection_response::MessageResponse,
};

async fn channel(url: &str) -> tonic::transport::Channel {
    tonic::transport::Endpoint::from_shared(url.to_owned()).unwrap().connect().await.unwrap()
}

#[tokio::test]
async fn health_reports_serving() {
    let (server, _client) = start().await;
    let mut health = HealthClient::new(channel(&server.url()).await);
    for service in ["", toolenv::SERVICE_NAME] {
        let reply = health.check(HealthCheckRequest { service: service.into() }).await.unwrap().into_inner();
        assert_eq!(reply.status(), ServingStatus::Serving, "service {service:?}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn reflection_lists_and_describes_the_service() {
    let (server, _client) = start().await;
    let mut reflection = ServerReflectionClient::new(channel(&server.url()).await);
    let requests = [MessageRequest::ListServices(String::new()), MessageRequest::FileContainingSymbol(toolenv::SERVICE_NAME.into())]
        .map(|m| ServerReflectionRequest { host: String::new(), message_request: Some(m) });
    let mut replies = reflection.server_reflection_info(tokio_stream::iter(requests)).await.unwrap().into_inner();

    let Some(MessageResponse::ListServicesResponse(list)) = replies.next().await.unwrap().unwrap().message_response else {
        panic!("expected a service list");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&toolenv::SERVICE_NAME.to_owned()), "{names:?}");
    assert!(names.contains(&"grpc.health.v1.Health".to_owned()), "{names:?}");

    let Some(MessageResponse::FileDescriptorResponse(files)) = replies.next().await.unwrap().unwrap().message_response else {
        panic!("expected a file descriptor");
    };
    assert!(!files.file_descriptor_proto.is_empty());
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn tool_schemas_are_function_calling_json_schemas() {
    let (server, mut client) = start().await;
    let mut tools = std::collections::BTreeSet::new();
    for summary in client.list_tasks(None, None).await.unwrap() {
        let task = client.get_task(&summary.id).await.unwrap();
        assert!(!task.tools.is_empty());
        for tool in task.tools {
            let schema: serde_json::Value = serde_json::from_str(&tool.parameters_json_schema).unwrap();
            assert_eq!(schema["type"], "object", "{}", tool.name);
            assert_eq!(schema["additionalProperties"], false, "{}", tool.name);
            let properties = schema["properties"].as_object().unwrap();
            for required in schema["required"].as_array().unwrap() {
                assert!(properties.contains_key(required.as_str().unwrap()), "{}: {required}", tool.name);
            }
            for (name, property) in properties {
                assert!(property["description"].is_string(), "{}.{name} is described", tool.name);
            }
            assert!(!tool.description.is_empty());
            tools.insert(tool.name);
        }
    }
    assert!(tools.len() >= 25, "{} distinct tools", tools.len());
    for paper_tool in [
        "book_meeting",
        "check_calendar",
        "cancel_meeting",
        "list_meetings",
        "search_flights",
        "hold_flight",
        "confirm_booking",
        "get_itinerary",
        "create_ticket",
        "update_ticket",
        "close_ticket",
        "escalate_ticket",
        "search_knowledge_base",
        "list_open_tickets",
        "search_products",
        "check_inventory",
        "create_order",
        "check_order_status",
        "process_return",
        "apply_coupon",
    ] {
        assert!(tools.contains(paper_tool), "Appendix A tool {paper_tool} is offered");
    }
    // Filters work over the wire.
    let travel_level_1 = client.list_tasks(Some(toolenv_domains::registry::TRAVEL), Some(1)).await.unwrap();
    assert!(!travel_level_1.is_empty());
    assert!(travel_level_1.iter().all(|t| t.id.starts_with("travel/") && t.level == 1));
    server.shutdown().await.unwrap();
}
