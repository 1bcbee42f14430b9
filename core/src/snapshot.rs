//! The snapshot: everything the planner knows, as plain values.
//!
//! This is a public contract (`swarm-sweep plan --snapshot FILE` reads it,
//! `swarm-sweep snapshot` writes it), so field names never change and unknown
//! fields are refused: a misspelt `purge_volume` silently ignored would turn
//! a purge off, a misspelt `max_deletion` would drop the blast-radius guard.
//! For the same reason the text is exactly one JSON object and every struct
//! in it is an object: a second document, trailing text or a struct written
//! as an array of its values is refused, never half-read. Which fields are
//! optional, and their defaults, is stated in the private `wire` module for
//! the owned types, and mirrored by the in-place reader `SnapshotDoc` that
//! `plan --snapshot` uses so that a large file's names are not copied; a
//! test plans every example, fuzz seed and hostile text both ways and
//! requires the same plan or the same error.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::bound::check_values;
use crate::format::FormatVersion;
use crate::objects::{NodeVolumes, ObjectRef, ObjectVersion, ServiceEntry, StackObjects};
use crate::owner::{is_application_name, ControllerId, OwnerError};
use crate::refs::SwarmName;
use crate::time::UnixTime;
use crate::usage::{ContainerUse, NodeContainers, ServiceUse, Usage};

/// Errors that make a snapshot unusable. Nothing is planned from one.
///
/// Its `Display` is the message for people; it quotes names from the
/// snapshot with `{:?}`, so it carries no raw control character.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The JSON does not parse or does not fit the schema; `path` is the
    /// field it stopped at (`swarms[1].nodes[0].id`), empty for the root.
    #[error("{}: {message}", if path.is_empty() { "(root)" } else { path.as_str() })]
    Parse {
        /// Where the reader stopped, as `swarms[1].nodes[0].id`.
        path: String,
        /// What is wrong there, as the JSON reader says it.
        message: String,
    },
    /// A stamp names an application, not a swarm, so two applications of
    /// one name would make every stamp of that name ambiguous.
    #[error("app_set.applications: application {name:?} is listed twice")]
    DuplicateApplication {
        /// The application's name.
        name: String,
    },
    /// Two entries of `swarms` have one name: which of them tells what the
    /// swarm holds would be a guess.
    #[error("swarms: swarm {:?} is listed twice", swarm.as_str())]
    DuplicateSwarm {
        /// The swarm's name.
        swarm: SwarmName,
    },
    /// One swarm entry lists a release name twice: release names are
    /// unique within a swarm, so one of the two is not what the swarm
    /// holds.
    #[error("swarms: swarm {:?}: releases: release {release:?} is listed twice", swarm.as_str())]
    DuplicateRelease {
        /// The swarm entry.
        swarm: SwarmName,
        /// The release name.
        release: String,
    },
    /// One swarm entry lists a node id twice (in `nodes` or `members`):
    /// the node id is the key coverage counts by.
    #[error("swarms: swarm {:?}: nodes: node id {node:?} is listed twice", swarm.as_str())]
    DuplicateNode {
        /// The swarm entry.
        swarm: SwarmName,
        /// The node id.
        node: String,
    },
    /// A name that must not be empty is; `field` says which.
    #[error("{field}: must not be empty")]
    EmptyName {
        /// The path to the field, as `swarms[0].releases[2].name`.
        field: String,
    },
    /// The controller only writes stamps for names of the grammar
    /// [`is_application_name`] checks, so an application named otherwise
    /// could never own a release and would silently own nothing. `field`
    /// is `app_set.applications[<i>].name`.
    #[error("{field}: application name {name:?} is not of the form [a-z0-9][a-z0-9._-]*, so no owner stamp can name it")]
    InvalidApplicationName {
        /// The path to the field.
        field: String,
        /// The name as given.
        name: String,
    },
    /// `policy.controller` is not a valid controller id (see
    /// [`ControllerId::new`]).
    #[error("policy.controller: {0}")]
    Controller(#[from] OwnerError),
    /// The document holds more JSON values than
    /// [`MAX_JSON_VALUES`](crate::bound::MAX_JSON_VALUES): parsed, it would
    /// take more memory than any document this tool reads may. Refused
    /// before any of it is parsed.
    #[error("(root): the document holds more than {limit} JSON values, more than any document this tool reads")]
    TooManyValues {
        /// The most values a document may hold.
        limit: u64,
    },
}

impl From<crate::bound::TooManyValues> for SnapshotError {
    fn from(e: crate::bound::TooManyValues) -> Self {
        SnapshotError::TooManyValues { limit: e.limit }
    }
}

