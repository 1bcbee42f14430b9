//! Writing the files swarm-sweep leaves behind (`plan --out`, the
//! grace-period state of `--state`): whole or not at all, and only ever as
//! a regular file of its own.
//!
//! The command often runs as root, writing into directories others can
//! write to as well. A temporary file under a name anyone can guess
//! (`<name>.tmp-<pid>`) can be planted beforehand as a symbolic link, and
//! the root process then writes into the link's target; a target that is a
//! device (`plan --out /dev/null`) is replaced by a regular file. So the
//! temporary file is created exclusively under an unpredictable name
//! (`O_CREAT|O_EXCL` refuses anything planted), and the target must be a
//! regular file or nothing: checked before anything is read from a swarm
//! ([`check_target`]) and again right before the rename, since `rename(2)`
//! itself checks nothing; where nothing was there, the rename refuses to
//! replace whatever appeared in between. The directory named is the
//! operator's choice and is taken as given, links in it included.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use sweep_docker::files::kind_of;

/// Why a file was not written; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The target exists and is not a regular file (a device, a
    /// directory, a FIFO, a socket): writing "to" it would replace it.
    #[error("{}: refused as a file to write: it is a {kind}, not a regular file", file.display())]
    NotRegular { file: PathBuf, kind: &'static str },
    /// The target is a symbolic link, refused even when it leads to a
    /// regular file (see [`check_target`]).
    #[error("{}: refused as a file to write: it is a symbolic link; give the path of the file itself", file.display())]
    Symlink { file: PathBuf },
    /// Creating, writing, syncing or renaming failed.
    #[error("{}: cannot write: {source}", file.display())]
    Io {
        file: PathBuf,
        source: std::io::Error,
    },
    /// Written and in place, but its directory could not be synced: the
    /// new file may not outlive a crash of the machine.
    #[error("{}: written, but its directory could not be synced ({source}), so it may not outlive a crash", file.display())]
    NotDurable {
        file: PathBuf,
        source: std::io::Error,
    },
}

/// Whether `file` may be written: it does not exist yet, or it is a
/// regular file. Whatever else is there is refused and left untouched.
///
/// A symbolic link is refused, not followed: whoever can write to the
/// directory can plant one, and following it (even resolved once and
/// checked) writes wherever they point, `/etc/shadow` being a regular
/// file too. An operator who keeps the file elsewhere names that path.
pub fn check_target(file: &Path) -> Result<(), WriteError> {
    match std::fs::symlink_metadata(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(WriteError::Io {
            file: file.to_owned(),
            source,
        }),
        Ok(meta) if meta.file_type().is_file() => Ok(()),
        Ok(meta) if meta.file_type().is_symlink() => Err(WriteError::Symlink {
            file: file.to_owned(),
        }),
        Ok(meta) => Err(WriteError::NotRegular {
            file: file.to_owned(),
            kind: kind_of(&meta.file_type()),
        }),
    }
}

/// Writes `bytes` to `file` whole: into a new temporary file beside it
/// (created exclusively, under an unpredictable name), synced to disk,
/// then renamed over it, and the directory synced. A reader sees the old
/// file or the new one, never half of one, whenever the process or the
/// machine stops; on any failure the temporary file is removed.
pub fn replace(file: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    replace_then(file, bytes, || {})
}

/// [`replace`], calling `before_rename` right before the rename: where a
/// test puts something in the target's place.
fn replace_then(file: &Path, bytes: &[u8], before_rename: impl FnOnce()) -> Result<(), WriteError> {
    let failed = |source: std::io::Error| WriteError::Io {
        file: file.to_owned(),
        source,
    };
    check_target(file)?;
    let dir = directory_of(file);
    // A new file is its owner's alone (what a sweep deletes, and where, is
    // not everyone's to read, and a state or plan others may write is
    // refused when read back). A file replaced keeps its permissions: a
    // plan someone made readable by its owner only must not become
    // readable by all. Either is written readable by its owner only, and
    // a replacement given the old mode once written: anyone who opened it
    // while it was wider could read what is written into it afterwards.
    let replaced = std::fs::symlink_metadata(file)
        .ok()
        .filter(|meta| meta.file_type().is_file())
        .map(|meta| {
            use std::os::unix::fs::MetadataExt;
            // Less the bit that lets anyone write: a file others may
            // write is refused when read back as a state or a plan.
            meta.mode() & 0o775
        });
    let mut tmp = temporary_beside(file, dir, 0o600).map_err(failed)?;
    tmp.write_all(bytes).map_err(failed)?;
    if let Some(old) = replaced {
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(old))
            .map_err(failed)?;
    }
    tmp.as_file().sync_all().map_err(failed)?;
    // Checked again right before the rename: something else may have been
    // put in the target's place since (dropping `tmp` removes it).
    check_target(file)?;
    before_rename();
    match replaced {
        Some(_) => tmp.persist(file).map_err(|e| failed(e.error))?,
        // Nothing was there when checked: whatever appeared since (a
        // device, a FIFO) is not replaced, and the write is refused.
        None => tmp.persist_noclobber(file).map_err(|e| failed(e.error))?,
    };
    sync_directory(dir).map_err(|source| WriteError::NotDurable {
        file: file.to_owned(),
        source,
    })
}

/// Moves `file` aside to `<name>.stale-<unix seconds>` beside it, without
/// replacing anything already there under that name (a link planted
/// there stays as it is, and nothing is written through it). Returns the
/// new name.
pub fn set_aside(file: &Path) -> std::io::Result<PathBuf> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    set_aside_at(file, secs)
}

