//! Embedding the runner: a controller that brings its own way of reaching
//! swarms.
//!
//! `sweep-runner` gathers a snapshot and carries a plan out through the
//! `sweep-swarms` seam only. A controller that reaches its swarms some
//! other way than the Docker API (an agent, a cloud API, a test world)
//! implements the seam and hands it over:
//! - [`Registry`] hands out one [`SwarmBackend`] per swarm, the same `Arc`
//!   each time;
//! - [`Lister`] says which swarms there are (without it only the local
//!   swarm, `""`, is read);
//! - [`NodeReach`] reaches each node's own daemon, where a stack's volumes
//!   live, through a [`NodeBackend`].
//!
//! Here the swarms are an in-memory world shared by every "connection".
//! Two swarms, `eu` and `us`, each run a release named `web`: on `eu` it
//! belongs to the live application `shop`, on `us` to `shop-legacy`, which
//! has left the app set. Release names are unique within a swarm only, so
//! `us/web` goes and `eu/web` stays. `us/metrics` was deployed by hand and
//! carries no owner stamp: it stays too.
//!
//! Run it with `cargo run -p sweep-examples --example embed_registry`.

use std::collections::BTreeMap;
use std::error::Error;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use sweep_core::sweep::{report_text, ReleaseOutcome};
use sweep_core::{plan, AppSet, Application, Policy};
use sweep_runner::{execute, gather, ExecuteSettings, GatherSettings};
use sweep_swarms::{
    BackendError, ContainerUse, Lister, Node, NodeBackend, NodeReach, ObjectRef, Registry,
    RegistryError, ReleaseRecord, ServiceEntry, ServiceUse, StackObjects, StackPart, SwarmBackend,
    Target,
};

/// The stack the controller itself runs as: never removed.
const SELF_STACK: &str = "swarm-sweep";

/// One swarm of the world.
#[derive(Default)]
struct Swarm {
    cluster_id: String,
    /// Release records: each release's owner stamp (of its newest record).
    records: BTreeMap<String, Option<String>>,
    /// Each stack's swarm-scoped objects, by stack namespace.
    stacks: BTreeMap<String, Vec<(StackPart, String)>>,
    /// Each node's own daemon, by node id: its volumes (name, stack).
    /// The first node is the manager.
    nodes: BTreeMap<String, Vec<(String, String)>>,
}

impl Swarm {
    fn new(cluster_id: &str, nodes: &[&str]) -> Self {
        Swarm {
            cluster_id: cluster_id.to_owned(),
            nodes: nodes.iter().map(|n| (n.to_string(), Vec::new())).collect(),
            ..Swarm::default()
        }
    }

    /// Deploys `release` as a service, a network and a volume on every
    /// node, its record stamped `owner`.
    fn deploy(mut self, release: &str, owner: Option<&str>) -> Self {
        self.records
            .insert(release.to_owned(), owner.map(str::to_owned));
        self.stacks.insert(
            release.to_owned(),
            vec![
                (StackPart::Services, format!("{release}_app")),
                (StackPart::Networks, format!("{release}_net")),
            ],
        );
        for volumes in self.nodes.values_mut() {
            volumes.push((format!("{release}_data"), release.to_owned()));
        }
        self
    }

    fn has_services(&self, stack: &str) -> bool {
        self.stacks
            .get(stack)
            .is_some_and(|objects| objects.iter().any(|(p, _)| *p == StackPart::Services))
    }

