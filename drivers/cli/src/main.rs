//! `swarm-sweep`: plans, and carries out, the sweep of departed releases.

mod agent;
mod cli;
mod commands;
mod generated;
mod healthcheck;
mod input;
mod output;
mod review;
mod safe_write;
mod state;
mod terminal;
mod watch;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match cli::try_parse_from(std::env::args_os()) {
        Ok(args) => args,
        Err(e) => exit_with(e),
    };
    commands::run(args)
}

/// Ends the process for a clap error: help and version as clap prints
/// them, anything else as one line on stderr with exit status 2, like
/// every other refusal of bad input.
fn exit_with(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        _ => {
            output::warn_line(&cli::one_line(&e));
            std::process::exit(i32::from(sweep_core::verdict::BAD_INPUT));
        }
    }
}
