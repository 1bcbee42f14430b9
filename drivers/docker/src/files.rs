//! Opening and reading the operator's files: without blocking, by kind,
//! and with a bound on their size and, for a pipe, on the time it takes.
//!
//! `std::fs::read_to_string` reads until the end, and some files have none:
//! `/dev/zero`, a FIFO fed by an endless writer, a mistyped path into
//! `/proc`. And opening a FIFO blocks until a writer appears, for ever if
//! none does. Every file this tool reads (registry file, snapshot, app set,
//! saved plan, state file, docker config and context metadata, TLS
//! material) goes through [`read_limited`] or [`read_regular_limited`],
//! which open without blocking, judge the opened descriptor's kind (not
//! the path's, so nothing can be swapped in between), accept a pipe only
//! where the caller says one is expected ([`Accept`]), wait for a pipe's
//! data within deadlines, and stop at the limit while reading, so memory
//! stays near the limit and an endless source is refused as soon as the
//! limit is passed.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::fs::{Mode, OFlags};

use thiserror::Error;

const MIB: u64 = 1024 * 1024;

/// The largest snapshot (`plan --snapshot FILE`) read: 1 GiB. A snapshot of
/// one million releases over a hundred swarms is about 200 MB of JSON, so
/// this leaves room fivefold while still refusing an endless source.
pub const SNAPSHOT_LIMIT: u64 = 1024 * MIB;

/// The largest app set (`--app-set FILE`) read: 64 MiB, some hundred
/// thousand applications with their releases.
pub const APP_SET_LIMIT: u64 = 64 * MIB;

/// The largest registry file (`--config FILE`), docker `config.json` or
/// context `meta.json` read: 16 MiB (a registry file of 100 000 swarms with
/// a few nodes each is about 15 MB).
pub const CONFIG_LIMIT: u64 = 16 * MIB;

/// The largest TLS file (CA, client certificate or key) read: 1 MiB. A
/// certificate is a few KiB; a CA bundle of every public root is ~200 KiB.
pub const TLS_FILE_LIMIT: u64 = MIB;

/// How long a pipe or FIFO may stay silent, before its first byte or
/// between two reads: 5 s. A writer that is still starting (`ssh` or `git`
/// behind `<(...)`) has time to speak; a FIFO nobody writes to, or a
/// writer that holds it open and says nothing, is refused within seconds.
pub const PIPE_SILENCE_LIMIT: Duration = Duration::from_secs(5);

/// How long reading a pipe or FIFO to its end may take in all: 30 s,
/// room for a 1 GiB snapshot at 35 MB/s, while a writer that trickles a
/// byte now and then cannot hold the command for ever.
pub const PIPE_READ_LIMIT: Duration = Duration::from_secs(30);

/// What an input may be, besides a regular file (symbolic links are
/// followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accept {
    /// A regular file only: anything else (a FIFO, a device, a socket) is
    /// refused unread.
    RegularFile,
    /// A regular file, or a pipe or FIFO (`--app-set <(git show
    /// main:apps.yaml)`), whose data must come within
    /// [`PIPE_SILENCE_LIMIT`] and end within [`PIPE_READ_LIMIT`].
    FileOrPipe,
}

/// Why a file was not read; `path` names it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{}: {failure}", path.display())]
pub struct ReadError {
    /// The file, as given.
    pub path: PathBuf,
    /// What was wrong with it.
    pub failure: ReadFailure,
}

