//! Gathering through the docker registry from fake daemons on unix sockets:
//! a slow or silent daemon costs only itself. No Docker engine needed.

use crate::support;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::{registry_file, spawn, three_node_swarms, Daemon, Fleet};
use sweep_core::{plan, AppSet, Application, NodeEntry, Policy, Snapshot, SwarmSnapshot};
use sweep_docker::FileRegistry;
use sweep_runner::{gather, GatherSettings};

fn apps() -> AppSet {
    AppSet::new(true, vec![Application::reconciled("keep", "alpha", &[])])
}

fn swarm<'a>(snapshot: &'a Snapshot, name: &str) -> &'a SwarmSnapshot {
    snapshot
        .swarms
        .iter()
        .find(|s| s.swarm.as_str() == name)
        .unwrap_or_else(|| panic!("no swarm {name:?} in {snapshot:?}"))
}

/// A manager that answers (its node list a little slowly, as a busy
/// manager's does) and one node daemon that accepts and never answers, with
/// gathering waiting no longer for a call than the registry does: the
/// manager's node is still reached, the silent one is not, and the swarm is
/// read. Before, gathering's bound on node listing started first and fired
/// first, and the whole swarm reached no node at all.
#[tokio::test]
async fn a_silent_node_costs_only_itself_when_gather_waits_as_long_as_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::default();
    let manager = spawn(
        dir.path(),
        "mgr",
        Daemon::manager(
            "mgr-id",
            "alpha-mgr",
            "cluster-a",
            &[("mgr-id", "alpha-mgr"), ("w1-id", "alpha-w1")],
        )
        .slow_node_list(Duration::from_millis(300)),
        &fleet,
    );
    let silent = spawn(dir.path(), "w1", Daemon::Silent, &fleet);
    let file = registry_file(
        dir.path(),
        1,
        &[("alpha".into(), manager.clone(), vec![manager, silent])],
    );
    let registry = FileRegistry::load(&file).unwrap();

    let started = Instant::now();
    let snapshot = gather(
        &registry,
        Policy::new("default", true, None),
        apps(),
        GatherSettings::new(Duration::from_secs(1)),
    )
    .await;
    let elapsed = started.elapsed();

    let alpha = swarm(&snapshot, "alpha");
    assert_eq!(alpha.error, None);
    assert_eq!(alpha.cluster_id.as_deref(), Some("cluster-a"));
    assert_eq!(
        alpha.nodes,
        Some(vec![NodeEntry::new("mgr-id", "alpha-mgr")])
    );
    assert_eq!(alpha.node_count, Some(2));
    // One probe timeout after the node list, not one per step.
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");

    // The node not reached is named, not only counted.
    let plan = plan(&snapshot).unwrap();
    let uncovered = plan
        .uncovered
        .iter()
        .find(|u| u.swarm.as_str() == "alpha")
        .expect("alpha is not fully covered");
    assert_eq!(uncovered.unreached, Some(vec!["alpha-w1".to_owned()]));
    assert_eq!(uncovered.reached, ["alpha-mgr"]);
}

/// Many swarms, each answering slowly enough that their reads overlap:
/// gathering never has more connections open at once than its budget
/// (before, it read every swarm at once: at 200 swarms, past the common
/// limit of 1024 open files, node probes failed and nodes went missing).
#[tokio::test]
async fn connections_open_at_once_stay_within_the_gather_budget() {
    const SWARMS: usize = 12;
    // Each swarm: ten manager reads at once (four of them the stack object
    // kinds), then the manager and two nodes probed at once.
    const PER_SWARM: usize = 10 + 3;
    const BUDGET: usize = 2 * PER_SWARM;

    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::default();
    let swarms = three_node_swarms(dir.path(), SWARMS, Duration::from_millis(100), &fleet);
    let registry = FileRegistry::load(registry_file(dir.path(), 10, &swarms)).unwrap();

    let snapshot = gather(
        &registry,
        Policy::new("default", true, None),
        apps(),
        GatherSettings::new(Duration::from_secs(10)).with_max_connections(BUDGET),
    )
    .await;

    for i in 0..SWARMS {
        let s = swarm(&snapshot, &format!("s{i}"));
        assert_eq!(s.error, None, "s{i}");
        assert_eq!(
            s.nodes.as_ref().map(Vec::len),
            Some(3),
            "s{i}: {:?}",
            s.nodes
        );
    }
    // A connection the client has closed is noticed here a moment later,
    // so the next swarm's may overlap the last one's briefly: at most one
    // swarm's worth. Unbounded, all twelve swarms' reads were open at once.
    let peak = fleet.connections().peak();
    assert!(
        peak <= BUDGET + PER_SWARM,
        "{peak} connections open at once"
    );
}

