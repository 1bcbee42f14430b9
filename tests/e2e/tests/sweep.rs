//! Sweeping departed releases off swarm alpha (three nodes): the full
//! purge, a volume that stays in use for a while, a sweeper killed halfway,
//! and a second sweep after a successful one.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use serde_json::json;
use sweep_e2e::{
    about, app, assert_gone, assert_intact, create_stack_record, list, one, wait_deployed,
    wait_for, Cleanup, Remains, Running, Scenario, Stack, SwarmEntry, Sweep, ALPHA, QUICK,
};

#[test]
fn departed_release_is_swept_from_every_node_with_complete_coverage() {
    let s = Scenario::new();
    let web = s.release("web");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);

    let stack = Stack::new(&web)
        .global()
        .with_volume()
        .with_network_secret_config();
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    create_stack_record(&ALPHA, &stack, 2, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, ALPHA.nodes);
    let before = Remains::read(&ALPHA, &web);
    assert!(
        before.services.len() == 1
            && before.networks.len() == 1
            && before.secrets.len() == 1
            && before.configs.len() == 1
            && before.records.len() == 2
            && before.volume_nodes() == ALPHA.nodes,
        "the stack is not fully deployed: {before:#?}"
    );

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .run();
    run.expect_code(0);
    let out = run.json();

    let deletion = one(&out["plan"], "deletions", &web);
    assert_eq!(deletion["swarm"], "alpha");
    assert_eq!(deletion["application"], "shop");
    assert_eq!(deletion["reason"], "departed");
    assert_eq!(deletion["volumes"], "complete");
    let report = one(&out["report"], "releases", &web);
    assert_eq!(report["outcome"], "deleted", "{report:#}");
    assert_eq!(report["coverage"], "complete");
    let volume = stack.volume();
    assert_eq!(
        report["volumes_deleted"],
        json!({"alpha-1": [volume], "alpha-2": [volume], "alpha-3": [volume]})
    );
    assert_eq!(report["errors"], json!([]));
    assert!(list(&out["report"], "uncovered").is_empty());

    assert_gone(&ALPHA, &web);
}

#[test]
fn volume_held_by_a_stopping_task_is_retried_until_released() {
    let s = Scenario::new();
    let db = s.release("db");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&db);

    // The task ignores SIGTERM, so it keeps the volume for its whole grace
    // period after the stack is removed.
    let grace = 8;
    let stack = Stack::new(&db).with_volume().on("alpha-2").stubborn(grace);
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("billing", &db)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let run = s
        .sweep("apply", Some(&config), &apps)
        .args(&[
            "--prune-volumes",
            "--retry-interval",
            "1",
            "--settle-timeout",
            "90",
        ])
        .env("SWARM_SWEEP_LOG", "info")
        .run();
    run.expect_code(0);
    let out = run.json();
    let report = one(&out["report"], "releases", &db);
    assert_eq!(report["outcome"], "deleted", "{report:#}");
    assert_eq!(
        report["volumes_deleted"],
        json!({"alpha-2": [stack.volume()]})
    );
    assert!(
        run.elapsed >= Duration::from_secs(grace.into()),
        "the sweep finished in {:?}, before the task could have let go",
        run.elapsed
    );
    let attempts = run
        .stderr
        .lines()
        .filter(|l| l.contains("removing volume") && l.contains(&stack.volume()))
        .count();
    assert!(
        attempts >= 2,
        "expected the removal to be tried again while in use, saw {attempts} attempt(s):\n{}",
        run.stderr
    );

    assert_gone(&ALPHA, &db);
}

