//! What a change of the app set changes in what a sweep deletes.
//!
//! A pull request that edits the app set is reviewed against the swarms
//! as they are: planning the change's app set alone shows the swarms'
//! whole backlog (every release already departed and held, say), which
//! buries the change's own effect. [`PlanDiff::between`] takes two plans of
//! one snapshot, the base's app set and the change's, and keeps only what
//! differs: releases (with their volumes) and dropped objects that only
//! one of them deletes, and holds only one of them has. Both plans must
//! come from the same snapshot: the diff compares decisions, and a
//! release's objects differ between two snapshots for reasons no change
//! of the app set makes.
//!
//! A deletion need not come at the next sweep to be the change's doing:
//! a release the change un-declares while its swarm's deletion windows
//! are closed, or while it waits out its grace period, is spared now and
//! deleted once the window opens or the period ends, with nobody doing
//! anything more. [`PlanDiff::between_settled`] sees those too: beside
//! each plan it takes the plan of the same snapshot once everything that
//! clears by itself has cleared ([`settled`]), and counts a release (or a
//! dropped object) one side deletes only later as that side's, marked
//! [`pending`](ChangedDeletion::pending).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::Serialize;

use crate::duration;
use crate::format::FormatVersion;
use crate::names::named_enum;
use crate::owner::ControllerId;
use crate::plan::{
    Deletion, DroppedObject, Hold, HoldReason, ResourceHold, ResourceHoldReason, SpareReason,
    Spared, SwarmPlan, SweepPlan,
};
use crate::refs::SwarmName;
use crate::snapshot::{AppState, Snapshot, SnapshotError};
use crate::time::UnixTime;

/// The difference between the plan of a base app set and the plan of a
/// changed one, on one snapshot. Every list is sorted (by swarm, then
/// release, then object), so the same two plans give the same document.
///
/// Its JSON (`swarm-sweep plan --diff-against FILE --format json`) is a
/// public contract: field names never change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        description = "What a change of the app set changes in what a sweep deletes: two plans of one snapshot compared. Every list is sorted."
    )
)]
#[non_exhaustive]
pub struct PlanDiff {
    /// The format version of the document.
    pub format_version: FormatVersion,
    /// The controller both plans are for.
    pub controller: ControllerId,
    /// Whether the sweep removes deleted releases' named volumes too.
    pub purge_volumes: bool,
    /// The totals of the lists below.
    pub counts: DiffCounts,
    /// Releases the change deletes and the base does not, with their
    /// objects and volumes: at the next sweep, or (`pending`) only once
    /// something that clears by itself has cleared, where the base would
    /// never delete them.
    pub added: Vec<ChangedDeletion>,
    /// Releases the base deletes and the change does not, likewise.
    pub removed: Vec<ChangedDeletion>,
    /// Dropped objects (the resource rule) the change removes and the base
    /// does not, likewise.
    pub dropped_added: Vec<ChangedDropped>,
    /// Dropped objects the base removes and the change does not.
    pub dropped_removed: Vec<ChangedDropped>,
    /// Holds of the change's plan that the base's does not have.
    pub holds_added: Vec<Hold>,
    /// Holds of the base's plan that the change's does not have.
    pub holds_removed: Vec<Hold>,
    /// The change's plan's entries of the swarms the lists above name:
    /// their reach, node names and volume purge coverage.
    pub swarms: Vec<SwarmPlan>,
}

/// The totals of a [`PlanDiff`]'s lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct DiffCounts {
    /// Entries of `added`.
    pub releases_added: u64,
    /// Entries of `removed`.
    pub releases_removed: u64,
    /// Named volumes (one per node that holds it) of `added`'s releases,
    /// as the snapshot listed them; 0 without volume purge.
    pub volumes_added: u64,
    /// Named volumes of `removed`'s releases, likewise.
    pub volumes_removed: u64,
    /// Entries of `dropped_added`.
    pub dropped_added: u64,
    /// Entries of `dropped_removed`.
    pub dropped_removed: u64,
    /// Entries of `added` the change deletes only later (`pending`);
    /// counted in `releases_added` too.
    pub releases_pending_added: u64,
    /// Entries of `removed` the base deletes only later; counted in
    /// `releases_removed` too.
    pub releases_pending_removed: u64,
    /// Entries of `dropped_added` the change removes only later; counted
    /// in `dropped_added` too.
    pub dropped_pending_added: u64,
    /// Entries of `dropped_removed` the base removes only later; counted
    /// in `dropped_removed` too.
    pub dropped_pending_removed: u64,
}

/// A release one plan deletes and the other does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ChangedDeletion {
    /// The deletion, as the plan that makes it has it (for a `pending`
    /// one: as it will once what delays it has cleared).
    pub deletion: Deletion,
    /// Why the other plan spares the release (in `added`: the base; in
    /// `removed`: the change); `None` when it does not list it.
    pub spared_as: Option<SpareReason>,
    /// Set when the plan that deletes it does so only later: it spares
    /// the release now, for what clears by itself (a closed deletion
    /// window, a grace period, an application that has not reconciled or
    /// is draining), and deletes it then with nobody acting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// Set when the other plan spares it only until something that
    /// clears by itself has cleared (`spared_as` says how it spares it),
    /// and deletes it then too: the two plans differ in when it goes, not
    /// whether.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spared_until: Option<Pending>,
}

