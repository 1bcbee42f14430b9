//! Registries: which swarms (and nodes) there are and how to reach them.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use thiserror::Error;

use crate::backend::{BackendError, ContainerUse, NodeBackend, SwarmBackend, VolumesByStack};
use crate::target::{Node, Target};

/// Why a registry could not hand out a backend or a listing.
///
/// None of these is ever read as "nothing there": a swarm whose backend
/// cannot be had is gathered as unreadable (and held by the planner), a
/// node that cannot be reached is a node whose volumes are not covered.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The registry knows no swarm by this name.
    #[error("unknown swarm {swarm:?}")]
    UnknownSwarm {
        /// The name asked for.
        swarm: String,
    },
    /// The registry cannot reach this node of this swarm individually.
    #[error("swarm {swarm:?}: unknown or unreachable node {node:?}")]
    UnknownNode {
        /// The swarm's name.
        swarm: String,
        /// The swarm node id asked for.
        node: String,
    },
    /// Connecting to the daemon at `endpoint` for `swarm` failed.
    #[error("swarm {swarm:?}: cannot connect to {endpoint}: {message}")]
    Connect {
        /// The swarm's name.
        swarm: String,
        /// The daemon's address as configured.
        endpoint: String,
        /// What the transport said.
        message: String,
    },
    /// A call the registry had to make to `swarm`'s manager failed.
    #[error("swarm {swarm:?}: {source}")]
    Manager {
        /// The swarm's name.
        swarm: String,
        /// The manager's error, classified as any backend error is.
        #[source]
        source: BackendError,
    },
    /// The registry could not list its swarms.
    #[error("cannot list swarms: {message}")]
    Listing {
        /// Why, for people.
        message: String,
    },
}

/// Where backends come from.
///
/// Implementations must hand out the same backend (the same `Arc`) for the
/// same target for as long as the registry lives, rather than reconnect on
/// every call, and must never resolve a name to a swarm other than the one
/// configured for it.
///
/// A registry that knows the full set of its swarms says so through
/// [`Registry::as_lister`]; without it a caller reads the local swarm
/// (`""`) only. One that can reach each node's own daemon, where a stack's
/// volumes live, says so through [`Registry::as_node_reach`]; without it
/// only the manager's own volumes are seen, and a purge never counts as
/// complete on a swarm of more than one node.
///
/// # Example
///
/// A registry of swarms connected once, at start (a real one connects
/// lazily and keeps what it connected), with a name it was not configured
/// with refused rather than sent elsewhere:
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
///
/// use async_trait::async_trait;
/// use sweep_swarms::{Registry, RegistryError, SwarmBackend, Target};
/// # use sweep_swarms::{BackendError, ObjectRef, ReleaseRecord, StackPart};
/// # /// A swarm with nothing on it.
/// # struct Empty(&'static str);
/// # #[async_trait]
/// # impl SwarmBackend for Empty {
/// #     async fn releases(&self) -> Result<Vec<ReleaseRecord>, BackendError> { Ok(Vec::new()) }
/// #     async fn remove_stack_part(&self, _: &str, _: StackPart, _: &[ObjectRef]) -> Result<(), BackendError> { Ok(()) }
/// #     async fn stack_volumes(&self, _: &str) -> Result<Vec<String>, BackendError> { Ok(Vec::new()) }
/// #     async fn remove_volume(&self, _: &str) -> Result<(), BackendError> { Ok(()) }
/// #     async fn remove_release_records(&self, _: &str) -> Result<(), BackendError> { Ok(()) }
/// #     async fn node_count(&self) -> Result<usize, BackendError> { Ok(1) }
/// #     async fn node_ids(&self) -> Result<Vec<String>, BackendError> { Ok(vec!["n1".into()]) }
/// #     async fn cluster_id(&self) -> Result<String, BackendError> { Ok(self.0.into()) }
/// #     fn self_stack(&self) -> Option<&str> { None }
/// # }
///
/// /// The swarms of this controller's configuration, by name.
/// struct Configured {
///     swarms: BTreeMap<String, Arc<dyn SwarmBackend>>,
/// }
///
/// #[async_trait]
/// impl Registry for Configured {
///     async fn backend(&self, target: &Target) -> Result<Arc<dyn SwarmBackend>, RegistryError> {
///         // The same `Arc` every time; no fallback for a name not configured.
///         self.swarms
///             .get(target.as_str())
///             .cloned()
///             .ok_or_else(|| RegistryError::UnknownSwarm {
///                 swarm: target.as_str().to_owned(),
///             })
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let local: Arc<dyn SwarmBackend> = Arc::new(Empty("cluster-a"));
/// let registry = Configured {
///     swarms: BTreeMap::from([(String::new(), local)]),
/// };
///
/// let first = registry.backend(&Target::local()).await?;
/// let again = registry.backend(&Target::local()).await?;
/// assert!(Arc::ptr_eq(&first, &again));
/// assert_eq!(first.cluster_id().await?, "cluster-a");
///
/// let unknown = registry.backend(&Target::new("beta")).await;
/// assert!(matches!(unknown, Err(RegistryError::UnknownSwarm { .. })));
/// // Neither a lister nor node reach: only the local swarm, through its manager.
/// assert!(registry.as_lister().is_none() && registry.as_node_reach().is_none());
/// # Ok(())
/// # }
/// ```
#[async_trait]
pub trait Registry: Send + Sync {
    /// The backend of `target`'s manager; unknown names are
    /// [`RegistryError::UnknownSwarm`], never a fallback swarm.
    async fn backend(&self, target: &Target) -> Result<Arc<dyn SwarmBackend>, RegistryError>;

