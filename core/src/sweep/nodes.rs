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

/// What the re-reads' node lists say against the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NodesSince {
    /// No node the plan did not know of.
    Known,
    /// These joined since (ids, sorted).
    Joined(BTreeSet<String>),
    /// The plan read the manager alone, and the swarm lists `extra` more
    /// nodes than it counted then: which of them is new, no id tells.
    Grew { extra: u64 },
    /// A read came without a node list: nothing proves that none joined.
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
    fn since(&self, now: Option<&[String]>) -> NodesSince {
        let Some(now) = now else {
            return NodesSince::Unread;
        };
        let listed: BTreeSet<&String> = now.iter().collect();
        match (&self.ids, self.count) {
            (Some(ids), _) => {
                let joined: BTreeSet<String> = listed
                    .into_iter()
                    .filter(|id| !ids.contains(*id))
                    .cloned()
                    .collect();
                if joined.is_empty() {
                    NodesSince::Known
                } else {
                    NodesSince::Joined(joined)
                }
            }
            (None, Some(count)) if listed.len() as u64 <= count => NodesSince::Known,
            (None, count) => NodesSince::Grew {
                extra: listed.len() as u64 - count.unwrap_or(0),
            },
        }
    }
}

/// What a run of one release knows of its swarm's nodes: what its plan
/// read, and what the re-reads' node lists said since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeWatch {
    planned: PlannedNodes,
    /// The run leans on every node having been read: for its attachable
    /// networks, or for a purge the plan found complete. Fixed by the
    /// plan, so that a node that joins later still counts.
    leans: bool,
    since: NodesSince,
    /// The most nodes a re-read listed.
    listed: Option<u64>,
}

impl NodeWatch {
    /// `complete_purge`: the run purges volumes, and the plan found every
    /// node covered.
    pub(crate) fn new(planned: PlannedNodes, complete_purge: bool) -> Self {
        NodeWatch {
            leans: planned.every_node_read || complete_purge,
            planned,
            since: NodesSince::Known,
            listed: None,
        }
    }

    /// Whether every node of the swarm was read: by the plan, and no node
    /// joined since as far as the re-reads tell.
    pub(crate) fn every_node_read(&self) -> bool {
        self.planned.every_node_read && self.since == NodesSince::Known
    }

    /// Takes a re-read's node list (`None`: not read). A read without one
    /// is a driver's fault, so it is an error entry of the release, the
    /// first time; a node that joined is no error, and shows as the
    /// purge's `partial` coverage and its uncovered node.
    pub(crate) fn read(&mut self, now: Option<&[String]>) -> Option<ErrorEntry> {
        if !self.leans {
            return None;
        }
        if let Some(now) = now {
            let count = now.iter().collect::<BTreeSet<_>>().len() as u64;
            self.listed = Some(self.listed.map_or(count, |l| l.max(count)));
        }
        let was_unread = self.since == NodesSince::Unread;
        let since = std::mem::replace(&mut self.since, NodesSince::Known);
        self.since = since.and(self.planned.since(now));
        if was_unread || self.since != NodesSince::Unread {
            return None;
        }
        Some(ErrorEntry::new(
            Step::ReadUsage,
            ErrorKind::Other,
            None,
            None,
            "the read of who uses what gave no node list, so nothing proves that no node \
             joined since the plan: no attachable network of the release goes, and a purge \
             keeps its records"
                .to_owned(),
        ))
    }

    /// What the re-reads found since the plan, unless every node is
    /// known.
    pub(crate) fn changed(&self) -> Option<&NodesSince> {
        (self.since != NodesSince::Known).then_some(&self.since)
    }

    /// The most nodes a re-read listed.
    pub(crate) fn listed(&self) -> Option<u64> {
        self.listed
    }
}

impl NodesSince {
    /// `self` and a later read taken together: joined nodes add up, and
    /// a read without a node list leaves nothing known.
    pub(crate) fn and(self, later: NodesSince) -> NodesSince {
        match (self, later) {
            (NodesSince::Unread, _) | (_, NodesSince::Unread) => NodesSince::Unread,
            (NodesSince::Known, other) | (other, NodesSince::Known) => other,
            (NodesSince::Joined(mut a), NodesSince::Joined(b)) => {
                a.extend(b);
                NodesSince::Joined(a)
            }
            (NodesSince::Grew { extra: a }, NodesSince::Grew { extra: b }) => {
                NodesSince::Grew { extra: a.max(b) }
            }
            // One plan reads a swarm one way: by ids, or by its count.
            (NodesSince::Joined(_) | NodesSince::Grew { .. }, other) => other,
        }
    }

