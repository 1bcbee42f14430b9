//! Outcomes: what the driver reports back, as plain data.
//!
//! The driver classifies each backend error into a [`Failure`], because
//! the right reaction differs: an object already gone is success (a retried
//! sweep must not fail on what its predecessor did), a volume in use is
//! worth waiting for, the controller's own stack must be left alone.

use std::fmt;

use super::report::ErrorKind;
use crate::objects::StackObjects;
use crate::refs::SwarmName;
use crate::snapshot::ReleaseEntry;
use crate::usage::Usage;

/// What happened when the driver ran an action.
///
/// A success must have the shape its action calls for (see each variant);
/// [`Sweep::handle_outcome`](super::Sweep::handle_outcome) refuses any
/// other. Not `#[non_exhaustive]`: an outcome is added together with the
/// [`ActionKind`](super::ActionKind) it answers, which drivers match
/// exhaustively too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It worked. For `RemoveStack`, `RemoveVolume` and `DeleteRecords`.
    Done,
    /// A volume listing worked: the volumes found, in any order.
    Volumes(Vec<String>),
    /// A re-listing worked: the names of the releases now on the swarm.
    Releases(Vec<String>),
    /// A [`ReadStamps`](super::ActionKind::ReadStamps) worked: what each
    /// asked name shows of the release now. A name the answer leaves out
    /// counts as unreadable.
    Stamps(Vec<StampRead>),
    /// A [`ReadUsage`](super::ActionKind::ReadUsage) worked: the release's
    /// stack as labelled now, and what uses what on its swarm now.
    Usage(UsageRead),
    /// It did not work, or the target was not there.
    Failed(Failure),
}

impl Outcome {
    /// [`Failure::Gone`]: the target was not there, which counts as done.
    pub fn gone() -> Self {
        Outcome::Failed(Failure::Gone)
    }

    /// [`Failure::InUse`]: still in use; the sweep tries it again.
    pub fn in_use() -> Self {
        Outcome::Failed(Failure::InUse)
    }

    /// [`Failure::OwnStack`]: the controller's own stack; left alone.
    pub fn own_stack() -> Self {
        Outcome::Failed(Failure::OwnStack)
    }

    /// [`Failure::Unreachable`], with what the driver saw.
    pub fn unreachable(message: impl Into<String>) -> Self {
        Outcome::Failed(Failure::Unreachable(message.into()))
    }

    /// [`Failure::Other`], with what the driver saw.
    pub fn other(message: impl Into<String>) -> Self {
        Outcome::Failed(Failure::Other(message.into()))
    }

    /// The answer to a re-read (`ReadStamps`) of `target` that finds it
    /// as `plan` found it, under every name of its cluster: the stamp
    /// `plan`'s controller writes for its application, and the records
    /// the plan observed (ids and versions), which the sweep checks as
    /// well. For drivers of a model world where nothing changes (tests,
    /// benches, examples); a real driver reads each name.
    pub fn as_planned(plan: &crate::plan::SweepPlan, target: &super::Target) -> Self {
        let release = &target.release;
        let records = plan
            .deletions
            .iter()
            .find(|d| d.swarm == release.swarm && d.release == release.release)
            .map(|d| d.observed.as_ref().map(|o| o.records.clone()))
            .or_else(|| {
                plan.dropped
                    .iter()
                    .find(|d| d.swarm == release.swarm && d.release == release.release)
                    .map(|d| Some(d.records.clone()))
            })
            .flatten();
        let stamp = plan.controller.stamp(&target.application, &release.release);
        let mut entry = ReleaseEntry::new(release.release.clone(), Some(stamp));
        if let Some(records) = records {
            entry = entry.with_records(records);
        }
        Outcome::Stamps(
            target
                .names
                .iter()
                .map(|n| StampRead::new(n.clone(), Some(entry.clone())))
                .collect(),
        )
    }

    /// The answer to a [`ReadUsage`](super::ActionKind::ReadUsage) in a
    /// model world (tests, benches) where no other workload uses anything
    /// and no node joined since the plan: the manager lists the nodes of
    /// `at`, the places asked. A real driver reads the swarm's services,
    /// the containers at each place and the manager's node list.
    pub fn unused(at: &[super::Where]) -> Self {
        Outcome::Usage(
            UsageRead::default().with_nodes(
                at.iter()
                    .filter_map(super::Where::node_id)
                    .map(str::to_owned)
                    .collect(),
            ),
        )
    }

    /// The answer to a re-read that finds `release` stamped `stamp` under
    /// every one of `names`, with no record versions: for drivers of a
    /// model world (tests, benches) whose plans observed none. A plan
    /// that observed records is proved unchanged by them too: answer it
    /// with [`Outcome::as_planned`]. A real driver reads each name; one
    /// name's read is no evidence for another's.
    pub fn same_stamps(names: &[SwarmName], release: &str, stamp: Option<&str>) -> Self {
        Outcome::Stamps(
            names
                .iter()
                .map(|n| {
                    let entry = ReleaseEntry::new(release, stamp.map(str::to_owned));
                    StampRead::new(n.clone(), Some(entry))
                })
                .collect(),
        )
    }

