//! A plan built from arbitrary data and an arbitrary sequence of driver
//! operations (poll, answer an outstanding action of a chosen kind with a
//! chosen outcome, advance time, answer an id that is not outstanding).
//!
//! Invariants: nothing panics; nothing is handed out for a release the
//! plan does not list, nor at all for a held plan; every destructive step
//! (stack, purge, records) comes right after a re-read of the release's
//! records that found it still ours for the planned application, and
//! nothing at all comes after a re-read that did not; volumes are touched
//! only after the stack went; records are handed out only when the stack went
//! and, with purge, every place was listed and every volume listed there
//! was removed (and never under partial coverage); a stack's other parts
//! only once its services went; nothing another workload uses (as the
//! latest usage read showed it) is ever handed out for removal, a retry
//! included, and a release that shares anything never has its records
//! handed out; engine events arriving at any moment
//! change none of this; a driver that then answers everything with
//! success finishes in a bounded number of steps.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use sweep_core::objects::ObjectRef;
use sweep_core::sweep::{
    Action, ActionId, ActionKind, Event as SweepEvent, Outcome, ReleaseOutcome, Settings,
    StackPart, StampRead, Step, Sweep, SweepError, Timestamp, UsageRead, Where,
};
use sweep_core::usage::{ContainerUse, NodeContainers, ServiceUse, Usage};
use sweep_core::{
    Coverage, ReleaseEntry, ReleaseRef, ServiceEntry, StackObjects, SwarmName, SweepPlan,
};

