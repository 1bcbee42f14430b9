//! `--min-departed-for` and `--state FILE`, without a swarm: the state file
//! is read before anything is gathered, refused when it cannot be trusted,
//! and written whole or not at all.

use crate::support;
use std::path::{Path, PathBuf};

use support::{root, run_without_daemon, stderr};

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("swarm-sweep-grace-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn apps(dir: &Path) -> String {
    let file = dir.join("apps.json");
    std::fs::write(
        &file,
        r#"{"loaded": true, "applications": [{"name": "a", "swarm": "", "releases": ["web"]}]}"#,
    )
    .unwrap();
    file.display().to_string()
}

/// A scratch directory with an app set declaring `web`, and where the
/// state file goes.
fn scene(tag: &str) -> (PathBuf, String, PathBuf) {
    let dir = scratch(tag);
    let apps = apps(&dir);
    let state = dir.join("state.json");
    (dir, apps, state)
}

fn read_state(file: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).expect("the state is JSON")
}

/// Seconds since the Unix epoch, by the clock the binary reads.
fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `secs` as the state file writes a time (RFC 3339 UTC).
fn rfc3339(secs: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A state file's text: written at `written_at`, with `entries` (release,
/// first seen departed at) of the local swarm.
fn state_text(written_at: u64, entries: &[(&str, u64)]) -> String {
    let departed: Vec<serde_json::Value> = entries
        .iter()
        .map(|(release, since)| {
            serde_json::json!({"swarm": "", "release": release, "since": rfc3339(*since)})
        })
        .collect();
    serde_json::json!({
        "format_version": 1,
        "written_at": rfc3339(written_at),
        "departed": departed,
    })
    .to_string()
}

/// The `written_at` of a state file, in seconds since the epoch.
fn written_at(file: &Path) -> u64 {
    let state = read_state(file);
    let text = state["written_at"].as_str().expect("written_at");
    humantime::parse_rfc3339(text)
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Only `keep` is left in `dir`, beside the app set: no temporary file
/// (the state's lock file stays, and is in `keep`).
fn only_files(dir: &Path, keep: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = keep.iter().map(|s| (*s).to_owned()).collect();
    want.push("apps.json".to_owned());
    want.sort();
    assert_eq!(names, want);
}

/// `command` on the app set `apps` with the state file `state` and
/// `extra`, against no daemon (the only swarm cannot be read).
fn with_state(command: &[&str], apps: &str, state: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = command.to_vec();
    args.extend(["--app-set", apps, "--timeout", "2", "--state"]);
    args.push(state.to_str().unwrap());
    args.extend(extra);
    run_without_daemon(&args)
}

#[test]
fn a_missing_state_file_starts_the_clock_and_is_written_whole() {
    let (dir, apps, state) = scene("missing");
    let out = with_state(&["plan"], &apps, &state, &["--min-departed-for", "10m"]);
    // The only swarm cannot be read: exit 1, and the state still written,
    // dated by the run.
    let before = now_secs();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let written = read_state(&state);
    assert_eq!(written["format_version"], 2);
    assert_eq!(written["departed"], serde_json::json!([]));
    let at = written_at(&state);
    assert!(at <= now_secs() && at + 60 >= before, "{written}");
    only_files(&dir, &["state.json", "state.json.lock"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_entry_is_dropped_when_the_release_is_no_longer_departed() {
    let (dir, apps, state) = scene("cleared");
    // `web` is declared by the app set, and nothing of an unreadable swarm
    // is departed: neither entry survives, so each clock starts over.
    let now = now_secs();
    std::fs::write(
        &state,
        state_text(now - 60, &[("web", now - 3600), ("gone", now - 3600)]),
    )
    .unwrap();
    let out = with_state(&["plan"], &apps, &state, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(read_state(&state)["departed"], serde_json::json!([]));
    only_files(&dir, &["state.json", "state.json.lock"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corrupt_state_file_is_bad_input_naming_it_and_is_left_alone() {
    let (dir, apps, state) = scene("corrupt");
    for (text, word) in [
        ("{\"format_version\": 1, \"departed\": [", "state.json"),
        ("", "state.json"),
        (r#"{"format_version": 3, "departed": []}"#, "format_version"),
        (r#"{"departed": []}"#, "format_version"),
        (r#"{"format_version": 1, "departed": []}"#, "written_at"),
        (
            r#"{"format_version": 1, "written_at": "2026-12-01", "departed": []}"#,
            "written_at",
        ),
        (
            r#"{"format_version": 1, "written_at": "2026-12-01T08:00:00Z", "departed": [{"swarm": "", "release": "web", "since": "soon"}]}"#,
            "departed[0].since",
        ),
    ] {
        std::fs::write(&state, text).unwrap();
        for command in ["plan", "apply"] {
            let out = run_without_daemon(
                &[
                    command,
                    "--app-set",
                    &apps,
                    "--state",
                    state.to_str().unwrap(),
                    "--yes",
                ]
                .into_iter()
                .filter(|a| command == "apply" || *a != "--yes")
                .collect::<Vec<_>>(),
            );
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{command} {text:?}: {err}");
            assert!(err.contains(state.to_str().unwrap()), "{err}");
            assert!(err.contains(word), "{word}: {err}");
            assert!(out.stdout.is_empty(), "{command}: nothing planned");
            assert_eq!(std::fs::read_to_string(&state).unwrap(), text);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `args` are bad input (exit 2) naming `word`.
fn refused(args: &[&str], word: &str) {
    let out = run_without_daemon(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(word), "{args:?}: {err}");
}

/// No state file `s.json` was written by a refused command; `dir` goes.
fn nothing_written(dir: &Path) {
    assert!(!dir.join("s.json").exists() && !Path::new("s.json").exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn state_and_grace_flags_refuse_what_they_cannot_use() {
    let dir = scratch("flags");
    let apps = apps(&dir);
    let snapshot = root().join("examples/grace-period.json");
    let snapshot = snapshot.to_str().unwrap();
    for (args, word) in [
        (
            vec!["plan", "--snapshot", snapshot, "--state", "s.json"],
            "--state",
        ),
        (
            vec!["plan", "--snapshot", snapshot, "--min-departed-for", "1m"],
            "--min-departed-for",
        ),
        (
            vec!["plan", "--app-set", &apps, "--min-departed-for", "0"],
            "--min-departed-for",
        ),
        (
            vec!["plan", "--app-set", &apps, "--min-departed-for", "soon"],
            "--min-departed-for",
        ),
    ] {
        refused(&args, word);
    }
    nothing_written(&dir);
}

#[test]
fn a_snapshot_with_a_grace_period_spares_what_has_not_waited_long_enough() {
    let snapshot = root().join("examples/grace-period.json");
    let out = run_without_daemon(&["plan", "--snapshot", snapshot.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["deletions"][0]["release"], "blog");
    assert_eq!(plan["deletions"].as_array().unwrap().len(), 1);
    let waiting: Vec<(String, u64)> = plan["spared"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["reason"] == "grace_period")
        .map(|s| {
            (
                s["release"].as_str().unwrap().to_owned(),
                s["time_left"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        waiting,
        [("docs".to_owned(), 360), ("wiki".to_owned(), 600)]
    );
    let departed: Vec<&str> = plan["departed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["release"].as_str().unwrap())
        .collect();
    assert_eq!(departed, ["blog", "docs", "wiki"]);
}

#[test]
fn a_state_file_without_written_at_is_bad_input_naming_it() {
    let (dir, apps, state) = scene("unwritten");
    let text = r#"{"format_version": 1, "departed": [{"swarm": "", "release": "gone", "since": "2026-01-01T00:00:00Z"}]}"#;
    std::fs::write(&state, text).unwrap();
    for args in [
        vec!["plan"],
        vec!["apply", "--yes"],
        vec!["watch", "--once"],
    ] {
        let out = with_state(&args, &apps, &state, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(state.to_str().unwrap()), "{err}");
        assert!(err.contains("written_at"), "{err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing planned");
        // Never read as an empty state, nor rewritten as one.
        assert_eq!(std::fs::read_to_string(&state).unwrap(), text);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The lines of `err` that warn about `file`'s state.
fn not_current_lines(err: &str, file: &str) -> Vec<String> {
    err.lines()
        .filter(|l| l.contains("state is not current"))
        .inspect(|l| assert!(l.starts_with("swarm-sweep: ") && l.contains(file), "{l}"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn an_old_state_file_restarts_every_clock_with_a_warning_naming_it() {
    let dir = scratch("old");
    let apps = apps(&dir);
    // A control character in the name comes out escaped, on one line.
    let state = dir.join("old\u{1b}state.json");
    let shown = state.to_str().unwrap().replace('\u{1b}', "\\u{1b}");
    let now = now_secs();
    // Left behind three weeks ago, `gone` then departed for a day: were
    // it used, `gone` would count as departed for weeks.
    let old = state_text(now - 21 * 86_400, &[("gone", now - 22 * 86_400)]);
    for command in [
        vec!["plan"],
        vec!["apply", "--yes"],
        vec!["watch", "--once"],
    ] {
        std::fs::write(&state, &old).unwrap();
        let out = with_state(
            &command,
            &apps,
            &state,
            &["--min-departed-for", "10m", "--state-max-age", "1h"],
        );
        let err = stderr(&out);
        // The only swarm cannot be read (exit 1): the run goes on.
        assert_eq!(out.status.code(), Some(1), "{command:?}: {err}");
        let warned = not_current_lines(&err, &shown);
        assert_eq!(warned.len(), 1, "{command:?}: {err}");
        assert!(
            warned[0].contains("more than the maximum age of 1h")
                && warned[0].contains("every clock starts now"),
            "{}",
            warned[0]
        );
        assert!(!err.contains('\u{1b}'), "{err:?}");
        // Rewritten from this run: no entry carried over, dated now.
        assert_eq!(read_state(&state)["departed"], serde_json::json!([]));
        assert!(written_at(&state) >= now, "{command:?}");
        let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let plan = if plan.get("plan").is_some() {
            &plan["plan"]
        } else {
            &plan
        };
        if let Some(deletions) = plan.get("deletions") {
            assert_eq!(deletions, &serde_json::json!([]), "{command:?}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_state_written_after_now_is_not_used_even_without_a_maximum_age() {
    let (dir, apps, state) = scene("future");
    let now = now_secs();
    std::fs::write(&state, state_text(now + 86_400, &[("gone", now - 86_400)])).unwrap();
    let out = with_state(&["plan"], &apps, &state, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let warned = not_current_lines(&err, state.to_str().unwrap());
    assert_eq!(warned.len(), 1, "{err}");
    assert!(warned[0].contains("the clock went back"), "{}", warned[0]);
    assert!(written_at(&state) < now + 3600);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_current_state_file_is_used_without_a_word() {
    let (dir, apps, state) = scene("current");
    let now = now_secs();
    for (written, max_age) in [(now - 60, Some("1h")), (now - 30 * 86_400, None)] {
        std::fs::write(&state, state_text(written, &[])).unwrap();
        let extra = match max_age {
            Some(max_age) => vec!["--state-max-age", max_age],
            None => Vec::new(),
        };
        let out = with_state(&["apply", "--yes"], &apps, &state, &extra);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(!err.contains("not current"), "{max_age:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn state_max_age_needs_a_state_file_and_a_duration() {
    let dir = scratch("max-age-flags");
    let apps = apps(&dir);
    for command in ["plan", "apply", "watch"] {
        for (extra, word) in [
            (vec!["--state-max-age", "1h"], "--state"),
            (
                vec!["--state", "s.json", "--state-max-age", "0"],
                "--state-max-age",
            ),
            (
                vec!["--state", "s.json", "--state-max-age", "soon"],
                "--state-max-age",
            ),
            (
                vec!["--state", "s.json", "--state-max-age", "500ms"],
                "--state-max-age",
            ),
        ] {
            let mut args = vec![command, "--app-set", &apps];
            args.extend(extra);
            refused(&args, word);
        }
    }
    nothing_written(&dir);
}

/// A state file anyone may write to, or another user owns, could date a
/// departure back: bad input naming it, nothing planned, the file left
/// as it was.
#[test]
fn a_state_file_others_could_rewrite_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, apps, state) = scene("writable");
    let now = now_secs();
    let text = state_text(now - 60, &[("gone", now - 3600)]);
    std::fs::write(&state, &text).unwrap();
    let refused_with = |word: &str| {
        let out = with_state(&["plan"], &apps, &state, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(state.to_str().unwrap()), "{err}");
        assert!(err.contains(word), "{err}");
        assert!(out.stdout.is_empty(), "nothing planned");
        assert_eq!(std::fs::read_to_string(&state).unwrap(), text);
    };
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o666)).unwrap();
    refused_with("chmod o-w");
    // Its group may write (a umask of 002): the owner's choice.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o664)).unwrap();
    let out = with_state(&["plan"], &apps, &state, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    if rustix::process::geteuid().is_root() {
        std::fs::write(&state, &text).unwrap();
        std::os::unix::fs::chown(&state, Some(65534), None).unwrap();
        refused_with("owned by uid 65534");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two runs sharing one state file take turns: while another holds it,
/// a run is bad input naming the file and reads and writes nothing; once
/// it is free, the run goes. A link planted as the lock file is refused,
/// never followed.
#[test]
fn a_state_file_another_run_holds_is_refused_until_it_is_free() {
    use rustix::fs::{flock, FlockOperation};
    let (dir, apps, state) = scene("held");
    let now = now_secs();
    let text = state_text(now - 60, &[("gone", now - 3600)]);
    std::fs::write(&state, &text).unwrap();
    let lock = dir.join("state.json.lock");
    let held = std::fs::File::create(&lock).unwrap();
    flock(&held, FlockOperation::NonBlockingLockExclusive).unwrap();
    for command in [&["plan"][..], &["apply", "--yes"], &["watch", "--once"]] {
        let out = with_state(command, &apps, &state, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {err}");
        assert!(
            err.contains(state.to_str().unwrap()) && err.contains("in use by another"),
            "{command:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{command:?}: nothing planned");
        assert_eq!(std::fs::read_to_string(&state).unwrap(), text);
    }
    drop(held);
    let out = with_state(&["plan"], &apps, &state, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_ne!(std::fs::read_to_string(&state).unwrap(), text, "written");

    // A link at the lock's name is not followed.
    std::fs::remove_file(&lock).unwrap();
    let elsewhere = dir.join("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, &lock).unwrap();
    let out = with_state(&["plan"], &apps, &state, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot take the state file's lock"), "{err}");
    assert!(!elsewhere.exists(), "nothing made through the link");
    std::fs::remove_dir_all(&dir).unwrap();
}
