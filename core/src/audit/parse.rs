//! Reading one line of an audit log back.
//!
//! The file is the operator's, but anyone who could write to it could put
//! anything there, and a file cut by a crash ends in half a line: a line
//! is read under a bound, and whatever it holds is an error to report,
//! never a panic.

use thiserror::Error;

use super::AuditEntry;

/// The longest line read: 64 KiB. A line written by this tool is a few
/// hundred bytes (an engine error is cut at
/// [`MAX_ERROR_CHARS`](super::MAX_ERROR_CHARS) characters); anything longer
/// was not written by it.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Why a line is not an audit entry.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LineError {
    /// Longer than [`MAX_LINE_BYTES`]; `len` is how long it was known to
    /// be when reading stopped.
    #[error("longer than the limit of {MAX_LINE_BYTES} bytes ({len} bytes or more)")]
    TooLong {
        /// Its length, at least.
        len: usize,
    },
    /// Not UTF-8 text.
    #[error("not valid UTF-8 text (at byte {offset})")]
    NotUtf8 {
        /// Where the first invalid byte is.
        offset: usize,
    },
    /// Not an audit entry of this format.
    #[error("not an audit entry: {message}")]
    Invalid {
        /// What the JSON parser found wrong, and where.
        message: String,
    },
}

/// Parses one line (without its line break; a trailing `\r` is allowed).
pub fn parse_line(line: &[u8]) -> Result<AuditEntry, LineError> {
    if line.len() > MAX_LINE_BYTES {
        return Err(LineError::TooLong { len: line.len() });
    }
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|e| LineError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    serde_json::from_str(text).map_err(|e| LineError::Invalid {
        message: e.to_string(),
    })
}