/// A dropped object one plan removes and the other does not.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ChangedDropped {
    /// The swarm (its cluster's smallest name).
    pub swarm: SwarmName,
    /// The live release that dropped it.
    pub release: String,
    /// The application that declares the release in the plan that removes
    /// the object.
    pub application: String,
    /// The object.
    pub object: DroppedObject,
    /// Set when the plan that removes it does so only later, as for a
    /// release ([`ChangedDeletion::pending`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// Set when the other plan keeps it only until something that clears
    /// by itself has cleared, and removes it then too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spared_until: Option<Pending>,
}

/// What a deletion that comes only later waits for. Everything in it
/// clears by itself: nobody has to change the app set, the swarms or the
/// policy for the deletion to come.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Pending {
    /// What it waits for, one entry per reason, sorted by reason. Empty
    /// only when the plan gave no reason it knows.
    pub waits_for: Vec<Wait>,
    /// What the plan says keeps it now (the spared release's `detail`, or
    /// the resource hold's), for people. Raw: escape it before printing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// One thing a [`Pending`] deletion waits for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Wait {
    /// What it is.
    pub reason: Delay,
    /// For `unreconciled` and `draining`: the applications waited for,
    /// sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applications: Vec<String>,
    /// For `outside_window`: when the swarm's deletion windows next let a
    /// deletion through (the hold's `opens_at`); left out when none does
    /// within about a year, or the snapshot has no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<UnixTime>,
    /// For `grace_period`: whole seconds until the release has been seen
    /// departed for `policy.min_departed_for` (the spared release's
    /// `time_left`); left out when the snapshot has no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_left: Option<u64>,
}

named_enum! {
    /// What a [`Wait`] waits for: each clears by itself.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum Delay {
        /// The release has not been seen departed for
        /// `policy.min_departed_for` yet (spared `grace_period`).
        GracePeriod = "grace_period",
        /// The swarm's deletion windows do not let a deletion through at
        /// the snapshot's time (the hold `outside_window`).
        OutsideWindow = "outside_window",
        /// An application has not reconciled: one that holds the swarm
        /// (the hold `unreconciled`; the release goes unless it turns out
        /// to declare it), or the release's own, moved to another swarm
        /// and not reconciled there yet (spared `current_application`).
        Unreconciled = "unreconciled",
        /// An application that left the app set is still syncing its way
        /// out (the hold `draining`, or a draining application whose
        /// swarm the snapshot does not list).
        Draining = "draining",
    }
}

impl Wait {
    fn new(reason: Delay) -> Self {
        Wait {
            reason,
            applications: Vec::new(),
            opens_at: None,
            time_left: None,
        }
    }

    /// When it clears, for people: `the next deletion window opens at
    /// 2026-12-07T02:00:00Z`. Application names go through `name`, which
    /// escapes them for where the text goes.
    pub fn text(&self, name: &dyn Fn(&str) -> String) -> String {
        let apps = || {
            let names: Vec<String> = self.applications.iter().map(|a| name(a)).collect();
            let (noun, verb) = if names.len() == 1 {
                ("application", "has")
            } else {
                ("applications", "have")
            };
            (format!("{noun} {}", list(&names)), verb)
        };
        match self.reason {
            Delay::GracePeriod => match self.time_left {
                Some(secs) => format!(
                    "its grace period ends, in {}",
                    duration::show(Duration::from_secs(secs))
                ),
                None => "its grace period ends".to_owned(),
            },
            Delay::OutsideWindow => match self.opens_at {
                Some(at) => format!("the next deletion window opens at {at}"),
                None => "a deletion window opens".to_owned(),
            },
            Delay::Unreconciled if self.applications.is_empty() => {
                "the applications holding its swarm have reconciled".to_owned()
            }
            Delay::Unreconciled => {
                let (who, verb) = apps();
                format!("{who} {verb} reconciled")
            }
            Delay::Draining if self.applications.is_empty() => {
                "the applications draining from its swarm have left".to_owned()
            }
            Delay::Draining => {
                let (who, verb) = apps();
                format!("{who} {verb} finished draining")
            }
        }
    }
}

impl Pending {
    /// When the deletion comes, for people: `once the next deletion window
    /// opens at 2026-12-07T02:00:00Z and its grace period ends`, names
    /// through `name` (see [`Wait::text`]).
    pub fn text(&self, name: &dyn Fn(&str) -> String) -> String {
        if self.waits_for.is_empty() {
            return "once what delays it has cleared".to_owned();
        }
        let parts: Vec<String> = self.waits_for.iter().map(|w| w.text(name)).collect();
        format!("once {}", list(&parts))
    }

    fn wait(&mut self, reason: Delay) -> &mut Wait {
        let at = match self.waits_for.iter().position(|w| w.reason == reason) {
            Some(at) => at,
            None => {
                self.waits_for.push(Wait::new(reason));
                self.waits_for.len() - 1
            }
        };
        &mut self.waits_for[at]
    }

    /// Adds what `hold` makes it wait for, if it clears by itself.
    fn hold(&mut self, hold: &Hold) {
        let reason = match hold.reason {
            HoldReason::OutsideWindow => Delay::OutsideWindow,
            HoldReason::Unreconciled => Delay::Unreconciled,
            HoldReason::Draining => Delay::Draining,
            _ => return,
        };
        let wait = self.wait(reason);
        wait.applications.extend(hold.applications.iter().cloned());
        wait.opens_at = wait.opens_at.max(hold.opens_at);
    }

    /// Sorted, each list of names once.
    fn sorted(mut self) -> Self {
        self.waits_for.sort_by_key(|w| w.reason);
        for wait in &mut self.waits_for {
            wait.applications.sort();
            wait.applications.dedup();
        }
        self
    }
}

