//! How the sweep state machine scales: releases × nodes, every action
//! answered at once, as a driver with unlimited concurrency would.
//! Run with `cargo bench -p sweep-core --bench sweep`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sweep_core::sweep::{ActionKind, Outcome, Settings, Sweep, Timestamp};
use sweep_core::{
    plan, AppSet, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot, SweepPlan,
};

fn departed_plan(releases: usize, nodes: usize) -> SweepPlan {
    let mut swarm = SwarmSnapshot::new("alpha");
    swarm.cluster_id = Some("A".to_owned());
    swarm.node_count = Some(nodes as u64);
    swarm.nodes = Some(
        (0..nodes)
            .map(|n| NodeEntry::new(format!("n{n}"), format!("node-{n}")))
            .collect(),
    );
    swarm.releases = (0..releases)
        .map(|r| {
            let name = format!("release-{r}");
            let stamp = format!("cd/default/gone:release/{name}");
            ReleaseEntry::new(name, Some(stamp))
        })
        .collect();
    let apps = AppSet::new(true, vec![Application::reconciled("keep", "alpha", &[])]);
    let snapshot = Snapshot::new(Policy::new("default", true, None), apps, vec![swarm]);
    plan(&snapshot).expect("valid snapshot")
}

/// Drives a sweep to the end; each listing finds two volumes.
fn drive(plan: &SweepPlan) -> u64 {
    let mut sweep = Sweep::new(plan, Settings::default());
    let now = Timestamp::ZERO;
    let mut ready = Vec::new();
    loop {
        while let Some(action) = sweep.poll_action(now) {
            ready.push(action);
        }
        if ready.is_empty() {
            break;
        }
        for action in ready.drain(..) {
            let outcome = match &action.kind {
                ActionKind::ListVolumes { target, .. } => Outcome::Volumes(vec![
                    format!("{}_data", target.release.release),
                    format!("{}_logs", target.release.release),
                ]),
                ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
                // Still stamped as planned.
                ActionKind::ReadStamps { target, .. } => {
                    let release = &target.release.release;
                    let stamp = format!("cd/default/{}:release/{release}", target.application);
                    Outcome::same_stamps(&target.names, release, Some(&stamp))
                }
                ActionKind::ReadUsage { .. } => Outcome::Usage(Default::default()),
                _ => Outcome::Done,
            };
            let _ = sweep.handle_outcome(action.id, outcome, now);
        }
    }
    sweep.report().totals.deleted
}

fn bench_sweep(c: &mut Criterion) {
    let mut group = c.benchmark_group("sweep");
    for (releases, nodes) in [(10, 3), (100, 3), (100, 20), (1000, 5)] {
        let plan = departed_plan(releases, nodes);
        group.throughput(Throughput::Elements((releases * nodes) as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(format!("{releases}x{nodes}")),
            &plan,
            |b, plan| b.iter(|| drive(plan)),
        );
    }
    group.finish();
}

criterion_group!(benches, bench_sweep);
criterion_main!(benches);
