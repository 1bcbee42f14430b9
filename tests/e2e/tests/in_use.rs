//! What another workload still uses is never deleted, on swarm alpha: a
//! departed release's volume that another stack mounts as `external`, or a
//! service made by hand mounts (or mounted, before an update its rollback
//! would undo), all at 0 replicas (no container holds the
//! volume, so the engine itself would let it go); its network and config
//! that another stack's service names; its volume that a stopped container
//! uses; its network that a stopped container of no service is attached
//! to, whether the plan found it or it joined while the sweep ran (a saved
//! plan it joined since is refused as stale); its volume that a service
//! given the stack's label while the sweep ran mounts. Each time the rest of the release goes, what is used stays with
//! the release's records, the run ends with exit 1, and the other workload
//! is untouched.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sweep_e2e::{
    app, create_stack_record, docker, docker_ok, endpoint, one, wait_deployed, Cleanup, Remains,
    Scenario, Stack, SwarmEntry, Sweep, ALPHA, IMAGE, QUICK,
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

/// Starts `apply --prune-volumes` (as [`sweep`]) and returns once it has
/// removed `stack`'s service: its stubborn task is still stopping then,
/// and the sweep waits on it before the stack's other parts and volumes.
fn sweep_past_services(s: &Scenario, stack: &Stack) -> sweep_e2e::Running {
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("keep", "alpha", &[])]));
    let running = s
        .sweep("apply", Some(&config), &apps)
        .arg("--prune-volumes")
        .args(QUICK)
        .spawn();
    let started = Instant::now();
    while service_exists(&stack.service()) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the service was never removed:\n{}",
            running.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    running
}

/// Creates the service `name` on alpha by hand, at 0 replicas, mounting
/// the volume `volume`, with `extra` arguments.
fn mount_by_hand(name: &str, volume: &str, extra: &[&str]) {
    let mount = format!("type=volume,source={volume},target=/data");
    let mut args = vec![
        "service",
        "create",
        "--detach",
        "--replicas",
        "0",
        "--endpoint-mode",
        "dnsrr",
        "--name",
        name,
        "--mount",
        &mount,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[IMAGE, "sleep", "3600"]);
    docker_ok(ALPHA.manager, &args);
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

/// A container of no service, created (never started) on `net` on
/// alpha-3, a node the release never ran on; removed when dropped.
fn attach_stopped(s: &Scenario, net: &str) -> Outside {
    let holder = Outside {
        node: "alpha-3",
        kind: "container",
        name: s.release("attached"),
    };
    docker_ok(
        "alpha-3",
        &[
            "container",
            "create",
            "--name",
            &holder.name,
            "--network",
            net,
            IMAGE,
            "true",
        ],
    );
    holder
}

/// Of `release`, only the network `net` and the records are left: what a
/// container of no service attached to the network keeps.
fn assert_network_kept_with_records(release: &str, net: &str) {
    let r = Remains::read(&ALPHA, release);
    assert!(
        r.services.is_empty() && r.secrets.is_empty() && r.configs.is_empty(),
        "{r:#?}"
    );
    assert_eq!(r.networks, [net], "{r:#?}");
    assert!(!r.records.is_empty(), "{r:#?}");
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
    mount_by_hand(&byhand.name, &volume, &[]);

    sweep_keeps(&s, &gone, &[("volume", &volume, "service", &byhand.name)]);
    assert_volume_kept_with_records(&gone);
    assert!(
        service_exists(&byhand.name),
        "the service made by hand is untouched"
    );
}

/// A service made by hand mounted the volume, then was updated off it:
/// its spec names the volume no more, but its previous spec, which
/// `docker service rollback` returns it to, does. The volume stays, with
/// the records, and the rollback finds its data.
#[test]
fn a_volume_a_service_was_updated_off_stays_for_its_rollback() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = departed(&s, &mut cleanup, false);
    let volume = gone.volume();
    let byhand = Outside {
        node: ALPHA.manager,
        kind: "service",
        name: s.release("updated"),
    };
    mount_by_hand(&byhand.name, &volume, &[]);
    docker_ok(
        ALPHA.manager,
        &[
            "service",
            "update",
            "--detach",
            "--mount-rm",
            "/data",
            &byhand.name,
        ],
    );
    let spec = docker_ok(
        ALPHA.manager,
        &[
            "service",
            "inspect",
            "--format",
            "{{json .Spec.TaskTemplate.ContainerSpec.Mounts}}",
            &byhand.name,
        ],
    );
    assert!(!spec.contains(&volume), "updated off the volume: {spec}");

    sweep_keeps(&s, &gone, &[("volume", &volume, "service", &byhand.name)]);
    assert_volume_kept_with_records(&gone);
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
    // Created, never started, on a node the release never ran on: the
    // engine lets a network go while no container on it runs, and this
    // one could then never start.
    let holder = attach_stopped(&s, &net);

    let out = sweep_keeps(&s, &gone, &[("network", &net, "container", &holder.name)]);
    let report = one(&out["report"], "releases", &gone.release);
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert_network_kept_with_records(&gone.release, &net);
    // The other workload still starts on it.
    docker_ok("alpha-3", &["container", "start", &holder.name]);

    // The container gone, the next sweep finishes the release.
    docker_ok("alpha-3", &["container", "rm", "-f", &holder.name]);
    sweep_finishes(&s, &gone);
}

