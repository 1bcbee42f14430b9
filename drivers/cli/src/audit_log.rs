//! The audit log's file (`apply --audit-log`, `watch --audit-log`):
//! appended to, never rewritten, and only ever a regular file of the
//! running user's own.
//!
//! The command often runs as root and the log is often kept where others
//! can write (a shared `/var/log` directory, a mounted volume). So it is
//! opened with `O_APPEND|O_NOFOLLOW` (a link planted at its name is not
//! followed, and nothing written can land anywhere but at its end),
//! created `0600` (what was deleted, and where, is not everyone's to
//! read), and refused unless it is a regular file with one link owned by
//! this user: a hard link would make the record also another file, and a
//! file someone else owns is one they can rewrite. It is opened again for
//! every sweep, so a log rotated by renaming gets a new file at the next
//! sweep, and synced before each sweep's record is counted written.
//!
//! What the lines say is the core's (`sweep_core::audit`); this module
//! only does the file's IO.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustix::fs::{Mode, OFlags};
use sweep_core::audit::{entries, AuditEntry, Origin};
use sweep_core::sweep::SweepReport;
use sweep_core::{Snapshot, SweepPlan, UnixTime};
use sweep_docker::files::kind_of;

use crate::private_input::{judge, Untrusted, Writers};

/// Why the audit log was refused or not written; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum AuditFileError {
    /// The name is a symbolic link: refused, not followed.
    #[error("{}: refused as the audit log: it is a symbolic link; give the path of the file itself", file.display())]
    Symlink { file: PathBuf },
    /// Something other than a regular file (a directory, device, FIFO).
    #[error("{}: refused as the audit log: it is a {kind}, not a regular file", file.display())]
    NotRegular { file: PathBuf, kind: &'static str },
    /// A regular file with more than one name.
    #[error("{}: refused as the audit log: it has {links} links, and a record of deletions must have one name only", file.display())]
    Links { file: PathBuf, links: u64 },
    /// A regular file another user owns, or others may write to: anyone
    /// in its group, or anyone at all, could rewrite the record of
    /// deletions.
    #[error("{}: refused as the audit log: {why}", file.display())]
    Untrusted { file: PathBuf, why: Untrusted },
    /// Opening it failed (a missing directory, no permission).
    #[error("{}: cannot open the audit log: {source}", file.display())]
    Open {
        file: PathBuf,
        source: std::io::Error,
    },
    /// Writing or syncing it failed.
    #[error("{}: cannot write the audit log: {source}", file.display())]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
}

/// Opens the audit log for appending, creating it `0600` if it is not
/// there, and checks what was opened (the descriptor, not the path, so
/// nothing can be swapped in between).
fn open(file: &Path) -> Result<File, AuditFileError> {
    let there = std::fs::symlink_metadata(file).ok();
    let existed = there.is_some();
    // Opening a device can act on it (a watchdog arms): anything but a
    // regular file or a link already at its name is refused unopened (a
    // link is refused by the open itself). The opened descriptor below
    // stays the judgement.
    if let Some(meta) = there {
        let file_type = meta.file_type();
        if !file_type.is_file() && !file_type.is_symlink() {
            return Err(AuditFileError::NotRegular {
                file: file.to_owned(),
                kind: kind_of(&file_type),
            });
        }
    }
    // RDWR rather than WRONLY: the last byte is read to tell whether the
    // file ends in a torn line. NONBLOCK: a FIFO must be refused, not
    // waited on; NOCTTY: a terminal must not become the process's.
    let flags = OFlags::RDWR
        | OFlags::APPEND
        | OFlags::CREATE
        | OFlags::NOFOLLOW
        | OFlags::CLOEXEC
        | OFlags::NONBLOCK
        | OFlags::NOCTTY;
    let fd = rustix::fs::open(file, flags, Mode::from_raw_mode(0o600))
        .map_err(|e| open_failed(file, e))?;
    let opened = File::from(fd);
    let meta = opened.metadata().map_err(|source| AuditFileError::Open {
        file: file.to_owned(),
        source,
    })?;
    if !meta.file_type().is_file() {
        return Err(AuditFileError::NotRegular {
            file: file.to_owned(),
            kind: kind_of(&meta.file_type()),
        });
    }
    if meta.nlink() != 1 {
        return Err(AuditFileError::Links {
            file: file.to_owned(),
            links: meta.nlink(),
        });
    }
    judge(meta.uid(), meta.mode(), Writers::OwnerOnly).map_err(|why| {
        AuditFileError::Untrusted {
            file: file.to_owned(),
            why,
        }
    })?;
    if !existed {
        // The new name must outlive a crash as the lines in it do.
        crate::safe_write::sync_directory(crate::safe_write::directory_of(file)).map_err(
            |source| AuditFileError::Open {
                file: file.to_owned(),
                source,
            },
        )?;
    }
    Ok(opened)
}

/// Why an open failed, naming what is there where the system's message
/// would not: a link (`ELOOP` under `O_NOFOLLOW`), a directory
/// (`EISDIR`), a FIFO with no reader or a socket (`ENXIO`).
fn open_failed(file: &Path, e: rustix::io::Errno) -> AuditFileError {
    let there = std::fs::symlink_metadata(file).ok();
    match there {
        Some(meta) if meta.file_type().is_symlink() => AuditFileError::Symlink {
            file: file.to_owned(),
        },
        Some(meta) if !meta.file_type().is_file() => AuditFileError::NotRegular {
            file: file.to_owned(),
            kind: kind_of(&meta.file_type()),
        },
        _ => AuditFileError::Open {
            file: file.to_owned(),
            source: e.into(),
        },
    }
}

