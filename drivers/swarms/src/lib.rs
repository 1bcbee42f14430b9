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
//! With the `memory` feature, the `memory` module holds an in-memory registry with
//! fault injection for tests of code built on the seam.

mod backend;
mod registry;
mod target;

#[cfg(feature = "memory")]
pub mod memory;

pub use backend::{BackendError, NodeBackend, ReleaseRecord, SwarmBackend};
pub use registry::{Lister, NodeReach, Registry, RegistryError};
pub use target::{Node, Target};