    fn volumes_of(&self, node: &str, stack: &str) -> Vec<String> {
        let on_node = self.nodes.get(node).into_iter().flatten();
        on_node
            .filter(|(_, s)| s == stack)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Removes volume `name` from `node`'s daemon. Already gone is done; a
    /// volume whose stack still has services is in use (its tasks mount it).
    fn remove_volume(&mut self, node: &str, name: &str) -> Result<(), BackendError> {
        let Some(volumes) = self.nodes.get(node) else {
            return Ok(());
        };
        let Some((_, stack)) = volumes.iter().find(|(n, _)| n == name) else {
            return Ok(());
        };
        if self.has_services(stack) {
            return Err(BackendError::InUse {
                object: format!("volume {name:?}"),
                message: "mounted by a running task".to_owned(),
            });
        }
        if let Some(volumes) = self.nodes.get_mut(node) {
            volumes.retain(|(n, _)| n != name);
        }
        Ok(())
    }
}

/// The whole world, shared by every connection to it.
type World = Arc<Mutex<BTreeMap<String, Swarm>>>;

/// A connection to one daemon of one swarm: its manager's, or a node's.
struct Connection {
    world: World,
    swarm: String,
    /// The node whose daemon this is (for a manager, the manager's node).
    node: String,
}

impl Connection {
    /// Runs `f` on this connection's swarm. A swarm gone from the world is
    /// a daemon that no longer answers, never an empty swarm.
    fn with<T>(&self, f: impl FnOnce(&mut Swarm) -> T) -> Result<T, BackendError> {
        let mut world = lock(&self.world);
        match world.get_mut(&self.swarm) {
            Some(swarm) => Ok(f(swarm)),
            None => Err(BackendError::Unreachable {
                endpoint: format!("memory://{}/{}", self.swarm, self.node),
                message: "no such swarm".to_owned(),
            }),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The manager's view: what only a manager can do, and its own volumes.
#[async_trait]
impl SwarmBackend for Connection {
    async fn releases(&self) -> Result<Vec<ReleaseRecord>, BackendError> {
        self.with(|s| {
            let records = s.records.iter();
            records
                .map(|(name, owner)| ReleaseRecord::new(name.clone(), owner.clone()))
                .collect()
        })
    }

    async fn remove_stack_part(
        &self,
        release: &str,
        part: StackPart,
        objects: &[ObjectRef],
    ) -> Result<(), BackendError> {
        // Checked before touching anything.
        if release == SELF_STACK {
            return Err(BackendError::OwnStack {
                release: release.to_owned(),
            });
        }
        self.with(|s| {
            // Exactly the objects named (an object's id is its name here):
            // the sweep has left out whatever another workload uses. Tasks
            // stop the moment their service goes in this world, so `Tasks`
            // (which removes nothing) is always answered done.
            if let Some(stack) = s.stacks.get_mut(release) {
                stack.retain(|(p, name)| {
                    !(*p == part && objects.iter().any(|o| o.handle() == name))
                });
                if stack.is_empty() {
                    s.stacks.remove(release);
                }
            }
        })
    }

    // What a deletion is decided from, and what the sweep reads again
    // before each removal: the stacks' objects with their ids, and what
    // every service names. A backend that leaves these unread gets
    // nothing removed but its services.
    async fn stack_objects(&self) -> Result<Option<BTreeMap<String, StackObjects>>, BackendError> {
        self.with(|s| {
            let stacks = s.stacks.iter().map(|(release, objects)| {
                let of = |part: StackPart| objects.iter().filter(move |(p, _)| *p == part);
                let stack = StackObjects::new(
                    of(StackPart::Services)
                        .map(|(_, n)| ServiceEntry::new(n, n, 1))
                        .collect(),
                    of(StackPart::Networks)
                        .map(|(_, n)| ObjectRef::new(n, n))
                        .collect(),
                    Vec::new(),
                    Vec::new(),
                );
                (release.clone(), stack)
            });
            Some(stacks.collect())
        })
    }

    async fn service_uses(&self) -> Result<Option<Vec<ServiceUse>>, BackendError> {
        self.with(|s| {
            let services = s.stacks.iter().flat_map(|(release, objects)| {
                objects
                    .iter()
                    .filter(|(p, _)| *p == StackPart::Services)
                    .map(move |(_, n)| ServiceUse::new(n, n).in_stack(release))
            });
            Some(services.collect())
        })
    }

    // No container of this world outlives its service.
    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        self.with(|_| Some(Vec::new()))
    }

    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        self.with(|s| s.volumes_of(&self.node, release))
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        self.with(|s| s.remove_volume(&self.node, name))?
    }

    async fn remove_release_records(&self, release: &str) -> Result<(), BackendError> {
        // One record per release here; a real backend removes the newest last.
        self.with(|s| {
            s.records.remove(release);
        })
    }

    async fn node_count(&self) -> Result<usize, BackendError> {
        self.with(|s| s.nodes.len())
    }

    async fn node_ids(&self) -> Result<Vec<String>, BackendError> {
        self.with(|s| s.nodes.keys().cloned().collect())
    }

    async fn cluster_id(&self) -> Result<String, BackendError> {
        self.with(|s| s.cluster_id.clone())
    }

    fn self_stack(&self) -> Option<&str> {
        Some(SELF_STACK)
    }
}

/// One node's own daemon: its volumes, nothing a manager does.
#[async_trait]
impl NodeBackend for Connection {
    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        self.with(|s| s.volumes_of(&self.node, release))
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        self.with(|s| s.remove_volume(&self.node, name))?
    }

