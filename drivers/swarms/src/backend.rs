//! Backends: what the sweep may read from and do to one swarm or one node.

use std::collections::{BTreeMap, BTreeSet};
use std::pin::Pin;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::Stream;
use sweep_core::deletion_window::DeletionWindow;
pub use sweep_core::objects::ObjectRef;
pub use sweep_core::sweep::StackPart;
pub use sweep_core::usage::{ContainerUse, ServiceUse};
pub use sweep_core::{ObjectVersion, ServiceEntry, StackObjects, KEEP_LABEL, STACK_LABEL};
use thiserror::Error;

use crate::target::Node;

/// One release as the swarm's release records describe it: the core's
/// [`ReleaseEntry`](sweep_core::ReleaseEntry), under the name the seam
/// gives it, so that a release read from a swarm is the value the
/// snapshot carries.
///
/// A backend fills its name, the raw owner stamp of its newest record
/// revision (`None` when that revision carries none; deciding whose stamp
/// it is belongs to the caller) and, when it reads them, every record
/// revision's config id and version
/// ([`ReleaseEntry::with_records`](sweep_core::ReleaseEntry::with_records))
/// and every record's labels, with what its data says when asked for
/// ([`ReleaseEntry::with_revisions`](sweep_core::ReleaseEntry::with_revisions),
/// see [`SwarmBackend::releases_with_payloads`]). A release always has at
/// least one record, so records never read are `None`, never an empty
/// list. What else the snapshot says of a release (its stack's objects,
/// since when it is departed) is the caller's to find out: a caller takes
/// only these four from a backend.
pub use sweep_core::ReleaseEntry as ReleaseRecord;

/// Names of stack volumes on one daemon, by stack namespace.
pub type VolumesByStack = BTreeMap<String, Vec<String>>;

/// The releases whose records' data a read of the releases decodes
/// ([`SwarmBackend::releases_with_payloads`]): a few names, exactly as the
/// records' `com.swarmcli.release` label gives them.
///
/// A record's data is up to 500 KiB of gzip, a release keeps ten of them,
/// and only the resource rule reads them, for the releases of the
/// applications that opted in: every other record is read by its labels
/// alone, so a swarm with nothing in scope costs what it did before the
/// rule existed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PayloadScope {
    releases: BTreeSet<String>,
}

impl PayloadScope {
    /// No release: every record is read by its labels alone.
    pub fn none() -> Self {
        PayloadScope::default()
    }

