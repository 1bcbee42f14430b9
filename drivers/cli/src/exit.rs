//! The one place a command's verdict becomes the process's exit status.
//! What each status means is decided in the core (`sweep_core::verdict`);
//! this module only adds the one status the core never sees: bad input,
//! found on the command line or in a file before anything was deleted.

use std::process::ExitCode;

use sweep_core::verdict::{Status, BAD_INPUT};

use crate::input::InputError;
use crate::output;

/// How a command that got as far as running ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It ran: the core's verdict.
    Ran(Status),
    /// Bad input found while it ran (an app set that cannot be read in a
    /// one-shot run, a snapshot that cannot be planned), already said on
    /// stderr; nothing was deleted.
    BadInput,
}

impl Verdict {
    /// This verdict, or `at_least` when that is worse: output that could
    /// not be written needs a person like anything else left undone.
    pub fn at_least(self, at_least: Status) -> Verdict {
        match self {
            Verdict::Ran(status) => Verdict::Ran(status.max(at_least)),
            Verdict::BadInput => Verdict::BadInput,
        }
    }
}

impl From<Status> for Verdict {
    fn from(status: Status) -> Self {
        Verdict::Ran(status)
    }
}

/// The process's exit status for what a command ended with; an input
/// error is said here, in one line on stderr.
pub fn process_status(ended: Result<Verdict, InputError>) -> ExitCode {
    ExitCode::from(match ended {
        Ok(Verdict::Ran(status)) => status.code(),
        Ok(Verdict::BadInput) => BAD_INPUT,
        Err(e) => {
            output::warn_line(&e.to_string());
            BAD_INPUT
        }
    })
}
