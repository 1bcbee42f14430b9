//! A live release's dropped objects through gather, plan and execute,
//! against the in-memory registry: exactly what its revisions prove
//! dropped goes, services first and the rest once their tasks stopped;
//! its current objects and its records stay; a revision deployed between
//! the plan and the sweep stops it.

use std::time::Duration;

use sweep_core::sweep::{ReleaseOutcome, Settings, StampChange};
use sweep_core::{plan, AppSet, Application, Policy, SweepPlan};
use sweep_runner::{execute, gather, ExecuteSettings, GatherSettings};
use sweep_testkit::engine_record::{EngineRecord, Manifest};
use sweep_testkit::{MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm};

const IMAGE: &str = "busybox";

fn stamp() -> String {
    "cd/default/shop:release/web".to_owned()
}

/// Revision `revision` of `web`, stamped for shop, declaring `manifest`.
fn record(revision: u64, manifest: &Manifest) -> MemoryRecord {
    let record = EngineRecord::new("web", revision)
        .with_owner(Some(&stamp()))
        .with_manifest(manifest.render());
    MemoryRecord::new("web", revision, Some(&stamp()))
        .with_id(record.name())
        .with_data(record.payload())
}

/// `web` at revision 2, which dropped `worker`, config `conf2` and network
/// `back` from revision 1; its stack still holds all of revision 1.
fn registry() -> MemoryRegistry {
    let one = Manifest::new(IMAGE)
        .service("app")
        .service("worker")
        .network("back")
        .config("conf2");
    let two = Manifest::new(IMAGE).service("app");
    let stack = MemoryStack::new()
        .service_using("web_app", &["web_default"])
        .service_using("web_worker", &["web_back", "web_conf2"])
        .network("web_default")
        .network("web_back")
        .marked_config("web_conf2", "2026-12-01T08:00:00Z");
    MemoryRegistry::new().with_swarm(
        MemorySwarm::new("alpha", "cluster-a")
            .node(MemoryNode::new("a1", "alpha-1"))
            .record(record(1, &one))
            .record(record(2, &two))
            .stack("web", stack),
    )
}

fn apps() -> AppSet {
    AppSet::new(
        true,
        vec![Application::reconciled("shop", "alpha", &["web"]).with_prune_resources(true)],
    )
}

async fn gather_plan(registry: &MemoryRegistry) -> SweepPlan {
    let snapshot = gather(
        registry,
        Policy::new("default", false, None).with_prune_resources(true),
        apps(),
        GatherSettings::default(),
    )
    .await;
    plan(&snapshot).expect("a gathered snapshot is valid")
}

fn settings() -> ExecuteSettings {
    ExecuteSettings::new(
        Settings::new(Duration::from_millis(10), Duration::from_secs(5)),
        4,
        Duration::from_secs(60),
    )
}

#[tokio::test]
async fn exactly_what_the_revisions_prove_dropped_goes() {
    let registry = registry();
    let plan = gather_plan(&registry).await;
    let dropped: Vec<&str> = plan.dropped[0]
        .objects
        .iter()
        .map(|o| o.name.as_str())
        .collect();
    // Revision 2's manifest still declares app and the default network.
    assert_eq!(
        dropped,
        ["web_worker", "web_back", "web_conf2"],
        "{plan:#?}"
    );

    let report = execute(&registry, &plan, settings()).await;
    assert_eq!(
        report.dropped[0].outcome,
        ReleaseOutcome::Deleted,
        "{report:#?}"
    );
    let left = registry.stack("alpha", "web").expect("the stack stays");
    assert_eq!(left.services.into_iter().collect::<Vec<_>>(), ["web_app"]);
    assert_eq!(
        left.networks.into_iter().collect::<Vec<_>>(),
        ["web_default"]
    );
    assert!(left.configs.is_empty());
    assert_eq!(registry.records("alpha").len(), 2, "the records stay");
    assert!(report.all_done());
}

#[tokio::test]
async fn a_revision_deployed_since_the_plan_stops_the_removal() {
    let registry = registry();
    let plan = gather_plan(&registry).await;
    // Revision 3 brings worker back before the sweep runs.
    let three = Manifest::new(IMAGE)
        .service("app")
        .service("worker")
        .network("back")
        .config("conf2");
    registry.add_record("alpha", record(3, &three)).unwrap();

    let report = execute(&registry, &plan, settings()).await;
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::Failed);
    assert_eq!(d.errors[0].stamp, Some(StampChange::RevisionChanged));
    let left = registry.stack("alpha", "web").unwrap();
    assert!(left.services.contains("web_worker"), "nothing was removed");
    assert!(left.networks.contains("web_back"));
}
