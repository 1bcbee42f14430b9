//! Gathering's wall time in round trips, and the requests it makes.
//!
//! Fake Docker daemons on unix sockets in a temporary directory (no network
//! traffic at all, see `tests/support`) answer every request after [`DELAY`]
//! with canned JSON; a registry file names [`SWARMS`] swarms of [`NODES`]
//! daemons each (the manager and two more nodes, every one of them listed
//! as a node). One
//! gather is timed and reported as wall time over [`DELAY`]: the number of
//! dependent request rounds a swarm takes. Every request is counted per
//! daemon and path, which shows whether any is repeated, and every
//! connection accepted, which shows whether connections are reused.
//!
//! ```sh
//! cargo bench -p sweep-runner --bench gather
//! ```
//!
//! Every manager lists the release records of [`RELEASES`] releases of
//! [`REVISIONS`] revisions each, as Docker lists them: each record's data
//! (gzip of a small chart's YAML document, base64) in the configs listing.
//! After the first gather, the resource rule is measured: gathers with the
//! rule off and on (every application opted in, so every record's data is
//! decoded and read) take turns, [`ROUNDS`] of each, each through a
//! registry of its own (so that each connects as the first did); the
//! fastest of each and their ratio are reported, and the requests of each,
//! which must be the same.
//!
//! `SWEEP_BENCH_SWARMS`, `SWEEP_BENCH_DELAY_MS`, `SWEEP_BENCH_RELEASES`,
//! `SWEEP_BENCH_REVISIONS` and `SWEEP_BENCH_ROUNDS` change the size, the
//! delay, the records and the rounds.

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use support::{registry_file_with_records, Fleet, NODES};
use sweep_core::record::Payload;
use sweep_core::{AppSet, Application, Policy, Snapshot};
use sweep_docker::FileRegistry;
use sweep_runner::{gather, raise_open_file_limit, GatherSettings};

/// Swarms in the registry.
const SWARMS: usize = 50;
/// How long every fake daemon takes to answer one request.
const DELAY: Duration = Duration::from_millis(500);
/// Releases on every swarm.
const RELEASES: usize = 20;
/// Revisions (release records) of every release.
const REVISIONS: u64 = 3;
/// Gathers with the resource rule off, and as many on.
const ROUNDS: usize = 5;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter naming another bench skips this.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args
        .iter()
        .any(|a| !a.starts_with('-') && !"gather".contains(a.as_str()))
    {
        return;
    }
    let swarms: usize = env_or("SWEEP_BENCH_SWARMS", SWARMS);
    let delay = Duration::from_millis(env_or("SWEEP_BENCH_DELAY_MS", DELAY.as_millis() as u64));
    let size = Size {
        swarms,
        releases: env_or("SWEEP_BENCH_RELEASES", RELEASES),
        revisions: env_or("SWEEP_BENCH_REVISIONS", REVISIONS),
        rounds: env_or("SWEEP_BENCH_ROUNDS", ROUNDS).max(1),
    };
    // Both ends of every connection live in this process.
    let _ = raise_open_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(run(size, delay));
}

/// What the fake swarms hold, and how often each gather is timed.
#[derive(Clone, Copy)]
struct Size {
    swarms: usize,
    releases: usize,
    revisions: u64,
    rounds: usize,
}

