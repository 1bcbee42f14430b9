//! The runner against the in-memory registry: gathering several swarms with
//! node reach and faults, and carrying plans out, asserting on what the
//! model still holds on every node afterwards. Real engines are covered by
//! the end-to-end suite; these cover faults no real swarm makes on demand.

use std::time::Duration;

use sweep_core::sweep::{ErrorKind, ReleaseOutcome, Settings, StampChange, Step};
use sweep_core::{
    plan, AppSet, Application, Coverage, HoldReason, Policy, Snapshot, SwarmName, SweepPlan,
};
use sweep_runner::{execute, gather, ExecuteSettings, GatherSettings};
use sweep_swarms::{BackendError, Registry};
use sweep_testkit::{
    Call, Effect, Fault, Faulty, MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm,
};

fn stamp(app: &str, release: &str) -> Option<&'static str> {
    Some(Box::leak(
        format!("cd/default/{app}:release/{release}").into_boxed_str(),
    ))
}

/// A release with a service, a network and a volume on each listed node.
fn release(swarm: MemorySwarm, name: &str, app: &str) -> MemorySwarm {
    swarm
        .record(MemoryRecord::new(name, 1, stamp(app, name)))
        .stack(
            name,
            MemoryStack::new()
                .service(format!("{name}_svc"))
                .network(format!("{name}_net")),
        )
}

fn three_node(name: &str, cluster: &str, volumes_for: &[&str]) -> MemorySwarm {
    three_node_as(name, name, cluster, volumes_for)
}

/// Three nodes whose ids start with `nodes`: two names of one cluster see
/// the same node ids.
fn three_node_as(name: &str, nodes: &str, cluster: &str, volumes_for: &[&str]) -> MemorySwarm {
    let mut swarm = MemorySwarm::new(name, cluster);
    for (i, host) in ["mgr", "w1", "w2"].iter().enumerate() {
        let mut node = MemoryNode::new(format!("{nodes}-n{i}"), format!("{nodes}-{host}"));
        for r in volumes_for {
            node = node.volume(format!("{r}_data"), Some(r));
        }
        swarm = swarm.node(node);
    }
    swarm
}

fn app_set(apps: &[(&str, &str, &[&str])]) -> AppSet {
    AppSet::new(
        true,
        apps.iter()
            .map(|(name, swarm, releases)| Application::reconciled(name, swarm, releases))
            .collect(),
    )
}

fn fast() -> ExecuteSettings {
    ExecuteSettings::new(
        Settings::new(Duration::from_secs(2), Duration::from_secs(30)),
        4,
        Duration::from_secs(60),
    )
}

async fn gather_plan(registry: &dyn Registry, purge: bool, apps: AppSet) -> (Snapshot, SweepPlan) {
    let snapshot = gather(
        registry,
        Policy::new("default", purge, None),
        apps,
        GatherSettings::default(),
    )
    .await;
    let plan = plan(&snapshot).expect("a gathered snapshot is valid");
    (snapshot, plan)
}

/// Alpha's three nodes, each with a volume of `old`, whose application
/// departed; the plan of a purge, which covers every node.
async fn old_purged_completely() -> (MemoryRegistry, SweepPlan) {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &["old"]),
        "old",
        "gone",
    ));
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    assert_eq!(plan.deletions[0].volumes, Coverage::Complete);
    (registry, plan)
}

fn volumes_left(registry: &MemoryRegistry, swarm: &str, nodes: &[String]) -> Vec<String> {
    nodes
        .iter()
        .flat_map(|n| {
            registry
                .volumes(swarm, n)
                .into_iter()
                .map(move |v| format!("{n}:{}", v.name))
        })
        .collect()
}

fn node_ids(swarm: &str) -> Vec<String> {
    (0..3).map(|i| format!("{swarm}-n{i}")).collect()
}

#[tokio::test(start_paused = true)]
async fn departed_release_goes_from_every_node_and_records_last() {
    let registry = MemoryRegistry::new().with_swarm(release(
        release(three_node("alpha", "A", &["old", "keep"]), "old", "gone"),
        "keep",
        "shop",
    ));
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &["keep"])])).await;
    assert_eq!(plan.deletions.len(), 1);
    assert_eq!(plan.deletions[0].volumes, Coverage::Complete);

    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert_eq!(registry.stacks("alpha"), ["keep"]);
    assert!(registry
        .records("alpha")
        .iter()
        .all(|r| r.release == "keep"));
    let left = volumes_left(&registry, "alpha", &node_ids("alpha"));
    assert_eq!(
        left,
        [
            "alpha-n0:keep_data",
            "alpha-n1:keep_data",
            "alpha-n2:keep_data"
        ]
    );
    assert_eq!(
        report.releases[0].volumes_deleted.len(),
        3,
        "{:?}",
        report.releases[0].volumes_deleted
    );

    // Records are removed after every other removal of the release.
    let events = registry.events();
    let records_at = events
        .iter()
        .position(|e| e.op == Call::RemoveReleaseRecords && e.subject == "old")
        .expect("records removed");
    assert!(events[records_at + 1..]
        .iter()
        .all(|e| !matches!(e.op, Call::RemoveStack | Call::RemoveVolume)));
}

