//! Who else uses a release's objects, and the one rule that decides from
//! it that an object of a departed release stays.
//!
//! The engine refuses to remove a volume only while a container on that
//! node uses it: a volume another stack mounts as `external`, or a
//! service made by hand mounts, is removed without a word while that
//! workload is scaled to 0 or runs elsewhere, and its data is lost when it
//! comes back. Labels cannot tell: the volume carries the departed stack's
//! label whoever mounts it. So an object is shared (and stays) when any
//! service of the swarm other than the release's own names it in its spec,
//! or in its previous spec (a rollback, by hand or the engine's own on a
//! failed update, returns to it, and recreates a removed volume empty),
//! at any replica count and in any mode, or when a container not of the
//! release's own services uses it (a volume) or is attached to it (a
//! network), running or stopped, on any node that was reached.
//!
//! The facts ([`Usage`]) are read by a driver and passed through
//! unjudged: raw mount sources, raw network targets, raw secret and config
//! references, a container's service label. Every decision about them is
//! [`users_of`]'s, which the planner and the sweep's re-check before each
//! removal both call.

mod index;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::names::named_enum;
use crate::objects::{ObjectRef, StackObjects};

pub(crate) use index::UsageIndex;

/// The label Docker puts on a service's task containers: the id of the
/// service the task belongs to.
pub const SERVICE_ID_LABEL: &str = "com.docker.swarm.service.id";

/// One service of the swarm and what its spec names, raw.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ServiceUse {
    /// The service's id.
    pub id: String,
    /// The service's name.
    pub name: String,
    /// Its stack namespace label, if it carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// The sources of its volume mounts, raw: a template such as
    /// `data-{{.Task.Slot}}` is kept as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<String>,
    /// The networks it attaches to, as its spec gives them (ids, or names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<String>,
    /// The secrets it mounts, by id and by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// The configs it mounts, by id and by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<String>,
    /// What its previous spec names, when it has one: the spec a rollback
    /// (`docker service rollback`, or the engine's own on a failed update)
    /// returns to, as raw as the fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<PreviousSpec>,
}

/// What a service's previous spec names, raw, as [`ServiceUse`] gives its
/// spec's.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct PreviousSpec {
    /// The sources of its volume mounts, templates as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<String>,
    /// The networks it attaches to (ids, or names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<String>,
    /// The secrets it mounts, by id and by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// The configs it mounts, by id and by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<String>,
}

impl PreviousSpec {
    /// A previous spec naming these volume sources, networks, secrets and
    /// configs.
    pub fn new<S: Into<String>>(
        volumes: impl IntoIterator<Item = S>,
        networks: impl IntoIterator<Item = S>,
        secrets: impl IntoIterator<Item = S>,
        configs: impl IntoIterator<Item = S>,
    ) -> Self {
        let all = |refs: &mut dyn Iterator<Item = S>| refs.map(Into::into).collect();
        PreviousSpec {
            volumes: all(&mut volumes.into_iter()),
            networks: all(&mut networks.into_iter()),
            secrets: all(&mut secrets.into_iter()),
            configs: all(&mut configs.into_iter()),
        }
    }

    /// Whether it names nothing.
    pub fn is_empty(&self) -> bool {
        self.volumes.is_empty()
            && self.networks.is_empty()
            && self.secrets.is_empty()
            && self.configs.is_empty()
    }
}

