//! Scenarios on swarm gamma, the one whose worker (gamma-2) may be stopped.
//! They run one at a time, across threads and processes alike (a file
//! lock, so a runner that starts each test in its own process is safe):
//! one stops gamma-2, the other needs gamma to stay as it is between two
//! reads; a third has gamma-2 leave and join again.

use std::fs::File;
use std::time::Duration;

use serde_json::{json, Value};
use sweep_e2e::{
    app, assert_gone, bed_up, create_record, create_stack_record, docker_ok, endpoint, lines, list,
    one, start_node, wait_deployed, wait_for, wait_node_status, Cleanup, LeftNode, Remains,
    Scenario, Stack, StoppedNode, SwarmEntry, GAMMA, QUICK,
};

/// Holds gamma for one test; the lock goes with the file when dropped.
fn gamma() -> File {
    let path = "/run/swarm-sweep-bed-gamma.lock";
    let guard = File::create(path).unwrap_or_else(|e| panic!("cannot open {path}: {e}"));
    guard
        .lock()
        .unwrap_or_else(|e| panic!("cannot lock {path}: {e}"));
    // An earlier run that was killed may have left it stopped, and `bed up`
    // leaves stopped nodes alone; the bed itself may not be up yet.
    bed_up();
    start_node("gamma-2");
    guard
}

/// The report of a sweep that purged gamma-1 alone of `db`'s volumes and
/// kept its records, `unreached` (a node's hostname or id) left uncovered.
fn pending_on_gamma_1_alone(out: &Value, db: &str, unreached: &str) {
    let label = format!("com.docker.stack.namespace={db}");
    assert_eq!(
        list(&out["report"], "uncovered"),
        [json!({
            "swarm": "gamma",
            "coverage": "partial",
            "node_count": 2,
            "covered": ["gamma-1"],
            "missing": 1,
            "unreached": [unreached],
            "releases": [{"release": db, "application": "reports", "label_filter": label}],
        })]
    );
    assert_eq!(out["report"]["totals"]["deleted"], 0);
    assert_eq!(out["report"]["totals"]["pending_coverage"], 1);
}

