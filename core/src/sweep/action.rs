//! Actions: what the sweep asks its driver to do, as plain data.
//!
//! An action names everything the driver needs (swarm-qualified release,
//! application, node, volume) so that a driver never has to look anything
//! up in the plan, and never reaches a different release by a bare name.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::names::named_enum;
use crate::objects::ObjectRef;
use crate::refs::{ReleaseRef, SwarmName};
use crate::snapshot::NodeEntry;

pub use crate::objects::STACK_LABEL;

/// The name reports give the manager when the registry cannot reach nodes
/// individually.
pub const MANAGER: &str = "(manager)";

/// The label filter that finds a release's leftovers: `com.docker.stack.namespace=<release>`.
pub fn label_filter(release: &str) -> String {
    format!("{STACK_LABEL}={release}")
}

/// Identifies one outstanding action; hand it back with its outcome.
///
/// A sweep numbers its actions from 0 in the order it hands them out, and
/// never reuses a number. An id is only meaningful to the sweep that
/// handed it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ActionId(
    /// The number, shown as `#<number>`.
    pub u64,
);

impl fmt::Display for ActionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// The release an action concerns, and the application that owned it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub struct Target {
    /// The release, qualified by its swarm: a driver acts on this swarm
    /// only, never on a release of the same name elsewhere.
    pub release: ReleaseRef,
    /// The application the plan found it stamped for, which the re-read
    /// before each destructive step checks again.
    pub application: String,
    /// Every name of the release's cluster, its own swarm among them,
    /// sorted: the re-read of its records asks each, and a node the plan
    /// reached under any of them is reached under that name again. Carried
    /// by every action, so that a driver needs nothing but the action and
    /// its registry.
    pub names: Vec<SwarmName>,
    /// The release stays: the action removes only objects it dropped from
    /// its chart (the plan's `dropped`), never the release. For what a
    /// driver says in its log; the objects are named in the action.
    pub live: bool,
}

impl Target {
    /// The target `release`, owned by `application`, on a cluster known
    /// by its swarm's name alone.
    pub fn new(release: ReleaseRef, application: impl Into<String>) -> Self {
        let names = vec![release.swarm.clone()];
        Target {
            release,
            application: application.into(),
            names,
            live: false,
        }
    }

    /// The same target, of a release that stays: only what it dropped goes.
    pub fn live(mut self) -> Self {
        self.live = true;
        self
    }

    /// The same target on a cluster of all `names` (its own swarm is kept
    /// among them), sorted and each once.
    pub fn with_names(mut self, names: impl IntoIterator<Item = SwarmName>) -> Self {
        self.names.extend(names);
        self.names.sort();
        self.names.dedup();
        self
    }
}

/// Where a volume action runs.
///
/// Not `#[non_exhaustive]`: a driver matches it exhaustively, so that a new
/// place cannot fall into a wildcard arm that removes volumes somewhere
/// else.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Where {
    /// One node the registry reached; the driver talks to that node's
    /// daemon, since only it sees the node's volumes.
    Node(NodeEntry),
    /// The manager the registry talks to: the plan's swarm has no node
    /// reach (`nodes: None`), so only the manager's volumes are seen.
    Manager,
}

impl Where {
    /// The node's id, `None` for the manager.
    pub fn node_id(&self) -> Option<&str> {
        match self {
            Where::Node(n) => Some(&n.id),
            Where::Manager => None,
        }
    }
}

/// Something the driver is to do. Run it, then report what happened with
/// [`Sweep::handle_outcome`](super::Sweep::handle_outcome) and this `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "an action that is never run and answered keeps the sweep from finishing"]
#[non_exhaustive]
pub struct Action {
    /// The id to answer it with.
    pub id: ActionId,
    /// What to do.
    pub kind: ActionKind,
}