impl ServiceUse {
    /// The service `name` (id `id`), naming nothing yet.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        ServiceUse {
            id: id.into(),
            name: name.into(),
            stack: None,
            volumes: Vec::new(),
            networks: Vec::new(),
            secrets: Vec::new(),
            configs: Vec::new(),
            previous: None,
        }
    }

    /// With a previous spec naming what `previous` names.
    pub fn with_previous(mut self, previous: PreviousSpec) -> Self {
        self.previous = Some(previous);
        self
    }

    /// With the stack namespace label `stack`.
    pub fn in_stack(mut self, stack: impl Into<String>) -> Self {
        self.stack = Some(stack.into());
        self
    }

    /// With these volume mount sources.
    pub fn with_volumes<S: Into<String>>(mut self, sources: impl IntoIterator<Item = S>) -> Self {
        self.volumes = sources.into_iter().map(Into::into).collect();
        self
    }

    /// With these network references.
    pub fn with_networks<S: Into<String>>(mut self, refs: impl IntoIterator<Item = S>) -> Self {
        self.networks = refs.into_iter().map(Into::into).collect();
        self
    }

    /// With these secret references.
    pub fn with_secrets<S: Into<String>>(mut self, refs: impl IntoIterator<Item = S>) -> Self {
        self.secrets = refs.into_iter().map(Into::into).collect();
        self
    }

    /// With these config references.
    pub fn with_configs<S: Into<String>>(mut self, refs: impl IntoIterator<Item = S>) -> Self {
        self.configs = refs.into_iter().map(Into::into).collect();
        self
    }

    /// Whether its spec names the volume `volume`. A templated source
    /// (`{{.Task.Slot}}`) names every volume: which names it expands to is
    /// decided per task, on nodes the sweep may not see. The plain reading
    /// the index's test holds [`UsageIndex`] to.
    #[cfg(test)]
    fn names_volume(&self, volume: &str) -> bool {
        self.volumes
            .iter()
            .any(|source| source == volume || is_template(source))
    }

    /// Whether its spec names `object` of `kind`, by name or id: as
    /// [`ServiceUse::names_volume`], for the index's test.
    #[cfg(test)]
    fn names(&self, kind: ObjectKind, object: &ObjectRef) -> bool {
        let refs = match kind {
            ObjectKind::Volume => return self.names_volume(&object.name),
            ObjectKind::Network => &self.networks,
            ObjectKind::Secret => &self.secrets,
            ObjectKind::Config => &self.configs,
        };
        refs.iter().any(|r| object.is_named_by(r))
    }

    /// Whether its previous spec names `object` of `kind`: as
    /// [`ServiceUse::names`], for the index's test.
    #[cfg(test)]
    fn named_before(&self, kind: ObjectKind, object: &ObjectRef) -> bool {
        let Some(p) = &self.previous else {
            return false;
        };
        let refs = match kind {
            ObjectKind::Volume => {
                return p
                    .volumes
                    .iter()
                    .any(|source| *source == object.name || is_template(source))
            }
            ObjectKind::Network => &p.networks,
            ObjectKind::Secret => &p.secrets,
            ObjectKind::Config => &p.configs,
        };
        refs.iter().any(|r| object.is_named_by(r))
    }
}

/// Whether a mount source is a Go template the engine expands per task.
pub fn is_template(source: &str) -> bool {
    source.contains("{{")
}

/// One container on a node, and the named volumes and networks it uses.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ContainerUse {
    /// The container's id.
    pub id: String,
    /// The container's name.
    pub name: String,
    /// Its [`SERVICE_ID_LABEL`], when it is a task of a service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// Its stack namespace label, when it is a task of a stack's service:
    /// a task container outlives its service for a while, and its stack
    /// label still says whose it is once the service is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
    /// The names of the volumes it mounts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<String>,
    /// The networks it is attached to, by name and by id, running or
    /// stopped: the engine removes a swarm network that a stopped
    /// container is attached to, and that container then cannot start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<String>,
}

impl ContainerUse {
    /// The container `name` (id `id`), of no service, mounting `volumes`.
    pub fn new<S: Into<String>>(
        id: impl Into<String>,
        name: impl Into<String>,
        volumes: impl IntoIterator<Item = S>,
    ) -> Self {
        ContainerUse {
            id: id.into(),
            name: name.into(),
            service: None,
            stack: None,
            volumes: volumes.into_iter().map(Into::into).collect(),
            networks: Vec::new(),
        }
    }

    /// Attached to the networks `refs` (names and ids).
    pub fn with_networks<S: Into<String>>(mut self, refs: impl IntoIterator<Item = S>) -> Self {
        self.networks = refs.into_iter().map(Into::into).collect();
        self
    }

    /// A task of the service with id `service`.
    pub fn of_service(mut self, service: impl Into<String>) -> Self {
        self.service = Some(service.into());
        self
    }

    /// Carrying the stack namespace label `stack`.
    pub fn in_stack(mut self, stack: impl Into<String>) -> Self {
        self.stack = Some(stack.into());
        self
    }

