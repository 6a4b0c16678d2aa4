//! Optional security: a bearer token on every service but health, and TLS
//! from PEM files, with real clients.

use tonic::Code;
use tonic_health::pb::{HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient};
use toolenv::pb;
use toolenv_client::{Client, ClientError, Credentials};
use toolenv_server::security::{Security, TlsPem};
use toolenv_server::{Config, RunningServer};

const TOKEN: &str = "s3cret-token-for-tests-0123456789";
const TASK: &str = "scheduling/book-meeting/001";

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls").join(name)
}

fn code<T: std::fmt::Debug>(result: Result<T, ClientError>) -> Code {
    match result {
        Err(ClientError::Status(status)) => status.code(),
        other => panic!("expected a status, got {other:?}"),
    }
}

async fn health(url: &str, tls_ca: Option<&[u8]>) -> ServingStatus {
    let mut endpoint = tonic::transport::Endpoint::from_shared(url.to_owned()).unwrap();
    if let Some(ca) = tls_ca {
        endpoint = endpoint
            .tls_config(tonic::transport::ClientTlsConfig::new().ca_certificate(tonic::transport::Certificate::from_pem(ca)))
            .unwrap();
    }
    let mut health = HealthClient::new(endpoint.connect().await.unwrap());
    let reply = health.check(HealthCheckRequest { service: "toolenv.v1.ToolEnv".into() }).await.expect("health needs no token");
    reply.into_inner().status()
}

#[tokio::test]
async fn a_token_guards_every_service_but_health() {
    let security = Security { token: Some(TOKEN.into()), tls: None };
    let server = RunningServer::start(Config { security, ..Config::default() }).await.unwrap();

    let mut anonymous = Client::connect(&server.url()).await.unwrap();
    assert_eq!(code(anonymous.list_tasks(None, None).await), Code::Unauthenticated);
    assert_eq!(code(anonymous.create(crate::support::new_episode(TASK, 0, 0)).await), Code::Unauthenticated);
    let runs = anonymous.runs().list_runs(pb::ListRunsRequest {}).await.unwrap_err();
    assert_eq!(runs.code(), Code::Unauthenticated);
    assert!(runs.message().contains("Bearer"), "{}", runs.message());
    // Reflection describes the API: guarded too.
    let channel = tonic::transport::Endpoint::from_shared(server.url()).unwrap().connect().await.unwrap();
    let mut reflection = tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient::new(channel);
    let request = tonic_reflection::pb::v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(tonic_reflection::pb::v1::server_reflection_request::MessageRequest::ListServices(String::new())),
    };
    let refused = reflection.server_reflection_info(futures::stream::iter([request])).await;
    assert_eq!(refused.map(|_| ()).unwrap_err().code(), Code::Unauthenticated);
    assert_eq!(health(&server.url(), None).await, ServingStatus::Serving);

    let wrong = Credentials { token: Some(format!("{TOKEN}x")), ca_pem: None };
    let mut wrong = Client::connect_with(&server.url(), &wrong).await.unwrap();
    assert_eq!(code(wrong.list_tasks(None, None).await), Code::Unauthenticated);

    let mut client = Client::connect_with(&server.url(), &Credentials { token: Some(TOKEN.into()), ca_pem: None }).await.unwrap();
    let episode = client.create(crate::support::new_episode(TASK, 0, 0)).await.unwrap().episode_id;
    client.call_json(&episode, "book_meeting", r#"{"date": "2026-01-01", "time": "09:00", "topic": "Review"}"#).await.unwrap();
    assert!(client.finish(crate::support::finishing(&episode)).await.unwrap().passed);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn tls_from_pem_files_with_a_token() {
    let tls = TlsPem::read(&fixture("server.pem"), &fixture("server.key")).unwrap();
    let security = Security { token: Some(TOKEN.into()), tls: Some(tls) };
    let server = RunningServer::start(Config { security, ..Config::default() }).await.unwrap();
    assert!(server.url().starts_with("https://127.0.0.1:"), "{}", server.url());
    let ca = std::fs::read(fixture("ca.pem")).unwrap();

    let credentials = Credentials { token: Some(TOKEN.into()), ca_pem: Some(ca.clone()) };
    let mut client = Client::connect_with(&server.url(), &credentials).await.expect("a TLS client trusting the CA connects");
    assert_eq!(client.list_tasks(None, None).await.unwrap().len(), toolenv_domains::suite().len());
    assert_eq!(health(&server.url(), Some(&ca)).await, ServingStatus::Serving);

    // Without the CA the certificate is not trusted; without TLS nothing is understood.
    let untrusted = Client::connect_with(&server.url(), &Credentials { token: Some(TOKEN.into()), ca_pem: None }).await;
    let untrusted = match untrusted {
        Err(error) => Err(error),
        Ok(mut client) => client.list_tasks(None, None).await.map(|_| ()),
    };
    assert!(untrusted.is_err(), "a certificate from an unknown CA was trusted");
    let plain = format!("http://{}", server.addr());
    let plain = match Client::connect_with(&plain, &Credentials { token: Some(TOKEN.into()), ca_pem: None }).await {
        Err(error) => Err(error),
        Ok(mut client) => client.list_tasks(None, None).await.map(|_| ()),
    };
    assert!(plain.is_err(), "plain HTTP/2 reached a TLS server");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_short_token_is_refused_at_start() {
    let security = Security { token: Some("short".into()), tls: None };
    let error = RunningServer::start(Config { security, ..Config::default() }).await.unwrap_err();
    assert!(error.to_string().contains("16 to"), "{error}");
}
