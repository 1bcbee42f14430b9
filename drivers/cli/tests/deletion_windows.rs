//! Deletion windows through the binary, against a fake daemon that lists
//! one departed release: outside the windows (`--window`, or a swarm's
//! `windows` in the registry file) nothing is deleted and the run is no
//! failure (exit 0, `--detailed-exitcode` 0 too, `watch --once` as
//! `apply`); inside them the release goes. A snapshot file carries its own
//! windows: `--window` beside it is refused.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support;

use support::{stderr, stdout, sweep};
use sweep_testkit::fake_daemon::{swarm_manager, FakeDaemon, Reply};

/// A swarm manager with the release `gone` of application `gone`, served
/// by a runtime of its own while the binary runs.
struct Swarm {
    _runtime: tokio::runtime::Runtime,
    daemon: FakeDaemon,
    endpoint: String,
}

impl Swarm {
    fn new(dir: &Path) -> Self {
        let listing = support::departed_record_listing();
        let routes = swarm_manager(
            "n1",
            "host-1",
            "C1",
            &[("n1".to_owned(), "host-1".to_owned())],
            Duration::ZERO,
        )
        .on("/configs", Reply::json(listing))
        .on("/tasks", Reply::json("[]"))
        .on_method("DELETE", "/configs", Reply::status(204, ""));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let daemon = FakeDaemon::new(routes);
        let endpoint = {
            let _entered = runtime.enter();
            daemon.listen_unix(&dir.join("docker.sock"))
        };
        Swarm {
            _runtime: runtime,
            daemon,
            endpoint,
        }
    }

    /// The release records the binary asked to remove.
    fn removed(&self) -> Vec<String> {
        self.daemon
            .requests()
            .into_iter()
            .filter(|r| r.method == "DELETE")
            .map(|r| r.bare)
            .collect()
    }

    /// A registry file naming this manager `alpha`, with `windows`.
    fn registry(&self, dir: &Path, windows: &[&str]) -> PathBuf {
        let file = dir.join("registry.toml");
        let windows: Vec<String> = windows.iter().map(|w| format!("{w:?}")).collect();
        std::fs::write(
            &file,
            format!(
                "[[swarm]]\nname = \"alpha\"\nmanager = \"{}\"\nwindows = [{}]\n",
                self.endpoint,
                windows.join(", ")
            ),
        )
        .unwrap();
        file
    }
}

/// An app set with an application on `alpha` that declares nothing there:
/// `gone` has left.
fn app_set(dir: &Path) -> PathBuf {
    let file = dir.join("apps.json");
    std::fs::write(
        &file,
        r#"{"loaded": true, "applications": [{"name": "keep", "swarm": "alpha", "releases": []}]}"#,
    )
    .unwrap();
    file
}

/// A deny window around now that ends in an hour, and one that ended a
/// year ago.
fn freezes() -> (String, String) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let at = |secs: u64| {
        humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs)).to_string()
    };
    let year = 366 * 24 * 3600;
    (
        format!("deny {}/{}", at(now - 3600), at(now + 3600)),
        format!("deny {}/{}", at(now - year - 3600), at(now - year)),
    )
}

