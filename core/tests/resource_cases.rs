//! The resource rule on a table of named scenarios, rendered for people and
//! as the JSON contract, pinned with insta; the assertions beside each pin
//! the rule itself, so a snapshot accepted by mistake still fails.

mod resources;
mod shapes;

use resources::{app, release, snapshot, stamp, swarm, user, Obj, Rev};
use sweep_core::plan::{ResourceHoldReason, UnclaimedReason};
use sweep_core::record::Kind;
use sweep_core::saved::SavedPlan;
use sweep_core::{markdown, plan, render, Application, Policy, Snapshot, SweepPlan};

struct Case {
    name: &'static str,
    snapshot: fn() -> Snapshot,
    check: fn(&SweepPlan),
}

/// `swarm/release kind name` of every object to remove.
fn removed(p: &SweepPlan) -> Vec<String> {
    p.dropped
        .iter()
        .flat_map(|d| {
            d.objects
                .iter()
                .map(move |o| format!("{}/{} {} {}", d.swarm, d.release, o.kind, o.name))
        })
        .collect()
}

fn unclaimed(p: &SweepPlan) -> Vec<(String, UnclaimedReason)> {
    p.unclaimed
        .iter()
        .map(|u| {
            (
                format!("{}/{} {} {}", u.swarm, u.release, u.kind, u.name),
                u.reason,
            )
        })
        .collect()
}

fn held(p: &SweepPlan) -> Vec<(String, ResourceHoldReason)> {
    p.resource_holds
        .iter()
        .map(|h| (format!("{}/{}", h.swarm, h.release), h.reason))
        .collect()
}

/// Revision 1 declared app, worker, the networks default and back, and
/// configs conf1 and conf2; revision 2 dropped worker, back and conf2.
fn two_revisions(application: &str, name: &str) -> Vec<Rev> {
    vec![
        Rev::owned(
            application,
            name,
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
            application,
            name,
            2,
            &[
                ("service", "app"),
                ("network", "default"),
                ("config", "conf1"),
            ],
        ),
    ]
}

/// The stack revision 1 left behind after revision 2 was deployed.
fn left_behind() -> Vec<Obj> {
    vec![
        Obj::new("service", "app"),
        Obj::new("service", "worker"),
        Obj::new("network", "default"),
        Obj::new("network", "back"),
        Obj::new("config", "conf1"),
        Obj::new("config", "conf2"),
    ]
}

