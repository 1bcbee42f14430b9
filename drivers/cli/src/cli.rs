//! The command-line surface. Names here are a public contract.
//!
//! Shell completions and the man page are generated from these same
//! definitions ([`command`]), so neither can drift from what the binary
//! accepts. This module depends on nothing else of the binary, so the
//! tests walk the very definitions the binary parses with.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use sweep_core::audit::Since;
use sweep_core::deletion_window::DeletionWindow;
use sweep_core::{ReleaseRef, SwarmName};
use sweep_docker::config::MAX_TIMEOUT_SECS;
use sweep_docker::duration;

/// Names the default `--config`.
pub const CONFIG_ENV: &str = "SWARM_SWEEP_CONFIG";
/// Names the default `--app-set`.
pub const APP_SET_ENV: &str = "SWARM_SWEEP_APP_SET";
/// Adds webhook URLs to `--notify`, separated by whitespace (read by the
/// binary, not by clap, whose help would show the value).
pub const NOTIFY_ENV: &str = "SWARM_SWEEP_NOTIFY";

/// The per-call timeout when `--timeout` is not given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// The longest `--retry-interval` or `--settle-timeout`: longer is more
/// likely a unit mistake than a wish, and far-off deadlines overflow the
/// clock arithmetic of the sweep.
pub const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);

const EXIT_STATUS: &str = "\
Exit status, for every command:
  0  done: every swarm was read and nothing needs a person (apply: everything planned went, or nothing was to go)
  1  done, but something needs a person: a swarm could not be read, a hold other than waiting for an application, a volume purge that cannot reach every node, a failed or pending deletion, output (or an audit log) that could not be written, or an apply declined at its prompt (nothing was deleted)
  2  bad input (flags, files, environment): nothing was read from a swarm and nothing was deleted
  3  apply --plan: the saved plan is stale (the swarms changed since it was made): nothing was deleted
  4  plan --detailed-exitcode: the plan deletes something and nothing else is wrong (with --diff-against: the change deletes something the base app set does not)

Environment:
  SWARM_SWEEP_CONFIG   the default --config
  SWARM_SWEEP_APP_SET  the default --app-set
  SWARM_SWEEP_NOTIFY   webhook URLs for apply and watch, besides --notify (separated by whitespace)
  SWARM_SWEEP_LOG      the log filter (e.g. info, or warn,sweep_runner=debug); else RUST_LOG; default warn
  NO_COLOR             set and not empty: no colour
  TERM=dumb            no colour";

