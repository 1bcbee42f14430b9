//! The test bed (`tests/testbed/bed`), shared by the engine test binaries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

/// The objects of `part` of `release`'s stack as `backend` lists them now
/// (none for [`sweep_swarms::StackPart::Tasks`]): what the sweep hands to
/// `remove_stack_part` when none of them is shared.
#[allow(dead_code)]
pub async fn part_objects(
    backend: &dyn sweep_swarms::SwarmBackend,
    release: &str,
    part: sweep_swarms::StackPart,
) -> Result<Vec<sweep_core::objects::ObjectRef>, sweep_swarms::BackendError> {
    use sweep_core::objects::ObjectRef;
    use sweep_swarms::StackPart;
    let stacks = backend.stack_objects().await?.unwrap_or_default();
    let Some(objects) = stacks.get(release) else {
        return Ok(Vec::new());
    };
    Ok(match part {
        StackPart::Services => objects
            .services
            .iter()
            .map(|s| ObjectRef::new(&s.id, &s.name))
            .collect(),
        StackPart::Tasks => Vec::new(),
        StackPart::Networks => objects.networks.clone(),
        StackPart::Secrets => objects.secrets.clone(),
        StackPart::Configs => objects.configs.clone(),
    })
}

/// Removes `part` of `release`'s stack through `backend`: every object of
/// it the stack holds now ([`part_objects`]).
#[allow(dead_code)]
pub async fn remove_part(
    backend: &dyn sweep_swarms::SwarmBackend,
    release: &str,
    part: sweep_swarms::StackPart,
) -> Result<(), sweep_swarms::BackendError> {
    let objects = part_objects(backend, release, part).await?;
    backend.remove_stack_part(release, part, &objects).await
}

