//! The sweep report: what went, what stayed and why, as sorted data.
//!
//! JSON is the contract (drivers print it, the CLI picks its exit status
//! from it), so every list is sorted and every map is ordered: the same
//! sweep gives the same bytes whatever order its actions completed in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::action::{StackPart, Step};
use crate::names::named_enum;
use crate::plan::{Coverage, DroppedObject};
use crate::refs::SwarmName;
use crate::usage::InUse;

/// The result of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SweepReport {
    /// The format version ([`FORMAT_VERSION`](crate::FORMAT_VERSION)); a
    /// report of another version is refused when read back.
    #[serde(default)]
    pub format_version: crate::format::FormatVersion,
    /// The controller id the plan was made for: whose stamps the sweep's
    /// re-reads accepted as its own.
    pub controller: String,
    /// The plan held the whole sweep: nothing was attempted.
    pub held: bool,
    /// The plan's `purge_volumes`: whether volumes were removed at all.
    pub purge_volumes: bool,
    /// One entry per planned deletion, sorted by swarm then release.
    pub releases: Vec<ReleaseReport>,
    /// Swarms whose purge could not reach every node, sorted by swarm.
    pub uncovered: Vec<UncoveredSwarm>,
    /// One entry per live release whose dropped objects the plan listed
    /// (the resource rule), sorted by swarm then release.
    #[serde(default)]
    pub dropped: Vec<DroppedReport>,
    /// One entry per object the sweep removed or tried to remove, of the
    /// releases and of the dropped objects alike, sorted by swarm, release,
    /// kind, name, node and id: the audit log's and the notifications'
    /// unit. Objects of steps never attempted are not listed.
    #[serde(default)]
    pub objects: Vec<ObjectReport>,
    /// Counts of the above.
    pub totals: Totals,
}

/// What became of one object the sweep removed or tried to remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ObjectReport {
    /// The swarm, as the plan names it.
    pub swarm: SwarmName,
    /// The release whose object it is.
    pub release: String,
    /// The application the release is stamped for.
    pub application: String,
    /// Why it was to go.
    pub reason: ObjectReason,
    /// What kind of object it is.
    pub kind: ObjectKind,
    /// Its engine id, when the sweep knew it (volumes and records have
    /// none here).
    pub id: Option<String>,
    /// Its name; for `record`, the release's. Raw: escape it before
    /// printing.
    pub name: String,
    /// For a volume, the node it was on, as `volumes_deleted` names it
    /// (`(manager)` without node reach); `None` otherwise.
    pub node: Option<String>,
    /// What became of it: the field to match on.
    pub outcome: ObjectOutcome,
    /// For `failed`, what failed, in words (raw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ObjectReport {
    /// The order of the report's `objects`.
    fn sort_key(&self) -> impl Ord + '_ {
        (
            &self.swarm,
            &self.release,
            self.kind,
            &self.name,
            &self.node,
            &self.id,
        )
    }
}

named_enum! {
    /// Why an [`ObjectReport`]'s object was to go.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum ObjectReason {
        /// `departed`: its release's application left the app set.
        Departed = "departed",
        /// `destination_moved`: its release's application now deploys to
        /// another swarm.
        DestinationMoved = "destination_moved",
        /// `dropped`: a live release's chart dropped it (the resource rule).
        Dropped = "dropped",
    }
}

named_enum! {
    /// The kinds of object a sweep removes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum ObjectKind {
        /// `service`: a swarm service.
        Service = "service",
        /// `network`: a swarm network.
        Network = "network",
        /// `secret`: a swarm secret.
        Secret = "secret",
        /// `config`: a swarm config (not a release record).
        Config = "config",
        /// `volume`: a named volume on one node.
        Volume = "volume",
        /// `record`: the release's records, every revision, which go last.
        Record = "record",
    }
}

