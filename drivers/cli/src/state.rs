//! The grace-period state file (`--state FILE`): when each departed
//! release was first seen so, kept between sweeps. What it holds and how
//! it changes after a plan or a sweep is the core's
//! (`sweep_core::grace`); this module reads and writes the file and reads
//! the clock.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sweep_core::{GraceState, NotCurrent, UnixTime};
use sweep_docker::files::{Links, SNAPSHOT_LIMIT};

use crate::input::InputError;
use crate::output;
use crate::private_input::{self, Role};
use crate::safe_write;

/// Reads the state file; `None` when there is none. Anything else that
/// does not read (a file without `written_at` included) is an error naming
/// the file, never an empty state, since an empty state would silently
/// restart every clock.
pub fn read(file: &Path) -> Result<Option<GraceState>, InputError> {
    // A link at its name is refused: the state is written back to it.
    let Some(text) = private_input::read(file, Role::StateFile, SNAPSHOT_LIMIT, Links::Refuse)?
    else {
        return Ok(None);
    };
    GraceState::from_json(&text)
        .map(Some)
        .map_err(|source| InputError::State {
            file: file.to_owned(),
            source,
        })
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
    safe_write::replace(file, text.as_bytes()).map_err(|error| {
        let old = match error {
            // The new state is the file now: nothing old is left to settle.
            safe_write::WriteError::NotDurable { .. } => OldState::Replaced,
            _ => settle_old(file, state),
        };
        InputError::StateNotWritten { error, old }
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
    /// What is at its name is no state file (a link, a FIFO, a device):
    /// left as it is.
    NotState(&'static str),
    /// The new state is in place; only its durability is in doubt.
    Replaced,
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
            OldState::Replaced => write!(
                f,
                "the new state is in place, and is used by the next run unless the machine crashes first"
            ),
            OldState::NotState(kind) => write!(
                f,
                "what is at its name is a {kind}, not a state file, and is left as it is"
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
    // Only a regular file at its name can be the old state: a link, FIFO,
    // device or directory put there (the write refused it) is left as it
    // is, never moved or removed.
    match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return OldState::None,
        Ok(meta) if !meta.file_type().is_file() => {
            return OldState::NotState(sweep_docker::files::kind_of(&meta.file_type()))
        }
        _ => {}
    }
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
    // Opening a device can act on it (a watchdog arms): anything but a
    // regular file already at its name is refused unopened. The opened
    // descriptor below stays the judgement.
    if let Ok(meta) = std::fs::symlink_metadata(&lock) {
        if !meta.file_type().is_file() {
            let kind = sweep_docker::files::kind_of(&meta.file_type());
            return Err(failed(std::io::Error::other(format!(
                "it is a {kind}, not a regular file"
            ))));
        }
    }
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
    // Another user's lock file would let them hold every run off for good.
    crate::private_input::owned_by_user(meta.uid())
        .map_err(|why| failed(std::io::Error::other(why.to_string())))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> GraceState {
        GraceState::empty(UnixTime::from_secs(1_800_000_000))
    }

    /// A FIFO put at the state's name since it was checked: the write is
    /// refused, and the FIFO is no old state to move aside or remove.
    #[test]
    fn a_write_refused_leaves_what_is_at_the_name_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.json");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &file,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        match write(&file, &state()) {
            Err(InputError::StateNotWritten { old, .. }) => {
                assert!(matches!(old, OldState::NotState("FIFO")), "{old:?}")
            }
            other => panic!("{other:?}"),
        }
        let meta = std::fs::symlink_metadata(&file).unwrap();
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing set aside");
    }

    #[test]
    fn a_lock_file_that_is_not_this_user_s_regular_file_is_refused_unopened() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.json");
        let lock = lock_path(&file);
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &lock,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let refused = lock_given(Some(&file)).unwrap_err();
        assert!(
            matches!(refused, InputError::StateLock { .. }),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("FIFO"), "{refused}");
        std::fs::remove_file(&lock).unwrap();
        assert!(lock_given(Some(&file)).unwrap().is_some());
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(&lock, Some(65534), None).unwrap();
            let refused = lock_given(Some(&file)).unwrap_err();
            assert!(
                refused.to_string().contains("owned by uid 65534"),
                "{refused}"
            );
        }
    }
}
