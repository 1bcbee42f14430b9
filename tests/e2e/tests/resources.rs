//! The resource rule on the real engines of swarm alpha: a live release at
//! revision 2 that dropped a service, a config the controller created and
//! a network from revision 1 loses exactly those three, through `plan`,
//! `apply --plan` and `watch --once`; everything else stays (its current
//! service keeps running, its current config and network, its records and
//! volume, a service added by hand, a config the controller adopted, what
//! a revision of another controller declared, a dropped network another
//! stack's running service is attached to).

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{json, Value};
use sweep_e2e::{
    create_record_data, docker, docker_ok, engine_record, lines, Cleanup, Scenario, SwarmEntry,
    ALPHA, IMAGE, STACK_LABEL,
};

/// The label the controller puts on the configs it created itself.
const CD_CREATED: &str = "com.swarmcli.cd.created";

/// Compose text of one revision: each service `(key, networks, configs)`,
/// every network named, every config `(key, marked)` with a file in `dir`.
fn compose(
    s: &Scenario,
    release: &str,
    services: &[(&str, &[&str], &[&str])],
    networks: &[&str],
    configs: &[(&str, bool)],
    volume: bool,
) -> String {
    let mut y = String::from("version: \"3.8\"\nservices:\n");
    for (key, nets, cfgs) in services {
        y.push_str(&format!(
            "  {key}:\n    image: {IMAGE}\n    command: [\"sh\", \"-c\", \"trap 'exit 0' TERM; sleep 3600 & wait\"]\n    stop_grace_period: 2s\n    deploy:\n      replicas: 1\n      endpoint_mode: dnsrr\n"
        ));
        if !nets.is_empty() {
            y.push_str(&format!("    networks: [{}]\n", nets.join(", ")));
        }
        if !cfgs.is_empty() {
            y.push_str("    configs:\n");
            for c in *cfgs {
                y.push_str(&format!("      - source: {c}\n        target: /{c}.txt\n"));
            }
        }
        if volume && *key == "app" {
            y.push_str("    volumes: [\"data:/data\"]\n");
        }
    }
    if volume {
        y.push_str("volumes:\n  data: {}\n");
    }
    if !networks.is_empty() {
        y.push_str("networks:\n");
        for n in networks {
            y.push_str(&format!("  {n}:\n    driver: overlay\n"));
        }
    }
    if !configs.is_empty() {
        y.push_str("configs:\n");
        for (c, marked) in configs {
            let file = s.write(&format!("{release}-{c}.txt"), &format!("{c}\n"));
            y.push_str(&format!("  {c}:\n    file: {}\n", file.display()));
            if *marked {
                y.push_str(&format!(
                    "    labels:\n      {CD_CREATED}: \"2026-12-01T08:00:00Z\"\n"
                ));
            }
        }
    }
    y
}

/// Deploys `manifest` as `release` and records it as revision `revision`
/// stamped `owner`, as the chart engine does.
fn deploy_revision(s: &Scenario, release: &str, revision: u32, owner: &str, manifest: &str) {
    deploy_revision_as(s, release, revision, owner, manifest, "deployed");
}

/// [`deploy_revision`], the record giving `status` (on its label and in
/// its data): `failed` for a deploy the engine saw fail.
fn deploy_revision_as(
    s: &Scenario,
    release: &str,
    revision: u32,
    owner: &str,
    manifest: &str,
    status: &str,
) {
    let file = s.write(&format!("{release}.v{revision}.yml"), manifest);
    docker_ok(
        ALPHA.manager,
        &[
            "stack",
            "deploy",
            "--resolve-image",
            "never",
            "-c",
            &file.to_string_lossy(),
            release,
        ],
    );
    let record = engine_record(release, revision, Some(owner))
        .with_manifest(manifest)
        .with_status(status);
    create_record_data(&ALPHA, &record, &record.payload());
}

