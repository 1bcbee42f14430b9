//! The snapshot's types: the one statement of its schema.
//!
//! Each struct states its JSON once, on its own fields: names, which are
//! optional and their defaults, what is refused. The derived reader and
//! writer (`remote = "Self"`) are wrapped in `read` so that every struct is
//! read only from a JSON object, and the JSON Schema is derived from the
//! same attributes. Each is generic over how it holds names
//! ([`SnapshotStr`]): `String`, the default, for the public types, and the
//! JSON text itself for the in-place reader that `plan --snapshot` uses.

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[cfg(feature = "schema")]
use super::text::SchemaStr;
use super::text::{ReadStr, SnapshotStr, WriteStr};
use super::window;
use super::SnapshotError;
use crate::deletion_window::DeletionWindow;
use crate::format::FormatVersion;
use crate::objects::{ObjectVersion, StackObjects};
#[cfg(doc)]
use crate::owner::is_application_name;
use crate::reads::{FailedRead, UnreadNode};
use crate::record::RevisionRead;
use crate::refs::SwarmName;
use crate::time::UnixTime;
use crate::usage::Usage;

/// A whole snapshot: the policy, the app set and what each swarm holds.
///
/// The input of [`plan()`](crate::plan()). Build one in code with
/// [`Snapshot::new`] and the constructors of its parts, or read one with
/// [`Snapshot::from_json`]. A driver that gathers one from live swarms is
/// `sweep-runner`'s `gather`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[serde(bound(serialize = "S: WriteStr", deserialize = "S: ReadStr<'de>"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(bound = "S: SchemaStr"))]
// The schema's description: the first paragraph, without the Rust.
#[cfg_attr(
    feature = "schema",
    schemars(description = "A whole snapshot: the policy, the app set and what each swarm holds.")
)]
#[non_exhaustive]
pub struct Snapshot<S: SnapshotStr = String> {
    /// Optional on input (a snapshot without it is of version 1).
    #[serde(default)]
    pub format_version: FormatVersion,
    /// What the operator asked for; optional, as is each of its fields.
    #[serde(default)]
    pub policy: Policy<S>,
    /// The applications the controller is told to run. Required.
    pub app_set: AppSet<S>,
    /// What each swarm the registry resolves holds, one entry per name.
    #[serde(default, deserialize_with = "super::read::swarms")]
    #[cfg_attr(feature = "schema", schemars(with = "Vec<SwarmSnapshot<S>>"))]
    pub swarms: Vec<SwarmSnapshot<S>>,
    /// When the snapshot was gathered: the clock the grace period
    /// (`policy.min_departed_for`) is measured by. Without it, a policy
    /// with a grace period deletes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
        let snapshot: Snapshot = super::read::one_json_document(text)?;
        snapshot.validate()?;
        Ok(snapshot)
    }

    /// Renders the snapshot as the JSON [`Snapshot::from_json`] reads.
    pub fn to_json_pretty(&self) -> String {
        // Serializing plain structs of strings, numbers and options cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl<S: SnapshotStr> Snapshot<S> {
    /// Whether planning it needs the time it was gathered at (`now`): a
    /// grace period measures by it, and deletion windows are judged at it.
    /// Without it, neither lets anything be deleted.
    pub fn needs_time(&self) -> bool {
        self.policy.min_departed_for.is_some()
            || !self.policy.windows.is_empty()
            || self.swarms.iter().any(|s| !s.windows.is_empty())
    }
}

/// What the operator asked for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[serde(bound(serialize = "S: WriteStr", deserialize = "S: ReadStr<'de>"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(bound = "S: SchemaStr"))]
#[non_exhaustive]
pub struct Policy<S: SnapshotStr = String> {
    /// The `<controller>` in `cd/<controller>/<application>` stamps.
    #[serde(default = "S::default_controller")]
    pub controller: S,
    /// Whether deleting a release also removes its stack's named volumes,
    /// on every node that can hold them. Off by default: a purge destroys
    /// data.
    #[serde(default)]
    pub purge_volumes: bool,
    /// Above this many deletions the whole sweep is held.
    #[serde(default)]
    pub max_deletions: Option<u64>,
    /// The grace period: a release is deleted only once it has been seen
    /// departed for at least this long. A duration with units (`"10m"`),
    /// or an integer of seconds, on input; written with units; absent is
    /// off.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "window::serialize",
        deserialize_with = "window::deserialize"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<window::WindowSchema>"))]
    pub min_departed_for: Option<Duration>,
    /// Whether the sweep removes the objects live releases dropped from
    /// their charts (the resource rule), for the applications that opted
    /// in. Off by default.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prune_resources: bool,
    /// When deletions may happen, on every swarm (`--window`): a deletion
    /// must pass these and its swarm's own (`SwarmSnapshot::windows`).
    /// Empty (and left out) is always.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<DeletionWindow>,
}

