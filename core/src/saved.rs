//! Saved plans: what an operator reviewed, applied exactly or not at all.
//!
//! `plan --out` writes a [`SavedPlan`]: the plan, the policy it was made
//! under, the tool's version and a digest of the snapshot, and per deletion
//! the fingerprint of what it relies on ([`Observed`](crate::plan::Observed)) and per swarm the
//! cluster it was planned against. `apply --plan` gathers again and asks
//! [`check`] whether the saved plan still holds. Anything it relied on that
//! differs makes the whole plan [`Stale`], naming each change, and nothing
//! is deleted; otherwise exactly the saved deletions are carried out, and a
//! deletion the fresh plan adds is left for a new review.
//!
//! The hazard: between review and apply a release can be re-declared,
//! restamped for another application, redeployed, or replaced, and a swarm
//! name can come to point at another cluster. Applying the reviewed plan
//! then would delete what nobody reviewed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::escape::Escaped;
use crate::format::FormatVersion;
use crate::objects::StackObjects;
use crate::plan::{plan, Deletion, SweepPlan};
use crate::refs::{ReleaseRef, SwarmName};
use crate::snapshot::{one_json_document, Policy, Snapshot, SnapshotError};
use crate::usage::{self, ObjectKind};

/// A plan as written by `plan --out`, with what it was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct SavedPlan {
    /// The format version ([`FORMAT_VERSION`](crate::FORMAT_VERSION)); a
    /// saved plan of another version is refused.
    pub format_version: FormatVersion,
    /// The version of the tool that made it; only the same version
    /// applies it, since another may judge the same facts differently.
    pub tool_version: String,
    /// `sha256:` and the hex digest of the snapshot's JSON: tells two
    /// saved plans of the same snapshot apart from two of different ones.
    pub snapshot_digest: String,
    /// The policy it was planned under: `apply --plan` plans again under
    /// this one.
    pub policy: Policy,
    /// Per swarm name of the snapshot, the cluster it was (`None`: it
    /// could not be read).
    pub clusters: BTreeMap<SwarmName, Option<String>>,
    /// The plan as reviewed, with the fingerprint of each deletion.
    pub plan: SweepPlan,
}

impl SavedPlan {
    /// The saved form of `plan`, made from `snapshot` by tool version
    /// `tool_version`.
    pub fn new(snapshot: &Snapshot, plan: SweepPlan, tool_version: impl Into<String>) -> Self {
        let clusters = snapshot
            .swarms
            .iter()
            .map(|s| {
                let cluster = s
                    .why_unreadable()
                    .is_none()
                    .then(|| s.cluster_id.clone())
                    .flatten();
                (s.swarm.clone(), cluster)
            })
            .collect();
        SavedPlan {
            format_version: FormatVersion,
            tool_version: tool_version.into(),
            snapshot_digest: snapshot_digest(snapshot),
            policy: snapshot.policy.clone(),
            clusters,
            plan,
        }
    }

    /// Reads a saved plan: exactly one JSON object of this format version.
    pub fn from_json(text: &str) -> Result<Self, SnapshotError> {
        one_json_document(text)
    }