named_enum! {
    /// What became of one object.
    ///
    /// Not `#[non_exhaustive]`: a reader decides for each whether the
    /// object may still be there (the audit log must never say "removed"
    /// for what may remain).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum ObjectOutcome {
        /// `removed`: the engine removed it at the sweep's request.
        Removed = "removed",
        /// `already_gone`: it was not there when the sweep came to remove
        /// it (removed by someone else, or by an earlier attempt).
        AlreadyGone = "already_gone",
        /// `failed`: its removal failed. The engine answers per step, not
        /// per object, so it may in part be gone: look before relying on
        /// either.
        Failed = "failed",
        /// `in_use`: left in place because another workload uses it; not a
        /// failure.
        InUse = "in_use",
    }
}

impl ObjectOutcome {
    /// Whether the object is known to be gone.
    pub fn is_gone(self) -> bool {
        match self {
            ObjectOutcome::Removed | ObjectOutcome::AlreadyGone => true,
            ObjectOutcome::Failed | ObjectOutcome::InUse => false,
        }
    }
}

/// What became of the objects one live release dropped from its chart.
/// The release itself stays, records and all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct DroppedReport {
    /// The swarm, as the plan names it.
    pub swarm: SwarmName,
    /// The release that dropped them.
    pub release: String,
    /// The application that declares it.
    pub application: String,
    /// `deleted`: every dropped object is gone; `in_use`: what a service
    /// still names stayed (`in_use_by`); `failed`: see `errors`;
    /// `left_own_stack`: the controller's own stack, untouched.
    pub outcome: ReleaseOutcome,
    /// The dropped objects that are gone (removed by this sweep, or gone
    /// already when it came to them), sorted.
    pub removed: Vec<DroppedObject>,
    /// The dropped objects left because a service still names them, with
    /// each user, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub in_use_by: Vec<InUse>,
    /// What failed, sorted.
    pub errors: Vec<ErrorEntry>,
    /// What an operator can do, where anything is left.
    pub remedy: Option<String>,
}

/// What became of one planned release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ReleaseReport {
    /// The swarm, as the plan names it.
    pub swarm: SwarmName,
    /// The release (stack) name on that swarm.
    pub release: String,
    /// The application it was stamped for.
    pub application: String,
    /// What became of it: the field to match on.
    pub outcome: ReleaseOutcome,
    /// What the volume purge could reach (the plan's verdict).
    pub coverage: Coverage,
    /// Volumes removed, by node name (`(manager)` without node reach);
    /// nodes with none removed are left out. Lists even a purge that gave
    /// up part-way, so nobody goes looking for data that is already gone.
    pub volumes_deleted: BTreeMap<String, Vec<String>>,
    /// For `in_use`: the objects of the release another workload uses,
    /// with each user, sorted: they were left in place, and so were the
    /// records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub in_use_by: Vec<InUse>,
    /// Why it failed, sorted; may be non-empty for a `deleted` release
    /// whose error turned out, on re-listing, to be for work that had
    /// succeeded.
    pub errors: Vec<ErrorEntry>,
    /// What an operator can do, where anything is left.
    pub remedy: Option<String>,
}

named_enum! {
    /// What became of one planned release.
    ///
    /// Not `#[non_exhaustive]`: a caller decides for each outcome whether
    /// anything is left and whether a person is needed (the exit status,
    /// metrics), so an outcome added here must not fall into a wildcard
    /// arm unnoticed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum ReleaseOutcome {
        /// `deleted`: stack, reachable volumes (with purge) and records are
        /// gone.
        Deleted = "deleted",
        /// `failed`: something failed; its records stay so the next sweep
        /// retries it.
        Failed = "failed",
        /// `left_own_stack`: the backend refused, since the controller runs
        /// as this stack. Untouched.
        LeftOwnStack = "left_own_stack",
        /// `pending_coverage`: stack and reachable volumes are gone; records
        /// stay until a sweep that reaches every node of the swarm can
        /// finish it.
        PendingCoverage = "pending_coverage",
        /// `in_use`: everything of it nobody else uses is gone; what
        /// another workload uses (`in_use_by`) stays, and so do its
        /// records, until a sweep finds it unused.
        InUse = "in_use",
    }
}

