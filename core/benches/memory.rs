//! Heap use of planning and of a whole sweep, by size: peak bytes and
//! allocations, measured with dhat's counting allocator.
//! Run with `cargo bench -p sweep-core --bench memory`.

use sweep_core::sweep::{ActionKind, Outcome, Settings, Sweep, Timestamp};
use sweep_core::{
    plan, AppSet, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot,
};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn snapshot(swarms: usize, releases: usize, nodes: usize) -> Snapshot {
    let swarm_entries = (0..swarms)
        .map(|s| {
            let mut sw = SwarmSnapshot::new(format!("swarm-{s}"));
            sw.cluster_id = Some(format!("cluster-{s}"));
            sw.node_count = Some(nodes as u64);
            sw.nodes = Some(
                (0..nodes)
                    .map(|n| NodeEntry::new(format!("{s}-{n}"), format!("node-{n}")))
                    .collect(),
            );
            sw.releases = (0..releases)
                .map(|r| {
                    let name = format!("release-{r}");
                    let stamp = format!("cd/default/gone:release/{name}");
                    ReleaseEntry::new(name, Some(stamp))
                })
                .collect();
            sw
        })
        .collect();
    let apps = AppSet::new(true, vec![Application::reconciled("keep", "swarm-0", &[])]);
    Snapshot::new(Policy::new("default", true, None), apps, swarm_entries)
}

fn sweep_all(plan: &sweep_core::SweepPlan) -> u64 {
    let mut sweep = Sweep::new(plan, Settings::default());
    let mut ready = Vec::new();
    loop {
        while let Some(a) = sweep.poll_action(Timestamp::ZERO) {
            ready.push(a);
        }
        if ready.is_empty() {
            break;
        }
        for a in ready.drain(..) {
            let outcome = match &a.kind {
                ActionKind::ListVolumes { target, .. } => {
                    Outcome::Volumes(vec![format!("{}_data", target.release.release)])
                }
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
            let _ = sweep.handle_outcome(a.id, outcome, Timestamp::ZERO);
        }
    }
    sweep.report().totals.deleted
}

const CASES: [(usize, usize, usize); 4] = [(1, 100, 3), (10, 100, 5), (10, 1000, 5), (50, 1000, 5)];

/// Each measurement runs in a process of its own: dhat keeps one peak per
/// process, so a peak from one step would hide the next step's.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, step, index] = &args[..] {
        if let (Ok(i), "plan" | "sweep") = (index.parse::<usize>(), step.as_str()) {
            if let Some(&case) = CASES.get(i) {
                measure(step, case);
                return;
            }
        }
    }
    let exe = std::env::current_exe().expect("the bench knows its own path");
    println!(
        "{:<24} {:>14} {:>14} {:>12}",
        "case", "peak bytes", "total bytes", "allocations"
    );
    for i in 0..CASES.len() {
        for step in ["plan", "sweep"] {
            let out = std::process::Command::new(&exe)
                .args([step, &i.to_string()])
                .output()
                .expect("the bench runs itself");
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}

fn measure(step: &str, (swarms, releases, nodes): (usize, usize, usize)) {
    let s = snapshot(swarms, releases, nodes);
    let p = plan(&s).expect("valid snapshot");
    // Start counting once the inputs exist: only the step itself is measured.
    let _profiler = dhat::Profiler::builder().testing().build();
    let before = dhat::HeapStats::get();
    let case = if step == "plan" {
        let again = plan(&s).expect("valid snapshot");
        assert_eq!(again.deletions.len(), p.deletions.len());
        format!("plan {swarms}x{releases}")
    } else {
        let deleted = sweep_all(&p);
        assert_eq!(deleted, (swarms * releases) as u64);
        format!("sweep {swarms}x{releases}x{nodes}")
    };
    let after = dhat::HeapStats::get();
    println!(
        "{case:<24} {:>14} {:>14} {:>12}",
        after.max_bytes.saturating_sub(before.curr_bytes),
        after.total_bytes - before.total_bytes,
        after.total_blocks - before.total_blocks
    );
}
