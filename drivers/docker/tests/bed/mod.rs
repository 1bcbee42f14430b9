//! The test bed (`tests/testbed/bed`), shared by the engine test binaries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

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

/// Removes `release`'s stack through `backend` in the sweep's order: its
/// services, then (once their tasks have stopped) its other parts, each tried again every 200 ms for up to
/// 60 s while the engine answers "in use". The sweep owns this policy in
/// the core; a backend test that is not about it just needs the stack gone.
#[allow(dead_code)]
pub async fn remove_stack(
    backend: &dyn sweep_swarms::SwarmBackend,
    release: &str,
) -> Result<(), sweep_swarms::BackendError> {
    use sweep_swarms::{BackendError, StackPart};
    backend
        .remove_stack_part(release, StackPart::Services)
        .await?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for part in [
        StackPart::Tasks,
        StackPart::Networks,
        StackPart::Secrets,
        StackPart::Configs,
    ] {
        loop {
            match backend.remove_stack_part(release, part).await {
                Err(BackendError::InUse { .. }) if std::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                }
                other => {
                    other?;
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Removes volume `name` through `node`, tried again every 200 ms for up
/// to 60 s while the engine answers "in use" (its container not removed
/// yet), as the sweep would.
#[allow(dead_code)]
pub async fn remove_volume(
    node: &dyn sweep_swarms::NodeBackend,
    name: &str,
) -> Result<(), sweep_swarms::BackendError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match node.remove_volume(name).await {
            Err(sweep_swarms::BackendError::InUse { .. })
                if std::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            other => return other,
        }
    }
}

/// The docker endpoint of bed node `node`.
#[allow(dead_code)]
pub fn sock(node: &str) -> String {
    static SOCKS: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
    bed();
    let mut socks = SOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = socks.get(node) {
        return s.clone();
    }
    let out = Command::new("bash")
        .arg(bed_script())
        .args(["sock", node])
        .output()
        .expect("bed sock");
    assert!(out.status.success(), "bed sock {node}");
    let s = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    socks.insert(node.to_owned(), s.clone());
    s
}

/// A name no other test (nor an earlier run) uses.
#[allow(dead_code)]
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}{:x}{:x}{}",
        std::process::id() & 0xffff,
        nanos & 0xfffff,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
