//! The backend's integration tests, against fake daemons and the real
//! engines of the test bed (`tests/testbed/bed`).
//!
//! One test binary for them all (`autotests = false` in `Cargo.toml`): one
//! link instead of one per file, and the tests of every file run side by
//! side instead of one file after another.

mod bed;

mod api_version;
mod contract;
mod engine;
mod events;
mod faulty_engine;
mod hostile_objects;
mod objects;
mod reply_limit;
mod timeout;
mod tls_local;
mod usage;
