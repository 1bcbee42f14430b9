//! `swarm-sweep watch` as a process, without a Docker engine: its flags,
//! `--once` ending as `apply` would, an unreadable app set held (a read
//! stuck for good included), the HTTP endpoints (under a flood too), and
//! SIGTERM. The socket it is pointed at does not exist, so every swarm is
//! unreadable and nothing can be deleted; `/snapshot` is read from a fake
//! daemon that answers as an empty swarm.

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support;

use support::{free_port, get, stderr, sweep_without_daemon as sweep, wait_for, Killed};

fn run(args: &[&str]) -> Output {
    support::run_without_daemon(args)
}

fn apps(dir: &Path) -> String {
    let file = dir.join("apps.yaml");
    std::fs::write(
        &file,
        "loaded: true\napplications:\n  - name: shop\n    swarm: \"\"\n    releases: [web]\n",
    )
    .unwrap();
    file.display().to_string()
}

#[test]
fn flags_that_do_not_apply_or_do_not_read_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    for (args, word) in [
        (vec!["--once", "--interval", "1m"], "--interval"),
        (vec!["--once", "--listen", "127.0.0.1:9"], "--listen"),
        (vec!["--interval", "0"], "--interval"),
        (vec!["--interval", "500ms"], "--interval"),
        (vec!["--interval", "25h"], "--interval"),
        (vec!["--listen", "localhost"], "--listen"),
    ] {
        let mut all = vec!["watch", "--app-set", apps.as_str()];
        all.extend(&args);
        let out = run(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(word), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn once_ends_with_the_status_apply_would_have() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let apply = run(&["apply", "--app-set", &apps, "--format", "json"]);
    let once = run(&["watch", "--once", "--app-set", &apps]);
    assert_eq!(apply.status.code(), Some(1), "{}", stderr(&apply));
    assert_eq!(once.status.code(), apply.status.code(), "{}", stderr(&once));
    let err = stderr(&once);
    assert!(err.contains("sweep needs_attention: "), "{err}");
    assert!(once.stdout.is_empty());
}

/// A grace period with no `--state` keeps its first-seen times in the
/// process only: `watch --once` says that it can then never delete, and
/// with `--state` it says nothing of the kind.
#[test]
fn once_with_a_grace_period_and_no_state_says_it_can_never_delete() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let out = run(&[
        "watch",
        "--once",
        "--app-set",
        &apps,
        "--min-departed-for",
        "30m",
    ]);
    let err = stderr(&out);
    assert!(
        err.contains("none is ever deleted; give --state FILE"),
        "{err}"
    );
    let state = dir.path().join("state.json").display().to_string();
    let out = run(&[
        "watch",
        "--once",
        "--app-set",
        &apps,
        "--min-departed-for",
        "30m",
        "--state",
        &state,
    ]);
    assert!(!stderr(&out).contains("--state FILE"), "{}", stderr(&out));
}

/// A one-shot run, `watch --once` as `apply`: an app set that cannot be
/// read is bad input, and nothing is read from any swarm.
#[test]
fn once_with_an_unreadable_app_set_is_bad_input_as_for_apply() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("apps.yaml");
    std::fs::write(&bad, "loaded: [unclosed\n").unwrap();
    let missing = dir.path().join("missing.yaml");
    for file in [bad, missing] {
        let file = file.display().to_string();
        let out = run(&["watch", "--once", "--app-set", &file]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("the app set cannot be read"), "{err}");
        assert!(err.contains(&file), "{err}");
        assert!(err.contains("sweep app_set_unreadable: "), "{err}");
        let apply = run(&["apply", "--yes", "--app-set", &file]);
        assert_eq!(apply.status.code(), Some(2), "{}", stderr(&apply));
        assert!(stderr(&apply).contains(&file), "{}", stderr(&apply));
    }
}

