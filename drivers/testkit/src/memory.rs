//! An in-memory [`Registry`] of swarms, for tests.
//!
//! Build each swarm with [`MemorySwarm`], add it to a [`MemoryRegistry`], hand
//! the registry to the code under test, and inspect afterwards what remains
//! per swarm ([`MemoryRegistry::stack`], [`MemoryRegistry::records`]) and per
//! node ([`MemoryRegistry::volumes`]), and which calls were made in which
//! order ([`MemoryRegistry::events`]).
//!
//! The model follows a real swarm where it matters to a sweep:
//! - the first node added to a swarm is its manager: the [`SwarmBackend`]'s
//!   volume calls act on that node's volumes;
//! - a volume labelled with a release is in use while that release's stack
//!   still has services, as a real volume is while tasks mount it;
//! - removing what is already gone succeeds;
//! - unreachable nodes still count in the manager's node list, which
//!   [`SwarmBackend::members`] reads with hostnames, as the docker backend
//!   does;
//! - releases carry every record's config id and version index and every
//!   record as a revision (its labels, and what its data says for the
//!   releases in scope, read by the core's `read_payload` as the docker
//!   backend reads it), and the stack objects list each service's id,
//!   version and keep label, and each secret's and config's version and
//!   created marker
//!   ([`MemoryRegistry::restamp_record`] and
//!   [`MemoryRegistry::update_service`] raise versions as a real update
//!   does); volumes are listed by stack per node;
//! - removing a release's services reports its containers gone
//!   ([`ContainerGone`]) on the container events of every node holding the
//!   release's volumes (and of the manager when it holds some, or when the
//!   swarm has no node reach), to the subscribers of the moment, as a
//!   daemon reports only what happens after a subscription.
//!
//! The knobs here model the world (a manager or node down, a node that
//! vanishes after listing, a volume a container holds, a record removal cut
//! off between two records). Faults that any registry can suffer (a call
//! that fails, times out or is slow) are injected by wrapping the registry
//! in [`Faulty`](crate::Faulty) instead, so that the same schedules apply
//! to the real backend too.
//!
//! Everything is behind one [`std::sync::Mutex`]; clones of a registry share
//! state, so a test can keep one clone for inspection.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use sweep_core::record::{read_payload, record_name, RevisionRead};
use sweep_swarms::{
    BackendError, ContainerEvents, ContainerGone, ContainerUse, Lister, Node, NodeBackend,
    NodeReach, ObjectRef, ObjectVersion, PayloadScope, Registry, RegistryError, ReleaseRecord,
    ServiceEntry, ServiceUse, StackObjects, StackPart, SwarmBackend, Target, VolumesByStack,
};
use tokio::sync::broadcast;

use crate::Call;

/// One release record (one revision) on a memory swarm.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryRecord {
    /// The release the record belongs to.
    pub release: String,
    /// The record's revision; the highest one carries the current owner.
    pub revision: u64,
    /// The owner stamp, if any.
    pub owner: Option<String>,
    /// The record config's id.
    pub id: String,
    /// The record config's version index, raised on every change to it.
    pub version: u64,
    /// The record config's data (gzip of the engine's YAML document);
    /// `None` holds none, which reads as no record data either.
    pub data: Option<Vec<u8>>,
}

impl MemoryRecord {
    /// Revision `revision` of `release`'s record, stamped `owner`: config
    /// `swarmcli.release.<release>.v<revision>`, the engine's name, at
    /// version 1.
    pub fn new(release: impl Into<String>, revision: u64, owner: Option<&str>) -> Self {
        let release = release.into();
        MemoryRecord {
            id: record_name(&release, revision),
            release,
            revision,
            owner: owner.map(str::to_owned),
            version: 1,
            data: None,
        }
    }

    /// Holding `data`: what a read of its release's payloads decodes.
    pub fn with_data(mut self, data: impl Into<Vec<u8>>) -> Self {
        self.data = Some(data.into());
        self
    }

    /// With config id `id`.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// At version index `version`.
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = version;
        self
    }
}

/// The swarm-scoped objects of one stack.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryStack {
    /// Service names.
    pub services: BTreeSet<String>,
    /// Network names.
    pub networks: BTreeSet<String>,
    /// Secret names.
    pub secrets: BTreeSet<String>,
    /// Config names (stack configs, never release records).
    pub configs: BTreeSet<String>,
    /// The raw [`KEEP_LABEL`](sweep_swarms::KEEP_LABEL) value of each
    /// service that carries one, by service name.
    pub keep: BTreeMap<String, String>,
    /// Each service's version index, by service name; 1 when absent.
    pub versions: BTreeMap<String, u64>,
    /// The controller's created marker (`com.swarmcli.cd.created`) of each
    /// config that carries one, by config name.
    pub marked_configs: BTreeMap<String, String>,
    /// The same of each secret that carries one, by secret name.
    pub marked_secrets: BTreeMap<String, String>,
    /// The networks, secrets and configs each service named here uses, by
    /// service name; a service not named here uses every object of its
    /// stack (the model of a whole stack, whose parts wait for all of its
    /// services).
    pub uses: BTreeMap<String, BTreeSet<String>>,
}

impl MemoryStack {
    /// An empty stack.
    pub fn new() -> Self {
        MemoryStack::default()
    }

    /// With one more service.
    pub fn service(mut self, name: impl Into<String>) -> Self {
        self.services.insert(name.into());
        self
    }

    /// With one more service, using only the stack objects `uses` (by
    /// name): a live release's current service, which leaves the objects
    /// its stack dropped free once the services that used them are gone.
    pub fn service_using(mut self, name: impl Into<String>, uses: &[&str]) -> Self {
        let name = name.into();
        self.uses
            .insert(name.clone(), uses.iter().map(|u| (*u).to_owned()).collect());
        self.services.insert(name);
        self
    }

    /// Whether a remaining service of the stack uses the object `name`.
    fn holds(&self, name: &str) -> bool {
        self.services.iter().any(|service| {
            self.uses
                .get(service)
                .is_none_or(|uses| uses.contains(name))
        })
    }

    /// With one more service, carrying the keep label with raw value `keep`.
    pub fn kept_service(mut self, name: impl Into<String>, keep: impl Into<String>) -> Self {
        let name = name.into();
        self.keep.insert(name.clone(), keep.into());
        self.services.insert(name);
        self
    }

    /// The id the model gives service `name`.
    pub fn service_id(name: &str) -> String {
        format!("svc-{name}")
    }

    /// The id the model gives the network, secret or config `name` of
    /// `part`.
    pub fn object_id(part: StackPart, name: &str) -> String {
        format!("{part}-{name}")
    }

    /// The objects of `part` as the backend lists them: networks by id and
    /// name, secrets and configs at version 1 and with their markers.
    fn refs(&self, part: StackPart) -> Vec<ObjectRef> {
        let (names, markers) = match part {
            StackPart::Networks => (&self.networks, None),
            StackPart::Secrets => (&self.secrets, Some(&self.marked_secrets)),
            StackPart::Configs => (&self.configs, Some(&self.marked_configs)),
            StackPart::Services | StackPart::Tasks => return Vec::new(),
        };
        names
            .iter()
            .map(|n| {
                let object = ObjectRef::new(MemoryStack::object_id(part, n), n.clone());
                match markers {
                    None => object,
                    Some(markers) => match markers.get(n) {
                        Some(marker) => object.with_version(1).with_cd_created(marker.clone()),
                        None => object.with_version(1),
                    },
                }
            })
            .collect()
    }

    /// The services as the backend lists them.
    fn service_entries(&self) -> Vec<ServiceEntry> {
        self.services
            .iter()
            .map(|name| {
                let version = self.versions.get(name).copied().unwrap_or(1);
                let entry = ServiceEntry::new(MemoryStack::service_id(name), name.clone(), version);
                match self.keep.get(name) {
                    Some(keep) => entry.with_keep(keep.clone()),
                    None => entry,
                }
            })
            .collect()
    }

    /// With one more network.
    pub fn network(mut self, name: impl Into<String>) -> Self {
        self.networks.insert(name.into());
        self
    }

    /// With one more secret.
    pub fn secret(mut self, name: impl Into<String>) -> Self {
        self.secrets.insert(name.into());
        self
    }

    /// With one more config.
    pub fn config(mut self, name: impl Into<String>) -> Self {
        self.configs.insert(name.into());
        self
    }

    /// With one more config, carrying the controller's created marker
    /// with value `marker`.
    pub fn marked_config(mut self, name: impl Into<String>, marker: impl Into<String>) -> Self {
        let name = name.into();
        self.marked_configs.insert(name.clone(), marker.into());
        self.configs.insert(name);
        self
    }

    /// With one more secret, carrying the controller's created marker
    /// with value `marker`.
    pub fn marked_secret(mut self, name: impl Into<String>, marker: impl Into<String>) -> Self {
        let name = name.into();
        self.marked_secrets.insert(name.clone(), marker.into());
        self.secrets.insert(name);
        self
    }

