//! Runs a sweep against real (or in-memory) swarms.
//!
//! The core decides; this crate does the IO around it, through the swarms
//! seam only: [`gather`] reads every swarm into a [`Snapshot`], then
//! [`execute`] drives the core's [`Sweep`] state machine, running its
//! actions concurrently with tokio and feeding their outcomes back.
//! [`Cycle`] is one whole sweep as every deleting command runs it (read
//! the app set, gather, plan or check a saved plan, keep the grace state,
//! approve, execute, keep the state again, one verdict); a [`Host`] says
//! how a command approves and where it prints.
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
mod cycle;
mod events;
mod execute;
mod gather;
mod limits;
mod stop;

pub use classify::{classify_backend, classify_registry};
pub use cycle::{
    clock, AppSetRead, Approval, Cycle, CycleError, Ended, Event, Grace, Host, Outcome, Runs,
};
pub use execute::{
    execute, execute_traced, execute_until, execute_until_with, CurrentStep, ExecuteSettings,
    Progress, Swept,
};
pub use gather::{gather, GatherSettings};
pub use limits::{
    connection_budget, open_file_limit, raise_open_file_limit, FILES_PER_CONNECTION,
    MAX_CONNECTIONS, RESERVED_FILES,
};
pub use stop::{Stop, StopTrigger};
