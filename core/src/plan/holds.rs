//! Holds: the conditions under which nothing is deleted, sweep-wide or on
//! one swarm. A hold never turns into a deletion; it only spares.

use std::collections::BTreeMap;

use super::swarms::{Groups, SwarmGroup};
use super::{Hold, HoldReason};
use crate::deletion_window::{closes_at, gate, Closed, ClosedCause, DeletionWindow, Gate};
use crate::refs::SwarmName;
use crate::snapshot::{AppState, Snapshot, SnapshotStr};
use crate::time::UnixTime;

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
    window_hold(&group.swarm, &lists, snapshot.now)
}

/// The `outside_window` hold of `swarm` whose window lists `lists` do not
/// let a deletion through at `now`: the one judgement of a swarm's
/// windows, when planning and when a sweep starts ([`PlanWindows`]).
fn window_hold(
    swarm: &SwarmName,
    lists: &[&[DeletionWindow]],
    now: Option<UnixTime>,
) -> Option<Hold> {
    let Gate::Closed(Closed {
        cause, opens_at, ..
    }) = gate(lists, now)
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
        swarm,
        HoldReason::OutsideWindow,
        Vec::new(),
        Some(format!("{why}{when}")),
    );
    hold.opens_at = opens_at;
    Some(hold)
}

/// The deletion windows of every swarm a plan deletes on, kept to be
/// checked again when its sweep starts: an approval can come long after
/// the plan (a prompt left waiting over lunch), and a window that closed
/// since must stop the sweep before anything is deleted.
#[derive(Debug, Clone, Default)]
pub struct PlanWindows {
    /// Per swarm the plan deletes on: the policy's windows and those of
    /// each of its cluster's names that has some.
    swarms: Vec<(SwarmName, Vec<Vec<DeletionWindow>>)>,
}

impl PlanWindows {
    /// The windows `plan`, made from `snapshot`, is to be swept under.
    pub fn of<S: SnapshotStr>(snapshot: &Snapshot<S>, plan: &super::SweepPlan) -> Self {
        let deletes_on = |swarm: &SwarmName| {
            plan.deletions.iter().any(|d| &d.swarm == swarm)
                || plan.dropped.iter().any(|d| &d.swarm == swarm)
        };
        let swarms = plan
            .swarms
            .iter()
            .filter(|s| deletes_on(&s.swarm))
            .map(|s| {
                let mut lists = vec![snapshot.policy.windows.clone()];
                lists.extend(
                    snapshot
                        .swarms
                        .iter()
                        .filter(|own| {
                            s.names
                                .iter()
                                .any(|n| n.as_str() == S::swarm_str(&own.swarm))
                        })
                        .map(|own| own.windows.clone())
                        .filter(|w| !w.is_empty()),
                );
                (s.swarm.clone(), lists)
            })
            .filter(|(_, lists)| lists.iter().any(|l| !l.is_empty()))
            .collect();
        PlanWindows { swarms }
    }

    /// The `outside_window` holds of the swarms whose windows do not let a
    /// deletion through at `now`; none when every one does.
    pub fn closed_at(&self, now: UnixTime) -> Vec<Hold> {
        self.swarms
            .iter()
            .filter_map(|(swarm, lists)| {
                let lists: Vec<&[DeletionWindow]> = lists.iter().map(Vec::as_slice).collect();
                window_hold(swarm, &lists, Some(now))
            })
            .collect()
    }
}

impl PlanWindows {
    /// When each swarm whose windows let a deletion through at `now`
    /// stops letting one through, for the swarms where that comes within
    /// about a year: from then on the sweep starts no removal there.
    pub fn closing(&self, now: UnixTime) -> Vec<(SwarmName, UnixTime)> {
        self.swarms
            .iter()
            .filter_map(|(swarm, lists)| {
                let lists: Vec<&[DeletionWindow]> = lists.iter().map(Vec::as_slice).collect();
                closes_at(&lists, now).map(|t| (swarm.clone(), t))
            })
            .collect()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::plan;

    fn at(t: &str) -> UnixTime {
        UnixTime::parse_rfc3339(t).unwrap()
    }

    /// Planned inside the policy's window on a Thursday; checked again at
    /// later times, the swarm it deletes on is held once its own deny
    /// window or the end of the policy's allow window comes, and a swarm it
    /// deletes nothing on is never named.
    #[test]
    fn a_window_that_closed_since_the_plan_holds_the_swarm_it_deletes_on() {
        let snapshot = Snapshot::from_json(
            r#"{"policy":{"windows":["allow Thu 02:00-05:00 UTC"]},"now":"2026-12-03T03:00:00Z",
            "app_set":{"loaded":true,"applications":[{"name":"keep","swarm":"b","releases":[]}]},
            "swarms":[{"swarm":"a","windows":["deny Thu 04:00-04:30 UTC"],
                       "releases":[{"name":"old","owner":"cd/default/gone:release/old"}]},
                      {"swarm":"b","windows":["allow Mon 01:00-02:00 UTC"]}]}"#,
        )
        .unwrap();
        let plan = plan(&snapshot).unwrap();
        assert_eq!(plan.deletions.len(), 1);
        let windows = PlanWindows::of(&snapshot, &plan);
        assert!(windows.closed_at(at("2026-12-03T03:59:59Z")).is_empty());
        // Each hold says when the windows next let a deletion through.
        for (t, opens) in [
            ("2026-12-03T04:10:00Z", "2026-12-03T04:30:00Z"),
            ("2026-12-03T05:00:00Z", "2026-12-10T02:00:00Z"),
        ] {
            let holds = windows.closed_at(at(t));
            assert_eq!(holds.len(), 1, "{t}: {holds:?}");
            assert_eq!(holds[0].reason, HoldReason::OutsideWindow);
            assert_eq!(holds[0].swarm.as_ref().map(SwarmName::as_str), Some("a"));
            assert_eq!(holds[0].opens_at, Some(at(opens)), "{t}");
        }
    }
}
