//! The one generator of large, realistic snapshots, shared by the planning
//! benchmark (`benches/plan.rs`) and the snapshot-file generator
//! (`examples/gen_snapshot.rs`) that `bench/plan-vs-read` runs, so that the
//! time measured in-process and the time measured end to end are of the
//! same input.

use sweep_core::{AppSet, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot};

/// `swarms` swarms of `releases` releases each, volume purge on, five nodes
/// per swarm, all reached.
///
/// Every four releases of a swarm belong to one application; every other
/// application has departed (its releases are deleted), the rest are live
/// and declare their four releases (spared as current). One release in a
/// hundred carries no stamp and one is another controller's. Release names
/// repeat across swarms as they do in practice, and each swarm's releases
/// are sorted by name, as `swarm-sweep snapshot` writes them.
pub fn snapshot(swarms: usize, releases: usize) -> Snapshot {
    let mut applications = Vec::new();
    let mut entries = Vec::new();
    for s in 0..swarms {
        let name = format!("swarm-{s}");
        let mut sw = SwarmSnapshot::new(name.as_str());
        sw.cluster_id = Some(format!("cluster-{s:024x}"));
        sw.node_count = Some(5);
        sw.nodes = Some(
            (0..5)
                .map(|n| NodeEntry::new(format!("{s}-{n}"), format!("node-{n}")))
                .collect(),
        );
        for r in 0..releases {
            let app = format!("app-{s}-{}", r / 4);
            let release = format!("release-{r}");
            let owner = match r % 100 {
                98 => None,
                99 => Some(format!("cd/other/{app}:release/{release}")),
                _ => Some(format!("cd/default/{app}:release/{release}")),
            };
            sw.releases.push(ReleaseEntry::new(release.as_str(), owner));
            if r % 4 == 0 && (r / 4) % 2 == 0 {
                let declared = (r..(r + 4).min(releases))
                    .map(|i| format!("release-{i}"))
                    .collect();
                applications.push(Application::new(
                    app,
                    name.as_str(),
                    Some(declared),
                    Default::default(),
                ));
            }
        }
        sw.releases.sort_by(|a, b| a.name.cmp(&b.name));
        entries.push(sw);
    }
    Snapshot::new(
        Policy::new("default", true, None),
        AppSet::new(true, applications),
        entries,
    )
}
