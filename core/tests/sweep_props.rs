//! Properties of the sweep over random plans, fault schedules and
//! interleavings, against the model world.

mod harness;

use std::collections::BTreeSet;
use std::time::Duration;

use harness::{Event as DriverEvent, ListingBy, NewStamp, Reach, Run, World, CONTROLLER};
use proptest::prelude::*;
use sweep_core::sweep::{
    ActionKind, ObjectKind, ObjectOutcome, ReleaseOutcome, Settings, StackPart, Sweep, SweepReport,
    Timestamp,
};
use sweep_core::{Coverage, ReleaseRef, SwarmName};

#[derive(Debug, Clone)]
enum StepFault {
    None,
    Fails(u32),
    Lies,
}

#[derive(Debug, Clone)]
struct ReleaseGen {
    departed: bool,
    own: bool,
    /// (node index, volume number, in-use count)
    volumes: Vec<(usize, u8, u32)>,
    stack: StepFault,
    records: StepFault,
    /// A part of its stack another workload's service names (0 networks,
    /// 1 secrets, 2 configs) or a container of no service is attached to
    /// since the plan (3, its network), and whether another workload's
    /// container uses its first volume.
    shared: Option<u8>,
    shared_volume: bool,
    /// Another workload starts to name its first waiting volume and its
    /// network when their removal is first refused "in use".
    named_later: bool,
    /// A container of no service is attached to its network when the
    /// network's removal is first refused "in use".
    attached_later: bool,
}

#[derive(Debug, Clone)]
struct SwarmGen {
    /// Per node: listed by the registry, unreachable, vanishes after
    /// listing, listing fails, did not answer when gathered, and is
    /// another swarm's daemon (never the manager).
    nodes: Vec<(bool, bool, bool, bool, bool, bool)>,
    reach_nodes: bool,
    count_known: bool,
    relist_fails: bool,
    /// A node joins right after the plan (`Faults::joined`).
    joined: bool,
    releases: Vec<ReleaseGen>,
}

#[derive(Debug, Clone)]
struct WorldGen {
    purge: bool,
    by_stacks: bool,
    swarms: Vec<SwarmGen>,
}

fn step_fault(faults: bool) -> BoxedStrategy<StepFault> {
    if !faults {
        return Just(StepFault::None).boxed();
    }
    prop_oneof![
        4 => Just(StepFault::None),
        1 => Just(StepFault::Lies),
        1 => prop_oneof![Just(1u32), Just(u32::MAX)].prop_map(StepFault::Fails),
    ]
    .boxed()
}

fn release_gen(faults: bool) -> impl Strategy<Value = ReleaseGen> {
    let in_use = if faults {
        prop_oneof![4 => Just(0u32), 1 => Just(1u32), 1 => Just(3u32), 1 => Just(u32::MAX)].boxed()
    } else {
        Just(0u32).boxed()
    };
    (
        prop::bool::weighted(0.8),
        if faults {
            prop::bool::weighted(0.1).boxed()
        } else {
            Just(false).boxed()
        },
        prop::collection::vec((0usize..3, 0u8..3, in_use), 0..4),
        step_fault(faults),
        step_fault(faults),
        if faults {
            prop_oneof![5 => Just(None), 1 => (0u8..4).prop_map(Some)].boxed()
        } else {
            Just(None).boxed()
        },
        if faults {
            prop::bool::weighted(0.15).boxed()
        } else {
            Just(false).boxed()
        },
        if faults {
            prop::bool::weighted(0.2).boxed()
        } else {
            Just(false).boxed()
        },
        if faults {
            prop::bool::weighted(0.1).boxed()
        } else {
            Just(false).boxed()
        },
    )
        .prop_map(
            |(
                departed,
                own,
                volumes,
                stack,
                records,
                shared,
                shared_volume,
                named_later,
                attached_later,
            )| {
                ReleaseGen {
                    departed,
                    own,
                    volumes,
                    stack,
                    records,
                    shared,
                    shared_volume,
                    named_later,
                    attached_later,
                }
            },
        )
}

