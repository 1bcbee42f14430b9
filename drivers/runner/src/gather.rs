//! Gathering: every swarm the registry resolves, read into a snapshot.
//!
//! Swarms are read concurrently, and all nodes of a swarm; every read has a
//! timeout. Gathering only reads and records: a listing that fails is a
//! fact of the swarm's entry (`failed_reads`), as is a reached node whose
//! daemon did not answer (`unread_nodes`), and what each means is the
//! planner's rule (`SwarmSnapshot::why_unreadable`, `reached_nodes`): one
//! dead manager holds its swarm, never fails the whole sweep, and never
//! looks like a swarm with no releases.
//!
//! One swarm is read in as few dependent rounds as the registry allows:
//! its nodes are looked at (through [`NodeReach::nodes_read`]) while the
//! manager is read, not after, each with what it holds where the registry
//! reads that with it. Over the docker registry that is one round: the
//! manager's listings (one per kind: [`SwarmBackend::listings`]), cluster
//! id, node list and own volumes and containers, and every node's info,
//! volumes and containers, all at once.
//!
//! What a release consists of is read with it: every record revision's id
//! and version, and the objects of its stack (services with their keep
//! labels, networks, secrets, configs, and its volumes on every node whose
//! volumes were listed).
//!
//! What uses what is read with it: every service's spec references from
//! the manager, and the containers using named volumes on the manager and
//! on each reached node ([`sweep_core::usage`]).
//!
//! Every record is read as a revision, by its labels; what a record's data
//! says is read only where the resource rule will look at it
//! ([`payload_scope`]): with `policy.prune_resources` on, the releases
//! that live applications which opted in declare on the swarm. A record's
//! data is up to 500 KiB of gzip and a release keeps ten of them, so
//! without such an application gathering reads what it read before the
//! rule existed. Names of one cluster are one swarm to the planner, which
//! trusts a release only when each name observed it alike, so where a
//! cluster is known by several names each of them reads the payloads any
//! of them is asked for ([`widen_payloads`]).
//!
//! Two bounds keep one slow or silent daemon costing only itself:
//! - the connections open at once stay within a budget
//!   ([`GatherSettings::max_connections`]), so that hundreds of swarms read
//!   at once never run the process out of file descriptors, where every
//!   further connection (to a healthy daemon too) would fail;
//! - node listing is bounded past the registry's own bound on it
//!   ([`NodeReach::nodes_time_limit`]), so the nodes that answered are never
//!   cut off together with the one that did not.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use sweep_core::reads::{FailedRead, Listing, UnreadNode};
use sweep_core::usage::{ContainerUse, NodeContainers, ServiceUse, Usage};
use sweep_core::{
    AppSet, NodeEntry, NodeVolumes, Policy, ReleaseEntry, Snapshot, StackObjects, SwarmSnapshot,
};
use sweep_swarms::{
    BackendError, Holdings, Node, NodeReach, PayloadScope, ReadNode, Registry, SwarmBackend,
    Target, VolumesByStack,
};
use tokio::sync::Semaphore;
use tokio::time::error::Elapsed;
use tokio::time::timeout;

use crate::limits::{connection_budget, open_file_limit};

/// The manager reads of one swarm that run at once, one connection each:
/// one listing per kind of configs (records and the stacks'), services,
/// networks and secrets, the cluster id, the node list, its info, volumes
/// and containers; and one more, as a registry may serve the count and the
/// list of nodes with a request each.
const MANAGER_READS: usize = 10;

/// How much longer than the registry's own bound on node listing gathering
/// waits for it: the registry's bound is what it needs, this is scheduling
/// slack, so that the registry's inner bounds always fire first.
const NESTING_MARGIN: Duration = Duration::from_secs(1);

/// How gathering bounds its reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatherSettings {
    /// The limit for each call to a manager or a node (default 15 s). Node
    /// listing gets longer when the registry bounds it itself (see
    /// [`NodeReach::nodes_time_limit`]).
    pub timeout: Duration,
    /// How many daemon connections may be open at once, over all swarms (at
    /// least 1). Each is a file descriptor; the default is what the
    /// process's open-file limit leaves when the settings are made (see
    /// [`connection_budget`]), so call
    /// [`raise_open_file_limit`](crate::raise_open_file_limit) first.
    pub max_connections: usize,
}

