//! The plan: which releases may go, which stay and why, what holds the
//! sweep, and which nodes a volume purge cannot reach.
//!
//! [`plan()`] is a pure function of the [`Snapshot`]: the same snapshot,
//! with its lists in any order, gives a byte-identical plan, and carrying a
//! plan out and planning again gives no deletions. [`plan_json`] plans JSON
//! text in place, without an owned copy of the snapshot.
//!
//! The steps are private to the crate, so that the rules have one entry
//! point: names that are one cluster are grouped first (a release is never
//! judged on one name of a cluster alone), then the holds are found, then
//! each release is decided, then the plan says what a volume purge can
//! reach on each swarm ([`Coverage`]).

pub(crate) mod classify;
mod coverage;
mod dropped;
mod holds;
mod moved;
mod reads;
pub(crate) mod swarms;

use std::collections::BTreeSet;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::format::FormatVersion;
use crate::grace::Departed;
use crate::names::named_enum;
use crate::objects::{ObjectVersion, StackObjects};
use crate::owner::ControllerId;
use crate::refs::{ReleaseRef, SwarmName};
use crate::snapshot::{Facts, NodeEntry, Snapshot, SnapshotError, SnapshotStr, Text};
use crate::time::UnixTime;
use crate::usage::{self, InUse, UsageIndex};

use classify::{Decision, Grace};
pub use coverage::Coverage;
pub use dropped::{
    Dropped, DroppedObject, ResourceHold, ResourceHoldReason, SkippedRevision, Unclaimed,
    UnclaimedReason,
};
pub use holds::PlanWindows;

/// The plan for one sweep. Every list is sorted.
///
/// Made by [`plan()`], carried out by [`crate::sweep::Sweep`], printed for
/// people by [`crate::render::plan_text`]. Its JSON
/// ([`SweepPlan::to_json_pretty`]) is a public contract (`swarm-sweep plan
/// --format json`, saved plans): field names never change.
///
/// A deletion in it is a decision made on the snapshot as it was: a driver
/// must not delete anything the plan does not list, and must re-read a
/// release's stamps before each destructive step (the [`Sweep`] asks for
/// that), since the swarm may have changed since.
///
/// [`Sweep`]: crate::sweep::Sweep
///
/// # Example
///
/// The JSON output, and reading it back:
///
/// ```
/// use sweep_core::{plan, Snapshot, SweepPlan};
///
/// let snapshot = Snapshot::from_json(r#"{
///     "app_set": {"loaded": true, "applications": [
///         {"name": "shop", "swarm": "alpha", "releases": ["web"]}
///     ]},
///     "swarms": [{"swarm": "alpha", "releases": [
///         {"name": "web", "owner": "cd/default/shop:release/web"},
///         {"name": "blog", "owner": "cd/default/blog:release/blog"}
///     ]}]
/// }"#)?;
/// let plan = plan(&snapshot)?;
///
/// let json = plan.to_json_pretty();
/// let value: serde_json::Value = serde_json::from_str(&json).unwrap();
/// assert_eq!(value["format_version"], 2);
/// assert_eq!(value["controller"], "default");
/// assert_eq!(value["deletions"][0]["swarm"], "alpha");
/// assert_eq!(value["deletions"][0]["release"], "blog");
/// assert_eq!(value["deletions"][0]["reason"], "departed");
/// assert_eq!(value["spared"][0]["release"], "web");
///
/// // A plan read back is the same plan; its controller id is checked again.
/// let back: SweepPlan = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, plan);
/// # Ok::<(), sweep_core::SnapshotError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
// The schema's description: the first paragraph, without the Rust.
#[cfg_attr(
    feature = "schema",
    schemars(description = "The plan for one sweep. Every list is sorted.")
)]
// Here and in every struct below: a saved plan is a file an operator may
// edit, and a misspelt or invented field silently dropped would apply
// something other than what the file says.
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct SweepPlan {
    /// The format version of the document; only this one is read.
    #[serde(default)]
    pub format_version: FormatVersion,
    /// The controller whose releases the plan deletes, checked when the
    /// plan was made (and again when one is read back from JSON), so that
    /// no driver has to.
    pub controller: ControllerId,
    /// Whether the sweep removes the deleted releases' named volumes too
    /// (`policy.purge_volumes`).
    pub purge_volumes: bool,
    /// Whether the resource rule was applied (`policy.prune_resources`).
    #[serde(default)]
    pub prune_resources: bool,
    /// What stops the sweep, or deletions on some swarms, and why; sweep-wide
    /// holds first. A held release is listed in `spared`, never in
    /// `deletions`.
    pub holds: Vec<Hold>,
    /// The releases that may be deleted: every one is this controller's,
    /// provably departed or moved, and held by nothing.
    pub deletions: Vec<Deletion>,
    /// Every other release the snapshot lists, with the reason it stays.
    pub spared: Vec<Spared>,
    /// With volume purge on, the swarms whose purge cannot reach every node
    /// they count: a sweep there removes the stack but may leave volumes on
    /// nodes it did not reach, and never claims completeness.
    pub uncovered: Vec<Uncovered>,
    /// Every swarm the plan knows of, one entry per cluster.
    pub swarms: Vec<SwarmPlan>,
    /// The objects live releases dropped from their charts, proven ours
    /// (the resource rule): removed by the sweep, services first. Never
    /// whole releases.
    #[serde(default)]
    pub dropped: Vec<Dropped>,
    /// Objects of live releases' stacks that their current revisions do
    /// not declare, which the rule does not prove dropped: information,
    /// never removed.
    #[serde(default)]
    pub unclaimed: Vec<Unclaimed>,
    /// Live releases of opted-in applications the resource rule leaves
    /// whole, and why.
    #[serde(default)]
    pub resource_holds: Vec<ResourceHold>,
    /// Stored revisions the resource rule skipped because their data
    /// cannot be read.
    #[serde(default)]
    pub skipped_revisions: Vec<SkippedRevision>,
    /// Every release the rules call departed and deletable (deleted, in
    /// its grace period, or held), with when it was first seen so: the
    /// next sweep's `departed_since`. Empty (and left out) when the
    /// snapshot has no `now`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub departed: Vec<Departed>,
}

impl SweepPlan {
    /// True when a hold stops the whole sweep, not only some swarms.
    pub fn is_held(&self) -> bool {
        self.holds.iter().any(|h| h.swarm.is_none())
    }