    /// Whether the stack holds no object at all.
    pub fn is_empty(&self) -> bool {
        self.services.is_empty()
            && self.networks.is_empty()
            && self.secrets.is_empty()
            && self.configs.is_empty()
    }
}

/// A volume on one node.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryVolume {
    /// The volume name, unique on its node.
    pub name: String,
    /// The release whose stack created it (its stack namespace label).
    pub release: Option<String>,
}

impl MemoryVolume {
    /// Volume `name`, of `release`'s stack if any.
    pub fn new(name: impl Into<String>, release: Option<&str>) -> Self {
        MemoryVolume {
            name: name.into(),
            release: release.map(str::to_owned),
        }
    }
}

/// A node to add to a [`MemorySwarm`].
#[derive(Clone, Debug)]
pub struct MemoryNode {
    id: String,
    hostname: String,
    reachable: bool,
    volumes: Vec<MemoryVolume>,
    containers: Vec<ContainerUse>,
}

impl MemoryNode {
    /// A reachable node with swarm node id `id`.
    pub fn new(id: impl Into<String>, hostname: impl Into<String>) -> Self {
        MemoryNode {
            id: id.into(),
            hostname: hostname.into(),
            reachable: true,
            volumes: Vec::new(),
            containers: Vec::new(),
        }
    }

    /// With a container (running or stopped) that uses the volumes it
    /// names: the engine refuses to remove those volumes on this node.
    pub fn container(mut self, container: ContainerUse) -> Self {
        self.containers.push(container);
        self
    }

    /// With a volume `name` of `release`'s stack (or of no stack).
    pub fn volume(mut self, name: impl Into<String>, release: Option<&str>) -> Self {
        self.volumes.push(MemoryVolume::new(name, release));
        self
    }

    /// In the manager's node list, but not reachable individually.
    pub fn unreachable(mut self) -> Self {
        self.reachable = false;
        self
    }
}

/// A swarm to add to a [`MemoryRegistry`].
#[derive(Clone, Debug)]
pub struct MemorySwarm {
    name: String,
    cluster_id: String,
    nodes: Vec<MemoryNode>,
    self_stack: Option<String>,
    records: Vec<MemoryRecord>,
    stacks: BTreeMap<String, MemoryStack>,
    workloads: Vec<ServiceUse>,
    node_reach: bool,
    object_reads: bool,
}

impl MemorySwarm {
    /// A swarm the registry knows as `name` (`""`: the local swarm), with
    /// cluster id `cluster_id`, no nodes and nothing deployed. Its nodes can
    /// be reached individually unless [`MemorySwarm::without_node_reach`].
    pub fn new(name: impl Into<String>, cluster_id: impl Into<String>) -> Self {
        MemorySwarm {
            name: name.into(),
            cluster_id: cluster_id.into(),
            nodes: Vec::new(),
            self_stack: None,
            records: Vec::new(),
            stacks: BTreeMap::new(),
            workloads: Vec::new(),
            node_reach: true,
            object_reads: true,
        }
    }

    /// With a service beside the stacks (any stack or none, any replica
    /// count) whose spec names what `service` says: the engine refuses to
    /// remove a network, secret or config it names.
    pub fn workload(mut self, service: ServiceUse) -> Self {
        self.workloads.push(service);
        self
    }

    /// With one more node; the first node added is the manager.
    pub fn node(mut self, node: MemoryNode) -> Self {
        self.nodes.push(node);
        self
    }

    /// The controller runs as `stack` on this swarm.
    pub fn self_stack(mut self, stack: impl Into<String>) -> Self {
        self.self_stack = Some(stack.into());
        self
    }

    /// With one more release record.
    pub fn record(mut self, record: MemoryRecord) -> Self {
        self.records.push(record);
        self
    }

    /// With `release`'s stack holding `stack`.
    pub fn stack(mut self, release: impl Into<String>, stack: MemoryStack) -> Self {
        self.stacks.insert(release.into(), stack);
        self
    }

    /// The registry cannot reach this swarm's nodes individually:
    /// [`NodeReach::nodes`] answers `None`.
    pub fn without_node_reach(mut self) -> Self {
        self.node_reach = false;
        self
    }

    /// Its backends read what the seam lets a backend leave unread, as one
    /// that does not implement those calls: releases without record
    /// versions, and `None` for stack objects, volumes by stack and the
    /// manager's own node id.
    pub fn without_object_reads(mut self) -> Self {
        self.object_reads = false;
        self
    }
}

/// One backend call, as logged.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryEvent {
    /// The swarm's name.
    pub swarm: String,
    /// `None` for the manager's [`SwarmBackend`], the node id for a
    /// [`NodeBackend`].
    pub node: Option<String>,
    /// Which call.
    pub op: Call,
    /// The call's argument (release or volume name), empty when it has none.
    pub subject: String,
    /// What the call returned, without its value.
    pub result: Result<(), BackendError>,
}

#[derive(Debug)]
struct VolumeState {
    release: Option<String>,
    in_use_for: u32,
}

impl NodeState {
    fn from_spec(n: MemoryNode) -> Self {
        NodeState {
            id: n.id,
            hostname: n.hostname,
            reachable: n.reachable,
            vanish_after_listing: false,
            volumes: n
                .volumes
                .into_iter()
                .map(|v| {
                    (
                        v.name,
                        VolumeState {
                            release: v.release,
                            in_use_for: 0,
                        },
                    )
                })
                .collect(),
            containers: n.containers,
        }
    }
}

#[derive(Debug)]
struct NodeState {
    id: String,
    hostname: String,
    reachable: bool,
    vanish_after_listing: bool,
    volumes: BTreeMap<String, VolumeState>,
    containers: Vec<ContainerUse>,
}

#[derive(Debug)]
struct SwarmState {
    cluster_id: String,
    nodes: Vec<NodeState>,
    self_stack: Option<String>,
    records: Vec<MemoryRecord>,
    stacks: BTreeMap<String, MemoryStack>,
    workloads: Vec<ServiceUse>,
    node_reach: bool,
    object_reads: bool,
    manager_unreachable: bool,
    /// The next record removal stops after this many records, then fails.
    record_interruption: Option<(usize, BackendError)>,
    /// Every record removed, in the order removed.
    removed_records: Vec<MemoryRecord>,
}

impl SwarmState {
    fn from_spec(spec: MemorySwarm) -> Self {
        SwarmState {
            cluster_id: spec.cluster_id,
            nodes: spec.nodes.into_iter().map(NodeState::from_spec).collect(),
            self_stack: spec.self_stack,
            records: spec
                .records
                .into_iter()
                .fold(Vec::new(), |mut records, record| {
                    push_record(&mut records, record);
                    records
                }),
            stacks: spec.stacks,
            workloads: spec.workloads,
            node_reach: spec.node_reach,
            object_reads: spec.object_reads,
            manager_unreachable: false,
            record_interruption: None,
            removed_records: Vec::new(),
        }
    }

    /// Removes `release`'s records oldest revision first and the newest
    /// last, as every backend must, so that an interrupted removal leaves
    /// the newest stamp to judge the release; stops (and fails) where an
    /// interruption was set up.
    fn remove_release_records(&mut self, release: &str) -> Result<(), BackendError> {
        let interruption = self.record_interruption.take();
        let mut order: Vec<usize> = (0..self.records.len())
            .filter(|&i| self.records[i].release == release)
            .collect();
        // Records of one revision by config name, as on every backend: the
        // order the records were added (or a daemon lists them) in decides
        // nothing.
        order.sort_by(|&a, &b| {
            let (a, b) = (&self.records[a], &self.records[b]);
            (a.revision, &a.id).cmp(&(b.revision, &b.id))
        });
        let removed = interruption.as_ref().map_or(order.len(), |(n, _)| *n);
        order.truncate(removed);
        for &i in &order {
            self.removed_records.push(self.records[i].clone());
        }
        let mut index = 0;
        self.records.retain(|_| {
            let keep = !order.contains(&index);
            index += 1;
            keep
        });
        interruption.map_or(Ok(()), |(_, error)| Err(error))
    }

    /// The node a call acts on: the named one, or the manager (first node).
    fn node_mut(&mut self, node: Option<&str>) -> Option<&mut NodeState> {
        match node {
            Some(id) => self.nodes.iter_mut().find(|n| n.id == id),
            None => self.nodes.first_mut(),
        }
    }