/// A whole snapshot: the policy, the app set and what each swarm holds.
///
/// The input of [`plan()`](crate::plan()). Build one in code with
/// [`Snapshot::new`] and the constructors of its parts, or read one with
/// [`Snapshot::from_json`]. A driver that gathers one from live swarms is
/// `sweep-runner`'s `gather`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
// The schema describes what is read, so its defaults and refusals are those
// of `wire`; a test removes each field in turn and requires the schema and
// `from_json` to agree.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
// The schema's description: the first paragraph, without the Rust.
#[cfg_attr(
    feature = "schema",
    schemars(description = "A whole snapshot: the policy, the app set and what each swarm holds.")
)]
#[non_exhaustive]
pub struct Snapshot {
    /// Optional on input (a snapshot without it is of version 1).
    #[cfg_attr(feature = "schema", schemars(default))]
    pub format_version: FormatVersion,
    /// What the operator asked for; optional, as is each of its fields.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub policy: Policy,
    /// The applications the controller is told to run. Required.
    pub app_set: AppSet,
    /// What each swarm the registry resolves holds, one entry per name.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub swarms: Vec<SwarmSnapshot>,
    /// When the snapshot was gathered: the clock the grace period
    /// (`policy.min_departed_for`) is measured by. Without it, a policy
    /// with a grace period deletes nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub now: Option<UnixTime>,
}

impl Snapshot {
    /// A snapshot of the current format version, with no time (`now`):
    /// how an embedder builds one in code, from [`Policy::new`] (or
    /// [`Policy::default`]), [`AppSet::new`] and [`SwarmSnapshot::new`].
    /// Check it with [`Snapshot::validate`], or let
    /// [`plan()`](crate::plan()) do so.
    pub fn new(policy: Policy, app_set: AppSet, swarms: Vec<SwarmSnapshot>) -> Self {
        Snapshot {
            format_version: FormatVersion,
            policy,
            app_set,
            swarms,
            now: None,
        }
    }

    /// With the time it was gathered at.
    pub fn with_now(mut self, now: UnixTime) -> Self {
        self.now = Some(now);
        self
    }

    /// Parses and validates a snapshot from JSON text: exactly one JSON
    /// object, every struct in it written as an object.
    ///
    /// Unknown fields are refused, not ignored: a misspelt `purge_volume`
    /// silently dropped would turn a purge off. The error says where the
    /// reader stopped ([`SnapshotError::Parse`]'s `path`).
    ///
    /// # Example
    ///
    /// The smallest useful snapshot: an app set that says it was loaded,
    /// and the releases of each swarm with their owner stamps. Everything
    /// else (policy, cluster ids, nodes, the time) is optional.
    ///
    /// ```
    /// use sweep_core::{plan, Snapshot, SnapshotError};
    ///
    /// let snapshot = Snapshot::from_json(r#"{
    ///     "policy": {"controller": "default", "purge_volumes": false},
    ///     "app_set": {
    ///         "loaded": true,
    ///         "applications": [{"name": "shop", "swarm": "alpha", "releases": ["web"]}]
    ///     },
    ///     "swarms": [{
    ///         "swarm": "alpha",
    ///         "cluster_id": "C1",
    ///         "releases": [
    ///             {"name": "web", "owner": "cd/default/shop:release/web"},
    ///             {"name": "blog", "owner": "cd/default/blog:release/blog"}
    ///         ]
    ///     }]
    /// }"#)?;
    /// assert_eq!(snapshot.swarms[0].releases.len(), 2);
    /// assert_eq!(plan(&snapshot)?.deletions[0].release, "blog");
    ///
    /// // A misspelt field is an error with the path to it, never ignored.
    /// let err = Snapshot::from_json(
    ///     r#"{"policy": {"purge_volume": true}, "app_set": {"loaded": true}}"#,
    /// )
    /// .unwrap_err();
    /// assert!(matches!(&err, SnapshotError::Parse { path, .. } if path == "policy.purge_volume"));
    /// # Ok::<(), SnapshotError>(())
    /// ```
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
    /// [`Snapshot::from_json`] and [`plan()`](crate::plan()) run it; call
    /// it on a snapshot built in code to see the error before planning.
    pub fn validate(&self) -> Result<(), SnapshotError> {
        View::of(self).validate()
    }
}

/// What the operator asked for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[non_exhaustive]
pub struct Policy {
    /// The `<controller>` in `cd/<controller>/<application>` stamps.
    #[cfg_attr(feature = "schema", schemars(default = "default_controller"))]
    pub controller: String,
    /// Whether deleting a release also removes its stack's named volumes,
    /// on every node that can hold them. Off by default: a purge destroys
    /// data.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub purge_volumes: bool,
    /// Above this many deletions the whole sweep is held.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub max_deletions: Option<u64>,
    /// The grace period: a release is deleted only once it has been seen
    /// departed for at least this long. A duration with units (`"10m"`),
    /// or an integer of seconds, on input; written with units; absent is
    /// off.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "window::serialize"
    )]
    #[cfg_attr(
        feature = "schema",
        schemars(default, with = "Option<window::WindowSchema>")
    )]
    pub min_departed_for: Option<Duration>,
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
            min_departed_for: None,
        }
    }
}