    /// The JSON [`SavedPlan::from_json`] reads: what `plan --out` writes.
    pub fn to_json_pretty(&self) -> String {
        // Plain data of strings, numbers and enums: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// [`SavedPlan::to_json_pretty`], or the refusal
    /// [`SavedPlan::from_json`] would give that text
    /// ([`SnapshotError::TooManyValues`]). A saved plan too large to be read
    /// back must be refused when it is written, before anyone reviews it,
    /// not when the reviewed plan is applied.
    pub fn to_json_readable(&self) -> Result<String, SnapshotError> {
        self.to_json_within(crate::bound::MAX_JSON_VALUES)
    }

    fn to_json_within(&self, values: u64) -> Result<String, SnapshotError> {
        let text = self.to_json_pretty();
        if crate::bound::count_values(&text, values) > values {
            return Err(SnapshotError::TooManyValues { limit: values });
        }
        Ok(text)
    }
}

/// `sha256:<hex>` of the snapshot's JSON: what a saved plan records as
/// `snapshot_digest`, and what the audit log names a sweep's snapshot by.
/// The JSON is hashed as it is written, never held whole: a driver takes
/// this digest of every snapshot it gathers when it keeps an audit log.
pub fn snapshot_digest(snapshot: &Snapshot) -> String {
    let mut hash = Sha256::new();
    // Writing into a hash cannot fail, nor can serializing plain data.
    let _ = serde_json::to_writer(&mut hash, snapshot);
    hex_digest(&hash.finalize())
}

/// `sha256:<hex>` of `bytes`, as `sha256sum` prints the hex: how the audit
/// log names the saved plan file an `apply --plan` carried out.
pub fn bytes_digest(bytes: &[u8]) -> String {
    hex_digest(&Sha256::digest(bytes))
}

fn hex_digest(hash: &[u8]) -> String {
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// A saved plan that still holds: the plan to carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Approved {
    /// The fresh plan with exactly the saved deletions (the fresh entries,
    /// each proven equal to the saved one).
    pub plan: SweepPlan,
    /// Releases the fresh plan would also delete but the saved plan does
    /// not: left, for a new review.
    pub unreviewed: Vec<ReleaseRef>,
}

/// Why a saved plan cannot be applied; nothing was deleted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("the saved plan is stale: {} change(s) since it was made", self.changes.len())]
#[non_exhaustive]
pub struct Stale {
    /// Every change found, sorted.
    pub changes: Vec<Change>,
}

/// One thing a saved plan relied on that is no longer so.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Change {
    /// Made by another version of the tool.
    ToolVersion {
        /// The version that made the saved plan.
        planned: String,
        /// The version running now.
        running: String,
    },
    /// Planned for another controller, or under another policy.
    Policy {
        /// The policy the saved plan was made under.
        planned: Policy,
        /// The fresh snapshot's policy.
        now: Policy,
    },
    /// The swarm name now reaches another cluster, or none that can be
    /// read, or is no longer in the registry.
    Cluster {
        /// The swarm name.
        swarm: SwarmName,
        /// The cluster id it reached when planned; `None`: unreadable.
        planned: Option<String>,
        /// The cluster id it reaches now; `None`: unreadable, or not in
        /// the registry.
        now: Option<String>,
    },
    /// A live release's dropped objects are not what was reviewed any
    /// more.
    Dropped {
        /// The release that dropped them.
        release: ReleaseRef,
        /// How they changed.
        change: DroppedChange,
    },
    /// A planned deletion that is not what was reviewed any more.
    Release {
        /// The planned deletion's release.
        release: ReleaseRef,
        /// How it changed.
        change: ReleaseChange,
    },
}

/// How a planned deletion's release changed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ReleaseChange {
    /// It has no release records any more.
    Gone,
    /// The fresh plan spares it (re-declared, restamped for a live
    /// application, kept, held...): `reason` and `detail` say why.
    Spared {
        /// The fresh plan's reason (`declared`, `kept`...).
        reason: String,
        /// The fresh plan's detail, where it gives one.
        detail: Option<String>,
    },
    /// Its release records changed: restamped, or re-created.
    Restamped,
    /// Its stack's services changed: redeployed, updated, added or removed.
    Redeployed,
    /// It would go for another application or reason than reviewed.
    Reclassified {
        /// The reason and application reviewed, as `<reason> of
        /// application <name>`.
        planned: String,
        /// The reason and application now, likewise.
        now: String,
    },
    /// The volume purge would reach other nodes than reviewed.
    Coverage {
        /// The coverage reviewed (`complete`, `partial`...).
        planned: String,
        /// The coverage now.
        now: String,
    },
    /// No fingerprint was taken of it (the snapshot did not carry its
    /// records and services, or its names disagreed), so nothing proves it
    /// unchanged.
    Unproven,
    /// Its stack holds a network, secret or config the review did not
    /// see (added, re-created, or changed since): carrying out the plan
    /// would remove it unreviewed.
    Unreviewed {
        /// Each such object, as `kind name`, escaped.
        objects: Vec<String>,
    },
    /// Another workload uses an object of it that nobody used, or used
    /// otherwise, when it was reviewed: the review did not see that
    /// sharing, and carrying out what was reviewed would hit it.
    NewUser {
        /// Each new use, as `in_use_text` words it.
        uses: Vec<String>,
    },
}