    /// How many objects of live releases the plan removes (the resource
    /// rule's `dropped`, those kept in use not counted). A deletion as much
    /// as a release is: whatever asks, gates or counts before deleting
    /// counts these too.
    pub fn dropped_objects(&self) -> usize {
        self.dropped.iter().map(|d| d.objects.len()).sum()
    }

    /// True when carrying the plan out removes something: a release or a
    /// dropped object, and no hold stops the whole sweep.
    pub fn deletes_anything(&self) -> bool {
        !self.is_held() && (!self.deletions.is_empty() || self.dropped_objects() > 0)
    }

    /// The earliest moment a swarm held only by its deletion windows may
    /// have deletions again (`outside_window` holds' `opens_at`): when a
    /// driver that sweeps on an interval should look again, if sooner. A
    /// swarm also held for another reason, or a sweep held as a whole,
    /// does not count: the window opening changes nothing there.
    pub fn window_opens_at(&self) -> Option<UnixTime> {
        if self.is_held() {
            return None;
        }
        self.holds
            .iter()
            .filter(|h| h.reason == HoldReason::OutsideWindow)
            .filter(|h| {
                self.holds
                    .iter()
                    .all(|o| o.swarm != h.swarm || o.reason == HoldReason::OutsideWindow)
            })
            .filter_map(|h| h.opens_at)
            .min()
    }

    /// The swarm entry a deletion's `swarm` field names: the entry whose
    /// name (the smallest of its cluster's) is `name`. For any name of a
    /// cluster, use [`SweepPlan::cluster_of`].
    pub fn swarm(&self, name: &SwarmName) -> Option<&SwarmPlan> {
        // `plan` sorts `swarms` by name, so this is a search, not a scan per
        // deletion; a plan read back from elsewhere may not be sorted.
        match self.swarms.binary_search_by(|s| s.swarm.cmp(name)) {
            Ok(i) => Some(&self.swarms[i]),
            Err(_) => self.swarms.iter().find(|s| &s.swarm == name),
        }
    }

    /// The swarm entry of the cluster the snapshot listed `name` under,
    /// whichever of the cluster's names `name` is; `None` when the snapshot
    /// did not list `name`. Two names are one swarm when they give the
    /// same entry: every rule of the plan treats them as one.
    ///
    /// ```
    /// use sweep_core::{plan, Snapshot, SwarmName};
    ///
    /// // `alpha` and `zeta` resolve to the same cluster id: one swarm.
    /// let snapshot = Snapshot::from_json(r#"{
    ///     "app_set": {"loaded": true, "applications": []},
    ///     "swarms": [
    ///         {"swarm": "zeta", "cluster_id": "C1"},
    ///         {"swarm": "alpha", "cluster_id": "C1"},
    ///         {"swarm": "beta", "cluster_id": "C2"}
    ///     ]
    /// }"#)?;
    /// let plan = plan(&snapshot)?;
    /// let zeta = plan.cluster_of(&SwarmName::new("zeta")).unwrap();
    /// assert_eq!(zeta.swarm, SwarmName::new("alpha"));
    /// assert_eq!(zeta.names, [SwarmName::new("alpha"), SwarmName::new("zeta")]);
    /// assert_ne!(plan.cluster_of(&"beta".into()), Some(zeta));
    /// assert_eq!(plan.cluster_of(&"gamma".into()), None);
    /// # Ok::<(), sweep_core::SnapshotError>(())
    /// ```
    pub fn cluster_of(&self, name: &SwarmName) -> Option<&SwarmPlan> {
        self.swarm(name)
            .filter(|s| s.names.contains(name))
            .or_else(|| self.swarms.iter().find(|s| s.names.contains(name)))
    }

    /// The plan as pretty-printed JSON: the document `swarm-sweep plan
    /// --format json` prints and a saved plan holds.
    pub fn to_json_pretty(&self) -> String {
        // Plain data of strings, numbers and enums: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Why nothing is deleted somewhere: the whole sweep, or one swarm.
///
/// A hold never turns into a deletion; it only spares. Every release a
/// hold keeps is listed as spared, with the reason `held`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Hold {
    /// `"sweep"` for the whole sweep, else the swarm's name.
    pub scope: String,
    /// `None` for the whole sweep; the swarm otherwise. Kept beside `scope`
    /// so that a swarm that happens to be named `sweep` is not misread.
    pub swarm: Option<SwarmName>,
    /// Why it holds.
    pub reason: HoldReason,
    /// The applications behind the hold, sorted.
    pub applications: Vec<String>,
    /// What the hold means, for people. Raw: it may quote names and error
    /// texts from outside, so escape it before printing it to a terminal.
    pub message: Option<String>,
    /// For `outside_window`: when the swarm's deletion windows next let a
    /// deletion through; `None` when none does within about a year, or the
    /// snapshot has no time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub opens_at: Option<UnixTime>,
}

impl Hold {
    /// A hold of the whole sweep.
    pub(crate) fn sweep(reason: HoldReason, message: impl Into<String>) -> Self {
        Hold {
            scope: "sweep".to_owned(),
            swarm: None,
            reason,
            applications: Vec::new(),
            message: Some(message.into()),
            opens_at: None,
        }
    }

    /// A hold of one swarm, named by its cluster's name.
    pub(crate) fn swarm(
        swarm: &SwarmName,
        reason: HoldReason,
        applications: Vec<String>,
        message: Option<String>,
    ) -> Self {
        Hold {
            scope: swarm.as_str().to_owned(),
            swarm: Some(swarm.clone()),
            reason,
            applications,
            message,
            opens_at: None,
        }
    }
}

named_enum! {
    /// Why a [`Hold`] holds. JSON and text give it by name (`as_str`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum HoldReason {
        /// The app set could not be read completely: every release would
        /// look departed. Holds the whole sweep.
        AppSetNotLoaded = "app_set_not_loaded",
        /// The app set declares no live application: an empty set and a
        /// lost one look the same. Holds the whole sweep.
        EmptyAppSet = "empty_app_set",
        /// An application sent to this swarm has not said yet which
        /// releases it declares, so it may declare any of them.
        Unreconciled = "unreconciled",
        /// An application that left the app set is still syncing its way
        /// out of this swarm.
        Draining = "draining",
        /// The swarm could not be read; its releases are unknown.
        SwarmUnreadable = "swarm_unreadable",
        /// Volume purge is on and the registry reaches no node of the
        /// swarm: removing a stack would strand its volumes with no record
        /// left to find them by.
        NoReachableNode = "no_reachable_node",
        /// The plan would delete more releases than `policy.max_deletions`:
        /// a truncated listing or a mangled app set looks like this. Holds
        /// the whole sweep.
        BlastRadius = "blast_radius",
        /// Applications name a destination no swarm of the snapshot has; their
        /// releases are spared everywhere. Holds no swarm of its own.
        UnknownDestination = "unknown_destination",
        /// The snapshot's time is outside the swarm's deletion windows
        /// (`policy.windows` and its own): nothing is deleted there until
        /// the next one opens (`Hold::opens_at`).
        OutsideWindow = "outside_window",
    }
}