/// What to do.
///
/// Not `#[non_exhaustive]`: a driver matches it exhaustively, so that an
/// action added here cannot fall into a wildcard arm unnoticed (and be
/// answered `Done` without being run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionKind {
    /// Read the release's records, as they are now, under each of the
    /// target's `names` (every name of its cluster, its own swarm among them);
    /// answer with [`Outcome::Stamps`](super::Outcome::Stamps), one
    /// [`StampRead`](super::StampRead) per name, raw and unjudged. Handed
    /// out before every step that destroys something (`before` says which):
    /// the plan was made from a snapshot, and a release restamped or
    /// removed since must not be deleted on the old snapshot's word. The
    /// sweep judges the answer with the planner's own ownership rule.
    ReadStamps {
        /// The release to read, with the names to read it under.
        target: Target,
        /// The destructive step the read stands before.
        before: Step,
    },
    /// Read what the release's stack holds now and what uses what on its
    /// swarm now: every service of the swarm with what its spec names,
    /// the containers at each of `at` that use a named volume or are
    /// attached to a network (`at` is empty when neither a volume nor a
    /// network is judged by the read), and the ids of the nodes the
    /// swarm's manager lists (a node joined since the plan was never
    /// read: see [`UsageRead::nodes`](super::UsageRead::nodes)). Answer with
    /// [`Outcome::Usage`](super::Outcome::Usage). Handed out before the
    /// services go, before the networks, secrets and configs go, and
    /// before the volumes go: another workload may have started to use an
    /// object since the plan, and a removal the engine allows (a volume
    /// nobody mounts at this moment) would still take its data. Handed out
    /// again before each retry of a network, secret, config or volume the
    /// engine refused "in use", one read for every retry due at that
    /// moment (for volumes, at every place the purge covers): another
    /// workload may have started to use it while it waited.
    ReadUsage {
        /// The release whose stack to read.
        target: Target,
        /// Where to list containers, sorted; empty for none.
        at: Vec<Where>,
    },
    /// Remove `objects`, the part `part` of the release's stack, and
    /// nothing else: the sweep decided them from the plan and the last
    /// [`ActionKind::ReadUsage`] (never the driver from labels).
    /// [`StackPart::Services`] first, alone; then [`StackPart::Tasks`]
    /// (their stopping: `objects` is empty and nothing is removed); the
    /// other parts once the tasks have stopped (see [`StackPart::next`]).
    /// A part the engine answers "in use" (its conflict answer) is
    /// [`Failure::InUse`](super::Failure::InUse): the sweep tries it again
    /// by its own retry policy, never the driver.
    RemoveStack {
        /// The release whose stack it is.
        target: Target,
        /// The part to remove.
        part: StackPart,
        /// The objects to remove, sorted: by id where known, else by name.
        objects: Vec<ObjectRef>,
    },
    /// List the volumes labelled [`STACK_LABEL`]`=<release>` at `at`;
    /// answer with [`Outcome::Volumes`](super::Outcome::Volumes).
    ListVolumes {
        /// The release whose volumes to list.
        target: Target,
        /// Where to list them.
        at: Where,
    },
    /// Remove one volume at `at`. A volume a container still uses is
    /// [`Failure::InUse`](super::Failure::InUse), tried again by the sweep.
    RemoveVolume {
        /// The release the volume belongs to.
        target: Target,
        /// Where the volume is.
        at: Where,
        /// The volume's name, as the listing there gave it.
        volume: String,
    },
    /// Delete the release's records (which carry its owner stamp). Handed
    /// out only after everything else of the release is gone.
    DeleteRecords {
        /// The release whose records to delete.
        target: Target,
    },
    /// List the releases on `swarm` again, after every release there has
    /// settled; answer with [`Outcome::Releases`](super::Outcome::Releases),
    /// the names the swarm lists (by their records, as for the snapshot).
    /// `checking` are the failed releases whose verdict it decides: one not
    /// listed gets its failed step tried once more, where `Gone` proves it
    /// had worked; so a driver listing by stacks instead is safe too.
    ListReleases {
        /// The swarm to list.
        swarm: SwarmName,
        /// The failed releases the listing decides about.
        checking: Vec<Target>,
    },
}

impl ActionKind {
    /// The kind as the report and errors name it.
    pub fn step(&self) -> Step {
        match self {
            ActionKind::ReadStamps { .. } => Step::ReadStamps,
            ActionKind::ReadUsage { .. } => Step::ReadUsage,
            ActionKind::RemoveStack { .. } => Step::RemoveStack,
            ActionKind::ListVolumes { .. } => Step::ListVolumes,
            ActionKind::RemoveVolume { .. } => Step::RemoveVolume,
            ActionKind::DeleteRecords { .. } => Step::DeleteRecords,
            ActionKind::ListReleases { .. } => Step::ListReleases,
        }
    }

    /// The release this action concerns; `None` for a re-listing, which
    /// concerns a swarm (its `checking` names the releases).
    pub fn target(&self) -> Option<&Target> {
        match self {
            ActionKind::ReadStamps { target, .. }
            | ActionKind::ReadUsage { target, .. }
            | ActionKind::RemoveStack { target, .. }
            | ActionKind::ListVolumes { target, .. }
            | ActionKind::RemoveVolume { target, .. }
            | ActionKind::DeleteRecords { target } => Some(target),
            ActionKind::ListReleases { .. } => None,
        }
    }

