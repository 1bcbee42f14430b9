//! The files the binary writes (`plan --out`, `--state`, `apply --trace`): never through a
//! link planted at a temporary name or at the target, never over a device
//! or a directory (refused with exit 2 before any swarm is read), and a
//! state that cannot be written leaves no old entry that no longer holds.

use std::os::unix::fs::{symlink, FileTypeExt};
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support;

use support::{bash, root, stderr, stdout, sweep};
use sweep_testkit::fake_daemon::{FakeDaemon, Routes};

fn example(name: &str) -> String {
    root().join("examples").join(name).display().to_string()
}

/// A scratch directory holding an app set that declares `web`.
fn scene() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let apps = dir.path().join("apps.json");
    std::fs::write(
        &apps,
        r#"{"loaded": true, "applications": [{"name": "a", "swarm": "", "releases": ["web"]}]}"#,
    )
    .unwrap();
    (dir, apps)
}

/// A docker endpoint that records whether anything connected to it: the
/// proof that nothing was read from a swarm. A fake daemon, served by a
/// runtime of its own while the binary runs.
struct Tripwire {
    _runtime: tokio::runtime::Runtime,
    daemon: FakeDaemon,
    endpoint: String,
}

impl Tripwire {
    fn new(dir: &Path) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let daemon = FakeDaemon::new(Routes::new());
        let endpoint = {
            let _entered = runtime.enter();
            daemon.listen_unix(&dir.join("docker.sock"))
        };
        Tripwire {
            _runtime: runtime,
            daemon,
            endpoint,
        }
    }

    fn untouched(&self) -> bool {
        self.daemon.connections().accepted() == 0 && self.daemon.requests().is_empty()
    }
}

/// `args` against the tripwire's endpoint.
fn run_at(wire: &Tripwire, args: &[&str]) -> Output {
    sweep()
        .args(args)
        .env("DOCKER_HOST", &wire.endpoint)
        .env("DOCKER_CONFIG", "/nonexistent/docker-config")
        .output()
        .unwrap()
}

/// Refused with exit 2 in one line naming `file` and `word`, nothing
/// printed and nothing read from a swarm.
fn refused(out: &Output, wire: &Tripwire, file: &Path, word: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains(word), "{word}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty(), "nothing planned: {}", stdout(out));
    assert!(wire.untouched(), "a swarm was read");
}

