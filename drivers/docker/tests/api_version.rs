//! Requests go out under a pinned API version with no round trip before
//! them, and a daemon that refuses it, in either direction, is answered
//! under a version it speaks; a 400 about anything else stays the caller's
//! to read. Fake daemons on unix sockets, which refuse versions as the
//! engine does (no Docker engine needed).

use std::time::Duration;

use sweep_docker::{DockerNode, DockerSwarm, Endpoint};
use sweep_swarms::{BackendError, NodeBackend, SwarmBackend};
use sweep_testkit::fake_daemon::{swarm_manager, FakeDaemon, Reply, Routes};

/// A manager of cluster `c1` speaking API versions `oldest` to `newest`,
/// every reply `delay` late.
fn manager(oldest: &str, newest: &str, delay: Duration) -> Routes {
    swarm_manager("n1", "host-1", "c1", &[], Duration::ZERO)
        .speaking(oldest, newest)
        .delayed(delay)
}

fn listen(dir: &tempfile::TempDir, routes: Routes) -> (FakeDaemon, Endpoint) {
    let daemon = FakeDaemon::new(routes);
    let endpoint = Endpoint::parse(&daemon.listen_unix(&dir.path().join("d.sock")), None).unwrap();
    (daemon, endpoint)
}

/// The paths the daemon was sent, in order, version and query included.
fn paths(daemon: &FakeDaemon) -> Vec<String> {
    daemon
        .requests()
        .into_iter()
        .map(|r| r.path.split('?').next().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn the_first_request_is_the_first_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (daemon, endpoint) = listen(&dir, manager("1.12", "1.41", Duration::ZERO));
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(10))
        .await
        .unwrap();
    assert!(daemon.requests().is_empty(), "connecting sends nothing");
    assert_eq!(swarm.cluster_id().await.unwrap(), "c1");
    assert_eq!(paths(&daemon), ["/v1.41/swarm"]);
    assert_eq!(swarm.api_version(), "1.41");
}

#[tokio::test]
async fn a_daemon_that_finds_the_pinned_version_too_old_is_answered_under_its_newest() {
    // Docker 29 speaks 1.44 at least.
    let dir = tempfile::tempdir().unwrap();
    let (daemon, endpoint) = listen(&dir, manager("1.44", "1.52", Duration::ZERO));
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(swarm.cluster_id().await.unwrap(), "c1");
    assert_eq!(paths(&daemon), ["/v1.41/swarm", "/version", "/v1.52/swarm"]);
    assert_eq!(swarm.api_version(), "1.52");
    // Settled once: the next request goes out under it at once.
    assert_eq!(swarm.node_count().await.unwrap(), 0);
    assert_eq!(paths(&daemon)[3..], ["/v1.52/nodes"]);
}

#[tokio::test]
async fn a_daemon_that_finds_the_pinned_version_too_new_is_answered_under_its_newest() {
    // An engine older than 20.10 (19.03 speaks 1.40 at most).
    let dir = tempfile::tempdir().unwrap();
    let (daemon, endpoint) = listen(&dir, manager("1.12", "1.40", Duration::ZERO));
    let node = DockerNode::connect(&endpoint, Duration::from_secs(10))
        .await
        .unwrap();
    let found = node.swarm_node().await.unwrap().unwrap();
    assert_eq!(found.id, "n1");
    assert_eq!(paths(&daemon), ["/v1.41/info", "/version", "/v1.40/info"]);
    assert_eq!(node.api_version(), "1.40");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_refused_at_once_ask_the_daemon_once() {
    let dir = tempfile::tempdir().unwrap();
    let (daemon, endpoint) = listen(&dir, manager("1.44", "1.52", Duration::from_millis(50)));
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(10))
        .await
        .unwrap();
    let (cluster, nodes, members, stacks) = tokio::join!(
        swarm.cluster_id(),
        swarm.node_count(),
        swarm.members(),
        swarm.stack_objects(),
    );
    assert_eq!(cluster.unwrap(), "c1");
    assert_eq!(nodes.unwrap(), 0);
    assert!(members.unwrap().is_empty());
    assert!(stacks.unwrap().is_some_and(|s| s.is_empty()));
    let sent = paths(&daemon);
    assert_eq!(
        sent.iter().filter(|p| *p == "/version").count(),
        1,
        "{sent:?}"
    );
    // Each refused request went out again under the daemon's version, and
    // nothing else did.
    let refused = sent.iter().filter(|p| p.starts_with("/v1.41/")).count();
    let again = sent.iter().filter(|p| p.starts_with("/v1.52/")).count();
    assert!(refused > 0, "{sent:?}");
    assert_eq!(refused, again, "{sent:?}");
}

#[tokio::test]
async fn a_400_about_the_request_itself_reaches_the_caller_as_it_came() {
    let dir = tempfile::tempdir().unwrap();
    let routes = manager("1.12", "1.41", Duration::ZERO).on_method(
        "DELETE",
        "/volumes/app_data",
        Reply::status(400, r#"{"message":"remove app_data: invalid"}"#),
    );
    let (daemon, endpoint) = listen(&dir, routes);
    let node = DockerNode::connect(&endpoint, Duration::from_secs(10))
        .await
        .unwrap();
    let e = node.remove_volume("app_data").await.unwrap_err();
    assert!(
        matches!(&e, BackendError::Refused { status: 400, message, .. } if message == "remove app_data: invalid"),
        "the daemon's own answer: {e:?}"
    );
    // The daemon's range is asked to tell the two 400s apart; the
    // request is not sent again.
    assert_eq!(paths(&daemon), ["/v1.41/volumes/app_data", "/version"]);
    assert_eq!(node.api_version(), "1.41");
}

#[tokio::test]
async fn a_daemon_speaking_nothing_this_client_does_is_refused_with_its_own_words() {
    let dir = tempfile::tempdir().unwrap();
    let (daemon, endpoint) = listen(&dir, manager("1.60", "1.61", Duration::ZERO));
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(10))
        .await
        .unwrap();
    let e = swarm.cluster_id().await.unwrap_err();
    assert!(
        matches!(&e, BackendError::Refused { status: 400, message, .. } if message.contains("too old")),
        "{e:?}"
    );
    assert_eq!(paths(&daemon), ["/v1.41/swarm", "/version"]);
    assert_eq!(swarm.api_version(), "1.41");
}
