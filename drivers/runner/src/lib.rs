//! Runs a sweep against real (or in-memory) swarms.
//!
//! The core decides; this crate does the IO around it, through the swarms
//! seam only: [`gather`] reads every swarm into a [`Snapshot`], then
//! [`execute`] drives the core's [`Sweep`] state machine, running its
//! actions concurrently with tokio and feeding their outcomes back.
//!
//! A controller with its own way of reaching swarms implements the seam
//! (`sweep_swarms::Registry` and the backends it hands out) and hands it to
//! both; the repository's `examples/embed_registry.rs` does that for an
//! in-memory world, and `examples/embed_core.rs` drives the core's state
//! machine without this crate.
//!
//! [`Snapshot`]: sweep_core::Snapshot
//! [`Sweep`]: sweep_core::sweep::Sweep

mod classify;
mod events;
mod execute;
mod gather;
mod limits;

pub use classify::{classify_backend, classify_registry};
pub use execute::{
    execute, execute_until, execute_until_with, CurrentStep, ExecuteSettings, Progress,
};
pub use gather::{gather, GatherSettings};
pub use limits::{
    connection_budget, open_file_limit, raise_open_file_limit, FILES_PER_CONNECTION,
    MAX_CONNECTIONS, RESERVED_FILES,
};
