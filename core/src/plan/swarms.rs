//! Grouping swarm names into clusters.
//!
//! A registry may resolve one cluster under two names. Planned per name, a
//! release declared under one name would look undeclared under the other
//! and be deleted from under its application, so names whose snapshots
//! report the same `cluster_id` become one group for every rule. Without a
//! cluster id there is no evidence, and different names stay different
//! swarms.

use crate::deletion_window::DeletionWindow;
use std::collections::{BTreeMap, BTreeSet};

use crate::refs::SwarmName;
use crate::snapshot::{Facts, NodeEntry, Snapshot, SnapshotStr, SwarmSnapshot};
use crate::time::UnixTime;
use crate::usage::Usage;

/// One cluster, possibly seen under several names. Release names and
/// stamps are borrowed from the snapshot (`'a`), never copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SwarmGroup<'a> {
    /// The smallest of `names`: the one every output uses.
    pub(crate) swarm: SwarmName,
    pub(crate) names: Vec<SwarmName>,
    pub(crate) cluster_id: Option<String>,
    /// The read errors of its names, if any name could not be read.
    pub(crate) error: Option<String>,
    /// Releases by name, sorted, each with every owner stamp seen under
    /// any name.
    pub(crate) releases: Vec<GroupedRelease<'a>>,
    /// Reached nodes (union by id), or `None` if no name reaches nodes.
    pub(crate) nodes: Option<Vec<NodeEntry>>,
    /// Whether a node the registry reached under any name did not answer
    /// for its volumes or containers: a node known to be there and not
    /// covered, so a purge is never complete.
    pub(crate) unread_nodes: bool,
    /// The largest count any name reported: the cautious one for coverage.
    pub(crate) node_count: Option<u64>,
    /// The swarm's own node list (union by id over its names), if read.
    pub(crate) members: Option<Vec<NodeEntry>>,
    pub(crate) self_stacks: BTreeSet<String>,
    /// What uses what, as each of its names that read it saw it.
    pub(crate) usage: Vec<&'a Usage>,
    /// The deletion windows of each of its names that has some: a
    /// deletion on it must pass every one of them.
    pub(crate) windows: Vec<&'a [DeletionWindow]>,
}

/// A release of a group, as the planner reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GroupedRelease<'a> {
    pub(crate) name: &'a str,
    owners: Owners<'a>,
    /// What its first name (in name order) observed beside the stamp.
    facts: Facts<'a>,
    /// Where `facts` are in the snapshot (the index of the swarm entry,
    /// then of the release in it), so that a caller that owns the
    /// snapshot can move them into the plan instead of copying them.
    place: Option<Place>,
    /// Every name's observation, when the names of the cluster disagree.
    disagreeing: Option<Box<[Facts<'a>]>>,
    /// When it was first seen departed: the latest of its names' times,
    /// and `None` when any name has none, so that names which disagree
    /// never make it look departed for longer than the least of them says.
    pub(crate) departed_since: Option<UnixTime>,
}

impl<'a> GroupedRelease<'a> {
    /// Distinct stamps seen for it (an empty stamp counts as none), sorted;
    /// more than one means the names of the cluster were read at different
    /// moments and disagree.
    pub(crate) fn owners(&self) -> &[Option<&'a str>] {
        match &self.owners {
            Owners::One(owner) => std::slice::from_ref(owner),
            Owners::Many(owners) => owners,
        }
    }

    /// What was observed of it, when every name of the cluster that
    /// observed something observed the same; `None` when they disagree,
    /// which proves nothing about it.
    pub(crate) fn facts(&self) -> Option<Facts<'a>> {
        match self.disagreeing {
            None => Some(self.facts),
            Some(_) => None,
        }
    }

    /// Where the snapshot holds what [`GroupedRelease::facts`] gives.
    pub(crate) fn place(&self) -> Option<Place> {
        self.disagreeing.is_none().then_some(self.place).flatten()
    }

    /// Every observation of it, one per name that observed something.
    pub(crate) fn every_facts(&self) -> impl Iterator<Item = Facts<'a>> + '_ {
        let one = std::slice::from_ref(&self.facts);
        self.disagreeing.as_deref().unwrap_or(one).iter().copied()
    }
}

/// A release's place in a snapshot: the index of its swarm entry, and its
/// index among that entry's releases. Half the size of two `usize`s, held
/// for every release while planning; a snapshot too large for it (which
/// the bound on its values rules out) has no places, and its facts are
/// copied instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) swarm: u32,
    pub(crate) release: u32,
}

impl Place {
    fn new(swarm: usize, release: usize) -> Option<Self> {
        Some(Place {
            swarm: u32::try_from(swarm).ok()?,
            release: u32::try_from(release).ok()?,
        })
    }
}

