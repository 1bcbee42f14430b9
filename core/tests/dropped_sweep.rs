//! The sweep of a live release's dropped objects, driven step by step:
//! the re-read first, the dropped services, their tasks, then the dropped
//! configs, secrets and networks nobody names; never the release's
//! records, volumes or current objects.

mod resources;

use std::time::Duration;

use resources::{app, release, snapshot, swarm, Obj, Rev};
use sweep_core::objects::{ObjectRef, ObjectVersion, ServiceEntry, StackObjects};
use sweep_core::record::Kind;
use sweep_core::sweep::{
    ActionKind, ErrorKind, ObjectKind, ObjectOutcome, ObjectReason, Outcome, ReleaseOutcome,
    Settings, StackPart, StampChange, StampRead, Sweep, SweepReport, Timestamp, UsageRead,
};
use sweep_core::usage::{ContainerUse, NodeContainers, ServiceUse, Usage};
use sweep_core::{plan, ReleaseEntry, SweepPlan};

/// The scenario of the rule: revision 2 of `web` dropped worker, back and
/// conf2 from revision 1.
fn the_plan() -> SweepPlan {
    the_plan_within(None)
}

/// [`the_plan`] under a blast-radius guard of `max` deletions.
fn the_plan_within(max: Option<u64>) -> SweepPlan {
    let revisions = vec![
        Rev::owned(
            "shop",
            "web",
            1,
            &[
                ("service", "app"),
                ("service", "worker"),
                ("network", "default"),
                ("network", "back"),
                ("config", "conf1"),
                ("config", "conf2"),
            ],
        ),
        Rev::owned(
            "shop",
            "web",
            2,
            &[
                ("service", "app"),
                ("network", "default"),
                ("config", "conf1"),
            ],
        ),
    ];
    let objects = [
        Obj::new("service", "app"),
        Obj::new("service", "worker"),
        Obj::new("network", "default"),
        Obj::new("network", "back"),
        Obj::new("config", "conf1"),
        Obj::new("config", "conf2"),
    ];
    let mut s = snapshot(
        true,
        vec![app("shop", "alpha", &["web"])],
        vec![swarm(
            "alpha",
            vec![release("web", &revisions, &objects)],
            vec![],
        )],
    );
    s.policy.max_deletions = max;
    plan(&s).unwrap()
}

/// The release's records as re-read: the planned two, or with `extra`.
fn stamps(records: &[&str]) -> Outcome {
    let entry = ReleaseEntry::new("web", Some(resources::stamp("shop", "web"))).with_records(
        records
            .iter()
            .map(|id| ObjectVersion::new(*id, 1))
            .collect(),
    );
    Outcome::Stamps(vec![StampRead::new("alpha".into(), Some(entry))])
}

/// The stack as labelled now, with `users` of the swarm.
fn usage(users: Vec<ServiceUse>) -> Outcome {
    let stack = StackObjects::new(
        vec![ServiceEntry::new("id-service-web_app", "web_app", 1)],
        vec![
            ObjectRef::new("id-network-web_default", "web_default"),
            ObjectRef::new("id-network-web_back", "web_back"),
        ],
        Vec::new(),
        vec![
            ObjectRef::new("id-config-web_conf1", "web_conf1"),
            ObjectRef::new("id-config-web_conf2", "web_conf2"),
        ],
    );
    Outcome::Usage(UsageRead::new(stack, Usage::new(users, Vec::new())))
}

/// Runs the sweep of `plan`, answering each action with `answer`; every
/// action handed out, as a line, and the report.
fn run(
    plan: &SweepPlan,
    mut answer: impl FnMut(&ActionKind) -> Outcome,
) -> (Vec<String>, SweepReport) {
    let mut sweep = Sweep::new(
        plan,
        Settings::new(Duration::from_secs(1), Duration::from_secs(5)),
    );
    let mut now = Timestamp::ZERO;
    let mut log = Vec::new();
    while !sweep.is_done() {
        while let Some(action) = sweep.poll_action(now) {
            log.push(line(&action.kind));
            let outcome = answer(&action.kind);
            sweep.handle_outcome(action.id, outcome, now).unwrap();
        }
        match sweep.poll_timeout() {
            Some(at) => now = now.max(at),
            None => break,
        }
    }
    assert!(sweep.is_done());
    (log, sweep.report())
}