impl Policy {
    /// A policy without a grace period. `controller` is checked when the
    /// snapshot is.
    pub fn new(
        controller: impl Into<String>,
        purge_volumes: bool,
        max_deletions: Option<u64>,
    ) -> Self {
        Policy {
            controller: controller.into(),
            purge_volumes,
            max_deletions,
            min_departed_for: None,
        }
    }

    /// With the grace period `min_departed_for` (`None`: off).
    pub fn with_min_departed_for(mut self, window: Option<Duration>) -> Self {
        self.min_departed_for = window;
        self
    }
}

/// `policy.min_departed_for` as JSON: a duration with units, or a whole
/// number of seconds, read by the one duration parser; zero, negative and
/// fractional numbers are refused, never read as "off".
pub(crate) mod window {
    use std::fmt;
    use std::time::Duration;

    use serde::de::{self, Deserializer, Visitor};
    use serde::Serializer;

    use crate::duration;

    pub(crate) fn serialize<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => serializer.serialize_str(&duration::show(*d)),
            None => serializer.serialize_none(),
        }
    }

    struct Window;

    impl Visitor<'_> for Window {
        type Value = Duration;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a duration such as \"10m\", or a whole number of seconds")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
            duration::parse(v).map_err(E::custom)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
            if v == 0 {
                return Err(E::custom(
                    "0 is zero; a duration must be more than zero (leave the field out for no grace period)",
                ));
            }
            Ok(Duration::from_secs(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
            match u64::try_from(v) {
                Ok(v) => self.visit_u64(v),
                Err(_) => Err(E::custom(format_args!(
                    "{v} is negative; a duration must be more than zero"
                ))),
            }
        }
    }

    /// Reads one present value.
    pub(crate) struct Given(pub(crate) Duration);

    impl<'de> de::Deserialize<'de> for Given {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(Window).map(Given)
        }
    }

    /// For `#[serde(default, deserialize_with = ...)]`: the field present;
    /// `null` is off, as for every other optional field.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        <Option<Given> as de::Deserialize>::deserialize(deserializer).map(|g| g.map(|g| g.0))
    }

    /// The schema of what is read: a duration string or whole seconds.
    #[cfg(feature = "schema")]
    pub(crate) struct WindowSchema;

    #[cfg(feature = "schema")]
    impl schemars::JsonSchema for WindowSchema {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "GracePeriod".into()
        }

        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({
                "description": "A duration with units (\"10m\", \"1h 30m\"), or a whole number of seconds; more than zero.",
                "anyOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "integer", "minimum": 1},
                ],
            })
        }
    }
}

/// The applications the controller is told to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[non_exhaustive]
pub struct AppSet {
    /// False when the app set could not be read completely. Required: a
    /// snapshot that forgot to say must not read as "loaded".
    pub loaded: bool,
    /// Every application, live or draining. Their names are unique.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub applications: Vec<Application>,
}

impl AppSet {
    /// An app set; `loaded` false holds the whole sweep.
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[non_exhaustive]
pub struct Application {
    /// Of the grammar [`is_application_name`] checks, the only names owner
    /// stamps carry.
    pub name: String,
    /// The destination swarm; `""` is the controller's own. Required: a
    /// destination left out must not read as "the local swarm".
    pub swarm: SwarmName,
    /// The releases it declares; `None` until it has reconciled once.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub releases: Option<Vec<String>>,
    /// Where it is in its life; `reconciled` when left out.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub state: AppState,
}

impl Application {
    /// An application in any state; `releases` is `None` until it has
    /// reconciled once.
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
        self.state.is_live()
    }

    /// Has said which releases it declares.
    pub fn has_reconciled(&self) -> bool {
        self.state.has_reconciled(self.releases.is_some())
    }
}

/// Where an application of the app set is in its life. An application
/// that has not reconciled, or is draining, holds its destination swarm:
/// until it says what it declares, anything there may be its.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum AppState {
    /// In the set, and its `releases` say what it declares (an application
    /// without `releases` counts as unreconciled).
    #[default]
    Reconciled,
    /// In the set but has not said yet which releases it declares.
    Unreconciled,
    /// Has left the set but is still syncing.
    Draining,
}

impl AppState {
    /// Still in the app set (draining ones have left it).
    pub(crate) fn is_live(self) -> bool {
        self != AppState::Draining
    }

    /// Has said which releases it declares (`declares`: it lists them).
    pub(crate) fn has_reconciled(self, declares: bool) -> bool {
        self == AppState::Reconciled && declares
    }
}

