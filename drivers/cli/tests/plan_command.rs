//! `swarm-sweep plan --snapshot`: the examples docs/guide.md walks through, and
//! bad input that must end in one clear line and exit status 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swarm-sweep"))
        .args(args)
        .output()
        .expect("the swarm-sweep binary runs")
}

fn plan_json(example: &str) -> serde_json::Value {
    plan_json_exiting(example, 0)
}

fn plan_json_exiting(example: &str, code: i32) -> serde_json::Value {
    let file = root().join("examples").join(example);
    let out = sweep(&["plan", "--snapshot", file.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("plan output is JSON")
}

fn deleted(plan: &serde_json::Value) -> Vec<String> {
    plan["deletions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                d["swarm"].as_str().unwrap(),
                d["release"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn one_swarm_example_deletes_only_the_departed_application() {
    let plan = plan_json("one-swarm.json");
    assert_eq!(deleted(&plan), ["/shop", "/shop-cache"]);
    assert!(plan["deletions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["volumes"] == "complete"));
    let own: Vec<_> = plan["spared"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reason"] == "own_stack")
        .collect();
    assert_eq!(own.len(), 1);
}

#[test]
fn three_swarms_example_keeps_the_colliding_name_where_declared() {
    let plan = plan_json("three-swarms.json");
    assert_eq!(deleted(&plan), ["ops/web", "us/web"]);
}

#[test]
fn node_down_example_reports_the_uncovered_node() {
    // Carrying it out would leave data on the node nobody reached: a
    // person has to look, so the plan ends with status 1.
    let plan = plan_json_exiting("node-down.json", 1);
    assert_eq!(deleted(&plan), ["prod/reports"]);
    assert_eq!(plan["deletions"][0]["volumes"], "partial");
    assert_eq!(plan["uncovered"][0]["missing"], 1);
    assert_eq!(
        plan["uncovered"][0]["reached"],
        serde_json::json!(["prod-mgr", "prod-w1"])
    );
}

#[test]
fn text_format_names_what_goes_and_why_the_rest_stays() {
    let file = root().join("examples/three-swarms.json");
    let out = sweep(&[
        "plan",
        "--snapshot",
        file.to_str().unwrap(),
        "--format",
        "text",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // Grouped by swarm: each release under its swarm's header.
    let section = |swarm: &str| -> String {
        text.split("\n\n")
            .find(|block| block.starts_with(&format!("swarm {swarm}:")))
            .unwrap_or_else(|| panic!("no section for swarm {swarm}: {text}"))
            .to_owned()
    };
    assert!(
        section("us").contains("delete  web  departed, application shop-legacy"),
        "{text}"
    );
    assert!(
        section("eu").contains("spare   web  current_application"),
        "{text}"
    );
    assert!(
        section("ops").contains("spare   loki  foreign_owner"),
        "{text}"
    );
    assert!(
        text.ends_with("2 to delete, 6 spared, 0 nodes not covered\n"),
        "{text}"
    );
}

fn bad(name: &str, content: &str) -> (i32, String, String) {
    let dir = std::env::temp_dir().join(format!("swarm-sweep-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    std::fs::write(&file, content).unwrap();
    let out = sweep(&["plan", "--snapshot", file.to_str().unwrap()]);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_snapshots_exit_2_with_one_line_naming_file_and_field() {
    let cases = [
        (
            "unknown-field.json",
            r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a","releases":[{"name":"x","ownr":"y"}]}]}"#,
            "swarms[0].releases[0].ownr",
        ),
        (
            "wrong-type.json",
            r#"{"policy":{"purge_volumes":"yes"},"app_set":{"loaded":true}}"#,
            "policy.purge_volumes",
        ),
        (
            "missing-loaded.json",
            r#"{"app_set":{"applications":[]}}"#,
            "loaded",
        ),
        (
            "bad-state.json",
            r#"{"app_set":{"loaded":true,"applications":[{"name":"a","swarm":"","state":"gone"}]}}"#,
            "app_set.applications[0].state",
        ),
        (
            "dup-app.json",
            r#"{"app_set":{"loaded":true,"applications":[{"name":"a","swarm":""},{"name":"a","swarm":""}]}}"#,
            "application \"a\"",
        ),
        (
            "dup-swarm.json",
            r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"x"},{"swarm":"x"}]}"#,
            "swarm \"x\"",
        ),
        (
            "bad-controller.json",
            r#"{"policy":{"controller":"a b"},"app_set":{"loaded":true}}"#,
            "policy.controller",
        ),
        (
            "truncated.json",
            r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"#,
            "line 1",
        ),
        (
            "negative.json",
            r#"{"policy":{"max_deletions":-1},"app_set":{"loaded":true}}"#,
            "policy.max_deletions",
        ),
    ];
    for (name, content, field) in cases {
        let (code, stdout, stderr) = bad(name, content);
        assert_eq!(code, 2, "{name}: {stderr}");
        assert!(stdout.is_empty(), "{name}: printed a plan: {stdout}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{name}: {stderr}");
        assert!(
            stderr.contains(name),
            "{name}: error does not name the file: {stderr}"
        );
        assert!(
            stderr.contains(field),
            "{name}: error does not name {field}: {stderr}"
        );
    }
}

#[test]
fn missing_snapshot_file_exits_2() {
    let out = sweep(&["plan", "--snapshot", "/nonexistent/snapshot.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/snapshot.json"));
}

#[test]
fn policy_flags_with_a_snapshot_are_refused_not_ignored() {
    // A snapshot carries its own policy; silently ignoring --prune-volumes
    // would print a plan the operator did not ask for.
    let file = root().join("examples/one-swarm.json");
    let out = sweep(&[
        "plan",
        "--snapshot",
        file.to_str().unwrap(),
        "--max-deletions",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_app_set_exits_2_naming_file_and_field_before_any_swarm_is_read() {
    let dir = std::env::temp_dir().join(format!("swarm-sweep-appset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "typo.yaml",
            "loaded: true\napplications:\n  - name: shop\n    releses: [web]\n",
            "applications[0]",
        ),
        (
            "state.yaml",
            "loaded: true\napplications:\n  - name: shop\n    swarm: \"\"\n    state: done\n",
            "applications[0].state",
        ),
        ("no-loaded.json", r#"{"applications": []}"#, "loaded"),
        (
            "dup.yaml",
            "loaded: true\napplications:\n  - name: a\n    swarm: \"\"\n  - name: a\n    swarm: \"\"\n",
            "application \"a\"",
        ),
    ];
    for (name, content, field) in cases {
        let file = dir.join(name);
        std::fs::write(&file, content).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_swarm-sweep"))
            .args(["apply", "--app-set", file.to_str().unwrap()])
            // Nothing listens here: the app set must be refused first.
            .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(name) && stderr.contains(field),
            "{name}: {stderr}"
        );
        assert_eq!(stderr.trim_end().lines().count(), 1, "{name}: {stderr}");
    }
}