fn line(kind: &ActionKind) -> String {
    match kind {
        ActionKind::RemoveStack { part, objects, .. } => {
            let names: Vec<&str> = objects.iter().map(|o| o.name.as_str()).collect();
            format!("remove {part} {names:?}")
        }
        other => other.step().to_string(),
    }
}

#[test]
fn the_dropped_objects_go_services_first_and_nothing_else_is_touched() {
    let p = the_plan();
    assert_eq!(p.dropped.len(), 1);
    let (log, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
        ActionKind::ReadUsage { .. } => usage(Vec::new()),
        ActionKind::RemoveStack { .. } => Outcome::Done,
        other => panic!("not an action of a dropped object's sweep: {other:?}"),
    });
    assert_eq!(
        log,
        [
            "read_stamps",
            "remove services [\"web_worker\"]",
            "remove tasks [\"web_worker\"]",
            "read_stamps",
            "read_usage",
            "remove networks [\"web_back\"]",
            "remove secrets []",
            "remove configs [\"web_conf2\"]",
        ]
        .into_iter()
        .filter(|l| !l.ends_with("[]"))
        .collect::<Vec<_>>(),
        "{log:#?}"
    );
    assert!(report.releases.is_empty(), "no release is deleted");
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::Deleted);
    let gone: Vec<&str> = d.removed.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(gone, ["web_worker", "web_back", "web_conf2"]);
    assert_eq!(report.totals.objects_deleted, 3);
    assert!(report.all_done());
    // One entry per object removed, each for the resource rule.
    let objects: Vec<(ObjectKind, &str, ObjectOutcome, ObjectReason)> = report
        .objects
        .iter()
        .map(|o| (o.kind, o.name.as_str(), o.outcome, o.reason))
        .collect();
    assert_eq!(
        objects,
        [
            (
                ObjectKind::Service,
                "web_worker",
                ObjectOutcome::Removed,
                ObjectReason::Dropped
            ),
            (
                ObjectKind::Network,
                "web_back",
                ObjectOutcome::Removed,
                ObjectReason::Dropped
            ),
            (
                ObjectKind::Config,
                "web_conf2",
                ObjectOutcome::Removed,
                ObjectReason::Dropped
            ),
        ]
    );
}

#[test]
fn a_new_revision_since_the_plan_removes_nothing() {
    let p = the_plan();
    let (log, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2", "rec-web-3"]),
        other => panic!("nothing may follow a changed re-read: {other:?}"),
    });
    assert_eq!(log, ["read_stamps"]);
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::Failed);
    assert!(d.removed.is_empty());
    assert!(report.objects.is_empty(), "nothing was tried");
    assert_eq!(d.errors[0].stamp, Some(StampChange::RevisionChanged));
    assert!(!report.all_done());
    // A failure is never without word, though no object was tried.
    let events = sweep_core::notify::decide(
        sweep_core::notify::Facts {
            plan: Some(&p),
            report: Some(&report),
            stale: None,
        },
        &mut Default::default(),
        sweep_core::UnixTime::from_secs(1_764_576_000),
        Duration::from_secs(3600),
    );
    let failed: Vec<_> = events
        .iter()
        .filter(|e| e.event == sweep_core::notify::EventKind::DeletionFailed)
        .collect();
    assert_eq!(failed.len(), 1, "{events:?}");
    assert_eq!(failed[0].objects[0].name, "web");
    assert!(failed[0].objects[0]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("changed since the plan")));
}