    /// Every release, with the data of the records of those in `payloads`
    /// read as the docker backend reads it ([`read_payload`]).
    fn releases(&self, payloads: &PayloadScope) -> Result<Vec<ReleaseRecord>, BackendError> {
        let mut by_release: BTreeMap<&str, Vec<&MemoryRecord>> = BTreeMap::new();
        for record in &self.records {
            by_release.entry(&record.release).or_default().push(record);
        }
        let mut releases = Vec::with_capacity(by_release.len());
        for (name, records) in by_release {
            let Some(top) = records.iter().map(|r| r.revision).max() else {
                continue;
            };
            let mut newest = records.iter().filter(|r| r.revision == top);
            let Some(first) = newest.next() else {
                continue;
            };
            if newest.any(|r| r.owner != first.owner) {
                // Two different stamps on the newest revision: either could
                // be the real one, so neither may be believed.
                return Err(BackendError::Invalid {
                    what: format!("release records of {name:?}"),
                    message: format!("two records of revision {top} carry different owners"),
                });
            }
            let mut release = ReleaseRecord::new(name, first.owner.clone());
            if self.object_reads {
                let in_scope = payloads.contains(name);
                release = release
                    .with_records(
                        records
                            .iter()
                            .map(|r| ObjectVersion::new(r.id.clone(), r.version))
                            .collect(),
                    )
                    .with_revisions(
                        records
                            .iter()
                            .map(|r| {
                                // The config's name is its id in this model,
                                // its revision label the number as written.
                                let read = RevisionRead::new(
                                    r.id.clone(),
                                    Some(r.revision.to_string()),
                                    r.owner.clone(),
                                );
                                if in_scope {
                                    let data = r.data.as_deref().unwrap_or_default();
                                    read.with_payload(read_payload(data, name))
                                } else {
                                    read
                                }
                            })
                            .collect(),
                    );
            }
            releases.push(release);
        }
        Ok(releases)
    }

    /// Every stack holding objects, by namespace; `None` when the swarm's
    /// backends do not read them.
    fn stack_objects(&self) -> Option<BTreeMap<String, StackObjects>> {
        if !self.object_reads {
            return None;
        }
        let stacks = self
            .stacks
            .iter()
            .filter(|(_, stack)| !stack.is_empty())
            .map(|(release, stack)| {
                let objects = StackObjects::new(
                    stack.service_entries(),
                    stack.refs(StackPart::Networks),
                    stack.refs(StackPart::Secrets),
                    stack.refs(StackPart::Configs),
                );
                (release.clone(), objects)
            })
            .collect();
        Some(stacks)
    }

    /// Every service: the stacks' own (naming nothing the model tracks)
    /// and the workloads beside them; `None` when the swarm's backends do
    /// not read them.
    fn service_uses(&self) -> Option<Vec<ServiceUse>> {
        if !self.object_reads {
            return None;
        }
        let mut services: Vec<ServiceUse> = self
            .stacks
            .iter()
            .flat_map(|(release, stack)| {
                stack.services.iter().map(move |name| {
                    ServiceUse::new(MemoryStack::service_id(name), name).in_stack(release)
                })
            })
            .collect();
        services.extend(self.workloads.iter().cloned());
        Some(services)
    }

    /// The containers of `node` (`None`: the manager) that use a volume;
    /// `None` when the swarm's backends do not read them.
    fn containers(&mut self, node: Option<&str>) -> Option<Vec<ContainerUse>> {
        if !self.object_reads {
            return None;
        }
        Some(
            self.node_mut(node)
                .map(|n| n.containers.clone())
                .unwrap_or_default(),
        )
    }

    /// Whether a workload's spec names the `part` object `object`, as the
    /// engine checks before removing a network, secret or config.
    fn named_by_workload(&self, part: StackPart, object: &ObjectRef) -> Option<&ServiceUse> {
        self.workloads.iter().find(|w| {
            let refs = match part {
                StackPart::Networks => &w.networks,
                StackPart::Secrets => &w.secrets,
                StackPart::Configs => &w.configs,
                StackPart::Services | StackPart::Tasks => return false,
            };
            refs.iter().any(|r| object.is_named_by(r))
        })
    }

    /// The stack volumes of `node` (`None`: the manager), by namespace;
    /// `None` when the swarm's backends do not list them.
    fn volumes_by_stack(&mut self, node: Option<&str>) -> Option<VolumesByStack> {
        if !self.object_reads {
            return None;
        }
        let mut by_stack = VolumesByStack::new();
        if let Some(n) = self.node_mut(node) {
            for (name, volume) in &n.volumes {
                if let Some(release) = &volume.release {
                    by_stack
                        .entry(release.clone())
                        .or_default()
                        .push(name.clone());
                }
            }
        }
        Some(by_stack)
    }

