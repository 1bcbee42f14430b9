//! The operator's record on the real engines of swarm alpha: `watch` with
//! `--audit-log` and `--notify` deletes a departed release, and every object
//! the engines held of it (service, network, secret, config, the volume on
//! its node, the records) is in the audit log once and in one `deleted`
//! event once, as a local webhook receiver got it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sweep_e2e::{
    app, assert_gone, binary, create_stack_record, wait_deployed, wait_for, Cleanup, Remains,
    Scenario, Stack, SwarmEntry, ALPHA, QUICK,
};

use crate::watch::{free_port, get};

/// A webhook receiver on loopback: keeps every request body it is sent
/// and answers `204`.
struct Receiver {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
        let addr = listener.local_addr().expect("its address");
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let kept = kept.clone();
                std::thread::spawn(move || serve(stream, &kept));
            }
        });
        Receiver { addr, bodies }
    }

    fn url(&self) -> String {
        format!("http://{}/hooks/sweep", self.addr)
    }

    /// The events received so far, as JSON.
    fn events(&self) -> Vec<Value> {
        self.bodies
            .lock()
            .expect("the bodies")
            .iter()
            .map(|b| serde_json::from_str(b).expect("an event is JSON"))
            .collect()
    }
}

/// Answers every request of one connection (a client may keep it open).
fn serve(stream: TcpStream, bodies: &Mutex<Vec<String>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut writer = stream;
    loop {
        let mut headers = BTreeMap::new();
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        assert!(line.starts_with("POST /hooks/sweep "), "{line}");
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
            }
        }
        let mut body = Vec::new();
        if let Some(n) = headers.get("content-length") {
            body.resize(n.parse().expect("a length"), 0);
            if reader.read_exact(&mut body).is_err() {
                return;
            }
        } else if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let size = usize::from_str_radix(line.trim(), 16).expect("a chunk size");
                let mut chunk = vec![0; size + 2];
                if reader.read_exact(&mut chunk).is_err() {
                    return;
                }
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        }
        bodies
            .lock()
            .expect("the bodies")
            .push(String::from_utf8(body).expect("a UTF-8 body"));
        if writer
            .write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
            .is_err()
        {
            return;
        }
    }
}

/// One object as the audit log and the events name it.
type Named = (String, String, Option<String>);

fn named(o: &Value) -> Named {
    (
        o["kind"].as_str().expect("a kind").to_owned(),
        o["name"].as_str().expect("a name").to_owned(),
        o["node"].as_str().map(str::to_owned),
    )
}

/// What the engines hold of the release, as the audit log would name it.
fn held(r: &Remains, release: &str) -> Vec<Named> {
    let mut out: Vec<Named> = Vec::new();
    for (kind, names) in [
        ("service", &r.services),
        ("network", &r.networks),
        ("secret", &r.secrets),
        ("config", &r.configs),
    ] {
        out.extend(names.iter().map(|n| (kind.to_owned(), n.clone(), None)));
    }
    for (node, volumes) in &r.volumes {
        out.extend(
            volumes
                .iter()
                .map(|v| ("volume".to_owned(), v.clone(), Some(node.clone()))),
        );
    }
    if !r.records.is_empty() {
        out.push(("record".to_owned(), release.to_owned(), None));
    }
    out.sort();
    out
}

fn audit_lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
        .collect()
}