#[tokio::test(start_paused = true)]
async fn colliding_names_on_two_swarms_only_the_undeclared_one_goes() {
    let registry = MemoryRegistry::new()
        .with_swarm(release(three_node("alpha", "A", &["web"]), "web", "shop"))
        .with_swarm(release(
            three_node("beta", "B", &["web"]),
            "web",
            "shop-old",
        ));
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &["web"])])).await;
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases.len(), 1);
    assert_eq!(report.releases[0].swarm.as_str(), "beta");
    assert_eq!(registry.stacks("alpha"), ["web"]);
    assert!(registry.stacks("beta").is_empty());
    assert_eq!(
        volumes_left(&registry, "alpha", &node_ids("alpha")).len(),
        3
    );
    assert!(volumes_left(&registry, "beta", &node_ids("beta")).is_empty());
}

#[tokio::test(start_paused = true)]
async fn unreachable_manager_is_held_and_other_swarms_are_swept() {
    let registry = MemoryRegistry::new()
        .with_swarm(release(three_node("alpha", "A", &[]), "old", "gone"))
        .with_swarm(release(three_node("beta", "B", &[]), "old", "gone"));
    registry.set_manager_unreachable("alpha", true).unwrap();
    let (snapshot, plan) = gather_plan(&registry, false, app_set(&[("shop", "beta", &[])])).await;
    assert!(snapshot
        .swarms
        .iter()
        .any(|s| s.swarm.as_str() == "alpha" && s.why_unreadable().is_some()));
    assert!(plan
        .holds
        .iter()
        .any(|h| h.reason == HoldReason::SwarmUnreadable && h.scope == "alpha"));
    execute(&registry, &plan, fast()).await;
    registry.set_manager_unreachable("alpha", false).unwrap();
    assert_eq!(registry.stacks("alpha"), ["old"]);
    assert!(registry.stacks("beta").is_empty());
}

#[tokio::test(start_paused = true)]
async fn node_not_reached_leaves_records_pending_coverage() {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("gamma", "G", &["old"]),
        "old",
        "gone",
    ));
    registry
        .set_node_reachable("gamma", "gamma-n2", false)
        .unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "gamma", &[])])).await;
    assert_eq!(plan.deletions[0].volumes, Coverage::Partial);
    assert_eq!(plan.uncovered[0].missing, Some(1));

    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::PendingCoverage);
    assert!(registry.stacks("gamma").is_empty(), "the stack goes");
    assert_eq!(registry.records("gamma").len(), 1, "the records stay");
    assert_eq!(
        volumes_left(&registry, "gamma", &node_ids("gamma")),
        ["gamma-n2:old_data"]
    );
    assert_eq!(
        report.uncovered[0].releases[0].label_filter,
        "com.docker.stack.namespace=old"
    );

    // The node comes back: the next sweep finishes the release.
    registry
        .set_node_reachable("gamma", "gamma-n2", true)
        .unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "gamma", &[])])).await;
    assert_eq!(plan.deletions[0].volumes, Coverage::Complete);
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(registry.records("gamma").is_empty());
    assert!(volumes_left(&registry, "gamma", &node_ids("gamma")).is_empty());
}

/// A node listed but not answering when its volumes and containers are
/// read counts as not reached: the plan says so, and the records stay.
#[tokio::test(start_paused = true)]
async fn node_vanishing_after_listing_is_not_reached_and_keeps_records() {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &["old"]),
        "old",
        "gone",
    ));
    registry.vanish_after_listing("alpha", "alpha-n1").unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    assert_eq!(plan.deletions[0].volumes, Coverage::Partial);
    assert_eq!(
        plan.uncovered[0].unreached.as_deref(),
        Some(&["alpha-w1".to_owned()][..])
    );
    let report = execute(&registry, &plan, fast()).await;
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::PendingCoverage);
    assert_eq!(
        registry.records("alpha").len(),
        1,
        "records stay for the next sweep"
    );
    assert_eq!(
        volumes_left(&registry, "alpha", &["alpha-n1".to_owned()]).len(),
        1
    );
}

