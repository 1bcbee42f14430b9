//! `--notify` through the binary, against a receiver on 127.0.0.1: a hold
//! is news once it has lasted `--notify-held-after`, measured across runs
//! with `--state`, and is not sent again by the next run; the webhook's
//! secret path shows in no output. No daemon answers, so every swarm is
//! unreadable and held (`swarm_unreadable`), and nothing is deleted.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support;

use support::{run_without_daemon as run, stderr, stdout, sweep_without_daemon};

const SECRET: &str = "T0001/B0002/s3cr3t-w3bh00k";

/// A receiver that answers 204 to every POST and keeps each body.
fn receiver() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks/{SECRET}", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut data = Vec::new();
            let mut buf = [0u8; 4096];
            let body = loop {
                let Ok(n) = conn.read(&mut buf) else {
                    break None;
                };
                if n == 0 {
                    break None;
                }
                data.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&data).to_string();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    if body.len() >= length {
                        assert!(
                            head.starts_with(&format!("POST /hooks/{SECRET} ")),
                            "{head}"
                        );
                        break Some(body.to_owned());
                    }
                }
            };
            if let Some(body) = body {
                kept.lock().unwrap().push(body);
            }
            let _ = conn.write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n");
        }
    });
    (url, bodies)
}

fn apps(dir: &Path) -> String {
    let file = dir.join("apps.json");
    std::fs::write(
        &file,
        r#"{"loaded": true, "applications": [{"name": "shop", "swarm": "", "releases": ["web"]}]}"#,
    )
    .unwrap();
    file.display().to_string()
}

/// Nothing of the secret in anything the binary printed.
fn masked(out: &Output) {
    for text in [stdout(out), stderr(out)] {
        assert!(!text.contains("s3cr3t"), "{text}");
    }
}

#[test]
fn a_hold_is_sent_once_it_has_lasted_and_not_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let state = dir.path().join("state.json").display().to_string();
    let (url, bodies) = receiver();
    let once = |extra: &[&str]| {
        let mut args = vec!["watch", "--once", "--app-set", &apps, "--state", &state];
        args.extend(extra);
        let out = run(&args);
        masked(&out);
        out
    };
    let with_url = ["--notify", url.as_str(), "--notify-held-after", "1s"];
    // First seen: the hold's clock starts; nothing is news yet.
    let first = once(&with_url);
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    assert!(bodies.lock().unwrap().is_empty());
    let written = std::fs::read_to_string(&state).unwrap();
    assert!(written.contains("swarm_unreadable"), "{written}");
    std::thread::sleep(Duration::from_millis(1100));
    // A second later, from `apply` with the URL in the environment: sent.
    let second = sweep_without_daemon()
        .args([
            "apply",
            "--yes",
            "--format",
            "json",
            "--app-set",
            &apps,
            "--state",
            &state,
        ])
        .args(["--notify-held-after", "1s"])
        .env("SWARM_SWEEP_NOTIFY", &url)
        .output()
        .unwrap();
    masked(&second);
    let sent = bodies.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "{}", stderr(&second));
    let event: serde_json::Value = serde_json::from_str(&sent[0]).unwrap();
    assert_eq!(event["event"], "held");
    assert_eq!(event["reason"], "swarm_unreadable");
    assert_eq!(event["swarm"], "");
    assert_eq!(event["controller"], "default");
    assert_eq!(event["report_url"], serde_json::Value::Null);
    // The next run, a new process reading the state: the same hold is
    // not news.
    once(&with_url);
    assert_eq!(bodies.lock().unwrap().len(), 1);
    // In Slack's format, to another webhook list: still the same news.
    once(&[
        "--notify",
        &url,
        "--notify-format",
        "slack",
        "--notify-held-after",
        "1s",
    ]);
    assert_eq!(bodies.lock().unwrap().len(), 1);
}

#[test]
fn a_webhook_that_cannot_be_used_is_bad_input_and_is_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let hooks = dir.path().join("hooks");
    std::fs::write(
        &hooks,
        format!("# ours\nhttps://ok.example.com/x\nftp://h/{SECRET}\n"),
    )
    .unwrap();
    let hooks = hooks.display().to_string();
    for args in [
        vec![
            "apply",
            "--yes",
            "--app-set",
            &apps,
            "--notify",
            "ftp://h/s3cr3t",
        ],
        vec![
            "watch",
            "--once",
            "--app-set",
            &apps,
            "--notify",
            "http://user:s3cr3t@h/x",
        ],
        vec![
            "watch",
            "--once",
            "--app-set",
            &apps,
            "--notify-file",
            &hooks,
        ],
    ] {
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        masked(&out);
    }
    let out = sweep_without_daemon()
        .args(["apply", "--yes", "--app-set", &apps])
        .env(
            "SWARM_SWEEP_NOTIFY",
            format!("https://ok.example.com/a not-a-url-{SECRET}"),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("SWARM_SWEEP_NOTIFY #2"),
        "{}",
        stderr(&out)
    );
    masked(&out);
}

