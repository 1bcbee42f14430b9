//! The swarms seam: how swarm-sweep reaches swarms, their managers and nodes.
//!
//! The sweep decides what to delete from facts it reads through these traits
//! and deletes through them, so an implementation must never delete more than a
//! method names, must report "already gone" as success (a retried sweep has to
//! converge), and must never guess: a reply it cannot interpret is an error,
//! not an empty answer.
//!
//! - [`SwarmBackend`]: one swarm, through its manager.
//! - [`NodeBackend`]: one node's own daemon, for its local volumes.
//! - [`Registry`]: finds the backend for a [`Target`]; optionally a
//!   [`Lister`] of all its swarms and a [`NodeReach`] to the nodes of each.
//!
//! Every method is called without retries and under the caller's own
//! timeout: an implementation neither waits for what is in use nor tries
//! again (when to is the sweep's decision, made once for every driver), and
//! says what it knows through its error's variant ([`BackendError`],
//! [`RegistryError`]), never through an empty answer.
//!
//! The sweep-runner crate (`sweep_runner::gather` and
//! `sweep_runner::execute`) drives any [`Registry`]; the repository's
//! `examples/embed_registry.rs` implements these traits for an in-memory
//! world and sweeps it. Test doubles (an in-memory registry, fault injection
//! over any registry) live in the `sweep-testkit` crate, so that this crate
//! holds the contract alone.

#![warn(missing_docs)]

mod backend;
mod registry;
mod target;

pub use backend::{
    BackendError, ContainerEvents, ContainerGone, ContainerUse, Listings, NodeBackend, ObjectRef,
    ObjectVersion, PayloadScope, ReleaseRecord, ReplyLimit, ServiceEntry, ServiceUse, StackObjects,
    StackPart, SwarmBackend, VolumesByStack, KEEP_LABEL, STACK_LABEL,
};
pub use registry::{Holdings, Lister, NodeHoldings, NodeReach, ReadNode, Registry, RegistryError};
pub use target::{Node, Target};
