//! The runner's integration tests: gathering from fake daemons, and the
//! sweep cycle with its host.
//!
//! One test binary for them all (`autotests = false` in `Cargo.toml`): one
//! link instead of one per file, and the tests of every file run side by
//! side instead of one file after another.
//! `open_files.rs` stays a binary of its own: it lowers the process's
//! open-file limit, which would starve the tests running beside it.

mod support;

mod cycle;
mod daemons;
mod dropped;
mod gather_objects;
mod gather_payloads;
mod gather_requests;
mod runner;