#[derive(Debug, Parser)]
#[command(
    name = "swarm-sweep",
    version,
    about = "Decides what a GitOps controller for Docker Swarm may delete after applications leave its app set, and deletes it in a safe order.",
    after_help = EXIT_STATUS
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
        #[command(flatten)]
        input: PlanInput,
        #[command(flatten)]
        policy: PolicyArgs,
        #[arg(long, value_enum, value_name = "FORMAT")]
        /// Output format; text on a terminal, JSON otherwise; `markdown`
        /// for a pull-request comment. E.g. `--format markdown`.
        format: Option<PlanFormat>,
        /// Also write the plan to FILE, for `apply --plan FILE` to carry
        /// out later. E.g. `--out plan.json`.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Exit 4 when the plan deletes something and nothing else is wrong
        /// (0 then means nothing to delete); with --diff-against, when the
        /// change deletes something the base app set does not.
        /// E.g. `--detailed-exitcode`.
        #[arg(long)]
        detailed_exitcode: bool,
        /// Plan this app set too (YAML or JSON: the base branch's), on the
        /// same snapshot, and print only what the plan's own app set
        /// changes: releases, volumes and dropped objects deleted by one
        /// and not the other, and the holds that differ.
        /// E.g. `--diff-against base-apps.yaml`.
        #[arg(long, value_name = "FILE")]
        diff_against: Option<PathBuf>,
        /// The grace-period state file: when each departed release was
        /// first seen so. Read before planning (a missing file starts every
        /// clock now) and written after, atomically. Not with --snapshot.
        /// E.g. `--state sweep-state.json`.
        #[arg(long, value_name = "FILE")]
        state: Option<PathBuf>,
        /// Use the --state file only if it was written at most this long
        /// ago (and not after now): an older one is not used, every clock
        /// starts now, and a warning names it. No limit by default; set it
        /// above the period you run at. E.g. `--state-max-age 2h`.
        #[arg(long, value_name = "DURATION", requires = "state", value_parser = state_max_age)]
        state_max_age: Option<Duration>,
    },
    /// Plan, print the plan, carry it out, print the report. On a terminal
    /// it asks before deleting.
    Apply {
        #[command(flatten)]
        source: Source,
        #[command(flatten)]
        policy: PolicyArgs,
        #[command(flatten)]
        run: RunArgs,
        /// Output format; text on a terminal, JSON otherwise.
        /// E.g. `--format json`.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<Format>,
        /// Carry out the plan saved by `plan --out FILE` instead of a new
        /// one; its policy comes from the file, and a policy flag given
        /// must agree with it. Exits 3, deleting nothing, when the swarms
        /// or the policy changed since. E.g. `--plan plan.json`.
        #[arg(long, value_name = "FILE")]
        plan: Option<PathBuf>,
        /// Do not ask before deleting, even on a terminal. E.g. `--yes`.
        #[arg(long)]
        yes: bool,
        /// The grace-period state file: when each departed release was
        /// first seen so. Read before planning (a missing file starts every
        /// clock now) and written after the sweep, atomically.
        /// E.g. `--state sweep-state.json`.
        #[arg(long, value_name = "FILE")]
        state: Option<PathBuf>,
        /// Use the --state file only if it was written at most this long
        /// ago (and not after now): an older one is not used, every clock
        /// starts now, and a warning names it. No limit by default; set it
        /// above the period you run at. E.g. `--state-max-age 2h`.
        #[arg(long, value_name = "DURATION", requires = "state", value_parser = state_max_age)]
        state_max_age: Option<Duration>,
        /// Write the sweep's trace to FILE as JSON, atomically: each
        /// action's start and end and each engine event the sweep took, in
        /// microseconds since the sweep started. For finding where a
        /// sweep's time goes; the report is the same with or without it.
        /// E.g. `--trace sweep-trace.json`.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Append one JSON line per object the sweep removed or failed to
        /// remove to FILE (created 0600; refused unless a regular file of
        /// this user's with one link). Read it with `swarm-sweep audit`.
        /// E.g. `--audit-log /var/log/swarm-sweep/audit.jsonl`.
        #[arg(long, value_name = "FILE")]
        audit_log: Option<PathBuf>,
        #[command(flatten)]
        notify: NotifyArgs,
    },
    /// Sweep on an interval, as `apply --yes` would, reading the app set
    /// afresh each time; an app set that cannot be read holds that sweep.
    /// Serves health, readiness, metrics and the last snapshot, plan and
    /// report over HTTP with --listen. The first SIGTERM or Ctrl-C finishes the
    /// steps in flight and exits 0; a second stops at once.
    Watch {
        #[command(flatten)]
        source: Source,
        #[command(flatten)]
        policy: PolicyArgs,
        #[command(flatten)]
        run: RunArgs,
        /// Time from the start of one sweep to the start of the next, from
        /// 1s to 24h; a bare number is seconds. E.g. `--interval 10m`.
        #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = interval, conflicts_with = "once")]
        interval: Duration,
        /// Serve `/healthz`, `/readyz`, `/metrics`, `/plan`, `/report` and
        /// `/snapshot` over HTTP on this address (IP:PORT). The snapshot
        /// holds release records' data: listen on trusted networks only.
        /// E.g. `--listen 0.0.0.0:9090`.
        #[arg(long, value_name = "ADDR", conflicts_with = "once")]
        listen: Option<std::net::SocketAddr>,
        /// Run one sweep and exit with the status `apply` would, for cron.
        /// E.g. `--once`.
        #[arg(long)]
        once: bool,
        /// The grace-period state file: read at start (a missing file
        /// starts every clock now), kept in memory between sweeps, and
        /// written atomically after each sweep and on exit.
        /// E.g. `--state /var/lib/swarm-sweep/state.json`.
        #[arg(long, value_name = "FILE")]
        state: Option<PathBuf>,
        /// Use the --state file read at start only if it was written at
        /// most this long ago (and not after now): an older one is not
        /// used, every clock starts now, and a warning names it. Default
        /// 3 × --interval, at least 5m; no limit with --once.
        /// E.g. `--state-max-age 1h`.
        #[arg(long, value_name = "DURATION", requires = "state", value_parser = state_max_age)]
        state_max_age: Option<Duration>,
        /// Append one JSON line per object each sweep removed or failed to
        /// remove to FILE, opened again for every sweep (so a rotated log
        /// gets a new file); created 0600, refused unless a regular file of
        /// this user's with one link. A write that fails is logged and
        /// counted, and sweeping goes on.
        /// E.g. `--audit-log /var/log/swarm-sweep/audit.jsonl`.
        #[arg(long, value_name = "FILE")]
        audit_log: Option<PathBuf>,
        #[command(flatten)]
        notify: NotifyArgs,
    },
    /// Print an audit log (`--audit-log`), streaming it: one line per
    /// object removed or failed, oldest first. A line that does not read
    /// is reported with its number, and the command then exits 1.
    /// E.g. `swarm-sweep audit audit.jsonl --since 24h --release alpha/web`.
    Audit {
        /// The audit log; a regular file only.
        /// E.g. `/var/log/swarm-sweep/audit.jsonl`.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Only lines from this long ago on (a duration), or from this
        /// RFC 3339 UTC time on. E.g. `--since 24h`.
        #[arg(long, value_name = "DURATION|TIME", value_parser = since)]
        since: Option<Since>,
        /// Only lines of this release, as the plan names it: `SWARM/RELEASE`
        /// (`/RELEASE` for the local swarm). E.g. `--release alpha/web`.
        #[arg(long, value_name = "SWARM/RELEASE", value_parser = release_ref)]
        release: Option<ReleaseRef>,
        /// Output format; text on a terminal, JSON lines otherwise.
        /// E.g. `--format json`.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<Format>,
    },
    /// Explain one release: what the plan decides for it and by which
    /// rule. Reads only.
    Explain {
        /// The release, as the plan names it: `SWARM/RELEASE`, with
        /// `/RELEASE` or `(local)/RELEASE` for the local swarm.
        /// E.g. `alpha/web`.
        #[arg(value_name = "SWARM/RELEASE", value_parser = release_ref)]
        release: ReleaseRef,
        #[command(flatten)]
        input: PlanInput,
        #[command(flatten)]
        policy: PolicyArgs,
        /// Output format; text on a terminal, JSON otherwise.
        /// E.g. `--format text`.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<Format>,
    },
    /// Print the completion script for SHELL on stdout.
    /// E.g. `swarm-sweep completions bash > /etc/bash_completion.d/swarm-sweep`.
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell. E.g. `bash`.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout.
    /// E.g. `swarm-sweep man > swarm-sweep.1`.
    Man,
    /// Ask a `watch --listen` on this machine for its health: exit 0 when
    /// the URL answers 2xx, 1 otherwise. The image's healthcheck, since a
    /// `FROM scratch` image has no shell or curl; with `--print`, also a
    /// look at its routes from inside the container.
    #[command(hide = true)]
    Healthcheck {
        /// The URL to GET; a loopback address only, so the probe never
        /// leaves the machine. E.g. `--url http://127.0.0.1:9090/healthz`.
        #[arg(
            long,
            value_name = "URL",
            default_value = "http://127.0.0.1:9090/healthz"
        )]
        url: String,
        /// Limit for the whole probe, from 1s to 1h; a bare number is
        /// seconds. E.g. `--timeout 3s`.
        #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = timeout)]
        timeout: Duration,
        /// Print the body of a 2xx reply on stdout (control characters
        /// escaped). E.g. `--print --url http://127.0.0.1:9090/metrics`.
        #[arg(long)]
        print: bool,
    },
    /// One node's part of a volume job: lists and removes, through this
    /// node's own daemon, only the volumes the request names for this node
    /// and their stacks, and prints one JSON result line. The command of
    /// the job's tasks; not for people.
    #[command(hide = true)]
    Agent {
        /// The job's request, JSON. E.g. `--request '{"format":3}'`.
        #[arg(long, value_name = "JSON")]
        request: String,
        /// This node's daemon. E.g. `--socket unix:///var/run/docker.sock`.
        #[arg(
            long,
            value_name = "ENDPOINT",
            default_value = "unix:///var/run/docker.sock"
        )]
        socket: String,
        /// Limit for each call to the daemon, from 1s to 1h.
        /// E.g. `--timeout 30s`.
        #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = timeout)]
        timeout: Duration,
    },
}

