//! The command-line surface. Names here are a public contract.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "swarm-sweep",
    version,
    about = "Decides what a GitOps controller for Docker Swarm may delete after applications leave its app set, and deletes it in a safe order.",
    after_help = "Exit status, for every command:\n  0  done: every swarm was read and nothing needs a person (apply: everything planned went, or nothing was to go)\n  1  done, but something needs a person: a swarm could not be read, a hold other than waiting for an application, a volume purge that cannot reach every node, a failed or pending deletion, or output that could not be written\n  2  bad input (flags, files): nothing was read from a swarm and nothing was deleted"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Gather the snapshot of every swarm and print it as JSON (the format
    /// `plan --snapshot` reads). Reads only.
    Snapshot {
        #[command(flatten)]
        source: Source,
        #[command(flatten)]
        policy: PolicyArgs,
    },
    /// Print the plan: what would be deleted, what is spared and why, what
    /// a volume purge cannot reach. Reads only.
    Plan {
        /// Plan from a snapshot file instead of gathering one.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["config", "app_set", "self_stack", "context", "controller", "prune_volumes", "max_deletions"])]
        snapshot: Option<PathBuf>,
        #[command(flatten)]
        source: OptionalSource,
        #[command(flatten)]
        policy: PolicyArgs,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
    },
    /// Plan, print the plan, carry it out, print the report.
    Apply {
        #[command(flatten)]
        source: Source,
        #[command(flatten)]
        policy: PolicyArgs,
        #[command(flatten)]
        run: RunArgs,
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
    },
}

/// Where the swarms and the app set come from.
#[derive(Debug, Args)]
pub struct Source {
    /// Registry config (TOML) naming the swarms and their endpoints.
    /// Without it, the one swarm `DOCKER_HOST` (or the default socket)
    /// points at.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The app set (YAML or JSON, the schema of a snapshot's `app_set`).
    #[arg(long, value_name = "FILE")]
    pub app_set: PathBuf,
    /// The stack the controller runs as, on the swarm `DOCKER_HOST` points
    /// at (with --config, set `self_stack` per swarm in the file instead).
    #[arg(long, value_name = "STACK", conflicts_with = "config")]
    pub self_stack: Option<String>,
    /// The docker CLI context to reach the swarm through, instead of
    /// `DOCKER_HOST`, `DOCKER_CONTEXT` or the docker config's current
    /// context (without --config).
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    pub context: Option<String>,
    /// Limit for each read of a manager or node, in seconds (1 to 3600).
    #[arg(long, value_name = "SECS", default_value_t = 15, value_parser = timeout_secs())]
    pub timeout: u64,
}

/// [`Source`] for `plan`, where `--snapshot` may stand in for it.
#[derive(Debug, Args)]
pub struct OptionalSource {
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[arg(long, value_name = "FILE", required_unless_present = "snapshot")]
    pub app_set: Option<PathBuf>,
    #[arg(long, value_name = "STACK", conflicts_with = "config")]
    pub self_stack: Option<String>,
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    pub context: Option<String>,
    #[arg(long, value_name = "SECS", default_value_t = 15, value_parser = timeout_secs())]
    pub timeout: u64,
}

/// The bounds of a per-call timeout, the same as the registry file's
/// `timeout_secs`: 0 would fail every call, and more than an hour is more
/// likely a unit mistake than a wish. Out of range is refused, never
/// silently changed.
fn timeout_secs() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=sweep_docker::config::MAX_TIMEOUT_SECS)
}

impl OptionalSource {
    /// The source, when an app set was given.
    pub fn into_source(self) -> Option<Source> {
        Some(Source {
            config: self.config,
            app_set: self.app_set?,
            self_stack: self.self_stack,
            context: self.context,
            timeout: self.timeout,
        })
    }
}

/// The policy of the sweep (a snapshot file carries its own).
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// This controller's id: the `<controller>` in owner stamps
    /// `cd/<controller>/<application>:release/<release>`.
    #[arg(long, value_name = "ID", default_value = "default")]
    pub controller: String,
    /// Also remove the departed releases' named volumes, on every node the
    /// registry reaches.
    #[arg(long)]
    pub prune_volumes: bool,
    /// Hold the whole sweep if it would delete more than N releases.
    #[arg(long, value_name = "N")]
    pub max_deletions: Option<u64>,
}

/// How the plan is carried out.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Actions run at once.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub concurrency: u64,
    /// Seconds between attempts to remove something still in use (a
    /// stack's network while its tasks stop, a volume), when no engine
    /// event says it may be free sooner.
    #[arg(long, value_name = "SECS", default_value_t = 2.0)]
    pub retry_interval: f64,
    /// Seconds each network, secret, config or volume may stay in use,
    /// from its own first attempt.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub settle_timeout: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Json,
    Text,
}