impl HoldReason {
    /// Whether a person has to act. Waiting for an application to
    /// reconcile or drain, or for a deletion window to open, is the normal
    /// course of things and resolves itself; every other hold means part
    /// of the sweep cannot be done until someone fixes its cause.
    pub fn needs_attention(self) -> bool {
        !matches!(
            self,
            HoldReason::Unreconciled | HoldReason::Draining | HoldReason::OutsideWindow
        )
    }
}

/// A release that may be deleted: this controller's, provably departed
/// (or moved), and held by nothing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Deletion {
    /// The swarm it is on, by its cluster's name (the smallest one).
    pub swarm: SwarmName,
    /// The release (stack) name, unique within its swarm only.
    pub release: String,
    /// The application its owner stamp names.
    pub application: String,
    /// Why it goes.
    pub reason: DeletionReason,
    /// What a volume purge of this release can reach.
    pub volumes: Coverage,
    /// The objects its deletion removes, as listed when the snapshot was
    /// gathered (the release records go last); `None` when the snapshot
    /// did not list them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<StackObjects>,
    /// The objects of the release that another workload uses, one entry
    /// per object and user, sorted: they are not in `objects` and stay,
    /// and so do the release's records, until nobody uses them. For
    /// people and for a saved plan's check; a driver carries out
    /// `objects` alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub in_use_by: Vec<InUse>,
    /// What the deletion relies on being unchanged (see [`Observed`]);
    /// `None` when the snapshot did not carry it, or its names of one
    /// cluster disagreed about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Observed>,
}

/// The fingerprint of a release as planned: its release records' ids and
/// versions and its stack's services' ids and versions. A restamp raises a
/// record's version, a redeploy a service's, a re-creation changes ids: a
/// saved plan whose deletion's fingerprint is not what is observed again is
/// stale for that release.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Observed {
    /// Sorted.
    pub records: Vec<ObjectVersion>,
    /// Sorted.
    pub services: Vec<ObjectVersion>,
}

impl Observed {
    /// The fingerprint of what was observed, when both the records and the
    /// stack's services were.
    pub(crate) fn of(facts: Facts<'_>) -> Option<Self> {
        Observed::of_owned(facts.records.map(<[_]>::to_vec), facts.objects)
    }

    /// [`Observed::of`] what was observed, the records taken rather than
    /// borrowed.
    pub(crate) fn of_owned(
        records: Option<Vec<ObjectVersion>>,
        objects: Option<&StackObjects>,
    ) -> Option<Self> {
        let mut records = records?;
        let mut services: Vec<ObjectVersion> = objects?
            .services
            .iter()
            .map(|s| ObjectVersion::new(s.id.clone(), s.version))
            .collect();
        records.sort();
        services.sort();
        Some(Observed { records, services })
    }
}

impl Deletion {
    /// The swarm-qualified name of the release.
    pub fn release_ref(&self) -> ReleaseRef {
        ReleaseRef::new(self.swarm.clone(), self.release.clone())
    }
}

named_enum! {
    /// Why a [`Deletion`] goes. JSON and text give it by name (`as_str`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum DeletionReason {
        /// The owning application has left the app set.
        Departed = "departed",
        /// The owning application now deploys to another swarm.
        DestinationMoved = "destination_moved",
    }
}

/// A release that stays, and why.
///
/// Every release the snapshot lists that the plan does not delete is
/// spared, with the most basic reason that applies: whose it is first,
/// then whether it is still wanted, then holds and the grace period.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Spared {
    /// The swarm it is on, by its cluster's name (the smallest one).
    pub swarm: SwarmName,
    /// The release (stack) name.
    pub release: String,
    /// Why it stays.
    pub reason: SpareReason,
    /// The owning application, when the release is this controller's.
    pub application: Option<String>,
    /// More about the reason, for people.
    pub detail: Option<String>,
    /// For `grace_period`: whole seconds until it may be deleted, when
    /// the snapshot gives the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub time_left: Option<u64>,
}

named_enum! {
    /// Why a release is [`Spared`]. JSON and text give it by name
    /// (`as_str`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum SpareReason {
        /// No owner stamp this controller writes: deployed by hand, by
        /// another tool, or stamped with this controller's prefix in a
        /// shape it never writes (edited or copied). Nobody's to delete.
        Unmanaged = "unmanaged",
        /// Stamped by another controller or tool.
        ForeignOwner = "foreign_owner",
        /// The stack the controller itself runs as (`self_stack`).
        OwnStack = "own_stack",
        /// Its application is in the app set and this copy may still be
        /// needed: the application deploys to this swarm, or it moved and
        /// has not reconciled on its new destination yet, or its
        /// destination could not be read or is not a swarm of the snapshot
        /// (which proves nothing about where it runs).
        CurrentApplication = "current_application",
        /// A live application declares a release of this name on this
        /// swarm, whoever stamped it (a rename hands a release to another
        /// application before its stamp is rewritten), or on a destination
        /// the snapshot does not list.
        Declared = "declared",
        /// It would be deleted, but a hold (see [`Hold`]) stops deletions
        /// on its swarm or the whole sweep.
        Held = "held",
        /// A service of its stack carries the keep label
        /// ([`crate::objects::KEEP_LABEL`]): an operator kept it by hand.
        Kept = "kept",
        /// It would be deleted, but has not been seen departed for
        /// `policy.min_departed_for` yet.
        GracePeriod = "grace_period",
    }
}

