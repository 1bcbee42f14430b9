//! Review, then apply exactly what was reviewed: `plan --out FILE`, then
//! `apply --plan FILE`, against the real engines of swarms alpha and beta.
//!
//! Between the two, a release is redeployed, restamped or re-declared, or
//! the swarm's name comes to reach another cluster: the saved plan is then
//! stale, `apply --plan` exits 3 naming what changed, and every engine
//! still holds everything. Unchanged, it deletes exactly the saved
//! deletions and nothing the swarms gained since.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sweep_e2e::{
    app, assert_gone, assert_intact, create_stack_record, docker_ok, endpoint, one, release_names,
    wait_deployed, Cleanup, Remains, Run, Scenario, Stack, SwarmEntry, Sweep, ALPHA, BETA, QUICK,
    STACK_LABEL,
};

/// `plan --out FILE --prune-volumes` as the scenario's controller; the
/// saved plan's path.
fn plan_out(s: &Scenario, config: &Path, apps: &Path, name: &str) -> (Run, PathBuf) {
    plan_out_with(s, config, apps, name, &["--prune-volumes"])
}

fn plan_out_with(
    s: &Scenario,
    config: &Path,
    apps: &Path,
    name: &str,
    args: &[&str],
) -> (Run, PathBuf) {
    let file = s.dir().join(name);
    let run = s
        .sweep("plan", Some(config), apps)
        .arg("--out")
        .arg(&file)
        .args(args)
        .run();
    (run, file)
}

/// `apply --plan FILE` with the same registry and app set (the policy
/// comes from the file).
fn apply_plan(config: &Path, apps: &Path, saved: &Path) -> Run {
    apply_plan_with(config, apps, saved, &[])
}

fn apply_plan_with(config: &Path, apps: &Path, saved: &Path, args: &[&str]) -> Run {
    Sweep::new(&["apply"])
        .arg("--config")
        .arg(config)
        .arg("--app-set")
        .arg(apps)
        .arg("--plan")
        .arg(saved)
        .args(QUICK)
        .args(args)
        .run()
}

fn read_json(file: &Path) -> Value {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Two departed releases on alpha, deployed and recorded; the registry
/// and an app set that declares neither.
struct Departed {
    s: Scenario,
    web: String,
    db: String,
    config: PathBuf,
    apps: PathBuf,
    _cleanup: Cleanup,
}

fn departed() -> Departed {
    let s = Scenario::new();
    let web = s.release("web");
    let db = s.release("db");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    cleanup.add(&db);
    for release in [&web, &db] {
        let stack = Stack::new(release)
            .with_volume()
            .with_network_secret_config()
            .on("alpha-2");
        create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", release)));
        s.deploy(&ALPHA, &stack);
        wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    }
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    Departed {
        s,
        web,
        db,
        config,
        apps,
        _cleanup: cleanup,
    }
}

impl Departed {
    /// `plan --out` of both releases, which must plan cleanly.
    fn saved_plan(&self) -> PathBuf {
        let (run, saved) = plan_out(&self.s, &self.config, &self.apps, "plan.json");
        run.expect_code(0);
        saved
    }

    /// Both releases still hold their records, service and volume: a
    /// refused plan deleted nothing, not even what did not change.
    fn assert_both_intact(&self) {
        assert_intact(&ALPHA, &self.web, &["alpha-2"]);
        assert_intact(&ALPHA, &self.db, &["alpha-2"]);
    }
}

/// Fails unless the stale refusal exited 3, named `release` on one of its
/// lines along with `what`, and printed no report.
fn assert_refused(run: &Run, release: &str, what: &str) {
    run.expect_code(3);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains(release) && l.contains(what)),
        "no line names {release} with {what:?}:\n{}",
        run.stderr
    );
    assert!(
        run.stdout.trim().is_empty(),
        "a stale plan printed a report:\n{}",
        run.stdout
    );
}

