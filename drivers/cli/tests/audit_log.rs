//! `--audit-log` and `swarm-sweep audit` through the binary, against a fake
//! daemon: a swarm whose manager lists one departed release, which every
//! sweep deletes again (the fake's listing never changes), so every sweep
//! has a line to write. The file's rules (no link, no second name, no
//! device or FIFO, nobody else's file) are checked before any swarm is
//! read; a log renamed between sweeps gets a new file; a log that cannot
//! be written never stops a sweep, and is said.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support;

use support::{stderr, stdout, sweep};
use sweep_core::audit::{parse_line, AuditEntry, Trigger};
use sweep_core::saved::bytes_digest;
use sweep_core::sweep::{ObjectKind, ObjectOutcome, ObjectReason};
use sweep_testkit::fake_daemon::{swarm_manager, FakeDaemon, Reply};

/// A fake manager of cluster `c1` whose configs listing holds the record of
/// release `blog` of the departed application `blog`, served while the
/// test runs; its removal answers `removal`.
struct Swarm {
    _runtime: tokio::runtime::Runtime,
    daemon: FakeDaemon,
    endpoint: String,
}

impl Swarm {
    fn new(dir: &Path) -> Self {
        Swarm::removing(dir, Reply::status(204, ""))
    }

    fn removing(dir: &Path, removal: Reply) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let members = [("n1".to_owned(), "host-1".to_owned())];
        let routes = swarm_manager("n1", "host-1", "c1", &members, std::time::Duration::ZERO)
            .on(
                "/configs",
                Reply::json(support::record_listing("blog", "rec1", 101)),
            )
            .on("/tasks", Reply::json("[]"))
            .on_method("DELETE", "/configs", removal);
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

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = sweep();
        cmd.args(args)
            .env("DOCKER_HOST", &self.endpoint)
            .env("DOCKER_CONFIG", "/nonexistent/docker-config");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn untouched(&self) -> bool {
        self.daemon.connections().accepted() == 0 && self.daemon.requests().is_empty()
    }
}

