//! The floor `plan --snapshot` is measured against: read a snapshot file,
//! deserialize it, hash each swarm-qualified release name once, and nothing
//! else. `bench/plan-vs-read` runs it beside `swarm-sweep plan`.
//!
//! `cargo run --release -p sweep-core --example read_only -- FILE`
//!
//! The structs below are the snapshot's schema as plain owned serde types
//! (every field, unknown fields refused, strings copied out of the file as
//! any straightforward reader would), parsed with `serde_json::from_slice`
//! and no error-path tracking. They are deliberately not the crate's own
//! types: those are what is being measured, so a reference built on them
//! would get faster or slower with the very code under test. Owned strings
//! are what a reader that keeps the snapshot after the file is gone has to
//! pay; the planner is free to do better than that.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Snapshot {
    format_version: Option<u64>,
    #[serde(default)]
    policy: Option<Policy>,
    app_set: AppSet,
    #[serde(default)]
    swarms: Vec<Swarm>,
    now: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Policy {
    controller: Option<String>,
    #[serde(default)]
    purge_volumes: bool,
    max_deletions: Option<u64>,
    min_departed_for: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct AppSet {
    loaded: bool,
    #[serde(default)]
    applications: Vec<Application>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Application {
    name: String,
    swarm: String,
    releases: Option<Vec<String>>,
    state: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Swarm {
    swarm: String,
    cluster_id: Option<String>,
    error: Option<String>,
    #[serde(default)]
    releases: Vec<Release>,
    nodes: Option<Vec<Node>>,
    node_count: Option<u64>,
    members: Option<Vec<Node>>,
    self_stack: Option<String>,
    usage: Option<serde_json::Value>,
    #[serde(default)]
    failed_reads: Vec<serde_json::Value>,
    #[serde(default)]
    unread_nodes: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Release {
    name: String,
    owner: Option<String>,
    records: Option<serde_json::Value>,
    objects: Option<serde_json::Value>,
    departed_since: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Node {
    id: String,
    #[serde(default)]
    hostname: String,
}

fn main() {
    let Some(file) = std::env::args().nth(1) else {
        eprintln!("usage: read_only FILE");
        std::process::exit(2);
    };
    let bytes = match std::fs::read(&file) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("read_only: {file}: {e}");
            std::process::exit(2);
        }
    };
    let snapshot: Snapshot = match serde_json::from_slice(&bytes) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("read_only: {file}: {e}");
            std::process::exit(2);
        }
    };
    // One hash per swarm-qualified name, folded so none is optimized away.
    let mut folded = 0u64;
    let mut count = 0usize;
    for swarm in &snapshot.swarms {
        for release in &swarm.releases {
            let mut h = DefaultHasher::new();
            (swarm.swarm.as_str(), release.name.as_str()).hash(&mut h);
            folded ^= h.finish();
            count += 1;
        }
    }
    println!(
        "{count} releases, {} applications, {folded:016x}",
        snapshot.app_set.applications.len()
    );
}