/// Without node reach only the manager's own containers are read: a
/// stopped container of no service on a worker, attached to the stack's
/// attachable network, is not seen. The network stays, named as maybe in
/// use by a container nobody read, and so do the records; the rest of the
/// release goes. Once every node is read, the next sweep finds the
/// container itself.
#[test]
fn an_attachable_network_stays_while_a_node_s_containers_are_not_read() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = departed(&s, &mut cleanup, true);
    let net = format!("{}_net", gone.release);
    let holder = attach_stopped(&s, &net);

    let manager_only = s.registry(
        "manager-only.toml",
        &[SwarmEntry::named(ALPHA.name, &endpoint(ALPHA.manager))],
    );
    let apps = s.app_set("apps.json", json!([app("keep", "alpha", &[])]));
    let run = s
        .sweep("apply", Some(&manager_only), &apps)
        .args(QUICK)
        .run();
    let out = run.json();
    assert_eq!(run.code(), Some(1), "{out:#}");
    let deletion = one(&out["plan"], "deletions", &gone.release);
    assert_eq!(
        uses(deletion),
        [(
            "network".to_owned(),
            net.clone(),
            "unseen".to_owned(),
            String::new()
        )]
    );
    let report = one(&out["report"], "releases", &gone.release);
    assert_eq!(report["outcome"], "in_use", "{report:#}");
    assert_network_kept_with_records(&gone.release, &net);
    // The other workload still starts on it.
    docker_ok("alpha-3", &["container", "start", &holder.name]);

    // Every node read: the container itself is found.
    let (code, out) = sweep(&s);
    assert_eq!(code, Some(1), "{out:#}");
    let deletion = one(&out["plan"], "deletions", &gone.release);
    assert_eq!(
        uses(deletion),
        [(
            "network".to_owned(),
            net.clone(),
            "container".to_owned(),
            holder.name.clone()
        )]
    );
    docker_ok("alpha-3", &["container", "rm", "-f", &holder.name]);
    sweep_finishes(&s, &gone);
}

#[test]
fn a_saved_plan_is_refused_once_a_container_attaches_to_its_network() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = departed(&s, &mut cleanup, true);
    let net = format!("{}_net", gone.release);
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("keep", "alpha", &[])]));
    let saved = s.dir().join("plan.json");
    s.sweep("plan", Some(&config), &apps)
        .arg("--out")
        .arg(&saved)
        .arg("--prune-volumes")
        .run()
        .expect_code(0);

    // Reviewed with nobody on the network; a container of no service
    // joins it before the apply.
    let holder = attach_stopped(&s, &net);
    let run = Sweep::new(&["apply"])
        .arg("--config")
        .arg(&config)
        .arg("--app-set")
        .arg(&apps)
        .arg("--plan")
        .arg(&saved)
        .args(QUICK)
        .run();
    run.expect_code(3);
    assert!(
        run.stderr.lines().any(|l| l.contains(&gone.release)
            && l.contains("since it was reviewed")
            && l.contains(&holder.name)),
        "the new user is not named:\n{}",
        run.stderr
    );
    // Nothing of the release went.
    let r = Remains::read(&ALPHA, &gone.release);
    assert_eq!(r.services.len(), 1, "{r:#?}");
    assert_eq!(r.networks, [net], "{r:#?}");
    assert_eq!(r.volume_nodes(), ["alpha-2"], "{r:#?}");
    assert!(!r.records.is_empty(), "{r:#?}");
}

