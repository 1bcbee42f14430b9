//! The `swarm-sweep` binary's integration tests, run as a user runs it.
//!
//! One test binary for them all (`autotests = false` in `Cargo.toml`): one
//! link instead of one per file, and the tests of every file run side by
//! side instead of one file after another.

mod support;

mod agent_image;
mod alerting_rules;
mod audit_log;
mod cli_surface;
mod deletion_windows;
mod grace_state;
mod hostile_input;
mod notify_command;
mod plan_command;
mod preview;
mod saved_plan_input;
mod waited_inputs;
mod watch_command;
mod written_files;