    /// Whether the networks it is attached to count as used by it: only
    /// for a container of no service. A task's service's spec says which
    /// networks the service uses, and the engine never starts a stopped
    /// task again; a container of no service may be started at any time,
    /// and needs its networks then.
    pub fn networks_count(&self) -> bool {
        self.service.is_none()
    }

    /// Whether anything it uses can keep an object of a release: a named
    /// volume, or a network when [its networks count](Self::networks_count).
    /// A listing leaves the others out: every task of every service is
    /// attached to a network, and listing them all would only grow the
    /// snapshot and the volume agent's result line.
    pub fn matters(&self) -> bool {
        !self.volumes.is_empty() || (self.networks_count() && !self.networks.is_empty())
    }

    /// Whether it is a task of `release`'s own: a swarm task (it names its
    /// service's id) of a service in `own`, or labelled with the release's
    /// stack namespace (its service may be gone already, and with it the
    /// id's place in `own`) and not of one in `foreign`. A container
    /// without a service id is nobody's task, whatever its labels say:
    /// `docker run --label` sets any.
    fn is_of(&self, release: &str, own: &BTreeSet<&str>, foreign: &BTreeSet<&str>) -> bool {
        self.service.as_deref().is_some_and(|id| {
            own.contains(id) || (self.stack.as_deref() == Some(release) && !foreign.contains(id))
        })
    }
}

/// The containers one node's daemon lists (running or stopped) that use a
/// named volume or, of no service, are attached to a network
/// ([`ContainerUse::matters`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct NodeContainers {
    /// The node's id (as in the swarm's node list), or `(manager)` for the
    /// manager's own daemon when the swarm has no node reach.
    pub node: String,
    /// Its containers that use a named volume or, of no service, a
    /// network.
    #[serde(default)]
    pub containers: Vec<ContainerUse>,
}

impl NodeContainers {
    /// The containers listed on `node`.
    pub fn new(node: impl Into<String>, containers: Vec<ContainerUse>) -> Self {
        NodeContainers {
            node: node.into(),
            containers,
        }
    }
}

/// What uses what on one swarm, as read: every service's spec references,
/// and the containers of each node reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Usage {
    /// Every service of the swarm, of any stack or none.
    #[serde(default)]
    pub services: Vec<ServiceUse>,
    /// The containers using named volumes or networks on each node
    /// reached.
    #[serde(default)]
    pub containers: Vec<NodeContainers>,
}

impl Usage {
    /// The swarm's services, and the containers on each node reached.
    pub fn new(services: Vec<ServiceUse>, containers: Vec<NodeContainers>) -> Self {
        Usage {
            services,
            containers,
        }
    }

    /// Every list sorted, so that equal observations compare alike.
    pub fn sorted(mut self) -> Self {
        for s in &mut self.services {
            s.volumes.sort();
            s.networks.sort();
            s.secrets.sort();
            s.configs.sort();
            if let Some(p) = &mut s.previous {
                p.volumes.sort();
                p.networks.sort();
                p.secrets.sort();
                p.configs.sort();
            }
        }
        self.services.sort();
        for node in &mut self.containers {
            for c in &mut node.containers {
                c.volumes.sort();
                c.networks.sort();
            }
            node.containers.sort();
        }
        self.containers.sort();
        self
    }
}

named_enum! {
    /// The kinds of object another workload may share with a release.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum ObjectKind {
        /// `volume`: a named volume, on any node.
        Volume = "volume",
        /// `network`: a swarm network.
        Network = "network",
        /// `secret`: a swarm secret.
        Secret = "secret",
        /// `config`: a swarm config.
        Config = "config",
    }
}

named_enum! {
    /// What uses a shared object.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum UserKind {
        /// `service`: a service whose spec names the object.
        Service = "service",
        /// `container`: a container using the volume on a node.
        Container = "container",
        /// `unseen`: a container nobody could see, on a node whose
        /// containers were not read; one of no service may be attached to
        /// an attachable network there.
        Unseen = "unseen",
    }
}

/// Who uses an object: a service, or a container on a node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct User {
    /// A service or a container.
    pub kind: UserKind,
    /// The service's or container's name. Raw: escape it before printing.
    pub name: String,
    /// The service's or container's id.
    pub id: String,
    /// For a container: the node it is on (`(manager)` for the manager's
    /// own daemon without node reach).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub node: Option<String>,
}

