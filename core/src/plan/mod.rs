//! The plan: which releases may go, which stay and why, what holds the
//! sweep, and which nodes a volume purge cannot reach.
//!
//! [`plan`] is a pure function of the [`Snapshot`]: the same snapshot, with
//! its lists in any order, gives a byte-identical plan, and carrying a plan
//! out and planning again gives no deletions. The steps live in submodules:
//! [`swarms`] groups names that are one cluster, [`holds`] finds what stops
//! the sweep, [`classify`] decides each release, [`coverage`] says what a
//! volume purge can reach.

pub mod classify;
pub mod coverage;
pub mod holds;
pub mod swarms;

use serde::{Deserialize, Serialize};

use crate::owner::ControllerId;
use crate::refs::{ReleaseRef, SwarmName};
use crate::snapshot::{NodeEntry, Snapshot, SnapshotError};

pub use classify::Decision;
pub use coverage::Coverage;

/// The plan for one sweep. Every list is sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SweepPlan {
    pub controller: String,
    pub purge_volumes: bool,
    pub holds: Vec<Hold>,
    pub deletions: Vec<Deletion>,
    pub spared: Vec<Spared>,
    pub uncovered: Vec<Uncovered>,
    /// Every swarm the plan knows of, one entry per cluster.
    pub swarms: Vec<SwarmPlan>,
}

impl SweepPlan {
    /// True when a hold stops the whole sweep, not only some swarms.
    pub fn is_held(&self) -> bool {
        self.holds.iter().any(|h| h.swarm.is_none())
    }

    /// The swarm entry a deletion's `swarm` field names.
    pub fn swarm(&self, name: &SwarmName) -> Option<&SwarmPlan> {
        // `plan` sorts `swarms` by name, so this is a search, not a scan per
        // deletion; a plan read back from elsewhere may not be sorted.
        match self.swarms.binary_search_by(|s| s.swarm.cmp(name)) {
            Ok(i) => Some(&self.swarms[i]),
            Err(_) => self.swarms.iter().find(|s| &s.swarm == name),
        }
    }

    pub fn to_json_pretty(&self) -> String {
        // Plain data of strings, numbers and enums: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// Why nothing is deleted somewhere.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Hold {
    /// `"sweep"` for the whole sweep, else the swarm's name.
    pub scope: String,
    /// `None` for the whole sweep; the swarm otherwise. Kept beside `scope`
    /// so that a swarm that happens to be named `sweep` is not misread.
    pub swarm: Option<SwarmName>,
    pub reason: HoldReason,
    /// The applications behind the hold, sorted.
    pub applications: Vec<String>,
    pub message: Option<String>,
}

impl Hold {
    pub fn sweep(reason: HoldReason, message: impl Into<String>) -> Self {
        Hold {
            scope: "sweep".to_owned(),
            swarm: None,
            reason,
            applications: Vec::new(),
            message: Some(message.into()),
        }
    }

    pub fn swarm(
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
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldReason {
    AppSetNotLoaded,
    EmptyAppSet,
    Unreconciled,
    Draining,
    SwarmUnreadable,
    NoReachableNode,
    BlastRadius,
    /// Applications name a destination no swarm of the snapshot has; their
    /// releases are spared everywhere. Holds no swarm of its own.
    UnknownDestination,
}

impl HoldReason {
    /// The name JSON uses.
    pub fn as_str(self) -> &'static str {
        match self {
            HoldReason::AppSetNotLoaded => "app_set_not_loaded",
            HoldReason::EmptyAppSet => "empty_app_set",
            HoldReason::Unreconciled => "unreconciled",
            HoldReason::Draining => "draining",
            HoldReason::SwarmUnreadable => "swarm_unreadable",
            HoldReason::NoReachableNode => "no_reachable_node",
            HoldReason::BlastRadius => "blast_radius",
            HoldReason::UnknownDestination => "unknown_destination",
        }
    }

    /// Whether a person has to act. Waiting for an application to
    /// reconcile or drain is the normal course of a deploy and resolves
    /// itself; every other hold means part of the sweep cannot be done
    /// until someone fixes its cause.
    pub fn needs_attention(self) -> bool {
        !matches!(self, HoldReason::Unreconciled | HoldReason::Draining)
    }
}

/// A release that may be deleted.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Deletion {
    pub swarm: SwarmName,
    pub release: String,
    pub application: String,
    pub reason: DeletionReason,
    /// What a volume purge of this release can reach.
    pub volumes: Coverage,
}

impl Deletion {
    pub fn release_ref(&self) -> ReleaseRef {
        ReleaseRef::new(self.swarm.clone(), self.release.clone())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeletionReason {
    /// The owning application has left the app set.
    Departed,
    /// The owning application now deploys to another swarm.
    DestinationMoved,
}

impl DeletionReason {
    /// The name JSON uses.
    pub fn as_str(self) -> &'static str {
        match self {
            DeletionReason::Departed => "departed",
            DeletionReason::DestinationMoved => "destination_moved",
        }
    }
}

/// A release that stays, and why.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Spared {
    pub swarm: SwarmName,
    pub release: String,
    pub reason: SpareReason,
    /// The owning application, when the release is this controller's.
    pub application: Option<String>,
    /// More about the reason, for people.
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpareReason {
    Unmanaged,
    ForeignOwner,
    OwnStack,
    CurrentApplication,
    Declared,
    Held,
}

impl SpareReason {
    /// The name JSON uses.
    pub fn as_str(self) -> &'static str {
        match self {
            SpareReason::Unmanaged => "unmanaged",
            SpareReason::ForeignOwner => "foreign_owner",
            SpareReason::OwnStack => "own_stack",
            SpareReason::CurrentApplication => "current_application",
            SpareReason::Declared => "declared",
            SpareReason::Held => "held",
        }
    }
}

/// A swarm whose volume purge cannot reach every node it counts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Uncovered {
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
    pub coverage: Coverage,
}