/// The records as re-read with `id` at `version`, the others as planned.
fn stamps_with(id: &str, version: u64) -> Outcome {
    let entry = ReleaseEntry::new("web", Some(resources::stamp("shop", "web"))).with_records(
        ["rec-web-1", "rec-web-2"]
            .iter()
            .map(|r| ObjectVersion::new(*r, if *r == id { version } else { 1 }))
            .collect(),
    );
    Outcome::Stamps(vec![StampRead::new("alpha".into(), Some(entry))])
}

/// The same records at a new version: relabelled since the plan (a
/// rollback marks the current revision superseded), so the revision the
/// plan judged may no longer be the deployed one. Nothing more goes, at
/// either re-read.
#[test]
fn a_record_relabelled_since_the_plan_removes_nothing_more() {
    let p = the_plan();
    let (log, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps_with("rec-web-2", 2),
        other => panic!("nothing may follow a changed re-read: {other:?}"),
    });
    assert_eq!(log, ["read_stamps"]);
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::Failed);
    assert!(d.removed.is_empty());
    assert_eq!(d.errors[0].stamp, Some(StampChange::RevisionChanged));

    // Relabelled while the dropped service's tasks stopped: the second
    // re-read, before the configs and networks, stops them.
    let mut reads = 0;
    let (log, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => {
            reads += 1;
            if reads == 1 {
                stamps(&["rec-web-1", "rec-web-2"])
            } else {
                stamps_with("rec-web-2", 2)
            }
        }
        ActionKind::ReadUsage { .. } => usage(Vec::new()),
        _ => Outcome::Done,
    });
    assert!(reads >= 2, "{log:?}");
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::Failed, "{log:?}");
    assert_eq!(d.errors[0].stamp, Some(StampChange::RevisionChanged));
    assert!(
        !log.iter()
            .any(|l| l.contains("config") || l.contains("network")),
        "{log:?}"
    );
}

#[test]
fn a_dropped_network_a_service_names_now_is_kept_not_retried() {
    let p = the_plan();
    let user = ServiceUse::new("svc-other", "other_api").with_networks(["web_back"]);
    let (log, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
        ActionKind::ReadUsage { .. } => usage(vec![user.clone()]),
        ActionKind::RemoveStack { .. } => Outcome::Done,
        other => panic!("{other:?}"),
    });
    assert!(!log.iter().any(|l| l.contains("web_back")), "{log:#?}");
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::InUse);
    assert_eq!(d.in_use_by[0].object, "web_back");
    assert_eq!(d.removed.len(), 2);
    let kept: Vec<_> = report
        .objects
        .iter()
        .filter(|o| o.outcome == ObjectOutcome::InUse)
        .map(|o| (o.kind, o.name.as_str()))
        .collect();
    assert_eq!(kept, [(ObjectKind::Network, "web_back")]);
}

#[test]
fn what_the_plan_found_in_use_is_reported_kept() {
    let mut p = the_plan();
    let user = ServiceUse::new("svc-other", "other_api").with_networks(["web_back"]);
    // As the planner leaves it: out of the objects, into in_use_by.
    let used = sweep_core::usage::service_users(
        "web",
        [(
            sweep_core::usage::ObjectKind::Network,
            &ObjectRef::new("id-network-web_back", "web_back"),
        )],
        &Default::default(),
        &Usage::new(vec![user], Vec::new()),
    );
    p.dropped[0].objects.retain(|o| o.name != "web_back");
    p.dropped[0].in_use_by = used;
    let (log, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
        ActionKind::ReadUsage { .. } => usage(Vec::new()),
        ActionKind::RemoveStack { .. } => Outcome::Done,
        other => panic!("{other:?}"),
    });
    assert!(!log.iter().any(|l| l.contains("web_back")), "{log:#?}");
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::InUse);
    assert_eq!(d.in_use_by[0].object, "web_back");
    assert!(
        !report.all_done(),
        "a person decides, as for a release in use"
    );
}