    fn stack_volumes(&mut self, node: Option<&str>, release: &str) -> Vec<String> {
        self.node_mut(node)
            .map(|n| {
                n.volumes
                    .iter()
                    .filter(|(_, v)| v.release.as_deref() == Some(release))
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn remove_volume(&mut self, node: Option<&str>, name: &str) -> Result<(), BackendError> {
        let stacks = &self.stacks;
        let Some(n) = (match node {
            Some(id) => self.nodes.iter_mut().find(|n| n.id == id),
            None => self.nodes.first_mut(),
        }) else {
            return Ok(());
        };
        let Some(volume) = n.volumes.get_mut(name) else {
            return Ok(());
        };
        // The engine's one check: a container on this node, running or
        // stopped, that uses the volume.
        if let Some(c) = n
            .containers
            .iter()
            .find(|c| c.volumes.iter().any(|v| v == name))
        {
            return Err(BackendError::InUse {
                object: format!("volume {name:?}"),
                message: format!("in use by container {:?}", c.name),
            });
        }
        if volume.in_use_for > 0 {
            volume.in_use_for -= 1;
            return Err(BackendError::InUse {
                object: format!("volume {name:?}"),
                message: "mounted by a container".into(),
            });
        }
        if let Some(release) = &volume.release {
            if stacks.get(release).is_some_and(|s| !s.services.is_empty()) {
                return Err(BackendError::InUse {
                    object: format!("volume {name:?}"),
                    message: format!("mounted by tasks of stack {release:?}"),
                });
            }
        }
        n.volumes.remove(name);
        Ok(())
    }
}

#[derive(Debug, Default)]
struct State {
    swarms: BTreeMap<String, SwarmState>,
    no_lister: bool,
    events: Vec<MemoryEvent>,
}

#[derive(Default)]
struct Inner {
    state: Mutex<State>,
    backends: Mutex<HashMap<Target, Arc<MemoryBackend>>>,
    node_backends: Mutex<HashMap<(Target, String), Arc<MemoryNodeBackend>>>,
    /// The container event streams, by swarm and node (`None`: the
    /// manager's own daemon).
    container_events: Mutex<HashMap<Daemon, broadcast::Sender<ContainerGone>>>,
}

/// One daemon of the model: its swarm, and its node id (`None`: the
/// manager's own daemon).
type Daemon = (String, Option<String>);

/// How many events a subscriber may fall behind by before it misses some:
/// a missed event only costs the sweep its retry interval.
const EVENT_BACKLOG: usize = 64;

/// Adds `record`, its id made unique among `records` (`-2`, `-3`, ...
/// appended) as config names are unique on a swarm: two records sharing an
/// id would prove each other unchanged.
fn push_record(records: &mut Vec<MemoryRecord>, mut record: MemoryRecord) {
    let base = record.id.clone();
    let mut n = 1;
    while records.iter().any(|r| r.id == record.id) {
        n += 1;
        record.id = format!("{base}-{n}");
    }
    records.push(record);
}

/// Locks, carrying on after a panic elsewhere: the state is plain data that
/// every method leaves consistent, and a test must still be able to inspect it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unknown_swarm(swarm: &str) -> RegistryError {
    RegistryError::UnknownSwarm {
        swarm: swarm.to_owned(),
    }
}

fn unknown_node(swarm: &str, node: &str) -> RegistryError {
    RegistryError::UnknownNode {
        swarm: swarm.to_owned(),
        node: node.to_owned(),
    }
}

fn endpoint(swarm: &str, node: Option<&str>) -> String {
    format!("memory://{swarm}/{}", node.unwrap_or("manager"))
}

/// An in-memory registry of several swarms; implements [`Registry`],
/// [`Lister`] and [`NodeReach`]. Clones share state.
#[derive(Clone, Default)]
pub struct MemoryRegistry {
    inner: Arc<Inner>,
}

impl MemoryRegistry {
    /// A registry with no swarms.
    pub fn new() -> Self {
        MemoryRegistry::default()
    }

    /// This registry with `swarm` added.
    pub fn with_swarm(self, swarm: MemorySwarm) -> Self {
        self.add_swarm(swarm);
        self
    }

    /// Adds `swarm`, replacing a swarm of the same name and forgetting the
    /// backends handed out for it.
    pub fn add_swarm(&self, swarm: MemorySwarm) {
        let target = Target::new(swarm.name.clone());
        lock(&self.inner.backends).remove(&target);
        lock(&self.inner.node_backends).retain(|(t, _), _| *t != target);
        lock(&self.inner.state)
            .swarms
            .insert(swarm.name.clone(), SwarmState::from_spec(swarm));
    }

    fn with_swarm_state<T>(
        &self,
        swarm: &str,
        f: impl FnOnce(&mut SwarmState) -> Result<T, RegistryError>,
    ) -> Result<T, RegistryError> {
        let mut state = lock(&self.inner.state);
        let s = state
            .swarms
            .get_mut(swarm)
            .ok_or_else(|| unknown_swarm(swarm))?;
        f(s)
    }

    fn with_node_state(
        &self,
        swarm: &str,
        node: &str,
        f: impl FnOnce(&mut NodeState),
    ) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            let n = s
                .nodes
                .iter_mut()
                .find(|n| n.id == node)
                .ok_or_else(|| unknown_node(swarm, node))?;
            f(n);
            Ok(())
        })
    }

    /// While `unreachable`: [`Registry::backend`] fails with
    /// [`RegistryError::Connect`] for a swarm it has not connected to yet,
    /// calls on an already handed-out backend fail with
    /// [`BackendError::Unreachable`], and [`NodeReach::nodes`] fails because
    /// it cannot read the manager's node list.
    pub fn set_manager_unreachable(
        &self,
        swarm: &str,
        unreachable: bool,
    ) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            s.manager_unreachable = unreachable;
            Ok(())
        })
    }

    /// Makes a node reachable individually or not; it stays in the
    /// manager's node list either way.
    pub fn set_node_reachable(
        &self,
        swarm: &str,
        node: &str,
        reachable: bool,
    ) -> Result<(), RegistryError> {
        self.with_node_state(swarm, node, |n| n.reachable = reachable)
    }

    /// The next [`NodeReach::nodes`] still lists `node`, then it becomes
    /// unreachable, as a node that goes down between listing and use.
    pub fn vanish_after_listing(&self, swarm: &str, node: &str) -> Result<(), RegistryError> {
        self.with_node_state(swarm, node, |n| n.vanish_after_listing = true)
    }

    /// The next `attempts` removals of volume `volume` on `node` fail with
    /// [`BackendError::InUse`].
    pub fn volume_in_use(
        &self,
        swarm: &str,
        node: &str,
        volume: &str,
        attempts: u32,
    ) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            let n = s
                .nodes
                .iter_mut()
                .find(|n| n.id == node)
                .ok_or_else(|| unknown_node(swarm, node))?;
            if let Some(v) = n.volumes.get_mut(volume) {
                v.in_use_for = attempts;
            }
            Ok(())
        })
    }

    /// The next [`SwarmBackend::remove_release_records`] on `swarm` removes
    /// only the `removed` oldest records of its release, then fails with
    /// `error`: a sweep stopped, or a daemon lost, half-way through.
    pub fn interrupt_record_removal(
        &self,
        swarm: &str,
        removed: usize,
        error: BackendError,
    ) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            s.record_interruption = Some((removed, error));
            Ok(())
        })
    }

    /// Whether [`Registry::as_lister`] offers a lister (it does by default).
    pub fn set_lister(&self, enabled: bool) {
        lock(&self.inner.state).no_lister = !enabled;
    }

    /// Adds one release record to `swarm`.
    pub fn add_record(&self, swarm: &str, record: MemoryRecord) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            push_record(&mut s.records, record);
            Ok(())
        })
    }

    /// Restamps record config `id` on `swarm` with `owner`, as relabelling
    /// it does: its version index goes up.
    pub fn restamp_record(
        &self,
        swarm: &str,
        id: &str,
        owner: Option<&str>,
    ) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            for record in s.records.iter_mut().filter(|r| r.id == id) {
                record.owner = owner.map(str::to_owned);
                record.version += 1;
            }
            Ok(())
        })
    }

    /// Updates service `service` of `release`'s stack on `swarm`: its keep
    /// label set to `keep` (removed for `None`), its version index raised,
    /// as `docker service update --label-add`/`--label-rm` does.
    pub fn update_service(
        &self,
        swarm: &str,
        release: &str,
        service: &str,
        keep: Option<&str>,
    ) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            let Some(stack) = s.stacks.get_mut(release) else {
                return Ok(());
            };
            if !stack.services.contains(service) {
                return Ok(());
            }
            match keep {
                Some(value) => stack.keep.insert(service.to_owned(), value.to_owned()),
                None => stack.keep.remove(service),
            };
            *stack.versions.entry(service.to_owned()).or_insert(1) += 1;
            Ok(())
        })
    }

    /// Sets `release`'s stack on `swarm`.
    pub fn set_stack(
        &self,
        swarm: &str,
        release: &str,
        stack: MemoryStack,
    ) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            s.stacks.insert(release.to_owned(), stack);
            Ok(())
        })
    }

    /// Adds `node` to `swarm`'s node list, as a node that joins it: the
    /// manager lists and counts it from now on.
    pub fn join_node(&self, swarm: &str, node: MemoryNode) -> Result<(), RegistryError> {
        self.with_swarm_state(swarm, |s| {
            s.nodes.push(NodeState::from_spec(node));
            Ok(())
        })
    }

    /// Adds a volume to `node` of `swarm`.
    pub fn add_volume(
        &self,
        swarm: &str,
        node: &str,
        volume: MemoryVolume,
    ) -> Result<(), RegistryError> {
        self.with_node_state(swarm, node, |n| {
            n.volumes.insert(
                volume.name,
                VolumeState {
                    release: volume.release,
                    in_use_for: 0,
                },
            );
        })
    }

    /// The names of all swarms, sorted.
    pub fn swarm_names(&self) -> Vec<String> {
        lock(&self.inner.state).swarms.keys().cloned().collect()
    }

    /// What remains of `release`'s stack on `swarm`; `None` when nothing
    /// does (or the swarm is unknown).
    pub fn stack(&self, swarm: &str, release: &str) -> Option<MemoryStack> {
        lock(&self.inner.state)
            .swarms
            .get(swarm)
            .and_then(|s| s.stacks.get(release))
            .filter(|stack| !stack.is_empty())
            .cloned()
    }

    /// The releases that still have stack objects on `swarm`, sorted.
    pub fn stacks(&self, swarm: &str) -> Vec<String> {
        lock(&self.inner.state)
            .swarms
            .get(swarm)
            .map(|s| {
                s.stacks
                    .iter()
                    .filter(|(_, stack)| !stack.is_empty())
                    .map(|(release, _)| release.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The release records that remain on `swarm`.
    pub fn records(&self, swarm: &str) -> Vec<MemoryRecord> {
        lock(&self.inner.state)
            .swarms
            .get(swarm)
            .map(|s| s.records.clone())
            .unwrap_or_default()
    }

    /// The releases that still have records on `swarm`, sorted, each once.
    pub fn release_names(&self, swarm: &str) -> Vec<String> {
        let mut names: Vec<String> = self.records(swarm).into_iter().map(|r| r.release).collect();
        names.sort();
        names.dedup();
        names
    }

    /// The release records removed from `swarm` so far, in the order they
    /// were removed.
    pub fn removed_records(&self, swarm: &str) -> Vec<MemoryRecord> {
        lock(&self.inner.state)
            .swarms
            .get(swarm)
            .map(|s| s.removed_records.clone())
            .unwrap_or_default()
    }

    /// The volumes that remain on `node` of `swarm`, by name.
    pub fn volumes(&self, swarm: &str, node: &str) -> Vec<MemoryVolume> {
        lock(&self.inner.state)
            .swarms
            .get(swarm)
            .and_then(|s| s.nodes.iter().find(|n| n.id == node))
            .map(|n| {
                n.volumes
                    .iter()
                    .map(|(name, v)| MemoryVolume {
                        name: name.clone(),
                        release: v.release.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every backend call so far, in order.
    pub fn events(&self) -> Vec<MemoryEvent> {
        lock(&self.inner.state).events.clone()
    }

    /// Forgets the calls logged so far.
    pub fn clear_events(&self) {
        lock(&self.inner.state).events.clear();
    }

    /// Subscribers of the container events of `node` (`None`: the
    /// manager's own daemon) of `swarm`: a test waits for the subscription
    /// before acting, since a daemon reports only what happens after it.
    pub fn event_subscribers(&self, swarm: &str, node: Option<&str>) -> usize {
        let key = (swarm.to_owned(), node.map(str::to_owned));
        lock(&self.inner.container_events)
            .get(&key)
            .map_or(0, broadcast::Sender::receiver_count)
    }

    /// Reports a container of stack `namespace` gone on `node` (`None`: the
    /// manager's own daemon) of `swarm`, to whoever subscribed; removing a
    /// release's services reports this by itself.
    pub fn emit_container_gone(&self, swarm: &str, node: Option<&str>, namespace: &str) {
        let key = (swarm.to_owned(), node.map(str::to_owned));
        if let Some(sender) = lock(&self.inner.container_events).get(&key) {
            // No receiver is no error: nobody listens, as on a real daemon.
            let _ = sender.send(ContainerGone::new(namespace));
        }
    }

    /// A subscription to the container events of `node` (`None`: the
    /// manager's own daemon) of `swarm`; refused as any call is while that
    /// daemon is unreachable. Not logged: it neither reads nor changes the
    /// swarm.
    fn subscribe(&self, swarm: &str, node: Option<&str>) -> Result<ContainerEvents, BackendError> {
        {
            let mut state = lock(&self.inner.state);
            match state.swarms.get_mut(swarm) {
                None => {
                    return Err(BackendError::Unreachable {
                        endpoint: endpoint(swarm, node),
                        message: "the swarm no longer exists".into(),
                    })
                }
                Some(s) => run(s, swarm, node, |_| Ok(()))?,
            }
        }
        let key = (swarm.to_owned(), node.map(str::to_owned));
        let receiver = lock(&self.inner.container_events)
            .entry(key)
            .or_insert_with(|| broadcast::channel(EVENT_BACKLOG).0)
            .subscribe();
        let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
            loop {
                match receiver.recv().await {
                    Ok(gone) => return Some((Ok(gone), receiver)),
                    // Fell behind: what was missed only costs a retry.
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        });
        Ok(Box::pin(stream))
    }

    /// Runs one backend call against `swarm` (and `node`, `None` for the
    /// manager): reachability, then `f`, then the log.
    fn call<T>(
        &self,
        swarm: &str,
        node: Option<&str>,
        op: Call,
        subject: &str,
        f: impl FnOnce(&mut SwarmState) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        let mut state = lock(&self.inner.state);
        let had_services = op == Call::RemoveStack && has_services(&state, swarm, subject);
        let result = match state.swarms.get_mut(swarm) {
            None => Err(BackendError::Unreachable {
                endpoint: endpoint(swarm, node),
                message: "the swarm no longer exists".into(),
            }),
            Some(s) => run(s, swarm, node, f),
        };
        if had_services && !has_services(&state, swarm, subject) {
            // The services' tasks stopped and their containers went, on
            // every node that held the release's volumes.
            for daemon in daemons_of(&state, swarm, subject) {
                self.emit_container_gone(swarm, daemon.as_deref(), subject);
            }
        }
        state.events.push(MemoryEvent {
            swarm: swarm.to_owned(),
            node: node.map(str::to_owned),
            op,
            subject: subject.to_owned(),
            result: result.as_ref().map(|_| ()).map_err(Clone::clone),
        });
        result
    }
}

/// Whether `release`'s stack on `swarm` still has services.
fn has_services(state: &State, swarm: &str, release: &str) -> bool {
    state
        .swarms
        .get(swarm)
        .and_then(|s| s.stacks.get(release))
        .is_some_and(|stack| !stack.services.is_empty())
}

/// The daemons that ran `release`'s tasks, as far as the model knows: every
/// node holding its volumes, and the manager's own daemon (`None`) when the
/// manager is one of them or the swarm has no node reach (whose sweep
/// listens to the manager alone).
fn daemons_of(state: &State, swarm: &str, release: &str) -> Vec<Option<String>> {
    let Some(s) = state.swarms.get(swarm) else {
        return Vec::new();
    };
    let holders: Vec<&NodeState> = s
        .nodes
        .iter()
        .filter(|n| {
            n.volumes
                .values()
                .any(|v| v.release.as_deref() == Some(release))
        })
        .collect();
    let manager_held = match (s.nodes.first(), holders.first()) {
        (Some(manager), Some(first)) => manager.id == first.id,
        _ => false,
    };
    let mut daemons: Vec<Option<String>> = holders.iter().map(|n| Some(n.id.clone())).collect();
    if manager_held || !s.node_reach {
        daemons.push(None);
    }
    daemons
}

fn run<T>(
    s: &mut SwarmState,
    swarm: &str,
    node: Option<&str>,
    f: impl FnOnce(&mut SwarmState) -> Result<T, BackendError>,
) -> Result<T, BackendError> {
    let reachable = match node {
        None => !s.manager_unreachable,
        Some(id) => s.nodes.iter().any(|n| n.id == id && n.reachable),
    };
    if !reachable {
        return Err(BackendError::Unreachable {
            endpoint: endpoint(swarm, node),
            message: "connection refused".into(),
        });
    }
    f(s)
}

/// The manager backend of one memory swarm.
struct MemoryBackend {
    registry: MemoryRegistry,
    swarm: String,
    self_stack: Option<String>,
}

#[async_trait]
impl SwarmBackend for MemoryBackend {
    async fn releases(&self) -> Result<Vec<ReleaseRecord>, BackendError> {
        self.releases_with_payloads(&PayloadScope::none()).await
    }

    async fn releases_with_payloads(
        &self,
        payloads: &PayloadScope,
    ) -> Result<Vec<ReleaseRecord>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::Releases, "", |s| {
                s.releases(payloads)
            })
    }

    async fn remove_stack_part(
        &self,
        release: &str,
        part: StackPart,
        objects: &[ObjectRef],
    ) -> Result<(), BackendError> {
        let own = self.self_stack.as_deref() == Some(release);
        self.registry
            .call(&self.swarm, None, Call::RemoveStack, release, |s| {
                if own {
                    return Err(BackendError::OwnStack {
                        release: release.to_owned(),
                    });
                }
                // The engine refuses to remove what a service's spec names.
                for object in objects {
                    if let Some(user) = s.named_by_workload(part, object) {
                        return Err(BackendError::InUse {
                            object: format!("{part} {:?}", object.name),
                            message: format!("in use by service {:?}", user.name),
                        });
                    }
                }
                let Some(stack) = s.stacks.get_mut(release) else {
                    return Ok(());
                };
                // The model's tasks stop with their services: the named
                // services' tasks, or every service's when none is named.
                let running = stack.services.iter().any(|service| {
                    objects.is_empty()
                        || objects.iter().any(|o| {
                            o.handle() == MemoryStack::service_id(service)
                                || o.handle() == service.as_str()
                        })
                });
                if part == StackPart::Tasks {
                    return if running {
                        Err(BackendError::InUse {
                            object: format!("tasks of stack {release:?}"),
                            message: "still running".into(),
                        })
                    } else {
                        Ok(())
                    };
                }
                let names = match part {
                    StackPart::Services => &mut stack.services,
                    StackPart::Tasks => return Ok(()),
                    StackPart::Networks => &mut stack.networks,
                    StackPart::Secrets => &mut stack.secrets,
                    StackPart::Configs => &mut stack.configs,
                };
                // Exactly the objects named, by id or name; anything else
                // of the stack stays.
                let id = |name: &str| match part {
                    StackPart::Services => MemoryStack::service_id(name),
                    _ => MemoryStack::object_id(part, name),
                };
                // The model's versions: a service's as updated, a secret's
                // or config's 1 (they are never updated).
                let version = |n: &str| match part {
                    StackPart::Services => Some(stack.versions.get(n).copied().unwrap_or(1)),
                    StackPart::Secrets | StackPart::Configs => Some(1),
                    StackPart::Networks | StackPart::Tasks => None,
                };
                let mut changed = None;
                let named: Vec<String> = names
                    .iter()
                    .filter(|n| {
                        let Some(asked) = objects
                            .iter()
                            .find(|o| o.handle() == id(n) || o.handle() == n.as_str())
                        else {
                            return false;
                        };
                        // Given at a version it is no longer at: left, as
                        // the engine backend leaves it.
                        match (asked.version, version(n)) {
                            (Some(judged), now) if now != Some(judged) => {
                                let now = now.map_or("unknown".to_owned(), |v| v.to_string());
                                changed.get_or_insert(BackendError::Other {
                                    message: format!(
                                        "{part} {n:?} changed since it was judged (version {now}, judged at {judged}); left in place"
                                    ),
                                });
                                false
                            }
                            _ => true,
                        }
                    })
                    .cloned()
                    .collect();
                // The engine's answer while services still use them.
                let held = part != StackPart::Services && named.iter().any(|n| stack.holds(n));
                if held {
                    return Err(BackendError::InUse {
                        object: format!("{part} of stack {release:?}"),
                        message: "in use by the stack's services".into(),
                    });
                }
                let names = match part {
                    StackPart::Services => &mut stack.services,
                    StackPart::Networks => &mut stack.networks,
                    StackPart::Secrets => &mut stack.secrets,
                    StackPart::Configs => &mut stack.configs,
                    StackPart::Tasks => return Ok(()),
                };
                for n in &named {
                    names.remove(n);
                }
                if part == StackPart::Services {
                    // The labels, versions and uses were the services'.
                    for n in &named {
                        stack.keep.remove(n);
                        stack.versions.remove(n);
                        stack.uses.remove(n);
                    }
                }
                if stack.is_empty() {
                    s.stacks.remove(release);
                }
                changed.map_or(Ok(()), Err)
            })
    }

    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::StackVolumes, release, |s| {
                Ok(s.stack_volumes(None, release))
            })
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        self.registry
            .call(&self.swarm, None, Call::RemoveVolume, name, |s| {
                s.remove_volume(None, name)
            })
    }

    async fn stack_objects(&self) -> Result<Option<BTreeMap<String, StackObjects>>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::StackObjects, "", |s| {
                Ok(s.stack_objects())
            })
    }

    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::VolumesByStack, "", |s| {
                Ok(s.volumes_by_stack(None))
            })
    }

    async fn service_uses(&self) -> Result<Option<Vec<ServiceUse>>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::ServiceUses, "", |s| {
                Ok(s.service_uses())
            })
    }

    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::Containers, "", |s| {
                Ok(s.containers(None))
            })
    }

    async fn own_node_id(&self) -> Result<Option<String>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::OwnNodeId, "", |s| {
                Ok(s.nodes
                    .first()
                    .filter(|_| s.object_reads)
                    .map(|n| n.id.clone()))
            })
    }

    async fn remove_release_records(&self, release: &str) -> Result<(), BackendError> {
        self.registry.call(
            &self.swarm,
            None,
            Call::RemoveReleaseRecords,
            release,
            |s| s.remove_release_records(release),
        )
    }

    async fn node_count(&self) -> Result<usize, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::NodeCount, "", |s| {
                Ok(s.nodes.len())
            })
    }

    async fn node_ids(&self) -> Result<Vec<String>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::NodeIds, "", |s| {
                Ok(s.nodes.iter().map(|n| n.id.clone()).collect())
            })
    }

    async fn members(&self) -> Result<Vec<Node>, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::Members, "", |s| {
                Ok(s.nodes
                    .iter()
                    .map(|n| Node::new(n.id.clone(), n.hostname.clone()))
                    .collect())
            })
    }

    async fn cluster_id(&self) -> Result<String, BackendError> {
        self.registry
            .call(&self.swarm, None, Call::ClusterId, "", |s| {
                Ok(s.cluster_id.clone())
            })
    }

    fn self_stack(&self) -> Option<&str> {
        self.self_stack.as_deref()
    }

    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        self.registry.subscribe(&self.swarm, None)
    }
}

