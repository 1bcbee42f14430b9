//! The rule of [`users_of`](super::users_of) and
//! [`service_users`](super::service_users), answered from an index of one
//! swarm's usage built once.
//!
//! The planner asks who uses the objects of every release it deletes, and
//! a swarm's usage lists every service on it: scanned once per release,
//! a swarm of ten thousand releases costs a hundred million comparisons,
//! and planning a million releases takes minutes instead of a second. The
//! index finds, for a name or an id, the services and containers that name
//! it, so each release costs what it uses. It is the rule's one home: the
//! sweep's checks of one release at a time build one from what they read.
//! A test holds its answers to the rule written out as plain scans.

use std::collections::{BTreeSet, HashMap};

use super::{is_template, InUse, ObjectKind, Usage, User};
use crate::objects::{ObjectRef, StackObjects};

/// Positions in the usage's lists, by the reference that leads to them.
type Positions<'u> = HashMap<&'u str, At<usize>>;

/// The positions one reference leads to: nearly always one, which then
/// takes no allocation of its own (a swarm's usage names some ten
/// thousand objects, each once).
#[derive(Debug)]
enum At<T> {
    One(T),
    Many(Vec<T>),
}

impl<T: Copy> At<T> {
    fn add<K: std::hash::Hash + Eq>(map: &mut HashMap<K, At<T>>, key: K, at: T) {
        match map.get_mut(&key) {
            None => {
                map.insert(key, At::One(at));
            }
            Some(At::Many(all)) => all.push(at),
            Some(one @ At::One(_)) => {
                if let At::One(first) = *one {
                    *one = At::Many(vec![first, at]);
                }
            }
        }
    }

    fn as_slice(&self) -> &[T] {
        match self {
            At::One(at) => std::slice::from_ref(at),
            At::Many(all) => all,
        }
    }
}

/// Services by each reference one of their specs makes.
#[derive(Debug, Default)]
struct SpecRefs<'u> {
    /// By each network, secret and config reference, as written.
    networks: Positions<'u>,
    secrets: Positions<'u>,
    configs: Positions<'u>,
    /// By each volume mount source, as written.
    volumes: Positions<'u>,
    /// Those with a templated source, which names every volume.
    templated: Vec<usize>,
}

impl<'u> SpecRefs<'u> {
    /// Adds the service at `at`, whose spec names these.
    fn add(
        &mut self,
        at: usize,
        volumes: &'u [String],
        networks: &'u [String],
        secrets: &'u [String],
        configs: &'u [String],
    ) {
        for (refs, to) in [
            (networks, &mut self.networks),
            (secrets, &mut self.secrets),
            (configs, &mut self.configs),
            (volumes, &mut self.volumes),
        ] {
            for r in refs {
                At::add(to, r.as_str(), at);
            }
        }
        if volumes.iter().any(|source| is_template(source)) {
            self.templated.push(at);
        }
    }

    /// The services whose spec names `object` of `kind` by its name or
    /// its id, each once, in the usage's order.
    fn naming(&self, kind: ObjectKind, object: &ObjectRef) -> Vec<usize> {
        let by = match kind {
            ObjectKind::Network => &self.networks,
            ObjectKind::Secret => &self.secrets,
            ObjectKind::Config => &self.configs,
            // A volume is named by its name alone, or by any template.
            ObjectKind::Volume => {
                let mut at: Vec<usize> = self
                    .volumes
                    .get(object.name.as_str())
                    .map_or(&[][..], At::as_slice)
                    .iter()
                    .chain(&self.templated)
                    .copied()
                    .collect();
                at.sort_unstable();
                at.dedup();
                return at;
            }
        };
        let mut at: Vec<usize> = [Some(object.name.as_str()), object.id.as_deref()]
            .into_iter()
            .flatten()
            .filter_map(|key| by.get(key))
            .flat_map(At::as_slice)
            .copied()
            .collect();
        at.sort_unstable();
        at.dedup();
        at
    }
}

