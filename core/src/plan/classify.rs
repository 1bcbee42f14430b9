//! The decision for one release on one swarm.
//!
//! The checks run from "whose is it" to "is it still wanted"; the first one
//! that spares wins, so the reason a plan gives is the most basic one.
//! Holds are applied by the planner on top of a `Delete` decision.

use std::collections::HashMap;
use std::time::Duration;

use super::swarms::{GroupRelease, GroupedRelease, Groups, SwarmGroup};
use super::{DeletionReason, SpareReason};
use crate::duration;
use crate::objects::{ServiceEntry, KEEP_LABEL};
use crate::owner::{ControllerId, Ownership};
use crate::refs::SwarmName;
use crate::snapshot::{Application, Facts, Snapshot, SnapshotStr};
use crate::time::UnixTime;

/// The live applications, indexed once per plan so that deciding each
/// release is a lookup, not a scan of the app set. Lookups only: nothing
/// here is iterated into the plan, so hashing cannot reorder it.
#[derive(Debug)]
pub(crate) struct AppIndex<'a> {
    live: HashMap<&'a str, LiveApp<'a>>,
    /// Draining applications whose destination the snapshot does not list
    /// or could not read.
    draining_to_unknown: HashMap<&'a str, Unproven<'a>>,
    /// Per cluster (by position in [`Groups::iter`]), the releases declared
    /// there as (release, application), sorted and distinct, so that the
    /// planner walks them beside the cluster's sorted releases ([`Declared`])
    /// instead of hashing a key per release.
    declared: Vec<Vec<(&'a str, &'a str)>>,
    /// Release to the live applications declaring it on a destination the
    /// snapshot does not list or could not read, sorted by name.
    declared_nowhere: HashMap<&'a str, Vec<(&'a str, Unproven<'a>)>>,
}

/// A destination whose cluster nothing shows: the snapshot does not list it
/// (a typo, or a swarm the registry does not list), or it could not be
/// read (a second name of a swarm that was read, maybe). Whatever is sent
/// there may be meant for any swarm of the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unproven<'a> {
    destination: &'a str,
    unread: bool,
}

impl Unproven<'_> {
    /// `destination X, not a swarm of this snapshot` or `destination X,
    /// which could not be read`.
    fn describe(self) -> String {
        let swarm = SwarmName::from(self.destination);
        if self.unread {
            format!("destination {swarm}, which could not be read")
        } else {
            format!("destination {swarm}, not a swarm of this snapshot")
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct LiveApp<'a> {
    /// The destination as the app set names it.
    swarm: &'a str,
    /// Its cluster, by position in [`Groups::iter`]; `None` when the
    /// snapshot does not list the destination.
    group: Option<usize>,
    reconciled: bool,
    /// Opted in to the resource rule.
    prune_resources: bool,
}

impl<'a> AppIndex<'a> {
    pub(crate) fn of<S: SnapshotStr>(snapshot: &'a Snapshot<S>, groups: &Groups<'_>) -> Self {
        let applications = &snapshot.app_set.applications;
        let swarm = |app: &'a Application<S>| S::swarm_str(&app.swarm);
        let mut live = HashMap::with_capacity(applications.len());
        // Counted first, so that each cluster's list is allocated once.
        let mut counts = vec![0; groups.iter().count()];
        for app in applications.iter().filter(|a| a.is_live()) {
            if let (Some(group), Some(releases)) = (groups.index_of(swarm(app)), &app.releases) {
                counts[group] += releases.len();
            }
        }
        let mut declared: Vec<Vec<(&'a str, &'a str)>> =
            counts.into_iter().map(Vec::with_capacity).collect();
        // Where nothing shows which cluster a destination is: not listed,
        // or listed and unreadable (its cluster id unknown).
        let unproven = |destination: &'a str| match groups.index_of(destination) {
            None => Some(Unproven {
                destination,
                unread: false,
            }),
            Some(group) if groups.at(group).error.is_some() => Some(Unproven {
                destination,
                unread: true,
            }),
            Some(_) => None,
        };
        let draining_to_unknown = applications
            .iter()
            .filter(|a| !a.is_live())
            .filter_map(|a| Some((a.name.as_str(), unproven(swarm(a))?)))
            .collect();
        let mut declared_nowhere: HashMap<&'a str, Vec<(&'a str, Unproven<'a>)>> = HashMap::new();
        for app in applications.iter().filter(|a| a.is_live()) {
            let (name, destination) = (app.name.as_str(), swarm(app));
            let group = groups.index_of(destination);
            live.insert(
                name,
                LiveApp {
                    swarm: destination,
                    group,
                    reconciled: app.has_reconciled(),
                    prune_resources: app.prune_resources,
                },
            );
            let releases = app.releases.iter().flatten().map(S::as_str);
            if let Some(group) = group {
                declared[group].extend(releases.clone().map(|release| (release, name)));
            }
            // Declared where nothing shows the cluster: it may be meant for
            // any swarm of the snapshot (a typo, or another name of a swarm
            // that was read).
            if let Some(unproven) = unproven(destination) {
                for release in releases {
                    declared_nowhere
                        .entry(release)
                        .or_default()
                        .push((name, unproven));
                }
            }
        }
        for list in &mut declared {
            list.sort_unstable();
            list.dedup();
        }
        for apps in declared_nowhere.values_mut() {
            apps.sort_unstable_by(|a, b| a.0.cmp(b.0));
            apps.dedup_by(|a, b| a.0 == b.0);
        }
        AppIndex {
            live,
            draining_to_unknown,
            declared,
            declared_nowhere,
        }
    }
}

