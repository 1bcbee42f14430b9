//! Which events a sweep gives: the one place that says when people hear
//! of it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{Counts, Event, EventKind, EventObject, NotifyMemory};
use crate::cut::cut;
use crate::plan::{HoldReason, SpareReason, SweepPlan};
use crate::refs::SwarmName;
use crate::saved::{Change, DroppedChange, Stale};
use crate::sweep::{ErrorEntry, ObjectOutcome, ObjectReport, ReleaseOutcome, SweepReport};
use crate::time::UnixTime;

/// The most objects one event lists; the rest are counted
/// (`objects_omitted`), so a sweep of thousands of objects cannot make a
/// body no receiver takes.
pub const MAX_OBJECTS: usize = 1000;

/// The most characters of a name (a release's, an object's, a node's) an
/// event keeps; nothing bounds the names other users give objects, so a
/// longer one is cut, marked `…`.
pub const MAX_NAME_CHARS: usize = 256;

/// The most characters of an engine's error an event keeps: a proxy's
/// error page carried by every object of a failed step would otherwise
/// make the body as large as the page times the objects.
pub const MAX_ERROR_CHARS: usize = 1024;

/// The most bytes, as JSON, the objects one event lists take; those past
/// it are counted in `objects_omitted`, as those past [`MAX_OBJECTS`] are.
/// With the release names' own bound ([`MAX_RELEASE_BYTES`]) it keeps a
/// body within what receivers take (a body refused for its size is
/// dropped, and the same body every sweep would never arrive).
pub const MAX_OBJECT_BYTES: usize = 256 * 1024;

/// The most bytes, as JSON, of the release names one event lists; the
/// count of them all is in `counts.releases`.
pub const MAX_RELEASE_BYTES: usize = 64 * 1024;

/// What one sweep saw, as far as it got.
#[derive(Debug, Clone, Copy, Default)]
pub struct Facts<'a> {
    /// The plan, once one was made (held or not).
    pub plan: Option<&'a SweepPlan>,
    /// The report, once the plan was carried out.
    pub report: Option<&'a SweepReport>,
    /// The saved plan was refused as stale (`apply --plan`).
    pub stale: Option<&'a Stale>,
}

/// The events worth sending for `facts` at `now`, with the memory of the
/// sweeps before updated. A hold is news once it has lasted `held_after`;
/// an event equal to the last one sent for its cause is not sent again
/// (deletions excepted: each is a new act). What a sweep did not get far
/// enough to see (no plan, no report) leaves its memory as it was.
pub fn decide(
    facts: Facts<'_>,
    memory: &mut NotifyMemory,
    now: UnixTime,
    held_after: Duration,
) -> Vec<Event> {
    let mut candidates = Vec::new();
    let mut evaluated = Vec::new();
    if let Some(plan) = facts.plan {
        candidates.extend(held(plan, memory, now, held_after));
        evaluated.push(EventKind::Held);
    }
    if let Some(report) = facts.report {
        candidates.extend(removals(report));
        candidates.extend(uncovered(report));
        evaluated.extend([
            EventKind::Deleted,
            EventKind::DeletionFailed,
            EventKind::NodesUncovered,
        ]);
    }
    if let Some(stale) = facts.stale {
        candidates.push(stale_plan(stale));
    }
    // A plan made (fresh, or a saved one that held) ends a stale refusal.
    if facts.stale.is_some() || facts.plan.is_some() {
        evaluated.push(EventKind::StalePlan);
    }
    memory.admit(candidates, &evaluated)
}

/// `held`: each hold of `plan` first seen at least `held_after` ago, with
/// the releases it keeps from deletion.
fn held(
    plan: &SweepPlan,
    memory: &mut NotifyMemory,
    now: UnixTime,
    held_after: Duration,
) -> Vec<Event> {
    // A swarm outside its deletion windows waits as the operator asked,
    // for as long as a weekend or a holiday freeze: no news, however long.
    let holds: Vec<_> = plan
        .holds
        .iter()
        .filter(|h| h.reason != HoldReason::OutsideWindow)
        .collect();
    let causes: Vec<String> = holds
        .iter()
        .map(|h| Event::cause(EventKind::Held, h.swarm.as_ref(), Some(h.reason.as_str())))
        .collect();
    memory.see_holds(causes.iter().map(String::as_str), now);
    let mut events = Vec::new();
    for (hold, cause) in holds.into_iter().zip(causes) {
        let Some(since) = memory.held_since(&cause) else {
            continue;
        };
        if Duration::from_secs(now.secs_since(since)) < held_after {
            continue;
        }
        // A hold of the whole sweep keeps every release it spares; a
        // swarm's, those of its swarm.
        let objects = plan
            .spared
            .iter()
            .filter(|s| s.reason == SpareReason::Held)
            .filter(|s| hold.swarm.as_ref().is_none_or(|w| *w == s.swarm))
            .map(|s| EventObject::new(&s.swarm, Some(&s.release), "release", &s.release))
            .collect();
        let mut event = event(EventKind::Held, cause, hold.swarm.clone(), objects);
        event.reason = Some(hold.reason.as_str().to_owned());
        event.since = Some(since);
        events.push(event);
    }
    events
}