/// What one swarm holds, as its registry read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[non_exhaustive]
pub struct SwarmSnapshot {
    /// The name the registry resolved it by; `""` is the controller's own.
    pub swarm: SwarmName,
    /// The cluster id the swarm reported. Entries of one cluster id are one
    /// swarm to every rule; without one, the name is a cluster of its own.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub cluster_id: Option<String>,
    /// Set when the swarm could not be read; its releases are then unknown.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub error: Option<String>,
    /// Every release (stack with release records) on it; names unique.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub releases: Vec<ReleaseEntry>,
    /// The nodes the registry reached; `None` when it cannot reach nodes
    /// individually at all, `Some(vec![])` when it reaches none.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub nodes: Option<Vec<NodeEntry>>,
    /// The node count the swarm itself reports; `None` if unreadable.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub node_count: Option<u64>,
    /// The swarm's own node list (down nodes included), as its manager
    /// reports it; `None` when not read. With it, the plan names the nodes
    /// a purge does not reach instead of only counting them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub members: Option<Vec<NodeEntry>>,
    /// The stack the controller itself runs as on this swarm.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub self_stack: Option<String>,
    /// What uses what on the swarm (every service's spec references, the
    /// containers on each node reached), from which the plan spares an
    /// object another workload uses; `None` when not read (the sweep then
    /// checks it before each removal only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub usage: Option<Usage>,
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
            usage: None,
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[non_exhaustive]
pub struct ReleaseEntry {
    /// The release (stack) name.
    pub name: String,
    /// The `com.swarmcli.owner` stamp of its newest record, if any.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub owner: Option<String>,
    /// Every revision of its release records (config id and version),
    /// when read: what a saved plan proves unchanged before it deletes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub records: Option<Vec<ObjectVersion>>,
    /// The objects of its stack, when listed: what its deletion removes.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub objects: Option<StackObjects>,
    /// When it was first seen departed (kept by the driver between
    /// sweeps); absent counts as "now", so its grace period starts over.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub departed_since: Option<UnixTime>,
}

impl ReleaseEntry {
    /// A release with its owner stamp (`None`: unstamped), and nothing
    /// else observed.
    pub fn new(name: impl Into<String>, owner: Option<String>) -> Self {
        ReleaseEntry {
            name: name.into(),
            owner,
            records: None,
            objects: None,
            departed_since: None,
        }
    }

    /// First seen departed at `since`.
    pub fn with_departed_since(mut self, since: UnixTime) -> Self {
        self.departed_since = Some(since);
        self
    }

    /// With the revisions of its release records.
    pub fn with_records(mut self, mut records: Vec<ObjectVersion>) -> Self {
        records.sort();
        self.records = Some(records);
        self
    }

    /// With the objects of its stack.
    pub fn with_objects(mut self, objects: StackObjects) -> Self {
        self.objects = Some(objects.sorted());
        self
    }
}

/// One swarm node the registry reached.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[non_exhaustive]
pub struct NodeEntry {
    /// The swarm node id: the key.
    pub id: String,
    /// For people; not unique.
    #[cfg_attr(feature = "schema", schemars(default))]
    pub hostname: String,
}

impl NodeEntry {
    /// A node; `hostname` may be empty.
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

/// Reads exactly one JSON value of type `T` from `text`, once its values
/// are counted within the bound ([`crate::bound`]).
///
/// A `serde_json::Deserializer` stops after the first value, and only
/// `end()` refuses what follows: without it `{..} {..}` or `{..} garbage`
/// would read as the first document alone, whatever the rest said.
///
/// Tracking the path to every value costs as much as the parse itself, and
/// only an error needs it: a text that parses is read without it, and one
/// that does not is read again by [`explain`], whose error is the one
/// returned. Both reads are of the same type through the same
/// deserializer, so they accept exactly the same texts.
pub(crate) fn one_json_document<T: de::DeserializeOwned>(text: &str) -> Result<T, SnapshotError> {
    check_values(text)?;
    let mut de = serde_json::Deserializer::from_str(text);
    if let Ok(value) = T::deserialize(&mut de) {
        if de.end().is_ok() {
            return Ok(value);
        }
    }
    explain(text)
}

/// [`one_json_document`] with the path to the value it stopped at.
fn explain<T: de::DeserializeOwned>(text: &str) -> Result<T, SnapshotError> {
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
    ObjectVersion => ObjectVersionWire, "an object version";
    ServiceEntry => ServiceEntryWire, "a service object";
    NodeVolumes => NodeVolumesWire, "a node's volumes object";
    StackObjects => StackObjectsWire, "a stack objects object";
    Usage => UsageWire, "a usage object";
    ServiceUse => ServiceUseWire, "a service use object";
    ContainerUse => ContainerUseWire, "a container use object";
    NodeContainers => NodeContainersWire, "a node's containers object";
}

// A network, secret or config: an object `{"name", "id"}`, or a bare name
// (what snapshots listed before ids were read), never anything else.
impl<'de> Deserialize<'de> for ObjectRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameOrMap;
        impl<'de> Visitor<'de> for NameOrMap {
            type Value = ObjectRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object name, or an object with a name and an id")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<ObjectRef, E> {
                Ok(ObjectRef::named(name))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjectRef, A::Error> {
                wire::ObjectRefWire::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_any(NameOrMap)
    }
}

/// The input schema of each struct. `remote` makes serde check that every
/// field of the public struct is here with its type, so the two cannot
/// drift apart.
mod wire {
    use serde::Deserialize;

