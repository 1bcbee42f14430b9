//! Which records' data gathering reads: every record is read as a
//! revision by its labels, and what its data says only for the releases
//! the resource rule will examine, those that live applications which
//! opted in declare on the swarm, with the rule on. Against the in-memory
//! registry (with faults), which reads payloads as the docker backend
//! does.

use std::time::Duration;

use sweep_core::record::{record_name, Payload};
use sweep_core::{AppSet, AppState, Application, Policy, ReleaseEntry, Snapshot, SwarmSnapshot};
use sweep_runner::{gather, GatherSettings};
use sweep_swarms::{BackendError, Registry};
use sweep_testkit::engine_record::EngineRecord;
use sweep_testkit::{
    Call, Effect, Fault, Faulty, MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm,
};

fn stamp(app: &str, release: &str) -> String {
    format!("cd/default/{app}:release/{release}")
}

/// Revision `revision` of `release`, stamped for `app`, as the engine
/// writes it.
fn record(app: &str, release: &str, revision: u64) -> MemoryRecord {
    let owner = stamp(app, release);
    let record = EngineRecord::new(release, revision).with_owner(Some(&owner));
    MemoryRecord::new(release, revision, Some(&owner))
        .with_id(record.name())
        .with_data(record.payload())
}

/// `web` (two revisions, shop's), `blog` (news's) and `gone` (old's), each
/// with a stack.
fn swarm(name: &str, cluster: &str) -> MemorySwarm {
    MemorySwarm::new(name, cluster)
        .node(MemoryNode::new(format!("{name}-n0"), "mgr"))
        .record(record("shop", "web", 1))
        .record(record("shop", "web", 2))
        .record(record("news", "blog", 1))
        .record(record("old", "gone", 1))
        .stack("web", MemoryStack::new().service("web_web"))
        .stack("blog", MemoryStack::new().service("blog_web"))
}

fn opted_in(name: &str, swarm: &str, releases: &[&str]) -> Application {
    Application::reconciled(name, swarm, releases).with_prune_resources(true)
}

async fn gather_with(registry: &dyn Registry, prune: bool, apps: Vec<Application>) -> Snapshot {
    gather(
        registry,
        Policy::new("default", false, None).with_prune_resources(prune),
        AppSet::new(true, apps),
        GatherSettings::new(Duration::from_secs(15)),
    )
    .await
}

fn swarm_of<'a>(snapshot: &'a Snapshot, name: &str) -> &'a SwarmSnapshot {
    snapshot
        .swarms
        .iter()
        .find(|s| s.swarm.as_str() == name)
        .unwrap_or_else(|| panic!("{name} not gathered"))
}

fn release<'a>(swarm: &'a SwarmSnapshot, name: &str) -> &'a ReleaseEntry {
    swarm
        .releases
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no release {name:?} in {:?}", swarm.releases))
}

/// Each revision of `name` on `swarm`: its name, and whether its data was
/// read and said what its record's name says.
fn read(swarm: &SwarmSnapshot, name: &str) -> Vec<(String, Option<bool>)> {
    release(swarm, name)
        .revisions
        .as_deref()
        .unwrap_or_else(|| panic!("{name}: no revisions"))
        .iter()
        .map(|r| {
            let read = r.payload.as_ref().map(|p| match p {
                Payload::Read(document) => {
                    record_name(&document.release, document.revision) == r.name
                }
                other => panic!("{}: {other:?}", r.name),
            });
            (r.name.clone(), read)
        })
        .collect()
}

fn releases_calls(registry: &MemoryRegistry, swarm: &str) -> usize {
    registry
        .events()
        .iter()
        .filter(|e| e.swarm == swarm && e.node.is_none() && e.op == Call::Releases)
        .count()
}