/// `a`, `a and b`, `a, b and c`.
fn list(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The snapshot as it stands once everything that clears by itself has
/// cleared: every deletion window open, every grace period over, every
/// application reconciled (declaring what it declares now, or nothing
/// when it has not said) and every draining one gone; and without the
/// blast-radius limit, so that its plan lists every release that would
/// go. What its plan deletes and `snapshot`'s plan does not, the latter
/// deletes later, unless a hold that needs a person (the blast radius
/// among them) keeps it: [`PlanDiff::between_settled`] tells the two apart.
pub fn settled(snapshot: &Snapshot) -> Snapshot {
    let mut settled = snapshot.clone();
    settled.policy.windows.clear();
    settled.policy.min_departed_for = None;
    settled.policy.max_deletions = None;
    for swarm in &mut settled.swarms {
        swarm.windows.clear();
    }
    let apps = &mut settled.app_set.applications;
    apps.retain(|a| a.state != AppState::Draining);
    for app in apps {
        app.state = AppState::Reconciled;
        app.releases.get_or_insert_with(Vec::new);
    }
    settled
}

impl PlanDiff {
    /// What `change` deletes at the next sweep that `base` does not, and
    /// the reverse; both plans of the same snapshot, under two app sets.
    /// `change`'s controller and volume purge are the document's (one
    /// snapshot gives both plans the same). Nothing is `pending`: a
    /// deletion a window or a grace period delays is not seen; use
    /// [`PlanDiff::between_settled`] for those.
    pub fn between(base: &SweepPlan, change: &SweepPlan) -> PlanDiff {
        PlanDiff::between_settled(base, change, base, change)
    }

    /// Plans `base` and `change` (one snapshot under two app sets) and
    /// their [`settled`] forms, and compares them
    /// ([`PlanDiff::between_settled`]).
    pub fn of_snapshots(base: &Snapshot, change: &Snapshot) -> Result<PlanDiff, SnapshotError> {
        let plan = crate::plan::plan;
        Ok(PlanDiff::between_settled(
            &plan(base)?,
            &plan(change)?,
            &plan(&settled(base))?,
            &plan(&settled(change))?,
        ))
    }

    /// What `change` deletes that `base` does not, and the reverse, now
    /// or later: `base_settled` and `change_settled` are the plans of the
    /// [`settled`] forms of the snapshots `base` and `change` were planned
    /// from.
    ///
    /// A release goes *now* when its plan deletes it; *later* when its
    /// plan spares it, the settled plan deletes it, and no hold that needs
    /// a person is on its swarm or the whole sweep (the blast radius, an
    /// unreadable swarm, a node a purge cannot reach, an app set that did
    /// not load or is empty): it waits for a deletion window, its grace
    /// period, an application reconciling or draining ([`Delay`]). It
    /// goes *never* otherwise. `added` lists what the change deletes now
    /// and the base does not (`spared_until` set when the base deletes it
    /// later), and what the change deletes later and the base never
    /// (`pending` set); `removed` is the same the other way round. Dropped
    /// objects are compared alike.
    pub fn between_settled(
        base: &SweepPlan,
        change: &SweepPlan,
        base_settled: &SweepPlan,
        change_settled: &SweepPlan,
    ) -> PlanDiff {
        let base = Side::new(base, base_settled);
        let change = Side::new(change, change_settled);
        let (base_releases, change_releases) = (base.releases(), change.releases());
        let added = changed_releases(&change_releases, &base_releases, &base);
        let removed = changed_releases(&base_releases, &change_releases, &change);
        let (base_dropped, change_dropped) = (base.dropped(), change.dropped());
        let dropped_added = changed_dropped(&change_dropped, &base_dropped);
        let dropped_removed = changed_dropped(&base_dropped, &change_dropped);
        let holds_added = holds_only(change.now, base.now);
        let holds_removed = holds_only(base.now, change.now);
        let pending =
            |list: &[ChangedDeletion]| list.iter().filter(|c| c.pending.is_some()).count();
        let dropped_pending =
            |list: &[ChangedDropped]| list.iter().filter(|c| c.pending.is_some()).count();
        let counts = DiffCounts {
            releases_added: added.len() as u64,
            releases_removed: removed.len() as u64,
            volumes_added: volumes(change.now, &added),
            volumes_removed: volumes(base.now, &removed),
            dropped_added: dropped_added.len() as u64,
            dropped_removed: dropped_removed.len() as u64,
            releases_pending_added: pending(&added) as u64,
            releases_pending_removed: pending(&removed) as u64,
            dropped_pending_added: dropped_pending(&dropped_added) as u64,
            dropped_pending_removed: dropped_pending(&dropped_removed) as u64,
        };
        let named: BTreeSet<&SwarmName> = added
            .iter()
            .chain(&removed)
            .map(|c| &c.deletion.swarm)
            .chain(
                dropped_added
                    .iter()
                    .chain(&dropped_removed)
                    .map(|d| &d.swarm),
            )
            .chain(
                holds_added
                    .iter()
                    .chain(&holds_removed)
                    .filter_map(|h| h.swarm.as_ref()),
            )
            .collect();
        let swarms = change
            .now
            .swarms
            .iter()
            .filter(|s| named.contains(&s.swarm))
            .cloned()
            .collect();
        PlanDiff {
            format_version: FormatVersion,
            controller: change.now.controller.clone(),
            purge_volumes: change.now.purge_volumes,
            counts,
            added,
            removed,
            dropped_added,
            dropped_removed,
            holds_added,
            holds_removed,
            swarms,
        }
    }

    /// Whether the change deletes anything the base does not, now or
    /// later: a release or a dropped object.
    pub fn adds_deletions(&self) -> bool {
        !self.added.is_empty() || !self.dropped_added.is_empty()
    }

    /// Whether the two plans delete the same and hold alike.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.dropped_added.is_empty()
            && self.dropped_removed.is_empty()
            && self.holds_added.is_empty()
            && self.holds_removed.is_empty()
    }

    /// The diff as pretty-printed JSON.
    pub fn to_json_pretty(&self) -> String {
        // Plain data of strings, numbers and enums: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// The named volumes, one per node holding it, that a deletion removes:
/// none when the plan does not `purge`, or the snapshot did not
/// list them.
pub fn deletion_volumes(purge: bool, deletion: &Deletion) -> u64 {
    if !purge {
        return 0;
    }
    deletion
        .objects
        .as_ref()
        .and_then(|o| o.volumes.as_ref())
        .map_or(0, |nodes| {
            nodes.iter().map(|n| n.volumes.len() as u64).sum()
        })
}

fn volumes(plan: &SweepPlan, changed: &[ChangedDeletion]) -> u64 {
    changed
        .iter()
        .map(|c| deletion_volumes(plan.purge_volumes, &c.deletion))
        .sum()
}

/// A release by its swarm and name: the two plans share a snapshot, so a
/// release both delete is the same deletion.
type ReleaseKey<'a> = (&'a SwarmName, &'a str);

/// A dropped object by its swarm, release, kind and id.
type DroppedKey<'a> = (&'a SwarmName, &'a str, &'a str, &'a str);

/// When one plan deletes something.
enum Fate<T> {
    /// At the next sweep.
    Now(T),
    /// Once what delays it has cleared.
    Later(T, Pending),
}

impl<T> Fate<T> {
    fn later(&self) -> Option<&Pending> {
        match self {
            Fate::Now(_) => None,
            Fate::Later(_, pending) => Some(pending),
        }
    }
}

/// One app set's plan of the snapshot, and its settled plan.
struct Side<'a> {
    now: &'a SweepPlan,
    later: &'a SweepPlan,
    spared: BTreeMap<ReleaseKey<'a>, &'a Spared>,
    /// The plan's holds: of the whole sweep, and of each swarm.
    sweep_holds: Vec<&'a Hold>,
    swarm_holds: BTreeMap<&'a SwarmName, Vec<&'a Hold>>,
}

impl<'a> Side<'a> {
    fn new(now: &'a SweepPlan, later: &'a SweepPlan) -> Self {
        let spared = now
            .spared
            .iter()
            .map(|s| ((&s.swarm, s.release.as_str()), s))
            .collect();
        let mut sweep_holds = Vec::new();
        let mut swarm_holds: BTreeMap<&SwarmName, Vec<&Hold>> = BTreeMap::new();
        for hold in &now.holds {
            match &hold.swarm {
                None => sweep_holds.push(hold),
                Some(swarm) => swarm_holds.entry(swarm).or_default().push(hold),
            }
        }
        Side {
            now,
            later,
            spared,
            sweep_holds,
            swarm_holds,
        }
    }

    /// The holds of the plan on `swarm`: sweep-wide ones and its own.
    fn holds_on(&self, swarm: &SwarmName) -> impl Iterator<Item = &'a Hold> + '_ {
        let own = self.swarm_holds.get(swarm).map_or(&[][..], Vec::as_slice);
        self.sweep_holds.iter().chain(own).copied()
    }

    /// Whether a hold that needs a person keeps deletions off `swarm`:
    /// nothing waiting there then comes by itself.
    fn needs_a_person(&self, swarm: &'a SwarmName) -> bool {
        self.holds_on(swarm).any(|h| h.reason.needs_attention())
    }

    /// Every release the plan deletes, now or later.
    fn releases(&self) -> BTreeMap<ReleaseKey<'a>, Fate<&'a Deletion>> {
        let mut fates: BTreeMap<ReleaseKey<'a>, Fate<&'a Deletion>> = self
            .now
            .deletions
            .iter()
            .map(|d| ((&d.swarm, d.release.as_str()), Fate::Now(d)))
            .collect();
        for d in &self.later.deletions {
            let key = (&d.swarm, d.release.as_str());
            if fates.contains_key(&key) || self.needs_a_person(&d.swarm) {
                continue;
            }
            fates.insert(key, Fate::Later(d, self.release_waits(key)));
        }
        fates
    }

    /// What the release `key`, which the plan spares now and the settled
    /// plan deletes, waits for: read from why the plan spares it.
    fn release_waits(&self, key: ReleaseKey<'a>) -> Pending {
        let spared = self.spared.get(&key);
        let mut pending = Pending {
            waits_for: Vec::new(),
            detail: spared.and_then(|s| s.detail.clone()),
        };
        let application = spared.and_then(|s| s.application.clone());
        let holds: Vec<&Hold> = self.holds_on(key.0).collect();
        match spared.map(|s| s.reason) {
            Some(SpareReason::GracePeriod) => {
                pending.wait(Delay::GracePeriod).time_left = spared.and_then(|s| s.time_left);
            }
            // Moved, and not reconciled on its new destination yet.
            Some(SpareReason::CurrentApplication) => {
                let wait = pending.wait(Delay::Unreconciled);
                wait.applications.extend(application);
            }
            // Held with no hold on its swarm: its application is draining
            // from a swarm the snapshot does not list.
            Some(SpareReason::Held) if holds.is_empty() => {
                let wait = pending.wait(Delay::Draining);
                wait.applications.extend(application);
            }
            _ => {}
        }
        // Whatever spares it first, its swarm's holds keep it after.
        for hold in holds {
            pending.hold(hold);
        }
        pending.sorted()
    }

    /// Every dropped object the plan removes, now or later.
    fn dropped(&self) -> BTreeMap<DroppedKey<'a>, Fate<ChangedDropped>> {
        let mut fates: BTreeMap<DroppedKey<'a>, Fate<ChangedDropped>> = dropped_of(self.now)
            .map(|(key, changed)| (key, Fate::Now(changed)))
            .collect();
        for (key, changed) in dropped_of(self.later) {
            if fates.contains_key(&key) || self.needs_a_person(key.0) {
                continue;
            }
            let waits = self.dropped_waits(key.0, key.1, &changed.application);
            fates.insert(key, Fate::Later(changed, waits));
        }
        fates
    }

    /// What a dropped object of `release`, which the plan keeps now and
    /// the settled plan removes, waits for: read from the plan's resource
    /// hold of the release.
    fn dropped_waits(&self, swarm: &'a SwarmName, release: &str, application: &str) -> Pending {
        // Sorted by swarm, then release, as `plan` sorts it; a plan read
        // back from elsewhere may not be.
        let holds = &self.now.resource_holds;
        let of = |h: &&ResourceHold| &h.swarm == swarm && h.release == release;
        let first = holds.partition_point(|h| (&h.swarm, h.release.as_str()) < (swarm, release));
        let kept = holds
            .get(first)
            .filter(of)
            .or_else(|| holds.iter().find(of));
        let mut pending = Pending {
            waits_for: Vec::new(),
            detail: kept.map(|h| h.detail.clone()),
        };
        if kept.map(|h| h.reason) == Some(ResourceHoldReason::NotReconciled) {
            let wait = pending.wait(Delay::Unreconciled);
            wait.applications.push(application.to_owned());
        }
        for hold in self.holds_on(swarm) {
            pending.hold(hold);
        }
        pending.sorted()
    }
}

