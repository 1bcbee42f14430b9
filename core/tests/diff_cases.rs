//! What a change of the app set changes in the plan, for a table of named
//! changes on one snapshot each, pinned with insta as JSON, text and
//! Markdown. The assertions next to the snapshots pin the rule itself.

use sweep_core::plan_diff::Delay;
use sweep_core::verdict::diff_detailed_status;
use sweep_core::{markdown, plan, render, PlanDiff, Snapshot, SpareReason, Status, SweepPlan};

struct Case {
    name: &'static str,
    /// The swarms and policy, without an app set.
    swarms: &'static str,
    base: &'static str,
    change: &'static str,
    check: fn(&PlanDiff, &SweepPlan),
}

fn released(list: &[sweep_core::plan_diff::ChangedDeletion]) -> Vec<String> {
    list.iter()
        .map(|c| c.deletion.release_ref().to_string())
        .collect()
}

const TWO_SWARMS: &str = r#""policy": {"purge_volumes": true},
  "swarms": [
    {"swarm": "alpha", "cluster_id": "A", "node_count": 2,
     "nodes": [{"id": "a1", "hostname": "alpha-1"}, {"id": "a2", "hostname": "alpha-2"}],
     "releases": [
       {"name": "shop", "owner": "cd/default/shop:release/shop",
        "objects": {"services": [{"id": "s1", "name": "shop_web", "version": 4}],
                    "networks": ["shop_default"],
                    "volumes": [{"node": "a1", "volumes": ["shop_data"]}, {"node": "a2", "volumes": ["shop_data", "shop_cache"]}]}},
       {"name": "blog", "owner": "cd/default/blog:release/blog"},
       {"name": "old", "owner": "cd/default/old:release/old"}]},
    {"swarm": "beta", "cluster_id": "B", "node_count": 1,
     "nodes": [{"id": "b1", "hostname": "beta-1"}],
     "releases": [{"name": "shop", "owner": "cd/default/shop-b:release/shop"}]}]"#;

/// `alpha` of [`TWO_SWARMS`], with a deletion window closed at `now` (a
/// Saturday; the window opens on Monday).
const WINDOW_CLOSED: &str = r#""policy": {"purge_volumes": true, "windows": ["allow Mon-Fri 02:00-05:00 UTC"]},
  "now": "2026-12-05T12:00:00Z",
  "swarms": [
    {"swarm": "alpha", "cluster_id": "A", "node_count": 2,
     "nodes": [{"id": "a1", "hostname": "alpha-1"}, {"id": "a2", "hostname": "alpha-2"}],
     "releases": [
       {"name": "shop", "owner": "cd/default/shop:release/shop",
        "objects": {"services": [{"id": "s1", "name": "shop_web", "version": 4}],
                    "networks": ["shop_default"],
                    "volumes": [{"node": "a1", "volumes": ["shop_data"]}, {"node": "a2", "volumes": ["shop_data", "shop_cache"]}]}},
       {"name": "blog", "owner": "cd/default/blog:release/blog"},
       {"name": "old", "owner": "cd/default/old:release/old"}]}]"#;

/// `alpha` of [`TWO_SWARMS`] with a grace period of 10 minutes; `old`
/// has been departed for long enough.
const GRACE_PERIOD: &str = r#""policy": {"min_departed_for": "10m"},
  "now": "2026-12-01T08:00:00Z",
  "swarms": [
    {"swarm": "alpha", "cluster_id": "A",
     "releases": [
       {"name": "shop", "owner": "cd/default/shop:release/shop"},
       {"name": "blog", "owner": "cd/default/blog:release/blog"},
       {"name": "old", "owner": "cd/default/old:release/old", "departed_since": "2026-12-01T07:00:00Z"}]}]"#;