#[derive(Arbitrary, Debug)]
struct Input {
    purge: bool,
    held: bool,
    retry_ms: u16,
    settle_ms: u16,
    swarms: Vec<SwarmIn>,
    deletions: Vec<DeletionIn>,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
struct SwarmIn {
    name: u8,
    nodes: Option<Vec<(u8, u8)>>,
    node_count: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct DeletionIn {
    swarm: u8,
    release: u8,
    application: u8,
    coverage: CoverageIn,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum CoverageIn {
    Off,
    Complete,
    Partial,
    NodeLocal,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Poll,
    Answer {
        kind: KindIn,
        pick: u8,
        outcome: OutcomeIn,
    },
    Advance(u16),
    Bogus(u8),
    /// An engine event: a container of the `release`-th deletion gone on
    /// its swarm's `node`-th node (or on none named).
    Event {
        release: u8,
        node: Option<u8>,
    },
    /// The `swarm`-th swarm's deletion window closes `after` ms from now.
    WindowCloses {
        swarm: u8,
        after: u16,
    },
}

#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
enum KindIn {
    Any,
    Stack,
    List,
    Volume,
    Records,
    Relist,
    Read,
    Usage,
}

#[derive(Arbitrary, Debug, Clone)]
enum OutcomeIn {
    Success,
    Names(Vec<u8>),
    Gone,
    InUse,
    OwnStack,
    Unreachable,
    Other,
    WrongShape,
    /// A re-read's answer: see [`stamps`].
    Stamps(u8),
}

fn swarm_name(n: u8) -> String {
    format!("s{}", n % 4)
}

fn coverage_str(c: CoverageIn) -> &'static str {
    match c {
        CoverageIn::Off => "off",
        CoverageIn::Complete => "complete",
        CoverageIn::Partial => "partial",
        CoverageIn::NodeLocal => "node_local",
    }
}

fn build_plan(input: &Input) -> Option<SweepPlan> {
    let holds = if input.held {
        json!([{"scope": "sweep", "swarm": null, "reason": "blast_radius",
                "applications": [], "message": "fuzz"}])
    } else {
        json!([])
    };
    let deletions: Vec<_> = input
        .deletions
        .iter()
        .take(8)
        .map(|d| {
            json!({
                "swarm": swarm_name(d.swarm),
                "release": format!("r{}", d.release % 6),
                "application": format!("a{}", d.application % 3),
                "reason": "departed",
                "volumes": coverage_str(d.coverage),
            })
        })
        .collect();
    let swarms: Vec<_> = input
        .swarms
        .iter()
        .take(4)
        .map(|s| {
            let nodes = s.nodes.as_ref().map(|ns| {
                ns.iter()
                    .take(4)
                    .map(|(id, host)| json!({"id": format!("n{}", id % 5), "hostname": format!("h{}", host % 3)}))
                    .collect::<Vec<_>>()
            });
            json!({
                "swarm": swarm_name(s.name),
                "names": [swarm_name(s.name)],
                "cluster_id": null,
                "readable": true,
                "node_count": s.node_count,
                "nodes": nodes,
                "coverage": "complete",
            })
        })
        .collect();
    let plan = json!({
        "controller": "fuzz",
        "purge_volumes": input.purge,
        "holds": holds,
        "deletions": deletions,
        "spared": [],
        "uncovered": [],
        "swarms": swarms,
    });
    serde_json::from_value(plan).ok()
}

/// Where a volume action runs, as a key.
fn place_key(at: &Where) -> String {
    match at {
        Where::Node(n) => format!("node:{}", n.id),
        Where::Manager => "manager".to_owned(),
    }
}

#[derive(Default)]
struct ReleaseSeen {
    /// The latest answered re-read: the step it stood before, and whether
    /// it found the release still ours on every name.
    last_read: Option<(Step, bool)>,
    /// A re-read before the records found them gone.
    records_read_gone: bool,
    /// The stack parts answered gone since the last re-read before the
    /// stack; the stack is gone when all four are.
    parts_gone: BTreeSet<StackPart>,
    stack_gone: bool,
    /// Per place: the volumes its latest successful listing named.
    listed: BTreeMap<String, BTreeSet<String>>,
    /// Per place: volumes answered removed since they were last listed.
    removed: BTreeMap<String, BTreeSet<String>>,
    records_handed: bool,
    records_gone: bool,
    /// What the latest usage read showed another workload using (object
    /// names and ids), and whether it named every volume (a template).
    shared: BTreeSet<String>,
    every_volume_shared: bool,
    /// Something of it stays for another workload: a listing after the
    /// read before the purge showed a used volume.
    kept: bool,
    /// The networks, secrets and configs a usage read after the tasks
    /// stopped (the one before them, or one before a retry) showed another
    /// workload using: each stays unless it went anyway (its removal was
    /// in flight when the read came).
    used_parts: BTreeSet<StackPart>,
    /// The stack parts handed out for removal since the last re-read
    /// before the stack.
    parts_handed: BTreeSet<StackPart>,
    /// A usage read listed a node the plan did not read, or no node list:
    /// a purge is complete no more.
    joined: bool,
}

struct Judge<'p> {
    plan: &'p SweepPlan,
    seen: BTreeMap<ReleaseRef, ReleaseSeen>,
    /// How many actions were handed out.
    handed_count: u64,
}

impl Judge<'_> {
    /// The places a purge of `swarm` must cover.
    fn places(&self, swarm: &sweep_core::SwarmName) -> BTreeSet<String> {
        match self.plan.swarm(swarm).and_then(|s| s.nodes.as_ref()) {
            Some(nodes) => nodes.iter().map(|n| format!("node:{}", n.id)).collect(),
            None => std::iter::once("manager".to_owned()).collect(),
        }
    }