/// A container of no service attached to the network while the sweep
/// waits for the release's task to stop: after the plan, before the
/// networks go. The read before the networks lists every node's
/// containers, so the network stays with the records.
#[test]
#[ignore = "soak: waits out a stubborn task; the fast set keeps the network rule with a_network_a_stopped_container_of_no_service_is_attached_to_stays"]
fn a_network_a_container_attaches_to_during_the_sweep_stays() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = s.release("gone");
    cleanup.add(&gone);
    // Its task ignores the stop signal for 8 s: the window to attach in,
    // wide enough for a loaded machine's docker CLI.
    let stack = Stack::new(&gone)
        .with_volume()
        .with_network_secret_config()
        .on("alpha-2")
        .stubborn(8);
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("old", &gone)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let net = format!("{gone}_net");
    let running = sweep_past_services(&s, &stack);
    let holder = attach_stopped(&s, &net);
    let run = running.wait();
    let out = run.json();
    assert_eq!(run.code(), Some(1), "{out:#}");
    let deletion = one(&out["plan"], "deletions", &gone);
    assert!(
        uses(deletion).is_empty(),
        "the plan saw nobody on it: {out:#}"
    );
    let report = one(&out["report"], "releases", &gone);
    assert_eq!(report["outcome"], "in_use", "{report:#}");
    assert_eq!(report["errors"], json!([]), "{report:#}");
    assert_eq!(
        uses(report),
        [(
            "network".to_owned(),
            net.clone(),
            "container".to_owned(),
            holder.name.clone()
        )],
        "{report:#}"
    );
    assert_network_kept_with_records(&gone, &net);
    let r = Remains::read(&ALPHA, &gone);
    assert!(r.volume_nodes().is_empty(), "{r:#?}");
    // The other workload still starts on it.
    docker_ok("alpha-3", &["container", "start", &holder.name]);
}

/// A service given the departed stack's label by hand (a `docker stack
/// deploy` of the stack writes no records), created once the release's
/// own service is gone, while its task is still stopping: after the
/// plan, and after the read before the services went. It mounts the
/// release's volume at 0 replicas, so no container holds the volume and
/// the engine would let it go. The reads after that one count it as
/// another workload, never the release's own: the volume stays on
/// alpha-2, with the records and the service, and the release fails
/// naming it.
#[test]
#[ignore = "soak: waits out a stubborn task; the fast set keeps the rule with a_volume_a_service_made_by_hand_mounts_at_0_replicas_stays"]
fn a_volume_a_service_labelled_with_the_stack_during_the_sweep_mounts_stays() {
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = s.release("gone");
    cleanup.add(&gone);
    // Its task ignores the stop signal for 8 s: the window to create the
    // service in, wide enough for a loaded machine's docker CLI.
    let stack = Stack::new(&gone).with_volume().on("alpha-2").stubborn(8);
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("old", &gone)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let volume = stack.volume();
    let running = sweep_past_services(&s, &stack);
    let late = Outside {
        node: ALPHA.manager,
        kind: "service",
        name: format!("{gone}_late"),
    };
    let label = format!("com.docker.stack.namespace={gone}");
    mount_by_hand(&late.name, &volume, &["--label", &label]);
    let run = running.wait();
    let out = run.json();
    assert_eq!(run.code(), Some(1), "{out:#}");
    let report = one(&out["report"], "releases", &gone);
    assert_eq!(report["outcome"], "failed", "{report:#}");
    assert!(
        report["errors"].to_string().contains(&late.name),
        "the release fails naming the service: {report:#}"
    );
    assert_eq!(report["volumes_deleted"], json!({}), "{report:#}");
    let r = Remains::read(&ALPHA, &gone);
    assert_eq!(r.services, std::slice::from_ref(&late.name), "{r:#?}");
    assert_eq!(
        r.volume_nodes(),
        ["alpha-2"],
        "the volume must stay: {r:#?}"
    );
    assert!(!r.records.is_empty(), "the records must stay: {r:#?}");
}
