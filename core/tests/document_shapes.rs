//! Every document the crate reads takes each of its structs only from a
//! JSON object: snapshots, saved plans, grace states, audit lines, and the
//! volume agent's request and result lines. A struct written as the array
//! of its field values would otherwise be bound by position, past every
//! field name and the refusal of unknown fields.

mod shapes;

use std::collections::{BTreeMap, BTreeSet};

use shapes::each_object_as_array_is_refused;
use sweep_core::agent::{
    parse_result_line, AgentContainer, AgentRequest, AgentResult, Failed, Refused,
};
use sweep_core::audit::parse_line;
use sweep_core::saved::SavedPlan;
use sweep_core::{plan, GraceState, Snapshot};

const EXAMPLES: [&str; 6] = [
    include_str!("../../examples/one-swarm.json"),
    include_str!("../../examples/three-swarms.json"),
    include_str!("../../examples/node-down.json"),
    include_str!("../../examples/grace-period.json"),
    include_str!("../../examples/deletion-windows.json"),
    include_str!("../../examples/dropped-objects.json"),
];

#[test]
fn snapshots_and_their_saved_plans() {
    for text in EXAMPLES {
        let snapshot = Snapshot::from_json(text).unwrap();
        each_object_as_array_is_refused(text, |t| Snapshot::from_json(t).is_ok());
        let saved = SavedPlan::new(&snapshot, plan(&snapshot).unwrap(), "1.0.0");
        let objects = each_object_as_array_is_refused(&saved.to_json_pretty(), |t| {
            SavedPlan::from_json(t).is_ok()
        });
        assert!(objects > 5, "{objects}");
    }
}

#[test]
fn grace_states() {
    let text = r#"{
      "format_version": 2,
      "written_at": "2026-12-01T08:00:00Z",
      "departed": [{"swarm": "alpha", "release": "old", "since": "2026-12-01T07:00:00Z"}],
      "notify": {
        "holds": [{"cause": "hold:sweep:app_set_not_loaded", "since": "2026-12-01T07:30:00Z"}],
        "sent": [{"cause": "deletion_failed:alpha/old", "fingerprint": "f1"}]
      }
    }"#;
    let objects = each_object_as_array_is_refused(text, |t| GraceState::from_json(t).is_ok());
    assert_eq!(objects, 5);
}

#[test]
fn audit_lines() {
    // Every field, in the order written: before each struct was read from
    // an object only, this line's array was read as the line.
    let line = r#"{"format_version":2,"time":"2026-12-01T08:00:03Z","controller":"default","trigger":"apply --plan","saved_plan_digest":"sha256:9a0e","swarm":"alpha","cluster_id":"x8k1m0c2","release":"blog","application":"blog","reason":"departed","kind":"service","id":"3f9ck2","name":"blog_app","node":null,"outcome":"failed","error":"no","snapshot_digest":"sha256:5be1"}"#;
    each_object_as_array_is_refused(line, |t| parse_line(t.as_bytes()).is_ok());
}

#[test]
fn volume_agent_requests_and_results() {
    let volumes = |names: &[&str]| {
        names
            .iter()
            .map(|n| (*n).to_owned())
            .collect::<BTreeSet<_>>()
    };
    let request = AgentRequest::remove(BTreeMap::from([(
        "n1".to_owned(),
        BTreeMap::from([("old".to_owned(), volumes(&["old_data"]))]),
    )]));
    let objects =
        each_object_as_array_is_refused(&request.to_json(), |t| AgentRequest::from_json(t).is_ok());
    assert_eq!(objects, 3);

    let mut result = AgentResult::new("n1");
    result.volumes = BTreeMap::from([("old".to_owned(), volumes(&["old_logs"]))]);
    result.removed = volumes(&["old_data"]);
    result.refused = vec![Refused::new("other_data", "of stack other")];
    result.failed = vec![Failed::new("old_cache", "device busy")];
    let mut container = AgentContainer::from(&sweep_core::usage::ContainerUse::new(
        "c1",
        "other.1",
        volumes(&["old_logs"]),
    ));
    container.stack = Some("other".to_owned());
    result.containers = vec![container];
    let line = result.to_line();
    assert!(matches!(parse_result_line(&line), Some(Ok(_))), "{line}");
    // An array for the outermost object is no result line at all; one
    // for any object inside it is a refused one.
    let objects =
        each_object_as_array_is_refused(&line, |t| matches!(parse_result_line(t), Some(Ok(_))));
    assert_eq!(objects, 5);
}