/// How a live release's reviewed dropped objects changed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DroppedChange {
    /// The fresh plan removes none of them (declared again, held, no
    /// longer proven ours...).
    NotDropped,
    /// Its release records changed: a new revision, which may declare
    /// them again.
    RevisionChanged,
    /// A reviewed object is gone, or is not the object reviewed (another
    /// id or version), or is no longer dropped.
    Object {
        /// The object's kind (`service`, `network`...).
        kind: String,
        /// The object's name.
        name: String,
    },
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Change::ToolVersion { planned, running } => write!(
                f,
                "made by swarm-sweep {}, this is {}",
                Escaped(planned),
                Escaped(running)
            ),
            Change::Policy { planned, now } => {
                let policy = |p: &Policy| {
                    let max = p
                        .max_deletions
                        .map_or("none".to_owned(), |m| m.to_string());
                    // The grace period is policy too: without it here, a
                    // change of it alone would read as no change at all.
                    let window = p
                        .min_departed_for
                        .map_or("none".to_owned(), crate::duration::show);
                    format!(
                        "controller {} (purge_volumes {}, prune_resources {}, max_deletions {max}, min_departed_for {window})",
                        Escaped(&p.controller),
                        p.purge_volumes,
                        p.prune_resources
                    )
                };
                write!(
                    f,
                    "planned under {}, now {}",
                    policy(planned),
                    policy(now)
                )
            }
            Change::Cluster { swarm, planned: None, .. } => write!(
                f,
                "swarm {}: the plan holds no cluster id for it, so nothing proves it is the cluster planned against",
                Escaped(swarm)
            ),
            Change::Cluster {
                swarm,
                planned: Some(planned),
                now,
            } => {
                let now = match now {
                    Some(id) => format!("cluster {}", Escaped(id)),
                    None => "no cluster that can be read".to_owned(),
                };
                write!(
                    f,
                    "swarm {}: planned against cluster {}, now {now}",
                    Escaped(swarm),
                    Escaped(planned)
                )
            }
            Change::Dropped { release, change } => {
                write!(
                    f,
                    "{}/{} (dropped objects): ",
                    Escaped(&release.swarm),
                    Escaped(&release.release)
                )?;
                match change {
                    DroppedChange::NotDropped => {
                        write!(f, "the fresh plan removes none of them")
                    }
                    DroppedChange::RevisionChanged => write!(
                        f,
                        "its release records changed (a new revision may declare them again)"
                    ),
                    DroppedChange::Object { kind, name } => write!(
                        f,
                        "{} {} is not the object reviewed (gone, changed, or no longer dropped)",
                        Escaped(kind),
                        Escaped(name)
                    ),
                }
            }
            Change::Release { release, change } => {
                write!(
                    f,
                    "{}/{}: ",
                    Escaped(&release.swarm),
                    Escaped(&release.release)
                )?;
                match change {
                    ReleaseChange::Gone => write!(f, "gone (no release records any more)"),
                    ReleaseChange::Spared { reason, detail } => {
                        write!(f, "now spared ({})", Escaped(reason))?;
                        match detail {
                            Some(d) => write!(f, ": {}", Escaped(d)),
                            None => Ok(()),
                        }
                    }
                    ReleaseChange::Restamped => {
                        write!(f, "its release records changed (restamped or re-created)")
                    }
                    ReleaseChange::Redeployed => write!(f, "its services changed (redeployed)"),
                    ReleaseChange::Reclassified { planned, now } => write!(
                        f,
                        "planned as {}, now {}",
                        Escaped(planned),
                        Escaped(now)
                    ),
                    ReleaseChange::Coverage { planned, now } => write!(
                        f,
                        "volume coverage was {}, now {}",
                        Escaped(planned),
                        Escaped(now)
                    ),
                    ReleaseChange::Unproven => write!(
                        f,
                        "the plan holds no fingerprint of it, so nothing proves it unchanged"
                    ),
                    // Each object is escaped already.
                    ReleaseChange::Unreviewed { objects } => write!(
                        f,
                        "its stack holds what was not reviewed: {}",
                        objects.join(", ")
                    ),
                    // Each use is escaped already.
                    ReleaseChange::NewUser { uses } => write!(
                        f,
                        "another workload uses it since it was reviewed: {}",
                        uses.join("; ")
                    ),
                }
            }
        }
    }
}

/// Whether `saved` still holds against a `fresh` snapshot gathered now by
/// tool version `running`: the plan to carry out, or every change found.
///
/// Errors only on an invalid fresh snapshot.
pub fn check(
    saved: &SavedPlan,
    fresh: &Snapshot,
    running: &str,
) -> Result<Result<Approved, Stale>, SnapshotError> {
    let now = plan(fresh)?;
    let mut changes = BTreeSet::new();
    if saved.tool_version != running {
        changes.insert(Change::ToolVersion {
            planned: saved.tool_version.clone(),
            running: running.to_owned(),
        });
    }
    if saved.policy != fresh.policy || saved.plan.controller != now.controller {
        changes.insert(Change::Policy {
            planned: saved.policy.clone(),
            now: fresh.policy.clone(),
        });
    }
    clusters(saved, fresh, &mut changes);

    let fresh_deletions: BTreeMap<(&SwarmName, &str), &Deletion> = now
        .deletions
        .iter()
        .map(|d| ((&d.swarm, d.release.as_str()), d))
        .collect();
    let fresh_spared: BTreeMap<(&SwarmName, &str), _> = now
        .spared
        .iter()
        .map(|s| ((&s.swarm, s.release.as_str()), s))
        .collect();
    let mut keep = BTreeSet::new();
    for planned in &saved.plan.deletions {
        let key = (&planned.swarm, planned.release.as_str());
        let change = match fresh_deletions.get(&key) {
            Some(found) => {
                keep.insert(key);
                compare(planned, found)
            }
            None => Some(match fresh_spared.get(&key) {
                Some(s) => ReleaseChange::Spared {
                    reason: s.reason.as_str().to_owned(),
                    detail: s.detail.clone(),
                },
                None => ReleaseChange::Gone,
            }),
        };
        if let Some(change) = change {
            changes.insert(Change::Release {
                release: planned.release_ref(),
                change,
            });
        }
    }
    let dropped = reviewed_drops(saved, &now, &mut changes);
    if !changes.is_empty() {
        return Ok(Err(Stale {
            changes: changes.into_iter().collect(),
        }));
    }

    let reviewed: BTreeMap<(&SwarmName, &str), &Deletion> = saved
        .plan
        .deletions
        .iter()
        .map(|d| ((&d.swarm, d.release.as_str()), d))
        .collect();
    let mut plan = now;
    let (approved, unreviewed): (Vec<Deletion>, Vec<Deletion>) =
        std::mem::take(&mut plan.deletions)
            .into_iter()
            .partition(|d| keep.contains(&(&d.swarm, d.release.as_str())));
    plan.deletions = approved
        .into_iter()
        .map(|d| match reviewed.get(&(&d.swarm, d.release.as_str())) {
            Some(planned) => as_reviewed(planned, d),
            None => d,
        })
        .collect();
    let unreviewed_drops: Vec<ReleaseRef> = plan
        .dropped
        .iter()
        .filter(|d| {
            !dropped
                .iter()
                .any(|r| r.swarm == d.swarm && r.release == d.release)
        })
        .map(|d| ReleaseRef::new(d.swarm.clone(), d.release.clone()))
        .collect();
    plan.dropped = dropped;
    Ok(Ok(Approved {
        plan,
        unreviewed: unreviewed
            .iter()
            .map(Deletion::release_ref)
            .chain(unreviewed_drops)
            .collect(),
    }))
}