/// One failure, with where it happened.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ErrorEntry {
    /// The step that failed.
    pub action: Step,
    /// The stack part, for a [`Step::RemoveStack`] error. Absent from JSON
    /// for every other error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<StackPart>,
    /// The node's name, `(manager)` for the manager; `None` for a
    /// swarm-wide action.
    pub node: Option<String>,
    /// The volume, for a volume removal.
    pub volume: Option<String>,
    /// What kind of failure it was: the field to match on. The message is
    /// for people and may change.
    pub kind: ErrorKind,
    /// What happened, in words: the driver's message or the sweep's own,
    /// escaped when displayed.
    pub message: String,
    /// Set on a [`Step::ReadStamps`] error: how the release's records
    /// changed since the plan, the typed reason it was left alone. Absent
    /// from JSON for every other error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<StampChange>,
}

named_enum! {
    /// How a release's records changed between the plan and a destructive
    /// step, found by the re-read before that step. The release is left alone
    /// (outcome `failed`, records kept) and the next plan decides it anew.
    ///
    /// `#[non_exhaustive]`: every change has the same consequence (left
    /// alone), so a reader that does not know a new one loses nothing by a
    /// wildcard arm.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum StampChange {
        /// `other_application`: stamped by this controller for another
        /// application (redeployed, or renamed, since the plan).
        OtherApplication = "other_application",
        /// `other_controller`: another controller's stamp, or not a controller
        /// stamp at all.
        OtherController = "other_controller",
        /// `malformed`: this controller's prefix on a stamp it never writes.
        Malformed = "malformed",
        /// `unmanaged`: the newest record carries no stamp.
        Unmanaged = "unmanaged",
        /// `names_disagree`: the names of its cluster show different stamps.
        NamesDisagree = "names_disagree",
        /// `records_gone`: no records under some name of its cluster; records
        /// go last, so someone else touched it and nothing proves it ours.
        RecordsGone = "records_gone",
        /// `unreadable`: the records could not be read (or the plan names a
        /// controller id that is not valid), so nothing proves it ours.
        Unreadable = "unreadable",
        /// `revision_changed`: the release's records changed since the
        /// plan: a departed release redeployed (under the same stamp too)
        /// or restamped is not the one planned, and is left alone; a live
        /// release's new revision may declare again what the plan found
        /// dropped, so none of its dropped objects is removed.
        RevisionChanged = "revision_changed",
    }
}

named_enum! {
    /// What kind of failure an [`ErrorEntry`] reports.
    ///
    /// `#[non_exhaustive]`: the outcome of a release says what became of
    /// it; the kind only says why, and new kinds come with new checks.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    #[non_exhaustive]
    pub enum ErrorKind {
        /// `in_use`: still in use when its settle timeout ran out.
        InUse = "in_use",
        /// `own_stack`: the controller runs as this stack; left whole.
        OwnStack = "own_stack",
        /// `unreachable`: the daemon could not be reached or did not answer
        /// in time; the step may or may not have taken effect.
        Unreachable = "unreachable",
        /// `refused`: the engine answered the step with an error.
        Refused = "refused",
        /// `invalid_reply`: the engine's answer made no sense.
        InvalidReply = "invalid_reply",
        /// `stamp_changed`: the re-read found the release's records changed
        /// since the plan; `stamp` says how.
        StampChanged = "stamp_changed",
        /// `relisting_failed`: the re-listing that could have overturned an
        /// earlier failure failed itself, so that failure stands.
        RelistingFailed = "relisting_failed",
        /// `unfinished`: the sweep ended (interrupted) before the release
        /// finished.
        Unfinished = "unfinished",
        /// `window_closed`: the swarm's deletion window closed before the
        /// release finished; the sweep started no removal there after it,
        /// and the next window finishes the release.
        WindowClosed = "window_closed",
        /// `other`: anything else the driver reported.
        Other = "other",
    }
}

impl ErrorKind {
    /// Whether the sweep stopped before the release finished, without
    /// anything failing: a stop (`unfinished`) or its swarm's deletion
    /// window closing (`window_closed`). The next sweep takes it up; a
    /// count of failures leaves it out, so that neither pages anyone.
    pub fn is_cut_short(self) -> bool {
        matches!(self, ErrorKind::Unfinished | ErrorKind::WindowClosed)
    }
}

impl ErrorEntry {
    pub(crate) fn new(
        action: Step,
        kind: ErrorKind,
        node: Option<String>,
        volume: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        ErrorEntry {
            action,
            part: None,
            node,
            volume,
            kind,
            message: message.into(),
            stamp: None,
        }
    }

