//! Reading the operator's files. Every error names the file, and the field
//! inside it where there is one; nothing is planned from a file that does
//! not read cleanly.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sweep_core::{AppSet, SnapshotError, SweepPlan};
use sweep_docker::files::{read_limited, Accept, ReadError, APP_SET_LIMIT, SNAPSHOT_LIMIT};
use sweep_docker::{ConfigError, FileRegistry, LocalRegistry};
use sweep_swarms::Registry;

use crate::cli::Source;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A file that could not be read, is too large or never ends, or is
    /// not text; the error names it.
    #[error("{0}")]
    Read(#[from] ReadError),
    #[error("{}: {source}", file.display())]
    Snapshot {
        file: PathBuf,
        source: SnapshotError,
    },
    #[error("{}: {path}: {message}", file.display())]
    AppSet {
        file: PathBuf,
        path: String,
        message: String,
    },
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The docker endpoint or context could not be resolved; the message
    /// names the variable, context or file it came from.
    #[error("{0}")]
    Environment(String),
    /// A flag with a value that cannot be used; the message names the flag.
    #[error("{0}")]
    Flag(String),
    #[error("{0}")]
    Runtime(String),
    #[error("--controller: {0}")]
    Controller(String),
    /// A saved plan (`apply --plan`) that does not read.
    #[error("{}: not a saved plan of this format: {source}", file.display())]
    SavedPlan {
        file: PathBuf,
        source: SnapshotError,
    },
    /// A plan `plan --out` was asked to save that `apply --plan` could
    /// not read back: not written, so that it is never reviewed.
    #[error("{}: the saved plan was not written: {reason}", file.display())]
    SavedPlanTooLarge {
        file: PathBuf,
        reason: crate::review::TooLarge,
    },
    /// A grace-period state file (`--state`) that does not read: an
    /// error, never an empty state, which would restart every clock.
    #[error("{}: not a state file of this format: {source}", file.display())]
    State {
        file: PathBuf,
        source: SnapshotError,
    },
    /// A state file or saved plan another user owns, or anyone may write
    /// to: they could date a departure back, or widen what is deleted
    /// after it was reviewed (see `crate::private_input`).
    #[error("{}: refused as {role}: {why}", file.display())]
    Untrusted {
        file: PathBuf,
        role: crate::private_input::Role,
        why: crate::private_input::Untrusted,
    },
    /// A state file another run holds (its lock file is locked): runs
    /// that share a state file take turns.
    #[error("{}: the state file is in use by another swarm-sweep run (it holds {}); runs that share a state file take turns: stop the other run, or give this one a state file of its own", file.display(), lock.display())]
    StateInUse { file: PathBuf, lock: PathBuf },
    /// The state file's lock file cannot be opened or locked.
    #[error("{}: cannot take the state file's lock {}: {source}", file.display(), lock.display())]
    StateLock {
        file: PathBuf,
        lock: PathBuf,
        source: std::io::Error,
    },
    /// A file the command was asked to write (`plan --out`, `--state`)
    /// cannot be, or could not be, written.
    #[error("{0}")]
    Write(#[from] crate::safe_write::WriteError),
    /// The state file could not be written; `old` says what became of
    /// the one before.
    #[error("{error}; {old}")]
    StateNotWritten {
        error: crate::safe_write::WriteError,
        old: crate::state::OldState,
    },
    /// An audit log (`--audit-log`) that cannot be opened as the rules
    /// say: refused before any swarm is read.
    #[error("{0}")]
    Audit(#[from] crate::audit_log::AuditFileError),
    /// A webhook (`--notify`, `SWARM_SWEEP_NOTIFY`, `--notify-file`) that
    /// cannot be used; the error never shows the URL.
    #[error("{0}")]
    Notify(#[from] crate::notify::NotifyError),
    /// `explain` about a swarm or release the snapshot does not have.
    #[error("{0}")]
    Explain(#[from] sweep_core::explain::ExplainError),
}

/// Reads a snapshot file and plans it; an error names the file, and the
/// field inside it where there is one. The snapshot is read in place from
/// the file's text and the text is freed before the plan is returned, so a
/// large snapshot is never held twice over, nor beside the output.
///
/// What was parsed is not freed at all: the command writes the plan and
/// exits, and handing a million releases' lists back to the allocator
/// one by one (which then merges the freed blocks) would only delay that.
/// The memory stays with the process, which held it while planning anyway.
pub fn plan_snapshot(file: &Path) -> Result<SweepPlan, InputError> {
    // A pipe too: `plan --snapshot <(swarm-sweep snapshot ...)`.
    let text = read_limited(file, SNAPSHOT_LIMIT, Accept::FileOrPipe)?;
    let (plan, parsed) =
        sweep_core::plan::plan_json_parsed(&text).map_err(|source| InputError::Snapshot {
            file: file.to_owned(),
            source,
        })?;
    std::mem::forget(parsed);
    Ok(plan)
}

/// Reads an app set from YAML or JSON (YAML's flow syntax reads JSON).
pub fn read_app_set(file: &Path) -> Result<AppSet, InputError> {
    // A pipe too: `--app-set <(git show main:apps.yaml)`.
    let text = read_limited(file, APP_SET_LIMIT, Accept::FileOrPipe)?;
    // Parsed under budgets (alias expansion, nesting) and checked like a
    // snapshot's app set: duplicate or empty application names make stamps
    // ambiguous.
    AppSet::from_document(&text).map_err(|e| InputError::AppSet {
        file: file.to_owned(),
        path: e.place(),
        message: e.message(),
    })
}

/// The registry: the config file's swarms, or the one local swarm that
/// `--context`, `DOCKER_HOST`, `DOCKER_CONTEXT` or the docker config's
/// current context names, resolved as the docker CLI resolves them.
pub fn registry(source: &Source, timeout: Duration) -> Result<Box<dyn Registry>, InputError> {
    match &source.config {
        Some(file) => Ok(Box::new(FileRegistry::load(file)?)),
        None => {
            let resolved = sweep_docker::context::resolve(source.context.as_deref())
                .map_err(|e| InputError::Environment(e.to_string()))?;
            if let Some(host) = &resolved.ignored_docker_host {
                // As the docker CLI does: the named context wins. Said
                // aloud, since the operator may think DOCKER_HOST is in force.
                tracing::warn!(
                    context = %resolved.name,
                    docker_host = %host,
                    "--context wins over DOCKER_HOST"
                );
            }
            let mut local = LocalRegistry::new(resolved.endpoint);
            if let Some(stack) = &source.self_stack {
                local = local.with_self_stack(stack);
            }
            Ok(Box::new(local.with_timeout(timeout)))
        }
    }
}
