//! One POST of a body to a webhook, over HTTP/1.1, plain or TLS.
//!
//! TLS is rustls with the ring provider and the bundled Mozilla roots
//! (webpki-roots): the image is `FROM scratch`, with no system store to
//! read, and a webhook host's certificate is a public one.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use sweep_core::notify::webhook::{Webhook as Target, WebhookScheme as Scheme};

/// Why one attempt failed, and whether another may succeed. Never holds
/// the URL: the caller names the target, masked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PostError {
    #[error("no answer within {}", humantime::format_duration(*.0))]
    Timeout(Duration),
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("TLS: {0}")]
    Tls(String),
    #[error("HTTP: {0}")]
    Http(String),
    #[error("the receiver answered {0}")]
    Status(StatusCode),
}

impl PostError {
    /// Whether trying again may help: a receiver that is down, slow or
    /// overloaded may recover; one that refuses the request will not.
    pub fn is_transient(&self) -> bool {
        match self {
            PostError::Status(s) => {
                s.is_server_error()
                    || *s == StatusCode::TOO_MANY_REQUESTS
                    || *s == StatusCode::REQUEST_TIMEOUT
            }
            // A name that does not verify stays so.
            PostError::Tls(_) => false,
            _ => true,
        }
    }
}

/// The TLS settings, made once.
fn tls() -> Result<Arc<ClientConfig>, PostError> {
    static CONFIG: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let mut config = ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_root_certificates(roots)
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(Arc::new(config))
        })
        .clone()
        .map_err(PostError::Tls)
}

/// Posts `body` to `target` once, within `timeout` for the whole
/// exchange (connect, TLS, request, status line).
pub async fn post(
    target: &Target,
    body: Bytes,
    content_type: &str,
    timeout: Duration,
) -> Result<(), PostError> {
    match tokio::time::timeout(timeout, attempt(target, body, content_type, tls)).await {
        Ok(result) => result,
        Err(_) => Err(PostError::Timeout(timeout)),
    }
}

/// One attempt, with the TLS settings `tls` gives (the bundled roots;
/// a test's own authority in the tests).
async fn attempt(
    target: &Target,
    body: Bytes,
    content_type: &str,
    tls: impl FnOnce() -> Result<Arc<ClientConfig>, PostError>,
) -> Result<(), PostError> {
    let tcp = TcpStream::connect((target.host(), target.port()))
        .await
        .map_err(|e| PostError::Connect(e.kind().to_string()))?;
    // Small bodies sent at once: no wait for the ack of the headers.
    let _ = tcp.set_nodelay(true);
    match target.scheme() {
        Scheme::Http => exchange(tcp, target, body, content_type).await,
        Scheme::Https => {
            let name = ServerName::try_from(target.host().to_owned())
                .map_err(|e| PostError::Tls(e.to_string()))?;
            let tls = TlsConnector::from(tls()?)
                .connect(name, tcp)
                .await
                .map_err(handshake_failed)?;
            exchange(tls, target, body, content_type).await
        }
    }
}

/// Why a TLS handshake failed: TLS's own refusal (a certificate that does
/// not verify, a protocol the receiver does not speak; rustls reports it
/// as invalid data) stays so, while the connection breaking under it (a
/// reset, an early close by a busy load balancer) is the network's, and
/// may pass.
fn handshake_failed(e: std::io::Error) -> PostError {
    match e.kind() {
        std::io::ErrorKind::InvalidData => PostError::Tls(e.to_string()),
        _ => PostError::Connect(format!("TLS handshake: {e}")),
    }
}

