//! What a gather could not read, as facts of the snapshot.
//!
//! A driver that reads a swarm only reads and records: which listing
//! failed and why, which reached node's daemon did not answer for its
//! volumes or containers. What a partial read means (the swarm cannot be
//! swept, the node does not count as reached) is the planner's to decide
//! (`plan::reads`), once, for every driver: a gatherer that judged it
//! itself would be one more place for the rule to differ.

use serde::{Deserialize, Serialize};

use crate::names::named_enum;

named_enum! {
    /// One listing of a swarm's read.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum Listing {
        /// Connecting to the swarm's manager: nothing else was read.
        Manager = "manager",
        /// The release records.
        Releases = "releases",
        /// The stacks' services, networks, secrets and configs.
        StackObjects = "stack_objects",
        /// Every service's spec: what uses what.
        Services = "services",
        /// The swarm's cluster id.
        ClusterId = "cluster_id",
        /// The node count the swarm reports.
        NodeCount = "node_count",
        /// The manager's node list.
        Members = "members",
        /// The manager daemon's own node id, volumes and containers.
        ManagerVolumes = "manager_volumes",
        /// The nodes the registry reaches.
        Nodes = "nodes",
    }
}

/// A listing that failed while a swarm was read, and why (as the driver
/// said it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct FailedRead {
    /// What could not be read.
    pub listing: Listing,
    /// Why, as the driver said it.
    pub error: String,
}

impl FailedRead {
    /// `listing` failed, for `error`.
    pub fn new(listing: Listing, error: impl Into<String>) -> Self {
        FailedRead {
            listing,
            error: error.into(),
        }
    }
}

/// A node the registry reached whose daemon did not answer for its
/// volumes or its containers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct UnreadNode {
    /// The swarm node id, as `nodes` lists it.
    pub id: String,
    /// Why, as the driver said it.
    pub error: String,
}

impl UnreadNode {
    /// Node `id` did not answer, for `error`.
    pub fn new(id: impl Into<String>, error: impl Into<String>) -> Self {
        UnreadNode {
            id: id.into(),
            error: error.into(),
        }
    }
}
