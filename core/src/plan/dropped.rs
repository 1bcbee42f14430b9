//! The resource rule: the objects a live release dropped from its chart,
//! proven ours object by object from the release's stored revisions.
//!
//! `docker stack deploy` never removes what a new revision of a stack no
//! longer declares (without `--prune` it leaves services; it never removes
//! networks, configs or secrets), so a renamed or removed object keeps
//! running under the release's stack label. An object of release `R` goes
//! only when all of these hold; anything else is spared, and the plan says
//! why:
//! 1. it carries `R`'s stack namespace and is not one of `R`'s records;
//! 2. `R` is declared on its swarm by exactly one live, reconciled
//!    application `A`, which opted in (`prune_resources`);
//! 3. `R`'s current revision (its highest) reads, is stamped for this
//!    controller and `A` on its label and in its data alike, gives no status
//!    other than `deployed`, and does not declare the object under its kind;
//! 4. a stored revision whose data is stamped for this controller and `A`
//!    declared it under the same kind (newest first; a revision that does
//!    not read is skipped and named);
//! 5. a config or secret carries `com.swarmcli.cd.created` (the controller
//!    created it, rather than adopting it);
//! 6. every kind of `R`'s stack objects was listed, and every name of the
//!    cluster observed the same.
//!
//! A revision whose label, name and data disagree on its number, or two
//! records of one revision, leave `R` untouched. An object the rule does
//! not prove dropped (added by hand, claimed by no owned revision, older
//! than the kept history, adopted, kept by label) is listed `unclaimed`:
//! information, never a deletion.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::swarms::{GroupedRelease, SwarmGroup};
use super::HoldReason;
use crate::names::named_enum;
use crate::objects::{ObjectRef, ObjectVersion, ServiceEntry};
use crate::owner::ControllerId;
use crate::record::{parse_record_name, Kind, Payload, RevisionDocument, RevisionRead};
use crate::refs::SwarmName;
use crate::usage::{InUse, ObjectKind, UsageIndex};

/// The status of a revision the engine finished deploying.
const DEPLOYED: &str = "deployed";

/// Objects a live release dropped from its chart, proven ours: the sweep
/// removes them, services first. Never a whole release: those are in the
/// plan's `deletions`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Dropped {
    /// The swarm (its cluster's smallest name).
    pub swarm: SwarmName,
    /// The release that dropped them. Raw: escape it before printing.
    pub release: String,
    /// The application that declares the release.
    pub application: String,
    /// The release's current revision, which no longer declares them.
    pub revision: u64,
    /// Every release record as planned (id and version): the sweep removes
    /// nothing once they changed (a new revision may declare the objects
    /// again), and a saved plan is stale.
    pub records: Vec<ObjectVersion>,
    /// What the sweep removes, sorted by kind then name.
    pub objects: Vec<DroppedObject>,
    /// Dropped objects a service other than the dropped ones still names
    /// (the release's own current services included): kept, not retried.
    #[serde(default)]
    pub in_use_by: Vec<InUse>,
}

/// One object a release dropped.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct DroppedObject {
    /// Its kind.
    pub kind: Kind,
    /// Its name. Raw: escape it before printing.
    pub name: String,
    /// Its id: what the sweep removes.
    pub id: String,
    /// Its version index when it has one: a saved plan removes it only at
    /// that version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The newest stored revision, stamped for this controller and the
    /// application, that declared it.
    pub claimed_by: u64,
    /// The first revision after `claimed_by` whose data reads and does not
    /// declare it: the one that dropped it (at most the current one).
    pub dropped_by: u64,
}

named_enum! {
    /// Why an object of a live release's stack that its current revision
    /// does not declare stays.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum UnclaimedReason {
        /// No stored revision stamped for this controller and the
        /// application declared it (added by hand, older than the kept
        /// history, or another controller's).
        NotClaimed = "not_claimed",
        /// A config or secret without `com.swarmcli.cd.created`: adopted,
        /// not created by the controller.
        NoMarker = "no_marker",
        /// A service carrying the keep label.
        Kept = "kept",
        /// The snapshot gave its name without an id: nothing to remove it by.
        NoId = "no_id",
    }
}

/// An object of a live release's stack that its current revision does not
/// declare and the rule does not prove dropped: information, never a
/// deletion.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Unclaimed {
    /// The swarm (its cluster's smallest name).
    pub swarm: SwarmName,
    /// The release whose stack label it carries. Raw: escape it before
    /// printing.
    pub release: String,
    /// Its kind.
    pub kind: Kind,
    /// Its name. Raw: escape it before printing.
    pub name: String,
    /// Its id, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Why it stays.
    pub reason: UnclaimedReason,
}

