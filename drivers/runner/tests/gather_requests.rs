//! What gathering asks each daemon, counted by fake daemons on unix
//! sockets (the benchmark's too). No Docker engine
//! needed, and nothing here is timed: the wall time is the benchmark's to
//! measure (`cargo bench -p sweep-runner --bench gather`).

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use support::{registry, registry_file_with_records, Fleet, NODES};
use sweep_core::record::{record_name, Payload};
use sweep_core::{AppSet, Application, Policy};
use sweep_docker::FileRegistry;
use sweep_runner::{gather, GatherSettings};

const SWARMS: usize = 3;

/// Every daemon is asked each thing once, and all of it at once: the
/// manager its configs (the release records and the stacks' configs in one
/// listing), services (the stacks' and every other), networks, secrets,
/// cluster id, node list, info, volumes and containers; every other node
/// its info, volumes and containers. No daemon is asked for its API
/// version first, and once a swarm is read none of its connections stays
/// open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_daemon_is_asked_each_thing_once_over_kept_connections() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::default();
    // A delay, so that the reads of one swarm that could share a request
    // are in flight together, as against real daemons.
    let registry = registry(dir.path(), SWARMS, Duration::from_millis(100), &fleet);

    let snapshot = gather(
        &registry,
        Policy::new("default", true, None),
        AppSet::new(true, vec![Application::reconciled("keep", "s0", &[])]),
        GatherSettings::new(Duration::from_secs(30)),
    )
    .await;

    for swarm in &snapshot.swarms {
        let name = swarm.swarm.as_str();
        assert_eq!(swarm.error, None, "{name}");
        assert_eq!(swarm.node_count, Some(NODES as u64), "{name}");
        assert_eq!(
            swarm.nodes.as_ref().map(Vec::len),
            Some(NODES),
            "{name}: {:?}",
            swarm.nodes
        );
    }
    assert_eq!(snapshot.swarms.len(), SWARMS);

    let mut asked: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
    for ((daemon, path), n) in fleet.requests() {
        asked.entry(daemon).or_default().push((path, n));
    }
    let once = |paths: &[&str]| -> Vec<(String, usize)> {
        let mut v: Vec<(String, usize)> = paths.iter().map(|p| ((*p).to_owned(), 1)).collect();
        v.sort();
        v
    };
    let manager = once(&[
        "/configs",
        "/containers/json",
        "/info",
        "/networks",
        "/nodes",
        "/secrets",
        "/services",
        "/swarm",
        "/volumes",
    ]);
    let node = once(&["/containers/json", "/info", "/volumes"]);
    assert_eq!(asked.len(), SWARMS * NODES, "{asked:?}");
    for (daemon, paths) in &asked {
        let expected = if daemon.ends_with("-n0") {
            &manager
        } else {
            &node
        };
        assert_eq!(paths, expected, "{daemon}");
    }

    // Every request of a swarm goes out at once, each over a connection of
    // its own, and no more connections than requests are opened.
    for (daemon, accepted) in fleet.accepted() {
        let most = if daemon.ends_with("-n0") { 9 } else { 3 };
        assert!(accepted <= most, "{daemon}: {accepted} connections");
    }

    // Kept connections are closed once their swarm is read: the client
    // closes them as gathering returns, the daemons notice a moment later.
    let mut waited = Duration::ZERO;
    while fleet.connections().open() > 0 && waited < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += Duration::from_millis(20);
    }
    assert_eq!(
        fleet.connections().open(),
        0,
        "connections left open after gathering"
    );
}

