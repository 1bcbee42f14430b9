//! Helpers for the end-to-end suite: the test bed (`tests/testbed/bed`),
//! the docker CLI against its nodes, stacks and release records, what each
//! node's daemon still holds, and running the `swarm-sweep` binary.
//!
//! Every scenario gets its own token: its release names and its controller
//! id carry it, so scenarios running at once on the same swarm see each
//! other's releases only as another controller's (spared), and a second run
//! never meets the first one's names.

pub mod image;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sweep_testkit::engine_record::{EngineRecord, Manifest};

/// The 20.10 client; the bed's daemons speak API 1.41.
pub const DOCKER: &str = "/usr/bin/docker";
/// Imported into every engine of the bed; never pulled.
pub const IMAGE: &str = "127.0.0.1:1/sweep/busybox:1";
/// The label `docker stack deploy` puts on every object of a stack.
pub const STACK_LABEL: &str = "com.docker.stack.namespace";

/// `apply` arguments that keep a sweep short: a volume still held by a
/// task that is stopping (or by its container, removed a moment later) is
/// tried again every half second instead of every two.
pub const QUICK: &[&str] = &["--retry-interval", "0.5", "--settle-timeout", "60"];

/// Longest a single docker CLI call may take; a wedged daemon must fail the
/// test, not hang it.
const DOCKER_CALL_LIMIT: &str = "60";
/// Longest one run of the binary may take before the test fails.
const SWEEP_LIMIT: Duration = Duration::from_secs(240);
const POLL: Duration = Duration::from_millis(200);

// ------------------------------------------------------------------ the bed

/// One swarm of the bed: its manager and every node (manager included).
#[derive(Debug)]
pub struct Swarm {
    pub name: &'static str,
    pub manager: &'static str,
    pub nodes: &'static [&'static str],
}

pub static ALPHA: Swarm = Swarm {
    name: "alpha",
    manager: "alpha-1",
    nodes: &["alpha-1", "alpha-2", "alpha-3"],
};
pub static BETA: Swarm = Swarm {
    name: "beta",
    manager: "beta-1",
    nodes: &["beta-1", "beta-2"],
};
pub static GAMMA: Swarm = Swarm {
    name: "gamma",
    manager: "gamma-1",
    nodes: &["gamma-1", "gamma-2"],
};

/// The docker socket of bed node `node`.
pub fn socket_path(node: &str) -> PathBuf {
    PathBuf::from(format!("/run/swarm-sweep-bed/{node}/docker.sock"))
}

/// The endpoint URL of bed node `node`.
pub fn endpoint(node: &str) -> String {
    format!("unix://{}", socket_path(node).display())
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dir.canonicalize().unwrap_or(dir)
}

fn bed(args: &[&str]) -> Output {
    let script = workspace_root().join("tests/testbed/bed");
    // Through bash rather than exec: the script may be edited while tests
    // run, and exec of a file open for writing fails.
    Command::new("bash")
        .arg(&script)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()))
}

