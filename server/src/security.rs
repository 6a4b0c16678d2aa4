//! Optional security for a server exposed beyond loopback: a bearer token
//! checked on every service but health, and TLS from PEM files.
//!
//! The token check is a tower layer in front of every service (so a new
//! service cannot forget it); `grpc.health.v1` stays open so load balancers
//! and orchestrators can probe without a secret. The comparison takes the
//! same time whatever prefix of the token matches.

use std::path::Path;
use std::sync::Arc;
use std::task::{Context, Poll};

use tonic::codegen::http::{HeaderMap, Request, Response};
use tonic::transport::{Identity, ServerTlsConfig};
use tower::{Layer, Service};

/// How a server protects itself: both are off by default (loopback use).
#[derive(Clone, Default)]
pub struct Security {
    /// Every request but health checks must carry `authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Serve TLS with this certificate chain and private key (PEM).
    pub tls: Option<TlsPem>,
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        f.debug_struct("Security").field("token", &self.token.as_ref().map(|_| "<set>")).field("tls", &self.tls.is_some()).finish()
    }
}

/// A certificate chain and its private key, in PEM.
#[derive(Clone)]
pub struct TlsPem {
    /// The server's certificate chain, leaf first.
    pub cert: Vec<u8>,
    /// The certificate's private key.
    pub key: Vec<u8>,
}

impl std::fmt::Debug for TlsPem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("TlsPem").field("cert_bytes", &self.cert.len()).finish_non_exhaustive()
    }
}

impl TlsPem {
    /// Reads a certificate chain and key from PEM files.
    pub fn read(cert: &Path, key: &Path) -> std::io::Result<Self> {
        let read = |path: &Path| std::fs::read(path).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())));
        Ok(Self { cert: read(cert)?, key: read(key)? })
    }

    pub(crate) fn server_config(&self) -> ServerTlsConfig {
        ServerTlsConfig::new().identity(Identity::from_pem(&self.cert, &self.key))
    }
}

/// Most bytes of a token: enough for any generated secret.
pub const MAX_TOKEN_BYTES: usize = 1024;

/// Checks a token given to a server: printable ASCII, no spaces, 16 to
/// [`MAX_TOKEN_BYTES`] bytes (short tokens can be guessed).
pub fn check_token(token: &str) -> Result<(), String> {
    if token.len() < 16 || token.len() > MAX_TOKEN_BYTES {
        return Err(format!("a token is 16 to {MAX_TOKEN_BYTES} bytes, got {}", token.len()));
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("a token is printable ASCII without spaces".to_owned());
    }
    Ok(())
}

/// Requests whose path starts with this pass without a token.
const OPEN_PREFIX: &str = "/grpc.health.v1.Health/";

/// Refuses requests without the bearer token (UNAUTHENTICATED).
#[derive(Debug, Clone)]
pub(crate) struct BearerLayer {
    expected: Arc<[u8]>,
}

impl BearerLayer {
    pub(crate) fn new(token: &str) -> Self {
        Self { expected: format!("Bearer {token}").into_bytes().into() }
    }
}

impl<S> Layer<S> for BearerLayer {
    type Service = Bearer<S>;

    fn layer(&self, inner: S) -> Bearer<S> {
        Bearer { inner, expected: self.expected.clone() }
    }
}

/// The service [`BearerLayer`] makes.
#[derive(Debug, Clone)]
pub(crate) struct Bearer<S> {
    inner: S,
    expected: Arc<[u8]>,
}

impl<S, B, ResBody> Service<Request<B>> for Bearer<S>
where
    S: Service<Request<B>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: Default + Send + 'static,
{
    type Response = Response<ResBody>;
    type Error = S::Error;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response<ResBody>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if request.uri().path().starts_with(OPEN_PREFIX) || authorized(request.headers(), &self.expected) {
            return Box::pin(self.inner.call(request));
        }
        let given = request.headers().contains_key("authorization");
        tracing::debug!(path = %request.uri().path(), given, "refused a request without the right bearer token");
        let status = tonic::Status::unauthenticated(if given {
            "wrong token: the `authorization: Bearer <token>` sent is not this server's (`toolenv serve --token`); check `--token` or TOOLENV_TOKEN"
        } else {
            "this server needs a token: send `authorization: Bearer <token>` (`--token` or TOOLENV_TOKEN; see `toolenv serve --token`)"
        });
        let refusal: Response<ResBody> = status.into_http();
        Box::pin(std::future::ready(Ok(refusal)))
    }
}

/// Whether the request carries the expected `authorization` value, compared
/// in constant time.
fn authorized(headers: &HeaderMap, expected: &[u8]) -> bool {
    let Some(given) = headers.get("authorization") else { return false };
    let given = given.as_bytes();
    if given.len() != expected.len() {
        return false;
    }
    given.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_and_printable() {
        assert!(check_token("short").is_err());
        assert!(check_token("sixteen chars!!!").is_err(), "a space");
        assert!(check_token("0123456789abcdef").is_ok());
        assert!(check_token(&"x".repeat(MAX_TOKEN_BYTES + 1)).is_err());
    }

    #[test]
    fn only_the_exact_bearer_value_is_authorized() {
        let expected = b"Bearer 0123456789abcdef";
        let mut headers = HeaderMap::new();
        assert!(!authorized(&headers, expected));
        for (value, ok) in [
            ("Bearer 0123456789abcdef", true),
            ("Bearer 0123456789abcdeg", false),
            ("bearer 0123456789abcdef", false),
            ("Bearer 0123456789abcde", false),
        ] {
            headers.insert("authorization", value.parse().unwrap());
            assert_eq!(authorized(&headers, expected), ok, "{value}");
        }
    }
}