struct Watch(Child);

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn every_deleted_object_is_in_the_audit_log_and_in_an_event_once() {
    let s = Scenario::new();
    let web = s.release("web");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&web);
    let stack = Stack::new(&web)
        .with_volume()
        .with_network_secret_config()
        .on("alpha-2");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &web)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);
    let before = Remains::read(&ALPHA, &web);
    let expected = held(&before, &web);
    // The stack in full: each kind, the volume on its node, the records.
    for kind in ["service", "network", "secret", "config", "volume", "record"] {
        assert!(
            expected.iter().any(|(k, _, _)| k == kind),
            "no {kind} deployed: {before:?}"
        );
    }
    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[])]));
    let log = s.dir().join("audit.jsonl");
    let receiver = Receiver::start();
    let listen = free_port();
    let stderr = s.dir().join("watch.stderr");
    let child = Command::new(binary())
        .arg("watch")
        .arg("--config")
        .arg(&config)
        .arg("--app-set")
        .arg(&apps)
        .args(["--controller", &s.controller])
        .args(["--interval", "2s", "--listen", &listen.to_string()])
        .arg("--prune-volumes")
        .arg("--audit-log")
        .arg(&log)
        .args(["--notify", &receiver.url()])
        .args(QUICK)
        .env_remove("DOCKER_HOST")
        .env_remove("DOCKER_CONTEXT")
        .env_remove("SWARM_SWEEP_LOG")
        .env_remove("SWARM_SWEEP_NOTIFY")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("the stderr file"))
        .spawn()
        .expect("start swarm-sweep watch");
    let mut watch = Watch(child);
    let ours = |o: &Value| o["release"].as_str() == Some(web.as_str());
    let told = |events: &[Value]| -> Vec<Named> {
        let mut out: Vec<Named> = events
            .iter()
            .filter(|e| e["event"] == "deleted")
            .flat_map(|e| e["objects"].as_array().cloned().unwrap_or_default())
            .filter(ours)
            .map(|o| named(&o))
            .collect();
        out.sort();
        out
    };
    wait_for(
        "the records in the audit log and in an event",
        Duration::from_secs(180),
        || {
            let record = |o: &Value| ours(o) && o["kind"] == "record";
            audit_lines(&log).iter().any(record)
                && told(&receiver.events())
                    .iter()
                    .any(|(k, _, _)| k == "record")
        },
    );
    // A later sweep, which finds nothing to delete, adds nothing.
    let (_, metrics) = get(listen, "/metrics").expect("/metrics answers");
    let sweeps = |body: &str| {
        body.lines()
            .filter_map(|l| l.strip_prefix("swarm_sweep_sweeps_total{outcome=\"success\"} "))
            .filter_map(|n| n.parse::<u64>().ok())
            .sum::<u64>()
    };
    let after = sweeps(&metrics) + 1;
    wait_for("a later sweep", Duration::from_secs(60), || {
        get(listen, "/metrics").is_some_and(|(_, b)| sweeps(&b) > after)
    });
    let sent = Command::new("kill")
        .args(["-TERM", &watch.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let began = Instant::now();
    let status = loop {
        if let Some(status) = watch.0.try_wait().expect("wait for watch") {
            break status;
        }
        assert!(began.elapsed() < Duration::from_secs(60), "still running");
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = std::fs::read_to_string(&stderr).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{err}");

    // What every node's engine holds of it afterwards: nothing.
    assert_gone(&ALPHA, &web);

    // The audit log: each object the engines held, once, gone.
    let lines: Vec<Value> = audit_lines(&log).into_iter().filter(ours).collect();
    let mut logged: Vec<Named> = lines.iter().map(named).collect();
    logged.sort();
    assert_eq!(logged, expected, "{lines:#?}");
    for line in &lines {
        assert!(
            matches!(line["outcome"].as_str(), Some("removed" | "already_gone")),
            "{line}"
        );
        assert_eq!(line["trigger"], "watch", "{line}");
        assert_eq!(line["swarm"], "alpha", "{line}");
        assert_eq!(line["application"], "shop", "{line}");
        assert_eq!(line["reason"], "departed", "{line}");
        assert_eq!(line["controller"], s.controller.as_str(), "{line}");
        assert!(
            line["snapshot_digest"]
                .as_str()
                .is_some_and(|d| d.starts_with("sha256:")),
            "{line}"
        );
    }

    // The events: the same objects, each once, with the way to the report.
    let events = receiver.events();
    assert_eq!(told(&events), expected, "{events:#?}");
    for e in events.iter().filter(|e| e["event"] == "deleted") {
        assert_eq!(e["report_url"], format!("http://{listen}/report"), "{e}");
        assert_eq!(e["swarm"], "alpha", "{e}");
    }
    assert!(
        !events.iter().any(|e| e["event"] == "deletion_failed"),
        "{events:#?}"
    );
    // The webhook's path is a secret: the log never shows it.
    assert!(!err.contains("/hooks/sweep"), "{err}");
}