impl<S: SnapshotStr> Default for Policy<S> {
    fn default() -> Self {
        Policy {
            controller: S::default_controller(),
            purge_volumes: false,
            max_deletions: None,
            min_departed_for: None,
            prune_resources: false,
            windows: Vec::new(),
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
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
            prune_resources: false,
            windows: Vec::new(),
        }
    }

    /// With the deletion windows of every swarm.
    pub fn with_windows(mut self, windows: Vec<DeletionWindow>) -> Self {
        self.windows = windows;
        self
    }

    /// With the grace period `min_departed_for` (`None`: off).
    pub fn with_min_departed_for(mut self, window: Option<Duration>) -> Self {
        self.min_departed_for = window;
        self
    }

    /// With the resource rule on or off.
    pub fn with_prune_resources(mut self, prune: bool) -> Self {
        self.prune_resources = prune;
        self
    }
}

/// The applications the controller is told to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[serde(bound(serialize = "S: WriteStr", deserialize = "S: ReadStr<'de>"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(bound = "S: SchemaStr"))]
#[non_exhaustive]
pub struct AppSet<S: SnapshotStr = String> {
    /// False when the app set could not be read completely. Required: a
    /// snapshot that forgot to say must not read as "loaded".
    pub loaded: bool,
    /// Every application, live or draining. Their names are unique.
    #[serde(default)]
    pub applications: Vec<Application<S>>,
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
        super::read::one_json_document(text)
    }
}

/// One application of the app set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[serde(bound(serialize = "S: WriteStr", deserialize = "S: ReadStr<'de>"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(bound = "S: SchemaStr"))]
#[non_exhaustive]
pub struct Application<S: SnapshotStr = String> {
    /// Of the grammar [`is_application_name`] checks, the only names owner
    /// stamps carry.
    pub name: S,
    /// The destination swarm; `""` is the controller's own. Required: a
    /// destination left out must not read as "the local swarm".
    pub swarm: S::Swarm,
    /// The releases it declares; `None` until it has reconciled once.
    #[serde(default)]
    pub releases: Option<Vec<S>>,
    /// Where it is in its life; `reconciled` when left out.
    #[serde(default)]
    pub state: AppState,
    /// Whether the objects its releases dropped from their charts may be
    /// removed (the resource rule, with `policy.prune_resources`). Off by
    /// default: each application opts in.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prune_resources: bool,
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
            prune_resources: false,
        }
    }

    /// Opted in (or out) of the resource rule.
    pub fn with_prune_resources(mut self, prune: bool) -> Self {
        self.prune_resources = prune;
        self
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
}

impl<S: SnapshotStr> Application<S> {
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[serde(bound(serialize = "S: WriteStr", deserialize = "S: ReadStr<'de>"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(bound = "S: SchemaStr"))]
#[non_exhaustive]
pub struct SwarmSnapshot<S: SnapshotStr = String> {
    /// The name the registry resolved it by; `""` is the controller's own.
    pub swarm: S::Swarm,
    /// The cluster id the swarm reported. Entries of one cluster id are one
    /// swarm to every rule; without one, the name is a cluster of its own.
    #[serde(default)]
    pub cluster_id: Option<S>,
    /// Set when the swarm could not be read; its releases are then unknown.
    #[serde(default)]
    pub error: Option<S>,
    /// Every release (stack with release records) on it; names unique.
    #[serde(default)]
    pub releases: Vec<ReleaseEntry<S>>,
    /// The daemons the registry reached, each by the node id it answered
    /// with; `None` when it cannot reach nodes individually at all,
    /// `Some(vec![])` when it reaches none. Only those on `members` count
    /// as the swarm's nodes (`plan::reads`): another swarm's daemon
    /// configured as a node is never purged.
    #[serde(default)]
    pub nodes: Option<Vec<NodeEntry>>,
    /// The node count the swarm itself reports; `None` if unreadable.
    #[serde(default)]
    pub node_count: Option<u64>,
    /// The swarm's own node list (down nodes included), as its manager
    /// reports it; `None` when not read. With it, the plan names the nodes
    /// a purge does not reach instead of only counting them, and counts a
    /// reached daemon as a node only when its id is on it. A snapshot
    /// without it (and without a failed `members` read) is trusted as
    /// written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<Vec<NodeEntry>>,
    /// The stack the controller itself runs as on this swarm.
    #[serde(default)]
    pub self_stack: Option<S>,
    /// What uses what on the swarm (every service's spec references, the
    /// containers on each node reached), from which the plan spares an
    /// object another workload uses; `None` when not read (the sweep then
    /// checks it before each removal only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The listings that failed while the swarm was read, each with why.
    /// What each means is the planner's rule (`plan::reads`): without the
    /// records, the stacks, the services or the cluster id the swarm is
    /// not swept; without the node list no node counts as reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_reads: Vec<FailedRead>,
    /// Nodes of `nodes` whose daemon did not answer for its volumes or
    /// containers: they do not count as reached, and one of the swarm's
    /// own keeps a purge from ever being complete.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread_nodes: Vec<UnreadNode>,
    /// When deletions may happen on this swarm (the registry file's
    /// `windows`), besides the policy's: a deletion must pass both.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<DeletionWindow>,
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
            failed_reads: Vec::new(),
            unread_nodes: Vec::new(),
            windows: Vec::new(),
        }
    }

