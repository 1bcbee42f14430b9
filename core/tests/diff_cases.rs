//! What a change of the app set changes in the plan, for a table of named
//! changes on one snapshot each, pinned with insta as JSON, text and
//! Markdown. The assertions next to the snapshots pin the rule itself.

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
            // Waiting for an application is not a failure: 0.
            assert_eq!(diff_detailed_status(change, diff), Status::Success);
        },
    },
];

fn planned(swarms: &str, apps: &str) -> SweepPlan {
    let text = format!(r#"{{"app_set": {{"loaded": true, "applications": {apps}}}, {swarms}}}"#);
    let snapshot = Snapshot::from_json(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    plan(&snapshot).unwrap()
}

#[test]
fn diff_cases() {
    let mut names = std::collections::BTreeSet::new();
    for case in CASES {
        assert!(names.insert(case.name), "duplicate case {}", case.name);
        let base = planned(case.swarms, case.base);
        let change = planned(case.swarms, case.change);
        let diff = PlanDiff::between(&base, &change);
        (case.check)(&diff, &change);
        // The same change the other way round is the mirror image.
        let back = PlanDiff::between(&change, &base);
        assert_eq!(released(&back.added), released(&diff.removed));
        assert_eq!(released(&back.removed), released(&diff.added));
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
