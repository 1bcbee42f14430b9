//! How the sweep is pointed at swarms: without a registry file (the one
//! swarm `DOCKER_HOST` names), and with input it must refuse.

use serde_json::json;
use sweep_e2e::{
    about, app, assert_gone, assert_intact, create_record, create_stack_record, endpoint, list,
    one, wait_deployed, Cleanup, Remains, Scenario, Stack, SwarmEntry, ALPHA, BETA, QUICK,
};

#[test]
fn docker_host_alone_sweeps_a_departed_release_on_beta_with_node_local_coverage() {
    let s = Scenario::new();
    let gone = s.release("gone");
    let declared = s.release("declared");
    let unmanaged = s.release("unmanaged");
    let foreign = s.release("foreign");
    let mut cleanup = Cleanup::new(&BETA);
    for r in [&gone, &declared, &unmanaged, &foreign] {
        cleanup.add(r);
    }

    // Its task, and so its volume, on the manager: the only node this
    // registry reaches.
    let gone_stack = Stack::new(&gone).with_volume().on("beta-1");
    create_stack_record(&BETA, &gone_stack, 1, Some(&s.stamp("shop", &gone)));
    let others: Vec<Stack> = [&declared, &unmanaged, &foreign]
        .into_iter()
        .map(|r| Stack::new(r).with_volume().on("beta-2"))
        .collect();
    let [declared_stack, unmanaged_stack, foreign_stack] = &others[..] else {
        unreachable!("three stacks")
    };
    // Stamped for a departed application, but declared by a live one.
    create_stack_record(&BETA, declared_stack, 1, Some(&s.stamp("shop", &declared)));
    create_stack_record(&BETA, unmanaged_stack, 1, None);
    create_stack_record(
        &BETA,
        foreign_stack,
        1,
        Some(&format!("cd/other{}/shop:release/{foreign}", s.token)),
    );
    s.deploy(&BETA, &gone_stack);
    for stack in &others {
        s.deploy(&BETA, stack);
    }
    wait_deployed(&BETA, &gone_stack, &["beta-1"]);
    for stack in &others {
        wait_deployed(&BETA, stack, &["beta-2"]);
    }

    // The local swarm is named "".
    let apps = s.app_set("apps.json", json!([app("web", "", &[&declared])]));
    let run = s
        .sweep("apply", None, &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .env("DOCKER_HOST", &endpoint("beta-1"))
        .run();
    // The purge saw the manager only: beta-2 is left uncovered.
    run.expect_code(1);
    let out = run.json();
    let plan = &out["plan"];

    let deletion = one(plan, "deletions", &gone);
    assert_eq!(deletion["swarm"], "");
    assert_eq!(deletion["volumes"], "node_local");
    for (r, reason) in [
        (&declared, "declared"),
        (&unmanaged, "unmanaged"),
        (&foreign, "foreign_owner"),
    ] {
        assert!(about(plan, "deletions", r).is_empty(), "{r}: {plan:#}");
        assert_eq!(one(plan, "spared", r)["reason"], reason, "{r}");
    }
    let report = one(&out["report"], "releases", &gone);
    assert_eq!(report["outcome"], "deleted", "{report:#}");
    assert_eq!(report["coverage"], "node_local");
    assert_eq!(
        report["volumes_deleted"],
        json!({"(manager)": [gone_stack.volume()]})
    );
    let uncovered = list(&out["report"], "uncovered");
    assert_eq!(uncovered.len(), 1, "{out:#}");
    assert_eq!(uncovered[0]["swarm"], "");
    assert_eq!(uncovered[0]["coverage"], "node_local");
    assert_eq!(
        one(&uncovered[0], "releases", &gone)["label_filter"],
        format!("com.docker.stack.namespace={gone}")
    );

    assert_gone(&BETA, &gone);
    for r in [&declared, &unmanaged, &foreign] {
        assert_intact(&BETA, r, &["beta-2"]);
    }
}

#[test]
fn bad_input_exits_2_names_the_file_and_field_and_deletes_nothing() {
    let s = Scenario::new();
    let web = s.release("web");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    let stack = Stack::new(&web).with_volume().on("alpha-2");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let unknown_field = s.write(
        "unknown-field.json",
        r#"{"loaded": true, "applications": [{"name": "edge", "swarm": "alpha", "releases": [], "state": "reconciled", "replicas": 3}]}"#,
    );
    let bad_state = s.write(
        "bad-state.yaml",
        "loaded: true\napplications:\n  - name: edge\n    swarm: alpha\n    releases: []\n    state: finished\n",
    );
    let bad_config = s.write(
        "bad-registry.toml",
        &std::fs::read_to_string(&config)
            .expect("read the registry file")
            .replacen("manager =", "managr =", 1),
    );

    let path = |p: &std::path::Path| p.display().to_string();
    let cases = [
        (
            "unknown app-set field",
            s.sweep("apply", Some(&config), &unknown_field),
            vec![
                path(&unknown_field),
                "applications[0]".into(),
                "replicas".into(),
            ],
        ),
        (
            "bad app-set value",
            s.sweep("apply", Some(&config), &bad_state),
            vec![
                path(&bad_state),
                "applications[0].state".into(),
                "finished".into(),
            ],
        ),
        (
            "unknown config field",
            s.sweep("apply", Some(&bad_config), &apps),
            vec![path(&bad_config), "swarm \"alpha\"".into(), "managr".into()],
        ),
        (
            "unknown flag",
            s.sweep("apply", Some(&config), &apps).arg("--prune-volume"),
            vec!["--prune-volume".into()],
        ),
    ];
    for (what, sweep, named) in cases {
        let run = sweep.arg("--prune-volumes").run();
        run.expect_code(2);
        assert!(
            run.stdout.trim().is_empty(),
            "{what}: printed {}",
            run.stdout
        );
        for name in named {
            assert!(
                run.stderr.contains(&name),
                "{what}: the error does not name {name:?}:\n{}",
                run.stderr
            );
        }
        let r = Remains::read(&ALPHA, &web);
        assert!(
            r.records.len() == 1 && r.services.len() == 1 && r.volume_nodes() == ["alpha-2"],
            "{what}: the release was touched: {r:#?}"
        );
    }

    // The same sweep with good input does delete it: the refusals above
    // were the input's doing.
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(0);
    assert_eq!(
        one(&run.json()["report"], "releases", &web)["outcome"],
        "deleted"
    );
    assert_gone(&ALPHA, &web);
}

/// A bad `--retry-interval` is refused naming the flag, not some other
/// input, and nothing is touched.
#[test]
fn zero_retry_interval_is_refused_naming_the_flag() {
    let s = Scenario::new();
    let web = s.release("web");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    create_record(&ALPHA, &web, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &Stack::new(&web));

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let run = s
        .sweep("apply", Some(&config), &apps)
        .args(&["--retry-interval", "0"])
        .run();
    run.expect_code(2);
    let r = Remains::read(&ALPHA, &web);
    assert!(
        r.records.len() == 1 && r.services.len() == 1,
        "the release was touched: {r:#?}"
    );
    assert!(run.stderr.contains("--retry-interval"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("DOCKER_HOST"),
        "the error blames DOCKER_HOST, which was not even set: {}",
        run.stderr
    );
}
