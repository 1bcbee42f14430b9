//! Every daemon reply is bounded, in bytes and in the structs it decodes
//! into, against fake daemons on unix sockets (no Docker engine needed).

use std::path::Path;
use std::time::{Duration, Instant};

use sweep_core::record::{Kind, Payload};
use sweep_docker::labels::{OWNER, RECORD_TYPE, RELEASE, REVISION, TYPE};
use sweep_docker::{DockerSwarm, Endpoint, CONFIG_LIMIT, DATA_LIMIT, MAX_CONFIGS, REPLY_LIMIT};
use sweep_swarms::{BackendError, PayloadScope, ReplyLimit, SwarmBackend};
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
    let e = swarm.service_uses().await.unwrap_err();
    assert_eq!(
        e,
        BackendError::TooLarge {
            what: "the services".into(),
            endpoint: endpoint.url().to_owned(),
            limit: ReplyLimit::Bytes(REPLY_LIMIT),
        }
    );
    // The configs listing, read as a stream, is bounded config by config
    // and outside them: an endless padding ends at once.
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
    assert!(started.elapsed() < timeout, "took {:?}", started.elapsed());
    // Without the bound this process read 256 MiB and more (3.7 GB was
    // seen from a hostile endpoint).
    let peak = peak_rss_bytes();
    assert!(peak < 512 * 1024 * 1024, "peak RSS {peak} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_of_millions_of_empty_objects_is_refused_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    // 6 MB of JSON that bollard would decode into 2 million 2 KiB
    // services: 4 GB.
    let endpoint = spawn_daemon(&dir.path().join("objects.sock"), empty_objects(2_000_000));
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(120))
        .await
        .unwrap();
    let e = swarm.service_uses().await.unwrap_err();
    match &e {
        BackendError::TooLarge {
            what,
            endpoint: from,
            limit: ReplyLimit::Objects(_),
        } => {
            assert_eq!(what, "the services");
            assert_eq!(from, endpoint.url());
        }
        other => panic!("expected the object bound, got {other:?}"),
    }
    // The configs listing counts its configs instead.
    let e = swarm.releases().await.unwrap_err();
    assert_eq!(
        e,
        BackendError::Invalid {
            what: "release records".into(),
            message: format!("the listing holds more than {MAX_CONFIGS} configs"),
        }
    );
    let peak = peak_rss_bytes();
    assert!(peak < 512 * 1024 * 1024, "peak RSS {peak} bytes");
}

/// A release record's config as a daemon lists it, its data `data`.
fn record(release: &str, revision: u64, data: &[u8]) -> String {
    use base64::Engine as _;
    serde_json::json!({
        "ID": format!("id-{release}-{revision}"),
        "Version": {"Index": revision + 10},
        "Spec": {
            "Name": format!("swarmcli.release.{release}.v{revision}"),
            "Labels": {
                TYPE: RECORD_TYPE,
                RELEASE: release,
                REVISION: revision.to_string(),
                OWNER: format!("cd/default/app:release/{release}"),
            },
            "Data": base64::engine::general_purpose::STANDARD.encode(data),
        }
    })
    .to_string()
}

