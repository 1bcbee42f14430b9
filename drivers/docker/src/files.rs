//! Reading the operator's files with a bound on their size.
//!
//! `std::fs::read_to_string` reads until the end, and some files have none:
//! `/dev/zero`, a FIFO fed by an endless writer, a mistyped path into
//! `/proc`. Every file this tool reads (registry file, snapshot, app set,
//! docker config and context metadata, TLS material) goes through
//! [`read_limited`] or [`read_regular_limited`] instead, which stop at the
//! limit while reading, so memory stays near the limit and an endless
//! source is refused as soon as the limit is passed.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

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

fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
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
/// bytes have been read and refusing text that is not UTF-8. Pipes, FIFOs
/// and devices are read (so `--app-set <(...)` works), but never past the
/// limit; a directory is refused before reading.
pub fn read_limited(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_bytes(path, limit, false)?;
    String::from_utf8(bytes).map_err(|e| ReadError {
        path: path.to_owned(),
        failure: ReadFailure::NotUtf8 {
            offset: e.utf8_error().valid_up_to(),
        },
    })
}

/// Like [`read_limited`] for bytes, and only for a regular file (after
/// following symbolic links): a FIFO would block the reader until some
/// writer appears, a device may never end, and neither is where key
/// material is kept.
pub fn read_regular_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_bytes(path, limit, true)
}

fn read_bytes(path: &Path, limit: u64, regular_only: bool) -> Result<Vec<u8>, ReadError> {
    let fail = |failure: ReadFailure| ReadError {
        path: path.to_owned(),
        failure,
    };
    let io = |e: std::io::Error| {
        fail(ReadFailure::Io {
            message: e.to_string(),
        })
    };
    // stat before open: opening a FIFO blocks until a writer appears, so
    // the type has to be known without opening it.
    let meta = std::fs::metadata(path).map_err(io)?;
    let file_type = meta.file_type();
    if file_type.is_dir() {
        return Err(fail(ReadFailure::Directory));
    }
    if regular_only && !file_type.is_file() {
        return Err(fail(ReadFailure::NotRegular {
            kind: kind_of(&file_type).to_owned(),
        }));
    }
    if file_type.is_file() && meta.len() > limit {
        return Err(fail(ReadFailure::TooLarge { limit }));
    }
    let mut file = File::open(path).map_err(io)?;
    if regular_only {
        // The path may have been swapped between stat and open.
        let opened = file.metadata().map_err(io)?;
        if !opened.file_type().is_file() {
            return Err(fail(ReadFailure::NotRegular {
                kind: kind_of(&opened.file_type()).to_owned(),
            }));
        }
    }
    let cap = usize::try_from(limit).unwrap_or(usize::MAX);
    // A regular file says its size; anything else grows as it is read, but
    // never beyond the limit (a doubling Vec could reach twice of it).
    let initial = if file_type.is_file() {
        usize::try_from(meta.len()).unwrap_or(cap).min(cap)
    } else {
        0
    };
    let mut buf: Vec<u8> = Vec::new();
    buf.try_reserve_exact(initial.saturating_add(1).min(cap.saturating_add(1)))
        .map_err(|e| {
            fail(ReadFailure::Io {
                message: e.to_string(),
            })
        })?;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => return Ok(buf),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        if (buf.len() as u64).saturating_add(n as u64) > limit {
            return Err(fail(ReadFailure::TooLarge { limit }));
        }
        if buf.len() + n > buf.capacity() {
            let want = buf
                .capacity()
                .saturating_mul(2)
                .max(buf.len() + n)
                .max(64 * 1024)
                .min(cap);
            buf.try_reserve_exact(want - buf.len()).map_err(|e| {
                fail(ReadFailure::Io {
                    message: e.to_string(),
                })
            })?;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn reads_text_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.txt");
        std::fs::write(&f, "héllo").unwrap();
        assert_eq!(read_limited(&f, 6).unwrap(), "héllo");
        let e = read_limited(&f, 5).unwrap_err();
        assert_eq!(e.failure, ReadFailure::TooLarge { limit: 5 });
        assert_eq!(
            e.to_string(),
            format!("{}: larger than the limit of 5 bytes (5 B)", f.display())
        );
    }

    #[test]
    fn dev_zero_is_refused_at_the_limit() {
        let started = Instant::now();
        let e = read_limited(Path::new("/dev/zero"), 4 * MIB).unwrap_err();
        assert_eq!(e.failure, ReadFailure::TooLarge { limit: 4 * MIB });
        assert_eq!(
            e.to_string(),
            "/dev/zero: larger than the limit of 4194304 bytes (4 MiB)"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn an_endless_fifo_is_refused_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("endless");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let writer_path = fifo.clone();
        // The writer ends when the reader goes away (EPIPE).
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let mut w = std::fs::OpenOptions::new()
                .write(true)
                .open(&writer_path)
                .unwrap();
            let block = vec![b'x'; 64 * 1024];
            while w.write_all(&block).is_ok() {}
        });
        let e = read_limited(&fifo, MIB).unwrap_err();
        assert_eq!(e.failure, ReadFailure::TooLarge { limit: MIB });
        writer.join().unwrap();
        // Only regular files where key material is expected.
        let e = read_regular_limited(&fifo, MIB).unwrap_err();
        assert_eq!(
            e.failure,
            ReadFailure::NotRegular {
                kind: "FIFO".into()
            }
        );
    }

    #[test]
    fn invalid_utf8_and_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("bin");
        std::fs::write(&f, b"ok\xff\xfe").unwrap();
        let e = read_limited(&f, 100).unwrap_err();
        assert_eq!(e.failure, ReadFailure::NotUtf8 { offset: 2 });
        assert!(e.to_string().ends_with("not valid UTF-8 text (at byte 2)"));
        let e = read_limited(dir.path(), 100).unwrap_err();
        assert_eq!(e.failure, ReadFailure::Directory);
        let e = read_regular_limited(dir.path(), 100).unwrap_err();
        assert_eq!(e.failure, ReadFailure::Directory);
        let e = read_limited(&dir.path().join("missing"), 100).unwrap_err();
        assert!(matches!(e.failure, ReadFailure::Io { .. }), "{e}");
        assert!(read_regular_limited(Path::new("/dev/null"), 10).is_err());
    }

    #[test]
    fn limits_are_what_the_docs_say() {
        assert_eq!(human(SNAPSHOT_LIMIT), "1 GiB");
        assert_eq!(human(APP_SET_LIMIT), "64 MiB");
        assert_eq!(human(CONFIG_LIMIT), "16 MiB");
        assert_eq!(human(TLS_FILE_LIMIT), "1 MiB");
    }
}
