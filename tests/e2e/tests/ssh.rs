//! Daemons reached over `ssh://` on the real engines of swarm alpha, as
//! `docker -H ssh://...` reaches them: the bed runs an OpenSSH server in
//! every node's network namespace, whose sessions' `docker` talks to that
//! node's daemon. The system `ssh` client is used as it is, with the bed's
//! client configuration (key, known hosts) put in front of it by a wrapper
//! first in `PATH`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::json;
use sweep_e2e::{
    app, assert_gone, assert_intact, create_stack_record, docker_ok, list, one, release_names,
    wait_deployed, wait_for, Cleanup, Run, Scenario, Stack, SwarmEntry, Sweep, ALPHA, QUICK,
};

/// Where the bed keeps its ssh client files (`bed ssh`).
const BED_SSH: &str = "/run/swarm-sweep-bed/ssh";

/// One test at a time: the last checks that no ssh process outlives a run,
/// which a run of another test would make untrue.
fn alone() -> MutexGuard<'static, ()> {
    static ALONE: Mutex<()> = Mutex::new(());
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `ssh://` endpoint of bed node `node`: root at the address it has in
/// the swarm.
fn ssh_endpoint(node: &str) -> String {
    let addr = docker_ok(node, &["info", "--format", "{{.Swarm.NodeAddr}}"]);
    format!("ssh://root@{}", addr.trim())
}

/// `PATH` with `dir` (holding an `ssh` wrapper) first.
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A directory with an `ssh` that runs the system client with the client
/// configuration `config`.
fn ssh_wrapper(s: &Scenario, name: &str, config: &str) -> PathBuf {
    let dir = s.dir().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let config_file = dir.join("config");
    std::fs::write(&config_file, config).unwrap();
    let script = dir.join("ssh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec /usr/bin/ssh -F {} \"$@\"\n",
            config_file.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The bed's client configuration with `replace` applied to it.
fn bed_config_with(replace: &[(&str, &str)]) -> String {
    let mut config = std::fs::read_to_string(format!("{BED_SSH}/config"))
        .expect("the bed's ssh client configuration (tests/testbed/bed up)");
    for (from, to) in replace {
        assert!(config.contains(from), "{from:?} not in the bed's config");
        config = config.replace(from, to);
    }
    config
}

/// `sweep` run with `path` as its `PATH`.
fn run_with_path(sweep: Sweep, path: &str) -> Run {
    sweep.env("PATH", path).run()
}

/// The ssh clients running `dial-stdio` now.
fn dial_stdio_clients() -> Vec<String> {
    let out = Command::new("pgrep")
        .args(["-a", "-f", "^ssh .*dial-stdio"])
        .output()
        .expect("pgrep");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Waits until no ssh client of a finished run is left: one whose run
/// exited ends as soon as it reads the end of its stdin.
fn no_ssh_left() {
    wait_for("no ssh client left", Duration::from_secs(10), || {
        dial_stdio_clients().is_empty()
    });
}

#[test]
fn a_swarm_reached_over_ssh_sweeps_like_one_reached_over_its_sockets() {
    let _alone = alone();
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = s.release("gone");
    let kept = s.release("kept");
    cleanup.add(&gone);
    cleanup.add(&kept);
    let gone_stack = Stack::new(&gone).global().with_volume();
    let kept_stack = Stack::new(&kept).with_volume().on("alpha-2");
    create_stack_record(&ALPHA, &gone_stack, 1, Some(&s.stamp("shop", &gone)));
    create_stack_record(&ALPHA, &kept_stack, 1, Some(&s.stamp("edge", &kept)));
    s.deploy(&ALPHA, &gone_stack);
    s.deploy(&ALPHA, &kept_stack);
    wait_deployed(&ALPHA, &gone_stack, ALPHA.nodes);
    wait_deployed(&ALPHA, &kept_stack, &["alpha-2"]);

    let over_sockets = s.registry("sockets.toml", &[SwarmEntry::of(&ALPHA)]);
    let over_ssh = s.registry(
        "ssh.toml",
        &[SwarmEntry::named("alpha", &ssh_endpoint(ALPHA.manager))
            .with_nodes(ALPHA.nodes.iter().map(|n| ssh_endpoint(n)).collect())],
    );
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[&kept])]));
    let path = path_with(&Path::new(BED_SSH).join("bin"));

    // The same plan, whichever way the daemons are reached.
    let plan = |config: &Path| {
        let run = run_with_path(
            s.sweep("plan", Some(config), &apps).arg("--prune-volumes"),
            &path,
        );
        run.expect_code(0);
        let mut plan = run.json();
        // When it was made, and from which file: the only differences.
        plan.as_object_mut().unwrap().remove("generated_at");
        plan.as_object_mut().unwrap().remove("inputs");
        // Other scenarios on alpha come and go between the two plans (a
        // release of theirs spared in one is gone by the other): only this
        // scenario's releases are compared.
        for list in ["deletions", "spared"] {
            if let Some(entries) = plan[list].as_array_mut() {
                entries.retain(|e| {
                    e["release"]
                        .as_str()
                        .is_some_and(|r| r.ends_with(&format!("-{}", s.token)))
                });
            }
        }
        plan
    };
    let by_socket = plan(&over_sockets);
    let by_ssh = plan(&over_ssh);
    assert_eq!(by_ssh, by_socket);
    assert_eq!(release_names(&by_ssh, "deletions"), [gone.clone()].into());
    assert_eq!(one(&by_ssh, "deletions", &gone)["volumes"], "complete");
    let mut reached: Vec<&str> = list(&list(&by_ssh, "swarms")[0], "nodes")
        .iter()
        .filter_map(|n| n["hostname"].as_str())
        .collect();
    reached.sort_unstable();
    assert_eq!(reached, ALPHA.nodes);

    // The sweep over ssh deletes the departed release from every node.
    let run = run_with_path(
        s.sweep("apply", Some(&over_ssh), &apps)
            .arg("--prune-volumes")
            .args(QUICK),
        &path,
    );
    run.expect_code(0);
    let out = run.json();
    assert_eq!(one(&out["report"], "releases", &gone)["outcome"], "deleted");
    assert_eq!(
        release_names(&out["report"], "releases"),
        [gone.clone()].into()
    );
    assert_gone(&ALPHA, &gone);
    assert_intact(&ALPHA, &kept, &["alpha-2"]);
    // Each connection was one ssh process; none outlives the run.
    no_ssh_left();
}