/// The data of revision `revision` of `release` as the engine writes it:
/// gzip of its YAML document, declaring service `web`.
fn engine_data(release: &str, revision: u64) -> Vec<u8> {
    use std::io::Write;
    let yaml = format!(
        "release: {release}\nrevision: {revision}\nnamespace: {release}\n\
         owner: cd/default/app:release/{release}\n\
         manifest: |\n  services:\n    web:\n      image: busybox\n"
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(yaml.as_bytes()).unwrap();
    gz.finish().unwrap()
}

/// Swarm holds at most 500 KiB of data in a config: a swarm with hundreds
/// of releases lists far more than one reply may hold, as their records'
/// data is in the listing. It is read all the same, one record at a time
/// within its own bound: the data of the releases asked for is read, the
/// rest streams past, and one record too large to be a config's is
/// unreadable alone, its labels read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_records_listing_far_over_the_reply_limit_is_read_record_by_record() {
    let dir = tempfile::tempdir().unwrap();
    let full = vec![0x5a; 500 * 1024];
    let count = 2 * REPLY_LIMIT / (full.len() as u64) + 1;
    let head = format!(
        "[{},{},{}",
        record("web", 1, &engine_data("web", 1)),
        record("web", 2, &vec![0x1f; DATA_LIMIT]),
        record("web", 3, &engine_data("web", 3)),
    );
    // The other releases' records, 500 KiB each and read by their labels.
    let item = format!(",{}", record("bulk", 1, &full));
    let listing = Reply::repeated(head, item, count, "]");
    let endpoint = spawn_daemon(&dir.path().join("records.sock"), listing);
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(120))
        .await
        .unwrap();
    let releases = swarm
        .releases_with_payloads(&PayloadScope::of(["web"]))
        .await
        .unwrap();
    let names: Vec<&str> = releases.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["bulk", "web"]);
    let bulk = &releases[0];
    assert_eq!(bulk.records.as_ref().map(Vec::len), Some(count as usize));
    let revisions = bulk.revisions.as_deref().unwrap();
    assert_eq!(revisions.len(), count as usize);
    assert!(revisions.iter().all(|r| r.payload.is_none()));

    let web = &releases[1];
    assert_eq!(web.owner.as_deref(), Some("cd/default/app:release/web"));
    let revisions = web.revisions.as_deref().unwrap();
    let read: Vec<(&str, Option<&str>)> = revisions
        .iter()
        .map(|r| (r.name.as_str(), r.revision.as_deref()))
        .collect();
    assert_eq!(
        read,
        [
            ("swarmcli.release.web.v1", Some("1")),
            ("swarmcli.release.web.v2", Some("2")),
            ("swarmcli.release.web.v3", Some("3")),
        ]
    );
    for (revision, number) in [(&revisions[0], 1), (&revisions[2], 3)] {
        match &revision.payload {
            Some(Payload::Read(document)) => {
                assert_eq!(
                    (document.release.as_str(), document.revision),
                    ("web", number)
                );
                assert!(document.declares.contains(Kind::Service, "web_web"));
            }
            other => panic!("revision {number}: {other:?}"),
        }
    }
    assert_eq!(
        revisions[1].payload,
        Some(Payload::Unreadable(format!(
            "its data is more than {DATA_LIMIT} bytes of base64, more than a config holds, and was not read"
        )))
    );
    let peak = peak_rss_bytes();
    assert!(peak < 512 * 1024 * 1024, "peak RSS {peak} bytes");
}

/// A listing cut off, or one that is not JSON, is an error naming the
/// listing, never a shorter answer.
#[tokio::test]
async fn a_records_listing_cut_off_or_garbled_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let whole = format!("[{}]", record("web", 1, b"x"));
    let cut = &whole[..whole.len() / 2];
    let cases = [
        (
            Reply::json(cut),
            "the listing ends after 0 whole configs, before the array does",
        ),
        (Reply::json("[{}] [{}]"), "the listing is followed by '['"),
        (
            Reply::json("<html>"),
            "the listing is not a JSON array: it starts with '<'",
        ),
        (
            Reply::json(format!("[{},{{\"ID\":7}}]", record("web", 1, b"x"))),
            "config #2 cannot be read: invalid type: integer `7`, expected a string",
        ),
    ];
    for (i, (reply, message)) in cases.into_iter().enumerate() {
        let endpoint = spawn_daemon(&dir.path().join(format!("d{i}.sock")), reply);
        let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(30))
            .await
            .unwrap();
        for scope in [PayloadScope::none(), PayloadScope::of(["web"])] {
            assert_eq!(
                swarm.releases_with_payloads(&scope).await.unwrap_err(),
                BackendError::Invalid {
                    what: "release records".into(),
                    message: message.into(),
                },
                "{i}"
            );
        }
    }
}