    fn handed(&mut self, action: &Action) {
        self.handed_count += 1;
        assert!(!self.plan.is_held(), "action handed out for a held plan");
        let targets: Vec<&ReleaseRef> = match &action.kind {
            ActionKind::ListReleases { checking, .. } => {
                checking.iter().map(|t| &t.release).collect()
            }
            other => other.target().map(|t| &t.release).into_iter().collect(),
        };
        for t in &targets {
            assert!(
                self.plan.deletions.iter().any(|d| &d.release_ref() == *t),
                "action on a release the plan does not list: {action:?}"
            );
        }
        let Some(target) = action.kind.target() else {
            return;
        };
        let r = target.release.clone();
        let places = self.places(&r.swarm);
        let coverage = self
            .plan
            .deletions
            .iter()
            .find(|d| d.release_ref() == r)
            .map(|d| d.volumes);
        let seen = self.seen.entry(r.clone()).or_default();
        assert!(
            seen.last_read.is_none_or(|(_, ours)| ours),
            "action after a re-read found the release changed: {action:?}"
        );
        // The re-read that cleared this step, if it is destructive.
        let gate = match action.kind.step() {
            Step::RemoveStack => Some(Step::RemoveStack),
            Step::ListVolumes | Step::RemoveVolume => Some(Step::ListVolumes),
            Step::DeleteRecords => Some(Step::DeleteRecords),
            Step::ReadStamps | Step::ReadUsage | Step::ListReleases => None,
        };
        if let Some(gate) = gate {
            assert_eq!(
                seen.last_read,
                Some((gate, true)),
                "destructive step without a clearing re-read: {action:?}"
            );
        }
        match &action.kind {
            ActionKind::ReadStamps { target, .. } => {
                assert!(
                    target.names.contains(&r.swarm),
                    "re-read misses its own swarm"
                );
            }
            ActionKind::RemoveStack { part, objects, .. } => {
                for o in objects {
                    let by_id = o.id.as_ref().is_some_and(|id| seen.shared.contains(id));
                    assert!(
                        !by_id && !seen.shared.contains(&o.name),
                        "{part} {o:?} handed out though another workload uses it: {r}"
                    );
                }
                seen.parts_handed.insert(*part);
                let before: &[StackPart] = match part {
                    StackPart::Services => &[],
                    StackPart::Tasks => &[StackPart::Services],
                    _ => &[StackPart::Services, StackPart::Tasks],
                };
                for p in before {
                    assert!(
                        seen.parts_gone.contains(p),
                        "{part} handed out before the {p} went: {r}"
                    );
                }
            }
            ActionKind::ListVolumes { .. } | ActionKind::RemoveVolume { .. } => {
                assert!(self.plan.purge_volumes, "volume action without purge");
                assert!(
                    seen.stack_gone,
                    "volume action before the stack went: {action:?}"
                );
                if let ActionKind::RemoveVolume { volume, .. } = &action.kind {
                    assert!(
                        !seen.every_volume_shared && !seen.shared.contains(volume),
                        "volume {volume} handed out though another workload uses it: {r}"
                    );
                }
            }
            ActionKind::DeleteRecords { .. } => {
                assert!(seen.stack_gone, "records before the stack went: {r}");
                assert!(
                    !seen.kept && seen.used_parts.is_subset(&seen.parts_gone),
                    "records while something of it stays for another workload: {r}"
                );
                if self.plan.purge_volumes {
                    assert_ne!(
                        coverage,
                        Some(Coverage::Partial),
                        "records under partial coverage"
                    );
                    assert!(
                        !(seen.joined && coverage == Some(Coverage::Complete)),
                        "records of a complete purge after a node joined: {r}"
                    );
                    for p in &places {
                        let listed = seen.listed.get(p);
                        assert!(listed.is_some(), "records before {p} was listed: {r}");
                        let removed = seen.removed.get(p).cloned().unwrap_or_default();
                        for v in listed.into_iter().flatten() {
                            assert!(removed.contains(v), "records while {v} on {p} remains: {r}");
                        }
                    }
                }
                seen.records_handed = true;
            }
            _ => {}
        }
    }