#[test]
fn node_down_is_uncovered_and_records_stay_pending_until_it_returns() {
    let _gamma = gamma();
    let s = Scenario::new();
    let db = s.release("db");
    let mut cleanup = Cleanup::new(&GAMMA);
    cleanup.add(&db);

    let stack = Stack::new(&db).global().with_volume();
    create_stack_record(&GAMMA, &stack, 1, Some(&s.stamp("reports", &db)));
    s.deploy(&GAMMA, &stack);
    wait_deployed(&GAMMA, &stack, GAMMA.nodes);
    let volume = stack.volume();

    // Dropped before `cleanup`: gamma-2 is back before it cleans up.
    let down = StoppedNode::stop("gamma-2");
    wait_node_status(&GAMMA, "gamma-2", "Down", Duration::from_secs(60));

    let config = s.registry("registry.toml", &[SwarmEntry::of(&GAMMA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "gamma", &[])]));

    // The plan: gamma-2 is counted but not reached.
    let plan = s
        .sweep("plan", Some(&config), &apps)
        .arg("--prune-volumes")
        .run();
    // Carrying it out would leave gamma-2's volume: a person has to look.
    plan.expect_code(1);
    let plan = plan.json();
    assert_eq!(one(&plan, "deletions", &db)["volumes"], "partial");
    let uncovered = list(&plan, "uncovered");
    assert_eq!(
        uncovered,
        [
            json!({"swarm": "gamma", "node_count": 2, "reached": ["gamma-1"], "missing": 1, "unreached": ["gamma-2"], "coverage": "partial"})
        ],
        "{plan:#}"
    );
    let swarm = &list(&plan, "swarms")[0];
    assert_eq!(swarm["coverage"], "partial");
    let reached: Vec<&str> = list(swarm, "nodes")
        .iter()
        .filter_map(|n| n["hostname"].as_str())
        .collect();
    assert_eq!(reached, ["gamma-1"]);

    // The sweep: the stack and gamma-1's volume go, the records stay.
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(1);
    let out = run.json();
    let report = one(&out["report"], "releases", &db);
    assert_eq!(report["outcome"], "pending_coverage", "{report:#}");
    assert_eq!(report["coverage"], "partial");
    assert_eq!(report["volumes_deleted"], json!({"gamma-1": [volume]}));
    let label = format!("com.docker.stack.namespace={db}");
    assert!(
        report["remedy"]
            .as_str()
            .is_some_and(|r| r.contains(&label)),
        "{report:#}"
    );
    pending_on_gamma_1_alone(&out, &db, "gamma-2");
    assert!(list(&out["plan"], "deletions")
        .iter()
        .all(|d| d["volumes"] != "complete"));

    let r = Remains::read(&GAMMA, &db);
    assert_eq!(r.stack_objects(), 0, "{r:#?}");
    assert_eq!(r.records.len(), 1, "the records must stay: {r:#?}");
    assert_eq!(r.volumes.get("gamma-1"), Some(&Vec::new()), "{r:#?}");
    assert_eq!(r.unanswered, ["gamma-2"], "{r:#?}");

    // gamma-2 is back, with the volume the records kept findable.
    down.start();
    let r = Remains::read(&GAMMA, &db);
    assert_eq!(r.volume_nodes(), ["gamma-2"], "{r:#?}");
    assert_eq!(r.records.len(), 1, "{r:#?}");

    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(0);
    let out = run.json();
    assert_eq!(one(&out["plan"], "deletions", &db)["volumes"], "complete");
    let report = one(&out["report"], "releases", &db);
    assert_eq!(report["outcome"], "deleted", "{report:#}");
    assert_eq!(report["volumes_deleted"], json!({"gamma-2": [volume]}));
    assert!(list(&out["report"], "uncovered").is_empty());
    assert_gone(&GAMMA, &db);
}

#[test]
fn snapshot_file_plans_the_same_as_gathering_from_the_swarms() {
    let _gamma = gamma();
    let s = Scenario::new();
    let gone = s.release("gone");
    let live = s.release("live");
    let foreign = s.release("foreign");
    let unmanaged = s.release("unmanaged");
    let mut cleanup = Cleanup::new(&GAMMA);
    for r in [&gone, &live, &foreign, &unmanaged] {
        cleanup.add(r);
    }
    // Records are all a plan reads of a release.
    create_record(&GAMMA, &gone, 1, Some(&s.stamp("shop", &gone)));
    create_record(&GAMMA, &live, 1, Some(&s.stamp("web", &live)));
    create_record(&GAMMA, &live, 2, Some(&s.stamp("web", &live)));
    create_record(
        &GAMMA,
        &foreign,
        1,
        Some(&format!("cd/other{}/shop:release/{foreign}", s.token)),
    );
    create_record(&GAMMA, &unmanaged, 1, None);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&GAMMA)]);
    let apps = s.app_set("apps.json", json!([app("web", "gamma", &[&live])]));
    let policy = ["--prune-volumes", "--max-deletions", "5"];

    let snapshot = s
        .sweep("snapshot", Some(&config), &apps)
        .args(&policy)
        .run();
    snapshot.expect_code(0);
    let file = s.write("snapshot.json", &snapshot.stdout);
    let from_file = sweep_e2e::Sweep::new(&["plan", "--snapshot"])
        .arg(&file)
        .run();
    from_file.expect_code(0);
    let gathered = s.sweep("plan", Some(&config), &apps).args(&policy).run();
    gathered.expect_code(0);

    assert_eq!(
        from_file.stdout, gathered.stdout,
        "the plans differ; snapshot:\n{}",
        snapshot.stdout
    );
    let plan = gathered.json();
    assert_eq!(one(&plan, "deletions", &gone)["volumes"], "complete");
    assert_eq!(one(&plan, "spared", &live)["reason"], "current_application");
    assert_eq!(one(&plan, "spared", &foreign)["reason"], "foreign_owner");
    assert_eq!(one(&plan, "spared", &unmanaged)["reason"], "unmanaged");
    // A plan only reads: everything is still there.
    for r in [&gone, &live, &foreign, &unmanaged] {
        assert!(
            !Remains::read(&GAMMA, r).records.is_empty(),
            "{r} lost its records"
        );
    }
}

