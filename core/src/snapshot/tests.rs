use std::time::Duration;

use super::*;
use crate::owner::OwnerError;
use crate::time::UnixTime;

#[test]
fn unknown_fields_are_named() {
    let err =
        Snapshot::from_json(r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a","nodez":[]}]}"#)
            .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("swarms[0]"), "{text}");
    assert!(text.contains("nodez"), "{text}");
}

#[test]
fn loaded_is_required() {
    let err = Snapshot::from_json(r#"{"app_set":{"applications":[]}}"#).unwrap_err();
    assert!(err.to_string().contains("loaded"), "{err}");
}

#[test]
fn duplicates_are_refused() {
    let dup_app = r#"{"app_set":{"loaded":true,"applications":[{"name":"a","swarm":"","releases":[]},{"name":"a","swarm":"x","releases":[]}]}}"#;
    assert_eq!(
        Snapshot::from_json(dup_app),
        Err(SnapshotError::DuplicateApplication { name: "a".into() })
    );
    let dup_swarm = r#"{"app_set":{"loaded":true},"swarms":[{"swarm":""},{"swarm":""}]}"#;
    assert_eq!(
        Snapshot::from_json(dup_swarm),
        Err(SnapshotError::DuplicateSwarm {
            swarm: SwarmName::local()
        })
    );
    let dup_rel = r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a","releases":[{"name":"w"},{"name":"w"}]}]}"#;
    assert_eq!(
        Snapshot::from_json(dup_rel),
        Err(SnapshotError::DuplicateRelease {
            swarm: "a".into(),
            release: "w".into()
        })
    );
}

#[test]
fn invalid_controller_is_an_error() {
    let text = r#"{"policy":{"controller":"a/b"},"app_set":{"loaded":true}}"#;
    assert!(matches!(
        Snapshot::from_json(text),
        Err(SnapshotError::Controller(
            OwnerError::InvalidController { .. }
        ))
    ));
}

#[test]
fn defaults_fill_optional_fields() {
    let s = Snapshot::from_json(
        r#"{"app_set":{"loaded":true,"applications":[{"name":"e","swarm":""}]},"swarms":[{"swarm":""}]}"#,
    )
    .unwrap();
    assert_eq!(s.policy, Policy::default());
    assert_eq!(s.app_set.applications[0].releases, None);
    assert_eq!(s.app_set.applications[0].state, AppState::Reconciled);
    assert_eq!(s.swarms[0].nodes, None);
    let round = Snapshot::from_json(&s.to_json_pretty()).unwrap();
    assert_eq!(round, s);
}

fn parse_error(text: &str) -> (String, String) {
    match Snapshot::from_json(text) {
        Err(SnapshotError::Parse { path, message }) => (path, message),
        other => panic!("{text}: expected a parse error, got {other:?}"),
    }
}

const MINIMAL: &str = r#"{"app_set":{"loaded":true}}"#;

#[test]
fn the_destination_swarm_is_required() {
    let (path, message) =
        parse_error(r#"{"app_set":{"loaded":true,"applications":[{"name":"e","releases":[]}]}}"#);
    assert_eq!(path, "app_set.applications[0]");
    assert!(message.contains("missing field `swarm`"), "{message}");
    let (path, _) =
        parse_error(r#"{"app_set":{"loaded":true,"applications":[{"name":"e","swarm":null}]}}"#);
    assert_eq!(path, "app_set.applications[0].swarm");
    let local = Snapshot::from_json(
        r#"{"app_set":{"loaded":true,"applications":[{"name":"e","swarm":""}]}}"#,
    )
    .unwrap();
    assert!(local.app_set.applications[0].swarm.is_local());
}

#[test]
fn anything_after_the_one_object_is_an_error() {
    Snapshot::from_json(&format!(" {MINIMAL} \n")).unwrap();
    for tail in [
        " {}",
        MINIMAL,
        " garbage",
        " // comment",
        " /* c */",
        ",",
        "]",
        "\u{0}",
    ] {
        let text = format!("{MINIMAL}{tail}");
        let (path, message) = parse_error(&text);
        assert_eq!(path, "", "{text:?}");
        assert!(message.contains("trailing"), "{text:?}: {message}");
        assert!(matches!(
            AppSet::from_json(&format!(r#"{{"loaded":true}}{tail}"#)),
            Err(SnapshotError::Parse { .. })
        ));
    }
}

#[test]
fn structs_written_as_arrays_are_errors() {
    for (text, at) in [
        (r#"[{"loaded":true}]"#, ""),
        (
            r#"{"policy":["default",true,0],"app_set":{"loaded":true}}"#,
            "policy",
        ),
        (r#"{"app_set":[true,[]]}"#, "app_set"),
        (
            r#"{"app_set":{"loaded":true,"applications":[["e","",["web"],"reconciled"]]}}"#,
            "app_set.applications[0]",
        ),
        (
            r#"{"app_set":{"loaded":true},"swarms":[["a"]]}"#,
            "swarms[0]",
        ),
        (
            r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a","releases":[["web","cd/default/x:release/web"]]}]}"#,
            "swarms[0].releases[0]",
        ),
        (
            r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a","nodes":[["n1","host"]]}]}"#,
            "swarms[0].nodes[0]",
        ),
        (
            r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a","members":[["n1"]]}]}"#,
            "swarms[0].members[0]",
        ),
    ] {
        let (path, message) = parse_error(text);
        assert_eq!(path, at, "{text}");
        assert!(
            message.contains("invalid type: sequence"),
            "{text}: {message}"
        );
    }
    assert!(matches!(
        AppSet::from_json("[true, []]"),
        Err(SnapshotError::Parse { .. })
    ));
    // Directly through serde too, not only through `from_json`.
    assert!(serde_json::from_str::<Policy>(r#"["default", true, 0]"#).is_err());
    assert!(serde_json::from_str::<NodeEntry>(r#"["n1", "h"]"#).is_err());
    let node: NodeEntry = serde_json::from_str(r#"{"id": "n1"}"#).unwrap();
    assert_eq!(node, NodeEntry::new("n1", ""));
}

#[test]
fn the_grace_period_fields_read_and_name_the_field_they_fail_at() {
    let s = Snapshot::from_json(
        r#"{"policy":{"min_departed_for":"10m"},"now":"2026-12-01T08:00:00Z","app_set":{"loaded":true},"swarms":[{"swarm":"a","releases":[{"name":"w","departed_since":"2026-12-01T07:00:00Z"}]}]}"#,
    )
    .unwrap();
    assert_eq!(s.policy.min_departed_for, Some(Duration::from_secs(600)));
    assert_eq!(
        s.now,
        Some(UnixTime::parse_rfc3339("2026-12-01T08:00:00Z").unwrap())
    );
    assert!(s.swarms[0].releases[0].departed_since.is_some());
    let text = s.to_json_pretty();
    assert!(text.contains(r#""min_departed_for": "10m""#), "{text}");
    assert_eq!(Snapshot::from_json(&text).unwrap(), s);
    let seconds =
        Snapshot::from_json(r#"{"policy":{"min_departed_for":90},"app_set":{"loaded":true}}"#)
            .unwrap();
    assert_eq!(
        seconds.policy.min_departed_for,
        Some(Duration::from_secs(90))
    );
    // Off by default, and left out when off.
    assert!(!Snapshot::from_json(MINIMAL)
        .unwrap()
        .to_json_pretty()
        .contains("min_departed_for"));
    for (text, at) in [
        (
            r#"{"policy":{"min_departed_for":0},"app_set":{"loaded":true}}"#,
            "policy.min_departed_for",
        ),
        (
            r#"{"policy":{"min_departed_for":"0s"},"app_set":{"loaded":true}}"#,
            "policy.min_departed_for",
        ),
        (
            r#"{"policy":{"min_departed_for":-5},"app_set":{"loaded":true}}"#,
            "policy.min_departed_for",
        ),
        (
            r#"{"policy":{"min_departed_for":1.5},"app_set":{"loaded":true}}"#,
            "policy.min_departed_for",
        ),
        (
            r#"{"policy":{"min_departed_for":"soon"},"app_set":{"loaded":true}}"#,
            "policy.min_departed_for",
        ),
        (r#"{"now":"yesterday","app_set":{"loaded":true}}"#, "now"),
        (r#"{"now":1796112000,"app_set":{"loaded":true}}"#, "now"),
        (
            r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a","releases":[{"name":"w","departed_since":"2026-13-01T00:00:00Z"}]}]}"#,
            "swarms[0].releases[0].departed_since",
        ),
    ] {
        let (path, _) = parse_error(text);
        assert_eq!(path, at, "{text}");
    }
}

#[test]
fn application_names_outside_the_stamp_grammar_are_refused() {
    for name in [
        "Shop",
        "gone ",
        "go\\tne",
        "gone\\u200b",
        "a:b",
        "-a",
        "a/b",
    ] {
        let text = format!(
            r#"{{"app_set":{{"loaded":true,"applications":[{{"name":"ok","swarm":"","releases":[]}},{{"name":"{name}","swarm":"","releases":[]}}]}}}}"#
        );
        let err = Snapshot::from_json(&text).unwrap_err();
        let SnapshotError::InvalidApplicationName { field, name: got } = &err else {
            panic!("{name:?}: {err:?}");
        };
        assert_eq!(field, "app_set.applications[1].name");
        assert!(!crate::owner::is_application_name(got));
        assert!(
            err.to_string()
                .starts_with("app_set.applications[1].name: "),
            "{err}"
        );
    }
}