/// Nearly every release is seen under one name with one stamp: that case
/// takes no allocation of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owners<'a> {
    One(Option<&'a str>),
    /// Two or more, sorted and distinct.
    Many(Box<[Option<&'a str>]>),
}

/// A release with the stamps read for it under every name of its cluster,
/// owned: what the sweep re-reads before each destructive step, judged by
/// the planner's own ownership rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GroupRelease {
    pub(crate) name: String,
    /// Distinct stamps seen for it, sorted; more than one means the names
    /// of the cluster were read at different moments and disagree.
    pub(crate) owners: Vec<Option<String>>,
}

/// All groups of a snapshot, and which group each name belongs to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Groups<'a> {
    /// Sorted by `swarm`.
    groups: Vec<SwarmGroup<'a>>,
    by_name: BTreeMap<&'a str, usize>,
}

impl<'a> Groups<'a> {
    pub(crate) fn iter(&self) -> impl Iterator<Item = &SwarmGroup<'a>> {
        self.groups.iter()
    }

    /// The group a name belongs to, if the snapshot lists that name.
    pub(crate) fn get(&self, name: &SwarmName) -> Option<&SwarmGroup<'a>> {
        self.index_of(name.as_str()).map(|i| &self.groups[i])
    }

    /// The position in [`Groups::iter`] of the group `name` belongs to.
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The group at a position of [`Groups::iter`].
    pub(crate) fn at(&self, index: usize) -> &SwarmGroup<'a> {
        &self.groups[index]
    }

    /// The name that stands for `name`'s cluster: its group's name, or
    /// `name` itself when the snapshot does not list it.
    pub(crate) fn canonical<'s>(&'s self, name: &'s SwarmName) -> &'s SwarmName {
        self.get(name).map(|g| &g.swarm).unwrap_or(name)
    }

    /// Whether two names are the same swarm as far as the snapshot shows.
    #[cfg(test)]
    pub(crate) fn same(&self, a: &SwarmName, b: &SwarmName) -> bool {
        self.canonical(a) == self.canonical(b)
    }
}

/// Groups the snapshot's swarm entries by cluster id.
pub(crate) fn group<S: SnapshotStr>(snapshot: &Snapshot<S>) -> Groups<'_> {
    fn name<S: SnapshotStr>(s: &SwarmSnapshot<S>) -> &str {
        S::swarm_str(&s.swarm)
    }
    // Key: the cluster id when known, else the name alone.
    let mut keyed: BTreeMap<(bool, &str), Vec<usize>> = BTreeMap::new();
    for (i, s) in snapshot.swarms.iter().enumerate() {
        let key = match s.cluster_id.as_ref().map(S::as_str) {
            Some(id) if !id.is_empty() => (true, id),
            _ => (false, name(s)),
        };
        keyed.entry(key).or_default().push(i);
    }

    let mut grouped: Vec<(SwarmGroup<'_>, Vec<&str>)> = Vec::with_capacity(keyed.len());
    for members in keyed.values() {
        let mut members = members.clone();
        members.sort_by(|&a, &b| name(&snapshot.swarms[a]).cmp(name(&snapshot.swarms[b])));
        let entries: Vec<&SwarmSnapshot<S>> =
            members.iter().map(|&i| &snapshot.swarms[i]).collect();
        let names: Vec<SwarmName> = entries.iter().map(|s| SwarmName::from(name(s))).collect();

        // What a partial read means is the planner's rule (`reads.rs`).
        let errors: Vec<String> = entries
            .iter()
            .zip(&names)
            .filter_map(|(s, name)| s.why_unreadable().map(|e| (name, e)))
            .map(|(name, e)| {
                if entries.len() > 1 {
                    format!("{name}: {e}")
                } else {
                    e.into_owned()
                }
            })
            .collect();

        let reached: Vec<_> = entries.iter().map(|s| s.reached_nodes()).collect();
        let group = SwarmGroup {
            swarm: names[0].clone(),
            names,
            cluster_id: entries[0]
                .cluster_id
                .as_ref()
                .map(S::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_owned),
            error: (!errors.is_empty()).then(|| errors.join("; ")),
            releases: releases(&entries, &members),
            nodes: union_by_id(reached.iter().map(|n| n.as_deref())),
            unread_nodes: entries
                .iter()
                .any(|s| s.has_unread_node() || s.manager_volumes_unread()),
            node_count: entries.iter().filter_map(|s| s.node_count).max(),
            members: union_by_id(entries.iter().map(|s| s.members.as_deref())),
            self_stacks: entries
                .iter()
                .filter_map(|s| s.self_stack.as_ref().map(S::as_str))
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            usage: entries.iter().filter_map(|s| s.usage.as_ref()).collect(),
            windows: entries
                .iter()
                .map(|s| s.windows.as_slice())
                .filter(|w| !w.is_empty())
                .collect(),
        };
        grouped.push((group, entries.iter().map(|s| name(s)).collect()));
    }
    grouped.sort_by(|a, b| a.0.swarm.cmp(&b.0.swarm));
    let by_name = grouped
        .iter()
        .enumerate()
        .flat_map(|(i, (_, names))| names.iter().map(move |&n| (n, i)))
        .collect();
    Groups {
        groups: grouped.into_iter().map(|(g, _)| g).collect(),
        by_name,
    }
}