/// A release whose revision 2 dropped service `worker`, network `back`
/// and config `conf2` (created by the controller) from revision 1; its
/// `app` service, `default` network, `conf1` config and `data` volume stay
/// declared, and config `adopted` (no marker) is dropped too.
fn two_revisions(s: &Scenario, release: &str, application: &str) {
    let owner = s.stamp(application, release);
    let one = compose(
        s,
        release,
        &[
            ("app", &["default"], &["conf1"]),
            ("worker", &["back"], &["conf2", "adopted"]),
        ],
        &["default", "back"],
        &[("conf1", true), ("conf2", true), ("adopted", false)],
        true,
    );
    deploy_revision(s, release, 1, &owner, &one);
    let two = compose(
        s,
        release,
        &[("app", &["default"], &["conf1"])],
        &["default"],
        &[("conf1", true)],
        true,
    );
    deploy_revision(s, release, 2, &owner, &two);
}

/// The names of `kind` objects (`service`, `network`, `config`) carrying
/// `release`'s stack label.
fn stack_objects(kind: &str, release: &str) -> BTreeSet<String> {
    lines(&docker_ok(
        ALPHA.manager,
        &[
            kind,
            "ls",
            "--filter",
            &format!("label={STACK_LABEL}={release}"),
            "--format",
            "{{.Name}}",
        ],
    ))
    .into_iter()
    .collect()
}

/// The release records of `release` on alpha.
fn records(release: &str) -> BTreeSet<String> {
    lines(&docker_ok(
        ALPHA.manager,
        &[
            "config",
            "ls",
            "--filter",
            &format!("label=com.swarmcli.release={release}"),
            "--format",
            "{{.Name}}",
        ],
    ))
    .into_iter()
    .collect()
}

fn set(names: &[String]) -> BTreeSet<String> {
    names.iter().cloned().collect()
}

/// What every scenario checks once the dropped objects are gone: exactly
/// worker, back and conf2 went; everything else of the release stays and
/// its current service still runs.
fn only_the_three_went(release: &str) {
    let n = |key: &str| format!("{release}_{key}");
    assert_eq!(stack_objects("service", release), set(&[n("app")]));
    assert_eq!(stack_objects("network", release), set(&[n("default")]));
    assert_eq!(
        stack_objects("config", release),
        set(&[n("adopted"), n("conf1")]),
        "the adopted config (no marker) stays"
    );
    assert_eq!(records(release).len(), 2, "the records stay");
    let replicas = docker_ok(
        ALPHA.manager,
        &[
            "service",
            "ls",
            "--filter",
            &format!("name={}", n("app")),
            "--format",
            "{{.Replicas}}",
        ],
    );
    assert!(replicas.trim().starts_with("1/1"), "{replicas}");
    let volume = docker(ALPHA.manager, &["volume", "inspect", &n("data")]);
    let app_node = lines(&docker_ok(
        ALPHA.manager,
        &[
            "service",
            "ps",
            &n("app"),
            "--filter",
            "desired-state=running",
            "--format",
            "{{.Node}}",
        ],
    ));
    // The volume lives where the task runs: on the manager, or on the node
    // named; either way it is still there.
    let kept = volume.status.success()
        || app_node.iter().any(|node| {
            docker(node, &["volume", "inspect", &n("data")])
                .status
                .success()
        });
    assert!(kept, "the volume stays");
}

/// The app set: `application` declares `release` on alpha and opted in.
fn apps(s: &Scenario, application: &str, release: &str) -> PathBuf {
    s.app_set(
        "apps.json",
        json!([{"name": application, "swarm": "alpha", "releases": [release],
                "state": "reconciled", "prune_resources": true}]),
    )
}