const CASES: &[Case] = &[
    Case {
        name: "removing_an_application_deletes_its_releases_on_every_swarm",
        swarms: TWO_SWARMS,
        base: r#"[{"name": "shop", "swarm": "alpha", "releases": ["shop"]},
                  {"name": "shop-b", "swarm": "beta", "releases": ["shop"]},
                  {"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        change: r#"[{"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        check: |diff, change| {
            // `old` is the backlog: deleted with or without the change.
            assert!(change
                .deletions
                .iter()
                .any(|d| d.release_ref().to_string() == "alpha/old"));
            assert_eq!(released(&diff.added), ["alpha/shop", "beta/shop"]);
            assert_eq!(diff.counts.volumes_added, 3);
            assert!(diff
                .added
                .iter()
                .all(|c| c.spared_as == Some(SpareReason::CurrentApplication)));
            assert_eq!(
                diff_detailed_status(change, diff),
                Status::Deletes,
                "the change deletes"
            );
        },
    },
    Case {
        name: "declaring_a_release_again_takes_it_out_of_the_deletions",
        swarms: TWO_SWARMS,
        base: r#"[{"name": "blog", "swarm": "alpha", "releases": ["blog"]},
                  {"name": "shop-b", "swarm": "beta", "releases": ["shop"]}]"#,
        change: r#"[{"name": "blog", "swarm": "alpha", "releases": ["blog"]},
                    {"name": "shop-b", "swarm": "beta", "releases": ["shop"]},
                    {"name": "legacy", "swarm": "alpha", "releases": ["old"]}]"#,
        check: |diff, change| {
            assert!(diff.added.is_empty());
            assert_eq!(released(&diff.removed), ["alpha/old"]);
            // A rename hands the release over before its stamp changes.
            assert_eq!(diff.removed[0].spared_as, Some(SpareReason::Declared));
            assert_eq!(diff_detailed_status(change, diff), Status::Success);
        },
    },
    Case {
        name: "an_application_not_yet_reconciled_holds_its_swarm",
        swarms: TWO_SWARMS,
        base: r#"[{"name": "shop", "swarm": "alpha", "releases": ["shop"]},
                  {"name": "shop-b", "swarm": "beta", "releases": ["shop"]}]"#,
        change: r#"[{"name": "shop", "swarm": "alpha", "releases": ["shop"]},
                    {"name": "shop-b", "swarm": "beta", "releases": ["shop"]},
                    {"name": "new", "swarm": "alpha"}]"#,
        check: |diff, change| {
            assert_eq!(diff.holds_added.len(), 1);
            assert_eq!(diff.holds_added[0].scope, "alpha");
            assert_eq!(released(&diff.removed), ["alpha/blog", "alpha/old"]);
            assert!(diff
                .removed
                .iter()
                .all(|c| c.spared_as == Some(SpareReason::Held)));
            // Not spared for good: deleted too once `new` has reconciled.
            assert!(diff.removed.iter().all(|c| c
                .spared_until
                .as_ref()
                .is_some_and(|u| u.waits_for[0].reason == Delay::Unreconciled)));
            // Waiting for an application is not a failure: 0.
            assert_eq!(diff_detailed_status(change, diff), Status::Success);
        },
    },
    Case {
        name: "removing_an_application_outside_the_window_deletes_it_when_the_window_opens",
        swarms: WINDOW_CLOSED,
        base: r#"[{"name": "shop", "swarm": "alpha", "releases": ["shop"]},
                  {"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        change: r#"[{"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        check: |diff, change| {
            // Nothing goes at the next sweep: the window is closed.
            assert!(change.deletions.is_empty());
            assert_eq!(released(&diff.added), ["alpha/shop"]);
            let pending = diff.added[0].pending.as_ref().expect("pending");
            assert_eq!(pending.waits_for[0].reason, Delay::OutsideWindow);
            assert_eq!(diff.counts.volumes_added, 3);
            assert_eq!(diff.counts.releases_pending_added, 1);
            // `old` is the backlog, waiting for the window either way.
            assert!(diff.removed.is_empty());
            assert_eq!(
                diff_detailed_status(change, diff),
                Status::Deletes,
                "the change deletes, later"
            );
        },
    },
    Case {
        name: "removing_an_application_in_a_grace_period_deletes_it_when_the_period_ends",
        swarms: GRACE_PERIOD,
        base: r#"[{"name": "shop", "swarm": "alpha", "releases": ["shop"]},
                  {"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        change: r#"[{"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        check: |diff, change| {
            assert_eq!(released(&diff.added), ["alpha/shop"]);
            let pending = diff.added[0].pending.as_ref().expect("pending");
            assert_eq!(pending.waits_for[0].reason, Delay::GracePeriod);
            assert_eq!(pending.waits_for[0].time_left, Some(600));
            assert_eq!(diff_detailed_status(change, diff), Status::Deletes);
        },
    },
    Case {
        name: "declaring_again_what_the_window_delays_takes_it_out_of_the_deletions",
        swarms: WINDOW_CLOSED,
        base: r#"[{"name": "blog", "swarm": "alpha", "releases": ["blog"]}]"#,
        change: r#"[{"name": "blog", "swarm": "alpha", "releases": ["blog"]},
                    {"name": "legacy", "swarm": "alpha", "releases": ["old"]}]"#,
        check: |diff, change| {
            assert!(diff.added.is_empty());
            assert_eq!(released(&diff.removed), ["alpha/old"]);
            assert_eq!(diff.removed[0].spared_as, Some(SpareReason::Declared));
            assert!(diff.removed[0].pending.is_some());
            assert_eq!(diff.counts.releases_pending_removed, 1);
            assert_eq!(diff_detailed_status(change, diff), Status::Success);
        },
    },
];

fn snapshot(swarms: &str, apps: &str) -> Snapshot {
    let text = format!(r#"{{"app_set": {{"loaded": true, "applications": {apps}}}, {swarms}}}"#);
    Snapshot::from_json(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn diff_cases() {
    let mut names = std::collections::BTreeSet::new();
    for case in CASES {
        assert!(names.insert(case.name), "duplicate case {}", case.name);
        let base = snapshot(case.swarms, case.base);
        let change = snapshot(case.swarms, case.change);
        // As `plan --diff-against` compares them: now and later.
        let diff = PlanDiff::of_snapshots(&base, &change).unwrap();
        (case.check)(&diff, &plan(&change).unwrap());
        // The same change the other way round is the mirror image.
        let back = PlanDiff::of_snapshots(&change, &base).unwrap();
        assert_eq!(back.added, diff.removed);
        assert_eq!(back.removed, diff.added);
        assert_eq!(back.holds_added, diff.holds_removed);
        let comment = markdown::diff_markdown(&diff);
        assert!(comment.contains(&format!("**{}**", markdown::diff_headline(&diff))));
        for c in diff.added.iter().chain(&diff.removed) {
            assert!(comment.contains(&markdown::code(&c.deletion.release)));
        }
        insta::assert_snapshot!(
            case.name,
            format!(
                "{}\n--- markdown ---\n{}\n--- json ---\n{}\n",
                render::diff_text(&diff),
                comment,
                diff.to_json_pretty()
            )
        );
    }
}
