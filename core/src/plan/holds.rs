//! Holds: the conditions under which nothing is deleted, sweep-wide or on
//! one swarm. A hold never turns into a deletion; it only spares.

use std::collections::BTreeMap;

use super::swarms::{Groups, SwarmGroup};
use super::{Hold, HoldReason};
use crate::deletion_window::{gate, Closed, ClosedCause, DeletionWindow, Gate};
use crate::refs::SwarmName;
use crate::snapshot::{AppState, Snapshot, SnapshotStr};

/// Every hold the snapshot itself calls for. The blast-radius hold needs the
/// finished plan and is added by the planner.
pub(crate) fn find_in<S: SnapshotStr>(snapshot: &Snapshot<S>, groups: &Groups<'_>) -> Vec<Hold> {
    let app_set = &snapshot.app_set;
    let mut holds = Vec::new();

    if !app_set.loaded {
        holds.push(Hold::sweep(
            HoldReason::AppSetNotLoaded,
            "the app set was not loaded; every release would look departed",
        ));
    } else if !app_set.applications.iter().any(|a| a.is_live()) {
        // An empty app set and a truncated one look the same.
        holds.push(Hold::sweep(
            HoldReason::EmptyAppSet,
            "the app set declares no applications; an empty set is indistinguishable from a lost one",
        ));
    }

    // Per swarm: applications that have not said what they declare, or that
    // are still syncing their way out, may yet own or declare anything there.
    let mut per_swarm: BTreeMap<(SwarmName, HoldReason), Vec<String>> = BTreeMap::new();
    for app in &app_set.applications {
        let reason = match app.state {
            AppState::Draining => HoldReason::Draining,
            _ if !app.has_reconciled() => HoldReason::Unreconciled,
            _ => continue,
        };
        let destination = S::swarm_str(&app.swarm);
        let swarm = match groups.index_of(destination) {
            Some(i) => groups.at(i).swarm.clone(),
            None => SwarmName::from(destination),
        };
        per_swarm
            .entry((swarm, reason))
            .or_default()
            .push(app.name.as_str().to_owned());
    }
    for ((swarm, reason), mut names) in per_swarm {
        names.sort();
        let message = match reason {
            HoldReason::Draining => "an application that left the set is still syncing",
            _ => "an application has not reconciled yet, so what it declares is unknown",
        };
        holds.push(Hold::swarm(&swarm, reason, names, Some(message.to_owned())));
    }

    // An application whose destination no swarm entry has: a typo, or a
    // swarm the registry does not list. Its hold names the destination so
    // an operator sees it; it holds no swarm (there is none of that name),
    // and the planner spares the application's releases wherever they are.
    let mut unknown: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for app in &app_set.applications {
        let destination = S::swarm_str(&app.swarm);
        if groups.index_of(destination).is_none() {
            unknown
                .entry(destination)
                .or_default()
                .push(app.name.as_str().to_owned());
        }
    }
    for (swarm, mut names) in unknown {
        names.sort();
        let swarm = SwarmName::from(swarm);
        let message = format!(
            "{swarm} is not a swarm of this snapshot (a typo, or a swarm the registry does not list): the releases of the applications sent there are spared on every swarm until it is listed or the destination is corrected"
        );
        holds.push(Hold::swarm(
            &swarm,
            HoldReason::UnknownDestination,
            names,
            Some(message),
        ));
    }

    for group in groups.iter() {
        if let Some(error) = &group.error {
            holds.push(Hold::swarm(
                &group.swarm,
                HoldReason::SwarmUnreadable,
                Vec::new(),
                Some(error.clone()),
            ));
        } else if snapshot.policy.purge_volumes
            && group.nodes.as_ref().is_some_and(|n| n.is_empty())
        {
            // Removing a stack whose volumes nobody can then find would
            // strand its data with no record left to find it by.
            holds.push(Hold::swarm(
                &group.swarm,
                HoldReason::NoReachableNode,
                Vec::new(),
                Some(
                    "volume purge is on and the registry reaches no node of this swarm".to_owned(),
                ),
            ));
        }
        if let Some(hold) = outside_window(snapshot, group) {
            holds.push(hold);
        }
    }
    holds
}

/// The hold of a swarm whose deletion windows (the policy's and each of
/// its names' own) do not let a deletion through at the snapshot's time.
fn outside_window<S: SnapshotStr>(snapshot: &Snapshot<S>, group: &SwarmGroup<'_>) -> Option<Hold> {
    let mut lists: Vec<&[DeletionWindow]> = vec![&snapshot.policy.windows];
    lists.extend(group.windows.iter().copied());
    let Gate::Closed(Closed {
        cause, opens_at, ..
    }) = gate(&lists, snapshot.now)
    else {
        return None;
    };
    let why = match &cause {
        ClosedCause::NoTime => {
            "deletion windows are set and the snapshot has no time (now) to check them at"
                .to_owned()
        }
        ClosedCause::Denied(w) => format!("inside the deletion window \"{w}\""),
        ClosedCause::OutsideAllow(ws) => {
            let names: Vec<String> = ws.iter().map(|w| format!("\"{w}\"")).collect();
            format!("outside every deletion window ({})", names.join(", "))
        }
    };
    let when = match (&cause, opens_at) {
        (ClosedCause::NoTime, _) => String::new(),
        (_, Some(t)) => format!("; the next window opens at {t}"),
        (_, None) => "; no window opens within a year".to_owned(),
    };
    let mut hold = Hold::swarm(
        &group.swarm,
        HoldReason::OutsideWindow,
        Vec::new(),
        Some(format!("{why}{when}")),
    );
    hold.opens_at = opens_at;
    Some(hold)
}

/// Which hold stops deletions on each swarm, indexed once so that a plan
/// of many swarms and holds is not a scan of every hold per swarm.
#[derive(Debug, Clone, Default)]
pub(crate) struct HoldIndex<'a> {
    sweep: Option<HoldReason>,
    swarms: BTreeMap<&'a SwarmName, HoldReason>,
}

impl<'a> HoldIndex<'a> {
    pub(crate) fn new(holds: &'a [Hold]) -> Self {
        let mut index = HoldIndex::default();
        for h in holds {
            match &h.swarm {
                None => {
                    index.sweep.get_or_insert(h.reason);
                }
                Some(swarm) => {
                    index.swarms.entry(swarm).or_insert(h.reason);
                }
            }
        }
        index
    }

    /// The first hold that stops deletions on `swarm`, sweep-wide ones
    /// first.
    pub(crate) fn get(&self, swarm: &SwarmName) -> Option<HoldReason> {
        self.sweep.or_else(|| self.swarms.get(swarm).copied())
    }
}