const CASES: &[Case] = &[
    Case {
        name: "a_current_revision_not_deployed_drops_nothing",
        snapshot: || {
            // Revision 2 dropped worker, conf2 and back, but its deploy
            // failed, is under way, or was rolled back from: the stack may
            // still run them (s2: its label says superseded, as an engine
            // that rolls back by relabelling leaves it). One deployed, or
            // giving no status, drops them.
            let swarms = [
                "failed",
                "pending-upgrade",
                "label:superseded",
                "deployed",
                "",
            ]
            .iter()
            .enumerate()
            .map(|(i, status)| {
                let mut revisions = two_revisions(&format!("shop{i}"), "web");
                revisions[0] = revisions[0].clone().with_status("superseded");
                revisions[1] = match status.strip_prefix("label:") {
                    Some(label) => revisions[1].clone().with_label_status(label),
                    None if status.is_empty() => revisions[1].clone(),
                    None => revisions[1].clone().with_status(status),
                };
                swarm(
                    &format!("s{i}"),
                    vec![release("web", &revisions, &left_behind())],
                    vec![],
                )
            })
            .collect();
            let apps = (0..5)
                .map(|i| app(&format!("shop{i}"), &format!("s{i}"), &["web"]))
                .collect();
            snapshot(true, apps, swarms)
        },
        check: |p| {
            assert_eq!(
                held(p),
                [
                    ("s0/web".to_owned(), ResourceHoldReason::NotDeployed),
                    ("s1/web".to_owned(), ResourceHoldReason::NotDeployed),
                    ("s2/web".to_owned(), ResourceHoldReason::NotDeployed),
                ]
            );
            let dropped: Vec<&str> = p.dropped.iter().map(|d| d.swarm.as_str()).collect();
            assert_eq!(dropped, ["s3", "s4"]);
            assert!(p.resource_holds[0].detail.contains("\"failed\""));
        },
    },
    Case {
        name: "the_revision_that_dropped_an_object_is_the_first_without_it",
        snapshot: || {
            // 1 declared worker, 2 dropped it, 3 kept it dropped.
            let revisions = vec![
                Rev::owned(
                    "shop",
                    "web",
                    1,
                    &[("service", "app"), ("service", "worker")],
                ),
                Rev::owned("shop", "web", 2, &[("service", "app")]),
                Rev::owned("shop", "web", 3, &[("service", "app")]),
            ];
            let objects = [Obj::new("service", "app"), Obj::new("service", "worker")];
            snapshot(
                true,
                vec![app("shop", "alpha", &["web"])],
                vec![swarm(
                    "alpha",
                    vec![release("web", &revisions, &objects)],
                    vec![],
                )],
            )
        },
        check: |p| {
            let o = &p.dropped[0].objects[0];
            assert_eq!(
                (o.name.as_str(), o.claimed_by, o.dropped_by),
                ("web_worker", 1, 2)
            );
            assert_eq!(p.dropped[0].revision, 3);
        },
    },
    Case {
        name: "a_release_that_dropped_a_service_a_config_and_a_network_loses_exactly_those",
        snapshot: || {
            let mut objects = left_behind();
            // Added by hand with the stack's label: claimed by no revision.
            objects.push(Obj::new("service", "extra"));
            snapshot(
                true,
                vec![app("shop", "alpha", &["web"])],
                vec![swarm(
                    "alpha",
                    vec![release("web", &two_revisions("shop", "web"), &objects)],
                    vec![],
                )],
            )
        },
        check: |p| {
            assert_eq!(
                removed(p),
                // Services first: the order they go in.
                [
                    "alpha/web service web_worker",
                    "alpha/web network web_back",
                    "alpha/web config web_conf2",
                ]
            );
            assert_eq!(p.dropped[0].revision, 2);
            assert!(p.dropped[0].objects.iter().all(|o| o.claimed_by == 1));
            assert_eq!(
                unclaimed(p),
                [(
                    "alpha/web service web_extra".to_owned(),
                    UnclaimedReason::NotClaimed
                )]
            );
            assert!(p.deletions.is_empty(), "the release itself stays");
        },
    },
    Case {
        name: "an_adopted_config_a_kept_service_and_another_controller_s_revision_claim_nothing",
        snapshot: || {
            let mut revisions = two_revisions("shop", "web");
            // Revision 1 is another controller's: it proves nothing ours.
            let other = "cd/other/shop:release/web".to_owned();
            revisions[0].label_owner = Some(other.clone());
            revisions[0].data_owner = Some(other);
            revisions.push(Rev::owned(
                "shop",
                "web",
                3,
                &[("service", "app"), ("network", "default")],
            ));
            let mut objects = left_behind();
            objects[5] = Obj::unmarked("config", "conf2");
            let mut web = release("web", &revisions, &objects);
            // Revision 2 declared conf1; 3 dropped it, but it is adopted.
            if let Some(o) = web.objects.as_mut() {
                o.configs.retain(|c| c.name != "web_conf1");
                o.configs.push(
                    sweep_core::objects::ObjectRef::new("id-c1", "web_conf1").with_version(1),
                );
            }
            snapshot(
                true,
                vec![app("shop", "alpha", &["web"])],
                vec![swarm("alpha", vec![web], vec![])],
            )
        },
        check: |p| {
            assert!(removed(p).is_empty(), "{:?}", removed(p));
            let reasons = unclaimed(p);
            assert!(reasons.contains(&(
                "alpha/web config web_conf1".to_owned(),
                UnclaimedReason::NoMarker
            )));
            assert!(reasons.contains(&(
                "alpha/web service web_worker".to_owned(),
                UnclaimedReason::NotClaimed
            )));
            assert!(reasons.contains(&(
                "alpha/web network web_back".to_owned(),
                UnclaimedReason::NotClaimed
            )));
        },
    },
    Case {
        name: "a_dropped_network_another_stack_still_uses_is_reported_not_removed",
        snapshot: || {
            snapshot(
                true,
                vec![app("shop", "alpha", &["web"])],
                vec![swarm(
                    "alpha",
                    vec![release(
                        "web",
                        &two_revisions("shop", "web"),
                        &left_behind(),
                    )],
                    vec![user("svc-other", "other_api", &["web_back"])],
                )],
            )
        },
        check: |p| {
            assert_eq!(
                removed(p),
                ["alpha/web service web_worker", "alpha/web config web_conf2"]
            );
            assert_eq!(p.dropped[0].in_use_by.len(), 1);
            assert_eq!(p.dropped[0].in_use_by[0].object, "web_back");
        },
    },
    Case {
        name: "a_dropped_attachable_network_stays_while_a_node_s_containers_are_not_read",
        snapshot: || {
            // alpha: no node reach, two nodes counted: a container of no
            // service on the worker would be seen by nobody. beta: its
            // one node, the manager, was read.
            let objects = |_: ()| {
                let mut objects = left_behind();
                objects[3] = Obj::attachable("back");
                objects
            };
            let mut alpha = swarm(
                "alpha",
                vec![release("web", &two_revisions("shop", "web"), &objects(()))],
                vec![],
            );
            alpha.node_count = Some(2);
            let mut beta = swarm(
                "beta",
                vec![release(
                    "web",
                    &two_revisions("shop-b", "web"),
                    &objects(()),
                )],
                vec![],
            );
            beta.node_count = Some(1);
            snapshot(
                true,
                vec![
                    app("shop", "alpha", &["web"]),
                    app("shop-b", "beta", &["web"]),
                ],
                vec![alpha, beta],
            )
        },
        check: |p| {
            assert_eq!(
                removed(p),
                [
                    "alpha/web service web_worker",
                    "alpha/web config web_conf2",
                    "beta/web service web_worker",
                    "beta/web network web_back",
                    "beta/web config web_conf2",
                ]
            );
            let alpha = &p.dropped[0];
            assert_eq!(alpha.swarm.as_str(), "alpha");
            assert_eq!(alpha.in_use_by.len(), 1);
            assert_eq!(alpha.in_use_by[0].object, "web_back");
            assert_eq!(alpha.in_use_by[0].user.kind.as_str(), "unseen");
            assert!(p.dropped[1].in_use_by.is_empty());
        },
    },
    Case {
        name: "the_same_release_name_on_two_swarms_is_judged_on_each",
        snapshot: || {
            // beta's web is at revision 1 still: nothing dropped there.
            let beta_revisions = vec![two_revisions("shop-b", "web").remove(0)];
            snapshot(
                true,
                vec![
                    app("shop", "alpha", &["web"]),
                    app("shop-b", "beta", &["web"]),
                ],
                vec![
                    swarm(
                        "alpha",
                        vec![release(
                            "web",
                            &two_revisions("shop", "web"),
                            &left_behind(),
                        )],
                        vec![],
                    ),
                    swarm(
                        "beta",
                        vec![release("web", &beta_revisions, &left_behind())],
                        vec![],
                    ),
                ],
            )
        },
        check: |p| {
            assert!(
                removed(p).iter().all(|r| r.starts_with("alpha/")),
                "{:?}",
                removed(p)
            );
            assert_eq!(removed(p).len(), 3);
        },
    },
    Case {
        name: "unreadable_or_disagreeing_revisions_leave_the_release_whole_and_say_why",
        snapshot: || {
            // a: its current revision does not read. b: an older one does
            // not (skipped, named; the rest still proves). c: label and
            // data disagree on the owner. d: the label says another
            // number. e: two applications declare it.
            let mut a = two_revisions("shop", "a");
            a[1].unreadable = Some("not gzip".into());
            let mut b = two_revisions("shop", "b");
            b.insert(
                0,
                Rev {
                    unreadable: Some("over the 10 MiB limit".into()),
                    ..Rev::owned("shop", "b", 0, &[])
                },
            );
            let mut c = two_revisions("shop", "c");
            c[1].data_owner = Some(stamp("other", "c"));
            let mut d = two_revisions("shop", "d");
            d[1].label = Some("02".into());
            let e = two_revisions("shop", "e");
            let objects = |r: &str| {
                let _ = r;
                left_behind()
            };
            snapshot(
                true,
                vec![
                    app("shop", "alpha", &["a", "b", "c", "d", "e"]),
                    app("shop2", "alpha", &["e"]),
                ],
                vec![swarm(
                    "alpha",
                    vec![
                        release("a", &a, &objects("a")),
                        release("b", &b, &objects("b")),
                        release("c", &c, &objects("c")),
                        release("d", &d, &objects("d")),
                        release("e", &e, &objects("e")),
                    ],
                    vec![],
                )],
            )
        },
        check: |p| {
            assert_eq!(
                held(p),
                [
                    ("alpha/a".to_owned(), ResourceHoldReason::CurrentUnreadable),
                    ("alpha/c".to_owned(), ResourceHoldReason::OwnerMismatch),
                    ("alpha/d".to_owned(), ResourceHoldReason::RevisionsDisagree),
                    ("alpha/e".to_owned(), ResourceHoldReason::DeclaredBySeveral),
                ]
            );
            assert!(
                removed(p).iter().all(|r| r.starts_with("alpha/b ")),
                "{:?}",
                removed(p)
            );
            assert_eq!(removed(p).len(), 3);
            assert_eq!(p.skipped_revisions.len(), 1);
            assert_eq!(p.skipped_revisions[0].revision, 0);
        },
    },
    Case {
        name: "a_declaration_on_a_swarm_the_snapshot_does_not_list_holds_the_release",
        snapshot: || {
            // `shop2` names a destination the snapshot does not list (a
            // typo of alpha, maybe): it may declare `web` here too.
            snapshot(
                true,
                vec![
                    app("shop", "alpha", &["web"]),
                    app("shop2", "alhpa", &["web"]),
                ],
                vec![swarm(
                    "alpha",
                    vec![release(
                        "web",
                        &two_revisions("shop", "web"),
                        &left_behind(),
                    )],
                    vec![],
                )],
            )
        },
        check: |p| {
            assert_eq!(
                held(p),
                [(
                    "alpha/web".to_owned(),
                    ResourceHoldReason::DeclaredBySeveral
                )]
            );
            assert!(
                p.resource_holds[0]
                    .detail
                    .contains("shop2 (destination alhpa"),
                "{:?}",
                p.resource_holds
            );
            assert!(removed(p).is_empty(), "{:?}", removed(p));
        },
    },
    Case {
        name: "without_the_policy_or_the_application_s_opt_in_nothing_is_examined",
        snapshot: || {
            let mut s = snapshot(
                true,
                vec![Application::reconciled("shop", "alpha", &["web"])],
                vec![swarm(
                    "alpha",
                    vec![release(
                        "web",
                        &two_revisions("shop", "web"),
                        &left_behind(),
                    )],
                    vec![],
                )],
            );
            // Opted in, but the policy is off: still nothing.
            s.app_set.applications[0] = app("shop", "alpha", &["web"]);
            s.policy = Policy::new(resources::CONTROLLER, false, None);
            s
        },
        check: |p| {
            assert!(!p.prune_resources);
            assert!(p.dropped.is_empty() && p.unclaimed.is_empty() && p.resource_holds.is_empty());
        },
    },
    Case {
        name: "the_blast_radius_counts_dropped_objects",
        snapshot: || {
            let mut s = snapshot(
                true,
                vec![app("shop", "alpha", &["web"])],
                vec![swarm(
                    "alpha",
                    vec![release(
                        "web",
                        &two_revisions("shop", "web"),
                        &left_behind(),
                    )],
                    vec![],
                )],
            );
            s.policy.max_deletions = Some(2);
            s
        },
        check: |p| {
            assert!(p.is_held());
            assert!(p.dropped.is_empty());
            assert_eq!(
                held(p),
                [("alpha/web".to_owned(), ResourceHoldReason::Held)]
            );
        },
    },
];

