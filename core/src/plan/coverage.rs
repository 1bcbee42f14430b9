//! Volume coverage: how much of a swarm a volume purge can reach.
//!
//! A stack's named volumes live on whichever nodes ran its tasks, and only
//! that node's daemon sees them. Coverage is `complete` only when the
//! swarm's own node count is known and every counted node was reached; a
//! count that could not be read is never taken as a match.

use serde::{Deserialize, Serialize};

use super::swarms::SwarmGroup;
use super::Uncovered;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// Volume purge is off.
    Off,
    /// Every node the swarm counts was reached.
    Complete,
    /// Some counted nodes were not reached, or the count is unknown.
    Partial,
    /// The registry cannot reach nodes individually: only the manager's
    /// volumes are seen.
    NodeLocal,
}

impl Coverage {
    pub fn as_str(self) -> &'static str {
        match self {
            Coverage::Off => "off",
            Coverage::Complete => "complete",
            Coverage::Partial => "partial",
            Coverage::NodeLocal => "node_local",
        }
    }
}

/// Coverage of a purge on `group`, `off` when purge is off.
pub fn of(purge: bool, group: &SwarmGroup) -> Coverage {
    if !purge {
        return Coverage::Off;
    }
    reach(group)
}

fn reach(group: &SwarmGroup) -> Coverage {
    // Where the node list is known, every node on it must have been
    // reached, not merely as many nodes as it holds.
    let all_members_reached = unreached(group).is_none_or(|missing| missing.is_empty());
    match (&group.nodes, group.node_count) {
        (None, Some(1)) => Coverage::Complete,
        (None, _) => Coverage::NodeLocal,
        (Some(nodes), Some(count)) if nodes.len() as u64 == count && all_members_reached => {
            Coverage::Complete
        }
        (Some(_), _) => Coverage::Partial,
    }
}

/// Names of the nodes on the swarm's own node list that the registry did
/// not reach, sorted; `None` when either list is unknown.
pub fn unreached(group: &SwarmGroup) -> Option<Vec<String>> {
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

/// The uncovered-node entry for a readable swarm a purge cannot fully cover.
pub fn uncovered(group: &SwarmGroup) -> Option<Uncovered> {
    if group.error.is_some() {
        return None;
    }
    let coverage = reach(group);
    if coverage == Coverage::Complete {
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
        // Node-local: the manager the registry talks to is the one seen.
        None => 1,
    };
    Some(Uncovered {
        swarm: group.swarm.clone(),
        node_count: group.node_count,
        reached,
        missing: group.node_count.map(|c| c.saturating_sub(seen)),
        unreached: unreached(group),
        coverage,
    })
}