impl User {
    /// The service `name` with id `id`.
    pub fn service(id: impl Into<String>, name: impl Into<String>) -> Self {
        User {
            kind: UserKind::Service,
            name: name.into(),
            id: id.into(),
            node: None,
        }
    }

    /// The containers of the nodes that were not read (see
    /// [`unseen_users`]): no name, no id, no node.
    pub fn unseen() -> Self {
        User {
            kind: UserKind::Unseen,
            name: String::new(),
            id: String::new(),
            node: None,
        }
    }

    /// The container `name` with id `id` on `node`.
    pub fn container(
        id: impl Into<String>,
        name: impl Into<String>,
        node: impl Into<String>,
    ) -> Self {
        User {
            kind: UserKind::Container,
            name: name.into(),
            id: id.into(),
            node: Some(node.into()),
        }
    }
}

/// An object of a release that another workload uses, and that user: the
/// object stays (its release's records with it) while the user names it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct InUse {
    /// The object's kind.
    pub kind: ObjectKind,
    /// The object's name. Raw: escape it before printing.
    pub object: String,
    /// Who uses it.
    pub user: User,
}

impl InUse {
    /// `user` uses the `kind` object `object`.
    pub fn new(kind: ObjectKind, object: impl Into<String>, user: User) -> Self {
        InUse {
            kind,
            object: object.into(),
            user,
        }
    }
}

/// Every use of `release`'s `objects` by a workload that is not the
/// release's own, sorted: the rule that spares a shared object.
///
/// The release's own are its services as planned (`own`: they may be gone
/// by now, while their stopped tasks still name them) and every service
/// labelled with its stack (but one the sweep found labelled since the
/// plan and leaves standing: see `users_of_but`). Another service names
/// what its spec or its previous spec names. Volumes are judged only
/// when `volumes` is true
/// (a purge is planned): otherwise none is removed anyway. A volume counts
/// by its name on every node: a workload on one node may be placed on
/// another tomorrow, where the same name is the volume it will mount.
/// Answered from an index of `usage` built once (`usage/index.rs`), the
/// rule's one home.
pub fn users_of(
    release: &str,
    objects: &StackObjects,
    volumes: bool,
    own: &BTreeSet<String>,
    usage: &Usage,
) -> Vec<InUse> {
    users_of_but(release, objects, volumes, own, &BTreeSet::new(), usage)
}

/// [`users_of`], where the services in `foreign` are never the release's
/// own, whatever their labels say: the sweep's, for services labelled with
/// the stack since the plan. It leaves them standing, never reviewed, so
/// what they use is another workload's, and their tasks are not the
/// release's either.
pub(crate) fn users_of_but(
    release: &str,
    objects: &StackObjects,
    volumes: bool,
    own: &BTreeSet<String>,
    foreign: &BTreeSet<String>,
    usage: &Usage,
) -> Vec<InUse> {
    let own: BTreeSet<&str> = own.iter().map(String::as_str).collect();
    let foreign: BTreeSet<&str> = foreign.iter().map(String::as_str).collect();
    UsageIndex::new(usage).users_of(release, objects, volumes, &own, &foreign)
}

/// The uses nobody could see of `networks` (a release's, or those a live
/// release dropped): each attachable one, when the containers of some
/// node the swarm counts were not read (`every_node_read` false: a node
/// not reached, one whose containers did not read, or no node reach at
/// all, where only the manager's own are seen). A container of no service may be attached to such a network on
/// any node, and one stopped there holds it in no way the engine checks:
/// the network would go, and the container could never start again. A
/// network that is not attachable takes no such container (the engine
/// refuses it), so only the services' specs, all of which are read, say
/// who uses it. Part of the rule [`users_of`] states; the planner adds
/// these to what it finds.
pub fn unseen_users<'o>(
    networks: impl IntoIterator<Item = &'o ObjectRef>,
    every_node_read: bool,
) -> Vec<InUse> {
    if every_node_read {
        return Vec::new();
    }
    networks
        .into_iter()
        .filter(|n| n.attachable)
        .map(|n| InUse::new(ObjectKind::Network, &n.name, User::unseen()))
        .collect()
}

