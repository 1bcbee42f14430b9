//! How planning scales with the number of swarms, releases and applications,
//! and with the number of nodes a swarm counts and lists.
//! Run with `cargo bench -p sweep-core --bench plan`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sweep_core::{
    plan, AppSet, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot,
};

/// `swarms` swarms of `releases` releases each; every other application has
/// departed, and release names repeat across swarms as they do in practice.
fn snapshot(swarms: usize, releases: usize) -> Snapshot {
    let mut applications = Vec::new();
    let mut entries = Vec::new();
    for s in 0..swarms {
        let name = format!("swarm-{s}");
        let mut sw = SwarmSnapshot::new(name.as_str());
        sw.cluster_id = Some(format!("cluster-{s}"));
        sw.node_count = Some(5);
        sw.nodes = Some(
            (0..5)
                .map(|n| NodeEntry::new(format!("{s}-{n}"), format!("node-{n}")))
                .collect(),
        );
        for r in 0..releases {
            let app = format!("app-{s}-{}", r / 4);
            let release = format!("release-{r}");
            sw.releases.push(ReleaseEntry::new(
                release.as_str(),
                Some(format!("cd/default/{app}:release/{release}")),
            ));
            if r % 4 == 0 && (r / 4) % 2 == 0 {
                let declared = (r..r + 4).map(|i| format!("release-{i}")).collect();
                applications.push(Application::new(
                    app,
                    name.as_str(),
                    Some(declared),
                    Default::default(),
                ));
            }
        }
        entries.push(sw);
    }
    Snapshot::new(
        Policy::new("default", true, None),
        AppSet::new(true, applications),
        entries,
    )
}

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

criterion_group!(benches, bench_plan, bench_many_nodes);
criterion_main!(benches);
