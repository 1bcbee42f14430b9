//! `swarm-sweep audit FILE`: the audit log, read back for people (or as
//! JSON lines), filtered by time and release.
//!
//! The log grows without bound, so it is streamed: one line in memory at
//! a time, each under the core's bound ([`MAX_LINE_BYTES`]). A line past
//! the bound, or one that is not an entry (a torn last line, something
//! else written into the file), is reported with its number on stderr
//! and reading goes on; the command then ends with status 1.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use sweep_core::audit::{parse_line, AuditEntry, Filter, LineError, MAX_LINE_BYTES};
use sweep_core::verdict::Status;
use sweep_docker::files::open_regular;

use crate::cli::Format;
use crate::input::InputError;
use crate::output::{self, emit, OutputError};

/// One line of the file, as read under the bound.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A whole line, without its line break.
    Whole(Vec<u8>),
    /// A line past the bound, skipped to its end; at least `len` bytes.
    TooLong { len: usize },
}

/// Reads lines of at most `limit` bytes: a longer one is skipped to its
/// end without being held, so a file of one endless line costs no memory.
struct Lines<R> {
    reader: BufReader<R>,
    limit: usize,
}

impl<R: Read> Lines<R> {
    fn new(reader: R, limit: usize) -> Self {
        Lines {
            reader: BufReader::with_capacity(64 * 1024, reader),
            limit,
        }
    }

    /// The next line; `None` at the end of the file.
    fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut len = 0usize;
        let mut any = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                // The end: a last line without its line break still counts.
                return Ok(any.then(|| Self::ended(line, len, self.limit)));
            }
            any = true;
            let (taken, ends) = match buf.iter().position(|&b| b == b'\n') {
                Some(at) => (at, true),
                None => (buf.len(), false),
            };
            if len <= self.limit {
                let room = (self.limit + 1).saturating_sub(line.len());
                line.extend_from_slice(&buf[..taken.min(room)]);
            }
            len = len.saturating_add(taken);
            self.reader.consume(taken + usize::from(ends));
            if ends {
                return Ok(Some(Self::ended(line, len, self.limit)));
            }
        }
    }

    fn ended(line: Vec<u8>, len: usize, limit: usize) -> Line {
        if len > limit {
            Line::TooLong { len }
        } else {
            Line::Whole(line)
        }
    }
}

/// Runs `audit FILE`: every entry `filter` keeps, in `format`.
pub fn run(file: &Path, filter: &Filter, format: Format) -> Result<Status, InputError> {
    let opened = open_regular(file)?;
    let mut lines = Lines::new(opened, MAX_LINE_BYTES);
    let mut status = Status::Success;
    let mut number = 0u64;
    loop {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(status),
            Err(e) => {
                output::warn_line(&format!(
                    "{}: cannot read past line {number}: {e}",
                    file.display()
                ));
                return Ok(Status::NeedsAttention);
            }
        };
        number += 1;
        let parsed = match line {
            Line::Whole(bytes) if bytes.is_empty() => continue,
            Line::Whole(bytes) => parse_line(&bytes),
            Line::TooLong { len } => Err(LineError::TooLong { len }),
        };
        match parsed {
            Ok(entry) if filter.keeps(&entry) => match emit(&shown(&entry, format)) {
                Ok(()) => {}
                // The reader stopped early (`| head`): its choice.
                Err(OutputError::Closed) => return Ok(status),
                Err(e) => {
                    output::warn_line(&e.to_string());
                    return Ok(Status::NeedsAttention);
                }
            },
            Ok(_) => {}
            Err(e) => {
                output::warn_line(&format!("{}: line {number}: {e}", file.display()));
                status = Status::NeedsAttention;
            }
        }
    }
}

fn shown(entry: &AuditEntry, format: Format) -> String {
    match format {
        Format::Text => entry.text(),
        Format::Json => format!("{}\n", entry.to_line()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &[u8], limit: usize) -> Vec<Line> {
        // A small buffer as well as the real one: a line split across
        // reads must come out the same.
        let mut lines = Lines::new(text, limit);
        lines.reader = BufReader::with_capacity(3, text);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line);
        }
        let mut whole = Lines::new(text, limit);
        let mut again = Vec::new();
        while let Some(line) = whole.next_line().unwrap() {
            again.push(line);
        }
        assert_eq!(out, again);
        out
    }

    #[test]
    fn lines_are_split_and_bounded_without_holding_a_long_one() {
        let whole = |s: &str| Line::Whole(s.as_bytes().to_vec());
        assert_eq!(all(b"", 8), []);
        assert_eq!(all(b"ab\ncd", 8), [whole("ab"), whole("cd")]);
        assert_eq!(all(b"ab\n\n", 8), [whole("ab"), whole("")]);
        assert_eq!(
            all(b"12345678\n123456789\nx\n", 8),
            [whole("12345678"), Line::TooLong { len: 9 }, whole("x")]
        );
        assert_eq!(all(b"0123456789abc", 4), [Line::TooLong { len: 13 }]);
    }
}