#[test]
fn a_node_joined_during_the_sweep_keeps_the_records_of_a_complete_purge() {
    let _gamma = gamma();
    let s = Scenario::new();
    let db = s.release("db");
    let mut cleanup = Cleanup::new(&GAMMA);
    cleanup.add(&db);

    // Dropped before `cleanup`: gamma-2 is back before it cleans up.
    let left = LeftNode::leave(&GAMMA, "gamma-2");
    let manager_only = || lines(&docker_ok(GAMMA.manager, &["node", "ls", "-q"])).len() == 1;
    wait_for(
        "gamma to count one node",
        Duration::from_secs(30),
        manager_only,
    );

    // Its task ignores SIGTERM: the sweep waits for it, with gamma-2 joined
    // by then (`bed up` takes seconds; the grace leaves room for a loaded
    // machine).
    let grace = 30;
    let stack = Stack::new(&db).global().with_volume().stubborn(grace);
    create_stack_record(&GAMMA, &stack, 1, Some(&s.stamp("reports", &db)));
    s.deploy(&GAMMA, &stack);
    wait_deployed(&GAMMA, &stack, &["gamma-1"]);
    let volume = stack.volume();

    let config = s.registry(
        "registry.toml",
        &[SwarmEntry::named("gamma", &endpoint("gamma-1")).with_nodes(vec![endpoint("gamma-1")])],
    );
    let apps = s.app_set("apps.json", json!([app("edge", "gamma", &[])]));
    let mut sweep = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .spawn();
    // The service gone: the sweep planned with gamma's one node, and waits
    // for the task.
    let service = stack.service();
    wait_for(
        &format!("the sweep to remove {service}"),
        Duration::from_secs(30),
        || {
            !lines(&docker_ok(
                GAMMA.manager,
                &["service", "ls", "--format", "{{.Name}}"],
            ))
            .contains(&service)
        },
    );
    left.join();
    assert!(
        sweep.is_running(),
        "the sweep ended before gamma-2 joined: nothing to test; stderr:\n{}",
        sweep.stderr_so_far()
    );
    let joined = docker_ok("gamma-2", &["info", "--format", "{{.Swarm.NodeID}}"]);

    let run = sweep.wait();
    run.expect_code(1);
    assert!(
        run.elapsed >= Duration::from_secs(grace.into()),
        "the sweep ended in {:?}, before the task let go of the volume",
        run.elapsed
    );
    let out = run.json();
    assert_eq!(one(&out["plan"], "deletions", &db)["volumes"], "complete");
    assert!(list(&out["plan"], "uncovered").is_empty());
    let report = one(&out["report"], "releases", &db);
    assert_eq!(report["outcome"], "pending_coverage", "{report:#}");
    assert_eq!(report["coverage"], "partial");
    assert_eq!(report["volumes_deleted"], json!({"gamma-1": [volume]}));
    assert_eq!(
        report["errors"],
        json!([]),
        "a join is no error: {report:#}"
    );
    pending_on_gamma_1_alone(&out, &db, &joined);

    let r = Remains::read(&GAMMA, &db);
    assert_eq!(r.stack_objects(), 0, "{r:#?}");
    assert_eq!(r.records.len(), 1, "the records must stay: {r:#?}");
    assert!(r.volume_nodes().is_empty(), "{r:#?}");

    // Read with both nodes, the purge is complete, and the records go.
    let config = s.registry("registry-both.toml", &[SwarmEntry::of(&GAMMA)]);
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(0);
    let out = run.json();
    let report = one(&out["report"], "releases", &db);
    assert_eq!(report["outcome"], "deleted", "{report:#}");
    assert_gone(&GAMMA, &db);
}
