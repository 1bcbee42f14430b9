//! What another workload still uses is never deleted, on swarm alpha: a
//! departed release's volume that another stack mounts as `external`, or a
//! service made by hand mounts, both at 0 replicas (no container holds the
//! volume, so the engine itself would let it go); its network and config
//! that another stack's service names; its volume that a stopped container
//! uses; its network that a stopped container of no service is attached
//! to. Each time the rest of the release goes, what is used stays with
//! the release's records, the run ends with exit 1, and the other workload
//! is untouched.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sweep_e2e::{
    app, create_stack_record, docker, docker_ok, one, wait_deployed, Cleanup, Remains, Scenario,
    Stack, SwarmEntry, ALPHA, IMAGE,
};

/// Removes a service or container made outside any stack when dropped,
/// however the test ends (before the stacks' cleanup, which is declared
/// first and so dropped last).
struct Outside {
    node: &'static str,
    kind: &'static str,
    name: String,
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = docker(self.node, &[self.kind, "rm", "-f", &self.name]);
    }
}

/// A departed release `gone` whose one task runs on alpha-2 with its
/// volume there, stamped for the departed application `old`.
fn departed(s: &Scenario, cleanup: &mut Cleanup, extras: bool) -> Stack {
    let gone = s.release("gone");
    cleanup.add(&gone);
    let mut stack = Stack::new(&gone).with_volume().on("alpha-2");
    if extras {
        stack = stack.with_network_secret_config();
    }
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("old", &gone)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    stack
}

/// Deploys stack `name` of one service at 0 replicas whose spec names
/// `extra` (compose lines under the service) and `tail` (top-level
/// compose lines).
fn user_stack(s: &Scenario, name: &str, extra: &str, tail: &str) {
    let compose = format!(
        "version: \"3.8\"\nservices:\n  app:\n    image: {IMAGE}\n    command: [\"sleep\", \"3600\"]\n    deploy:\n      replicas: 0\n      endpoint_mode: dnsrr\n{extra}{tail}"
    );
    let file = s.write(&format!("{name}.yml"), &compose);
    docker_ok(
        ALPHA.manager,
        &[
            "stack",
            "deploy",
            "--resolve-image",
            "never",
            "-c",
            &file.to_string_lossy(),
            name,
        ],
    );
}

/// Runs `apply --prune-volumes` for the app set that keeps nothing on
/// alpha but an application declaring nothing, and returns its JSON.
fn sweep(s: &Scenario) -> (Option<i32>, Value) {
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("keep", "alpha", &[])]));
    let run = s.purge(&config, &apps);
    (run.code(), run.json())
}