async fn exchange<S>(
    stream: S,
    target: &Target,
    body: Bytes,
    content_type: &str,
) -> Result<(), PostError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| PostError::Http(e.to_string()))?;
    // Ends with the exchange: dropped with this task's future otherwise.
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let request = Request::post(target.path_and_query())
        .header(hyper::header::HOST, target.host_header())
        .header(hyper::header::CONTENT_TYPE, content_type)
        .header(
            hyper::header::USER_AGENT,
            concat!("swarm-sweep/", env!("CARGO_PKG_VERSION")),
        )
        .body(Full::new(body))
        .map_err(|e| PostError::Http(e.to_string()))?;
    let answer = sender.send_request(request).await;
    driver.abort();
    let response = answer.map_err(|e| PostError::Http(e.to_string()))?;
    // The body is not read: what a receiver says besides its status is
    // not this tool's business, and reading it would be one more bound.
    if response.status().is_success() {
        Ok(())
    } else {
        Err(PostError::Status(response.status()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio_rustls::TlsAcceptor;

    // A certificate authority of these tests only, and a server
    // certificate it signed for `localhost` (its key is for these tests
    // only): what an HTTPS receiver on loopback can present.
    const TEST_CA: &[u8] = include_bytes!("testdata/ca.pem");
    const SERVER_CERT: &[u8] = include_bytes!("testdata/server.pem");
    const SERVER_KEY: &[u8] = include_bytes!("testdata/server.key");

    fn provider() -> Arc<rustls::crypto::CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    /// The client's settings as [`tls`] makes them, but trusting the
    /// test authority instead of the bundled roots.
    fn trusting_the_test_ca() -> Result<Arc<ClientConfig>, PostError> {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(TEST_CA) {
            roots.add(cert.unwrap()).unwrap();
        }
        let mut config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// Accepts one connection over TLS, reads one request and answers
    /// `204`: the request's text, or why there was none.
    async fn serve_once(listener: TcpListener) -> Result<String, String> {
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(SERVER_CERT)
            .collect::<Result<_, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_slice(SERVER_KEY).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        let (tcp, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut tls = TlsAcceptor::from(Arc::new(config))
            .accept(tcp)
            .await
            .map_err(|e| e.to_string())?;
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = tls.read(&mut buf).await.map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("the connection ended before the request".into());
            }
            got.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&got);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length: usize = head
                    .lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                    .and_then(|(_, v)| v.trim().parse().ok())
                    .unwrap_or(0);
                if body.len() >= length {
                    break;
                }
            }
        }
        tls.write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
            .await
            .map_err(|e| e.to_string())?;
        tls.flush().await.map_err(|e| e.to_string())?;
        Ok(String::from_utf8_lossy(&got).into_owned())
    }

    #[tokio::test]
    async fn a_receiver_over_https_gets_the_body_and_only_a_verified_one_does() {
        const BODY: &str = "{\"event\":\"deleted\"}";
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let target =
            Target::parse(&format!("https://localhost:{port}/hook/s3cret"), "test").unwrap();
        let server = tokio::spawn(serve_once(listener));
        let sent = tokio::time::timeout(
            Duration::from_secs(20),
            attempt(
                &target,
                Bytes::from_static(BODY.as_bytes()),
                "application/json",
                trusting_the_test_ca,
            ),
        )
        .await
        .expect("the exchange ends");
        assert_eq!(sent, Ok(()));
        let got = server.await.unwrap().unwrap();
        assert!(got.starts_with("POST /hook/s3cret HTTP/1.1\r\n"), "{got}");
        assert!(got.ends_with(BODY), "{got}");

        // The bundled roots know no such authority: the same receiver is
        // refused before anything is sent, and for good.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let target =
            Target::parse(&format!("https://localhost:{port}/hook/s3cret"), "test").unwrap();
        let server = tokio::spawn(serve_once(listener));
        let refused = post(
            &target,
            Bytes::from_static(BODY.as_bytes()),
            "application/json",
            Duration::from_secs(20),
        )
        .await;
        let Err(e @ PostError::Tls(_)) = refused else {
            panic!("not refused by TLS: {refused:?}");
        };
        assert!(!e.is_transient());
        assert!(
            server.await.unwrap().is_err(),
            "a request reached the receiver"
        );
    }

    /// A receiver that closes the connection during the handshake: tried
    /// again, as any broken connection is.
    #[tokio::test]
    async fn a_connection_closed_during_the_handshake_is_tried_again() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let target = Target::parse(&format!("https://localhost:{port}/hook"), "test").unwrap();
        let server = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            drop(stream);
        });
        let failed = post(
            &target,
            Bytes::from_static(b"{}"),
            "application/json",
            Duration::from_secs(20),
        )
        .await;
        server.await.unwrap();
        let Err(e) = failed else {
            panic!("posted to a closed connection");
        };
        assert!(matches!(e, PostError::Connect(_)), "{e:?}");
        assert!(e.is_transient());
    }

    #[test]
    fn the_bundled_roots_make_a_tls_config() {
        assert!(webpki_roots::TLS_SERVER_ROOTS.len() > 100);
        assert!(tls().is_ok());
    }

    #[test]
    fn only_answers_that_may_change_are_retried() {
        assert!(PostError::Status(StatusCode::INTERNAL_SERVER_ERROR).is_transient());
        assert!(PostError::Status(StatusCode::TOO_MANY_REQUESTS).is_transient());
        assert!(PostError::Timeout(Duration::from_secs(1)).is_transient());
        assert!(PostError::Connect("refused".into()).is_transient());
        assert!(!PostError::Status(StatusCode::NOT_FOUND).is_transient());
        assert!(!PostError::Tls("bad name".into()).is_transient());
    }
}