fn run(args: &[&str], config: &Path, apps: &Path) -> Output {
    sweep()
        .args(args)
        .arg("--config")
        .arg(config)
        .arg("--app-set")
        .arg(apps)
        .env("DOCKER_CONFIG", "/nonexistent/docker-config")
        .output()
        .unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

#[test]
fn outside_a_window_plan_holds_with_exit_0_and_says_when_it_opens() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = app_set(dir.path());
    let config = swarm.registry(dir.path(), &[]);
    let (now_frozen, past) = freezes();
    let out = run(
        &[
            "plan",
            "--format",
            "json",
            "--detailed-exitcode",
            "--window",
            &now_frozen,
        ],
        &config,
        &apps,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan = json(&out);
    assert_eq!(plan["deletions"], serde_json::json!([]));
    assert_eq!(plan["holds"][0]["reason"], "outside_window");
    assert_eq!(plan["holds"][0]["swarm"], "alpha");
    assert!(plan["holds"][0]["opens_at"].is_string(), "{plan}");
    assert_eq!(plan["spared"][0]["reason"], "held");

    // Inside (the freeze is over): the plan deletes, which the detailed
    // exit status says.
    let out = run(
        &[
            "plan",
            "--format",
            "json",
            "--detailed-exitcode",
            "--window",
            &past,
        ],
        &config,
        &apps,
    );
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(json(&out)["deletions"][0]["release"], "gone");
    assert!(swarm.removed().is_empty(), "plan removes nothing");
}

#[test]
fn apply_outside_a_window_deletes_nothing_and_inside_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = app_set(dir.path());
    let (now_frozen, past) = freezes();

    // The registry file's window of the swarm holds it.
    let config = swarm.registry(dir.path(), &[&now_frozen]);
    let out = run(&["apply", "--yes", "--format", "json"], &config, &apps);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["plan"]["holds"][0]["reason"], "outside_window");
    assert_eq!(swarm.removed(), Vec::<String>::new());

    // So does `--window`, whatever the registry file says.
    let config = swarm.registry(dir.path(), &[&past]);
    let out = run(
        &[
            "apply",
            "--yes",
            "--format",
            "json",
            "--window",
            &now_frozen,
        ],
        &config,
        &apps,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(swarm.removed(), Vec::<String>::new());

    // Inside both: the release's record is removed.
    let out = run(
        &["apply", "--yes", "--format", "json", "--window", &past],
        &config,
        &apps,
    );
    assert_eq!(json(&out)["plan"]["deletions"][0]["release"], "gone");
    assert_eq!(swarm.removed(), ["/configs/rec-gone-1"], "{}", stderr(&out));
}

#[test]
fn explain_names_the_window_and_a_bad_window_is_refused_with_its_part() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = app_set(dir.path());
    let config = swarm.registry(dir.path(), &[]);
    let (now_frozen, _) = freezes();
    let out = run(
        &["explain", "alpha/gone", "--window", &now_frozen],
        &config,
        &apps,
    );
    let text = stdout(&out);
    assert!(text.contains("outside_window"), "{text}");
    assert!(text.contains(&now_frozen), "{text}");

    let read = swarm.daemon.requests().len();
    let out = run(
        &["plan", "--window", "allow Mon-Fri 02:00-05:00 Mars/Olympus"],
        &config,
        &apps,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Mars/Olympus"), "{}", stderr(&out));
    assert_eq!(
        swarm.daemon.requests().len(),
        read,
        "refused before reading"
    );

    let bad = swarm.registry(dir.path(), &["allow Mon 25:00-26:00 UTC"]);
    let out = run(&["plan"], &bad, &apps);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("windows #1") && err.contains("25:00"), "{err}");
}

#[test]
fn watch_once_outside_a_window_deletes_nothing_and_ends_as_apply_would() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = app_set(dir.path());
    let (now_frozen, _) = freezes();
    let config = swarm.registry(dir.path(), &[&now_frozen]);
    let out = run(&["watch", "--once"], &config, &apps);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("0 planned, 0 deleted"),
        "{}",
        stderr(&out)
    );
    assert_eq!(swarm.removed(), Vec::<String>::new());
}

#[test]
fn a_snapshot_file_carries_its_own_windows() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join("snapshot.json");
    std::fs::write(
        &snapshot,
        r#"{"app_set": {"loaded": true, "applications": []}}"#,
    )
    .unwrap();
    let out = sweep()
        .args(["plan", "--snapshot"])
        .arg(&snapshot)
        .args(["--window", "allow Mon-Fri 02:00-05:00 UTC"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--window"), "{}", stderr(&out));
}
