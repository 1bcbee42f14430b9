//! Gathering under a low open-file limit. A test binary of its own: it
//! lowers the process's limit, which would starve tests running beside it.

#![cfg(target_os = "linux")]

mod support;

use std::time::Duration;

use support::{registry_file, three_node_swarms, Fleet};
use sweep_core::{AppSet, Application, Policy};
use sweep_docker::FileRegistry;
use sweep_runner::{gather, open_file_limit, raise_open_file_limit, GatherSettings};

fn open_files() -> u64 {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64)
}

fn set_soft_limit(limit: u64) {
    let now = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: Some(limit),
            maximum: now.maximum,
        },
    )
    .expect("lower the soft open-file limit");
}

/// Thirty swarms of three daemons under a soft limit that fits the
/// daemons' sockets and the budget with room to spare, but not every read
/// at once: with its connections bounded, gathering reaches every node of
/// every swarm. Unbounded (as before), the reads ran out of descriptors:
/// "Too many open files", and nodes silently went missing.
///
/// The fake daemons live in this process, so each connection costs two
/// descriptors here (both ends); the limit is set with that in mind.
#[tokio::test]
async fn a_low_open_file_limit_loses_no_node_once_connections_are_bounded() {
    const SWARMS: usize = 30;
    const BUDGET: usize = 28;

    let dir = tempfile::tempdir().unwrap();
    let fleet = Fleet::default();
    let swarms = three_node_swarms(dir.path(), SWARMS, Duration::from_millis(50), &fleet);
    let registry = FileRegistry::load(registry_file(dir.path(), 10, &swarms)).unwrap();

    // What is open now (the daemons' listening sockets included), both
    // ends of every budgeted connection, and some room; far less than both
    // ends of all 30 swarms' thirteen connections at once.
    let before = open_file_limit();
    let limit = open_files() + 2 * BUDGET as u64 + 40;
    assert!(limit < open_files() + 2 * (SWARMS as u64) * 13);
    set_soft_limit(limit);

    let snapshot = gather(
        &registry,
        Policy::new("default", true, None),
        AppSet::new(true, vec![Application::reconciled("keep", "s0", &[])]),
        GatherSettings::new(Duration::from_secs(10)).with_max_connections(BUDGET),
    )
    .await;

    let raised = raise_open_file_limit();
    for s in &snapshot.swarms {
        assert_eq!(s.error, None, "{}", s.swarm.as_str());
        assert_eq!(
            s.nodes.as_ref().map(Vec::len),
            Some(3),
            "{}: {:?}",
            s.swarm.as_str(),
            s.nodes
        );
    }
    assert_eq!(snapshot.swarms.len(), SWARMS);
    // The limit lowered for the test is raised again, at least to where it was.
    let raised = raised.expect("raise the soft limit again");
    assert!(Some(raised) >= before, "{raised} < {before:?}");
}
