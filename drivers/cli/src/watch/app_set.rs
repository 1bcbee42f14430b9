//! Reading the app set for each sweep: on a thread of its own, within a
//! bound, and never held back by an earlier read that is stuck.
//!
//! A read can block for good (a FIFO whose writer never writes, a hung
//! network file system) and a blocked thread cannot be cancelled. So a
//! read that outlives its bound is abandoned: its sweep is held, a later
//! sweep starts a fresh read, and whatever the abandoned read returns, if
//! it ever does, is dropped. Two rules keep the abandoned threads from
//! piling up: a read does not open a file that an abandoned read is still
//! stuck on (it would only get stuck beside it), and at most
//! [`MAX_STUCK_READS`] reads are alive at once.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use sweep_core::AppSet;

use crate::input;
use sweep_runner::Stop;

/// The longest one read of the app set may take before its sweep is held
/// (shorter with a shorter `--interval`: see [`read_limit`]).
pub const APP_SET_READ_LIMIT: Duration = Duration::from_secs(30);

/// The most reads of the app set alive at once, the one in flight and
/// those abandoned included: a source stuck for good (every read hangs,
/// or the path names a new stuck FIFO each time) costs at most this many
/// threads, and sweeps are held without a new read until one ends.
pub const MAX_STUCK_READS: usize = 4;

/// How long each read may take: [`APP_SET_READ_LIMIT`], or the interval
/// when shorter, since a read that outlasts the interval would hold the
/// next sweep back. `--once` has no interval and takes the full limit.
pub fn read_limit(interval: Duration, once: bool) -> Duration {
    if once {
        APP_SET_READ_LIMIT
    } else {
        APP_SET_READ_LIMIT.min(interval)
    }
}

/// A file as the file system knows it (device and inode), whatever path
/// names it: the same FIFO is the same file, a file renamed over it is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

/// Where the app set comes from, read afresh for every sweep.
pub trait AppSetSource: Send + Sync {
    /// The file a read would read now, or `None` when that cannot be told
    /// (the read then says why). Called on the read's own thread: it must
    /// not open the file, which could block, but it may be slow.
    fn file_id(&self) -> Option<FileId> {
        None
    }

    /// The app set, or why it cannot be read, for the log.
    fn read(&self) -> Result<AppSet, String>;
}

/// The `--app-set` file.
pub struct FileAppSet(pub PathBuf);

impl AppSetSource for FileAppSet {
    fn file_id(&self) -> Option<FileId> {
        // A stat follows the path without opening the file, so it returns
        // at once for a FIFO, writer or not.
        let meta = std::fs::metadata(&self.0).ok()?;
        Some(FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    fn read(&self) -> Result<AppSet, String> {
        input::read_app_set(&self.0).map_err(|e| e.to_string())
    }
}

/// Why a sweep got no app set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// The source said why (the message names the file).
    #[error("{0}")]
    Failed(String),
    /// The read did not finish within its bound; it is abandoned.
    #[error("reading it took longer than {}, so that read is abandoned", humantime::format_duration(*.0))]
    TooSlow(Duration),
    /// An abandoned read of the same file has not returned: opening it
    /// again would only get stuck beside it.
    #[error("an earlier read of the same file is still stuck (a FIFO whose writer never writes, or a hung file system?)")]
    SameFileStuck,
    /// [`MAX_STUCK_READS`] reads are alive: no new one is started.
    #[error("{0} earlier reads of it are still stuck, so no new read is started until one ends")]
    TooManyStuck(usize),
    /// The read's thread panicked or was cancelled.
    #[error("reading it failed: {0}")]
    Crashed(String),
}

/// What one read of the app set gave.
pub enum Read {
    AppSet(AppSet),
    Unreadable(Unreadable),
    Stopped,
}

/// The reads alive: how many, and the files they are reading.
#[derive(Debug, Default)]
struct Alive {
    count: usize,
    reading: Vec<FileId>,
}

/// One read's place among the alive ones, given back when its thread
/// ends however it ends, a panic included.
struct Ticket {
    alive: Arc<Mutex<Alive>>,
    file: Option<FileId>,
}

impl Ticket {
    /// Claims `file` for this read; `false` when another alive read holds
    /// it, i.e. is stuck on it.
    fn claim(&mut self, file: FileId) -> bool {
        let mut alive = lock(&self.alive);
        if alive.reading.contains(&file) {
            return false;
        }
        alive.reading.push(file);
        self.file = Some(file);
        true
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut alive = lock(&self.alive);
        alive.count -= 1;
        if let Some(file) = self.file {
            if let Some(i) = alive.reading.iter().position(|f| *f == file) {
                alive.reading.swap_remove(i);
            }
        }
    }
}

fn lock(alive: &Mutex<Alive>) -> MutexGuard<'_, Alive> {
    // The counts stay right through a panic: every change is one step.
    alive.lock().unwrap_or_else(|p| p.into_inner())
}

/// Reads the app set for each sweep (see the module's documentation).
pub struct AppSetReader {
    source: Arc<dyn AppSetSource>,
    limit: Duration,
    alive: Arc<Mutex<Alive>>,
}

impl AppSetReader {
    /// A reader of `source` whose every read takes at most `limit`.
    pub fn new(source: Arc<dyn AppSetSource>, limit: Duration) -> Self {
        AppSetReader {
            source,
            limit,
            alive: Arc::default(),
        }
    }

    /// Reads alive now, abandoned ones included.
    #[cfg(test)]
    pub fn alive(&self) -> usize {
        lock(&self.alive).count
    }

    /// A place for one more read, unless [`MAX_STUCK_READS`] are alive.
    fn ticket(&self) -> Result<Ticket, Unreadable> {
        let mut alive = lock(&self.alive);
        if alive.count >= MAX_STUCK_READS {
            return Err(Unreadable::TooManyStuck(alive.count));
        }
        alive.count += 1;
        Ok(Ticket {
            alive: self.alive.clone(),
            file: None,
        })
    }

    /// One read, within the limit; a stop ends the wait at once.
    pub async fn read(&self, stop: &Stop) -> Read {
        let mut ticket = match self.ticket() {
            Ok(ticket) => ticket,
            Err(e) => return Read::Unreadable(e),
        };
        let source = self.source.clone();
        // Dropping the handle at the end of this function detaches the
        // thread: an abandoned read's result goes nowhere.
        let reading = tokio::task::spawn_blocking(move || read_once(&*source, &mut ticket));
        tokio::select! {
            read = tokio::time::timeout(self.limit, reading) => match read {
                Ok(Ok(Ok(app_set))) => Read::AppSet(app_set),
                Ok(Ok(Err(e))) => Read::Unreadable(e),
                Ok(Err(e)) => Read::Unreadable(Unreadable::Crashed(e.to_string())),
                Err(_) => Read::Unreadable(Unreadable::TooSlow(self.limit)),
            },
            () = stop.wait() => Read::Stopped,
        }
    }
}

/// The read itself, on its own thread, holding `ticket` until it returns.
fn read_once(source: &dyn AppSetSource, ticket: &mut Ticket) -> Result<AppSet, Unreadable> {
    if let Some(file) = source.file_id() {
        if !ticket.claim(file) {
            return Err(Unreadable::SameFileStuck);
        }
    }
    source.read().map_err(Unreadable::Failed)
}