fn set_aside_at(file: &Path, secs: u64) -> std::io::Result<PathBuf> {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".stale-{secs}"));
    let aside = file.with_file_name(name);
    rustix::fs::renameat_with(
        rustix::fs::CWD,
        file,
        rustix::fs::CWD,
        &aside,
        rustix::fs::RenameFlags::NOREPLACE,
    )?;
    // Best effort: the file is aside whether or not the move outlives a
    // crash, and the caller's next step depends on where it is now.
    let _ = sync_directory(directory_of(file));
    Ok(aside)
}

/// The directory `file` is in (`.` for a bare name).
pub(crate) fn directory_of(file: &Path) -> &Path {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// A new, empty temporary file in `dir`, named `.<name>.<random>.tmp`,
/// created with `mode` less the umask.
fn temporary_beside(
    file: &Path,
    dir: &Path,
    mode: u32,
) -> std::io::Result<tempfile::NamedTempFile> {
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(file.file_name().unwrap_or_default());
    prefix.push(".");
    tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
}

/// A rename (or a new name) is durable once its directory is synced. A
/// directory that cannot be opened for it, or a filesystem that does not
/// sync directories (`EINVAL`, `EOPNOTSUPP`), is passed over; any other
/// failure (an `EIO`) is one: the name may not outlive a crash.
pub(crate) fn sync_directory(dir: &Path) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(dir, flags, Mode::empty()) else {
        return Ok(());
    };
    match rustix::fs::fsync(&fd) {
        Ok(()) | Err(rustix::io::Errno::INVAL | rustix::io::Errno::OPNOTSUPP) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_written_whole_and_replaced_leaving_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.json");
        replace(&file, b"one\n").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"one\n");
        replace(&file, b"two\n").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"two\n");
        assert_eq!(names(dir.path()), ["plan.json"]);
    }

    #[test]
    fn a_new_file_is_its_owner_s_alone_and_one_replaced_keeps_its_permissions_but_others_write() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.json");
        let mode = || std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        replace(&file, b"one\n").unwrap();
        assert_eq!(mode(), 0o600);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        replace(&file, b"two\n").unwrap();
        assert_eq!(mode(), 0o640);
        assert_eq!(std::fs::read(&file).unwrap(), b"two\n");
        // Less what lets anyone write: read back, it would be refused.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        replace(&file, b"three\n").unwrap();
        assert_eq!(mode(), 0o664);
    }

    #[test]
    fn something_put_where_nothing_was_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.json");
        let e = replace_then(&file, b"one\n", || {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &file,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap();
        })
        .unwrap_err();
        assert!(
            matches!(&e, WriteError::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists),
            "{e:?}"
        );
        let meta = std::fs::symlink_metadata(&file).unwrap();
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()),
            "the FIFO was replaced"
        );
        assert_eq!(names(dir.path()), ["plan.json"]);
    }

    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let file = dir.path().join("state.json");
        // The name the old code used, for this very process.
        let planted = dir
            .path()
            .join(format!("state.json.tmp-{}", std::process::id()));
        symlink(&victim, &planted).unwrap();
        replace(&file, b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(&file).unwrap().is_file());
        assert_eq!(std::fs::read(&file).unwrap(), b"{}\n");
        assert_eq!(std::fs::read_link(&planted).unwrap(), victim);
    }

    #[test]
    fn a_target_that_is_a_link_device_directory_or_fifo_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("link");
        symlink(&victim, &link).unwrap();
        let e = replace(&link, b"x").unwrap_err();
        assert!(
            matches!(&e, WriteError::Symlink { file } if file == &link),
            "{e:?}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_link(&link).unwrap(), victim);

        let e = check_target(Path::new("/dev/null")).unwrap_err();
        assert!(
            matches!(
                &e,
                WriteError::NotRegular {
                    kind: "character device",
                    ..
                }
            ),
            "{e:?}"
        );
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let e = replace(&sub, b"x").unwrap_err();
        assert!(
            matches!(
                &e,
                WriteError::NotRegular {
                    kind: "directory",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(sub.is_dir());
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = replace(&fifo, b"x").unwrap_err();
        assert!(
            matches!(&e, WriteError::NotRegular { kind: "FIFO", .. }),
            "{e:?}"
        );
        assert_eq!(names(dir.path()), ["fifo", "link", "sub", "victim"]);
        // A name with nothing there yet is fine.
        check_target(&dir.path().join("new.json")).unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let file = Path::new("/nonexistent-dir/plan.json");
        let e = replace(file, b"x").unwrap_err();
        assert!(
            matches!(&e, WriteError::Io { file: f, .. } if f == file),
            "{e:?}"
        );
    }

    #[test]
    fn a_file_set_aside_keeps_its_bytes_and_replaces_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state.json");
        std::fs::write(&file, "old").unwrap();
        let aside = set_aside(&file).unwrap();
        assert!(!file.exists());
        let name = aside.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("state.json.stale-"), "{name}");
        assert_eq!(aside.parent(), Some(dir.path()));
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), "old");
        // A link planted under the name it would take: neither replaced
        // nor followed, and the file stays where it was.
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::write(&file, "again").unwrap();
        let planted = dir.path().join("state.json.stale-42");
        symlink(&victim, &planted).unwrap();
        let e = set_aside_at(&file, 42).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        assert_eq!(std::fs::read_link(&planted).unwrap(), victim);
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "again");
    }
}