named_enum! {
    /// Why the resource rule leaves a whole live release untouched.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum ResourceHoldReason {
        /// Another live application declares a release of the same name
        /// on the swarm.
        DeclaredBySeveral = "declared_by_several",
        /// Its application has not reconciled.
        NotReconciled = "not_reconciled",
        /// The snapshot holds no revisions of it, or not what their data
        /// says.
        RevisionsUnread = "revisions_unread",
        /// A record's revision label, the `.v<N>` of its name and its data
        /// disagree, or its name is not a record name of the release.
        RevisionsDisagree = "revisions_disagree",
        /// Two records claim one revision.
        DuplicateRevision = "duplicate_revision",
        /// Its current revision's data cannot be read.
        CurrentUnreadable = "current_unreadable",
        /// Its current revision's owner label and the owner in its data
        /// disagree.
        OwnerMismatch = "owner_mismatch",
        /// Its current revision is not stamped for this controller and the
        /// application.
        NotOwned = "not_owned",
        /// Its current revision's data gives a status other than
        /// `deployed` (`failed`, `pending-upgrade`, `superseded`, ...):
        /// the stack may still run what it no longer declares.
        NotDeployed = "not_deployed",
        /// Its stack's objects were not listed.
        ObjectsUnlisted = "objects_unlisted",
        /// The names of its cluster observed it differently.
        ObservationsDisagree = "observations_disagree",
        /// It dropped objects, but a hold keeps the sweep (or its swarm)
        /// from removing anything.
        Held = "held",
    }
}

/// A live release of an opted-in application that the resource rule
/// leaves untouched, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct ResourceHold {
    /// The swarm (its cluster's smallest name).
    pub swarm: SwarmName,
    /// The release. Raw: escape it before printing.
    pub release: String,
    /// Why.
    pub reason: ResourceHoldReason,
    /// The particulars, for people. Raw: escape it before printing.
    pub detail: String,
}

/// A stored revision the rule skipped because its data cannot be read: it
/// proves nothing either way.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct SkippedRevision {
    /// The swarm (its cluster's smallest name).
    pub swarm: SwarmName,
    /// The release. Raw: escape it before printing.
    pub release: String,
    /// The revision.
    pub revision: u64,
    /// Why its data cannot be read. Raw: escape it before printing.
    pub error: String,
}

/// What the rule found on one release.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub(crate) dropped: Option<Dropped>,
    pub(crate) unclaimed: Vec<Unclaimed>,
    pub(crate) hold: Option<ResourceHold>,
    pub(crate) skipped: Vec<SkippedRevision>,
}

/// What the rule found on every release of a plan.
#[derive(Debug, Default)]
pub(crate) struct Resources {
    pub(crate) dropped: Vec<Dropped>,
    pub(crate) unclaimed: Vec<Unclaimed>,
    pub(crate) holds: Vec<ResourceHold>,
    pub(crate) skipped: Vec<SkippedRevision>,
}

impl Resources {
    /// Adds what the rule found on one release, whose swarm `held` holds
    /// (the first hold on it, sweep-wide ones first).
    pub(crate) fn add(&mut self, found: Found, held: Option<HoldReason>) {
        self.unclaimed.extend(found.unclaimed);
        self.skipped.extend(found.skipped);
        self.holds.extend(found.hold);
        if let Some(dropped) = found.dropped {
            match held {
                Some(reason) => self.holds.push(held_back(dropped, reason)),
                None => self.dropped.push(dropped),
            }
        }
    }

    /// Adds what the rule found on other releases.
    pub(crate) fn append(&mut self, mut other: Resources) {
        self.dropped.append(&mut other.dropped);
        self.unclaimed.append(&mut other.unclaimed);
        self.holds.append(&mut other.holds);
        self.skipped.append(&mut other.skipped);
    }

    /// Turns every removal into a hold: `reason` holds the whole sweep.
    pub(crate) fn hold_all(&mut self, reason: HoldReason) {
        for dropped in self.dropped.drain(..) {
            self.holds.push(held_back(dropped, reason));
        }
    }

    /// The number of objects to remove.
    pub(crate) fn objects(&self) -> usize {
        self.dropped.iter().map(|d| d.objects.len()).sum()
    }
}

