//! Saved plans as hostile input: a field nobody wrote a rule for is refused
//! at every depth, and an edited plan cannot take a deletion out of the
//! cluster check.

mod shapes;

use serde_json::Value;
use sweep_core::saved::{check, Change, SavedPlan};
use sweep_core::{plan, Snapshot, SnapshotError};

const TOOL: &str = "1.0.0";

/// Every kind of struct a saved plan holds appears at least once: a hold
/// (`beta` unreadable), a deletion with its objects, fingerprint and an
/// object another stack uses, spared releases, an uncovered swarm with its
/// node list, a departed entry. (The resource rule's dropped objects and
/// holds are in `resource_cases`.)
const SNAPSHOT: &str = r#"{
  "policy": {"controller": "default", "purge_volumes": true, "min_departed_for": "1s"},
  "now": "2026-12-01T08:00:00Z",
  "app_set": {"loaded": true, "applications": [
    {"name": "web", "swarm": "alpha", "releases": ["web"]}
  ]},
  "swarms": [
    {"swarm": "alpha", "cluster_id": "c1", "node_count": 3,
     "nodes": [{"id": "n1", "hostname": "alpha-1"}],
     "releases": [
      {"name": "old", "owner": "cd/default/old:release/old",
       "departed_since": "2026-12-01T07:00:00Z",
       "records": [{"id": "rec-old", "version": 1}],
       "objects": {"services": [{"id": "svc-old", "name": "old_app", "version": 3}],
                   "networks": ["old_default"], "secrets": ["old_s"], "configs": ["old_c"],
                   "volumes": [{"node": "n1", "volumes": ["old_data"]}]}},
      {"name": "web", "owner": "cd/default/web:release/web"}
     ],
     "usage": {"services": [{"id": "svc-web", "name": "web_app", "stack": "web", "configs": ["old_c"]}]}},
    {"swarm": "beta", "error": "cannot connect"}
  ]
}"#;

fn snapshot() -> Snapshot {
    Snapshot::from_json(SNAPSHOT).unwrap()
}

fn saved() -> SavedPlan {
    let snapshot = snapshot();
    SavedPlan::new(&snapshot, plan(&snapshot).unwrap(), TOOL)
}

/// The JSON path (`plan.deletions[0].objects`) of every object in `value`.
fn objects(value: &Value, path: String, out: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            out.push(path.clone());
            for (key, member) in members {
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                objects(member, inner, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                objects(item, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The object at `path` in `value`.
fn at<'v>(value: &'v mut Value, path: &str) -> &'v mut serde_json::Map<String, Value> {
    let mut here = value;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, indices) = part.split_once('[').unwrap_or((part, ""));
        here = &mut here[key];
        for index in indices.split('[').filter(|i| !i.is_empty()) {
            here = &mut here[index.trim_end_matches(']').parse::<usize>().unwrap()];
        }
    }
    here.as_object_mut().unwrap()
}

#[test]
fn the_saved_plan_holds_every_kind_of_struct_and_reads_back_as_written() {
    let saved = saved();
    let p = &saved.plan;
    assert!(!p.holds.is_empty() && !p.uncovered.is_empty() && !p.departed.is_empty());
    let deletion = &p.deletions[0];
    assert!(deletion.objects.is_some() && deletion.observed.is_some());
    assert!(!deletion.in_use_by.is_empty());
    assert!(p.swarms.iter().any(|s| s.nodes.is_some()));
    assert_eq!(SavedPlan::from_json(&saved.to_json_pretty()), Ok(saved));
}

#[test]
fn an_unknown_field_at_any_depth_is_refused_naming_its_path() {
    let text = saved().to_json_pretty();
    let value: Value = serde_json::from_str(&text).unwrap();
    let mut paths = Vec::new();
    objects(&value, String::new(), &mut paths);
    // The root, the policy, the clusters map (whose keys are names, not
    // fields), the plan, and every struct in it.
    assert!(paths.len() > 15, "{paths:?}");
    for path in paths.iter().filter(|p| p.as_str() != "clusters") {
        let mut edited = value.clone();
        at(&mut edited, path).insert("surplus".into(), Value::Bool(true));
        let field = if path.is_empty() {
            "surplus".to_owned()
        } else {
            format!("{path}.surplus")
        };
        match SavedPlan::from_json(&edited.to_string()) {
            Err(SnapshotError::Parse {
                path: found,
                message,
            }) => {
                assert_eq!(found, field, "{message}");
                assert!(message.contains("unknown field `surplus`"), "{message}");
            }
            other => panic!("{field}: accepted or refused otherwise: {other:?}"),
        }
    }
}

#[test]
fn no_struct_is_read_from_an_array_of_its_fields() {
    let objects = shapes::each_object_as_array_is_refused(&saved().to_json_pretty(), |t| {
        SavedPlan::from_json(t).is_ok()
    });
    assert!(objects > 15, "{objects}");
}

#[test]
fn a_deletion_whose_swarm_the_edited_plan_leaves_out_is_still_checked() {
    let mut saved = saved();
    assert_eq!(saved.plan.deletions[0].swarm.as_str(), "alpha");
    // Edited: the deletion's swarm taken out of the plan's swarm list.
    saved.plan.swarms.retain(|s| s.swarm.as_str() != "alpha");
    let mut fresh = snapshot();
    fresh.swarms[0].cluster_id = Some("c2".into());
    let stale = check(&saved, &fresh, TOOL)
        .unwrap()
        .expect_err("a deletion on another cluster was approved");
    assert!(
        stale.changes.contains(&Change::Cluster {
            swarm: "alpha".into(),
            planned: Some("c1".into()),
            now: Some("c2".into()),
        }),
        "{:?}",
        stale.changes
    );
}

#[test]
fn a_deletion_whose_swarm_the_edited_plan_has_no_cluster_for_is_stale() {
    let mut saved = saved();
    saved.plan.swarms.retain(|s| s.swarm.as_str() != "alpha");
    saved.clusters.remove(&"alpha".into());
    let stale = check(&saved, &snapshot(), TOOL)
        .unwrap()
        .expect_err("a deletion on an unproven cluster was approved");
    assert!(
        stale.changes.contains(&Change::Cluster {
            swarm: "alpha".into(),
            planned: None,
            now: Some("c1".into()),
        }),
        "{:?}",
        stale.changes
    );
}

#[test]
fn an_unedited_plan_of_an_unchanged_swarm_still_applies() {
    let saved = saved();
    let approved = check(&saved, &snapshot(), TOOL).unwrap().unwrap();
    assert_eq!(approved.plan.deletions, saved.plan.deletions);
}
