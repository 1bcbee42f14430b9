//! Outcomes: what the driver reports back, as plain data.
//!
//! The driver classifies each backend error into a [`Failure`], because
//! the right reaction differs: an object already gone is success (a retried
//! sweep must not fail on what its predecessor did), a volume in use is
//! worth waiting for, the controller's own stack must be left alone.

use std::fmt;

/// What happened when the driver ran an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It worked. For `RemoveStack`, `RemoveVolume` and `DeleteRecords`.
    Done,
    /// A volume listing worked: the volumes found, in any order.
    Volumes(Vec<String>),
    /// A re-listing worked: the names of the releases now on the swarm.
    Releases(Vec<String>),
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

    /// The outcome's kind, for errors.
    pub fn kind_str(&self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Volumes(_) => "volumes",
            Outcome::Releases(_) => "releases",
            Outcome::Failed(_) => "failed",
        }
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
    /// The swarm or node could not be reached.
    Unreachable(String),
    /// Anything else.
    Other(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Gone => f.write_str("not found"),
            Failure::InUse => f.write_str("in use"),
            Failure::OwnStack => f.write_str("refused: the controller's own stack"),
            Failure::Unreachable(m) => write!(f, "unreachable: {m}"),
            Failure::Other(m) => f.write_str(m),
        }
    }
}
