//! `swarm-sweep watch` against the real engines of swarm alpha: `--once`
//! deletes a departed release and logs its summary line; on an interval
//! with `--listen`, it serves health, readiness and the metrics of what it
//! deleted, and a SIGTERM ends it with status 0.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use sweep_e2e::{
    app, assert_gone, binary, create_record, wait_deployed, wait_for, Cleanup, Scenario, Stack,
    SwarmEntry, ALPHA, QUICK,
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
    create_record(&ALPHA, &web, 1, Some(&s.stamp("shop", &web)));
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

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

/// GETs `path`: the status and the body, or `None` when nothing answers.
fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
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
        let stderr = d.s.dir().join("watch.stderr");
        let child = Command::new(binary())
            .arg("watch")
            .arg("--config")
            .arg(&d.config)
            .arg("--app-set")
            .arg(&d.apps)
            .args(["--controller", &d.s.controller])
            .args(["--interval", "1s", "--listen", &listen.to_string()])
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

    /// Sends SIGTERM and waits for the exit status.
    fn terminate(mut self, limit: Duration) -> (Option<i32>, String) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill -TERM failed: {sent}");
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
