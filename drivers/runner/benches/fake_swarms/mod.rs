//! Fake swarms for gathering: Docker daemons on unix sockets in a
//! temporary directory (never a network address) answering with canned
//! JSON after a delay, counting every request per daemon and path, every
//! connection accepted, and the connections open now.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sweep_docker::FileRegistry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

/// Daemons per swarm, the manager included.
pub const NODES: usize = 3;

const VERSION_REPLY: &str =
    r#"{"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12","Os":"linux"}"#;

/// Requests per (daemon, path), connections accepted per daemon, and
/// connections open now over all daemons.
#[derive(Default)]
pub struct Counts {
    requests: Mutex<BTreeMap<(String, String), usize>>,
    connections: Mutex<BTreeMap<String, usize>>,
    open: AtomicUsize,
}

impl Counts {
    fn request(&self, daemon: &str, path: &str) {
        *self
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((daemon.to_owned(), path.to_owned()))
            .or_default() += 1;
    }

    fn connection(&self, daemon: &str) {
        *self
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(daemon.to_owned())
            .or_default() += 1;
        self.open.fetch_add(1, Ordering::SeqCst);
    }

    /// Requests so far, per (daemon, path without version or query).
    pub fn requests(&self) -> BTreeMap<(String, String), usize> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Connections accepted so far, per daemon.
    pub fn connections(&self) -> BTreeMap<String, usize> {
        self.connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Connections open now: accepted, and not yet closed by the client.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }
}

/// One fake daemon `name`: node `node_id` of cluster `cluster`; a manager
/// also answers for the cluster and lists `members`. Daemons are named
/// `s<i>-n<n>`: swarm `s<i>`, its manager `n0`.
#[derive(Clone)]
pub struct Daemon {
    name: String,
    node_id: String,
    hostname: String,
    cluster: String,
    members: Vec<(String, String)>,
    delay: Duration,
}

impl Daemon {
    /// The reply to `path` (versioned or not, query ignored).
    fn reply(&self, path: &str) -> (u16, String) {
        let path = path.split('?').next().unwrap_or(path);
        let path = match path.strip_prefix("/v") {
            Some(rest) => rest.find('/').map_or(path, |i| &rest[i..]),
            None => path,
        };
        match path {
            "/version" => (200, VERSION_REPLY.to_owned()),
            "/_ping" => (200, "OK".to_owned()),
            "/configs" | "/services" | "/networks" | "/secrets" | "/containers/json" => {
                (200, "[]".to_owned())
            }
            "/volumes" => (200, r#"{"Volumes":[],"Warnings":null}"#.to_owned()),
            "/swarm" => (200, serde_json::json!({ "ID": self.cluster }).to_string()),
            "/nodes" => {
                let list: Vec<serde_json::Value> = self
                    .members
                    .iter()
                    .map(|(id, host)| {
                        serde_json::json!({
                            "ID": id,
                            "Description": { "Hostname": host },
                            "Status": { "State": "ready" },
                        })
                    })
                    .collect();
                (200, serde_json::Value::Array(list).to_string())
            }
            "/info" => (
                200,
                serde_json::json!({ "Name": self.hostname, "Swarm": { "NodeID": self.node_id } })
                    .to_string(),
            ),
            _ => (404, r#"{"message":"not faked"}"#.to_owned()),
        }
    }
}

/// The path of one request head; `None` at the end of the stream.
async fn read_request(stream: &mut UnixStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    head.split_whitespace().nth(1).map(str::to_owned)
}

/// Serves requests on one connection, one after the other, as long as the
/// client keeps it open.
async fn serve(mut stream: UnixStream, daemon: Daemon, counts: Arc<Counts>) {
    while let Some(path) = read_request(&mut stream).await {
        let bare = path.split('?').next().unwrap_or(&path);
        let bare = match bare.strip_prefix("/v") {
            Some(rest) => rest.find('/').map_or(bare, |i| &rest[i..]),
            None => bare,
        };
        counts.request(&daemon.name, bare);
        let (status, body) = daemon.reply(&path);
        tokio::time::sleep(daemon.delay).await;
        let reason = if status == 200 { "OK" } else { "Not Found" };
        let reply = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Serves `daemon` on a socket in `dir`; returns its endpoint.
pub fn spawn(dir: &Path, daemon: Daemon, counts: Arc<Counts>) -> String {
    let socket = dir.join(format!("{}.sock", daemon.name));
    let listener = UnixListener::bind(&socket).expect("bind a fake daemon socket");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counts.connection(&daemon.name);
            let (daemon, counts) = (daemon.clone(), counts.clone());
            tokio::spawn(async move {
                serve(stream, daemon, counts.clone()).await;
                counts.open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    format!("unix://{}", socket.display())
}

/// Starts `swarms` fake swarms `s<i>` of [`NODES`] daemons each, every
/// request answered after `delay`, and loads a registry file naming each
/// swarm's manager and every one of its daemons as a node (the manager
/// too, as a registry file lists every node).
pub fn registry(dir: &Path, swarms: usize, delay: Duration, counts: &Arc<Counts>) -> FileRegistry {
    let mut text = String::from("timeout_secs = 30\n");
    for i in 0..swarms {
        let members: Vec<(String, String)> = (0..NODES)
            .map(|n| (format!("s{i}-n{n}"), format!("s{i}-host{n}")))
            .collect();
        let endpoints: Vec<String> = members
            .iter()
            .map(|(id, host)| {
                let daemon = Daemon {
                    name: id.clone(),
                    node_id: id.clone(),
                    hostname: host.clone(),
                    cluster: format!("cluster-{i}"),
                    members: members.clone(),
                    delay,
                };
                spawn(dir, daemon, counts.clone())
            })
            .collect();
        text.push_str(&format!(
            "\n[[swarm]]\nname = \"s{i}\"\nmanager = \"{}\"\n",
            endpoints[0]
        ));
        for endpoint in &endpoints {
            text.push_str(&format!("[[swarm.node]]\nendpoint = \"{endpoint}\"\n"));
        }
    }
    let file = dir.join("registry.toml");
    std::fs::write(&file, text).expect("write the registry file");
    FileRegistry::load(&file).expect("load the registry file")
}
