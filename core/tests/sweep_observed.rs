//! A departed release is checked before each destructive step against what
//! the plan observed of it, not its stamp alone: a revision deployed since
//! under the same stamp (a new record, or a record changed in place) is
//! not the release planned and is left whole; a service labelled with its
//! stack since the plan was never reviewed and stays, with the records.

use sweep_core::objects::ObjectRef;
use sweep_core::sweep::{
    ActionKind, Outcome, ReleaseOutcome, Settings, StackPart, StampChange, StampRead, Step, Sweep,
    UsageRead,
};
use sweep_core::{
    plan, ObjectVersion, ReleaseEntry, ServiceEntry, Snapshot, StackObjects, SweepPlan, Timestamp,
};

/// `web` departed from alpha, with one record and one service observed.
fn departed() -> SweepPlan {
    let snapshot = Snapshot::from_json(
        r#"{
          "app_set": {"loaded": true, "applications": [
            {"name": "keep", "swarm": "alpha", "releases": []}]},
          "swarms": [{"swarm": "alpha", "cluster_id": "A", "releases": [
            {"name": "web", "owner": "cd/default/shop:release/web",
             "records": [{"id": "rec-1", "version": 10}],
             "objects": {"services": [{"id": "svc-app", "name": "web_app", "version": 3}],
                         "networks": [{"id": "net-1", "name": "web_default"}],
                         "secrets": [], "configs": []}}]}]
        }"#,
    )
    .unwrap();
    let plan = plan(&snapshot).unwrap();
    assert_eq!(plan.deletions.len(), 1);
    assert!(plan.deletions[0].observed.is_some());
    plan
}

/// What the world answers: `records` on every re-read, `services` labelled
/// with the stack now, and success for everything else. Returns every
/// action handed out and the report.
fn run(
    plan: &SweepPlan,
    records: &[(&str, u64)],
    services: &[(&str, &str)],
) -> (Vec<ActionKind>, sweep_core::sweep::SweepReport) {
    run_keeping(plan, records, services, None)
}

/// [`run`], with the service `keep` carrying the keep label now.
fn run_keeping(
    plan: &SweepPlan,
    records: &[(&str, u64)],
    services: &[(&str, &str)],
    keep: Option<&str>,
) -> (Vec<ActionKind>, sweep_core::sweep::SweepReport) {
    let mut sweep = Sweep::new(plan, Settings::default());
    let mut handed = Vec::new();
    let now = Timestamp::ZERO;
    let stamp = plan.controller.stamp("shop", "web");
    for _ in 0..1000 {
        let Some(action) = sweep.poll_action(now) else {
            break;
        };
        let outcome = match &action.kind {
            ActionKind::ReadStamps { target, .. } => {
                let entry = ReleaseEntry::new("web", Some(stamp.clone())).with_records(
                    records
                        .iter()
                        .map(|(id, v)| ObjectVersion::new(*id, *v))
                        .collect(),
                );
                Outcome::Stamps(
                    target
                        .names
                        .iter()
                        .map(|n| StampRead::new(n.clone(), Some(entry.clone())))
                        .collect(),
                )
            }
            ActionKind::ReadUsage { .. } => Outcome::Usage(UsageRead::new(
                StackObjects::new(
                    services
                        .iter()
                        .map(|(id, name)| {
                            let s = ServiceEntry::new(*id, *name, 3);
                            if keep == Some(*name) {
                                s.with_keep("true")
                            } else {
                                s
                            }
                        })
                        .collect(),
                    vec![ObjectRef::new("net-1", "web_default")],
                    vec![],
                    vec![],
                ),
                Default::default(),
            )),
            ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
            ActionKind::ListVolumes { .. } => Outcome::Volumes(Vec::new()),
            _ => Outcome::Done,
        };
        handed.push(action.kind.clone());
        sweep.handle_outcome(action.id, outcome, now).unwrap();
    }
    assert!(sweep.is_done());
    (handed, sweep.report())
}

