//! Fake swarms for gathering, for the tests and the gather benchmark:
//! fake Docker daemons (`sweep_testkit::fake_daemon`) on unix sockets in a
//! temporary directory (never a network address), read through the docker
//! registry: just enough of the API for gathering, with delays and
//! silence on demand, every request and connection counted.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sweep_docker::FileRegistry;
use sweep_testkit::fake_daemon::{swarm_manager, Connections, FakeDaemon, Reply, Routes};

/// Daemons per swarm of [`three_node_swarms`], the manager included.
pub const NODES: usize = 3;

/// Every fake daemon started, by name, and the connections open at once
/// over all of them.
#[derive(Default)]
pub struct Fleet {
    connections: Arc<Connections>,
    daemons: Mutex<BTreeMap<String, FakeDaemon>>,
}

impl Fleet {
    /// Connections over every daemon: open now, the most at once.
    pub fn connections(&self) -> &Connections {
        &self.connections
    }

    /// Requests so far, per (daemon, path without version or query).
    pub fn requests(&self) -> BTreeMap<(String, String), usize> {
        let mut counts = BTreeMap::new();
        for (name, daemon) in self.daemons() {
            for request in daemon.requests() {
                *counts.entry((name.clone(), request.bare)).or_default() += 1;
            }
        }
        counts
    }

    /// Connections accepted so far, per daemon.
    pub fn accepted(&self) -> BTreeMap<String, usize> {
        self.daemons()
            .into_iter()
            .map(|(name, daemon)| (name, daemon.connections().accepted()))
            .collect()
    }

    fn daemons(&self) -> BTreeMap<String, FakeDaemon> {
        self.daemons
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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
        Self::manager(id, host, "", &[])
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

    fn routes(&self) -> Routes {
        match self {
            Daemon::Answering {
                node_id,
                hostname,
                cluster,
                members,
                delay,
                node_list_delay,
            } => {
                swarm_manager(node_id, hostname, cluster, members, *node_list_delay).delayed(*delay)
            }
            Daemon::Silent => Routes::none().otherwise(Reply::silent()),
        }
    }
}

/// Serves `daemon` on a new socket `name` in `dir`, counted in `fleet`;
/// returns its endpoint.
pub fn spawn(dir: &Path, name: &str, daemon: Daemon, fleet: &Fleet) -> String {
    let fake = FakeDaemon::counted_in(daemon.routes(), fleet.connections.clone());
    let endpoint = fake.listen_unix(&dir.join(format!("{name}.sock")));
    fleet
        .daemons
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name.to_owned(), fake);
    endpoint
}

/// `count` swarms `s<i>` of [`NODES`] fake daemons each (the manager
/// `s<i>-n0` and nodes `s<i>-n1`, `s<i>-n2`), every answer `delay` late,
/// each daemon a node of its swarm (the manager too, as a registry file
/// lists every node), in the shape [`registry_file`] takes.
pub fn three_node_swarms(
    dir: &Path,
    count: usize,
    delay: Duration,
    fleet: &Fleet,
) -> Vec<(String, String, Vec<String>)> {
    let mut swarms = Vec::new();
    for i in 0..count {
        let ids: Vec<(String, String)> = (0..NODES)
            .map(|n| (format!("s{i}-n{n}"), format!("s{i}-host{n}")))
            .collect();
        let members: Vec<(&str, &str)> = ids
            .iter()
            .map(|(id, host)| (id.as_str(), host.as_str()))
            .collect();
        let cluster = format!("cluster-{i}");
        let nodes: Vec<String> = ids
            .iter()
            .map(|(id, host)| {
                let daemon = Daemon::manager(id, host, &cluster, &members).delayed(delay);
                spawn(dir, id, daemon, fleet)
            })
            .collect();
        swarms.push((format!("s{i}"), nodes[0].clone(), nodes));
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

/// [`three_node_swarms`] of `swarms` swarms, every request answered after
/// `delay`, in a loaded registry file.
pub fn registry(dir: &Path, swarms: usize, delay: Duration, fleet: &Fleet) -> FileRegistry {
    let swarms = three_node_swarms(dir, swarms, delay, fleet);
    FileRegistry::load(registry_file(dir, 30, &swarms)).expect("load the registry file")
}