#[test]
fn the_dropped_service_s_tasks_are_waited_for_before_its_network_goes() {
    let p = the_plan();
    let mut busy = 2;
    let (log, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
        ActionKind::ReadUsage { .. } => usage(Vec::new()),
        ActionKind::RemoveStack {
            part: StackPart::Tasks,
            ..
        } if busy > 0 => {
            busy -= 1;
            Outcome::in_use()
        }
        ActionKind::RemoveStack { .. } => Outcome::Done,
        other => panic!("{other:?}"),
    });
    let tasks = log.iter().filter(|l| l.starts_with("remove tasks")).count();
    assert_eq!(tasks, 3, "{log:#?}");
    let last_task = log
        .iter()
        .rposition(|l| l.starts_with("remove tasks"))
        .unwrap();
    let network = log.iter().position(|l| l.contains("web_back")).unwrap();
    assert!(last_task < network);
    assert_eq!(report.dropped[0].outcome, ReleaseOutcome::Deleted);
}

/// The dropped network is refused "in use" (a task still attached), and
/// meanwhile a service starts to name it: the read of who uses what before
/// its retry sees it, and the network is kept at once, reported in
/// `in_use_by`, not retried until the settle time into a failure.
#[test]
fn a_dropped_network_named_while_it_waits_is_kept_not_retried() {
    let p = the_plan();
    let user = ServiceUse::new("svc-other", "other_api").with_networks(["web_back"]);
    let mut named = false;
    let (log, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
        ActionKind::ReadUsage { .. } if named => usage(vec![user.clone()]),
        ActionKind::ReadUsage { .. } => usage(Vec::new()),
        ActionKind::RemoveStack {
            part: StackPart::Networks,
            ..
        } => {
            named = true;
            Outcome::in_use()
        }
        ActionKind::RemoveStack { .. } => Outcome::Done,
        other => panic!("{other:?}"),
    });
    assert_eq!(
        log,
        [
            "read_stamps",
            "remove services [\"web_worker\"]",
            "remove tasks [\"web_worker\"]",
            "read_stamps",
            "read_usage",
            "remove networks [\"web_back\"]",
            "remove configs [\"web_conf2\"]",
            // The retry's time: who uses the network now, and no retry.
            "read_usage",
        ],
        "{log:#?}"
    );
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::InUse);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!(d.in_use_by.len(), 1);
    assert_eq!(d.in_use_by[0].object, "web_back");
    assert_eq!(d.in_use_by[0].user.name, "other_api");
    let gone: Vec<&str> = d.removed.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(gone, ["web_worker", "web_conf2"]);
    let kept: Vec<_> = report
        .objects
        .iter()
        .filter(|o| o.outcome == ObjectOutcome::InUse)
        .map(|o| (o.kind, o.name.as_str()))
        .collect();
    assert_eq!(kept, [(ObjectKind::Network, "web_back")]);
}

#[test]
fn a_held_plan_removes_no_dropped_object() {
    let p = the_plan_within(Some(2));
    assert!(p.is_held());
    // Even a plan edited to list them again: a held plan hands out nothing.
    let mut edited = p.clone();
    edited.dropped = the_plan().dropped;
    let (log, report) = run(&edited, |kind| panic!("{kind:?}"));
    assert!(log.is_empty());
    assert!(report.dropped.is_empty());
}

mod saved {
    use super::*;
    use sweep_core::saved::{check, Change, DroppedChange, SavedPlan};
    use sweep_core::Snapshot;

    fn scenario(change: impl FnOnce(&mut Snapshot)) -> Snapshot {
        let revisions = vec![
            Rev::owned(
                "shop",
                "web",
                1,
                &[
                    ("service", "worker"),
                    ("service", "app"),
                    ("config", "conf2"),
                ],
            ),
            Rev::owned("shop", "web", 2, &[("service", "app")]),
        ];
        let objects = [
            Obj::new("service", "app"),
            Obj::new("service", "worker"),
            Obj::new("config", "conf2"),
        ];
        let mut s = snapshot(
            true,
            vec![app("shop", "alpha", &["web"])],
            vec![swarm(
                "alpha",
                vec![release("web", &revisions, &objects)],
                vec![],
            )],
        );
        change(&mut s);
        s
    }

