//! The JSON Schemas of swarm-sweep's documents, as the generator
//! (`core/examples/schemas.rs`) makes them, for the checks in `tests/`.

use std::path::PathBuf;

// The generator is the example's own code, included rather than copied so
// that the checks compare the committed files with exactly what it writes.
#[allow(dead_code)]
#[path = "../../../core/examples/schemas.rs"]
mod generator;

pub use generator::documents;

/// The command that regenerates the committed schemas.
pub const REGENERATE: &str = "cargo run -p sweep-core --features schema --example schemas";

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The committed schemas' directory.
pub fn schemas_dir() -> PathBuf {
    workspace_root().join("schemas")
}
