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
//! `SWEEP_BENCH_SWARMS` and `SWEEP_BENCH_DELAY_MS` change the size and the
//! delay.

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use support::{registry, Fleet, NODES};
use sweep_core::{AppSet, Application, Policy};
use sweep_runner::{gather, raise_open_file_limit, GatherSettings};

/// Swarms in the registry.
const SWARMS: usize = 50;
/// How long every fake daemon takes to answer one request.
const DELAY: Duration = Duration::from_millis(500);

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
    // Both ends of every connection live in this process.
    let _ = raise_open_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(run(swarms, delay));
}

async fn run(swarms: usize, delay: Duration) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fleet = Fleet::default();
    let registry = registry(dir.path(), swarms, delay, &fleet);

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
}