/// The reviewed dropped objects, each found again in the fresh plan as the
/// same object (kind, name, id and version), under the same records: the
/// saved entries to carry out. Anything else is a change, and the plan is
/// stale. An object the fresh plan adds is left for a new review.
fn reviewed_drops(
    saved: &SavedPlan,
    now: &SweepPlan,
    changes: &mut BTreeSet<Change>,
) -> Vec<crate::plan::Dropped> {
    let mut approved = Vec::new();
    for planned in &saved.plan.dropped {
        let release = ReleaseRef::new(planned.swarm.clone(), planned.release.clone());
        let Some(found) = now
            .dropped
            .iter()
            .find(|d| d.swarm == planned.swarm && d.release == planned.release)
        else {
            changes.insert(Change::Dropped {
                release,
                change: DroppedChange::NotDropped,
            });
            continue;
        };
        if found.records != planned.records || found.application != planned.application {
            changes.insert(Change::Dropped {
                release,
                change: DroppedChange::RevisionChanged,
            });
            continue;
        }
        let mut same = found.clone();
        same.objects.clear();
        for o in &planned.objects {
            let again = found.objects.iter().find(|f| {
                f.kind == o.kind && f.id == o.id && f.name == o.name && f.version == o.version
            });
            match again {
                Some(f) => same.objects.push(f.clone()),
                None => {
                    changes.insert(Change::Dropped {
                        release: release.clone(),
                        change: DroppedChange::Object {
                            kind: o.kind.as_str().to_owned(),
                            name: o.name.clone(),
                        },
                    });
                }
            }
        }
        approved.push(same);
    }
    approved
}

/// Every swarm name a saved deletion is on must reach the cluster it was
/// planned against, under every name of the snapshot that cluster had.
/// The deletion's own swarm is checked whatever `plan.swarms` says: the
/// file can be edited, and a deletion whose swarm it leaves out would
/// otherwise be carried out on whatever cluster that name reaches now.
fn clusters(saved: &SavedPlan, fresh: &Snapshot, changes: &mut BTreeSet<Change>) {
    let now: BTreeMap<&SwarmName, Option<&String>> = fresh
        .swarms
        .iter()
        .map(|s| {
            let cluster = if s.why_unreadable().is_none() {
                s.cluster_id.as_ref()
            } else {
                None
            };
            (&s.swarm, cluster)
        })
        .collect();
    let deleting: BTreeSet<&SwarmName> = saved
        .plan
        .deletions
        .iter()
        .map(|d| &d.swarm)
        .chain(saved.plan.dropped.iter().map(|d| &d.swarm))
        .collect();
    let mut names = deleting.clone();
    for swarm in &saved.plan.swarms {
        if deleting.contains(&swarm.swarm) {
            names.extend(&swarm.names);
        }
    }
    for name in names {
        let planned = saved.clusters.get(name).cloned().flatten();
        let current = now.get(name).copied().flatten().cloned();
        if planned.is_none() || planned != current {
            changes.insert(Change::Cluster {
                swarm: name.clone(),
                planned,
                now: current,
            });
        }
    }
}

