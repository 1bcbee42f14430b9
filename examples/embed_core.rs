//! Embedding the core: a controller that does its own IO.
//!
//! `sweep-core` decides and never touches a socket, a file or a clock. This
//! controller reads its world into a [`Snapshot`], asks [`plan`] what may
//! go, and carries the plan out by driving the [`Sweep`] state machine:
//! the sweep hands out actions (`poll_action`), the controller does each
//! one to its world and hands the result back (`handle_outcome`). Time is
//! only ever a parameter: when nothing may run yet, the controller moves
//! its clock to the sweep's next deadline (`poll_timeout`), where a real
//! one would sleep until then.
//!
//! The world is a map of objects standing in for one Docker swarm of two
//! nodes. Application `blog` has left the app set and `shop` is still in
//! it; `grafana` was deployed by hand and carries no owner stamp. Only
//! `blog` may go.
//!
//! Run it with `cargo run -p sweep-examples --example embed_core`.

use std::collections::BTreeMap;
use std::error::Error;
use std::time::Duration;

use sweep_core::objects::ObjectRef;
use sweep_core::sweep::{report_text, ActionKind, StackPart, UsageRead};
use sweep_core::usage::{NodeContainers, ServiceUse, Usage};
use sweep_core::{
    plan, AppSet, Application, NodeEntry, Outcome, Policy, ReleaseEntry, ReleaseOutcome,
    ServiceEntry, Settings, Snapshot, StackObjects, StampRead, SwarmSnapshot, Sweep, Timestamp,
};

/// The node a manager-side volume action lands on. This world's plan
/// reaches every node, so the sweep names the node each time.
const MANAGER_NODE: &str = "n1";

/// How long a release's tasks take to stop once its services are removed:
/// until then its networks and volumes are in use, as on a real swarm.
const TASKS_STOP_AFTER: Duration = Duration::from_millis(1500);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A release record: what the controller deployed, with its owner stamp.
    Record,
    Service,
    Network,
    Volume,
}

/// One object of the toy swarm.
struct Object {
    kind: Kind,
    name: String,
    /// The stack it belongs to (its `com.docker.stack.namespace` label), or
    /// for a record the release it records.
    stack: String,
    /// The node it lives on, for a volume: volumes are local to a node.
    node: Option<&'static str>,
    /// A record's owner stamp, `cd/<controller>/<application>:release/<release>`.
    owner: Option<String>,
}

/// The toy swarm: every object by a name that says what and where it is.
struct World {
    objects: BTreeMap<String, Object>,
    /// When the tasks of each release whose services were removed have
    /// stopped.
    tasks_stop_at: BTreeMap<String, Timestamp>,
}

impl World {
    /// `shop` and `blog` as the controller deployed them (a service, a
    /// network and a volume on each node), and `grafana` deployed by hand.
    fn new() -> Self {
        let mut world = World {
            objects: BTreeMap::new(),
            tasks_stop_at: BTreeMap::new(),
        };
        for (release, owner) in [
            ("shop", Some("cd/default/shop:release/shop")),
            ("blog", Some("cd/default/blog:release/blog")),
            ("grafana", None),
        ] {
            let owner = owner.map(str::to_owned);
            world.add(Kind::Record, release, release, None, owner);
            world.add(
                Kind::Service,
                &format!("{release}_app"),
                release,
                None,
                None,
            );
            world.add(
                Kind::Network,
                &format!("{release}_net"),
                release,
                None,
                None,
            );
            for node in ["n1", "n2"] {
                let volume = format!("{release}_data");
                world.add(Kind::Volume, &volume, release, Some(node), None);
            }
        }
        world
    }

    fn add(
        &mut self,
        kind: Kind,
        name: &str,
        stack: &str,
        node: Option<&'static str>,
        owner: Option<String>,
    ) {
        let kind_name = format!("{kind:?}").to_lowercase();
        let key = match node {
            Some(node) => format!("{kind_name} {name} on {node}"),
            None => format!("{kind_name} {name}"),
        };
        let object = Object {
            kind,
            name: name.to_owned(),
            stack: stack.to_owned(),
            node,
            owner,
        };
        self.objects.insert(key, object);
    }

    /// Every release with records, as the snapshot and the re-reads see it.
    fn releases(&self) -> Vec<ReleaseEntry> {
        self.objects
            .values()
            .filter(|o| o.kind == Kind::Record)
            .map(|o| ReleaseEntry::new(o.stack.clone(), o.owner.clone()))
            .collect()
    }