#[test]
fn resource_cases() {
    let mut names = std::collections::BTreeSet::new();
    for case in CASES {
        assert!(names.insert(case.name), "duplicate case {}", case.name);
        let snapshot = (case.snapshot)();
        // The fixture is a document like any other: it reads back as is.
        let text = snapshot.to_json_pretty();
        assert_eq!(
            Snapshot::from_json(&text).unwrap(),
            snapshot,
            "{}",
            case.name
        );
        let p = plan(&snapshot).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        (case.check)(&p);
        // Neither the snapshot nor the saved plan takes a struct (a
        // revision, a dropped object, a resource hold...) from an array.
        shapes::each_object_as_array_is_refused(&text, |t| Snapshot::from_json(t).is_ok());
        let saved = SavedPlan::new(&snapshot, p.clone(), "1.0.0").to_json_pretty();
        shapes::each_object_as_array_is_refused(&saved, |t| SavedPlan::from_json(t).is_ok());
        assert!(p
            .dropped
            .iter()
            .flat_map(|d| &d.objects)
            .all(|o| o.kind != Kind::Service || o.version.is_some()));
        insta::assert_snapshot!(
            case.name,
            format!(
                "{}\n--- json ---\n{}\n",
                render::plan_text(&p),
                p.to_json_pretty()
            )
        );
        // Every dropped object is named in the comment, and counted in
        // its headline.
        let comment = markdown::plan_markdown(&p);
        let objects: Vec<_> = p.dropped.iter().flat_map(|d| &d.objects).collect();
        for o in &objects {
            assert!(
                comment.contains(&format!("{} {}", o.kind.as_str(), markdown::code(&o.name))),
                "{}: {} not in {comment}",
                case.name,
                o.name
            );
        }
        let headline = markdown::headline(&p);
        match objects.len() {
            0 => assert!(!headline.contains("dropped object"), "{headline}"),
            1 => assert!(headline.contains("1 dropped object "), "{headline}"),
            n => assert!(
                headline.contains(&format!("{n} dropped objects")),
                "{headline}"
            ),
        }
        insta::assert_snapshot!(format!("{}_markdown", case.name), comment);
    }
}