    use std::time::Duration;

    use super::{
        default_controller, AppSet, AppState, Application, NodeEntry, Policy, ReleaseEntry,
        Snapshot, SwarmSnapshot,
    };
    use crate::format::FormatVersion;
    use crate::objects::{NodeVolumes, ObjectRef, ObjectVersion, ServiceEntry, StackObjects};
    use crate::refs::SwarmName;
    use crate::time::UnixTime;
    use crate::usage::{ContainerUse, NodeContainers, ServiceUse, Usage};

    #[derive(Deserialize)]
    #[serde(remote = "ObjectRef", deny_unknown_fields)]
    pub(super) struct ObjectRefWire {
        name: String,
        #[serde(default)]
        id: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "ServiceUse", deny_unknown_fields)]
    pub(super) struct ServiceUseWire {
        id: String,
        name: String,
        #[serde(default)]
        stack: Option<String>,
        #[serde(default)]
        volumes: Vec<String>,
        #[serde(default)]
        networks: Vec<String>,
        #[serde(default)]
        secrets: Vec<String>,
        #[serde(default)]
        configs: Vec<String>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "ContainerUse", deny_unknown_fields)]
    pub(super) struct ContainerUseWire {
        id: String,
        name: String,
        #[serde(default)]
        service: Option<String>,
        #[serde(default)]
        stack: Option<String>,
        #[serde(default)]
        volumes: Vec<String>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "NodeContainers", deny_unknown_fields)]
    pub(super) struct NodeContainersWire {
        node: String,
        #[serde(default)]
        containers: Vec<ContainerUse>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "Usage", deny_unknown_fields)]
    pub(super) struct UsageWire {
        #[serde(default)]
        services: Vec<ServiceUse>,
        #[serde(default)]
        containers: Vec<NodeContainers>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "ObjectVersion", deny_unknown_fields)]
    pub(super) struct ObjectVersionWire {
        id: String,
        version: u64,
    }

    #[derive(Deserialize)]
    #[serde(remote = "ServiceEntry", deny_unknown_fields)]
    pub(super) struct ServiceEntryWire {
        id: String,
        name: String,
        version: u64,
        #[serde(default)]
        keep: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "NodeVolumes", deny_unknown_fields)]
    pub(super) struct NodeVolumesWire {
        node: String,
        #[serde(default)]
        volumes: Vec<String>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "StackObjects", deny_unknown_fields)]
    pub(super) struct StackObjectsWire {
        #[serde(default)]
        services: Vec<ServiceEntry>,
        #[serde(default)]
        networks: Vec<ObjectRef>,
        #[serde(default)]
        secrets: Vec<ObjectRef>,
        #[serde(default)]
        configs: Vec<ObjectRef>,
        #[serde(default)]
        volumes: Option<Vec<NodeVolumes>>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "Snapshot", deny_unknown_fields)]
    pub(super) struct SnapshotWire {
        #[serde(default)]
        format_version: FormatVersion,
        #[serde(default)]
        policy: Policy,
        app_set: AppSet,
        #[serde(default)]
        swarms: Vec<SwarmSnapshot>,
        #[serde(default)]
        now: Option<UnixTime>,
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
        #[serde(default, deserialize_with = "super::window::deserialize")]
        min_departed_for: Option<Duration>,
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
        #[serde(default)]
        usage: Option<Usage>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "ReleaseEntry", deny_unknown_fields)]
    pub(super) struct ReleaseEntryWire {
        name: String,
        #[serde(default)]
        owner: Option<String>,
        #[serde(default)]
        records: Option<Vec<ObjectVersion>>,
        #[serde(default)]
        objects: Option<StackObjects>,
        #[serde(default)]
        departed_since: Option<UnixTime>,
    }

    #[derive(Deserialize)]
    #[serde(remote = "NodeEntry", deny_unknown_fields)]
    pub(super) struct NodeEntryWire {
        id: String,
        #[serde(default)]
        hostname: String,
    }
}

/// A snapshot's contents by reference: what validation and the planner
/// read, whether the snapshot is an owned [`Snapshot`] or was parsed
/// borrowing from the JSON text ([`SnapshotDoc`]). Names are never copied
/// to build one; each rule reads a snapshot in this one form, so the two
/// ways in cannot be judged differently.
pub(crate) struct View<'a> {
    pub(crate) controller: &'a str,
    pub(crate) purge_volumes: bool,
    pub(crate) max_deletions: Option<u64>,
    pub(crate) min_departed_for: Option<Duration>,
    pub(crate) now: Option<UnixTime>,
    pub(crate) loaded: bool,
    pub(crate) applications: Vec<AppView<'a>>,
    pub(crate) swarms: Vec<SwarmView<'a>>,
}

pub(crate) struct AppView<'a> {
    pub(crate) name: &'a str,
    pub(crate) swarm: &'a str,
    pub(crate) releases: Option<Names<'a>>,
    pub(crate) state: AppState,
}