/// Every use of `objects` (networks, secrets, configs) by a service whose
/// id is not in `leaving`, sorted: the resource rule's check of the objects
/// the live release `release` dropped. Unlike [`users_of`], the release's
/// own services count: a dropped network its current service still
/// attaches to is in use. `leaving` are the dropped services, removed
/// before the objects. Another service's previous spec counts as its
/// spec does (a rollback returns to it); the release's own services'
/// previous specs do not: they are its revision before the one that
/// dropped the objects.
pub fn service_users<'o>(
    release: &str,
    objects: impl IntoIterator<Item = (ObjectKind, &'o ObjectRef)>,
    leaving: &BTreeSet<&str>,
    usage: &Usage,
) -> Vec<InUse> {
    UsageIndex::new(usage).service_users(release, objects, leaving)
}

/// The users of the volume `name` of `release` (see [`users_of`]), for
/// the sweep's check of one volume listed at run time.
pub fn volume_users_of(
    release: &str,
    name: &str,
    own: &BTreeSet<String>,
    usage: &Usage,
) -> Vec<InUse> {
    volume_users_of_but(release, name, own, &BTreeSet::new(), usage)
}

/// [`volume_users_of`], with `foreign` as in [`users_of_but`].
pub(crate) fn volume_users_of_but(
    release: &str,
    name: &str,
    own: &BTreeSet<String>,
    foreign: &BTreeSet<String>,
    usage: &Usage,
) -> Vec<InUse> {
    let own: BTreeSet<&str> = own.iter().map(String::as_str).collect();
    let foreign: BTreeSet<&str> = foreign.iter().map(String::as_str).collect();
    UsageIndex::new(usage).volume_users_of(release, name, &own, &foreign)
}

/// `objects` without what `shared` names: what a release's deletion may
/// remove. Shared volumes leave every node's list.
pub fn without_shared(objects: &StackObjects, shared: &[InUse]) -> StackObjects {
    unshared(objects.clone(), shared)
}

/// [`without_shared`], on objects the caller gives up.
pub(crate) fn unshared(mut objects: StackObjects, shared: &[InUse]) -> StackObjects {
    let is_shared =
        |kind: ObjectKind, name: &str| shared.iter().any(|u| u.kind == kind && u.object == name);
    objects
        .networks
        .retain(|o| !is_shared(ObjectKind::Network, &o.name));
    objects
        .secrets
        .retain(|o| !is_shared(ObjectKind::Secret, &o.name));
    objects
        .configs
        .retain(|o| !is_shared(ObjectKind::Config, &o.name));
    if let Some(volumes) = &mut objects.volumes {
        for node in volumes.iter_mut() {
            node.volumes.retain(|v| !is_shared(ObjectKind::Volume, v));
        }
    }
    objects
}