    /// The nodes not covered because they joined, by id; `None` when no
    /// id tells.
    pub(crate) fn ids(&self) -> Option<Vec<String>> {
        match self {
            NodesSince::Joined(ids) => Some(ids.iter().cloned().collect()),
            NodesSince::Known | NodesSince::Grew { .. } | NodesSince::Unread => None,
        }
    }

    /// How many nodes are not covered because they joined; `None` when
    /// unknown.
    pub(crate) fn missing(&self) -> Option<u64> {
        match self {
            NodesSince::Known => Some(0),
            NodesSince::Joined(ids) => Some(ids.len() as u64),
            NodesSince::Grew { extra } => Some(*extra),
            NodesSince::Unread => None,
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

    fn by_id() -> PlannedNodes {
        PlannedNodes {
            every_node_read: true,
            ids: Some(["a", "b"].map(String::from).into()),
            count: Some(2),
        }
    }

    #[test]
    fn a_node_the_plan_did_not_reach_joined_since() {
        let planned = by_id();
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
        assert_eq!(
            planned.since(Some(&ids(&["m", "n"]))),
            NodesSince::Grew { extra: 1 }
        );
        let uncounted = PlannedNodes::default();
        assert_eq!(
            uncounted.since(Some(&ids(&["m"]))),
            NodesSince::Grew { extra: 1 }
        );
    }

    #[test]
    fn every_join_counts_from_the_first_on_and_only_an_unread_list_is_an_error() {
        let mut watch = NodeWatch::new(by_id(), false);
        assert!(watch.read(Some(&ids(&["a", "b"]))).is_none());
        assert!(watch.every_node_read());
        assert!(watch.read(Some(&ids(&["a", "b", "c"]))).is_none());
        assert!(!watch.every_node_read());
        // A second join, once the first already unproved every node read.
        assert!(watch.read(Some(&ids(&["a", "b", "c", "d"]))).is_none());
        assert_eq!(watch.changed(), Some(&joined(&["c", "d"])));
        assert_eq!(watch.listed(), Some(4));
        let entry = watch.read(None).expect("an unread list is an error");
        assert_eq!(entry.action, Step::ReadUsage);
        assert!(watch.read(None).is_none(), "said once");
        assert_eq!(watch.changed(), Some(&NodesSince::Unread));
        assert_eq!(watch.changed().and_then(NodesSince::missing), None);
    }

    #[test]
    fn a_run_that_leans_on_no_node_read_ignores_the_list() {
        let planned = PlannedNodes {
            every_node_read: false,
            ..by_id()
        };
        let mut watch = NodeWatch::new(planned.clone(), false);
        assert!(watch.read(None).is_none());
        assert_eq!(watch.changed(), None);
        // A complete purge leans on it whatever the networks.
        let mut purge = NodeWatch::new(planned, true);
        assert!(purge.read(Some(&ids(&["a", "z"]))).is_none());
        assert_eq!(purge.changed(), Some(&joined(&["z"])));
    }

    #[test]
    fn reads_add_up_and_an_unread_one_wins() {
        assert_eq!(NodesSince::Known.and(joined(&["c"])), joined(&["c"]));
        assert_eq!(joined(&["c"]).and(joined(&["d"])), joined(&["c", "d"]));
        assert_eq!(joined(&["c"]).and(NodesSince::Unread), NodesSince::Unread);
        assert_eq!(NodesSince::Known.and(NodesSince::Known), NodesSince::Known);
        assert_eq!(
            NodesSince::Grew { extra: 1 }.and(NodesSince::Grew { extra: 2 }),
            NodesSince::Grew { extra: 2 }
        );
        assert_eq!(joined(&["c", "d"]).missing(), Some(2));
        assert_eq!(joined(&["c"]).ids(), Some(vec!["c".to_owned()]));
        assert_eq!(NodesSince::Grew { extra: 1 }.ids(), None);
    }
}
