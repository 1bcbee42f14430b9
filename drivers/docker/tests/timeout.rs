//! Timeouts and the API version against fake daemons on unix sockets
//! (no Docker engine needed).

use std::path::Path;
use std::time::{Duration, Instant};

use sweep_docker::{DockerSwarm, Endpoint, FileRegistry};
use sweep_swarms::{BackendError, Node, Registry, SwarmBackend, Target};
use sweep_testkit::fake_daemon::{FakeDaemon, Reply, Routes};

/// A daemon that answers `/version` like Docker 20.10 (when
/// `answer_version`) and never answers anything else, holding the
/// connection open and silent; it records the requests it was sent.
fn spawn_daemon(socket: &Path, answer_version: bool) -> FakeDaemon {
    let routes = if answer_version {
        Routes::new().on("/_ping", Reply::silent())
    } else {
        Routes::none()
    };
    let daemon = FakeDaemon::new(routes.otherwise(Reply::silent()));
    daemon.listen_unix(socket);
    daemon
}

/// Connecting sends nothing (requests go out under the pinned API
/// version), so a silent daemon is found out by the first call, within
/// its timeout, directly and through a registry alike.
#[tokio::test]
async fn a_silent_daemon_times_out_on_the_first_call() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("silent.sock");
    let seen = spawn_daemon(&socket, false);
    let endpoint = Endpoint::parse(&format!("unix://{}", socket.display()), None).unwrap();
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(1))
        .await
        .unwrap();
    assert!(seen.requests().is_empty(), "connecting sends nothing");
    let started = Instant::now();
    let timed_out = BackendError::Timeout {
        endpoint: endpoint.url().to_owned(),
        after: Duration::from_secs(1),
    };
    assert_eq!(swarm.cluster_id().await, Err(timed_out.clone()));
    assert!(started.elapsed() < Duration::from_secs(5));

    let file = dir.path().join("registry.toml");
    std::fs::write(
        &file,
        format!(
            "timeout_secs = 1\n[[swarm]]\nname = \"slow\"\nmanager = \"{}\"\n",
            endpoint.url()
        ),
    )
    .unwrap();
    let registry = FileRegistry::load(&file).unwrap();
    let backend = registry.backend(&Target::new("slow")).await.unwrap();
    let started = Instant::now();
    assert_eq!(backend.cluster_id().await, Err(timed_out));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn the_pinned_version_is_used_and_every_call_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("old.sock");
    let seen = spawn_daemon(&socket, true);
    let endpoint = Endpoint::parse(&format!("unix://{}", socket.display()), None).unwrap();
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(swarm.api_version(), "1.41");

    let started = Instant::now();
    assert_eq!(
        swarm.releases().await,
        Err(BackendError::Timeout {
            endpoint: endpoint.url().to_owned(),
            after: Duration::from_secs(1)
        })
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(
        swarm.remove_volume("v1").await,
        Err(BackendError::Timeout { .. })
    ));

    let paths: Vec<String> = seen.requests().into_iter().map(|r| r.path).collect();
    let configs = paths
        .iter()
        .find(|p| p.contains("/configs"))
        .unwrap_or_else(|| panic!("no configs request in {paths:?}"));
    // A 20.10 daemon refuses requests made with a newer API version.
    assert!(configs.starts_with("/v1.41/configs"), "{configs}");
}

/// A manager that lists itself and `w1`, and never answers anything but
/// its version, node list and information.
fn manager_routes() -> Routes {
    Routes::new()
        .on("/_ping", Reply::silent())
        .otherwise(Reply::silent())
        .on(
            "/nodes",
            Reply::json(r#"[{"ID":"mgr-id","Description":{"Hostname":"mgr"}},{"ID":"w1-id","Description":{"Hostname":"w1"}}]"#),
        )
        .on("/info", Reply::json(r#"{"Name":"mgr","Swarm":{"NodeID":"mgr-id"}}"#))
}

/// Answers the version just inside the per-call timeout, then never again.
fn slow_node_routes() -> Routes {
    Routes::none().otherwise(Reply::silent()).on(
        "/version",
        Reply::json(sweep_testkit::fake_daemon::VERSION_REPLY).after(Duration::from_millis(1500)),
    )
}

/// A node daemon that answers the version slowly and its info never is
/// probed within one per-call timeout as a whole (before: one for the
/// version, then one more for the info), and the nodes that answered are
/// returned without it; the registry says how long listing nodes can take,
/// so that a caller can wait longer than that.
#[tokio::test]
async fn a_node_probe_is_bounded_as_a_whole_and_the_answers_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let manager = dir.path().join("mgr.sock");
    let slow = dir.path().join("slow.sock");
    FakeDaemon::new(manager_routes()).listen_unix(&manager);
    FakeDaemon::new(slow_node_routes()).listen_unix(&slow);
    let file = dir.path().join("registry.toml");
    std::fs::write(
        &file,
        format!(
            "timeout_secs = 2\n[[swarm]]\nname = \"alpha\"\nmanager = \"unix://{m}\"\n\
             [[swarm.node]]\nendpoint = \"unix://{m}\"\n[[swarm.node]]\nendpoint = \"unix://{s}\"\n",
            m = manager.display(),
            s = slow.display()
        ),
    )
    .unwrap();
    let registry = FileRegistry::load(&file).unwrap();
    let reach = registry.as_node_reach().unwrap();
    let alpha = Target::new("alpha");
    // Connecting to the manager, then its node list, with the probes
    // running meanwhile.
    assert_eq!(reach.nodes_time_limit(), Some(Duration::from_secs(4)));
    // The manager (listed once, though configured twice) and the slow node,
    // each with the connection its client may still keep.
    assert_eq!(reach.nodes_connections(&alpha), 4);

    let started = Instant::now();
    let nodes = reach.nodes(&alpha).await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(nodes, Some(vec![Node::new("mgr-id", "mgr")]));
    // One per-call timeout (2 s) for the whole probe; one per step was 3.5 s.
    assert!(elapsed < Duration::from_millis(3000), "{elapsed:?}");
}
