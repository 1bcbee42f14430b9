//! Container events against the real Docker 20.10 engines of the test bed
//! (`tests/testbed/bed`): what a node's daemon reports when a stack's task
//! container goes, and what it does not report.
//!
//! Each test uses names of its own and removes what it created, also when
//! it fails. Waits are bounded, and only ever wait for something to happen.

use std::time::{Duration, Instant};

use crate::bed;

use bed::{bed, docker, docker_raw, sock, unique, IMAGE};
use futures::StreamExt;
use sweep_docker::labels::STACK_NAMESPACE;
use sweep_docker::{DockerNode, Endpoint, FileRegistry};
use sweep_swarms::{ContainerEvents, ContainerGone, NodeBackend, Registry, StackPart, Target};

/// How long anything the tests wait for may take; never reached when all
/// is well.
const BOUND: Duration = Duration::from_secs(90);

/// Removes the service `name` through `node` when the test ends, however
/// it ends.
struct RemoveService<'a> {
    node: &'a str,
    name: String,
}

impl Drop for RemoveService<'_> {
    fn drop(&mut self) {
        let _ = docker_raw(self.node, &["service", "rm", &self.name], None);
    }
}

/// Runs a short-lived container on `node` (removed when it exits), with
/// the stack namespace label `namespace` when given.
fn run_container(node: &str, namespace: Option<&str>) {
    let label = namespace.map(|ns| format!("{STACK_NAMESPACE}={ns}"));
    let mut args = vec!["run", "--rm", "--pull", "never", "--network", "none"];
    if let Some(label) = &label {
        args.extend(["--label", label]);
    }
    args.extend([IMAGE, "true"]);
    docker(node, &args);
}

/// Every namespace these tests label containers with starts with it.
const OURS: &str = "evt";

/// The next event of these tests' containers within `limit`; `None` when
/// none came. Events of other tests' containers are skipped: the crate's
/// tests share one process and the bed, and theirs go on the same nodes.
/// One without a namespace is not skipped: no such container is ever to
/// be reported.
async fn next_within(events: &mut ContainerEvents, limit: Duration) -> Option<ContainerGone> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, events.next()).await {
            Err(_) => return None,
            Ok(Some(Ok(gone)))
                if !gone.namespace.is_empty() && !gone.namespace.starts_with(OURS) => {}
            Ok(Some(Ok(gone))) => return Some(gone),
            Ok(other) => panic!("the subscription broke: {other:?}"),
        }
    }
}

/// Waits until `events` is live: a daemon reports only what happens after
/// the subscription reached it, and the request goes out when the stream
/// is first polled. Runs labelled probe containers until one is reported;
/// the namespaces used are returned, to be ignored later.
async fn until_live(node: &str, events: &mut ContainerEvents) -> Vec<String> {
    let deadline = Instant::now() + BOUND;
    let mut probes = Vec::new();
    loop {
        assert!(
            Instant::now() < deadline,
            "the subscription never went live"
        );
        let probe = unique("evtprobe");
        probes.push(probe.clone());
        // Polled first, so the request is out before the container runs.
        let _ = next_within(events, Duration::from_millis(50)).await;
        run_container(node, Some(&probe));
        if let Some(gone) = next_within(events, Duration::from_secs(5)).await {
            assert!(
                probes.contains(&gone.namespace),
                "an event before anything went: {gone:?}"
            );
            return probes;
        }
    }
}

#[tokio::test]
async fn a_removed_service_is_reported_by_the_node_that_ran_its_task() {
    let manager = "alpha-1";
    let worker = "alpha-2";
    let worker_id = docker(worker, &["info", "--format", "{{.Swarm.NodeID}}"]);
    assert!(!worker_id.is_empty(), "{worker} is in a swarm");
    let release = unique("evt");
    let service = format!("{release}_web");
    let _cleanup = RemoveService {
        node: manager,
        name: service.clone(),
    };
    let label = format!("{STACK_NAMESPACE}={release}");
    let constraint = format!("node.id=={worker_id}");
    docker(
        manager,
        &[
            "service",
            "create",
            "--detach",
            "--name",
            &service,
            "--label",
            &label,
            "--container-label",
            &label,
            "--constraint",
            &constraint,
            "--stop-grace-period",
            "1s",
            IMAGE,
            "sleep",
            "3600",
        ],
    );
    // Its task's container runs on the worker.
    let deadline = Instant::now() + BOUND;
    let filter = format!("label={label}");
    while docker(worker, &["ps", "-q", "--filter", &filter]).is_empty() {
        assert!(Instant::now() < deadline, "the task never started");
        std::thread::sleep(Duration::from_millis(250));
    }

    let endpoint = Endpoint::parse(&sock(worker), None).unwrap();
    let node = DockerNode::connect(&endpoint, Duration::from_secs(10))
        .await
        .unwrap();
    let mut events = node.container_events().await.unwrap();
    let probes = until_live(worker, &mut events).await;

    // A container without the label: nothing. The labelled one after it
    // is reported first, so the first must not have been.
    run_container(worker, None);
    let marker = unique("evtmark");
    run_container(worker, Some(&marker));

    let registry = FileRegistry::load(bed()).unwrap();
    let alpha = registry.backend(&Target::new("alpha")).await.unwrap();
    bed::remove_part(&*alpha, &release, StackPart::Services)
        .await
        .unwrap();

    // Two reports of the task's container: it died, then it was destroyed
    // (only then are the volumes it mounted free).
    let mut seen = Vec::new();
    let deadline = Instant::now() + BOUND;
    while seen.iter().filter(|ns| **ns == release).count() < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        let gone = next_within(&mut events, left)
            .await
            .unwrap_or_else(|| panic!("no event for {release}; saw {seen:?}"));
        if !probes.contains(&gone.namespace) {
            seen.push(gone.namespace);
        }
    }
    assert_eq!(seen.first(), Some(&marker), "{seen:?}");
    assert!(
        seen.iter().all(|ns| *ns == marker || *ns == release),
        "only labelled containers are reported: {seen:?}"
    );
    // The last report came once it was gone: the daemon no longer has it.
    assert!(docker(worker, &["ps", "-aq", "--filter", &filter]).is_empty());
}

#[tokio::test]
async fn the_manager_reports_its_own_containers() {
    let manager = "alpha-1";
    let registry = FileRegistry::load(bed()).unwrap();
    let alpha = registry.backend(&Target::new("alpha")).await.unwrap();
    let mut events = alpha.container_events().await.unwrap();
    let probes = until_live(manager, &mut events).await;
    let marker = unique("evtmark");
    run_container(manager, Some(&marker));
    let deadline = Instant::now() + BOUND;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let gone = next_within(&mut events, left)
            .await
            .expect("the marker is reported");
        if gone.namespace == marker {
            break;
        }
        assert!(probes.contains(&gone.namespace), "{gone:?}");
    }
}