/// Removes `release`'s stack through `backend` in the sweep's order: its
/// services, then (once their tasks have stopped) its other parts, each
/// tried again every 200 ms for up to 60 s while the engine answers "in
/// use", each with the objects the stack holds when it is tried. The sweep
/// owns this policy in the core; a backend test that is not about it just
/// needs the stack gone.
#[allow(dead_code)]
pub async fn remove_stack(
    backend: &dyn sweep_swarms::SwarmBackend,
    release: &str,
) -> Result<(), sweep_swarms::BackendError> {
    use sweep_swarms::{BackendError, StackPart};
    remove_part(backend, release, StackPart::Services).await?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for part in [
        StackPart::Tasks,
        StackPart::Networks,
        StackPart::Secrets,
        StackPart::Configs,
    ] {
        loop {
            match remove_part(backend, release, part).await {
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

/// The docker CLI the tests drive the bed's engines with.
#[allow(dead_code)]
pub const DOCKER: &str = "/usr/bin/docker";

/// The image the bed's engines hold (never pulled).
#[allow(dead_code)]
pub const IMAGE: &str = "127.0.0.1:1/sweep/busybox:1";

/// Runs the docker CLI against `node`, `stdin` its input; whatever it did.
#[allow(dead_code)]
pub fn docker_raw(node: &str, args: &[&str], stdin: Option<&str>) -> Output {
    docker_bytes(node, args, stdin.map(str::as_bytes))
}

/// [`docker_raw`] with input that need not be text (a record's gzip).
#[allow(dead_code)]
pub fn docker_bytes(node: &str, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(DOCKER);
    cmd.arg("-H").arg(sock(node)).args(args);
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn docker");
    if let Some(input) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(input).expect("write stdin");
    }
    child.wait_with_output().expect("docker output")
}

/// Runs the docker CLI against `node`; its trimmed stdout. Fails the test
/// when the command fails.
#[allow(dead_code)]
pub fn docker(node: &str, args: &[&str]) -> String {
    docker_in(node, args, None)
}

#[allow(dead_code)]
pub fn docker_in(node: &str, args: &[&str], stdin: Option<&str>) -> String {
    checked(node, args, docker_raw(node, args, stdin))
}

/// `out`'s trimmed stdout; fails the test when the command failed.
fn checked(node: &str, args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "docker -H {node} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Docker commands run when the test ends, however it ends, last added
/// first; retried briefly since tasks of a removed stack take a moment to
/// let go of networks and volumes.
#[allow(dead_code)]
pub struct Cleanup(Vec<(String, Vec<String>)>);

#[allow(dead_code)]
impl Cleanup {
    pub fn new() -> Self {
        Cleanup(Vec::new())
    }

    pub fn add(&mut self, node: &str, args: &[&str]) {
        self.0.push((
            node.to_owned(),
            args.iter().map(|a| (*a).to_owned()).collect(),
        ));
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for (node, args) in self.0.iter().rev() {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let out = docker_raw(node, &args, None);
                let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
                if out.status.success()
                    || err.contains("no such")
                    || err.contains("not found")
                    || Instant::now() > deadline
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
}

/// Creates revision `revision` of `release`'s record on `node`'s swarm,
/// stamped `owner`, as the chart engine writes it: its labels, and its
/// data gzip of the YAML document holding [`deploy_stack`]'s manifest.
/// Named `name`, with `extra` labels besides its own: the engine's name
/// ([`sweep_core::record::record_name`]) and none for an ordinary record,
/// another name or a stack namespace for a config the engine would not
/// write.
#[allow(dead_code)]
pub fn create_record(
    node: &str,
    cleanup: &mut Cleanup,
    name: &str,
    release: &str,
    revision: u64,
    owner: Option<&str>,
    extra: &[(&str, &str)],
) {
    use sweep_testkit::engine_record::EngineRecord;
    let record = EngineRecord::new(release, revision)
        .with_owner(owner)
        .with_manifest(stack_manifest());
    let own = record.labels();
    let mut labels: Vec<(&str, &str)> = own.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    labels.extend_from_slice(extra);
    create_config_with(node, cleanup, name, &labels, &record.payload());
}

/// The manifest the engine would have rendered for [`deploy_stack`]'s
/// stack: the same service, network, secret and config.
fn stack_manifest() -> String {
    sweep_testkit::engine_record::Manifest::new(IMAGE)
        .service("web")
        .network("front")
        .secret("tok")
        .config("conf")
        .render()
}

/// Creates config `name` labelled `labels` on `node`'s swarm, its data a
/// placeholder: a config that is no record as the engine writes one.
#[allow(dead_code)]
pub fn create_config(node: &str, cleanup: &mut Cleanup, name: &str, labels: &[(&str, &str)]) {
    create_config_with(node, cleanup, name, labels, b"record");
}

/// Creates config `name` labelled `labels`, holding `data`, on `node`'s
/// swarm; removed when `cleanup` is dropped.
#[allow(dead_code)]
pub fn create_config_with(
    node: &str,
    cleanup: &mut Cleanup,
    name: &str,
    labels: &[(&str, &str)],
    data: &[u8],
) {
    let mut args = vec!["config".to_owned(), "create".to_owned()];
    for (k, v) in labels {
        args.push("--label".into());
        args.push(format!("{k}={v}"));
    }
    args.push(name.into());
    args.push("-".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    checked(node, &args, docker_bytes(node, &args, Some(data)));
    cleanup.add(node, &["config", "rm", name]);
}

/// The bed's registry, as the tests load it.
#[allow(dead_code)]
pub fn registry() -> sweep_docker::FileRegistry {
    sweep_docker::FileRegistry::load(bed()).unwrap_or_else(|e| panic!("{e}"))
}

/// Deploys a stack `release` on `node`'s swarm: a service `web` on an
/// overlay network `front`, with a secret `tok` and a config `conf`.
#[allow(dead_code)]
pub fn deploy_stack(node: &str, cleanup: &mut Cleanup, dir: &Path, release: &str) {
    let compose = dir.join(format!("{release}.yml"));
    std::fs::write(dir.join("tok.txt"), "token").expect("write secret");
    std::fs::write(dir.join("conf.txt"), "conf").expect("write config");
    std::fs::write(
        &compose,
        format!(
            r#"version: "3.8"
services:
  web:
    image: {IMAGE}
    command: ["sleep", "3600"]
    networks: [front]
    secrets: [tok]
    configs: [conf]
networks:
  front:
    driver: overlay
secrets:
  tok:
    file: {tok}
configs:
  conf:
    file: {conf}
"#,
            tok = dir.join("tok.txt").display(),
            conf = dir.join("conf.txt").display(),
        ),
    )
    .expect("write compose file");
    cleanup.add(node, &["stack", "rm", release]);
    docker(
        node,
        &[
            "stack",
            "deploy",
            "--resolve-image",
            "never",
            "-c",
            &compose.display().to_string(),
            release,
        ],
    );
}

/// The swarm node id the daemon of bed node `node` reports, if it answers.
#[allow(dead_code)]
pub fn node_id(node: &str) -> Option<String> {
    let out = docker_raw(node, &["info", "--format", "{{.Swarm.NodeID}}"], None);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !id.is_empty()).then_some(id)
}

/// Waits until a task of `service` runs, so that removal meets a network
/// still attached to a live task.
#[allow(dead_code)]
pub fn wait_running(node: &str, service: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let states = docker(
            node,
            &["service", "ps", service, "--format", "{{.CurrentState}}"],
        );
        if states.lines().any(|l| l.starts_with("Running")) {
            return;
        }
        assert!(Instant::now() < deadline, "{service} not running: {states}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The daemon's own record of which configs of `names` were removed since
/// `since` (a unix time in seconds), in the order it removed them.
#[allow(dead_code)]
pub fn configs_removed_since(node: &str, since: u64, names: &[String]) -> Vec<String> {
    let until = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() + 1)
        .unwrap_or(0);
    docker(
        node,
        &[
            "events",
            "--since",
            &since.to_string(),
            "--until",
            &until.to_string(),
            "--filter",
            "type=config",
            "--filter",
            "event=remove",
            "--format",
            "{{.Actor.Attributes.name}}",
        ],
    )
    .lines()
    .map(str::to_owned)
    .filter(|n| names.contains(n))
    .collect()
}