    /// The swarm the action runs on (for a [`ActionKind::ReadStamps`],
    /// the release's own name of the cluster; it reads under every name).
    pub fn swarm(&self) -> &SwarmName {
        match self {
            ActionKind::ListReleases { swarm, .. } => swarm,
            ActionKind::ReadStamps { target, .. }
            | ActionKind::ReadUsage { target, .. }
            | ActionKind::RemoveStack { target, .. }
            | ActionKind::ListVolumes { target, .. }
            | ActionKind::RemoveVolume { target, .. }
            | ActionKind::DeleteRecords { target } => &target.release.swarm,
        }
    }

    /// The stack part a [`ActionKind::RemoveStack`] removes.
    pub fn part(&self) -> Option<StackPart> {
        match self {
            ActionKind::RemoveStack { part, .. } => Some(*part),
            _ => None,
        }
    }

    /// Where a volume action runs; `None` for swarm-wide actions.
    pub fn at(&self) -> Option<&Where> {
        match self {
            ActionKind::ListVolumes { at, .. } | ActionKind::RemoveVolume { at, .. } => Some(at),
            _ => None,
        }
    }
}

named_enum! {
    /// The kinds of step, as reports name them: one per [`ActionKind`].
    ///
    /// Not `#[non_exhaustive]`, like [`ActionKind`]: a step is added
    /// together with its action, and a driver's exhaustive match must
    /// notice both.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Step {
        /// `read_stamps`: the re-read of a release's records before a
        /// destructive step ([`ActionKind::ReadStamps`]).
        ReadStamps = "read_stamps",
        /// `read_usage`: the re-read of what the stack holds and what
        /// uses it, before a removal ([`ActionKind::ReadUsage`]).
        ReadUsage = "read_usage",
        /// `remove_stack`: the removal of a stack part
        /// ([`ActionKind::RemoveStack`]).
        RemoveStack = "remove_stack",
        /// `list_volumes`: the listing of a release's volumes at one place
        /// ([`ActionKind::ListVolumes`]).
        ListVolumes = "list_volumes",
        /// `remove_volume`: the removal of one volume
        /// ([`ActionKind::RemoveVolume`]).
        RemoveVolume = "remove_volume",
        /// `delete_records`: the deletion of a release's records, last
        /// ([`ActionKind::DeleteRecords`]).
        DeleteRecords = "delete_records",
        /// `list_releases`: the re-listing of a swarm that may overturn a
        /// failure ([`ActionKind::ListReleases`]).
        ListReleases = "list_releases",
    }
}

named_enum! {
    /// The parts of a stack, in the order they can go. Services hold
    /// everything else (a secret or config a service mounts, a network its
    /// tasks are attached to), so they go first and alone. Their tasks then
    /// stop on their own; a node keeps its copy of the stack's networks
    /// until its task there has stopped, so the networks, secrets and
    /// configs go once every task has.
    ///
    /// Not `#[non_exhaustive]`: a backend matches it exhaustively, so that
    /// a part added here cannot fall into a wildcard arm that removes
    /// something else, or answers `Done` for what it never removed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum StackPart {
        /// `services`: the stack's services, first and alone.
        Services = "services",
        /// Not a removal: the services' tasks have stopped. The driver
        /// removes nothing and answers "in use" while a task of the stack
        /// still runs on a node that is up (a down node's tasks never
        /// report stopping). With objects (the services a live release
        /// dropped, whose stack keeps running), only those services'
        /// tasks count.
        Tasks = "tasks",
        /// `networks`: the stack's networks, once its tasks have stopped.
        Networks = "networks",
        /// `secrets`: the stack's secrets, once its tasks have stopped.
        Secrets = "secrets",
        /// `configs`: the stack's configs, once its tasks have stopped. The
        /// release records are not among them: they go last, with
        /// [`ActionKind::DeleteRecords`].
        Configs = "configs",
    }
}

impl StackPart {
    /// The parts that may go once this one has.
    pub fn next(self) -> &'static [StackPart] {
        match self {
            StackPart::Services => &[StackPart::Tasks],
            StackPart::Tasks => &[StackPart::Networks, StackPart::Secrets, StackPart::Configs],
            StackPart::Networks | StackPart::Secrets | StackPart::Configs => &[],
        }
    }
}