/// The entries of `mine` that `theirs` does not delete as soon: deleted
/// now where `theirs` deletes them later or never, and later where
/// `theirs` never does. Each with its key and what goes, and when `mine`
/// deletes it only later (`pending`) or `theirs` deletes it later too
/// (`spared_until`).
fn sooner<'m, K: Ord, T>(
    mine: &'m BTreeMap<K, Fate<T>>,
    theirs: &'m BTreeMap<K, Fate<T>>,
) -> impl Iterator<Item = (&'m K, &'m T, Option<&'m Pending>, Option<&'m Pending>)> {
    mine.iter()
        .filter_map(move |(key, fate)| match (fate, theirs.get(key)) {
            (Fate::Now(_), Some(Fate::Now(_))) | (Fate::Later(..), Some(_)) => None,
            (Fate::Now(it), their) => Some((key, it, None, their.and_then(Fate::later))),
            (Fate::Later(it, pending), None) => Some((key, it, Some(pending), None)),
        })
}

/// The releases `mine` deletes sooner than `theirs` ([`sooner`]), with
/// why `other`, the side of `theirs`, spares them.
fn changed_releases<'a>(
    mine: &BTreeMap<ReleaseKey<'a>, Fate<&'a Deletion>>,
    theirs: &BTreeMap<ReleaseKey<'a>, Fate<&'a Deletion>>,
    other: &Side<'a>,
) -> Vec<ChangedDeletion> {
    sooner(mine, theirs)
        .map(|(key, deletion, pending, until)| ChangedDeletion {
            deletion: (*deletion).clone(),
            spared_as: other.spared.get(key).map(|s| s.reason),
            pending: pending.cloned(),
            spared_until: until.cloned(),
        })
        .collect()
}

