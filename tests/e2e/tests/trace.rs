//! `apply --trace FILE` on the real engines: the trace of a sweep of one
//! release across alpha's three nodes keeps the order the sweep promises,
//! on the sweep's own clock, with the engine's events in it.

use serde_json::{json, Value};
use sweep_e2e::{
    app, assert_gone, create_stack_record, wait_deployed, Cleanup, Scenario, Stack, SwarmEntry,
    ALPHA, QUICK,
};

/// The spans of `release` in `trace`, in the order handed out.
fn spans_of<'a>(trace: &'a Value, release: &str) -> Vec<&'a Value> {
    trace["spans"]
        .as_array()
        .expect("spans is a list")
        .iter()
        .filter(|s| s["release"] == release)
        .collect()
}

fn us(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not a time in microseconds: {v}"))
}

/// The latest end of the spans `which` picks, and the earliest start.
fn bounds(spans: &[&Value], which: impl Fn(&Value) -> bool) -> (u64, u64) {
    let picked: Vec<&&Value> = spans.iter().filter(|s| which(s)).collect();
    assert!(!picked.is_empty(), "no such span among {spans:#?}");
    let first_start = picked.iter().map(|s| us(&s["start_us"])).min().unwrap();
    let last_end = picked.iter().map(|s| us(&s["end_us"])).max().unwrap();
    (first_start, last_end)
}

#[test]
fn the_trace_of_a_sweep_shows_each_step_in_order_on_the_sweeps_clock() {
    let s = Scenario::new();
    let web = s.release("traced");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    let stack = Stack::new(&web)
        .global()
        .with_volume()
        .with_network_secret_config();
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, ALPHA.nodes);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let file = s.dir().join("trace.json");
    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .arg("--trace")
        .arg(&file)
        .run();
    run.expect_code(0);
    assert_gone(&ALPHA, &web);
    let trace: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();

    // Every action of the sweep ended, and none before it started.
    for span in trace["spans"].as_array().unwrap() {
        assert!(us(&span["end_us"]) >= us(&span["start_us"]), "{span:#}");
        assert!(span["in_flight"].as_u64().unwrap() >= 1, "{span:#}");
    }
    let mine = spans_of(&trace, &web);
    let is = |step: &'static str| move |s: &Value| s["step"] == step;
    let part = |p: &'static str| move |s: &Value| s["step"] == "remove_stack" && s["part"] == p;

    // Services, then their tasks stopped, then the other parts, then the
    // volumes on every node, then the records: each step starts only once
    // the one before it has ended.
    let (_, services_end) = bounds(&mine, part("services"));
    let (tasks_start, tasks_end) = bounds(&mine, part("tasks"));
    let others = |s: &Value| {
        s["step"] == "remove_stack"
            && ["networks", "secrets", "configs"].contains(&s["part"].as_str().unwrap_or(""))
    };
    let (others_start, others_end) = bounds(&mine, others);
    let (volumes_start, volumes_end) = bounds(&mine, is("remove_volume"));
    let (records_start, _) = bounds(&mine, is("delete_records"));
    assert!(services_end <= tasks_start);
    assert!(tasks_end <= others_start);
    assert!(others_end <= volumes_start);
    assert!(volumes_end <= records_start);

    // The tasks step ended with the tasks stopped, and each node's volume
    // went once.
    let last_tasks = mine.iter().rev().find(|s| part("tasks")(s)).unwrap();
    assert_eq!(last_tasks["outcome"], "done");
    let removed: Vec<&str> = mine
        .iter()
        .filter(|s| s["step"] == "remove_volume" && s["outcome"] == "done")
        .map(|s| s["node"].as_str().unwrap())
        .collect();
    assert_eq!(removed.len(), ALPHA.nodes.len(), "{mine:#?}");

    // The engine told the sweep about the stack's containers going, on the
    // same clock.
    let events: Vec<&Value> = trace["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["release"] == web.as_str())
        .collect();
    assert!(!events.is_empty(), "no container event of {web}: {trace:#}");
    let last = mine.iter().map(|s| us(&s["end_us"])).max().unwrap();
    assert!(events.iter().all(|e| us(&e["at_us"]) <= last));
}