/// What was wrong with a file (see [`ReadError`]).
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ReadFailure {
    /// Opening or reading failed (missing, no permission, an IO error).
    #[error("cannot read: {message}")]
    Io {
        /// The operating system's message.
        message: String,
    },
    /// The file holds more than `limit` bytes (or never ends).
    #[error("larger than the limit of {limit} bytes ({})", human(*.limit))]
    TooLarge {
        /// The limit that was passed.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("not valid UTF-8 text (at byte {offset})")]
    NotUtf8 {
        /// Where the first invalid byte is.
        offset: usize,
    },
    /// A directory, where a file is expected.
    #[error("is a directory, not a file")]
    Directory,
    /// Something other than a regular file (a FIFO, a device, a socket)
    /// where only a regular file will do.
    #[error("is not a regular file (it is a {kind})")]
    NotRegular {
        /// What it is instead.
        kind: String,
    },
    /// A pipe or FIFO that gave no data for this long: no writer, or one
    /// that says nothing. Never taken for an empty file.
    #[error("a pipe that gave no data for {}s (a FIFO with no writer, or a writer that says nothing)", .after.as_secs())]
    PipeSilent {
        /// How long it was waited for.
        after: Duration,
    },
    /// A regular file that had no data to give without waiting: a kernel
    /// interface dressed as a file (`/proc/kmsg`, a tracing pipe), whose
    /// read would wait for events for ever. Never taken for a file's text.
    #[error("is no file of text: it has nothing to read without waiting (a kernel interface such as /proc/kmsg)")]
    WouldWait,
    /// A pipe or FIFO that did not reach its end within this long.
    #[error("a pipe that did not reach its end within {}s", .within.as_secs())]
    PipeUnfinished {
        /// How long the whole read may take.
        within: Duration,
    },
}

/// `limit` in the unit an operator thinks in.
fn human(limit: u64) -> String {
    if limit >= 1024 * MIB && limit.is_multiple_of(1024 * MIB) {
        format!("{} GiB", limit / (1024 * MIB))
    } else if limit >= MIB && limit.is_multiple_of(MIB) {
        format!("{} MiB", limit / MIB)
    } else if limit >= 1024 && limit.is_multiple_of(1024) {
        format!("{} KiB", limit / 1024)
    } else {
        format!("{limit} B")
    }
}

/// What a file is, in a word for an error message ("FIFO", "directory").
pub fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "directory"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_block_device() {
        "block device"
    } else if file_type.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

/// Reads the text file at `path`, refusing it as soon as more than `limit`
/// bytes have been read and refusing text that is not UTF-8. Whether it
/// may be a pipe is `accept`'s; a directory, device or socket is always
/// refused unread.
pub fn read_limited(path: &Path, limit: u64, accept: Accept) -> Result<String, ReadError> {
    let bytes = read_bytes(path, limit, accept, PIPE_DEADLINES)?;
    String::from_utf8(bytes).map_err(|e| ReadError {
        path: path.to_owned(),
        failure: ReadFailure::NotUtf8 {
            offset: e.utf8_error().valid_up_to(),
        },
    })
}

/// Like [`read_limited`] for bytes, and only for a regular file (after
/// following symbolic links): key material is never kept in a pipe or a
/// device.
pub fn read_regular_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_bytes(path, limit, Accept::RegularFile, PIPE_DEADLINES)
}

/// Opens a regular file (after following symbolic links) for reading
/// without blocking, for a reader that streams it rather than reading it
/// whole (`swarm-sweep audit`): a FIFO, device, socket or directory is
/// refused without waiting for a writer or reading a byte.
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    match open_input(path, Accept::RegularFile, Links::Follow) {
        Ok(None) => Err(io_failure(rustix::io::Errno::NOENT.into())),
        Ok(Some(Opened::Regular { file, .. })) => Ok(file),
        // `RegularFile` accepts no pipe; said as what it is all the same.
        Ok(Some(Opened::Pipe(_))) => Err(not_regular("FIFO")),
        Err(failure) => Err(failure),
    }
    .map_err(|failure| ReadError {
        path: path.to_owned(),
        failure,
    })
}

/// Whether a symbolic link at a file's name is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Followed: the operator named the file, links and all.
    Follow,
    /// Refused (`O_NOFOLLOW`): a file this tool writes back, where a link
    /// planted at its name would have it read (and later written)
    /// elsewhere.
    Refuse,
}

/// A regular file read whole, with who owned it and its mode, as the
/// descriptor it was read from said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedText {
    /// Its text.
    pub text: String,
    /// The owner's uid.
    pub uid: u32,
    /// Its permission bits (`0o7777`).
    pub mode: u32,
}

