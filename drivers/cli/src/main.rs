//! `swarm-sweep`: plans, and carries out, the sweep of departed releases.

mod agent;
mod apply;
mod audit_command;
mod audit_log;
mod cli;
mod commands;
mod exit;
mod generated;
mod healthcheck;
mod input;
mod notify;
mod output;
mod plan_out;
mod private_input;
mod review;
mod safe_write;
mod signals;
mod state;
mod terminal;
mod watch;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match cli::try_parse_from(std::env::args_os()) {
        Ok(args) => args,
        Err(e) => return exit_with(e),
    };
    let code = commands::run(args);
    if signals::aborted() {
        // Stopped at once by a second signal, after recording what went.
        return ExitCode::from(signals::STOPPED_AT_ONCE as u8);
    }
    code
}

/// Ends the process for a clap error: help and version as clap prints
/// them, anything else as bad input, like every other refusal of it.
fn exit_with(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        _ => exit::process_status(Err(input::InputError::Flag(cli::one_line(&e)))),
    }
}