/// One swarm's usage, indexed by every reference its services and
/// containers make.
#[derive(Debug)]
pub(crate) struct UsageIndex<'u> {
    usage: &'u Usage,
    /// Services by their stack label.
    by_stack: Positions<'u>,
    /// Services by what their spec names.
    now: SpecRefs<'u>,
    /// Services by what their previous spec names: what a rollback
    /// returns them to.
    before: SpecRefs<'u>,
    /// Containers (node, container) by each volume they use.
    containers: HashMap<&'u str, At<(usize, usize)>>,
    /// Containers (node, container) by each network reference (name or
    /// id) they are attached by.
    attached: HashMap<&'u str, At<(usize, usize)>>,
}

impl<'u> UsageIndex<'u> {
    pub(crate) fn new(usage: &'u Usage) -> Self {
        let mut index = UsageIndex {
            usage,
            by_stack: HashMap::new(),
            now: SpecRefs::default(),
            before: SpecRefs::default(),
            containers: HashMap::new(),
            attached: HashMap::new(),
        };
        index.by_stack.reserve(usage.services.len());
        index.now.networks.reserve(usage.services.len());
        for (at, s) in usage.services.iter().enumerate() {
            if let Some(stack) = s.stack.as_deref() {
                At::add(&mut index.by_stack, stack, at);
            }
            index
                .now
                .add(at, &s.volumes, &s.networks, &s.secrets, &s.configs);
            if let Some(p) = &s.previous {
                index
                    .before
                    .add(at, &p.volumes, &p.networks, &p.secrets, &p.configs);
            }
        }
        for (n, node) in usage.containers.iter().enumerate() {
            for (c, container) in node.containers.iter().enumerate() {
                for v in &container.volumes {
                    At::add(&mut index.containers, v.as_str(), (n, c));
                }
                for r in &container.networks {
                    At::add(&mut index.attached, r.as_str(), (n, c));
                }
            }
        }
        index
    }