/// Reads the regular file at `path` as [`read_limited`] does, and says who
/// owns it and its mode by the descriptor read from: a check of who may
/// have written a file made on its path could be answered by another file
/// swapped in between. `None` when nothing is at `path`.
pub fn read_owned_text(
    path: &Path,
    limit: u64,
    links: Links,
) -> Result<Option<OwnedText>, ReadError> {
    use std::os::unix::fs::MetadataExt;
    let failed = |failure| ReadError {
        path: path.to_owned(),
        failure,
    };
    let (file, meta) = match open_input(path, Accept::RegularFile, links).map_err(failed)? {
        None => return Ok(None),
        Some(Opened::Regular { file, meta }) => (file, meta),
        // `RegularFile` accepts no pipe; said as what it is all the same.
        Some(Opened::Pipe(_)) => return Err(failed(not_regular("FIFO"))),
    };
    if meta.len() > limit {
        return Err(failed(ReadFailure::TooLarge { limit }));
    }
    let bytes = read_to_end(&file, limit, meta.len(), None).map_err(failed)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        failed(ReadFailure::NotUtf8 {
            offset: e.utf8_error().valid_up_to(),
        })
    })?;
    Ok(Some(OwnedText {
        text,
        uid: meta.uid(),
        mode: meta.mode() & 0o7777,
    }))
}

/// The deadlines of a pipe's read; tests shorten them.
#[derive(Clone, Copy, Debug)]
struct PipeDeadlines {
    silence: Duration,
    whole: Duration,
}

const PIPE_DEADLINES: PipeDeadlines = PipeDeadlines {
    silence: PIPE_SILENCE_LIMIT,
    whole: PIPE_READ_LIMIT,
};

/// An input opened and judged by its descriptor.
enum Opened {
    /// A regular file, with what its descriptor says of it.
    Regular { file: File, meta: std::fs::Metadata },
    /// A pipe or FIFO, where [`Accept::FileOrPipe`] allowed one.
    Pipe(File),
}

fn read_bytes(
    path: &Path,
    limit: u64,
    accept: Accept,
    deadlines: PipeDeadlines,
) -> Result<Vec<u8>, ReadError> {
    let read = match open_input(path, accept, Links::Follow) {
        Ok(None) => Err(io_failure(rustix::io::Errno::NOENT.into())),
        Ok(Some(Opened::Regular { meta, .. })) if meta.len() > limit => {
            Err(ReadFailure::TooLarge { limit })
        }
        Ok(Some(Opened::Regular { file, meta })) => read_to_end(&file, limit, meta.len(), None),
        Ok(Some(Opened::Pipe(file))) => read_to_end(&file, limit, 0, Some(deadlines)),
        Err(failure) => Err(failure),
    };
    read.map_err(|failure| ReadError {
        path: path.to_owned(),
        failure,
    })
}

fn io_failure(e: std::io::Error) -> ReadFailure {
    ReadFailure::Io {
        message: e.to_string(),
    }
}

/// Opens `path` for reading without blocking and judges what it is by the
/// opened descriptor; `None` when nothing is there. Without `O_NONBLOCK`
/// opening a FIFO waits for a writer, for ever if none comes; with it the
/// open returns at once, and judging the descriptor (not the path) leaves
/// no gap to swap the file in. With [`Links::Refuse`] a link at the name
/// is refused, never followed.
fn open_input(path: &Path, accept: Accept, links: Links) -> Result<Option<Opened>, ReadFailure> {
    // NOCTTY: a terminal named as an input must not become the process's
    // controlling terminal before it is refused.
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let there = match links {
        Links::Follow => std::fs::metadata(path),
        Links::Refuse => {
            flags |= OFlags::NOFOLLOW;
            std::fs::symlink_metadata(path)
        }
    };
    // Opening a device can act on it (a watchdog arms, a tape rewinds
    // when closed): one the path already names is refused unopened, and
    // so is whatever else `accept` refuses. The descriptor's type below
    // stays the judgement; this only spares the open when the path tells
    // beforehand.
    if let Ok(meta) = there {
        let file_type = meta.file_type();
        let pipe_accepted = file_type.is_fifo() && accept == Accept::FileOrPipe;
        if !file_type.is_file() && !file_type.is_dir() && !pipe_accepted {
            return Err(not_regular(kind_of(&file_type)));
        }
    }
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        // What `O_NOFOLLOW` says of a link at the name.
        Err(rustix::io::Errno::LOOP) if links == Links::Refuse => {
            return Err(not_regular("symbolic link"))
        }
        Err(e) => return Err(open_failed(path, e)),
    };
    let file = File::from(fd);
    let meta = file.metadata().map_err(io_failure)?;
    let file_type = meta.file_type();
    if file_type.is_file() {
        return Ok(Some(Opened::Regular { file, meta }));
    }
    if file_type.is_dir() {
        return Err(ReadFailure::Directory);
    }
    if file_type.is_fifo() && accept == Accept::FileOrPipe {
        return Ok(Some(Opened::Pipe(file)));
    }
    Err(not_regular(kind_of(&file_type)))
}

