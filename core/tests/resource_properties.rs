//! Properties of the resource rule over generated live releases: what it
//! removes is proven by the snapshot alone (checked against the rule
//! written out plainly here), and relations between plans of related
//! snapshots hold: declaring an object again, or taking away the
//! controller's marker, only ever spares; another swarm's releases never
//! change a swarm's plan; the order of the input never changes a byte.

mod resources;

use std::collections::BTreeSet;

use proptest::prelude::*;
use resources::{app, release, snapshot, stamp, swarm, user, Obj, Rev};
use sweep_core::plan::ResourceHoldReason;
use sweep_core::record::{Kind, Payload};
use sweep_core::{plan, Snapshot, SweepPlan};

const SWARMS: &[&str] = &["alpha", "beta"];
const RELEASES: &[&str] = &["web", "api"];
/// Every object a revision may declare or a stack hold: (kind, key).
const POOL: &[(&str, &str)] = &[
    ("service", "app"),
    ("service", "worker"),
    ("service", "cron"),
    ("network", "default"),
    ("network", "back"),
    ("config", "conf1"),
    ("config", "conf2"),
    ("secret", "key"),
];

#[derive(Debug, Clone)]
struct RevGen {
    /// Indices into `POOL` it declares.
    declares: BTreeSet<usize>,
    /// 0: ours; 1: another controller's; 2: its data and label disagree.
    owner: u8,
    unreadable: bool,
}

#[derive(Debug, Clone)]
struct ReleaseGen {
    revisions: Vec<RevGen>,
    /// Indices into `POOL` its stack holds, each with the marker or not.
    objects: Vec<(usize, bool)>,
    opted_in: bool,
    /// A service of another stack names this network or config.
    used: Option<usize>,
}

fn rev_gen() -> impl Strategy<Value = RevGen> {
    (
        prop::collection::btree_set(0..POOL.len(), 0..POOL.len()),
        prop_oneof![8 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
        prop::bool::weighted(0.1),
    )
        .prop_map(|(declares, owner, unreadable)| RevGen {
            declares,
            owner,
            unreadable,
        })
}

fn release_gen() -> impl Strategy<Value = ReleaseGen> {
    (
        prop::collection::vec(rev_gen(), 1..4),
        prop::collection::btree_map(0..POOL.len(), prop::bool::weighted(0.8), 0..POOL.len()),
        prop::bool::weighted(0.85),
        prop::option::weighted(0.3, 0..POOL.len()),
    )
        .prop_map(|(revisions, objects, opted_in, used)| ReleaseGen {
            revisions,
            objects: objects.into_iter().collect(),
            opted_in,
            used,
        })
}

/// Per swarm, per release name: the release there, if any.
type WorldGen = Vec<Vec<Option<ReleaseGen>>>;

fn world_gen() -> impl Strategy<Value = WorldGen> {
    prop::collection::vec(
        prop::collection::vec(prop::option::weighted(0.8, release_gen()), RELEASES.len()),
        SWARMS.len(),
    )
}

/// The application of `release` on `swarm`: one per swarm, so that a
/// release name on two swarms belongs to two applications.
fn application(swarm: &str, release: &str) -> String {
    format!("{release}-on-{swarm}")
}

fn build(world: &WorldGen) -> Snapshot {
    let mut apps = Vec::new();
    let mut swarms = Vec::new();
    for (s, releases) in world.iter().enumerate() {
        let name = SWARMS[s];
        let mut entries = Vec::new();
        let mut users = Vec::new();
        for (r, gen) in releases.iter().enumerate() {
            let Some(gen) = gen else { continue };
            let rel = RELEASES[r];
            let owner = application(name, rel);
            let mut a = app(&owner, name, &[rel]);
            a.prune_resources = gen.opted_in;
            apps.push(a);
            let revisions: Vec<Rev> = gen
                .revisions
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let declares: Vec<(&'static str, &str)> =
                        g.declares.iter().map(|&d| POOL[d]).collect();
                    let mut rev = Rev::owned(&owner, rel, i as u64 + 1, &declares);
                    match g.owner {
                        1 => {
                            let other = format!("cd/other/{owner}:release/{rel}");
                            rev.label_owner = Some(other.clone());
                            rev.data_owner = Some(other);
                        }
                        2 => rev.data_owner = Some(stamp("someone", rel)),
                        _ => {}
                    }
                    if g.unreadable {
                        rev.unreadable = Some("not gzip".into());
                    }
                    rev
                })
                .collect();
            let objects: Vec<Obj> = gen
                .objects
                .iter()
                .map(|&(i, marker)| {
                    let (kind, key) = POOL[i];
                    if marker {
                        Obj::new(kind, key)
                    } else {
                        Obj::unmarked(kind, key)
                    }
                })
                .collect();
            if let Some(i) = gen.used {
                let (kind, key) = POOL[i];
                if kind == "network" {
                    users.push(user(
                        &format!("other-{rel}"),
                        "other_svc",
                        &[&format!("{rel}_{key}")],
                    ));
                }
            }
            entries.push(release(rel, &revisions, &objects));
        }
        swarms.push(swarm(name, entries, users));
    }
    snapshot(true, apps, swarms)
}

