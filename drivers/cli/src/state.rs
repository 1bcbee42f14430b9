//! The grace-period state file (`--state FILE`): when each departed
//! release was first seen so, kept between sweeps. What it holds and how
//! it changes after a plan or a sweep is the core's
//! (`sweep_core::grace`); this module reads and writes the file and reads
//! the clock.

use std::path::Path;
use std::time::SystemTime;

use sweep_core::{GraceState, Snapshot, UnixTime};
use sweep_docker::files::{read_limited, SNAPSHOT_LIMIT};

use crate::input::InputError;
use crate::review::atomic_write;

/// Reads the state file. A missing file is an empty state: the clock of
/// every departed release starts now. Anything else that does not read is
/// an error naming the file, never an empty state, since an empty state
/// would silently restart every clock.
pub fn read(file: &Path) -> Result<GraceState, InputError> {
    match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(GraceState::default()),
        _ => {}
    }
    let text = read_limited(file, SNAPSHOT_LIMIT)?;
    GraceState::from_json(&text).map_err(|source| InputError::State {
        file: file.to_owned(),
        source,
    })
}

/// Writes the state file atomically: a crash never leaves it half
/// written, which the next run would refuse. When it cannot be written,
/// the old file is removed: an old entry of a release declared again since
/// would otherwise date that release's next departure back to the first,
/// cutting its window short, while no state only restarts every clock.
pub fn write(file: &Path, state: &GraceState) -> Result<(), InputError> {
    let mut text = state.to_json_pretty();
    text.push('\n');
    atomic_write(file, text.as_bytes()).map_err(|e| {
        let e = match e {
            InputError::Write { message, .. } => message,
            other => other.to_string(),
        };
        let outcome = match std::fs::remove_file(file) {
            Ok(()) => "the old state was removed, so every clock starts over".to_owned(),
            Err(r) if r.kind() == std::io::ErrorKind::NotFound => "no old state is left".to_owned(),
            Err(r) => format!(
                "the old state cannot be removed either ({r}): remove it by hand, or the next run may count from times that no longer hold"
            ),
        };
        InputError::Write {
            file: file.to_owned(),
            message: format!("{e}; {outcome}"),
        }
    })
}

/// [`write()`], for the end of a command: a failure is said on stderr and
/// reported as `false`, so the command ends with status 1.
pub fn save(file: Option<&Path>, state: &GraceState) -> bool {
    let Some(file) = file else {
        return true;
    };
    match write(file, state) {
        Ok(()) => true,
        Err(e) => {
            crate::output::warn_line(&e.to_string());
            false
        }
    }
}

/// The system clock, as the core counts time.
pub fn now() -> Result<UnixTime, InputError> {
    UnixTime::from_system_time(SystemTime::now()).ok_or_else(|| {
        InputError::Runtime(
            "the system clock is before 1970; the grace period cannot be measured".into(),
        )
    })
}

/// Gives a gathered snapshot the time and, with a state, when each
/// release was first seen departed. With neither a state nor a grace
/// period there is nothing to measure, and the snapshot is left as
/// gathered.
pub fn clock(snapshot: &mut Snapshot, state: Option<&GraceState>) -> Result<(), InputError> {
    if let Some(state) = state {
        state.apply_to(snapshot);
    }
    if state.is_some() || snapshot.policy.min_departed_for.is_some() {
        snapshot.now = Some(now()?);
    }
    Ok(())
}