    fn answered(&mut self, action: &Action, outcome: &Outcome) {
        let Some(target) = action.kind.target() else {
            return;
        };
        let seen = self.seen.entry(target.release.clone()).or_default();
        let ok = matches!(
            outcome,
            Outcome::Done | Outcome::Failed(sweep_core::sweep::Failure::Gone)
        );
        match &action.kind {
            ActionKind::RemoveStack { part, .. } if ok => {
                seen.parts_gone.insert(*part);
                seen.stack_gone = stack_gone(seen);
            }
            ActionKind::ReadUsage { target, .. } => {
                if let Outcome::Usage(read) = outcome {
                    let swarm = self.plan.swarm(&target.release.swarm);
                    let known = swarm.and_then(|s| s.nodes.as_ref());
                    let count = swarm.and_then(|s| s.node_count);
                    seen.joined |= match (&read.nodes, known) {
                        (None, _) => true,
                        (Some(now), Some(known)) => {
                            now.iter().any(|id| !known.iter().any(|n| &n.id == id))
                        }
                        // Read through the manager alone: more nodes than
                        // it counted.
                        (Some(now), None) => {
                            let listed: BTreeSet<&String> = now.iter().collect();
                            count.is_none_or(|c| listed.len() as u64 > c)
                        }
                    };
                    let release = target.release.release.as_str();
                    let own: BTreeSet<&str> = read
                        .stack
                        .services
                        .iter()
                        .map(|s| s.id.as_str())
                        .chain(
                            read.usage
                                .services
                                .iter()
                                .filter(|s| s.stack.as_deref() == Some(release))
                                .map(|s| s.id.as_str()),
                        )
                        .collect();
                    seen.shared.clear();
                    seen.every_volume_shared = false;
                    for s in read
                        .usage
                        .services
                        .iter()
                        .filter(|s| !own.contains(s.id.as_str()))
                    {
                        seen.shared.extend(s.networks.iter().cloned());
                        seen.shared.extend(s.secrets.iter().cloned());
                        seen.shared.extend(s.configs.iter().cloned());
                        seen.shared.extend(s.volumes.iter().cloned());
                        seen.every_volume_shared |= s.volumes.iter().any(|v| v.contains("{{"));
                    }
                    for c in read.usage.containers.iter().flat_map(|n| &n.containers) {
                        let of_release = c.service.as_deref().is_some_and(|id| own.contains(id))
                            || c.stack.as_deref() == Some(release);
                        if !of_release {
                            seen.shared.extend(c.volumes.iter().cloned());
                        }
                        // A container of no service keeps the networks it
                        // is attached to, running or stopped.
                        if c.service.is_none() {
                            seen.shared.extend(c.networks.iter().cloned());
                        }
                    }
                    // A read before the networks, secrets and configs
                    // (after the tasks), or before a retry of one: whatever
                    // it shows used stays, unless it went anyway.
                    let parts_stage = seen.last_read == Some((Step::RemoveStack, true))
                        && seen.parts_gone.contains(&StackPart::Services)
                        && seen.parts_gone.contains(&StackPart::Tasks);
                    if parts_stage {
                        let stack = &read.stack;
                        let used: Vec<StackPart> = [
                            (StackPart::Networks, &stack.networks),
                            (StackPart::Secrets, &stack.secrets),
                            (StackPart::Configs, &stack.configs),
                        ]
                        .into_iter()
                        .filter(|(_, objects)| {
                            objects.iter().any(|o| {
                                seen.shared.contains(&o.name)
                                    || o.id.as_ref().is_some_and(|id| seen.shared.contains(id))
                            })
                        })
                        .map(|(part, _)| part)
                        .collect();
                        seen.used_parts.extend(used);
                        seen.stack_gone = stack_gone(seen);
                    }
                }
            }
            ActionKind::ListVolumes { at, .. } => {
                let key = place_key(at);
                let names: BTreeSet<String> = match outcome {
                    Outcome::Volumes(v) => v.iter().cloned().collect(),
                    Outcome::Failed(sweep_core::sweep::Failure::Gone) => BTreeSet::new(),
                    _ => return,
                };
                seen.kept |= names
                    .iter()
                    .any(|v| seen.every_volume_shared || seen.shared.contains(v));
                let removed = seen.removed.entry(key.clone()).or_default();
                removed.retain(|v| !names.contains(v));
                seen.listed.insert(key, names);
            }
            ActionKind::RemoveVolume { at, volume, .. } if ok => {
                seen.removed
                    .entry(place_key(at))
                    .or_default()
                    .insert(volume.clone());
            }
            ActionKind::DeleteRecords { .. } if ok => seen.records_gone = true,
            ActionKind::ReadStamps { before, .. } => {
                if *before == Step::RemoveStack {
                    // A stack removal starts over (after a re-listing).
                    seen.parts_gone.clear();
                    seen.parts_handed.clear();
                    seen.used_parts.clear();
                }
                let ours =
                    matches!(outcome, Outcome::Stamps(_)) && *outcome == stamps(&action.kind, 0);
                seen.last_read = Some((*before, ours));
                if *before == Step::DeleteRecords && *outcome == stamps(&action.kind, 5) {
                    seen.records_read_gone = true;
                }
            }
            _ => {}
        }
    }
}

