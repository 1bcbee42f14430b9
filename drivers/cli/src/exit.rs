//! The one place a command's verdict becomes the process's exit status.
//! What each status means is decided in the core (`sweep_core::verdict`,
//! whose `Status` is the table as data); input the command could not use
//! is said here, in one line on stderr, as `Status::BadInput`.

use std::process::ExitCode;

use sweep_core::verdict::Status;

use crate::input::InputError;
use crate::output;

/// The process's exit status for what a command ended with.
pub fn process_status(ended: Result<Status, InputError>) -> ExitCode {
    let status = ended.unwrap_or_else(|e| {
        // A webhook URL is a credential: one quoted where it was not
        // expected (the wrong flag, a file path) is masked like any other.
        output::warn_line(&sweep_core::notify::webhook::mask_urls(&e.to_string()));
        Status::BadInput
    });
    ExitCode::from(status.code())
}
