//! Actions: what the sweep asks its driver to do, as plain data.
//!
//! An action names everything the driver needs (swarm-qualified release,
//! application, node, volume) so that a driver never has to look anything
//! up in the plan, and never reaches a different release by a bare name.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::names::named_enum;
use crate::refs::{ReleaseRef, SwarmName};
use crate::snapshot::NodeEntry;

/// The label every Docker object of a stack carries; `<label>=<release>`
/// finds what is left of a release on a node the sweep did not reach.
pub const STACK_LABEL: &str = "com.docker.stack.namespace";

/// The name reports give the manager when the registry cannot reach nodes
/// individually.
pub const MANAGER: &str = "(manager)";

/// The label filter that finds a release's leftovers: `com.docker.stack.namespace=<release>`.
pub fn label_filter(release: &str) -> String {
    format!("{STACK_LABEL}={release}")
}

/// Identifies one outstanding action; hand it back with its outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ActionId(pub u64);

impl fmt::Display for ActionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// The release an action concerns, and the application that owned it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target {
    pub release: ReleaseRef,
    pub application: String,
}

/// Where a volume action runs.
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
pub struct Action {
    pub id: ActionId,
    pub kind: ActionKind,
}

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionKind {
    /// Read the release's records, as they are now, under each of `names`
    /// (every name of its cluster, the release's own swarm among them);
    /// answer with [`Outcome::Stamps`](super::Outcome::Stamps), one
    /// [`StampRead`](super::StampRead) per name, raw and unjudged. Handed
    /// out before every step that destroys something (`before` says which):
    /// the plan was made from a snapshot, and a release restamped or
    /// removed since must not be deleted on the old snapshot's word. The
    /// sweep judges the answer with the planner's own ownership rule.
    ReadStamps {
        target: Target,
        names: Vec<SwarmName>,
        before: Step,
    },
    /// Remove one part of the release's stack: every object of that kind
    /// labelled with its stack namespace. [`StackPart::Services`] first,
    /// alone; then [`StackPart::Tasks`] (their stopping); the other parts
    /// once the tasks have stopped (see [`StackPart::next`]). A part the engine answers "in use" (its conflict
    /// answer) is [`Failure::InUse`](super::Failure::InUse): the sweep
    /// tries it again by its own retry policy, never the driver.
    RemoveStack { target: Target, part: StackPart },
    /// List the volumes labelled [`STACK_LABEL`]`=<release>` at `at`;
    /// answer with [`Outcome::Volumes`](super::Outcome::Volumes).
    ListVolumes { target: Target, at: Where },
    /// Remove one volume at `at`.
    RemoveVolume {
        target: Target,
        at: Where,
        volume: String,
    },
    /// Delete the release's records (which carry its owner stamp). Handed
    /// out only after everything else of the release is gone.
    DeleteRecords { target: Target },
    /// List the releases on `swarm` again, after every release there has
    /// settled; answer with [`Outcome::Releases`](super::Outcome::Releases),
    /// the names the swarm lists (by their records, as for the snapshot).
    /// `checking` are the failed releases whose verdict it decides: one not
    /// listed gets its failed step tried once more, where `Gone` proves it
    /// had worked; so a driver listing by stacks instead is safe too.
    ListReleases {
        swarm: SwarmName,
        checking: Vec<Target>,
    },
}

impl ActionKind {
    /// The kind as the report and errors name it.
    pub fn step(&self) -> Step {
        match self {
            ActionKind::ReadStamps { .. } => Step::ReadStamps,
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
    /// The kinds of step, as reports name them.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Step {
        /// The re-read of a release's records before a destructive step.
        ReadStamps = "read_stamps",
        RemoveStack = "remove_stack",
        ListVolumes = "list_volumes",
        RemoveVolume = "remove_volume",
        DeleteRecords = "delete_records",
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
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum StackPart {
        Services = "services",
        /// Not a removal: the services' tasks have stopped. The driver
        /// removes nothing and answers "in use" while a task of the stack
        /// still runs on a node that is up (a down node's tasks never
        /// report stopping).
        Tasks = "tasks",
        Networks = "networks",
        Secrets = "secrets",
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
