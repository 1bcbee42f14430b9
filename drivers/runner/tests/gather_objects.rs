//! What gathering attaches to each release, against the in-memory registry
//! with faults: record versions, the stack's objects (services with their
//! keep labels) and its volumes per node; and what a failed read of them
//! costs. The service list is evidence for sparing a release, so losing it
//! makes the swarm unreadable; a node whose volumes cannot be listed is
//! only left out of the volumes.

use std::time::Duration;

use sweep_core::reads::Listing;
use sweep_core::{
    AppSet, Application, NodeVolumes, ObjectVersion, Policy, ReleaseEntry, ServiceEntry, Snapshot,
    StackObjects, SwarmSnapshot,
};
use sweep_runner::{gather, GatherSettings};
use sweep_swarms::{BackendError, ObjectRef, Registry};
use sweep_testkit::{
    Call, Effect, Fault, Faulty, MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm,
};

fn boom() -> BackendError {
    BackendError::Other {
        message: "boom".into(),
    }
}

/// Three nodes (`n0` the manager); `web` has two record revisions, a kept
/// service, a network, a secret, a config, and volumes on `n0` and `n1`;
/// `gone` has a record and volumes on `n2` but no stack objects left;
/// `loose` has a stack but no records, so it is no release.
fn swarm() -> MemorySwarm {
    MemorySwarm::new("alpha", "A")
        .node(MemoryNode::new("n0", "mgr").volume("web_data", Some("web")))
        .node(
            MemoryNode::new("n1", "w1")
                .volume("web_data", Some("web"))
                .volume("web_cache", Some("web"))
                .volume("loose_data", Some("loose")),
        )
        .node(
            MemoryNode::new("n2", "w2")
                .volume("gone_data", Some("gone"))
                .volume("plain", None),
        )
        .record(MemoryRecord::new("web", 1, Some("cd/default/shop:release/web")).with_version(4))
        .record(MemoryRecord::new("web", 2, Some("cd/default/shop:release/web")).with_version(9))
        .record(MemoryRecord::new(
            "gone",
            1,
            Some("cd/default/old:release/gone"),
        ))
        .stack(
            "web",
            MemoryStack::new()
                .kept_service("web_app", "true")
                .service("web_db")
                .network("web_front")
                .secret("web_tok")
                .config("web_conf"),
        )
        .stack("loose", MemoryStack::new().service("loose_app"))
}

async fn gather_alpha(registry: &dyn Registry) -> SwarmSnapshot {
    let snapshot: Snapshot = gather(
        registry,
        Policy::new("default", true, None),
        AppSet::new(
            true,
            vec![Application::reconciled("shop", "alpha", &["web"])],
        ),
        GatherSettings::new(Duration::from_secs(15)),
    )
    .await;
    assert_eq!(snapshot.swarms.len(), 1);
    snapshot.swarms.into_iter().next().unwrap()
}

fn release<'a>(swarm: &'a SwarmSnapshot, name: &str) -> &'a ReleaseEntry {
    swarm
        .releases
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no release {name:?} in {:?}", swarm.releases))
}

fn web_objects(volumes: Option<Vec<NodeVolumes>>) -> StackObjects {
    let objects = StackObjects::new(
        vec![
            ServiceEntry::new("svc-web_app", "web_app", 1).with_keep("true"),
            ServiceEntry::new("svc-web_db", "web_db", 1),
        ],
        vec![ObjectRef::new("networks-web_front", "web_front")],
        vec![ObjectRef::new("secrets-web_tok", "web_tok").with_version(1)],
        vec![ObjectRef::new("configs-web_conf", "web_conf").with_version(1)],
    );
    match volumes {
        Some(v) => objects.with_volumes(v).sorted(),
        None => objects.sorted(),
    }
}

fn on(node: &str, volumes: &[&str]) -> NodeVolumes {
    NodeVolumes::new(node, volumes.iter().map(|v| (*v).to_owned()).collect())
}

