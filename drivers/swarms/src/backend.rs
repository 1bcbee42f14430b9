//! Backends: what the sweep may read from and do to one swarm or one node.

use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::Stream;
pub use sweep_core::sweep::StackPart;
use thiserror::Error;

use crate::target::Node;

/// One release as the swarm's release records describe it.
///
/// A release may have many record revisions; this is the release, with the
/// owner stamp of its newest revision.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReleaseRecord {
    /// The release name (also the stack namespace of its stack).
    pub name: String,
    /// The raw owner stamp of the newest record revision, `None` when that
    /// revision carries none. Passed through unparsed: deciding whose stamp
    /// it is belongs to the caller.
    pub owner: Option<String>,
}

impl ReleaseRecord {
    /// The release `name` whose newest record is stamped `owner`.
    pub fn new(name: impl Into<String>, owner: Option<String>) -> Self {
        ReleaseRecord {
            name: name.into(),
            owner,
        }
    }
}

/// Why a backend call failed.
///
/// "Already gone" is never an error: removing something that does not exist
/// succeeds, so that a sweep interrupted half-way can simply be run again.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BackendError {
    /// The daemon could not be reached at all (refused, socket missing, TLS
    /// failure, connection dropped).
    #[error("cannot reach the Docker daemon at {endpoint}: {message}")]
    Unreachable { endpoint: String, message: String },
    /// The object is still in use (a volume mounted by a container, a
    /// network with attached tasks) and was left in place: the engine's
    /// answer says it goes once what holds it goes.
    #[error("{object} is in use: {message}")]
    InUse { object: String, message: String },
    /// Refused before touching anything: `release` is the stack the
    /// controller itself runs as on this swarm.
    #[error("refusing to remove stack {release:?}: the controller runs as this stack")]
    OwnStack { release: String },
    /// The daemon did not answer within `after`. The call may or may not
    /// have taken effect.
    #[error("the Docker daemon at {endpoint} did not answer within {after:?}")]
    Timeout { endpoint: String, after: Duration },
    /// The daemon answered, but the answer about `what` makes no sense (a
    /// missing id, an unparsable label); nothing was decided from it.
    #[error("unexpected reply about {what}: {message}")]
    Invalid { what: String, message: String },
    /// The daemon refused the call with an error status other than "not
    /// found" or "in use" (its conflict answer).
    #[error("{object}: refused with status {status}: {message}")]
    Refused {
        object: String,
        status: u16,
        message: String,
    },
    /// Any other failure; the message names the object.
    #[error("{message}")]
    Other { message: String },
}

/// One swarm, reached through one of its managers.
///
/// Implementations must:
/// - only ever act on objects of the release named in the call;
/// - return `Ok` when what is to be removed is already gone;
/// - return an error rather than a partial or empty answer when a listing
///   cannot be read completely, because the caller deletes from what is
///   (not) listed;
/// - be cheap to call repeatedly: one connection, reused.
///
/// Implementations neither wait nor retry: when to try again is the
/// sweep's decision, made by one policy for every driver.
#[async_trait]
pub trait SwarmBackend: Send + Sync {
    /// Every release that has release records on this swarm, one entry per
    /// release name, each with the owner stamp of its highest record
    /// revision.
    ///
    /// Must not list stack objects as releases, and must fail (not skip)
    /// when the newest revision of a release cannot be determined: an
    /// older stamp must never stand in for the newest one.
    async fn releases(&self) -> Result<Vec<ReleaseRecord>, BackendError>;

    /// Removes one part of `release`'s stack: every object of that kind
    /// labelled with its stack namespace, and nothing else. The caller
    /// orders the parts (services first, the others once the services are
    /// gone) and decides when to try again; an implementation neither
    /// waits nor retries.
    ///
    /// Must go on past an object that cannot be removed, so that one stuck
    /// network does not keep the secrets, and then report the first
    /// failure. An object still in use must be left in place and reported
    /// as [`BackendError::InUse`] only when the engine's answer says it will
    /// go once what holds it goes (a network attached to a task still
    /// stopping); any other refusal is another error, never waited on.
    ///
    /// [`StackPart::Tasks`] removes nothing: `Ok` once no task of the stack
    /// is live on a node that is up, [`BackendError::InUse`] while one is.
    ///
    /// Must return [`BackendError::OwnStack`] without touching anything when
    /// `release` is [`SwarmBackend::self_stack`]. Must never remove release
    /// records, nor volumes.
    async fn remove_stack_part(&self, release: &str, part: StackPart) -> Result<(), BackendError>;