    /// This registry as a [`Lister`], when it knows the full set of its
    /// swarms. `None` (the default) when it does not.
    fn as_lister(&self) -> Option<&dyn Lister> {
        None
    }

    /// This registry as a [`NodeReach`], when it can reach nodes
    /// individually. `None` (the default) when it cannot.
    fn as_node_reach(&self) -> Option<&dyn NodeReach> {
        None
    }

    /// Closes the connections this registry keeps open for reuse to
    /// `target`'s manager and nodes, without waiting; those still reading a
    /// reply close when it is read. Nothing changes for the next call, which
    /// connects again if it must. The default, for registries that keep no
    /// connections, does nothing.
    ///
    /// A caller that bounds the connections open at once calls this when it
    /// is done with `target`: every kept connection holds a file
    /// descriptor, and kept connections piling up over hundreds of swarms
    /// would run the process out of them, failing connections to healthy
    /// daemons.
    fn close_idle(&self, target: &Target) {
        let _ = target;
    }
}

/// A registry that knows every swarm it serves.
///
/// A swarm missing from the list is a swarm nobody reads, so its releases
/// are never planned, neither kept nor deleted. A list that cannot be read
/// completely must be an error: the caller then deletes nothing anywhere,
/// where a shorter list would quietly leave swarms out.
#[async_trait]
pub trait Lister: Send + Sync {
    /// Every swarm this registry can resolve, each once. Must fail rather
    /// than return a partial list.
    async fn swarms(&self) -> Result<Vec<Target>, RegistryError>;
}