#[test]
fn an_unchanged_saved_plan_deletes_exactly_its_deletions_and_lists_their_objects() {
    let d = departed();
    let (run, saved) = plan_out(&d.s, &d.config, &d.apps, "plan.json");
    run.expect_code(0);
    let file = read_json(&saved);
    assert_eq!(file["format_version"], 2);
    assert_eq!(file["tool_version"], env!("CARGO_PKG_VERSION"));
    assert!(file["snapshot_digest"]
        .as_str()
        .is_some_and(|d| d.starts_with("sha256:")));
    assert!(file["clusters"]["alpha"].is_string(), "{file:#}");
    let planned = release_names(&file["plan"], "deletions");
    assert!(planned.contains(&d.web) && planned.contains(&d.db));
    // Each deletion lists what it removes, and its fingerprint.
    let web = one(&file["plan"], "deletions", &d.web);
    let objects = &web["objects"];
    assert_eq!(objects["services"][0]["name"], format!("{}_app", d.web));
    assert_eq!(objects["networks"].as_array().map(Vec::len), Some(1));
    assert_eq!(objects["secrets"].as_array().map(Vec::len), Some(1));
    assert_eq!(objects["configs"].as_array().map(Vec::len), Some(1));
    assert_eq!(web["observed"]["records"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        web["observed"]["services"].as_array().map(Vec::len),
        Some(1)
    );
    let volume = format!("{}_data", d.web);
    let on_nodes: Vec<&Value> = objects["volumes"]
        .as_array()
        .map(|nodes| {
            nodes
                .iter()
                .filter(|n| {
                    n["volumes"]
                        .as_array()
                        .is_some_and(|v| v.contains(&json!(volume)))
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        on_nodes.len(),
        1,
        "the volume is on alpha-2 alone: {objects:#}"
    );

    // A third departed release appears after the review: it is not in the
    // saved plan, so it stays.
    let late = d.s.release("late");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&late);
    let stack = Stack::new(&late).with_volume().on("alpha-3");
    create_stack_record(&ALPHA, &stack, 1, Some(&d.s.stamp("shop", &late)));
    d.s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-3"]);

    // The policy flags of the plan, typed again, agree with the file.
    let controller = d.s.controller.clone();
    let run = apply_plan_with(
        &d.config,
        &d.apps,
        &saved,
        &["--controller", &controller, "--prune-volumes"],
    );
    run.expect_code(0);
    let out = run.json();
    let deleted = release_names(&out["plan"], "deletions");
    assert_eq!(
        deleted.iter().filter(|r| r.ends_with(&d.s.token)).count(),
        2,
        "{deleted:?}"
    );
    assert!(
        !deleted.contains(&late),
        "a release nobody reviewed was deleted"
    );
    assert_eq!(
        one(&out["report"], "releases", &d.web)["outcome"],
        "deleted"
    );
    assert_eq!(one(&out["report"], "releases", &d.db)["outcome"], "deleted");
    assert!(
        run.stderr.contains(&late) && run.stderr.contains("not in the saved plan"),
        "the unreviewed deletion is not mentioned:\n{}",
        run.stderr
    );
    assert_gone(&ALPHA, &d.web);
    assert_gone(&ALPHA, &d.db);
    assert_intact(&ALPHA, &late, &["alpha-3"]);
}

#[test]
fn another_controller_or_policy_than_planned_makes_the_saved_plan_stale() {
    let d = departed();
    let saved = d.saved_plan();
    for flags in [
        &["--controller", "someone-else"][..],
        &["--max-deletions", "1"][..],
    ] {
        let run = apply_plan_with(&d.config, &d.apps, &saved, flags);
        run.expect_code(3);
        assert!(
            run.stderr
                .lines()
                .any(|l| l.contains("planned under controller")),
            "{flags:?}: the policy change is not named:\n{}",
            run.stderr
        );
    }
    d.assert_both_intact();
}

#[test]
fn a_redeployed_release_makes_the_saved_plan_stale() {
    let d = departed();
    let saved = d.saved_plan();
    docker_ok(
        ALPHA.manager,
        &[
            "service",
            "update",
            "--detach",
            "--label-add",
            "redeployed=1",
            &format!("{}_app", d.web),
        ],
    );
    let run = apply_plan(&d.config, &d.apps, &saved);
    assert_refused(&run, &d.web, "redeployed");
    // The unchanged release in the same plan stays too: all or nothing.
    d.assert_both_intact();
}

#[test]
fn a_restamped_release_makes_the_saved_plan_stale() {
    let d = departed();
    let saved = d.saved_plan();
    // A new revision of its records, stamped for another application.
    let stack = Stack::new(&d.db).with_volume().with_network_secret_config();
    create_stack_record(&ALPHA, &stack, 2, Some(&d.s.stamp("billing", &d.db)));
    let run = apply_plan(&d.config, &d.apps, &saved);
    assert_refused(&run, &d.db, "release records changed");
    d.assert_both_intact();
}

/// A volume labelled with a release's stack since the review, under a
/// name the reviewed plan lists on no node (someone saved the data before
/// the release goes), holds data nobody reviewed: the plan is stale, and
/// the volume stays with everything else.
#[test]
fn a_volume_labelled_since_the_review_makes_the_saved_plan_stale() {
    let d = departed();
    let saved = d.saved_plan();
    let export = format!("{}_export", d.db);
    docker_ok(
        "alpha-1",
        &[
            "volume",
            "create",
            "--label",
            &format!("{STACK_LABEL}={}", d.db),
            &export,
        ],
    );
    let run = apply_plan(&d.config, &d.apps, &saved);
    assert_refused(&run, &d.db, &format!("volume {export}"));
    d.assert_both_intact();
    let left = Remains::read(&ALPHA, &d.db);
    assert!(
        left.volumes
            .get("alpha-1")
            .is_some_and(|v| v.contains(&export)),
        "{left:#?}"
    );
}

#[test]
fn a_re_declared_release_makes_the_saved_plan_stale() {
    let d = departed();
    let saved = d.saved_plan();
    // The same app set file, now declaring web again.
    d.s.app_set(
        "apps.json",
        json!([app("edge", "alpha", &[]), app("shop", "alpha", &[&d.web])]),
    );
    let run = apply_plan(&d.config, &d.apps, &saved);
    assert_refused(&run, &d.web, "now spared");
    d.assert_both_intact();
}

#[test]
fn a_swarm_name_that_reaches_another_cluster_makes_the_saved_plan_stale() {
    let d = departed();
    // Planned under the name "prod", which reaches alpha.
    let prod = |manager: &str| {
        d.s.registry(
            "prod.toml",
            &[SwarmEntry::named("prod", &endpoint(manager))],
        )
    };
    let config = prod(ALPHA.manager);
    let apps =
        d.s.app_set("prod-apps.json", json!([app("edge", "prod", &[])]));
    // Without node reach a purge would be node-local; it is off here.
    // Exit 1: the stacks' attachable networks stay, since the workers'
    // containers are not read; the rest of each release is deleted.
    let (run, saved) = plan_out_with(&d.s, &config, &apps, "prod-plan.json", &[]);
    run.expect_code(1);
    assert!(release_names(&read_json(&saved)["plan"], "deletions").contains(&d.web));

    // "prod" now names beta's manager: another cluster.
    let config = prod(BETA.manager);
    let run = apply_plan(&config, &apps, &saved);
    run.expect_code(3);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("swarm prod") && l.contains("planned against cluster")),
        "the cluster change is not named:\n{}",
        run.stderr
    );
    d.assert_both_intact();
}

#[test]
fn an_edited_plan_cannot_take_a_deletion_out_of_the_cluster_check() {
    let d = departed();
    // The same release, departed too, on beta: what the file will aim at.
    let mut cleanup = Cleanup::new(&BETA);
    cleanup.add(&d.web);
    let stack = Stack::new(&d.web).on("beta-2");
    create_stack_record(&BETA, &stack, 1, Some(&d.s.stamp("shop", &d.web)));
    d.s.deploy(&BETA, &stack);
    wait_deployed(&BETA, &stack, &["beta-2"]);
    let prod = |manager: &str, file: &str| {
        d.s.registry(file, &[SwarmEntry::named("prod", &endpoint(manager))])
    };
    let apps =
        d.s.app_set("prod-apps.json", json!([app("edge", "prod", &[])]));
    // Reviewed against alpha, under the name "prod".
    let on_alpha = prod(ALPHA.manager, "prod-alpha.toml");
    let (run, reviewed) = plan_out_with(&d.s, &on_alpha, &apps, "alpha-plan.json", &[]);
    // Exit 1: without node reach the stacks' attachable networks stay.
    run.expect_code(1);
    let alpha_cluster = read_json(&reviewed)["clusters"]["prod"].clone();
    assert!(alpha_cluster.is_string(), "{alpha_cluster}");

    // "prod" now names beta. The file is edited: beta's deletions (with
    // their fingerprints), the cluster it claims still alpha's, and "prod"
    // left out of its list of swarms, which once kept it from being checked.
    let on_beta = prod(BETA.manager, "prod-beta.toml");
    let (run, beta_plan) = plan_out_with(&d.s, &on_beta, &apps, "beta-plan.json", &[]);
    run.expect_code(0);
    let mut edited = read_json(&beta_plan);
    assert!(release_names(&edited["plan"], "deletions").contains(&d.web));
    edited["clusters"]["prod"] = alpha_cluster;
    edited["plan"]["swarms"] = json!([]);
    std::fs::write(&beta_plan, edited.to_string()).unwrap();

    let run = apply_plan(&on_beta, &apps, &beta_plan);
    run.expect_code(3);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("swarm prod") && l.contains("planned against cluster")),
        "the cluster change is not named:\n{}",
        run.stderr
    );
    let r = sweep_e2e::Remains::read(&BETA, &d.web);
    assert!(
        !r.records.is_empty(),
        "beta/{} lost its records: {r:#?}",
        d.web
    );
    d.assert_both_intact();
}

