//! `--min-departed-for` and `--state FILE`, without a swarm: the state file
//! is read before anything is gathered, refused when it cannot be trusted,
//! and written whole or not at all.

use std::path::{Path, PathBuf};
mod support;

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

fn read_state(file: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).expect("the state is JSON")
}

/// Only `keep` is left in `dir`, beside the app set: no temporary file.
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

#[test]
fn a_missing_state_file_starts_the_clock_and_is_written_whole() {
    let dir = scratch("missing");
    let apps = apps(&dir);
    let state = dir.join("state.json");
    let out = run_without_daemon(&[
        "plan",
        "--app-set",
        &apps,
        "--timeout",
        "2",
        "--min-departed-for",
        "10m",
        "--state",
        state.to_str().unwrap(),
    ]);
    // The only swarm cannot be read: exit 1, and the state still written.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        read_state(&state),
        serde_json::json!({"format_version": 1, "departed": []})
    );
    only_files(&dir, &["state.json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_entry_is_dropped_when_the_release_is_no_longer_departed() {
    let dir = scratch("cleared");
    let apps = apps(&dir);
    let state = dir.join("state.json");
    // `web` is declared by the app set, and nothing of an unreadable swarm
    // is departed: neither entry survives, so each clock starts over.
    std::fs::write(
        &state,
        r#"{"format_version": 1, "departed": [
            {"swarm": "", "release": "web", "since": "2026-01-01T00:00:00Z"},
            {"swarm": "", "release": "gone", "since": "2026-01-01T00:00:00Z"}]}"#,
    )
    .unwrap();
    let out = run_without_daemon(&[
        "plan",
        "--app-set",
        &apps,
        "--timeout",
        "2",
        "--state",
        state.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(read_state(&state)["departed"], serde_json::json!([]));
    only_files(&dir, &["state.json"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corrupt_state_file_is_bad_input_naming_it_and_is_left_alone() {
    let dir = scratch("corrupt");
    let apps = apps(&dir);
    let state = dir.join("state.json");
    for (text, word) in [
        ("{\"format_version\": 1, \"departed\": [", "state.json"),
        ("", "state.json"),
        (r#"{"format_version": 2, "departed": []}"#, "format_version"),
        (r#"{"departed": []}"#, "format_version"),
        (
            r#"{"format_version": 1, "departed": [{"swarm": "", "release": "web", "since": "soon"}]}"#,
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
        let out = run_without_daemon(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(word), "{args:?}: {err}");
    }
    // Nothing was written for a refused command.
    assert!(!dir.join("s.json").exists() && !Path::new("s.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
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