/// A node reached when planned that cannot be read after the services
/// went: nothing proves a network unused by a container there, nor a
/// volume, so neither goes, on any node, and the records stay.
#[tokio::test(start_paused = true)]
async fn node_vanishing_after_the_plan_fails_the_purge_before_any_volume_goes() {
    let (registry, plan) = old_purged_completely().await;
    registry
        .set_node_reachable("alpha", "alpha-n1", false)
        .unwrap();
    let report = execute(&registry, &plan, fast()).await;
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert!(
        r.errors
            .iter()
            .any(|e| e.action == Step::ReadUsage && e.message.contains("alpha-n1")),
        "{:?}",
        r.errors
    );
    let left = registry.stack("alpha", "old").unwrap_or_default();
    assert!(left.services.is_empty(), "the services went: {left:?}");
    assert!(!left.networks.is_empty(), "the network stays: {left:?}");
    assert!(r.volumes_deleted.is_empty());
    assert_eq!(
        volumes_left(&registry, "alpha", &node_ids("alpha")).len(),
        3
    );
    assert_eq!(
        registry.records("alpha").len(),
        1,
        "records stay for the next sweep"
    );
}

/// A node that joins after the plan, with the release's volume (a global
/// task lands on it at once): the sweep's reads list the swarm's nodes
/// again, so the purge is no longer complete. The volumes on the nodes
/// read go, the new one's stays, and so do the records; the report names
/// the new node.
#[tokio::test(start_paused = true)]
async fn a_node_joined_after_the_plan_keeps_the_records() {
    let (registry, plan) = old_purged_completely().await;
    registry
        .join_node(
            "alpha",
            MemoryNode::new("alpha-n3", "alpha-w3").volume("old_data", Some("old")),
        )
        .unwrap();
    let report = execute(&registry, &plan, fast()).await;
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::PendingCoverage, "{:?}", r.errors);
    assert_eq!(r.coverage, Coverage::Partial);
    assert!(volumes_left(&registry, "alpha", &node_ids("alpha")).is_empty());
    assert_eq!(
        volumes_left(&registry, "alpha", &["alpha-n3".to_owned()]),
        ["alpha-n3:old_data"]
    );
    assert_eq!(registry.records("alpha").len(), 1, "the records stay");
    assert_eq!(report.uncovered.len(), 1, "{:?}", report.uncovered);
    assert_eq!(
        report.uncovered[0].unreached,
        Some(vec!["alpha-n3".to_owned()])
    );
}

#[tokio::test(start_paused = true)]
async fn volume_in_use_is_retried_until_released() {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &["old"]),
        "old",
        "gone",
    ));
    registry
        .volume_in_use("alpha", "alpha-n1", "old_data", 4)
        .unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    let started = tokio::time::Instant::now();
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(
        report.releases[0].outcome,
        ReleaseOutcome::Deleted,
        "{:?}",
        report.releases[0].errors
    );
    assert!(volumes_left(&registry, "alpha", &node_ids("alpha")).is_empty());
    let attempts = registry
        .events()
        .iter()
        .filter(|e| {
            e.op == Call::RemoveVolume
                && e.node.as_deref() == Some("alpha-n1")
                && e.subject == "old_data"
        })
        .count();
    assert_eq!(attempts, 5, "four refusals, then the removal");
    // The services' containers going is an event on each daemon that held
    // the volumes (two here: the node and the manager's own): one landing
    // while the volume waits makes it due at once, and a refusal after it
    // is followed up after 100 ms, then 200, instead of the two-second
    // interval. So at least two of the four retries waited.
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "the retries waited: {:?}",
        started.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn volume_in_use_past_its_deadline_fails_the_release() {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &["old"]),
        "old",
        "gone",
    ));
    registry
        .volume_in_use("alpha", "alpha-n2", "old_data", 1000)
        .unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Failed);
    assert_eq!(registry.records("alpha").len(), 1);
    assert_eq!(
        volumes_left(&registry, "alpha", &node_ids("alpha")),
        ["alpha-n2:old_data"]
    );
}

/// A stop waits for the steps in flight; an abort does not: the sweep ends
/// at once, with a report of what is known to be done (the services went,
/// and say so) and the release's records kept for the next sweep.
#[tokio::test(start_paused = true)]
async fn an_abort_ends_the_sweep_with_a_step_in_flight_and_reports_what_went() {
    let registry = Faulty::new(MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &["old"]),
        "old",
        "gone",
    )));
    for node in node_ids("alpha") {
        registry.inject(Fault::new("alpha", Call::RemoveVolume, Effect::Hang).on_node(node));
    }
    let world = registry.inner();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    let started = tokio::time::Instant::now();
    let stop = tokio::time::sleep(Duration::from_secs(5));
    let abort = tokio::time::sleep(Duration::from_secs(10));
    let swept =
        sweep_runner::execute_traced(&registry, &plan, fast(), &[], stop, abort, |_| {}).await;
    // Not the action timeout (60 s) of the hanging volume removal.
    assert_eq!(started.elapsed(), Duration::from_secs(10));
    let report = swept.report;
    assert_ne!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(world
        .stack("alpha", "old")
        .is_none_or(|s| s.services.is_empty()));
    assert_eq!(world.records("alpha").len(), 1, "the records stay");
    let went: Vec<(String, String)> = report
        .objects
        .iter()
        .filter(|o| o.outcome == sweep_core::sweep::ObjectOutcome::Removed)
        .map(|o| (o.kind.as_str().to_owned(), o.name.clone()))
        .collect();
    assert!(
        went.contains(&("service".to_owned(), "old_svc".to_owned())),
        "{went:?}"
    );
    assert!(!went.iter().any(|(kind, _)| kind == "volume"), "{went:?}");
}