    async fn volumes_by_stack(&self) -> Result<Option<sweep_swarms::VolumesByStack>, BackendError> {
        self.with(|s| {
            let mut by_stack = sweep_swarms::VolumesByStack::new();
            for (name, stack) in s.nodes.get(&self.node).into_iter().flatten() {
                by_stack
                    .entry(stack.clone())
                    .or_default()
                    .push(name.clone());
            }
            Some(by_stack)
        })
    }

    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        self.with(|_| Some(Vec::new()))
    }
}

/// The controller's registry: connections made on first use and kept, so
/// every call for one swarm (or node) gets the same `Arc`.
struct MemoryRegistry {
    world: World,
    connections: Mutex<BTreeMap<(String, String), Arc<Connection>>>,
}

impl MemoryRegistry {
    fn new(world: World) -> Self {
        MemoryRegistry {
            world,
            connections: Mutex::new(BTreeMap::new()),
        }
    }

    /// The kept connection to `node`'s daemon on `swarm`; `None` for a
    /// name not in the world, which is never resolved to another swarm.
    fn connect(&self, swarm: &str, node: Option<&str>) -> Option<Arc<Connection>> {
        let node = {
            let world = lock(&self.world);
            let nodes = &world.get(swarm)?.nodes;
            match node {
                Some(node) => nodes.get_key_value(node)?.0.clone(),
                // The manager: the swarm's first node.
                None => nodes.keys().next()?.clone(),
            }
        };
        let mut connections = lock(&self.connections);
        let connection = connections
            .entry((swarm.to_owned(), node.clone()))
            .or_insert_with(|| {
                Arc::new(Connection {
                    world: self.world.clone(),
                    swarm: swarm.to_owned(),
                    node,
                })
            });
        Some(connection.clone())
    }
}

#[async_trait]
impl Registry for MemoryRegistry {
    async fn backend(&self, target: &Target) -> Result<Arc<dyn SwarmBackend>, RegistryError> {
        match self.connect(target.as_str(), None) {
            Some(manager) => Ok(manager),
            None => Err(RegistryError::UnknownSwarm {
                swarm: target.as_str().to_owned(),
            }),
        }
    }

    fn as_lister(&self) -> Option<&dyn Lister> {
        Some(self)
    }

    fn as_node_reach(&self) -> Option<&dyn NodeReach> {
        Some(self)
    }
}

#[async_trait]
impl Lister for MemoryRegistry {
    async fn swarms(&self) -> Result<Vec<Target>, RegistryError> {
        Ok(lock(&self.world).keys().map(Target::new).collect())
    }
}