/// What the rules say about one release before holds are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    Spare {
        reason: SpareReason,
        application: Option<String>,
        detail: Option<String>,
    },
    Delete {
        application: String,
        reason: DeletionReason,
    },
}

fn spare(
    reason: SpareReason,
    application: Option<String>,
    detail: impl Into<Option<String>>,
) -> Decision {
    Decision::Spare {
        reason,
        application,
        detail: detail.into(),
    }
}

/// Walks the declarations of one cluster alongside its releases, both in
/// name order: each release finds its declarers where the last one
/// stopped, without a search.
pub(crate) struct Declared<'i, 'a> {
    list: &'i [(&'a str, &'a str)],
    next: usize,
}

impl<'i, 'a> Declared<'i, 'a> {
    pub(crate) fn new(apps: &'i AppIndex<'a>, at: usize) -> Self {
        Declared {
            list: apps.declared_in(at),
            next: 0,
        }
    }

    /// The declarations of `release`, each as (release, application),
    /// sorted by application. Releases must be asked for in ascending order.
    pub(crate) fn of(&mut self, release: &str) -> &'i [(&'a str, &'a str)] {
        while self.list.get(self.next).is_some_and(|(r, _)| *r < release) {
            self.next += 1;
        }
        let from = self.next;
        while self.list.get(self.next).is_some_and(|(r, _)| *r == release) {
            self.next += 1;
        }
        &self.list[from..self.next]
    }
}

impl<'a> AppIndex<'a> {
    /// Who the resource rule answers to for a release declared by
    /// `declared` ([`Declared::of`]): `None` when no declarer opted in.
    pub(crate) fn resource_declarer(
        &self,
        declared: &[(&'a str, &'a str)],
    ) -> Option<super::dropped::Declarer<'a>> {
        let opted_in = |app: &str| self.live.get(app).is_some_and(|a| a.prune_resources);
        // A declaration on a destination the snapshot does not list may be
        // meant for this very swarm (a typo): as for a departed release,
        // it proves nothing here, so the release is not one declarer's.
        let elsewhere: Vec<String> = declared
            .first()
            .and_then(|(release, _)| nonempty(&self.declared_nowhere).and_then(|d| d.get(release)))
            .into_iter()
            .flatten()
            .map(|(name, unproven)| format!("{name} ({})", unproven.describe()))
            .collect();
        let several = |declared: &[(&str, &str)]| {
            super::dropped::Declarer::Several(
                declared
                    .iter()
                    .map(|(_, app)| (*app).to_owned())
                    .chain(elsewhere.iter().cloned())
                    .collect(),
            )
        };
        match declared {
            [] => None,
            [(_, name)] if elsewhere.is_empty() => {
                opted_in(name).then(|| super::dropped::Declarer::One {
                    name,
                    reconciled: self.live.get(name).is_some_and(|a| a.reconciled),
                })
            }
            declared if declared.iter().any(|(_, app)| opted_in(app)) => Some(several(declared)),
            _ => None,
        }
    }

    fn declared_in(&self, at: usize) -> &[(&'a str, &'a str)] {
        self.declared.get(at).map_or(&[], Vec::as_slice)
    }
}

