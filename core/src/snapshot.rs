//! The snapshot: everything the planner knows, as plain values.
//!
//! This is a public contract (`swarm-sweep plan --snapshot FILE` reads it,
//! `swarm-sweep snapshot` writes it), so field names never change and unknown
//! fields are refused: a misspelt `purge_volume` silently ignored would turn
//! a purge off, a misspelt `max_deletion` would drop the blast-radius guard.
//! For the same reason the text is exactly one JSON object and every struct
//! in it is an object: a second document, trailing text or a struct written
//! as an array of its values is refused, never half-read. Which fields are
//! optional, and their defaults, is stated once, in the private `wire`
//! module.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::owner::{is_application_name, ControllerId, OwnerError};
use crate::refs::SwarmName;

/// Errors that make a snapshot unusable. Nothing is planned from one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SnapshotError {
    /// The JSON does not parse or does not fit the schema; `path` is the
    /// field it stopped at (`swarms[1].nodes[0].id`), empty for the root.
    #[error("{}: {message}", if path.is_empty() { "(root)" } else { path.as_str() })]
    Parse { path: String, message: String },
    /// A stamp names an application, not a swarm, so two applications of
    /// one name would make every stamp of that name ambiguous.
    #[error("app_set.applications: application {name:?} is listed twice")]
    DuplicateApplication { name: String },
    #[error("swarms: swarm {:?} is listed twice", swarm.as_str())]
    DuplicateSwarm { swarm: SwarmName },
    #[error("swarms: swarm {:?}: releases: release {release:?} is listed twice", swarm.as_str())]
    DuplicateRelease { swarm: SwarmName, release: String },
    #[error("swarms: swarm {:?}: nodes: node id {node:?} is listed twice", swarm.as_str())]
    DuplicateNode { swarm: SwarmName, node: String },
    /// A name that must not be empty is; `field` says which.
    #[error("{field}: must not be empty")]
    EmptyName { field: String },
    /// The controller only writes stamps for names of the grammar
    /// [`is_application_name`] checks, so an application named otherwise
    /// could never own a release and would silently own nothing. `field`
    /// is `app_set.applications[<i>].name`.
    #[error("{field}: application name {name:?} is not of the form [a-z0-9][a-z0-9._-]*, so no owner stamp can name it")]
    InvalidApplicationName { field: String, name: String },
    #[error("policy.controller: {0}")]
    Controller(#[from] OwnerError),
}

/// A whole snapshot: the policy, the app set and what each swarm holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Snapshot {
    pub policy: Policy,
    pub app_set: AppSet,
    pub swarms: Vec<SwarmSnapshot>,
}

impl Snapshot {
    pub fn new(policy: Policy, app_set: AppSet, swarms: Vec<SwarmSnapshot>) -> Self {
        Snapshot {
            policy,
            app_set,
            swarms,
        }
    }

    /// Parses and validates a snapshot from JSON text: exactly one JSON
    /// object, every struct in it written as an object.
    pub fn from_json(text: &str) -> Result<Self, SnapshotError> {
        let snapshot: Snapshot = one_json_document(text)?;
        snapshot.validate()?;
        Ok(snapshot)
    }