/// The hold that stands for `dropped` under the plan's hold `reason`.
fn held_back(dropped: Dropped, reason: HoldReason) -> ResourceHold {
    let objects: Vec<String> = dropped
        .objects
        .iter()
        .map(|o| format!("{} {}", o.kind, o.name))
        .collect();
    ResourceHold {
        swarm: dropped.swarm,
        release: dropped.release,
        reason: ResourceHoldReason::Held,
        detail: format!(
            "would remove {} but the sweep is held: {}",
            objects.join(", "),
            reason.as_str()
        ),
    }
}

/// One revision of the release, its number proven by its name, label and
/// data alike.
struct Revision<'a> {
    number: u64,
    label_owner: Option<&'a str>,
    label_status: Option<&'a str>,
    document: Result<&'a RevisionDocument, &'a str>,
}

/// Applies the rule to `release` of `group`, declared there by `declarer`
/// (which opted in).
pub(crate) fn examine(
    controller: &ControllerId,
    group: &SwarmGroup<'_>,
    release: &GroupedRelease<'_>,
    declarer: Declarer<'_>,
    usage: &[UsageIndex<'_>],
    every_node_read: bool,
) -> Found {
    let hold = |reason: ResourceHoldReason, detail: String| Found {
        hold: Some(ResourceHold {
            swarm: group.swarm.clone(),
            release: release.name.to_owned(),
            reason,
            detail,
        }),
        ..Found::default()
    };
    let application = match declarer {
        Declarer::Several(names) => {
            return hold(
                ResourceHoldReason::DeclaredBySeveral,
                format!("declared by {}", names.join(", ")),
            )
        }
        Declarer::One {
            reconciled: false,
            name,
        } => {
            return hold(
                ResourceHoldReason::NotReconciled,
                format!("its application {name} has not reconciled"),
            )
        }
        Declarer::One { name, .. } => name,
    };
    let Some(facts) = release.facts() else {
        return hold(
            ResourceHoldReason::ObservationsDisagree,
            "the names of its cluster observed it differently".to_owned(),
        );
    };
    let Some(objects) = facts.objects else {
        return hold(
            ResourceHoldReason::ObjectsUnlisted,
            "its stack's objects were not listed".to_owned(),
        );
    };
    let (Some(records), Some(versions)) =
        (facts.revisions.filter(|r| !r.is_empty()), facts.records)
    else {
        return hold(
            ResourceHoldReason::RevisionsUnread,
            "its revisions were not read".to_owned(),
        );
    };
    let revisions = match revisions(release.name, records) {
        Ok(revisions) => revisions,
        Err((reason, detail)) => return hold(reason, detail),
    };
    // Sorted by number, distinct: the last is the current one.
    let Some(current) = revisions.last() else {
        return hold(
            ResourceHoldReason::RevisionsUnread,
            "its revisions were not read".to_owned(),
        );
    };
    let stamp = controller.stamp(application, release.name);
    let current_document = match current.document {
        Ok(document) => document,
        Err(error) => {
            return hold(
                ResourceHoldReason::CurrentUnreadable,
                format!(
                    "its current revision {} cannot be read: {error}",
                    current.number
                ),
            )
        }
    };
    if current.label_owner != current_document.owner.as_deref() {
        return hold(
            ResourceHoldReason::OwnerMismatch,
            format!(
                "its current revision {} is labelled owner {} but its data says {}",
                current.number,
                shown(current.label_owner),
                shown(current_document.owner.as_deref())
            ),
        );
    }
    if current_document.owner.as_deref() != Some(stamp.as_str()) {
        return hold(
            ResourceHoldReason::NotOwned,
            format!(
                "its current revision {} is stamped {}, not {stamp:?}",
                current.number,
                shown(current_document.owner.as_deref())
            ),
        );
    }
    // A revision whose deploy failed, is still under way, or was rolled
    // back from (marked superseded, on its label or in its data) is not
    // what the stack runs: what it no longer declares may be what serves.
    // Only a revision deployed (or one that gives no status at all) proves
    // an object dropped.
    let statuses = [current.label_status, current_document.status.as_deref()];
    if let Some(status) = statuses.into_iter().flatten().find(|s| *s != DEPLOYED) {
        return hold(
            ResourceHoldReason::NotDeployed,
            format!(
                "its current revision {} is {status:?}, not {DEPLOYED:?}: the stack may still \
                 run what it no longer declares",
                current.number
            ),
        );
    }

    let mut found = Found::default();
    // Newest first: an object's claim is the latest revision that had it.
    let mut owned: Vec<(u64, &RevisionDocument)> = Vec::new();
    for revision in revisions.iter().rev() {
        match revision.document {
            Ok(document) if document.owner.as_deref() == Some(stamp.as_str()) => {
                owned.push((revision.number, document));
            }
            Ok(_) => {}
            Err(error) => found.skipped.push(SkippedRevision {
                swarm: group.swarm.clone(),
                release: release.name.to_owned(),
                revision: revision.number,
                error: error.to_owned(),
            }),
        }
    }
    let record_names: BTreeSet<&str> = records.iter().map(|r| r.name.as_str()).collect();
    let record_ids: BTreeSet<&str> = versions.iter().map(|r| r.id.as_str()).collect();
    let is_record = |object: &ObjectRef| {
        record_names.contains(object.name.as_str())
            || object
                .id
                .as_deref()
                .is_some_and(|id| record_ids.contains(id))
    };

    let candidates = objects
        .services
        .iter()
        .map(Candidate::Service)
        .chain(
            objects
                .networks
                .iter()
                .map(|o| Candidate::Other(Kind::Network, o)),
        )
        .chain(
            objects
                .secrets
                .iter()
                .map(|o| Candidate::Other(Kind::Secret, o)),
        )
        .chain(
            objects
                .configs
                .iter()
                .filter(|o| !is_record(o))
                .map(|o| Candidate::Other(Kind::Config, o)),
        );
    let mut dropped = Vec::new();
    for candidate in candidates {
        let (kind, name, id) = candidate.identity();
        if current_document.declares.contains(kind, name) {
            continue;
        }
        let unclaimed = |reason| Unclaimed {
            swarm: group.swarm.clone(),
            release: release.name.to_owned(),
            kind,
            name: name.to_owned(),
            id: id.map(str::to_owned),
            reason,
        };
        let claimed_by = owned
            .iter()
            .find(|(_, document)| document.declares.contains(kind, name))
            .map(|(number, _)| *number);
        let reason = match (&candidate, claimed_by) {
            (_, None) => Some(UnclaimedReason::NotClaimed),
            (Candidate::Service(s), _) if s.is_kept() => Some(UnclaimedReason::Kept),
            (Candidate::Other(_, o), _)
                if matches!(kind, Kind::Config | Kind::Secret) && o.cd_created.is_none() =>
            {
                Some(UnclaimedReason::NoMarker)
            }
            _ if id.is_none() => Some(UnclaimedReason::NoId),
            _ => None,
        };
        match (reason, claimed_by, id) {
            (None, Some(claimed_by), Some(id)) => dropped.push(DroppedObject {
                kind,
                name: name.to_owned(),
                id: id.to_owned(),
                version: candidate.version(),
                claimed_by,
                dropped_by: revisions
                    .iter()
                    .filter(|r| r.number > claimed_by)
                    .find(|r| r.document.is_ok_and(|d| !d.declares.contains(kind, name)))
                    .map_or(current.number, |r| r.number),
            }),
            (reason, _, _) => {
                found
                    .unclaimed
                    .push(unclaimed(reason.unwrap_or(UnclaimedReason::NoId)));
            }
        }
    }
    if dropped.is_empty() {
        return found;
    }
    dropped.sort();
    let in_use_by = in_use(release.name, &dropped, objects, usage, every_node_read);
    found.dropped = Some(Dropped {
        swarm: group.swarm.clone(),
        release: release.name.to_owned(),
        application: application.to_owned(),
        revision: current.number,
        // Sorted: the snapshot may list them in any order, the plan not.
        records: {
            let mut records = versions.to_vec();
            records.sort();
            records
        },
        objects: dropped
            .into_iter()
            .filter(|o| {
                !in_use_by
                    .iter()
                    .any(|u| Some(u.kind) == o.kind.usage_kind() && u.object == o.name)
            })
            .collect(),
        in_use_by,
    });
    found
}

/// Who declares a release on a swarm, for [`examine`].
#[derive(Debug, Clone)]
pub(crate) enum Declarer<'a> {
    One {
        name: &'a str,
        reconciled: bool,
    },
    /// Every application that may declare it, named for people.
    Several(Vec<String>),
}

