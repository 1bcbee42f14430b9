//! Relations the planner must keep between runs, over generated snapshots.
//!
//! Names come from tiny pools on purpose: the dangerous inputs are the ones
//! where release names collide across swarms, swarm names alias one
//! cluster, and stamps name applications that exist elsewhere.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use proptest::prelude::*;
use sweep_core::explain::explain;
use sweep_core::reads::{FailedRead, Listing, UnreadNode};
use sweep_core::saved::{check, Change, ReleaseChange, SavedPlan};
use sweep_core::{
    plan, AppSet, AppState, Application, ControllerId, HoldReason, NodeEntry, NodeVolumes,
    ObjectVersion, Ownership, Policy, ReleaseEntry, ReleaseRef, ServiceEntry, Snapshot,
    SpareReason, StackObjects, SwarmName, SwarmSnapshot, SweepPlan,
};
use sweep_core::{Coverage, GraceState, UnixTime};

const SWARMS: &[&str] = &["", "alpha", "beta", "gamma"];
/// Destinations an application may name: the swarms, and a typo of one
/// that no snapshot lists.
const DESTINATIONS: &[&str] = &["", "alpha", "beta", "gamma", "alpah"];
const RELEASES: &[&str] = &["web", "db", "api", "edge"];
const APPS: &[&str] = &["shop", "blog", "edge", "ops"];

fn stamp() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        3 => (prop::sample::select(APPS), any::<bool>()).prop_map(|(a, _)| Some(format!("cd/default/{a}:release/{{}}"))),
        1 => Just(None),
        1 => prop::sample::select(APPS).prop_map(|a| Some(format!("cd/other/{a}:release/{{}}"))),
        1 => Just(Some("cd/default/shop:release/copied".to_owned())),
        1 => Just(Some("garbage".to_owned())),
    ]
}

