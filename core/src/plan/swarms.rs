//! Grouping swarm names into clusters.
//!
//! A registry may resolve one cluster under two names. Planned per name, a
//! release declared under one name would look undeclared under the other
//! and be deleted from under its application, so names whose snapshots
//! report the same `cluster_id` become one group for every rule. Without a
//! cluster id there is no evidence, and different names stay different
//! swarms.

use std::collections::{BTreeMap, BTreeSet};

use crate::refs::SwarmName;
use crate::snapshot::{NodeEntry, Snapshot};

/// One cluster, possibly seen under several names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwarmGroup {
    /// The smallest of `names`: the one every output uses.
    pub swarm: SwarmName,
    pub names: Vec<SwarmName>,
    pub cluster_id: Option<String>,
    /// The read errors of its names, if any name could not be read.
    pub error: Option<String>,
    /// Releases by name, each with every owner stamp seen under any name.
    pub releases: Vec<GroupRelease>,
    /// Reached nodes (union by id), or `None` if no name reaches nodes.
    pub nodes: Option<Vec<NodeEntry>>,
    /// The largest count any name reported: the cautious one for coverage.
    pub node_count: Option<u64>,
    /// The swarm's own node list (union by id over its names), if read.
    pub members: Option<Vec<NodeEntry>>,
    pub self_stacks: BTreeSet<String>,
}

/// A release of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRelease {
    pub name: String,
    /// Distinct stamps seen for it, sorted; more than one means the names
    /// of the cluster were read at different moments and disagree.
    pub owners: Vec<Option<String>>,
}

/// All groups of a snapshot, and which group each name belongs to.
#[derive(Debug, Clone, Default)]
pub struct Groups {
    groups: Vec<SwarmGroup>,
    by_name: BTreeMap<SwarmName, usize>,
}

impl Groups {
    pub fn iter(&self) -> impl Iterator<Item = &SwarmGroup> {
        self.groups.iter()
    }

    /// The group a name belongs to, if the snapshot lists that name.
    pub fn get(&self, name: &SwarmName) -> Option<&SwarmGroup> {
        self.by_name.get(name).map(|&i| &self.groups[i])
    }

    /// The name that stands for `name`'s cluster: its group's name, or
    /// `name` itself when the snapshot does not list it.
    pub fn canonical<'a>(&'a self, name: &'a SwarmName) -> &'a SwarmName {
        self.get(name).map(|g| &g.swarm).unwrap_or(name)
    }

    /// Whether two names are the same swarm as far as the snapshot shows.
    pub fn same(&self, a: &SwarmName, b: &SwarmName) -> bool {
        self.canonical(a) == self.canonical(b)
    }
}

/// Groups the snapshot's swarm entries by cluster id.
pub fn group(snapshot: &Snapshot) -> Groups {
    // Key: the cluster id when known, else the name alone.
    let mut keyed: BTreeMap<(bool, String), Vec<usize>> = BTreeMap::new();
    for (i, s) in snapshot.swarms.iter().enumerate() {
        let key = match s.cluster_id.as_deref() {
            Some(id) if !id.is_empty() => (true, id.to_owned()),
            _ => (false, s.swarm.as_str().to_owned()),
        };
        keyed.entry(key).or_default().push(i);
    }

    let mut out = Groups::default();
    for members in keyed.values() {
        let mut entries: Vec<_> = members.iter().map(|&i| &snapshot.swarms[i]).collect();
        entries.sort_by(|a, b| a.swarm.cmp(&b.swarm));
        let names: Vec<SwarmName> = entries.iter().map(|s| s.swarm.clone()).collect();

        let errors: Vec<String> = entries
            .iter()
            .filter_map(|s| s.error.as_ref().map(|e| (s, e)))
            .map(|(s, e)| {
                if entries.len() > 1 {
                    format!("{}: {e}", s.swarm)
                } else {
                    e.clone()
                }
            })
            .collect();

        let mut releases: BTreeMap<&str, BTreeSet<Option<String>>> = BTreeMap::new();
        for s in &entries {
            for r in &s.releases {
                let owner = r.owner.clone().filter(|o| !o.is_empty());
                releases.entry(r.name.as_str()).or_default().insert(owner);
            }
        }

        let mut nodes: Option<BTreeMap<&str, &NodeEntry>> = None;
        for s in &entries {
            if let Some(list) = &s.nodes {
                let map = nodes.get_or_insert_with(BTreeMap::new);
                for n in list {
                    // First seen wins; entries are in name order, so this is
                    // the same whatever order the snapshot listed them in.
                    map.entry(n.id.as_str()).or_insert(n);
                }
            }
        }

        let mut members: Option<BTreeMap<&str, &NodeEntry>> = None;
        for s in &entries {
            if let Some(list) = &s.members {
                let map = members.get_or_insert_with(BTreeMap::new);
                for n in list {
                    map.entry(n.id.as_str()).or_insert(n);
                }
            }
        }

        let group = SwarmGroup {
            swarm: names[0].clone(),
            names: names.clone(),
            cluster_id: entries[0].cluster_id.clone().filter(|c| !c.is_empty()),
            error: (!errors.is_empty()).then(|| errors.join("; ")),
            releases: releases
                .into_iter()
                .map(|(name, owners)| GroupRelease {
                    name: name.to_owned(),
                    owners: owners.into_iter().collect(),
                })
                .collect(),
            nodes: nodes.map(|m| m.into_values().cloned().collect()),
            node_count: entries.iter().filter_map(|s| s.node_count).max(),
            members: members.map(|m| m.into_values().cloned().collect()),
            self_stacks: entries
                .iter()
                .filter_map(|s| s.self_stack.clone())
                .filter(|s| !s.is_empty())
                .collect(),
        };
        let index = out.groups.len();
        for name in names {
            out.by_name.insert(name, index);
        }
        out.groups.push(group);
    }
    out.groups.sort_by(|a, b| a.swarm.cmp(&b.swarm));
    out.by_name = out
        .groups
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.names.iter().map(move |n| (n.clone(), i)))
        .collect();
    out
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
        let g = group(&snap(vec![
            swarm("zeta", Some("C1"), &["web"]),
            swarm("alpha", Some("C1"), &["web", "db"]),
            swarm("beta", Some("C2"), &["web"]),
        ]));
        assert_eq!(g.iter().count(), 2);
        let alpha = g.get(&"zeta".into()).unwrap();
        assert_eq!(alpha.swarm, SwarmName::new("alpha"));
        assert_eq!(alpha.releases.len(), 2, "web is planned once");
        assert!(g.same(&"alpha".into(), &"zeta".into()));
        assert!(!g.same(&"alpha".into(), &"beta".into()));
    }

    #[test]
    fn without_cluster_id_names_stay_apart() {
        let g = group(&snap(vec![swarm("a", None, &[]), swarm("b", None, &[])]));
        assert_eq!(g.iter().count(), 2);
        assert!(!g.same(&"a".into(), &"b".into()));
        assert!(!g.same(&"a".into(), &"unknown".into()));
        assert!(g.same(&"unknown".into(), &"unknown".into()));
    }
}
