//! The preview a pull request shows, through the binary: a snapshot
//! planned against another app set, the Markdown comment, the diff
//! against the base branch's app set, and their exit statuses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .display()
        .to_string()
}

fn sweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swarm-sweep"))
        .args(args)
        // Nothing listens here: nothing may be gathered behind the test's
        // back.
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .env_remove("SWARM_SWEEP_APP_SET")
        .env_remove("SWARM_SWEEP_CONFIG")
        .output()
        .expect("the swarm-sweep binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("swarm-sweep-preview-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// An app set file: `one-swarm.json`'s own (edge only) and, with `shop`,
/// the base branch that still declares `shop`.
fn app_set(name: &str, shop: bool) -> String {
    let mut text = String::from(
        "loaded: true\napplications:\n  - name: edge\n    swarm: \"\"\n    releases: [edge, edge-db]\n    state: reconciled\n",
    );
    if shop {
        text.push_str(
            "  - name: shop\n    swarm: \"\"\n    releases: [shop, shop-cache]\n    state: reconciled\n",
        );
    }
    let file = scratch(name);
    std::fs::write(&file, text).unwrap();
    file.display().to_string()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(out), stderr(out)))
}

fn releases(list: &serde_json::Value, path: &[&str]) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            let mut v = entry;
            for key in path {
                v = &v[*key];
            }
            v.as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn a_snapshot_is_planned_against_the_app_set_given() {
    let snap = example("one-swarm.json");
    // The snapshot's own app set deletes what `shop` left behind.
    let own = sweep(&["plan", "--snapshot", &snap, "--format", "json"]);
    assert_eq!(own.status.code(), Some(0), "{}", stderr(&own));
    assert_eq!(
        releases(&json(&own)["deletions"], &["release"]),
        ["shop", "shop-cache"]
    );
    // Against an app set that still declares `shop`, nothing goes; the
    // snapshot's policy (purge on) still applies.
    let base = app_set("base.yaml", true);
    let out = sweep(&[
        "plan",
        "--snapshot",
        &snap,
        "--app-set",
        &base,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan = json(&out);
    assert!(plan["deletions"].as_array().unwrap().is_empty(), "{plan}");
    assert_eq!(plan["purge_volumes"], true);
    let spared: Vec<String> = plan["spared"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reason"] == "current_application")
        .map(|s| s["release"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(spared, ["edge", "edge-db", "shop", "shop-cache"]);
    // `explain` reads the same pair the same way.
    let out = sweep(&[
        "explain",
        "/shop",
        "--snapshot",
        &snap,
        "--app-set",
        &base,
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let explained = stdout(&out);
    assert!(explained.contains("current_application"), "{explained}");
}

#[test]
fn an_app_set_that_does_not_read_is_bad_input_named_once() {
    let snap = example("one-swarm.json");
    let broken = scratch("broken.yaml");
    std::fs::write(
        &broken,
        "loaded: true\napplications:\n  - name: shop\n    releses: [web]\n",
    )
    .unwrap();
    let broken = broken.display().to_string();
    for args in [
        vec!["plan", "--snapshot", &snap, "--app-set", &broken],
        vec!["plan", "--snapshot", &snap, "--diff-against", &broken],
        vec![
            "explain",
            "/shop",
            "--snapshot",
            &snap,
            "--app-set",
            &broken,
        ],
        vec![
            "plan",
            "--snapshot",
            &snap,
            "--app-set",
            "/nonexistent/apps.yaml",
        ],
    ] {
        let out = sweep(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        let named = args[args.len() - 1];
        assert!(err.contains(named), "{args:?}: {err}");
    }
}

#[test]
fn markdown_is_a_comment_with_a_headline_and_escaped_names() {
    let snap = example("one-swarm.json");
    let out = sweep(&["plan", "--snapshot", &snap, "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let comment = stdout(&out);
    assert!(
        comment.contains("**2 releases on 1 swarm would be deleted**"),
        "{comment}"
    );
    assert!(comment.contains("- `shop` `departed`"), "{comment}");
    assert!(
        comment.contains("**Spared, still declared (2)**"),
        "{comment}"
    );
    // Nothing to delete says so in its headline.
    let base = app_set("base-md.yaml", true);
    let out = sweep(&[
        "plan",
        "--snapshot",
        &snap,
        "--app-set",
        &base,
        "--format",
        "markdown",
    ]);
    assert!(stdout(&out).contains("**Nothing would be deleted**"));
    // A hostile release name stays inside its code span.
    let hostile = scratch("hostile.json");
    std::fs::write(
        &hostile,
        r#"{"app_set": {"loaded": true, "applications": [{"name": "keep", "swarm": "", "releases": []}]},
            "swarms": [{"swarm": "", "releases": [
              {"name": "x](https://evil.example) <img src=x> @team\n# owned", "owner": "cd/default/gone:release/x](https://evil.example) <img src=x> @team\n# owned"}]}]}"#,
    )
    .unwrap();
    let out = sweep(&[
        "plan",
        "--snapshot",
        hostile.to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    let comment = stdout(&out);
    assert!(
        comment.contains("- `x](https://evil.example) <img src=x> @team\\u{a}# owned` `departed`"),
        "{comment}"
    );
    assert!(!comment.lines().any(|l| l.starts_with("# ")), "{comment}");
}

#[test]
fn the_diff_shows_only_what_the_change_does_and_gates_on_it() {
    let snap = example("one-swarm.json");
    let base = app_set("base-diff.yaml", true);
    let change = app_set("change.yaml", false);
    let diff = |app_set: &str, against: &str, format: &str, detailed: bool| {
        let mut args = vec![
            "plan",
            "--snapshot",
            &snap,
            "--app-set",
            app_set,
            "--diff-against",
            against,
            "--format",
            format,
        ];
        if detailed {
            args.push("--detailed-exitcode");
        }
        sweep(&args)
    };
    // Removing `shop` adds its two releases to the deletions: 4 with
    // --detailed-exitcode, 0 without.
    let out = diff(&change, &base, "json", true);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(
        releases(&doc["added"], &["deletion", "release"]),
        ["shop", "shop-cache"]
    );
    assert_eq!(doc["added"][0]["spared_as"], "current_application");
    assert!(doc["removed"].as_array().unwrap().is_empty());
    assert_eq!(doc["counts"]["releases_added"], 2);
    assert_eq!(diff(&change, &base, "json", false).status.code(), Some(0));
    // Text and Markdown say the same.
    let out = diff(&change, &base, "text", true);
    assert_eq!(out.status.code(), Some(4));
    let text = stdout(&out);
    assert!(text.contains("+ delete  (local)/shop  departed"), "{text}");
    let out = diff(&change, &base, "markdown", true);
    assert_eq!(out.status.code(), Some(4));
    let comment = stdout(&out);
    assert!(
        comment.contains("**Merging this change would also delete 2 releases on 1 swarm**"),
        "{comment}"
    );
    assert!(comment.contains("**Newly deleted (2)**"), "{comment}");
    // Bringing `shop` back only spares: 0, though the base deletes.
    let out = diff(&base, &change, "json", true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert!(doc["added"].as_array().unwrap().is_empty());
    assert_eq!(
        releases(&doc["removed"], &["deletion", "release"]),
        ["shop", "shop-cache"]
    );
    // The same app set on both sides: nothing to show, 0 though the
    // backlog deletes (the snapshot's own app set deletes `shop`).
    let out = diff(&change, &change, "markdown", true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("**Merging this change does not change what would be deleted**"));
}

#[test]
fn a_diff_that_needs_a_person_exits_1_whatever_it_adds() {
    // node-down.json: its deletion would leave a volume on a node nobody
    // reached; the plan needs a person, and so does the diff.
    let snap = example("node-down.json");
    let out = sweep(&[
        "plan",
        "--snapshot",
        &snap,
        "--diff-against",
        &snap_app_set(&snap, "needs-a-person"),
        "--detailed-exitcode",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(json(&out)["added"].as_array().unwrap().is_empty());
}

/// The snapshot's own app set, written to a file of its own (named after
/// the snapshot and `caller`: the tests run at once).
fn snap_app_set(snapshot: &str, caller: &str) -> String {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snapshot).unwrap()).unwrap();
    let stem = Path::new(snapshot).file_stem().unwrap().to_string_lossy();
    let file = scratch(&format!("own-app-set-{stem}-{caller}.json"));
    std::fs::write(&file, doc["app_set"].to_string()).unwrap();
    file.display().to_string()
}

/// A plan whose only removals are objects a live release dropped deletes
/// something: the gate sees 4, as it does for a diff that adds them. One
/// of those objects still named by a service is kept, and the plan needs a
/// person (1), as `apply` of it does.
#[test]
fn dropped_objects_gate_like_releases() {
    let snap = example("dropped-objects.json");
    let out = sweep(&["plan", "--snapshot", &snap, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(json(&out)["deletions"].as_array().unwrap().is_empty());
    let out = sweep(&[
        "plan",
        "--snapshot",
        &snap,
        "--detailed-exitcode",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["dropped"][0]["objects"].as_array().unwrap().len(), 3);

    // The current service still attached to the dropped network.
    let mut used: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&snap).unwrap()).unwrap();
    used["swarms"][0]["usage"]["services"] = serde_json::json!([{
        "id": "id-service-web_app", "name": "web_app", "stack": "web",
        "networks": ["id-network-web_back"], "secrets": [], "configs": []
    }]);
    let file = scratch("dropped-in-use.json");
    std::fs::write(&file, used.to_string()).unwrap();
    for detailed in [false, true] {
        let mut args = vec!["plan", "--snapshot", file.to_str().unwrap()];
        args.extend(["--format", "json"]);
        if detailed {
            args.push("--detailed-exitcode");
        }
        let out = sweep(&args);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let doc = json(&out);
        let dropped = &doc["dropped"][0];
        assert_eq!(dropped["in_use_by"][0]["object"], "web_back", "{doc:#}");
        assert_eq!(dropped["objects"].as_array().unwrap().len(), 2, "{doc:#}");
    }
}

/// An app set file of `name` with `text`, a YAML list of applications.
fn apps_file(name: &str, applications: &str) -> String {
    let file = scratch(name);
    std::fs::write(
        &file,
        format!("loaded: true\napplications:\n{applications}"),
    )
    .unwrap();
    file.display().to_string()
}

/// `plan --snapshot SNAP --app-set CHANGE --diff-against BASE
/// --detailed-exitcode` in `format`.
fn preview(snap: &str, change: &str, base: &str, format: &str) -> Output {
    sweep(&[
        "plan",
        "--snapshot",
        snap,
        "--app-set",
        change,
        "--diff-against",
        base,
        "--format",
        format,
        "--detailed-exitcode",
    ])
}

/// deletion-windows.json is taken on a Saturday: every window of `alpha`
/// is closed, so nothing is deleted there now. A change that drops `shop`
/// still deletes `web`, on Monday at 02:00 in Berlin: the diff counts it,
/// says when, and the gate sees 4.
#[test]
fn a_deletion_a_closed_window_delays_is_the_changes_and_gates() {
    let snap = example("deletion-windows.json");
    let base = snap_app_set(&snap, "window");
    let change = apps_file(
        "change-windows.yaml",
        "  - {name: docs, swarm: beta, releases: [docs]}\n",
    );
    let own = sweep(&[
        "plan",
        "--snapshot",
        &snap,
        "--app-set",
        &change,
        "--format",
        "json",
    ]);
    assert!(
        json(&own)["deletions"].as_array().unwrap().is_empty(),
        "{}",
        stdout(&own)
    );

    let out = preview(&snap, &change, &base, "json");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(releases(&doc["added"], &["deletion", "release"]), ["web"]);
    let added = &doc["added"][0];
    assert_eq!(added["spared_as"], "current_application");
    assert_eq!(added["pending"]["waits_for"][0]["reason"], "outside_window");
    assert_eq!(
        added["pending"]["waits_for"][0]["opens_at"],
        "2026-12-07T01:00:00Z"
    );
    assert_eq!(doc["counts"]["releases_added"], 1);
    assert_eq!(doc["counts"]["releases_pending_added"], 1);
    // `blog` is the backlog: waiting for the window either way.
    assert!(doc["removed"].as_array().unwrap().is_empty(), "{doc:#}");
    // Without --detailed-exitcode: the change's plan's status, 0.
    let mut plain = vec!["plan", "--snapshot", &snap, "--app-set", &change];
    plain.extend(["--diff-against", &base, "--format", "json"]);
    assert_eq!(sweep(&plain).status.code(), Some(0));

    let out = preview(&snap, &change, &base, "text");
    assert_eq!(out.status.code(), Some(4));
    let text = stdout(&out);
    assert!(
        text.contains("+ delete later  alpha/web  departed, application shop, volumes off; once the next deletion window opens at 2026-12-07T01:00:00Z; without the change: spared, current_application"),
        "{text}"
    );
    let out = preview(&snap, &change, &base, "markdown");
    assert_eq!(out.status.code(), Some(4));
    let comment = stdout(&out);
    assert!(
        comment.contains("**Merging this change would also delete 1 release on 1 swarm (later, once what delays it has cleared)**"),
        "{comment}"
    );
    assert!(
        comment.contains("- `web` `departed`, application `shop`; **later**, once the next deletion window opens at 2026-12-07T01:00:00Z"),
        "{comment}"
    );
}

/// grace-period.json: `docs` was first seen departed 4 minutes ago and
/// `wiki` is seen so now, under a grace period of 10 minutes. A change
/// that drops `shop` deletes it once its own period ends.
#[test]
fn a_deletion_a_grace_period_delays_is_the_changes_and_gates() {
    let snap = example("grace-period.json");
    let base = snap_app_set(&snap, "grace");
    let change = apps_file(
        "change-grace.yaml",
        "  - {name: other, swarm: \"\", releases: []}\n",
    );
    let out = preview(&snap, &change, &base, "json");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(releases(&doc["added"], &["deletion", "release"]), ["shop"]);
    let wait = &doc["added"][0]["pending"]["waits_for"][0];
    assert_eq!(wait["reason"], "grace_period", "{doc:#}");
    assert_eq!(wait["time_left"], 600, "{doc:#}");
    assert!(doc["removed"].as_array().unwrap().is_empty(), "{doc:#}");
    let out = preview(&snap, &change, &base, "markdown");
    assert_eq!(out.status.code(), Some(4));
    let comment = stdout(&out);
    assert!(
        comment.contains("- `shop` `departed`, application `shop`; **later**, once its grace period ends, in 10m"),
        "{comment}"
    );
}

/// A change that declares again a release the base deletes only later
/// (after the window opens, after its grace period) takes it out of the
/// deletions: removed, pending on the base's side, and the gate sees 0.
#[test]
fn a_release_brought_back_that_the_base_deletes_later_is_removed() {
    for (snap, applications, release, reason) in [
        (
            "deletion-windows.json",
            "  - {name: shop, swarm: alpha, releases: [web]}\n  - {name: docs, swarm: beta, releases: [docs]}\n  - {name: blog, swarm: alpha, releases: [blog]}\n",
            "blog",
            "outside_window",
        ),
        (
            "grace-period.json",
            "  - {name: shop, swarm: \"\", releases: [shop]}\n  - {name: docs, swarm: \"\", releases: [docs]}\n",
            "docs",
            "grace_period",
        ),
    ] {
        let snap = example(snap);
        let base = snap_app_set(&snap, release);
        let change = apps_file(&format!("back-{release}.yaml"), applications);
        let out = preview(&snap, &change, &base, "json");
        assert_eq!(out.status.code(), Some(0), "{snap}: {}", stderr(&out));
        let doc = json(&out);
        assert!(doc["added"].as_array().unwrap().is_empty(), "{doc:#}");
        assert_eq!(releases(&doc["removed"], &["deletion", "release"]), [release]);
        let removed = &doc["removed"][0];
        assert_eq!(removed["spared_as"], "current_application", "{doc:#}");
        assert_eq!(removed["pending"]["waits_for"][0]["reason"], reason, "{doc:#}");
        assert_eq!(doc["counts"]["releases_pending_removed"], 1);
        let out = preview(&snap, &change, &base, "text");
        assert_eq!(out.status.code(), Some(0));
        assert!(stdout(&out).contains("- delete later  "), "{}", stdout(&out));
        let out = preview(&snap, &change, &base, "markdown");
        assert!(
            stdout(&out).contains("**Merging this change would no longer delete 1 release**"),
            "{}",
            stdout(&out)
        );
    }
}
