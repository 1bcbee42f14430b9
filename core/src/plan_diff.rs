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

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::format::FormatVersion;
use crate::owner::ControllerId;
use crate::plan::{Deletion, DroppedObject, Hold, SpareReason, SwarmPlan, SweepPlan};
use crate::refs::SwarmName;

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
    /// objects and volumes.
    pub added: Vec<ChangedDeletion>,
    /// Releases the base deletes and the change does not.
    pub removed: Vec<ChangedDeletion>,
    /// Dropped objects (the resource rule) the change removes and the base
    /// does not.
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
}

/// A release one plan deletes and the other does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ChangedDeletion {
    /// The deletion, as the plan that makes it has it.
    pub deletion: Deletion,
    /// Why the other plan spares the release (in `added`: the base; in
    /// `removed`: the change); `None` when it does not list it.
    pub spared_as: Option<SpareReason>,
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
}

impl PlanDiff {
    /// What `change` deletes that `base` does not, and the reverse; both
    /// plans of the same snapshot, under two app sets. `change`'s
    /// controller and volume purge are the document's (one snapshot gives
    /// both plans the same).
    pub fn between(base: &SweepPlan, change: &SweepPlan) -> PlanDiff {
        let added = one_side(change, base);
        let removed = one_side(base, change);
        let dropped_added = dropped_only(change, base);
        let dropped_removed = dropped_only(base, change);
        let holds_added = holds_only(change, base);
        let holds_removed = holds_only(base, change);
        let counts = DiffCounts {
            releases_added: added.len() as u64,
            releases_removed: removed.len() as u64,
            volumes_added: volumes(change, &added),
            volumes_removed: volumes(base, &removed),
            dropped_added: dropped_added.len() as u64,
            dropped_removed: dropped_removed.len() as u64,
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
            .swarms
            .iter()
            .filter(|s| named.contains(&s.swarm))
            .cloned()
            .collect();
        PlanDiff {
            format_version: FormatVersion,
            controller: change.controller.clone(),
            purge_volumes: change.purge_volumes,
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

    /// Whether the change deletes anything the base does not: a release
    /// or a dropped object.
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

/// The deletions of `this` that `other` does not make, with why `other`
/// spares them. A release is one by its swarm and name: the two plans
/// share a snapshot, so a release both delete is the same deletion.
fn one_side(this: &SweepPlan, other: &SweepPlan) -> Vec<ChangedDeletion> {
    let theirs: BTreeMap<(&SwarmName, &str), ()> = other
        .deletions
        .iter()
        .map(|d| ((&d.swarm, d.release.as_str()), ()))
        .collect();
    let spared: BTreeMap<(&SwarmName, &str), SpareReason> = other
        .spared
        .iter()
        .map(|s| ((&s.swarm, s.release.as_str()), s.reason))
        .collect();
    let mut only: Vec<ChangedDeletion> = this
        .deletions
        .iter()
        .filter(|d| !theirs.contains_key(&(&d.swarm, d.release.as_str())))
        .map(|d| ChangedDeletion {
            deletion: d.clone(),
            spared_as: spared.get(&(&d.swarm, d.release.as_str())).copied(),
        })
        .collect();
    only.sort_by(|a, b| {
        (&a.deletion.swarm, &a.deletion.release).cmp(&(&b.deletion.swarm, &b.deletion.release))
    });
    only
}

/// Every dropped object of `plan`, keyed by its swarm, release, kind and
/// id.
fn dropped_of(plan: &SweepPlan) -> BTreeMap<(&SwarmName, &str, &str, &str), ChangedDropped> {
    plan.dropped
        .iter()
        .flat_map(|d| {
            d.objects.iter().map(move |o| {
                (
                    (&d.swarm, d.release.as_str(), o.kind.as_str(), o.id.as_str()),
                    ChangedDropped {
                        swarm: d.swarm.clone(),
                        release: d.release.clone(),
                        application: d.application.clone(),
                        object: o.clone(),
                    },
                )
            })
        })
        .collect()
}

/// The dropped objects `this` removes and `other` does not, in key order.
fn dropped_only(this: &SweepPlan, other: &SweepPlan) -> Vec<ChangedDropped> {
    let theirs = dropped_of(other);
    dropped_of(this)
        .into_iter()
        .filter(|(key, _)| !theirs.contains_key(key))
        .map(|(_, changed)| changed)
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
}