fn removals(handed: &[ActionKind]) -> Vec<(StackPart, Vec<String>)> {
    handed
        .iter()
        .filter_map(|k| match k {
            ActionKind::RemoveStack { part, objects, .. } => {
                Some((*part, objects.iter().map(|o| o.name.clone()).collect()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn the_release_as_planned_goes() {
    let plan = departed();
    let (handed, report) = run(&plan, &[("rec-1", 10)], &[("svc-app", "web_app")]);
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(handed.iter().any(|k| k.step() == Step::DeleteRecords));
}

#[test]
fn a_revision_deployed_since_under_the_same_stamp_is_left_whole() {
    let plan = departed();
    for records in [
        // A new revision's record beside the old one.
        &[("rec-1", 10), ("rec-2", 1)][..],
        // The record changed in place.
        &[("rec-1", 11)][..],
        // Re-created.
        &[("rec-9", 1)][..],
    ] {
        let (handed, report) = run(&plan, records, &[("svc-app", "web_app")]);
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::Failed, "{records:?}");
        assert_eq!(
            r.errors.iter().find_map(|e| e.stamp),
            Some(StampChange::RevisionChanged),
            "{records:?}: {:?}",
            r.errors
        );
        assert!(removals(&handed).is_empty(), "{records:?}: {handed:?}");
        assert!(!handed.iter().any(|k| k.step() == Step::DeleteRecords));
    }
}

#[test]
fn a_service_labelled_since_the_plan_stays_with_the_records() {
    let plan = departed();
    let (handed, report) = run(
        &plan,
        &[("rec-1", 10)],
        &[("svc-app", "web_app"), ("svc-new", "web_new")],
    );
    let services: Vec<Vec<String>> = removals(&handed)
        .into_iter()
        .filter(|(part, _)| *part == StackPart::Services)
        .map(|(_, names)| names)
        .collect();
    assert_eq!(services, [vec!["web_app".to_owned()]]);
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert!(!handed.iter().any(|k| k.step() == Step::DeleteRecords));
}

#[test]
fn a_keep_label_put_on_since_the_plan_leaves_the_release_whole() {
    let plan = departed();
    let (handed, report) = run_keeping(
        &plan,
        &[("rec-1", 10)],
        &[("svc-app", "web_app")],
        Some("web_app"),
    );
    assert!(removals(&handed).is_empty(), "{handed:?}");
    assert!(!handed.iter().any(|k| k.step() == Step::DeleteRecords));
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Failed);
}

/// `web` departed from alpha with volumes purged: one record, one service,
/// and the volume `web_data` on the node n1.
fn departed_with_volume() -> SweepPlan {
    let snapshot = Snapshot::from_json(
        r#"{
          "policy": {"purge_volumes": true},
          "app_set": {"loaded": true, "applications": [
            {"name": "keep", "swarm": "alpha", "releases": []}]},
          "swarms": [{"swarm": "alpha", "cluster_id": "A", "node_count": 1,
            "nodes": [{"id": "n1", "hostname": "alpha-1"}],
            "members": [{"id": "n1", "hostname": "alpha-1"}],
            "usage": {"services": [
              {"id": "svc-app", "name": "web_app", "stack": "web", "volumes": ["web_data"]}],
              "containers": [{"node": "n1", "containers": []}]},
            "releases": [
            {"name": "web", "owner": "cd/default/shop:release/web",
             "records": [{"id": "rec-1", "version": 10}],
             "objects": {"services": [{"id": "svc-app", "name": "web_app", "version": 3}],
                         "networks": [], "secrets": [], "configs": [],
                         "volumes": [{"node": "n1", "volumes": ["web_data"]}]}}]}]
        }"#,
    )
    .unwrap();
    let plan = plan(&snapshot).unwrap();
    assert_eq!(plan.deletions.len(), 1);
    assert!(plan.deletions[0].observed.is_some());
    plan
}

/// Drives a sweep of `plan` to its end, the records re-read as planned
/// and every other action answered by `answer`: every action handed out,
/// and the report.
fn drive(
    plan: &SweepPlan,
    mut answer: impl FnMut(&ActionKind) -> Outcome,
) -> (Vec<ActionKind>, sweep_core::sweep::SweepReport) {
    let mut sweep = Sweep::new(plan, Settings::default());
    let now = Timestamp::ZERO;
    let mut handed = Vec::new();
    for _ in 0..1000 {
        let Some(action) = sweep.poll_action(now) else {
            break;
        };
        let outcome = match &action.kind {
            ActionKind::ReadStamps { target, .. } => Outcome::as_planned(plan, target),
            ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
            other => answer(other),
        };
        handed.push(action.kind.clone());
        sweep.handle_outcome(action.id, outcome, now).unwrap();
    }
    assert!(sweep.is_done());
    (handed, sweep.report())
}

/// The volumes asked to go.
fn volumes_removed(handed: &[ActionKind]) -> Vec<&String> {
    handed
        .iter()
        .filter_map(|k| match k {
            ActionKind::RemoveVolume { volume, .. } => Some(volume),
            _ => None,
        })
        .collect()
}

/// A service labelled with the stack since the plan stays, and so does
/// what it uses: its label makes it no task of the release, since the
/// sweep leaves it standing. Here it mounts the volume the plan listed
/// (at 0 replicas, or its task runs on another node, so the engine would
/// let the volume go), and, in the second run, its task on n1 does too.
#[test]
fn a_volume_a_service_labelled_since_the_plan_mounts_stays() {
    use sweep_core::usage::{ContainerUse, NodeContainers, ServiceUse, Usage};
    let plan = departed_with_volume();
    for with_task in [false, true] {
        let mut services_gone = false;
        let (handed, report) = drive(&plan, |kind| match kind {
            ActionKind::ReadUsage { .. } => {
                let mut stack = vec![ServiceEntry::new("svc-late", "web_late", 1)];
                let mut services = vec![ServiceUse::new("svc-late", "web_late")
                    .in_stack("web")
                    .with_volumes(["web_data"])];
                if !services_gone {
                    stack.push(ServiceEntry::new("svc-app", "web_app", 3));
                    services.push(
                        ServiceUse::new("svc-app", "web_app")
                            .in_stack("web")
                            .with_volumes(["web_data"]),
                    );
                }
                let containers = if with_task {
                    vec![ContainerUse::new("c-late", "web_late.1.x", ["web_data"])
                        .of_service("svc-late")
                        .in_stack("web")]
                } else {
                    Vec::new()
                };
                Outcome::Usage(UsageRead::new(
                    StackObjects::new(stack, vec![], vec![], vec![]),
                    Usage::new(services, vec![NodeContainers::new("n1", containers)]),
                ))
            }
            ActionKind::RemoveStack {
                part: StackPart::Services,
                ..
            } => {
                services_gone = true;
                Outcome::Done
            }
            ActionKind::ListVolumes { .. } => Outcome::Volumes(vec!["web_data".to_owned()]),
            _ => Outcome::Done,
        });
        assert!(
            volumes_removed(&handed).is_empty(),
            "with_task {with_task}: {handed:?}"
        );
        assert_eq!(
            removals(&handed)
                .into_iter()
                .filter(|(part, _)| *part == StackPart::Services)
                .collect::<Vec<_>>(),
            [(StackPart::Services, vec!["web_app".to_owned()])]
        );
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::Failed, "with_task {with_task}");
        assert!(!handed.iter().any(|k| k.step() == Step::DeleteRecords));
        assert!(
            r.in_use_by
                .iter()
                .any(|u| u.object == "web_data" && u.user.name.starts_with("web_late")),
            "with_task {with_task}: {:?}",
            r.in_use_by
        );
    }
}

/// A service given the stack's label once the release's own services are
/// gone (a `docker stack deploy` of the departed stack by hand, which
/// writes no records) was never reviewed, whichever read first shows it:
/// what it mounts stays, and the records stay. Also when the two views of
/// a read disagree, the swarm's service list showing it under the stack
/// and the stack's own listing not.
#[test]
fn a_volume_a_service_labelled_after_the_services_went_mounts_stays() {
    use sweep_core::usage::{ServiceUse, Usage};
    let plan = departed_with_volume();
    for in_stack_listing in [true, false] {
        let mut services_gone = false;
        let (handed, report) = drive(&plan, |kind| match kind {
            ActionKind::ReadUsage { .. } => {
                let (stack, services) = if services_gone {
                    let late = ServiceUse::new("svc-late", "web_app")
                        .in_stack("web")
                        .with_volumes(["web_data"]);
                    let listed = if in_stack_listing {
                        vec![ServiceEntry::new("svc-late", "web_app", 1)]
                    } else {
                        Vec::new()
                    };
                    (listed, vec![late])
                } else {
                    (
                        vec![ServiceEntry::new("svc-app", "web_app", 3)],
                        vec![ServiceUse::new("svc-app", "web_app")
                            .in_stack("web")
                            .with_volumes(["web_data"])],
                    )
                };
                Outcome::Usage(UsageRead::new(
                    StackObjects::new(stack, vec![], vec![], vec![]),
                    Usage::new(services, vec![]),
                ))
            }
            ActionKind::RemoveStack {
                part: StackPart::Services,
                ..
            } => {
                services_gone = true;
                Outcome::Done
            }
            ActionKind::ListVolumes { .. } => Outcome::Volumes(vec!["web_data".to_owned()]),
            _ => Outcome::Done,
        });
        let case = format!("in_stack_listing {in_stack_listing}");
        assert!(volumes_removed(&handed).is_empty(), "{case}: {handed:?}");
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::Failed, "{case}");
        assert!(!handed.iter().any(|k| k.step() == Step::DeleteRecords));
        assert!(
            r.in_use_by
                .iter()
                .any(|u| u.object == "web_data" && u.user.name == "web_app"),
            "{case}: {:?}",
            r.in_use_by
        );
    }
}

/// A volume labelled with the stack that the plan's listing of its node
/// lacks appeared since the plan: never reviewed, it stays, and the
/// release keeps its records; the volume the plan listed goes.
#[test]
fn a_volume_labelled_since_the_plan_stays_with_the_records() {
    let plan = departed_with_volume();
    let (handed, report) = drive(&plan, |kind| match kind {
        ActionKind::ReadUsage { .. } => {
            Outcome::Usage(UsageRead::new(StackObjects::default(), Default::default()))
        }
        ActionKind::ListVolumes { .. } => {
            Outcome::Volumes(vec!["web_data".to_owned(), "web_restored".to_owned()])
        }
        _ => Outcome::Done,
    });
    assert_eq!(volumes_removed(&handed), ["web_data"]);
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert!(!handed.iter().any(|k| k.step() == Step::DeleteRecords));
    assert!(
        r.errors.iter().any(|e| e.action == Step::ListVolumes
            && e.volume.as_deref() == Some("web_restored")
            && e.node.as_deref() == Some("alpha-1")),
        "{:?}",
        r.errors
    );
}