fn apps(dir: &Path) -> PathBuf {
    let file = dir.join("apps.json");
    std::fs::write(
        &file,
        r#"{"loaded": true, "applications": [{"name": "shop", "swarm": "", "releases": ["web"]}]}"#,
    )
    .unwrap();
    file
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every line of `log`, each read as an entry.
fn lines(log: &Path) -> Vec<AuditEntry> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| parse_line(l.as_bytes()).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// `apply --yes` of the fake swarm, appending to `log`.
fn apply(swarm: &Swarm, apps: &Path, log: &Path, more: &[&str]) -> Output {
    let mut args = vec![
        "apply",
        "--yes",
        "--format",
        "json",
        "--app-set",
        text(apps),
        "--audit-log",
        text(log),
    ];
    args.extend(more);
    swarm.run(&args)
}

/// The one line of a sweep of the fake swarm, as it must read.
fn assert_blog_record(line: &AuditEntry, trigger: Trigger, outcome: ObjectOutcome) {
    assert_eq!(line.trigger, trigger, "{line:?}");
    assert_eq!(line.outcome, outcome, "{line:?}");
    assert_eq!(line.kind, ObjectKind::Record, "{line:?}");
    assert_eq!((line.swarm.as_str(), line.release.as_str()), ("", "blog"));
    assert_eq!(line.application, "blog");
    assert_eq!(line.controller, "default");
    assert_eq!(line.reason, ObjectReason::Departed);
    assert_eq!(line.cluster_id.as_deref(), Some("c1"));
    // A release's records are one object, named as the release.
    assert_eq!((line.id.as_deref(), line.name.as_str()), (None, "blog"));
    assert!(line.snapshot_digest.starts_with("sha256:"), "{line:?}");
    assert_eq!(
        line.saved_plan_digest.is_some(),
        trigger == Trigger::ApplyPlan
    );
}

#[test]
fn each_sweep_appends_a_line_per_object_to_a_file_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = apps(dir.path());
    let log = dir.path().join("audit.jsonl");
    let out = apply(&swarm, &apps, &log, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let meta = std::fs::metadata(&log).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let first = lines(&log);
    assert_eq!(first.len(), 1, "{first:?}");
    assert_blog_record(&first[0], Trigger::Apply, ObjectOutcome::Removed);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["report"]["objects"].as_array().map(Vec::len),
        Some(first.len())
    );
    // A second run appends: the first line stays as it was.
    let before = std::fs::read_to_string(&log).unwrap();
    let out = apply(&swarm, &apps, &log, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = std::fs::read_to_string(&log).unwrap();
    assert!(after.starts_with(&before), "{after}");
    assert_eq!(lines(&log).len(), 2);
    // An existing file keeps the mode its owner gave it.
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = apply(&swarm, &apps, &log, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::metadata(&log).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(lines(&log).len(), 3);
}

#[test]
fn a_failed_removal_is_logged_failed_with_its_error_never_removed() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::removing(
        dir.path(),
        Reply::status(500, r#"{"message":"disk\nfull"}"#),
    );
    let apps = apps(dir.path());
    let log = dir.path().join("audit.jsonl");
    let out = apply(&swarm, &apps, &log, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let written = lines(&log);
    assert_eq!(written.len(), 1, "{written:?}");
    assert_blog_record(&written[0], Trigger::Apply, ObjectOutcome::Failed);
    assert!(
        written[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("disk")),
        "{written:?}"
    );
}

#[test]
fn a_saved_plan_is_named_by_the_digest_of_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = apps(dir.path());
    let plan = dir.path().join("plan.json");
    let out = swarm.run(&[
        "plan",
        "--format",
        "json",
        "--app-set",
        text(&apps),
        "--out",
        text(&plan),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = dir.path().join("audit.jsonl");
    let out = apply(&swarm, &apps, &log, &["--plan", text(&plan)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = lines(&log);
    assert_eq!(written.len(), 1, "{written:?}");
    assert_blog_record(&written[0], Trigger::ApplyPlan, ObjectOutcome::Removed);
    assert_eq!(
        written[0].saved_plan_digest.as_deref(),
        Some(bytes_digest(&std::fs::read(&plan).unwrap()).as_str())
    );
}

/// A file of another user's, where this test can make one (as root).
fn owned_by_another(dir: &Path) -> Option<PathBuf> {
    let file = dir.join("theirs.jsonl");
    std::fs::write(&file, "").unwrap();
    std::os::unix::fs::chown(&file, Some(65534), Some(65534)).ok()?;
    Some(file)
}

#[test]
fn a_log_that_breaks_a_rule_is_refused_before_any_swarm_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = apps(dir.path());
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.path().join("link.jsonl");
    symlink(&victim, &link).unwrap();
    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(&victim, &hard).unwrap();
    let fifo = dir.path().join("fifo.jsonl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let directory = dir.path().join("logs");
    std::fs::create_dir(&directory).unwrap();
    let shared = dir.path().join("shared.jsonl");
    std::fs::write(&shared, "").unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o664)).unwrap();
    let mut refused = vec![
        (shared.clone(), "mode is 0664"),
        (link.clone(), "symbolic link"),
        (hard.clone(), "2 links"),
        (fifo.clone(), "FIFO"),
        (directory.clone(), "directory"),
        (PathBuf::from("/dev/full"), "character device"),
        (dir.path().join("missing/audit.jsonl"), "cannot open"),
    ];
    if let Some(theirs) = owned_by_another(dir.path()) {
        refused.push((theirs, "owned by uid 65534"));
    }
    for (file, word) in &refused {
        for args in [
            vec!["apply", "--yes", "--app-set", text(&apps)],
            vec!["watch", "--once", "--app-set", text(&apps)],
        ] {
            let mut args = args.clone();
            args.extend(["--audit-log", text(file)]);
            let out = swarm.run(&args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(text(file)), "{err}");
            assert!(err.contains(word), "{word}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(out.stdout.is_empty(), "{}", stdout(&out));
            assert!(swarm.untouched(), "a swarm was read for {args:?}");
        }
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_link(&link).unwrap(), victim);
    assert_eq!(std::fs::read_dir(&directory).unwrap().count(), 0);
}

#[test]
fn a_log_that_cannot_be_written_after_the_sweep_is_said_and_apply_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    // The removal answers late, so that the log can be swapped for a
    // directory while the sweep runs.
    let swarm = Swarm::removing(
        dir.path(),
        Reply::status(204, "").after(Duration::from_secs(2)),
    );
    let apps = apps(dir.path());
    let log = dir.path().join("audit.jsonl");
    let child = swarm
        .command(&[
            "apply",
            "--yes",
            "--format",
            "json",
            "--app-set",
            text(&apps),
            "--audit-log",
            text(&log),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the log to be created", || log.exists());
    std::fs::remove_file(&log).unwrap();
    std::fs::create_dir(&log).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(text(&log)) && err.contains("not in the audit log"),
        "{err}"
    );
    // The sweep finished, and its report was printed all the same.
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["report"]["releases"][0]["outcome"], "deleted");
}

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// The body of `GET /metrics`, when it answers.
fn metrics(addr: SocketAddr) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n").ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    Some(reply.split_once("\r\n\r\n")?.1.to_owned())
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ends the child on every path out of the test.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn watch_follows_a_rotated_log_and_counts_a_write_that_failed() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = apps(dir.path());
    let log = dir.path().join("audit.jsonl");
    let addr = free_port();
    let _child = Killed(
        swarm
            .command(&[
                "watch",
                "--interval",
                "1s",
                "--listen",
                &addr.to_string(),
                "--app-set",
                text(&apps),
                "--audit-log",
                text(&log),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let has_lines = |file: &Path| {
        std::fs::read_to_string(file).is_ok_and(|t| t.ends_with('\n') && !t.is_empty())
    };
    wait_for("a first line", || has_lines(&log));
    // Rotated as logrotate does: renamed, and nothing else.
    let rotated = dir.path().join("audit.jsonl.1");
    std::fs::rename(&log, &rotated).unwrap();
    wait_for("a new file", || has_lines(&log));
    assert_eq!(
        std::fs::metadata(&log).unwrap().permissions().mode() & 0o777,
        0o600
    );
    for file in [&rotated, &log] {
        for line in lines(file) {
            assert_blog_record(&line, Trigger::Watch, ObjectOutcome::Removed);
        }
    }
    // A log that cannot be written: logged, counted, and sweeping goes on.
    std::fs::remove_file(&log).unwrap();
    std::fs::create_dir(&log).unwrap();
    let failures = |n: u64| {
        move |body: &String| {
            body.lines()
                .any(|l| l == format!("swarm_sweep_audit_write_failures_total {n}"))
        }
    };
    wait_for("a failure counted", || {
        metrics(addr).is_some_and(|b| failures(1)(&b) || failures(2)(&b))
    });
    std::fs::remove_dir(&log).unwrap();
    wait_for("the file again", || has_lines(&log));
    assert!(std::fs::metadata(&log).unwrap().uid() == rustix::process::geteuid().as_raw());
}

#[test]
fn audit_prints_the_lines_kept_by_time_and_release_and_reports_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let swarm = Swarm::new(dir.path());
    let apps = apps(dir.path());
    let log = dir.path().join("audit.jsonl");
    for _ in 0..2 {
        let out = apply(&swarm, &apps, &log, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let written = std::fs::read_to_string(&log).unwrap();
    let audit = |args: &[&str]| {
        let mut all = vec!["audit", text(&log)];
        all.extend(args);
        sweep().args(&all).output().unwrap()
    };
    // JSON lines: each kept line as it reads.
    let out = audit(&["--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown: Vec<AuditEntry> = stdout(&out)
        .lines()
        .map(|l| parse_line(l.as_bytes()).unwrap())
        .collect();
    assert_eq!(shown, lines(&log));
    for (args, kept) in [
        (vec!["--release", "/blog"], 2),
        (vec!["--release", "(local)/blog"], 2),
        (vec!["--release", "other/blog"], 0),
        (vec!["--release", "/web"], 0),
        (vec!["--since", "1h"], 2),
        (vec!["--since", "2000-01-01T00:00:00Z"], 2),
        (vec!["--since", "2999-01-01T00:00:00Z"], 0),
    ] {
        let mut all = vec!["--format", "json"];
        all.extend(&args);
        let out = audit(&all);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out).lines().count(), kept, "{args:?}");
    }
    let out = audit(&["--format", "text"]);
    let shown = stdout(&out);
    assert_eq!(shown.lines().count(), 2, "{shown}");
    assert!(
        shown
            .lines()
            .all(|l| l.contains(" removed record (local)/blog ")
                && l.contains("by apply of controller default")),
        "{shown}"
    );
    // Lines that do not read are reported with their number, and the
    // rest is still shown.
    let mut damaged = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    damaged.write_all(b"not json\n").unwrap();
    damaged.write_all(&vec![b'x'; 70 * 1024]).unwrap();
    damaged.write_all(b"\n").unwrap();
    damaged
        .write_all(written.lines().next().unwrap().as_bytes())
        .unwrap();
    drop(damaged);
    let out = audit(&["--format", "json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(stdout(&out).lines().count(), 3, "{err}");
    assert!(err.contains(": line 3: not an audit entry"), "{err}");
    assert!(err.contains(": line 4: longer than the limit"), "{err}");
    // Only a regular file is read, and never waited on.
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for file in [fifo.as_path(), Path::new("/dev/zero"), dir.path()] {
        let out = sweep().args(["audit", text(file)]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(text(file)), "{}", stderr(&out));
    }
}
