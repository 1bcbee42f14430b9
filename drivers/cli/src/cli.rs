//! Command-line surface and exit statuses.
//!
//! Exit 0: everything planned went (or there was nothing to do). Exit 1:
//! something failed or was left uncovered. Exit 2: bad input, and nothing
//! was deleted.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use sweep_core::render;

use crate::input;

/// Exit status for bad input: nothing was deleted.
pub const EXIT_BAD_INPUT: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "swarm-sweep",
    version,
    about = "Decides what a GitOps controller for Docker Swarm may delete after applications leave its app set, and deletes it in a safe order."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the plan for a snapshot: what would be deleted, what is spared and why.
    Plan {
        /// A snapshot JSON file (as `swarm-sweep snapshot` prints).
        #[arg(long, value_name = "FILE")]
        snapshot: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Json,
    Text,
}

pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Plan { snapshot, format } => {
            let plan = match input::read_snapshot(&snapshot).and_then(|s| {
                sweep_core::plan(&s).map_err(|e| input::InputError::Snapshot {
                    file: snapshot.clone(),
                    source: e,
                })
            }) {
                Ok(plan) => plan,
                Err(e) => {
                    eprintln!("swarm-sweep: {e}");
                    return ExitCode::from(EXIT_BAD_INPUT);
                }
            };
            match format {
                Format::Json => println!("{}", plan.to_json_pretty()),
                Format::Text => print!("{}", render::plan_text(&plan)),
            }
            ExitCode::SUCCESS
        }
    }
}
