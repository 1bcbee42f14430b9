//! The grace state carried from one run to the next: filled into a
//! snapshot before it is planned, and rebuilt from the plan, or from the
//! plan and the report of the sweep that carried it out.
//!
//! Apart from [`crate::grace`] because it reads the plan and the sweep's
//! report, while the plan reads the grace facts: the state's own types stay
//! upstream of both, and only this module joins them.

use std::collections::BTreeMap;

use crate::grace::GraceState;
use crate::plan::SweepPlan;
use crate::refs::SwarmName;
use crate::snapshot::Snapshot;
use crate::sweep::{ReleaseOutcome, SweepReport};
use crate::time::UnixTime;

impl GraceState {
    /// Sets `departed_since` of every release of `snapshot` from the state
    /// (and clears it where the state has no entry). The state names each
    /// swarm as the plan does, by the smallest name of its cluster, so
    /// every name of a cluster gets that cluster's entry.
    pub fn apply_to(&self, snapshot: &mut Snapshot) {
        let canonical: Vec<SwarmName> = {
            let groups = crate::plan::swarms::group(snapshot);
            snapshot
                .swarms
                .iter()
                .map(|s| groups.canonical(&s.swarm).clone())
                .collect()
        };
        for (swarm, name) in snapshot.swarms.iter_mut().zip(&canonical) {
            for release in &mut swarm.releases {
                release.departed_since = self.since(name, &release.name);
            }
        }
    }

    /// The state after a plan that deleted nothing, made at `now` (the
    /// snapshot's): the plan's departed releases. Releases it does not
    /// list (declared again, gone, no longer deletable) lose their entry.
    pub fn after_plan(plan: &SweepPlan, now: UnixTime) -> Self {
        GraceState::new(plan.departed.clone(), now)
    }

    /// The state after carrying `plan` out: its departed releases, less
    /// those `report` says were deleted. A release whose deletion failed
    /// or is pending keeps its entry, so the next sweep retries it without
    /// a new wait. `now` is the snapshot's, as for
    /// [`GraceState::after_plan`].
    pub fn after_sweep(plan: &SweepPlan, report: &SweepReport, now: UnixTime) -> Self {
        let deleted: BTreeMap<(&SwarmName, &str), ()> = report
            .releases
            .iter()
            .filter(|r| r.outcome == ReleaseOutcome::Deleted)
            .map(|r| ((&r.swarm, r.release.as_str()), ()))
            .collect();
        GraceState::new(
            plan.departed
                .iter()
                .filter(|d| !deleted.contains_key(&(&d.swarm, d.release.as_str())))
                .cloned()
                .collect(),
            now,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::grace::{Departed, GraceState};
    use crate::snapshot::Snapshot;
    use crate::sweep::SweepReport;
    use crate::time::UnixTime;

    fn snapshot(text: &str) -> Snapshot {
        Snapshot::from_json(text).unwrap()
    }

    #[test]
    fn the_state_fills_every_name_of_a_cluster_and_clears_the_rest() {
        let mut s = snapshot(
            r#"{"app_set":{"loaded":true},"swarms":[
              {"swarm":"b","cluster_id":"C","releases":[{"name":"web"},{"name":"db","departed_since":"2026-12-01T01:00:00Z"}]},
              {"swarm":"a","cluster_id":"C","releases":[{"name":"web"}]},
              {"swarm":"z","releases":[{"name":"web"}]}]}"#,
        );
        let t = UnixTime::parse_rfc3339("2026-12-01T07:00:00Z").unwrap();
        let state = GraceState::new(vec![Departed::new("a", "web", t)], t);
        state.apply_to(&mut s);
        let since: Vec<Option<UnixTime>> = s
            .swarms
            .iter()
            .flat_map(|sw| sw.releases.iter().map(|r| r.departed_since))
            .collect();
        // b/web is a/web (one cluster); b/db has no entry; z is another swarm.
        assert_eq!(since, [Some(t), None, Some(t), None]);
    }

    #[test]
    fn after_a_sweep_only_deleted_releases_lose_their_entry() {
        let s = snapshot(
            r#"{"policy":{"min_departed_for":"1m"},"now":"2026-12-01T08:00:00Z","app_set":{"loaded":true,"applications":[{"name":"keep","swarm":"a","releases":[]}]},"swarms":[
              {"swarm":"a","releases":[
                {"name":"failed","owner":"cd/default/gone:release/failed","departed_since":"2026-12-01T07:00:00Z"},
                {"name":"gone","owner":"cd/default/gone:release/gone","departed_since":"2026-12-01T07:00:00Z"},
                {"name":"new","owner":"cd/default/gone:release/new"}]}]}"#,
        );
        let p = crate::plan(&s).unwrap();
        assert_eq!(p.deletions.len(), 2);
        assert_eq!(p.departed.len(), 3);
        let report: SweepReport = serde_json::from_value(serde_json::json!({
            "controller": "default", "held": false, "purge_volumes": false,
            "releases": [
                {"swarm": "a", "release": "failed", "application": "gone", "outcome": "failed",
                 "coverage": "off", "volumes_deleted": {}, "errors": [], "remedy": null},
                {"swarm": "a", "release": "gone", "application": "gone", "outcome": "deleted",
                 "coverage": "off", "volumes_deleted": {}, "errors": [], "remedy": null}],
            "uncovered": [],
            "totals": {"planned": 2, "deleted": 1, "failed": 1, "left_own_stack": 0,
                       "pending_coverage": 0, "volumes_deleted": 0, "uncovered_swarms": 0}
        }))
        .unwrap();
        let now = s.now.unwrap();
        let next = GraceState::after_sweep(&p, &report, now);
        let names: Vec<&str> = next.departed.iter().map(|d| d.release.as_str()).collect();
        assert_eq!(names, ["failed", "new"]);
        assert_eq!(next.departed[1].since.to_string(), "2026-12-01T08:00:00Z");
        assert_eq!(next.written_at, now);
        let after = GraceState::after_plan(&p, now);
        assert_eq!((after.departed, after.written_at), (p.departed, now));
    }
}