/// The resource rule reads records' data out of the listing that is read
/// anyway: with it on, every daemon is asked what it is asked with it off,
/// no more. The data read is that of the releases whose application opted
/// in on that swarm, and each reads as the engine wrote it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resource_rule_reads_records_data_without_a_request_more() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::default();
    let file = registry_file_with_records(dir.path(), 2, Duration::from_millis(20), &fleet, 4, 2);
    let apps = vec![
        Application::reconciled("app-0", "s0", &["r0", "r1"]).with_prune_resources(true),
        Application::reconciled("app-1", "s1", &["r0", "r1", "r2", "r3"]),
    ];
    let mut asked = Vec::new();
    for prune in [false, true] {
        let registry = FileRegistry::load(&file).unwrap();
        let before = fleet.requests();
        let snapshot = gather(
            &registry,
            Policy::new("default", false, None).with_prune_resources(prune),
            AppSet::new(true, apps.clone()),
            GatherSettings::new(Duration::from_secs(30)),
        )
        .await;
        let mut requests = fleet.requests();
        for (key, n) in before {
            *requests.entry(key).or_default() -= n;
        }
        asked.push(requests);

        for swarm in &snapshot.swarms {
            assert_eq!(swarm.error, None, "{}", swarm.swarm);
            assert_eq!(swarm.releases.len(), 4, "{}", swarm.swarm);
            for release in &swarm.releases {
                let revisions = release.revisions.as_deref().unwrap_or_default();
                let names: Vec<&str> = revisions.iter().map(|r| r.name.as_str()).collect();
                assert_eq!(
                    names,
                    [record_name(&release.name, 1), record_name(&release.name, 2)]
                );
                let in_scope = prune
                    && swarm.swarm.as_str() == "s0"
                    && ["r0", "r1"].contains(&release.name.as_str());
                for revision in revisions {
                    match &revision.payload {
                        Some(Payload::Read(document)) if in_scope => {
                            assert_eq!(document.release, release.name);
                            assert_eq!(
                                record_name(&document.release, document.revision),
                                revision.name
                            );
                        }
                        None if !in_scope => {}
                        other => panic!("{}/{}: {other:?}", swarm.swarm, revision.name),
                    }
                }
            }
        }
    }
    assert_eq!(asked[0], asked[1]);
}

/// A daemon that refuses the pinned API version (Docker 29 speaks 1.44 at
/// least) is asked for its range once, on the first gather; the version
/// settled on stays with the registry, so `watch`, whose registry lives
/// across sweeps, sends every later request under it at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_settled_on_is_kept_for_every_later_gather() {
    use sweep_testkit::fake_daemon::{swarm_manager, FakeDaemon};

    let dir = tempfile::tempdir().unwrap();
    let members = [("n1".to_owned(), "host-1".to_owned())];
    let routes = swarm_manager("n1", "host-1", "c1", &members, Duration::ZERO)
        .speaking("1.44", "1.52")
        .delayed(Duration::from_millis(20));
    let daemon = FakeDaemon::new(routes);
    let endpoint = daemon.listen_unix(&dir.path().join("new.sock"));
    let file = dir.path().join("registry.toml");
    std::fs::write(
        &file,
        format!("[[swarm]]\nname = \"s0\"\nmanager = \"{endpoint}\"\n[[swarm.node]]\nendpoint = \"{endpoint}\"\n"),
    )
    .unwrap();
    let registry = FileRegistry::load(&file).unwrap();
    let apps = AppSet::new(true, vec![Application::reconciled("keep", "s0", &[])]);

    let mut sent_before = 0;
    for round in 0..2 {
        let snapshot = gather(
            &registry,
            Policy::new("default", true, None),
            apps.clone(),
            GatherSettings::new(Duration::from_secs(30)),
        )
        .await;
        let s0 = &snapshot.swarms[0];
        assert_eq!(s0.why_unreadable(), None, "round {round}: {s0:?}");
        assert_eq!(s0.cluster_id.as_deref(), Some("c1"));
        let sent: Vec<String> = daemon.requests()[sent_before..]
            .iter()
            .map(|r| r.path.split('?').next().unwrap_or_default().to_owned())
            .collect();
        sent_before += sent.len();
        let asked = sent.iter().filter(|p| *p == "/version").count();
        let refused = sent.iter().filter(|p| p.starts_with("/v1.41/")).count();
        let settled = sent.iter().filter(|p| p.starts_with("/v1.52/")).count();
        if round == 0 {
            assert_eq!(asked, 1, "{sent:?}");
            // Each refused request once more, and any sent after the
            // daemon was asked straight under the version settled on.
            assert!(refused > 0 && refused <= settled, "{sent:?}");
            assert_eq!(refused + settled + asked, sent.len(), "{sent:?}");
        } else {
            assert_eq!((asked, refused), (0, 0), "{sent:?}");
            assert_eq!(settled, sent.len(), "{sent:?}");
        }
    }
}