/// One swarm (cluster) as the plan sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SwarmPlan {
    /// The name deletions use: the smallest of the cluster's names.
    pub swarm: SwarmName,
    /// Every name the snapshot listed this cluster under, sorted.
    pub names: Vec<SwarmName>,
    pub cluster_id: Option<String>,
    pub readable: bool,
    pub node_count: Option<u64>,
    /// The nodes the registry reached, sorted by id; `None` when it cannot
    /// reach nodes individually (a purge then covers the manager only).
    pub nodes: Option<Vec<NodeEntry>>,
    /// Coverage of a volume purge on this swarm (`off` without purge).
    pub coverage: Coverage,
    /// Nodes on the swarm's own node list the registry did not reach.
    pub unreached: Option<Vec<String>>,
}

/// Plans a sweep. Errors only on an invalid snapshot.
pub fn plan(snapshot: &Snapshot) -> Result<SweepPlan, SnapshotError> {
    snapshot.validate()?;
    let controller = ControllerId::new(snapshot.policy.controller.clone())?;
    let purge = snapshot.policy.purge_volumes;
    let groups = swarms::group(snapshot);
    let mut holds = holds::find(snapshot, &groups);
    let apps = classify::AppIndex::new(snapshot, &groups);
    let reach: Vec<coverage::GroupReach> = groups.iter().map(coverage::GroupReach::new).collect();

    let mut deletions = Vec::new();
    let mut spared = Vec::new();
    let held_by = holds::HoldIndex::new(&holds);
    for (group, reach) in groups.iter().zip(&reach) {
        let held = held_by.get(&group.swarm);
        for release in &group.releases {
            match classify::decide(&controller, &apps, &groups, group, release) {
                Decision::Spare {
                    reason,
                    application,
                    detail,
                } => spared.push(Spared {
                    swarm: group.swarm.clone(),
                    release: release.name.clone(),
                    reason,
                    application,
                    detail,
                }),
                Decision::Delete {
                    application,
                    reason,
                } if held.is_some() => spared.push(Spared {
                    swarm: group.swarm.clone(),
                    release: release.name.clone(),
                    reason: SpareReason::Held,
                    application: Some(application),
                    detail: held.map(|r| {
                        format!(
                            "would be deleted ({}) but the sweep is held: {}",
                            reason.as_str(),
                            r.as_str()
                        )
                    }),
                }),
                Decision::Delete {
                    application,
                    reason,
                } => deletions.push(Deletion {
                    swarm: group.swarm.clone(),
                    release: release.name.clone(),
                    application,
                    reason,
                    volumes: reach.coverage(purge),
                }),
            }
        }
    }

    // The blast-radius guard looks at the plan as a whole: a truncated
    // registry listing or a mangled app set shows up as "too many".
    if let Some(max) = snapshot.policy.max_deletions {
        if deletions.len() as u64 > max {
            holds.push(Hold::sweep(
                HoldReason::BlastRadius,
                format!(
                    "the plan would delete {} releases, more than max_deletions = {max}",
                    deletions.len()
                ),
            ));
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
        })
        .collect();

    let mut plan = SweepPlan {
        controller: controller.as_str().to_owned(),
        purge_volumes: purge,
        holds,
        deletions,
        spared,
        uncovered,
        swarms: swarm_plans,
    };
    sort(&mut plan);
    Ok(plan)
}

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
    plan.deletions.sort();
    plan.spared.sort();
    plan.uncovered.sort();
    plan.swarms.sort();
}
