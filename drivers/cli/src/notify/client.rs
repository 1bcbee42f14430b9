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
    match tokio::time::timeout(timeout, attempt(target, body, content_type)).await {
        Ok(result) => result,
        Err(_) => Err(PostError::Timeout(timeout)),
    }
}

async fn attempt(target: &Target, body: Bytes, content_type: &str) -> Result<(), PostError> {
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
                .map_err(|e| PostError::Tls(e.to_string()))?;
            exchange(tls, target, body, content_type).await
        }
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
