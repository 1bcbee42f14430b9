//! Running the `swarm-sweep` binary from the CLI's tests: one way to start
//! it, so that no test depends on the machine's environment.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A docker endpoint nothing listens on: a test that reaches for a daemon
/// finds none rather than the machine's.
pub const NO_DAEMON: &str = "unix:///nonexistent/swarm-sweep-test.sock";

/// The binary with none of the caller's variables that steer it (inputs,
/// log filter, docker endpoint and context, colour), and stdin closed.
pub fn sweep() -> Command {
    clean(Command::new(env!("CARGO_BIN_EXE_swarm-sweep")))
}

/// `bash -c script`, with the binary's path in `$SWEEP` and the same
/// environment as [`sweep_without_daemon`]: for what only a shell does
/// (`<(...)`, `ulimit`, the pid a process will have).
pub fn bash(script: &str) -> Command {
    let mut cmd = clean(Command::new("bash"));
    cmd.arg("-c")
        .arg(script)
        .env("SWEEP", env!("CARGO_BIN_EXE_swarm-sweep"))
        .env("DOCKER_HOST", NO_DAEMON)
        .env("DOCKER_CONFIG", "/nonexistent/docker-config");
    cmd
}

/// `cmd` with none of the caller's variables that steer the binary, and
/// stdin closed.
fn clean(mut cmd: Command) -> Command {
    for var in [
        "SWARM_SWEEP_CONFIG",
        "SWARM_SWEEP_APP_SET",
        "SWARM_SWEEP_NOTIFY",
        "SWARM_SWEEP_LOG",
        "RUST_LOG",
        "DOCKER_HOST",
        "DOCKER_CONTEXT",
        "DOCKER_TLS_VERIFY",
        "DOCKER_CERT_PATH",
        "NO_COLOR",
    ] {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// [`sweep`] pointed at [`NO_DAEMON`], with no docker config to read a
/// context from.
pub fn sweep_without_daemon() -> Command {
    let mut cmd = sweep();
    cmd.env("DOCKER_HOST", NO_DAEMON);
    cmd.env("DOCKER_CONFIG", "/nonexistent/docker-config");
    cmd
}

/// Runs [`sweep`] with `args` to the end.
pub fn run(args: &[&str]) -> Output {
    sweep().args(args).output().expect("the binary runs")
}

/// Runs [`sweep_without_daemon`] with `args` to the end.
pub fn run_without_daemon(args: &[&str]) -> Output {
    sweep_without_daemon()
        .args(args)
        .output()
        .expect("the binary runs")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A loopback address with a port free at the moment.
pub fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// GETs `path`: the status and the body.
pub fn get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").ok()?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply).ok()?;
    let (head, body) = reply.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}

/// Waits up to 30 s for `ready`, polling every 100 ms.
pub fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A child process killed and reaped when dropped, so that a failing test
/// leaves no process behind.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A daemon's configs listing holding one release record of `gone`
/// (revision 1, stamped for application `gone`) as the engine lists it:
/// what a fake daemon answers for a swarm with one departed release.
pub fn departed_record_listing() -> String {
    record_listing("gone", "rec-gone-1", 11)
}

/// A daemon's configs listing holding one release record of `release`
/// (revision 1, stamped for the application of the same name), with the
/// config id `id` at version `index`, as the engine lists it.
pub fn record_listing(release: &str, id: &str, index: u64) -> String {
    use base64::Engine as _;
    use sweep_testkit::engine_record::EngineRecord;
    let owner = format!("cd/default/{release}:release/{release}");
    let record = EngineRecord::new(release, 1).with_owner(Some(owner.as_str()));
    let labels: serde_json::Map<String, serde_json::Value> = record
        .labels()
        .into_iter()
        .map(|(k, v)| (k, serde_json::Value::String(v)))
        .collect();
    serde_json::json!([{
        "ID": id,
        "Version": {"Index": index},
        "CreatedAt": "2026-03-01T12:00:00Z",
        "UpdatedAt": "2026-03-01T12:00:00Z",
        "Spec": {
            "Name": record.name(),
            "Labels": labels,
            "Data": base64::engine::general_purpose::STANDARD.encode(record.payload()),
        },
    }])
    .to_string()
}