#[test]
fn a_refused_host_key_or_login_is_a_clear_error_for_that_swarm_or_node_never_a_hang() {
    let _alone = alone();
    let s = Scenario::new();
    let mut cleanup = Cleanup::new(&ALPHA);
    let gone = s.release("gone");
    cleanup.add(&gone);
    let stack = Stack::new(&gone).with_volume().on("alpha-2");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &gone)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));

    // No known host key: ssh in batch mode refuses the host.
    let empty = s.write("known_hosts_empty", "");
    let unknown_key = ssh_wrapper(
        &s,
        "unknown-key",
        &bed_config_with(&[(
            &format!("{BED_SSH}/known_hosts"),
            &empty.display().to_string(),
        )]),
    );
    // A key the servers do not know: the login fails.
    let stranger = s.dir().join("stranger_key");
    let keygen = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&stranger)
        .output()
        .expect("ssh-keygen");
    assert!(keygen.status.success(), "{keygen:?}");
    let wrong_login = ssh_wrapper(
        &s,
        "wrong-login",
        &bed_config_with(&[(
            &format!("{BED_SSH}/id_ed25519"),
            &stranger.display().to_string(),
        )]),
    );

    for (wrapper, says) in [
        (&unknown_key, "Host key verification failed."),
        (&wrong_login, "Permission denied (publickey"),
    ] {
        let path = path_with(wrapper);

        // The manager: the swarm is unreadable, said, and nothing of it is
        // deleted.
        let config = s.registry(
            "manager.toml",
            &[SwarmEntry::named("alpha", &ssh_endpoint(ALPHA.manager))],
        );
        let started = Instant::now();
        let run = run_with_path(
            s.sweep("apply", Some(&config), &apps)
                .arg("--prune-volumes")
                .args(QUICK),
            &path,
        );
        assert!(started.elapsed() < Duration::from_secs(60), "{run:?}");
        run.expect_code(1);
        let out = run.json();
        let holds: Vec<_> = list(&out["plan"], "holds")
            .iter()
            .filter(|h| h["scope"] == "alpha")
            .collect();
        assert_eq!(holds.len(), 1, "{:#}", out["plan"]);
        assert_eq!(holds[0]["reason"], "swarm_unreadable");
        assert!(list(&out["plan"], "deletions").is_empty());
        assert!(run.stderr.contains(says), "{}", run.stderr);
        assert!(run.stderr.contains("ssh to "), "{}", run.stderr);

        // A node: that node is named as unreached, and the release keeps
        // its records.
        let mut entry = SwarmEntry::of(&ALPHA);
        entry = entry.with_nodes(vec![
            sweep_e2e::endpoint("alpha-1"),
            ssh_endpoint("alpha-2"),
            sweep_e2e::endpoint("alpha-3"),
        ]);
        let config = s.registry("node.toml", &[entry]);
        let run = run_with_path(
            s.sweep("plan", Some(&config), &apps).arg("--prune-volumes"),
            &path,
        );
        run.expect_code(1);
        let plan = run.json();
        let uncovered = &list(&plan, "uncovered")[0];
        assert_eq!(uncovered["unreached"], json!(["alpha-2"]), "{plan:#}");
        assert_eq!(one(&plan, "deletions", &gone)["volumes"], "partial");
        assert!(run.stderr.contains(says), "{}", run.stderr);
    }
    assert_intact(&ALPHA, &gone, &["alpha-2"]);
    no_ssh_left();
}