#[tokio::test]
async fn releases_carry_their_record_versions_objects_and_volumes_on_every_node() {
    let registry = MemoryRegistry::new().with_swarm(swarm());
    let alpha = gather_alpha(&registry).await;
    assert_eq!(alpha.error, None);
    let names: Vec<&str> = alpha.releases.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        ["gone", "web"],
        "a stack without records is no release"
    );

    let web = release(&alpha, "web");
    assert_eq!(
        web.records,
        Some(vec![
            ObjectVersion::new("swarmcli.release.web.v1", 4),
            ObjectVersion::new("swarmcli.release.web.v2", 9)
        ])
    );
    assert_eq!(
        web.objects,
        Some(web_objects(Some(vec![
            on("n0", &["web_data"]),
            on("n1", &["web_cache", "web_data"]),
            // Listed, holding none of them: an empty list, not left out.
            on("n2", &[]),
        ])))
    );

    // Its records outlive its stack: the objects say there is none left.
    let gone = release(&alpha, "gone");
    assert_eq!(
        gone.records,
        Some(vec![ObjectVersion::new("swarmcli.release.gone.v1", 1)])
    );
    assert_eq!(
        gone.objects,
        Some(StackObjects::default().with_volumes(vec![
            on("n0", &[]),
            on("n1", &[]),
            on("n2", &["gone_data"]),
        ]))
    );
    // A gathered snapshot is one the planner takes.
    let snapshot = Snapshot::new(
        Policy::new("default", true, None),
        AppSet::new(
            true,
            vec![Application::reconciled("shop", "alpha", &["web"])],
        ),
        vec![alpha],
    );
    sweep_core::plan(&snapshot).expect("a gathered snapshot is valid");
}

#[tokio::test]
async fn a_restamped_record_and_an_updated_service_show_new_versions() {
    let registry = MemoryRegistry::new().with_swarm(swarm());
    registry
        .restamp_record(
            "alpha",
            "swarmcli.release.web.v2",
            Some("cd/default/shop:release/web"),
        )
        .unwrap();
    registry
        .update_service("alpha", "web", "web_db", Some("yes"))
        .unwrap();
    let alpha = gather_alpha(&registry).await;
    let web = release(&alpha, "web");
    assert!(web
        .records
        .as_ref()
        .unwrap()
        .contains(&ObjectVersion::new("swarmcli.release.web.v2", 10)));
    let services = &web.objects.as_ref().unwrap().services;
    assert!(
        services.contains(&ServiceEntry::new("svc-web_db", "web_db", 2).with_keep("yes")),
        "{services:?}"
    );
}

/// The service list is what a keep label is read from: losing it (an
/// error, or no answer in time) is recorded, and the planner's rule makes
/// the swarm unreadable, named so, exactly as losing the release records
/// does. Gathering itself judges nothing: what did read is there.
#[tokio::test(start_paused = true)]
async fn a_failed_stack_object_listing_makes_the_swarm_unreadable() {
    for effect in [Effect::Fail(boom()), Effect::Hang] {
        let registry = Faulty::new(MemoryRegistry::new().with_swarm(swarm()));
        registry.inject(Fault::new("alpha", Call::StackObjects, effect.clone()));
        let alpha = gather_alpha(&registry).await;
        let failed: Vec<Listing> = alpha.failed_reads.iter().map(|f| f.listing).collect();
        // The records, the stack objects and the services are read in one
        // round under one bound: a listing that never ends cuts off all three.
        let expected: &[Listing] = match effect {
            Effect::Hang => &[Listing::Releases, Listing::StackObjects, Listing::Services],
            _ => &[Listing::StackObjects],
        };
        assert_eq!(failed, expected, "{effect:?}");
        assert_eq!(alpha.error, None, "{effect:?}");
        let why = alpha.why_unreadable().unwrap_or_default().into_owned();
        assert!(why.contains("stack_objects: "), "{effect:?}: {why:?}");
        assert!(
            alpha.releases.iter().all(|r| r.objects.is_none()),
            "{effect:?}: {alpha:?}"
        );
    }
}