#[tokio::test(start_paused = true)]
async fn stack_removal_that_errors_after_working_is_finished_by_the_next_sweep() {
    let registry = Faulty::new(MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &[]),
        "old",
        "gone",
    )));
    registry.inject(
        Fault::new(
            "alpha",
            Call::RemoveStack,
            Effect::FailAfterEffect(BackendError::Other {
                message: "network old_net: error while removing".into(),
            }),
        )
        .times(1),
    );
    let world = registry.inner();
    let (_, plan) = gather_plan(&registry, false, app_set(&[("shop", "alpha", &[])])).await;
    let report = execute(&registry, &plan, fast()).await;
    // The services went (the answer was lost); the rest waits for them to
    // be known gone, so it stays for now.
    assert!(world
        .stack("alpha", "old")
        .is_some_and(|s| s.services.is_empty() && !s.networks.is_empty()));
    // Its records were never removed and the re-listing still shows it, so
    // the error stands: failed, with its records, for the next sweep.
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Failed);
    assert_eq!(world.records("alpha").len(), 1);
    let (_, plan) = gather_plan(&registry, false, app_set(&[("shop", "alpha", &[])])).await;
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(world.records("alpha").is_empty());
}

#[tokio::test(start_paused = true)]
async fn own_stack_is_never_removed() {
    let registry = MemoryRegistry::new().with_swarm(
        release(three_node("alpha", "A", &[]), "swarm-sweep", "ops").self_stack("swarm-sweep"),
    );
    let (_, plan) = gather_plan(&registry, false, app_set(&[("shop", "alpha", &[])])).await;
    assert!(plan.deletions.is_empty());
    execute(&registry, &plan, fast()).await;
    assert_eq!(registry.stacks("alpha"), ["swarm-sweep"]);
    assert_eq!(registry.records("alpha").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn failed_swarm_listing_touches_nothing() {
    let registry = Faulty::new(MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &[]),
        "old",
        "gone",
    )));
    registry.inject(Fault::new(
        "",
        Call::Swarms,
        Effect::Fail(BackendError::Other {
            message: "registry offline".into(),
        }),
    ));
    let (snapshot, plan) = gather_plan(&registry, false, app_set(&[("shop", "alpha", &[])])).await;
    assert!(snapshot.swarms.iter().all(|s| s.error.is_some()));
    assert!(plan.deletions.is_empty());
    execute(&registry, &plan, fast()).await;
    assert_eq!(registry.inner().stacks("alpha"), ["old"]);
}

#[tokio::test(start_paused = true)]
async fn registry_without_node_reach_purges_the_manager_only_and_says_so() {
    let registry = MemoryRegistry::new().with_swarm(
        release(three_node("alpha", "A", &["old"]), "old", "gone").without_node_reach(),
    );
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    assert_eq!(plan.deletions[0].volumes, Coverage::NodeLocal);
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(
        volumes_left(&registry, "alpha", &node_ids("alpha")),
        ["alpha-n1:old_data", "alpha-n2:old_data"]
    );
    assert_eq!(report.uncovered.len(), 1);
    assert_eq!(report.uncovered[0].missing, Some(2));
}

#[tokio::test(start_paused = true)]
async fn second_sweep_after_a_complete_one_plans_nothing() {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &["old"]),
        "old",
        "gone",
    ));
    let apps = || app_set(&[("shop", "alpha", &[])]);
    let (_, plan1) = gather_plan(&registry, true, apps()).await;
    let report = execute(&registry, &plan1, fast()).await;
    assert!(report.all_done());
    let (_, plan2) = gather_plan(&registry, true, apps()).await;
    assert!(plan2.deletions.is_empty());
    let report = execute(&registry, &plan2, fast()).await;
    assert!(report.releases.is_empty());
}