impl AppView<'_> {
    /// See [`Application::is_live`].
    pub(crate) fn is_live(&self) -> bool {
        self.state.is_live()
    }

    /// See [`Application::has_reconciled`].
    pub(crate) fn has_reconciled(&self) -> bool {
        self.state.has_reconciled(self.releases.is_some())
    }
}

pub(crate) struct SwarmView<'a> {
    pub(crate) swarm: &'a str,
    pub(crate) cluster_id: Option<&'a str>,
    pub(crate) error: Option<&'a str>,
    pub(crate) releases: Releases<'a>,
    pub(crate) nodes: Option<Vec<NodeView<'a>>>,
    pub(crate) node_count: Option<u64>,
    pub(crate) members: Option<Vec<NodeView<'a>>>,
    pub(crate) self_stack: Option<&'a str>,
    pub(crate) usage: Option<&'a Usage>,
}

#[derive(Clone, Copy)]
pub(crate) struct NodeView<'a> {
    pub(crate) id: &'a str,
    pub(crate) hostname: &'a str,
}

/// A list of names (an application's declared releases), read in place.
#[derive(Clone, Copy)]
pub(crate) enum Names<'a> {
    Owned(&'a [String]),
    Parsed(&'a [Text<'a>]),
}

impl<'a> Names<'a> {
    pub(crate) fn len(self) -> usize {
        match self {
            Names::Owned(list) => list.len(),
            Names::Parsed(list) => list.len(),
        }
    }

    pub(crate) fn iter(self) -> impl Iterator<Item = &'a str> + Clone {
        let (owned, parsed): (&'a [String], &'a [Text<'a>]) = match self {
            Names::Owned(list) => (list, &[]),
            Names::Parsed(list) => (&[], list),
        };
        owned
            .iter()
            .map(String::as_str)
            .chain(parsed.iter().map(Text::as_str))
    }
}

/// A swarm's releases as `(name, owner stamp)`, read in place: a million
/// releases are not copied into a second list to be looked at once.
#[derive(Clone, Copy)]
pub(crate) enum Releases<'a> {
    Owned(&'a [ReleaseEntry]),
    Parsed(&'a [Obj<ReleaseDoc<'a>>]),
}

impl<'a> Releases<'a> {
    pub(crate) fn len(self) -> usize {
        match self {
            Releases::Owned(list) => list.len(),
            Releases::Parsed(list) => list.len(),
        }
    }

    pub(crate) fn iter(self) -> impl Iterator<Item = ReleaseView<'a>> + Clone {
        let (owned, parsed): (&'a [ReleaseEntry], &'a [Obj<ReleaseDoc<'a>>]) = match self {
            Releases::Owned(list) => (list, &[]),
            Releases::Parsed(list) => (&[], list),
        };
        owned
            .iter()
            .map(|r| ReleaseView {
                name: r.name.as_str(),
                owner: r.owner.as_deref(),
                facts: Facts {
                    records: r.records.as_deref(),
                    objects: r.objects.as_ref(),
                },
                departed_since: r.departed_since,
            })
            .chain(parsed.iter().map(|r| ReleaseView {
                name: r.0.name.as_str(),
                owner: r.0.owner.as_ref().map(Text::as_str),
                facts: Facts {
                    records: r.0.records.as_deref(),
                    objects: r.0.objects.as_ref(),
                },
                departed_since: r.0.departed_since,
            }))
    }
}

/// One release of a swarm entry, read in place.
#[derive(Clone, Copy)]
pub(crate) struct ReleaseView<'a> {
    pub(crate) name: &'a str,
    pub(crate) owner: Option<&'a str>,
    pub(crate) facts: Facts<'a>,
    pub(crate) departed_since: Option<UnixTime>,
}

/// What was observed of a release beside its stamp (see
/// [`crate::objects`]), by reference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Facts<'a> {
    pub(crate) records: Option<&'a [ObjectVersion]>,
    pub(crate) objects: Option<&'a StackObjects>,
}

impl Facts<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.records.is_none() && self.objects.is_none()
    }
}

