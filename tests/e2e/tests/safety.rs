//! What a sweep must never delete, on swarms alpha and beta: a release of
//! the same name on another swarm, what one swarm declares under a second
//! name, another controller's releases, the controller's own stack, and
//! anything on a swarm whose manager cannot be read.

use serde_json::json;
use sweep_e2e::{
    about, app, assert_gone, assert_intact, create_record, create_stack_record, endpoint, list,
    one, release_names, socket_path, wait_deployed, Cleanup, Scenario, Stack, SwarmEntry, ALPHA,
    BETA, QUICK,
};

#[test]
fn same_release_name_on_two_swarms_goes_only_where_no_longer_declared() {
    let s = Scenario::new();
    let web = s.release("web");
    let mut on_alpha = Cleanup::new(&ALPHA);
    let mut on_beta = Cleanup::new(&BETA);
    on_alpha.add(&web);
    on_beta.add(&web);

    // Both stamped for `shop`, which now deploys `web` to alpha only.
    let stack = Stack::new(&web).global().with_volume();
    for swarm in [&ALPHA, &BETA] {
        create_stack_record(swarm, &stack, 1, Some(&s.stamp("shop", &web)));
        s.deploy(swarm, &stack);
    }
    wait_deployed(&ALPHA, &stack, ALPHA.nodes);
    wait_deployed(&BETA, &stack, BETA.nodes);

    let config = s.registry(
        "registry.toml",
        &[SwarmEntry::of(&ALPHA), SwarmEntry::of(&BETA)],
    );
    let apps = s.app_set("apps.json", json!([app("shop", "alpha", &[&web])]));
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(0);
    let out = run.json();

    let deletion = one(&out["plan"], "deletions", &web);
    assert_eq!(deletion["swarm"], "beta");
    assert_eq!(deletion["reason"], "destination_moved");
    assert_eq!(deletion["volumes"], "complete");
    let spared = one(&out["plan"], "spared", &web);
    assert_eq!(spared["swarm"], "alpha");
    assert_eq!(spared["reason"], "current_application");
    let report = one(&out["report"], "releases", &web);
    assert_eq!(report["swarm"], "beta");
    assert_eq!(report["outcome"], "deleted", "{report:#}");
    let volume = stack.volume();
    assert_eq!(
        report["volumes_deleted"],
        json!({"beta-1": [volume], "beta-2": [volume]})
    );

    assert_gone(&BETA, &web);
    assert_intact(&ALPHA, &web, ALPHA.nodes);
}

#[test]
fn one_swarm_under_two_names_is_one_swarm_and_keeps_what_either_name_declares() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let first = s.release("first");
    let second = s.release("second");
    let third = s.release("third");
    let gone = s.release("gone");
    for r in [&first, &second, &third, &gone] {
        cleanup.add(r);
    }

    // alpha under three names: its own, the same manager endpoint again,
    // and a path (a symlink to alpha-1's socket) no endpoint comparison can
    // tell is the same daemon. Only the cluster id says they are one swarm.
    let link = s.dir().join("alpha-1.sock");
    std::os::unix::fs::symlink(socket_path("alpha-1"), &link).expect("symlink to alpha-1's socket");
    let link = format!("unix://{}", link.display());
    let config = s.registry(
        "registry.toml",
        &[
            SwarmEntry::of(&ALPHA),
            SwarmEntry::named("alpha-too", &endpoint("alpha-1")),
            SwarmEntry::named("alpha-link", &link).with_nodes(vec![
                link.clone(),
                endpoint("alpha-2"),
                endpoint("alpha-3"),
            ]),
        ],
    );
    let apps = s.app_set(
        "apps.json",
        json!([
            app("app-first", "alpha", &[&first]),
            app("app-second", "alpha-too", &[&second]),
            app("app-third", "alpha-link", &[&third]),
        ]),
    );
    // Under the name "alpha" alone, `second` and `third` look moved away
    // (their applications deploy to "alpha-too" and "alpha-link").
    for (r, application) in [
        (&first, "app-first"),
        (&second, "app-second"),
        (&third, "app-third"),
        (&gone, "app-gone"),
    ] {
        create_record(&ALPHA, r, 1, Some(&s.stamp(application, r)));
        s.deploy(&ALPHA, &Stack::new(r));
    }

    let run = s.sweep("apply", Some(&config), &apps).args(QUICK).run();
    run.expect_code(0);
    let out = run.json();
    let plan = &out["plan"];

    let clusters: Vec<_> = list(plan, "swarms")
        .iter()
        .filter(|c| c["names"] == json!(["alpha", "alpha-link", "alpha-too"]))
        .collect();
    assert_eq!(
        clusters.len(),
        1,
        "alpha should be one cluster under all three names: {plan:#}"
    );
    assert_eq!(list(plan, "swarms").len(), 1, "{plan:#}");
    for r in [&first, &second, &third] {
        assert!(
            about(plan, "deletions", r).is_empty(),
            "{r} planned: {plan:#}"
        );
        assert_eq!(one(plan, "spared", r)["reason"], "current_application");
    }
    // Departed: deleted once, not once per name.
    assert_eq!(one(plan, "deletions", &gone)["reason"], "departed");
    assert_eq!(one(&out["report"], "releases", &gone)["outcome"], "deleted");

    for r in [&first, &second, &third] {
        assert_intact(&ALPHA, r, &[]);
    }
    assert_gone(&ALPHA, &gone);
}