/// Where the swarms and the app set come from.
#[derive(Debug, Args)]
pub struct Source {
    /// Registry file (TOML) naming the swarms and their endpoints; without
    /// it, the one swarm `DOCKER_HOST` (or the default socket) points at.
    /// E.g. `--config registry.toml`.
    #[arg(long, value_name = "FILE", env = CONFIG_ENV)]
    pub config: Option<PathBuf>,
    /// The app set (YAML or JSON, the schema of a snapshot's `app_set`).
    /// E.g. `--app-set apps.yaml`.
    #[arg(long, value_name = "FILE", env = APP_SET_ENV)]
    pub app_set: PathBuf,
    /// The stack the controller runs as, on the swarm `DOCKER_HOST` points
    /// at (with --config, set `self_stack` per swarm in the file instead).
    /// E.g. `--self-stack swarm-sweep`.
    #[arg(long, value_name = "STACK", conflicts_with = "config")]
    pub self_stack: Option<String>,
    /// The docker CLI context to reach the swarm through, instead of
    /// `DOCKER_HOST`, `DOCKER_CONTEXT` or the docker config's current
    /// context (without --config). E.g. `--context prod`.
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    pub context: Option<String>,
    /// Limit for each read of a manager or node, from 1s to 1h; a bare
    /// number is seconds; default 15s. E.g. `--timeout 30s`.
    #[arg(long, value_name = "DURATION", value_parser = timeout)]
    pub timeout: Option<Duration>,
}

