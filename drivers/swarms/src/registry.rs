//! Registries: which swarms (and nodes) there are and how to reach them.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use thiserror::Error;

use crate::backend::{BackendError, NodeBackend, SwarmBackend};
use crate::target::{Node, Target};

/// Why a registry could not hand out a backend or a listing.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RegistryError {
    /// The registry knows no swarm by this name.
    #[error("unknown swarm {swarm:?}")]
    UnknownSwarm { swarm: String },
    /// The registry cannot reach this node of this swarm individually.
    #[error("swarm {swarm:?}: unknown or unreachable node {node:?}")]
    UnknownNode { swarm: String, node: String },
    /// Connecting to the daemon at `endpoint` for `swarm` failed.
    #[error("swarm {swarm:?}: cannot connect to {endpoint}: {message}")]
    Connect {
        swarm: String,
        endpoint: String,
        message: String,
    },
    /// A call the registry had to make to `swarm`'s manager failed.
    #[error("swarm {swarm:?}: {source}")]
    Manager {
        swarm: String,
        #[source]
        source: BackendError,
    },
    /// The registry could not list its swarms.
    #[error("cannot list swarms: {message}")]
    Listing { message: String },
}

/// Where backends come from.
///
/// Implementations must hand out the same backend (the same `Arc`) for the
/// same target for as long as the registry lives, rather than reconnect on
/// every call, and must never resolve a name to a swarm other than the one
/// configured for it.
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
#[async_trait]
pub trait Lister: Send + Sync {
    /// Every swarm this registry can resolve, each once. Must fail rather
    /// than return a partial list.
    async fn swarms(&self) -> Result<Vec<Target>, RegistryError>;
}

/// A registry that can reach individual nodes of its swarms.
#[async_trait]
pub trait NodeReach: Send + Sync {
    /// `None`: this registry cannot reach this swarm's nodes individually
    /// (no node endpoints configured).
    ///
    /// `Some(list)`: the nodes it can reach right now, each once. A node it
    /// cannot connect to, or whose daemon is not a member of this swarm, is
    /// left out, never listed and then failed on: callers compare this list
    /// with the manager's node list to know whether every node was covered.
    async fn nodes(&self, target: &Target) -> Result<Option<Vec<Node>>, RegistryError>;

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

    /// The backend of `node`'s own daemon. A node [`NodeReach::nodes`] did
    /// not list is [`RegistryError::UnknownNode`]. Must hand out the same
    /// `Arc` for the same node.
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