fn not_regular(kind: &str) -> ReadFailure {
    ReadFailure::NotRegular {
        kind: kind.to_owned(),
    }
}

/// Why an open failed. A socket cannot be opened at all (`ENXIO`): it is
/// named as what it is rather than by the system's message.
fn open_failed(path: &Path, e: rustix::io::Errno) -> ReadFailure {
    if e == rustix::io::Errno::NXIO {
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.file_type().is_socket() {
                return ReadFailure::NotRegular {
                    kind: kind_of(&meta.file_type()).to_owned(),
                };
            }
        }
    }
    io_failure(e.into())
}

/// Reads `file` to its end, never holding more than `limit` bytes;
/// `expected` sizes the buffer (a regular file's length). A pipe
/// (`deadlines` given) is read only once [`wait_for_data`] says there is
/// something to read.
fn read_to_end(
    mut file: &File,
    limit: u64,
    expected: u64,
    deadlines: Option<PipeDeadlines>,
) -> Result<Vec<u8>, ReadFailure> {
    let started = Instant::now();
    let mut buf = Bounded::new(limit, expected)?;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        if let Some(deadlines) = deadlines {
            wait_for_data(file, started, deadlines)?;
        }
        match file.read(&mut chunk) {
            Ok(0) => return Ok(buf.bytes),
            Ok(n) => buf.push(&chunk[..n])?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // A pipe said it had data: a race with its writer, waited for
            // again above, within the deadlines.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && deadlines.is_some() => {}
            // A regular file that would block has no deadline to bound a
            // retry: trying again at once would spin for ever.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                return Err(ReadFailure::WouldWait)
            }
            Err(e) => return Err(io_failure(e)),
        }
    }
}

/// Waits until the pipe has data or has reached its end, within the
/// silence limit and what is left of the whole read's. A FIFO without a
/// writer never becomes readable here (a non-blocking read of it would
/// say "end of file" at once), so it is refused at the deadline instead of
/// being read as an empty file.
fn wait_for_data(
    file: &File,
    started: Instant,
    deadlines: PipeDeadlines,
) -> Result<(), ReadFailure> {
    let left = deadlines.whole.saturating_sub(started.elapsed());
    if left.is_zero() {
        // Checked before polling: a writer that keeps the pipe full would
        // otherwise be read past the deadline.
        return Err(ReadFailure::PipeUnfinished {
            within: deadlines.whole,
        });
    }
    let (wait, timed_out) = if left < deadlines.silence {
        let within = deadlines.whole;
        (left, ReadFailure::PipeUnfinished { within })
    } else {
        let after = deadlines.silence;
        (after, ReadFailure::PipeSilent { after })
    };
    let timeout = Timespec::try_from(wait).map_err(|e| io_failure(std::io::Error::other(e)))?;
    let mut fds = [PollFd::new(file, PollFlags::IN)];
    match rustix::event::poll(&mut fds, Some(&timeout)) {
        Ok(0) => Err(timed_out),
        // Readable, at its end (HUP) or in error: the read says which.
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(io_failure(e.into())),
    }
}

/// A buffer that refuses to grow past a limit. A regular file says its
/// size; anything else grows as it is read, but never beyond the limit (a
/// doubling Vec could reach twice of it).
struct Bounded {
    bytes: Vec<u8>,
    limit: u64,
    cap: usize,
}

impl Bounded {
    fn new(limit: u64, expected: u64) -> Result<Self, ReadFailure> {
        let cap = usize::try_from(limit).unwrap_or(usize::MAX);
        let initial = usize::try_from(expected).unwrap_or(cap).min(cap);
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(initial.saturating_add(1).min(cap.saturating_add(1)))
            .map_err(|e| io_failure(std::io::Error::other(e)))?;
        Ok(Bounded { bytes, limit, cap })
    }