/// One object the sweep removed or tried to remove, as the report's
/// per-object outcomes give it.
#[derive(Debug, Clone)]
pub(crate) struct Removal {
    pub(crate) object: EventObject,
    pub(crate) failed: bool,
}

/// `deleted` and `deletion_failed`, one of each per swarm that has any.
/// Objects left because something still uses them are neither.
fn removals(report: &SweepReport) -> Vec<Event> {
    let mut all: Vec<Removal> = report.objects.iter().filter_map(removal).collect();
    all.extend(unlisted_failures(report));
    removal_events(all)
}

/// A release that failed with none of its objects reported failed (the
/// snapshot listed no object of its stack, so the report has none to
/// name; or a live release's dropped objects, none tried since its
/// records changed): the release itself, so a failure is never without
/// word. One only cut short (a stop, its window closing) did not fail:
/// the next sweep takes it up, and nobody is told of it as a failure.
fn unlisted_failures(report: &SweepReport) -> Vec<Removal> {
    let named: BTreeSet<(&SwarmName, &str)> = report
        .objects
        .iter()
        .filter(|o| o.outcome == ObjectOutcome::Failed)
        .map(|o| (&o.swarm, o.release.as_str()))
        .collect();
    let failed = |outcome: ReleaseOutcome, errors: &[ErrorEntry]| {
        let cut_short = !errors.is_empty() && errors.iter().all(|e| e.kind.is_cut_short());
        outcome == ReleaseOutcome::Failed && !cut_short
    };
    let releases = report
        .releases
        .iter()
        .filter(|r| failed(r.outcome, &r.errors))
        .map(|r| (&r.swarm, &r.release, r.outcome, r.errors.first()));
    let dropped = report
        .dropped
        .iter()
        .filter(|d| failed(d.outcome, &d.errors))
        .map(|d| (&d.swarm, &d.release, d.outcome, d.errors.first()));
    releases
        .chain(dropped)
        .filter(|(swarm, release, _, _)| !named.contains(&(*swarm, release.as_str())))
        .map(|(swarm, release, _, error)| {
            let mut object = EventObject::new(swarm, Some(release), "release", release);
            object.outcome = Some(ObjectOutcome::Failed.as_str().to_owned());
            object.error = error.map(|e| e.message.clone());
            Removal {
                object,
                failed: true,
            }
        })
        .collect()
}

/// One object of the report's per-object outcomes, as an event lists it;
/// `None` for what was left in use (not removed, and not a failure).
fn removal(o: &ObjectReport) -> Option<Removal> {
    let failed = match o.outcome {
        ObjectOutcome::Removed | ObjectOutcome::AlreadyGone => false,
        ObjectOutcome::Failed => true,
        ObjectOutcome::InUse => return None,
    };
    let mut object = EventObject::new(&o.swarm, Some(&o.release), o.kind.as_str(), &o.name);
    object.node = o.node.clone();
    object.outcome = Some(o.outcome.as_str().to_owned());
    object.error = o.error.clone();
    Some(Removal { object, failed })
}

pub(crate) fn removal_events(removals: impl IntoIterator<Item = Removal>) -> Vec<Event> {
    let mut by_swarm: BTreeMap<(SwarmName, bool), Vec<EventObject>> = BTreeMap::new();
    for r in removals {
        by_swarm
            .entry((r.object.swarm.clone(), r.failed))
            .or_default()
            .push(r.object);
    }
    by_swarm
        .into_iter()
        .map(|((swarm, failed), objects)| {
            let kind = if failed {
                EventKind::DeletionFailed
            } else {
                EventKind::Deleted
            };
            event(
                kind,
                Event::cause(kind, Some(&swarm), None),
                Some(swarm),
                objects,
            )
        })
        .collect()
}

