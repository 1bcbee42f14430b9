//! Reading the operator's files. Every error names the file, and the field
//! inside it where there is one; nothing is planned from a file that does
//! not read cleanly.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sweep_core::{AppSet, Snapshot, SnapshotError};
use sweep_docker::{ConfigError, FileRegistry, LocalRegistry};
use sweep_swarms::Registry;

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
    #[error("{}: {path}: {message}", file.display())]
    AppSet {
        file: PathBuf,
        path: String,
        message: String,
    },
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("DOCKER_HOST: {0}")]
    Environment(String),
    /// A flag with a value that cannot be used; the message names the flag.
    #[error("{0}")]
    Flag(String),
    #[error("{0}")]
    Runtime(String),
    #[error("--controller: {0}")]
    Controller(String),
}

fn read(file: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(file).map_err(|source| InputError::Read {
        file: file.to_owned(),
        source,
    })
}

pub fn read_snapshot(file: &Path) -> Result<Snapshot, InputError> {
    Snapshot::from_json(&read(file)?).map_err(|source| InputError::Snapshot {
        file: file.to_owned(),
        source,
    })
}

/// Reads an app set from YAML or JSON (YAML's flow syntax reads JSON).
pub fn read_app_set(file: &Path) -> Result<AppSet, InputError> {
    let text = read(file)?;
    let de = serde_yaml::Deserializer::from_str(&text);
    let app_set: AppSet = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = match e.path().to_string().as_str() {
            "." => "(root)".to_owned(),
            p => p.trim_start_matches('.').to_owned(),
        };
        // serde_yaml puts the enclosing path in front of its own message;
        // the full path is already in front of it.
        let inner = e.inner().to_string();
        let message = match inner.split_once(": ") {
            Some((prefix, rest)) if path.starts_with(prefix) => rest.to_owned(),
            _ => inner,
        };
        InputError::AppSet {
            file: file.to_owned(),
            path,
            message,
        }
    })?;
    // The same checks as for a snapshot's app set: duplicate or empty
    // application names make stamps ambiguous.
    Snapshot::new(Default::default(), app_set.clone(), Vec::new())
        .validate()
        .map_err(|source| InputError::Snapshot {
            file: file.to_owned(),
            source,
        })?;
    Ok(app_set)
}

/// The registry: the config file's swarms, or the local swarm.
pub fn registry(
    config: Option<&Path>,
    self_stack: Option<&str>,
    timeout: Duration,
) -> Result<Box<dyn Registry>, InputError> {
    match config {
        Some(file) => Ok(Box::new(FileRegistry::load(file)?)),
        None => {
            let mut local =
                LocalRegistry::from_env().map_err(|e| InputError::Environment(e.to_string()))?;
            if let Some(stack) = self_stack {
                local = local.with_self_stack(stack);
            }
            Ok(Box::new(local.with_timeout(timeout)))
        }
    }
}