#[tokio::test(start_paused = true)]
async fn nodes_reached_under_another_name_of_the_cluster_are_purged() {
    // "alpha" and "alpha-nodes" are one cluster; only the second name
    // reaches nodes. The plan uses "alpha", the purge must still find them.
    let registry = MemoryRegistry::new()
        .with_swarm(release(three_node("alpha", "A", &[]), "old", "gone").without_node_reach())
        // The model keeps one state per name: the stack is removed through
        // "alpha", so only the records and volumes are seen here too.
        .with_swarm(
            three_node_as("alpha-nodes", "alpha", "A", &["old"]).record(MemoryRecord::new(
                "old",
                1,
                stamp("gone", "old"),
            )),
        );
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    assert_eq!(plan.deletions.len(), 1, "planned once for the cluster");
    assert_eq!(plan.deletions[0].swarm.as_str(), "alpha");
    assert_eq!(plan.deletions[0].volumes, Coverage::Complete);
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(
        report.releases[0].outcome,
        ReleaseOutcome::Deleted,
        "{:?}",
        report.releases[0].errors
    );
    assert!(volumes_left(&registry, "alpha-nodes", &node_ids("alpha")).is_empty());
}

#[tokio::test(start_paused = true)]
async fn the_node_not_reached_is_named_in_plan_and_report() {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("gamma", "G", &["old"]),
        "old",
        "gone",
    ));
    registry
        .set_node_reachable("gamma", "gamma-n2", false)
        .unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "gamma", &[])])).await;
    // By hostname: the manager's node list (`members`) carries it.
    let unreached = Some(vec!["gamma-w2".to_owned()]);
    assert_eq!(plan.uncovered[0].unreached, unreached);
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.uncovered[0].unreached, unreached);
}

#[tokio::test(start_paused = true)]
async fn release_restamped_after_the_plan_is_left_alone() {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &["old"]),
        "old",
        "gone",
    ));
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    assert_eq!(plan.deletions.len(), 1);
    // Redeployed by another application between the plan and the sweep.
    registry
        .add_record("alpha", MemoryRecord::new("old", 2, stamp("shop", "old")))
        .unwrap();
    let report = execute(&registry, &plan, fast()).await;
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert!(
        r.errors
            .iter()
            .any(|e| e.stamp == Some(StampChange::OtherApplication)),
        "{:?}",
        r.errors
    );
    assert_eq!(registry.stacks("alpha"), ["old"]);
    assert_eq!(registry.records("alpha").len(), 2);
    assert_eq!(
        volumes_left(&registry, "alpha", &node_ids("alpha")).len(),
        3
    );
}

