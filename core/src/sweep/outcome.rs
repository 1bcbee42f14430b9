//! Outcomes: what the driver reports back, as plain data.
//!
//! The driver classifies each backend error into a [`Failure`], because
//! the right reaction differs: an object already gone is success (a retried
//! sweep must not fail on what its predecessor did), a volume in use is
//! worth waiting for, the controller's own stack must be left alone.

use std::fmt;

use super::report::ErrorKind;
use crate::refs::SwarmName;
use crate::snapshot::ReleaseEntry;

/// What happened when the driver ran an action.
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
    /// It did not work, or the target was not there.
    Failed(Failure),
}

impl Outcome {
    pub fn gone() -> Self {
        Outcome::Failed(Failure::Gone)
    }

    pub fn in_use() -> Self {
        Outcome::Failed(Failure::InUse)
    }

    pub fn own_stack() -> Self {
        Outcome::Failed(Failure::OwnStack)
    }

    pub fn unreachable(message: impl Into<String>) -> Self {
        Outcome::Failed(Failure::Unreachable(message.into()))
    }

    pub fn other(message: impl Into<String>) -> Self {
        Outcome::Failed(Failure::Other(message.into()))
    }

    /// The answer to a re-read that finds `release` stamped `stamp` under
    /// every one of `names`: for drivers of a model world (tests,
    /// benches). A real driver reads each name; one name's read is no
    /// evidence for another's.
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

    /// The outcome's kind, for errors.
    pub fn kind_str(&self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Volumes(_) => "volumes",
            Outcome::Releases(_) => "releases",
            Outcome::Stamps(_) => "stamps",
            Outcome::Failed(_) => "failed",
        }
    }
}

/// The release's records as one name of its cluster shows them now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StampRead {
    pub swarm: SwarmName,
    /// The release's entry (its newest record's raw owner stamp), as the
    /// snapshot would carry it; `None` when it has no records there.
    pub entry: Option<ReleaseEntry>,
}

impl StampRead {
    pub fn new(swarm: SwarmName, entry: Option<ReleaseEntry>) -> Self {
        StampRead { swarm, entry }
    }
}

/// Why an action did not work, classified by the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
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
