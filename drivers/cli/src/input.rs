//! Reading the operator's files. Every error names the file, and the field
//! inside it where there is one.

use std::path::{Path, PathBuf};

use sweep_core::{Snapshot, SnapshotError};

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{}: cannot read: {source}", file.display())]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", file.display())]
    Snapshot {
        file: PathBuf,
        source: SnapshotError,
    },
}

pub fn read_snapshot(file: &Path) -> Result<Snapshot, InputError> {
    let text = std::fs::read_to_string(file).map_err(|source| InputError::Read {
        file: file.to_owned(),
        source,
    })?;
    Snapshot::from_json(&text).map_err(|source| InputError::Snapshot {
        file: file.to_owned(),
        source,
    })
}
