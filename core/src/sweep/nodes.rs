//! Nodes that joined a swarm since its plan. The plan proved a purge
//! complete, or every node's containers read, for the nodes the swarm
//! listed then. A node that joined since holds containers and volumes
//! nobody read (a global service's task lands on it at once, with the
//! stack's volume), so every re-read before a removal lists the swarm's
//! nodes again, and from the first node it does not know of, the sweep
//! claims neither: the attachable networks stay, and a purge's records
//! wait for a sweep that reaches the new node.

use std::collections::BTreeSet;

use super::action::Step;
use super::report::{ErrorEntry, ErrorKind};
use crate::plan::SwarmPlan;

/// What the plan read of a swarm's nodes, to judge a later node list by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PlannedNodes {
    /// Every node the swarm counted was reached and read.
    every_node_read: bool,
    /// The ids of the nodes reached, where nodes were reached one by one.
    ids: Option<BTreeSet<String>>,
    /// The swarm's count then; `None` when unread.
    count: Option<u64>,
}

/// What a re-read of a swarm's node list says against its plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodesSince {
    /// No node the plan did not know of.
    Known,
    /// These joined since (ids, sorted).
    Joined(BTreeSet<String>),
    /// The node list was not read again: nothing proves that none joined.
    Unread,
}

impl PlannedNodes {
    /// What `plan` read of its swarm; nothing at all without one.
    pub(crate) fn of(plan: Option<&SwarmPlan>) -> Self {
        let Some(plan) = plan else {
            return PlannedNodes::default();
        };
        PlannedNodes {
            every_node_read: plan.every_node_read,
            ids: plan
                .nodes
                .as_ref()
                .map(|nodes| nodes.iter().map(|n| n.id.clone()).collect()),
            count: plan.node_count,
        }
    }

    /// The node list `now` (ids; `None` when it was not read) against
    /// what the plan read: by id where the plan reached nodes one by one,
    /// else by the count (the manager alone was read).
    pub(crate) fn since(&self, now: Option<&[String]>) -> NodesSince {
        let Some(now) = now else {
            return NodesSince::Unread;
        };
        let joined: BTreeSet<String> = match &self.ids {
            Some(ids) => now
                .iter()
                .filter(|id| !ids.contains(*id))
                .cloned()
                .collect(),
            None => {
                let listed: BTreeSet<String> = now.iter().cloned().collect();
                match self.count {
                    Some(count) if listed.len() as u64 <= count => BTreeSet::new(),
                    // One more than counted, and no id to tell it by: the
                    // whole list is what was not read as it is now.
                    _ => listed,
                }
            }
        };
        if joined.is_empty() {
            NodesSince::Known
        } else {
            NodesSince::Joined(joined)
        }
    }
}

/// What a run of one release knows of its swarm's nodes: what its plan
/// read, and what the re-reads' node lists said since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeWatch {
    planned: PlannedNodes,
    since: NodesSince,
}

impl NodeWatch {
    pub(crate) fn new(planned: PlannedNodes) -> Self {
        NodeWatch {
            planned,
            since: NodesSince::Known,
        }
    }

    /// Whether every node of the swarm was read: by the plan, and no node
    /// joined since as far as the re-reads tell.
    pub(crate) fn every_node_read(&self) -> bool {
        self.planned.every_node_read && self.since == NodesSince::Known
    }

    /// Takes a re-read's node list (`None`: not read). `proven` says
    /// whether the run still leans on every node having been read (every
    /// attachable network, or a complete purge): only then can a node
    /// joined since change anything. The release's error entry, the first
    /// time it does.
    pub(crate) fn read(&mut self, now: Option<&[String]>, proven: bool) -> Option<ErrorEntry> {
        if !proven {
            return None;
        }
        let was = std::mem::replace(&mut self.since, NodesSince::Known);
        let said = was != NodesSince::Known;
        self.since = was.and(self.planned.since(now));
        if said {
            return None;
        }
        let why = self.since.describe()?;
        Some(ErrorEntry::new(
            Step::ReadUsage,
            ErrorKind::Other,
            None,
            None,
            why,
        ))
    }

    /// What the re-reads found since the plan, unless every node is
    /// known.
    pub(crate) fn changed(&self) -> Option<&NodesSince> {
        (self.since != NodesSince::Known).then_some(&self.since)
    }
}

impl NodesSince {
    /// `self` and a later read taken together.
    pub(crate) fn and(self, later: NodesSince) -> NodesSince {
        match (self, later) {
            (NodesSince::Unread, _) | (_, NodesSince::Unread) => NodesSince::Unread,
            (NodesSince::Known, other) | (other, NodesSince::Known) => other,
            (NodesSince::Joined(mut a), NodesSince::Joined(b)) => {
                a.extend(b);
                NodesSince::Joined(a)
            }
        }
    }

    /// The report's words for it, when a node may have gone unread.
    pub(crate) fn describe(&self) -> Option<String> {
        match self {
            NodesSince::Known => None,
            NodesSince::Joined(ids) => Some(format!(
                "the swarm lists {} node(s) the plan did not read ({}), joined since: their \
                 containers and volumes were not read, so no attachable network of the release \
                 goes and a purge keeps its records until a sweep reaches them",
                ids.len(),
                ids.iter()
                    .map(|id| format!("{id:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            NodesSince::Unread => Some(
                "the swarm's node list could not be read again, so nothing proves that no node \
                 joined since the plan: no attachable network of the release goes and a purge \
                 keeps its records"
                    .to_owned(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn joined(list: &[&str]) -> NodesSince {
        NodesSince::Joined(list.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn a_node_the_plan_did_not_reach_joined_since() {
        let planned = PlannedNodes {
            every_node_read: true,
            ids: Some(["a", "b"].map(String::from).into()),
            count: Some(2),
        };
        assert_eq!(planned.since(Some(&ids(&["b", "a"]))), NodesSince::Known);
        // A node that left is no node unread.
        assert_eq!(planned.since(Some(&ids(&["a"]))), NodesSince::Known);
        // One joined while another left: the count alone would miss it.
        assert_eq!(planned.since(Some(&ids(&["a", "c"]))), joined(&["c"]));
        assert_eq!(planned.since(None), NodesSince::Unread);
    }

    #[test]
    fn without_ids_the_count_tells() {
        let planned = PlannedNodes {
            every_node_read: true,
            ids: None,
            count: Some(1),
        };
        assert_eq!(planned.since(Some(&ids(&["m"]))), NodesSince::Known);
        assert_eq!(planned.since(Some(&ids(&["m", "m"]))), NodesSince::Known);
        assert_eq!(planned.since(Some(&ids(&["m", "n"]))), joined(&["m", "n"]));
        let uncounted = PlannedNodes::default();
        assert_eq!(uncounted.since(Some(&ids(&["m"]))), joined(&["m"]));
    }

    #[test]
    fn reads_add_up_and_an_unread_one_wins() {
        assert_eq!(NodesSince::Known.and(joined(&["c"])), joined(&["c"]));
        assert_eq!(joined(&["c"]).and(joined(&["d"])), joined(&["c", "d"]));
        assert_eq!(joined(&["c"]).and(NodesSince::Unread), NodesSince::Unread);
        assert_eq!(NodesSince::Known.and(NodesSince::Known), NodesSince::Known);
        assert!(NodesSince::Known.describe().is_none());
        assert!(joined(&["c\u{1b}[2J"])
            .describe()
            .is_some_and(|d| !d.contains('\u{1b}')));
    }
}