impl Source {
    /// `--timeout`, or its default.
    pub fn timeout_or_default(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }
}

/// The input of `plan` and `explain`: a snapshot file, or the flags that
/// gather one (as for `snapshot`).
#[derive(Debug, Args)]
pub struct PlanInput {
    /// Plan from a snapshot file (as `snapshot` prints it) instead of
    /// gathering one; the file carries its own policy, and its own app set
    /// unless --app-set is given. E.g. `--snapshot snapshot.json`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["self_stack", "context", "timeout", "controller", "prune_volumes", "prune_resources", "max_deletions", "min_departed_for", "window"])]
    pub snapshot: Option<PathBuf>,
    #[command(flatten)]
    pub source: OptionalSource,
}

/// [`Source`] for `plan` and `explain`, where `--snapshot` may stand in
/// for it.
#[derive(Debug, Args)]
pub struct OptionalSource {
    /// Registry file (TOML) naming the swarms and their endpoints; without
    /// it, the one swarm `DOCKER_HOST` (or the default socket) points at.
    /// Not with --snapshot. E.g. `--config registry.toml`.
    #[arg(long, value_name = "FILE", env = CONFIG_ENV)]
    pub config: Option<PathBuf>,
    /// The app set (YAML or JSON); required unless --snapshot is given.
    /// With --snapshot, planned instead of the snapshot's own (given on
    /// the command line only, not from the environment).
    /// E.g. `--app-set apps.yaml`.
    #[arg(long, value_name = "FILE", env = APP_SET_ENV)]
    pub app_set: Option<PathBuf>,
    /// The stack the controller runs as, on the swarm `DOCKER_HOST` points
    /// at (with --config, set `self_stack` per swarm in the file instead).
    /// E.g. `--self-stack swarm-sweep`.
    #[arg(long, value_name = "STACK", conflicts_with = "config")]
    pub self_stack: Option<String>,
    /// The docker CLI context to reach the swarm through (without
    /// --config). E.g. `--context prod`.
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    pub context: Option<String>,
    /// Limit for each read of a manager or node, from 1s to 1h; a bare
    /// number is seconds; default 15s. E.g. `--timeout 30s`.
    #[arg(long, value_name = "DURATION", value_parser = timeout)]
    pub timeout: Option<Duration>,
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
    /// E.g. `--controller prod-cd`.
    /// Default `default`.
    #[arg(long, value_name = "ID")]
    pub controller: Option<String>,
    /// Also remove the departed releases' named volumes, on every node the
    /// registry reaches. E.g. `--prune-volumes`.
    #[arg(long)]
    pub prune_volumes: bool,
    /// Also remove what live releases dropped from their charts: each
    /// service, network, config or secret of a release's stack that its
    /// current revision no longer declares, once the release's stored
    /// revisions prove it was the controller's, for the applications that
    /// set `prune_resources: true` in the app set. Off by default.
    /// E.g. `--prune-resources`.
    #[arg(long)]
    pub prune_resources: bool,
    /// Hold the whole sweep if it would delete more than N releases and
    /// dropped objects together (each object counts as one).
    /// E.g. `--max-deletions 5`.
    #[arg(long, value_name = "N")]
    pub max_deletions: Option<u64>,
    /// Delete a release only once it has been seen departed for at least
    /// this long, so an application that leaves the app set by mistake and
    /// comes back within it loses nothing; a bare number is seconds. Off by
    /// default; `off` says so explicitly (for a stack file's setting).
    /// Measured across runs with --state (watch keeps its own).
    /// E.g. `--min-departed-for 30m`.
    #[arg(long, value_name = "DURATION", value_parser = min_departed_for)]
    pub min_departed_for: Option<Duration>,
    /// When deletions may happen (repeatable): `allow DAYS HH:MM-HH:MM
    /// ZONE` or `deny START/END` (RFC 3339). Outside every allow window,
    /// or inside a deny window, every deletion waits (the hold
    /// `outside_window`, exit 0); a sweep running when a window closes
    /// starts nothing more on that swarm. A swarm's `windows` in the
    /// registry file apply too. See docs/windows.md.
    /// E.g. `--window 'allow Mon-Fri 02:00-05:00 Europe/Berlin'`.
    #[arg(long = "window", value_name = "WINDOW", value_parser = deletion_window)]
    pub window: Vec<DeletionWindow>,
}