/// Whether the stack is gone, but for what another workload uses: its
/// services and their tasks went, and every other part handed out went or
/// was shown used since (a retry of a part shown used is not handed out,
/// and a part with nothing left to remove is not handed out at all).
fn stack_gone(seen: &ReleaseSeen) -> bool {
    seen.parts_gone.contains(&StackPart::Services)
        && seen.parts_gone.contains(&StackPart::Tasks)
        && seen
            .parts_handed
            .iter()
            .all(|p| seen.parts_gone.contains(p) || seen.used_parts.contains(p))
}

/// A re-read's answer under every asked name: 0 still ours, 1 another
/// application, 2 another controller, 3 malformed, 4 unstamped, 5 records
/// gone, 6 the last name left out, 7 the names disagreeing.
fn stamps(kind: &ActionKind, choice: u8) -> Outcome {
    let ActionKind::ReadStamps { target, .. } = kind else {
        return Outcome::Done;
    };
    let names = &target.names;
    let release = target.release.release.as_str();
    let app = target.application.as_str();
    let stamp = match choice % 8 {
        0 | 6 | 7 => Some(format!("cd/fuzz/{app}:release/{release}")),
        1 => Some(format!("cd/fuzz/{app}x:release/{release}")),
        2 => Some(format!("cd/other/{app}:release/{release}")),
        3 => Some(format!("cd/fuzz/{app}:release/{release}x")),
        4 => None,
        _ => {
            return Outcome::Stamps(
                names
                    .iter()
                    .map(|n| StampRead::new(n.clone(), None))
                    .collect(),
            )
        }
    };
    let mut reads: Vec<StampRead> = names
        .iter()
        .map(|n| StampRead::new(n.clone(), Some(ReleaseEntry::new(release, stamp.clone()))))
        .collect();
    match choice % 8 {
        6 => {
            reads.pop();
        }
        7 => reads.push(StampRead::new(
            target.release.swarm.clone(),
            Some(ReleaseEntry::new(
                release,
                Some(format!("cd/other/{app}:release/{release}")),
            )),
        )),
        _ => {}
    }
    Outcome::Stamps(reads)
}

fn outcome_for(kind: &ActionKind, o: &OutcomeIn) -> Outcome {
    match o {
        OutcomeIn::Success => success(kind, &[0, 1]),
        OutcomeIn::Names(names) => success(kind, names),
        OutcomeIn::Gone => Outcome::gone(),
        OutcomeIn::InUse => Outcome::in_use(),
        OutcomeIn::OwnStack => Outcome::own_stack(),
        OutcomeIn::Unreachable => Outcome::unreachable("fuzz"),
        OutcomeIn::Other => Outcome::other("fuzz"),
        OutcomeIn::WrongShape => match kind.step() {
            Step::ListVolumes | Step::ListReleases | Step::ReadStamps | Step::ReadUsage => {
                Outcome::Done
            }
            _ => Outcome::Volumes(Vec::new()),
        },
        OutcomeIn::Stamps(choice) => match kind.step() {
            Step::ReadStamps => stamps(kind, *choice),
            _ => Outcome::Stamps(Vec::new()),
        },
    }
}