#[tokio::test(start_paused = true)]
async fn one_action_at_a_time_still_retries_and_finishes_every_release() {
    let swarm = release(
        release(three_node("alpha", "A", &["a", "b"]), "a", "gone"),
        "b",
        "gone",
    );
    let registry = MemoryRegistry::new().with_swarm(swarm);
    registry
        .volume_in_use("alpha", "alpha-n1", "a_data", 2)
        .unwrap();
    registry
        .volume_in_use("alpha", "alpha-n2", "b_data", 3)
        .unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    let settings = ExecuteSettings::new(Settings::default(), 1, Duration::from_secs(60));
    let report = execute(&registry, &plan, settings).await;
    assert!(
        report
            .releases
            .iter()
            .all(|r| r.outcome == ReleaseOutcome::Deleted),
        "{report:?}"
    );
    assert!(registry.stacks("alpha").is_empty());
    assert!(registry.records("alpha").is_empty());
    assert!(volumes_left(&registry, "alpha", &node_ids("alpha")).is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_interrupted_sweep_starts_nothing_more_and_keeps_unfinished_records() {
    let swarm = release(
        release(three_node("alpha", "A", &["a", "b"]), "a", "gone"),
        "b",
        "gone",
    );
    let registry = MemoryRegistry::new().with_swarm(swarm);
    registry
        .volume_in_use("alpha", "alpha-n1", "a_data", 1000)
        .unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    let stop = tokio::time::sleep(Duration::from_secs(3));
    let report = sweep_runner::execute_until(&registry, &plan, fast(), stop).await;

    let a = report.releases.iter().find(|r| r.release == "a").unwrap();
    let b = report.releases.iter().find(|r| r.release == "b").unwrap();
    assert_eq!(
        b.outcome,
        ReleaseOutcome::Deleted,
        "finished before the stop"
    );
    assert_eq!(a.outcome, ReleaseOutcome::Failed);
    assert!(
        registry.records("alpha").iter().all(|r| r.release == "a"),
        "a keeps its records"
    );
    assert_eq!(registry.records("alpha").len(), 1);
    // Tried at 0 s and 2 s; the retry due at 4 s came after the stop.
    let attempts = registry
        .events()
        .iter()
        .filter(|e| {
            e.op == Call::RemoveVolume
                && e.subject == "a_data"
                && e.node.as_deref() == Some("alpha-n1")
        })
        .count();
    assert_eq!(attempts, 2);
}

/// `web` was handed from `shop` to `store` by a rename (revision 3 carries
/// `store`'s stamp, revisions 1 and 2 `shop`'s), and `store` has left. A
/// sweep that loses its manager after removing one record leaves the
/// oldest gone and the newest in place: the next sweep judges `web` by the
/// same stamp (`store`'s), and finishes the job, the newest record last.
/// Removed newest first, `shop`'s older stamp would have decided instead.
#[tokio::test(start_paused = true)]
async fn records_interrupted_halfway_leave_the_newest_stamp_to_decide() {
    let registry = MemoryRegistry::new().with_swarm(
        three_node("alpha", "A", &[])
            .record(MemoryRecord::new("web", 3, stamp("store", "web")))
            .record(MemoryRecord::new("web", 1, stamp("shop", "web")))
            .record(MemoryRecord::new("web", 2, stamp("shop", "web")))
            .stack("web", MemoryStack::new().service("web_svc")),
    );
    let apps = || app_set(&[("shop", "alpha", &[])]);
    let (snapshot, plan) = gather_plan(&registry, false, apps()).await;
    let owner_before = snapshot.swarms[0].releases[0].owner.clone();
    assert_eq!(owner_before.as_deref(), stamp("store", "web"));
    assert_eq!(plan.deletions.len(), 1);
    assert_eq!(plan.deletions[0].application, "store");

    registry
        .interrupt_record_removal(
            "alpha",
            1,
            BackendError::Unreachable {
                endpoint: "memory://alpha/manager".into(),
                message: "connection reset".into(),
            },
        )
        .unwrap();
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Failed);
    assert_eq!(registry.records("alpha").len(), 2);

    // The next sweep sees the same newest stamp, and so the same verdict.
    let (snapshot, plan) = gather_plan(&registry, false, apps()).await;
    assert_eq!(snapshot.swarms[0].releases[0].owner, owner_before);
    assert_eq!(plan.deletions.len(), 1);
    assert_eq!(plan.deletions[0].application, "store");
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(registry.records("alpha").is_empty());
    let order: Vec<u64> = registry
        .removed_records("alpha")
        .iter()
        .map(|r| r.revision)
        .collect();
    assert_eq!(order, [1, 2, 3]);
}

/// The same node fault as the real-engine test `faulty_engine.rs`, here on
/// the model: a node the registry cannot connect to is not reached, the
/// swarm stays readable, the purge is held on coverage and named by the
/// node's hostname; once the node answers again, the next sweep finishes.
#[tokio::test(start_paused = true)]
async fn a_node_faulty_wraps_is_not_reached_and_the_next_sweep_finishes() {
    let registry = Faulty::new(MemoryRegistry::new().with_swarm(release(
        three_node("gamma", "G", &["old"]),
        "old",
        "gone",
    )));
    registry.inject(
        Fault::new(
            "gamma",
            Call::Connect,
            Effect::Fail(BackendError::Unreachable {
                endpoint: "tcp://gamma-w1:2376".into(),
                message: "connection refused".into(),
            }),
        )
        .on_node("gamma-n1"),
    );
    let apps = || app_set(&[("shop", "gamma", &[])]);
    let (snapshot, plan) = gather_plan(&registry, true, apps()).await;
    let gamma = &snapshot.swarms[0];
    assert_eq!(gamma.error, None, "the swarm stays readable");
    let reached: Vec<&str> = gamma
        .nodes
        .iter()
        .flatten()
        .map(|n| n.id.as_str())
        .collect();
    assert_eq!(reached, ["gamma-n0", "gamma-n2"]);
    assert_eq!(gamma.node_count, Some(3));
    assert_eq!(plan.deletions[0].volumes, Coverage::Partial);
    assert_eq!(
        plan.uncovered[0].unreached,
        Some(vec!["gamma-w1".to_owned()])
    );

    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::PendingCoverage);
    let world = registry.inner();
    assert_eq!(world.records("gamma").len(), 1, "the records stay");
    assert_eq!(
        volumes_left(world, "gamma", &node_ids("gamma")),
        ["gamma-n1:old_data"]
    );
    assert!(registry
        .injected()
        .iter()
        .all(|i| i.call == Call::Connect && i.node.as_deref() == Some("gamma-n1")));

    registry.clear();
    let (_, plan) = gather_plan(&registry, true, apps()).await;
    assert_eq!(plan.deletions[0].volumes, Coverage::Complete);
    let report = execute(&registry, &plan, fast()).await;
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(world.records("gamma").is_empty());
    assert!(volumes_left(world, "gamma", &node_ids("gamma")).is_empty());
}