impl<'a> View<'a> {
    pub(crate) fn of(snapshot: &'a Snapshot) -> Self {
        let nodes = |list: &'a Option<Vec<NodeEntry>>| {
            list.as_ref().map(|l| {
                l.iter()
                    .map(|n| NodeView {
                        id: &n.id,
                        hostname: &n.hostname,
                    })
                    .collect()
            })
        };
        View {
            controller: &snapshot.policy.controller,
            purge_volumes: snapshot.policy.purge_volumes,
            max_deletions: snapshot.policy.max_deletions,
            min_departed_for: snapshot.policy.min_departed_for,
            now: snapshot.now,
            loaded: snapshot.app_set.loaded,
            applications: snapshot
                .app_set
                .applications
                .iter()
                .map(|a| AppView {
                    name: &a.name,
                    swarm: a.swarm.as_str(),
                    releases: a.releases.as_deref().map(Names::Owned),
                    state: a.state,
                })
                .collect(),
            swarms: snapshot
                .swarms
                .iter()
                .map(|s| SwarmView {
                    swarm: s.swarm.as_str(),
                    cluster_id: s.cluster_id.as_deref(),
                    error: s.error.as_deref(),
                    releases: Releases::Owned(&s.releases),
                    nodes: nodes(&s.nodes),
                    node_count: s.node_count,
                    members: nodes(&s.members),
                    self_stack: s.self_stack.as_deref(),
                    usage: s.usage.as_ref(),
                })
                .collect(),
        }
    }

    pub(crate) fn of_doc(doc: &'a SnapshotDoc<'_>) -> Self {
        let nodes = |list: &'a Option<Vec<Obj<NodeDoc<'_>>>>| {
            list.as_ref().map(|l| {
                l.iter()
                    .map(|n| NodeView {
                        id: n.0.id.as_str(),
                        hostname: n.0.hostname.as_str(),
                    })
                    .collect()
            })
        };
        let text = |t: &'a Option<Text<'_>>| t.as_ref().map(Text::as_str);
        View {
            controller: doc.policy.0.controller.as_str(),
            purge_volumes: doc.policy.0.purge_volumes,
            max_deletions: doc.policy.0.max_deletions,
            min_departed_for: doc.policy.0.min_departed_for,
            now: doc.now,
            loaded: doc.app_set.0.loaded,
            applications: doc
                .app_set
                .0
                .applications
                .iter()
                .map(|a| AppView {
                    name: a.0.name.as_str(),
                    swarm: a.0.swarm.as_str(),
                    releases: a.0.releases.as_deref().map(Names::Parsed),
                    state: a.0.state,
                })
                .collect(),
            swarms: doc
                .swarms
                .iter()
                .map(|s| SwarmView {
                    swarm: s.0.swarm.as_str(),
                    cluster_id: text(&s.0.cluster_id),
                    error: text(&s.0.error),
                    releases: Releases::Parsed(&s.0.releases),
                    nodes: nodes(&s.0.nodes),
                    node_count: s.0.node_count,
                    members: nodes(&s.0.members),
                    self_stack: text(&s.0.self_stack),
                    usage: s.0.usage.as_ref(),
                })
                .collect(),
        }
    }

    /// See [`Snapshot::validate`]. Each list is checked in order and the
    /// first fault found is the one reported.
    pub(crate) fn validate(&self) -> Result<(), SnapshotError> {
        ControllerId::new(self.controller)?;
        let mut apps = HashSet::with_capacity(self.applications.len());
        for (i, app) in self.applications.iter().enumerate() {
            if app.name.is_empty() {
                return Err(SnapshotError::EmptyName {
                    field: format!("app_set.applications[{i}].name"),
                });
            }
            if !is_application_name(app.name) {
                return Err(SnapshotError::InvalidApplicationName {
                    field: format!("app_set.applications[{i}].name"),
                    name: app.name.to_owned(),
                });
            }
            if !apps.insert(app.name) {
                return Err(SnapshotError::DuplicateApplication {
                    name: app.name.to_owned(),
                });
            }
            for (j, release) in app.releases.into_iter().flat_map(Names::iter).enumerate() {
                if release.is_empty() {
                    return Err(SnapshotError::EmptyName {
                        field: format!("app_set.applications[{i}].releases[{j}]"),
                    });
                }
            }
        }
        let mut swarms = HashSet::with_capacity(self.swarms.len());
        for (i, swarm) in self.swarms.iter().enumerate() {
            if !swarms.insert(swarm.swarm) {
                return Err(SnapshotError::DuplicateSwarm {
                    swarm: swarm.swarm.into(),
                });
            }
            unique_names(
                swarm.releases.iter().map(|r| r.name),
                swarm.releases.len(),
                |j| SnapshotError::EmptyName {
                    field: format!("swarms[{i}].releases[{j}].name"),
                },
                |name| SnapshotError::DuplicateRelease {
                    swarm: swarm.swarm.into(),
                    release: name.to_owned(),
                },
            )?;
            for (field, list) in [("nodes", &swarm.nodes), ("members", &swarm.members)] {
                let list = list.as_deref().unwrap_or_default();
                unique_names(
                    list.iter().map(|n| n.id),
                    list.len(),
                    |j| SnapshotError::EmptyName {
                        field: format!("swarms[{i}].{field}[{j}].id"),
                    },
                    |id| SnapshotError::DuplicateNode {
                        swarm: swarm.swarm.into(),
                        node: id.to_owned(),
                    },
                )?;
            }
        }
        Ok(())
    }
}

