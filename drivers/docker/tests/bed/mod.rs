//! The test bed (`tests/testbed/bed`), shared by the engine test binaries.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub fn bed_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/testbed/bed")
}

/// Brings the bed up once per test binary; the registry file it wrote.
pub fn bed() -> &'static Path {
    static REGISTRY: OnceLock<PathBuf> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let script = bed_script();
        // Through bash rather than exec: the script may be rewritten while
        // tests run, and exec of a file open for writing fails.
        let out = Command::new("bash")
            .arg(&script)
            .arg("up")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "`{} up` failed ({}):\n{}\n{}",
            script.display(),
            out.status,
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
        let registry = stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| PathBuf::from(l.trim()))
            .unwrap_or_else(|| panic!("`bed up` printed no registry path"));
        assert!(registry.is_file(), "{} missing", registry.display());
        registry
    })
}