/// A character device of its own in `dir` (as root), else `/dev/null`,
/// which only root could replace: a test that fails never costs the
/// machine its `/dev/null`.
fn a_device(dir: &Path) -> PathBuf {
    let own = dir.join("null");
    let made = std::process::Command::new("mknod")
        .arg(&own)
        .args(["c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if made {
        own
    } else {
        PathBuf::from("/dev/null")
    }
}

#[test]
fn a_device_or_a_directory_as_the_place_to_write_is_refused_before_any_swarm_is_read() {
    let (dir, apps) = scene();
    let wire = Tripwire::new(dir.path());
    let device = a_device(dir.path());
    let directory = dir.path().join("plans");
    std::fs::create_dir(&directory).unwrap();
    std::fs::write(directory.join("keep"), "kept").unwrap();
    let apps = apps.to_str().unwrap();
    for (target, word) in [(&device, "character device"), (&directory, "directory")] {
        let target_s = target.to_str().unwrap();
        for args in [
            vec!["plan", "--app-set", apps, "--out", target_s],
            vec![
                "plan",
                "--snapshot",
                &example("one-swarm.json"),
                "--out",
                target_s,
            ],
            vec!["plan", "--app-set", apps, "--state", target_s],
            vec!["apply", "--app-set", apps, "--state", target_s, "--yes"],
            vec!["apply", "--app-set", apps, "--trace", target_s, "--yes"],
            vec!["watch", "--once", "--app-set", apps, "--state", target_s],
        ] {
            let out = run_at(&wire, &args);
            refused(&out, &wire, target, word);
        }
    }
    let meta = std::fs::symlink_metadata(&device).unwrap();
    assert!(meta.file_type().is_char_device(), "the device is still one");
    assert_eq!(
        std::fs::read_to_string(directory.join("keep")).unwrap(),
        "kept"
    );
}

#[test]
fn a_symbolic_link_as_the_place_to_write_is_refused_and_left_as_it_is() {
    let (dir, apps) = scene();
    let wire = Tripwire::new(dir.path());
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.path().join("plan.json");
    symlink(&victim, &link).unwrap();
    let apps = apps.to_str().unwrap();
    let link_s = link.to_str().unwrap();
    for args in [
        vec![
            "plan",
            "--snapshot",
            &example("one-swarm.json"),
            "--out",
            link_s,
        ],
        vec!["plan", "--app-set", apps, "--out", link_s],
        vec!["plan", "--app-set", apps, "--state", link_s],
        vec!["watch", "--once", "--app-set", apps, "--state", link_s],
        vec!["apply", "--app-set", apps, "--trace", link_s, "--yes"],
    ] {
        let out = run_at(&wire, &args);
        refused(&out, &wire, &link, "symbolic link");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_link(&link).unwrap(), victim);
}

/// Runs `command` through bash after planting, at the temporary name the
/// binary used to write `target` through (`<target>.tmp-<its pid>`), a
/// link to `victim`.
fn with_link_at_the_old_temporary_name(target: &Path, victim: &Path, command: &str) -> Output {
    bash(&format!(
        r#"ln -s "$VICTIM" "$TARGET.tmp-$$" && exec {command}"#
    ))
    .env("VICTIM", victim)
    .env("TARGET", target)
    .output()
    .unwrap()
}

#[test]
fn a_link_planted_at_the_old_temporary_name_is_never_written_through() {
    let (dir, apps) = scene();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();

    let plan = dir.path().join("plan.json");
    let out = with_link_at_the_old_temporary_name(
        &plan,
        &victim,
        &format!(
            r#""$SWEEP" plan --snapshot {} --out "$TARGET" --format json"#,
            example("one-swarm.json")
        ),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(&plan).unwrap().is_file());
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(saved["format_version"], 2);

    let state = dir.path().join("state.json");
    let out = with_link_at_the_old_temporary_name(
        &state,
        &victim,
        &format!(
            r#""$SWEEP" plan --app-set {} --timeout 2 --state "$TARGET""#,
            apps.display()
        ),
    );
    // The only swarm cannot be read: exit 1, and the state still written.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(&state).unwrap().is_file());
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(written["departed"], serde_json::json!([]));

    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

/// Seconds since the Unix epoch.
fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A current state file's text holding `releases` of the local swarm,
/// first seen an hour ago.
fn state_text(releases: &[&str]) -> String {
    let at = |secs: u64| {
        humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
        )
        .to_string()
    };
    let now = now_secs();
    let departed: Vec<serde_json::Value> = releases
        .iter()
        .map(|r| serde_json::json!({"swarm": "", "release": r, "since": at(now - 3600)}))
        .collect();
    serde_json::json!({"format_version": 1, "written_at": at(now - 60), "departed": departed})
        .to_string()
}

/// `plan --state` where no file can be written (a file size limit of 0,
/// which holds for root too, as a read-only directory would not): the
/// new state, empty since the only swarm cannot be read, fails to write.
fn plan_unable_to_write(apps: &Path, state: &Path) -> Output {
    bash(r#"trap '' XFSZ; ulimit -f 0; exec "$SWEEP" plan --app-set "$APPS" --timeout 2 --state "$STATE""#)
        .env("APPS", apps)
        .env("STATE", state)
        .output()
        .unwrap()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_unwritable_state_keeps_the_old_file_when_the_new_state_drops_none_of_it() {
    let (dir, apps) = scene();
    let state = dir.path().join("state.json");
    let old = state_text(&[]);
    std::fs::write(&state, &old).unwrap();
    let out = plan_unable_to_write(&apps, &state);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{}: cannot write", state.display())),
        "{err}"
    );
    assert!(err.contains("the old state is kept"), "{err}");
    assert_eq!(std::fs::read_to_string(&state).unwrap(), old);
    // Beside it, the lock it was held by for the run (never removed).
    assert_eq!(
        names(dir.path()),
        ["apps.json", "state.json", "state.json.lock"]
    );
}

#[test]
fn an_unwritable_state_moves_an_old_file_aside_when_the_new_state_drops_an_entry() {
    let (dir, apps) = scene();
    let state = dir.path().join("state.json");
    // `web` is declared again: an entry that must not outlive this run.
    let old = state_text(&["web"]);
    std::fs::write(&state, &old).unwrap();
    let out = plan_unable_to_write(&apps, &state);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{}: cannot write", state.display())),
        "{err}"
    );
    let files = names(dir.path());
    assert_eq!(files.len(), 3, "{files:?}");
    assert_eq!(files[1], "state.json.lock", "{files:?}");
    let aside = dir.path().join(&files[2]);
    assert!(files[2].starts_with("state.json.stale-"), "{files:?}");
    assert!(
        err.contains(&format!("moved aside to {}", aside.display())),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&aside).unwrap(), old);
    assert!(!state.exists());
}