fn swarm_gen(faults: bool) -> impl Strategy<Value = SwarmGen> {
    let node_fault = if faults {
        prop::bool::weighted(0.1).boxed()
    } else {
        Just(false).boxed()
    };
    (
        prop::collection::vec(
            (
                prop::bool::weighted(0.8),
                node_fault.clone(),
                node_fault.clone(),
                node_fault.clone(),
                node_fault,
                // A configuration fact, not a fault: in every world.
                prop::bool::weighted(0.15),
            ),
            1..4,
        ),
        any::<bool>(),
        prop::bool::weighted(0.8),
        if faults {
            prop::bool::weighted(0.2).boxed()
        } else {
            Just(false).boxed()
        },
        if faults {
            prop::bool::weighted(0.1).boxed()
        } else {
            Just(false).boxed()
        },
        prop::collection::vec(release_gen(faults), 1..4),
    )
        .prop_map(
            |(nodes, reach_nodes, count_known, relist_fails, joined, releases)| SwarmGen {
                nodes,
                reach_nodes,
                count_known,
                relist_fails,
                joined,
                releases,
            },
        )
}

fn world_gen(faults: bool) -> impl Strategy<Value = WorldGen> {
    (
        prop::bool::weighted(0.7),
        any::<bool>(),
        prop::collection::vec(swarm_gen(faults), 1..4),
    )
        .prop_map(|(purge, by_stacks, swarms)| WorldGen {
            purge,
            by_stacks,
            swarms,
        })
}

fn build(g: &WorldGen) -> World {
    let mut w = World::new(g.purge);
    if g.by_stacks {
        w.faults.listing_by = ListingBy::Stacks;
    }
    for (si, s) in g.swarms.iter().enumerate() {
        let name = format!("s{si}");
        let sn = SwarmName::new(name.as_str());
        let ids: Vec<String> = (0..s.nodes.len()).map(|i| format!("{name}n{i}")).collect();
        let hosts: Vec<String> = (0..s.nodes.len()).map(|i| format!("host-{i}")).collect();
        let spec: Vec<(&str, &str, bool)> = ids
            .iter()
            .zip(&hosts)
            .zip(&s.nodes)
            .map(|((id, host), n)| (id.as_str(), host.as_str(), n.0))
            .collect();
        let reach = if s.reach_nodes {
            Reach::Nodes
        } else {
            Reach::ManagerOnly
        };
        w.swarm(&name, &spec, reach, s.count_known);
        for (id, n) in ids.iter().zip(&s.nodes) {
            if n.1 {
                w.faults.unreachable.insert((sn.clone(), id.clone()));
            }
            if n.2 {
                w.faults
                    .vanish_after_listing
                    .insert((sn.clone(), id.clone()));
            }
            if n.3 {
                w.faults.list_fails.insert((sn.clone(), id.clone()));
            }
            if n.4 {
                w.unread_node(&sn, id);
            }
            if n.5 {
                w.stranger_node(&sn, id);
            }
        }
        if s.relist_fails {
            w.faults.relist_fails.insert(sn.clone());
        }
        for (ri, r) in s.releases.iter().enumerate() {
            let release = format!("r{ri}");
            let app = if r.departed {
                format!("gone{ri}")
            } else {
                let app = format!("live{si}x{ri}");
                w.live_app(&app, &name, &[release.as_str()]);
                app
            };
            let vols: Vec<(String, String)> = r
                .volumes
                .iter()
                .map(|(n, v, _)| (ids[n % ids.len()].clone(), format!("v{v}")))
                .collect();
            let vol_refs: Vec<(&str, &str)> =
                vols.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            w.release(&name, &release, &app, &vol_refs);
            if s.joined {
                let on_it = w.faults.joined.entry(sn.clone()).or_default();
                if !vols.is_empty() {
                    on_it.insert(release.clone());
                }
            }
            for ((n, v), (_, _, in_use)) in vols.iter().zip(&r.volumes) {
                if *in_use > 0 {
                    w.faults
                        .in_use
                        .insert((sn.clone(), n.clone(), format!("{release}_{v}")), *in_use);
                }
            }
            let rr = ReleaseRef::new(sn.clone(), release.clone());
            // A release whose volumes wait also has a network that waits
            // (tasks stopping hold both), for a few attempts at most so
            // that the purge after it is reached.
            if let Some(&(_, _, in_use)) = r.volumes.iter().find(|v| v.2 > 0) {
                w.faults
                    .part_in_use
                    .insert((rr.clone(), StackPart::Networks), in_use.min(3));
            }
            match r.stack {
                StepFault::None => {}
                StepFault::Fails(n) => {
                    w.faults.stack_fails.insert(rr.clone(), n);
                }
                StepFault::Lies => {
                    w.faults.stack_lies.insert(rr.clone(), 1);
                }
            }
            match r.records {
                StepFault::None => {}
                StepFault::Fails(n) => {
                    w.faults.records_fail.insert(rr.clone(), n);
                }
                StepFault::Lies => {
                    w.faults.records_lie.insert(rr.clone(), 1);
                }
            }
            match r.shared {
                None => {}
                Some(3) => {
                    w.faults.attached.insert(rr.clone());
                }
                Some(part) => {
                    let part = [StackPart::Networks, StackPart::Secrets, StackPart::Configs]
                        [usize::from(part) % 3];
                    w.faults.shared.insert(rr.clone(), [part].into());
                }
            }
            if r.attached_later {
                w.faults.attached_on_in_use.insert(rr.clone());
            }
            if let (true, Some((_, v))) = (r.shared_volume, vols.first()) {
                w.faults
                    .shared_volumes
                    .insert((sn.clone(), format!("{release}_{v}")));
            }
            if r.named_later {
                // A volume on one node only: the same name elsewhere may
                // be removed before the user appears, in an order the
                // interleaving decides.
                let waiting = vols
                    .iter()
                    .zip(&r.volumes)
                    .filter(|((_, v), _)| vols.iter().filter(|(_, w)| w == v).count() == 1)
                    .find(|(_, (_, _, in_use))| *in_use > 0);
                if let Some(((_, v), _)) = waiting {
                    w.faults
                        .named_on_in_use
                        .insert((rr.clone(), format!("{release}_{v}")));
                }
                w.faults
                    .shared_on_in_use
                    .insert(rr.clone(), [StackPart::Networks].into());
            }
            if r.own {
                if let Some(sw) = w.swarms.get_mut(&sn) {
                    sw.own_stack.get_or_insert(release.clone());
                }
            }
        }
    }
    w
}

