//! The one generator of large, realistic snapshots, shared by the planning
//! benchmark (`benches/plan.rs`) and the snapshot-file generator
//! (`examples/gen_snapshot.rs`) that `bench/plan-vs-read` runs, so that the
//! time measured in-process and the time measured end to end are of the
//! same input.

use sweep_core::objects::{ObjectRef, ObjectVersion, ServiceEntry, StackObjects};
use sweep_core::record::{record_name, Declared, Payload, RevisionDocument, RevisionRead};
use sweep_core::usage::{ServiceUse, Usage};
use sweep_core::{AppSet, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot};

/// How many revisions an opted-in release keeps.
const REVISIONS: u64 = 3;

/// `swarms` swarms of `releases` releases each, volume purge and the
/// resource rule on, five nodes per swarm, all reached.
///
/// Every four releases of a swarm belong to one application; every other
/// application has departed (its releases are deleted), the rest are live
/// and declare their four releases (spared as current). One release in a
/// hundred carries no stamp and one is another controller's. Release names
/// repeat across swarms as they do in practice, and each swarm's releases
/// are sorted by name, as `swarm-sweep snapshot` writes them.
///
/// Each release carries what a gather records of it: its record versions
/// and its stack's objects (a service on a network, with engine-sized ids),
/// and the swarm's usage lists every service with the network it names.
/// One release in ten has its service also attach to the network of the
/// release before it, so some deletions leave a shared network behind. One
/// live application in eight opts in to the resource rule: its releases
/// keep three revisions whose data is read, the last of which no longer
/// declares the `worker` service the stack still runs, so each drops one
/// object. (Revisions of the other releases, and volumes, are left out:
/// with them a snapshot of a million releases holds more values than a
/// snapshot may, see `sweep_core::bound`.)
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
        let mut services = Vec::new();
        for r in 0..releases {
            let a = r / 4;
            let app = format!("app-{s}-{a}");
            let release = format!("release-{r}");
            let live = a % 2 == 0;
            let opted = live && a % 16 == 0;
            let owner = match r % 100 {
                98 => None,
                99 => Some(format!("cd/other/{app}:release/{release}")),
                _ => Some(format!("cd/default/{app}:release/{release}")),
            };
            let (entry, used) = release_entry(s, r, &release, owner, opted);
            sw.releases.push(entry);
            services.extend(used);
            if r % 4 == 0 && live {
                let declared = (r..(r + 4).min(releases))
                    .map(|i| format!("release-{i}"))
                    .collect();
                applications.push(
                    Application::new(app, name.as_str(), Some(declared), Default::default())
                        .with_prune_resources(opted),
                );
            }
        }
        sw.releases.sort_by(|a, b| a.name.cmp(&b.name));
        sw.usage = Some(Usage::new(services, Vec::new()).sorted());
        entries.push(sw);
    }
    Snapshot::new(
        Policy::new("default", true, None).with_prune_resources(true),
        AppSet::new(true, applications),
        entries,
    )
}

/// A swarm object id as the engine makes them: 25 characters, here
/// unique per swarm, release, kind and index.
fn id(kind: char, s: usize, r: usize, i: u64) -> String {
    format!("{kind}{s:04x}{r:08x}{i:04x}00000000")
}

/// Release `r` of swarm `s` (named `release`), and the services of the
/// swarm's usage that are its.
fn release_entry(
    s: usize,
    r: usize,
    release: &str,
    owner: Option<String>,
    opted: bool,
) -> (ReleaseEntry, Vec<ServiceUse>) {
    let network = ObjectRef::new(id('n', s, r, 0), format!("{release}_default"));
    let mut names = vec!["web"];
    if opted {
        names.push("worker");
    }
    let services: Vec<ServiceEntry> = names
        .iter()
        .enumerate()
        .map(|(i, n)| ServiceEntry::new(id('s', s, r, i as u64), format!("{release}_{n}"), 7))
        .collect();
    let used = services
        .iter()
        .map(|svc| {
            let mut networks = vec![network.handle().to_owned()];
            if r.is_multiple_of(10) && r > 0 && svc.name.ends_with("_web") {
                networks.push(id('n', s, r - 1, 0));
            }
            ServiceUse::new(svc.id.as_str(), svc.name.as_str())
                .in_stack(release)
                .with_networks(networks)
        })
        .collect();
    let revisions = if opted { REVISIONS } else { 1 };
    let records = (1..=revisions)
        .map(|v| ObjectVersion::new(id('c', s, r, v), 1))
        .collect();
    let mut entry = ReleaseEntry::new(release, owner.clone())
        .with_records(records)
        .with_objects(StackObjects::new(services, vec![network], vec![], vec![]));
    if opted {
        let read = (1..=REVISIONS)
            .map(|v| {
                let mut declares = Declared::default();
                declares.services.insert(format!("{release}_web"));
                if v < REVISIONS {
                    declares.services.insert(format!("{release}_worker"));
                }
                declares.networks.insert(format!("{release}_default"));
                let document = RevisionDocument::new(release, v, owner.clone(), declares);
                RevisionRead::new(record_name(release, v), Some(v.to_string()), owner.clone())
                    .with_payload(Payload::Read(document))
            })
            .collect();
        entry = entry.with_revisions(read);
    }
    (entry, used)
}