/// The nodes of a group's names, one per id; `None` if no name has a list.
/// First seen wins; entries are in name order, so this is the same
/// whatever order the snapshot listed them in.
fn union_by_id<'a>(lists: impl Iterator<Item = Option<&'a [NodeEntry]>>) -> Option<Vec<NodeEntry>> {
    let mut nodes: Option<BTreeMap<&str, &NodeEntry>> = None;
    for list in lists.flatten() {
        let map = nodes.get_or_insert_with(BTreeMap::new);
        for n in list {
            map.entry(n.id.as_str()).or_insert(n);
        }
    }
    nodes.map(|m| m.into_values().cloned().collect())
}

/// The releases of a group's names, sorted by name, one entry per name
/// with the distinct stamps seen for it.
/// `members` are the entries' indices in the snapshot.
fn releases<'a, S: SnapshotStr>(
    entries: &[&'a SwarmSnapshot<S>],
    members: &[usize],
) -> Vec<GroupedRelease<'a>> {
    let total = entries.iter().map(|s| s.releases.len()).sum();
    let mut all: Vec<GroupedRelease<'a>> = Vec::with_capacity(total);
    for (s, &at) in entries.iter().zip(members) {
        all.extend(s.releases.iter().enumerate().map(|(i, r)| GroupedRelease {
            name: r.name.as_str(),
            owners: Owners::One(r.owner.as_ref().map(S::as_str).filter(|o| !o.is_empty())),
            facts: r.facts(),
            place: Place::new(at, i),
            disagreeing: None,
            departed_since: r.departed_since,
        }));
    }
    // A gathered swarm lists its releases sorted by name, so a group of
    // one name is usually in order already: checked in one pass, sorted
    // only when not.
    if all.windows(2).all(|w| w[0].name < w[1].name) {
        return all;
    }
    all.sort_by(|a, b| a.name.cmp(b.name));
    let mut merged: Vec<GroupedRelease<'a>> = Vec::with_capacity(all.len());
    for run in all.chunk_by(|a, b| a.name == b.name) {
        if let [one] = run {
            merged.push(one.clone());
            continue;
        }
        let mut owners: Vec<Option<&'a str>> = run
            .iter()
            .flat_map(|r| r.owners().iter().copied())
            .collect();
        owners.sort_unstable();
        owners.dedup();
        let owners = match owners[..] {
            [one] => Owners::One(one),
            _ => Owners::Many(owners.into_boxed_slice()),
        };
        let mut seen = run.iter().filter(|r| !r.facts.is_empty());
        let first = seen.next();
        let facts = first.map(|r| r.facts).unwrap_or_default();
        let place = first.and_then(|r| r.place);
        let mut seen = seen.map(|r| r.facts);
        let disagreeing = seen.any(|f| !f.agrees_with(&facts)).then(|| {
            run.iter()
                .map(|r| r.facts)
                .filter(|f| !f.is_empty())
                .collect()
        });
        let departed_since = run
            .iter()
            .map(|r| r.departed_since)
            .collect::<Option<Vec<UnixTime>>>()
            .and_then(|times| times.into_iter().max());
        merged.push(GroupedRelease {
            name: run[0].name,
            owners,
            facts,
            place,
            disagreeing,
            departed_since,
        });
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{AppSet, Policy, ReleaseEntry, SwarmSnapshot};

    fn swarm(name: &str, cluster: Option<&str>, releases: &[&str]) -> SwarmSnapshot {
        let mut s = SwarmSnapshot::new(name);
        s.cluster_id = cluster.map(str::to_owned);
        s.releases = releases
            .iter()
            .map(|r| ReleaseEntry::new(*r, None))
            .collect();
        s
    }

    fn snap(swarms: Vec<SwarmSnapshot>) -> Snapshot {
        Snapshot::new(Policy::default(), AppSet::new(true, vec![]), swarms)
    }

    #[test]
    fn same_cluster_id_is_one_group_named_by_its_smallest_name() {
        let s = snap(vec![
            swarm("zeta", Some("C1"), &["web"]),
            swarm("alpha", Some("C1"), &["web", "db"]),
            swarm("beta", Some("C2"), &["web"]),
        ]);
        let g = group(&s);
        assert_eq!(g.iter().count(), 2);
        let alpha = g.get(&"zeta".into()).unwrap();
        assert_eq!(alpha.swarm, SwarmName::new("alpha"));
        assert_eq!(alpha.releases.len(), 2, "web is planned once");
        assert!(g.same(&"alpha".into(), &"zeta".into()));
        assert!(!g.same(&"alpha".into(), &"beta".into()));
    }

    #[test]
    fn without_cluster_id_names_stay_apart() {
        let s = snap(vec![swarm("a", None, &[]), swarm("b", None, &[])]);
        let g = group(&s);
        assert_eq!(g.iter().count(), 2);
        assert!(!g.same(&"a".into(), &"b".into()));
        assert!(!g.same(&"a".into(), &"unknown".into()));
        assert!(g.same(&"unknown".into(), &"unknown".into()));
    }
}