    /// The error of a failed stack part.
    pub(crate) fn stack(part: StackPart, kind: ErrorKind, message: impl Into<String>) -> Self {
        ErrorEntry {
            part: Some(part),
            ..ErrorEntry::new(Step::RemoveStack, kind, None, None, message)
        }
    }

    /// The error of a re-read that found the release changed.
    pub(crate) fn stamp_changed(change: StampChange, message: impl Into<String>) -> Self {
        ErrorEntry {
            stamp: Some(change),
            ..ErrorEntry::new(
                Step::ReadStamps,
                ErrorKind::StampChanged,
                None,
                None,
                message,
            )
        }
    }
}

/// A swarm whose nodes a purge did not all reach, and how to find what is
/// left there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct UncoveredSwarm {
    /// The swarm, as the plan names it.
    pub swarm: SwarmName,
    /// What the purge there could reach: `partial` or `node_local`, as
    /// the plan found, or `partial` where a node joined during the sweep.
    pub coverage: Coverage,
    /// The swarm's own count; `None` when unreadable. Where a node joined
    /// during the sweep, the most nodes the sweep's reads listed.
    pub node_count: Option<u64>,
    /// The nodes the purge covered, sorted (`(manager)` without node reach).
    pub covered: Vec<String>,
    /// Counted nodes not covered; `None` when the count is unknown.
    pub missing: Option<u64>,
    /// The uncovered nodes by name, where the swarm's node list was read
    /// (a node that joined during the sweep by its id): where to run
    /// `docker volume ls --filter label=<label_filter>`.
    pub unreached: Option<Vec<String>>,
    /// The releases whose volumes may remain on uncovered nodes.
    pub releases: Vec<Leftover>,
}

/// A release whose volumes may remain on nodes the purge did not reach.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Leftover {
    /// The release (stack) name.
    pub release: String,
    /// The application it was stamped for.
    pub application: String,
    /// `com.docker.stack.namespace=<release>`: `docker volume ls --filter
    /// label=<this>` on an uncovered node finds what is left.
    pub label_filter: String,
}

/// Counts, for a summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Totals {
    /// Releases the plan gave the sweep.
    pub planned: u64,
    /// Releases whose outcome is `deleted`.
    pub deleted: u64,
    /// Releases whose outcome is `failed`.
    pub failed: u64,
    /// Releases whose outcome is `left_own_stack`.
    pub left_own_stack: u64,
    /// Releases whose outcome is `pending_coverage`.
    pub pending_coverage: u64,
    /// Releases whose outcome is `in_use`.
    #[serde(default)]
    pub in_use: u64,
    /// Volumes removed, over every release and node.
    pub volumes_deleted: u64,
    /// Entries of the report's `uncovered` list.
    pub uncovered_swarms: u64,
    /// Dropped objects gone, over every entry of `dropped`.
    #[serde(default)]
    pub objects_deleted: u64,
    /// Entries of `dropped` whose outcome is `failed`.
    #[serde(default)]
    pub dropped_failed: u64,
}

impl std::fmt::Display for Totals {
    /// The one totals line of every text report (the full one and the short
    /// one a command falls back to), so that the two never count apart.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} planned: {} deleted, {} failed, {} left as own stack, {} pending coverage, {} kept in use; {} volumes removed; {} swarms not fully covered",
            self.planned,
            self.deleted,
            self.failed,
            self.left_own_stack,
            self.pending_coverage,
            self.in_use,
            self.volumes_deleted,
            self.uncovered_swarms
        )?;
        // Only where the resource rule removed (or failed to remove)
        // something: a report without it reads as it always did.
        if self.objects_deleted > 0 || self.dropped_failed > 0 {
            write!(
                f,
                "; {} dropped objects removed, {} releases' dropped objects failed",
                self.objects_deleted, self.dropped_failed
            )?;
        }
        Ok(())
    }
}