    /// What the planner decides from, built in code: the policy, the app
    /// set, and what the swarm holds.
    fn snapshot(&self) -> Snapshot {
        // The swarm the controller runs in is the one named "".
        let mut swarm = SwarmSnapshot::new("");
        swarm.cluster_id = Some("toy-cluster".to_owned());
        swarm.releases = self.releases();
        // Both nodes' own daemons were reached and the swarm counts two:
        // a volume purge covers the whole swarm.
        let nodes = vec![NodeEntry::new("n1", "toy-1"), NodeEntry::new("n2", "toy-2")];
        swarm.node_count = Some(2);
        swarm.nodes = Some(nodes.clone());
        swarm.members = Some(nodes);

        // `blog` is not in the app set: it has departed. An app set that is
        // empty or not loaded would hold the whole sweep instead.
        let apps = AppSet::new(true, vec![Application::reconciled("shop", "", &["shop"])]);
        Snapshot::new(Policy::new("default", true, None), apps, vec![swarm])
    }

    /// Removes every object `matches` picks; removing nothing is fine (what
    /// is already gone counts as done, so a sweep can be run again).
    fn remove(&mut self, matches: impl Fn(&Object) -> bool) {
        self.objects.retain(|_, o| !matches(o));
    }

    fn tasks_running(&self, release: &str, now: Timestamp) -> bool {
        let has_services = self
            .objects
            .values()
            .any(|o| o.kind == Kind::Service && o.stack == release);
        let stopping = self.tasks_stop_at.get(release).is_some_and(|&at| now < at);
        has_services || stopping
    }

    /// Does what `action` asks, at `now`, and says how it went.
    fn perform(&mut self, action: &ActionKind, now: Timestamp) -> Outcome {
        match action {
            // Before every destructive step the sweep re-reads the
            // release's records under each name of its cluster (this world
            // has one) and judges the stamps itself.
            ActionKind::ReadStamps { target, .. } => {
                let entry = self
                    .releases()
                    .into_iter()
                    .find(|r| r.name == target.release.release);
                let reads = target
                    .names
                    .iter()
                    .map(|name| StampRead::new(name.clone(), entry.clone()))
                    .collect();
                Outcome::Stamps(reads)
            }
            // Before each removal of what another workload might use, the
            // sweep reads the stack as labelled now and what every service
            // (and, before a purge, every container) of the swarm names;
            // it decides from that what to remove, and lists the swarm's
            // nodes (one joined since the plan holds what nobody read).
            // Nothing else runs in this world, so only the stack's own
            // services are listed, and the nodes are the ones asked.
            ActionKind::ReadUsage { target, at } => {
                let release = target.release.release.as_str();
                let of = |kind: Kind| {
                    self.objects
                        .values()
                        .filter(move |o| o.kind == kind && o.stack == release)
                };
                let stack = StackObjects::new(
                    of(Kind::Service)
                        .map(|o| ServiceEntry::new(&o.name, &o.name, 1))
                        .collect(),
                    of(Kind::Network)
                        .map(|o| ObjectRef::new(&o.name, &o.name))
                        .collect(),
                    Vec::new(),
                    Vec::new(),
                );
                let services = self
                    .objects
                    .values()
                    .filter(|o| o.kind == Kind::Service)
                    .map(|o| ServiceUse::new(&o.name, &o.name).in_stack(&o.stack))
                    .collect();
                let containers = at
                    .iter()
                    .map(|w| NodeContainers::new(w.node_id().unwrap_or(MANAGER_NODE), Vec::new()))
                    .collect();
                let nodes = at.iter().filter_map(|w| w.node_id()).map(str::to_owned);
                Outcome::Usage(
                    UsageRead::new(stack, Usage::new(services, containers))
                        .with_nodes(nodes.collect()),
                )
            }
            ActionKind::RemoveStack {
                target,
                part,
                objects,
            } => {
                let release = target.release.release.as_str();
                let kind = match part {
                    StackPart::Services => Kind::Service,
                    // Not a removal: answered "in use" until the tasks stop.
                    StackPart::Tasks if self.tasks_running(release, now) => {
                        return Outcome::in_use()
                    }
                    StackPart::Tasks => return Outcome::Done,
                    StackPart::Networks if self.tasks_running(release, now) => {
                        return Outcome::in_use()
                    }
                    StackPart::Networks => Kind::Network,
                    // This world has no secrets or configs.
                    StackPart::Secrets | StackPart::Configs => return Outcome::Done,
                };
                // Exactly the objects the sweep names (here an object's id
                // is its name), never "everything labelled with the stack".
                self.remove(|o| {
                    o.kind == kind
                        && o.stack == release
                        && objects.iter().any(|r| r.handle() == o.name)
                });
                if kind == Kind::Service {
                    self.tasks_stop_at
                        .insert(release.to_owned(), now + TASKS_STOP_AFTER);
                }
                Outcome::Done
            }
            ActionKind::ListVolumes { target, at } => {
                let node = at.node_id().unwrap_or(MANAGER_NODE);
                let volumes = self
                    .objects
                    .values()
                    .filter(|o| o.kind == Kind::Volume && o.node == Some(node))
                    .filter(|o| o.stack == target.release.release)
                    .map(|o| o.name.clone())
                    .collect();
                Outcome::Volumes(volumes)
            }
            ActionKind::RemoveVolume { target, at, volume } => {
                if self.tasks_running(&target.release.release, now) {
                    return Outcome::in_use();
                }
                let node = at.node_id().unwrap_or(MANAGER_NODE);
                self.remove(|o| {
                    o.kind == Kind::Volume && o.node == Some(node) && o.name == *volume
                });
                Outcome::Done
            }
            // Handed out only once everything else of the release is gone.
            ActionKind::DeleteRecords { target } => {
                self.remove(|o| o.kind == Kind::Record && o.stack == target.release.release);
                Outcome::Done
            }
            // After a failure the sweep lists the releases again to learn
            // whether the failed step had worked after all.
            ActionKind::ListReleases { .. } => {
                Outcome::Releases(self.releases().into_iter().map(|r| r.name).collect())
            }
        }
    }
}