    /// Renders the snapshot as the JSON [`Snapshot::from_json`] reads.
    pub fn to_json_pretty(&self) -> String {
        // Serializing plain structs of strings, numbers and options cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Checks what the schema alone cannot: uniqueness and non-empty names.
    pub fn validate(&self) -> Result<(), SnapshotError> {
        ControllerId::new(self.policy.controller.clone())?;
        let mut apps = BTreeSet::new();
        for (i, app) in self.app_set.applications.iter().enumerate() {
            if app.name.is_empty() {
                return Err(SnapshotError::EmptyName {
                    field: format!("app_set.applications[{i}].name"),
                });
            }
            if !is_application_name(&app.name) {
                return Err(SnapshotError::InvalidApplicationName {
                    field: format!("app_set.applications[{i}].name"),
                    name: app.name.clone(),
                });
            }
            if !apps.insert(app.name.as_str()) {
                return Err(SnapshotError::DuplicateApplication {
                    name: app.name.clone(),
                });
            }
            for (j, release) in app.releases.iter().flatten().enumerate() {
                if release.is_empty() {
                    return Err(SnapshotError::EmptyName {
                        field: format!("app_set.applications[{i}].releases[{j}]"),
                    });
                }
            }
        }
        let mut swarms = BTreeSet::new();
        for (i, swarm) in self.swarms.iter().enumerate() {
            if !swarms.insert(&swarm.swarm) {
                return Err(SnapshotError::DuplicateSwarm {
                    swarm: swarm.swarm.clone(),
                });
            }
            let mut releases = BTreeSet::new();
            for (j, release) in swarm.releases.iter().enumerate() {
                if release.name.is_empty() {
                    return Err(SnapshotError::EmptyName {
                        field: format!("swarms[{i}].releases[{j}].name"),
                    });
                }
                if !releases.insert(release.name.as_str()) {
                    return Err(SnapshotError::DuplicateRelease {
                        swarm: swarm.swarm.clone(),
                        release: release.name.clone(),
                    });
                }
            }
            for (field, list) in [("nodes", &swarm.nodes), ("members", &swarm.members)] {
                let mut ids = BTreeSet::new();
                for (j, node) in list.iter().flatten().enumerate() {
                    if node.id.is_empty() {
                        return Err(SnapshotError::EmptyName {
                            field: format!("swarms[{i}].{field}[{j}].id"),
                        });
                    }
                    if !ids.insert(node.id.as_str()) {
                        return Err(SnapshotError::DuplicateNode {
                            swarm: swarm.swarm.clone(),
                            node: node.id.clone(),
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

/// What the operator asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Policy {
    /// The `<controller>` in `cd/<controller>/<application>` stamps.
    pub controller: String,
    pub purge_volumes: bool,
    /// Above this many deletions the whole sweep is held.
    pub max_deletions: Option<u64>,
}

fn default_controller() -> String {
    "default".to_owned()
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            controller: default_controller(),
            purge_volumes: false,
            max_deletions: None,
        }
    }
}

impl Policy {
    pub fn new(
        controller: impl Into<String>,
        purge_volumes: bool,
        max_deletions: Option<u64>,
    ) -> Self {
        Policy {
            controller: controller.into(),
            purge_volumes,
            max_deletions,
        }
    }
}

/// The applications the controller is told to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AppSet {
    /// False when the app set could not be read completely. Required: a
    /// snapshot that forgot to say must not read as "loaded".
    pub loaded: bool,
    pub applications: Vec<Application>,
}

impl AppSet {
    pub fn new(loaded: bool, applications: Vec<Application>) -> Self {
        AppSet {
            loaded,
            applications,
        }
    }

    /// Parses an app-set document (the schema of a snapshot's `app_set`)
    /// from JSON text: exactly one JSON object.
    pub fn from_json(text: &str) -> Result<Self, SnapshotError> {
        one_json_document(text)
    }
}

/// One application of the app set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Application {
    /// Of the grammar [`is_application_name`] checks, the only names owner
    /// stamps carry.
    pub name: String,
    /// The destination swarm; `""` is the controller's own. Required: a
    /// destination left out must not read as "the local swarm".
    pub swarm: SwarmName,
    /// The releases it declares; `None` until it has reconciled once.
    pub releases: Option<Vec<String>>,
    pub state: AppState,
}

impl Application {
    pub fn new(
        name: impl Into<String>,
        swarm: impl Into<SwarmName>,
        releases: Option<Vec<String>>,
        state: AppState,
    ) -> Self {
        Application {
            name: name.into(),
            swarm: swarm.into(),
            releases,
            state,
        }
    }

    /// A reconciled application that declares `releases`.
    pub fn reconciled(name: &str, swarm: &str, releases: &[&str]) -> Self {
        Application::new(
            name,
            swarm,
            Some(releases.iter().map(|r| (*r).to_owned()).collect()),
            AppState::Reconciled,
        )
    }

    /// Still in the app set (draining ones have left it).
    pub fn is_live(&self) -> bool {
        self.state != AppState::Draining
    }

    /// Has said which releases it declares.
    pub fn has_reconciled(&self) -> bool {
        self.state == AppState::Reconciled && self.releases.is_some()
    }
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum AppState {
    #[default]
    Reconciled,
    /// In the set but has not said yet which releases it declares.
    Unreconciled,
    /// Has left the set but is still syncing.
    Draining,
}

/// What one swarm holds, as its registry read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SwarmSnapshot {
    pub swarm: SwarmName,
    pub cluster_id: Option<String>,
    /// Set when the swarm could not be read; its releases are then unknown.
    pub error: Option<String>,
    pub releases: Vec<ReleaseEntry>,
    /// The nodes the registry reached; `None` when it cannot reach nodes
    /// individually at all, `Some(vec![])` when it reaches none.
    pub nodes: Option<Vec<NodeEntry>>,
    /// The node count the swarm itself reports; `None` if unreadable.
    pub node_count: Option<u64>,
    /// The swarm's own node list (down nodes included), as its manager
    /// reports it; `None` when not read. With it, the plan names the nodes
    /// a purge does not reach instead of only counting them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<NodeEntry>>,
    /// The stack the controller itself runs as on this swarm.
    pub self_stack: Option<String>,
}

impl SwarmSnapshot {
    /// A readable swarm with no releases, no node reach and no count.
    pub fn new(swarm: impl Into<SwarmName>) -> Self {
        SwarmSnapshot {
            swarm: swarm.into(),
            cluster_id: None,
            error: None,
            releases: Vec::new(),
            nodes: None,
            node_count: None,
            members: None,
            self_stack: None,
        }
    }

    /// A swarm that could not be read.
    pub fn unreadable(swarm: impl Into<SwarmName>, error: impl Into<String>) -> Self {
        SwarmSnapshot {
            error: Some(error.into()),
            ..SwarmSnapshot::new(swarm)
        }
    }
}

/// One release as its records show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReleaseEntry {
    pub name: String,
    /// The `com.swarmcli.owner` stamp of its newest record, if any.
    pub owner: Option<String>,
}

impl ReleaseEntry {
    pub fn new(name: impl Into<String>, owner: Option<String>) -> Self {
        ReleaseEntry {
            name: name.into(),
            owner,
        }
    }
}

/// One swarm node the registry reached.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[non_exhaustive]
pub struct NodeEntry {
    /// The swarm node id: the key.
    pub id: String,
    /// For people; not unique.
    pub hostname: String,
}

impl NodeEntry {
    pub fn new(id: impl Into<String>, hostname: impl Into<String>) -> Self {
        NodeEntry {
            id: id.into(),
            hostname: hostname.into(),
        }
    }

    /// The hostname, or the id when the hostname is empty.
    pub fn display_name(&self) -> &str {
        if self.hostname.is_empty() {
            &self.id
        } else {
            &self.hostname
        }
    }
}

/// Reads exactly one JSON value of type `T` from `text`.
///
/// A `serde_json::Deserializer` stops after the first value, and only
/// `end()` refuses what follows: without it `{..} {..}` or `{..} garbage`
/// would read as the first document alone, whatever the rest said.
fn one_json_document<T: de::DeserializeOwned>(text: &str) -> Result<T, SnapshotError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| SnapshotError::Parse {
        path: e.path().to_string().trim_start_matches('.').to_owned(),
        message: e.inner().to_string(),
    })?;
    de.end().map_err(|e| SnapshotError::Parse {
        path: String::new(),
        message: e.to_string(),
    })?;
    Ok(value)
}

// serde's derived `Deserialize` also reads a struct from an array of its
// field values in order, so `"policy": ["default", true, 0]` would bind
// values by position, past every field name and `deny_unknown_fields`.
// Every struct of the snapshot is therefore read only from a map, through
// its twin in `wire` (which holds the input schema: defaults and refusals).
// The twins are private, so no permissive reader is reachable from outside.
macro_rules! from_map_only {
    ($($ty:ident => $wire:ident, $expecting:literal;)*) => {$(
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct MapOnly;
                impl<'de> Visitor<'de> for MapOnly {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<$ty, A::Error> {
                        wire::$wire::deserialize(de::value::MapAccessDeserializer::new(map))
                    }
                }
                deserializer.deserialize_map(MapOnly)
            }
        }
    )*};
}