/// What a gatherer observed beside the stamp: a record version, a service
/// version and the service's keep label, or nothing (an embedder's
/// snapshot).
type Facts = Option<(u64, u64, Option<&'static str>)>;

fn facts() -> impl Strategy<Value = Facts> {
    prop::option::weighted(
        0.8,
        (
            1u64..3,
            1u64..3,
            prop::option::weighted(0.15, prop::sample::select(&["true", "false", "yes"][..])),
        ),
    )
}

fn swarm_snapshot() -> impl Strategy<Value = SwarmSnapshot> {
    (
        prop::sample::select(SWARMS),
        prop::option::weighted(0.8, prop::sample::select(&["C1", "C2", "C3"][..])),
        prop::option::weighted(0.15, Just("unreachable".to_owned())),
        prop::collection::btree_map(prop::sample::select(RELEASES), (stamp(), facts()), 0..4),
        prop::option::of(prop::collection::btree_set(0u8..4, 0..4)),
        prop::option::of(0u64..5),
        prop::option::weighted(0.3, prop::sample::select(RELEASES)),
        prop::option::of(prop::collection::btree_set(0u8..5, 0..5)),
    )
        .prop_map(
            |(name, cluster, error, releases, nodes, count, own, members)| {
                let mut s = SwarmSnapshot::new(name);
                s.cluster_id = cluster.map(str::to_owned);
                s.error = error;
                s.releases = releases
                    .into_iter()
                    .map(|(r, (stamp, facts))| {
                        let entry = ReleaseEntry::new(r, stamp.map(|s| s.replace("{}", r)));
                        match facts {
                            Some((record, service, keep)) => {
                                let mut svc = ServiceEntry::new(
                                    format!("svc-{r}"),
                                    format!("{r}_app"),
                                    service,
                                );
                                if let Some(k) = keep {
                                    svc = svc.with_keep(k);
                                }
                                entry
                                    .with_records(vec![ObjectVersion::new(
                                        format!("rec-{r}"),
                                        record,
                                    )])
                                    .with_objects(StackObjects::new(
                                        vec![svc],
                                        vec![],
                                        vec![],
                                        vec![],
                                    ))
                            }
                            None => entry,
                        }
                    })
                    .collect();
                s.nodes = nodes.map(|ids| {
                    ids.into_iter()
                        .map(|i| NodeEntry::new(format!("{name}-n{i}"), format!("host{i}")))
                        .collect()
                });
                s.node_count = count;
                s.members = members.map(|ids| {
                    ids.into_iter()
                        .map(|i| NodeEntry::new(format!("{name}-n{i}"), format!("host{i}")))
                        .collect()
                });
                s.self_stack = own.map(str::to_owned);
                s
            },
        )
}

fn application() -> impl Strategy<Value = Application> {
    (
        prop::sample::select(DESTINATIONS),
        prop::option::weighted(0.9, prop::collection::btree_set(prop::sample::select(RELEASES), 0..3)),
        prop_oneof![8 => Just(AppState::Reconciled), 1 => Just(AppState::Unreconciled), 1 => Just(AppState::Draining)],
    )
        .prop_map(|(swarm, releases, state)| {
            Application::new(
                "",
                swarm,
                releases.map(|r| r.into_iter().map(str::to_owned).collect()),
                state,
            )
        })
}

fn snapshot() -> impl Strategy<Value = Snapshot> {
    (
        any::<bool>(),
        prop::option::weighted(0.2, 0u64..4),
        prop::option::weighted(0.95, Just(true)),
        prop::collection::btree_map(prop::sample::select(APPS), application(), 0..4),
        prop::collection::btree_map(prop::sample::select(SWARMS), swarm_snapshot(), 1..5),
    )
        .prop_map(|(purge, max, loaded, apps, swarms)| {
            let applications = apps
                .into_iter()
                .map(|(name, mut a)| {
                    a.name = name.to_owned();
                    a
                })
                .collect();
            let swarms = swarms
                .into_iter()
                .map(|(name, mut s)| {
                    s.swarm = SwarmName::new(name);
                    s
                })
                .collect();
            Snapshot::new(
                Policy::new("default", purge, max),
                AppSet::new(loaded.is_some(), applications),
                swarms,
            )
        })
}

/// Swarms whose snapshots share a cluster id count as one: the plan `p`
/// (of a snapshot with the same swarm entries) lists them as one cluster.
/// A name the snapshot does not list is a swarm of its own.
fn same_swarm(p: &SweepPlan, a: &SwarmName, b: &SwarmName) -> bool {
    let canonical = |n: &SwarmName| p.cluster_of(n).map_or(n.clone(), |g| g.swarm.clone());
    canonical(a) == canonical(b)
}

/// Whether the snapshot lists a swarm entry named `name`.
fn listed(s: &Snapshot, name: &SwarmName) -> bool {
    s.swarms.iter().any(|sw| &sw.swarm == name)
}

/// How much of a swarm a deletion's purge covers, more is higher.
fn rank(c: Coverage) -> u8 {
    match c {
        Coverage::NodeLocal => 0,
        Coverage::Partial => 1,
        Coverage::Complete => 2,
        _ => 3,
    }
}

fn json(p: &SweepPlan) -> String {
    p.to_json_pretty()
}

/// The snapshot after a plan was carried out: its deletions are gone under
/// every name of their cluster.
fn after(s: &Snapshot, p: &SweepPlan) -> Snapshot {
    let mut next = s.clone();
    for sw in &mut next.swarms {
        let name = sw.swarm.clone();
        sw.releases.retain(|r| {
            !p.deletions
                .iter()
                .any(|d| d.release == r.name && same_swarm(p, &d.swarm, &name))
        });
    }
    next
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_deletes_a_release_declared_on_its_swarm(s in snapshot()) {
        let p = plan(&s).unwrap();
        for d in &p.deletions {
            for a in s.app_set.applications.iter().filter(|a| a.is_live()) {
                let declares = a.releases.iter().flatten().any(|r| *r == d.release);
                prop_assert!(!(declares && same_swarm(&p, &a.swarm, &d.swarm)),
                    "{} is declared by {} on {}", d.release_ref(), a.name, a.swarm);
            }
        }
    }

    #[test]
    fn deletes_only_ours_unheld_and_not_self(s in snapshot()) {
        let p = plan(&s).unwrap();
        let ctl = ControllerId::new("default").unwrap();
        if !p.deletions.is_empty() {
            prop_assert!(s.app_set.loaded);
            prop_assert!(s.app_set.applications.iter().any(|a| a.is_live()));
            prop_assert!(!p.is_held());
        }
        for d in &p.deletions {
            prop_assert!(!p.holds.iter().any(|h| h.swarm.is_none() || h.swarm.as_ref() == Some(&d.swarm)));
            for sw in s.swarms.iter().filter(|sw| same_swarm(&p, &sw.swarm, &d.swarm)) {
                prop_assert!(sw.error.is_none(), "{} is on an unreadable swarm", d.release_ref());
                prop_assert_ne!(sw.self_stack.as_deref(), Some(d.release.as_str()));
                if let Some(r) = sw.releases.iter().find(|r| r.name == d.release) {
                    prop_assert_eq!(
                        ctl.classify(r.owner.as_deref(), &r.name),
                        Ownership::Ours { application: d.application.clone() }
                    );
                }
            }
            // An application that has not reconciled never loses a release.
            prop_assert!(!s.app_set.applications.iter().any(|a| a.is_live()
                && !a.has_reconciled() && a.name == d.application));
            // The owner is not live on this swarm.
            prop_assert!(!s.app_set.applications.iter().any(|a| a.is_live()
                && a.name == d.application && same_swarm(&p, &a.swarm, &d.swarm)));
        }
    }

    /// Changing what applications declare on one readable swarm changes
    /// nothing on a swarm that is not the same cluster, even where names
    /// collide. (A declaration toward a swarm the snapshot does not list,
    /// or one that could not be read, whose cluster nothing shows, spares
    /// its release names everywhere: see
    /// `an_unknown_destination_never_causes_a_deletion`.)
    #[test]
    fn declarations_on_one_swarm_never_touch_another(
        s in snapshot(),
        target in prop::sample::select(SWARMS),
        declared in prop::collection::btree_set(prop::sample::select(RELEASES), 0..4),
    ) {
        let mut s = s;
        s.policy.max_deletions = None;
        let target = SwarmName::new(target);
        // Early return rather than a rejection: at many cases, rejections
        // run out before the cases do.
        if !listed(&s, &target) {
            return Ok(());
        }
        let before = plan(&s).unwrap();
        // Its cluster, as the plan reads it: every name of it read.
        let readable = before
            .swarms
            .iter()
            .any(|sw| sw.names.contains(&target) && sw.readable);
        if !readable {
            return Ok(());
        }
        let mut changed = s.clone();
        for a in &mut changed.app_set.applications {
            if a.swarm == target && a.releases.is_some() {
                a.releases = Some(declared.iter().map(|r| (*r).to_owned()).collect());
            }
        }
        let after = plan(&changed).unwrap();
        let elsewhere = |p: &SweepPlan| -> (Vec<String>, Vec<String>) {
            (
                p.deletions.iter().filter(|d| !same_swarm(p, &d.swarm, &target)).map(|d| d.release_ref().to_string()).collect(),
                p.spared.iter().filter(|x| !same_swarm(p, &x.swarm, &target)).map(|x| format!("{}/{}:{:?}", x.swarm, x.release, x.reason)).collect(),
            )
        };
        prop_assert_eq!(elsewhere(&before), elsewhere(&after));
    }

    /// A failed listing recorded for a swarm never adds a deletion; one
    /// the planner's rule counts as making the swarm unreadable takes every
    /// deletion on that swarm's cluster away, whatever else was read.
    #[test]
    fn a_failed_read_only_ever_spares(
        s in snapshot(),
        index in any::<prop::sample::Index>(),
        listing in prop::sample::select(Listing::ALL),
    ) {
        if s.swarms.is_empty() {
            return Ok(());
        }
        // The blast-radius guard counts deletions over the whole sweep: a
        // swarm held for its read lowers the count, which may lift the
        // guard for the others. That is the guard's rule, not this one's.
        let mut s = s;
        s.policy.max_deletions = None;
        let i = index.index(s.swarms.len());
        let name = s.swarms[i].swarm.clone();
        let mut failed = s.clone();
        failed.swarms[i].failed_reads.push(FailedRead::new(listing, "no answer"));
        let before = plan(&s).unwrap();
        let after = plan(&failed).unwrap();
        let deleted = |p: &SweepPlan| -> BTreeSet<String> {
            p.deletions.iter().map(|d| d.release_ref().to_string()).collect()
        };
        prop_assert!(deleted(&after).is_subset(&deleted(&before)));
        if listing.makes_unreadable() {
            prop_assert!(!after.deletions.iter().any(|d| same_swarm(&after, &d.swarm, &name)));
        }
    }

    /// A reached node recorded as unread never adds a deletion and never
    /// raises a deletion's volume coverage: it counts as not reached.
    #[test]
    fn an_unread_node_only_ever_lowers_coverage(
        s in snapshot(),
        index in any::<prop::sample::Index>(),
    ) {
        let reached: Vec<(usize, String)> = s
            .swarms
            .iter()
            .enumerate()
            .flat_map(|(i, sw)| sw.nodes.iter().flatten().map(move |n| (i, n.id.clone())))
            .collect();
        // A snapshot without node reach has no node to leave unread.
        if reached.is_empty() {
            return Ok(());
        }
        let (i, id) = reached[index.index(reached.len())].clone();
        // As above: the whole-sweep guard is not this rule's.
        let mut s = s;
        s.policy.max_deletions = None;
        let mut unread = s.clone();
        unread.swarms[i].unread_nodes.push(UnreadNode::new(id, "timed out"));
        let before = plan(&s).unwrap();
        let after = plan(&unread).unwrap();
        let coverage = |p: &SweepPlan| -> BTreeMap<String, Coverage> {
            p.deletions.iter().map(|d| (d.release_ref().to_string(), d.volumes)).collect()
        };
        let (b, a) = (coverage(&before), coverage(&after));
        for (release, c) in &a {
            let was = b.get(release);
            prop_assert!(was.is_some(), "{} deleted only once a node went unread", release);
            prop_assert!(rank(*c) <= rank(*was.unwrap()), "{}: {:?} after {:?}", release, c, was);
        }
    }

    /// Another swarm's daemon that a registry reaches as if it were one of
    /// this swarm's nodes (its id is not on the manager's node list) changes
    /// nothing: not what is deleted, not the coverage, not the nodes named,
    /// whether or not it answered for its volumes.
    #[test]
    fn a_daemon_off_the_node_list_changes_nothing(
        s in snapshot(),
        index in any::<prop::sample::Index>(),
        unread in any::<bool>(),
    ) {
        let listed: Vec<usize> = s
            .swarms
            .iter()
            .enumerate()
            .filter(|(_, sw)| sw.nodes.is_some() && sw.members.is_some())
            .map(|(i, _)| i)
            .collect();
        if listed.is_empty() {
            return Ok(());
        }
        let i = listed[index.index(listed.len())];
        let mut with = s.clone();
        let sw = &mut with.swarms[i];
        sw.nodes.as_mut().unwrap().push(NodeEntry::new("stranger-node", "elsewhere"));
        if unread {
            sw.unread_nodes.push(UnreadNode::new("stranger-node", "not a node of this swarm"));
        }
        prop_assert_eq!(plan(&s).unwrap().to_json_pretty(), plan(&with).unwrap().to_json_pretty());
    }

    #[test]
    fn any_order_of_the_input_gives_the_same_plan(s in snapshot(), seed in any::<u64>()) {
        let mut shuffled = s.clone();
        let mut rng = seed;
        let mut next = move || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; rng };
        fn shuffle<T>(v: &mut [T], next: &mut impl FnMut() -> u64) {
            for i in (1..v.len()).rev() {
                let j = (next() % (i as u64 + 1)) as usize;
                v.swap(i, j);
            }
        }
        shuffle(&mut shuffled.app_set.applications, &mut next);
        for a in &mut shuffled.app_set.applications {
            if let Some(r) = &mut a.releases { shuffle(r, &mut next); }
        }
        shuffle(&mut shuffled.swarms, &mut next);
        for sw in &mut shuffled.swarms {
            shuffle(&mut sw.releases, &mut next);
            if let Some(n) = &mut sw.nodes { shuffle(n, &mut next); }
            if let Some(m) = &mut sw.members { shuffle(m, &mut next); }
            shuffle(&mut sw.failed_reads, &mut next);
        }
        prop_assert_eq!(json(&plan(&s).unwrap()), json(&plan(&shuffled).unwrap()));
    }

    /// Coverage is never claimed complete without every counted node, and
    /// every listed node, reached.
    #[test]
    fn complete_coverage_is_never_claimed_without_proof(s in snapshot()) {
        let p = plan(&s).unwrap();
        for d in p.deletions.iter().filter(|d| d.volumes == sweep_core::Coverage::Complete) {
            let g = p.swarm(&d.swarm).unwrap();
            let count = g.node_count.expect("complete needs a known count");
            match &g.nodes {
                None => prop_assert_eq!(count, 1),
                Some(nodes) => {
                    prop_assert_eq!(nodes.len() as u64, count);
                    prop_assert!(g.unreached.as_ref().is_none_or(|u| u.is_empty()));
                }
            }
        }
    }

    /// An application whose destination no swarm of the snapshot has (a
    /// typo, an unlisted swarm, the local swarm when it is not listed)
    /// proves nothing about where it runs: none of its releases is deleted
    /// anywhere, a hold names the destination, and that hold stops no
    /// swarm of the snapshot.
    #[test]
    fn an_unknown_destination_never_causes_a_deletion(s in snapshot()) {
        let mut s = s;
        s.policy.max_deletions = None;
        let p = plan(&s).unwrap();
        let unknown: Vec<&Application> = s
            .app_set
            .applications
            .iter()
            .filter(|a| !listed(&s, &a.swarm))
            .collect();
        for a in &unknown {
            prop_assert!(
                !p.deletions.iter().any(|d| d.application == a.name),
                "{} targets {:?}, not in the snapshot, and lost a release: {:?}", a.name, a.swarm, p.deletions
            );
            prop_assert!(p.holds.iter().any(|h| h.reason == HoldReason::UnknownDestination
                && h.swarm.as_ref() == Some(&a.swarm)
                && h.scope == a.swarm.as_str()
                && h.applications.contains(&a.name)));
        }
        for h in p.holds.iter().filter(|h| h.reason == HoldReason::UnknownDestination) {
            prop_assert!(h.swarm.as_ref().is_some_and(|w| !listed(&s, w)), "{h:?}");
        }
        // What they declare only ever spares: with them declaring
        // nothing, everything else this plan deletes is still deleted.
        let known_only = |p: &SweepPlan| -> BTreeSet<String> {
            p.deletions.iter().filter(|d| !unknown.iter().any(|a| a.name == d.application)).map(|d| d.release_ref().to_string()).collect()
        };
        let mut declaring_nothing = s.clone();
        for a in &mut declaring_nothing.app_set.applications {
            if !listed(&s, &a.swarm) && a.releases.is_some() {
                a.releases = Some(Vec::new());
            }
        }
        let other = plan(&declaring_nothing).unwrap();
        prop_assert!(known_only(&p).is_subset(&known_only(&other)));
    }

    #[test]
    fn planning_after_carrying_out_a_plan_deletes_nothing(s in snapshot()) {
        let p = plan(&s).unwrap();
        let again = plan(&after(&s, &p)).unwrap();
        prop_assert!(again.deletions.is_empty(), "second plan: {:?}", again.deletions);
    }

    /// Removing an application that is still live can only add deletions
    /// for its own releases; it never spares something that was deleted.
    #[test]
    fn a_live_application_never_causes_a_deletion(s in snapshot(), drop in prop::sample::select(APPS)) {
        let mut s = s;
        s.policy.max_deletions = None;
        let mut without = s.clone();
        without.app_set.applications.retain(|a| a.name != drop);
        // An app set with nothing live is held whole: nothing to compare.
        if !without.app_set.applications.iter().any(|a| a.is_live()) {
            return Ok(());
        }
        let with: BTreeSet<String> = plan(&s).unwrap().deletions.iter().map(|d| d.release_ref().to_string()).collect();
        let wo: BTreeSet<String> = plan(&without).unwrap().deletions.iter().map(|d| d.release_ref().to_string()).collect();
        prop_assert!(with.is_subset(&wo), "with {drop}: {with:?}, without: {wo:?}");
    }

    /// A release a service of which carries the keep label with any value
    /// but `false` is never deleted.
    #[test]
    fn a_kept_release_is_never_deleted(s in snapshot()) {
        let p = plan(&s).unwrap();
        for d in &p.deletions {
            for sw in s.swarms.iter().filter(|sw| same_swarm(&p, &sw.swarm, &d.swarm)) {
                let kept = sw.releases.iter().filter(|r| r.name == d.release)
                    .flat_map(|r| r.objects.iter().flat_map(|o| &o.services))
                    .any(|svc| svc.keep.as_deref().is_some_and(|k| k != "false"));
                prop_assert!(!kept, "deleted {} though kept on {}", d.release_ref(), sw.swarm);
            }
        }
    }

    /// A saved plan checked against the very snapshot it was made from is
    /// applied with exactly its deletions, or refused only for deletions
    /// nothing proves unchanged.
    #[test]
    fn a_saved_plan_of_an_unchanged_snapshot_applies_exactly(s in snapshot()) {
        let p = plan(&s).unwrap();
        let saved = SavedPlan::new(&s, p.clone(), "t");
        let unproven: BTreeSet<ReleaseRef> = p.deletions.iter()
            .filter(|d| d.observed.is_none())
            .map(|d| d.release_ref())
            .collect();
        match check(&saved, &s, "t").unwrap() {
            Ok(approved) => {
                prop_assert!(unproven.is_empty());
                prop_assert_eq!(&approved.plan.deletions, &p.deletions);
                prop_assert!(approved.unreviewed.is_empty());
            }
            Err(stale) => {
                // A swarm without a cluster id proves no identity either.
                let anonymous: BTreeSet<SwarmName> = s.swarms.iter()
                    .filter(|sw| sw.cluster_id.is_none())
                    .map(|sw| sw.swarm.clone())
                    .collect();
                let mut named = BTreeSet::new();
                for c in &stale.changes {
                    match c {
                        Change::Release { release, change: ReleaseChange::Unproven } => {
                            named.insert(release.clone());
                        }
                        Change::Cluster { swarm, planned: None, .. } if anonymous.contains(swarm) => {}
                        other => return Err(TestCaseError::fail(format!("{other}"))),
                    }
                }
                prop_assert_eq!(named, unproven);
            }
        }
    }

    /// Whatever changed between the saved plan and now, what is applied is
    /// never more than the saved deletions, and a change to a deleted
    /// release's records refuses the whole plan.
    #[test]
    fn a_saved_plan_never_applies_more_than_it_holds(s in snapshot(), t in snapshot(), bump in any::<prop::sample::Index>()) {
        let p = plan(&s).unwrap();
        let saved = SavedPlan::new(&s, p.clone(), "t");
        if let Ok(approved) = check(&saved, &t, "t").unwrap() {
            for d in &approved.plan.deletions {
                prop_assert!(p.deletions.contains(d), "{} was not in the saved plan", d.release_ref());
            }
        }
        // Restamp one planned release under every name of its cluster.
        if p.deletions.is_empty() {
            return Ok(());
        }
        let d = &p.deletions[bump.index(p.deletions.len())];
        let mut restamped = s.clone();
        for sw in &mut restamped.swarms {
            if same_swarm(&p, &sw.swarm, &d.swarm) {
                for r in sw.releases.iter_mut().filter(|r| r.name == d.release) {
                    if let Some(records) = &mut r.records {
                        for rec in records.iter_mut() {
                            rec.version += 10;
                        }
                    }
                }
            }
        }
        prop_assert!(check(&saved, &restamped, "t").unwrap().is_err());
    }

    /// The swarms as they may be found at the apply, a small step from the
    /// plan's (independent snapshots rarely pass the check at all): a
    /// volume or a config labelled with a release since, a volume found on
    /// another node, a service updated. Whatever is approved, each of its
    /// deletions is a saved one, and removes nothing the saved one did not
    /// list: services, networks, secrets and configs as they were (id and
    /// version), volumes by a name listed on some node.
    #[test]
    fn an_approved_saved_plan_removes_nothing_its_file_did_not_list(
        s in snapshot(),
        step in 0u8..5,
        which in any::<prop::sample::Index>(),
        node in any::<prop::sample::Index>(),
    ) {
        let mut s = s;
        // Some releases hold a volume on some of their swarm's nodes.
        for sw in &mut s.swarms {
            let nodes: Vec<String> = sw.nodes.iter().flatten().map(|n| n.id.clone()).collect();
            for (i, r) in sw.releases.iter_mut().enumerate() {
                let name = r.name.clone();
                if let (Some(objects), false) = (r.objects.as_mut(), nodes.is_empty()) {
                    objects.volumes = Some(
                        nodes
                            .iter()
                            .enumerate()
                            .map(|(j, n)| {
                                let held = (i + j) % 2 == 0;
                                NodeVolumes::new(n.clone(), if held { vec![format!("{name}_data")] } else { vec![] })
                            })
                            .collect(),
                    );
                }
            }
        }
        let p = plan(&s).unwrap();
        let saved = SavedPlan::new(&s, p.clone(), "t");
        let mut t = s.clone();
        let releases: Vec<(usize, usize)> = t
            .swarms
            .iter()
            .enumerate()
            .flat_map(|(i, sw)| (0..sw.releases.len()).filter(move |_| sw.nodes.is_some()).map(move |j| (i, j)))
            .filter(|&(i, j)| t.swarms[i].releases[j].objects.is_some())
            .collect();
        if !releases.is_empty() {
            let (i, j) = releases[which.index(releases.len())];
            let sw = &mut t.swarms[i];
            let nodes: Vec<String> = sw.nodes.iter().flatten().map(|n| n.id.clone()).collect();
            let r = &mut sw.releases[j];
            let name = r.name.clone();
            let objects = r.objects.as_mut().unwrap();
            match step {
                0 => {}
                1 | 2 => {
                    // A volume found on a node: under a new name, or the
                    // planned name on another node.
                    let volume = if step == 1 { format!("{name}_export") } else { format!("{name}_data") };
                    if let Some(lists) = objects.volumes.as_mut().filter(|l| !l.is_empty()) {
                        let at = node.index(lists.len());
                        if !lists[at].volumes.contains(&volume) {
                            lists[at].volumes.push(volume);
                        }
                    } else if !nodes.is_empty() {
                        objects.volumes = Some(vec![NodeVolumes::new(nodes[node.index(nodes.len())].clone(), vec![volume])]);
                    }
                }
                3 => objects
                    .configs
                    .push(sweep_core::objects::ObjectRef::new(format!("cfg-{name}"), format!("{name}_conf"))),
                _ => {
                    for svc in &mut objects.services {
                        svc.version += 1;
                    }
                }
            }
        }
        let Ok(approved) = check(&saved, &t, "t").unwrap() else {
            return Ok(());
        };
        let volume_names = |o: &StackObjects| -> BTreeSet<String> {
            o.volumes.iter().flatten().flat_map(|n| n.volumes.iter().cloned()).collect()
        };
        for d in &approved.plan.deletions {
            let sd = p
                .deletions
                .iter()
                .find(|x| x.release_ref() == d.release_ref())
                .ok_or_else(|| TestCaseError::fail(format!("{} was not in the saved plan", d.release_ref())))?;
            let Some(now) = &d.objects else { continue };
            let empty = StackObjects::default();
            let was = sd.objects.as_ref().unwrap_or(&empty);
            for svc in &now.services {
                prop_assert!(was.services.contains(svc), "service {} unreviewed", svc.name);
            }
            for (now, was) in [(&now.networks, &was.networks), (&now.secrets, &was.secrets), (&now.configs, &was.configs)] {
                for o in now {
                    prop_assert!(was.contains(o), "{} unreviewed", o.name);
                }
            }
            let listed = volume_names(was);
            for v in volume_names(now) {
                prop_assert!(listed.contains(&v), "volume {} unreviewed in {}", v, d.release_ref());
            }
        }
    }

    /// `explain` gives every release the plan's own verdict.
    #[test]
    fn explain_gives_the_plan_s_verdict(s in snapshot()) {
        let p = plan(&s).unwrap();
        for d in &p.deletions {
            let e = explain(&s, &d.release_ref()).unwrap();
            prop_assert!(e.deleted);
            prop_assert_eq!(e.reason, d.reason.as_str());
        }
        for x in &p.spared {
            let e = explain(&s, &ReleaseRef::new(x.swarm.clone(), x.release.clone())).unwrap();
            prop_assert!(!e.deleted);
            prop_assert_eq!(e.reason, x.reason.as_str());
        }
    }
}