/// How a deletion found again differs from the one reviewed, if it does.
fn compare(planned: &Deletion, found: &Deletion) -> Option<ReleaseChange> {
    let (Some(was), Some(is)) = (&planned.observed, &found.observed) else {
        return Some(ReleaseChange::Unproven);
    };
    // What was observed first: a restamp also changes whose the release
    // is, and "its records changed" is the cause an operator can look up.
    if was.records != is.records {
        return Some(ReleaseChange::Restamped);
    }
    if was.services != is.services {
        return Some(ReleaseChange::Redeployed);
    }
    if planned.application != found.application || planned.reason != found.reason {
        return Some(ReleaseChange::Reclassified {
            planned: format!(
                "{} of application {}",
                planned.reason.as_str(),
                planned.application
            ),
            now: format!(
                "{} of application {}",
                found.reason.as_str(),
                found.application
            ),
        });
    }
    if planned.volumes != found.volumes {
        return Some(ReleaseChange::Coverage {
            planned: planned.volumes.as_str().to_owned(),
            now: found.volumes.as_str().to_owned(),
        });
    }
    let objects = unreviewed(planned, found);
    if !objects.is_empty() {
        return Some(ReleaseChange::Unreviewed { objects });
    }
    // A use that left since only keeps more than needed (the approved
    // deletion keeps what was reviewed as shared); a new one was never
    // reviewed.
    let uses: Vec<String> = found
        .in_use_by
        .iter()
        .filter(|u| !planned.in_use_by.contains(u))
        .map(crate::render::in_use_text)
        .collect();
    if !uses.is_empty() {
        return Some(ReleaseChange::NewUser { uses });
    }
    None
}

/// The networks, secrets and configs the fresh deletion would remove that
/// the review did not list as they are now (same name, id and version),
/// and the volumes under a name the review listed on no node, as `kind
/// name`, escaped. One the review saw in use stays whatever it is now
/// ([`as_reviewed`]), so it is not counted. The services are the
/// fingerprint's ([`Observed`]). A volume is judged by its name alone: a
/// task placed on another node since leaves the same volume there, but a
/// volume labelled since under a new name holds data nobody reviewed (the
/// sweep removes only names its approved deletion lists, and the approved
/// deletion is the fresh one).
fn unreviewed(planned: &Deletion, found: &Deletion) -> Vec<String> {
    let Some(now) = &found.objects else {
        return Vec::new();
    };
    let empty = StackObjects::default();
    let was = planned.objects.as_ref().unwrap_or(&empty);
    let kinds = [
        (ObjectKind::Network, &was.networks, &now.networks),
        (ObjectKind::Secret, &was.secrets, &now.secrets),
        (ObjectKind::Config, &was.configs, &now.configs),
    ];
    let mut out = Vec::new();
    for (kind, was, now) in kinds {
        for object in now {
            let reviewed = was
                .iter()
                .any(|w| w.name == object.name && w.id == object.id && w.version == object.version);
            let kept = planned
                .in_use_by
                .iter()
                .any(|u| u.kind == kind && u.object == object.name);
            if !reviewed && !kept {
                out.push(format!("{} {}", kind.as_str(), Escaped(&object.name)));
            }
        }
    }
    let names = |o: &StackObjects| -> BTreeSet<String> {
        o.volumes
            .iter()
            .flatten()
            .flat_map(|n| n.volumes.iter().cloned())
            .collect()
    };
    let reviewed = names(was);
    for name in names(now) {
        let kept = planned
            .in_use_by
            .iter()
            .any(|u| u.kind == ObjectKind::Volume && u.object == name);
        if !reviewed.contains(&name) && !kept {
            out.push(format!("volume {}", Escaped(&name)));
        }
    }
    out
}

/// The deletion to carry out for one that was reviewed as `planned` and is
/// found again as `found`: what the review saw shared stays shared, even
/// where its user has left since, so that an approved plan never removes
/// more than was reviewed.
fn as_reviewed(planned: &Deletion, mut found: Deletion) -> Deletion {
    for u in &planned.in_use_by {
        if !found.in_use_by.contains(u) {
            found.in_use_by.push(u.clone());
        }
    }
    found.in_use_by.sort();
    if let Some(objects) = &found.objects {
        found.objects = Some(usage::without_shared(objects, &found.in_use_by));
    }
    found
}

/// One line per change, for the operator.
pub fn stale_text(stale: &Stale) -> String {
    let mut out = String::from("the saved plan is stale; nothing was deleted. Changes:\n");
    for change in &stale.changes {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "  {change}");
    }
    out.push_str("plan again to review what is there now\n");
    out
}