/// One node's own backend on one memory swarm.
struct MemoryNodeBackend {
    registry: MemoryRegistry,
    swarm: String,
    node: String,
}

#[async_trait]
impl NodeBackend for MemoryNodeBackend {
    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        let node = Some(self.node.as_str());
        self.registry
            .call(&self.swarm, node, Call::StackVolumes, release, |s| {
                Ok(s.stack_volumes(node, release))
            })
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        let node = Some(self.node.as_str());
        self.registry
            .call(&self.swarm, node, Call::RemoveVolume, name, |s| {
                s.remove_volume(node, name)
            })
    }

    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        let node = Some(self.node.as_str());
        self.registry
            .call(&self.swarm, node, Call::VolumesByStack, "", |s| {
                Ok(s.volumes_by_stack(node))
            })
    }

    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        let node = Some(self.node.as_str());
        self.registry
            .call(&self.swarm, node, Call::Containers, "", |s| {
                Ok(s.containers(node))
            })
    }

    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        self.registry.subscribe(&self.swarm, Some(&self.node))
    }
}

#[async_trait]
impl Registry for MemoryRegistry {
    async fn backend(&self, target: &Target) -> Result<Arc<dyn SwarmBackend>, RegistryError> {
        let mut backends = lock(&self.inner.backends);
        if let Some(backend) = backends.get(target) {
            return Ok(backend.clone());
        }
        let self_stack = {
            let state = lock(&self.inner.state);
            let s = state
                .swarms
                .get(target.as_str())
                .ok_or_else(|| unknown_swarm(target.as_str()))?;
            if s.manager_unreachable {
                return Err(RegistryError::Connect {
                    swarm: target.as_str().to_owned(),
                    endpoint: endpoint(target.as_str(), None),
                    message: "connection refused".into(),
                });
            }
            s.self_stack.clone()
        };
        let backend = Arc::new(MemoryBackend {
            registry: self.clone(),
            swarm: target.as_str().to_owned(),
            self_stack,
        });
        backends.insert(target.clone(), backend.clone());
        Ok(backend)
    }