#[test]
fn sweep_killed_midway_leaves_no_release_without_records_and_converges_on_rerun() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let departed: Vec<Stack> = ALPHA
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            Stack::new(&s.release(&format!("old{i}")))
                .with_volume()
                .on(node)
                .stubborn(5)
        })
        .collect();
    let kept = Stack::new(&s.release("live")).with_volume().on("alpha-2");
    for stack in departed.iter().chain([&kept]) {
        cleanup.add(&stack.release);
    }
    for stack in &departed {
        create_stack_record(&ALPHA, stack, 1, Some(&s.stamp("legacy", &stack.release)));
        s.deploy(&ALPHA, stack);
    }
    create_stack_record(&ALPHA, &kept, 1, Some(&s.stamp("live", &kept.release)));
    s.deploy(&ALPHA, &kept);
    for (stack, node) in departed.iter().zip(ALPHA.nodes) {
        wait_deployed(&ALPHA, stack, &[node]);
    }
    wait_deployed(&ALPHA, &kept, &["alpha-2"]);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set(
        "apps.json",
        json!([app("live", "alpha", &[kept.release.as_str()])]),
    );
    let apply = s.sweep("apply", Some(&config), &apps).args(&[
        "--prune-volumes",
        "--retry-interval",
        "1",
        "--settle-timeout",
        "90",
    ]);

    let killed = midway(&apply).kill();
    assert_eq!(
        killed.status.signal(),
        Some(9),
        "the sweep ended before it was killed ({}):\n{}",
        killed.status,
        killed.stderr
    );

    // Between the kill and the rerun: whatever is left of a departed
    // release is still findable through its records.
    let mut unfinished = 0;
    for stack in &departed {
        let r = Remains::read(&ALPHA, &stack.release);
        assert!(r.unanswered.is_empty(), "a node did not answer: {r:#?}");
        if r.resources_left() {
            unfinished += 1;
            assert!(
                !r.records.is_empty(),
                "{} has resources left but no records: {r:#?}",
                stack.release
            );
        }
    }
    assert!(
        unfinished > 0,
        "the kill came after the work was done; nothing was interrupted"
    );
    assert_intact(&ALPHA, &kept.release, &["alpha-2"]);

    let rerun = apply.run();
    rerun.expect_code(0);
    let out = rerun.json();
    for stack in &departed {
        let report = one(&out["report"], "releases", &stack.release);
        assert_eq!(report["outcome"], "deleted", "{report:#}");
        assert_gone(&ALPHA, &stack.release);
    }
    assert!(about(&out["plan"], "deletions", &kept.release).is_empty());
    assert_intact(&ALPHA, &kept.release, &["alpha-2"]);
}

/// Starts `apply` and returns once it is deleting and, its stubborn tasks
/// holding their volumes for 5 s, waiting for them: the moment to stop it.
fn midway(apply: &Sweep) -> Running {
    let running = apply.spawn();
    wait_for(
        "the sweep to start deleting",
        Duration::from_secs(30),
        || running.stderr_so_far().contains("deleting release"),
    );
    std::thread::sleep(Duration::from_millis(1500));
    running
}

#[test]
fn interrupted_sweep_finishes_the_steps_in_flight_reports_and_converges_on_rerun() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let departed: Vec<Stack> = ["alpha-2", "alpha-3"]
        .iter()
        .enumerate()
        .map(|(i, node)| {
            Stack::new(&s.release(&format!("int{i}")))
                .with_volume()
                .on(node)
                .stubborn(5)
        })
        .collect();
    for stack in &departed {
        cleanup.add(&stack.release);
        create_stack_record(&ALPHA, stack, 1, Some(&s.stamp("legacy", &stack.release)));
        s.deploy(&ALPHA, stack);
    }
    for (stack, node) in departed.iter().zip(["alpha-2", "alpha-3"]) {
        wait_deployed(&ALPHA, stack, &[node]);
    }

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("live", "alpha", &[])]));
    let apply = s.sweep("apply", Some(&config), &apps).args(&[
        "--prune-volumes",
        "--retry-interval",
        "1",
        "--settle-timeout",
        "90",
    ]);
    let stopped = midway(&apply).interrupt();
    // It ends by itself, with a report, not by the signal.
    stopped.expect_code(1);
    assert!(stopped.stderr.contains("interrupted"), "{}", stopped.stderr);
    let out = stopped.json();
    let mut unfinished = 0;
    for stack in &departed {
        let report = one(&out["report"], "releases", &stack.release);
        let r = Remains::read(&ALPHA, &stack.release);
        assert!(r.unanswered.is_empty(), "a node did not answer: {r:#?}");
        if report["outcome"] != "deleted" {
            unfinished += 1;
            assert!(
                !r.records.is_empty(),
                "interrupted but records gone: {r:#?}"
            );
        }
        if r.resources_left() {
            assert!(
                !r.records.is_empty(),
                "resources left but no records: {r:#?}"
            );
        }
    }
    assert!(unfinished > 0, "the interrupt came after the work was done");

    let rerun = apply.run();
    rerun.expect_code(0);
    let out = rerun.json();
    for stack in &departed {
        assert_eq!(
            one(&out["report"], "releases", &stack.release)["outcome"],
            "deleted"
        );
        assert_gone(&ALPHA, &stack.release);
    }
}

