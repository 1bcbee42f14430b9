//! Fake Docker daemons on unix sockets in a temporary directory (never a
//! network address), read through the docker registry: just enough of the
//! API for gathering, with delays and silence on demand, counting the
//! connections open at once.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

const VERSION_REPLY: &str =
    r#"{"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12","Os":"linux"}"#;

/// Connections open at once, over every daemon sharing it.
#[derive(Debug, Default)]
pub struct Connections {
    open: AtomicUsize,
    peak: AtomicUsize,
}

impl Connections {
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    pub fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    fn opened(&self) {
        let now = self.open.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }

    fn closed(&self) {
        self.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a fake daemon answers.
#[derive(Clone, Debug)]
pub enum Daemon {
    /// A daemon of swarm node `node_id`; as a manager it answers for the
    /// whole swarm (cluster `cluster`, node list `members`). Every answer
    /// comes after `delay`, the node list after `node_list_delay` more.
    Answering {
        node_id: String,
        hostname: String,
        cluster: String,
        members: Vec<(String, String)>,
        delay: Duration,
        node_list_delay: Duration,
    },
    /// Accepts connections, reads requests, never answers.
    Silent,
}

impl Daemon {
    /// A daemon of node `id` (hostname `host`) answering at once.
    pub fn node(id: &str, host: &str) -> Self {
        Daemon::Answering {
            node_id: id.to_owned(),
            hostname: host.to_owned(),
            cluster: String::new(),
            members: Vec::new(),
            delay: Duration::ZERO,
            node_list_delay: Duration::ZERO,
        }
    }

    /// A manager, node `id`, of cluster `cluster` whose node list is `members`.
    pub fn manager(id: &str, host: &str, cluster: &str, members: &[(&str, &str)]) -> Self {
        Daemon::Answering {
            node_id: id.to_owned(),
            hostname: host.to_owned(),
            cluster: cluster.to_owned(),
            members: members
                .iter()
                .map(|(i, h)| ((*i).to_owned(), (*h).to_owned()))
                .collect(),
            delay: Duration::ZERO,
            node_list_delay: Duration::ZERO,
        }
    }

    /// Every answer after `delay`.
    pub fn delayed(mut self, by: Duration) -> Self {
        if let Daemon::Answering { delay, .. } = &mut self {
            *delay = by;
        }
        self
    }

    /// The node list after `by` more.
    pub fn slow_node_list(mut self, by: Duration) -> Self {
        if let Daemon::Answering {
            node_list_delay, ..
        } = &mut self
        {
            *node_list_delay = by;
        }
        self
    }

    /// The reply to `path` (without its API version prefix), and how long
    /// to wait before it; `None`: never answer.
    fn reply(&self, path: &str) -> Option<(Duration, u16, String)> {
        let Daemon::Answering {
            node_id,
            hostname,
            cluster,
            members,
            delay,
            node_list_delay,
        } = self
        else {
            return None;
        };
        let path = path.split('?').next().unwrap_or(path);
        let path = match path.strip_prefix("/v") {
            Some(rest) => rest.find('/').map_or(path, |i| &rest[i..]),
            None => path,
        };
        let json = |v: serde_json::Value| v.to_string();
        let (extra, status, body) = match path {
            "/version" => (Duration::ZERO, 200, VERSION_REPLY.to_owned()),
            "/configs" | "/services" | "/networks" | "/secrets" | "/containers/json" => {
                (Duration::ZERO, 200, "[]".to_owned())
            }
            "/volumes" => (
                Duration::ZERO,
                200,
                r#"{"Volumes":[],"Warnings":null}"#.to_owned(),
            ),
            "/swarm" => (
                Duration::ZERO,
                200,
                json(serde_json::json!({ "ID": cluster })),
            ),
            "/nodes" => {
                let list: Vec<serde_json::Value> = members
                    .iter()
                    .map(|(id, host)| {
                        serde_json::json!({
                            "ID": id,
                            "Description": { "Hostname": host },
                            "Status": { "State": "ready" },
                        })
                    })
                    .collect();
                (*node_list_delay, 200, json(serde_json::Value::Array(list)))
            }
            "/info" => (
                Duration::ZERO,
                200,
                json(serde_json::json!({ "Name": hostname, "Swarm": { "NodeID": node_id } })),
            ),
            _ => (Duration::ZERO, 404, r#"{"message":"not faked"}"#.to_owned()),
        };
        Some((*delay + extra, status, body))
    }
}

/// Reads one request head; returns its path. `None` at end of stream.
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

async fn serve(mut stream: UnixStream, daemon: Daemon) {
    while let Some(path) = read_request(&mut stream).await {
        let Some((delay, status, body)) = daemon.reply(&path) else {
            // Say nothing; notice when the client gives up.
            let mut sink = [0u8; 1024];
            while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
            return;
        };
        tokio::time::sleep(delay).await;
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

/// Serves `daemon` on a new socket `name` in `dir`; returns its endpoint.
pub fn spawn(dir: &Path, name: &str, daemon: Daemon, connections: Arc<Connections>) -> String {
    let socket: PathBuf = dir.join(format!("{name}.sock"));
    let listener = UnixListener::bind(&socket).expect("bind a fake daemon socket");
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let daemon = daemon.clone();
            let connections = connections.clone();
            connections.opened();
            tokio::spawn(async move {
                serve(stream, daemon).await;
                connections.closed();
            });
        }
    });
    format!("unix://{}", socket.display())
}

/// `count` swarms `s<i>` of three fake daemons each (the manager `s<i>-n0`
/// and nodes `s<i>-n1`, `s<i>-n2`), every answer `delay` late, in the
/// shape [`registry_file`] takes.
pub fn three_node_swarms(
    dir: &Path,
    count: usize,
    delay: Duration,
    connections: &Arc<Connections>,
) -> Vec<(String, String, Vec<String>)> {
    let mut swarms = Vec::new();
    for i in 0..count {
        let ids: Vec<(String, String)> = (0..3)
            .map(|n| (format!("s{i}-n{n}"), format!("s{i}-host{n}")))
            .collect();
        let members: Vec<(&str, &str)> = ids
            .iter()
            .map(|(id, host)| (id.as_str(), host.as_str()))
            .collect();
        let manager = spawn(
            dir,
            &format!("s{i}-n0"),
            Daemon::manager(&ids[0].0, &ids[0].1, &format!("cluster-{i}"), &members).delayed(delay),
            connections.clone(),
        );
        let mut nodes = vec![manager.clone()];
        for (id, host) in &ids[1..] {
            nodes.push(spawn(
                dir,
                id,
                Daemon::node(id, host).delayed(delay),
                connections.clone(),
            ));
        }
        swarms.push((format!("s{i}"), manager, nodes));
    }
    swarms
}

/// A registry file for `swarms`: (name, manager endpoint, node endpoints).
pub fn registry_file(
    dir: &Path,
    timeout_secs: u64,
    swarms: &[(String, String, Vec<String>)],
) -> PathBuf {
    let mut text = format!("timeout_secs = {timeout_secs}\n");
    for (name, manager, nodes) in swarms {
        text.push_str(&format!(
            "\n[[swarm]]\nname = \"{name}\"\nmanager = \"{manager}\"\n"
        ));
        for node in nodes {
            text.push_str(&format!("[[swarm.node]]\nendpoint = \"{node}\"\n"));
        }
    }
    let file = dir.join("registry.toml");
    std::fs::write(&file, text).expect("write the registry file");
    file
}