/// A registry that can reach individual nodes of its swarms.
///
/// Volumes are local to a node: only the daemon of the node that ran a
/// stack's tasks sees its volumes. A caller compares the nodes reached
/// ([`NodeReach::nodes`]) with the manager's node list
/// ([`SwarmBackend::node_ids`]) and calls a purge complete only when every
/// node the manager counts was reached, so a node may be listed as reached
/// only when the registry has proven, now, that it talks to that node's own
/// daemon:
/// - the daemon answered during this call (an address configured for the
///   node, or an answer to an earlier call, proves nothing);
/// - it reported its own swarm node id (from its own information, not from
///   an address or a hostname, which need not be unique);
/// - that id is in this swarm's manager's node list: a daemon of another
///   swarm, or in no swarm, reached through a stale address is not a node
///   of this one.
///
/// Two addresses answering as one node are one node, listed once. Errors
/// ([`RegistryError`]) are for a listing that could not be made at all; a
/// node that fails one of the checks is left out, not an error.
///
/// # Example
///
/// One swarm of three nodes whose registry has addresses for three daemons:
/// one answers as node `n1`, one does not answer, and one answers as a node
/// of some other swarm. One node is reached; the caller then knows two of
/// the three are not.
///
/// ```
/// use std::sync::Arc;
///
/// use async_trait::async_trait;
/// use sweep_swarms::{Node, NodeBackend, NodeReach, RegistryError, Target};
/// # use sweep_swarms::BackendError;
/// # #[async_trait]
/// # impl NodeBackend for Daemon {
/// #     async fn stack_volumes(&self, _: &str) -> Result<Vec<String>, BackendError> { Ok(Vec::new()) }
/// #     async fn remove_volume(&self, _: &str) -> Result<(), BackendError> { Ok(()) }
/// # }
///
/// /// A node daemon the registry has an address for.
/// struct Daemon {
///     /// The swarm node id its own information reports when asked now;
///     /// `None` when it does not answer.
///     answers_as: Option<&'static str>,
/// }
///
/// /// The local swarm: the manager's node list and the node daemons.
/// struct LocalNodes {
///     members: Vec<Node>,
///     daemons: Vec<Arc<Daemon>>,
/// }
///
/// impl LocalNodes {
///     fn member(&self, id: &str) -> Option<&Node> {
///         self.members.iter().find(|m| m.id == id)
///     }
/// }
///
/// #[async_trait]
/// impl NodeReach for LocalNodes {
///     async fn nodes(&self, target: &Target) -> Result<Option<Vec<Node>>, RegistryError> {
///         if !target.is_local() {
///             return Err(RegistryError::UnknownSwarm { swarm: target.as_str().to_owned() });
///         }
///         let mut reached: Vec<Node> = Vec::new();
///         for daemon in &self.daemons {
///             // Reached: it answered now, as a node the manager lists, and
///             // was not reached already through another address.
///             if let Some(member) = daemon.answers_as.and_then(|id| self.member(id)) {
///                 if !reached.contains(member) {
///                     reached.push(member.clone());
///                 }
///             }
///         }
///         Ok(Some(reached))
///     }
///
///     async fn node_backend(
///         &self,
///         target: &Target,
///         node: &Node,
///     ) -> Result<Arc<dyn NodeBackend>, RegistryError> {
///         // Only a daemon that proved to be this node; the same `Arc` each time.
///         match self.daemons.iter().find(|d| d.answers_as == Some(node.id.as_str())) {
///             Some(daemon) if self.member(&node.id).is_some() => Ok(daemon.clone()),
///             _ => Err(RegistryError::UnknownNode {
///                 swarm: target.as_str().to_owned(),
///                 node: node.id.clone(),
///             }),
///         }
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), RegistryError> {
/// let reach = LocalNodes {
///     members: vec![Node::new("n1", "web-1"), Node::new("n2", "web-2"), Node::new("n3", "db-1")],
///     daemons: vec![
///         Arc::new(Daemon { answers_as: Some("n1") }),
///         Arc::new(Daemon { answers_as: None }),
///         Arc::new(Daemon { answers_as: Some("x9") }),
///     ],
/// };
/// let reached = reach.nodes(&Target::local()).await?.expect("node reach");
/// assert_eq!(reached, [Node::new("n1", "web-1")]);
///
/// assert!(reach.node_backend(&Target::local(), &reached[0]).await.is_ok());
/// let n2 = Node::new("n2", "web-2");
/// assert!(matches!(
///     reach.node_backend(&Target::local(), &n2).await,
///     Err(RegistryError::UnknownNode { .. })
/// ));
/// # Ok(())
/// # }
/// ```
#[async_trait]
pub trait NodeReach: Send + Sync {
    /// `None`: this registry cannot reach this swarm's nodes individually
    /// (no node endpoints configured).
    ///
    /// `Some(list)`: the daemons it can reach right now that answer as a
    /// swarm node, each with the node id it holds, once per id. A daemon it
    /// cannot connect to, or that is in no swarm, is left out. Whether a
    /// listed node is one of this swarm's is not the registry's to decide:
    /// the planner counts only ids on the manager's node list
    /// ([`SwarmBackend::members`]), so another swarm's daemon configured
    /// here by mistake is listed, and never purged.
    async fn nodes(&self, target: &Target) -> Result<Option<Vec<Node>>, RegistryError>;

    /// [`NodeReach::nodes`], each node with what its daemon holds, read in
    /// the same round as the node was found where the registry can: a
    /// swarm's read then takes one round trip, not three (info, then
    /// volumes, then containers). Whether a node counts is still the
    /// planner's rule; what a node holds is kept only under the id its
    /// daemon answered with, and only as read from that daemon.
    ///
    /// The default finds the nodes and leaves their holdings to the caller
    /// ([`Holdings::NotRead`]), who reads them through
    /// [`NodeReach::node_backend`].
    async fn nodes_read(&self, target: &Target) -> Result<Option<Vec<ReadNode>>, RegistryError> {
        Ok(self.nodes(target).await?.map(|nodes| {
            nodes
                .into_iter()
                .map(|node| ReadNode::new(node, Holdings::NotRead))
                .collect()
        }))
    }

    /// The longest [`NodeReach::nodes`] can take, when the registry bounds
    /// each daemon it asks and answers with the nodes that did answer in
    /// time; `None` (the default) when it does not bound itself.
    ///
    /// A caller's own bound on `nodes` must be longer than this: cut off
    /// first, the whole answer is lost, and one silent node daemon would
    /// cost its swarm every node that did answer.
    fn nodes_time_limit(&self) -> Option<Duration> {
        None
    }

    /// How many daemon connections [`NodeReach::nodes`] holds open at once
    /// for `target`, at most (each one a file descriptor while it is open),
    /// connections kept for reuse while it runs included. A caller that
    /// bounds its open connections counts this many for the call. The
    /// default, 1, is one read of the manager's node list.
    fn nodes_connections(&self, target: &Target) -> usize {
        let _ = target;
        1
    }

    /// The backend of `node`'s own daemon, found as [`NodeReach::nodes`]
    /// finds them when no listing on this instance did (a saved plan
    /// carried out by a process of its own). A node no daemon answers as is
    /// [`RegistryError::UnknownNode`]; so is one off the manager's node
    /// list, where the registry can check it: the precondition at the
    /// removal, beside the planner's rule. Must hand out the same `Arc` for
    /// the same node.
    async fn node_backend(
        &self,
        target: &Target,
        node: &Node,
    ) -> Result<Arc<dyn NodeBackend>, RegistryError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_swarm_and_object() {
        let e = RegistryError::Connect {
            swarm: "alpha".into(),
            endpoint: "unix:///run/x.sock".into(),
            message: "refused".into(),
        };
        assert_eq!(
            e.to_string(),
            "swarm \"alpha\": cannot connect to unix:///run/x.sock: refused"
        );
        let e = RegistryError::UnknownNode {
            swarm: "".into(),
            node: "n1".into(),
        };
        assert!(e.to_string().contains("\"n1\""));
    }
}

/// What a node's daemon holds that a sweep reads: its stack volumes, and
/// its containers using named volumes.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeHoldings {
    /// The stack volumes on the node, by stack namespace.
    pub volumes: VolumesByStack,
    /// The containers on the node that mount a named volume.
    pub containers: Vec<ContainerUse>,
}

impl NodeHoldings {
    /// What a node holds.
    pub fn new(volumes: VolumesByStack, containers: Vec<ContainerUse>) -> Self {
        NodeHoldings {
            volumes,
            containers,
        }
    }
}

/// What [`NodeReach::nodes_read`] read of a node's daemon.
///
/// Exhaustive on purpose: a registry says one of these, and the runner
/// that reads it handles each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holdings {
    /// Its volumes and containers, both listed.
    Read(NodeHoldings),
    /// Not read, and why: never "holds none".
    Unread(String),
    /// The swarm's manager's own daemon, whose volumes and containers the
    /// caller reads with the manager: not read twice.
    WithManager,
    /// Not read with the node: the caller reads them through
    /// [`NodeReach::node_backend`].
    NotRead,
}

/// A node [`NodeReach::nodes_read`] found, and what was read of it.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadNode {
    /// The node, as its daemon answered.
    pub node: Node,
    /// What its daemon holds.
    pub holdings: Holdings,
}

impl ReadNode {
    /// `node` and what was read of it.
    pub fn new(node: Node, holdings: Holdings) -> Self {
        ReadNode { node, holdings }
    }
}
