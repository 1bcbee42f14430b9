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
    /// (cluster, release) to the applications declaring it there, sorted.
    declared: BTreeMap<(SwarmName, &'a str), Vec<&'a str>>,
}

impl<'a> AppIndex<'a> {
    pub fn new(snapshot: &'a Snapshot, groups: &Groups) -> Self {
        let mut live = BTreeMap::new();
        let mut declared: BTreeMap<(SwarmName, &'a str), Vec<&'a str>> = BTreeMap::new();
        for app in snapshot.app_set.applications.iter().filter(|a| a.is_live()) {
            live.insert(app.name.as_str(), app);
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
        AppIndex { live, declared }
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
        Ownership::Ours { application } => application,
    };
    let app = application.as_str();

    let owner = apps.live.get(app).copied();

    if let Some(owner) = owner {
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
fn ownership(controller: &ControllerId, release: &GroupRelease) -> Ownership {
    let mut seen = release
        .owners
        .iter()
        .map(|stamp| controller.classify(stamp.as_deref(), &release.name));
    let Some(first) = seen.next() else {
        return Ownership::Unmanaged;
    };
    if seen.all(|o| o == first) {
        first
    } else if release.owners.iter().any(Option::is_none) {
        Ownership::Unmanaged
    } else {
        Ownership::Foreign
    }
}
