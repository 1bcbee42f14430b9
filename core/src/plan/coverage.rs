//! Volume coverage: how much of a swarm a volume purge can reach.
//!
//! A stack's named volumes live on whichever nodes ran its tasks, and only
//! that node's daemon sees them. Coverage is `complete` only when the
//! swarm's own node count is known and every counted node was reached; a
//! count that could not be read is never taken as a match.

use std::collections::BTreeSet;

use super::swarms::SwarmGroup;
use super::Uncovered;
use crate::names::named_enum;

named_enum! {
    /// How much of a swarm a volume purge of a deleted release reaches.
    /// Anything but `complete` (or `off`) means volumes may stay behind on
    /// nodes the purge did not reach, and the sweep says so. JSON and text
    /// give it by name (`as_str`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Coverage {
        /// Volume purge is off.
        Off = "off",
        /// Every node the swarm counts was reached.
        Complete = "complete",
        /// Some counted nodes were not reached, or the count is unknown.
        Partial = "partial",
        /// The registry cannot reach nodes individually: only the manager's
        /// volumes are seen.
        NodeLocal = "node_local",
    }
}

/// What a volume purge reaches on one group, worked out once per plan:
/// every deletion on the group shares it, and recomputing it per deletion
/// made planning members x nodes x releases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GroupReach {
    /// Coverage with purge on.
    reach: Coverage,
    unreached: Option<Vec<String>>,
}

impl GroupReach {
    pub(crate) fn new(group: &SwarmGroup<'_>) -> Self {
        let unreached = unreached(group);
        // Where the node list is known, every node on it must have been
        // reached, not merely as many nodes as it holds.
        let all_members_reached = unreached.as_ref().is_none_or(|missing| missing.is_empty());
        let reach = match (&group.nodes, group.node_count) {
            // The manager is the one node: complete once its volumes were
            // read.
            (None, Some(1)) if !group.unread_nodes => Coverage::Complete,
            (None, _) => Coverage::NodeLocal,
            // A reached node that did not answer is a node left out, even
            // when the others happen to make up the count.
            // A swarm has at least its manager: a count of none read
            // covers nothing.
            (Some(nodes), Some(count))
                if count > 0
                    && nodes.len() as u64 == count
                    && all_members_reached
                    && !group.unread_nodes =>
            {
                Coverage::Complete
            }
            (Some(_), _) => Coverage::Partial,
        };
        GroupReach { reach, unreached }
    }

    /// Coverage of a purge, `off` when purge is off.
    pub(crate) fn coverage(&self, purge: bool) -> Coverage {
        if purge {
            self.reach
        } else {
            Coverage::Off
        }
    }

    /// Whether every node the swarm counts was reached and read (its
    /// volumes and its containers alike): what a `complete` purge needs,
    /// and what proves that no container of the swarm went unseen.
    pub(crate) fn every_node_read(&self) -> bool {
        self.reach == Coverage::Complete
    }

    /// See [`unreached`].
    pub(crate) fn unreached(&self) -> Option<&[String]> {
        self.unreached.as_deref()
    }

    /// The uncovered-node entry for a readable swarm a purge cannot fully
    /// cover; `group` is the one this was made from.
    pub(crate) fn uncovered(&self, group: &SwarmGroup<'_>) -> Option<Uncovered> {
        if group.error.is_some() || self.reach == Coverage::Complete {
            return None;
        }
        let mut reached: Vec<String> = group
            .nodes
            .iter()
            .flatten()
            .map(|n| n.display_name().to_owned())
            .collect();
        reached.sort();
        let seen = match &group.nodes {
            Some(nodes) => nodes.len() as u64,
            // Node-local: the manager the registry talks to is the one
            // seen, if its volumes were read.
            None => u64::from(!group.unread_nodes),
        };
        // The swarm's own node list may name more nodes not reached than
        // its count leaves: never claim fewer missing than are named.
        let named = self.unreached.as_ref().map_or(0, |u| u.len() as u64);
        Some(Uncovered {
            swarm: group.swarm.clone(),
            node_count: group.node_count,
            reached,
            // A count of none is no count (a swarm has its manager): how
            // many are missing is unknown.
            missing: group
                .node_count
                .filter(|&c| c > 0)
                .map(|c| c.saturating_sub(seen).max(named)),
            unreached: self.unreached.clone(),
            coverage: self.reach,
        })
    }
}

