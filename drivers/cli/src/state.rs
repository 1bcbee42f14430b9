//! The grace-period state file (`--state FILE`): when each departed
//! release was first seen so, kept between sweeps. What it holds and how
//! it changes after a plan or a sweep is the core's
//! (`sweep_core::grace`); this module reads and writes the file and reads
//! the clock.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sweep_core::{GraceState, NotCurrent, UnixTime};
use sweep_docker::files::{read_limited, Accept, SNAPSHOT_LIMIT};

use crate::input::InputError;
use crate::output;
use crate::safe_write;

/// Reads the state file; `None` when there is none. Anything else that
/// does not read (a file without `written_at` included) is an error naming
/// the file, never an empty state, since an empty state would silently
/// restart every clock.
pub fn read(file: &Path) -> Result<Option<GraceState>, InputError> {
    match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    let text = read_limited(file, SNAPSHOT_LIMIT, Accept::RegularFile)?;
    check_private(file)?;
    GraceState::from_json(&text)
        .map(Some)
        .map_err(|source| InputError::State {
            file: file.to_owned(),
            source,
        })
}

/// Refuses a state file that another user owns or anyone may write to:
/// its first-seen times decide when a grace period ends, and whoever can
/// write them can date a departure back and have a release deleted early.
/// A group that may write is the owner's choice (a umask of 002).
fn check_private(file: &Path) -> Result<(), InputError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).map_err(|e| {
        InputError::Read(sweep_docker::files::ReadError {
            path: file.to_owned(),
            failure: sweep_docker::files::ReadFailure::Io {
                message: e.to_string(),
            },
        })
    })?;
    let user = rustix::process::geteuid().as_raw();
    if meta.uid() != user {
        return Err(InputError::StateOwner {
            file: file.to_owned(),
            owner: meta.uid(),
            user,
        });
    }
    if meta.mode() & 0o002 != 0 {
        return Err(InputError::StateWritable {
            file: file.to_owned(),
            mode: meta.mode() & 0o7777,
        });
    }
    Ok(())
}

/// The state to plan with at `now`: the file's when it is current (see
/// `sweep_core::grace`), else the empty state, so every clock starts now.
/// A missing file is an empty state; one that is not current is said in
/// one line on stderr naming the file, and the run goes on.
pub fn load(
    file: &Path,
    now: UnixTime,
    max_age: Option<Duration>,
) -> Result<GraceState, InputError> {
    let Some(state) = read(file)? else {
        return Ok(GraceState::empty(now));
    };
    let (state, why) = state.current(now, max_age);
    if let Some(why) = why {
        output::warn_line(&not_current(file, &why));
    }
    Ok(state)
}

/// The warning for a state file that is not current.
pub fn not_current(file: &Path, why: &NotCurrent) -> String {
    not_current_named(&file.display(), why)
}

/// The warning for a state kept in memory between sweeps that is no longer
/// current: the state is only as current as the last plan that renewed
/// it, and after sweeps held for longer than its maximum age (an app set
/// unreadable for an hour) it is as stale as a file left behind.
pub fn not_current_in_memory(why: &NotCurrent) -> String {
    not_current_named(&"the state kept in memory", why)
}

/// The warning for a state that is not current, `what` naming it.
fn not_current_named(what: &dyn std::fmt::Display, why: &NotCurrent) -> String {
    format!(
        "{what}: the grace-period state is not current ({why}), so its first-seen times are not used and every clock starts now"
    )
}

/// Writes the state file whole or not at all ([`safe_write::replace`]): a
/// crash never leaves it half written, which the next run would refuse.
/// When it cannot be written, the old file must not outlive what it
/// claims ([`settle_old`]).
pub fn write(file: &Path, state: &GraceState) -> Result<(), InputError> {
    let mut text = state.to_json_pretty();
    text.push('\n');
    safe_write::replace(file, text.as_bytes()).map_err(|error| InputError::StateNotWritten {
        error,
        old: settle_old(file, state),
    })
}

/// What became of the old state file when the new state could not be
/// written; said after the error.
#[derive(Debug)]
pub enum OldState {
    /// There was none.
    None,
    /// Kept as it was: the new state holds every entry of it.
    Kept,
    /// Moved aside under this name, so that no run reads it.
    MovedAside(PathBuf),
    /// Removed, since it could not be moved aside.
    Removed,
    /// Still in place: it could be neither moved aside nor removed.
    Left(std::io::Error),
}

