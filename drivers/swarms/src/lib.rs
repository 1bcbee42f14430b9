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
//! Test doubles (an in-memory registry, fault injection over any registry)
//! live in the `sweep-testkit` crate, so that this crate holds the contract
//! alone.

mod backend;
mod registry;
mod target;

pub use backend::{
    BackendError, ContainerEvents, ContainerGone, NodeBackend, ObjectVersion, ReleaseRecord,
    ServiceEntry, StackObjects, StackPart, SwarmBackend, VolumesByStack, KEEP_LABEL,
};
pub use registry::{Lister, NodeReach, Registry, RegistryError};
pub use target::{Node, Target};
