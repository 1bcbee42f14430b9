//! Input that must not hurt: endless files, out-of-range flags, unknown
//! contexts, output that cannot be written, names with control characters,
//! and the exit-status table every command follows.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(name: &str) -> String {
    root()
        .join("examples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The binary with no docker environment of the caller's leaking in.
fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_swarm-sweep"));
    cmd.args(args)
        .env_remove("DOCKER_HOST")
        .env_remove("DOCKER_CONTEXT")
        .env_remove("DOCKER_TLS_VERIFY")
        .env_remove("DOCKER_CERT_PATH")
        .env_remove("SWARM_SWEEP_LOG")
        .stdin(Stdio::null());
    cmd
}

fn run(args: &[&str]) -> Output {
    command(args).output().expect("the swarm-sweep binary runs")
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("swarm-sweep-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn endless_inputs_are_refused_with_exit_2_instead_of_read_forever() {
    let dir = scratch("endless");
    let apps = dir.join("apps.yaml");
    std::fs::write(
        &apps,
        "loaded: true\napplications:\n  - name: a\n    swarm: \"\"\n    releases: []\n",
    )
    .unwrap();
    let apps = apps.to_string_lossy().into_owned();
    let cases: [(&str, Vec<&str>); 3] = [
        ("--snapshot", vec!["plan", "--snapshot", "/dev/zero"]),
        ("--app-set", vec!["plan", "--app-set", "/dev/zero"]),
        (
            "--config",
            vec!["plan", "--config", "/dev/zero", "--app-set", &apps],
        ),
    ];
    for (flag, args) in cases {
        let started = Instant::now();
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains("/dev/zero"), "{flag}: names the file: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{flag}: {err}");
        // Not a timing assertion on the product: a guard so that a
        // regression fails this test instead of eating the machine.
        assert!(started.elapsed() < Duration::from_secs(60), "{flag}");
    }
}

#[test]
fn timeout_flag_has_the_bounds_of_timeout_secs() {
    for bad in ["0", "3601", "-1", "ten"] {
        let flag = format!("--timeout={bad}");
        let out = run(&["plan", "--app-set", "/nonexistent/apps.yaml", &flag]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "--timeout {bad}: {err}");
        assert!(err.contains("--timeout"), "--timeout {bad}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn unknown_context_is_refused_with_exit_2_naming_it() {
    let dir = scratch("context");
    let apps = dir.join("apps.json");
    std::fs::write(
        &apps,
        r#"{"loaded": true, "applications": [{"name": "a", "swarm": "", "releases": []}]}"#,
    )
    .unwrap();
    let config_dir = dir.join("docker-config");
    std::fs::create_dir_all(&config_dir).unwrap();
    let apps = apps.to_string_lossy().into_owned();

    let out = command(&["apply", "--app-set", &apps, "--context", "nosuch"])
        .env("DOCKER_CONFIG", &config_dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nosuch"), "{err}");
    assert!(out.stdout.is_empty());

    // The same context named by the environment or by the docker config:
    // never a silent fall-back to the default socket.
    let out = command(&["plan", "--app-set", &apps])
        .env("DOCKER_CONFIG", &config_dir)
        .env("DOCKER_CONTEXT", "nosuch-env")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nosuch-env"), "{err}");

    std::fs::write(
        config_dir.join("config.json"),
        r#"{"currentContext": "nosuch-current"}"#,
    )
    .unwrap();
    let out = command(&["plan", "--app-set", &apps])
        .env("DOCKER_CONFIG", &config_dir)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nosuch-current"), "{err}");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    // Nobody reads: every write sees a closed pipe, as after `| head -1`.
    drop(reader);
    for format in ["json", "text"] {
        let out = command(&[
            "plan",
            "--snapshot",
            &example("one-swarm.json"),
            "--format",
            format,
        ])
        .stdout(writer.try_clone().unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
        let err = stderr(&out);
        assert_ne!(out.status.code(), Some(101), "panicked: {err}");
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.is_empty(), "a closed pipe is not an error: {err}");
    }
}

#[test]
fn an_unwritable_stdout_is_exit_1_with_one_error_line() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = command(&["plan", "--snapshot", &example("one-swarm.json")])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("stdout"), "{err}");
}

#[test]
fn plan_and_snapshot_exit_1_when_a_swarm_cannot_be_read() {
    let dir = scratch("unreadable");
    let apps = dir.join("apps.json");
    std::fs::write(
        &apps,
        r#"{"loaded": true, "applications": [{"name": "a", "swarm": "", "releases": []}]}"#,
    )
    .unwrap();
    let apps = apps.to_string_lossy().into_owned();
    for command_name in ["snapshot", "plan"] {
        let out = command(&[command_name, "--app-set", &apps, "--timeout", "2"])
            // Nothing listens here: the only swarm is unreadable.
            .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{command_name}: {err}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert!(!doc.is_null(), "{command_name} printed its document");
    }

    let snapshot = dir.join("unreadable.json");
    std::fs::write(
        &snapshot,
        r#"{"app_set": {"loaded": true, "applications": [{"name": "a", "swarm": "", "releases": []}]},
            "swarms": [{"swarm": "", "error": "connection refused"}]}"#,
    )
    .unwrap();
    let out = run(&["plan", "--snapshot", &snapshot.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn error_lines_escape_control_characters() {
    let dir = scratch("escape");
    // A file name with a line break and an escape sequence: the error that
    // names it stays one line and moves no cursor.
    let file = dir.join("bad\nname\u{1b}[2K.json");
    std::fs::write(&file, "{").unwrap();
    let out = run(&["plan", "--snapshot", &file.to_string_lossy()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(err.contains("\\u{a}") && err.contains("\\u{1b}"), "{err}");
}

#[test]
fn hostile_release_names_cannot_fake_plan_lines() {
    let dir = scratch("names");
    let snapshot = dir.join("hostile.json");
    let doc = serde_json::json!({
        "app_set": {"loaded": true, "applications": [{"name": "live", "swarm": "", "releases": []}]},
        "swarms": [{"swarm": "", "cluster_id": "c1", "releases": [
            {"name": "g\nto delete (0):\n  nothing", "owner": "cd/default/gone:release/g\nto delete (0):\n  nothing"},
            {"name": "x\u{1b}[1A\u{1b}[2K", "owner": null}
        ]}]
    });
    std::fs::write(&snapshot, doc.to_string()).unwrap();
    let text = run(&[
        "plan",
        "--snapshot",
        &snapshot.to_string_lossy(),
        "--format",
        "text",
    ]);
    let stdout = String::from_utf8(text.stdout).unwrap();
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("to delete") || l.trim() == "nothing")
            .count(),
        0,
        "a name added a line: {stdout}"
    );
    assert!(
        stdout.contains("g\\u{a}to delete (0):\\u{a}  nothing"),
        "{stdout}"
    );

    // JSON stays exact.
    let json = run(&["plan", "--snapshot", &snapshot.to_string_lossy()]);
    let plan: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        plan["deletions"][0]["release"],
        "g\nto delete (0):\n  nothing"
    );
}
