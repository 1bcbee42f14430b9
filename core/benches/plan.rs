//! How planning scales with the number of swarms, releases and applications,
//! and with the number of nodes a swarm counts and lists; and planning
//! straight from JSON text. The end-to-end comparison of `plan --snapshot`
//! with a program that only reads the file is `bench/plan-vs-read`.
//! Run with `cargo bench -p sweep-core --bench plan`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sweep_core::plan::plan_json;
use sweep_core::{
    plan, AppSet, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot,
};

#[path = "support/fixture.rs"]
mod fixture;
use fixture::snapshot;

fn bench_plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    for (swarms, releases) in [(1, 100), (10, 100), (10, 1000), (50, 1000)] {
        let s = snapshot(swarms, releases);
        group.throughput(Throughput::Elements((swarms * releases) as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{swarms}x{releases}")),
            &s,
            |b, s| b.iter(|| plan(s).map(|p| p.deletions.len())),
        );
    }
    group.finish();
}

/// One swarm of `nodes` nodes (its own node list and the registry's reach,
/// one node down) and `releases` departed releases, with purge on: every
/// deletion's coverage depends on every node. Planning must stay linear
/// in nodes + releases, not their product.
fn many_nodes(nodes: usize, releases: usize) -> Snapshot {
    let mut sw = SwarmSnapshot::new("big");
    sw.cluster_id = Some("cluster-big".to_owned());
    let members: Vec<NodeEntry> = (0..nodes)
        .map(|n| NodeEntry::new(format!("node-id-{n}"), format!("node-{n}")))
        .collect();
    sw.nodes = Some(members[1..].to_vec());
    sw.members = Some(members);
    sw.node_count = Some(nodes as u64);
    sw.releases = (0..releases)
        .map(|r| {
            ReleaseEntry::new(
                format!("release-{r}"),
                Some(format!("cd/default/gone-{}:release/release-{r}", r / 4)),
            )
        })
        .collect();
    Snapshot::new(
        Policy::new("default", true, None),
        AppSet::new(true, vec![Application::reconciled("keep", "big", &[])]),
        vec![sw],
    )
}

fn bench_many_nodes(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan_nodes");
    group.sample_size(10);
    for (nodes, releases) in [(100, 1000), (2000, 1000), (2000, 10_000)] {
        let s = many_nodes(nodes, releases);
        group.throughput(Throughput::Elements((nodes + releases) as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{nodes}nodes_x{releases}")),
            &s,
            |b, s| b.iter(|| plan(s).map(|p| p.deletions.len())),
        );
    }
    group.finish();
}

/// Parsing and planning a snapshot's JSON text in one step, as
/// `plan --snapshot` does: names are read in place from the text.
fn bench_plan_json(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan_json");
    group.sample_size(10);
    for (swarms, releases) in [(10, 1000), (100, 1000)] {
        let text = snapshot(swarms, releases).to_json_pretty();
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{swarms}x{releases}")),
            &text,
            |b, text| b.iter(|| plan_json(text).map(|p| p.deletions.len())),
        );
    }
    group.finish();
}

criterion_group!(benches, bench_plan, bench_plan_json, bench_many_nodes);
criterion_main!(benches);