/// Checks that `names` holds no empty name and no name twice; the error
/// is about the first offending entry in list order.
fn unique_names<'a, I>(
    names: I,
    len: usize,
    empty: impl FnOnce(usize) -> SnapshotError,
    twice: impl FnOnce(&str) -> SnapshotError,
) -> Result<(), SnapshotError>
where
    I: Iterator<Item = &'a str> + Clone,
{
    // A gathered snapshot lists each swarm's releases sorted by name, and a
    // strictly ascending list of non-empty names holds neither fault: one
    // pass then instead of a set of every name.
    let mut previous: Option<&str> = None;
    let ascending = names.clone().all(|name| {
        let ok = !name.is_empty() && previous.is_none_or(|p| p < name);
        previous = Some(name);
        ok
    });
    if ascending {
        return Ok(());
    }
    let mut seen = HashSet::with_capacity(len);
    for (j, name) in names.enumerate() {
        if name.is_empty() {
            return Err(empty(j));
        }
        if !seen.insert(name) {
            return Err(twice(name));
        }
    }
    Ok(())
}

/// A snapshot parsed in place from its JSON text (see [`SnapshotDoc::parse`]).
/// The same schema as the owned types' `wire` twins: the same fields,
/// defaults and refusals, every struct read only from an object.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SnapshotDoc<'a> {
    // Read for its check alone: only the one known version parses.
    #[serde(default, rename = "format_version")]
    _format_version: FormatVersion,
    #[serde(default, borrow)]
    policy: Obj<PolicyDoc<'a>>,
    #[serde(borrow)]
    app_set: Obj<AppSetDoc<'a>>,
    #[serde(default, borrow)]
    swarms: Vec<Obj<SwarmDoc<'a>>>,
    #[serde(default)]
    now: Option<UnixTime>,
}

impl<'a> SnapshotDoc<'a> {
    /// Parses `text` without copying its names. `None` when it does not
    /// parse: [`Snapshot::from_json`] then reads it again, for the error
    /// with the path to where it went wrong. The schema here is the one
    /// [`Snapshot::from_json`] reads, so a text it refuses is refused here
    /// too and is never planned.
    pub(crate) fn parse(text: &'a str) -> Option<Self> {
        check_values(text).ok()?;
        let mut de = serde_json::Deserializer::from_str(text);
        let doc = SnapshotDoc::deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(doc)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyDoc<'a> {
    #[serde(default = "Text::default_controller", borrow)]
    controller: Text<'a>,
    #[serde(default)]
    purge_volumes: bool,
    #[serde(default)]
    max_deletions: Option<u64>,
    #[serde(default, deserialize_with = "window::deserialize")]
    min_departed_for: Option<Duration>,
}

impl Default for PolicyDoc<'_> {
    fn default() -> Self {
        PolicyDoc {
            controller: Text::default_controller(),
            purge_volumes: false,
            max_deletions: None,
            min_departed_for: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AppSetDoc<'a> {
    loaded: bool,
    #[serde(default, borrow)]
    applications: Vec<Obj<ApplicationDoc<'a>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApplicationDoc<'a> {
    #[serde(borrow)]
    name: Text<'a>,
    #[serde(borrow)]
    swarm: Text<'a>,
    #[serde(default, borrow)]
    releases: Option<Vec<Text<'a>>>,
    #[serde(default)]
    state: AppState,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SwarmDoc<'a> {
    #[serde(borrow)]
    swarm: Text<'a>,
    #[serde(default, borrow)]
    cluster_id: Option<Text<'a>>,
    #[serde(default, borrow)]
    error: Option<Text<'a>>,
    #[serde(default, borrow)]
    releases: Vec<Obj<ReleaseDoc<'a>>>,
    #[serde(default, borrow)]
    nodes: Option<Vec<Obj<NodeDoc<'a>>>>,
    #[serde(default)]
    node_count: Option<u64>,
    #[serde(default, borrow)]
    members: Option<Vec<Obj<NodeDoc<'a>>>>,
    #[serde(default, borrow)]
    self_stack: Option<Text<'a>>,
    // Small beside the releases: read owned.
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReleaseDoc<'a> {
    #[serde(borrow)]
    name: Text<'a>,
    #[serde(default, borrow)]
    owner: Option<Text<'a>>,
    // Small beside the names, and only in gathered snapshots: read owned.
    #[serde(default)]
    records: Option<Vec<ObjectVersion>>,
    #[serde(default)]
    objects: Option<StackObjects>,
    #[serde(default)]
    departed_since: Option<UnixTime>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeDoc<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(default, borrow)]
    hostname: Text<'a>,
}

/// A JSON string, borrowed from the text unless escapes made it differ
/// from it. Reads exactly what a `String` field reads.
#[derive(Default)]
pub(crate) struct Text<'a>(Cow<'a, str>);

impl Text<'_> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    fn default_controller() -> Self {
        Text(Cow::Borrowed("default"))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        deserializer.deserialize_string(TextVisitor).map(Text)
    }
}

/// `T`, read only from a JSON object: the in-place twin of
/// `from_map_only!`, for the same reason (a struct written as an array
/// would bind values by position, past every field name).
#[derive(Default)]
pub(crate) struct Obj<T>(pub(crate) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapOnly<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for MapOnly<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_map(MapOnly(PhantomData)).map(Obj)
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
}
