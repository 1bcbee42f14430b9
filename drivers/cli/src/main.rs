//! `swarm-sweep`: plans, and carries out, the sweep of departed releases.

mod cli;
mod commands;
mod input;
mod output;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    commands::run(args)
}
