//! What a partial read of a swarm means, decided once for every driver:
//! a gather only records which listings failed and which nodes did not
//! answer (`crate::reads`), and these rules say what follows.

use std::borrow::Cow;

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
    /// others only lower coverage: an unknown node count or node list is
    /// never "complete", the manager's volumes unread leave it unreached.
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
        for failed in self
            .failed_reads
            .iter()
            .filter(|f| f.listing.makes_unreadable())
        {
            why.push(Cow::Owned(format!("{}: {}", failed.listing, failed.error)));
        }
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

    /// The nodes that count as reached: `None` without node reach; none
    /// when the node listing failed (the manager alone never stands for the
    /// swarm); otherwise `nodes` without those whose daemon did not answer
    /// for its volumes or containers (a volume there may be in use by a
    /// workload nobody saw).
    pub fn reached_nodes(&self) -> Option<Cow<'_, [NodeEntry]>> {
        if self
            .failed_reads
            .iter()
            .any(|f| f.listing == Listing::Nodes)
        {
            return Some(Cow::Owned(Vec::new()));
        }
        let nodes = self.nodes.as_deref()?;
        if self.unread_nodes.is_empty() {
            return Some(Cow::Borrowed(nodes));
        }
        Some(Cow::Owned(
            nodes
                .iter()
                .filter(|n| !self.unread_nodes.iter().any(|u| u.id == n.id))
                .cloned()
                .collect(),
        ))
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
}