/// `(kind, name)` of every object the plan removes for `release`.
fn planned(plan: &Value, release: &str) -> BTreeSet<(String, String)> {
    plan["dropped"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["release"] == release)
        .flat_map(|d| d["objects"].as_array().cloned().unwrap_or_default())
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_owned(),
                o["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn three(release: &str) -> BTreeSet<(String, String)> {
    [
        ("service", "worker"),
        ("network", "back"),
        ("config", "conf2"),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_owned(), format!("{release}_{n}")))
    .collect()
}

#[test]
fn a_reviewed_plan_removes_exactly_what_the_release_dropped() {
    let s = Scenario::new();
    let web = s.release("web");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    two_revisions(&s, &web, "shop");
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = apps(&s, "shop", &web);

    let out = s.dir().join("plan.json");
    let run = s
        .sweep("plan", Some(&config), &apps)
        .arg("--prune-resources")
        .arg("--out")
        .arg(&out)
        .args(&["--format", "json"])
        .run();
    run.expect_code(0);
    let plan = run.json();
    assert_eq!(planned(&plan, &web), three(&web), "{plan:#}");
    assert!(plan["deletions"].as_array().unwrap().is_empty());
    let unclaimed: Vec<&Value> = plan["unclaimed"].as_array().unwrap().iter().collect();
    assert!(
        unclaimed
            .iter()
            .any(|u| u["name"] == format!("{web}_adopted") && u["reason"] == "no_marker"),
        "{plan:#}"
    );

    let run = s
        .sweep("apply", Some(&config), &apps)
        .arg("--plan")
        .arg(&out)
        .args(&["--yes", "--format", "json"])
        .run();
    run.expect_code(0);
    let report = &run.json()["report"];
    let entry = &report["dropped"][0];
    assert_eq!(entry["outcome"], "deleted", "{report:#}");
    let removed: BTreeSet<(String, String)> = entry["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_owned(),
                o["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(removed, three(&web));
    only_the_three_went(&web);
}

#[test]
fn watch_once_removes_what_the_release_dropped() {
    let s = Scenario::new();
    let api = s.release("api");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&api);
    two_revisions(&s, &api, "shop");
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = apps(&s, "shop", &api);
    let run = s
        .sweep("watch", Some(&config), &apps)
        .args(&["--once", "--prune-resources"])
        .run();
    run.expect_code(0);
    // The sweep's one line counts what it removed of the live release.
    assert!(
        run.stderr
            .contains("; 3 dropped objects planned, 3 removed, 0 releases' failed"),
        "{}",
        run.stderr
    );
    only_the_three_went(&api);
}

#[test]
fn what_is_not_proven_dropped_stays() {
    let s = Scenario::new();
    let app_name = "shop";
    // web: revision 1 by another controller declared worker; a service is
    // added by hand with the stack's label. db: its dropped network is
    // attached to a running service of another stack. api: revision 2
    // dropped worker, but the engine recorded its deploy as failed.
    let web = s.release("web");
    let db = s.release("db");
    let user = s.release("user");
    let api = s.release("api");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    cleanup.add(&db);
    cleanup.add(&user);
    cleanup.add(&api);

    let api_one = compose(
        &s,
        &api,
        &[("app", &[], &[]), ("worker", &[], &[])],
        &[],
        &[],
        false,
    );
    deploy_revision(&s, &api, 1, &s.stamp(app_name, &api), &api_one);
    let api_two = compose(&s, &api, &[("app", &[], &[])], &[], &[], false);
    deploy_revision_as(&s, &api, 2, &s.stamp(app_name, &api), &api_two, "failed");

    let one = compose(
        &s,
        &web,
        &[("app", &[], &[]), ("worker", &[], &[])],
        &[],
        &[],
        false,
    );
    deploy_revision(
        &s,
        &web,
        1,
        &format!("cd/other{}/shop:release/{web}", s.token),
        &one,
    );
    let two = compose(&s, &web, &[("app", &[], &[])], &[], &[], false);
    deploy_revision(&s, &web, 2, &s.stamp(app_name, &web), &two);
    let extra = format!("{web}_extra");
    docker_ok(
        ALPHA.manager,
        &[
            "service",
            "create",
            "--detach",
            "--quiet",
            "--name",
            &extra,
            "--label",
            &format!("{STACK_LABEL}={web}"),
            "--endpoint-mode",
            "dnsrr",
            IMAGE,
            "sleep",
            "3600",
        ],
    );

    let db_one = compose(
        &s,
        &db,
        &[("app", &["default"], &[]), ("worker", &["shared"], &[])],
        &["default", "shared"],
        &[],
        false,
    );
    deploy_revision(&s, &db, 1, &s.stamp(app_name, &db), &db_one);
    let db_two = compose(
        &s,
        &db,
        &[("app", &["default"], &[])],
        &["default"],
        &[],
        false,
    );
    deploy_revision(&s, &db, 2, &s.stamp(app_name, &db), &db_two);
    // Another stack's running service attached to db's dropped network.
    let user_compose = format!(
        "version: \"3.8\"\nservices:\n  app:\n    image: {IMAGE}\n    command: [\"sleep\", \"3600\"]\n    deploy:\n      endpoint_mode: dnsrr\n    networks: [shared]\nnetworks:\n  shared:\n    external: true\n    name: {db}_shared\n"
    );
    let file = s.write("user.yml", &user_compose);
    docker_ok(
        ALPHA.manager,
        &[
            "stack",
            "deploy",
            "--resolve-image",
            "never",
            "-c",
            &file.to_string_lossy(),
            &user,
        ],
    );

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set(
        "apps.json",
        json!([{"name": app_name, "swarm": "alpha", "releases": [web, db, api],
                "state": "reconciled", "prune_resources": true}]),
    );
    let run = s
        .sweep("apply", Some(&config), &apps)
        .args(&["--prune-resources", "--yes", "--format", "json"])
        .run();
    let out = run.json();
    let plan = &out["plan"];
    // web: the worker of another controller's revision and the service
    // added by hand are unclaimed; nothing of web is removed.
    assert!(planned(plan, &web).is_empty(), "{plan:#}");
    let reasons: BTreeSet<(String, String)> = plan["unclaimed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["name"].as_str().unwrap().to_owned(),
                u["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        reasons.contains(&(format!("{web}_worker"), "not_claimed".to_owned())),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&(extra.clone(), "not_claimed".to_owned())),
        "{reasons:?}"
    );
    // api: the revision that dropped its worker failed to deploy; the
    // release is left whole, saying why.
    assert!(planned(plan, &api).is_empty(), "{plan:#}");
    let api_hold = plan["resource_holds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["release"] == api.as_str())
        .expect("api is held");
    assert_eq!(api_hold["reason"], "not_deployed", "{plan:#}");
    // db: its worker goes, its shared network stays, reported in use.
    let db_entry = plan["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["release"] == db.as_str())
        .expect("db dropped its worker");
    assert_eq!(
        db_entry["in_use_by"][0]["object"],
        format!("{db}_shared"),
        "{plan:#}"
    );
    // Kept in use: a person decides, as for a release in use.
    run.expect_code(1);

    let services = stack_objects("service", &web);
    assert!(
        services.contains(&format!("{web}_worker")) && services.contains(&extra),
        "{services:?}"
    );
    assert_eq!(stack_objects("service", &db), set(&[format!("{db}_app")]));
    assert_eq!(
        stack_objects("service", &api),
        set(&[format!("{api}_app"), format!("{api}_worker")])
    );
    assert!(stack_objects("network", &db).contains(&format!("{db}_shared")));
    let user_running = docker_ok(
        ALPHA.manager,
        &[
            "service",
            "ls",
            "--filter",
            &format!("name={user}_app"),
            "--format",
            "{{.Name}}",
        ],
    );
    assert!(
        !user_running.trim().is_empty(),
        "the other stack is untouched"
    );
}