    /// The releases named by `releases`.
    pub fn of<I, S>(releases: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        PayloadScope {
            releases: releases.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether the data of `release`'s records is read.
    pub fn contains(&self, release: &str) -> bool {
        self.releases.contains(release)
    }

    /// Whether no release is in scope.
    pub fn is_empty(&self) -> bool {
        self.releases.is_empty()
    }

    /// Whether every release of `other` is in this scope too.
    pub fn covers(&self, other: &PayloadScope) -> bool {
        other.releases.is_subset(&self.releases)
    }

    /// This scope and `other`'s releases too.
    pub fn union(mut self, other: &PayloadScope) -> Self {
        self.releases.extend(other.releases.iter().cloned());
        self
    }

    /// The releases in scope, sorted.
    pub fn releases(&self) -> impl Iterator<Item = &str> {
        self.releases.iter().map(String::as_str)
    }
}

/// Why a backend call failed.
///
/// "Already gone" is never an error: removing something that does not exist
/// succeeds, so that a sweep interrupted half-way can simply be run again.
///
/// The variant is the contract, the message is for people: the caller
/// reacts to the variant (the runner maps each to one of the core's
/// failure classes, `sweep_runner::classify_backend`), so an
/// implementation picks the variant that says what is known about the
/// call's effect:
/// - [`BackendError::InUse`] and [`BackendError::OwnStack`]: nothing was
///   removed, on purpose; the first is tried again later, the second never;
/// - [`BackendError::Unreachable`] and [`BackendError::Timeout`]: the call
///   may or may not have taken effect; the release keeps its records and the
///   next sweep finds it again;
/// - [`BackendError::Refused`], [`BackendError::Invalid`],
///   [`BackendError::TooLarge`] and [`BackendError::Other`]: the step
///   failed and is not waited on.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum BackendError {
    /// The daemon could not be reached at all (refused, socket missing, TLS
    /// failure, connection dropped).
    #[error("cannot reach the Docker daemon at {endpoint}: {message}")]
    Unreachable {
        /// The daemon's address as configured (`unix:///...`, `tcp://...`).
        endpoint: String,
        /// What the transport said.
        message: String,
    },
    /// The object is still in use (a volume mounted by a container, a
    /// network with attached tasks) and was left in place: the engine's
    /// answer says it goes once what holds it goes.
    #[error("{object} is in use: {message}")]
    InUse {
        /// The object, named for people (`volume "data"`).
        object: String,
        /// The engine's answer.
        message: String,
    },
    /// Refused before touching anything: `release` is the stack the
    /// controller itself runs as on this swarm.
    #[error("refusing to remove stack {release:?}: the controller runs as this stack")]
    OwnStack {
        /// The release the call named.
        release: String,
    },
    /// The daemon did not answer within `after`. The call may or may not
    /// have taken effect.
    #[error("the Docker daemon at {endpoint} did not answer within {after:?}")]
    Timeout {
        /// The daemon's address as configured.
        endpoint: String,
        /// How long the backend waited.
        after: Duration,
    },
    /// The daemon answered, but the answer about `what` makes no sense (a
    /// missing id, an unparsable label); nothing was decided from it.
    #[error("unexpected reply about {what}: {message}")]
    Invalid {
        /// What the reply was about (`node list`, `service "web_app"`).
        what: String,
        /// What is wrong with it.
        message: String,
    },
    /// A reply about `what` passed one of the bounds every daemon reply is
    /// read under; it was dropped unread past the bound, and nothing was
    /// decided from it.
    #[error("the reply about {what} from {endpoint} {limit}; nothing was decided from it")]
    TooLarge {
        /// What the reply was about (`node list`, `service "web_app"`).
        what: String,
        /// The daemon's address as configured.
        endpoint: String,
        /// The bound it passed.
        limit: ReplyLimit,
    },
    /// The daemon refused the call with an error status other than "not
    /// found" or "in use" (its conflict answer).
    #[error("{object}: refused with status {status}: {message}")]
    Refused {
        /// The object, named for people.
        object: String,
        /// The engine's HTTP status.
        status: u16,
        /// The engine's answer.
        message: String,
    },
    /// Any other failure; the message names the object.
    #[error("{message}")]
    Other {
        /// What failed, and on which object.
        message: String,
    },
}

/// A bound a daemon's reply is read under.
///
/// An error itself, so that a transport can carry it through the IO error
/// its reader fails with and the client can find it again there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ReplyLimit {
    /// More than this many bytes.
    #[error("exceeds {0} bytes, the limit on one daemon reply")]
    Bytes(u64),
    /// More than this many JSON objects (`{`): each may decode into a
    /// struct many times its size.
    #[error("holds more than {0} JSON objects, the limit on this kind of daemon reply")]
    Objects(u64),
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

    /// [`SwarmBackend::releases`], with what the resource rule reads of
    /// each release's records: every revision
    /// ([`ReleaseRecord::revisions`](sweep_core::ReleaseEntry::revisions):
    /// the record's config name and its revision and owner labels as
    /// written, for every release listed) and, for the releases `payloads`
    /// names and those alone, what each record's data says
    /// ([`sweep_core::record::read_payload`] of it). Records of releases
    /// out of scope are read by their labels alone: their data is never
    /// decoded, nor kept.
    ///
    /// A record whose data cannot be read (too large to be a config's, not
    /// the engine's format) is [`Payload::Unreadable`] with why, never an
    /// error of the listing and never a record left out: one bad record
    /// must not make the swarm unreadable, and the rule skips it by name.
    /// The listing's own guarantees are [`SwarmBackend::releases`]'s.
    ///
    /// The default reads [`SwarmBackend::releases`] and no data at all:
    /// what a backend does not read leaves the releases in scope without
    /// payloads, which the rule holds (revisions unread), never deletes
    /// from.
    ///
    /// [`Payload::Unreadable`]: sweep_core::record::Payload::Unreadable
    async fn releases_with_payloads(
        &self,
        payloads: &PayloadScope,
    ) -> Result<Vec<ReleaseRecord>, BackendError> {
        let _ = payloads;
        self.releases().await
    }