/// Decides `release` of `group`, the group at position `at` of
/// [`Groups::iter`], given the declarations of the release on that cluster
/// ([`Declared::of`]).
pub(crate) fn decide_at(
    controller: &ControllerId,
    apps: &AppIndex<'_>,
    groups: &Groups<'_>,
    at: usize,
    group: &SwarmGroup<'_>,
    release: &GroupedRelease<'_>,
    declared: &[(&str, &str)],
) -> Decision {
    if group.self_stacks.contains(release.name) {
        return spare(
            SpareReason::OwnStack,
            None,
            Some("the stack the controller itself runs as".to_owned()),
        );
    }

    let application = match ownership_of(controller, release.name, release.owners()) {
        Ownership::Unmanaged => return spare(SpareReason::Unmanaged, None, None),
        Ownership::Foreign => {
            let detail = match release.owners() {
                [Some(stamp)] => format!("stamped {stamp:?}"),
                _ => "its names in this cluster carry different stamps".to_owned(),
            };
            return spare(SpareReason::ForeignOwner, None, detail);
        }
        Ownership::Malformed { reason } => {
            // Our prefix on a stamp we never write: hand-edited or copied.
            // Nobody's, so it is left like any release without a stamp.
            let detail = match release.owners() {
                [Some(stamp)] => {
                    format!("stamped {stamp:?}, which is not a stamp this controller writes: {reason}")
                }
                _ => format!("its names in this cluster carry stamps this controller does not write: {reason}"),
            };
            return spare(SpareReason::Unmanaged, None, detail);
        }
        Ownership::Ours { application } => application,
    };
    let app = application.as_str();

    let owner = apps.live.get(app).copied();

    if let Some(owner) = owner {
        let Some(dest) = owner.group else {
            // A typo or a swarm the registry does not list: nothing shows
            // where the application runs, so no copy of it is provably
            // stale (a typo of this very swarm's name would delete it).
            let detail = format!(
                "its destination {} is not a swarm of this snapshot",
                SwarmName::from(owner.swarm)
            );
            return spare(SpareReason::CurrentApplication, Some(application), detail);
        };
        if dest == at {
            return spare(SpareReason::CurrentApplication, Some(application), None);
        }
        let dest = groups.at(dest);
        if !owner.reconciled {
            // A moved application that has not yet come up on its new
            // destination still needs its old copy: deleting it now would
            // take the application down between the two.
            let detail = format!(
                "its application has not reconciled on its destination {} yet",
                dest.swarm
            );
            return spare(SpareReason::CurrentApplication, Some(application), detail);
        }
        if dest.error.is_some() {
            // The destination could not be read, so nothing shows that it
            // is a different cluster from this one.
            let detail = format!("its destination {} could not be read", dest.swarm);
            return spare(SpareReason::CurrentApplication, Some(application), detail);
        }
    }

    // A rename hands a release to another application before its stamp is
    // rewritten: a declaration on this swarm spares it whoever stamped it.
    if !declared.is_empty() {
        let names: Vec<&str> = declared.iter().map(|(_, app)| *app).collect();
        let detail = format!("declared by {}", names.join(", "));
        return spare(SpareReason::Declared, Some(application), detail);
    }
    // A declaration on a destination the snapshot does not list may be
    // meant for this very swarm (a rename plus a typo): it proves nothing
    // undeclared here.
    if let Some(declarers) = nonempty(&apps.declared_nowhere).and_then(|d| d.get(release.name)) {
        let names: Vec<String> = declarers
            .iter()
            .map(|(name, unproven)| format!("{name} ({})", unproven.describe()))
            .collect();
        let detail = format!("declared by {}", names.join(", "));
        return spare(SpareReason::Declared, Some(application), detail);
    }

    if let Some(dest) = nonempty(&apps.draining_to_unknown).and_then(|d| d.get(app)) {
        // Its draining hold sits on a swarm no snapshot entry has, or one
        // held as unreadable, so it shields nothing here: the swarm it is
        // still syncing on may be this one.
        let detail = format!(
            "would be deleted (departed) but its application is still draining from {}, {}",
            SwarmName::from(dest.destination),
            if dest.unread {
                "which could not be read"
            } else {
                "which is not a swarm of this snapshot"
            }
        );
        return spare(SpareReason::Held, Some(application), detail);
    }

    let reason = match owner {
        Some(_) => DeletionReason::DestinationMoved,
        None => DeletionReason::Departed,
    };
    // Last, so that the plan says what the release would otherwise be: an
    // operator's keep label overrides only a deletion.
    if let Some(service) = release.every_facts().find_map(keeper) {
        let detail = format!(
            "would be deleted ({}) but service {:?} carries {}={:?}",
            reason.as_str(),
            service.name,
            KEEP_LABEL,
            service.keep.as_deref().unwrap_or_default()
        );
        return spare(SpareReason::Kept, Some(application), detail);
    }
    Decision::Delete {
        application,
        reason,
    }
}

