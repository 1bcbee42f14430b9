//! `swarm-sweep watch` against the real engines of swarm alpha: `--once`
//! deletes a departed release and logs its summary line; on an interval
//! with `--listen`, it serves health, readiness and the metrics of what it
//! deleted, and a SIGTERM ends it with status 0; a second signal while a
//! step is in flight ends it at once with status 130, and the next sweep
//! finishes the release.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use sweep_e2e::{
    app, assert_gone, binary, create_stack_record, endpoint, socket_path, wait_deployed, wait_for,
    Cleanup, Remains, Scenario, Stack, SwarmEntry, ALPHA, QUICK,
};

/// A departed release on alpha, deployed and recorded; the registry and
/// an app set that does not declare it.
struct Departed {
    s: Scenario,
    web: String,
    config: PathBuf,
    apps: PathBuf,
    _cleanup: Cleanup,
}

fn departed() -> Departed {
    let s = Scenario::new();
    let web = s.release("web");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    let stack = Stack::new(&web).with_volume().on("alpha-2");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    Departed {
        s,
        web,
        config,
        apps,
        _cleanup: cleanup,
    }
}

#[test]
fn once_deletes_a_departed_release_and_logs_the_summary() {
    let d = departed();
    let run =
        d.s.sweep("watch", Some(&d.config), &d.apps)
            .args(&["--once", "--prune-volumes"])
            .args(QUICK)
            .run();
    run.expect_code(0);
    assert_gone(&ALPHA, &d.web);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains(" sweep success: 1 planned, 1 deleted, 0 failed, 0 held")),
        "no summary line:\n{}",
        run.stderr
    );
    // The runner's line for the deletion, naming the release.
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("deleting release") && l.contains(&d.web)),
        "no deletion line:\n{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

pub(crate) fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

/// GETs `path`: the status and the body, or `None` when nothing answers.
pub(crate) fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: e2e\r\n\r\n").ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    let (head, body) = reply.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}

/// The running controller; killed when dropped, so a failing test never
/// leaves it deleting behind the cleanup's back.
struct Controller {
    child: Child,
    stderr: PathBuf,
}

impl Controller {
    fn start(d: &Departed, listen: SocketAddr) -> Controller {
        Controller::spawn(
            d,
            &d.config,
            &["--interval", "1s", "--listen", &listen.to_string()],
        )
    }

    /// `watch --prune-volumes` with the registry `config` and `args`.
    fn spawn(d: &Departed, config: &Path, args: &[&str]) -> Controller {
        let stderr = d.s.dir().join("watch.stderr");
        let child = Command::new(binary())
            .arg("watch")
            .arg("--config")
            .arg(config)
            .arg("--app-set")
            .arg(&d.apps)
            .args(["--controller", &d.s.controller])
            .args(args)
            .arg("--prune-volumes")
            .args(QUICK)
            .env_remove("DOCKER_HOST")
            .env_remove("DOCKER_CONTEXT")
            .env_remove("SWARM_SWEEP_LOG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).expect("the stderr file"))
            .spawn()
            .expect("start swarm-sweep watch");
        Controller { child, stderr }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn signal(&self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -TERM failed: {sent}");
    }

    /// Sends SIGTERM and waits for the exit status.
    fn terminate(mut self, limit: Duration) -> (Option<i32>, String) {
        self.signal();
        let began = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for swarm-sweep") {
                break status;
            }
            assert!(
                began.elapsed() < limit,
                "still running {limit:?} after SIGTERM:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        (status.code(), self.stderr())
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn metric_line(body: &str, line: &str) -> bool {
    body.lines().any(|l| l == line)
}

#[test]
fn on_an_interval_it_serves_its_metrics_and_stops_on_sigterm() {
    let d = departed();
    let addr = free_port();
    let controller = Controller::start(&d, addr);
    wait_for("/healthz to answer", Duration::from_secs(60), || {
        get(addr, "/healthz").is_some_and(|(status, body)| status == 200 && body == "ok\n")
    });
    let deleted = "swarm_sweep_deletions_total{reason=\"departed\"} 1";
    wait_for(
        &format!("{deleted} in /metrics"),
        Duration::from_secs(180),
        || get(addr, "/metrics").is_some_and(|(_, body)| metric_line(&body, deleted)),
    );
    assert_gone(&ALPHA, &d.web);

    // Later sweeps find nothing more to delete, and say every swarm was read.
    wait_for("a second successful sweep", Duration::from_secs(60), || {
        get(addr, "/metrics").is_some_and(|(_, body)| {
            body.lines().any(|l| {
                l.strip_prefix("swarm_sweep_sweeps_total{outcome=\"success\"} ")
                    .and_then(|n| n.parse::<u64>().ok())
                    .is_some_and(|n| n >= 2)
            })
        })
    });
    let (status, body) = get(addr, "/readyz").expect("/readyz answers");
    assert_eq!(status, 200, "{body}");
    let (status, body) = get(addr, "/metrics").expect("/metrics answers");
    assert_eq!(status, 200);
    assert!(metric_line(&body, deleted), "{body}");
    assert!(metric_line(&body, "swarm_sweep_failures_total 0"), "{body}");
    assert!(
        !metric_line(&body, "swarm_sweep_last_success_timestamp_seconds 0"),
        "{body}"
    );
    let (status, body) = get(addr, "/report").expect("/report answers");
    assert_eq!(status, 200);
    let report: serde_json::Value = serde_json::from_str(&body).expect("the report's JSON");
    assert!(report["totals"].is_object(), "{report:#}");

    let (code, stderr) = controller.terminate(Duration::from_secs(60));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("deleting release") && stderr.contains(&d.web),
        "{stderr}"
    );
    assert!(
        stderr.contains(" sweep success: 1 planned, 1 deleted"),
        "{stderr}"
    );
    // The port is closed with the process.
    assert!(get(addr, "/healthz").is_none());
}

/// A unix socket in front of a node's daemon that passes everything
/// through but a volume removal, which it holds unanswered: a step that
/// stays in flight as long as the test wants.
struct HoldingProxy {
    path: PathBuf,
    held: Arc<AtomicBool>,
}

impl HoldingProxy {
    fn start(path: PathBuf, daemon: PathBuf) -> HoldingProxy {
        let listener = UnixListener::bind(&path).expect("bind the proxy socket");
        let held = Arc::new(AtomicBool::new(false));
        let flag = held.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(upstream) = UnixStream::connect(&daemon) else {
                    continue;
                };
                let (flag, mut down_from, mut down_to) = (
                    flag.clone(),
                    upstream.try_clone().expect("clone"),
                    client.try_clone().expect("clone"),
                );
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut down_from, &mut down_to);
                });
                std::thread::spawn(move || pass_until_a_volume_removal(client, upstream, &flag));
            }
        });
        HoldingProxy { path, held }
    }

    fn endpoint(&self) -> String {
        format!("unix://{}", self.path.display())
    }

    fn held(&self) -> bool {
        self.held.load(Ordering::SeqCst)
    }
}