/// A swarm whose volume purge cannot reach every node it counts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Uncovered {
    /// The swarm, by its cluster's name.
    pub swarm: SwarmName,
    /// The swarm's own count; `None` when it could not be read.
    pub node_count: Option<u64>,
    /// Names of the nodes the registry reached, sorted.
    pub reached: Vec<String>,
    /// How many counted nodes were not reached; `None` when unknown.
    pub missing: Option<u64>,
    /// The nodes of the swarm's own node list that were not reached, by
    /// name; `None` when the node list or the reach is unknown.
    pub unreached: Option<Vec<String>>,
    /// What a purge on it covers: `partial` or `node_local`.
    pub coverage: Coverage,
}

impl Uncovered {
    /// A swarm whose purge coverage is `coverage` and whose node count,
    /// reach and missing nodes are unknown.
    pub(crate) fn unknown(swarm: SwarmName, coverage: Coverage) -> Self {
        Uncovered {
            swarm,
            node_count: None,
            reached: Vec::new(),
            missing: None,
            unreached: None,
            coverage,
        }
    }
}

/// One swarm (cluster) as the plan sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct SwarmPlan {
    /// The name deletions use: the smallest of the cluster's names.
    pub swarm: SwarmName,
    /// Every name the snapshot listed this cluster under, sorted.
    pub names: Vec<SwarmName>,
    /// The cluster id its names resolved to; `None` when no name reported
    /// one (the name is then a cluster of its own).
    pub cluster_id: Option<String>,
    /// False when any of its names could not be read: its releases are
    /// then unknown, and a `swarm_unreadable` hold stops deletions on it.
    pub readable: bool,
    /// The largest node count any of its names reported (the cautious one
    /// for coverage); `None` when none could be read.
    pub node_count: Option<u64>,
    /// The nodes the registry reached, sorted by id; `None` when it cannot
    /// reach nodes individually (a purge then covers the manager only).
    pub nodes: Option<Vec<NodeEntry>>,
    /// Coverage of a volume purge on this swarm (`off` without purge).
    pub coverage: Coverage,
    /// Nodes on the swarm's own node list the registry did not reach.
    pub unreached: Option<Vec<String>>,
    /// Whether every node the swarm counts was reached and its containers
    /// read: otherwise a container of no service on some node may use any
    /// attachable network unseen, and the sweep's re-reads before a
    /// removal keep such networks as the plan did. Left out when false,
    /// and false when absent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every_node_read: bool,
}

/// Plans a sweep. Errors only on an invalid snapshot (the checks of
/// [`Snapshot::validate`]).
///
/// Pure and deterministic: no IO, no clock (the time is the snapshot's
/// `now`), and the same snapshot with its lists in any order gives the same
/// plan. Every decision is made on swarm-qualified names, with the names of
/// one cluster taken together. A release is deleted only when it is
/// provably this controller's (its owner stamp), its application has left
/// the app set or moved to another swarm, no live application declares it
/// there, and nothing holds the sweep; everything else is spared with a
/// reason.
///
/// # Example
///
/// A snapshot built in code: one swarm with two releases of the controller
/// `default`; `shop` still declares `web`, while `blog` has left the app
/// set.
///
/// ```
/// use sweep_core::{
///     plan, AppSet, Application, DeletionReason, Policy, ReleaseEntry, Snapshot,
///     SpareReason, SwarmName, SwarmSnapshot,
/// };
///
/// let mut alpha = SwarmSnapshot::new("alpha");
/// alpha.releases = vec![
///     ReleaseEntry::new("web", Some("cd/default/shop:release/web".to_owned())),
///     ReleaseEntry::new("blog", Some("cd/default/blog:release/blog".to_owned())),
///     // No owner stamp: deployed by hand, never deleted.
///     ReleaseEntry::new("grafana", None),
/// ];
/// let app_set = AppSet::new(true, vec![Application::reconciled("shop", "alpha", &["web"])]);
/// let snapshot = Snapshot::new(Policy::default(), app_set, vec![alpha]);
///
/// let plan = plan(&snapshot)?;
/// assert!(plan.holds.is_empty());
/// let [deletion] = &plan.deletions[..] else { panic!("one deletion") };
/// assert_eq!(deletion.release_ref().to_string(), "alpha/blog");
/// assert_eq!(deletion.application, "blog");
/// assert_eq!(deletion.reason, DeletionReason::Departed);
///
/// let spared: Vec<(&str, SpareReason)> =
///     plan.spared.iter().map(|s| (s.release.as_str(), s.reason)).collect();
/// assert_eq!(
///     spared,
///     [("grafana", SpareReason::Unmanaged), ("web", SpareReason::CurrentApplication)]
/// );
/// assert_eq!(plan.spared[0].swarm, SwarmName::new("alpha"));
/// # Ok::<(), sweep_core::SnapshotError>(())
/// ```
///
/// An app set that could not be read holds the whole sweep: nothing is
/// deleted, and every release that would have been is spared as held.
///
/// ```
/// use sweep_core::{plan, AppSet, HoldReason, Policy, ReleaseEntry, Snapshot, SwarmSnapshot};
///
/// let mut alpha = SwarmSnapshot::new("alpha");
/// alpha.releases = vec![ReleaseEntry::new("blog", Some("cd/default/blog:release/blog".to_owned()))];
/// let snapshot = Snapshot::new(Policy::default(), AppSet::new(false, vec![]), vec![alpha]);
///
/// let plan = plan(&snapshot)?;
/// assert!(plan.is_held());
/// assert_eq!(plan.holds[0].reason, HoldReason::AppSetNotLoaded);
/// assert!(plan.deletions.is_empty());
/// # Ok::<(), sweep_core::SnapshotError>(())
/// ```
pub fn plan(snapshot: &Snapshot) -> Result<SweepPlan, SnapshotError> {
    snapshot.validate()?;
    let mut plan = plan_valid(snapshot, FactsBy::Copying)?.plan;
    sort(&mut plan);
    Ok(plan)
}

/// Parses a snapshot from JSON text and plans it: the plan, and the error,
/// [`Snapshot::from_json`] followed by [`plan()`] give, without an owned
/// copy of the snapshot. Names are read in place from `text` (the same
/// types, holding `Text` instead of `String`), so a large snapshot costs
/// its text and the plan, not its text, a copy of every name and the plan.
///
/// What a deletion removes and relies on (its stack's objects, its record
/// versions) is moved out of the parsed snapshot into the plan, not
/// copied: the snapshot is dropped here anyway, and a copy of every
/// departed release's objects would cost more than the rest of the plan.
pub fn plan_json(text: &str) -> Result<SweepPlan, SnapshotError> {
    plan_json_parsed(text).map(|(plan, _parsed)| plan)
}

