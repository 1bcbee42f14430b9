//! The process's open-file limit, and how many daemon connections fit in it.
//!
//! Every open connection to a daemon is a file descriptor. Past the soft
//! `RLIMIT_NOFILE` (commonly 1024), opening one fails with "Too many open
//! files": a node probe that fails so is a node whose volumes a purge does
//! not reach, and a manager read that fails so is a swarm left unread. So
//! the limit is raised towards the hard limit at start
//! ([`raise_open_file_limit`]), and gathering keeps the connections it has
//! open at once within what the limit in force leaves
//! ([`connection_budget`]).

use std::io;

/// Descriptors kept out of the connection budget for everything else the
/// process holds: stdio, the runtime's event queue and wakers, the signal
/// pipe, files read at start, certificate files read while connecting.
pub const RESERVED_FILES: u64 = 64;

/// Descriptors counted per connection: the socket itself, plus one for
/// what establishing it may open on the side (a TLS connection reads its
/// certificate files; a host name is resolved through files and a
/// resolver socket on a blocking thread).
pub const FILES_PER_CONNECTION: u64 = 2;

/// The most connections gathering opens at once however high the limit:
/// past this, more at once only loads the machine. Every request of a
/// swarm goes out at once, one connection each (17 for a manager and two
/// nodes), so this reads some 240 such swarms in one round; each daemon is
/// sent only its own swarm's few requests, whatever the number.
pub const MAX_CONNECTIONS: usize = 4096;

/// The connections gathering may hold open at once under a soft open-file
/// limit of `open_files` (`None`: unknown, or no limit): what is left after
/// [`RESERVED_FILES`], [`FILES_PER_CONNECTION`] each, at most
/// [`MAX_CONNECTIONS`] and at least 1 (then swarms are read one at a time:
/// the least a sweep can do). An unknown limit is taken as the common 1024,
/// never as unlimited.
pub fn connection_budget(open_files: Option<u64>) -> usize {
    let open_files = open_files.unwrap_or(1024);
    let budget = open_files.saturating_sub(RESERVED_FILES) / FILES_PER_CONNECTION;
    usize::try_from(budget)
        .unwrap_or(MAX_CONNECTIONS)
        .clamp(1, MAX_CONNECTIONS)
}

/// The soft open-file limit in force; `u64::MAX` when unlimited, `None`
/// where the platform has no such limit to read.
pub fn open_file_limit() -> Option<u64> {
    imp::soft_limit()
}

/// Raises the soft open-file limit towards the hard limit and returns the
/// soft limit now in force (`u64::MAX`: unlimited). Lowers nothing: a soft
/// limit already at or above what can be set stays.
///
/// An error leaves the limit as it was (gathering then sizes itself from
/// [`open_file_limit`]); callers log it and carry on.
pub fn raise_open_file_limit() -> io::Result<u64> {
    imp::raise()
}

#[cfg(unix)]
mod imp {
    use std::io;

    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

    pub(super) fn soft_limit() -> Option<u64> {
        Some(getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX))
    }

    pub(super) fn raise() -> io::Result<u64> {
        let now = getrlimit(Resource::Nofile);
        let current = now.current.unwrap_or(u64::MAX);
        let hard = now.maximum.unwrap_or(u64::MAX);
        // The hard limit itself first. Some systems refuse part of it: Linux
        // caps descriptors at fs.nr_open (1048576 by default) even when the
        // hard limit is unlimited, and macOS at OPEN_MAX (10240). So smaller
        // steps follow (never above the hard limit, so never increasing),
        // and the first one taken wins.
        let mut refused = None;
        for step in [hard, 1 << 20, 1 << 16, 10240] {
            let step = step.min(hard);
            if step <= current {
                // This step, and every smaller one after it, is in force
                // already: what was refused above it was more than the
                // system gives, not a failure.
                return Ok(current);
            }
            let wanted = Rlimit {
                current: Some(step),
                maximum: now.maximum,
            };
            match setrlimit(Resource::Nofile, wanted) {
                Ok(()) => return Ok(step),
                Err(e) => refused = Some(e),
            }
        }
        match refused {
            Some(e) => Err(io::Error::from(e)),
            None => Ok(current),
        }
    }
}

#[cfg(not(unix))]
mod imp {
    use std::io;

    pub(super) fn soft_limit() -> Option<u64> {
        None
    }

    pub(super) fn raise() -> io::Result<u64> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this platform has no open-file limit to raise",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_leaves_room_and_stays_in_bounds() {
        // The common soft limit: what the descriptors left after the reserve
        // hold at two each.
        assert_eq!(connection_budget(Some(1024)), 480);
        assert_eq!(connection_budget(None), 480);
        assert_eq!(connection_budget(Some(256)), 96);
        // Tiny limits still read, one swarm at a time.
        assert_eq!(connection_budget(Some(10)), 1);
        assert_eq!(connection_budget(Some(0)), 1);
        // High or no limits are capped.
        assert_eq!(connection_budget(Some(1 << 20)), MAX_CONNECTIONS);
        assert_eq!(connection_budget(Some(u64::MAX)), MAX_CONNECTIONS);
    }

    #[cfg(unix)]
    #[test]
    fn raising_never_lowers_and_reports_what_is_in_force() {
        let before = open_file_limit().unwrap_or(0);
        let raised = raise_open_file_limit().unwrap_or(before);
        assert!(raised >= before, "{raised} < {before}");
        assert_eq!(open_file_limit(), Some(raised));
        // Again: nothing left to raise, the same answer.
        assert_eq!(raise_open_file_limit().ok(), Some(raised));
    }
}