    fn saved() -> SavedPlan {
        let s = scenario(|_| {});
        SavedPlan::new(&s, plan(&s).unwrap(), "1.0.0")
    }

    fn changes(fresh: &Snapshot) -> Vec<Change> {
        match check(&saved(), fresh, "1.0.0").unwrap() {
            Ok(_) => Vec::new(),
            Err(stale) => stale.changes,
        }
    }

    #[test]
    fn an_unchanged_swarm_applies_exactly_the_reviewed_objects() {
        let approved = check(&saved(), &scenario(|_| {}), "1.0.0")
            .unwrap()
            .unwrap();
        assert_eq!(approved.plan.dropped, saved().plan.dropped);
        assert_eq!(approved.plan.dropped[0].objects.len(), 2);
    }

    #[test]
    fn an_object_at_another_version_makes_the_plan_stale() {
        let fresh = scenario(|s| {
            let objects = s.swarms[0].releases[0].objects.as_mut().unwrap();
            objects.configs[0].version = Some(2);
        });
        assert_eq!(
            changes(&fresh),
            [Change::Dropped {
                release: sweep_core::ReleaseRef::new("alpha", "web"),
                change: DroppedChange::Object {
                    kind: "config".into(),
                    name: "web_conf2".into()
                },
            }]
        );
    }

    #[test]
    fn a_new_revision_makes_the_plan_stale() {
        let fresh = scenario(|s| {
            let records = s.swarms[0].releases[0].records.as_mut().unwrap();
            records.push(ObjectVersion::new("rec-web-9", 1));
        });
        assert!(matches!(
            changes(&fresh).as_slice(),
            [Change::Dropped {
                change: DroppedChange::RevisionChanged,
                ..
            }]
        ));
    }

    #[test]
    fn a_policy_without_the_rule_makes_the_plan_stale() {
        let fresh = scenario(|s| s.policy.prune_resources = false);
        let found = changes(&fresh);
        assert!(
            found.iter().any(|c| matches!(c, Change::Policy { .. })),
            "{found:?}"
        );
        assert!(found.iter().any(|c| matches!(
            c,
            Change::Dropped {
                change: DroppedChange::NotDropped,
                ..
            }
        )));
    }
}

mod faults {
    use std::collections::BTreeSet;

    use super::*;
    use proptest::prelude::*;
    use sweep_core::sweep::Failure;

    /// How the model answers each action, drawn per action.
    #[derive(Debug, Clone, Copy)]
    enum Answer {
        Done,
        Gone,
        InUse,
        Refused,
        Unreachable,
    }

    fn answer() -> impl Strategy<Value = Answer> {
        prop_oneof![
            6 => Just(Answer::Done),
            1 => Just(Answer::Gone),
            2 => Just(Answer::InUse),
            1 => Just(Answer::Refused),
            1 => Just(Answer::Unreachable),
        ]
    }