impl SweepReport {
    /// Sorts every list and computes the totals.
    pub(crate) fn new(
        controller: String,
        held: bool,
        purge_volumes: bool,
        mut releases: Vec<ReleaseReport>,
        mut uncovered: Vec<UncoveredSwarm>,
        mut dropped: Vec<DroppedReport>,
        mut objects: Vec<ObjectReport>,
    ) -> Self {
        objects.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        dropped.sort_by(|a, b| (&a.swarm, &a.release).cmp(&(&b.swarm, &b.release)));
        for r in &mut releases {
            r.errors.sort();
            for volumes in r.volumes_deleted.values_mut() {
                volumes.sort();
            }
        }
        releases.sort_by(|a, b| (&a.swarm, &a.release).cmp(&(&b.swarm, &b.release)));
        for u in &mut uncovered {
            u.covered.sort();
            u.releases.sort();
        }
        uncovered.sort_by(|a, b| a.swarm.cmp(&b.swarm));
        let count = |o: ReleaseOutcome| releases.iter().filter(|r| r.outcome == o).count() as u64;
        let totals = Totals {
            planned: releases.len() as u64,
            deleted: count(ReleaseOutcome::Deleted),
            failed: count(ReleaseOutcome::Failed),
            left_own_stack: count(ReleaseOutcome::LeftOwnStack),
            pending_coverage: count(ReleaseOutcome::PendingCoverage),
            in_use: count(ReleaseOutcome::InUse),
            volumes_deleted: releases
                .iter()
                .flat_map(|r| r.volumes_deleted.values())
                .map(|v| v.len() as u64)
                .sum(),
            uncovered_swarms: uncovered.len() as u64,
            objects_deleted: dropped.iter().map(|d| d.removed.len() as u64).sum(),
            dropped_failed: dropped
                .iter()
                .filter(|d| d.outcome == ReleaseOutcome::Failed)
                .count() as u64,
        };
        SweepReport {
            format_version: crate::format::FormatVersion,
            controller,
            held,
            purge_volumes,
            releases,
            uncovered,
            dropped,
            objects,
            totals,
        }
    }

    /// Everything planned went, and nothing is left on nodes the purge
    /// could not reach. A held sweep, a pending or failed release or an
    /// uncovered swarm need a person, so they are not "all done"; a
    /// release left as the controller's own stack is: it is reported with
    /// its remedy every run, and counting it would hide real failures
    /// behind a permanent one. The report's share of
    /// [`verdict::apply_status`](crate::verdict::apply_status), which also
    /// counts the plan's holds and turns this into an exit status.
    pub fn all_done(&self) -> bool {
        let incomplete = self
            .releases
            .iter()
            .map(|r| r.outcome)
            .chain(self.dropped.iter().map(|d| d.outcome))
            .any(|outcome| {
                !matches!(
                    outcome,
                    ReleaseOutcome::Deleted | ReleaseOutcome::LeftOwnStack
                )
            });
        !(self.held || incomplete || !self.uncovered.is_empty())
    }

    /// The releases left alone because their records changed since the
    /// plan, with how.
    pub fn stamp_changes(&self) -> impl Iterator<Item = (&ReleaseReport, StampChange)> {
        self.releases
            .iter()
            .flat_map(|r| r.errors.iter().filter_map(move |e| e.stamp.map(|c| (r, c))))
    }

    /// Some release failed.
    pub fn failed(&self) -> bool {
        self.releases
            .iter()
            .any(|r| r.outcome == ReleaseOutcome::Failed)
    }

    /// The entry for one release, if the plan listed it.
    pub fn release(&self, swarm: &SwarmName, release: &str) -> Option<&ReleaseReport> {
        self.releases
            .iter()
            .find(|r| &r.swarm == swarm && r.release == release)
    }

    /// Every failure, with the release it concerns.
    pub fn failures(&self) -> impl Iterator<Item = (&ReleaseReport, &ErrorEntry)> {
        self.releases
            .iter()
            .filter(|r| r.outcome == ReleaseOutcome::Failed)
            .flat_map(|r| r.errors.iter().map(move |e| (r, e)))
    }

    /// The report as pretty-printed JSON: the contract, byte for byte the
    /// same for the same sweep.
    pub fn to_json_pretty(&self) -> String {
        // Plain data of strings, numbers, enums and string-keyed maps:
        // serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