/// `--window`: one deletion window, in the core's grammar.
fn deletion_window(text: &str) -> Result<DeletionWindow, String> {
    DeletionWindow::parse(text).map_err(|e| e.to_string())
}

/// How the plan is carried out.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Actions run at once, 1 to 256. E.g. `--concurrency 4`.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub concurrency: u64,
    /// Time between attempts to remove something still in use (a stack's
    /// network while its tasks stop, a volume), when no engine event says
    /// it may be free sooner; a bare number is seconds.
    /// E.g. `--retry-interval 500ms`.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = wait)]
    pub retry_interval: Duration,
    /// How long each network, secret, config or volume may stay in use,
    /// from its own first attempt; a bare number is seconds.
    /// E.g. `--settle-timeout 2m`.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = wait)]
    pub settle_timeout: Duration,
}

/// Where and how `apply` and `watch` send word of what they did
/// (`crate::notify`).
#[derive(Debug, Args)]
pub struct NotifyArgs {
    /// Post an event to this webhook URL (http or https) when a sweep
    /// deletes something, fails a deletion, is held for longer than
    /// --notify-held-after, leaves nodes uncovered, or refuses a stale
    /// saved plan; repeatable. More come from SWARM_SWEEP_NOTIFY and
    /// --notify-file. A webhook URL is a secret: it is never shown but as
    /// scheme, host and a masked path. Delivery never holds up or fails a
    /// sweep. E.g. `--notify https://hooks.example.com/services/T0/B0/x`.
    #[arg(long = "notify", value_name = "URL", value_parser = secret)]
    pub notify: Vec<Secret>,
    /// Read more webhook URLs from FILE, one per line (blank lines and
    /// lines starting with # are skipped). E.g. `--notify-file /run/secrets/webhooks`.
    #[arg(long, value_name = "FILE")]
    pub notify_file: Option<PathBuf>,
    /// The body posted: `json` (the generic event,
    /// schemas/notification.schema.json) or `slack` (a Slack incoming
    /// webhook's, which Mattermost and Rocket.Chat accept too).
    /// E.g. `--notify-format slack`.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "json")]
    pub notify_format: NotifyFormat,
    /// Send a `held` event once a hold has lasted this long, measured
    /// from when it was first seen (across runs with --state); from 1s to
    /// 30 days. E.g. `--notify-held-after 30m`.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = held_after)]
    pub notify_held_after: Duration,
}