crate::map_only::map_only! {
    SavedPlan => "a saved plan object";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deletion_window::DeletionWindow;
    use crate::objects::{NodeVolumes, ObjectRef, ObjectVersion, ServiceEntry};
    use crate::plan::Coverage;
    use crate::snapshot::{AppSet, Application, NodeEntry, ReleaseEntry, SwarmSnapshot};
    use crate::time::UnixTime;

    const TOOL: &str = "1.0.0";

    fn release(name: &str, app: &str, record_version: u64, service_version: u64) -> ReleaseEntry {
        ReleaseEntry::new(name, Some(format!("cd/default/{app}:release/{name}")))
            .with_records(vec![ObjectVersion::new(
                format!("rec-{name}"),
                record_version,
            )])
            .with_objects(StackObjects::new(
                vec![ServiceEntry::new(
                    format!("svc-{name}"),
                    format!("{name}_app"),
                    service_version,
                )],
                vec![ObjectRef::new(
                    format!("net-{name}"),
                    format!("{name}_default"),
                )],
                vec![],
                vec![],
            ))
    }

    fn swarm(name: &str, cluster: &str, releases: Vec<ReleaseEntry>) -> SwarmSnapshot {
        let mut s = SwarmSnapshot::new(name);
        s.cluster_id = Some(cluster.to_owned());
        s.releases = releases;
        s
    }

    fn snapshot(apps: Vec<Application>, swarms: Vec<SwarmSnapshot>) -> Snapshot {
        Snapshot::new(
            Policy::new("default", false, None),
            AppSet::new(true, apps),
            swarms,
        )
    }

    /// `old` departed, `web` stays; both on alpha (cluster c1).
    fn base() -> Snapshot {
        snapshot(
            vec![Application::reconciled("web", "alpha", &["web"])],
            vec![swarm(
                "alpha",
                "c1",
                vec![release("old", "old", 1, 1), release("web", "web", 1, 1)],
            )],
        )
    }

    fn saved(snapshot: &Snapshot) -> SavedPlan {
        SavedPlan::new(snapshot, plan(snapshot).unwrap(), TOOL)
    }

    fn changes(saved: &SavedPlan, fresh: &Snapshot) -> Vec<Change> {
        match check(saved, fresh, TOOL).unwrap() {
            Ok(approved) => panic!("expected stale, approved {:?}", approved.plan.deletions),
            Err(stale) => stale.changes,
        }
    }

    fn old_changed(change: ReleaseChange) -> Vec<Change> {
        vec![Change::Release {
            release: ReleaseRef::new("alpha", "old"),
            change,
        }]
    }

    /// A plan reviewed inside a deletion window and applied outside it
    /// deletes nothing: the fresh plan, at the time of the apply, holds the
    /// release, and the saved plan is stale for it.
    #[test]
    fn a_plan_made_inside_a_window_is_stale_outside_it() {
        let nights = vec![DeletionWindow::parse("allow Mon-Fri 02:00-05:00 UTC").unwrap()];
        let at = |t: &str| UnixTime::parse_rfc3339(t).unwrap();
        let mut inside = base().with_now(at("2026-12-07T02:30:00Z"));
        inside.policy = inside.policy.clone().with_windows(nights);
        let saved = saved(&inside);
        assert_eq!(saved.plan.deletions.len(), 1);
        assert!(check(&saved, &inside, TOOL).unwrap().is_ok());

        let outside = inside.clone().with_now(at("2026-12-07T05:00:00Z"));
        let [Change::Release {
            release,
            change: ReleaseChange::Spared { reason, detail },
        }] = &changes(&saved, &outside)[..]
        else {
            panic!("expected the release held");
        };
        assert_eq!(release, &ReleaseRef::new("alpha", "old"));
        assert_eq!(reason, "held");
        assert!(detail.as_deref().unwrap().contains("outside_window"));

        // So is one whose swarm's own windows closed since the review.
        let mut frozen = inside.clone();
        frozen.swarms[0].windows =
            vec![DeletionWindow::parse("deny 2026-12-07T00:00:00Z/2026-12-08T00:00:00Z").unwrap()];
        assert!(!changes(&saved, &frozen).is_empty());
    }

    #[test]
    fn an_unchanged_swarm_applies_exactly_the_saved_deletions() {
        let snapshot = base();
        let saved = saved(&snapshot);
        assert_eq!(saved.plan.deletions.len(), 1);
        let approved = check(&saved, &snapshot, TOOL).unwrap().unwrap();
        assert_eq!(approved.plan.deletions, saved.plan.deletions);
        assert!(approved.unreviewed.is_empty());
    }

    /// `base()` with a service of another stack that names `old`'s network.
    fn old_network_used() -> Snapshot {
        let mut s = base();
        s.swarms[0].usage = Some(crate::usage::Usage::new(
            vec![crate::usage::ServiceUse::new("u1", "user_app")
                .in_stack("user")
                .with_networks(["net-old"])],
            vec![],
        ));
        s
    }

    #[test]
    fn a_user_that_appeared_since_the_review_makes_the_release_stale() {
        let saved = saved(&base());
        let found = changes(&saved, &old_network_used());
        let [Change::Release {
            release,
            change: ReleaseChange::NewUser { uses },
        }] = &found[..]
        else {
            panic!("expected a new user, got {found:?}");
        };
        assert_eq!(release, &ReleaseRef::new("alpha", "old"));
        assert_eq!(uses.len(), 1);
        assert!(uses[0].contains("user_app"), "{uses:?}");
        assert!(stale_text(&Stale {
            changes: found.clone()
        })
        .contains("since it was reviewed"));
    }

    #[test]
    fn a_user_that_left_since_the_review_does_not_widen_the_deletion() {
        let saved = saved(&old_network_used());
        assert_eq!(saved.plan.deletions[0].in_use_by.len(), 1);
        assert!(saved.plan.deletions[0]
            .objects
            .as_ref()
            .unwrap()
            .networks
            .is_empty());
        // The user is gone now: the fresh plan would remove the network.
        let approved = check(&saved, &base(), TOOL).unwrap().unwrap();
        let d = &approved.plan.deletions[0];
        assert_eq!(d.in_use_by, saved.plan.deletions[0].in_use_by);
        assert!(d.objects.as_ref().unwrap().networks.is_empty());
    }

    /// `base` with the volume purge on, both of alpha's nodes read, and
    /// `old`'s volumes as listed on them.
    fn purged(volumes: Vec<NodeVolumes>) -> Snapshot {
        let mut s = base();
        s.policy = Policy::new("default", true, None);
        let alpha = &mut s.swarms[0];
        alpha.nodes = Some(vec![
            NodeEntry::new("n1", "one"),
            NodeEntry::new("n2", "two"),
        ]);
        alpha.node_count = Some(2);
        let objects = alpha.releases[0].objects.take().unwrap();
        alpha.releases[0].objects = Some(objects.with_volumes(volumes));
        s
    }

    /// A volume labelled with the stack since the review, under a name the
    /// review listed on no node, holds data nobody reviewed: the release is
    /// stale. A listed name found on another node since is the same volume
    /// a task placed there since left, and the plan still applies.
    #[test]
    fn a_volume_under_a_name_the_review_did_not_list_makes_the_release_stale() {
        let reviewed = purged(vec![
            NodeVolumes::new("n1", vec!["old_data".into()]),
            NodeVolumes::new("n2", vec![]),
        ]);
        let saved = saved(&reviewed);
        assert_eq!(saved.plan.deletions.len(), 1);
        assert_eq!(saved.plan.deletions[0].volumes, Coverage::Complete);
        assert!(check(&saved, &reviewed, TOOL).unwrap().is_ok());

        let labelled_since = purged(vec![
            NodeVolumes::new("n1", vec!["old_data".into()]),
            NodeVolumes::new("n2", vec!["old_export".into()]),
        ]);
        assert_eq!(
            changes(&saved, &labelled_since),
            old_changed(ReleaseChange::Unreviewed {
                objects: vec!["volume old_export".into()]
            })
        );

        let moved = purged(vec![
            NodeVolumes::new("n1", vec!["old_data".into()]),
            NodeVolumes::new("n2", vec!["old_data".into()]),
        ]);
        assert!(check(&saved, &moved, TOOL).unwrap().is_ok());
    }

    /// A config labelled with the stack since the review, or a network
    /// re-created under its name, would be removed with the release
    /// unreviewed: the release is stale. One that went since only leaves
    /// less to remove.
    #[test]
    fn an_object_the_review_did_not_see_makes_the_release_stale() {
        let saved = saved(&base());
        fn old(s: &mut Snapshot) -> &mut StackObjects {
            s.swarms[0].releases[0].objects.as_mut().unwrap()
        }
        let mut added = base();
        old(&mut added)
            .configs
            .push(ObjectRef::new("cfg-new", "old_important"));
        assert_eq!(
            changes(&saved, &added),
            old_changed(ReleaseChange::Unreviewed {
                objects: vec!["config old_important".into()]
            })
        );
        let mut recreated = base();
        old(&mut recreated).networks[0].id = Some("net-old-2".into());
        assert_eq!(
            changes(&saved, &recreated),
            old_changed(ReleaseChange::Unreviewed {
                objects: vec!["network old_default".into()]
            })
        );
        let text = stale_text(&Stale {
            changes: changes(&saved, &recreated),
        });
        assert!(
            text.contains("alpha/old: its stack holds what was not reviewed: network old_default"),
            "{text}"
        );
        let mut fewer = base();
        old(&mut fewer).networks.clear();
        let approved = check(&saved, &fewer, TOOL).unwrap().unwrap();
        assert!(approved.plan.deletions[0]
            .objects
            .as_ref()
            .unwrap()
            .networks
            .is_empty());
    }

    #[test]
    fn a_deletion_the_saved_plan_lacks_is_left_for_review() {
        let saved = saved(&base());
        let mut fresh = base();
        fresh.swarms[0]
            .releases
            .push(release("older", "older", 1, 1));
        let approved = check(&saved, &fresh, TOOL).unwrap().unwrap();
        let names: Vec<&str> = approved
            .plan
            .deletions
            .iter()
            .map(|d| d.release.as_str())
            .collect();
        assert_eq!(names, ["old"]);
        assert_eq!(approved.unreviewed, [ReleaseRef::new("alpha", "older")]);
    }

    #[test]
    fn a_restamped_release_is_stale() {
        let saved = saved(&base());
        let mut fresh = base();
        fresh.swarms[0].releases[0] = release("old", "old", 2, 1);
        assert_eq!(
            changes(&saved, &fresh),
            old_changed(ReleaseChange::Restamped)
        );
    }

    #[test]
    fn a_redeployed_release_is_stale() {
        let saved = saved(&base());
        let mut fresh = base();
        fresh.swarms[0].releases[0] = release("old", "old", 1, 7);
        assert_eq!(
            changes(&saved, &fresh),
            old_changed(ReleaseChange::Redeployed)
        );
    }

    #[test]
    fn a_re_declared_release_is_stale() {
        let saved = saved(&base());
        let mut fresh = base();
        fresh
            .app_set
            .applications
            .push(Application::reconciled("old", "alpha", &["old"]));
        let found = changes(&saved, &fresh);
        assert!(
            matches!(&found[..], [Change::Release { change: ReleaseChange::Spared { reason, .. }, .. }] if reason == "current_application"),
            "{found:?}"
        );
    }

    #[test]
    fn a_release_gone_is_stale() {
        let saved = saved(&base());
        let mut fresh = base();
        fresh.swarms[0].releases.remove(0);
        assert_eq!(changes(&saved, &fresh), old_changed(ReleaseChange::Gone));
    }

    #[test]
    fn another_cluster_under_the_same_name_is_stale() {
        let saved = saved(&base());
        let mut fresh = base();
        fresh.swarms[0].cluster_id = Some("c2".into());
        let found = changes(&saved, &fresh);
        assert!(found.contains(&Change::Cluster {
            swarm: "alpha".into(),
            planned: Some("c1".into()),
            now: Some("c2".into()),
        }));
    }

    #[test]
    fn another_policy_or_tool_version_is_stale() {
        let saved = saved(&base());
        let mut fresh = base();
        fresh.policy = Policy::new("default", false, Some(5));
        assert!(matches!(
            &changes(&saved, &fresh)[..],
            [Change::Policy { .. }]
        ));
        match check(&saved, &base(), "2.0.0").unwrap() {
            Err(stale) => assert!(matches!(&stale.changes[..], [Change::ToolVersion { .. }])),
            Ok(_) => panic!("another tool version applied a saved plan"),
        }
    }

    #[test]
    fn a_deletion_without_a_fingerprint_is_never_applied() {
        let mut bare = base();
        bare.swarms[0].releases[0] =
            ReleaseEntry::new("old", Some("cd/default/old:release/old".into()));
        let saved = saved(&bare);
        assert_eq!(changes(&saved, &bare), old_changed(ReleaseChange::Unproven));
    }

    #[test]
    fn a_saved_plan_reads_back_as_written() {
        let saved = saved(&base());
        let text = saved.to_json_pretty();
        assert_eq!(SavedPlan::from_json(&text).unwrap(), saved);
        assert!(saved.snapshot_digest.starts_with("sha256:"));
        let newer = text.replacen("\"format_version\": 2", "\"format_version\": 3", 1);
        assert!(matches!(
            SavedPlan::from_json(&newer),
            Err(SnapshotError::Parse { path, .. }) if path == "format_version"
        ));
    }

    #[test]
    fn a_saved_plan_is_written_only_if_it_reads_back() {
        let saved = saved(&base());
        let text = saved.to_json_readable().unwrap();
        assert_eq!(text, saved.to_json_pretty());
        // A bound above the values the text holds passes; one below is
        // refused as `from_json` refuses a text over its bound.
        let values = crate::bound::count_values(&text, u64::MAX);
        assert!(values > 20, "{values}");
        assert_eq!(saved.to_json_within(values + 1).unwrap(), text);
        assert_eq!(
            saved.to_json_within(values / 2),
            Err(SnapshotError::TooManyValues { limit: values / 2 })
        );
    }

    #[test]
    fn digests_are_of_the_json_and_of_the_bytes_as_sha256sum_gives_them() {
        let snapshot = base();
        let json = serde_json::to_vec(&snapshot).unwrap();
        assert_eq!(snapshot_digest(&snapshot), bytes_digest(&json));
        assert_eq!(
            bytes_digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn every_change_names_its_release_escaped() {
        let change = Change::Release {
            release: ReleaseRef::new("alpha", "evil\nline"),
            change: ReleaseChange::Gone,
        };
        assert_eq!(change.to_string().lines().count(), 1);
    }
}
