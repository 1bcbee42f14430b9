//! Every daemon reply is bounded, in bytes and in the structs it decodes
//! into, against fake daemons on unix sockets (no Docker engine needed).

use std::path::Path;
use std::time::{Duration, Instant};

use sweep_docker::{DockerSwarm, Endpoint, REPLY_LIMIT};
use sweep_swarms::{BackendError, SwarmBackend};
use sweep_testkit::fake_daemon::{FakeDaemon, Reply, Routes};

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

/// A daemon at `socket` answering anything but `/version` and `/_ping`
/// with `listing`.
fn spawn_daemon(socket: &Path, listing: Reply) -> Endpoint {
    let daemon = FakeDaemon::new(Routes::new().otherwise(listing));
    Endpoint::parse(&daemon.listen_unix(socket), None).unwrap()
}

/// A chunked body that goes on until the client hangs up (or, so that a
/// client without a bound is not taken down with the machine, until four
/// times the limit).
fn endless() -> Reply {
    Reply::endless("[", 4 * REPLY_LIMIT)
}

/// `[{},{},...]` with `n` objects: small in bytes, large once decoded.
fn empty_objects(n: usize) -> Reply {
    let mut body = String::with_capacity(3 * n + 2);
    body.push('[');
    for i in 0..n {
        body.push_str(if i == 0 { "{}" } else { ",{}" });
    }
    body.push(']');
    Reply::json(body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_listing_is_refused_at_the_byte_limit() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = spawn_daemon(&dir.path().join("endless.sock"), endless());
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
    let endpoint = spawn_daemon(&dir.path().join("objects.sock"), empty_objects(2_000_000));
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
