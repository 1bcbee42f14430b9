//! Timeouts and version negotiation against fake daemons on unix sockets
//! (no Docker engine needed).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod fake;

use fake::VERSION_REPLY;
use sweep_docker::{DockerSwarm, Endpoint, FileRegistry};
use sweep_swarms::{BackendError, Node, Registry, RegistryError, SwarmBackend, Target};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

/// Reads one request head; returns its path.
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

/// A daemon that answers `/version` like Docker 20.10 and never answers
/// anything else; records the paths it was asked for.
fn spawn_daemon(socket: &Path, answer_version: bool) -> Arc<Mutex<Vec<String>>> {
    let listener = UnixListener::bind(socket).expect("bind fake daemon socket");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            tokio::spawn(async move {
                while let Some(path) = read_request(&mut stream).await {
                    log.lock().unwrap().push(path.clone());
                    if answer_version && path.ends_with("/version") {
                        let reply =
                            format!("{}{VERSION_REPLY}", fake::json_head(VERSION_REPLY.len()));
                        if stream.write_all(reply.as_bytes()).await.is_err() {
                            return;
                        }
                    } else {
                        // Hold the connection open and say nothing.
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                }
            });
        }
    });
    seen
}

#[tokio::test]
async fn silent_daemon_times_out_while_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("silent.sock");
    let _seen = spawn_daemon(&socket, false);
    let endpoint = Endpoint::parse(&format!("unix://{}", socket.display()), None).unwrap();
    let started = Instant::now();
    let err = DockerSwarm::connect(&endpoint, Duration::from_secs(1))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        BackendError::Timeout {
            endpoint: endpoint.url().to_owned(),
            after: Duration::from_secs(1)
        }
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // Through a registry it is a connection error naming swarm and endpoint.
    let file = dir.path().join("registry.toml");
    std::fs::write(
        &file,
        format!(
            "timeout_secs = 1\n[[swarm]]\nname = \"slow\"\nmanager = \"{}\"\n",
            endpoint.url()
        ),
    )
    .unwrap();
    let registry = FileRegistry::load(&file).unwrap();
    match registry.backend(&Target::new("slow")).await {
        Err(RegistryError::Connect {
            swarm,
            endpoint: e,
            message,
        }) => {
            assert_eq!(swarm, "slow");
            assert_eq!(e, endpoint.url());
            assert!(message.contains("no answer within"), "{message}");
        }
        other => panic!("expected a connection error, got {:?}", other.err()),
    }
}

#[tokio::test]
async fn negotiated_version_is_used_and_every_call_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("old.sock");
    let seen = spawn_daemon(&socket, true);
    let endpoint = Endpoint::parse(&format!("unix://{}", socket.display()), None).unwrap();
    let swarm = DockerSwarm::connect(&endpoint, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(swarm.api_version(), "1.41");

    let started = Instant::now();
    assert_eq!(
        swarm.releases().await,
        Err(BackendError::Timeout {
            endpoint: endpoint.url().to_owned(),
            after: Duration::from_secs(1)
        })
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(
        swarm.remove_volume("v1").await,
        Err(BackendError::Timeout { .. })
    ));

    let paths = seen.lock().unwrap().clone();
    let configs = paths
        .iter()
        .find(|p| p.contains("/configs"))
        .unwrap_or_else(|| panic!("no configs request in {paths:?}"));
    // A 20.10 daemon refuses requests made with a newer API version.
    assert!(configs.starts_with("/v1.41/configs"), "{configs}");
}

/// What a scripted daemon answers to a request path (API version prefix
/// and query removed): after how long, with which JSON; `None`: never.
type Script = fn(&str) -> Option<(Duration, String)>;

/// A daemon on `socket` answering as `script` says; holds unanswered
/// requests open until the client gives up.
fn spawn_scripted(socket: &Path, script: Script) {
    let listener = UnixListener::bind(socket).expect("bind fake daemon socket");
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                while let Some(path) = read_request(&mut stream).await {
                    let path = path.split('?').next().unwrap_or_default().to_owned();
                    let path = match path.strip_prefix("/v") {
                        Some(rest) => rest
                            .find('/')
                            .map_or(path.clone(), |i| rest[i..].to_owned()),
                        None => path,
                    };
                    let Some((delay, body)) = script(&path) else {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        return;
                    };
                    tokio::time::sleep(delay).await;
                    let reply = format!("{}{body}", fake::json_head(body.len()));
                    if stream.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
}

fn manager_script(path: &str) -> Option<(Duration, String)> {
    let body = match path {
        "/version" => VERSION_REPLY.to_owned(),
        "/nodes" => r#"[{"ID":"mgr-id","Description":{"Hostname":"mgr"}},{"ID":"w1-id","Description":{"Hostname":"w1"}}]"#.to_owned(),
        "/info" => r#"{"Name":"mgr","Swarm":{"NodeID":"mgr-id"}}"#.to_owned(),
        _ => return None,
    };
    Some((Duration::ZERO, body))
}

/// Answers the version just inside the per-call timeout, then never again.
fn slow_node_script(path: &str) -> Option<(Duration, String)> {
    match path {
        "/version" => Some((Duration::from_millis(1500), VERSION_REPLY.to_owned())),
        _ => None,
    }
}

/// A node daemon that answers the version slowly and its info never is
/// probed within one per-call timeout as a whole (before: one for the
/// version, then one more for the info), and the nodes that answered are
/// returned without it; the registry says how long listing nodes can take,
/// so that a caller can wait longer than that.
#[tokio::test]
async fn a_node_probe_is_bounded_as_a_whole_and_the_answers_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let manager = dir.path().join("mgr.sock");
    let slow = dir.path().join("slow.sock");
    spawn_scripted(&manager, manager_script);
    spawn_scripted(&slow, slow_node_script);
    let file = dir.path().join("registry.toml");
    std::fs::write(
        &file,
        format!(
            "timeout_secs = 2\n[[swarm]]\nname = \"alpha\"\nmanager = \"unix://{m}\"\n\
             [[swarm.node]]\nendpoint = \"unix://{m}\"\n[[swarm.node]]\nendpoint = \"unix://{s}\"\n",
            m = manager.display(),
            s = slow.display()
        ),
    )
    .unwrap();
    let registry = FileRegistry::load(&file).unwrap();
    let reach = registry.as_node_reach().unwrap();
    let alpha = Target::new("alpha");
    // Connecting to the manager, then its node list, with the probes
    // running meanwhile.
    assert_eq!(reach.nodes_time_limit(), Some(Duration::from_secs(4)));
    // The manager (listed once, though configured twice) and the slow node,
    // each with the connection its client may still keep.
    assert_eq!(reach.nodes_connections(&alpha), 4);

    let started = Instant::now();
    let nodes = reach.nodes(&alpha).await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(nodes, Some(vec![Node::new("mgr-id", "mgr")]));
    // One per-call timeout (2 s) for the whole probe; one per step was 3.5 s.
    assert!(elapsed < Duration::from_millis(3000), "{elapsed:?}");
}