/// A node listing that never answers costs its swarm the node reach (none
/// counts as reached), never the swarm itself nor another swarm.
#[tokio::test(start_paused = true)]
async fn a_node_listing_that_hangs_reaches_no_node_of_that_swarm_only() {
    let registry = Faulty::new(
        MemoryRegistry::new()
            .with_swarm(release(three_node("alpha", "A", &["old"]), "old", "gone"))
            .with_swarm(release(three_node("beta", "B", &["old"]), "old", "gone")),
    );
    registry.inject(Fault::new("alpha", Call::Nodes, Effect::Hang));
    let apps = app_set(&[("shop", "alpha", &[]), ("shop-beta", "beta", &[])]);
    let (snapshot, plan) = gather_plan(&registry, true, apps).await;
    let alpha = &snapshot.swarms[0];
    assert_eq!(alpha.why_unreadable(), None);
    // The failed listing is recorded; the planner counts no node reached.
    assert!(alpha
        .failed_reads
        .iter()
        .any(|f| f.listing == sweep_core::reads::Listing::Nodes));
    assert_eq!(alpha.reached_nodes().as_deref(), Some(&[][..]));
    assert_eq!(snapshot.swarms[1].nodes.as_ref().map(Vec::len), Some(3));
    // Purging with no node reached is held outright on alpha; beta goes.
    assert!(plan
        .holds
        .iter()
        .any(|h| h.scope == "alpha" && h.reason == HoldReason::NoReachableNode));
    assert_eq!(plan.deletions.len(), 1);
    assert_eq!(plan.deletions[0].swarm.as_str(), "beta");
    assert_eq!(plan.deletions[0].volumes, Coverage::Complete);
}

/// A volume found in use waits for the retry interval, unless the node
/// reports a container of its stack gone first: then it is tried at once.
/// Virtual time (paused clock): what is measured is the sweep's schedule.
#[tokio::test(start_paused = true)]
async fn a_container_gone_on_the_volume_s_node_wakes_its_retry_before_the_interval() {
    let settings = ExecuteSettings::new(
        Settings::new(Duration::from_secs(20), Duration::from_secs(60)),
        4,
        Duration::from_secs(60),
    );
    for with_event in [false, true] {
        let registry = MemoryRegistry::new().with_swarm(release(
            three_node("alpha", "A", &["old"]),
            "old",
            "gone",
        ));
        // Held once more after its services went: a container still
        // stopping.
        registry
            .volume_in_use("alpha", "alpha-n1", "old_data", 1)
            .unwrap();
        let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
        let started = tokio::time::Instant::now();
        let emitter = registry.clone();
        let wake = tokio::spawn(async move {
            if with_event {
                tokio::time::sleep(Duration::from_secs(3)).await;
                emitter.emit_container_gone("alpha", Some("alpha-n1"), "old");
            }
        });
        // Without the event, no subscription at all: the services' own
        // removal reports their containers gone too, and when that report
        // is taken (before or after the volume is found in use) would
        // depend on the order ready futures are polled in.
        let quiet = Faulty::new(registry.clone());
        for node in node_ids("alpha") {
            quiet.inject(
                Fault::new(
                    "alpha",
                    Call::Events,
                    Effect::Fail(BackendError::Other {
                        message: "no events here".into(),
                    }),
                )
                .on_node(node),
            );
        }
        quiet.inject(Fault::new(
            "alpha",
            Call::Events,
            Effect::Fail(BackendError::Other {
                message: "no events here".into(),
            }),
        ));
        let report = if with_event {
            execute(&registry, &plan, settings).await
        } else {
            execute(&quiet, &plan, settings).await
        };
        wake.await.unwrap();
        let took = started.elapsed();
        assert_eq!(
            report.releases[0].outcome,
            ReleaseOutcome::Deleted,
            "{report:?}"
        );
        if with_event {
            assert!(took < Duration::from_secs(20), "woken at {took:?}");
        } else {
            assert!(took >= Duration::from_secs(20), "retried at {took:?}");
        }
    }
}

/// The volume of a departed release that a service of another stack
/// mounts at 0 replicas (no container holds it, so the engine would let
/// it go): planned as in use, left on every node with the release's
/// records, while the services and network go; the next sweep after the
/// user stops naming it finishes the release.
#[tokio::test(start_paused = true)]
async fn a_volume_another_service_mounts_stays_with_the_records_until_it_is_free() {
    let user = sweep_swarms::ServiceUse::new("u1", "user_app")
        .in_stack("user")
        .with_volumes(["old_data"]);
    let registry = MemoryRegistry::new()
        .with_swarm(release(three_node("alpha", "A", &["old"]), "old", "gone").workload(user));
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    let d = &plan.deletions[0];
    assert_eq!(d.in_use_by.len(), 1);
    assert_eq!(d.in_use_by[0].object, "old_data");
    assert!(d
        .objects
        .as_ref()
        .unwrap()
        .volumes
        .iter()
        .flatten()
        .all(|n| n.volumes.is_empty()));
    let report = execute(&registry, &plan, fast()).await;
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::InUse);
    assert_eq!(r.in_use_by, d.in_use_by);
    assert_eq!(
        sweep_core::apply_status(&plan, &report),
        sweep_core::Status::NeedsAttention
    );
    assert!(
        registry.stack("alpha", "old").is_none(),
        "services and network went"
    );
    assert_eq!(
        volumes_left(&registry, "alpha", &node_ids("alpha")).len(),
        3
    );
    assert_eq!(registry.records("alpha").len(), 1);
    // No removal was even tried on what another workload uses.
    assert!(!registry.events().iter().any(|e| e.op == Call::RemoveVolume));
}