/// An object of the release's stack the rule looks at.
enum Candidate<'a> {
    Service(&'a ServiceEntry),
    Other(Kind, &'a ObjectRef),
}

impl Candidate<'_> {
    fn identity(&self) -> (Kind, &str, Option<&str>) {
        match self {
            Candidate::Service(s) => (Kind::Service, &s.name, Some(&s.id)),
            Candidate::Other(kind, o) => (*kind, &o.name, o.id.as_deref()),
        }
    }

    fn version(&self) -> Option<u64> {
        match self {
            Candidate::Service(s) => Some(s.version),
            Candidate::Other(_, o) => o.version,
        }
    }
}

/// The uses of the dropped networks, secrets and configs by services that
/// stay, as every name of the cluster saw them: a use one name saw is a
/// use; and, unless `every_node_read`, each dropped attachable network's
/// unseen user ([`crate::usage::unseen_users`]).
fn in_use(
    release: &str,
    dropped: &[DroppedObject],
    objects: &crate::objects::StackObjects,
    usage: &[UsageIndex<'_>],
    every_node_read: bool,
) -> Vec<InUse> {
    let leaving: BTreeSet<&str> = dropped
        .iter()
        .filter(|o| o.kind == Kind::Service)
        .map(|o| o.id.as_str())
        .collect();
    let refs: Vec<(ObjectKind, &ObjectRef)> = dropped
        .iter()
        .filter_map(|o| {
            let kind = o.kind.usage_kind()?;
            let list = match kind {
                ObjectKind::Network => &objects.networks,
                ObjectKind::Secret => &objects.secrets,
                ObjectKind::Config => &objects.configs,
                ObjectKind::Volume => return None,
            };
            list.iter()
                .find(|r| r.id.as_deref() == Some(o.id.as_str()))
                .map(|r| (kind, r))
        })
        .collect();
    let networks = refs
        .iter()
        .filter(|(kind, _)| *kind == ObjectKind::Network)
        .map(|(_, r)| *r);
    let mut found: Vec<InUse> = usage
        .iter()
        .flat_map(|u| u.service_users(release, refs.iter().copied(), &leaving))
        .chain(crate::usage::unseen_users(networks, every_node_read))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The release's revisions, sorted by number, each proven by its record's
/// name, its revision label and (when read) its data alike; or why the
/// rule cannot trust them.
fn revisions<'a>(
    release: &str,
    records: &'a [RevisionRead],
) -> Result<Vec<Revision<'a>>, (ResourceHoldReason, String)> {
    let disagree = |detail: String| (ResourceHoldReason::RevisionsDisagree, detail);
    let mut by_number: BTreeMap<u64, Revision<'a>> = BTreeMap::new();
    for record in records {
        let number = match parse_record_name(&record.name) {
            Ok((named, number)) if named == release => number,
            Ok((named, _)) => {
                return Err(disagree(format!(
                    "record {:?} is named for release {named:?}",
                    record.name
                )))
            }
            Err(e) => {
                return Err(disagree(format!(
                    "record {:?} is not named as a revision: {e}",
                    record.name
                )))
            }
        };
        // The label must be the name's number as written: `02` and `2`
        // claiming one revision is a disagreement, not a match.
        if record.revision.as_deref() != Some(number.to_string().as_str()) {
            return Err(disagree(format!(
                "record {:?} is labelled revision {}",
                record.name,
                shown(record.revision.as_deref())
            )));
        }
        let document = match &record.payload {
            None => {
                return Err((
                    ResourceHoldReason::RevisionsUnread,
                    format!("the data of record {:?} was not read", record.name),
                ))
            }
            Some(Payload::Unreadable(error)) => Err(error.as_str()),
            Some(Payload::Read(document)) => {
                if document.revision != number || document.release != release {
                    return Err(disagree(format!(
                        "record {:?} holds revision {} of release {:?}",
                        record.name, document.revision, document.release
                    )));
                }
                Ok(document)
            }
        };
        let revision = Revision {
            number,
            label_owner: record.owner.as_deref(),
            label_status: record.status.as_deref(),
            document,
        };
        if by_number.insert(number, revision).is_some() {
            return Err((
                ResourceHoldReason::DuplicateRevision,
                format!("two records claim revision {number}"),
            ));
        }
    }
    Ok(by_number.into_values().collect())
}

/// A label or field as a message shows it: quoted, or `none`.
fn shown(value: Option<&str>) -> String {
    value.map_or_else(|| "none".to_owned(), |v| format!("{v:?}"))
}

crate::map_only::map_only! {
    Dropped => "a dropped object";
    DroppedObject => "a dropped object entry";
    Unclaimed => "an unclaimed object";
    ResourceHold => "a resource hold object";
    SkippedRevision => "a skipped revision object";
}
