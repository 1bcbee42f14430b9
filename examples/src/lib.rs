//! Worked embeddings of swarm-sweep, as runnable examples.
//!
//! - `embed_core.rs`: a controller that does its own IO. It builds a
//!   `sweep_core::Snapshot` in code, plans with `sweep_core::plan`, and
//!   drives the sans-IO `sweep_core::Sweep` against a toy world, time
//!   passed in as a parameter.
//!   `cargo run -p sweep-examples --example embed_core`
//! - `embed_registry.rs`: a controller with its own way of reaching swarms.
//!   It implements the `sweep-swarms` seam (`Registry`, `Lister`,
//!   `NodeReach`, `SwarmBackend`, `NodeBackend`) over an in-memory world and
//!   hands it to `sweep_runner::gather` and `sweep_runner::execute`.
//!   `cargo run -p sweep-examples --example embed_registry`
//!
//! This library is empty: a package needs one target besides its examples.
//! The JSON snapshots beside it are the ones the walkthrough in docs/guide.md plans.