/// `explain` says, per dropped object, which revision declared it, which
/// dropped it, and a config's marker; and what it leaves unclaimed.
#[test]
fn explain_names_the_revisions_and_the_marker() {
    let mut objects = left_behind();
    objects.push(Obj::new("service", "extra"));
    let s = snapshot(
        true,
        vec![app("shop", "alpha", &["web"])],
        vec![swarm(
            "alpha",
            vec![release("web", &two_revisions("shop", "web"), &objects)],
            vec![],
        )],
    );
    let e = sweep_core::explain::explain(&s, &sweep_core::ReleaseRef::new("alpha", "web")).unwrap();
    let text = e.text();
    assert!(
        text.contains("Its service web_worker was declared by revision 1, dropped by revision 2, and is not declared by its current revision 2: it is removed."),
        "{text}"
    );
    assert!(
        text.contains("Its config web_conf2 was declared by revision 1")
            && text.contains("com.swarmcli.cd.created="),
        "{text}"
    );
    assert!(
        text.contains("Its service web_extra is not declared by its current revision but stays"),
        "{text}"
    );
    assert!(!e.deleted, "the release itself stays");
}

/// Outside its deletion windows a swarm keeps what its live releases
/// dropped: each release's objects are held back, named, with the reason;
/// inside them they go.
#[test]
fn outside_its_windows_a_swarm_keeps_the_dropped_objects() {
    use sweep_core::deletion_window::DeletionWindow;
    use sweep_core::UnixTime;

    let mut s = snapshot(
        true,
        vec![app("shop", "alpha", &["web"])],
        vec![swarm(
            "alpha",
            vec![release(
                "web",
                &two_revisions("shop", "web"),
                &left_behind(),
            )],
            vec![],
        )],
    )
    // A Saturday.
    .with_now(UnixTime::parse_rfc3339("2026-12-05T12:00:00Z").unwrap());
    s.swarms[0].windows = vec![DeletionWindow::parse("allow Mon-Fri 00:00-24:00 UTC").unwrap()];
    let p = plan(&s).unwrap();
    assert!(p.dropped.is_empty(), "{:?}", p.dropped);
    assert_eq!(
        held(&p),
        [("alpha/web".to_owned(), ResourceHoldReason::Held)]
    );
    let detail = &p.resource_holds[0].detail;
    assert!(
        detail.contains("service web_worker") && detail.ends_with("outside_window"),
        "{detail}"
    );

    // On the Monday.
    let monday = s.with_now(UnixTime::parse_rfc3339("2026-12-07T12:00:00Z").unwrap());
    assert_eq!(removed(&plan(&monday).unwrap()).len(), 3);
}