/// A shared buffer for captured log lines.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(
            &self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
        .into_owned()
    }
}

/// Every configured node endpoint that could not be checked is named at
/// warn level with the reason: no socket, no answer, a daemon of another
/// swarm. Before, they were left out with a debug line only.
#[tokio::test]
async fn a_node_that_could_not_be_checked_is_named_at_warn_level() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // With a single subscriber registered in the process, tracing decides
    // whether a log statement is wanted by asking the subscriber of the
    // thread that reaches it first, once for all threads: another test
    // reaching the same warning first (on a thread with no subscriber)
    // would silence it here. A second one registered makes tracing ask
    // every subscriber instead.
    let _second = tracing::Dispatch::new(tracing_subscriber::registry());
    // The test runtime runs every task on this thread.
    let _guard = tracing::subscriber::set_default(subscriber);

    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::default();
    let manager = spawn(
        dir.path(),
        "mgr",
        Daemon::manager(
            "mgr-id",
            "alpha-mgr",
            "cluster-a",
            &[
                ("mgr-id", "alpha-mgr"),
                ("w1-id", "alpha-w1"),
                ("w2-id", "alpha-w2"),
            ],
        ),
        &fleet,
    );
    let silent = spawn(dir.path(), "silent", Daemon::Silent, &fleet);
    let stranger = spawn(
        dir.path(),
        "stranger",
        Daemon::node("other-swarm-node", "elsewhere"),
        &fleet,
    );
    let missing = format!("unix://{}", dir.path().join("missing.sock").display());
    let file = registry_file(
        dir.path(),
        1,
        &[(
            "alpha".into(),
            manager.clone(),
            vec![manager, silent.clone(), stranger.clone(), missing.clone()],
        )],
    );
    let registry = FileRegistry::load(&file).unwrap();
    let snapshot = gather(
        &registry,
        Policy::new("default", true, None),
        apps(),
        GatherSettings::new(Duration::from_secs(1)),
    )
    .await;

    // Reached nodes and "no node reach" stay apart: the manager is reached.
    // The stranger answered as a node of its own swarm: the snapshot says
    // so, and only the manager counts.
    let alpha = swarm(&snapshot, "alpha");
    assert_eq!(
        alpha.nodes,
        Some(vec![
            NodeEntry::new("mgr-id", "alpha-mgr"),
            NodeEntry::new("other-swarm-node", "elsewhere"),
        ])
    );
    assert_eq!(
        alpha.reached_nodes().as_deref(),
        Some(&[NodeEntry::new("mgr-id", "alpha-mgr")][..])
    );
    assert!(
        alpha
            .unread_nodes
            .iter()
            .any(|u| u.id == "other-swarm-node"),
        "its volumes are not read: {:?}",
        alpha.unread_nodes
    );
    assert!(
        !alpha.has_unread_node(),
        "and that costs this swarm nothing"
    );

    let logs = captured.text();
    let line = |endpoint: &str| {
        logs.lines()
            .find(|l| l.contains(endpoint))
            .unwrap_or_else(|| panic!("nothing logged about {endpoint}:\n{logs}"))
            .to_owned()
    };
    for endpoint in [&silent, &stranger, &missing] {
        let l = line(endpoint);
        assert!(l.contains("WARN"), "{l}");
        assert!(l.contains("alpha"), "{l}");
        assert!(l.contains("not reached"), "{l}");
    }
    assert!(line(&silent).contains("within 1s"), "{}", line(&silent));
    assert!(
        line(&stranger).contains("not in the manager's node list"),
        "{}",
        line(&stranger)
    );
    assert!(line(&missing).contains("reason="), "{}", line(&missing));
}