/// One line per action, for people.
fn describe(action: &ActionKind) -> String {
    let mut line = action.step().to_string();
    if let Some(target) = action.target() {
        line += &format!(" {}", target.release);
    }
    if let Some(part) = action.part() {
        line += &format!(" ({part})");
    }
    if let ActionKind::RemoveVolume { volume, .. } = action {
        line += &format!(" {volume}");
    }
    if let Some(node) = action.at().and_then(|at| at.node_id()) {
        line += &format!(" on {node}");
    }
    line
}

/// What an action's outcome was, for people.
fn summary(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Failed(failure) => format!("failed: {failure}"),
        Outcome::Volumes(names) => format!("volumes {names:?}"),
        other => other.kind_str().to_owned(),
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut world = World::new();
    let shop_before = keys_of(&world, "shop");
    let grafana_before = keys_of(&world, "grafana");

    let plan = plan(&world.snapshot())?;
    for deletion in &plan.deletions {
        println!(
            "plan: delete {} (application {}: {}, volumes {})",
            deletion.release, deletion.application, deletion.reason, deletion.volumes
        );
    }
    for spared in &plan.spared {
        println!("plan: keep {} ({})", spared.release, spared.reason);
    }

    // Retry what is in use every second, give each object 30 s to let go.
    let settings = Settings::new(Duration::from_secs(1), Duration::from_secs(30));
    let mut sweep = Sweep::new(&plan, settings);
    // The controller's clock, as time since an epoch it picks.
    let mut now = Timestamp::ZERO;
    while !sweep.is_done() {
        // One action at a time: each is answered before the next poll. A
        // controller may instead run several at once, polling until it has
        // as many as it allows.
        if let Some(action) = sweep.poll_action(now) {
            let outcome = world.perform(&action.kind, now);
            let (at, what) = (now.to_string(), describe(&action.kind));
            println!("{at:>7}  {what:<44} {}", summary(&outcome));
            sweep.handle_outcome(action.id, outcome, now)?;
            continue;
        }
        // Nothing may run now: what is left waits for a retry deadline.
        // Without one (and nothing outstanding) the sweep could never
        // finish, so stop rather than spin.
        let Some(deadline) = sweep.poll_timeout() else {
            return Err("the sweep stalled with work left".into());
        };
        // Never the same instant twice, or a deadline already past would
        // spin this loop.
        now = deadline.max(now + Duration::from_millis(1));
    }

    let report = sweep.report();
    print!("\n{}", report_text(&report));
    println!("\nleft in the world:");
    for key in world.objects.keys() {
        println!("  {key}");
    }

    // `blog` went, all of it; `shop` and the unstamped `grafana` are whole.
    assert!(report.all_done(), "the sweep did not finish");
    assert_eq!(report.releases.len(), 1);
    assert_eq!(report.releases[0].release, "blog");
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert_eq!(keys_of(&world, "blog"), Vec::<String>::new());
    assert_eq!(keys_of(&world, "shop"), shop_before);
    assert_eq!(keys_of(&world, "grafana"), grafana_before);
    Ok(())
}

/// The keys of `release`'s objects in the world.
fn keys_of(world: &World, release: &str) -> Vec<String> {
    world
        .objects
        .iter()
        .filter(|(_, o)| o.stack == release)
        .map(|(k, _)| k.clone())
        .collect()
}