/// Checks, before anything is read from a swarm or deleted, that the
/// audit log can be opened as the rules say (creating it if need be).
pub fn check(file: &Path) -> Result<(), AuditFileError> {
    open(file).map(drop)
}

/// Appends `lines` (one entry each) to the audit log and syncs it. A
/// file that ends without a line break (a write cut short by a full disk
/// or a crash) gets one first, so the torn line stays a line of its own
/// and the new ones read whole.
pub fn append(file: &Path, lines: &[AuditEntry]) -> Result<(), AuditFileError> {
    let mut opened = open(file)?;
    let failed = |source: std::io::Error| AuditFileError::Write {
        file: file.to_owned(),
        source,
    };
    let len = opened.metadata().map_err(failed)?.len();
    let mut text = String::with_capacity(lines.len() * 400 + 1);
    if len > 0 {
        let mut last = [0u8; 1];
        opened.read_exact_at(&mut last, len - 1).map_err(failed)?;
        if last[0] != b'\n' {
            text.push('\n');
        }
    }
    for line in lines {
        text.push_str(&line.to_line());
        text.push('\n');
    }
    opened.write_all(text.as_bytes()).map_err(failed)?;
    opened.sync_all().map_err(failed)
}

/// The audit log of a command's sweeps: the file, what starts the
/// sweeps, and the digest of the snapshot the current sweep was gathered
/// as (taken when the gather ends, the plan being made from it).
#[derive(Debug)]
pub struct AuditLog {
    file: PathBuf,
    origin: Origin,
    snapshot_digest: Mutex<Option<String>>,
}

impl AuditLog {
    pub fn new(file: PathBuf, origin: Origin) -> Self {
        AuditLog {
            file,
            origin,
            snapshot_digest: Mutex::new(None),
        }
    }

    /// The snapshot a sweep is about to be planned from.
    pub fn gathered(&self, snapshot: &Snapshot) {
        let digest = sweep_core::saved::snapshot_digest(snapshot);
        *self
            .snapshot_digest
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(digest);
    }

    /// [`AuditLog::record`], a failure said on stderr: `false` when the
    /// sweep's lines are not in the log. The sweep stands either way; the
    /// caller decides what a missing record costs (`apply`: status 1;
    /// `watch`: a metric).
    pub fn record_or_say(&self, plan: &SweepPlan, report: &SweepReport) -> bool {
        match self.record(plan, report) {
            Ok(_) => true,
            Err(e) => {
                crate::output::warn_line(&format!(
                    "{e}; this sweep's deletions are not in the audit log"
                ));
                false
            }
        }
    }

    /// Appends a line per object `report` says the sweep of `plan` acted
    /// on, dated now; nothing is opened when there is none. Returns how
    /// many lines were written.
    pub fn record(&self, plan: &SweepPlan, report: &SweepReport) -> Result<usize, AuditFileError> {
        if report.objects.is_empty() {
            return Ok(0);
        }
        let digest = self
            .snapshot_digest
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default();
        // Before 1970 the clock is wrong, and the lines say so rather than
        // being lost: the deletions happened all the same.
        let now = crate::state::now().unwrap_or(UnixTime::from_secs(0));
        let lines = entries(plan, report, &self.origin, &digest, now);
        append(&self.file, &lines)?;
        Ok(lines.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    #[test]
    fn a_new_log_is_created_0600_and_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        check(&file).unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.len(), 0);
        std::fs::write(&file, "one\n").unwrap();
        append(&file, &[]).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\n");
    }

    #[test]
    fn a_torn_last_line_stays_a_line_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        std::fs::write(&file, "{\"time\":").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let line = sweep_core::audit::parse_line(EXAMPLE.as_bytes()).unwrap();
        append(&file, std::slice::from_ref(&line)).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, format!("{{\"time\":\n{}\n", line.to_line()));
    }

    #[test]
    fn links_and_what_is_not_a_regular_file_are_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("link");
        symlink(&victim, &link).unwrap();
        assert!(matches!(
            check(&link),
            Err(AuditFileError::Symlink { file }) if file == link
        ));
        let hard = dir.path().join("hard");
        std::fs::hard_link(&victim, &hard).unwrap();
        assert!(matches!(
            check(&hard),
            Err(AuditFileError::Links { links: 2, .. })
        ));
        assert!(matches!(
            check(dir.path()),
            Err(AuditFileError::NotRegular {
                kind: "directory",
                ..
            })
        ));
        assert!(matches!(
            check(Path::new("/dev/full")),
            Err(AuditFileError::NotRegular {
                kind: "character device",
                ..
            })
        ));
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert!(matches!(
            check(&fifo),
            Err(AuditFileError::NotRegular { kind: "FIFO", .. })
        ));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    const EXAMPLE: &str = r#"{"time":"2026-12-01T08:00:00Z","controller":"default","trigger":"apply","swarm":"alpha","cluster_id":"c1","release":"web","application":"shop","reason":"departed","kind":"service","id":"s1","name":"web_app","node":null,"outcome":"removed","snapshot_digest":"sha256:00"}"#;
}