/// The generator must reach the interesting cases, or the properties above
/// hold vacuously.
#[test]
fn generated_snapshots_reach_deletions_collisions_and_aliases() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut deletions, mut aliases, mut collisions, mut unknown) = (0, 0, 0, 0);
    for _ in 0..500 {
        let s = snapshot().new_tree(&mut runner).unwrap().current();
        let p = plan(&s).unwrap();
        deletions += usize::from(!p.deletions.is_empty());
        aliases += usize::from(p.swarms.iter().any(|g| g.names.len() > 1));
        let names: Vec<_> = p.deletions.iter().map(|d| &d.release).collect();
        let spared: Vec<_> = p.spared.iter().map(|x| &x.release).collect();
        collisions += usize::from(names.iter().any(|n| spared.contains(n)));
        // A release the old rule deleted as destination_moved.
        unknown += usize::from(p.spared.iter().any(|x| {
            x.reason == SpareReason::CurrentApplication
                && x.detail
                    .as_deref()
                    .is_some_and(|d| d.ends_with("is not a swarm of this snapshot"))
        }));
    }
    assert!(deletions > 50, "only {deletions} snapshots plan deletions");
    assert!(aliases > 50, "only {aliases} snapshots alias a cluster");
    assert!(collisions > 20, "only {collisions} snapshots collide names");
    assert!(
        unknown > 20,
        "only {unknown} snapshots spare a release for an unknown destination"
    );
}

