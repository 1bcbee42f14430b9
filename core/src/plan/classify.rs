//! The decision for one release on one swarm.
//!
//! The checks run from "whose is it" to "is it still wanted"; the first one
//! that spares wins, so the reason a plan gives is the most basic one.
//! Holds are applied by the planner on top of a `Delete` decision.

use std::collections::BTreeMap;

use super::swarms::{GroupRelease, Groups, SwarmGroup};
use super::{DeletionReason, SpareReason};
use crate::owner::{ControllerId, Ownership};
use crate::refs::SwarmName;
use crate::snapshot::{Application, Snapshot};

/// The live applications, indexed once per plan so that deciding each
/// release is a lookup, not a scan of the app set.
#[derive(Debug)]
pub struct AppIndex<'a> {
    live: BTreeMap<&'a str, &'a Application>,
    /// Draining applications whose destination the snapshot does not list.
    draining_to_unknown: BTreeMap<&'a str, &'a SwarmName>,
    /// (cluster, release) to the applications declaring it there, sorted.
    declared: BTreeMap<(SwarmName, &'a str), Vec<&'a str>>,
    /// Release to the live applications declaring it on a destination the
    /// snapshot does not list, sorted.
    declared_nowhere: BTreeMap<&'a str, Vec<&'a Application>>,
}

impl<'a> AppIndex<'a> {
    pub fn new(snapshot: &'a Snapshot, groups: &Groups) -> Self {
        let mut live = BTreeMap::new();
        let mut declared: BTreeMap<(SwarmName, &'a str), Vec<&'a str>> = BTreeMap::new();
        let draining_to_unknown = snapshot
            .app_set
            .applications
            .iter()
            .filter(|a| !a.is_live() && groups.get(&a.swarm).is_none())
            .map(|a| (a.name.as_str(), &a.swarm))
            .collect();
        let mut declared_nowhere: BTreeMap<&'a str, Vec<&'a Application>> = BTreeMap::new();
        for app in snapshot.app_set.applications.iter().filter(|a| a.is_live()) {
            live.insert(app.name.as_str(), app);
            if groups.get(&app.swarm).is_none() {
                for release in app.releases.iter().flatten() {
                    declared_nowhere
                        .entry(release.as_str())
                        .or_default()
                        .push(app);
                }
                continue;
            }
            let swarm = groups.canonical(&app.swarm).clone();
            for release in app.releases.iter().flatten() {
                declared
                    .entry((swarm.clone(), release.as_str()))
                    .or_default()
                    .push(app.name.as_str());
            }
        }
        for names in declared.values_mut() {
            names.sort_unstable();
            names.dedup();
        }
        for apps in declared_nowhere.values_mut() {
            apps.sort_unstable_by(|a, b| a.name.cmp(&b.name));
            apps.dedup_by(|a, b| a.name == b.name);
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
pub enum Decision {
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
    application: Option<&str>,
    detail: impl Into<Option<String>>,
) -> Decision {
    Decision::Spare {
        reason,
        application: application.map(str::to_owned),
        detail: detail.into(),
    }
}

/// Decides `release` of `group`.
pub fn decide(
    controller: &ControllerId,
    apps: &AppIndex<'_>,
    groups: &Groups,
    group: &SwarmGroup,
    release: &GroupRelease,
) -> Decision {
    if group.self_stacks.contains(&release.name) {
        return spare(
            SpareReason::OwnStack,
            None,
            Some("the stack the controller itself runs as".to_owned()),
        );
    }

    let application = match ownership(controller, release) {
        Ownership::Unmanaged => return spare(SpareReason::Unmanaged, None, None),
        Ownership::Foreign => {
            let detail = match release.owners.as_slice() {
                [Some(stamp)] => format!("stamped {stamp:?}"),
                _ => "its names in this cluster carry different stamps".to_owned(),
            };
            return spare(SpareReason::ForeignOwner, None, detail);
        }
        Ownership::Malformed { reason } => {
            // Our prefix on a stamp we never write: hand-edited or copied.
            // Nobody's, so it is left like any release without a stamp.
            let detail = match release.owners.as_slice() {
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
        if groups.get(&owner.swarm).is_none() {
            // A typo or a swarm the registry does not list: nothing shows
            // where the application runs, so no copy of it is provably
            // stale (a typo of this very swarm's name would delete it).
            return spare(
                SpareReason::CurrentApplication,
                Some(app),
                format!(
                    "its destination {} is not a swarm of this snapshot",
                    owner.swarm
                ),
            );
        }
        if groups.same(&owner.swarm, &group.swarm) {
            return spare(SpareReason::CurrentApplication, Some(app), None);
        }
        if !owner.has_reconciled() {
            // A moved application that has not yet come up on its new
            // destination still needs its old copy: deleting it now would
            // take the application down between the two.
            return spare(
                SpareReason::CurrentApplication,
                Some(app),
                format!(
                    "its application has not reconciled on its destination {} yet",
                    groups.canonical(&owner.swarm)
                ),
            );
        }
        if let Some(dest) = groups.get(&owner.swarm).filter(|d| d.error.is_some()) {
            // The destination could not be read, so nothing shows that it
            // is a different cluster from this one.
            return spare(
                SpareReason::CurrentApplication,
                Some(app),
                format!("its destination {} could not be read", dest.swarm),
            );
        }
    }

    // A rename hands a release to another application before its stamp is
    // rewritten: a declaration on this swarm spares it whoever stamped it.
    let key = (group.swarm.clone(), release.name.as_str());
    if let Some(declarers) = apps.declared.get(&key) {
        return spare(
            SpareReason::Declared,
            Some(app),
            format!("declared by {}", declarers.join(", ")),
        );
    }
    // A declaration on a destination the snapshot does not list may be
    // meant for this very swarm (a rename plus a typo): it proves nothing
    // undeclared here.
    if let Some(declarers) = apps.declared_nowhere.get(release.name.as_str()) {
        let names: Vec<String> = declarers
            .iter()
            .map(|a| {
                format!(
                    "{} (destination {}, not a swarm of this snapshot)",
                    a.name, a.swarm
                )
            })
            .collect();
        return spare(
            SpareReason::Declared,
            Some(app),
            format!("declared by {}", names.join(", ")),
        );
    }

    if let Some(dest) = apps.draining_to_unknown.get(app) {
        // Its draining hold sits on a swarm no snapshot entry has, so it
        // shields nothing: the swarm it is still syncing on is unknown.
        return spare(
            SpareReason::Held,
            Some(app),
            format!(
                "would be deleted (departed) but its application is still draining from {dest}, which is not a swarm of this snapshot"
            ),
        );
    }

    let reason = match owner {
        Some(_) => DeletionReason::DestinationMoved,
        None => DeletionReason::Departed,
    };
    Decision::Delete {
        application,
        reason,
    }
}

/// Ownership of a release whose names may disagree: only a release every
/// name of the cluster shows as this controller's, for one application, is.
/// The sweep's re-read of a release before each destructive step judges by
/// this same rule, so a release is deleted only on the planner's terms.
pub(crate) fn ownership(controller: &ControllerId, release: &GroupRelease) -> Ownership {
    let mut seen = release
        .owners
        .iter()
        .map(|stamp| controller.classify(stamp.as_deref(), &release.name));
    let Some(first) = seen.next() else {
        return Ownership::Unmanaged;
    };
    let rest: Vec<Ownership> = seen.collect();
    if rest.iter().all(|o| *o == first) {
        first
    } else if release.owners.iter().any(Option::is_none) {
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
