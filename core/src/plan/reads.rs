//! What a partial read of a swarm means, decided once for every driver:
//! a gather only records which listings failed and which nodes did not
//! answer (`crate::reads`), and these rules say what follows.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::reads::Listing;
use crate::snapshot::{NodeEntry, SnapshotStr, SwarmSnapshot};

impl Listing {
    /// Whether a swarm whose read of this listing failed cannot be swept.
    ///
    /// Without the records nothing is known of its releases; without the
    /// stacks or every service's spec a kept release, or an object another
    /// workload uses, would look like any other; without the cluster id
    /// two names of one cluster could not be told apart, and a release
    /// declared under one name would look undeclared under the other. The
    /// others only lower coverage: an unknown node count is never
    /// "complete"; without the manager's node list no daemon's word that it
    /// is one of the swarm's nodes can be checked, so none counts as
    /// reached; the manager's volumes unread leave it unreached.
    pub const fn makes_unreadable(self) -> bool {
        match self {
            Listing::Manager
            | Listing::Releases
            | Listing::StackObjects
            | Listing::Services
            | Listing::ClusterId => true,
            Listing::NodeCount | Listing::Members | Listing::ManagerVolumes | Listing::Nodes => {
                false
            }
        }
    }
}

impl<S: SnapshotStr> SwarmSnapshot<S> {
    /// Why the swarm cannot be swept, or `None` when it can: its `error`
    /// (it was not read at all), every failed listing that
    /// [makes it unreadable](Listing::makes_unreadable), or a cluster id
    /// reported empty (which tells no cluster apart). The planner holds
    /// such a swarm; `snapshot` and `plan` exit 1 for it.
    pub fn why_unreadable(&self) -> Option<Cow<'_, str>> {
        let mut why: Vec<Cow<'_, str>> = Vec::new();
        if let Some(error) = &self.error {
            why.push(Cow::Borrowed(error.as_str()));
        }
        // Sorted: the snapshot lists its failures in no order, and the
        // plan's words must not depend on one.
        let mut failed: Vec<String> = self
            .failed_reads
            .iter()
            .filter(|f| f.listing.makes_unreadable())
            .map(|f| format!("{}: {}", f.listing, f.error))
            .collect();
        failed.sort_unstable();
        why.extend(failed.into_iter().map(Cow::Owned));
        if self
            .cluster_id
            .as_ref()
            .is_some_and(|id| id.as_str().is_empty())
        {
            why.push(Cow::Borrowed("the swarm reports an empty cluster id"));
        }
        match why.len() {
            0 => None,
            1 => why.pop(),
            _ => Some(Cow::Owned(why.join("; "))),
        }
    }

    /// Whether this read's listing `listing` failed.
    fn failed(&self, listing: Listing) -> bool {
        self.failed_reads.iter().any(|f| f.listing == listing)
    }

    /// The swarm's own nodes by id, as its manager listed them: `None`
    /// when the snapshot carries no node list and no failure to read one
    /// (a hand-made snapshot, trusted as written).
    fn member_ids(&self) -> Option<BTreeMap<&str, &NodeEntry>> {
        let members = self.members.as_deref()?;
        Some(members.iter().map(|m| (m.id.as_str(), m)).collect())
    }

    /// The nodes that count as reached: `None` without node reach; none
    /// when the node listing failed (the manager alone never stands for the
    /// swarm) or the manager's node list could not be read (no daemon's
    /// word can then be checked); otherwise the `nodes` that are on the
    /// manager's node list, without those whose daemon did not answer for
    /// its volumes or containers (a volume there may be in use by a
    /// workload nobody saw).
    ///
    /// A daemon answers with the node id it holds; one that is not on the
    /// manager's list is another swarm's node (or one that left), however
    /// the registry was configured, and a purge never touches it. A
    /// hostname a daemon did not give is the manager's.
    pub fn reached_nodes(&self) -> Option<Cow<'_, [NodeEntry]>> {
        if self.failed(Listing::Nodes) {
            return Some(Cow::Owned(Vec::new()));
        }
        let nodes = self.nodes.as_deref()?;
        if self.failed(Listing::Members) {
            return Some(Cow::Owned(Vec::new()));
        }
        let members = self.member_ids();
        let unread: BTreeSet<&str> = self.unread_nodes.iter().map(|u| u.id.as_str()).collect();
        let counted = |n: &NodeEntry| {
            !unread.contains(n.id.as_str())
                && members
                    .as_ref()
                    .is_none_or(|m| m.contains_key(n.id.as_str()))
        };
        let named = |n: &NodeEntry| {
            !n.hostname.is_empty()
                || members
                    .as_ref()
                    .and_then(|m| m.get(n.id.as_str()))
                    .is_none_or(|m| m.hostname.is_empty())
        };
        if nodes.iter().all(|n| counted(n) && named(n)) {
            return Some(Cow::Borrowed(nodes));
        }
        Some(Cow::Owned(
            nodes
                .iter()
                .filter(|n| counted(n))
                .map(
                    |n| match members.as_ref().and_then(|m| m.get(n.id.as_str())) {
                        Some(member) if n.hostname.is_empty() => NodeEntry::clone(member),
                        _ => n.clone(),
                    },
                )
                .collect(),
        ))
    }

    /// Whether the manager's own volumes could not be listed: where the
    /// manager is the node the purge sees, it was not covered.
    pub(crate) fn manager_volumes_unread(&self) -> bool {
        self.failed(Listing::ManagerVolumes)
    }

    /// Whether a node that counts (see [`Self::reached_nodes`]) did not
    /// answer for its volumes or containers: the purge then never covers
    /// the swarm. Another swarm's daemon that did not answer costs nothing.
    pub fn has_unread_node(&self) -> bool {
        if self.unread_nodes.is_empty() {
            return false;
        }
        if self.failed(Listing::Members) {
            // No node counts as reached: coverage is already partial.
            return true;
        }
        let members = self.member_ids();
        self.unread_nodes.iter().any(|u| {
            members
                .as_ref()
                .is_none_or(|m| m.contains_key(u.id.as_str()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reads::{FailedRead, UnreadNode};

    fn swarm() -> SwarmSnapshot {
        let mut s = SwarmSnapshot::new("alpha");
        s.cluster_id = Some("A".into());
        s.nodes = Some(vec![
            NodeEntry::new("n1", "one"),
            NodeEntry::new("n2", "two"),
        ]);
        s
    }

    #[test]
    fn a_swarm_read_whole_is_readable_with_every_node_reached() {
        let s = swarm();
        assert_eq!(s.why_unreadable(), None);
        assert_eq!(s.reached_nodes().unwrap().len(), 2);
    }

    #[test]
    fn a_failed_listing_the_rules_need_makes_the_swarm_unreadable_naming_it() {
        for listing in Listing::ALL {
            let mut s = swarm();
            s.failed_reads = vec![FailedRead::new(*listing, "no answer")];
            let why = s.why_unreadable();
            assert_eq!(why.is_some(), listing.makes_unreadable(), "{listing}");
            if let Some(why) = why {
                assert_eq!(why, format!("{listing}: no answer"));
            }
        }
    }

    #[test]
    fn failed_listings_are_named_in_one_order_whatever_the_snapshot_s() {
        let mut s = swarm();
        s.failed_reads = vec![
            FailedRead::new(Listing::Services, "timed out"),
            FailedRead::new(Listing::Releases, "refused"),
        ];
        let one = s.why_unreadable().map(|w| w.into_owned());
        s.failed_reads.reverse();
        assert_eq!(s.why_unreadable().map(|w| w.into_owned()), one);
        assert_eq!(
            one.as_deref(),
            Some("releases: refused; services: timed out")
        );
    }

    #[test]
    fn an_empty_cluster_id_and_an_error_are_said_together() {
        let mut s = swarm();
        s.error = Some("cannot connect".into());
        s.cluster_id = Some(String::new());
        assert_eq!(
            s.why_unreadable().as_deref(),
            Some("cannot connect; the swarm reports an empty cluster id")
        );
        s.cluster_id = None;
        s.error = None;
        assert_eq!(s.why_unreadable(), None, "no id: a cluster of its own name");
    }

    #[test]
    fn a_node_that_did_not_answer_or_a_failed_node_listing_reaches_less() {
        let mut s = swarm();
        s.unread_nodes = vec![UnreadNode::new("n2", "timed out")];
        let reached = s.reached_nodes().unwrap();
        assert_eq!(
            reached.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(),
            ["n1"]
        );
        s.failed_reads = vec![FailedRead::new(Listing::Nodes, "refused")];
        assert_eq!(s.reached_nodes().unwrap().len(), 0);
        assert_eq!(s.why_unreadable(), None, "only coverage is lower");
        s.nodes = None;
        s.failed_reads.clear();
        assert_eq!(s.reached_nodes(), None);
    }

    fn ids(nodes: &[NodeEntry]) -> Vec<&str> {
        nodes.iter().map(|n| n.id.as_str()).collect()
    }

    #[test]
    fn a_daemon_off_the_manager_s_node_list_is_never_reached() {
        let mut s = swarm();
        s.nodes
            .as_mut()
            .unwrap()
            .push(NodeEntry::new("x9", "other"));
        s.members = Some(vec![
            NodeEntry::new("n1", "one"),
            NodeEntry::new("n2", "two"),
            NodeEntry::new("n3", "three"),
        ]);
        assert_eq!(ids(&s.reached_nodes().unwrap()), ["n1", "n2"]);
        // Another swarm's daemon that did not answer costs nothing; one of
        // this swarm's does.
        s.unread_nodes = vec![UnreadNode::new("x9", "not a node of alpha")];
        assert!(!s.has_unread_node());
        s.unread_nodes.push(UnreadNode::new("n2", "timed out"));
        assert!(s.has_unread_node());
        assert_eq!(ids(&s.reached_nodes().unwrap()), ["n1"]);
    }

    #[test]
    fn without_the_manager_s_node_list_no_daemon_counts() {
        let mut s = swarm();
        s.failed_reads = vec![FailedRead::new(Listing::Members, "refused")];
        assert_eq!(s.reached_nodes().unwrap().len(), 0);
        assert_eq!(s.why_unreadable(), None, "only coverage is lower");
        s.unread_nodes = vec![UnreadNode::new("n2", "timed out")];
        assert!(s.has_unread_node());
        // No node reach at all stays no node reach.
        s.nodes = None;
        assert_eq!(s.reached_nodes(), None);
    }

    #[test]
    fn a_hand_made_snapshot_without_a_node_list_is_trusted_as_written() {
        let mut s = swarm();
        s.unread_nodes = vec![UnreadNode::new("x9", "refused")];
        assert!(s.has_unread_node(), "with no list, every node counts");
        assert_eq!(ids(&s.reached_nodes().unwrap()), ["n1", "n2"]);
    }

    #[test]
    fn a_hostname_a_daemon_did_not_give_is_the_manager_s() {
        let mut s = swarm();
        s.nodes = Some(vec![NodeEntry::new("n1", ""), NodeEntry::new("n2", "two")]);
        s.members = Some(vec![NodeEntry::new("n1", "one"), NodeEntry::new("n2", "2")]);
        let reached = s.reached_nodes().unwrap();
        assert!(matches!(reached, Cow::Owned(_)));
        assert_eq!(
            reached
                .iter()
                .map(NodeEntry::display_name)
                .collect::<Vec<_>>(),
            ["one", "two"]
        );
        s.nodes = Some(vec![NodeEntry::new("n1", "one")]);
        assert!(matches!(s.reached_nodes().unwrap(), Cow::Borrowed(_)));
    }
}