    fn as_lister(&self) -> Option<&dyn Lister> {
        if lock(&self.inner.state).no_lister {
            None
        } else {
            Some(self)
        }
    }

    fn as_node_reach(&self) -> Option<&dyn NodeReach> {
        Some(self)
    }
}

#[async_trait]
impl Lister for MemoryRegistry {
    async fn swarms(&self) -> Result<Vec<Target>, RegistryError> {
        let state = lock(&self.inner.state);
        Ok(state.swarms.keys().map(Target::new).collect())
    }
}

#[async_trait]
impl NodeReach for MemoryRegistry {
    async fn nodes(&self, target: &Target) -> Result<Option<Vec<Node>>, RegistryError> {
        self.with_swarm_state(target.as_str(), |s| {
            if !s.node_reach {
                return Ok(None);
            }
            if s.manager_unreachable {
                return Err(RegistryError::Manager {
                    swarm: target.as_str().to_owned(),
                    source: BackendError::Unreachable {
                        endpoint: endpoint(target.as_str(), None),
                        message: "connection refused".into(),
                    },
                });
            }
            let mut listed = Vec::new();
            for n in s.nodes.iter_mut().filter(|n| n.reachable) {
                listed.push(Node::new(n.id.clone(), n.hostname.clone()));
                if n.vanish_after_listing {
                    n.vanish_after_listing = false;
                    n.reachable = false;
                }
            }
            Ok(Some(listed))
        })
    }

