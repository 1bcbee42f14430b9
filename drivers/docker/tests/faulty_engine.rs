//! Fault schedules of the runner tests, run against real Docker engines:
//! `sweep_testkit::Faulty` wraps the [`FileRegistry`] of the project's test
//! bed (`tests/testbed/bed`), so a fault the model tests inject lands on
//! the docker backend's own code path instead of the model's.
//!
//! The bed is brought up first (idempotent); these tests only read it, so
//! they run next to the other users of the bed.

use crate::bed;

use bed::bed;
use sweep_core::{AppSet, Policy};
use sweep_docker::FileRegistry;
use sweep_runner::{gather, GatherSettings};
use sweep_swarms::{BackendError, Node, Registry, RegistryError, Target};
use sweep_testkit::{Call, Effect, Fault, Faulty};

/// beta is a two-node swarm. A fault on one node's connection makes gather
/// report that node as not reached, while beta itself stays readable (its
/// releases, cluster id and node list come from the manager) and its other
/// node is still reached.
#[tokio::test]
async fn a_fault_on_one_beta_node_leaves_it_unreached_and_beta_readable() {
    let faulty = Faulty::new(FileRegistry::load(bed()).unwrap_or_else(|e| panic!("{e}")));
    let beta = Target::new("beta");

    // Which nodes the bed reaches without faults.
    let before = faulty
        .inner()
        .as_node_reach()
        .expect("the bed configures node endpoints")
        .nodes(&beta)
        .await
        .unwrap()
        .expect("beta has node endpoints");
    assert_eq!(before.len(), 2, "beta's two nodes answer: {before:?}");
    // The worker if it is named so, else any: faulting a node's own
    // connection never touches the manager's backend.
    let victim = before
        .iter()
        .find(|n| n.hostname == "beta-2")
        .unwrap_or(&before[before.len() - 1])
        .clone();

    faulty.inject(
        Fault::new(
            "beta",
            Call::Connect,
            Effect::Fail(BackendError::Unreachable {
                endpoint: format!("node {}", victim.display_name()),
                message: "connection refused (injected)".into(),
            }),
        )
        .on_node(victim.id.clone()),
    );

    let snapshot = gather(
        &faulty,
        Policy::new("faulty-engine", true, None),
        AppSet::new(true, Vec::new()),
        GatherSettings::default(),
    )
    .await;
    let swarm = snapshot
        .swarms
        .iter()
        .find(|s| s.swarm.as_str() == "beta")
        .expect("beta is gathered");
    assert_eq!(swarm.error, None, "beta stays readable");
    let manager = faulty.inner().backend(&beta).await.unwrap();
    assert_eq!(
        swarm.cluster_id.as_deref(),
        Some(manager.cluster_id().await.unwrap().as_str())
    );
    let reached: Vec<&str> = swarm
        .nodes
        .iter()
        .flatten()
        .map(|n| n.id.as_str())
        .collect();
    let others: Vec<&str> = before
        .iter()
        .filter(|n| n.id != victim.id)
        .map(|n| n.id.as_str())
        .collect();
    assert_eq!(reached, others, "all but {victim:?} reached");
    assert_eq!(swarm.node_count, Some(2));
    // The manager still lists it, with its hostname: the plan can name it.
    let members = swarm.members.as_ref().expect("beta's node list is read");
    assert!(
        members
            .iter()
            .any(|m| m.id == victim.id && !m.hostname.is_empty()),
        "{members:?}"
    );

    let hit = faulty.injected();
    assert!(
        hit.iter().any(|i| i.swarm == "beta"
            && i.call == Call::Connect
            && i.node.as_deref() == Some(victim.id.as_str())),
        "{hit:?}"
    );
    // The node's own backend is refused as well, the other one is not.
    let reach = faulty.as_node_reach().expect("node reach is passed on");
    assert!(matches!(
        reach.node_backend(&beta, &victim).await,
        Err(RegistryError::Connect { .. })
    ));
    let other = Node::new(others[0], "");
    assert!(reach.node_backend(&beta, &other).await.is_ok());
}