/// [`plan_json`], handing back what it parsed as well (less what it moved
/// into the plan), for the caller to free when it suits it.
///
/// Freeing a parsed snapshot of a million releases takes one call to the
/// allocator for each of its lists and copied strings, and leaves the
/// allocator millions of small free blocks to merge at its next large
/// request: a sizeable part of planning it. A process that writes the
/// plan and exits has no use for that memory back and may leave it to
/// the system (`std::mem::forget`); anyone else drops it.
pub fn plan_json_parsed(text: &str) -> Result<(SweepPlan, Parsed<'_>), SnapshotError> {
    let mut snapshot = crate::snapshot::snapshot_in_place(text)?;
    snapshot.validate()?;
    let Planned { mut plan, moves } = plan_valid(&snapshot, FactsBy::Moving)?;
    moved::fill(&mut plan.deletions, moves, &mut snapshot);
    sort(&mut plan);
    Ok((plan, Parsed(snapshot)))
}

/// What [`plan_json_parsed`] parsed, less what it moved into the plan:
/// names borrowed from the text, the rest owned. Of no use but to be
/// freed (dropped), or not (see [`plan_json_parsed`]).
pub struct Parsed<'a>(
    // Never read: it is kept only so that its owner decides when it is
    // freed.
    #[allow(dead_code)] Snapshot<Text<'a>>,
);

impl std::fmt::Debug for Parsed<'_> {
    // A snapshot of a million releases is no debugging output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Parsed(..)")
    }
}

