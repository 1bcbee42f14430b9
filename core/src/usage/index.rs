//! The rule of [`users_of`](super::users_of) and
//! [`service_users`](super::service_users), answered from an index of one
//! swarm's usage built once.
//!
//! The planner asks who uses the objects of every release it deletes, and
//! a swarm's usage lists every service on it: scanned once per release,
//! a swarm of ten thousand releases costs a hundred million comparisons,
//! and planning a million releases takes minutes instead of a second. The
//! index finds, for a name or an id, the services and containers that name
//! it, so each release costs what it uses. The answers are the same sets
//! the scans give (a test holds the two to each other); the sweep's checks
//! of one release at a time keep the scans.

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

/// One swarm's usage, indexed by every reference its services and
/// containers make.
#[derive(Debug)]
pub(crate) struct UsageIndex<'u> {
    usage: &'u Usage,
    /// Services by their stack label.
    by_stack: Positions<'u>,
    /// Services by each network, secret and config reference, as written.
    networks: Positions<'u>,
    secrets: Positions<'u>,
    configs: Positions<'u>,
    /// Services by each volume mount source, as written.
    volumes: Positions<'u>,
    /// Services with a templated source, which names every volume.
    templated: Vec<usize>,
    /// Containers (node, container) by each volume they use.
    containers: HashMap<&'u str, At<(usize, usize)>>,
}

impl<'u> UsageIndex<'u> {
    pub(crate) fn new(usage: &'u Usage) -> Self {
        let mut index = UsageIndex {
            usage,
            by_stack: HashMap::new(),
            networks: HashMap::new(),
            secrets: HashMap::new(),
            configs: HashMap::new(),
            volumes: HashMap::new(),
            templated: Vec::new(),
            containers: HashMap::new(),
        };
        index.by_stack.reserve(usage.services.len());
        index.networks.reserve(usage.services.len());
        for (at, s) in usage.services.iter().enumerate() {
            if let Some(stack) = s.stack.as_deref() {
                At::add(&mut index.by_stack, stack, at);
            }
            for (refs, to) in [
                (&s.networks, &mut index.networks),
                (&s.secrets, &mut index.secrets),
                (&s.configs, &mut index.configs),
                (&s.volumes, &mut index.volumes),
            ] {
                for r in refs {
                    At::add(to, r.as_str(), at);
                }
            }
            if s.volumes.iter().any(|source| is_template(source)) {
                index.templated.push(at);
            }
        }
        for (n, node) in usage.containers.iter().enumerate() {
            for (c, container) in node.containers.iter().enumerate() {
                for v in &container.volumes {
                    At::add(&mut index.containers, v.as_str(), (n, c));
                }
            }
        }
        index
    }

    /// The ids of `release`'s own services: `own`, and those labelled
    /// with its stack namespace (as `own_services`).
    fn own<'a>(&'a self, release: &str, own: &BTreeSet<&'a str>) -> BTreeSet<&'a str> {
        let mut ids = own.clone();
        if let Some(at) = self.by_stack.get(release) {
            ids.extend(
                at.as_slice()
                    .iter()
                    .map(|&i| self.usage.services[i].id.as_str()),
            );
        }
        ids
    }

    /// The services that name `object` of `kind` (a network, secret or
    /// config) by its name or its id, each once, in the usage's order.
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

    /// [`users_of`](super::users_of), `own` by reference.
    pub(crate) fn users_of(
        &self,
        release: &str,
        objects: &StackObjects,
        volumes: bool,
        own: &BTreeSet<&str>,
    ) -> Vec<InUse> {
        let own = self.own(release, own);
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
        if volumes {
            let names: BTreeSet<&str> = objects
                .volumes
                .iter()
                .flatten()
                .flat_map(|n| n.volumes.iter().map(String::as_str))
                .collect();
            for name in names {
                self.volume_users(release, name, &own, &mut found);
            }
        }
        found.into_iter().collect()
    }

    /// Every use of the volume `name` by a service not in `own`, or by a
    /// container that is not a task of one in `own` (as `volume_users`).
    fn volume_users(
        &self,
        release: &str,
        name: &str,
        own: &BTreeSet<&str>,
        found: &mut BTreeSet<InUse>,
    ) {
        let sources = self.volumes.get(name).map_or(&[][..], At::as_slice);
        for &at in sources.iter().chain(&self.templated) {
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
        for &(n, c) in containers {
            let node = &self.usage.containers[n];
            let container = &node.containers[c];
            if !container.is_of(release, own) {
                found.insert(InUse::new(
                    ObjectKind::Volume,
                    name,
                    User::container(&container.id, &container.name, &node.node),
                ));
            }
        }
    }

    /// [`service_users`](super::service_users).
    pub(crate) fn service_users<'o>(
        &self,
        objects: impl IntoIterator<Item = (ObjectKind, &'o ObjectRef)>,
        leaving: &BTreeSet<&str>,
    ) -> Vec<InUse> {
        let mut found = BTreeSet::new();
        for (kind, object) in objects {
            for at in self.naming(kind, object) {
                let s = &self.usage.services[at];
                if !leaving.contains(s.id.as_str()) {
                    found.insert(InUse::new(
                        kind,
                        &object.name,
                        User::service(&s.id, &s.name),
                    ));
                }
            }
        }
        found.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{service_users, users_of, ContainerUse, NodeContainers, ServiceUse};
    use super::*;
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
        )
            .prop_map(|(id, n, stack, (v, net, sec, cfg))| {
                let mut s = ServiceUse::new(id, n)
                    .with_volumes(v)
                    .with_networks(net)
                    .with_secrets(sec)
                    .with_configs(cfg);
                s.stack = stack;
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
        )
            .prop_map(|(id, n, service, stack, volumes)| {
                let mut c = ContainerUse::new(id, n, volumes);
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
            leaving in prop::collection::btree_set(name(), 0..3),
            volumes: bool,
        ) {
            let index = UsageIndex::new(&usage);
            let own_refs: BTreeSet<&str> = own.iter().map(String::as_str).collect();
            prop_assert_eq!(
                index.users_of(&release, &objects, volumes, &own_refs),
                users_of(&release, &objects, volumes, &own, &usage)
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
                index.service_users(refs(), &leaving),
                service_users(refs(), &leaving, &usage)
            );
        }
    }
}