/// `(kind, object, user kind, user name)` of each entry of `in_use_by`.
fn uses(entry: &Value) -> Vec<(String, String, String, String)> {
    entry["in_use_by"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|u| {
                    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                    (
                        s(&u["kind"]),
                        s(&u["object"]),
                        s(&u["user"]["kind"]),
                        s(&u["user"]["name"]),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Sweeps and checks that `gone` went but for what `expected` uses
/// (`(kind, object, user kind, user name)` of each use, sorted): planned
/// as in use from the start, reported `in_use`, exit 1. Returns the JSON.
fn sweep_keeps(s: &Scenario, gone: &Stack, expected: &[(&str, &str, &str, &str)]) -> Value {
    let (code, out) = sweep(s);
    assert_eq!(code, Some(1), "{out:#}");
    let deletion = one(&out["plan"], "deletions", &gone.release);
    let expected: Vec<(String, String, String, String)> = expected
        .iter()
        .map(|(a, b, c, d)| ((*a).into(), (*b).into(), (*c).into(), (*d).into()))
        .collect();
    assert_eq!(uses(deletion), expected);
    let report = one(&out["report"], "releases", &gone.release);
    assert_eq!(report["outcome"], "in_use", "{report:#}");
    assert_eq!(report["in_use_by"], deletion["in_use_by"]);
    out
}

/// Sweeps again once nobody uses what was kept: the rest, then the
/// records, go.
fn sweep_finishes(s: &Scenario, gone: &Stack) {
    let (code, out) = sweep(s);
    assert_eq!(code, Some(0), "{out:#}");
    let report = one(&out["report"], "releases", &gone.release);
    assert_eq!(report["outcome"], "deleted", "{report:#}");
    let r = Remains::read(&ALPHA, &gone.release);
    assert!(r.is_gone(), "{r:#?}");
}

fn service_exists(name: &str) -> bool {
    docker(ALPHA.manager, &["service", "inspect", name])
        .status
        .success()
}

/// The volume, its services gone, its records kept: the state both
/// reproductions end in.
fn assert_volume_kept_with_records(gone: &Stack) {
    let r = Remains::read(&ALPHA, &gone.release);
    assert!(
        r.services.is_empty(),
        "the release's services should be gone: {r:#?}"
    );
    assert!(!r.records.is_empty(), "the records must stay: {r:#?}");
    assert_eq!(
        r.volume_nodes(),
        ["alpha-2"],
        "the volume must stay: {r:#?}"
    );
}

#[test]
fn a_volume_another_stack_mounts_as_external_at_0_replicas_stays() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let user = s.release("user");
    cleanup.add(&user);
    let gone = departed(&s, &mut cleanup, false);
    let volume = gone.volume();
    user_stack(
        &s,
        &user,
        "    volumes: [\"data:/data\"]\n",
        &format!("volumes:\n  data:\n    external: true\n    name: {volume}\n"),
    );

    let user_app = format!("{user}_app");
    let out = sweep_keeps(&s, &gone, &[("volume", &volume, "service", &user_app)]);
    let deletion = one(&out["plan"], "deletions", &gone.release);
    let removes = &deletion["objects"]["volumes"];
    assert!(!removes.to_string().contains(&volume), "{removes}");
    assert_volume_kept_with_records(&gone);
    assert!(service_exists(&user_app), "the user's service is untouched");

    // Once nobody names it, the next sweep takes the volume, then the
    // records.
    docker_ok(ALPHA.manager, &["stack", "rm", &user]);
    sweep_finishes(&s, &gone);
}

#[test]
fn a_volume_a_service_made_by_hand_mounts_at_0_replicas_stays() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = departed(&s, &mut cleanup, false);
    let volume = gone.volume();
    let byhand = Outside {
        node: ALPHA.manager,
        kind: "service",
        name: s.release("byhand"),
    };
    let mount = format!("type=volume,source={volume},target=/data");
    docker_ok(
        ALPHA.manager,
        &[
            "service",
            "create",
            "--detach",
            "--replicas",
            "0",
            "--endpoint-mode",
            "dnsrr",
            "--name",
            &byhand.name,
            "--mount",
            &mount,
            IMAGE,
            "sleep",
            "3600",
        ],
    );

    sweep_keeps(&s, &gone, &[("volume", &volume, "service", &byhand.name)]);
    assert_volume_kept_with_records(&gone);
    assert!(
        service_exists(&byhand.name),
        "the service made by hand is untouched"
    );
}

#[test]
fn a_network_and_config_another_stack_names_are_in_use_from_the_plan_on() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let user = s.release("user");
    cleanup.add(&user);
    let gone = departed(&s, &mut cleanup, true);
    let (net, cfg) = (
        format!("{}_net", gone.release),
        format!("{}_cfg", gone.release),
    );
    user_stack(
        &s,
        &user,
        "    networks: [net]\n    configs:\n      - source: cfg\n        target: /cfg.txt\n",
        &format!(
            "networks:\n  net:\n    external: true\n    name: {net}\nconfigs:\n  cfg:\n    external: true\n    name: {cfg}\n"
        ),
    );

    let started = Instant::now();
    let user_app = format!("{user}_app");
    let out = sweep_keeps(
        &s,
        &gone,
        &[
            ("network", &net, "service", &user_app),
            ("config", &cfg, "service", &user_app),
        ],
    );
    let took = started.elapsed();
    // Never tried, so never waited on: no error, and well within the
    // settle time (60 s) the engine's refusals would have been retried for.
    let report = one(&out["report"], "releases", &gone.release);
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert!(took < Duration::from_secs(45), "the sweep took {took:?}");

    let r = Remains::read(&ALPHA, &gone.release);
    assert!(r.services.is_empty() && r.secrets.is_empty(), "{r:#?}");
    assert_eq!(r.networks, [net], "{r:#?}");
    assert_eq!(r.configs, [cfg], "{r:#?}");
    assert!(!r.records.is_empty(), "{r:#?}");
    assert!(
        r.volume_nodes().is_empty(),
        "the unshared volume went: {r:#?}"
    );
    assert!(service_exists(&user_app));
}

#[test]
fn a_volume_a_stopped_container_uses_on_its_node_stays() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = departed(&s, &mut cleanup, false);
    let volume = gone.volume();
    let holder = Outside {
        node: "alpha-2",
        kind: "container",
        name: s.release("holder"),
    };
    // Created, never started: a stopped container of no service.
    let mount = format!("{volume}:/data");
    docker_ok(
        "alpha-2",
        &[
            "container",
            "create",
            "--name",
            &holder.name,
            "-v",
            &mount,
            IMAGE,
            "true",
        ],
    );

    let out = sweep_keeps(&s, &gone, &[("volume", &volume, "container", &holder.name)]);
    let deletion = one(&out["plan"], "deletions", &gone.release);
    let user = &deletion["in_use_by"][0]["user"];
    assert!(user["node"].is_string(), "the container's node: {user}");
    assert_volume_kept_with_records(&gone);

    // The container gone, the next sweep finishes the release.
    docker_ok("alpha-2", &["container", "rm", &holder.name]);
    sweep_finishes(&s, &gone);
}

#[test]
fn a_network_a_stopped_container_of_no_service_is_attached_to_stays() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = departed(&s, &mut cleanup, true);
    let net = format!("{}_net", gone.release);
    let holder = Outside {
        node: "alpha-3",
        kind: "container",
        name: s.release("attached"),
    };
    // Created, never started, on a node the release never ran on: the
    // engine lets a network go while no container on it runs, and this
    // one could then never start.
    docker_ok(
        "alpha-3",
        &[
            "container",
            "create",
            "--name",
            &holder.name,
            "--network",
            &net,
            IMAGE,
            "true",
        ],
    );

    let out = sweep_keeps(&s, &gone, &[("network", &net, "container", &holder.name)]);
    let report = one(&out["report"], "releases", &gone.release);
    assert_eq!(report["errors"], json!([]), "{report:#}");
    let r = Remains::read(&ALPHA, &gone.release);
    assert!(
        r.services.is_empty() && r.secrets.is_empty() && r.configs.is_empty(),
        "{r:#?}"
    );
    assert_eq!(r.networks, [net], "{r:#?}");
    assert!(!r.records.is_empty(), "{r:#?}");
    // The other workload still starts on it.
    docker_ok("alpha-3", &["container", "start", &holder.name]);

    // The container gone, the next sweep finishes the release.
    docker_ok("alpha-3", &["container", "rm", "-f", &holder.name]);
    sweep_finishes(&s, &gone);
}