#[test]
fn a_bad_state_file_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let state = dir.path().join("state.json");
    std::fs::write(&state, "{}").unwrap();
    let out = run(&[
        "watch",
        "--once",
        "--app-set",
        &apps,
        "--state",
        &state.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

fn terminate(child: &Child) {
    let pid = rustix::process::Pid::from_child(child);
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
}

#[test]
fn serves_health_readiness_and_metrics_and_exits_0_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let addr = free_port();
    let mut child = Killed(
        sweep()
            .args([
                "watch",
                "--app-set",
                &apps,
                "--interval",
                "1s",
                "--listen",
                &addr.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_for("/healthz", || {
        get(addr, "/healthz") == Some((200, "ok\n".to_owned()))
    });
    // Two sweeps at least: the loop goes on after the first.
    wait_for("two sweeps", || {
        get(addr, "/metrics").is_some_and(|(_, body)| {
            body.lines()
                .any(|l| l == "swarm_sweep_sweeps_total{outcome=\"needs_attention\"} 2")
        })
    });
    let (status, body) = get(addr, "/readyz").unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(body.lines().any(|l| l == "(local)"), "{body}");
    let (status, body) = get(addr, "/metrics").unwrap();
    assert_eq!(status, 200);
    for line in [
        "# TYPE swarm_sweep_sweeps_total counter",
        "swarm_sweep_deletions_total{reason=\"departed\"} 0",
        "swarm_sweep_failures_total 0",
        "swarm_sweep_holds{reason=\"swarm_unreadable\"} 1",
        "swarm_sweep_nodes_not_covered 0",
        "swarm_sweep_last_success_timestamp_seconds 0",
        "# TYPE swarm_sweep_sweep_duration_seconds histogram",
        "# TYPE swarm_sweep_gather_duration_seconds histogram",
    ] {
        assert!(body.lines().any(|l| l == line), "{line} not in {body}");
    }
    let (status, body) = get(addr, "/plan").unwrap();
    assert_eq!(status, 200);
    let plan: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(plan["holds"].is_array(), "{body}");
    assert_eq!(get(addr, "/report").unwrap().0, 200);
    assert_eq!(get(addr, "/").unwrap().0, 404);

    terminate(&child.0);
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(
        err.contains("stopping: finishing the steps in flight"),
        "{err}"
    );
    assert!(
        err.lines().any(|l| l.contains(" sweep needs_attention: ")),
        "{err}"
    );
}

#[test]
fn a_port_in_use_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = run(&["watch", "--app-set", &apps, "--listen", &addr]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--listen"), "{err}");
}

#[test]
fn an_app_set_that_never_opens_does_not_keep_sigterm_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("apps.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut child = Killed(
        sweep()
            .args(["watch", "--interval", "1s", "--app-set"])
            .arg(&fifo)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Long enough for the first sweep to be waiting on the read.
    std::thread::sleep(Duration::from_millis(500));
    terminate(&child.0);
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(err.contains(" sweep interrupted: "), "{err}");
}

/// The stderr of a child that has ended.
fn stderr_of(child: &mut Child) -> String {
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    err
}

/// The value of the metric line `series`, if served.
fn metric(addr: SocketAddr, series: &str) -> Option<u64> {
    let (_, body) = get(addr, "/metrics")?;
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn a_read_stuck_on_a_silent_fifo_is_abandoned_and_sweeps_resume_once_the_app_set_reads() {
    let dir = tempfile::tempdir().unwrap();
    // A name no terminal or reply may show raw.
    let fifo = dir.path().join("apps\u{1b}[2J.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // Opened for reading and writing, which never waits for the other
    // end: the FIFO has a writer that never writes and never closes, so
    // every read of it waits for good.
    let writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let addr = free_port();
    let began = Instant::now();
    let mut child = Killed(
        sweep()
            .args(["watch", "--interval", "1s", "--listen", &addr.to_string()])
            .arg("--app-set")
            .arg(&fifo)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let held = "swarm_sweep_sweeps_total{outcome=\"app_set_unreadable\"}";
    // Not ready while unread for more than 3 intervals, naming the file.
    let mut not_ready = String::new();
    wait_for("/readyz to name the app set", || {
        get(addr, "/readyz").is_some_and(|(status, body)| {
            not_ready = body;
            status == 503 && not_ready.contains("the app set has not been read for")
        })
    });
    assert!(began.elapsed() > Duration::from_secs(3), "{not_ready}");
    let shown = fifo.display().to_string().replace('\u{1b}', "\\u{1b}");
    assert!(not_ready.lines().any(|l| l == shown), "{not_ready}");
    assert!(!not_ready.contains('\u{1b}'), "{not_ready}");
    let held_before = metric(addr, held).unwrap();
    assert!(held_before >= 3, "{held_before}");
    let gathered = "swarm_sweep_gather_duration_seconds_count";
    assert_eq!(metric(addr, gathered), Some(0));

    // A regular file renamed over the FIFO, whose writer stays silent: the
    // next sweep reads it and gathers.
    let next = dir.path().join("apps.yaml.new");
    std::fs::write(
        &next,
        "loaded: true\napplications:\n  - name: shop\n    swarm: \"\"\n    releases: [web]\n",
    )
    .unwrap();
    std::fs::rename(&next, &fifo).unwrap();
    let restored = Instant::now();
    wait_for("a sweep that gathers", || {
        metric(addr, gathered).is_some_and(|n| n >= 1)
    });
    let resumed = restored.elapsed();
    assert!(
        resumed < Duration::from_secs(4),
        "resumed after {resumed:?}"
    );
    // Ready again as far as the app set goes: now only the swarm, which
    // has no daemon here, is named.
    let (status, body) = get(addr, "/readyz").unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(!body.contains("the app set"), "{body}");
    assert!(body.lines().any(|l| l == "(local)"), "{body}");

    terminate(&child.0);
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            restored.elapsed() < Duration::from_secs(30),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = stderr_of(&mut child.0);
    assert_eq!(status.code(), Some(0), "{err}");
    // Abandoned, or refused by the reader itself: either way held.
    assert!(err.contains("the app set cannot be read"), "{err}");
    assert!(err.contains(" sweep needs_attention: "), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
    drop(writer);
}

/// One slow client from 127.0.0.2 until `stop` is set: a byte of a request
/// head a second, and when the server closes, a new connection a moment
/// later. Every wait is bounded, and it ends by itself at `until`.
async fn slow_client(addr: SocketAddr, until: Instant, stop: Arc<AtomicBool>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const HEAD: &[u8] =
        b"GET /healthz HTTP/1.1\r\nHost: flood\r\nX-Pad: aaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let step = Duration::from_secs(1);
    let go_on = || Instant::now() < until && !stop.load(Ordering::SeqCst);
    while go_on() {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        if let Ok(Ok(mut stream)) = tokio::time::timeout(step, socket.connect(addr)).await {
            for byte in HEAD {
                if !go_on() || stream.write_all(&[*byte]).await.is_err() {
                    break;
                }
                let mut reply = [0u8; 256];
                // A second passes, or the server closes or answers.
                if tokio::time::timeout(step, stream.read(&mut reply))
                    .await
                    .is_ok()
                {
                    break;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_every_probe_through_a_flood_of_slow_clients_from_another_address() {
    const CLIENTS: usize = 100;
    const PROBES: usize = 20;
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let addr = free_port();
    let _child = Killed(
        sweep()
            .args([
                "watch",
                "--app-set",
                &apps,
                "--interval",
                "1m",
                "--listen",
                &addr.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let probe = move || {
        sweep()
            .args(["healthcheck", "--timeout", "3s", "--url"])
            .arg(format!("http://{addr}/healthz"))
            .output()
            .unwrap()
    };
    let first = tokio::task::spawn_blocking(move || {
        wait_for("/healthz", || probe().status.success());
    });
    first.await.unwrap();

    // More slow clients than there are slots, from 127.0.0.2; they stop
    // by themselves, after the probes at the latest.
    let until = Instant::now() + Duration::from_secs(20);
    let stop = Arc::new(AtomicBool::new(false));
    let flood: Vec<_> = (0..CLIENTS)
        .map(|_| tokio::spawn(slow_client(addr, until, stop.clone())))
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // The image's probe, from 127.0.0.1, every 250 ms: each must pass. A
    // flood from one address holds at most its share of the slots, so no
    // probe is refused for want of one, and the 3 s limit covers a loaded
    // machine's scheduling; a single failure would restart the controller
    // under Swarm, so none is allowed.
    let probes = tokio::task::spawn_blocking(move || {
        (0..PROBES)
            .map(|_| {
                let began = Instant::now();
                let out = probe();
                let took = began.elapsed();
                std::thread::sleep(Duration::from_millis(250));
                (out.status.code(), took, stderr(&out))
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    assert!(
        Instant::now() < until,
        "the flood ended before the probes did"
    );
    stop.store(true, Ordering::SeqCst);
    let failed: Vec<_> = probes
        .iter()
        .filter(|(code, ..)| *code != Some(0))
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {PROBES} probes failed: {failed:?}",
        failed.len()
    );
    for client in flood {
        tokio::time::timeout(Duration::from_secs(25), client)
            .await
            .expect("a flood client ends by itself")
            .unwrap();
    }
}

#[test]
fn completions_and_the_man_page_know_watch_and_its_flags() {
    let man = String::from_utf8_lossy(&run(&["man"]).stdout).into_owned();
    assert!(
        man.contains(".SH \"SWARM-SWEEP WATCH\""),
        "no watch section"
    );
    for flag in ["interval", "listen", "once", "state"] {
        assert!(man.contains(&format!("\\-\\-{flag}")), "man: no --{flag}");
    }
    let bash = String::from_utf8_lossy(&run(&["completions", "bash"]).stdout).into_owned();
    for flag in ["watch", "--interval", "--listen", "--once"] {
        assert!(bash.contains(flag), "bash completions: no {flag}");
    }
}

/// `/snapshot` serves what the last gather read, from a fake daemon
/// that answers as an empty swarm: JSON that `plan --snapshot` reads,
/// with the watch's own app set, to be planned against another one.
#[test]
fn serves_the_last_gathered_snapshot_for_a_preview_elsewhere() {
    use sweep_testkit::fake_daemon::{swarm_manager, FakeDaemon};
    let dir = tempfile::tempdir().unwrap();
    let apps = apps(dir.path());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let daemon = FakeDaemon::new(swarm_manager(
        "n1",
        "manager",
        "cluster-1",
        &[("n1".to_owned(), "manager".to_owned())],
        Duration::ZERO,
    ));
    let endpoint = {
        let _entered = runtime.enter();
        daemon.listen_unix(&dir.path().join("docker.sock"))
    };
    let addr = free_port();
    let mut child = Killed(
        support::sweep()
            .args([
                "watch",
                "--app-set",
                &apps,
                "--interval",
                "1h",
                "--listen",
                &addr.to_string(),
            ])
            .env("DOCKER_HOST", &endpoint)
            .env("DOCKER_CONFIG", "/nonexistent/docker-config")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_for("/healthz", || get(addr, "/healthz").is_some());
    let mut served = None;
    wait_for("/snapshot", || {
        served = get(addr, "/snapshot").filter(|(status, _)| *status == 200);
        served.is_some()
    });
    let (_, body) = served.unwrap();
    let snapshot: serde_json::Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(
        snapshot["app_set"]["applications"][0]["name"], "shop",
        "{body}"
    );
    assert_eq!(snapshot["swarms"][0]["cluster_id"], "cluster-1", "{body}");
    assert!(!daemon.requests().is_empty());
    // Planned elsewhere against a change that drops `shop`.
    let file = dir.path().join("served.json");
    std::fs::write(&file, &body).unwrap();
    let change = dir.path().join("change.yaml");
    std::fs::write(
        &change,
        "loaded: true\napplications:\n  - name: other\n    swarm: \"\"\n    releases: []\n",
    )
    .unwrap();
    let out = run(&[
        "plan",
        "--snapshot",
        file.to_str().unwrap(),
        "--app-set",
        change.to_str().unwrap(),
        "--diff-against",
        &apps,
        "--format",
        "json",
    ]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let diff: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a diff");
    assert!(diff["added"].is_array(), "{diff}");
    terminate(&child.0);
    let _ = child.0.wait();
}

/// A fake manager of the local swarm (`DOCKER_HOST`) that lists one
/// release, `gone`, whose application has left: its record is all the
/// swarm holds. Served by a runtime of its own while the binary runs.
fn swarm_with_a_departed_release(
    dir: &Path,
) -> (
    tokio::runtime::Runtime,
    sweep_testkit::fake_daemon::FakeDaemon,
    String,
) {
    use sweep_testkit::fake_daemon::{swarm_manager, FakeDaemon, Reply};
    let listing = support::departed_record_listing();
    let routes = swarm_manager(
        "n1",
        "manager",
        "cluster-1",
        &[("n1".to_owned(), "manager".to_owned())],
        Duration::ZERO,
    )
    .on("/configs", Reply::json(listing))
    .on("/tasks", Reply::json("[]"));
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
    (runtime, daemon, endpoint)
}

fn rfc3339(secs: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(secs)).to_string()
}

/// `/snapshot` is the snapshot the watch's own plan was made from: with
/// its time and the grace state's first-seen times. Planned elsewhere
/// (`plan --snapshot`), it holds for a closed deletion window and waits
/// out a grace period exactly as the watch's `/plan` does, rather than
/// holding for want of a time.
#[test]
fn the_served_snapshot_plans_elsewhere_as_the_watch_plans_it() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let dir = tempfile::tempdir().unwrap();
    let (_runtime, daemon, endpoint) = swarm_with_a_departed_release(dir.path());
    let apps = dir.path().join("apps.yaml");
    std::fs::write(
        &apps,
        "loaded: true\napplications:\n  - name: keep\n    swarm: \"\"\n    releases: []\n",
    )
    .unwrap();
    let apps = apps.display().to_string();
    // `gone` was first seen departed two minutes ago, by a run a moment
    // ago: eight minutes of its grace period are left.
    let state = dir.path().join("state.json");
    std::fs::write(
        &state,
        serde_json::json!({
            "format_version": 1,
            "written_at": rfc3339(now - 30),
            "departed": [{"swarm": "", "release": "gone", "since": rfc3339(now - 120)}],
        })
        .to_string(),
    )
    .unwrap();
    let state = state.display().to_string();
    let freeze = format!("deny {}/{}", rfc3339(now - 3600), rfc3339(now + 3600));
    for (flags, waits) in [
        (vec!["--window", freeze.as_str()], "outside_window"),
        (
            vec!["--min-departed-for", "10m", "--state", state.as_str()],
            "grace_period",
        ),
    ] {
        let addr = free_port();
        let mut args = vec!["watch", "--app-set", &apps, "--interval", "1h"];
        let listen = addr.to_string();
        args.extend(["--listen", &listen]);
        args.extend(&flags);
        let mut child = Killed(
            support::sweep()
                .args(&args)
                .env("DOCKER_HOST", &endpoint)
                .env("DOCKER_CONFIG", "/nonexistent/docker-config")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        // One sweep an hour: the plan and the snapshot are of the same one.
        let (mut served, mut planned) = (None, None);
        wait_for("/snapshot and /plan", || {
            served = get(addr, "/snapshot").filter(|(status, _)| *status == 200);
            planned = get(addr, "/plan").filter(|(status, _)| *status == 200);
            served.is_some() && planned.is_some()
        });
        terminate(&child.0);
        let _ = child.0.wait();
        let (_, body) = served.unwrap();
        let snapshot: serde_json::Value = serde_json::from_str(&body).expect("JSON");
        let at = snapshot["now"]
            .as_str()
            .unwrap_or_else(|| panic!("{waits}: no now: {body}"));
        let at = humantime::parse_rfc3339(at).unwrap();
        assert!(
            at >= std::time::UNIX_EPOCH + Duration::from_secs(now),
            "{body}"
        );
        let release = &snapshot["swarms"][0]["releases"][0];
        assert_eq!(release["name"], "gone", "{body}");
        if waits == "grace_period" {
            assert_eq!(release["departed_since"], rfc3339(now - 120), "{body}");
        }

        let file = dir.path().join(format!("served-{waits}.json"));
        std::fs::write(&file, &body).unwrap();
        let out = run(&[
            "plan",
            "--snapshot",
            file.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "{waits}: {}", stderr(&out));
        let elsewhere: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a plan");
        let (_, own) = planned.unwrap();
        let own: serde_json::Value = serde_json::from_str(&own).expect("a plan");
        for field in [
            "deletions",
            "holds",
            "spared",
            "departed",
            "dropped",
            "resource_holds",
        ] {
            assert_eq!(elsewhere[field], own[field], "{waits}: {field}");
        }
        assert_eq!(own["deletions"], serde_json::json!([]), "{own}");
        let spared = &own["spared"][0];
        match waits {
            "outside_window" => {
                assert_eq!(own["holds"][0]["reason"], "outside_window", "{own}");
                assert!(own["holds"][0]["opens_at"].is_string(), "{own}");
                assert_eq!(spared["reason"], "held", "{own}");
            }
            _ => {
                assert!(own["holds"].as_array().unwrap().is_empty(), "{own}");
                assert_eq!(spared["reason"], "grace_period", "{own}");
                let left = spared["time_left"].as_u64().expect("time_left");
                assert!((1..=480).contains(&left), "{own}");
            }
        }
    }
    assert!(!daemon.requests().is_empty());
}