/// `--notify-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NotifyFormat {
    /// The generic JSON event.
    Json,
    /// A Slack incoming webhook's body (text and blocks).
    Slack,
}

/// A value that must not be shown: a webhook URL carries its credential
/// in its path. Its `Debug` shows nothing of it, so a parsed command line
/// can be logged.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// `--notify`: taken as it is, never refused here, since clap would show
/// the value in its error; it is checked later, with a masked error.
fn secret(text: &str) -> Result<Secret, String> {
    Ok(Secret(text.to_owned()))
}

/// `--notify-held-after`: at least a second, at most 30 days.
fn held_after(text: &str) -> Result<Duration, String> {
    duration::parse_within(
        text,
        Duration::from_secs(1),
        Duration::from_secs(30 * 24 * 3600),
    )
    .map_err(|e| e.to_string())
}

/// `plan`'s output formats: [`Format`]'s, and Markdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// JSON, the contract for tools.
    Json,
    /// Text, for people.
    Text,
    /// Markdown, for a pull-request comment.
    Markdown,
}

impl PlanFormat {
    /// The format in force: the one given, else [`Format::resolve`]'s.
    pub fn resolve(given: Option<PlanFormat>) -> PlanFormat {
        given.unwrap_or(match Format::resolve(None) {
            Format::Json => PlanFormat::Json,
            Format::Text => PlanFormat::Text,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// JSON, the contract for tools.
    Json,
    /// Text, for people.
    Text,
}

impl Format {
    /// The format in force: the one given, else text when stdout is a
    /// terminal (a person reads it) and JSON otherwise (a program does).
    pub fn resolve(given: Option<Format>) -> Format {
        given.unwrap_or_else(|| Format::default_for(std::io::stdout().is_terminal()))
    }

    /// The default format for a stdout that is (or is not) a terminal.
    pub fn default_for(terminal: bool) -> Format {
        if terminal {
            Format::Text
        } else {
            Format::Json
        }
    }
}

/// `--timeout`: the bounds of the registry file's `timeout_secs`. Zero
/// would fail every call, and more than an hour is more likely a unit
/// mistake than a wish; out of range is refused, never silently changed.
fn timeout(text: &str) -> Result<Duration, String> {
    duration::parse_within(
        text,
        Duration::from_secs(1),
        Duration::from_secs(MAX_TIMEOUT_SECS),
    )
    .map_err(|e| e.to_string())
}

/// `--retry-interval` and `--settle-timeout`: more than zero, at most
/// [`MAX_WAIT`].
fn wait(text: &str) -> Result<Duration, String> {
    duration::parse_within(text, Duration::from_millis(1), MAX_WAIT).map_err(|e| e.to_string())
}

/// `watch --interval`: at least a second, since a shorter one would read
/// every swarm back to back; at most [`MAX_WAIT`].
fn interval(text: &str) -> Result<Duration, String> {
    duration::parse_within(text, Duration::from_secs(1), MAX_WAIT).map_err(|e| e.to_string())
}

/// `--min-departed-for`: any positive duration, read as the snapshot's
/// `policy.min_departed_for` is, or `off` ([`GRACE_OFF`]). A zero stays
/// refused: `0` is more likely a slip than a choice to have no window.
fn min_departed_for(text: &str) -> Result<Duration, String> {
    if text.trim() == "off" {
        return Ok(GRACE_OFF);
    }
    duration::parse(text).map_err(|e| format!("{e}, or off for no grace period"))
}

/// What `--min-departed-for off` parses to: no grace period, even where
/// the policy it is laid over (a saved plan's) has one.
pub const GRACE_OFF: Duration = Duration::ZERO;

/// `--state-max-age`: at least a second, since the state's times are
/// whole seconds.
fn state_max_age(text: &str) -> Result<Duration, String> {
    duration::parse_within(text, Duration::from_secs(1), Duration::MAX).map_err(|e| e.to_string())
}

/// `audit --since`: a duration before now, or an RFC 3339 time.
fn since(text: &str) -> Result<Since, String> {
    Since::parse(text).map_err(|e| e.to_string())
}

/// `SWARM/RELEASE`: split at the last `/`, since a stack name has none
/// and a swarm's name might; `(local)` names the local swarm, as plans
/// print it.
fn release_ref(text: &str) -> Result<ReleaseRef, String> {
    let Some((swarm, release)) = text.rsplit_once('/') else {
        return Err("expected SWARM/RELEASE, e.g. alpha/web (/web for the local swarm)".into());
    };
    if release.is_empty() {
        return Err("the release name after the last / is empty".into());
    }
    let swarm = match swarm {
        "" | "(local)" => SwarmName::local(),
        name => SwarmName::new(name),
    };
    Ok(ReleaseRef::new(swarm, release))
}

/// The clap definition, for completions, the man page and the tests.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parses `args` (the program name first) and applies the checks clap
/// cannot express.
pub fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(args)?;
    check(&mut cmd, &matches)?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    if app_set_is_a_default_beside_a_snapshot(&matches) {
        // An app set from the environment is a default for gathering: it
        // must not silently replace what a snapshot file was gathered with.
        if let Command::Plan { input, .. } | Command::Explain { input, .. } = &mut cli.command {
            input.source.app_set = None;
        }
    }
    Ok(cli)
}

/// Whether `plan` or `explain` was given --snapshot and an app set that
/// did not come from the command line.
fn app_set_is_a_default_beside_a_snapshot(matches: &ArgMatches) -> bool {
    let Some((name, sub)) = matches.subcommand() else {
        return false;
    };
    matches!(name, "plan" | "explain")
        && sub.get_one::<PathBuf>("snapshot").is_some()
        && sub
            .value_source("app_set")
            .is_some_and(|s| s != ValueSource::CommandLine)
}

/// Cross-flag rules that depend on where a value came from. A value from
/// the environment is a default: it must not make `plan --snapshot F`
/// fail, while the same flag on the command line is refused, since it
/// would be ignored.
fn check(cmd: &mut clap::Command, matches: &ArgMatches) -> Result<(), clap::Error> {
    let Some((name, sub)) = matches.subcommand() else {
        return Ok(());
    };
    if !matches!(name, "plan" | "explain") {
        return Ok(());
    }
    let from_command_line = |id: &str| sub.value_source(id) == Some(ValueSource::CommandLine);
    let snapshot = sub.contains_id("snapshot") && sub.get_one::<PathBuf>("snapshot").is_some();
    if snapshot {
        // `--app-set` stands in for the snapshot's app set: the change a
        // pull request makes, planned on swarms read elsewhere.
        for (id, flag) in [("config", "--config"), ("state", "--state")] {
            // `explain` has no --state to ask about.
            if (id != "state" || name == "plan") && from_command_line(id) {
                return Err(cmd.error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!(
                        "{flag} cannot be used with --snapshot: the snapshot file is the input"
                    ),
                ));
            }
        }
    } else if sub.get_one::<PathBuf>("app_set").is_none() {
        return Err(cmd.error(
            clap::error::ErrorKind::MissingRequiredArgument,
            format!(
                "{name} needs an input: give --snapshot FILE (a saved snapshot) or --app-set FILE (to gather one from the swarms; or set {APP_SET_ENV})"
            ),
        ));
    }
    Ok(())
}

/// A clap error as one line: its message, and its tip when it has one
/// (a similar flag, or how to pass a value that starts with `-`).
pub fn one_line(e: &clap::Error) -> String {
    // clap quotes what it refused, which may be a second webhook URL after
    // `--notify`: a credential, masked.
    let rendered = sweep_core::notify::webhook::mask_urls(&e.render().to_string());
    // The first paragraph is the message; clap puts a list (the missing
    // arguments) on lines of its own under it.
    let mut paragraphs = rendered.split("\n\n");
    let message = paragraphs
        .next()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let message = message.trim_start_matches("error: ");
    let message = if message.is_empty() {
        "invalid arguments"
    } else {
        message
    };
    let tips: Vec<&str> = paragraphs
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|l| l.starts_with("tip: "))
        .collect();
    if tips.is_empty() {
        message.to_owned()
    } else {
        format!("{message} ({})", tips.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        try_parse_from(std::iter::once("swarm-sweep").chain(args.iter().copied()))
    }

    #[test]
    fn definitions_are_consistent() {
        command().debug_assert();
    }

    #[test]
    fn durations_take_units_and_bare_seconds() {
        let Command::Apply { source, run, .. } = parse(&[
            "apply",
            "--app-set",
            "a.yaml",
            "--timeout",
            "2m",
            "--retry-interval",
            "500ms",
            "--settle-timeout",
            "90",
        ])
        .unwrap()
        .command
        else {
            panic!("not apply")
        };
        assert_eq!(source.timeout, Some(Duration::from_secs(120)));
        assert_eq!(run.retry_interval, Duration::from_millis(500));
        assert_eq!(run.settle_timeout, Duration::from_secs(90));
        let Command::Apply { source, run, .. } =
            parse(&["apply", "--app-set", "a.yaml"]).unwrap().command
        else {
            panic!("not apply")
        };
        assert_eq!(source.timeout_or_default(), DEFAULT_TIMEOUT);
        assert_eq!(run.retry_interval, Duration::from_secs(2));
        assert_eq!(run.settle_timeout, Duration::from_secs(30));
    }

    #[test]
    fn release_refs() {
        assert_eq!(
            release_ref("alpha/web"),
            Ok(ReleaseRef::new("alpha", "web"))
        );
        assert_eq!(release_ref("/web"), Ok(ReleaseRef::new("", "web")));
        assert_eq!(release_ref("(local)/web"), Ok(ReleaseRef::new("", "web")));
        assert_eq!(release_ref("a/b/web"), Ok(ReleaseRef::new("a/b", "web")));
        assert!(release_ref("web").is_err());
        assert!(release_ref("alpha/").is_err());
    }

    #[test]
    fn format_defaults_by_terminal() {
        assert_eq!(Format::default_for(true), Format::Text);
        assert_eq!(Format::default_for(false), Format::Json);
    }
}