/// A change to a release's records, by kind: another application, another
/// controller, malformed, unstamped, removed, redeployed.
fn new_stamp(kind: u8, release: &str) -> NewStamp {
    match kind % 6 {
        0 => NewStamp::Stamp(format!("cd/{CONTROLLER}/other:release/{release}")),
        1 => NewStamp::Stamp(format!("cd/cd2/gone:release/{release}")),
        2 => NewStamp::Stamp(format!("cd/{CONTROLLER}/gone:release/elsewhere")),
        3 => NewStamp::Stamp(String::new()),
        4 => NewStamp::Remove,
        _ => NewStamp::Redeploy("other".into()),
    }
}

/// Restamps: (swarm index, release index, before which re-read, kind).
fn restamps_gen() -> impl Strategy<Value = Vec<(usize, usize, u32, u8)>> {
    prop::collection::vec((0usize..4, 0usize..4, 0u32..4, any::<u8>()), 0..5)
}

/// Schedules the restamps on `w`'s releases (the indices wrap), each
/// just before one of a release's re-reads; a re-read that never comes
/// leaves the release unchanged.
fn schedule(w: &mut World, g: &WorldGen, restamps: &[(usize, usize, u32, u8)]) {
    for &(si, ri, nth, kind) in restamps {
        let si = si % g.swarms.len();
        let ri = ri % g.swarms[si].releases.len();
        let (swarm, release) = (format!("s{si}"), format!("r{ri}"));
        let to = new_stamp(kind, &release);
        w.restamp(&swarm, &release, nth, to);
    }
}

