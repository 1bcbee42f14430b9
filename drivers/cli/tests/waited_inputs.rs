//! Inputs the binary could wait on for ever: a FIFO with no writer, or a
//! writer that says nothing. Each ends in exit 2 within seconds, naming the
//! file; a pipe is read only where one is documented (`--app-set`, `plan
//! --snapshot`), and there `<(...)` keeps working.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support;

use support::{bash, root, stderr, sweep_without_daemon};

/// Longer than the 5 s a pipe may stay silent, with room for a loaded
/// machine: a guard against waiting for ever, not a timing assertion.
const WITHIN: Duration = Duration::from_secs(30);

fn example(name: &str) -> String {
    root().join("examples").join(name).display().to_string()
}

fn scene() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let apps = dir.path().join("apps.yaml");
    std::fs::write(
        &apps,
        "loaded: true\napplications:\n  - name: a\n    swarm: \"\"\n    releases: [web]\n",
    )
    .unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    (dir, apps, fifo)
}

/// Exit 2 in one line naming `file` and `word`, within [`WITHIN`].
fn refused_in_time(out: &Output, took: Duration, file: &str, word: &str, what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains(file), "{what}: names {file}: {err}");
    assert!(err.contains(word), "{what}: says {word}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what}: nothing planned");
    assert!(took < WITHIN, "{what}: took {took:?}");
}

/// Runs `cmd` to its end, or kills it past [`WITHIN`] (a test of code
/// that waits for ever fails instead of hanging); the output and how
/// long it took.
fn output_within(mut cmd: Command) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > WITHIN {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = started.elapsed();
    (child.wait_with_output().unwrap(), took)
}

/// Variables set for a run, by name.
type Env<'a> = [(&'a str, &'a Path)];

/// Runs the binary with `args`, `env` set, timed.
fn timed(args: &[&str], env: &Env) -> (Output, Duration) {
    let mut cmd = sweep_without_daemon();
    cmd.args(args);
    for (name, value) in env {
        cmd.env(name, value);
    }
    output_within(cmd)
}

#[test]
fn a_fifo_where_a_regular_file_is_expected_is_refused_at_once() {
    let (_dir, apps, fifo) = scene();
    let apps = apps.to_str().unwrap();
    let f = fifo.to_str().unwrap();
    let config: &Env = &[("SWARM_SWEEP_CONFIG", fifo.as_path())];
    let cases: [(&str, Vec<&str>, &Env); 6] = [
        (
            "--plan",
            vec!["apply", "--plan", f, "--app-set", apps, "--yes"],
            &[],
        ),
        (
            "--state",
            vec!["plan", "--app-set", apps, "--state", f],
            &[],
        ),
        (
            "watch --state",
            vec!["watch", "--once", "--app-set", apps, "--state", f],
            &[],
        ),
        (
            "--config",
            vec!["plan", "--config", f, "--app-set", apps],
            &[],
        ),
        (
            "SWARM_SWEEP_CONFIG",
            vec!["plan", "--app-set", apps],
            config,
        ),
        (
            "explain --snapshot",
            vec!["explain", "--snapshot", f, "a/web"],
            &[],
        ),
    ];
    for (what, args, env) in cases {
        let (out, took) = timed(&args, env);
        refused_in_time(&out, took, f, "it is a FIFO", what);
    }
}

#[test]
fn a_fifo_without_a_writer_is_refused_where_a_pipe_is_read() {
    let (_dir, _apps, fifo) = scene();
    let f = fifo.to_str().unwrap();
    let cases = [
        ("--app-set", vec!["plan", "--app-set", f]),
        ("plan --snapshot", vec!["plan", "--snapshot", f]),
        (
            "plan --snapshot --out",
            vec!["plan", "--snapshot", f, "--out", "/nonexistent/plan.json"],
        ),
        ("apply --app-set", vec!["apply", "--app-set", f, "--yes"]),
    ];
    // At once: each waits out the silence on its own.
    let runs: Vec<_> = cases
        .into_iter()
        .map(|(what, args)| {
            let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
            std::thread::spawn(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                (what, timed(&args, &[]))
            })
        })
        .collect();
    for run in runs {
        let (what, (out, took)) = run.join().unwrap();
        refused_in_time(&out, took, f, "gave no data for 5s", what);
    }
}

/// Runs `script` in bash and times it.
fn timed_bash(script: &str) -> (Output, Duration) {
    output_within(bash(script))
}

#[test]
fn a_silent_writer_behind_a_pipe_is_refused_naming_it() {
    // `sleep` holds the pipe open and writes nothing (its stderr away
    // from the test's, which would otherwise wait for it).
    let cases = [
        (
            "--app-set",
            r#"exec "$SWEEP" plan --app-set <(exec sleep 15 2>/dev/null)"#,
        ),
        (
            "plan --snapshot",
            r#"exec "$SWEEP" plan --snapshot <(exec sleep 15 2>/dev/null)"#,
        ),
    ];
    let runs: Vec<_> = cases
        .into_iter()
        .map(|(what, script)| std::thread::spawn(move || (what, timed_bash(script))))
        .collect();
    for run in runs {
        let (what, (out, took)) = run.join().unwrap();
        refused_in_time(&out, took, "/dev/fd/", "gave no data for 5s", what);
    }
}

#[test]
fn process_substitution_still_reads_the_app_set_and_the_snapshot() {
    let apps =
        r#"loaded: true\napplications:\n  - name: a\n    swarm: \"\"\n    releases: [web]\n"#;
    // The only swarm cannot be read (no daemon): exit 1, the app set read.
    let (out, _) = timed_bash(&format!(
        r#"exec "$SWEEP" plan --format json --timeout 2 --app-set <(printf '{apps}')"#
    ));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(plan["holds"].is_array(), "{plan}");
    assert!(!err.contains("/dev/fd/"), "{err}");

    let (out, _) = timed_bash(&format!(
        r#"exec "$SWEEP" plan --format json --snapshot <(cat {})"#,
        example("one-swarm.json")
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        plan["deletions"].as_array().map(Vec::len),
        Some(2),
        "{plan}"
    );

    // The same through `--out`, which reads the whole snapshot.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("plan.json");
    let (out, _) = timed_bash(&format!(
        r#"exec "$SWEEP" plan --format json --snapshot <(cat {}) --out {}"#,
        example("one-swarm.json"),
        saved.display()
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(saved.is_file());
}
