//! Every daemon reply is bounded, in bytes and in the structs it decodes
//! into, against fake daemons on unix sockets (no Docker engine needed).

use std::path::Path;
use std::time::{Duration, Instant};

mod fake;

use fake::VERSION_REPLY;
use sweep_docker::{DockerSwarm, Endpoint, REPLY_LIMIT};
use sweep_swarms::{BackendError, SwarmBackend};
use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};

/// The process's peak resident memory so far.
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status");
    kib * 1024
}

/// What the fake daemon answers to anything but `/version`.
#[derive(Clone, Copy)]
enum Listing {
    /// A chunked body that goes on until the client hangs up (or, so that
    /// a client without a bound is not taken down with the machine, until
    /// four times the limit).
    Endless,
    /// `[{},{},...]` with this many objects: small in bytes, large once
    /// decoded.
    EmptyObjects(usize),
}

async fn serve(mut stream: UnixStream, listing: Listing) {
    let Some(head) = fake::read_head(&mut stream).await else {
        return;
    };
    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
    let fixed = |body: &str| fake::json_head(body.len());
    if path.ends_with("/version") {
        let _ = stream.write_all(fixed(VERSION_REPLY).as_bytes()).await;
        let _ = stream.write_all(VERSION_REPLY.as_bytes()).await;
        return;
    }
    match listing {
        Listing::Endless => {
            fake::write_endless(&mut stream, "1\r\n[\r\n").await;
        }
        Listing::EmptyObjects(n) => {
            let mut body = String::with_capacity(3 * n + 2);
            body.push('[');
            for i in 0..n {
                body.push_str(if i == 0 { "{}" } else { ",{}" });
            }
            body.push(']');
            let _ = stream.write_all(fixed(&body).as_bytes()).await;
            let _ = stream.write_all(body.as_bytes()).await;
        }
    }
}

fn spawn_daemon(socket: &Path, listing: Listing) -> Endpoint {
    let listener = UnixListener::bind(socket).expect("bind fake daemon socket");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, listing));
        }
    });
    Endpoint::parse(&format!("unix://{}", socket.display()), None).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_listing_is_refused_at_the_byte_limit() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = spawn_daemon(&dir.path().join("endless.sock"), Listing::Endless);
    let timeout = Duration::from_secs(120);
    let swarm = DockerSwarm::connect(&endpoint, timeout).await.unwrap();
    let started = Instant::now();
    let e = swarm.releases().await.unwrap_err();
    assert_eq!(
        e,
        BackendError::Invalid {
            what: "release records".into(),
            message: format!(
                "the reply from {} exceeds {REPLY_LIMIT} bytes, the limit on one daemon reply; nothing was decided from it",
                endpoint.url()
            ),
        }
    );
    assert!(started.elapsed() < timeout, "took {:?}", started.elapsed());
    // Without the bound this process read 256 MiB and more (3.7 GB was
    // seen from a hostile endpoint).
    let peak = peak_rss_bytes();
    assert!(peak < 512 * 1024 * 1024, "peak RSS {peak} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_of_millions_of_empty_objects_is_refused_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    // 6 MB of JSON that bollard would decode into 2 million 256-byte
    // configs: 512 MB.
    let endpoint = spawn_daemon(
        &dir.path().join("objects.sock"),
        Listing::EmptyObjects(2_000_000),
    );
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(120))
        .await
        .unwrap();
    let e = swarm.releases().await.unwrap_err();
    match &e {
        BackendError::Invalid { what, message } => {
            assert_eq!(what, "release records");
            assert!(
                message.starts_with(&format!(
                    "the reply from {} holds more than ",
                    endpoint.url()
                )) && message.contains("JSON objects"),
                "{message}"
            );
        }
        other => panic!("expected the object bound, got {other:?}"),
    }
    let peak = peak_rss_bytes();
    assert!(peak < 512 * 1024 * 1024, "peak RSS {peak} bytes");
}