/// What the report's `objects` say agrees with the world and with the
/// rest of the report: an object said gone is gone (unless the release was
/// redeployed since); the volumes said gone
/// are exactly `volumes_deleted`; the records are said gone exactly for a
/// deleted release; a deleted release has nothing said failed; and every
/// entry is of a release the report lists.
fn objects_agree(report: &SweepReport, world: &World) -> Result<(), TestCaseError> {
    for o in &report.objects {
        let (s, name) = (o.swarm.as_str(), o.release.as_str());
        let r = report.release(&o.swarm, name);
        prop_assert!(r.is_some(), "{:?} of a release the report does not list", o);
        // A release changed under the sweep may have been redeployed
        // since: the model's redeploy brings back objects of the same ids.
        let changed = world.changed.contains(&ReleaseRef::new(s, name));
        if !o.outcome.is_gone() || changed {
            continue;
        }
        let still = match o.kind {
            ObjectKind::Service => world.has_part(s, name, StackPart::Services),
            ObjectKind::Network => world.has_part(s, name, StackPart::Networks),
            ObjectKind::Secret => world.has_part(s, name, StackPart::Secrets),
            ObjectKind::Config => world.has_part(s, name, StackPart::Configs),
            ObjectKind::Record => world.has_records(s, name),
            _ => {
                let label = o.node.as_deref().unwrap_or_default();
                let i = label.strip_prefix("host-").unwrap_or("0");
                world
                    .volumes(s, name)
                    .get(&format!("{s}n{i}"))
                    .is_some_and(|left| left.contains(&o.name))
            }
        };
        prop_assert!(!still, "{:?} said gone but still there", o);
    }
    for r in &report.releases {
        let of = |kind: ObjectKind| {
            report
                .objects
                .iter()
                .filter(move |o| o.swarm == r.swarm && o.release == r.release && o.kind == kind)
        };
        let mut volumes: Vec<(String, String)> = of(ObjectKind::Volume)
            .filter(|o| o.outcome.is_gone())
            .map(|o| (o.node.clone().unwrap_or_default(), o.name.clone()))
            .collect();
        let mut deleted: Vec<(String, String)> = r
            .volumes_deleted
            .iter()
            .flat_map(|(node, vs)| vs.iter().map(move |v| (node.clone(), v.clone())))
            .collect();
        volumes.sort();
        deleted.sort();
        prop_assert_eq!(volumes, deleted, "{}/{}", r.swarm, r.release);
        let records_gone = of(ObjectKind::Record).any(|o| o.outcome.is_gone());
        prop_assert_eq!(
            records_gone,
            r.outcome == ReleaseOutcome::Deleted,
            "{}/{}: records said gone {} for outcome {}",
            r.swarm,
            r.release,
            records_gone,
            r.outcome
        );
        if r.outcome == ReleaseOutcome::Deleted {
            let failed: Vec<_> = report
                .objects
                .iter()
                .filter(|o| o.swarm == r.swarm && o.release == r.release)
                .filter(|o| o.outcome == ObjectOutcome::Failed)
                .collect();
            prop_assert!(failed.is_empty(), "deleted, yet said failed: {:?}", failed);
        }
    }
    Ok(())
}

fn settings() -> Settings {
    Settings::default()
}