    proptest! {
        /// Under any answers: the re-read comes first and a changed one
        /// stops everything; nothing but the planned dropped objects is
        /// ever asked to go; the others only after the dropped services'
        /// tasks stopped; what a service names at the usage read is never
        /// asked to go; no record, volume or listing step; and it ends.
        #[test]
        fn nothing_unplanned_or_out_of_order_under_any_answers(
            answers in prop::collection::vec(answer(), 64),
            changed_at in prop::option::weighted(0.3, 0u8..2),
            named in prop::bool::weighted(0.3),
        ) {
            let p = the_plan();
            let planned: BTreeSet<String> =
                p.dropped[0].objects.iter().map(|o| o.id.clone()).collect();
            let mut sweep = Sweep::new(&p, Settings::new(Duration::from_secs(1), Duration::from_secs(3)));
            let mut now = Timestamp::ZERO;
            let mut next = answers.into_iter().cycle();
            let (mut checked, mut tasks_done, mut steps) = (false, false, 0);
            // Re-reads so far, and whether one saw a record added since.
            let (mut reads, mut changed) = (0u8, false);
            let users = if named {
                vec![ServiceUse::new("svc-other", "other").with_networks(["web_back"])]
            } else {
                Vec::new()
            };
            while !sweep.is_done() {
                while let Some(action) = sweep.poll_action(now) {
                    steps += 1;
                    prop_assert!(steps < 500, "the sweep does not end");
                    let outcome = match &action.kind {
                        ActionKind::ReadStamps { .. } => {
                            // The second stands before the others, once
                            // the dropped services' tasks stopped.
                            prop_assert!(reads == 0 || (reads == 1 && tasks_done), "re-read {reads} out of turn");
                            changed |= changed_at == Some(reads);
                            reads += 1;
                            checked = !changed;
                            if changed {
                                stamps(&["rec-web-1", "rec-web-2", "rec-web-3"])
                            } else {
                                stamps(&["rec-web-1", "rec-web-2"])
                            }
                        }
                        ActionKind::ReadUsage { .. } => usage(users.clone()),
                        ActionKind::RemoveStack { part, objects, .. } => {
                            prop_assert!(checked, "a removal before a good re-read");
                            for o in objects {
                                prop_assert!(planned.contains(o.handle()), "{} not planned", o.name);
                                prop_assert!(!(named && o.name == "web_back"), "a named network asked to go");
                            }
                            if !matches!(part, StackPart::Services | StackPart::Tasks) {
                                prop_assert!(tasks_done, "{part} before the tasks stopped");
                            }
                            let a = next.next().unwrap();
                            if *part == StackPart::Tasks && matches!(a, Answer::Done | Answer::Gone) {
                                tasks_done = true;
                            }
                            match a {
                                Answer::Done => Outcome::Done,
                                Answer::Gone => Outcome::Failed(Failure::Gone),
                                Answer::InUse => Outcome::in_use(),
                                Answer::Refused => Outcome::Failed(Failure::Other("no".into())),
                                Answer::Unreachable => Outcome::Failed(Failure::Unreachable("down".into())),
                            }
                        }
                        other => {
                            prop_assert!(false, "not a step of dropped objects: {other:?}");
                            unreachable!()
                        }
                    };
                    sweep.handle_outcome(action.id, outcome, now).unwrap();
                }
                match sweep.poll_timeout() {
                    Some(at) => now = now.max(at),
                    None => break,
                }
            }
            prop_assert!(sweep.is_done());
            let report = sweep.report();
            let d = &report.dropped[0];
            // A change seen by the first re-read stops everything; by
            // the second, everything but the services removed before it.
            match changed_at {
                Some(0) => prop_assert!(d.removed.is_empty()),
                Some(_) if changed => prop_assert!(d.removed.iter().all(|o| o.kind == Kind::Service), "{:?}", d.removed),
                _ => {}
            }
            if d.outcome == ReleaseOutcome::Deleted {
                prop_assert_eq!(d.removed.len(), planned.len());
            }
            // The objects said gone are exactly the ones `removed` lists.
            let mut said: Vec<&str> = report
                .objects
                .iter()
                .filter(|o| o.outcome.is_gone())
                .filter_map(|o| o.id.as_deref())
                .collect();
            let mut removed: Vec<&str> = d.removed.iter().map(|o| o.id.as_str()).collect();
            said.sort_unstable();
            removed.sort_unstable();
            prop_assert_eq!(said, removed);
        }
    }
}

