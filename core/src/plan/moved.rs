//! Moving a deletion's facts out of a snapshot the planner owns.
//!
//! A deletion carries its stack's objects (what the sweep removes) and
//! its record versions (what a saved plan proves unchanged). Copied from
//! a snapshot of a million releases, they would double the largest part
//! of it while both are held; `plan_json` owns its snapshot and drops it
//! once planned, so it moves them instead. The plan is the same either
//! way: what is moved is shaped exactly as [`super::plan()`] shapes its
//! copy.

use super::swarms::Place;
use super::{Deletion, Observed};
use crate::snapshot::{Snapshot, SnapshotStr};
use crate::usage;

/// The deletion at `deletion` (its position in the plan's list, before
/// sorting) takes its facts from the release at `place`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Move {
    pub(super) deletion: usize,
    pub(super) place: Place,
}

/// Moves each deletion's objects (less what another workload uses) and
/// its fingerprint out of `snapshot`. A place the snapshot does not have
/// leaves the deletion as it is: the planner made every place from this
/// snapshot, so none is missing.
pub(super) fn fill<S: SnapshotStr>(
    deletions: &mut [Deletion],
    moves: Vec<Move>,
    snapshot: &mut Snapshot<S>,
) {
    for Move { deletion, place } in moves {
        let entry = snapshot
            .swarms
            .get_mut(place.swarm as usize)
            .and_then(|s| s.releases.get_mut(place.release as usize));
        let (Some(entry), Some(deletion)) = (entry, deletions.get_mut(deletion)) else {
            continue;
        };
        let records = entry.records.take();
        let objects = entry.objects.take();
        deletion.observed = Observed::of_owned(records, objects.as_ref());
        deletion.objects = objects.map(|o| usage::unshared(o, &deletion.in_use_by).sorted());
    }
}
