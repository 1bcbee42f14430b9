//! The TLS transport against a fake daemon on 127.0.0.1 that demands a
//! client certificate (no Docker engine needed; certificates are made with
//! `openssl`, as the test bed makes its own). Loopback only.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sweep_docker::{DockerSwarm, Endpoint, TlsFiles, CONFIG_LIMIT, REPLY_LIMIT};
use sweep_swarms::{BackendError, ReplyLimit, SwarmBackend};
use sweep_testkit::fake_daemon::{FakeDaemon, Reply, Routes};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

const OPENSSL_CNF: &str = "[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
";

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl is needed for this test (apt-get install openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ca.pem, cert.pem/key.pem (client), server-cert.pem/server-key.pem and
/// other-ca.pem (a CA that signed nothing) in `dir`.
fn make_certs(dir: &Path) {
    std::fs::write(dir.join("openssl.cnf"), OPENSSL_CNF).unwrap();
    for k in ["ca-key", "server-key", "key", "other-ca-key"] {
        openssl(
            dir,
            &[
                "genpkey",
                "-algorithm",
                "EC",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-out",
                &format!("{k}.pem"),
            ],
        );
    }
    for (key, subject, out) in [
        ("ca-key.pem", "/CN=test CA", "ca.pem"),
        ("other-ca-key.pem", "/CN=unrelated CA", "other-ca.pem"),
    ] {
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-new",
                "-config",
                "openssl.cnf",
                "-extensions",
                "ca",
                "-key",
                key,
                "-days",
                "30",
                "-subj",
                subject,
                "-out",
                out,
            ],
        );
    }
    for (name, prefix) in [("server", "server-"), ("client", "")] {
        let key = format!("{prefix}key.pem");
        let csr = format!("{name}.csr");
        let cert = format!("{prefix}cert.pem");
        openssl(
            dir,
            &[
                "req",
                "-new",
                "-config",
                "openssl.cnf",
                "-key",
                &key,
                "-subj",
                "/CN=test",
                "-out",
                &csr,
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca-key.pem",
                "-set_serial",
                "0x1234",
                "-days",
                "30",
                "-extfile",
                "openssl.cnf",
                "-extensions",
                name,
                "-out",
                &cert,
            ],
        );
    }
}

fn certs(path: &Path) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_file_iter(path)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A TLS acceptor that presents the server certificate and demands a
/// client certificate signed by `ca.pem`.
fn acceptor(dir: &Path) -> TlsAcceptor {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(certs(&dir.join("ca.pem")));
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            certs(&dir.join("server-cert.pem")),
            PrivateKeyDer::from_pem_file(dir.join("server-key.pem")).unwrap(),
        )
        .unwrap();
    TlsAcceptor::from(Arc::new(config))
}

async fn spawn_tls_daemon(dir: &Path) -> String {
    let acceptor = acceptor(dir);
    // Answers `/version` (keeping the connection, as a daemon does), and
    // anything else with an endless body (stopping at four times the
    // limit, so that a client without one survives).
    let daemon = FakeDaemon::new(Routes::new().otherwise(Reply::endless("", 4 * REPLY_LIMIT)));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, daemon) = (acceptor.clone(), daemon.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    daemon.serve(tls).await;
                }
            });
        }
    });
    format!("tcp://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_client_certificate_connects_and_replies_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    make_certs(dir.path());
    let url = spawn_tls_daemon(dir.path()).await;
    let endpoint = Endpoint::parse(&url, Some(TlsFiles::in_dir(dir.path()))).unwrap();
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(swarm.api_version(), "1.41");
    let e = swarm.service_uses().await.unwrap_err();
    assert_eq!(
        e,
        BackendError::TooLarge {
            what: "the services".into(),
            endpoint: url.clone(),
            limit: ReplyLimit::Bytes(REPLY_LIMIT),
        }
    );
    // The configs listing, read as a stream, is bounded config by config
    // and between them.
    let e = swarm.releases().await.unwrap_err();
    assert_eq!(
        e,
        BackendError::Invalid {
            what: "release records".into(),
            message: format!(
                "the listing holds more than {CONFIG_LIMIT} bytes in a row outside any config"
            ),
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_trusts_only_the_given_ca() {
    let dir = tempfile::tempdir().unwrap();
    make_certs(dir.path());
    let url = spawn_tls_daemon(dir.path()).await;
    let files = TlsFiles::new(
        dir.path().join("other-ca.pem"),
        dir.path().join("cert.pem"),
        dir.path().join("key.pem"),
    );
    let endpoint = Endpoint::parse(&url, Some(files)).unwrap();
    let timeout = Duration::from_secs(20);
    // Connecting sends nothing; the first call meets the refusal.
    let swarm = DockerSwarm::connect(&endpoint, timeout).await.unwrap();
    let started = Instant::now();
    match swarm.cluster_id().await {
        Err(BackendError::Unreachable { endpoint, message }) => {
            assert_eq!(endpoint, url);
            assert!(message.to_lowercase().contains("certificate"), "{message}");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    assert!(started.elapsed() < timeout, "took {:?}", started.elapsed());
    // A client key that is not there is said when connecting.
    let files = TlsFiles::new(
        dir.path().join("ca.pem"),
        dir.path().join("cert.pem"),
        dir.path().join("missing-key.pem"),
    );
    let endpoint = Endpoint::parse(&url, Some(files)).unwrap();
    match DockerSwarm::connect(&endpoint, timeout).await {
        Err(BackendError::Unreachable { message, .. }) => {
            assert!(message.contains("missing-key.pem"), "{message}");
        }
        other => panic!("expected Unreachable, got {:?}", other.err()),
    }
}
