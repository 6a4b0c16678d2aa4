//! TLS to a server whose certificate the user names with `--ca-cert`: the
//! certificate authority of the server's chain, or the server's own
//! self-signed certificate (as `openssl req -x509 …` makes it).
//!
//! Why not tonic's `ClientTlsConfig`: it trusts `--ca-cert` as a root only,
//! and webpki refuses a root presented as the server's certificate
//! (`CaUsedAsEndEntity`, since `openssl req -x509` marks its certificate
//! `CA:TRUE`). Here a certificate given with `--ca-cert` is also *pinned*:
//! a server presenting exactly that certificate is trusted, after the same
//! name check and handshake signature check webpki does. Any other
//! certificate must chain to a `--ca-cert` or a public web root.

use std::sync::Arc;

use hyper_util::rt::TokioIo;
use tokio_rustls::rustls::{
    self, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    client::{WebPkiServerVerifier, verify_server_name},
    pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject},
    server::ParsedCertificate,
};
use tonic::codegen::http::Uri;

/// Why a `--ca-cert` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// No certificate in the PEM text.
    #[error("the CA certificate file holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)")]
    NoCertificate,
    /// A certificate that does not parse.
    #[error("a certificate of the CA certificate file does not read: {0}")]
    BadCertificate(rustls::Error),
    /// The verifier could not be built from the certificates.
    #[error("cannot trust the CA certificate file: {0}")]
    Verifier(#[from] rustls::client::VerifierBuilderError),
}

/// Trusts the web roots and the given certificates as roots, and the given
/// certificates themselves when a server presents one as its own.
#[derive(Debug)]
struct PinnedOrChained {
    chained: Arc<WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for PinnedOrChained {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.chained.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Ok(verified) => Ok(verified),
            Err(_) if self.pinned.iter().any(|p| p.as_ref() == end_entity.as_ref()) => {
                // The user's own certificate: the name must still match.
                verify_server_name(&ParsedCertificate::try_from(end_entity)?, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            Err(error) => Err(error),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chained.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.chained.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.chained.supported_verify_schemes()
    }
}

/// The client TLS configuration for `--ca-cert` (PEM, one or more certificates).
pub(crate) fn client_config(ca_pem: &[u8]) -> Result<Arc<ClientConfig>, TlsSetupError> {
    let pinned: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(ca_pem).collect::<Result<_, _>>().map_err(|_| TlsSetupError::NoCertificate)?;
    if pinned.is_empty() {
        return Err(TlsSetupError::NoCertificate);
    }
    let mut roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    for cert in &pinned {
        // A leaf certificate is not a usable root: it is still pinned.
        let _ = roots.add(cert.clone());
        ParsedCertificate::try_from(cert).map_err(TlsSetupError::BadCertificate)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chained = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone()).build()?;
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(TlsSetupError::BadCertificate)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedOrChained { chained, pinned }))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// A TLS connection to a server, as hyper reads and writes it.
type TlsIo = TokioIo<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;

/// The connection a [`connector`] is opening.
type Connecting = std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<TlsIo>> + Send>>;

/// Opens a TCP connection to the URI's host and port and does the TLS
/// handshake with `config`, for tonic's `Channel::connect`.
pub(crate) fn connector(
    config: Arc<ClientConfig>,
) -> impl tower::Service<Uri, Response = TlsIo, Error = std::io::Error, Future = Connecting> + Clone {
    let connector = tokio_rustls::TlsConnector::from(config);
    tower::service_fn(move |uri: Uri| {
        let connector = connector.clone();
        Box::pin(async move {
            let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{what} in {uri}"));
            let host = uri.host().ok_or_else(|| invalid("no host"))?.trim_start_matches('[').trim_end_matches(']').to_owned();
            let port = uri.port_u16().unwrap_or(443);
            let name = ServerName::try_from(host.clone()).map_err(|_| invalid("an invalid host name"))?;
            let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
            tcp.set_nodelay(true)?;
            Ok(TokioIo::new(connector.connect(name, tcp).await?))
        }) as Connecting
    })
}