#[test]
fn another_controllers_releases_are_untouched() {
    let s = Scenario::new();
    let ours = s.release("ours");
    let theirs = s.release("theirs");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&ours);
    cleanup.add(&theirs);

    // The same departed application name under both controllers.
    let other = format!("other{}", s.token);
    let ours_stack = Stack::new(&ours).with_volume().on("alpha-3");
    let theirs_stack = Stack::new(&theirs).with_volume().on("alpha-3");
    create_stack_record(&ALPHA, &ours_stack, 1, Some(&s.stamp("shop", &ours)));
    create_stack_record(
        &ALPHA,
        &theirs_stack,
        1,
        Some(&format!("cd/{other}/shop:release/{theirs}")),
    );
    s.deploy(&ALPHA, &ours_stack);
    s.deploy(&ALPHA, &theirs_stack);
    wait_deployed(&ALPHA, &ours_stack, &["alpha-3"]);
    wait_deployed(&ALPHA, &theirs_stack, &["alpha-3"]);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(0);
    let out = run.json();
    assert_eq!(one(&out["report"], "releases", &ours)["outcome"], "deleted");
    assert!(about(&out["plan"], "deletions", &theirs).is_empty());
    let spared = one(&out["plan"], "spared", &theirs);
    assert_eq!(spared["reason"], "foreign_owner");
    assert_gone(&ALPHA, &ours);
    assert_intact(&ALPHA, &theirs, &["alpha-3"]);

    // Its own controller does sweep it: what spared it was the stamp.
    let run = s
        .sweep_as(&other, "apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(0);
    assert_eq!(
        one(&run.json()["report"], "releases", &theirs)["outcome"],
        "deleted"
    );
    assert_gone(&ALPHA, &theirs);
}

#[test]
fn own_stack_stamped_for_a_departed_application_is_left_in_place_with_exit_0() {
    let s = Scenario::new();
    let me = s.release("sweeper");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&me);
    let stack = Stack::new(&me).with_volume().on("alpha-1");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("platform", &me)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-1"]);

    let config = s.registry(
        "registry.toml",
        &[SwarmEntry::of(&ALPHA).with_self_stack(&me)],
    );
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(0);
    let out = run.json();
    let spared = one(&out["plan"], "spared", &me);
    assert_eq!(spared["reason"], "own_stack");
    assert_eq!(spared["swarm"], "alpha");
    assert!(about(&out["plan"], "deletions", &me).is_empty());
    assert!(about(&out["report"], "releases", &me).is_empty());
    assert_intact(&ALPHA, &me, &["alpha-1"]);
}

#[test]
fn unreachable_manager_is_held_unreadable_while_the_other_swarm_is_swept() {
    let s = Scenario::new();
    let gone = s.release("gone");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&gone);
    create_record(&ALPHA, &gone, 1, Some(&s.stamp("shop", &gone)));
    s.deploy(&ALPHA, &Stack::new(&gone));

    let lost = format!("unix://{}", s.dir().join("no-such-manager.sock").display());
    let config = s.registry(
        "registry.toml",
        &[SwarmEntry::named("lost", &lost), SwarmEntry::of(&ALPHA)],
    );
    let apps = s.app_set(
        "apps.json",
        json!([app("edge", "alpha", &[]), app("far", "lost", &["far-web"])]),
    );
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(1);
    let out = run.json();
    let plan = &out["plan"];

    let holds: Vec<_> = list(plan, "holds")
        .iter()
        .filter(|h| h["scope"] == "lost")
        .collect();
    assert_eq!(holds.len(), 1, "{plan:#}");
    assert_eq!(holds[0]["reason"], "swarm_unreadable");
    assert!(
        list(plan, "holds").iter().all(|h| h["scope"] != "sweep"),
        "the whole sweep is held: {plan:#}"
    );
    let lost_swarm: Vec<_> = list(plan, "swarms")
        .iter()
        .filter(|c| c["swarm"] == "lost")
        .collect();
    assert_eq!(lost_swarm.len(), 1);
    assert_eq!(lost_swarm[0]["readable"], false);
    assert!(list(plan, "deletions").iter().all(|d| d["swarm"] != "lost"));
    assert!(list(&out["report"], "releases")
        .iter()
        .all(|r| r["swarm"] != "lost"));

    assert_eq!(one(plan, "deletions", &gone)["swarm"], "alpha");
    assert_eq!(one(&out["report"], "releases", &gone)["outcome"], "deleted");
    assert_eq!(
        release_names(&out["report"], "releases"),
        [gone.clone()].into()
    );
    assert_gone(&ALPHA, &gone);
}

/// The plan unites the nodes reached under every name of a cluster and
/// names the cluster by its smallest name; the purge must reach a node
/// through whichever name lists it, even when the plan's name lists none.
#[test]
fn one_swarm_under_two_names_purges_volumes_through_nodes_reached_under_either_name() {
    let s = Scenario::new();
    let gone = s.release("gone");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&gone);
    let stack = Stack::new(&gone).with_volume().on("alpha-2");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &gone)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);

    // "alpha" (the cluster's name in the plan) lists no nodes; its second
    // name lists all three.
    let config = s.registry(
        "registry.toml",
        &[
            SwarmEntry::named("alpha", &endpoint("alpha-1")),
            SwarmEntry::of(&ALPHA).renamed("alpha-nodes"),
        ],
    );
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    let out = run.json();
    assert_eq!(one(&out["plan"], "deletions", &gone)["volumes"], "complete");
    let report = one(&out["report"], "releases", &gone);
    assert_eq!(report["outcome"], "deleted", "{report:#}");
    assert_eq!(
        report["volumes_deleted"],
        json!({"alpha-2": [stack.volume()]})
    );
    run.expect_code(0);
    assert_gone(&ALPHA, &gone);
}
