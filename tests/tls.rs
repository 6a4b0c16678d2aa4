//! TLS with certificates made the way a user makes them: the README's CA +
//! server recipe, and a plain `openssl req -x509` self-signed certificate
//! (marked CA:TRUE, which webpki alone refuses as a server's certificate);
//! and the messages a user gets when something does not match.

use std::path::Path;
use std::process::Command;

use toolenv_client::{Client, ClientError, Credentials};
use toolenv_server::security::{Security, TlsPem};
use toolenv_server::{Config, RunningServer};

const TOKEN: &str = "s3cret-token-for-tests-0123456789";

/// Runs a shell script in `dir`; false when `openssl` is not installed.
fn sh(dir: &Path, script: &str) -> bool {
    if Command::new("openssl").arg("version").output().is_err() {
        eprintln!("openssl is not installed: the TLS recipes are not checked");
        return false;
    }
    let out = Command::new("sh").arg("-c").arg(script).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "{script}\n{}", String::from_utf8_lossy(&out.stderr));
    true
}

async fn tls_server(dir: &Path, cert: &str, key: &str) -> RunningServer {
    let tls = TlsPem::read(&dir.join(cert), &dir.join(key)).unwrap();
    let security = Security { token: Some(TOKEN.into()), tls: Some(tls) };
    RunningServer::start(Config { security, ..Config::default() }).await.unwrap()
}

/// Connects with `ca` trusted and lists the tasks.
async fn list(url: &str, ca: &[u8], token: Option<&str>) -> Result<usize, ClientError> {
    let credentials = Credentials { token: token.map(str::to_owned), ca_pem: Some(ca.to_vec()) };
    Ok(Client::connect_with(url, &credentials).await?.list_tasks(None, None).await?.len())
}

/// An error with its causes, as the CLI prints them.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

#[tokio::test]
async fn the_readme_recipe_and_a_plain_self_signed_certificate_both_work() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = toolenv_tests::readme_block("tls-certificates");
    let plain = "openssl req -x509 -newkey rsa:2048 -nodes -keyout self.key -out self.pem -days 2 -subj /CN=localhost \
                 -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>/dev/null";
    if !sh(dir.path(), &recipe) || !sh(dir.path(), plain) {
        return;
    }
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();

    // The README's CA and server certificate.
    let server = tls_server(dir.path(), "server.pem", "server.key").await;
    assert_eq!(list(&server.url(), &read("ca.pem"), Some(TOKEN)).await.unwrap(), toolenv_domains::suite().len());
    let by_name = server.url().replace("127.0.0.1", "localhost");
    assert_eq!(list(&by_name, &read("ca.pem"), Some(TOKEN)).await.unwrap(), toolenv_domains::suite().len());
    // Another certificate is not trusted for it.
    let other = list(&server.url(), &read("self.pem"), Some(TOKEN)).await.unwrap_err();
    assert!(chain(&other).contains("UnknownIssuer"), "{}", chain(&other));
    server.shutdown().await.unwrap();

    // The plain self-signed one, given as its own --ca-cert.
    let server = tls_server(dir.path(), "self.pem", "self.key").await;
    assert_eq!(list(&server.url(), &read("self.pem"), Some(TOKEN)).await.unwrap(), toolenv_domains::suite().len());
    // Without the file, the public roots do not know it.
    let untrusted = Client::connect_with(&server.url(), &Credentials { token: Some(TOKEN.into()), ca_pem: None }).await;
    let untrusted = match untrusted {
        Err(error) => chain(&error),
        Ok(mut client) => chain(&client.list_tasks(None, None).await.unwrap_err()),
    };
    assert!(untrusted.contains("invalid peer certificate"), "{untrusted}");

    // Tokens: a missing one and a wrong one are told apart.
    let missing = chain(&list(&server.url(), &read("self.pem"), None).await.unwrap_err());
    let wrong = chain(&list(&server.url(), &read("self.pem"), Some("another-token-0123456789")).await.unwrap_err());
    assert!(missing.contains("needs a token") && wrong.contains("wrong token"), "{missing}\n{wrong}");
    assert_ne!(missing, wrong);

    // http:// to a TLS server, and a CA file for http://.
    let plain_url = format!("http://{}", server.addr());
    let plain = Client::connect(&plain_url).await.unwrap().list_tasks(None, None).await.unwrap_err();
    assert!(chain(&plain).contains(toolenv_client::CONNECTION_BROKE), "{}", chain(&plain));
    // Asked again, the server tells which it was: it speaks TLS.
    let hint = tokio::task::spawn_blocking({
        let url = plain_url.clone();
        move || toolenv_client::broken_connection_hint(&url)
    });
    let hint = hint.await.unwrap().expect("a hint");
    assert!(hint.contains("expects TLS") && hint.contains("https://"), "{hint}");
    let ca_for_http = Client::connect_with(&plain_url, &Credentials { token: None, ca_pem: Some(read("self.pem")) }).await.unwrap_err();
    assert!(chain(&ca_for_http).contains("use https://"), "{}", chain(&ca_for_http));
    let not_pem = Client::connect_with(&server.url(), &Credentials { token: None, ca_pem: Some(b"not a certificate".to_vec()) }).await;
    assert!(chain(&not_pem.unwrap_err()).contains("no PEM certificate"));
    server.shutdown().await.unwrap();

    // Pinned, but the name must still match: a certificate for another name is refused.
    let elsewhere = "openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem -days 2 -subj /CN=other \
                     -addext subjectAltName=DNS:other.example 2>/dev/null";
    assert!(sh(dir.path(), elsewhere));
    let server = tls_server(dir.path(), "other.pem", "other.key").await;
    let error = chain(&list(&server.url(), &read("other.pem"), Some(TOKEN)).await.unwrap_err());
    assert!(error.contains("not valid for name"), "{error}");
    server.shutdown().await.unwrap();
}

/// A connection that broke under a plain `http://` request is told apart by
/// asking the server again: one that answers plain HTTP/2 stopped or
/// restarted mid-call (not the TLS advice); one gone is said to be gone.
#[tokio::test]
async fn a_broken_connection_is_told_apart_from_a_tls_server() {
    let server = RunningServer::start(Config::default()).await.unwrap();
    let ask = |url: String| tokio::task::spawn_blocking(move || toolenv_client::broken_connection_hint(&url));
    let up = ask(format!("http://{}", server.addr())).await.unwrap().expect("a hint");
    assert!(up.contains("answers plain HTTP/2") && !up.contains("TLS"), "{up}");
    server.shutdown().await.unwrap();
    // Not the stopped server's port: another test's server (TLS, or PostgreSQL) may be on it by now.
    let (_held, closed) = toolenv_tests::held_port();
    let gone = ask(format!("http://{closed}")).await.unwrap().expect("a hint");
    assert!(gone.contains("nothing listens"), "{gone}");
    assert_eq!(ask("https://127.0.0.1:1".into()).await.unwrap(), None, "only plain http:// urls are asked");
}
