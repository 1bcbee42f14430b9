//! Fake swarms for `bench/gather-rounds`: the gathering tests' fake Docker
//! daemons (`tests/support`), served from this process for another one (the
//! `swarm-sweep` binary) to read, and counted.
//!
//! ```sh
//! fake_fleet DIR SWARMS DELAY_MS [RELEASES]
//! ```
//!
//! Starts SWARMS swarms of three daemons each (a manager and two nodes) on
//! unix sockets in DIR (never a network address), every request answered
//! after DELAY_MS, each manager listing the records of RELEASES releases
//! (default 20) of three revisions; writes the registry file
//! `DIR/registry.toml`, prints `ready`, and serves until its standard input
//! ends. Then it prints what the daemons were asked, one `key value` line
//! each: `requests`, `manager_requests` and `node_requests` (per daemon, the
//! most any one was asked), `repeated` (daemon and path pairs asked more
//! than once), `connections` (accepted) and `peak_open` (open at once).

#[path = "../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::PathBuf;
use std::time::Duration;

use support::{registry_file_with_records, Fleet};
use sweep_runner::raise_open_file_limit;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: fake_fleet DIR SWARMS DELAY_MS [RELEASES]";
    let (Some(dir), Some(swarms), Some(delay)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let parsed = (
        swarms.parse::<usize>(),
        delay.parse::<u64>(),
        args.get(3).map_or(Ok(20), |r| r.parse::<usize>()),
    );
    let (Ok(swarms), Ok(delay), Ok(releases)) = parsed else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let dir = PathBuf::from(dir);
    // Every daemon's listener and every connection to it live here.
    let _ = raise_open_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let fleet = Fleet::default();
    let file = runtime.block_on(async {
        registry_file_with_records(
            &dir,
            swarms,
            Duration::from_millis(delay),
            &fleet,
            releases,
            3,
        )
    });
    assert_eq!(file, dir.join("registry.toml"));
    println!("ready");

    // Served by the runtime's threads until the caller is done.
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);

    let requests = fleet.requests();
    let mut per_daemon: BTreeMap<&str, usize> = BTreeMap::new();
    for ((daemon, _), n) in &requests {
        *per_daemon.entry(daemon).or_default() += n;
    }
    let most = |manager: bool| {
        per_daemon
            .iter()
            .filter(|(d, _)| d.ends_with("-n0") == manager)
            .map(|(_, n)| *n)
            .max()
            .unwrap_or(0)
    };
    println!("requests {}", requests.values().sum::<usize>());
    println!("manager_requests {}", most(true));
    println!("node_requests {}", most(false));
    println!("repeated {}", requests.values().filter(|n| **n > 1).count());
    println!("connections {}", fleet.accepted().values().sum::<usize>());
    println!("peak_open {}", fleet.connections().peak());
    drop(runtime);
}