    /// Removes `objects`, the part `part` of `release`'s stack, and
    /// nothing else: each by its id where known ([`ObjectRef::handle`]),
    /// never "whatever carries the stack label", since the caller has left
    /// out what another workload uses. The caller orders the parts
    /// (services first, the others once the services are gone) and decides
    /// when to try again; an implementation neither waits nor retries.
    ///
    /// Must go on past an object that cannot be removed, so that one stuck
    /// network does not keep the secrets, and then report the first
    /// failure. An object still in use must be left in place and reported
    /// as [`BackendError::InUse`] only when the engine's answer says it will
    /// go once what holds it goes (a network attached to a task still
    /// stopping); any other refusal is another error, never waited on. An
    /// object already gone is not a failure. An object given with a
    /// `version` is removed only while the engine lists it at that version:
    /// one at another version changed since it was judged, and is left in
    /// place and reported as [`BackendError::Other`].
    ///
    /// [`StackPart::Tasks`] removes nothing (`objects` is empty): `Ok` once
    /// no task of the stack is live on a node that is up,
    /// [`BackendError::InUse`] while one is.
    ///
    /// Must return [`BackendError::OwnStack`] without touching anything when
    /// `release` is [`SwarmBackend::self_stack`]. Must never remove release
    /// records, nor volumes.
    async fn remove_stack_part(
        &self,
        release: &str,
        part: StackPart,
        objects: &[ObjectRef],
    ) -> Result<(), BackendError>;

    /// Names of the volumes of `release`'s stack on the manager's own
    /// daemon (volumes are local to each node: other nodes' volumes are
    /// reached through [`NodeBackend`]).
    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError>;

    /// The swarm-scoped objects of every stack on the swarm, by stack
    /// namespace (the `com.docker.stack.namespace` label): each service
    /// with its id, spec name, version index and the raw value of its
    /// [`KEEP_LABEL`] spec label, and the names of the networks, secrets
    /// and configs. `volumes` is left `None`: volumes are per node (see
    /// [`SwarmBackend::volumes_by_stack`] and [`NodeBackend`]).
    ///
    /// A stack's configs are what removing its configs would remove
    /// ([`SwarmBackend::remove_stack_part`]), so never a release record:
    /// records go last, separately, and a record listed as a stack object
    /// would be planned for removal with the stack. A namespace without any
    /// such object is absent.
    ///
    /// The service list is what a keep label is read from, so a listing
    /// that cannot be read completely, or an object without an id or name
    /// (or a service without a version), is an error, never a shorter
    /// answer: a service left out is a keep label not seen. `Ok(None)` (the
    /// default) says the backend does not read stack objects.
    async fn stack_objects(&self) -> Result<Option<BTreeMap<String, StackObjects>>, BackendError> {
        Ok(None)
    }

    /// The release records (with the data of those in `payloads`, as
    /// [`SwarmBackend::releases_with_payloads`]), the stacks' objects
    /// ([`SwarmBackend::stack_objects`]) and every service's references
    /// ([`SwarmBackend::service_uses`]), each with its own outcome. A
    /// backend that can answer all three from one listing per kind (the
    /// records are configs, the stacks' services are services) overrides
    /// this so that each listing is read once; the default asks the three
    /// at once.
    async fn listings(&self, payloads: &PayloadScope) -> Listings {
        let (releases, stacks, services) = futures_util::future::join3(
            self.releases_with_payloads(payloads),
            self.stack_objects(),
            self.service_uses(),
        )
        .await;
        Listings {
            releases,
            stacks,
            services,
        }
    }

    /// Every service of the swarm, of any stack or none, at any replica
    /// count and in any mode, with what its spec names: the sources of its
    /// volume mounts (templates as written), its networks, and its secrets
    /// and configs by id and by name. Raw: the sweep decides from it what
    /// another workload uses.
    ///
    /// A service left out is a user not seen, and its data may go: a
    /// listing that cannot be read completely, or a service without an id
    /// or name, is an error, never a shorter answer. `Ok(None)` (the
    /// default) says the backend does not read it: nothing is then
    /// removed but the services, and the release's records stay.
    async fn service_uses(&self) -> Result<Option<Vec<ServiceUse>>, BackendError> {
        Ok(None)
    }