/// A network and a config of a departed release that another stack's
/// service names: in use from the plan on, never tried (so no waiting
/// until the settle time), the rest removed, the records kept.
#[tokio::test(start_paused = true)]
async fn a_network_and_config_another_stack_names_are_planned_in_use_and_never_tried() {
    let user = sweep_swarms::ServiceUse::new("u1", "user_app")
        .in_stack("user")
        .with_networks(["networks-old_net"])
        .with_configs(["old_conf"]);
    let swarm = three_node("alpha", "A", &[])
        .record(MemoryRecord::new("old", 1, stamp("gone", "old")))
        .stack(
            "old",
            MemoryStack::new()
                .service("old_svc")
                .network("old_net")
                .network("old_back")
                .config("old_conf")
                .secret("old_key"),
        )
        .workload(user);
    let registry = MemoryRegistry::new().with_swarm(swarm);
    let (_, plan) = gather_plan(&registry, false, app_set(&[("shop", "alpha", &[])])).await;
    let kept: Vec<&str> = plan.deletions[0]
        .in_use_by
        .iter()
        .map(|u| u.object.as_str())
        .collect();
    assert_eq!(kept, ["old_net", "old_conf"]);
    let started = tokio::time::Instant::now();
    let report = execute(&registry, &plan, fast()).await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "waited for the settle time"
    );
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::InUse);
    let left = registry.stack("alpha", "old").unwrap();
    assert_eq!(left.networks.iter().collect::<Vec<_>>(), ["old_net"]);
    assert_eq!(left.configs.iter().collect::<Vec<_>>(), ["old_conf"]);
    assert!(left.services.is_empty() && left.secrets.is_empty());
    assert_eq!(registry.records("alpha").len(), 1);
    assert!(registry
        .events()
        .iter()
        .filter(|e| e.op == Call::RemoveStack)
        .all(|e| e.result.is_ok()));
}

/// A service made after the plan that names a network stops its removal:
/// the sweep reads who uses what right before it.
#[tokio::test(start_paused = true)]
async fn a_user_appearing_after_the_plan_stops_the_removal() {
    let registry =
        MemoryRegistry::new().with_swarm(release(three_node("alpha", "A", &[]), "old", "gone"));
    let (_, plan) = gather_plan(&registry, false, app_set(&[("shop", "alpha", &[])])).await;
    assert!(plan.deletions[0].in_use_by.is_empty());
    // The same swarm, with a user of the network created since the plan.
    let user = sweep_swarms::ServiceUse::new("u1", "late").with_networks(["old_net"]);
    let later = MemoryRegistry::new()
        .with_swarm(release(three_node("alpha", "A", &[]), "old", "gone").workload(user));
    let report = execute(&later, &plan, fast()).await;
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::InUse);
    assert_eq!(r.in_use_by[0].user.name, "late");
    let left = later.stack("alpha", "old").unwrap();
    assert_eq!(left.networks.iter().collect::<Vec<_>>(), ["old_net"]);
    assert_eq!(later.records("alpha").len(), 1);
}

/// A deletion window that closes during the sweep: from then on nothing
/// more is removed on its swarm. The volume still in use stays, and so do
/// the records; the sweep ends at the close, not at its settle timeout.
#[tokio::test(start_paused = true)]
async fn a_window_that_closes_during_the_sweep_stops_the_removals_there() {
    let registry = MemoryRegistry::new().with_swarm(release(
        three_node("alpha", "A", &["old"]),
        "old",
        "gone",
    ));
    registry
        .volume_in_use("alpha", "alpha-n2", "old_data", 1000)
        .unwrap();
    let (_, plan) = gather_plan(&registry, true, app_set(&[("shop", "alpha", &[])])).await;
    let started = tokio::time::Instant::now();
    let closes = [(SwarmName::new("alpha"), Duration::from_secs(5))];
    let swept = sweep_runner::execute_traced(
        &registry,
        &plan,
        fast(),
        &closes,
        std::future::pending(),
        std::future::pending(),
        |_| {},
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let r = &swept.report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert!(
        r.errors.iter().any(|e| e.kind == ErrorKind::WindowClosed),
        "{r:?}"
    );
    assert_eq!(registry.records("alpha").len(), 1, "the records stay");
    assert_eq!(
        volumes_left(&registry, "alpha", &node_ids("alpha")),
        ["alpha-n2:old_data"]
    );
}