/// A stopped container of no service attached to a dropped network since
/// the plan, on one of the nodes the plan reached: the read before the
/// network goes lists the containers at every such node, and the network
/// stays. The engine would let it go, and the container could not start
/// again.
#[test]
fn a_dropped_network_a_container_attached_since_the_plan_is_kept() {
    let mut s = {
        let p = the_plan();
        assert_eq!(p.dropped.len(), 1);
        p
    };
    // The plan reached two nodes.
    let nodes = vec![
        sweep_core::NodeEntry::new("n1", "node-1"),
        sweep_core::NodeEntry::new("n2", "node-2"),
    ];
    if let Some(swarm) = s.swarms.iter_mut().find(|w| w.swarm.as_str() == "alpha") {
        swarm.nodes = Some(nodes);
    }
    let mut places = Vec::new();
    let (log, report) = run(&s, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
        ActionKind::ReadUsage { at, .. } => {
            let ids: Vec<String> = at
                .iter()
                .map(|w| w.node_id().unwrap_or("manager").to_owned())
                .collect();
            places.push(ids.clone());
            let containers = ids
                .into_iter()
                .map(|node| {
                    let list = if node == "n2" {
                        let c = ContainerUse::new("c-byhand", "byhand", [""; 0]);
                        vec![c.with_networks(["id-network-web_back"])]
                    } else {
                        Vec::new()
                    };
                    NodeContainers::new(node, list)
                })
                .collect();
            let Outcome::Usage(read) = usage(Vec::new()) else {
                unreachable!()
            };
            Outcome::Usage(UsageRead::new(
                read.stack,
                Usage::new(Vec::new(), containers),
            ))
        }
        ActionKind::RemoveStack { .. } => Outcome::Done,
        other => panic!("{other:?}"),
    });
    assert_eq!(places, [vec!["n1".to_owned(), "n2".to_owned()]]);
    assert!(!log.iter().any(|l| l.contains("web_back")), "{log:#?}");
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::InUse);
    assert_eq!(d.in_use_by.len(), 1);
    assert_eq!(d.in_use_by[0].object, "web_back");
    assert_eq!(d.in_use_by[0].user.name, "byhand");
    assert_eq!(d.in_use_by[0].user.node.as_deref(), Some("n2"));
    let gone: Vec<&str> = d.removed.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(gone, ["web_worker", "web_conf2"]);
}

/// A dropped attachable network the plan let go because every node's
/// containers were read stays once a re-read lists a node the plan did
/// not read (joined since, its containers unseen), or cannot list the
/// nodes; with the same nodes listed, it goes.
#[test]
fn a_dropped_attachable_network_stays_once_a_node_joined_since_the_plan() {
    let mut p = the_plan();
    if let Some(swarm) = p.swarms.iter_mut().find(|w| w.swarm.as_str() == "alpha") {
        swarm.nodes = Some(vec![
            sweep_core::NodeEntry::new("n1", "node-1"),
            sweep_core::NodeEntry::new("n2", "node-2"),
        ]);
        swarm.every_node_read = true;
    }
    let listed = |ids: &[&str]| Some(ids.iter().map(|id| (*id).to_owned()).collect());
    for (case, nodes, kept) in [
        ("joined", listed(&["n1", "n2", "n3"]), true),
        ("unread", None, true),
        ("the same", listed(&["n2", "n1"]), false),
    ] {
        let (log, report) = run(&p, |kind| match kind {
            ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
            ActionKind::ReadUsage { .. } => {
                let Outcome::Usage(mut read) = usage(Vec::new()) else {
                    unreachable!()
                };
                for n in &mut read.stack.networks {
                    *n = n.clone().with_attachable(true);
                }
                read.nodes = nodes.clone();
                Outcome::Usage(read)
            }
            ActionKind::RemoveStack { .. } => Outcome::Done,
            other => panic!("{other:?}"),
        });
        let d = &report.dropped[0];
        let gone: Vec<&str> = d.removed.iter().map(|o| o.name.as_str()).collect();
        if kept {
            assert!(
                !log.iter().any(|l| l.contains("web_back")),
                "{case}: {log:#?}"
            );
            assert_eq!(d.outcome, ReleaseOutcome::InUse, "{case}");
            assert_eq!(d.in_use_by[0].object, "web_back", "{case}");
            assert_eq!(d.in_use_by[0].user.kind.as_str(), "unseen", "{case}");
            assert_eq!(gone, ["web_worker", "web_conf2"], "{case}");
            let said = d.errors.iter().any(|e| e.message.contains("no node list"));
            assert_eq!(said, case == "unread", "{case}: {:?}", d.errors);
        } else {
            assert_eq!(d.outcome, ReleaseOutcome::Deleted, "{case}");
            assert_eq!(gone, ["web_worker", "web_back", "web_conf2"], "{case}");
        }
    }
}