    /// The containers of the manager's own daemon, running or stopped,
    /// that use a named volume, each with the volumes it mounts and its
    /// service id label (see [`NodeBackend::containers`]). `Ok(None)` (the
    /// default) says the backend does not read them.
    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        Ok(None)
    }

    /// The names of the stack volumes on the manager's own daemon, by stack
    /// namespace (volumes without one are left out), every volume once.
    /// An unreadable listing, or a volume listed without a name, is an
    /// error, never an empty answer. `Ok(None)` (the default) says the
    /// backend does not list volumes by stack.
    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        Ok(None)
    }

    /// The swarm node id of the manager's own daemon (from its own
    /// information, not the node list), which
    /// [`SwarmBackend::volumes_by_stack`] is about. A daemon that reports
    /// no node id is an error: its volumes must not be filed under a
    /// guessed node. `Ok(None)` (the default) says the backend does not
    /// know.
    async fn own_node_id(&self) -> Result<Option<String>, BackendError> {
        Ok(None)
    }

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
    /// handover, say) would decide the next sweep. Records that claim the
    /// same revision go by config name (byte order), never in the order the
    /// engine happens to list them: an interruption then leaves the same
    /// records behind on every backend and in every run.
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

    /// When the registry allows deletions on this swarm (its deletion
    /// windows), besides the policy's; none by default (always). Must not
    /// do any I/O.
    fn windows(&self) -> &[DeletionWindow] {
        &[]
    }

    /// The manager's own daemon's container events (see
    /// [`ContainerEvents`]), for a sweep without node reach. The default
    /// has none: the sweep then tries again on its retry interval.
    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        Ok(Box::pin(futures_util::stream::empty()))
    }
}

/// What [`SwarmBackend::listings`] read, each with its own outcome: one
/// that fails is recorded as that listing's failure, the others stand.
#[derive(Debug)]
pub struct Listings {
    /// As [`SwarmBackend::releases_with_payloads`] answers.
    pub releases: Result<Vec<ReleaseRecord>, BackendError>,
    /// As [`SwarmBackend::stack_objects`] answers.
    pub stacks: Result<Option<BTreeMap<String, StackObjects>>, BackendError>,
    /// As [`SwarmBackend::service_uses`] answers.
    pub services: Result<Option<Vec<ServiceUse>>, BackendError>,
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
    /// A container of the stack `namespace` went.
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

    /// The names of the stack volumes on this node, by stack namespace
    /// (volumes without one are left out), every volume once. An
    /// unreadable listing, or a volume listed without a name, is an error,
    /// never an empty answer: an empty answer says the node holds none.
    /// `Ok(None)` (the default) says the backend does not list volumes by
    /// stack.
    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        Ok(None)
    }

    /// The containers of this node, running or stopped, that use a named
    /// volume, each with the names of the volumes it mounts and its
    /// `com.docker.swarm.service.id` label. The engine refuses to remove a
    /// volume only while a container on its own node uses it; a container
    /// elsewhere, or a stopped one of another workload, is found only
    /// here. An unreadable listing is an error, never an empty answer.
    /// `Ok(None)` (the default) says the backend does not read them: the
    /// node's volumes are then not removed.
    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        Ok(None)
    }

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
    fn a_scope_names_releases_exactly() {
        let scope = PayloadScope::of(["web", "db"]);
        assert!(scope.contains("web") && scope.contains("db"));
        assert!(!scope.contains("we") && !scope.contains("Web") && !scope.contains(""));
        assert!(PayloadScope::none().is_empty() && !scope.is_empty());
        assert!(scope.covers(&PayloadScope::of(["db"])) && scope.covers(&PayloadScope::none()));
        assert!(!PayloadScope::of(["db"]).covers(&scope));
        let wider = PayloadScope::of(["api"]).union(&scope);
        assert_eq!(wider.releases().collect::<Vec<_>>(), ["api", "db", "web"]);
    }

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