    /// Names of the volumes of `release`'s stack on the manager's own
    /// daemon (volumes are local to each node: other nodes' volumes are
    /// reached through [`NodeBackend`]).
    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError>;

    /// Removes the volume `name` from the manager's own daemon.
    ///
    /// A volume already gone is `Ok`; one still in use must be left in place
    /// and reported as [`BackendError::InUse`]. Must not force removal.
    async fn remove_volume(&self, name: &str) -> Result<(), BackendError>;

    /// Removes every release record of `release` (all revisions), and
    /// nothing else; already gone is `Ok`.
    ///
    /// Must remove them oldest revision first and the newest last, and stop
    /// at the first that fails: a removal interrupted half-way then leaves
    /// the newest record, whose stamp judged the release, to judge it
    /// again. The other way round an older stamp (one from before a rename
    /// handover, say) would decide the next sweep.
    async fn remove_release_records(&self, release: &str) -> Result<(), BackendError>;

    /// How many nodes the manager's node list holds, down nodes included (a
    /// down node may still hold volumes).
    async fn node_count(&self) -> Result<usize, BackendError>;

    /// The ids of the nodes in the manager's node list, down nodes included.
    async fn node_ids(&self) -> Result<Vec<String>, BackendError>;

    /// The manager's node list with hostnames, down nodes included, so a
    /// report can name the nodes a purge did not reach. The default lists
    /// [`SwarmBackend::node_ids`] without hostnames; override it when the
    /// hostnames are at hand.
    async fn members(&self) -> Result<Vec<Node>, BackendError> {
        Ok(self
            .node_ids()
            .await?
            .into_iter()
            .map(|id| Node::new(id, ""))
            .collect())
    }

    /// The swarm's cluster id, which tells two swarms apart whatever names a
    /// registry gives them.
    async fn cluster_id(&self) -> Result<String, BackendError>;

    /// The stack the controller runs as on this swarm, if known. Must not do
    /// any I/O.
    fn self_stack(&self) -> Option<&str>;

    /// The manager's own daemon's container events (see
    /// [`ContainerEvents`]), for a sweep without node reach. The default
    /// has none: the sweep then tries again on its retry interval.
    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        Ok(Box::pin(futures_util::stream::empty()))
    }
}

/// A container of a stack went (stopped or was removed) on one daemon: as
/// the daemon's event stream reported it, unjudged.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerGone {
    /// The container's stack namespace label: the release it belonged to.
    pub namespace: String,
}

impl ContainerGone {
    pub fn new(namespace: impl Into<String>) -> Self {
        ContainerGone {
            namespace: namespace.into(),
        }
    }
}

/// A daemon's container events, as they come; the stream ends (or yields
/// an error) when the subscription breaks. Only containers carrying a stack
/// namespace label are reported.
pub type ContainerEvents = Pin<Box<dyn Stream<Item = Result<ContainerGone, BackendError>> + Send>>;

/// One node's own daemon, for what is local to a node: volumes.
///
/// Implementations must talk to that node's daemon only, and must not offer
/// anything only a manager can do.
#[async_trait]
pub trait NodeBackend: Send + Sync {
    /// Names of the volumes of `release`'s stack on this node.
    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError>;

    /// Removes the volume `name` from this node. Already gone is `Ok`; in
    /// use (the engine's conflict answer) is [`BackendError::InUse`] and the
    /// volume is left in place. Must not force removal.
    async fn remove_volume(&self, name: &str) -> Result<(), BackendError>;

    /// This node's container events (see [`ContainerEvents`]): a container
    /// gone is what frees the volumes it mounted. The default has none:
    /// the sweep then tries again on its retry interval.
    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        Ok(Box::pin(futures_util::stream::empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_their_object() {
        let e = BackendError::InUse {
            object: "volume \"data\"".into(),
            message: "mounted".into(),
        };
        assert_eq!(e.to_string(), "volume \"data\" is in use: mounted");
        let e = BackendError::OwnStack {
            release: "swarm-sweep".into(),
        };
        assert!(e.to_string().contains("\"swarm-sweep\""));
        let e = BackendError::Timeout {
            endpoint: "unix:///x".into(),
            after: Duration::from_secs(2),
        };
        assert!(e.to_string().contains("unix:///x"));
    }
}