/// Whether a success has the shape its action calls for.
fn fits(outcome: &Outcome, step: Step) -> bool {
    match outcome {
        Outcome::Failed(_) => true,
        Outcome::Done => matches!(
            step,
            Step::RemoveStack | Step::RemoveVolume | Step::DeleteRecords
        ),
        Outcome::Volumes(_) => step == Step::ListVolumes,
        Outcome::Releases(_) => step == Step::ListReleases,
        Outcome::Stamps(_) => step == Step::ReadStamps,
        Outcome::Usage(_) => step == Step::ReadUsage,
    }
}

/// A usage read's answer: the release's whole stack (a service, and one
/// network, secret and config), and for each byte of `names` another
/// workload that uses one of them (or a volume, or every volume through a
/// template, or a container of no service attached to its network), or
/// a container of the release's own service.
fn usage(kind: &ActionKind, names: &[u8]) -> Outcome {
    let ActionKind::ReadUsage { target, at } = kind else {
        return Outcome::Done;
    };
    let r = target.release.release.as_str();
    let stack = StackObjects::new(
        vec![ServiceEntry::new(format!("svc-{r}"), format!("{r}_web"), 1)],
        vec![ObjectRef::new(format!("net-{r}"), format!("{r}_net"))],
        vec![ObjectRef::new(format!("sec-{r}"), format!("{r}_sec"))],
        vec![ObjectRef::new(format!("cfg-{r}"), format!("{r}_cfg"))],
    );
    let mut services = vec![ServiceUse::new(format!("svc-{r}"), format!("{r}_web")).in_stack(r)];
    let mut containers: Vec<NodeContainers> = at
        .iter()
        .map(|w| NodeContainers::new(place_key(w), Vec::new()))
        .collect();
    for (i, n) in names.iter().take(4).enumerate() {
        let user = ServiceUse::new(format!("u{i}"), format!("user{i}"));
        match n % 8 {
            1 => services.push(user.with_networks([format!("net-{r}")])),
            2 => services.push(user.with_configs([format!("{r}_cfg")])),
            3 => services.push(user.with_secrets([format!("sec-{r}")])),
            4 => services.push(user.with_volumes([format!("v{}", n % 4)])),
            5 => services.push(user.with_volumes(["data-{{.Task.Slot}}"])),
            6 | 7 => {
                // The last place: every place read must count.
                if let Some(place) = containers.last_mut() {
                    let c = ContainerUse::new(
                        format!("c{i}"),
                        format!("c{i}"),
                        [format!("v{}", n % 4)],
                    );
                    // 7: a task of the release's own service, which uses
                    // nothing of it; 6 with the high bit: a container of
                    // no service attached to the release's network.
                    let c = if n % 8 == 7 {
                        c.of_service(format!("svc-{r}"))
                    } else if n & 0x80 != 0 {
                        c.with_networks([format!("net-{r}")])
                    } else {
                        c
                    };
                    place.containers.push(c);
                }
            }
            _ => {}
        }
    }
    // The manager's node list: the places asked (every node the plan
    // read), one more joined since, or unread.
    let mut nodes: Vec<String> = at
        .iter()
        .filter_map(Where::node_id)
        .map(str::to_owned)
        .collect();
    let read = UsageRead::new(stack, Usage::new(services, containers));
    match names.get(4).map(|n| n % 8) {
        Some(0) => {
            // Two: more than a swarm read through its manager alone counts.
            nodes.extend(["joined-1".to_owned(), "joined-2".to_owned()]);
            Outcome::Usage(read.with_nodes(nodes))
        }
        Some(1) => Outcome::Usage(read),
        _ => Outcome::Usage(read.with_nodes(nodes)),
    }
}