/// `(swarm, release, kind, name)` of every object the plan removes.
fn removed(p: &SweepPlan) -> BTreeSet<(String, String, Kind, String)> {
    p.dropped
        .iter()
        .flat_map(|d| {
            d.objects.iter().map(move |o| {
                (
                    d.swarm.to_string(),
                    d.release.clone(),
                    o.kind,
                    o.name.clone(),
                )
            })
        })
        .collect()
}

/// The current revision's declarations of `release` on `swarm`, and every
/// revision whose data is stamped ours, from the snapshot itself.
fn revisions_of<'s>(
    s: &'s Snapshot,
    swarm: &str,
    release: &str,
) -> Vec<(u64, &'s sweep_core::record::RevisionDocument)> {
    let entry = s
        .swarms
        .iter()
        .find(|w| w.swarm.as_str() == swarm)
        .and_then(|w| w.releases.iter().find(|r| r.name == release))
        .expect("a removal names a release of the snapshot");
    entry
        .revisions
        .iter()
        .flatten()
        .filter_map(|r| match &r.payload {
            Some(Payload::Read(d)) => Some((d.revision, d)),
            _ => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)
    ))]

    /// Everything removed is proven by the snapshot: the current revision
    /// reads and does not declare it, a revision stamped ours declared it,
    /// and a config or secret carries the controller's marker.
    #[test]
    fn what_is_removed_is_proven_dropped(world in world_gen()) {
        let s = build(&world);
        let p = plan(&s).unwrap();
        for (swarm, rel, kind, name) in removed(&p) {
            let revisions = revisions_of(&s, &swarm, &rel);
            let newest = s.swarms.iter().find(|w| w.swarm.as_str() == swarm)
                .and_then(|w| w.releases.iter().find(|r| r.name == rel))
                .and_then(|r| r.revisions.as_ref())
                .map(|r| r.len() as u64)
                .unwrap();
            let current = revisions.iter().find(|(n, _)| *n == newest);
            prop_assert!(current.is_some(), "{rel}: current revision {newest} does not read");
            let (_, current) = current.unwrap();
            prop_assert!(!current.declares.contains(kind, &name), "{name} declared now");
            let app = application(&swarm, &rel);
            let ours = stamp(&app, &rel);
            prop_assert!(
                revisions.iter().any(|(_, d)| d.owner.as_deref() == Some(ours.as_str()) && d.declares.contains(kind, &name)),
                "{name}: no revision of ours declared it"
            );
            if matches!(kind, Kind::Config | Kind::Secret) {
                let entry = s.swarms.iter().find(|w| w.swarm.as_str() == swarm)
                    .and_then(|w| w.releases.iter().find(|r| r.name == rel))
                    .and_then(|r| r.objects.as_ref()).unwrap();
                let list = if kind == Kind::Config { &entry.configs } else { &entry.secrets };
                prop_assert!(list.iter().any(|o| o.name == name && o.cd_created.is_some()), "{name} unmarked");
            }
        }
    }

    /// Declaring an object again in the current revision never removes
    /// anything more, and no longer removes that object.
    #[test]
    fn an_object_declared_now_is_never_removed(world in world_gen(), pick in any::<prop::sample::Index>()) {
        let s = build(&world);
        let before = removed(&plan(&s).unwrap());
        let Some(target) = before.iter().nth(pick.index(before.len().max(1))).cloned() else {
            return Ok(());
        };
        let (swarm, rel, kind, name) = target.clone();
        let mut again = world.clone();
        let si = SWARMS.iter().position(|w| *w == swarm).unwrap();
        let ri = RELEASES.iter().position(|r| *r == rel).unwrap();
        let gen = again[si][ri].as_mut().unwrap();
        let key = name.strip_prefix(&format!("{rel}_")).unwrap();
        let index = POOL.iter().position(|(k, n)| *n == key && *k == kind.as_str()).unwrap();
        gen.revisions.last_mut().unwrap().declares.insert(index);
        let after = removed(&plan(&build(&again)).unwrap());
        prop_assert!(!after.contains(&target));
        prop_assert!(after.is_subset(&before), "{:?} not in {:?}", after, before);
    }

    /// A config or secret without the controller's marker is never
    /// removed, and taking a marker away never removes anything more.
    #[test]
    fn an_unmarked_config_or_secret_is_never_removed(world in world_gen()) {
        let s = build(&world);
        let before = removed(&plan(&s).unwrap());
        let mut unmarked = world.clone();
        for swarm in &mut unmarked {
            for gen in swarm.iter_mut().flatten() {
                for (_, marker) in &mut gen.objects {
                    *marker = false;
                }
            }
        }
        let after = removed(&plan(&build(&unmarked)).unwrap());
        prop_assert!(after.iter().all(|(_, _, k, _)| !matches!(k, Kind::Config | Kind::Secret)));
        prop_assert!(after.is_subset(&before));
    }

    /// An object no revision stamped ours declared is never removed: with
    /// every revision but the current one another controller's, nothing is.
    #[test]
    fn an_object_no_owned_revision_declared_is_never_removed(world in world_gen()) {
        let mut others = world.clone();
        for swarm in &mut others {
            for gen in swarm.iter_mut().flatten() {
                let last = gen.revisions.len() - 1;
                for r in &mut gen.revisions[..last] {
                    r.owner = 1;
                }
            }
        }
        prop_assert!(removed(&plan(&build(&others)).unwrap()).is_empty());
    }

    /// What beta holds never changes what alpha loses: the same release
    /// names on both, judged on each swarm's own revisions.
    #[test]
    fn the_rule_never_reaches_across_swarms(world in world_gen(), beta in prop::collection::vec(prop::option::weighted(0.8, release_gen()), RELEASES.len())) {
        let alpha = |p: &SweepPlan| -> Vec<String> {
            p.dropped.iter().filter(|d| d.swarm.as_str() == "alpha").map(|d| format!("{d:?}")).collect()
        };
        let before = plan(&build(&world)).unwrap();
        let mut other = world.clone();
        other[1] = beta;
        let after = plan(&build(&other)).unwrap();
        prop_assert_eq!(alpha(&before), alpha(&after));
    }

    /// The plan is byte-identical whatever order the snapshot lists its
    /// swarms, releases, revisions and objects in.
    #[test]
    fn any_order_of_the_input_gives_the_same_plan(world in world_gen(), seed in any::<u64>()) {
        let s = build(&world);
        let mut shuffled = s.clone();
        let mut rng = seed | 1;
        let mut next = move || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; rng };
        fn shuffle<T>(v: &mut [T], next: &mut impl FnMut() -> u64) {
            for i in (1..v.len()).rev() {
                let j = (next() % (i as u64 + 1)) as usize;
                v.swap(i, j);
            }
        }
        shuffle(&mut shuffled.swarms, &mut next);
        for w in &mut shuffled.swarms {
            shuffle(&mut w.releases, &mut next);
            for r in &mut w.releases {
                if let Some(revs) = r.revisions.as_mut() { shuffle(revs, &mut next); }
                if let Some(recs) = r.records.as_mut() { shuffle(recs, &mut next); }
                if let Some(o) = r.objects.as_mut() {
                    shuffle(&mut o.services, &mut next);
                    shuffle(&mut o.networks, &mut next);
                    shuffle(&mut o.configs, &mut next);
                    shuffle(&mut o.secrets, &mut next);
                }
            }
        }
        prop_assert_eq!(plan(&s).unwrap().to_json_pretty(), plan(&shuffled).unwrap().to_json_pretty());
    }

    /// Two names of one cluster that list the same objects, records and
    /// revisions, each in an order of its own, agree: the plan is the one
    /// of the lists in a single order, and nothing is held as observed
    /// differently.
    #[test]
    fn two_names_of_one_cluster_agree_whatever_order_each_lists_in(world in world_gen(), seed in any::<u64>()) {
        let mut rng = seed | 1;
        let mut next = move || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; rng };
        fn shuffle<T>(v: &mut [T], next: &mut impl FnMut() -> u64) {
            for i in (1..v.len()).rev() {
                let j = (next() % (i as u64 + 1)) as usize;
                v.swap(i, j);
            }
        }
        let with_alias = |shuffled: bool, next: &mut dyn FnMut() -> u64| {
            let mut s = build(&world);
            let aliases: Vec<_> = s
                .swarms
                .iter()
                .map(|w| {
                    let mut alias = w.clone();
                    alias.swarm = format!("{}-vip", w.swarm).into();
                    if shuffled {
                        for r in &mut alias.releases {
                            if let Some(revs) = r.revisions.as_mut() { shuffle(revs, &mut &mut *next); }
                            if let Some(recs) = r.records.as_mut() { shuffle(recs, &mut &mut *next); }
                            if let Some(o) = r.objects.as_mut() {
                                shuffle(&mut o.services, &mut &mut *next);
                                shuffle(&mut o.networks, &mut &mut *next);
                                shuffle(&mut o.configs, &mut &mut *next);
                                shuffle(&mut o.secrets, &mut &mut *next);
                            }
                        }
                    }
                    alias
                })
                .collect();
            s.swarms.extend(aliases);
            s
        };
        let same = plan(&with_alias(false, &mut next)).unwrap();
        let shuffled = plan(&with_alias(true, &mut next)).unwrap();
        prop_assert_eq!(same.to_json_pretty(), shuffled.to_json_pretty());
        prop_assert!(
            !shuffled.resource_holds.iter().any(|h| h.reason == ResourceHoldReason::ObservationsDisagree),
            "{:?}", shuffled.resource_holds
        );
    }
}