fn bed_ok(args: &[&str]) {
    let out = bed(args);
    assert!(
        out.status.success(),
        "`bed {}` failed ({}):\n{}\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Brings the bed up (idempotent, and cheap when it is up already); fails
/// the test when it cannot, so that no scenario passes without a bed.
pub fn bed_up() {
    bed_ok(&["up"]);
}

/// `bed start-node NODE`: starts it and waits until its swarm sees it Ready.
pub fn start_node(node: &str) {
    bed_ok(&["start-node", node]);
}

/// A node stopped with `bed stop-node`; started again when dropped, also
/// when the test fails, so that no later test finds it down.
pub struct StoppedNode {
    node: String,
    started: bool,
}

impl StoppedNode {
    pub fn stop(node: &str) -> StoppedNode {
        // Made before stopping: a failing stop may have stopped it halfway.
        let guard = StoppedNode {
            node: node.to_owned(),
            started: false,
        };
        bed_ok(&["stop-node", node]);
        guard
    }

    /// Starts the node now, failing the test when it does not come back.
    pub fn start(mut self) {
        start_node(&self.node);
        self.started = true;
    }
}

impl Drop for StoppedNode {
    fn drop(&mut self) {
        if self.started {
            return;
        }
        let out = bed(&["start-node", &self.node]);
        if !out.status.success() {
            eprintln!(
                "cleanup: `bed start-node {}` failed: {}",
                self.node,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// A worker that left its swarm, its entry removed at the manager: the
/// swarm counts one node fewer. Joined again when dropped, also when the
/// test fails, by `bed up`, which joins any node of the bed that left (under
/// a new node id) and removes its old entry.
pub struct LeftNode {
    joined: bool,
}

impl LeftNode {
    /// `node` (a worker of `swarm`) leaves it.
    pub fn leave(swarm: &Swarm, node: &str) -> LeftNode {
        // Made before leaving: a failing leave may have left halfway.
        let guard = LeftNode { joined: false };
        let id = docker_ok(node, &["info", "--format", "{{.Swarm.NodeID}}"]);
        docker_ok(node, &["swarm", "leave", "--force"]);
        docker_ok(swarm.manager, &["node", "rm", "--force", &id]);
        guard
    }

    /// Joins the node again now, failing the test when it does not come
    /// back Ready.
    pub fn join(mut self) {
        bed_up();
        self.joined = true;
    }
}

impl Drop for LeftNode {
    fn drop(&mut self) {
        if self.joined {
            return;
        }
        let out = bed(&["up"]);
        if !out.status.success() {
            eprintln!(
                "cleanup: `bed up` failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

// ---------------------------------------------------------------- docker

fn docker_command(node: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.arg(DOCKER_CALL_LIMIT)
        .arg(DOCKER)
        .arg("-H")
        .arg(endpoint(node))
        .args(args)
        .env_remove("DOCKER_HOST")
        .env_remove("DOCKER_CONTEXT")
        .env_remove("DOCKER_API_VERSION");
    cmd
}

/// Runs the docker CLI against `node`; never panics.
pub fn docker(node: &str, args: &[&str]) -> Output {
    docker_command(node, args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {DOCKER}: {e}"))
}

/// Runs the docker CLI against `node` with `input` on its stdin (a
/// config's data, which need not be text); never panics.
fn docker_with_input(node: &str, args: &[&str], input: &[u8]) -> Output {
    let mut child = docker_command(node, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {DOCKER}: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input).expect("write docker's stdin");
    }
    child.wait_with_output().expect("docker's output")
}

fn checked(node: &str, args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "docker -H {node} {} failed ({}): {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Runs the docker CLI against `node`; its trimmed stdout. Fails the test
/// when the command fails.
pub fn docker_ok(node: &str, args: &[&str]) -> String {
    checked(node, args, docker(node, args))
}

/// The non-empty lines of `text`, sorted.
pub fn lines(text: &str) -> Vec<String> {
    let set: BTreeSet<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    set.into_iter().collect()
}

/// `docker ... ls` names, or `None` when the daemon did not answer.
fn listed(node: &str, args: &[&str]) -> Option<Vec<String>> {
    let out = docker(node, args);
    out.status
        .success()
        .then(|| lines(&String::from_utf8_lossy(&out.stdout)))
}

// ---------------------------------------------------------------- polling

/// Polls `ok` until it holds; fails the test after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    loop {
        if ok() {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for: {what}"
        );
        std::thread::sleep(POLL);
    }
}

/// Waits until `swarm`'s manager reports node `node` with `status`
/// (`Ready`, `Down`).
pub fn wait_node_status(swarm: &Swarm, node: &str, status: &str, limit: Duration) {
    wait_for(
        &format!("{} to report {node} {status}", swarm.manager),
        limit,
        || {
            listed(
                swarm.manager,
                &["node", "ls", "--format", "{{.Hostname}} {{.Status}}"],
            )
            .is_some_and(|l| l.iter().any(|line| *line == format!("{node} {status}")))
        },
    );
}

// ------------------------------------------------------------ scenarios

/// A token no other scenario (nor an earlier run) uses: lowercase hex.
pub fn token() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{:04x}{:05x}{:x}",
        std::process::id() & 0xffff,
        nanos & 0xfffff,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Who holds alpha: scenarios share it, and a scenario that stops one of
/// its nodes holds it alone. All the suite's scenarios run in one test
/// process (`tests/main.rs`), so a node going down under a scenario that
/// counts on every node of alpha would fail it for nothing.
struct AlphaUse {
    shared: usize,
    alone: bool,
}

static ALPHA_USE: Mutex<AlphaUse> = Mutex::new(AlphaUse {
    shared: 0,
    alone: false,
});
static ALPHA_CHANGED: Condvar = Condvar::new();

/// A scenario's hold on alpha, released when the scenario is dropped.
/// Sharers never wait for a waiting lone holder, only for one holding it:
/// a test that makes two scenarios cannot deadlock itself.
struct AlphaHold {
    alone: bool,
}

impl AlphaHold {
    fn take(alone: bool) -> AlphaHold {
        let mut state = ALPHA_USE.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let free = if alone {
                !state.alone && state.shared == 0
            } else {
                !state.alone
            };
            if free {
                break;
            }
            state = ALPHA_CHANGED.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if alone {
            state.alone = true;
        } else {
            state.shared += 1;
        }
        AlphaHold { alone }
    }
}

impl Drop for AlphaHold {
    fn drop(&mut self) {
        let mut state = ALPHA_USE.lock().unwrap_or_else(|e| e.into_inner());
        if self.alone {
            state.alone = false;
        } else {
            state.shared -= 1;
        }
        ALPHA_CHANGED.notify_all();
    }
}

/// One scenario's context: the bed (brought up), its token, its controller
/// id and a scratch directory for the files it hands the binary.
pub struct Scenario {
    pub token: String,
    /// This scenario's controller id: the `<controller>` of its stamps.
    pub controller: String,
    dir: tempfile::TempDir,
    _alpha: AlphaHold,
}

impl Scenario {
    /// A scenario sharing alpha with the others running now.
    pub fn new() -> Scenario {
        Scenario::holding(AlphaHold::take(false))
    }

    /// A scenario that may stop a node of alpha: it waits until no other
    /// scenario runs, and no other starts until it is dropped.
    pub fn alone_on_alpha() -> Scenario {
        Scenario::holding(AlphaHold::take(true))
    }

    fn holding(alpha: AlphaHold) -> Scenario {
        bed_up();
        let token = token();
        Scenario {
            controller: format!("e2e{token}"),
            token,
            dir: tempfile::Builder::new()
                .prefix("sweep-e2e-")
                .tempdir()
                .expect("a scratch directory"),
            _alpha: alpha,
        }
    }

    /// A release name of this scenario: `<base>-<token>`.
    pub fn release(&self, base: &str) -> String {
        format!("{base}-{}", self.token)
    }

    /// This controller's owner stamp for `release` of `application`.
    pub fn stamp(&self, application: &str, release: &str) -> String {
        format!("cd/{}/{application}:release/{release}", self.controller)
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `text` to `file` in the scratch directory.
    pub fn write(&self, file: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(file);
        fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// Writes a registry file naming `swarms`.
    pub fn registry(&self, file: &str, swarms: &[SwarmEntry]) -> PathBuf {
        self.write(file, &registry_toml(swarms))
    }

    /// Writes a loaded app set with `applications` (a JSON array).
    pub fn app_set(&self, file: &str, applications: Value) -> PathBuf {
        let set = serde_json::json!({"loaded": true, "applications": applications});
        self.write(file, &set.to_string())
    }

    /// A run of `command` (`snapshot`, `plan`, `apply`) as this scenario's
    /// controller, with `config` (none: the swarm `DOCKER_HOST` names) and
    /// the app set `app_set`.
    pub fn sweep(&self, command: &str, config: Option<&Path>, app_set: &Path) -> Sweep {
        self.sweep_as(&self.controller, command, config, app_set)
    }

    /// [`Scenario::sweep`] as controller `controller`.
    pub fn sweep_as(
        &self,
        controller: &str,
        command: &str,
        config: Option<&Path>,
        app_set: &Path,
    ) -> Sweep {
        let mut sweep = Sweep::new(&[command]);
        if let Some(config) = config {
            sweep = sweep.arg("--config").arg(config);
        }
        sweep
            .arg("--app-set")
            .arg(app_set)
            .args(&["--controller", controller])
    }

    /// `apply --prune-volumes` with `config` and `app_set`, retrying
    /// quickly ([`QUICK`]): the sweep most scenarios end with.
    pub fn purge(&self, config: &Path, app_set: &Path) -> Run {
        self.sweep("apply", Some(config), app_set)
            .arg("--prune-volumes")
            .args(QUICK)
            .run()
    }

    /// Deploys `stack` on `swarm`.
    pub fn deploy(&self, swarm: &Swarm, stack: &Stack) {
        let file = self.write(
            &format!("{}.yml", stack.release),
            &stack.compose(self.dir()),
        );
        let file = file.to_string_lossy();
        docker_ok(
            swarm.manager,
            &[
                "stack",
                "deploy",
                "--resolve-image",
                "never",
                "-c",
                &file,
                &stack.release,
            ],
        );
    }
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario::new()
    }
}

/// An application of an app set, reconciled.
pub fn app(name: &str, swarm: &str, releases: &[&str]) -> Value {
    serde_json::json!({"name": name, "swarm": swarm, "releases": releases, "state": "reconciled"})
}

// -------------------------------------------------------- registry files

/// One `[[swarm]]` entry of a registry file.
#[derive(Debug, Clone)]
pub struct SwarmEntry {
    name: String,
    manager: String,
    nodes: Vec<String>,
    self_stack: Option<String>,
}

impl SwarmEntry {
    /// Bed swarm `swarm` under its own name, every node listed.
    pub fn of(swarm: &Swarm) -> SwarmEntry {
        SwarmEntry::named(swarm.name, &endpoint(swarm.manager))
            .with_nodes(swarm.nodes.iter().map(|n| endpoint(n)).collect())
    }

    /// A swarm `name` whose manager is at `manager`, without nodes.
    pub fn named(name: &str, manager: &str) -> SwarmEntry {
        SwarmEntry {
            name: name.to_owned(),
            manager: manager.to_owned(),
            nodes: Vec::new(),
            self_stack: None,
        }
    }

    /// The same entry under another name.
    pub fn renamed(mut self, name: &str) -> SwarmEntry {
        self.name = name.to_owned();
        self
    }

    pub fn with_nodes(mut self, endpoints: Vec<String>) -> SwarmEntry {
        self.nodes = endpoints;
        self
    }

    pub fn with_self_stack(mut self, stack: &str) -> SwarmEntry {
        self.self_stack = Some(stack.to_owned());
        self
    }
}

/// The text of a registry file naming `swarms`.
pub fn registry_toml(swarms: &[SwarmEntry]) -> String {
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    let mut text = String::from("timeout_secs = 10\n");
    for s in swarms {
        let _ = writeln!(
            text,
            "\n[[swarm]]\nname = {}\nmanager = {}",
            quote(&s.name),
            quote(&s.manager)
        );
        if let Some(stack) = &s.self_stack {
            let _ = writeln!(text, "self_stack = {}", quote(stack));
        }
        for node in &s.nodes {
            let _ = writeln!(text, "[[swarm.node]]\nendpoint = {}", quote(node));
        }
    }
    text
}

// ---------------------------------------------------------------- stacks

/// A stack of one service `app` (named `<release>_app`), optionally with a
/// named volume `data` (`<release>_data` on each node that runs a task),
/// and an overlay network, a secret and a config of its own.
#[derive(Debug, Clone)]
pub struct Stack {
    pub release: String,
    global: bool,
    volume: bool,
    extras: bool,
    /// Whether the extras' network is attachable.
    attachable: bool,
    node: Option<String>,
    stubborn: Option<u32>,
}

impl Stack {
    /// One replica, no volume, stopping at once on SIGTERM.
    pub fn new(release: &str) -> Stack {
        Stack {
            release: release.to_owned(),
            global: false,
            volume: false,
            extras: false,
            attachable: true,
            node: None,
            stubborn: None,
        }
    }

    /// A task on every node.
    pub fn global(mut self) -> Stack {
        self.global = true;
        self
    }

    /// With named volume `data`.
    pub fn with_volume(mut self) -> Stack {
        self.volume = true;
        self
    }

    /// With an overlay network (attachable), a secret and a config of its
    /// own.
    pub fn with_network_secret_config(mut self) -> Stack {
        self.extras = true;
        self
    }

    /// With its network not attachable: one a sweep that does not read
    /// every node's containers may remove (an attachable one stays then).
    pub fn not_attachable(mut self) -> Stack {
        self.attachable = false;
        self
    }

    /// Placed on node `hostname` only.
    pub fn on(mut self, hostname: &str) -> Stack {
        self.node = Some(hostname.to_owned());
        self
    }

    /// Its task ignores SIGTERM and is killed after `grace` seconds, holding
    /// its volume until then.
    pub fn stubborn(mut self, grace: u32) -> Stack {
        self.stubborn = Some(grace);
        self
    }

    /// `<release>_app`.
    pub fn service(&self) -> String {
        format!("{}_app", self.release)
    }

    /// `<release>_data`.
    pub fn volume(&self) -> String {
        format!("{}_data", self.release)
    }

    /// The manifest the chart engine renders for this stack, which its
    /// records hold: the service, volume, network, secret and config of
    /// [`Stack::compose`], without what only deploying needs.
    pub fn manifest(&self) -> String {
        let mut manifest = Manifest::new(IMAGE).service("app");
        if self.volume {
            manifest = manifest.volume("data");
        }
        if self.extras {
            manifest = manifest.network("net").secret("sec").config("cfg");
        }
        manifest.render()
    }

    /// The compose file; secret and config files are written to `dir`.
    pub fn compose(&self, dir: &Path) -> String {
        let (command, grace) = match self.stubborn {
            Some(grace) => ("trap '' TERM; sleep 3600".to_owned(), grace),
            // PID 1 gets no default signal handling: the trap makes it stop
            // at once instead of waiting out the grace period.
            None => ("trap 'exit 0' TERM; sleep 3600 & wait".to_owned(), 2),
        };
        let mut y = String::new();
        let _ = writeln!(y, "version: \"3.8\"\nservices:\n  app:");
        let _ = writeln!(y, "    image: {IMAGE}");
        let _ = writeln!(y, "    command: [\"sh\", \"-c\", \"{command}\"]");
        let _ = writeln!(y, "    stop_grace_period: {grace}s");
        let _ = writeln!(y, "    deploy:");
        if self.global {
            let _ = writeln!(y, "      mode: global");
        } else {
            let _ = writeln!(y, "      mode: replicated\n      replicas: 1");
        }
        // No IPVS on the bed's kernel: no virtual IPs.
        let _ = writeln!(y, "      endpoint_mode: dnsrr");
        if let Some(node) = &self.node {
            let _ = writeln!(
                y,
                "      placement:\n        constraints: [\"node.hostname == {node}\"]"
            );
        }
        if self.volume {
            let _ = writeln!(y, "    volumes: [\"data:/data\"]");
        }
        if self.extras {
            let _ = writeln!(y, "    networks: [net]\n    secrets: [sec]");
            let _ = writeln!(
                y,
                "    configs:\n      - source: cfg\n        target: /cfg.txt"
            );
        }
        if self.volume {
            let _ = writeln!(y, "volumes:\n  data: {{}}");
        }
        if self.extras {
            let secret = dir.join(format!("{}.secret", self.release));
            let config = dir.join(format!("{}.config", self.release));
            fs::write(&secret, "secret\n").expect("write the secret file");
            fs::write(&config, "config\n").expect("write the config file");
            // Attachable: a container of no service may join it, as an
            // operator's debugging container would.
            let _ = writeln!(
                y,
                "networks:\n  net:\n    driver: overlay\n    attachable: {}",
                self.attachable
            );
            let _ = writeln!(y, "secrets:\n  sec:\n    file: {}", secret.display());
            let _ = writeln!(y, "configs:\n  cfg:\n    file: {}", config.display());
        }
        y
    }
}

/// The nodes where a task of `service` runs now.
pub fn running_on(swarm: &Swarm, service: &str) -> BTreeSet<String> {
    listed(
        swarm.manager,
        &[
            "service",
            "ps",
            service,
            "--filter",
            "desired-state=running",
            "--format",
            "{{.Node}} {{.CurrentState}}",
        ],
    )
    .unwrap_or_default()
    .iter()
    .filter_map(|l| {
        let (node, state) = l.split_once(' ')?;
        state.starts_with("Running").then(|| node.to_owned())
    })
    .collect()
}

/// Waits until `stack`'s task runs on each of `nodes` and, with a volume,
/// the volume exists there.
pub fn wait_deployed(swarm: &Swarm, stack: &Stack, nodes: &[&str]) {
    let service = stack.service();
    wait_for(
        &format!("{service} running on {nodes:?}"),
        Duration::from_secs(90),
        || {
            let running = running_on(swarm, &service);
            nodes.iter().all(|n| running.contains(*n))
        },
    );
    if stack.volume {
        for node in nodes {
            wait_for(
                &format!("volume {} on {node}", stack.volume()),
                Duration::from_secs(30),
                || volumes_on(node, &stack.release).is_some_and(|v| v.contains(&stack.volume())),
            );
        }
    }
}

// ------------------------------------------------------- release records

/// Creates revision `revision` of `release`'s record on `swarm`'s manager
/// as the chart engine writes it, stamped `owner` (no owner label when
/// `None`), its manifest a plain stack's ([`Stack::new`]).
pub fn create_record(swarm: &Swarm, release: &str, revision: u32, owner: Option<&str>) {
    create_stack_record(swarm, &Stack::new(release), revision, owner);
}

/// [`create_record`] for `stack`'s release, its manifest the stack's.
pub fn create_stack_record(swarm: &Swarm, stack: &Stack, revision: u32, owner: Option<&str>) {
    let record = engine_record(&stack.release, revision, owner).with_manifest(stack.manifest());
    create_record_data(swarm, &record, &record.payload());
}

/// Revision `revision` of `release`'s record as the chart engine writes
/// it, stamped `owner`, its manifest a plain stack's.
pub fn engine_record(release: &str, revision: u32, owner: Option<&str>) -> EngineRecord {
    EngineRecord::new(release, revision.into())
        .with_owner(owner)
        .with_manifest(Stack::new(release).manifest())
}

/// Creates `record` on `swarm`'s manager under its name and labels,
/// holding `data`: its payload, or data the engine would not write.
pub fn create_record_data(swarm: &Swarm, record: &EngineRecord, data: &[u8]) {
    let mut args: Vec<String> = vec!["config".into(), "create".into()];
    for (key, value) in record.labels() {
        args.push("--label".into());
        args.push(format!("{key}={value}"));
    }
    args.push(record.name());
    args.push("-".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    checked(
        swarm.manager,
        &args,
        docker_with_input(swarm.manager, &args, data),
    );
}

fn record_names(swarm: &Swarm, release: &str) -> Option<Vec<String>> {
    listed(
        swarm.manager,
        &[
            "config",
            "ls",
            "--filter",
            "label=com.swarmcli.type=release",
            "--filter",
            &format!("label=com.swarmcli.release={release}"),
            "--format",
            "{{.Name}}",
        ],
    )
}

// ------------------------------------------------------------ what remains

fn volumes_on(node: &str, release: &str) -> Option<Vec<String>> {
    listed(
        node,
        &[
            "volume",
            "ls",
            "-q",
            "--filter",
            &format!("label={STACK_LABEL}={release}"),
        ],
    )
}

/// What the daemons of a swarm still hold of one release: its stack's
/// objects and its records on the manager, its volumes on every node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remains {
    pub services: Vec<String>,
    pub networks: Vec<String>,
    pub secrets: Vec<String>,
    /// The stack's own configs (release records are not among them).
    pub configs: Vec<String>,
    pub records: Vec<String>,
    /// By node, for every node that answered.
    pub volumes: BTreeMap<String, Vec<String>>,
    /// Nodes (or the manager) whose daemon did not answer.
    pub unanswered: Vec<String>,
}

impl Remains {
    pub fn read(swarm: &Swarm, release: &str) -> Remains {
        let mut r = Remains::default();
        let filter = format!("label={STACK_LABEL}={release}");
        let format = "{{.Name}}";
        let mut manager = |kind: &str| -> Vec<String> {
            listed(
                swarm.manager,
                &[kind, "ls", "--filter", &filter, "--format", format],
            )
            .unwrap_or_else(|| {
                r.unanswered.push(format!("{} ({kind} ls)", swarm.manager));
                Vec::new()
            })
        };
        let services = manager("service");
        let networks = manager("network");
        let secrets = manager("secret");
        let configs = manager("config");
        r.services = services;
        r.networks = networks;
        r.secrets = secrets;
        r.configs = configs;
        match record_names(swarm, release) {
            Some(records) => r.records = records,
            None => r.unanswered.push(format!("{} (records)", swarm.manager)),
        }
        for node in swarm.nodes {
            match volumes_on(node, release) {
                Some(v) => {
                    r.volumes.insert((*node).to_owned(), v);
                }
                None => r.unanswered.push((*node).to_owned()),
            }
        }
        r
    }

    /// Services, networks, secrets and configs of the stack.
    pub fn stack_objects(&self) -> usize {
        self.services.len() + self.networks.len() + self.secrets.len() + self.configs.len()
    }

    /// The nodes that still hold a volume of the release.
    pub fn volume_nodes(&self) -> Vec<&str> {
        self.volumes
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// Anything but records: stack objects or volumes.
    pub fn resources_left(&self) -> bool {
        self.stack_objects() > 0 || !self.volume_nodes().is_empty()
    }

    /// Nothing at all is left, and every daemon answered to say so.
    pub fn is_gone(&self) -> bool {
        !self.resources_left() && self.records.is_empty() && self.unanswered.is_empty()
    }
}

/// Fails the test unless nothing of `release` is left on any daemon of
/// `swarm`.
pub fn assert_gone(swarm: &Swarm, release: &str) {
    let r = Remains::read(swarm, release);
    assert!(r.is_gone(), "{}/{release} is not gone: {r:#?}", swarm.name);
}

/// Fails the test unless `release` on `swarm` still has its records, its
/// service and, on each of `volume_nodes`, its volume.
pub fn assert_intact(swarm: &Swarm, release: &str, volume_nodes: &[&str]) {
    let r = Remains::read(swarm, release);
    let volume = format!("{release}_data");
    let ok = !r.records.is_empty()
        && !r.services.is_empty()
        && volume_nodes
            .iter()
            .all(|n| r.volumes.get(*n).is_some_and(|v| v.contains(&volume)));
    assert!(
        ok,
        "{}/{release} should be intact (records, service, volume on {volume_nodes:?}): {r:#?}",
        swarm.name
    );
}

// ---------------------------------------------------------------- cleanup

/// Removes everything of the releases it was given when dropped, however
/// the test ends: stacks, records, and volumes on every node. Never panics
/// (it runs while a failed test unwinds).
pub struct Cleanup {
    swarm: &'static Swarm,
    releases: Vec<String>,
}

impl Cleanup {
    pub fn new(swarm: &'static Swarm) -> Cleanup {
        Cleanup {
            swarm,
            releases: Vec::new(),
        }
    }

    /// Also removes `release` (before anything of it is created).
    pub fn add(&mut self, release: &str) {
        self.releases.push(release.to_owned());
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        purge(self.swarm, &self.releases);
    }
}

/// Removes every trace of `releases` from `swarm`, retrying while tasks
/// still stop and hold networks and volumes; reports what it could not.
fn purge(swarm: &Swarm, releases: &[String]) {
    if releases.is_empty() {
        return;
    }
    let mut left: Vec<&String> = releases.iter().collect();
    for release in &left {
        let _ = docker(swarm.manager, &["stack", "rm", release]);
    }
    let start = Instant::now();
    loop {
        left.retain(|release| {
            if let Some(records) = record_names(swarm, release) {
                for record in records {
                    let _ = docker(swarm.manager, &["config", "rm", &record]);
                }
            }
            let r = Remains::read(swarm, release);
            if r.stack_objects() > 0 {
                // `stack rm` leaves networks in use by stopping tasks.
                let _ = docker(swarm.manager, &["stack", "rm", release]);
            }
            for (node, volumes) in &r.volumes {
                for v in volumes {
                    let _ = docker(node, &["volume", "rm", v]);
                }
            }
            !Remains::read(swarm, release).is_gone()
        });
        if left.is_empty() {
            return;
        }
        if start.elapsed() > Duration::from_secs(90) {
            for release in &left {
                eprintln!(
                    "cleanup: {}/{release} not fully removed: {:?}",
                    swarm.name,
                    Remains::read(swarm, release)
                );
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

// ------------------------------------------------------------ the binary

/// Removes the variables cargo sets for this package's tests from `cmd`, a
/// cargo build: build scripts that watch them (ring's) would see a change
/// and rebuild, and the next plain build would rebuild again.
pub fn without_test_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let per_crate = [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_BIN_",
            "CARGO_CRATE_",
        ]
        .iter()
        .any(|p| key.starts_with(p))
            || ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"].contains(&&*key);
        if per_crate {
            cmd.env_remove(&*key);
        }
    }
}

/// The `swarm-sweep` binary of this build, built once per test process so
/// that a run of this package alone never tests a stale binary.
///
/// Built as `cargo test --workspace` builds it (`--no-run`): under the
/// README's test command that is a check that finds everything fresh. A
/// `cargo build -p swarm-sweep` would resolve the dependencies' features
/// for that package alone, unlike the workspace's tests, and so build
/// every dependency a second time on a cold run while every test waits.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test executable's path");
        // .../target/<profile>/deps/<test> -> .../target/<profile>/swarm-sweep
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("the test executable lives in <target>/<profile>/deps");
        let binary = profile_dir.join("swarm-sweep");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .current_dir(workspace_root())
            .args(["test", "--quiet", "--workspace", "--no-run"]);
        without_test_env(&mut build);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        if let Some(target_dir) = profile_dir.parent() {
            build.arg("--target-dir").arg(target_dir);
        }
        let out = build.output().expect("run cargo test --workspace --no-run");
        assert!(
            out.status.success(),
            "cargo test --workspace --no-run failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            binary.is_file(),
            "{} missing after the build",
            binary.display()
        );
        if runs_every_test() {
            // The image and job tests wait for the static binary, a build
            // of its own; begun now, it overlaps the first tests' waits on
            // the engines instead of starting when the first of them does.
            // A build that fails is built again, and reported, by the test
            // that needs it.
            std::thread::spawn(|| std::panic::catch_unwind(image::static_binary));
        }
        binary
    })
}

/// Whether this test process was given no filter (the whole suite, as the
/// README's test command runs it): a run of a few tests chosen by name
/// should not build what they may not need.
fn runs_every_test() -> bool {
    // libtest's options that take a value as the next argument.
    const WITH_VALUE: &[&str] = &[
        "--test-threads",
        "--format",
        "--logfile",
        "--skip",
        "--color",
        "-Z",
        "--shuffle-seed",
    ];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if WITH_VALUE.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            return false;
        }
    }
    true
}

/// The result of one run of the binary.
#[derive(Debug)]
pub struct Run {
    pub args: Vec<String>,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Fails the test unless the run exited with `code`.
    pub fn expect_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code(),
            Some(code),
            "swarm-sweep {} exited {}, expected {code}\nstdout:\n{}\nstderr:\n{}",
            self.args.join(" "),
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Stdout as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "swarm-sweep {} printed no JSON ({e})\nstdout:\n{}\nstderr:\n{}",
                self.args.join(" "),
                self.stdout,
                self.stderr
            )
        })
    }
}

/// How to run the binary: its arguments and environment.
#[derive(Debug, Clone, Default)]
pub struct Sweep {
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Sweep {
    pub fn new(args: &[&str]) -> Sweep {
        Sweep {
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: Vec::new(),
        }
    }

    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Sweep {
        self.args.push(arg.as_ref().to_string_lossy().into_owned());
        self
    }

    pub fn args(mut self, args: &[&str]) -> Sweep {
        self.args.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Sweep {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Starts the binary, its output going to files in a directory of its
    /// own (no pipe to fill up, and readable while it runs).
    pub fn spawn(&self) -> Running {
        let dir = tempfile::Builder::new()
            .prefix("sweep-e2e-run-")
            .tempdir()
            .expect("a directory for the output");
        let stdout = fs::File::create(dir.path().join("stdout")).expect("stdout file");
        let stderr = fs::File::create(dir.path().join("stderr")).expect("stderr file");
        let mut cmd = Command::new(binary());
        cmd.args(&self.args)
            .env_remove("DOCKER_HOST")
            .env_remove("DOCKER_CONTEXT")
            .env_remove("DOCKER_TLS_VERIFY")
            .env_remove("DOCKER_CERT_PATH")
            .env_remove("SWARM_SWEEP_LOG")
            .env("NO_COLOR", "1");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary().display()));
        Running {
            args: self.args.clone(),
            child,
            dir,
            started: Instant::now(),
        }
    }

    /// Runs the binary to the end.
    pub fn run(&self) -> Run {
        self.spawn().wait()
    }
}

/// A run of the binary still going.
pub struct Running {
    args: Vec<String>,
    child: Child,
    dir: tempfile::TempDir,
    started: Instant,
}

impl Running {
    /// Whether it is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// What it has written to stderr so far.
    pub fn stderr_so_far(&self) -> String {
        fs::read_to_string(self.dir.path().join("stderr")).unwrap_or_default()
    }

    /// Sends SIGINT (what Ctrl-C sends) and waits for it to end.
    pub fn interrupt(self) -> Run {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -INT failed: {status}");
        self.wait()
    }

    /// SIGKILLs it (`Child::kill` sends SIGKILL on Unix) and collects it.
    pub fn kill(mut self) -> Run {
        let _ = self.child.kill();
        self.wait()
    }

    /// Waits for it to end; fails the test (killing it) after a limit.
    pub fn wait(mut self) -> Run {
        let status = loop {
            match self.child.try_wait().expect("wait for swarm-sweep") {
                Some(status) => break status,
                None if self.started.elapsed() > SWEEP_LIMIT => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    panic!(
                        "swarm-sweep {} did not end within {SWEEP_LIMIT:?}; stderr:\n{}",
                        self.args.join(" "),
                        self.stderr_so_far()
                    );
                }
                None => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let read = |f: &str| fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
        Run {
            args: self.args.clone(),
            status,
            stdout: read("stdout"),
            stderr: read("stderr"),
            elapsed: self.started.elapsed(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A test that fails while the binary runs must not leave it
        // deleting behind the cleanup's back.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ------------------------------------------------------------ JSON access

/// The array at `key` of `v`; fails the test when there is none.
pub fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v[key]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_else(|| panic!("no array {key:?} in {v:#}"))
}

/// The entries of the array at `key` about `release`.
pub fn about<'a>(v: &'a Value, key: &str, release: &str) -> Vec<&'a Value> {
    list(v, key)
        .iter()
        .filter(|e| e["release"] == release)
        .collect()
}

/// The one entry of the array at `key` about `release`.
pub fn one<'a>(v: &'a Value, key: &str, release: &str) -> &'a Value {
    match about(v, key, release).as_slice() {
        [entry] => entry,
        other => panic!(
            "expected one {key} entry for {release}, found {}: {v:#}",
            other.len()
        ),
    }
}

/// The release names of the array at `key` (deletions, spared, releases).
pub fn release_names(v: &Value, key: &str) -> BTreeSet<String> {
    list(v, key)
        .iter()
        .filter_map(|e| e["release"].as_str().map(str::to_owned))
        .collect()
}