fn success(kind: &ActionKind, names: &[u8]) -> Outcome {
    match kind {
        ActionKind::ListVolumes { .. } => Outcome::Volumes(
            names
                .iter()
                .take(6)
                .map(|n| format!("v{}", n % 4))
                .collect(),
        ),
        ActionKind::ListReleases { .. } => Outcome::Releases(
            names
                .iter()
                .take(6)
                .map(|n| format!("r{}", n % 6))
                .collect(),
        ),
        ActionKind::ReadStamps { .. } => stamps(kind, 0),
        ActionKind::ReadUsage { .. } => usage(kind, names),
        _ => Outcome::Done,
    }
}

fn matches_kind(k: KindIn, a: &Action) -> bool {
    match k {
        KindIn::Any => true,
        KindIn::Stack => a.kind.step() == Step::RemoveStack,
        KindIn::List => a.kind.step() == Step::ListVolumes,
        KindIn::Volume => a.kind.step() == Step::RemoveVolume,
        KindIn::Records => a.kind.step() == Step::DeleteRecords,
        KindIn::Relist => a.kind.step() == Step::ListReleases,
        KindIn::Read => a.kind.step() == Step::ReadStamps,
        KindIn::Usage => a.kind.step() == Step::ReadUsage,
    }
}

fuzz_target!(|input: Input| {
    let Some(plan) = build_plan(&input) else {
        return;
    };
    // Traced: the trace must keep up with any order of calls.
    let settings = Settings::new(
        Duration::from_millis(u64::from(input.retry_ms)),
        Duration::from_millis(u64::from(input.settle_ms)),
    )
    .traced();
    let mut sweep = Sweep::new(&plan, settings);
    let mut judge = Judge {
        plan: &plan,
        seen: BTreeMap::new(),
        handed_count: 0,
    };
    let mut outstanding: Vec<Action> = Vec::new();
    let mut now = Timestamp::ZERO;
    // When each swarm's window closes (the earliest told): nothing of it
    // may be handed out from then on.
    let mut closes: BTreeMap<SwarmName, Timestamp> = BTreeMap::new();
    let after_close = |closes: &BTreeMap<SwarmName, Timestamp>, a: &Action, now: Timestamp| {
        let swarm = match &a.kind {
            ActionKind::ListReleases { swarm, .. } => Some(swarm),
            other => other.target().map(|t| &t.release.swarm),
        };
        if let Some(swarm) = swarm {
            assert!(
                closes.get(swarm).is_none_or(|&at| now < at),
                "{a:?} handed out at {now} after its swarm's window closed"
            );
        }
    };

    let answer = |sweep: &mut Sweep, judge: &mut Judge, action: Action, outcome: Outcome, now| {
        let fits = fits(&outcome, action.kind.step());
        let result = sweep.handle_outcome(action.id, outcome.clone(), now);
        if fits {
            assert_eq!(result, Ok(()));
            judge.answered(&action, &outcome);
            None
        } else {
            assert!(
                matches!(result, Err(SweepError::OutcomeMismatch { .. })),
                "{result:?}"
            );
            // Refused: still outstanding.
            Some(action)
        }
    };

    for op in input.ops.iter().take(2000) {
        match op {
            Op::Poll => {
                if let Some(a) = sweep.poll_action(now) {
                    after_close(&closes, &a, now);
                    judge.handed(&a);
                    outstanding.push(a);
                }
            }
            Op::Answer {
                kind,
                pick,
                outcome,
            } => {
                let candidates: Vec<usize> = (0..outstanding.len())
                    .filter(|&i| matches_kind(*kind, &outstanding[i]))
                    .collect();
                if candidates.is_empty() {
                    continue;
                }
                let i = candidates[usize::from(*pick) % candidates.len()];
                let action = outstanding.swap_remove(i);
                let o = outcome_for(&action.kind, outcome);
                if let Some(back) = answer(&mut sweep, &mut judge, action, o, now) {
                    outstanding.push(back);
                }
            }
            Op::Advance(ms) => now += Duration::from_millis(u64::from(*ms)),
            Op::Event { release, node } => {
                if let Some(d) = plan
                    .deletions
                    .get(usize::from(*release) % plan.deletions.len().max(1))
                {
                    let nodes: Vec<String> = plan
                        .swarm(&d.swarm)
                        .and_then(|s| s.nodes.as_ref())
                        .map(|n| n.iter().map(|n| n.id.clone()).collect())
                        .unwrap_or_default();
                    let node =
                        node.and_then(|i| nodes.get(usize::from(i) % nodes.len().max(1)).cloned());
                    sweep.handle_event(
                        SweepEvent::container_gone(d.swarm.clone(), node, d.release.clone()),
                        now,
                    );
                }
            }
            Op::WindowCloses { swarm, after } => {
                if let Some(s) = plan
                    .swarms
                    .get(usize::from(*swarm) % plan.swarms.len().max(1))
                {
                    let at = now + Duration::from_millis(u64::from(*after));
                    sweep.handle_window_closes(&s.swarm, at);
                    let earliest = closes.entry(s.swarm.clone()).or_insert(at);
                    *earliest = (*earliest).min(at);
                }
            }
            Op::Bogus(n) => {
                let id = ActionId(u64::from(*n));
                if !outstanding.iter().any(|a| a.id == id) {
                    let r = sweep.handle_outcome(id, Outcome::Done, now);
                    assert!(
                        matches!(
                            r,
                            Err(SweepError::UnknownAction(_) | SweepError::AlreadyAnswered(_))
                        ),
                        "{r:?}"
                    );
                }
            }
        }
        assert_eq!(sweep.outstanding(), outstanding.len());
    }

    // Finish: answer everything with success; it must end.
    let mut steps = 0u32;
    loop {
        steps += 1;
        assert!(steps < 200_000, "the sweep does not finish");
        while let Some(a) = sweep.poll_action(now) {
            after_close(&closes, &a, now);
            judge.handed(&a);
            outstanding.push(a);
        }
        if let Some(action) = outstanding.pop() {
            let o = success(&action.kind, &[]);
            let back = answer(&mut sweep, &mut judge, action, o, now);
            assert!(back.is_none());
            continue;
        }
        if sweep.is_done() {
            break;
        }
        match sweep.poll_timeout() {
            Some(t) if t > now => now = t,
            other => {
                panic!("stuck: nothing ready, nothing outstanding, timeout {other:?} at {now}")
            }
        }
    }

    // Every action handed out has its span, ended no earlier than it
    // started, in the order handed out.
    let trace = sweep.trace().expect("the settings asked for a trace");
    assert_eq!(trace.spans.len() as u64, judge.handed_count);
    for (n, span) in trace.spans.iter().enumerate() {
        assert_eq!(span.action, n as u64);
        assert!(
            span.end_us.is_some_and(|end| end >= span.start_us),
            "{span:?}"
        );
    }

    let report = sweep.report();
    for r in &report.releases {
        let seen = judge
            .seen
            .get(&ReleaseRef::new(r.swarm.clone(), r.release.clone()));
        match r.outcome {
            ReleaseOutcome::Deleted => {
                // Gone by its own records step, or found gone by the
                // re-read of a retry after a re-listing.
                assert!(
                    seen.is_some_and(|s| s.records_gone || s.records_read_gone),
                    "reported deleted without records gone"
                );
            }
            ReleaseOutcome::LeftOwnStack
            | ReleaseOutcome::PendingCoverage
            | ReleaseOutcome::InUse => {
                assert!(
                    !seen.is_some_and(|s| s.records_handed),
                    "records handed out for {}",
                    r.release
                );
            }
            ReleaseOutcome::Failed => {}
        }
    }
    let _ = report.to_json_pretty();
    let _ = sweep_core::report_text(&report);
});