/// The uses of `release`'s `objects` by other workloads, as every name of
/// its cluster that read them saw them: a use one name saw is a use.
/// `every_node_read`: whether the containers of every node the cluster
/// counts were read ([`usage::unseen_users`]).
fn shared(
    release: &str,
    objects: &StackObjects,
    purge: bool,
    usage: &[UsageIndex<'_>],
    every_node_read: bool,
) -> Vec<InUse> {
    let own = objects.services.iter().map(|s| s.id.as_str()).collect();
    let mut found: Vec<InUse> = usage
        .iter()
        .flat_map(|u| u.users_of(release, objects, purge, &own, &BTreeSet::new()))
        .chain(usage::unseen_users(&objects.networks, every_node_read))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// How a deletion gets the facts it carries from the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FactsBy {
    /// Copied: the caller keeps the snapshot.
    Copying,
    /// Left for the caller to move out of the snapshot ([`Planned::moves`]).
    Moving,
}

/// A plan, not sorted yet, and the deletions whose facts the caller moves
/// into it.
struct Planned {
    plan: SweepPlan,
    moves: Vec<moved::Move>,
}

/// What the rules give for some of the clusters, before the plan-wide
/// ones (the blast radius) and sorting.
struct Part {
    deletions: Vec<Deletion>,
    spared: Vec<Spared>,
    departed: Vec<Departed>,
    /// Positions in this part's `deletions`.
    moves: Vec<moved::Move>,
    resources: dropped::Resources,
}

impl Part {
    /// `next`, the part of the clusters after this part's, appended: the
    /// lists as one pass over both parts' clusters would have made them.
    fn append(mut self, mut next: Part) -> Part {
        let offset = self.deletions.len();
        self.moves
            .extend(next.moves.into_iter().map(|m| moved::Move {
                deletion: m.deletion + offset,
                ..m
            }));
        self.deletions.append(&mut next.deletions);
        self.spared.append(&mut next.spared);
        self.departed.append(&mut next.departed);
        self.resources.append(next.resources);
        self
    }
}

/// Fewer releases than this are decided on one thread: starting another
/// would cost more than the half it takes over.
const WORTH_A_THREAD: usize = 20_000;

/// The work each cluster takes, for splitting the clusters in two: its
/// releases (each is decided, and every list of the plan but `swarms` is
/// made of them), and one for the cluster itself.
fn weights(groups: &swarms::Groups<'_>) -> Vec<usize> {
    groups.iter().map(|g| g.releases.len() + 1).collect()
}

/// Plans a snapshot that [`Snapshot::validate`] accepted; the caller sorts.
fn plan_valid<S: SnapshotStr>(
    snapshot: &Snapshot<S>,
    facts_by: FactsBy,
) -> Result<Planned, SnapshotError> {
    let controller = ControllerId::new(snapshot.policy.controller.as_str())?;
    let purge = snapshot.policy.purge_volumes;
    let groups = swarms::group(snapshot);
    let mut holds = holds::find_in(snapshot, &groups);
    let apps = classify::AppIndex::of(snapshot, &groups);
    let reach: Vec<coverage::GroupReach> = groups.iter().map(coverage::GroupReach::new).collect();

    let held_by = holds::HoldIndex::new(&holds);
    let prune = snapshot.policy.prune_resources;
    let grace = Grace {
        window: snapshot.policy.min_departed_for,
        now: snapshot.now,
    };
    // The rules for the clusters `range`: each cluster is decided on its
    // own, from what is read-only here.
    let plan_part = |range: Range<usize>| {
        // Every release lands in one of the two: room for all of them in
        // each is address space only, and no list of a million entries is
        // copied to grow.
        let releases: usize = range.clone().map(|at| groups.at(at).releases.len()).sum();
        let mut part = Part {
            deletions: Vec::with_capacity(releases),
            spared: Vec::with_capacity(releases),
            departed: Vec::new(),
            moves: Vec::new(),
            resources: dropped::Resources::default(),
        };
        let Part {
            deletions,
            spared,
            departed,
            moves,
            resources,
        } = &mut part;
        for at in range {
            let (group, reach) = (groups.at(at), &reach[at]);
            let held = held_by.get(&group.swarm);
            // Built once per cluster: asked for every release it deletes.
            let uses: Vec<UsageIndex<'_>> =
                group.usage.iter().map(|u| UsageIndex::new(u)).collect();
            let mut declared = classify::Declared::new(&apps, at);
            for release in &group.releases {
                let declared = declared.of(release.name);
                if prune && group.error.is_none() && !group.self_stacks.contains(release.name) {
                    if let Some(declarer) = apps.resource_declarer(declared) {
                        let found = dropped::examine(
                            &controller,
                            group,
                            release,
                            declarer,
                            &uses,
                            reach.every_node_read(),
                        );
                        resources.add(found, held);
                    }
                }
                let decision =
                    classify::decide_at(&controller, &apps, &groups, at, group, release, declared);
                if let (Decision::Delete { .. }, Some(since)) =
                    (&decision, grace.since(release.departed_since))
                {
                    // Every release the rules would delete is departed, whatever
                    // then keeps it (a hold, its grace period): its clock runs on.
                    departed.push(Departed::new(group.swarm.clone(), release.name, since));
                }
                match decision {
                    Decision::Spare {
                        reason,
                        application,
                        detail,
                    } => spared.push(Spared {
                        swarm: group.swarm.clone(),
                        release: release.name.to_owned(),
                        reason,
                        application,
                        detail,
                        time_left: None,
                    }),
                    Decision::Delete {
                        application,
                        reason,
                    } if held.is_some() => spared.push(Spared {
                        swarm: group.swarm.clone(),
                        release: release.name.to_owned(),
                        reason: SpareReason::Held,
                        application: Some(application),
                        detail: held.map(|r| {
                            format!(
                                "would be deleted ({}) but the sweep is held: {}",
                                reason.as_str(),
                                r.as_str()
                            )
                        }),
                        time_left: None,
                    }),
                    Decision::Delete {
                        application,
                        reason,
                    } => match grace.waiting(release.departed_since, reason) {
                        // After every other rule: the grace period only ever
                        // turns a deletion into a wait.
                        Some(waiting) => spared.push(Spared {
                            swarm: group.swarm.clone(),
                            release: release.name.to_owned(),
                            reason: SpareReason::GracePeriod,
                            application: Some(application),
                            detail: Some(waiting.detail),
                            time_left: waiting.time_left,
                        }),
                        None => {
                            let facts = release.facts();
                            let objects = facts.and_then(|f| f.objects);
                            let in_use_by = objects
                                .map(|o| {
                                    shared(release.name, o, purge, &uses, reach.every_node_read())
                                })
                                .unwrap_or_default();
                            let place = release.place().filter(|_| facts_by == FactsBy::Moving);
                            if let Some(place) = place {
                                moves.push(moved::Move {
                                    deletion: deletions.len(),
                                    place,
                                });
                            }
                            let copied = place.is_none();
                            deletions.push(Deletion {
                                swarm: group.swarm.clone(),
                                release: release.name.to_owned(),
                                application,
                                reason,
                                volumes: reach.coverage(purge),
                                objects: objects
                                    .filter(|_| copied)
                                    .map(|o| usage::without_shared(o, &in_use_by).sorted()),
                                in_use_by,
                                observed: facts.filter(|_| copied).and_then(Observed::of),
                            })
                        }
                    },
                }
            }
        }
        part
    };
    let Part {
        mut deletions,
        mut spared,
        departed,
        mut moves,
        mut resources,
    } = crate::parallel::in_two(&weights(&groups), WORTH_A_THREAD, plan_part, Part::append);
    // The blast-radius guard looks at the plan as a whole: a truncated
    // registry listing or a mangled app set shows up as "too many". A
    // dropped object counts as one deletion, like a whole release.
    if let Some(max) = snapshot.policy.max_deletions {
        let objects = resources.objects();
        if (deletions.len() + objects) as u64 > max {
            let what = match objects {
                0 => format!("{} releases", deletions.len()),
                _ => format!("{} releases and {objects} dropped objects", deletions.len()),
            };
            holds.push(Hold::sweep(
                HoldReason::BlastRadius,
                format!("the plan would delete {what}, more than max_deletions = {max}"),
            ));
            resources.hold_all(HoldReason::BlastRadius);
            moves.clear();
            spared.reserve(deletions.len());
            for d in deletions.drain(..) {
                spared.push(Spared {
                    swarm: d.swarm,
                    release: d.release,
                    reason: SpareReason::Held,
                    application: Some(d.application),
                    detail: Some(format!(
                        "would be deleted ({}) but the sweep is held: blast_radius",
                        d.reason.as_str()
                    )),
                    time_left: None,
                });
            }
        }
    }

    let uncovered = if purge {
        groups
            .iter()
            .zip(&reach)
            .filter_map(|(g, r)| r.uncovered(g))
            .collect()
    } else {
        Vec::new()
    };
    let swarm_plans = groups
        .iter()
        .zip(reach)
        .map(|(g, reach)| SwarmPlan {
            swarm: g.swarm.clone(),
            names: g.names.clone(),
            cluster_id: g.cluster_id.clone(),
            readable: g.error.is_none(),
            node_count: g.node_count,
            nodes: g.nodes.clone(),
            coverage: reach.coverage(purge),
            unreached: reach.unreached().map(<[String]>::to_vec),
            every_node_read: reach.every_node_read(),
        })
        .collect();

    let plan = SweepPlan {
        format_version: FormatVersion,
        controller: controller.clone(),
        purge_volumes: purge,
        prune_resources: snapshot.policy.prune_resources,
        holds,
        deletions,
        spared,
        uncovered,
        swarms: swarm_plans,
        dropped: resources.dropped,
        unclaimed: resources.unclaimed,
        resource_holds: resources.holds,
        skipped_revisions: resources.skipped,
        departed,
    };
    Ok(Planned { plan, moves })
}

/// Sorts every list of `plan`. Each entry type orders by all of its
/// fields, so entries that compare equal are equal: the unstable sort
/// gives the stable sort's order, without a scratch copy of half of each
/// list beside a plan that may be a million entries long.
fn sort(plan: &mut SweepPlan) {
    // Sweep-wide holds first, then by swarm; `Option` orders `None` first.
    plan.holds.sort_by(|a, b| {
        (&a.swarm, a.reason, &a.applications, &a.message).cmp(&(
            &b.swarm,
            b.reason,
            &b.applications,
            &b.message,
        ))
    });
    plan.holds.dedup();
    plan.deletions.sort_unstable();
    plan.spared.sort_unstable();
    plan.uncovered.sort_unstable();
    plan.swarms.sort_unstable();
    plan.dropped.sort_unstable();
    plan.unclaimed.sort_unstable();
    plan.resource_holds.sort_unstable();
    plan.skipped_revisions.sort_unstable();
    plan.departed.sort_unstable();
}

crate::map_only::map_only! {
    SweepPlan => "a plan object";
    Hold => "a hold object";
    Deletion => "a deletion object";
    Observed => "an observed object";
    Spared => "a spared object";
    Uncovered => "an uncovered object";
    SwarmPlan => "a swarm plan object";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Planning JSON text in place must accept exactly the texts the owned
    /// reader accepts, refuse the rest with the same error, and plan the
    /// same: one schema read two ways.
    fn same_both_ways(text: &str) {
        let owned = Snapshot::from_json(text).and_then(|s| plan(&s));
        assert_eq!(plan_json(text), owned, "{text}");
        crate::snapshot::read::tests::split_reads_the_same(text);
        assert_eq!(
            serde_json::from_str::<Snapshot<Text<'_>>>(text).is_ok(),
            serde_json::from_str::<Snapshot>(text).is_ok(),
            "{text}"
        );
    }

    /// `plan_json` moves a deletion's objects and records out of the
    /// snapshot where `plan` copies them: the same plan either way, for a
    /// cluster of two names listed out of order (one release seen alike
    /// under both, one seen differently), shared objects left out, and a
    /// swarm of one name.
    #[test]
    fn facts_moved_or_copied_plan_the_same() {
        let web = r#"{"name":"web","owner":"cd/default/gone:release/web",
            "records":[{"id":"r2","version":3},{"id":"r1","version":1}],
            "objects":{"services":[{"id":"s1","name":"web_app","version":2}],
                "networks":[{"name":"web_net","id":"n1"},{"name":"web_b","id":"n0"}],
                "secrets":["web_key"],
                "volumes":[{"node":"x","volumes":["web_data","web_a"]}]}}"#;
        let api = |version: u64| {
            format!(
                r#"{{"name":"api","owner":"cd/default/gone:release/api","records":[{{"id":"r3","version":{version}}}],"objects":{{}}}}"#
            )
        };
        let text = format!(
            r#"{{"policy":{{"purge_volumes":true}},
            "app_set":{{"loaded":true,"applications":[{{"name":"keep","swarm":"a","releases":["db"]}}]}},
            "swarms":[
              {{"swarm":"b","cluster_id":"C","releases":[{web},{api_b}]}},
              {{"swarm":"z","releases":[{{"name":"old","owner":"cd/default/gone:release/old","objects":{{"services":[{{"id":"s7","name":"old_app","version":1}}]}}}}]}},
              {{"swarm":"a","cluster_id":"C","releases":[{api_a},{web},
                  {{"name":"db","owner":"cd/default/keep:release/db","objects":{{"services":[{{"id":"s9","name":"db_app","version":1}}]}}}}],
                "usage":{{"services":[{{"id":"s9","name":"db_app","stack":"db","networks":["n1"],"volumes":["web_data"]}}],
                  "containers":[{{"node":"x","containers":[{{"id":"c1","name":"manual","volumes":["web_a"]}}]}}]}}}}
            ]}}"#,
            api_a = api(1),
            api_b = api(2),
        );
        same_both_ways(&text);
        let plan = plan_json(&text).unwrap();
        let web = plan.deletions.iter().find(|d| d.release == "web").unwrap();
        assert_eq!(web.in_use_by.len(), 3, "{web:?}");
        assert!(web.observed.is_some());
        let api = plan.deletions.iter().find(|d| d.release == "api").unwrap();
        assert_eq!((&api.objects, &api.observed), (&None, &None));
    }

    /// Only a swarm that nothing but its windows holds wakes a driver
    /// early: where another hold stays, the opening changes nothing.
    #[test]
    fn the_window_opening_counts_only_where_nothing_else_holds() {
        let text = |apps: &str| {
            format!(
                r#"{{"policy":{{"windows":["allow Mon 02:00-03:00 UTC"]}},"now":"2026-12-05T12:00:00Z",
                "app_set":{{"loaded":true,"applications":[{{"name":"keep","swarm":"b","releases":[]}}{apps}]}},
                "swarms":[{{"swarm":"a"}},{{"swarm":"b"}}]}}"#
            )
        };
        let opens = Some(UnixTime::parse_rfc3339("2026-12-07T02:00:00Z").unwrap());
        assert_eq!(plan_json(&text("")).unwrap().window_opens_at(), opens);
        let one_waits = text(r#",{"name":"new","swarm":"a","state":"unreconciled"}"#);
        assert_eq!(plan_json(&one_waits).unwrap().window_opens_at(), opens);
        let both_wait = text(
            r#",{"name":"new","swarm":"a","state":"unreconciled"},{"name":"new2","swarm":"b","state":"unreconciled"}"#,
        );
        assert_eq!(plan_json(&both_wait).unwrap().window_opens_at(), None);
        let not_loaded = text("").replace(r#""loaded":true"#, r#""loaded":false"#);
        assert_eq!(plan_json(&not_loaded).unwrap().window_opens_at(), None);
    }

    #[test]
    fn hostile_texts_are_refused_or_planned_the_same_either_way() {
        let swarm = r#"{"swarm":"a","cluster_id":"C","releases":[{"name":"web","owner":"cd/default/gone:release/web"}]}"#;
        let app = r#"{"name":"keep","swarm":"a","releases":["db"]}"#;
        let doc = |policy: &str, apps: &str, swarms: &str| {
            format!(
                r#"{{{policy}"app_set":{{"loaded":true,"applications":[{apps}]}},"swarms":[{swarms}]}}"#
            )
        };
        let mut texts = vec![
            doc("", app, swarm),
            doc(
                r#""policy":{"purge_volumes":true,"max_deletions":0},"#,
                app,
                swarm,
            ),
            doc(r#""policy":null,"#, app, swarm),
            doc(r#""policy":{"controller":null},"#, app, swarm),
            doc(r#""policy":{"controller":"a/b"},"#, app, swarm),
            doc(r#""policy":{"max_deletions":-1},"#, app, swarm),
            doc(r#""policy":{"max_deletions":1.5},"#, app, swarm),
            doc(
                r#""policy":{"purge_volumes":true,"purge_volumes":false},"#,
                app,
                swarm,
            ),
            doc(r#""policy":{"purge_volume":true},"#, app, swarm),
            doc(r#""policy":["default",true,0],"#, app, swarm),
            doc(
                "",
                r#"{"name":"keep","swarm":"a","releases":["db"],"state":"draining"}"#,
                swarm,
            ),
            doc(
                "",
                r#"{"name":"keep","swarm":"a","state":"unreconciled"}"#,
                swarm,
            ),
            doc("", r#"{"name":"keep","swarm":"a","state":"bogus"}"#, swarm),
            doc(
                "",
                r#"{"name":"keep","swarm":"nowhere","releases":["web"]}"#,
                swarm,
            ),
            doc("", r#"{"name":"keep","swarm":"a","releases":null}"#, swarm),
            doc(
                "",
                r#"{"name":"keep","swarm":"a","releases":[null]}"#,
                swarm,
            ),
            doc("", r#"{"name":"keep","swarm":"a","releases":[""]}"#, swarm),
            doc("", r#"{"name":"Keep","swarm":"a"}"#, swarm),
            doc("", r#"{"name":"keep","swarm":null}"#, swarm),
            doc("", r#"{"name":"keep"}"#, swarm),
            doc("", r#"["keep","a",["db"],"reconciled"]"#, swarm),
            doc("", &format!("{app},{app}"), swarm),
            doc(
                "",
                r#"{"name":"k\u0065ep","swarm":"\u0061","releases":["w\u0065b"]}"#,
                swarm,
            ),
            doc(
                "",
                r#"{"name":"gone","swarm":"a","releases":["web"]}"#,
                swarm,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"w\u0065b","owner":"cd/default/gone:release/w\u0065b"}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":"cd/default/gone:release/web\n"}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":""}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":null}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web"},{"name":"web"}]}"#,
            ),
            doc("", app, r#"{"swarm":"a","releases":[{"name":""}]}"#),
            doc("", app, r#"{"swarm":"a","releases":[{"name":null}]}"#),
            doc("", app, r#"{"swarm":"a","releases":[{"owner":"x"}]}"#),
            doc("", app, r#"{"swarm":"a","releases":[["web","x"]]}"#),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":"x","owner":"y"}]}"#,
            ),
            doc("", app, r#"{"swarm":"a","releases":null}"#),
            doc(
                "",
                app,
                r#"{"swarm":"a","nodes":[{"id":"n1"},{"id":"n1"}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","nodes":[{"id":"n1","hostname":null}]}"#,
            ),
            doc(
                "",
                app,
                r#"{"swarm":"a","members":[{"id":""}],"node_count":2}"#,
            ),
            doc("", app, r#"{"swarm":"a","node_count":-2}"#),
            doc(
                "",
                app,
                r#"{"swarm":"a","error":"refused","self_stack":"web"}"#,
            ),
            doc("", app, r#"{"swarm":"a","nodez":[]}"#),
            doc("", app, &format!("{swarm},{swarm}")),
            doc("", app, r#"{"swarm":"a"},{"swarm":""}"#),
            doc(
                r#""policy":{"min_departed_for":"10m"},"now":"2026-12-01T08:00:00Z","#,
                app,
                r#"{"swarm":"a","releases":[{"name":"web","owner":"cd/default/gone:release/web","departed_since":"2026-12-01T07:00:00Z"},{"name":"db","owner":"cd/default/gone:release/db","departed_since":"2026-12-01T07:59:00Z"}]}"#,
            ),
            doc(r#""policy":{"min_departed_for":600},"#, app, swarm),
            doc(r#""policy":{"min_departed_for":0},"#, app, swarm),
            doc(r#""policy":{"min_departed_for":null},"#, app, swarm),
            doc(r#""policy":{"min_departed_for":"x"},"#, app, swarm),
            doc(r#""now":"2026-12-01T08:00:00Z","#, app, swarm),
            doc(r#""now":null,"#, app, swarm),
            doc(r#""now":"2026-12-01","#, app, swarm),
            doc(
                "",
                app,
                r#"{"swarm":"a","releases":[{"name":"web","departed_since":7}]}"#,
            ),
            doc(
                r#""now":"2026-12-01T08:00:00Z","#,
                app,
                r#"{"swarm":"a","cluster_id":"C","releases":[{"name":"web","owner":"cd/default/gone:release/web","departed_since":"2026-12-01T07:00:00Z"}]},{"swarm":"b","cluster_id":"C","releases":[{"name":"web","owner":"cd/default/gone:release/web"}]}"#,
            ),
            r#"{"app_set":{"loaded":true}}"#.to_owned(),
            r#"{"app_set":{"loaded":true}} {}"#.to_owned(),
            r#"{"app_set":{"loaded":true}} x"#.to_owned(),
            r#"{"app_set":{"applications":[]}}"#.to_owned(),
            r#"{"app_set":{"loaded":"yes"}}"#.to_owned(),
            r#"{"app_set":{"loaded":true},"swarms":null}"#.to_owned(),
            r#"[{"loaded":true}]"#.to_owned(),
            r#"{"app_set":{"loaded":true},"app_set":{"loaded":true}}"#.to_owned(),
            String::new(),
            "null".to_owned(),
            "{".to_owned(),
            "[".repeat(10_000),
        ];
        // One cluster under three names, releases out of order and seen
        // under several names with stamps that agree or not.
        texts.push(doc(
            r#""policy":{"purge_volumes":true},"#,
            r#"{"name":"keep","swarm":"z","releases":["db"]},{"name":"moved","swarm":"other","releases":[]}"#,
            r#"{"swarm":"z","cluster_id":"C","node_count":3,"nodes":[{"id":"n2"},{"id":"n1","hostname":"h1"}],"releases":[{"name":"web","owner":"cd/default/gone:release/web"},{"name":"db","owner":"cd/default/gone:release/db"},{"name":"api","owner":"cd/default/moved:release/api"}]},
               {"swarm":"a","cluster_id":"C","nodes":[{"id":"n1","hostname":"other"}],"members":[{"id":"n3"}],"releases":[{"name":"web","owner":"cd/default/other:release/web"},{"name":"api","owner":"cd/default/moved:release/api"},{"name":"cache","owner":"cd/default/gone:release/cache"}]},
               {"swarm":"m","cluster_id":"C","releases":[{"name":"web"},{"name":"cache","owner":"cd/default/gone:release/cache"}]},
               {"swarm":"other","cluster_id":"D","releases":[]}"#,
        ));
        for text in &texts {
            same_both_ways(text);
        }
    }
}