/// A state whose memory has seen the local swarm's `swarm_unreadable`
/// hold for an hour: the next run's hold is news at once.
fn state_held_for_an_hour(file: &Path) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let at = |secs: u64| {
        humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(secs))
            .to_string()
    };
    let state = serde_json::json!({
        "format_version": 2,
        "written_at": at(now - 60),
        "departed": [],
        "notify": {"holds": [{"cause": "[\"held\",\"\",\"swarm_unreadable\"]", "since": at(now - 3600)}]},
    });
    std::fs::write(file, state.to_string()).unwrap();
}

#[test]
fn a_webhook_that_never_answers_delays_the_exit_by_a_bounded_time_and_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let state = dir.path().join("state.json");
    state_held_for_an_hour(&state);
    // Accepts and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks/{SECRET}", listener.local_addr().unwrap());
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for conn in listener.incoming().take(8) {
            open.push(conn);
        }
    });
    let started = std::time::Instant::now();
    let out = sweep_without_daemon()
        .args(["apply", "--yes", "--format", "json", "--app-set", &apps])
        .args(["--state", &state.display().to_string(), "--notify", &url])
        .env("SWARM_SWEEP_LOG", "debug")
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = stderr(&out);
    masked(&out);
    // The sweep's own verdict (an unreadable swarm), not the delivery's.
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("notification(s) not delivered within 15s; abandoned"),
        "{err}"
    );
    assert!(
        err.contains("http://127.0.0.1:"),
        "the webhook, masked: {err}"
    );
    assert!(took < Duration::from_secs(40), "{took:?}");
    drop(held);
    // Abandoned, so not remembered as sent: the hold's clock runs on, and
    // the next run, to a receiver that answers, tells it.
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(
        written["notify"]["sent"],
        serde_json::json!([]),
        "{written}"
    );
    assert_eq!(written["notify"]["holds"].as_array().map(Vec::len), Some(1));
    let (url, bodies) = receiver();
    let out = sweep_without_daemon()
        .args(["apply", "--yes", "--format", "json", "--app-set", &apps])
        .args(["--state", &state.display().to_string(), "--notify", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let sent = bodies.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "{}", stderr(&out));
    let event: serde_json::Value = serde_json::from_str(&sent[0]).unwrap();
    assert_eq!(event["reason"], "swarm_unreadable");
}

#[test]
fn a_stale_saved_plan_is_told_with_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let saved = dir.path().join("plan.json").display().to_string();
    let example = support::root().join("examples/one-swarm.json");
    let planned = run(&[
        "plan",
        "--snapshot",
        &example.display().to_string(),
        "--out",
        &saved,
        "--format",
        "json",
    ]);
    assert!(planned.status.success(), "{}", stderr(&planned));
    let (url, bodies) = receiver();
    // No daemon answers: the swarm it was planned against is gone.
    let out = run(&[
        "apply",
        "--plan",
        &saved,
        "--app-set",
        &apps,
        "--yes",
        "--notify",
        &url,
    ]);
    masked(&out);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let sent = bodies.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "{}", stderr(&out));
    let event: serde_json::Value = serde_json::from_str(&sent[0]).unwrap();
    assert_eq!(event["event"], "stale_plan");
    assert_eq!(event["swarm"], serde_json::Value::Null);
    let objects: Vec<(&str, &str)> = event["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["kind"].as_str().unwrap(), o["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        objects,
        [
            ("swarm", ""),
            ("release", "shop"),
            ("release", "shop-cache")
        ]
    );
}

/// A webhook URL quoted where none was expected (a second one after
/// `--notify`, one given as `--notify-file`) is masked in the error too.
#[test]
fn a_url_in_a_refusal_is_masked() {
    let url = format!("https://hooks.example.com/services/{SECRET}");
    for args in [
        vec!["apply", "--app-set", "x", "--notify", &url, &url],
        vec!["apply", "--app-set", "x", "--notify-file", &url],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        masked(&out);
        assert!(
            stderr(&out).contains("https://hooks.example.com/***"),
            "{}",
            stderr(&out)
        );
    }
}