/// Every dropped object of `plan`, keyed by its swarm, release, kind and
/// id.
fn dropped_of(plan: &SweepPlan) -> impl Iterator<Item = (DroppedKey<'_>, ChangedDropped)> {
    plan.dropped.iter().flat_map(|d| {
        d.objects.iter().map(move |o| {
            (
                (&d.swarm, d.release.as_str(), o.kind.as_str(), o.id.as_str()),
                ChangedDropped {
                    swarm: d.swarm.clone(),
                    release: d.release.clone(),
                    application: d.application.clone(),
                    object: o.clone(),
                    pending: None,
                    spared_until: None,
                },
            )
        })
    })
}

/// The dropped objects `mine` removes sooner than `theirs` ([`sooner`]),
/// in key order.
fn changed_dropped(
    mine: &BTreeMap<DroppedKey<'_>, Fate<ChangedDropped>>,
    theirs: &BTreeMap<DroppedKey<'_>, Fate<ChangedDropped>>,
) -> Vec<ChangedDropped> {
    sooner(mine, theirs)
        .map(|(_, changed, pending, until)| ChangedDropped {
            pending: pending.cloned(),
            spared_until: until.cloned(),
            ..changed.clone()
        })
        .collect()
}

/// The holds of `this` that `other` does not have, whole: a hold whose
/// applications or message changed is a different hold.
fn holds_only(this: &SweepPlan, other: &SweepPlan) -> Vec<Hold> {
    let mut only: Vec<Hold> = this
        .holds
        .iter()
        .filter(|h| !other.holds.contains(h))
        .cloned()
        .collect();
    only.sort();
    only
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, HoldReason};
    use crate::snapshot::Snapshot;

    /// One snapshot, planned under two app sets.
    fn plans(swarms: &str, base: &str, change: &str) -> (SweepPlan, SweepPlan) {
        let of = |apps: &str| {
            let text = format!(
                r#"{{"policy": {{"purge_volumes": true}}, "app_set": {{"loaded": true, "applications": {apps}}}, "swarms": {swarms}}}"#
            );
            plan(&Snapshot::from_json(&text).unwrap()).unwrap()
        };
        (of(base), of(change))
    }

    const SWARMS: &str = r#"[{"swarm": "alpha", "cluster_id": "A", "node_count": 1,
        "nodes": [{"id": "n1", "hostname": "alpha-1"}],
        "releases": [
          {"name": "web", "owner": "cd/default/shop:release/web",
           "objects": {"services": [{"id": "s1", "name": "web_app", "version": 3}],
                       "volumes": [{"node": "n1", "volumes": ["web_data", "web_cache"]}]}},
          {"name": "blog", "owner": "cd/default/blog:release/blog"},
          {"name": "old", "owner": "cd/default/old:release/old"}]}]"#;

    #[test]
    fn removing_an_application_adds_its_release_and_volumes_only() {
        let (base, change) = plans(
            SWARMS,
            r#"[{"name": "shop", "swarm": "alpha", "releases": ["web"]},
                {"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
            r#"[{"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        );
        // `old` is deleted either way: the backlog, not the change.
        assert_eq!(base.deletions.len(), 1);
        let diff = PlanDiff::between(&base, &change);
        let added: Vec<&str> = diff
            .added
            .iter()
            .map(|c| c.deletion.release.as_str())
            .collect();
        assert_eq!(added, ["web"]);
        assert_eq!(
            diff.added[0].spared_as,
            Some(SpareReason::CurrentApplication)
        );
        assert!(diff.removed.is_empty());
        assert_eq!(diff.counts.releases_added, 1);
        assert_eq!(diff.counts.volumes_added, 2);
        assert!(diff.adds_deletions());
        assert!(!diff.is_empty());
    }

    #[test]
    fn adding_an_application_back_removes_its_release_from_the_deletions() {
        let (base, change) = plans(
            SWARMS,
            r#"[{"name": "shop", "swarm": "alpha", "releases": ["web"]}]"#,
            r#"[{"name": "shop", "swarm": "alpha", "releases": ["web"]},
                {"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        );
        let diff = PlanDiff::between(&base, &change);
        assert!(diff.added.is_empty());
        assert_eq!(diff.removed.len(), 1);
        assert_eq!(diff.removed[0].deletion.release, "blog");
        assert_eq!(
            diff.removed[0].spared_as,
            Some(SpareReason::CurrentApplication)
        );
        assert!(!diff.adds_deletions());
    }

    #[test]
    fn the_same_app_set_gives_an_empty_diff() {
        let apps = r#"[{"name": "shop", "swarm": "alpha", "releases": ["web"]}]"#;
        let (base, change) = plans(SWARMS, apps, apps);
        let diff = PlanDiff::between(&base, &change);
        assert!(diff.is_empty(), "{diff:?}");
        assert_eq!(diff.counts, DiffCounts::default());
    }

    #[test]
    fn a_hold_only_the_change_makes_is_listed_and_its_deletions_removed() {
        // The change sends an application to a swarm it has not reconciled
        // on: alpha is held, so what the base deletes there is not.
        let (base, change) = plans(
            SWARMS,
            r#"[{"name": "shop", "swarm": "alpha", "releases": ["web"]}]"#,
            r#"[{"name": "shop", "swarm": "alpha", "releases": ["web"]},
                {"name": "new", "swarm": "alpha"}]"#,
        );
        let diff = PlanDiff::between(&base, &change);
        assert_eq!(diff.holds_added.len(), 1);
        assert_eq!(diff.holds_added[0].reason, HoldReason::Unreconciled);
        assert!(diff.holds_removed.is_empty());
        let removed: Vec<&str> = diff
            .removed
            .iter()
            .map(|c| c.deletion.release.as_str())
            .collect();
        assert_eq!(removed, ["blog", "old"]);
        assert!(diff
            .removed
            .iter()
            .all(|c| c.spared_as == Some(SpareReason::Held)));
        // The reverse diff is the mirror image.
        let back = PlanDiff::between(&change, &base);
        assert_eq!(back.added.len(), 2);
        assert_eq!(back.holds_removed, diff.holds_added);
    }

    /// The diff of one snapshot (`doc`, without its app set) under two app
    /// sets, delays included, checked against its mirror image.
    fn settled_diff(doc: &str, base: &str, change: &str) -> PlanDiff {
        let of = |apps: &str| {
            let text =
                format!(r#"{{"app_set": {{"loaded": true, "applications": {apps}}}, {doc}}}"#);
            Snapshot::from_json(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
        };
        let (base, change) = (of(base), of(change));
        let diff = PlanDiff::of_snapshots(&base, &change).unwrap();
        // The same two app sets the other way round: the mirror image.
        let back = PlanDiff::of_snapshots(&change, &base).unwrap();
        assert_eq!(back.added, diff.removed);
        assert_eq!(back.removed, diff.added);
        assert_eq!(back.dropped_added, diff.dropped_removed);
        assert_eq!(back.dropped_removed, diff.dropped_added);
        // And the same document every time.
        assert_eq!(
            PlanDiff::of_snapshots(&base, &change)
                .unwrap()
                .to_json_pretty(),
            diff.to_json_pretty()
        );
        diff
    }

    const BLOG: &str = r#"{"name": "blog", "swarm": "alpha", "releases": ["blog"]}"#;
    const SHOP: &str = r#"{"name": "shop", "swarm": "alpha", "releases": ["web"]}"#;

    fn apps(list: &[&str]) -> String {
        format!("[{}]", list.join(", "))
    }

    /// Closed at `now` (a Saturday): the next window opens on Monday.
    const WINDOW_CLOSED: &str = r#""policy": {"purge_volumes": true, "windows": ["allow Mon-Fri 02:00-05:00 UTC"]},
        "now": "2026-12-05T12:00:00Z""#;

    fn at(text: &str) -> Option<UnixTime> {
        Some(UnixTime::parse_rfc3339(text).unwrap())
    }

    #[test]
    fn a_release_the_change_drops_outside_the_window_is_added_as_pending() {
        let doc = format!(r#"{WINDOW_CLOSED}, "swarms": {SWARMS}"#);
        let diff = settled_diff(&doc, &apps(&[SHOP, BLOG]), &apps(&[SHOP]));
        let [added] = &diff.added[..] else {
            panic!("{diff:#?}")
        };
        assert_eq!(added.deletion.release, "blog");
        assert_eq!(added.spared_as, Some(SpareReason::CurrentApplication));
        let pending = added.pending.as_ref().expect("pending");
        assert_eq!(
            pending.waits_for,
            [Wait {
                opens_at: at("2026-12-07T02:00:00Z"),
                ..Wait::new(Delay::OutsideWindow)
            }]
        );
        assert!(pending
            .detail
            .as_deref()
            .unwrap()
            .contains("outside_window"));
        assert_eq!(
            pending.text(&|n: &str| n.to_owned()),
            "once the next deletion window opens at 2026-12-07T02:00:00Z"
        );
        // `old` is the backlog: held either way, not the change's.
        assert!(diff.removed.is_empty());
        assert_eq!(diff.counts.releases_added, 1);
        assert_eq!(diff.counts.releases_pending_added, 1);
        assert!(diff.adds_deletions());
        // The window's hold is on both sides: no hold differs.
        assert!(diff.holds_added.is_empty() && diff.holds_removed.is_empty());
        // Between the plans alone, the delay hides it.
        let of = |list: &[&str]| {
            let text = format!(
                r#"{{"app_set": {{"loaded": true, "applications": {}}}, {doc}}}"#,
                apps(list)
            );
            plan(&Snapshot::from_json(&text).unwrap()).unwrap()
        };
        assert!(PlanDiff::between(&of(&[SHOP, BLOG]), &of(&[SHOP])).is_empty());
    }

    #[test]
    fn a_release_the_change_drops_in_its_grace_period_is_added_as_pending() {
        let doc = format!(
            r#""policy": {{"min_departed_for": "10m"}}, "now": "2026-12-01T08:00:00Z", "swarms": {SWARMS}"#
        );
        let diff = settled_diff(&doc, &apps(&[SHOP, BLOG]), &apps(&[SHOP]));
        let [added] = &diff.added[..] else {
            panic!("{diff:#?}")
        };
        assert_eq!(added.deletion.release, "blog");
        let pending = added.pending.as_ref().expect("pending");
        // First seen departed now: the whole period is left.
        assert_eq!(
            pending.waits_for,
            [Wait {
                time_left: Some(600),
                ..Wait::new(Delay::GracePeriod)
            }]
        );
        assert_eq!(
            pending.text(&|n: &str| n.to_owned()),
            "once its grace period ends, in 10m"
        );
        assert!(diff.adds_deletions());
    }

    #[test]
    fn a_release_the_change_brings_back_that_the_base_deletes_later_is_removed() {
        let doc = format!(r#"{WINDOW_CLOSED}, "swarms": {SWARMS}"#);
        let diff = settled_diff(&doc, &apps(&[SHOP]), &apps(&[SHOP, BLOG]));
        assert!(diff.added.is_empty());
        let [removed] = &diff.removed[..] else {
            panic!("{diff:#?}")
        };
        assert_eq!(removed.deletion.release, "blog");
        assert_eq!(removed.spared_as, Some(SpareReason::CurrentApplication));
        assert_eq!(
            removed.pending.as_ref().unwrap().waits_for[0].reason,
            Delay::OutsideWindow
        );
        assert_eq!(diff.counts.releases_pending_removed, 1);
        assert!(!diff.adds_deletions());
    }

    #[test]
    fn applications_reconciling_or_draining_delay_a_deletion_they_do_not_prevent() {
        // `new` has not reconciled on alpha in either app set: what the
        // change un-declares there goes once it has (unless it declares
        // it).
        let new = r#"{"name": "new", "swarm": "alpha"}"#;
        let doc = format!(r#""swarms": {SWARMS}"#);
        let diff = settled_diff(&doc, &apps(&[SHOP, BLOG, new]), &apps(&[SHOP, new]));
        let pending = diff.added[0].pending.as_ref().expect("pending");
        assert_eq!(diff.added[0].deletion.release, "blog");
        assert_eq!(pending.waits_for[0].reason, Delay::Unreconciled);
        assert_eq!(pending.waits_for[0].applications, ["new"]);
        assert_eq!(
            pending.text(&|n: &str| format!("`{n}`")),
            "once application `new` has reconciled"
        );
        // `gone` has left the set and is still draining from alpha.
        let gone = r#"{"name": "gone", "swarm": "alpha", "state": "draining"}"#;
        let diff = settled_diff(&doc, &apps(&[SHOP, BLOG, gone]), &apps(&[SHOP, gone]));
        let pending = diff.added[0].pending.as_ref().expect("pending");
        assert_eq!(pending.waits_for[0].reason, Delay::Draining);
        assert_eq!(pending.waits_for[0].applications, ["gone"]);
        // Draining from a swarm the snapshot does not list: no hold, the
        // release itself is held.
        let lost = r#"{"name": "blog", "swarm": "nowhere", "state": "draining"}"#;
        let diff = settled_diff(&doc, &apps(&[SHOP, BLOG]), &apps(&[SHOP, lost]));
        assert_eq!(
            diff.added[0].spared_as,
            Some(SpareReason::CurrentApplication)
        );
        let pending = diff.added[0].pending.as_ref().expect("pending");
        assert_eq!(pending.waits_for[0].reason, Delay::Draining);
        assert_eq!(pending.waits_for[0].applications, ["blog"]);
    }

    #[test]
    fn a_moved_application_not_reconciled_on_its_destination_deletes_its_old_copy_later() {
        let doc = r#""swarms": [
            {"swarm": "alpha", "cluster_id": "A", "releases": [{"name": "web", "owner": "cd/default/shop:release/web"}]},
            {"swarm": "beta", "cluster_id": "B", "releases": []}]"#;
        let moved = r#"{"name": "shop", "swarm": "beta"}"#;
        let diff = settled_diff(doc, &apps(&[SHOP]), &apps(&[moved]));
        let [added] = &diff.added[..] else {
            panic!("{diff:#?}")
        };
        assert_eq!(added.deletion.release, "web");
        assert_eq!(
            added.deletion.reason,
            crate::plan::DeletionReason::DestinationMoved
        );
        let pending = added.pending.as_ref().expect("pending");
        assert_eq!(pending.waits_for[0].reason, Delay::Unreconciled);
        assert_eq!(pending.waits_for[0].applications, ["shop"]);
        assert_eq!(diff.holds_added[0].reason, HoldReason::Unreconciled);
    }

    #[test]
    fn a_hold_the_change_makes_delays_what_the_base_deletes_now() {
        // The base deletes `blog` and `old` now; the change sends `new` to
        // alpha, which holds them until it has reconciled: no longer at
        // the next sweep, but deleted then too.
        let new = r#"{"name": "new", "swarm": "alpha"}"#;
        let doc = format!(r#""swarms": {SWARMS}"#);
        let diff = settled_diff(&doc, &apps(&[SHOP]), &apps(&[SHOP, new]));
        assert!(diff.added.is_empty());
        let removed: Vec<&str> = diff
            .removed
            .iter()
            .map(|c| c.deletion.release.as_str())
            .collect();
        assert_eq!(removed, ["blog", "old"]);
        for c in &diff.removed {
            assert_eq!(c.spared_as, Some(SpareReason::Held));
            assert!(c.pending.is_none());
            let until = c.spared_until.as_ref().expect("deleted later too");
            assert_eq!(until.waits_for[0].reason, Delay::Unreconciled);
            assert_eq!(until.waits_for[0].applications, ["new"]);
        }
        assert_eq!(diff.counts.releases_pending_removed, 0);
    }

    #[test]
    fn what_a_person_has_to_release_is_never_pending() {
        // More deletions than max_deletions: the change's plan holds the
        // whole sweep, which only a person lifts.
        let doc = format!(r#""policy": {{"max_deletions": 1}}, "swarms": {SWARMS}"#);
        let diff = settled_diff(&doc, &apps(&[SHOP, BLOG]), &apps(&[SHOP]));
        assert!(diff.added.is_empty(), "{diff:#?}");
        assert_eq!(diff.holds_added[0].reason, HoldReason::BlastRadius);
        // A swarm whose volumes no node reaches, under a closed window.
        let doc = format!(
            r#"{WINDOW_CLOSED}, "swarms": [{{"swarm": "alpha", "nodes": [],
                "releases": [{{"name": "blog", "owner": "cd/default/blog:release/blog"}}]}}]"#
        );
        let diff = settled_diff(&doc, &apps(&[SHOP, BLOG]), &apps(&[SHOP]));
        assert!(diff.added.is_empty(), "{diff:#?}");
        // A keep label.
        let doc = r#""swarms": [{"swarm": "alpha", "releases": [{"name": "blog", "owner": "cd/default/blog:release/blog",
            "objects": {"services": [{"id": "s1", "name": "blog_app", "version": 1, "keep": "true"}]}}]}]"#;
        let diff = settled_diff(doc, &apps(&[SHOP, BLOG]), &apps(&[SHOP]));
        assert!(diff.added.is_empty(), "{diff:#?}");
    }

    #[test]
    fn dropped_objects_a_window_holds_are_pending_too() {
        let mut doc: serde_json::Value =
            serde_json::from_str(include_str!("../../examples/dropped-objects.json")).unwrap();
        doc["policy"]["windows"] =
            serde_json::json!(["deny 2026-12-01T00:00:00Z/2026-12-31T00:00:00Z"]);
        doc["now"] = serde_json::json!("2026-12-05T12:00:00Z");
        let opted = doc["app_set"]["applications"].to_string();
        let mut out = doc["app_set"]["applications"].clone();
        out[0]["prune_resources"] = false.into();
        let doc = doc.as_object().unwrap();
        let rest: Vec<String> = doc
            .iter()
            .filter(|(k, _)| k.as_str() != "app_set")
            .map(|(k, v)| format!("{}: {v}", serde_json::Value::from(k.as_str())))
            .collect();
        // The change opts `shop` in to the resource rule.
        let diff = settled_diff(&rest.join(", "), &out.to_string(), &opted);
        assert!(diff.added.is_empty());
        assert_eq!(diff.dropped_added.len(), 3, "{diff:#?}");
        for d in &diff.dropped_added {
            let pending = d.pending.as_ref().expect("pending");
            assert_eq!(pending.waits_for[0].reason, Delay::OutsideWindow);
            assert_eq!(pending.waits_for[0].opens_at, at("2026-12-31T00:00:00Z"));
        }
        assert_eq!(diff.counts.dropped_pending_added, 3);
        assert!(diff.adds_deletions());
    }
}