    /// The outcome's kind (`done`, `volumes`, `releases`, `stamps`,
    /// `failed`), as errors name it
    /// ([`SweepError::OutcomeMismatch`](super::SweepError::OutcomeMismatch)).
    pub fn kind_str(&self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Volumes(_) => "volumes",
            Outcome::Releases(_) => "releases",
            Outcome::Stamps(_) => "stamps",
            Outcome::Usage(_) => "usage",
            Outcome::Failed(_) => "failed",
        }
    }
}

/// The release's records as one name of its cluster shows them now.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StampRead {
    /// The name read under: one of the action's `names`.
    pub swarm: SwarmName,
    /// The release's entry (its newest record's raw owner stamp), as the
    /// snapshot would carry it; `None` when it has no records there.
    pub entry: Option<ReleaseEntry>,
}

impl StampRead {
    /// What `swarm` shows: `entry`, or `None` when the release has no
    /// records there.
    pub fn new(swarm: SwarmName, entry: Option<ReleaseEntry>) -> Self {
        StampRead { swarm, entry }
    }
}

/// What a [`ReadUsage`](super::ActionKind::ReadUsage) found, raw and
/// unjudged: the sweep decides from it, by the planner's own rule
/// ([`crate::usage::users_of`]), what of the stack may be removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UsageRead {
    /// The objects labelled with the release's stack namespace now: its
    /// services, networks, secrets and configs, with their ids (volumes
    /// are not read here; release records never count as configs).
    pub stack: StackObjects,
    /// Every service of the swarm, of any stack or none, and the
    /// containers using named volumes at each place the action asked.
    pub usage: Usage,
    /// The ids of the nodes the swarm's manager lists now, down ones
    /// included; `None` when not read. A node the plan did not read,
    /// joined since, may hold containers and volumes nobody read: the
    /// sweep then keeps the attachable networks and a purge's records, as
    /// it does when the node list is not read.
    pub nodes: Option<Vec<String>>,
}

impl UsageRead {
    /// The stack `stack` as labelled now, and the swarm's `usage`; the
    /// node list unread until [`with_nodes`](Self::with_nodes).
    pub fn new(stack: StackObjects, usage: Usage) -> Self {
        UsageRead {
            stack,
            usage,
            nodes: None,
        }
    }

    /// The ids of the nodes the swarm's manager lists now.
    pub fn with_nodes(mut self, nodes: Vec<String>) -> Self {
        self.nodes = Some(nodes);
        self
    }
}

/// Why an action did not work, classified by the driver.
///
/// The classes decide what the sweep does next; when in doubt, a driver
/// picks the one that does less ([`Failure::Unreachable`] or
/// [`Failure::Other`] fail the release and keep its records): a
/// [`Failure::Gone`] for an error that is not "not found" would let the
/// records go while something of the release remains.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// The target does not exist (already deleted). Counts as success: a
    /// retried partial sweep must not be failed by the part that worked.
    Gone,
    /// A volume is still held by a task shutting down; retried until that
    /// volume's settle deadline.
    InUse,
    /// The backend refused to remove the stack the controller itself runs
    /// as. Not a failure: the release is left alone and reported.
    OwnStack,
    /// The swarm or node could not be reached, or did not answer in time
    /// (the step may or may not have taken effect).
    Unreachable(String),
    /// The engine answered with an error other than "not found" or "in
    /// use": it refused the step.
    Refused(String),
    /// The engine's answer made no sense (a missing id, an unreadable
    /// label); nothing was decided from it.
    Invalid(String),
    /// Anything else.
    Other(String),
}

impl Failure {
    /// The failure's class, as reports name it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Failure::Gone | Failure::Other(_) => ErrorKind::Other,
            Failure::InUse => ErrorKind::InUse,
            Failure::OwnStack => ErrorKind::OwnStack,
            Failure::Unreachable(_) => ErrorKind::Unreachable,
            Failure::Refused(_) => ErrorKind::Refused,
            Failure::Invalid(_) => ErrorKind::InvalidReply,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Gone => f.write_str("not found"),
            Failure::InUse => f.write_str("in use"),
            Failure::OwnStack => f.write_str("refused: the controller's own stack"),
            Failure::Unreachable(m) => write!(f, "unreachable: {m}"),
            Failure::Refused(m) => write!(f, "refused: {m}"),
            Failure::Invalid(m) => write!(f, "invalid reply: {m}"),
            Failure::Other(m) => f.write_str(m),
        }
    }
}