/// `nodes_uncovered`: per swarm the purge could not fully reach, the
/// releases whose volumes may be left and the nodes they may be left on.
fn uncovered(report: &SweepReport) -> Vec<Event> {
    report
        .uncovered
        .iter()
        .map(|u| {
            let mut objects: Vec<EventObject> = u
                .releases
                .iter()
                .map(|r| EventObject::new(&u.swarm, Some(&r.release), "release", &r.release))
                .collect();
            let nodes = u.unreached.as_deref().unwrap_or_default();
            objects.extend(
                nodes
                    .iter()
                    .map(|n| EventObject::new(&u.swarm, None, "node", n)),
            );
            let kind = EventKind::NodesUncovered;
            let mut e = event(
                kind,
                Event::cause(kind, Some(&u.swarm), None),
                Some(u.swarm.clone()),
                objects,
            );
            // Counted nodes not reached, named or not.
            e.counts.nodes = u
                .missing
                .unwrap_or(nodes.len() as u64)
                .max(nodes.len() as u64);
            e
        })
        .collect()
}

/// `stale_plan`: what the saved plan relied on that changed.
fn stale_plan(stale: &Stale) -> Event {
    let mut objects = Vec::new();
    for change in &stale.changes {
        match change {
            Change::Release { release, .. } => objects.push(EventObject::new(
                &release.swarm,
                Some(&release.release),
                "release",
                &release.release,
            )),
            Change::Dropped {
                release,
                change: DroppedChange::Object { kind, name },
            } => objects.push(EventObject::new(
                &release.swarm,
                Some(&release.release),
                kind.as_str(),
                name,
            )),
            Change::Dropped { release, .. } => objects.push(EventObject::new(
                &release.swarm,
                Some(&release.release),
                "release",
                &release.release,
            )),
            Change::Cluster { swarm, .. } => {
                objects.push(EventObject::new(swarm, None, "swarm", swarm.as_str()))
            }
            // The tool or the policy: nothing of a swarm to name.
            _ => {}
        }
    }
    let kind = EventKind::StalePlan;
    event(kind, Event::cause(kind, None, None), None, objects)
}

/// An event of `kind` about `objects`: sorted, each once, counted, and
/// listed up to [`MAX_OBJECTS`].
fn event(
    kind: EventKind,
    cause: String,
    swarm: Option<SwarmName>,
    mut objects: Vec<EventObject>,
) -> Event {
    objects.sort();
    objects.dedup();
    let releases: BTreeSet<&str> = objects
        .iter()
        .filter_map(|o| o.release.as_deref())
        .collect();
    let counts = Counts {
        releases: releases.len() as u64,
        objects: objects.iter().filter(|o| o.kind != "node").count() as u64,
        volumes: objects.iter().filter(|o| o.kind == "volume").count() as u64,
        nodes: objects.iter().filter(|o| o.kind == "node").count() as u64,
    };
    let releases = within(
        releases.into_iter().map(|r| cut(r, MAX_NAME_CHARS)),
        MAX_RELEASE_BYTES,
    );
    let total = objects.len();
    let objects = within(
        objects.into_iter().map(|mut o| {
            o.release = o.release.map(|r| cut(&r, MAX_NAME_CHARS));
            o.name = cut(&o.name, MAX_NAME_CHARS);
            o.node = o.node.map(|n| cut(&n, MAX_NAME_CHARS));
            o.error = o.error.map(|e| cut(&e, MAX_ERROR_CHARS));
            o
        }),
        MAX_OBJECT_BYTES,
    );
    let omitted = total - objects.len();
    Event {
        event: kind,
        cause,
        swarm,
        reason: None,
        since: None,
        releases,
        objects,
        objects_omitted: omitted as u64,
        counts,
    }
}

/// The first of `items`, at most [`MAX_OBJECTS`] of them, while they take
/// no more than `budget` bytes as JSON.
fn within<T: serde::Serialize>(items: impl Iterator<Item = T>, budget: usize) -> Vec<T> {
    let mut used = 0;
    let mut kept = Vec::new();
    for item in items.take(MAX_OBJECTS) {
        used += serde_json::to_vec(&item).map_or(usize::MAX / 2, |j| j.len() + 1);
        if used > budget {
            break;
        }
        kept.push(item);
    }
    kept
}