impl GatherSettings {
    /// Calls limited to `timeout`; connections bounded by the open-file
    /// limit in force now.
    pub fn new(timeout: Duration) -> Self {
        GatherSettings {
            timeout,
            max_connections: connection_budget(open_file_limit()),
        }
    }

    /// At most `max_connections` daemon connections open at once (at least 1).
    pub fn with_max_connections(mut self, max_connections: usize) -> Self {
        self.max_connections = max_connections.max(1);
        self
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
///
/// The snapshot is what [`sweep_core::plan()`] decides from; [`execute`]
/// then carries the plan out through the same registry.
///
/// [`execute`]: crate::execute
///
/// # Example
///
/// Two swarms in sweep-testkit's in-memory registry: `alpha` with one
/// release, `beta` whose manager does not answer. Gathering still
/// succeeds; `beta`'s failed connection is recorded, and the planner holds
/// it for that, never reads it as "no releases".
///
/// ```
/// use std::time::Duration;
///
/// use sweep_core::reads::Listing;
/// use sweep_core::{AppSet, Application, Policy};
/// use sweep_runner::{gather, GatherSettings};
/// use sweep_testkit::{MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let registry = MemoryRegistry::new()
///     .with_swarm(
///         MemorySwarm::new("alpha", "cluster-a")
///             .node(MemoryNode::new("a1", "alpha-1").volume("web_data", Some("web")))
///             .record(MemoryRecord::new("web", 1, Some("cd/default/shop:release/web")))
///             .stack("web", MemoryStack::new().service("web_app")),
///     )
///     .with_swarm(MemorySwarm::new("beta", "cluster-b").node(MemoryNode::new("b1", "beta-1")));
/// registry.set_manager_unreachable("beta", true).unwrap();
///
/// let apps = AppSet::new(true, vec![Application::reconciled("shop", "alpha", &["web"])]);
/// let policy = Policy::new("default", true, None);
/// let settings = GatherSettings::new(Duration::from_secs(5));
/// let snapshot = gather(&registry, policy, apps, settings).await;
///
/// let alpha = &snapshot.swarms[0];
/// assert_eq!((alpha.swarm.as_str(), alpha.why_unreadable()), ("alpha", None));
/// assert_eq!(alpha.cluster_id.as_deref(), Some("cluster-a"));
/// assert_eq!(alpha.releases[0].name, "web");
/// assert_eq!(alpha.releases[0].owner.as_deref(), Some("cd/default/shop:release/web"));
/// assert_eq!(alpha.node_count, Some(1));
/// assert_eq!(alpha.nodes.as_ref().map(Vec::len), Some(1)); // node reach: a1
///
/// let beta = &snapshot.swarms[1];
/// assert_eq!(beta.swarm.as_str(), "beta");
/// // What failed is recorded; the planner's rule says it cannot be swept.
/// assert_eq!(beta.failed_reads[0].listing, Listing::Manager);
/// assert!(beta.why_unreadable().is_some() && beta.releases.is_empty());
/// # }
/// ```
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
        Ok(targets) => {
            let budget = settings.max_connections.clamp(1, Semaphore::MAX_PERMITS);
            let connections = Semaphore::new(budget);
            let scopes: Vec<PayloadScope> = targets
                .iter()
                .map(|t| payload_scope(&policy, &app_set, t))
                .collect();
            let reads = targets.iter().zip(&scopes).map(|(t, scope)| {
                read_swarm_within(registry, t, scope, settings, &connections, budget)
            });
            let swarms = join_all(reads).await;
            let read = Reads {
                registry,
                settings,
                connections: &connections,
            };
            widen_payloads(read, &targets, &scopes, swarms).await
        }
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

/// The releases whose records' data gathering reads on `target`: none
/// unless `policy.prune_resources` is on, and then those declared on it
/// (as its name, exactly as the app set names its destination) by the live
/// applications that opted in (`prune_resources`). These are the only
/// releases the resource rule may examine there: any other record's data
/// would be read for nothing, and a swarm of many releases lists up to
/// 500 KiB of it per record.
pub(crate) fn payload_scope(policy: &Policy, app_set: &AppSet, target: &Target) -> PayloadScope {
    if !policy.prune_resources {
        return PayloadScope::none();
    }
    PayloadScope::of(
        app_set
            .applications
            .iter()
            .filter(|app| app.is_live() && app.prune_resources && app.swarm == *target)
            .flat_map(|app| app.releases.iter().flatten().cloned()),
    )
}

/// What reading a swarm again needs.
#[derive(Clone, Copy)]
struct Reads<'a> {
    registry: &'a dyn Registry,
    settings: GatherSettings,
    connections: &'a Semaphore,
}

/// `swarms` (read under `targets`, with the payloads of `scopes`) once
/// every name of a cluster has read the payloads any of its names was asked
/// for.
///
/// The planner groups names by cluster id and applies the resource rule to
/// a release only when every name observed it alike: a name that read a
/// release's payloads beside one that did not would hold the release as
/// observed differently, and an application naming one of the cluster's
/// names would never have its dropped objects removed. Which names are one
/// cluster is known only once they are read, so a name whose scope fell
/// short of its cluster's reads its releases again, with the cluster's,
/// and its entries take the revisions read then where the records are the
/// same ones (same ids and versions). Where they are not (the records
/// changed in between), or the second read fails, the first read stands:
/// the names then disagree, and the planner holds the release, never
/// deleting from it.
async fn widen_payloads(
    read: Reads<'_>,
    targets: &[Target],
    scopes: &[PayloadScope],
    mut swarms: Vec<SwarmSnapshot>,
) -> Vec<SwarmSnapshot> {
    let mut by_cluster: BTreeMap<&str, (PayloadScope, BTreeSet<usize>)> = BTreeMap::new();
    for (at, (swarm, scope)) in swarms.iter().zip(scopes).enumerate() {
        if let Some(cluster) = swarm.cluster_id.as_deref() {
            let (union, names) = by_cluster.entry(cluster).or_default();
            *union = std::mem::take(union).union(scope);
            names.insert(at);
        }
    }
    let mut again: Vec<(usize, PayloadScope)> = Vec::new();
    for (union, names) in by_cluster.into_values() {
        if names.len() < 2 {
            continue;
        }
        for at in names {
            if !scopes[at].covers(&union) && releases_read(&swarms[at]) {
                again.push((at, union.clone()));
            }
        }
    }
    if again.is_empty() {
        return swarms;
    }
    let rereads = again.into_iter().map(|(at, scope)| async move {
        let target = &targets[at];
        // One connection, the manager's; taken before the timeout starts.
        let _permit = read.connections.acquire().await.ok();
        let limit = read.settings.timeout;
        let releases = timeout(limit, async {
            let backend = read
                .registry
                .backend(target)
                .await
                .map_err(|e| e.to_string())?;
            backend
                .releases_with_payloads(&scope)
                .await
                .map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|_| Err(format!("timed out after {limit:?}")));
        read.registry.close_idle(target);
        (at, releases)
    });
    for (at, releases) in join_all(rereads).await {
        match releases {
            Ok(releases) => take_revisions(&mut swarms[at], releases),
            Err(error) => tracing::warn!(
                swarm = %targets[at],
                %error,
                "cannot read the release records again with the payloads of the swarm's other names"
            ),
        }
    }
    swarms
}

/// Whether `swarm`'s release records were read: only then do its entries
/// take revisions read again.
fn releases_read(swarm: &SwarmSnapshot) -> bool {
    !swarm
        .failed_reads
        .iter()
        .any(|f| matches!(f.listing, Listing::Manager | Listing::Releases))
}

/// Gives each entry of `swarm` the revisions of `releases` (read again)
/// where the records read are the same ones as before.
fn take_revisions(swarm: &mut SwarmSnapshot, releases: Vec<sweep_swarms::ReleaseRecord>) {
    let mut again: BTreeMap<String, sweep_swarms::ReleaseRecord> =
        releases.into_iter().map(|r| (r.name.clone(), r)).collect();
    for entry in &mut swarm.releases {
        let Some(read) = again.remove(&entry.name) else {
            continue;
        };
        let records = read.records.map(|mut r| {
            r.sort();
            r
        });
        if records.is_some() && records == entry.records {
            if let Some(mut revisions) = read.revisions.filter(|r| !r.is_empty()) {
                revisions.sort();
                entry.revisions = Some(revisions);
            }
        }
    }
}

/// [`read_swarm`] once the connections it opens at most fit in the budget.
///
/// The permits are taken before any timeout starts, so waiting for room is
/// never mistaken for a daemon that does not answer; and they are held for
/// the whole read, since its connections are open at once. Connections the
/// registry keeps for reuse are closed ([`Registry::close_idle`]) before
/// the permits go, so that a finished read holds no descriptor: kept, they
/// would pile up past the budget over many swarms.
async fn read_swarm_within(
    registry: &dyn Registry,
    target: &Target,
    scope: &PayloadScope,
    settings: GatherSettings,
    connections: &Semaphore,
    budget: usize,
) -> SwarmSnapshot {
    let nodes = registry
        .as_node_reach()
        .map_or(0, |reach| reach.nodes_connections(target));
    let wanted = MANAGER_READS.saturating_add(nodes);
    if wanted > budget {
        // More than the whole budget: read alone, which is the least this
        // swarm needs; the budget's reserve is what is left for it.
        tracing::warn!(
            swarm = %target,
            connections = wanted,
            budget,
            "reading this swarm takes more connections than the budget; it is read alone"
        );
    }
    let permits = u32::try_from(wanted.min(budget)).unwrap_or(u32::MAX);
    // The semaphore is never closed; were it, reading unbounded beats not
    // reading.
    let _permits = connections.acquire_many(permits).await.ok();
    let snapshot = read_swarm(registry, target, scope, settings).await;
    registry.close_idle(target);
    snapshot
}

/// What the manager alone says about a swarm, and which of its listings
/// failed: what that means is the planner's to decide.
struct ManagerRead {
    backend: Arc<dyn SwarmBackend>,
    releases: Vec<sweep_swarms::ReleaseRecord>,
    cluster_id: Option<String>,
    node_count: Option<u64>,
    members: Option<Vec<NodeEntry>>,
    /// The stacks' objects by namespace; `None`: the backend does not read
    /// them.
    objects: Option<BTreeMap<String, StackObjects>>,
    /// The manager's own node id and its volumes by stack and containers,
    /// when all three read.
    volumes: Option<(String, NodeRead)>,
    /// Every service's spec references; `None`: the backend does not read
    /// them, or they could not be read (then in `failed`).
    services: Option<Vec<ServiceUse>>,
    failed: Vec<FailedRead>,
}

/// What one daemon holds: its stack volumes, and its containers using
/// named volumes.
struct NodeRead {
    volumes: VolumesByStack,
    containers: Vec<ContainerUse>,
}

/// The nodes the registry reaches: as the snapshot holds them, and as the
/// registry listed them, with what was read of each with it.
struct NodesRead {
    nodes: Option<Vec<NodeEntry>>,
    listed: Vec<ReadNode>,
    /// The node listing, when it failed.
    failed: Option<FailedRead>,
}

async fn read_swarm(
    registry: &dyn Registry,
    target: &Target,
    scope: &PayloadScope,
    settings: GatherSettings,
) -> SwarmSnapshot {
    let limit = settings.timeout;
    // The nodes are looked at while the manager is read: probing a node
    // starts with connecting to it, which needs nothing from the manager.
    // A manager that cannot be connected to ends the read at once (the
    // nodes' look is dropped): nothing of the swarm can be read without it.
    let read = tokio::try_join!(read_manager(registry, target, scope, limit), async {
        Ok(read_nodes(registry, target, limit).await)
    });
    let (manager, nodes) = match read {
        Ok(read) => read,
        Err(failed) => {
            tracing::error!(swarm = %target, error = %failed.error, "cannot connect to the swarm's manager");
            let mut snapshot = SwarmSnapshot::new(target.clone());
            snapshot.failed_reads.push(failed);
            return snapshot;
        }
    };

    // Each reached node's volumes: read with it where the registry could;
    // else now, once the manager's own are in, so that the manager's
    // daemon, when it is a reached node too, is not asked twice.
    let own = manager.volumes.as_ref().map(|(id, _)| id.as_str());
    let mut reads = BTreeMap::new();
    let mut unread_nodes = Vec::new();
    let mut later: Vec<Node> = Vec::new();
    for ReadNode { node, holdings, .. } in nodes.listed {
        if Some(node.id.as_str()) == own {
            continue;
        }
        match holdings {
            Holdings::Read(held) => {
                reads.insert(
                    node.id,
                    NodeRead {
                        volumes: held.volumes,
                        containers: held.containers,
                    },
                );
            }
            Holdings::Unread(error) => {
                tracing::warn!(swarm = %target, node = node.display_name(), %error, "the node's volumes and containers are not read");
                unread_nodes.push(UnreadNode::new(node.id, error));
            }
            Holdings::WithManager => {
                let error = "the manager's daemon, whose volumes and containers could not be read"
                    .to_owned();
                tracing::warn!(swarm = %target, node = node.display_name(), %error, "the node's volumes and containers are not read");
                unread_nodes.push(UnreadNode::new(node.id, error));
            }
            Holdings::NotRead => later.push(node),
        }
    }
    if let Some(reach) = registry.as_node_reach().filter(|_| !later.is_empty()) {
        let (read, unread) = node_volumes(reach, target, &later, limit).await;
        reads.extend(read);
        unread_nodes.extend(unread);
    }
    if let Some((id, read)) = manager.volumes {
        reads.insert(id, read);
    }
    let mut volumes = BTreeMap::new();
    let mut containers = Vec::with_capacity(reads.len());
    for (id, read) in reads {
        containers.push(NodeContainers::new(id.clone(), read.containers));
        volumes.insert(id, read.volumes);
    }
    let mut snapshot = SwarmSnapshot::new(target.clone());
    snapshot.cluster_id = manager.cluster_id;
    snapshot.releases = manager
        .releases
        .into_iter()
        .map(|r| release_entry(r, manager.objects.as_ref(), &volumes))
        .collect();
    snapshot.releases.sort_by(|a, b| a.name.cmp(&b.name));
    snapshot.nodes = nodes.nodes;
    snapshot.node_count = manager.node_count;
    snapshot.members = manager.members;
    snapshot.self_stack = manager.backend.self_stack().map(str::to_owned);
    snapshot.windows = manager.backend.windows().to_vec();
    snapshot.usage = manager
        .services
        .map(|services| Usage::new(services, containers).sorted());
    snapshot.failed_reads = manager.failed;
    snapshot.failed_reads.extend(nodes.failed);
    snapshot.failed_reads.sort();
    snapshot.unread_nodes = unread_nodes;
    snapshot
}

/// The snapshot's entry for `release`: its record versions and revisions
/// when the backend read them (a release has at least one record, so none
/// means not read), and, when the stack objects were read, its stack's objects
/// (none listed is an empty stack, a fact) with its volumes on every node
/// in `volumes` (an empty list where the node holds none of them), or no
/// volumes at all when no node's volumes were read.
fn release_entry(
    release: sweep_swarms::ReleaseRecord,
    objects: Option<&BTreeMap<String, StackObjects>>,
    volumes: &BTreeMap<String, VolumesByStack>,
) -> ReleaseEntry {
    // Only what the seam's read says: the name, the stamp, the record
    // versions and the revisions (none listed is none read, a release has
    // at least one).
    let mut entry = ReleaseEntry::new(release.name, release.owner);
    if let Some(records) = release.records.filter(|r| !r.is_empty()) {
        entry = entry.with_records(records);
    }
    if let Some(revisions) = release.revisions.filter(|r| !r.is_empty()) {
        entry = entry.with_revisions(revisions);
    }
    if let Some(stacks) = objects {
        let mut stack = stacks.get(&entry.name).cloned().unwrap_or_default();
        stack.volumes = None;
        if !volumes.is_empty() {
            let on_nodes = volumes
                .iter()
                .map(|(node, by_stack)| {
                    NodeVolumes::new(
                        node.clone(),
                        by_stack.get(&entry.name).cloned().unwrap_or_default(),
                    )
                })
                .collect();
            stack = stack.with_volumes(on_nodes);
        }
        entry = entry.with_objects(stack);
    }
    entry
}

/// Connects to `target`'s manager and reads what the snapshot needs from
/// it, recording each listing that fails; `Err` when it cannot be
/// connected to at all.
async fn read_manager(
    registry: &dyn Registry,
    target: &Target,
    scope: &PayloadScope,
    limit: Duration,
) -> Result<ManagerRead, FailedRead> {
    let backend: Arc<dyn SwarmBackend> = match timeout(limit, registry.backend(target)).await {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Err(FailedRead::new(Listing::Manager, e.to_string())),
        Err(_) => {
            return Err(FailedRead::new(
                Listing::Manager,
                format!("connecting timed out after {limit:?}"),
            ))
        }
    };

    let (listings, cluster_id, node_count, members, own_id, own_volumes) = tokio::join!(
        timeout(limit, backend.listings(scope)),
        timeout(limit, backend.cluster_id()),
        timeout(limit, backend.node_count()),
        timeout(limit, backend.members()),
        timeout(limit, backend.own_node_id()),
        timeout(limit, async {
            let (volumes, containers) =
                tokio::join!(backend.volumes_by_stack(), backend.containers());
            Ok::<_, sweep_swarms::BackendError>(match (volumes?, containers?) {
                (Some(volumes), Some(containers)) => Some(NodeRead {
                    volumes,
                    containers,
                }),
                _ => None,
            })
        }),
    );
    let mut failed = Vec::new();
    // One bound for the three: a listing cut off is each one's failure.
    let listings = listings.unwrap_or_else(|_| {
        let cut = BackendError::Other {
            message: format!("timed out after {limit:?}"),
        };
        sweep_swarms::Listings {
            releases: Err(cut.clone()),
            stacks: Err(cut.clone()),
            services: Err(cut),
        }
    });
    let (releases, objects, services) = (
        Ok(listings.releases),
        Ok(listings.stacks),
        Ok(listings.services),
    );
    let releases =
        answered(target, limit, &mut failed, Listing::Releases, releases).unwrap_or_default();
    let objects = answered(target, limit, &mut failed, Listing::StackObjects, objects).flatten();
    let cluster_id = answered(target, limit, &mut failed, Listing::ClusterId, cluster_id);
    let node_count =
        answered(target, limit, &mut failed, Listing::NodeCount, node_count).map(|n| n as u64);
    let members = answered(target, limit, &mut failed, Listing::Members, members).map(|list| {
        let mut list: Vec<NodeEntry> = list;
        list.sort();
        list.dedup_by(|a, b| a.id == b.id);
        list
    });
    // The manager's volumes only count under its own node id; without it
    // they are left out, as an unreached node's are.
    let own_id = answered(target, limit, &mut failed, Listing::ManagerVolumes, own_id).flatten();
    let own_volumes = answered(
        target,
        limit,
        &mut failed,
        Listing::ManagerVolumes,
        own_volumes,
    )
    .flatten();
    let volumes = own_id.zip(own_volumes);
    let services = answered(target, limit, &mut failed, Listing::Services, services).flatten();
    Ok(ManagerRead {
        backend,
        releases,
        cluster_id,
        node_count,
        members,
        objects,
        volumes,
        services,
        failed,
    })
}

/// The value a listing answered with, or `None` with the listing recorded
/// in `failed`, and why.
fn answered<T>(
    target: &Target,
    limit: Duration,
    failed: &mut Vec<FailedRead>,
    listing: Listing,
    answer: Result<Result<T, BackendError>, Elapsed>,
) -> Option<T> {
    let error = match answer {
        Ok(Ok(value)) => return Some(value),
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!("timed out after {limit:?}"),
    };
    tracing::warn!(swarm = %target, %listing, %error, "a listing failed");
    failed.push(FailedRead::new(listing, error));
    None
}

/// The nodes the registry reaches: `None` without node reach for this
/// swarm. A failed listing is recorded (the planner then counts none as
/// reached, rather than pretending the manager alone covers the swarm).
///
/// A registry that bounds its node listing itself answers with the nodes
/// that did answer; cut off by a shorter bound here, all of them would be
/// lost for one silent node. So this bound is set past the registry's.
async fn read_nodes(registry: &dyn Registry, target: &Target, limit: Duration) -> NodesRead {
    let mut read = NodesRead {
        nodes: None,
        listed: Vec::new(),
        failed: None,
    };
    let Some(reach) = registry.as_node_reach() else {
        return read;
    };
    let listing_limit = node_listing_limit(reach, limit);
    read.nodes = match timeout(listing_limit, reach.nodes_read(target)).await {
        Ok(Ok(None)) => None,
        Ok(Ok(Some(mut listed))) => {
            listed.sort_by(|a, b| a.node.cmp(&b.node));
            listed.dedup_by(|a, b| a.node.id == b.node.id);
            let nodes: Vec<NodeEntry> = listed.iter().map(|r| r.node.clone()).collect();
            read.listed = listed;
            Some(nodes)
        }
        Ok(Err(e)) => {
            tracing::warn!(swarm = %target, error = %e, "cannot list reachable nodes");
            read.failed = Some(FailedRead::new(Listing::Nodes, e.to_string()));
            None
        }
        Err(_) => {
            tracing::warn!(swarm = %target, after = ?listing_limit, "listing reachable nodes timed out");
            read.failed = Some(FailedRead::new(
                Listing::Nodes,
                format!("timed out after {listing_limit:?}"),
            ));
            None
        }
    };
    read
}

/// The stack volumes and the containers of each of `nodes`, at once, each
/// bounded by `limit`; a node whose volumes or containers cannot be listed
/// is recorded as unread (and named), never given an empty list, which
/// would say it holds none.
async fn node_volumes(
    reach: &dyn NodeReach,
    target: &Target,
    nodes: &[Node],
    limit: Duration,
) -> (BTreeMap<String, NodeRead>, Vec<UnreadNode>) {
    let reads = nodes.iter().map(|node| async move {
        let read = async {
            let backend = reach
                .node_backend(target, node)
                .await
                .map_err(|e| e.to_string())?;
            // One after the other, over the node's one connection: the
            // connection budget counts one per node.
            let volumes = backend
                .volumes_by_stack()
                .await
                .map_err(|e| e.to_string())?;
            let containers = backend.containers().await.map_err(|e| e.to_string())?;
            Ok::<_, String>(volumes.zip(containers))
        };
        (node, timeout(limit, read).await)
    });
    let mut volumes = BTreeMap::new();
    let mut unread = Vec::new();
    for (node, read) in join_all(reads).await {
        let error = match read {
            Ok(Ok(Some((by_stack, containers)))) => {
                volumes.insert(
                    node.id.clone(),
                    NodeRead {
                        volumes: by_stack,
                        containers,
                    },
                );
                continue;
            }
            Ok(Ok(None)) => "the registry does not read its volumes and containers".to_owned(),
            Ok(Err(error)) => error,
            Err(_) => format!("listing its volumes and containers timed out after {limit:?}"),
        };
        tracing::warn!(swarm = %target, node = node.display_name(), %error, "the node's volumes and containers are not read");
        unread.push(UnreadNode::new(node.id.clone(), error));
    }
    (volumes, unread)
}

/// The bound on node listing: `limit`, or longer than the registry's own
/// bound on it by [`NESTING_MARGIN`].
fn node_listing_limit(reach: &dyn NodeReach, limit: Duration) -> Duration {
    match reach.nodes_time_limit() {
        Some(inner) => limit.max(inner.saturating_add(NESTING_MARGIN)),
        None => limit,
    }
}