    /// With its own deletion windows.
    pub fn with_windows(mut self, windows: Vec<DeletionWindow>) -> Self {
        self.windows = windows;
        self
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[serde(bound(serialize = "S: WriteStr", deserialize = "S: ReadStr<'de>"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(bound = "S: SchemaStr"))]
#[non_exhaustive]
pub struct ReleaseEntry<S: SnapshotStr = String> {
    /// The release (stack) name.
    pub name: S,
    /// The `com.swarmcli.owner` stamp of its newest record, if any.
    #[serde(default)]
    pub owner: Option<S>,
    /// Every revision of its release records (config id and version),
    /// when read: what a saved plan proves unchanged before it deletes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<Vec<ObjectVersion>>,
    /// The objects of its stack, when listed: what its deletion removes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<StackObjects>,
    /// Every stored revision (release record) with its labels and, for the
    /// resource rule, what its data says; `None` when not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revisions: Option<Vec<RevisionRead>>,
    /// When it was first seen departed (kept by the driver between
    /// sweeps); absent counts as "now", so its grace period starts over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
            revisions: None,
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

    /// With its stored revisions, sorted by record name.
    pub fn with_revisions(mut self, mut revisions: Vec<RevisionRead>) -> Self {
        revisions.sort();
        self.revisions = Some(revisions);
        self
    }

    /// With the objects of its stack.
    pub fn with_objects(mut self, objects: StackObjects) -> Self {
        self.objects = Some(objects.sorted());
        self
    }
}

impl<S: SnapshotStr> ReleaseEntry<S> {
    /// What was observed of it beside its stamp, by reference.
    pub(crate) fn facts(&self) -> Facts<'_> {
        Facts {
            records: self.records.as_deref(),
            objects: self.objects.as_ref(),
            revisions: self.revisions.as_deref(),
        }
    }
}

/// What was observed of a release beside its stamp (see
/// [`crate::objects`]), by reference.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Facts<'a> {
    pub(crate) records: Option<&'a [ObjectVersion]>,
    pub(crate) objects: Option<&'a StackObjects>,
    pub(crate) revisions: Option<&'a [RevisionRead]>,
}

impl Facts<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.records.is_none() && self.objects.is_none() && self.revisions.is_none()
    }

    /// Whether two names of one cluster saw the same of a release, in
    /// whatever order each listed it: a snapshot's lists are in no order,
    /// and an order must not decide whether two views disagree.
    pub(crate) fn agrees_with(&self, other: &Facts<'_>) -> bool {
        fn both<T>(a: Option<T>, b: Option<T>, same: impl FnOnce(T, T) -> bool) -> bool {
            match (a, b) {
                (None, None) => true,
                (Some(a), Some(b)) => same(a, b),
                _ => false,
            }
        }
        both(self.records, other.records, same_items)
            && both(self.revisions, other.revisions, same_items)
            && both(self.objects, other.objects, |a, b| {
                same_items(&a.services, &b.services)
                    && same_items(&a.networks, &b.networks)
                    && same_items(&a.secrets, &b.secrets)
                    && same_items(&a.configs, &b.configs)
                    && both(a.volumes.as_deref(), b.volumes.as_deref(), |a, b| {
                        fn by_node(
                            list: &[crate::objects::NodeVolumes],
                        ) -> Vec<(&str, Vec<&String>)> {
                            let mut nodes: Vec<(&str, Vec<&String>)> = list
                                .iter()
                                .map(|n| {
                                    let mut names: Vec<&String> = n.volumes.iter().collect();
                                    names.sort_unstable();
                                    (n.node.as_str(), names)
                                })
                                .collect();
                            nodes.sort_unstable();
                            nodes
                        }
                        a.len() == b.len() && (a == b || by_node(a) == by_node(b))
                    })
            })
    }
}

/// Whether `a` and `b` hold the same items, counted, in any order.
fn same_items<T: Ord>(a: &[T], b: &[T]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a == b {
        return true;
    }
    fn sorted<T: Ord>(list: &[T]) -> Vec<&T> {
        let mut items: Vec<&T> = list.iter().collect();
        items.sort_unstable();
        items
    }
    sorted(a) == sorted(b)
}

/// One swarm node the registry reached.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct NodeEntry {
    /// The swarm node id: the key.
    pub id: String,
    /// For people; not unique.
    #[serde(default)]
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