    /// The ids of `release`'s own services: `own`, and those labelled
    /// with its stack namespace (as `own_services`) but for `foreign`.
    fn own<'a>(
        &'a self,
        release: &str,
        own: &BTreeSet<&'a str>,
        foreign: &BTreeSet<&str>,
    ) -> BTreeSet<&'a str> {
        let mut ids = own.clone();
        if let Some(at) = self.by_stack.get(release) {
            ids.extend(
                at.as_slice()
                    .iter()
                    .map(|&i| self.usage.services[i].id.as_str())
                    .filter(|id| !foreign.contains(id)),
            );
        }
        ids
    }

    /// The services that name `object` of `kind` by its name or its id,
    /// in their spec or in their previous spec (a rollback returns to it,
    /// and the object then had better be there), each once, in the
    /// usage's order.
    fn naming(&self, kind: ObjectKind, object: &ObjectRef) -> Vec<usize> {
        let mut at = self.now.naming(kind, object);
        at.extend(self.before.naming(kind, object));
        at.sort_unstable();
        at.dedup();
        at
    }

    /// The containers of no service attached to the network `object` by
    /// its name or its id, each once, in the usage's order. A service's
    /// task container is not one: the service's spec says whether it uses
    /// the network (a service that names it is a user by that), and the
    /// engine never starts a stopped task again, so the stopped tasks a
    /// service keeps from before an update that dropped the network use
    /// nothing. A container of no service (`docker run --network`) may be
    /// started again at any time, and needs the network then.
    fn standalone_attached_to(&self, object: &ObjectRef) -> Vec<User> {
        let mut at: Vec<(usize, usize)> = [Some(object.name.as_str()), object.id.as_deref()]
            .into_iter()
            .flatten()
            .filter_map(|key| self.attached.get(key))
            .flat_map(At::as_slice)
            .copied()
            .collect();
        at.sort_unstable();
        at.dedup();
        at.into_iter()
            .map(|at| self.container_user(at))
            .filter(|(container, _)| container.networks_count())
            .map(|(_, user)| user)
            .collect()
    }

    /// The user a container listed at `(node, container)` is.
    fn container_user(&self, (n, c): (usize, usize)) -> (&'u super::ContainerUse, User) {
        let node = &self.usage.containers[n];
        let container = &node.containers[c];
        let user = User::container(&container.id, &container.name, &node.node);
        (container, user)
    }

    /// [`users_of`](super::users_of), `own` by reference.
    pub(crate) fn users_of(
        &self,
        release: &str,
        objects: &StackObjects,
        volumes: bool,
        own: &BTreeSet<&str>,
        foreign: &BTreeSet<&str>,
    ) -> Vec<InUse> {
        let own = self.own(release, own, foreign);
        let mut found = BTreeSet::new();
        let kinds = [
            (ObjectKind::Network, &objects.networks),
            (ObjectKind::Secret, &objects.secrets),
            (ObjectKind::Config, &objects.configs),
        ];
        for (kind, list) in kinds {
            for object in list {
                for at in self.naming(kind, object) {
                    let s = &self.usage.services[at];
                    if !own.contains(s.id.as_str()) {
                        found.insert(InUse::new(
                            kind,
                            &object.name,
                            User::service(&s.id, &s.name),
                        ));
                    }
                }
            }
        }
        for network in &objects.networks {
            for user in self.standalone_attached_to(network) {
                found.insert(InUse::new(ObjectKind::Network, &network.name, user));
            }
        }
        if volumes {
            let names: BTreeSet<&str> = objects
                .volumes
                .iter()
                .flatten()
                .flat_map(|n| n.volumes.iter().map(String::as_str))
                .collect();
            for name in names {
                self.volume_users(release, name, &own, foreign, &mut found);
            }
        }
        found.into_iter().collect()
    }

    /// Every use of the volume `name` by a service not in `own`, or by a
    /// container that is not a task of one in `own` (as `volume_users`);
    /// a task of one in `foreign` never is.
    fn volume_users(
        &self,
        release: &str,
        name: &str,
        own: &BTreeSet<&str>,
        foreign: &BTreeSet<&str>,
        found: &mut BTreeSet<InUse>,
    ) {
        for at in self.naming(ObjectKind::Volume, &ObjectRef::named(name)) {
            let s = &self.usage.services[at];
            if !own.contains(s.id.as_str()) {
                found.insert(InUse::new(
                    ObjectKind::Volume,
                    name,
                    User::service(&s.id, &s.name),
                ));
            }
        }
        let containers = self.containers.get(name).map_or(&[][..], At::as_slice);
        for &at in containers {
            let (container, user) = self.container_user(at);
            if !container.is_of(release, own, foreign) {
                found.insert(InUse::new(ObjectKind::Volume, name, user));
            }
        }
    }

    /// [`volume_users_of`](super::volume_users_of), `own` by reference.
    pub(crate) fn volume_users_of(
        &self,
        release: &str,
        name: &str,
        own: &BTreeSet<&str>,
        foreign: &BTreeSet<&str>,
    ) -> Vec<InUse> {
        let own = self.own(release, own, foreign);
        let mut found = BTreeSet::new();
        self.volume_users(release, name, &own, foreign, &mut found);
        found.into_iter().collect()
    }

    /// [`service_users`](super::service_users).
    pub(crate) fn service_users<'o>(
        &self,
        release: &str,
        objects: impl IntoIterator<Item = (ObjectKind, &'o ObjectRef)>,
        leaving: &BTreeSet<&str>,
    ) -> Vec<InUse> {
        let mut found = BTreeSet::new();
        for (kind, object) in objects {
            // The release's own services' previous specs are its revision
            // before the one that dropped the object: its own history,
            // which its records keep, not another workload's use.
            let before = self
                .before
                .naming(kind, object)
                .into_iter()
                .filter(|&at| self.usage.services[at].stack.as_deref() != Some(release));
            let mut at: Vec<usize> = self.now.naming(kind, object);
            at.extend(before);
            at.sort_unstable();
            at.dedup();
            for at in at {
                let s = &self.usage.services[at];
                if !leaving.contains(s.id.as_str()) {
                    found.insert(InUse::new(
                        kind,
                        &object.name,
                        User::service(&s.id, &s.name),
                    ));
                }
            }
            if kind == ObjectKind::Network {
                for user in self.standalone_attached_to(object) {
                    found.insert(InUse::new(kind, &object.name, user));
                }
            }
        }
        found.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ContainerUse, NodeContainers, PreviousSpec, ServiceUse};
    use super::*;

    // The rule written out plainly, as scans of every service and
    // container: what the index must answer.
    /// The services that are the release's own: those labelled with its stack
    /// namespace but for those in `foreign` (labelled since the plan), and
    /// those `own` lists (its services as planned, which a container's
    /// service label still names after they are removed).
    fn own_services<'a>(
        release: &str,
        own: &'a BTreeSet<String>,
        foreign: &BTreeSet<String>,
        usage: &'a Usage,
    ) -> BTreeSet<&'a str> {
        let mut ids: BTreeSet<&str> = own.iter().map(String::as_str).collect();
        ids.extend(
            usage
                .services
                .iter()
                .filter(|s| s.stack.as_deref() == Some(release) && !foreign.contains(&s.id))
                .map(|s| s.id.as_str()),
        );
        ids
    }

    /// Every use of `release`'s `objects` by a workload that is not the
    /// release's own, sorted: the rule that spares a shared object.
    ///
    /// `own` are the ids of the release's services as planned (they may be
    /// gone by now, while their stopped tasks still name them). Volumes are
    /// judged only when `volumes` is true (a purge is planned): otherwise none
    /// is removed anyway. A volume counts by its name on every node: a
    /// workload on one node may be placed on another tomorrow, where the same
    /// name is the volume it will mount.
    fn users_of(
        release: &str,
        objects: &StackObjects,
        volumes: bool,
        own: &BTreeSet<String>,
        foreign: &BTreeSet<String>,
        usage: &Usage,
    ) -> Vec<InUse> {
        let own = own_services(release, own, foreign, usage);
        let others = || {
            usage
                .services
                .iter()
                .filter(|s| !own.contains(s.id.as_str()))
        };
        let mut found = BTreeSet::new();
        let kinds = [
            (ObjectKind::Network, &objects.networks),
            (ObjectKind::Secret, &objects.secrets),
            (ObjectKind::Config, &objects.configs),
        ];
        for (kind, list) in kinds {
            for object in list {
                for s in others().filter(|s| s.names(kind, object) || s.named_before(kind, object))
                {
                    found.insert(InUse::new(
                        kind,
                        &object.name,
                        User::service(&s.id, &s.name),
                    ));
                }
            }
        }
        for network in &objects.networks {
            found.extend(standalone_attached(network, usage));
        }
        if volumes {
            let names: BTreeSet<&str> = objects
                .volumes
                .iter()
                .flatten()
                .flat_map(|n| n.volumes.iter().map(String::as_str))
                .collect();
            for name in names {
                found.extend(volume_users(release, name, &own, foreign, usage));
            }
        }
        found.into_iter().collect()
    }

    /// Every container of no service attached to `network` by its name or
    /// id, on any node.
    fn standalone_attached(network: &ObjectRef, usage: &Usage) -> Vec<InUse> {
        let mut found = Vec::new();
        for node in &usage.containers {
            for c in &node.containers {
                if c.service.is_none() && c.networks.iter().any(|r| network.is_named_by(r)) {
                    found.push(InUse::new(
                        ObjectKind::Network,
                        &network.name,
                        User::container(&c.id, &c.name, &node.node),
                    ));
                }
            }
        }
        found
    }

    /// Every use of the volume `name` by a service not in `own`, or by a
    /// container on any node that is not a task of one in `own`: one
    /// with the release's stack label and a service id is, unless that
    /// service is in `foreign`.
    fn volume_users(
        release: &str,
        name: &str,
        own: &BTreeSet<&str>,
        foreign: &BTreeSet<String>,
        usage: &Usage,
    ) -> Vec<InUse> {
        let mut found = Vec::new();
        for s in &usage.services {
            let named =
                s.names_volume(name) || s.named_before(ObjectKind::Volume, &ObjectRef::named(name));
            if !own.contains(s.id.as_str()) && named {
                found.push(InUse::new(
                    ObjectKind::Volume,
                    name,
                    User::service(&s.id, &s.name),
                ));
            }
        }
        for node in &usage.containers {
            for c in &node.containers {
                let task_of_own = c.service.as_deref().is_some_and(|id| {
                    own.contains(id)
                        || (c.stack.as_deref() == Some(release) && !foreign.contains(id))
                });
                if !task_of_own && c.volumes.iter().any(|v| v == name) {
                    found.push(InUse::new(
                        ObjectKind::Volume,
                        name,
                        User::container(&c.id, &c.name, &node.node),
                    ));
                }
            }
        }
        found
    }

    /// Every use of `objects` (networks, secrets, configs) by a service whose
    /// id is not in `leaving`, sorted: the resource rule's check of the objects
    /// a live release dropped. Unlike [`users_of`], the release's own services
    /// count: a dropped network its current service still attaches to is in
    /// use. `leaving` are the dropped services, removed before the objects.
    fn service_users<'o>(
        release: &str,
        objects: impl IntoIterator<Item = (ObjectKind, &'o ObjectRef)>,
        leaving: &BTreeSet<&str>,
        usage: &Usage,
    ) -> Vec<InUse> {
        let mut found = BTreeSet::new();
        for (kind, object) in objects {
            let names = |s: &ServiceUse| {
                s.names(kind, object)
                    || (s.stack.as_deref() != Some(release) && s.named_before(kind, object))
            };
            for s in usage
                .services
                .iter()
                .filter(|s| !leaving.contains(s.id.as_str()) && names(s))
            {
                found.insert(InUse::new(
                    kind,
                    &object.name,
                    User::service(&s.id, &s.name),
                ));
            }
            if kind == ObjectKind::Network {
                found.extend(standalone_attached(object, usage));
            }
        }
        found.into_iter().collect()
    }

    /// The users of the volume `name` of `release` (see [`users_of`]), for
    /// the sweep's check of one volume listed at run time.
    fn volume_users_of(
        release: &str,
        name: &str,
        own: &BTreeSet<String>,
        foreign: &BTreeSet<String>,
        usage: &Usage,
    ) -> Vec<InUse> {
        let own = own_services(release, own, foreign, usage);
        let mut found = volume_users(release, name, &own, foreign, usage);
        found.sort();
        found.dedup();
        found
    }

    use crate::objects::{NodeVolumes, ServiceEntry};
    use proptest::prelude::*;

    /// Names from a small pool, so that references often meet.
    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("a".to_owned()),
            Just("b".to_owned()),
            Just("r_net".to_owned()),
            Just("r_data".to_owned()),
            Just("id1".to_owned()),
            Just("id2".to_owned()),
            Just("s1".to_owned()),
            Just("s2".to_owned()),
            Just("r".to_owned()),
            Just("data-{{.Task.Slot}}".to_owned()),
        ]
    }

    fn names() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(name(), 0..3)
    }

    fn service() -> impl Strategy<Value = ServiceUse> {
        (
            name(),
            name(),
            prop::option::of(name()),
            (names(), names(), names(), names()),
            prop::option::of((names(), names(), names(), names())),
        )
            .prop_map(|(id, n, stack, (v, net, sec, cfg), previous)| {
                let mut s = ServiceUse::new(id, n)
                    .with_volumes(v)
                    .with_networks(net)
                    .with_secrets(sec)
                    .with_configs(cfg);
                s.stack = stack;
                s.previous = previous.map(|(v, net, sec, cfg)| PreviousSpec::new(v, net, sec, cfg));
                s
            })
    }

    fn container() -> impl Strategy<Value = ContainerUse> {
        (
            name(),
            name(),
            prop::option::of(name()),
            prop::option::of(name()),
            names(),
            names(),
        )
            .prop_map(|(id, n, service, stack, volumes, networks)| {
                let mut c = ContainerUse::new(id, n, volumes).with_networks(networks);
                c.service = service;
                c.stack = stack;
                c
            })
    }

    fn usage() -> impl Strategy<Value = Usage> {
        (
            prop::collection::vec(service(), 0..6),
            prop::collection::vec(
                (name(), prop::collection::vec(container(), 0..3))
                    .prop_map(|(node, c)| NodeContainers::new(node, c)),
                0..3,
            ),
        )
            .prop_map(|(s, c)| Usage::new(s, c))
    }

    fn object_ref() -> impl Strategy<Value = ObjectRef> {
        (name(), prop::option::of(name())).prop_map(|(n, id)| {
            let mut o = ObjectRef::named(n);
            o.id = id;
            o
        })
    }

    fn objects() -> impl Strategy<Value = StackObjects> {
        let refs = || prop::collection::vec(object_ref(), 0..3);
        (
            prop::collection::vec((name(), name()), 0..3),
            (refs(), refs(), refs()),
            prop::option::of(names()),
        )
            .prop_map(|(services, (networks, secrets, configs), volumes)| {
                let services = services
                    .into_iter()
                    .map(|(id, n)| ServiceEntry::new(id, n, 1))
                    .collect();
                let objects = StackObjects::new(services, networks, secrets, configs);
                match volumes {
                    Some(v) => objects.with_volumes(vec![NodeVolumes::new("n", v)]),
                    None => objects,
                }
            })
    }

    proptest! {
        #[test]
        fn the_index_finds_what_the_scan_finds(
            usage in usage(),
            objects in objects(),
            release in name(),
            own in prop::collection::btree_set(name(), 0..3),
            foreign in prop::collection::btree_set(name(), 0..3),
            leaving in prop::collection::btree_set(name(), 0..3),
            volumes: bool,
        ) {
            let index = UsageIndex::new(&usage);
            let own_refs: BTreeSet<&str> = own.iter().map(String::as_str).collect();
            let foreign_refs: BTreeSet<&str> = foreign.iter().map(String::as_str).collect();
            prop_assert_eq!(
                index.users_of(&release, &objects, volumes, &own_refs, &foreign_refs),
                users_of(&release, &objects, volumes, &own, &foreign, &usage)
            );
            let leaving: BTreeSet<&str> = leaving.iter().map(String::as_str).collect();
            let refs = || {
                objects
                    .networks
                    .iter()
                    .map(|o| (ObjectKind::Network, o))
                    .chain(objects.secrets.iter().map(|o| (ObjectKind::Secret, o)))
                    .chain(objects.configs.iter().map(|o| (ObjectKind::Config, o)))
                    .chain(objects.secrets.iter().map(|o| (ObjectKind::Volume, o)))
            };
            prop_assert_eq!(
                index.service_users(&release, refs(), &leaving),
                service_users(&release, refs(), &leaving, &usage)
            );
            let names = objects.volumes.iter().flatten().flat_map(|n| &n.volumes);
            for name in names {
                prop_assert_eq!(
                    index.volume_users_of(&release, name, &own_refs, &foreign_refs),
                    volume_users_of(&release, name, &own, &foreign, &usage)
                );
            }
        }
    }
}
