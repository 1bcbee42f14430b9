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
use sweep_testkit::engine_record::{EngineRecord, Manifest};
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
        /// Its configs listing (`[]` unless set).
        configs: Option<Arc<str>>,
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
            configs: None,
        }
    }

    /// Listing `configs` (a JSON array) for every configs request.
    pub fn with_configs(mut self, listing: Arc<str>) -> Self {
        if let Daemon::Answering { configs, .. } = &mut self {
            *configs = Some(listing);
        }
        self
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
                configs,
            } => {
                let routes = swarm_manager(node_id, hostname, cluster, members, *node_list_delay);
                let routes = match configs {
                    Some(listing) => routes.on("/configs", Reply::json(listing.to_string())),
                    None => routes,
                };
                routes.delayed(*delay)
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
    three_node_swarms_with(dir, count, delay, fleet, |_| None)
}

/// [`three_node_swarms`], swarm `s<i>` listing the configs `configs(i)`
/// gives (`[]` for `None`).
pub fn three_node_swarms_with(
    dir: &Path,
    count: usize,
    delay: Duration,
    fleet: &Fleet,
    configs: impl Fn(usize) -> Option<Arc<str>>,
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
        let listing = configs(i);
        let nodes: Vec<String> = ids
            .iter()
            .map(|(id, host)| {
                let mut daemon = Daemon::manager(id, host, &cluster, &members).delayed(delay);
                if let Some(listing) = &listing {
                    daemon = daemon.with_configs(listing.clone());
                }
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

/// The owner stamp of release `release` of application `app`.
pub fn stamp(app: &str, release: &str) -> String {
    format!("cd/default/{app}:release/{release}")
}

/// Revision `revision` of `release` (application `app`) as the chart
/// engine records it, about as large as a small chart's: forty values,
/// and a manifest of four services on two networks, mounting two configs
/// and a secret.
pub fn engine_record(app: &str, release: &str, revision: u64, newest: bool) -> EngineRecord {
    let manifest = Manifest::new(format!("registry.example/{app}:{revision}"))
        .service("web")
        .service("api")
        .service("worker")
        .service("cache")
        .network("front")
        .network("back")
        .config("conf")
        .config("extra")
        .secret("token")
        .render();
    let mut record = EngineRecord::new(release, revision)
        .with_owner(Some(&stamp(app, release)))
        .with_manifest(manifest)
        .with_status(if newest { "deployed" } else { "superseded" });
    record.chart = app.to_owned();
    for v in 0..40 {
        record.values.insert(
            format!("settings.item{v}.name"),
            format!("value-{v}-of-revision-{revision}"),
        );
    }
    record
}

/// The configs listing of a swarm of application `app` with `releases`
/// releases `r<j>` of `revisions` revisions each, every record as Docker
/// lists it: its data base64 in the listing.
pub fn records_listing(app: &str, releases: usize, revisions: u64) -> String {
    use base64::Engine as _;
    let mut records = Vec::new();
    for j in 0..releases {
        let release = format!("r{j}");
        for revision in 1..=revisions {
            let record = engine_record(app, &release, revision, revision == revisions);
            let labels: serde_json::Map<String, serde_json::Value> = record
                .labels()
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::String(v)))
                .collect();
            records.push(serde_json::json!({
                "ID": format!("{app}-{release}-{revision}"),
                "Version": {"Index": 100 + revision},
                "CreatedAt": "2025-03-01T12:00:00Z",
                "UpdatedAt": "2025-03-01T12:00:00Z",
                "Spec": {
                    "Name": record.name(),
                    "Labels": labels,
                    "Data": base64::engine::general_purpose::STANDARD.encode(record.payload()),
                },
            }));
        }
    }
    serde_json::Value::Array(records).to_string()
}

/// [`three_node_swarms`] of `swarms` swarms, every request answered after
/// `delay`, each manager listing the records of `releases` releases of
/// `revisions` revisions (application `app-<i>` on swarm `s<i>`), in a
/// registry file.
pub fn registry_file_with_records(
    dir: &Path,
    swarms: usize,
    delay: Duration,
    fleet: &Fleet,
    releases: usize,
    revisions: u64,
) -> PathBuf {
    let swarms = three_node_swarms_with(dir, swarms, delay, fleet, |i| {
        (releases > 0).then(|| Arc::from(records_listing(&format!("app-{i}"), releases, revisions)))
    });
    registry_file(dir, 30, &swarms)
}
