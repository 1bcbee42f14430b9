//! Gathering: every swarm the registry resolves, read into a snapshot.
//!
//! All swarms are read concurrently, and all nodes of a swarm; every read
//! has a timeout. A swarm that cannot be read becomes a snapshot entry with
//! `error` set, so the planner holds it: one dead manager must never fail
//! the whole sweep, nor look like a swarm with no releases.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use sweep_core::{AppSet, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot};
use sweep_swarms::{Registry, SwarmBackend, Target};
use tokio::time::timeout;

/// How long gathering waits for each read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatherSettings {
    /// The limit for each call to a manager or a node (default 15 s).
    pub timeout: Duration,
}

impl GatherSettings {
    pub fn new(timeout: Duration) -> Self {
        GatherSettings { timeout }
    }
}

impl Default for GatherSettings {
    fn default() -> Self {
        GatherSettings::new(Duration::from_secs(15))
    }
}

/// Reads every swarm `registry` resolves into a snapshot with `policy` and
/// `app_set`. Without a [`Lister`](sweep_swarms::Lister) that is the local
/// swarm (`""`) only. Never fails: what cannot be read is marked so.
pub async fn gather(
    registry: &dyn Registry,
    policy: Policy,
    app_set: AppSet,
    settings: GatherSettings,
) -> Snapshot {
    let targets = match registry.as_lister() {
        Some(lister) => match timeout(settings.timeout, lister.swarms()).await {
            Ok(Ok(mut targets)) => {
                targets.sort();
                targets.dedup();
                Ok(targets)
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "listing swarms timed out after {:?}",
                settings.timeout
            )),
        },
        None => Ok(vec![Target::local()]),
    };
    let swarms = match targets {
        Ok(targets) => join_all(targets.iter().map(|t| read_swarm(registry, t, settings))).await,
        Err(message) => {
            // Without the list, no swarm is known to exist: an app set that
            // is loaded but whose swarms are all unknown plans nothing. Say
            // so on the local swarm, which a sweep always concerns.
            tracing::error!(%message, "cannot list the registry's swarms");
            vec![SwarmSnapshot::unreadable(
                "",
                format!("cannot list swarms: {message}"),
            )]
        }
    };
    Snapshot::new(policy, app_set, swarms)
}

async fn read_swarm(
    registry: &dyn Registry,
    target: &Target,
    settings: GatherSettings,
) -> SwarmSnapshot {
    let limit = settings.timeout;
    let unreadable = |message: String| {
        tracing::error!(swarm = %target, %message, "swarm could not be read; it is held");
        SwarmSnapshot::unreadable(target.swarm.as_str(), message)
    };
    let backend: Arc<dyn SwarmBackend> = match timeout(limit, registry.backend(target)).await {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return unreadable(e.to_string()),
        Err(_) => return unreadable(format!("connecting timed out after {limit:?}")),
    };

    let (releases, cluster_id, node_count, members, nodes) = tokio::join!(
        timeout(limit, backend.releases()),
        timeout(limit, backend.cluster_id()),
        timeout(limit, backend.node_count()),
        timeout(limit, backend.members()),
        read_nodes(registry, target, limit),
    );
    let releases = match releases {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return unreadable(format!("listing release records: {e}")),
        Err(_) => return unreadable(format!("listing release records timed out after {limit:?}")),
    };
    // Without the cluster id, two names of one cluster could not be told
    // apart, and a release declared under one name would look undeclared
    // under the other: such a swarm is not safe to sweep.
    let cluster_id = match cluster_id {
        Ok(Ok(id)) if !id.is_empty() => id,
        Ok(Ok(_)) => return unreadable("the swarm reports an empty cluster id".to_owned()),
        Ok(Err(e)) => return unreadable(format!("reading the cluster id: {e}")),
        Err(_) => return unreadable(format!("reading the cluster id timed out after {limit:?}")),
    };
    // An unknown count only lowers coverage: never "complete" on a guess.
    let node_count = match node_count {
        Ok(Ok(n)) => Some(n as u64),
        Ok(Err(e)) => {
            tracing::warn!(swarm = %target, error = %e, "node count unreadable; coverage cannot be complete");
            None
        }
        Err(_) => {
            tracing::warn!(swarm = %target, "node count timed out; coverage cannot be complete");
            None
        }
    };

    // The node list only names uncovered nodes; without it they are counted.
    let members = match members {
        Ok(Ok(list)) => {
            let mut list: Vec<NodeEntry> = list
                .into_iter()
                .map(|n| NodeEntry::new(n.id, n.hostname))
                .collect();
            list.sort();
            list.dedup_by(|a, b| a.id == b.id);
            Some(list)
        }
        Ok(Err(e)) => {
            tracing::warn!(swarm = %target, error = %e, "node list unreadable");
            None
        }
        Err(_) => None,
    };

    let mut snapshot = SwarmSnapshot::new(target.swarm.as_str());
    snapshot.cluster_id = Some(cluster_id);
    snapshot.releases = releases
        .into_iter()
        .map(|r| ReleaseEntry::new(r.name, r.owner))
        .collect();
    snapshot.releases.sort_by(|a, b| a.name.cmp(&b.name));
    snapshot.nodes = nodes;
    snapshot.node_count = node_count;
    snapshot.members = members;
    snapshot.self_stack = backend.self_stack().map(str::to_owned);
    snapshot
}

/// The nodes the registry reaches: `None` without node reach for this
/// swarm. A failed listing reaches none (`Some([])`), which holds a purge
/// rather than pretending the manager alone covers the swarm.
async fn read_nodes(
    registry: &dyn Registry,
    target: &Target,
    limit: Duration,
) -> Option<Vec<NodeEntry>> {
    let reach = registry.as_node_reach()?;
    match timeout(limit, reach.nodes(target)).await {
        Ok(Ok(None)) => None,
        Ok(Ok(Some(nodes))) => {
            let mut nodes: Vec<NodeEntry> = nodes
                .into_iter()
                .map(|n| NodeEntry::new(n.id, n.hostname))
                .collect();
            nodes.sort();
            nodes.dedup_by(|a, b| a.id == b.id);
            Some(nodes)
        }
        Ok(Err(e)) => {
            tracing::warn!(swarm = %target, error = %e, "cannot list reachable nodes");
            Some(Vec::new())
        }
        Err(_) => {
            tracing::warn!(swarm = %target, "listing reachable nodes timed out");
            Some(Vec::new())
        }
    }
}
