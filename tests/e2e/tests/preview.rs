//! The pull-request preview on the real engines of swarm alpha: a snapshot
//! gathered from the swarm, planned elsewhere against the change's app set
//! and diffed against the base's, says exactly what applying the change
//! then deletes, and deletes nothing itself.

use std::path::Path;

use serde_json::{json, Value};
use sweep_e2e::{
    app, assert_gone, assert_intact, create_stack_record, wait_deployed, Cleanup, Run, Scenario,
    Stack, SwarmEntry, Sweep, ALPHA,
};

/// `plan --snapshot SNAPSHOT --app-set APPS --diff-against BASE` with
/// `args`: only files, as a CI job runs it.
fn preview(snapshot: &Path, apps: &Path, base: &Path, args: &[&str]) -> Run {
    Sweep::new(&["plan", "--snapshot"])
        .arg(snapshot)
        .arg("--app-set")
        .arg(apps)
        .arg("--diff-against")
        .arg(base)
        .args(args)
        .run()
}

#[test]
fn the_preview_of_a_change_is_what_applying_it_deletes() {
    let s = Scenario::new();
    let web = s.release("web");
    let api = s.release("api");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    cleanup.add(&api);
    let web_stack = Stack::new(&web).with_volume().on("alpha-2");
    let api_stack = Stack::new(&api).on("alpha-3");
    create_stack_record(&ALPHA, &web_stack, 1, Some(&s.stamp("shop", &web)));
    create_stack_record(&ALPHA, &api_stack, 1, Some(&s.stamp("blog", &api)));
    s.deploy(&ALPHA, &web_stack);
    s.deploy(&ALPHA, &api_stack);
    wait_deployed(&ALPHA, &web_stack, &["alpha-2"]);
    wait_deployed(&ALPHA, &api_stack, &["alpha-3"]);
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    // The base branch declares both; the change removes `shop`.
    let base = s.app_set(
        "base.json",
        json!([app("shop", "alpha", &[&web]), app("blog", "alpha", &[&api])]),
    );
    let change = s.app_set("change.json", json!([app("blog", "alpha", &[&api])]));

    // Where the sockets are: the snapshot, gathered with the base.
    let gathered = s
        .sweep("snapshot", Some(&config), &base)
        .arg("--prune-volumes")
        .run();
    gathered.expect_code(0);
    let snapshot = s.write("snapshot.json", &gathered.stdout);

    // In CI: the change's own effect, as JSON.
    let run = preview(&snapshot, &change, &base, &["--format", "json"]);
    run.expect_code(0);
    let diff = run.json();
    let added: Vec<&Value> = diff["added"].as_array().expect("added").iter().collect();
    assert_eq!(added.len(), 1, "{diff:#}");
    let deletion = &added[0]["deletion"];
    assert_eq!(deletion["release"], web.as_str(), "{diff:#}");
    assert_eq!(deletion["swarm"], "alpha", "{diff:#}");
    assert_eq!(diff["removed"], json!([]), "{diff:#}");
    assert_eq!(diff["counts"]["releases_added"], 1, "{diff:#}");
    assert_eq!(diff["counts"]["volumes_added"], 1, "{diff:#}");

    // As the comment: the headline, the release, its volume on its node.
    let run = preview(
        &snapshot,
        &change,
        &base,
        &["--format", "markdown", "--detailed-exitcode"],
    );
    // 4: the change deletes something the base does not.
    run.expect_code(4);
    let comment = &run.stdout;
    assert!(comment.contains(&format!("`{web}`")), "{comment}");
    assert!(
        comment.contains(&format!("`{}`", web_stack.volume())),
        "{comment}"
    );
    assert!(comment.contains("`alpha-2`"), "{comment}");
    assert!(!comment.contains(&api), "{comment}");
    // The same app set on both sides: the change does nothing.
    preview(
        &snapshot,
        &base,
        &base,
        &["--format", "json", "--detailed-exitcode"],
    )
    .expect_code(0);

    // The preview read files only: both releases stand, volume and all.
    assert_intact(&ALPHA, &web, &["alpha-2"]);
    assert_intact(&ALPHA, &api, &[]);

    // Merged and applied: exactly what the preview named goes.
    let applied = s.purge(&config, &change);
    applied.expect_code(0);
    assert_gone(&ALPHA, &web);
    assert_intact(&ALPHA, &api, &[]);
    let report = &applied.json()["report"];
    let mut previewed: Vec<String> = ["services", "networks", "secrets", "configs"]
        .iter()
        .flat_map(|kind| {
            deletion["objects"][kind]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|o| o["name"].as_str().expect("a name").to_owned())
        .collect();
    let mut removed: Vec<String> = report["objects"]
        .as_array()
        .expect("the report's objects")
        .iter()
        .filter(|o| !matches!(o["kind"].as_str(), Some("volume" | "record")))
        .map(|o| o["name"].as_str().expect("a name").to_owned())
        .collect();
    previewed.sort();
    removed.sort();
    assert!(!previewed.is_empty(), "{diff:#}");
    assert_eq!(previewed, removed, "{report:#}");
}
