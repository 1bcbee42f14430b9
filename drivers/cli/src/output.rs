//! Writing to stdout and stderr without panicking.
//!
//! `println!` panics when stdout is a closed pipe (`plan | head -1`) or a
//! full disk (`> /dev/full`), which turns a reader that stopped early into
//! exit 101 and, for `apply`, loses the report of what was already deleted.
//! Every document goes out through [`emit`], which reports how the write
//! ended, and the caller decides: a closed pipe ends quietly, another write
//! error is exit status 1, and `apply` then puts a short report on stderr.

use std::io::{self, Write};

use sweep_core::escape::escape;

/// How writing a document to stdout went wrong.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The reader went away (`| head`): nobody is left to tell.
    #[error("stdout was closed by its reader")]
    Closed,
    #[error("cannot write to stdout: {0}")]
    Write(io::Error),
}

/// Writes `text` to stdout and flushes it.
pub fn emit(text: &str) -> Result<(), OutputError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => OutputError::Closed,
            _ => OutputError::Write(e),
        })
}

/// Writes one line to stderr, every character of outside origin escaped.
/// A stderr that cannot be written to leaves nobody to tell: ignored.
pub fn warn_line(text: &str) {
    let _ = crate::terminal::around_progress(|err| writeln!(err, "swarm-sweep: {}", escape(text)));
}

/// Says, one line per swarm, that its deletion window closed between the
/// plan and its approval, and that nothing was deleted.
pub fn window_closed(holds: &[sweep_core::Hold]) {
    for hold in holds {
        let swarm = hold
            .swarm
            .as_ref()
            .map_or_else(String::new, |s| s.as_str().to_owned());
        warn_line(&format!(
            "swarm {swarm}: the deletion window closed while the plan waited for approval ({}); nothing was deleted, run again inside a window",
            hold.message.as_deref().unwrap_or("outside_window")
        ));
    }
}

/// The log writer: every log event goes to stderr with control and bidi
/// characters escaped, so a name in a log field cannot add a line or move
/// the cursor. The fmt layer hands over one whole event per write, ending
/// in the one line break that is kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct EscapingStderr;

impl io::Write for EscapingStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let (body, end) = match text.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (text.as_ref(), ""),
        };
        // Around the progress line, if one is drawn: the event goes on a
        // line of its own and the progress line stays last.
        crate::terminal::around_progress(|err| {
            err.write_all(escape(body).as_bytes())?;
            err.write_all(end.as_bytes())
        })?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for EscapingStderr {
    type Writer = EscapingStderr;

    fn make_writer(&'a self) -> Self::Writer {
        EscapingStderr
    }
}