/// A node whose volume or container listing fails (or hangs) is left out
/// of every release's volumes, and only that node, and counts as not
/// reached: a volume there, or a workload there using a volume by name,
/// is unknown, so a purge must not claim to cover it. The others' volumes
/// and containers are there.
#[tokio::test(start_paused = true)]
async fn a_failed_node_volume_listing_leaves_only_that_node_out() {
    for (call, effect) in [
        (Call::VolumesByStack, Effect::Fail(boom())),
        (Call::VolumesByStack, Effect::Hang),
        (Call::Containers, Effect::Fail(boom())),
        (Call::Containers, Effect::Hang),
    ] {
        let registry = Faulty::new(MemoryRegistry::new().with_swarm(swarm()));
        registry.inject(Fault::new("alpha", call, effect.clone()).on_node("n1"));
        let alpha = gather_alpha(&registry).await;
        assert_eq!(alpha.why_unreadable(), None, "{effect:?}");
        // Listed as reached, recorded as unread, and so not reached.
        let listed: Vec<&str> = alpha
            .nodes
            .iter()
            .flatten()
            .map(|n| n.id.as_str())
            .collect();
        assert_eq!(listed, ["n0", "n1", "n2"], "{call:?} {effect:?}");
        let unread: Vec<&str> = alpha.unread_nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(unread, ["n1"], "{call:?} {effect:?}");
        let reached: Vec<String> = alpha
            .reached_nodes()
            .expect("node reach")
            .iter()
            .map(|n| n.id.clone())
            .collect();
        assert_eq!(reached, ["n0", "n2"], "{call:?} {effect:?}");
        let usage = alpha.usage.as_ref().expect("usage read");
        let read: Vec<&str> = usage.containers.iter().map(|n| n.node.as_str()).collect();
        assert_eq!(read, ["n0", "n2"], "{call:?} {effect:?}");
        let web = release(&alpha, "web");
        assert_eq!(
            web.objects,
            Some(web_objects(Some(vec![
                on("n0", &["web_data"]),
                on("n2", &[])
            ]))),
            "{effect:?}"
        );
        let gone = release(&alpha, "gone");
        assert_eq!(
            gone.objects.as_ref().and_then(|o| o.volumes.clone()),
            Some(vec![on("n0", &[]), on("n2", &["gone_data"])]),
            "{effect:?}"
        );
    }
}

/// The manager's own volumes are filed under its own node id; when they
/// cannot be listed (nor its id read) it is left out like any node.
#[tokio::test]
async fn the_manager_s_volumes_count_under_its_own_node_id() {
    let registry = Faulty::new(MemoryRegistry::new().with_swarm(swarm().without_node_reach()));
    let alpha = gather_alpha(&registry).await;
    assert_eq!(alpha.nodes, None);
    assert_eq!(
        release(&alpha, "web").objects,
        Some(web_objects(Some(vec![on("n0", &["web_data"])])))
    );

    for call in [Call::VolumesByStack, Call::OwnNodeId] {
        registry.clear();
        registry.inject(Fault::new("alpha", call, Effect::Fail(boom())));
        let alpha = gather_alpha(&registry).await;
        assert_eq!(alpha.error, None, "{call:?}");
        // No node's volumes were read: none at all, not an empty list.
        assert_eq!(
            release(&alpha, "web").objects,
            Some(web_objects(None)),
            "{call:?}"
        );
    }

    // With node reach, the manager's failed listing is made up for by
    // reading it as a node.
    let registry = Faulty::new(MemoryRegistry::new().with_swarm(swarm()));
    registry.inject(Fault::new(
        "alpha",
        Call::VolumesByStack,
        Effect::Fail(boom()),
    ));
    let alpha = gather_alpha(&registry).await;
    let volumes = release(&alpha, "web")
        .objects
        .as_ref()
        .and_then(|o| o.volumes.clone());
    assert_eq!(
        volumes,
        Some(vec![
            on("n0", &["web_data"]),
            on("n1", &["web_cache", "web_data"]),
            on("n2", &[]),
        ])
    );
}