/// The grace period of a plan: `policy.min_departed_for` and the
/// snapshot's `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grace {
    pub(crate) window: Option<Duration>,
    pub(crate) now: Option<UnixTime>,
}

/// Why a release the rules would delete waits out its grace period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Waiting {
    pub(crate) detail: String,
    /// Whole seconds until it may go; `None` when the snapshot gives no
    /// time to count from.
    pub(crate) time_left: Option<u64>,
}

impl Grace {
    /// When a release that would be deleted was first seen so: its
    /// `departed_since`, or now when it has none (or names a moment later
    /// than now, which no clock running forward gave). `None` without a
    /// `now`.
    pub(crate) fn since(&self, departed_since: Option<UnixTime>) -> Option<UnixTime> {
        let now = self.now?;
        Some(departed_since.map_or(now, |since| since.min(now)))
    }

    /// Checked after every other rule, on a release the rules would delete
    /// (`reason`): `Some` while it has not been seen departed for the whole
    /// window, so that an application that leaves the app set by mistake
    /// and comes back within it loses nothing.
    pub(crate) fn waiting(
        &self,
        departed_since: Option<UnixTime>,
        reason: super::DeletionReason,
    ) -> Option<Waiting> {
        let window = self.window?;
        let Some(since) = self.since(departed_since) else {
            // Without a time nothing shows that the window has passed.
            return Some(Waiting {
                detail: format!(
                    "would be deleted ({}) but min_departed_for is {} and the snapshot gives no time (now) to measure it by",
                    reason.as_str(),
                    duration::show(window)
                ),
                time_left: None,
            });
        };
        let now = self.now.unwrap_or(since);
        let elapsed = Duration::from_secs(now.secs_since(since));
        if elapsed >= window {
            return None;
        }
        let left = window - elapsed;
        // Whole seconds, rounded up: "0 s left" must never be said of a
        // release that may not go yet.
        let time_left = left.as_secs() + u64::from(left.subsec_nanos() > 0);
        Some(Waiting {
            detail: format!(
                "would be deleted ({}) but it was first seen departed at {since}, less than min_departed_for = {} ago; {} left",
                reason.as_str(),
                duration::show(window),
                duration::show(Duration::from_secs(time_left))
            ),
            time_left: Some(time_left),
        })
    }
}

/// The first service of an observation that keeps its release. The keep
/// label kept by any value but `false`: an operator who wrote `yes` or
/// `True` meant to keep, and reading it as "not kept" would delete what
/// they asked to keep.
fn keeper(facts: Facts<'_>) -> Option<&ServiceEntry> {
    facts.objects?.services.iter().find(|s| s.is_kept())
}

/// `map`, unless it is empty: most plans have no application draining to
/// or declaring on an unknown swarm, and a lookup in an empty map still
/// hashes its key.
fn nonempty<K, V>(map: &HashMap<K, V>) -> Option<&HashMap<K, V>> {
    (!map.is_empty()).then_some(map)
}

/// Ownership of a release whose names may disagree: only a release every
/// name of the cluster shows as this controller's, for one application, is.
/// The sweep's re-read of a release before each destructive step judges by
/// this same rule, so a release is deleted only on the planner's terms.
pub(crate) fn ownership(controller: &ControllerId, release: &GroupRelease) -> Ownership {
    let owners: Vec<Option<&str>> = release.owners.iter().map(Option::as_deref).collect();
    ownership_of(controller, &release.name, &owners)
}

/// [`ownership`] of release `name` with the distinct stamps `owners`.
fn ownership_of(controller: &ControllerId, name: &str, owners: &[Option<&str>]) -> Ownership {
    let mut seen = owners.iter().map(|stamp| controller.classify(*stamp, name));
    let Some(first) = seen.next() else {
        return Ownership::Unmanaged;
    };
    let rest: Vec<Ownership> = seen.collect();
    if rest.iter().all(|o| *o == first) {
        first
    } else if owners.iter().any(Option::is_none) {
        Ownership::Unmanaged
    } else if std::iter::once(&first)
        .chain(&rest)
        .all(|o| matches!(o, Ownership::Malformed { .. }))
    {
        // Different reasons, but every name shows our prefix on a stamp we
        // never write: nobody's, like the single-stamp case.
        first
    } else {
        Ownership::Foreign
    }
}