crate::map_only::map_only! {
    User => "a user object";
    InUse => "an in-use object";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::{NodeVolumes, ServiceEntry};

    fn objects() -> StackObjects {
        StackObjects::new(
            vec![ServiceEntry::new("s-own", "gone_app", 3)],
            vec![ObjectRef::new("n1", "gone_default")],
            vec![ObjectRef::new("sec1", "gone_key")],
            vec![ObjectRef::new("cfg1", "gone_conf")],
        )
        .with_volumes(vec![NodeVolumes::new("node-a", vec!["gone_data".into()])])
    }

    fn own() -> BTreeSet<String> {
        BTreeSet::from(["s-own".to_owned()])
    }

    #[test]
    fn the_release_s_own_services_and_tasks_use_nothing_of_it() {
        let usage = Usage::new(
            vec![ServiceUse::new("s-own", "gone_app")
                .in_stack("gone")
                .with_volumes(["gone_data"])
                .with_networks(["n1"])
                .with_secrets(["sec1"])
                .with_configs(["cfg1"])],
            vec![NodeContainers::new(
                "node-a",
                vec![ContainerUse::new("c1", "gone_app.1", ["gone_data"]).of_service("s-own")],
            )],
        );
        assert_eq!(users_of("gone", &objects(), true, &own(), &usage), vec![]);
    }

    /// A service updated off the release's objects returns to them on a
    /// rollback: its previous spec names them still. Of the live release
    /// whose revision dropped them, its own previous spec is its history,
    /// not a use.
    #[test]
    fn a_previous_spec_names_what_a_rollback_returns_to() {
        let previous = || PreviousSpec::new(["gone_data"], ["n1"], ["gone_key"], ["cfg1"]);
        let usage = Usage::new(
            vec![
                ServiceUse::new("s2", "user_app")
                    .in_stack("user")
                    .with_previous(previous()),
                // The release's own: nothing of it uses its objects.
                ServiceUse::new("s-own", "gone_app")
                    .in_stack("gone")
                    .with_previous(previous()),
            ],
            vec![],
        );
        let user = User::service("s2", "user_app");
        let mut expected = vec![
            InUse::new(ObjectKind::Volume, "gone_data", user.clone()),
            InUse::new(ObjectKind::Network, "gone_default", user.clone()),
            InUse::new(ObjectKind::Secret, "gone_key", user.clone()),
            InUse::new(ObjectKind::Config, "gone_conf", user.clone()),
        ];
        expected.sort();
        assert_eq!(users_of("gone", &objects(), true, &own(), &usage), expected);
        assert_eq!(
            volume_users_of("gone", "gone_data", &own(), &usage),
            vec![InUse::new(ObjectKind::Volume, "gone_data", user.clone())]
        );
        // The live release `gone` dropped its config: its own service's
        // previous spec does not keep it; another's does.
        let config = ObjectRef::new("cfg1", "gone_conf");
        let users = |release| {
            service_users(
                release,
                [(ObjectKind::Config, &config)],
                &BTreeSet::new(),
                &usage,
            )
        };
        assert_eq!(
            users("gone"),
            [InUse::new(ObjectKind::Config, "gone_conf", user)]
        );
        assert_eq!(
            users("user"),
            [InUse::new(
                ObjectKind::Config,
                "gone_conf",
                User::service("s-own", "gone_app")
            )]
        );
    }

    #[test]
    fn another_service_naming_an_object_by_id_or_name_uses_it() {
        let usage = Usage::new(
            vec![
                ServiceUse::new("s2", "user_app")
                    .in_stack("user")
                    .with_networks(["n1"])
                    .with_secrets(["gone_key"]),
                ServiceUse::new("s3", "byhand").with_volumes(["gone_data"]),
            ],
            vec![],
        );
        let found = users_of("gone", &objects(), true, &own(), &usage);
        let kinds: Vec<(ObjectKind, &str, &str)> = found
            .iter()
            .map(|u| (u.kind, u.object.as_str(), u.user.name.as_str()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (ObjectKind::Volume, "gone_data", "byhand"),
                (ObjectKind::Network, "gone_default", "user_app"),
                (ObjectKind::Secret, "gone_key", "user_app"),
            ]
        );
        // Without a purge, volumes are not judged: none is removed.
        let found = users_of("gone", &objects(), false, &own(), &usage);
        assert!(found.iter().all(|u| u.kind != ObjectKind::Volume));
    }

    #[test]
    fn a_task_container_of_the_release_outlives_its_service_and_is_still_its_own() {
        // The service is gone (not in `own`), its stopped task is not.
        let usage = Usage::new(
            vec![],
            vec![NodeContainers::new(
                "node-a",
                vec![ContainerUse::new("c1", "gone_app.1.x", ["gone_data"])
                    .of_service("s-removed")
                    .in_stack("gone")],
            )],
        );
        assert_eq!(volume_users_of("gone", "gone_data", &own(), &usage), vec![]);
        // Another stack's task is another workload's.
        let usage = Usage::new(
            vec![],
            vec![NodeContainers::new(
                "node-a",
                vec![ContainerUse::new("c2", "user_app.1.y", ["gone_data"])
                    .of_service("s-user")
                    .in_stack("user")],
            )],
        );
        assert_eq!(
            volume_users_of("gone", "gone_data", &own(), &usage).len(),
            1
        );
        // A container that is no swarm task (`docker run --label`), with
        // the release's namespace label: someone else's.
        let usage = Usage::new(
            vec![],
            vec![NodeContainers::new(
                "node-a",
                vec![ContainerUse::new("c3", "by-hand", ["gone_data"]).in_stack("gone")],
            )],
        );
        assert_eq!(
            volume_users_of("gone", "gone_data", &own(), &usage).len(),
            1
        );
    }

    #[test]
    fn a_templated_source_names_every_volume() {
        let usage = Usage::new(
            vec![ServiceUse::new("s2", "other").with_volumes(["data-{{.Task.Slot}}"])],
            vec![],
        );
        let found = users_of("gone", &objects(), true, &own(), &usage);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].object, "gone_data");
    }

    #[test]
    fn a_stopped_container_of_no_service_uses_the_volume_on_any_node() {
        let usage = Usage::new(
            vec![],
            vec![NodeContainers::new(
                "node-b",
                vec![ContainerUse::new("c9", "manual", ["gone_data"])],
            )],
        );
        let found = volume_users_of("gone", "gone_data", &own(), &usage);
        assert_eq!(
            found,
            vec![InUse::new(
                ObjectKind::Volume,
                "gone_data",
                User::container("c9", "manual", "node-b")
            )]
        );
    }

    #[test]
    fn an_attachable_network_is_unseen_in_use_unless_every_node_was_read() {
        let objects = StackObjects::new(
            Vec::new(),
            vec![
                ObjectRef::new("n1", "gone_debug").with_attachable(true),
                ObjectRef::new("n2", "gone_default"),
            ],
            vec![ObjectRef::new("s1", "gone_key")],
            Vec::new(),
        );
        assert_eq!(
            unseen_users(&objects.networks, false),
            [InUse::new(
                ObjectKind::Network,
                "gone_debug",
                User::unseen()
            )]
        );
        assert!(unseen_users(&objects.networks, true).is_empty());
    }

    #[test]
    fn a_container_of_no_service_attached_to_the_network_uses_it_a_task_does_not() {
        let usage = Usage::new(
            vec![],
            vec![NodeContainers::new(
                "node-b",
                vec![
                    // Stopped or running, by name or by id: `docker run
                    // --network gone_default`, which cannot start again
                    // once the network is gone.
                    ContainerUse::new("c1", "debug", None::<String>)
                        .with_networks(["gone_default"]),
                    ContainerUse::new("c2", "probe", None::<String>).with_networks(["n1"]),
                    // Another service's task, and one of the release's
                    // own: their services' specs decide.
                    ContainerUse::new("c3", "other_app.1", None::<String>)
                        .with_networks(["gone_default"])
                        .of_service("s-other"),
                    ContainerUse::new("c4", "gone_app.1", None::<String>)
                        .with_networks(["n1"])
                        .of_service("s-own"),
                    // Attached elsewhere only.
                    ContainerUse::new("c5", "web", None::<String>).with_networks(["web_default"]),
                ],
            )],
        );
        let network = |id: &str, name: &str| {
            InUse::new(
                ObjectKind::Network,
                "gone_default",
                User::container(id, name, "node-b"),
            )
        };
        let expected = vec![network("c1", "debug"), network("c2", "probe")];
        assert_eq!(
            users_of("gone", &objects(), false, &own(), &usage),
            expected
        );
        // The resource rule's check of a dropped network: the same.
        let dropped = ObjectRef::new("n1", "gone_default");
        assert_eq!(
            service_users(
                "gone",
                [(ObjectKind::Network, &dropped)],
                &BTreeSet::new(),
                &usage
            ),
            expected
        );
        // Nothing else of the release is kept by them.
        let left = without_shared(&objects(), &expected);
        assert!(left.networks.is_empty());
        assert_eq!(left.secrets, objects().secrets);
    }

    #[test]
    fn shared_objects_leave_what_the_deletion_removes() {
        let shared = vec![
            InUse::new(ObjectKind::Volume, "gone_data", User::service("s", "x")),
            InUse::new(ObjectKind::Network, "gone_default", User::service("s", "x")),
        ];
        let left = without_shared(&objects(), &shared);
        assert!(left.networks.is_empty());
        assert_eq!(left.secrets, objects().secrets);
        assert_eq!(left.volumes.unwrap()[0].volumes, Vec::<String>::new());
    }
}