/// The most virtual time a sweep needs with instant actions. Three waits
/// follow one another, each at most a settle timeout plus a retry interval:
/// the stack's tasks stopping, its other parts (in parallel) in use, then
/// its volumes (in parallel); twice when a re-listing revives a release.
fn time_bound(s: &Settings) -> Duration {
    (s.settle_timeout + s.retry_interval) * 3 * 2
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, .. ProptestConfig::default() })]

    /// Records never go before everything else of their release, no action
    /// concerns a release the plan did not list, the run terminates, and
    /// what the report says went is gone from the model; with engine events
    /// arriving at random too (right or wrong node, right or wrong release).
    #[test]
    fn safety_holds_under_any_faults_and_interleaving(
        g in world_gen(true),
        seed in any::<u64>(),
        limit in 1usize..7,
        latency in 0u64..50,
        events in any::<bool>(),
        close in proptest::option::of((0usize..4, 0u64..3_000)),
    ) {
        let world = build(&g);
        let mut run = Run::new(world, settings(), seed, limit)
            .with_latency(Duration::from_millis(latency))
            .with_max_steps(50_000)
            .with_wake_events(events);
        // A swarm's deletion window closing at some moment of the sweep.
        let closing = close.and_then(|(i, ms)| {
            let plan = run.world.plan.as_ref()?;
            let swarm = plan.swarms.get(i)?.swarm.clone();
            Some((swarm, Timestamp::ZERO + Duration::from_millis(ms)))
        });
        if let Some((swarm, at)) = &closing {
            run.sweep.handle_window_closes(swarm, *at);
        }
        let report = run.drive();
        prop_assert!(report.is_ok(), "{:?}", report);
        let report = report.unwrap_or_else(|_| unreachable!());
        prop_assert!(run.world.violations.is_empty(), "{:#?}", run.world.violations);
        if let Some((swarm, at)) = &closing {
            for e in &run.events {
                if let DriverEvent::Handed(when, kind) = e {
                    let there = match kind {
                        ActionKind::ListReleases { swarm: s, .. } => s == swarm,
                        other => other.target().is_some_and(|t| &t.release.swarm == swarm),
                    };
                    prop_assert!(!there || when < at, "{:?} handed out at {:?}, after the window closed at {:?}", kind, when, at);
                }
            }
        }
        let plan = run.world.plan.clone().unwrap_or_else(|| unreachable!());
        prop_assert_eq!(report.releases.len(), plan.deletions.len());
        objects_agree(&report, &run.world)?;
        for r in &report.releases {
            let (s, name) = (r.swarm.as_str(), r.release.as_str());
            let lied = run.world.faults.records_lie.contains_key(&ReleaseRef::new(s, name));
            // What another workload uses is never removed (the world
            // flags it), and a release that shares something never goes
            // whole: its records stay with what is shared.
            // A user that appears while a removal waits on "in use" counts
            // from then on: the retry is judged again.
            let rref = ReleaseRef::new(s, name);
            let shares = run.world.shares(&rref);
            prop_assert!(!(shares && r.outcome == ReleaseOutcome::Deleted), "{}/{} deleted though shared", s, name);
            match r.outcome {
                ReleaseOutcome::Deleted => {
                    prop_assert!(!run.world.has_stack(s, name));
                    prop_assert!(!run.world.has_records(s, name));
                    if g.purge {
                        prop_assert!(run.world.reached_volumes(&r.swarm, name).is_empty());
                        // A node that did not answer when gathered is not
                        // covered: its volumes keep the release's records.
                        prop_assert!(!run.world.has_unread_volumes(&r.swarm, name), "{}/{} deleted with volumes on an unread node", s, name);
                    }
                }
                // The records, which let a later sweep find it, are kept
                // (unless the model removed them while saying it had not).
                _ if !lied => prop_assert!(run.world.has_records(s, name), "{}/{} lost its records", s, name),
                _ => {}
            }
            let held = run.world.volumes(s, name);
            for (label, vols) in &r.volumes_deleted {
                // Node labels are `host-<i>`, or `(manager)` for node 0.
                let i = label.strip_prefix("host-").unwrap_or("0");
                let id = format!("{s}n{i}");
                for v in vols {
                    prop_assert!(
                        !held.get(&id).is_some_and(|left| left.contains(v)),
                        "{} on {} reported deleted but still held", v, id
                    );
                }
            }
        }
    }

    /// Under random restamp schedules (another application or controller,
    /// a malformed or missing stamp, records removed, a redeploy, each just
    /// before one of a release's re-reads) and faults: nothing is removed
    /// from a release after its stamp stopped being ours for the planned
    /// application (the world flags any such removal as a violation), its
    /// records stay unless the change removed them, and the report says
    /// why it was left alone.
    #[test]
    fn nothing_is_removed_after_the_stamp_stopped_being_ours(
        g in world_gen(true),
        restamps in restamps_gen(),
        seed in any::<u64>(),
        limit in 1usize..7,
        latency in 0u64..50,
    ) {
        let mut world = build(&g);
        schedule(&mut world, &g, &restamps);
        let mut run = Run::new(world, settings(), seed, limit)
            .with_latency(Duration::from_millis(latency))
            .with_max_steps(50_000);
        let report = run.drive();
        prop_assert!(report.is_ok(), "{:?}", report);
        let report = report.unwrap_or_else(|_| unreachable!());
        prop_assert!(run.world.violations.is_empty(), "{:#?}", run.world.violations);
        objects_agree(&report, &run.world)?;
        for r in &report.releases {
            let rr = ReleaseRef::new(r.swarm.clone(), r.release.clone());
            let stamped = r.errors.iter().any(|e| e.stamp.is_some());
            if !run.world.changed.contains(&rr) {
                prop_assert!(!stamped, "{:?} was not changed: {:?}", rr, r.errors);
                continue;
            }
            let (s, name) = (r.swarm.as_str(), r.release.as_str());
            if run.world.has_records(s, name) {
                prop_assert_eq!(r.outcome, ReleaseOutcome::Failed);
                prop_assert!(stamped, "{:?} left alone untyped: {:?}", rr, r.errors);
            } else {
                // Removed by the change: left alone, or, on the retry of a
                // records step whose error was for work that worked, done.
                prop_assert!(
                    stamped || r.outcome == ReleaseOutcome::Deleted,
                    "{:?}: {:?}", rr, r
                );
            }
        }
    }

    /// A plan held as a whole hands out nothing.
    #[test]
    fn held_plan_hands_out_nothing(g in world_gen(true), t in any::<u32>()) {
        let mut world = build(&g);
        world.app_set_loaded = false;
        let plan = world.plan();
        prop_assert!(plan.is_held());
        let mut sweep = Sweep::new(&plan, settings());
        prop_assert!(sweep.is_done());
        prop_assert_eq!(sweep.poll_action(Timestamp::from_millis(u64::from(t))), None);
        prop_assert_eq!(sweep.poll_timeout(), None);
        prop_assert!(sweep.report().releases.is_empty());
    }

    /// Without faults everything planned goes: stack, records (unless the
    /// purge could not cover every node) and volumes on every reached node.
    #[test]
    fn without_faults_everything_planned_is_gone(
        g in world_gen(false),
        seed in any::<u64>(),
        limit in 1usize..7,
    ) {
        let mut run = Run::new(build(&g), settings(), seed, limit);
        let report = run.finish();
        let plan = run.world.plan.clone().unwrap_or_else(|| unreachable!());
        for d in &plan.deletions {
            let (s, name) = (d.swarm.as_str(), d.release.as_str());
            prop_assert!(!run.world.has_stack(s, name));
            if g.purge {
                prop_assert!(run.world.reached_volumes(&d.swarm, name).is_empty());
            }
            let pending = g.purge && d.volumes == Coverage::Partial;
            prop_assert_eq!(run.world.has_records(s, name), pending);
            let r = report.release(&d.swarm, name).cloned();
            let expected = if pending { ReleaseOutcome::PendingCoverage } else { ReleaseOutcome::Deleted };
            prop_assert_eq!(r.map(|r| r.outcome), Some(expected));
        }
        prop_assert!(!report.failed());
        prop_assert_eq!(report.all_done(), report.uncovered.is_empty() && report.totals.pending_coverage == 0);
    }

    /// The same plan, fault schedule and seed give the same report, byte
    /// for byte, and the same actions.
    #[test]
    fn same_plan_faults_and_seed_give_the_same_report(
        g in world_gen(true),
        seed in any::<u64>(),
        limit in 1usize..7,
        latency in 0u64..50,
    ) {
        let go = || {
            let mut run = Run::new(build(&g), settings(), seed, limit)
                .with_latency(Duration::from_millis(latency));
            let report = run.finish();
            (report.to_json_pretty(), format!("{:?}", run.handed()))
        };
        prop_assert_eq!(go(), go());
    }

    /// With instant actions the report does not even depend on the order
    /// actions complete in or on how many run at once.
    #[test]
    fn report_does_not_depend_on_interleaving(
        g in world_gen(true),
        seeds in (any::<u64>(), any::<u64>()),
        limits in (1usize..7, 1usize..7),
    ) {
        let go = |seed, limit| {
            let mut run = Run::new(build(&g), settings(), seed, limit);
            run.finish().to_json_pretty()
        };
        prop_assert_eq!(go(seeds.0, limits.0), go(seeds.1, limits.1));
    }

    /// Virtual time stays within the settle timeout (twice, when a
    /// re-listing revives a release) plus a retry interval, and a driver
    /// never waits on a deadline with nothing to do at it.
    #[test]
    fn virtual_time_stays_bounded(
        g in world_gen(true),
        seed in any::<u64>(),
        limit in 1usize..7,
        latency in 0u64..20,
    ) {
        let s = settings();
        let mut run = Run::new(build(&g), s, seed, limit)
            .with_latency(Duration::from_millis(latency));
        let _ = run.finish();
        let busy = Duration::from_millis(latency) * run.steps as u32;
        let bound = Timestamp::ZERO + time_bound(&s) + busy;
        prop_assert!(run.now <= bound, "ran to {} past {}", run.now, bound);
    }

    /// The trace records the sweep's own clock and changes nothing: the
    /// same world, seed and limit traced and untraced hand out the same
    /// actions and give the same report; every action handed out has one
    /// span, in order, started at the time it was handed out and ended at
    /// a time the driver gave (never before its start); every event is
    /// marked at a time the driver gave.
    #[test]
    fn the_trace_keeps_the_drivers_time_and_changes_nothing(
        g in world_gen(true),
        seed in any::<u64>(),
        limit in 1usize..7,
        latency in 0u64..50,
        events in any::<bool>(),
    ) {
        let run = |settings: Settings| {
            let mut run = Run::new(build(&g), settings, seed, limit)
                .with_latency(Duration::from_millis(latency))
                .with_max_steps(50_000)
                .with_wake_events(events);
            let report = run.drive();
            (run, report)
        };
        let (plain, plain_report) = run(settings());
        let (traced, traced_report) = run(settings().traced());
        prop_assert!(traced_report.is_ok(), "{:?}", traced_report);
        prop_assert!(plain_report.is_ok(), "{:?}", plain_report);
        prop_assert_eq!(plain_report.ok(), traced_report.ok());
        prop_assert_eq!(plain.handed(), traced.handed());
        prop_assert!(plain.sweep.trace().is_none());
        let trace = traced.sweep.trace().cloned().unwrap_or_default();

        let micros = |t: Timestamp| t.since_epoch().as_micros() as u64;
        let given: BTreeSet<u64> = traced
            .events
            .iter()
            .map(|e| match e {
                DriverEvent::Handed(t, _) | DriverEvent::Answered(t, _) => micros(*t),
            })
            .collect();
        let handed: Vec<(u64, &ActionKind)> = traced
            .events
            .iter()
            .filter_map(|e| match e {
                DriverEvent::Handed(t, k) => Some((micros(*t), k)),
                DriverEvent::Answered(..) => None,
            })
            .collect();
        prop_assert_eq!(trace.spans.len(), handed.len());
        for (n, (span, (at, kind))) in trace.spans.iter().zip(&handed).enumerate() {
            prop_assert_eq!(span.action, n as u64);
            prop_assert_eq!(span.step, kind.step());
            prop_assert_eq!(span.part, kind.part());
            prop_assert_eq!(&span.swarm, kind.swarm());
            prop_assert_eq!(span.start_us, *at);
            prop_assert!((1..=limit).contains(&span.in_flight), "{:?}", span);
            // The sweep ran to the end: every action started has ended.
            let end = span.end_us;
            prop_assert!(end.is_some_and(|e| e >= span.start_us && given.contains(&e)), "{:?}", span);
            prop_assert!(span.outcome.is_some(), "{:?}", span);
        }
        for mark in &trace.events {
            prop_assert!(given.contains(&mark.at_us), "{:?}", mark);
        }
    }
}