#[tokio::test]
async fn payloads_are_read_for_the_releases_of_opted_in_live_applications_only() {
    let registry = MemoryRegistry::new()
        .with_swarm(swarm("alpha", "A"))
        .with_swarm(swarm("beta", "B"));
    let apps = vec![
        opted_in("shop", "alpha", &["web"]),
        // Not opted in.
        Application::reconciled("news", "alpha", &["blog"]),
        // Opted in, but gone from the app set.
        Application::new(
            "old",
            "alpha",
            Some(vec!["gone".into()]),
            AppState::Draining,
        )
        .with_prune_resources(true),
        // Opted in on another swarm: `blog` there, not here.
        opted_in("news2", "beta", &["blog"]),
    ];
    let snapshot = gather_with(&registry, true, apps.clone()).await;
    let alpha = swarm_of(&snapshot, "alpha");
    assert_eq!(
        read(alpha, "web"),
        [
            (record_name("web", 1), Some(true)),
            (record_name("web", 2), Some(true)),
        ]
    );
    assert_eq!(read(alpha, "blog"), [(record_name("blog", 1), None)]);
    assert_eq!(read(alpha, "gone"), [(record_name("gone", 1), None)]);
    let beta = swarm_of(&snapshot, "beta");
    assert_eq!(read(beta, "blog"), [(record_name("blog", 1), Some(true))]);
    assert_eq!(read(beta, "web")[0].1, None);
    // One listing per swarm: nothing read twice.
    assert_eq!(
        (
            releases_calls(&registry, "alpha"),
            releases_calls(&registry, "beta")
        ),
        (1, 1)
    );

    // With the rule off, no data at all, whoever opted in; the labels of
    // every record all the same.
    registry.clear_events();
    let snapshot = gather_with(&registry, false, apps).await;
    for swarm in &snapshot.swarms {
        for entry in &swarm.releases {
            let revisions = entry.revisions.as_deref().unwrap_or_default();
            assert!(!revisions.is_empty(), "{}: no revisions", entry.name);
            assert!(
                revisions.iter().all(|r| r.payload.is_none()),
                "{}: data read with the rule off",
                entry.name
            );
        }
    }
    assert_eq!(
        (
            releases_calls(&registry, "alpha"),
            releases_calls(&registry, "beta")
        ),
        (1, 1)
    );
}

/// One cluster under two names: the application names one of them, and
/// the other reads the same payloads (a second read of its records), so
/// that the planner sees the release alike under both. A name of another
/// cluster does not.
#[tokio::test]
async fn every_name_of_a_cluster_reads_the_payloads_any_of_its_names_is_asked_for() {
    let registry = MemoryRegistry::new()
        .with_swarm(swarm("alpha", "A"))
        .with_swarm(swarm("alpha-2", "A"))
        .with_swarm(swarm("beta", "B"));
    let apps = vec![opted_in("shop", "alpha-2", &["web"])];
    let snapshot = gather_with(&registry, true, apps.clone()).await;
    let read_web = |name: &str| read(swarm_of(&snapshot, name), "web");
    let both = [
        (record_name("web", 1), Some(true)),
        (record_name("web", 2), Some(true)),
    ];
    assert_eq!(read_web("alpha-2"), both);
    assert_eq!(read_web("alpha"), both);
    assert_eq!(
        release(swarm_of(&snapshot, "alpha"), "web").revisions,
        release(swarm_of(&snapshot, "alpha-2"), "web").revisions
    );
    assert!(read_web("beta").iter().all(|(_, read)| read.is_none()));
    assert_eq!(
        (
            releases_calls(&registry, "alpha"),
            releases_calls(&registry, "alpha-2"),
            releases_calls(&registry, "beta"),
        ),
        (2, 1, 1)
    );

    // The second read failing leaves the first standing, payloads unread:
    // the swarm stays readable, and the planner holds what its names saw
    // differently.
    let faulty = Faulty::new(registry.clone());
    faulty.inject(
        Fault::new(
            "alpha",
            Call::Releases,
            Effect::Fail(BackendError::Other {
                message: "boom".into(),
            }),
        )
        .after(1),
    );
    let snapshot = gather_with(&faulty, true, apps).await;
    let alpha = swarm_of(&snapshot, "alpha");
    assert_eq!(alpha.why_unreadable(), None);
    assert!(alpha.failed_reads.is_empty(), "{:?}", alpha.failed_reads);
    assert!(read(alpha, "web").iter().all(|(_, read)| read.is_none()));
    assert_eq!(read(swarm_of(&snapshot, "alpha-2"), "web"), both);
}