from_map_only! {
    Snapshot => SnapshotWire, "a snapshot object";
    Policy => PolicyWire, "a policy object";
    AppSet => AppSetWire, "an app set object";
    Application => ApplicationWire, "an application object";
    SwarmSnapshot => SwarmSnapshotWire, "a swarm object";
    ReleaseEntry => ReleaseEntryWire, "a release object";
    NodeEntry => NodeEntryWire, "a node object";
}

/// The input schema of each struct. `remote` makes serde check that every
/// field of the public struct is here with its type, so the two cannot
/// drift apart.
mod wire {
    use serde::Deserialize;

    use super::{
        default_controller, AppSet, AppState, Application, NodeEntry, Policy, ReleaseEntry,
        Snapshot, SwarmSnapshot,
    };
    use crate::refs::SwarmName;

    #[derive(Deserialize)]
    #[serde(remote = "Snapshot", deny_unknown_fields)]
    pub(super) struct SnapshotWire {
        #[serde(default)]
        policy: Policy,
        app_set: AppSet,
        #[serde(default)]
        swarms: Vec<SwarmSnapshot>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "Policy", deny_unknown_fields)]
    pub(super) struct PolicyWire {
        #[serde(default = "default_controller")]
        controller: String,
        #[serde(default)]
        purge_volumes: bool,
        #[serde(default)]
        max_deletions: Option<u64>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "AppSet", deny_unknown_fields)]
    pub(super) struct AppSetWire {
        loaded: bool,
        #[serde(default)]
        applications: Vec<Application>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "Application", deny_unknown_fields)]
    pub(super) struct ApplicationWire {
        name: String,
        swarm: SwarmName,
        #[serde(default)]
        releases: Option<Vec<String>>,
        #[serde(default)]
        state: AppState,
    }

    #[derive(Deserialize)]
    #[serde(remote = "SwarmSnapshot", deny_unknown_fields)]
    pub(super) struct SwarmSnapshotWire {
        swarm: SwarmName,
        #[serde(default)]
        cluster_id: Option<String>,
        #[serde(default)]
        error: Option<String>,
        #[serde(default)]
        releases: Vec<ReleaseEntry>,
        #[serde(default)]
        nodes: Option<Vec<NodeEntry>>,
        #[serde(default)]
        node_count: Option<u64>,
        #[serde(default)]
        members: Option<Vec<NodeEntry>>,
        #[serde(default)]
        self_stack: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "ReleaseEntry", deny_unknown_fields)]
    pub(super) struct ReleaseEntryWire {
        name: String,
        #[serde(default)]
        owner: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "NodeEntry", deny_unknown_fields)]
    pub(super) struct NodeEntryWire {
        id: String,
        #[serde(default)]
        hostname: String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_named() {
        let err = Snapshot::from_json(
            r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a","nodez":[]}]}"#,
        )
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
        let (path, message) = parse_error(
            r#"{"app_set":{"loaded":true,"applications":[{"name":"e","releases":[]}]}}"#,
        );
        assert_eq!(path, "app_set.applications[0]");
        assert!(message.contains("missing field `swarm`"), "{message}");
        let (path, _) = parse_error(
            r#"{"app_set":{"loaded":true,"applications":[{"name":"e","swarm":null}]}}"#,
        );
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
}