#[test]
fn a_keep_label_spares_a_departed_release_until_it_is_removed() {
    let d = departed();
    let service = format!("{}_app", d.web);
    docker_ok(
        ALPHA.manager,
        &[
            "service",
            "update",
            "--detach",
            "--label-add",
            "swarm-sweep.keep=true",
            &service,
        ],
    );
    let run = d.s.sweep("plan", Some(&d.config), &d.apps).run();
    run.expect_code(0);
    let plan = run.json();
    let spared = one(&plan, "spared", &d.web);
    assert_eq!(spared["reason"], "kept", "{spared:#}");
    assert!(release_names(&plan, "deletions").contains(&d.db));

    // explain says why, in sentences naming the label.
    let explained =
        d.s.sweep("explain", Some(&d.config), &d.apps)
            .arg(format!("alpha/{}", d.web))
            .args(&["--format", "text"])
            .run();
    explained.expect_code(0);
    assert!(
        explained.stdout.contains("swarm-sweep.keep=\"true\"")
            && explained.stdout.contains("spared (kept)"),
        "{}",
        explained.stdout
    );

    let run =
        d.s.sweep("apply", Some(&d.config), &d.apps)
            .arg("--prune-volumes")
            .args(QUICK)
            .run();
    run.expect_code(0);
    assert_intact(&ALPHA, &d.web, &["alpha-2"]);
    assert_gone(&ALPHA, &d.db);
}

#[test]
fn detailed_exitcode_is_4_when_the_plan_deletes() {
    let d = departed();
    let run =
        d.s.sweep("plan", Some(&d.config), &d.apps)
            .arg("--detailed-exitcode")
            .run();
    run.expect_code(4);
    // Nothing to delete for another controller: 0.
    let run =
        d.s.sweep_as("nobody", "plan", Some(&d.config), &d.apps)
            .arg("--detailed-exitcode")
            .run();
    run.expect_code(0);
    assert_intact(&ALPHA, &d.web, &["alpha-2"]);
}
