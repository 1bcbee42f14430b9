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
//!
//! What it read is not freed: a program that reads and exits has no use
//! for that memory back, and handing a million releases' strings and
//! lists back to the allocator one by one costs a good part of a second.
//! `plan --snapshot` does not free its parsed snapshot either, so neither
//! side pays for it.

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};

use serde::de::{self, Deserializer, MapAccess, Visitor};
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
    now: Option<serde_json::Value>,
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
    #[serde(default)]
    prune_resources: bool,
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
    #[serde(default)]
    prune_resources: bool,
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
    usage: Option<Usage>,
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
    records: Option<Vec<ObjectVersion>>,
    objects: Option<StackObjects>,
    revisions: Option<Vec<Revision>>,
    departed_since: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ObjectVersion {
    id: String,
    version: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StackObjects {
    #[serde(default)]
    services: Vec<Service>,
    #[serde(default)]
    networks: Vec<ObjectRef>,
    #[serde(default)]
    secrets: Vec<ObjectRef>,
    #[serde(default)]
    configs: Vec<ObjectRef>,
    volumes: Option<Vec<NodeVolumes>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Service {
    id: String,
    name: String,
    version: u64,
    keep: Option<String>,
}

/// A network, secret or config: an object, or (in older snapshots) its
/// bare name.
#[allow(dead_code)]
struct ObjectRef {
    name: String,
    id: Option<String>,
    version: Option<u64>,
    cd_created: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObjectFields {
    name: String,
    id: Option<String>,
    version: Option<u64>,
    cd_created: Option<String>,
}

impl<'de> Deserialize<'de> for ObjectRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RefVisitor;
        impl<'de> Visitor<'de> for RefVisitor {
            type Value = ObjectRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a name or an object")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<ObjectRef, E> {
                Ok(ObjectRef {
                    name: name.to_owned(),
                    id: None,
                    version: None,
                    cd_created: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjectRef, A::Error> {
                let o = ObjectFields::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ObjectRef {
                    name: o.name,
                    id: o.id,
                    version: o.version,
                    cd_created: o.cd_created,
                })
            }
        }
        deserializer.deserialize_any(RefVisitor)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct NodeVolumes {
    node: String,
    #[serde(default)]
    volumes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Revision {
    name: String,
    revision: Option<String>,
    owner: Option<String>,
    payload: Option<Payload>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
#[allow(dead_code)]
enum Payload {
    Read(Document),
    Unreadable(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Document {
    release: String,
    revision: u64,
    owner: Option<String>,
    declares: Declares,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Declares {
    #[serde(default)]
    services: Vec<String>,
    #[serde(default)]
    networks: Vec<String>,
    #[serde(default)]
    configs: Vec<String>,
    #[serde(default)]
    secrets: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Usage {
    #[serde(default)]
    services: Vec<ServiceUse>,
    #[serde(default)]
    containers: Vec<NodeContainers>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ServiceUse {
    id: String,
    name: String,
    stack: Option<String>,
    #[serde(default)]
    volumes: Vec<String>,
    #[serde(default)]
    networks: Vec<String>,
    #[serde(default)]
    secrets: Vec<String>,
    #[serde(default)]
    configs: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct NodeContainers {
    node: String,
    #[serde(default)]
    containers: Vec<ContainerUse>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ContainerUse {
    id: String,
    name: String,
    service: Option<String>,
    stack: Option<String>,
    #[serde(default)]
    volumes: Vec<String>,
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
    std::mem::forget(snapshot);
}