/// [`snapshot`] with a clock, a grace period and first-seen times: `now`
/// and `departed_since` in a small window of seconds around each other,
/// so that every side of the comparison is reached.
fn grace_snapshot() -> impl Strategy<Value = Snapshot> {
    (
        snapshot(),
        prop::option::weighted(0.9, 1_000u64..1_020),
        prop::option::weighted(0.8, 1u64..12),
        any::<u64>(),
    )
        .prop_map(|(mut s, now, window, seed)| {
            let mut bits = seed;
            for sw in &mut s.swarms {
                for r in &mut sw.releases {
                    bits = bits.rotate_left(7) ^ 0x9e37_79b9_7f4a_7c15;
                    r.departed_since =
                        (bits % 4 != 0).then(|| UnixTime::from_secs(990 + bits % 40));
                }
            }
            s.now = now.map(UnixTime::from_secs);
            s.policy = s
                .policy
                .clone()
                .with_min_departed_for(window.map(Duration::from_secs));
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_grace_period_deletes_only_what_was_departed_for_the_whole_window(s in grace_snapshot()) {
        let p = plan(&s).unwrap();
        let Some(window) = s.policy.min_departed_for else {
            return Ok(());
        };
        for d in &p.deletions {
            let now = s.now.expect("no deletion without a time");
            // Every name of its cluster that lists it says it has been
            // departed for the whole window.
            for sw in s.swarms.iter().filter(|sw| same_swarm(&p, &sw.swarm, &d.swarm)) {
                for r in sw.releases.iter().filter(|r| r.name == d.release) {
                    let since = r.departed_since.expect("a first-seen time");
                    prop_assert!(now.secs_since(since) >= window.as_secs(),
                        "{} deleted {}s after {since}", d.release_ref(), now.secs_since(since));
                }
            }
        }
    }

    #[test]
    fn the_departed_list_is_what_the_rules_would_delete(s in grace_snapshot()) {
        let p = plan(&s).unwrap();
        if s.now.is_none() {
            prop_assert!(p.departed.is_empty());
        }
        let listed: BTreeSet<(SwarmName, String)> =
            p.departed.iter().map(|d| (d.swarm.clone(), d.release.clone())).collect();
        prop_assert_eq!(listed.len(), p.departed.len());
        for d in &p.departed {
            // Never a declared release, never one the rules spare.
            for a in s.app_set.applications.iter().filter(|a| a.is_live()) {
                let declares = a.releases.iter().flatten().any(|r| *r == d.release);
                prop_assert!(!(declares && same_swarm(&p, &a.swarm, &d.swarm)),
                    "{}/{} is declared by {}", d.swarm, d.release, a.name);
            }
            prop_assert!(s.now.is_some_and(|now| d.since <= now));
            let deleted = p.deletions.iter().any(|x| x.swarm == d.swarm && x.release == d.release);
            let waiting = p.spared.iter().any(|x| {
                x.swarm == d.swarm
                    && x.release == d.release
                    && matches!(x.reason, SpareReason::GracePeriod | SpareReason::Held)
            });
            prop_assert!(deleted || waiting, "{}/{}", d.swarm, d.release);
        }
        if s.now.is_some() {
            for x in &p.deletions {
                prop_assert!(listed.contains(&(x.swarm.clone(), x.release.clone())));
            }
        }
        for x in p.spared.iter().filter(|x| x.reason == SpareReason::GracePeriod) {
            prop_assert!(s.policy.min_departed_for.is_some());
            prop_assert!(x.time_left.is_none_or(|t| t > 0));
        }
    }

    #[test]
    fn a_grace_period_only_ever_turns_deletions_into_waits(s in grace_snapshot()) {
        // The blast-radius guard counts the plan's deletions, which a grace
        // period lowers: compared without it.
        let mut s = s;
        s.policy.max_deletions = None;
        let with = plan(&s).unwrap();
        let mut off = s.clone();
        off.policy = off.policy.clone().with_min_departed_for(None);
        let without = plan(&off).unwrap();
        for d in &with.deletions {
            prop_assert!(without.deletions.iter().any(|x| x.release_ref() == d.release_ref()),
                "{} deleted only with a grace period", d.release_ref());
        }
        for x in with.spared.iter().filter(|x| x.reason != SpareReason::GracePeriod) {
            prop_assert!(without.spared.iter().any(|y| y == x), "{x:?}");
        }
    }

    #[test]
    fn the_state_after_a_plan_fills_the_next_snapshot(s in grace_snapshot()) {
        let p = plan(&s).unwrap();
        let state = GraceState::after_plan(&p, s.now.unwrap_or(UnixTime::from_secs(1_000)));
        prop_assert_eq!(GraceState::from_json(&state.to_json_pretty()), Ok(state.clone()));
        let mut next = s.clone();
        state.apply_to(&mut next);
        let again = plan(&next).unwrap();
        // The same rules, the same clock: the same releases are departed,
        // each since the same moment.
        prop_assert_eq!(&again.departed, &p.departed);
    }

    #[test]
    fn a_state_that_is_not_current_deletes_nothing_earlier_than_no_state(
        s in grace_snapshot(),
        now in 1_000u64..1_020,
        written in 960u64..1_060,
        max_age in prop::option::of(0u64..60),
    ) {
        let mut s = s;
        s.policy.max_deletions = None;
        s.now = Some(UnixTime::from_secs(now));
        // A state of the first-seen times the snapshot was generated with,
        // written at `written`.
        let state = GraceState::after_plan(&plan(&s).unwrap(), UnixTime::from_secs(written));
        let max_age = max_age.map(Duration::from_secs);
        let (used, why) = state.clone().current(UnixTime::from_secs(now), max_age);
        let current = written <= now && max_age.is_none_or(|m| now - written <= m.as_secs());
        prop_assert_eq!(why.is_none(), current, "{:?}", why);
        let planned_with = |state: &GraceState| {
            let mut next = s.clone();
            state.apply_to(&mut next);
            plan(&next).unwrap()
        };
        let with_used = planned_with(&used);
        let with_state = planned_with(&state);
        let with_none = planned_with(&GraceState::empty(UnixTime::from_secs(now)));
        for d in &with_used.deletions {
            // The rule never deletes what the state itself would not ...
            prop_assert!(with_state.deletions.iter().any(|x| x.release_ref() == d.release_ref()),
                "{} deleted only after the check", d.release_ref());
            // ... and a state that is not current, nothing that no state
            // at all would not.
            prop_assert!(current || with_none.deletions.iter().any(|x| x.release_ref() == d.release_ref()),
                "{} deleted by a state that is not current", d.release_ref());
        }
    }
}

/// A departed release `gone` whose stack has two of each kind of object,
/// on a swarm whose other services name random ones of them (by id or by
/// name, or every volume through a template), and whose nodes hold random
/// containers of other workloads or of `gone`'s own service, some attached
/// to its networks (by id or by name).
fn shared_snapshot() -> impl Strategy<Value = Snapshot> {
    let reference = prop_oneof![
        Just("net-a"),
        Just("net-b"),
        Just("gone_net_a"),
        Just("sec-a"),
        Just("gone_sec_b"),
        Just("cfg-b"),
        Just("gone_cfg_a"),
        Just("gone_vol_a"),
        Just("gone_vol_b"),
        Just("data-{{.Task.Slot}}"),
        Just("unrelated"),
    ];
    let service = (
        any::<bool>(),
        prop::collection::vec(reference, 0..3),
        0u8..4,
    );
    let container = (
        any::<bool>(),
        prop::sample::select(&["gone_vol_a", "gone_vol_b", "x"][..]),
        0u8..2,
        prop::option::of(prop::sample::select(
            &["net-a", "gone_net_b", "other_net"][..],
        )),
    );
    (
        prop::collection::vec(service, 0..4),
        prop::collection::vec(container, 0..3),
        any::<bool>(),
    )
        .prop_map(|(services, containers, purge)| {
            let pair = |prefix: &str, kind: &str| {
                vec![
                    sweep_core::objects::ObjectRef::new(
                        format!("{prefix}-a"),
                        format!("gone_{kind}_a"),
                    ),
                    sweep_core::objects::ObjectRef::new(
                        format!("{prefix}-b"),
                        format!("gone_{kind}_b"),
                    ),
                ]
            };
            let objects = StackObjects::new(
                vec![ServiceEntry::new("own", "gone_web", 1)],
                pair("net", "net"),
                pair("sec", "sec"),
                pair("cfg", "cfg"),
            )
            .with_volumes(vec![
                sweep_core::NodeVolumes::new("n1", vec!["gone_vol_a".into(), "gone_vol_b".into()]),
                sweep_core::NodeVolumes::new("n2", vec!["gone_vol_a".into()]),
            ]);
            let mut uses = vec![sweep_core::usage::ServiceUse::new("own", "gone_web")
                .in_stack("gone")
                .with_volumes(["gone_vol_a", "gone_vol_b"])
                .with_networks(["net-a", "net-b"])];
            for (i, (in_stack, refs, kind)) in services.into_iter().enumerate() {
                let s = sweep_core::usage::ServiceUse::new(format!("u{i}"), format!("user{i}"));
                let s = if in_stack { s.in_stack("user") } else { s };
                uses.push(match kind {
                    0 => s.with_volumes(refs),
                    1 => s.with_networks(refs),
                    2 => s.with_secrets(refs),
                    _ => s.with_configs(refs),
                });
            }
            let containers = containers
                .into_iter()
                .enumerate()
                .map(|(i, (own, volume, node, network))| {
                    let c = sweep_core::usage::ContainerUse::new(
                        format!("c{i}"),
                        format!("c{i}"),
                        [volume],
                    )
                    .with_networks(network);
                    let c = if own { c.of_service("own") } else { c };
                    sweep_core::usage::NodeContainers::new(format!("n{}", node + 1), vec![c])
                })
                .collect();
            let mut swarm = SwarmSnapshot::new("alpha");
            swarm.cluster_id = Some("A".into());
            swarm.nodes = Some(vec![
                NodeEntry::new("n1", "one"),
                NodeEntry::new("n2", "two"),
            ]);
            swarm.node_count = Some(2);
            swarm.releases =
                vec![
                    ReleaseEntry::new("gone", Some("cd/default/gone:release/gone".into()))
                        .with_objects(objects),
                ];
            swarm.usage = Some(sweep_core::usage::Usage::new(uses, containers));
            let apps = AppSet::new(true, vec![Application::reconciled("keep", "alpha", &[])]);
            Snapshot::new(Policy::new("default", purge, None), apps, vec![swarm])
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// What any service other than the release's own names, a container not
    /// of its services uses, or a container of no service is attached to,
    /// is never among the objects a deletion removes, and is named in
    /// `in_use_by`; everything else of the release still goes.
    #[test]
    fn the_objects_of_a_deletion_never_hold_what_another_workload_uses(s in shared_snapshot()) {
        let p = plan(&s).unwrap();
        prop_assert_eq!(p.deletions.len(), 1);
        let d = &p.deletions[0];
        let objects = d.objects.as_ref().unwrap();
        let usage = s.swarms[0].usage.as_ref().unwrap();
        let others = || usage.services.iter().filter(|u| u.stack.as_deref() != Some("gone"));
        for (list, refs) in [
            (&objects.networks, others().flat_map(|u| u.networks.iter()).collect::<Vec<_>>()),
            (&objects.secrets, others().flat_map(|u| u.secrets.iter()).collect()),
            (&objects.configs, others().flat_map(|u| u.configs.iter()).collect()),
        ] {
            for o in list {
                prop_assert!(!refs.iter().any(|r| o.is_named_by(r)), "{:?} is named by another service", o);
            }
        }
        for o in &objects.networks {
            let attached = usage.containers.iter().flat_map(|n| n.containers.iter())
                .any(|c| c.service.is_none() && c.networks.iter().any(|r| o.is_named_by(r)));
            prop_assert!(!attached, "{:?} has a container of no service attached", o);
        }
        let removed: BTreeSet<&String> = objects.volumes.iter().flatten().flat_map(|n| n.volumes.iter()).collect();
        // Without a purge no volume is removed, so none is judged.
        for v in removed.iter().filter(|_| s.policy.purge_volumes) {
            let by_service = others().any(|u| u.volumes.iter().any(|src| src == *v || src.contains("{{")));
            let by_container = usage.containers.iter().flat_map(|n| n.containers.iter())
                .any(|c| c.service.as_deref() != Some("own") && c.volumes.contains(v));
            prop_assert!(!by_service && !by_container, "{} is used by another workload", v);
        }
        // What stays is what in_use_by names, and nothing else.
        let kept: BTreeSet<(&str, &str)> = d.in_use_by.iter().map(|u| (u.kind.as_str(), u.object.as_str())).collect();
        for (kind, all, left) in [
            ("network", 2, objects.networks.len()),
            ("secret", 2, objects.secrets.len()),
            ("config", 2, objects.configs.len()),
        ] {
            prop_assert_eq!(all - left, kept.iter().filter(|(k, _)| *k == kind).count());
        }
        prop_assert_eq!(d.in_use_by.is_empty(), sweep_core::plan_status(&p) == sweep_core::Status::Success);
    }
}