#[async_trait]
impl NodeReach for MemoryRegistry {
    /// Every node of the world answers, as the node it is, and is in its
    /// swarm's node list: all are reached. A real registry lists only the
    /// daemons that answered now with a node id the manager lists.
    async fn nodes(&self, target: &Target) -> Result<Option<Vec<Node>>, RegistryError> {
        let world = lock(&self.world);
        let swarm = world
            .get(target.as_str())
            .ok_or_else(|| RegistryError::UnknownSwarm {
                swarm: target.as_str().to_owned(),
            })?;
        let nodes = swarm.nodes.keys().map(|id| Node::new(id.clone(), ""));
        Ok(Some(nodes.collect()))
    }

    async fn node_backend(
        &self,
        target: &Target,
        node: &Node,
    ) -> Result<Arc<dyn NodeBackend>, RegistryError> {
        match self.connect(target.as_str(), Some(&node.id)) {
            Some(daemon) => Ok(daemon),
            None => Err(RegistryError::UnknownNode {
                swarm: target.as_str().to_owned(),
                node: node.id.clone(),
            }),
        }
    }
}

/// What a swarm holds, as lines for people and for the assertions.
fn contents(world: &World, swarm: &str) -> Vec<String> {
    let world = lock(world);
    let Some(s) = world.get(swarm) else {
        return Vec::new();
    };
    let records = s.records.keys().map(|r| format!("record {r}"));
    let objects = s.stacks.values().flatten();
    let objects = objects.map(|(part, name)| format!("{part} {name}"));
    let volumes = s.nodes.iter().flat_map(|(node, volumes)| {
        volumes
            .iter()
            .map(move |(name, _)| format!("volume {name} on {node}"))
    });
    records.chain(objects).chain(volumes).collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let swarms = BTreeMap::from([
        (
            "eu".to_owned(),
            Swarm::new("cluster-eu", &["eu-1", "eu-2"])
                .deploy("web", Some("cd/default/shop:release/web")),
        ),
        (
            "us".to_owned(),
            Swarm::new("cluster-us", &["us-1", "us-2"])
                .deploy("web", Some("cd/default/shop-legacy:release/web"))
                .deploy("metrics", None),
        ),
    ]);
    let world: World = Arc::new(Mutex::new(swarms));
    let registry = MemoryRegistry::new(world.clone());
    let eu_before = contents(&world, "eu");

    // The app set as the controller loaded it: `shop` deploys `web` to
    // `eu`; `shop-legacy` is gone from it.
    let apps = AppSet::new(true, vec![Application::reconciled("shop", "eu", &["web"])]);
    let policy = Policy::new("default", true, None);
    let snapshot = gather(&registry, policy, apps, GatherSettings::default()).await;
    let plan = plan(&snapshot)?;
    for deletion in &plan.deletions {
        println!(
            "plan: delete {}/{} (application {}: {}, volumes {})",
            deletion.swarm,
            deletion.release,
            deletion.application,
            deletion.reason,
            deletion.volumes
        );
    }
    for spared in &plan.spared {
        println!(
            "plan: keep {}/{} ({})",
            spared.swarm, spared.release, spared.reason
        );
    }

    let report = execute(&registry, &plan, ExecuteSettings::default()).await;
    print!("\n{}", report_text(&report));
    for swarm in ["eu", "us"] {
        println!("\nleft on {swarm}:");
        for line in contents(&world, swarm) {
            println!("  {line}");
        }
    }

    // `us/web` went from every node, records last; `eu/web` and
    // `us/metrics` are whole.
    assert!(report.all_done(), "the sweep did not finish");
    assert_eq!(report.releases.len(), 1);
    let web = &report.releases[0];
    assert_eq!((web.swarm.as_str(), web.release.as_str()), ("us", "web"));
    assert_eq!(web.outcome, ReleaseOutcome::Deleted);
    assert_eq!(contents(&world, "eu"), eu_before);
    assert_eq!(
        contents(&world, "us"),
        [
            "record metrics",
            "services metrics_app",
            "networks metrics_net",
            "volume metrics_data on us-1",
            "volume metrics_data on us-2",
        ]
    );
    Ok(())
}