/// Copies requests from `client` to `upstream` until one removes a volume;
/// that one is never sent, so it is never answered.
fn pass_until_a_volume_removal(
    mut client: UnixStream,
    mut upstream: UnixStream,
    held: &AtomicBool,
) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = match client.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let text = String::from_utf8_lossy(&buf[..n]);
        if text
            .lines()
            .any(|l| l.starts_with("DELETE ") && l.contains("/volumes/"))
        {
            held.store(true, Ordering::SeqCst);
            // Keep the connection open and silent until the client goes.
            while matches!(client.read(&mut buf), Ok(n) if n > 0) {}
            return;
        }
        if upstream.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

#[test]
fn a_second_signal_stops_at_once_while_a_step_is_in_flight_and_the_next_sweep_finishes() {
    let d = departed();
    let proxy = HoldingProxy::start(d.s.dir().join("alpha-2.sock"), socket_path("alpha-2"));
    // alpha-2, which holds the volume, through the proxy.
    let config = d.s.registry(
        "held.toml",
        &[SwarmEntry::of(&ALPHA).with_nodes(vec![
            endpoint("alpha-1"),
            proxy.endpoint(),
            endpoint("alpha-3"),
        ])],
    );
    let audit = d.s.dir().join("audit.jsonl");
    let audit_arg = audit.to_string_lossy().into_owned();
    let controller = Controller::spawn(
        &d,
        &config,
        &[
            "--interval",
            "1h",
            "--timeout",
            "120s",
            "--audit-log",
            &audit_arg,
        ],
    );
    wait_for(
        "the volume removal on alpha-2 in flight",
        Duration::from_secs(120),
        || proxy.held(),
    );
    // The first signal waits for the step in flight, which is not coming
    // back: the process is still there.
    controller.signal();
    std::thread::sleep(Duration::from_secs(2));
    let mut controller = controller;
    assert!(
        controller.child.try_wait().expect("wait").is_none(),
        "exited on the first signal with a step in flight:\n{}",
        controller.stderr()
    );
    let (code, stderr) = controller.terminate(Duration::from_secs(10));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("stopping now"), "{stderr}");
    // Its service went; its records, removed last, are still there.
    let r = Remains::read(&ALPHA, &d.web);
    assert!(
        r.services.is_empty() && !r.records.is_empty(),
        "{}: {r:#?}",
        d.web
    );
    // What went before the second signal is in the audit log: the
    // service, removed; nothing of the volume step left in flight.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .expect("the audit log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("an audit line"))
        .collect();
    assert!(
        lines.iter().any(|l| l["kind"] == "service"
            && l["release"] == d.web.as_str()
            && l["outcome"] == "removed"),
        "{lines:#?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l["kind"] == "volume" && l["outcome"] == "removed"),
        "{lines:#?}"
    );

    // The next sweep finds the release again by its records and finishes.
    d.s.sweep("watch", Some(&d.config), &d.apps)
        .args(&["--once", "--prune-volumes"])
        .args(QUICK)
        .run()
        .expect_code(0);
    assert_gone(&ALPHA, &d.web);
}