    async fn node_backend(
        &self,
        target: &Target,
        node: &Node,
    ) -> Result<Arc<dyn NodeBackend>, RegistryError> {
        let key = (target.clone(), node.id.clone());
        let mut backends = lock(&self.inner.node_backends);
        if let Some(backend) = backends.get(&key) {
            return Ok(backend.clone());
        }
        self.with_swarm_state(target.as_str(), |s| {
            let n = s
                .nodes
                .iter()
                .find(|n| n.id == node.id)
                .ok_or_else(|| unknown_node(target.as_str(), &node.id))?;
            if !s.node_reach || !n.reachable {
                return Err(RegistryError::Connect {
                    swarm: target.as_str().to_owned(),
                    endpoint: endpoint(target.as_str(), Some(&node.id)),
                    message: "connection refused".into(),
                });
            }
            Ok(())
        })?;
        let backend = Arc::new(MemoryNodeBackend {
            registry: self.clone(),
            swarm: target.as_str().to_owned(),
            node: node.id.clone(),
        });
        backends.insert(key, backend.clone());
        Ok(backend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweep_core::record::Payload;

    fn alpha() -> MemorySwarm {
        MemorySwarm::new("alpha", "cluster-a")
            .node(MemoryNode::new("a1", "alpha-1").volume("app_data", Some("app")))
            .node(MemoryNode::new("a2", "alpha-2").volume("app_cache", Some("app")))
            .node(MemoryNode::new("a3", "alpha-3").unreachable())
            .self_stack("swarm-sweep")
            .record(MemoryRecord::new("app", 1, Some("old")))
            .record(MemoryRecord::new("app", 10, Some("new")))
            .record(MemoryRecord::new("app", 2, Some("middle")))
            .record(MemoryRecord::new("other", 1, None))
            .stack(
                "app",
                MemoryStack::new()
                    .service("app_web")
                    .network("app_default")
                    .secret("app_token")
                    .config("app_conf"),
            )
    }

    fn registry() -> MemoryRegistry {
        MemoryRegistry::new()
            .with_swarm(alpha())
            .with_swarm(MemorySwarm::new("", "cluster-local").node(MemoryNode::new("l1", "")))
    }

    #[tokio::test]
    async fn releases_carry_every_record_version_and_a_restamp_raises_it() {
        let reg = registry();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        let app = |releases: Vec<ReleaseRecord>| {
            releases
                .into_iter()
                .find(|r| r.name == "app")
                .and_then(|r| r.records)
                .unwrap()
        };
        assert_eq!(
            app(b.releases().await.unwrap()),
            vec![
                ObjectVersion::new("swarmcli.release.app.v1", 1),
                ObjectVersion::new("swarmcli.release.app.v10", 1),
                ObjectVersion::new("swarmcli.release.app.v2", 1),
            ]
        );
        reg.restamp_record("alpha", "swarmcli.release.app.v10", Some("newer"))
            .unwrap();
        let releases = b.releases().await.unwrap();
        assert_eq!(releases[0].owner.as_deref(), Some("newer"));
        assert!(app(releases).contains(&ObjectVersion::new("swarmcli.release.app.v10", 2)));
    }

    #[tokio::test]
    async fn stack_objects_and_volumes_are_listed_by_namespace() {
        let reg = registry();
        let alpha = Target::new("alpha");
        let b = reg.backend(&alpha).await.unwrap();
        let objects = b.stack_objects().await.unwrap().unwrap();
        assert_eq!(
            objects,
            BTreeMap::from([(
                "app".to_owned(),
                StackObjects::new(
                    vec![ServiceEntry::new("svc-app_web", "app_web", 1)],
                    vec![ObjectRef::new("networks-app_default", "app_default")],
                    vec![ObjectRef::new("secrets-app_token", "app_token").with_version(1)],
                    vec![ObjectRef::new("configs-app_conf", "app_conf").with_version(1)],
                )
            )])
        );
        reg.update_service("alpha", "app", "app_web", Some("true"))
            .unwrap();
        let objects = b.stack_objects().await.unwrap().unwrap();
        assert_eq!(
            objects["app"].services,
            vec![ServiceEntry::new("svc-app_web", "app_web", 2).with_keep("true")]
        );
        assert_eq!(b.own_node_id().await.unwrap().as_deref(), Some("a1"));
        assert_eq!(
            b.volumes_by_stack().await.unwrap(),
            Some(VolumesByStack::from([(
                "app".to_owned(),
                vec!["app_data".to_owned()]
            )]))
        );
        let a2 = reg
            .node_backend(&alpha, &Node::new("a2", ""))
            .await
            .unwrap();
        assert_eq!(
            a2.volumes_by_stack().await.unwrap(),
            Some(VolumesByStack::from([(
                "app".to_owned(),
                vec!["app_cache".to_owned()]
            )]))
        );
        // Gone with the services: their labels and versions.
        crate::remove_whole_part(&*b, "app", StackPart::Services)
            .await
            .unwrap();
        let objects = b.stack_objects().await.unwrap().unwrap();
        assert!(objects["app"].services.is_empty());
        reg.set_node_reachable("alpha", "a2", false).unwrap();
        assert!(matches!(
            a2.volumes_by_stack().await,
            Err(BackendError::Unreachable { .. })
        ));
    }

    #[tokio::test]
    async fn conflicting_stamps_on_the_newest_revision_are_invalid() {
        let reg = registry();
        reg.add_record("alpha", MemoryRecord::new("app", 10, Some("thief")))
            .unwrap();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        assert!(matches!(
            b.releases().await,
            Err(BackendError::Invalid { .. })
        ));
    }

    #[tokio::test]
    async fn payloads_are_read_for_the_releases_in_scope_only() {
        let reg = MemoryRegistry::new().with_swarm(
            MemorySwarm::new("s", "c")
                .record(MemoryRecord::new("app", 1, Some("us")).with_data(b"not gzip".to_vec()))
                .record(MemoryRecord::new("app", 2, Some("us")))
                .record(MemoryRecord::new("db", 1, None).with_data(b"not gzip".to_vec())),
        );
        let b = reg.backend(&Target::new("s")).await.unwrap();
        let payloads = |releases: Vec<ReleaseRecord>| -> Vec<(String, Option<Payload>)> {
            releases
                .into_iter()
                .flat_map(|r| r.revisions.unwrap_or_default())
                .map(|r| (r.name, r.payload))
                .collect()
        };
        let not_gzip = Some(Payload::Unreadable("the record data is not gzip".into()));
        assert_eq!(
            payloads(
                b.releases_with_payloads(&PayloadScope::of(["app"]))
                    .await
                    .unwrap()
            ),
            [
                ("swarmcli.release.app.v1".to_owned(), not_gzip.clone()),
                ("swarmcli.release.app.v2".to_owned(), not_gzip),
                ("swarmcli.release.db.v1".to_owned(), None),
            ]
        );
        let unread = payloads(b.releases().await.unwrap());
        assert!(unread.iter().all(|(_, p)| p.is_none()), "{unread:?}");
    }

    #[tokio::test]
    async fn a_conflict_below_the_newest_revision_does_not_matter() {
        let reg = MemoryRegistry::new().with_swarm(
            MemorySwarm::new("s", "c")
                .record(MemoryRecord::new("app", 3, Some("us")))
                .record(MemoryRecord::new("app", 3, Some("them")))
                .record(MemoryRecord::new("app", 4, Some("us"))),
        );
        let b = reg.backend(&Target::new("s")).await.unwrap();
        let ids = vec![
            ObjectVersion::new("swarmcli.release.app.v3", 1),
            ObjectVersion::new("swarmcli.release.app.v3-2", 1),
            ObjectVersion::new("swarmcli.release.app.v4", 1),
        ];
        let revision = |id: &str, n: &str, owner: &str| {
            RevisionRead::new(id, Some(n.into()), Some(owner.into()))
        };
        assert_eq!(
            b.releases().await.unwrap(),
            vec![ReleaseRecord::new("app", Some("us".into()))
                .with_records(ids)
                .with_revisions(vec![
                    revision("swarmcli.release.app.v3", "3", "us"),
                    revision("swarmcli.release.app.v3-2", "3", "them"),
                    revision("swarmcli.release.app.v4", "4", "us"),
                ])]
        );
    }

    #[tokio::test]
    async fn same_target_same_arc_and_unknown_swarm() {
        let reg = registry();
        let a = reg.backend(&Target::new("alpha")).await.unwrap();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(reg.backend(&Target::local()).await.is_ok());
        assert_eq!(
            reg.backend(&Target::new("nope")).await.err(),
            Some(RegistryError::UnknownSwarm {
                swarm: "nope".into()
            })
        );
    }

    /// Every part of `release`'s stack, services first.
    async fn remove_stack(b: &dyn SwarmBackend, release: &str) -> Result<(), BackendError> {
        for &part in StackPart::ALL {
            crate::remove_whole_part(b, release, part).await?;
        }
        Ok(())
    }

    #[tokio::test]
    async fn the_other_parts_are_in_use_while_the_services_stand() {
        let reg = registry();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        assert!(matches!(
            crate::remove_whole_part(&*b, "app", StackPart::Networks).await,
            Err(BackendError::InUse { .. })
        ));
        assert!(reg
            .stack("alpha", "app")
            .is_some_and(|s| !s.networks.is_empty()));
        crate::remove_whole_part(&*b, "app", StackPart::Services)
            .await
            .unwrap();
        crate::remove_whole_part(&*b, "app", StackPart::Networks)
            .await
            .unwrap();
        assert!(reg
            .stack("alpha", "app")
            .is_some_and(|s| s.networks.is_empty()));
    }

    #[tokio::test]
    async fn remove_stack_keeps_records_and_volumes_and_refuses_self() {
        let reg = registry();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        assert_eq!(b.self_stack(), Some("swarm-sweep"));
        assert_eq!(
            remove_stack(&*b, "swarm-sweep").await,
            Err(BackendError::OwnStack {
                release: "swarm-sweep".into()
            })
        );
        remove_stack(&*b, "app").await.unwrap();
        remove_stack(&*b, "app").await.unwrap();
        assert_eq!(reg.stack("alpha", "app"), None);
        assert_eq!(reg.records("alpha").len(), 4);
        assert_eq!(reg.volumes("alpha", "a1").len(), 1);
    }

    #[tokio::test]
    async fn volumes_are_in_use_while_the_stack_runs() {
        let reg = registry();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        assert_eq!(b.stack_volumes("app").await.unwrap(), vec!["app_data"]);
        assert!(matches!(
            b.remove_volume("app_data").await,
            Err(BackendError::InUse { .. })
        ));
        remove_stack(&*b, "app").await.unwrap();
        b.remove_volume("app_data").await.unwrap();
        b.remove_volume("app_data").await.unwrap();
        assert!(reg.volumes("alpha", "a1").is_empty());
        assert_eq!(reg.volumes("alpha", "a2").len(), 1);
    }

    #[tokio::test]
    async fn volume_in_use_for_n_attempts() {
        let reg = registry();
        reg.set_stack("alpha", "app", MemoryStack::new()).unwrap();
        reg.volume_in_use("alpha", "a1", "app_data", 2).unwrap();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        for _ in 0..2 {
            assert!(matches!(
                b.remove_volume("app_data").await,
                Err(BackendError::InUse { .. })
            ));
        }
        b.remove_volume("app_data").await.unwrap();
        assert!(reg.volumes("alpha", "a1").is_empty());
    }

    #[tokio::test]
    async fn interrupted_record_removal_leaves_the_newest_stamp_to_decide() {
        // A rename handed `web` from `shop` to `store` at revision 3; the
        // newest record (listed first here) carries `store`'s stamp.
        let reg = MemoryRegistry::new().with_swarm(
            MemorySwarm::new("s", "c")
                .record(MemoryRecord::new("web", 3, Some("store")))
                .record(MemoryRecord::new("web", 1, Some("shop")))
                .record(MemoryRecord::new("web", 2, Some("shop"))),
        );
        let b = reg.backend(&Target::new("s")).await.unwrap();
        let lost = BackendError::Timeout {
            endpoint: "memory://s/manager".into(),
            after: std::time::Duration::from_secs(10),
        };
        reg.interrupt_record_removal("s", 1, lost.clone()).unwrap();
        assert_eq!(b.remove_release_records("web").await, Err(lost));
        assert_eq!(reg.records("s").len(), 2);
        let left = vec![
            ObjectVersion::new("swarmcli.release.web.v3", 1),
            ObjectVersion::new("swarmcli.release.web.v2", 1),
        ];
        let revisions = vec![
            RevisionRead::new(
                "swarmcli.release.web.v2",
                Some("2".into()),
                Some("shop".into()),
            ),
            RevisionRead::new(
                "swarmcli.release.web.v3",
                Some("3".into()),
                Some("store".into()),
            ),
        ];
        assert_eq!(
            b.releases().await.unwrap(),
            vec![ReleaseRecord::new("web", Some("store".into()))
                .with_records(left)
                .with_revisions(revisions)]
        );
        // The next attempt finishes, the newest last.
        b.remove_release_records("web").await.unwrap();
        assert!(reg.records("s").is_empty());
        let order: Vec<u64> = reg
            .removed_records("s")
            .iter()
            .map(|r| r.revision)
            .collect();
        assert_eq!(order, [1, 2, 3]);
    }

    #[tokio::test]
    async fn node_list_counts_unreachable_nodes() {
        let reg = registry();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        assert_eq!(b.node_count().await.unwrap(), 3);
        assert_eq!(b.node_ids().await.unwrap(), vec!["a1", "a2", "a3"]);
        assert_eq!(b.cluster_id().await.unwrap(), "cluster-a");
        let nodes = reg.nodes(&Target::new("alpha")).await.unwrap().unwrap();
        assert_eq!(
            nodes,
            vec![Node::new("a1", "alpha-1"), Node::new("a2", "alpha-2")]
        );
    }

    #[tokio::test]
    async fn node_backends_act_on_their_own_node() {
        let reg = registry();
        let t = Target::new("alpha");
        let n2 = Node::new("a2", "alpha-2");
        let nb = reg.node_backend(&t, &n2).await.unwrap();
        assert!(Arc::ptr_eq(&nb, &reg.node_backend(&t, &n2).await.unwrap()));
        assert_eq!(nb.stack_volumes("app").await.unwrap(), vec!["app_cache"]);
        reg.set_stack("alpha", "app", MemoryStack::new()).unwrap();
        nb.remove_volume("app_cache").await.unwrap();
        assert!(reg.volumes("alpha", "a2").is_empty());
        assert_eq!(reg.volumes("alpha", "a1").len(), 1);
        assert!(matches!(
            reg.node_backend(&t, &Node::new("a3", "")).await,
            Err(RegistryError::Connect { .. })
        ));
        assert!(matches!(
            reg.node_backend(&t, &Node::new("zz", "")).await,
            Err(RegistryError::UnknownNode { .. })
        ));
    }

    #[tokio::test]
    async fn node_vanishes_after_listing() {
        let reg = registry();
        let t = Target::new("alpha");
        reg.vanish_after_listing("alpha", "a2").unwrap();
        let listed = reg.nodes(&t).await.unwrap().unwrap();
        assert!(listed.iter().any(|n| n.id == "a2"));
        assert!(matches!(
            reg.node_backend(&t, &Node::new("a2", "")).await,
            Err(RegistryError::Connect { .. })
        ));
        let again = reg.nodes(&t).await.unwrap().unwrap();
        assert!(!again.iter().any(|n| n.id == "a2"));
    }

    #[tokio::test]
    async fn node_backend_handed_out_then_unreachable() {
        let reg = registry();
        let t = Target::new("alpha");
        let nb = reg.node_backend(&t, &Node::new("a2", "")).await.unwrap();
        reg.set_node_reachable("alpha", "a2", false).unwrap();
        assert!(matches!(
            nb.stack_volumes("app").await,
            Err(BackendError::Unreachable { .. })
        ));
    }

    #[tokio::test]
    async fn manager_unreachable() {
        let reg = registry();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        reg.set_manager_unreachable("alpha", true).unwrap();
        assert!(matches!(
            b.releases().await,
            Err(BackendError::Unreachable { .. })
        ));
        assert!(matches!(
            reg.nodes(&Target::new("alpha")).await,
            Err(RegistryError::Manager { .. })
        ));
        reg.set_manager_unreachable("", true).unwrap();
        assert!(matches!(
            reg.backend(&Target::local()).await,
            Err(RegistryError::Connect { .. })
        ));
        reg.set_manager_unreachable("", false).unwrap();
        assert!(reg.backend(&Target::local()).await.is_ok());
    }

    #[tokio::test]
    async fn members_carry_hostnames_like_the_docker_backend() {
        let reg = registry();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        // Unreachable nodes are members too: they may still hold volumes.
        assert_eq!(
            b.members().await.unwrap(),
            vec![
                Node::new("a1", "alpha-1"),
                Node::new("a2", "alpha-2"),
                Node::new("a3", "alpha-3"),
            ]
        );
        reg.set_manager_unreachable("alpha", true).unwrap();
        assert!(matches!(
            b.members().await,
            Err(BackendError::Unreachable { .. })
        ));
        assert_eq!(reg.events().last().map(|e| e.op), Some(Call::Members));
    }

    #[tokio::test]
    async fn lister_can_be_withdrawn() {
        let reg = registry();
        let lister = reg.as_lister().unwrap();
        assert_eq!(
            lister.swarms().await.unwrap(),
            vec![Target::local(), Target::new("alpha")]
        );
        reg.set_lister(false);
        assert!(reg.as_lister().is_none());
    }

    #[tokio::test]
    async fn without_node_reach_answers_none() {
        let reg = MemoryRegistry::new().with_swarm(
            MemorySwarm::new("beta", "c-b")
                .node(MemoryNode::new("b1", "beta-1"))
                .without_node_reach(),
        );
        assert_eq!(reg.nodes(&Target::new("beta")).await.unwrap(), None);
        assert!(matches!(
            reg.nodes(&Target::new("gamma")).await,
            Err(RegistryError::UnknownSwarm { .. })
        ));
    }

    #[test]
    fn knobs_name_unknown_swarms_and_nodes() {
        let reg = registry();
        assert_eq!(
            reg.set_manager_unreachable("nope", true),
            Err(RegistryError::UnknownSwarm {
                swarm: "nope".into()
            })
        );
        assert_eq!(
            reg.vanish_after_listing("alpha", "zz"),
            Err(RegistryError::UnknownNode {
                swarm: "alpha".into(),
                node: "zz".into()
            })
        );
    }

    #[test]
    fn shared_between_threads() {
        let reg = registry();
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let reg = reg.clone();
                std::thread::spawn(move || {
                    reg.add_record("alpha", MemoryRecord::new(format!("r{i}"), 1, None))
                })
            })
            .collect();
        for h in handles {
            assert!(matches!(h.join(), Ok(Ok(()))));
        }
        assert_eq!(reg.records("alpha").len(), 8);
    }
    #[tokio::test]
    async fn removing_services_reports_containers_gone_where_volumes_are() {
        use futures_util::StreamExt;
        let reg = registry();
        let alpha = Target::new("alpha");
        let b = reg.backend(&alpha).await.unwrap();
        let reach = reg.as_node_reach().unwrap();
        let a1 = reach
            .node_backend(&alpha, &Node::new("a1", "alpha-1"))
            .await
            .unwrap();
        let a2 = reach
            .node_backend(&alpha, &Node::new("a2", "alpha-2"))
            .await
            .unwrap();
        let mut on_a1 = a1.container_events().await.unwrap();
        let mut on_a2 = a2.container_events().await.unwrap();
        let mut on_manager = b.container_events().await.unwrap();
        assert_eq!(reg.event_subscribers("alpha", Some("a1")), 1);
        assert_eq!(reg.event_subscribers("alpha", None), 1);
        let calls = reg.events().len();

        // Parts held by the services go nowhere, and report nothing.
        assert!(crate::remove_whole_part(&*b, "app", StackPart::Networks)
            .await
            .is_err());
        crate::remove_whole_part(&*b, "app", StackPart::Services)
            .await
            .unwrap();
        let gone = Some(Ok(ContainerGone::new("app")));
        assert_eq!(on_a1.next().await, gone);
        assert_eq!(on_a2.next().await, gone);
        // a1 is the manager: its own daemon reports too.
        assert_eq!(on_manager.next().await, gone);

        // No services left: removing them again reports nothing, so the
        // next event is the one sent by hand.
        crate::remove_whole_part(&*b, "app", StackPart::Services)
            .await
            .unwrap();
        reg.emit_container_gone("alpha", Some("a1"), "marker");
        assert_eq!(on_a1.next().await, Some(Ok(ContainerGone::new("marker"))));
        // Subscribing is not a call the log shows; each removal above is a
        // listing and the removal.
        assert_eq!(reg.events().len(), calls + 6);

        drop(on_a1);
        assert_eq!(reg.event_subscribers("alpha", Some("a1")), 0);
        reg.set_node_reachable("alpha", "a2", false).unwrap();
        assert!(matches!(
            a2.container_events().await,
            Err(BackendError::Unreachable { .. })
        ));
    }

    #[tokio::test]
    async fn without_node_reach_the_manager_reports_for_its_workers() {
        use futures_util::StreamExt;
        let reg = MemoryRegistry::new().with_swarm(
            MemorySwarm::new("solo", "cluster-s")
                .node(MemoryNode::new("m", "mgr"))
                .node(MemoryNode::new("w", "wkr").volume("db_data", Some("db")))
                .stack("db", MemoryStack::new().service("db_pg"))
                .without_node_reach(),
        );
        let b = reg.backend(&Target::new("solo")).await.unwrap();
        let mut events = b.container_events().await.unwrap();
        crate::remove_whole_part(&*b, "db", StackPart::Services)
            .await
            .unwrap();
        assert_eq!(events.next().await, Some(Ok(ContainerGone::new("db"))));
    }
}