async fn run(size: Size, delay: Duration) {
    let swarms = size.swarms;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fleet = Fleet::default();
    let file = registry_file_with_records(
        dir.path(),
        swarms,
        delay,
        &fleet,
        size.releases,
        size.revisions,
    );
    let registry = FileRegistry::load(&file).expect("load the registry file");

    let started = Instant::now();
    let snapshot = gather(
        &registry,
        Policy::new("default", true, None),
        AppSet::new(true, vec![Application::reconciled("keep", "s0", &[])]),
        GatherSettings::new(Duration::from_secs(30)),
    )
    .await;
    let wall = started.elapsed();

    let complete = snapshot
        .swarms
        .iter()
        .filter(|s| s.error.is_none() && s.nodes.as_ref().map(Vec::len) == Some(NODES))
        .count();
    println!("gather of {swarms} swarms x {NODES} daemons, every request answered after {delay:?}");
    println!(
        "  wall time {wall:.2?} = {:.2} round trips; {complete}/{swarms} swarms read with every node reached",
        wall.as_secs_f64() / delay.as_secs_f64()
    );

    // Requests by role and path, per swarm: the manager (n0) and the others.
    let requests = fleet.requests();
    let mut by_role: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut repeated = 0;
    for ((daemon, path), n) in &requests {
        let role = if daemon.ends_with("-n0") {
            "manager"
        } else {
            "node"
        };
        *by_role.entry((role, path.as_str())).or_default() += n;
        if *n > 1 {
            repeated += 1;
        }
    }
    let total: usize = requests.values().sum();
    println!(
        "  requests: {total} in all, {:.1} per swarm",
        total as f64 / swarms as f64
    );
    for ((role, path), n) in &by_role {
        let daemons = if *role == "manager" {
            swarms
        } else {
            swarms * (NODES - 1)
        };
        println!(
            "    {role:<7} {path:<9} {:.2} per daemon",
            *n as f64 / daemons as f64
        );
    }
    println!("  (daemon, path) pairs asked more than once: {repeated}");
    let connections: usize = fleet.accepted().values().sum();
    println!(
        "  connections: {connections} for {total} requests ({:.2} requests per connection)",
        total as f64 / connections.max(1) as f64
    );
    drop(registry);
    resource_rule(&file, &fleet, size, delay).await;
}

/// Gathers with the resource rule off and on, in turns, against the same
/// daemons: the fastest of each, their ratio, and the requests each made.
async fn resource_rule(file: &Path, fleet: &Fleet, size: Size, delay: Duration) {
    // Every swarm's releases declared by its application, which opted in.
    let apps: Vec<Application> = (0..size.swarms)
        .map(|i| {
            let releases: Vec<String> = (0..size.releases).map(|j| format!("r{j}")).collect();
            let releases: Vec<&str> = releases.iter().map(String::as_str).collect();
            Application::reconciled(&format!("app-{i}"), &format!("s{i}"), &releases)
                .with_prune_resources(true)
        })
        .collect();
    println!(
        "resource rule: {} swarms x {} releases x {} revisions, every request answered after {delay:?}, {} gathers each",
        size.swarms, size.releases, size.revisions, size.rounds
    );
    let mut walls: BTreeMap<bool, Vec<Duration>> = BTreeMap::new();
    let mut requests: BTreeMap<bool, usize> = BTreeMap::new();
    let mut payloads: BTreeMap<bool, (usize, usize)> = BTreeMap::new();
    for _ in 0..size.rounds {
        for prune in [false, true] {
            let registry = FileRegistry::load(file).expect("load the registry file");
            let before: usize = fleet.requests().values().sum();
            let started = Instant::now();
            let snapshot = gather(
                &registry,
                Policy::new("default", false, None).with_prune_resources(prune),
                AppSet::new(true, apps.clone()),
                GatherSettings::new(Duration::from_secs(30)),
            )
            .await;
            walls.entry(prune).or_default().push(started.elapsed());
            let after: usize = fleet.requests().values().sum();
            requests.insert(prune, after - before);
            payloads.insert(prune, count_payloads(&snapshot));
        }
    }
    let fastest = |prune: bool| walls[&prune].iter().min().copied().unwrap_or_default();
    let slowest = |prune: bool| walls[&prune].iter().max().copied().unwrap_or_default();
    for prune in [false, true] {
        let (read, revisions) = payloads[&prune];
        println!(
            "  rule {:<3} fastest {:.2?} (slowest {:.2?}), {} requests, {read}/{revisions} revisions' data read",
            if prune { "on" } else { "off" },
            fastest(prune),
            slowest(prune),
            requests[&prune],
        );
    }
    println!(
        "  on / off: {:.2}x (fastest of each)",
        fastest(true).as_secs_f64() / fastest(false).as_secs_f64().max(f64::EPSILON)
    );
}

/// How many revisions of `snapshot` had their data read (and read whole),
/// and how many there are.
fn count_payloads(snapshot: &Snapshot) -> (usize, usize) {
    let revisions = snapshot
        .swarms
        .iter()
        .flat_map(|s| &s.releases)
        .flat_map(|r| r.revisions.as_deref().unwrap_or_default());
    let mut read = 0;
    let mut all = 0;
    for revision in revisions {
        all += 1;
        if matches!(revision.payload, Some(Payload::Read(_))) {
            read += 1;
        }
    }
    (read, all)
}