#[test]
fn second_apply_after_a_successful_one_plans_nothing_and_exits_0() {
    let s = Scenario::new();
    let api = s.release("api");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&api);
    let stack = Stack::new(&api).with_volume().on("alpha-3");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &api)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-3"]);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let apply = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK);
    let first = apply.run();
    first.expect_code(0);
    assert_eq!(
        one(&first.json()["report"], "releases", &api)["outcome"],
        "deleted"
    );
    assert_gone(&ALPHA, &api);

    let second = apply.run();
    second.expect_code(0);
    let out = second.json();
    // Other scenarios' releases on alpha carry other controllers' stamps:
    // this controller has nothing left to delete at all.
    assert!(list(&out["plan"], "deletions").is_empty(), "{out:#}");
    assert!(list(&out["report"], "releases").is_empty(), "{out:#}");
    assert_eq!(out["report"]["totals"]["planned"], 0);
}

/// What one command made of the same three steps: each step's exit status,
/// the releases (by base name) its state file lists as departed after it,
/// and whether the departed release is gone and the declared one intact.
#[derive(Debug, PartialEq, Eq)]
struct CycleSteps {
    codes: Vec<Option<i32>>,
    departed: Vec<Vec<String>>,
    gone: Vec<bool>,
}

/// Runs one scenario through `command` (`apply` or `watch --once`), as a
/// controller of its own: a departed release inside its grace period, then
/// with the period off, then with an app set that does not parse.
fn cycle_steps(command: &str) -> CycleSteps {
    let s = Scenario::new();
    let gone = s.release("gone");
    let kept = s.release("kept");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&gone);
    cleanup.add(&kept);
    for (release, application) in [(&gone, "old"), (&kept, "shop")] {
        let stack = Stack::new(release)
            .on("alpha-2")
            .with_volume()
            .with_network_secret_config();
        create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp(application, release)));
        s.deploy(&ALPHA, &stack);
        wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    }
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("shop", "alpha", &[&kept])]));
    let broken = s.write("broken.yaml", "loaded: [unclosed\n");
    let state = s.dir().join("state.json");
    let state_arg = state.display().to_string();
    let run = |app_set: &std::path::Path, extra: &[&str]| {
        let mut sweep = s.sweep(command, Some(&config), app_set);
        if command == "watch" {
            sweep = sweep.arg("--once");
        }
        sweep
            .args(&["--state", &state_arg, "--prune-volumes"])
            .args(QUICK)
            .args(extra)
            .run()
    };
    let departed = || -> Vec<String> {
        let text = std::fs::read_to_string(&state).expect("the state file");
        let state: serde_json::Value = serde_json::from_str(&text).expect("state JSON");
        list(&state, "departed")
            .iter()
            .map(|d| {
                let release = d["release"].as_str().unwrap_or_default();
                release
                    .strip_suffix(&format!("-{}", s.token))
                    .unwrap_or(release)
                    .to_owned()
            })
            .collect()
    };
    let mut steps = CycleSteps {
        codes: Vec::new(),
        departed: Vec::new(),
        gone: Vec::new(),
    };
    for (app_set, extra) in [
        (&apps, &["--min-departed-for", "1h"][..]),
        (&apps, &["--min-departed-for", "off"][..]),
        (&broken, &[][..]),
    ] {
        let run = run(app_set, extra);
        steps.codes.push(run.code());
        steps.departed.push(departed());
        steps.gone.push(Remains::read(&ALPHA, &gone).is_gone());
        assert_intact(&ALPHA, &kept, &["alpha-2"]);
    }
    steps
}

/// `apply` and `watch --once` run one sweep cycle: the same scenario gives
/// the same exit statuses, the same grace state and the same engine state
/// after every step.
#[test]
fn apply_and_watch_once_agree_step_by_step() {
    let (apply, watch) = std::thread::scope(|scope| {
        let apply = scope.spawn(|| cycle_steps("apply"));
        let watch = scope.spawn(|| cycle_steps("watch"));
        (apply.join().unwrap(), watch.join().unwrap())
    });
    assert_eq!(
        apply,
        CycleSteps {
            // Inside the window: nothing needs a person and nothing goes;
            // then it goes; then a broken app set is bad input.
            codes: vec![Some(0), Some(0), Some(2)],
            departed: vec![vec!["gone".into()], vec![], vec![]],
            gone: vec![false, true, true],
        }
    );
    assert_eq!(watch, apply);
}