impl fmt::Display for OldState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OldState::None => write!(f, "no old state is left"),
            OldState::Kept => write!(
                f,
                "the old state is kept: it holds no entry the new one dropped, so the next run only restarts the clocks it lacks"
            ),
            OldState::MovedAside(aside) => write!(
                f,
                "the old state was moved aside to {}, so it is not used and every clock starts over",
                aside.display()
            ),
            OldState::Removed => write!(
                f,
                "the old state was removed, so every clock starts over"
            ),
            OldState::Left(e) => write!(
                f,
                "the old state can be neither moved aside nor removed ({e}): remove it by hand, or the next run may count from times that no longer hold"
            ),
        }
    }
}

/// Deals with the old state file after `new` could not be written over
/// it. An old entry of a release declared again since would date that
/// release's next departure back to the first, cutting its window short;
/// so the old file stays only when `new` keeps every entry of it with
/// the same time (`GraceState::keeps_every_entry_of`). Otherwise (or when
/// it no longer reads) it is moved aside, or removed when it cannot be:
/// no state only restarts every clock.
fn settle_old(file: &Path, new: &GraceState) -> OldState {
    match read(file) {
        Ok(None) => return OldState::None,
        Ok(Some(old)) if new.keeps_every_entry_of(&old) => return OldState::Kept,
        _ => {}
    }
    if let Ok(aside) = safe_write::set_aside(file) {
        return OldState::MovedAside(aside);
    }
    match std::fs::remove_file(file) {
        Ok(()) => OldState::Removed,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => OldState::None,
        Err(e) => OldState::Left(e),
    }
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
            output::warn_line(&e.to_string());
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

/// The state file held for one run: while it lives, no other run may
/// take the same state file. Two runs that share one each read the file,
/// then write what they made of it: the later write puts back an entry the
/// earlier one dropped for a release declared again, dating that release's
/// next departure back to the first, and its grace period ends early.
#[derive(Debug)]
pub struct StateLock {
    // Never read: the lock is the open descriptor's, released when the
    // file is closed (also when the process dies, so none is left stale).
    #[allow(dead_code)]
    file: std::fs::File,
}

/// The lock file of the state file `file`: `FILE.lock`, beside it. It is
/// never removed: a run that removed it could let a third run lock a new
/// file of that name while a second still holds the old one.
fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the state file `file` for this run (see [`StateLock`]), or says
/// which file another run holds; `None` when no state file was given.
/// Taken before the state is read, and held until the command ends.
pub fn lock_given(file: Option<&Path>) -> Result<Option<StateLock>, InputError> {
    use rustix::fs::{flock, FlockOperation, Mode, OFlags};
    use std::os::unix::fs::MetadataExt;

    let Some(file) = file else {
        return Ok(None);
    };
    let lock = lock_path(file);
    let failed = |source: std::io::Error| InputError::StateLock {
        file: file.to_owned(),
        lock: lock.clone(),
        source,
    };
    // A link or a FIFO planted at its name is refused, never followed or
    // waited on.
    let flags = OFlags::RDWR
        | OFlags::CREATE
        | OFlags::NOFOLLOW
        | OFlags::CLOEXEC
        | OFlags::NONBLOCK
        | OFlags::NOCTTY;
    let fd =
        rustix::fs::open(&lock, flags, Mode::from_raw_mode(0o600)).map_err(|e| failed(e.into()))?;
    let opened = std::fs::File::from(fd);
    let meta = opened.metadata().map_err(failed)?;
    if !meta.file_type().is_file() || meta.nlink() != 1 {
        return Err(failed(std::io::Error::other(
            "not a regular file of its own",
        )));
    }
    match flock(&opened, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(StateLock { file: opened })),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(InputError::StateInUse {
            file: file.to_owned(),
            lock,
        }),
        Err(e) => Err(failed(e.into())),
    }
}

/// [`load()`] at the system clock's now, when a state file was given.
pub fn load_given(
    file: Option<&Path>,
    max_age: Option<Duration>,
) -> Result<Option<GraceState>, InputError> {
    match file {
        Some(file) => {
            // Checked before anything is read: a state that could never be
            // written back (a device, a directory, a link) is bad input
            // now, not a failed write after the sweep.
            safe_write::check_target(file)?;
            Ok(Some(load(file, now()?, max_age)?))
        }
        None => Ok(None),
    }
}