/// A backend that reads neither record versions nor stack objects (the
/// seam's defaults) gives releases without them: not read is not empty.
#[tokio::test]
async fn a_backend_that_does_not_read_objects_leaves_them_out() {
    let registry = MemoryRegistry::new().with_swarm(swarm().without_object_reads());
    let alpha = gather_alpha(&registry).await;
    assert_eq!(alpha.error, None);
    assert_eq!(alpha.releases.len(), 2);
    for r in &alpha.releases {
        assert_eq!(r.records, None, "{r:?}");
        assert_eq!(r.objects, None, "{r:?}");
    }
}

/// What uses what is read with the swarm: every service (the stacks' own
/// and one made by hand at 0 replicas) with what it names, and each
/// reached node's containers using volumes, stopped ones included; the
/// plan then keeps what the hand-made service and the container use.
#[tokio::test]
async fn services_and_containers_are_read_and_spare_what_they_use() {
    let hand = sweep_swarms::ServiceUse::new("u1", "byhand").with_volumes(["gone_data"]);
    let stopped = sweep_swarms::ContainerUse::new("c1", "backup", ["gone_cache"]);
    let swarm = MemorySwarm::new("alpha", "A")
        .node(MemoryNode::new("n0", "mgr").volume("gone_data", Some("gone")))
        .node(
            MemoryNode::new("n1", "w1")
                .volume("gone_cache", Some("gone"))
                .container(stopped.clone()),
        )
        .record(MemoryRecord::new(
            "gone",
            1,
            Some("cd/default/old:release/gone"),
        ))
        .stack(
            "gone",
            MemoryStack::new().service("gone_app").network("gone_net"),
        )
        .workload(hand.clone());
    let registry = MemoryRegistry::new().with_swarm(swarm);
    let alpha = gather_alpha(&registry).await;
    let usage = alpha.usage.as_ref().expect("usage read");
    let names: Vec<&str> = usage.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["gone_app", "byhand"]);
    assert_eq!(usage.containers.len(), 2);
    assert_eq!(usage.containers[1].containers, [stopped]);

    let apps = AppSet::new(true, vec![Application::reconciled("keep", "alpha", &[])]);
    let snapshot = Snapshot::new(Policy::new("default", true, None), apps, vec![alpha]);
    let plan = sweep_core::plan(&snapshot).unwrap();
    let d = &plan.deletions[0];
    let kept: Vec<(&str, &str)> = d
        .in_use_by
        .iter()
        .map(|u| (u.object.as_str(), u.user.name.as_str()))
        .collect();
    assert_eq!(kept, [("gone_cache", "backup"), ("gone_data", "byhand")]);
    let removed = d.objects.as_ref().and_then(|o| o.volumes.clone()).unwrap();
    assert!(removed.iter().all(|n| n.volumes.is_empty()), "{removed:?}");
}

/// Without every service's spec nothing proves an object unused: a swarm
/// whose services cannot be listed is not read at all.
#[tokio::test(start_paused = true)]
async fn a_failed_service_listing_makes_the_swarm_unreadable() {
    for effect in [Effect::Fail(boom()), Effect::Hang] {
        let registry = Faulty::new(MemoryRegistry::new().with_swarm(swarm()));
        registry.inject(Fault::new("alpha", Call::ServiceUses, effect.clone()));
        let alpha = gather_alpha(&registry).await;
        let why = alpha.why_unreadable().unwrap_or_default().into_owned();
        assert!(why.contains("services: "), "{effect:?}: {why:?}");
        assert_eq!(alpha.usage, None, "{effect:?}");
    }
}
