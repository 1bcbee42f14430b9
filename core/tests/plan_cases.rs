//! The plan for a table of named scenarios, rendered for people and as the
//! JSON contract, pinned with insta. Each case states in its name what it
//! shows; the assertions next to the snapshots pin the rule itself, so a
//! snapshot accepted by mistake still fails.

use sweep_core::{plan, render, Snapshot, SpareReason, SweepPlan};

struct Case {
    name: &'static str,
    snapshot: &'static str,
    check: fn(&SweepPlan),
}

fn deleted(p: &SweepPlan) -> Vec<String> {
    p.deletions
        .iter()
        .map(|d| d.release_ref().to_string())
        .collect()
}

fn spared(p: &SweepPlan, reason: SpareReason) -> Vec<String> {
    p.spared
        .iter()
        .filter(|s| s.reason == reason)
        .map(|s| format!("{}/{}", s.swarm, s.release))
        .collect()
}

fn holds(p: &SweepPlan) -> Vec<String> {
    p.holds
        .iter()
        .map(|h| {
            format!(
                "{}:{}",
                h.scope,
                serde_json::to_value(h.reason).unwrap().as_str().unwrap()
            )
        })
        .collect()
}

const CASES: &[Case] = &[
    Case {
        name: "departed_release_is_deleted_others_spared",
        snapshot: r#"{
          "policy": {"controller": "default", "purge_volumes": true},
          "app_set": {"loaded": true, "applications": [
            {"name": "edge", "swarm": "", "releases": ["edge", "edge-db"], "state": "reconciled"}]},
          "swarms": [{"swarm": "", "cluster_id": "c1",
            "releases": [
              {"name": "edge", "owner": "cd/default/edge:release/edge"},
              {"name": "shop", "owner": "cd/default/shop:release/shop"},
              {"name": "manual"}],
            "nodes": [{"id": "n1", "hostname": "mgr-1"}], "node_count": 1}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["(local)/shop"]);
            assert_eq!(spared(p, SpareReason::CurrentApplication), ["(local)/edge"]);
            assert_eq!(spared(p, SpareReason::Unmanaged), ["(local)/manual"]);
            assert!(p.uncovered.is_empty());
        },
    },
    Case {
        name: "name_collision_across_swarms_deletes_only_where_undeclared",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [
            {"name": "shop-a", "swarm": "alpha", "releases": ["web"]},
            {"name": "other", "swarm": "beta", "releases": ["api"]}]},
          "swarms": [
            {"swarm": "alpha", "cluster_id": "A", "releases": [{"name": "web", "owner": "cd/default/shop-a:release/web"}]},
            {"swarm": "beta", "cluster_id": "B", "releases": [{"name": "web", "owner": "cd/default/shop-b:release/web"}]},
            {"swarm": "gamma", "cluster_id": "G", "releases": [{"name": "web", "owner": "cd/default/shop-a:release/web"}]}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["beta/web", "gamma/web"]);
            assert_eq!(spared(p, SpareReason::CurrentApplication), ["alpha/web"]);
        },
    },
    Case {
        name: "rename_hands_release_over_before_stamp_is_rewritten",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [
            {"name": "shop-v2", "swarm": "", "releases": ["web"]}]},
          "swarms": [{"swarm": "", "releases": [{"name": "web", "owner": "cd/default/shop:release/web"}]}]
        }"#,
        check: |p| {
            assert!(p.deletions.is_empty());
            assert_eq!(spared(p, SpareReason::Declared), ["(local)/web"]);
        },
    },
    Case {
        name: "destination_moved_deletes_from_the_old_swarm_only",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [
            {"name": "shop", "swarm": "beta", "releases": ["web"]}]},
          "swarms": [
            {"swarm": "alpha", "cluster_id": "A", "releases": [{"name": "web", "owner": "cd/default/shop:release/web"}]},
            {"swarm": "beta", "cluster_id": "B", "releases": [{"name": "web", "owner": "cd/default/shop:release/web"}]}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["alpha/web"]);
            assert_eq!(spared(p, SpareReason::CurrentApplication), ["beta/web"]);
        },
    },
    Case {
        name: "same_cluster_under_two_names_is_one_swarm",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [
            {"name": "shop", "swarm": "prod-east", "releases": ["web"]},
            {"name": "blog", "swarm": "prod", "releases": ["blog"]}]},
          "swarms": [
            {"swarm": "prod", "cluster_id": "C", "releases": [
              {"name": "web", "owner": "cd/default/shop:release/web"},
              {"name": "blog", "owner": "cd/default/old-blog:release/blog"},
              {"name": "gone", "owner": "cd/default/gone:release/gone"}]},
            {"swarm": "prod-east", "cluster_id": "C", "releases": [
              {"name": "web", "owner": "cd/default/shop:release/web"},
              {"name": "blog", "owner": "cd/default/old-blog:release/blog"},
              {"name": "gone", "owner": "cd/default/gone:release/gone"}]}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["prod/gone"], "planned once, under one name");
            assert_eq!(spared(p, SpareReason::CurrentApplication), ["prod/web"]);
            assert_eq!(spared(p, SpareReason::Declared), ["prod/blog"]);
        },
    },
    Case {
        name: "empty_app_set_holds_the_whole_sweep",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": []},
          "swarms": [{"swarm": "", "releases": [{"name": "web", "owner": "cd/default/shop:release/web"}]}]
        }"#,
        check: |p| {
            assert!(p.deletions.is_empty());
            assert_eq!(holds(p), ["sweep:empty_app_set"]);
            assert_eq!(spared(p, SpareReason::Held), ["(local)/web"]);
        },
    },
    Case {
        name: "app_set_not_loaded_holds_the_whole_sweep",
        snapshot: r#"{
          "app_set": {"loaded": false, "applications": [{"name": "x", "releases": []}]},
          "swarms": [{"swarm": "", "releases": [{"name": "web", "owner": "cd/default/shop:release/web"}]}]
        }"#,
        check: |p| {
            assert!(p.deletions.is_empty());
            assert_eq!(holds(p), ["sweep:app_set_not_loaded"]);
        },
    },
    Case {
        name: "unreconciled_application_holds_only_its_swarm",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [
            {"name": "new", "swarm": "alpha", "state": "unreconciled"},
            {"name": "fresh", "swarm": "alpha"},
            {"name": "keep", "swarm": "beta", "releases": []}]},
          "swarms": [
            {"swarm": "alpha", "releases": [{"name": "old", "owner": "cd/default/old:release/old"}]},
            {"swarm": "beta", "releases": [{"name": "old", "owner": "cd/default/old:release/old"}]}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["beta/old"]);
            assert_eq!(holds(p), ["alpha:unreconciled"]);
            assert_eq!(p.holds[0].applications, ["fresh", "new"]);
            assert_eq!(spared(p, SpareReason::Held), ["alpha/old"]);
        },
    },
    Case {
        name: "draining_application_holds_its_swarm",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [
            {"name": "leaving", "swarm": "alpha", "releases": ["l"], "state": "draining"},
            {"name": "keep", "swarm": "beta", "releases": []}]},
          "swarms": [
            {"swarm": "alpha", "releases": [{"name": "l", "owner": "cd/default/leaving:release/l"}]},
            {"swarm": "beta", "releases": [{"name": "l", "owner": "cd/default/leaving:release/l"}]}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["beta/l"]);
            assert_eq!(holds(p), ["alpha:draining"]);
        },
    },
    Case {
        name: "unreadable_swarm_is_untouched_and_reported",
        snapshot: r#"{
          "policy": {"purge_volumes": true},
          "app_set": {"loaded": true, "applications": [{"name": "keep", "swarm": "beta", "releases": []}]},
          "swarms": [
            {"swarm": "alpha", "error": "manager unix:///run/a.sock: connection refused"},
            {"swarm": "beta", "releases": [{"name": "old", "owner": "cd/default/old:release/old"}],
             "nodes": [{"id": "b1", "hostname": "beta-1"}], "node_count": 1}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["beta/old"]);
            assert_eq!(holds(p), ["alpha:swarm_unreadable"]);
            assert!(
                p.uncovered.is_empty(),
                "an unreadable swarm is reported by its hold"
            );
        },
    },
    Case {
        name: "purge_with_no_reachable_node_holds_that_swarm",
        snapshot: r#"{
          "policy": {"purge_volumes": true},
          "app_set": {"loaded": true, "applications": [{"name": "keep", "swarm": "beta", "releases": []}]},
          "swarms": [
            {"swarm": "alpha", "releases": [{"name": "old", "owner": "cd/default/old:release/old"}], "nodes": [], "node_count": 2},
            {"swarm": "beta", "releases": [{"name": "old", "owner": "cd/default/old:release/old"}], "nodes": [{"id": "b1"}], "node_count": 1}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["beta/old"]);
            assert_eq!(holds(p), ["alpha:no_reachable_node"]);
            assert_eq!(p.uncovered.len(), 1);
            assert_eq!(p.uncovered[0].missing, Some(2));
        },
    },
    Case {
        name: "blast_radius_holds_the_whole_sweep",
        snapshot: r#"{
          "policy": {"max_deletions": 1},
          "app_set": {"loaded": true, "applications": [{"name": "keep", "releases": []}]},
          "swarms": [{"swarm": "", "releases": [
            {"name": "a", "owner": "cd/default/x:release/a"},
            {"name": "b", "owner": "cd/default/x:release/b"}]}]
        }"#,
        check: |p| {
            assert!(p.deletions.is_empty());
            assert_eq!(holds(p), ["sweep:blast_radius"]);
            assert_eq!(spared(p, SpareReason::Held), ["(local)/a", "(local)/b"]);
        },
    },
    Case {
        name: "stamps_not_ours_are_never_deleted",
        snapshot: r#"{
          "policy": {"controller": "blue"},
          "app_set": {"loaded": true, "applications": [{"name": "keep", "releases": []}]},
          "swarms": [{"swarm": "", "releases": [
            {"name": "green-app", "owner": "cd/green/shop:release/green-app"},
            {"name": "old-form", "owner": "cd/shop:release/old-form"},
            {"name": "applied", "owner": "apply/shop:release/applied"},
            {"name": "copied", "owner": "cd/blue/shop:release/original"},
            {"name": "garbage", "owner": "not a stamp"},
            {"name": "nested", "owner": "cd/blue/a/b:release/nested"},
            {"name": "bluer", "owner": "cd/bluer/shop:release/bluer"},
            {"name": "empty", "owner": ""},
            {"name": "none"},
            {"name": "mine", "owner": "cd/blue/shop:release/mine"}]}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["(local)/mine"]);
            assert_eq!(
                spared(p, SpareReason::Unmanaged),
                ["(local)/empty", "(local)/none"]
            );
            assert_eq!(spared(p, SpareReason::ForeignOwner).len(), 7);
        },
    },
    Case {
        name: "own_stack_is_spared_even_when_stamped_for_a_departed_app",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [{"name": "keep", "releases": []}]},
          "swarms": [{"swarm": "", "self_stack": "swarm-sweep", "releases": [
            {"name": "swarm-sweep", "owner": "cd/default/ops:release/swarm-sweep"}]}]
        }"#,
        check: |p| {
            assert!(p.deletions.is_empty());
            assert_eq!(spared(p, SpareReason::OwnStack), ["(local)/swarm-sweep"]);
        },
    },
    Case {
        name: "node_down_makes_coverage_partial_and_names_the_gap",
        snapshot: r#"{
          "policy": {"purge_volumes": true},
          "app_set": {"loaded": true, "applications": [{"name": "keep", "swarm": "alpha", "releases": []}]},
          "swarms": [{"swarm": "alpha", "cluster_id": "A",
            "releases": [{"name": "old", "owner": "cd/default/old:release/old"}],
            "nodes": [{"id": "n1", "hostname": "alpha-1"}, {"id": "n2", "hostname": "alpha-2"}], "node_count": 3,
            "members": [{"id": "n1", "hostname": "alpha-1"}, {"id": "n2", "hostname": "alpha-2"}, {"id": "n3", "hostname": "alpha-3"}]}]
        }"#,
        check: |p| {
            assert_eq!(deleted(p), ["alpha/old"]);
            assert_eq!(p.deletions[0].volumes.as_str(), "partial");
            assert_eq!(p.uncovered[0].reached, ["alpha-1", "alpha-2"]);
            assert_eq!(p.uncovered[0].missing, Some(1));
            assert_eq!(
                p.uncovered[0].unreached.as_deref(),
                Some(&["alpha-3".to_owned()][..])
            );
        },
    },
    Case {
        name: "matching_count_is_not_complete_when_a_listed_node_was_not_reached",
        snapshot: r#"{
          "policy": {"purge_volumes": true},
          "app_set": {"loaded": true, "applications": [{"name": "keep", "swarm": "alpha", "releases": []}]},
          "swarms": [{"swarm": "alpha", "cluster_id": "A",
            "releases": [{"name": "old", "owner": "cd/default/old:release/old"}],
            "nodes": [{"id": "n1", "hostname": "alpha-1"}, {"id": "stale", "hostname": "alpha-9"}], "node_count": 2,
            "members": [{"id": "n1", "hostname": "alpha-1"}, {"id": "n2", "hostname": "alpha-2"}]}]
        }"#,
        check: |p| {
            assert_eq!(p.deletions[0].volumes.as_str(), "partial");
            assert_eq!(
                p.uncovered[0].unreached.as_deref(),
                Some(&["alpha-2".to_owned()][..])
            );
        },
    },
    Case {
        name: "registry_without_node_reach_is_node_local",
        snapshot: r#"{
          "policy": {"purge_volumes": true},
          "app_set": {"loaded": true, "applications": [{"name": "keep", "swarm": "single", "releases": []}]},
          "swarms": [
            {"swarm": "multi", "releases": [{"name": "old", "owner": "cd/default/old:release/old"}], "nodes": null, "node_count": 3},
            {"swarm": "single", "releases": [{"name": "old", "owner": "cd/default/old:release/old"}], "nodes": null, "node_count": 1}]
        }"#,
        check: |p| {
            let cov: Vec<_> = p.deletions.iter().map(|d| d.volumes.as_str()).collect();
            assert_eq!(cov, ["node_local", "complete"]);
            assert_eq!(p.uncovered.len(), 1);
            assert_eq!(p.uncovered[0].missing, Some(2));
        },
    },
    Case {
        name: "unreadable_node_count_is_never_complete",
        snapshot: r#"{
          "policy": {"purge_volumes": true},
          "app_set": {"loaded": true, "applications": [{"name": "keep", "releases": []}]},
          "swarms": [{"swarm": "", "releases": [{"name": "old", "owner": "cd/default/old:release/old"}],
            "nodes": [{"id": "n1"}], "node_count": null}]
        }"#,
        check: |p| {
            assert_eq!(p.deletions[0].volumes.as_str(), "partial");
            assert_eq!(p.uncovered[0].node_count, None);
            assert_eq!(p.uncovered[0].missing, None);
            assert_eq!(p.uncovered[0].reached, ["n1"]);
        },
    },
    Case {
        name: "moved_application_not_yet_reconciled_keeps_its_old_copy",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [
            {"name": "shop", "swarm": "beta", "state": "unreconciled"},
            {"name": "keep", "swarm": "alpha", "releases": []}]},
          "swarms": [
            {"swarm": "alpha", "cluster_id": "A", "releases": [{"name": "web", "owner": "cd/default/shop:release/web"}]},
            {"swarm": "beta", "cluster_id": "B"}]
        }"#,
        check: |p| {
            assert!(p.deletions.is_empty());
            assert_eq!(holds(p), ["beta:unreconciled"]);
            assert_eq!(spared(p, SpareReason::CurrentApplication), ["alpha/web"]);
        },
    },
    Case {
        name: "unreadable_destination_spares_the_old_copy",
        snapshot: r#"{
          "app_set": {"loaded": true, "applications": [{"name": "shop", "swarm": "beta", "releases": ["web"]}]},
          "swarms": [
            {"swarm": "alpha", "releases": [{"name": "web", "owner": "cd/default/shop:release/web"}]},
            {"swarm": "beta", "error": "timed out"}]
        }"#,
        check: |p| {
            assert!(p.deletions.is_empty());
            assert_eq!(spared(p, SpareReason::CurrentApplication), ["alpha/web"]);
        },
    },
];

#[test]
fn plan_cases() {
    let mut names = std::collections::BTreeSet::new();
    for case in CASES {
        assert!(names.insert(case.name), "duplicate case {}", case.name);
        let snapshot = Snapshot::from_json(case.snapshot)
            .unwrap_or_else(|e| panic!("{}: fixture does not parse: {e}", case.name));
        let p = plan(&snapshot).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        (case.check)(&p);
        insta::assert_snapshot!(
            case.name,
            format!(
                "{}\n--- json ---\n{}\n",
                render::plan_text(&p),
                p.to_json_pretty()
            )
        );
    }
}