/// Each dropped service and config is handed out at the version the plan
/// judged it at, so that a backend leaves one changed since (a redeploy
/// that declares it again updates it in place before its record is
/// written); the backend's refusal fails the run and removes nothing more
/// of that part.
#[test]
fn dropped_objects_are_removed_only_at_the_version_they_were_judged_at() {
    let p = the_plan();
    let planned: Vec<(String, Option<u64>)> = p.dropped[0]
        .objects
        .iter()
        .map(|o| (o.name.clone(), o.version))
        .collect();
    let mut handed: Vec<(String, Option<u64>)> = Vec::new();
    let (_, report) = run(&p, |kind| match kind {
        ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
        ActionKind::ReadUsage { .. } => usage(Vec::new()),
        ActionKind::RemoveStack { part, objects, .. } => {
            handed.extend(objects.iter().map(|o| (o.name.clone(), o.version)));
            if *part == StackPart::Services {
                Outcome::other("service \"web_worker\" changed since it was judged")
            } else {
                Outcome::Done
            }
        }
        other => panic!("not an action of a dropped object's sweep: {other:?}"),
    });
    assert!(
        planned.contains(&("web_worker".to_owned(), Some(1))),
        "{planned:?}"
    );
    assert_eq!(handed, [("web_worker".to_owned(), Some(1))]);
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::Failed);
    assert!(d.removed.is_empty(), "{d:?}");
}

/// A swarm's deletion window closing stops its dropped objects too: once
/// closed, nothing more is handed out, and what is left stays, reported.
#[test]
fn a_window_that_closed_stops_the_dropped_objects_after_the_services() {
    let p = the_plan();
    let swarm = p.dropped[0].swarm.clone();
    let mut sweep = Sweep::new(
        &p,
        Settings::new(Duration::from_secs(1), Duration::from_secs(5)),
    );
    let close = Timestamp::ZERO + Duration::from_secs(3);
    sweep.handle_window_closes(&swarm, close);
    let mut now = Timestamp::ZERO;
    let mut log = Vec::new();
    while let Some(action) = sweep.poll_action(now) {
        log.push(line(&action.kind));
        let outcome = match &action.kind {
            ActionKind::ReadStamps { .. } => stamps(&["rec-web-1", "rec-web-2"]),
            ActionKind::ReadUsage { .. } => usage(Vec::new()),
            ActionKind::RemoveStack { part, .. } => {
                // The services' tasks take until after the close.
                if *part == StackPart::Tasks {
                    now = close;
                }
                Outcome::Done
            }
            other => panic!("not an action of a dropped object's sweep: {other:?}"),
        };
        sweep.handle_outcome(action.id, outcome, now).unwrap();
    }
    assert!(sweep.is_done());
    assert_eq!(
        log,
        [
            "read_stamps",
            "remove services [\"web_worker\"]",
            "remove tasks [\"web_worker\"]"
        ]
    );
    let report = sweep.report();
    let d = &report.dropped[0];
    assert_eq!(d.outcome, ReleaseOutcome::Failed);
    assert_eq!(
        d.errors.iter().map(|e| e.kind).collect::<Vec<_>>(),
        [ErrorKind::WindowClosed]
    );
    let gone: Vec<&str> = d.removed.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(gone, ["web_worker"]);
}