/// Coverage of a purge on `group`, `off` when purge is off. Costs a pass
/// over the group's nodes: a planner asks [`GroupReach`] once per group.
#[cfg(test)]
pub(crate) fn of(purge: bool, group: &SwarmGroup<'_>) -> Coverage {
    GroupReach::new(group).coverage(purge)
}

/// Names of the nodes on the swarm's own node list that the registry did
/// not reach, sorted; `None` when either list is unknown.
pub(crate) fn unreached(group: &SwarmGroup<'_>) -> Option<Vec<String>> {
    let reached: BTreeSet<&str> = group
        .nodes
        .as_ref()?
        .iter()
        .map(|n| n.id.as_str())
        .collect();
    let mut names: Vec<String> = group
        .members
        .as_ref()?
        .iter()
        .filter(|m| !reached.contains(m.id.as_str()))
        .map(|m| m.display_name().to_owned())
        .collect();
    names.sort();
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::NodeEntry;

    fn group(
        nodes: Option<&[u32]>,
        members: Option<&[u32]>,
        count: Option<u64>,
    ) -> SwarmGroup<'static> {
        let list = |ids: &[u32]| {
            ids.iter()
                .map(|i| NodeEntry::new(format!("n{i}"), format!("host{}", i % 3)))
                .collect()
        };
        SwarmGroup {
            swarm: "s".into(),
            names: vec!["s".into()],
            cluster_id: None,
            error: None,
            releases: Vec::new(),
            nodes: nodes.map(list),
            unread_nodes: false,
            node_count: count,
            members: members.map(list),
            self_stacks: Default::default(),
            usage: Vec::new(),
            windows: Vec::new(),
        }
    }

    /// The members x nodes version this replaced, kept as the reference.
    fn unreached_by_scan(group: &SwarmGroup) -> Option<Vec<String>> {
        let reached = group.nodes.as_ref()?;
        let mut names: Vec<String> = group
            .members
            .as_ref()?
            .iter()
            .filter(|m| !reached.iter().any(|r| r.id == m.id))
            .map(|m| m.display_name().to_owned())
            .collect();
        names.sort();
        Some(names)
    }

    fn reach_by_scan(group: &SwarmGroup) -> Coverage {
        let all = unreached_by_scan(group).is_none_or(|m| m.is_empty());
        match (&group.nodes, group.node_count) {
            (None, Some(1)) => Coverage::Complete,
            (None, _) => Coverage::NodeLocal,
            (Some(n), Some(c)) if c > 0 && n.len() as u64 == c && all => Coverage::Complete,
            (Some(_), _) => Coverage::Partial,
        }
    }

    #[test]
    fn set_lookup_gives_what_the_scan_gave() {
        let lists: [Option<&[u32]>; 6] = [
            None,
            Some(&[]),
            Some(&[1]),
            Some(&[1, 2, 3]),
            Some(&[2, 4, 9]),
            Some(&[1, 2, 3, 4, 5, 6, 7]),
        ];
        for nodes in lists {
            for members in lists {
                for count in [None, Some(0), Some(1), Some(3), Some(7)] {
                    let g = group(nodes, members, count);
                    let r = GroupReach::new(&g);
                    assert_eq!(unreached(&g), unreached_by_scan(&g), "{g:?}");
                    assert_eq!(r.unreached(), unreached_by_scan(&g).as_deref(), "{g:?}");
                    assert_eq!(r.coverage(true), reach_by_scan(&g), "{g:?}");
                    assert_eq!(r.coverage(false), Coverage::Off);
                    assert_eq!(of(true, &g), reach_by_scan(&g));
                }
            }
        }
    }
}