    fn push(&mut self, chunk: &[u8]) -> Result<(), ReadFailure> {
        let len = self.bytes.len();
        if (len as u64).saturating_add(chunk.len() as u64) > self.limit {
            return Err(ReadFailure::TooLarge { limit: self.limit });
        }
        if len + chunk.len() > self.bytes.capacity() {
            let want = self
                .bytes
                .capacity()
                .saturating_mul(2)
                .max(len + chunk.len())
                .max(64 * 1024)
                .min(self.cap);
            self.bytes
                .try_reserve_exact(want - len)
                .map_err(|e| io_failure(std::io::Error::other(e)))?;
        }
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    /// Deadlines short enough for a test.
    const SHORT: PipeDeadlines = PipeDeadlines {
        silence: Duration::from_millis(300),
        whole: Duration::from_secs(2),
    };

    fn fifo_in(dir: &Path) -> PathBuf {
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        fifo
    }

    /// The path by which a process reaches its own descriptor, as bash's
    /// `<(...)` hands one over.
    fn fd_path(fd: &impl AsRawFd) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
    }

    #[test]
    fn reads_text_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "héllo").unwrap();
        assert_eq!(read_limited(&f, 6, Accept::RegularFile).unwrap(), "héllo");
        let e = read_limited(&f, 5, Accept::FileOrPipe).unwrap_err();
        assert_eq!(e.failure, ReadFailure::TooLarge { limit: 5 });
        assert_eq!(
            e.to_string(),
            format!("{}: larger than the limit of 5 bytes (5 B)", f.display())
        );
    }

    #[test]
    fn devices_are_refused_unread() {
        for accept in [Accept::RegularFile, Accept::FileOrPipe] {
            for device in ["/dev/zero", "/dev/null"] {
                let e = read_limited(Path::new(device), 4 * MIB, accept).unwrap_err();
                assert_eq!(
                    e.failure,
                    ReadFailure::NotRegular {
                        kind: "character device".into()
                    },
                    "{device}"
                );
            }
        }
        let e = read_limited(Path::new("/dev/zero"), MIB, Accept::FileOrPipe).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: is not a regular file (it is a character device)"
        );
    }

    #[test]
    fn a_file_that_would_wait_is_refused_not_read_again_and_again() {
        // A pipe with a silent writer stands in for a kernel interface
        // that fstat calls a regular file (`/proc/kmsg`): read as a
        // regular file is, without deadlines, it must be refused at once.
        let (reader, _writer) = std::io::pipe().unwrap();
        let fd = std::os::fd::OwnedFd::from(reader);
        rustix::fs::fcntl_setfl(&fd, OFlags::NONBLOCK).unwrap();
        let file = File::from(fd);
        let (done, result) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(read_to_end(&file, MIB, 0, None));
        });
        let read = result.recv_timeout(Duration::from_secs(5));
        assert_eq!(
            read.expect("refused at once, not retried for ever"),
            Err(ReadFailure::WouldWait)
        );
    }

    #[test]
    fn an_endless_pipe_is_refused_at_the_limit() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        // The writer ends when the reader goes away (EPIPE).
        let feeding = std::thread::spawn(move || {
            let block = vec![b'x'; 64 * 1024];
            while writer.write_all(&block).is_ok() {}
        });
        let path = fd_path(&reader);
        let e = read_bytes(&path, MIB, Accept::FileOrPipe, SHORT).unwrap_err();
        assert_eq!(e.failure, ReadFailure::TooLarge { limit: MIB });
        drop(reader);
        feeding.join().unwrap();
    }

    #[test]
    fn a_pipe_with_a_writer_is_read_to_its_end() {
        // What `--app-set <(printf ...)` hands over: a pipe whose writer
        // is there, and may still be starting.
        let (reader, mut writer) = std::io::pipe().unwrap();
        let feeding = std::thread::spawn(move || {
            writer.write_all(b"loaded: ").unwrap();
            std::thread::sleep(Duration::from_millis(100));
            writer.write_all(b"true\n").unwrap();
        });
        let text = read_limited(&fd_path(&reader), MIB, Accept::FileOrPipe).unwrap();
        assert_eq!(text, "loaded: true\n");
        feeding.join().unwrap();
        // A writer that ends without a word gives a genuinely empty input.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(writer);
        assert_eq!(
            read_limited(&fd_path(&reader), MIB, Accept::FileOrPipe).unwrap(),
            ""
        );
    }

    #[test]
    fn a_fifo_without_a_writer_is_refused_at_the_deadline_not_read_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = fifo_in(dir.path());
        let started = Instant::now();
        let e = read_bytes(&fifo, MIB, Accept::FileOrPipe, SHORT).unwrap_err();
        assert_eq!(
            e.failure,
            ReadFailure::PipeSilent {
                after: SHORT.silence
            }
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        // Where only a regular file will do, it is refused at once.
        for e in [
            read_limited(&fifo, MIB, Accept::RegularFile).unwrap_err(),
            read_regular_limited(&fifo, MIB).unwrap_err(),
        ] {
            assert_eq!(
                e.failure,
                ReadFailure::NotRegular {
                    kind: "FIFO".into()
                }
            );
        }
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_silent_or_trickling_writer_is_refused_at_the_deadline() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let e = read_bytes(&fd_path(&reader), MIB, Accept::FileOrPipe, SHORT).unwrap_err();
        assert_eq!(
            e.failure,
            ReadFailure::PipeSilent {
                after: SHORT.silence
            }
        );
        // A byte now and then, never the end: the whole read is bounded.
        let (reader2, mut writer2) = std::io::pipe().unwrap();
        let trickling = std::thread::spawn(move || {
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(4) && writer2.write_all(b"x").is_ok() {
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let e = read_bytes(&fd_path(&reader2), MIB, Accept::FileOrPipe, SHORT).unwrap_err();
        assert_eq!(
            e.failure,
            ReadFailure::PipeUnfinished {
                within: SHORT.whole
            }
        );
        drop(reader2);
        trickling.join().unwrap();
        writer.write_all(b"late").unwrap();
    }

    #[test]
    fn sockets_and_directories_are_refused_naming_what_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for accept in [Accept::RegularFile, Accept::FileOrPipe] {
            let e = read_limited(&socket, 100, accept).unwrap_err();
            assert_eq!(
                e.failure,
                ReadFailure::NotRegular {
                    kind: "socket".into()
                }
            );
            let e = read_limited(dir.path(), 100, accept).unwrap_err();
            assert_eq!(e.failure, ReadFailure::Directory);
        }
    }

    #[test]
    fn invalid_utf8_and_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bin");
        std::fs::write(&f, b"ok\xff\xfe").unwrap();
        let e = read_limited(&f, 100, Accept::RegularFile).unwrap_err();
        assert_eq!(e.failure, ReadFailure::NotUtf8 { offset: 2 });
        assert!(e.to_string().ends_with("not valid UTF-8 text (at byte 2)"));
        let e = read_regular_limited(dir.path(), 100).unwrap_err();
        assert_eq!(e.failure, ReadFailure::Directory);
        let e = read_limited(&dir.path().join("missing"), 100, Accept::FileOrPipe).unwrap_err();
        assert!(matches!(e.failure, ReadFailure::Io { .. }), "{e}");
        assert!(read_regular_limited(Path::new("/dev/null"), 10).is_err());
    }

    #[test]
    fn open_regular_opens_a_file_and_refuses_the_rest_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("audit.jsonl");
        std::fs::write(&f, "line\n").unwrap();
        let mut text = String::new();
        open_regular(&f).unwrap().read_to_string(&mut text).unwrap();
        assert_eq!(text, "line\n");
        let started = Instant::now();
        let fifo = fifo_in(dir.path());
        let kind = |p: &Path| open_regular(p).unwrap_err().failure;
        assert_eq!(
            kind(&fifo),
            ReadFailure::NotRegular {
                kind: "FIFO".into()
            }
        );
        assert_eq!(
            kind(Path::new("/dev/zero")),
            ReadFailure::NotRegular {
                kind: "character device".into()
            }
        );
        assert_eq!(kind(dir.path()), ReadFailure::Directory);
        assert!(matches!(
            kind(&dir.path().join("missing")),
            ReadFailure::Io { .. }
        ));
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn limits_are_what_the_docs_say() {
        assert_eq!(human(SNAPSHOT_LIMIT), "1 GiB");
        assert_eq!(human(APP_SET_LIMIT), "64 MiB");
        assert_eq!(human(CONFIG_LIMIT), "16 MiB");
        assert_eq!(human(TLS_FILE_LIMIT), "1 MiB");
        assert_eq!(PIPE_SILENCE_LIMIT, Duration::from_secs(5));
        assert_eq!(PIPE_READ_LIMIT, Duration::from_secs(30));
    }
}
