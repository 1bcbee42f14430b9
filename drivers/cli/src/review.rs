//! Saved plans on disk (`plan --out`, `apply --plan`) and `explain`'s
//! inputs. Whether a saved plan still holds is the core's decision
//! (`sweep_core::saved::check`); this module only reads and writes files.

use std::path::Path;

use sweep_core::saved::SavedPlan;
use sweep_core::{Snapshot, SweepPlan};
use sweep_docker::files::{read_limited, Accept, Links, ReadError, ReadFailure, SNAPSHOT_LIMIT};

use crate::input::InputError;
use crate::private_input::{self, Role};
use crate::safe_write;

/// The version a saved plan records and `apply --plan` requires: a plan
/// is applied only by the build that would make it.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Writes the saved form of `plan` to `file`, whole or not at all
/// ([`safe_write::replace`]): a crash or a full disk never leaves a
/// half-written plan that a later `apply --plan` would refuse, or worse,
/// an old plan under a name the operator just reused.
///
/// A plan `apply --plan` could not read back (more bytes than
/// [`SNAPSHOT_LIMIT`], or more values than the core reads) is not
/// written: [`InputError::SavedPlanTooLarge`].
pub fn write_saved(file: &Path, snapshot: &Snapshot, plan: &SweepPlan) -> Result<(), InputError> {
    write_saved_within(file, snapshot, plan, SNAPSHOT_LIMIT)
}

fn write_saved_within(
    file: &Path,
    snapshot: &Snapshot,
    plan: &SweepPlan,
    byte_limit: u64,
) -> Result<(), InputError> {
    let saved = SavedPlan::new(snapshot, plan.clone(), TOOL_VERSION);
    let too_large = |reason| InputError::SavedPlanTooLarge {
        file: file.to_owned(),
        reason,
    };
    let mut text = saved
        .to_json_readable()
        .map_err(|e| too_large(TooLarge::Values(e)))?;
    text.push('\n');
    let bytes = u64::try_from(text.len()).unwrap_or(u64::MAX);
    if bytes > byte_limit {
        return Err(too_large(TooLarge::Bytes {
            bytes,
            limit: byte_limit,
        }));
    }
    Ok(safe_write::replace(file, text.as_bytes())?)
}

/// Why a saved plan was not written: `apply --plan` would refuse it.
#[derive(Debug, thiserror::Error)]
pub enum TooLarge {
    /// More bytes than a saved plan file may take.
    #[error("it would take {bytes} bytes, more than the {limit} `apply --plan` reads")]
    Bytes {
        /// The saved plan's size.
        bytes: u64,
        /// The most `apply --plan` reads.
        limit: u64,
    },
    /// More JSON values than a document may hold
    /// (`SnapshotError::TooManyValues`).
    #[error("{0}")]
    Values(sweep_core::SnapshotError),
}

/// Reads a saved plan, with the digest of the file's bytes as read
/// (`sweep_core::saved::bytes_digest`): what the audit log names the
/// reviewed plan by. An error names the file, and the field inside it.
pub fn read_saved(file: &Path) -> Result<(SavedPlan, String), InputError> {
    let text = private_input::read(file, Role::SavedPlan, SNAPSHOT_LIMIT, Links::Follow)?
        .ok_or_else(|| {
            InputError::Read(ReadError {
                path: file.to_owned(),
                failure: ReadFailure::Io {
                    message: std::io::Error::from(rustix::io::Errno::NOENT).to_string(),
                },
            })
        })?;
    let digest = sweep_core::saved::bytes_digest(text.as_bytes());
    let plan = SavedPlan::from_json(&text).map_err(|source| InputError::SavedPlan {
        file: file.to_owned(),
        source,
    })?;
    Ok((plan, digest))
}

/// Reads a snapshot file whole, for `explain` (which reads the snapshot's
/// facts, not only its plan) and `plan --out` (which records them);
/// `accept` says whether it may be a pipe.
pub fn read_snapshot(file: &Path, accept: Accept) -> Result<Snapshot, InputError> {
    let text = read_limited(file, SNAPSHOT_LIMIT, accept)?;
    Snapshot::from_json(&text).map_err(|source| InputError::Snapshot {
        file: file.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweep_core::{plan, AppSet, Policy};

    fn empty() -> Snapshot {
        Snapshot::new(Policy::default(), AppSet::new(true, vec![]), vec![])
    }

    #[test]
    fn a_saved_plan_reads_back_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("sweep-review-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("plan.json");
        let s = empty();
        let p = plan(&s).unwrap();
        write_saved(&file, &s, &p).unwrap();
        let (saved, digest) = read_saved(&file).unwrap();
        assert_eq!(
            digest,
            sweep_core::saved::bytes_digest(&std::fs::read(&file).unwrap())
        );
        assert_eq!(saved.plan, p);
        assert_eq!(saved.tool_version, TOOL_VERSION);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1, "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unwritable_destination_names_the_file() {
        let file = Path::new("/nonexistent-dir/plan.json");
        let s = empty();
        let e = write_saved(file, &s, &plan(&s).unwrap()).unwrap_err();
        assert!(
            matches!(&e, InputError::Write(safe_write::WriteError::Io { file: f, .. }) if f == file),
            "{e:?}"
        );
    }

    #[test]
    fn a_plan_too_large_to_read_back_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plan.json");
        let s = empty();
        let p = plan(&s).unwrap();
        let whole = SavedPlan::new(&s, p.clone(), TOOL_VERSION)
            .to_json_pretty()
            .len() as u64
            + 1;
        write_saved_within(&file, &s, &p, whole).unwrap();
        std::fs::remove_file(&file).unwrap();
        let e = write_saved_within(&file, &s, &p, whole - 1).unwrap_err();
        assert!(
            matches!(&e, InputError::SavedPlanTooLarge { file: f, reason: TooLarge::Bytes { bytes, limit } }
                if f == &file && *bytes == whole && *limit == whole - 1),
            "{e:?}"
        );
        assert!(!file.exists(), "a plan too large to read back was written");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_corrupt_saved_plan_names_the_file_and_field() {
        let dir = std::env::temp_dir().join(format!("sweep-review-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("plan.json");
        std::fs::write(&file, r#"{"format_version": 3}"#).unwrap();
        let e = read_saved(&file).unwrap_err();
        assert!(
            matches!(&e, InputError::SavedPlan { file: f, .. } if f == &file),
            "{e:?}"
        );
        assert!(e.to_string().contains("format_version"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
