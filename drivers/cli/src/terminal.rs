//! Behaviour on a terminal: whether to colour, asking before `apply`
//! deletes, the progress line of a long `apply`, and the log filter.
//!
//! Each decision reads the environment in one place, through a pure rule
//! the tests call directly, so a pipe, `NO_COLOR` or `TERM=dumb` behave
//! the same in every renderer.

use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sweep_core::escape::escape;
use sweep_core::SweepPlan;
use sweep_runner::Progress;

/// The variable that names the log filter, before `RUST_LOG`.
pub const LOG_ENV: &str = "SWARM_SWEEP_LOG";

/// A stream a renderer writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    pub fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => io::stdout().is_terminal(),
            Stream::Stderr => io::stderr().is_terminal(),
        }
    }
}

/// Whether text written to `stream` may carry colour: only on a
/// terminal, and not when `NO_COLOR` is set (non-empty) or `TERM=dumb`.
/// Colour codes in a file or a pipe are noise to whatever reads them.
pub fn colour(stream: Stream) -> bool {
    colour_rule(
        stream.is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("TERM").as_deref(),
    )
}

/// [`colour`] as a rule over what it reads.
pub fn colour_rule(terminal: bool, no_color: Option<&OsStr>, term: Option<&OsStr>) -> bool {
    terminal && no_color.is_none_or(OsStr::is_empty) && !is_dumb(term)
}

fn is_dumb(term: Option<&OsStr>) -> bool {
    term.is_some_and(|t| t == "dumb")
}

/// Bold, when `on`.
pub fn bold(text: &str, on: bool) -> String {
    paint(text, "1", on)
}

/// Bold red, for what deletes, when `on`.
pub fn alarm(text: &str, on: bool) -> String {
    paint(text, "1;31", on)
}

fn paint(text: &str, sgr: &str, on: bool) -> String {
    sweep_core::render::Style::coloured(on).paint(sgr, text)
}

/// A person is there to answer: stdin and stderr are both terminals. A
/// prompt on a pipe would block a script for ever, or read its next input
/// as the answer.
pub fn interactive() -> bool {
    io::stdin().is_terminal() && io::stderr().is_terminal()
}

/// The longest answer read: stdin may be anything, and the answer is one
/// short word.
const ANSWER_LIMIT: u64 = 1024;

/// Asks `question` on stderr and reads one line from stdin; only `yes` or
/// `y` (any case) is yes. The end of input is no.
pub fn confirm(question: &str) -> io::Result<bool> {
    {
        let mut err = io::stderr().lock();
        err.write_all(question.as_bytes())?;
        err.flush()?;
    }
    let mut line = String::new();
    io::stdin().lock().take(ANSWER_LIMIT).read_line(&mut line)?;
    Ok(is_yes(&line))
}

/// The answers that proceed.
pub fn is_yes(answer: &str) -> bool {
    let answer = answer.trim();
    answer.eq_ignore_ascii_case("yes") || answer.eq_ignore_ascii_case("y")
}

/// What `apply` does before deleting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Nobody asked (`--yes`, no terminal, or nothing to delete), or the
    /// operator said yes.
    Proceed,
    /// The operator said anything but yes.
    Declined,
}

/// Asks before `apply` deletes, when a person is there ([`interactive`]),
/// `--yes` was not given and the plan deletes something. `shown` says
/// whether the plan was already printed as text on stdout; if not, it is
/// shown on stderr first, since nobody should approve a plan unseen.
pub fn approve_apply(plan: &SweepPlan, yes: bool, shown: bool) -> io::Result<Approval> {
    if yes || !plan.deletes_anything() || !interactive() {
        return Ok(Approval::Proceed);
    }
    if !shown {
        let mut err = io::stderr().lock();
        err.write_all(sweep_core::render::plan_text(plan).as_bytes())?;
    }
    let on = colour(Stream::Stderr);
    let what = deletion_count(plan.deletions.len(), plan.dropped_objects());
    let question = format!(
        "\n{} as planned above? Only 'yes' proceeds: ",
        alarm(&format!("Delete {what}"), on)
    );
    Ok(if confirm(&question)? {
        Approval::Proceed
    } else {
        Approval::Declined
    })
}

/// What the question asks to delete: `2 releases`, `1 dropped object`,
/// `1 release and 3 dropped objects`.
fn deletion_count(releases: usize, dropped: usize) -> String {
    let count = |n: usize, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    match (releases, dropped) {
        (r, 0) => count(r, "release", "releases"),
        (0, d) => count(d, "dropped object", "dropped objects"),
        (r, d) => format!(
            "{} and {}",
            count(r, "release", "releases"),
            count(d, "dropped object", "dropped objects")
        ),
    }
}

// ----------------------------------------------------------- progress

/// The progress line now on stderr, if any, so that a log event written
/// meanwhile can clear it first and draw it again after: otherwise the
/// event would be appended to the half-line and the line drawn over it.
static LINE: Mutex<Option<Drawn>> = Mutex::new(None);

#[derive(Debug, Clone)]
struct Drawn {
    text: String,
    /// Its width in characters, colour codes not counted.
    width: usize,
    dumb: bool,
}

impl Drawn {
    fn clear(&self) -> String {
        if self.dumb {
            // No cursor control: overwrite with spaces.
            format!("\r{}\r", " ".repeat(self.width))
        } else {
            "\r\x1b[2K".to_owned()
        }
    }
}

/// Writes through `write` with the progress line (if one is drawn)
/// cleared before and drawn again after. The log writer uses it.
pub fn around_progress(
    write: impl FnOnce(&mut io::StderrLock<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let line = LINE.lock().unwrap_or_else(|p| p.into_inner());
    let mut err = io::stderr().lock();
    if let Some(drawn) = line.as_ref() {
        err.write_all(drawn.clear().as_bytes())?;
    }
    write(&mut err)?;
    if let Some(drawn) = line.as_ref() {
        err.write_all(drawn.text.as_bytes())?;
    }
    err.flush()
}

/// The progress line of `apply` on a terminal: "releases done/total" and
/// the step started last, drawn again in place at most ten times a second.
pub struct ProgressLine {
    colour: bool,
    dumb: bool,
    last: Option<Instant>,
}

impl ProgressLine {
    const EVERY: Duration = Duration::from_millis(100);

    /// A progress line on stderr, when stderr is a terminal. Elsewhere the
    /// sweep's log has one line per deletion instead.
    pub fn on_stderr() -> Option<ProgressLine> {
        io::stderr().is_terminal().then(|| ProgressLine {
            colour: colour(Stream::Stderr),
            dumb: is_dumb(std::env::var_os("TERM").as_deref()),
            last: None,
        })
    }

    /// Draws `p`; the last call (`p.finished`) leaves the final count on a
    /// line of its own.
    pub fn update(&mut self, p: &Progress) {
        let due = self.last.is_none_or(|at| at.elapsed() >= Self::EVERY);
        if !(due || p.finished) {
            return;
        }
        self.last = Some(Instant::now());
        let columns = terminal_width().saturating_sub(1).max(20);
        let (plain, counts) = progress_text(p);
        let plain: String = plain.chars().take(columns).collect();
        let width = plain.chars().count();
        // The counts come first, so they survive any cut.
        let text = if self.colour && plain.contains(&counts) {
            plain.replacen(&counts, &bold(&counts, true), 1)
        } else {
            plain
        };
        let mut line = LINE.lock().unwrap_or_else(|p| p.into_inner());
        let mut err = io::stderr().lock();
        // A stderr that cannot be written to leaves nobody to show it to.
        if let Some(old) = line.as_ref() {
            let _ = err.write_all(old.clear().as_bytes());
        }
        let _ = err.write_all(text.as_bytes());
        if p.finished {
            let _ = err.write_all(b"\n");
            *line = None;
        } else {
            *line = Some(Drawn {
                text,
                width,
                dumb: self.dumb,
            });
        }
        let _ = err.flush();
    }
}

/// The line for `p`, and its counts part.
pub fn progress_text(p: &Progress) -> (String, String) {
    let counts = format!("{}/{}", p.done, p.total);
    let mut text = format!("releases {counts}");
    if p.finished {
        text.push_str(", finished");
        return (text, counts);
    }
    if p.in_flight > 0 {
        text.push_str(&format!(", {} running", p.in_flight));
    }
    if let Some(step) = &p.current {
        text.push_str(&format!(", {}", step.step));
        if let Some(part) = step.part {
            text.push_str(&format!(" ({part})"));
        }
        let release = step.release.as_deref().unwrap_or("*");
        // Names come from the swarms: escaped, so a name cannot move the
        // cursor or end the line.
        text.push_str(&format!(
            " {}/{}",
            escape(&step.swarm.to_string()),
            escape(release)
        ));
        if let Some(node) = &step.node {
            text.push_str(&format!(" on {}", escape(node)));
        }
    }
    (text, counts)
}

fn terminal_width() -> usize {
    match rustix::termios::tcgetwinsize(io::stderr()) {
        Ok(size) if size.ws_col > 0 => usize::from(size.ws_col),
        _ => std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(80),
    }
}

/// The progress hook for `apply`: a progress line on a terminal, nothing
/// elsewhere (the sweep logs one line per deletion at warn level).
pub fn progress_hook() -> impl FnMut(&Progress) {
    let mut line = ProgressLine::on_stderr();
    move |p| {
        if let Some(line) = line.as_mut() {
            line.update(p);
        }
    }
}

// ------------------------------------------------------------ logging

/// Sets up logging to stderr at warn level (one line per deletion, and
/// every failure), or as `SWARM_SWEEP_LOG` (else `RUST_LOG`) says. A
/// filter that does not parse is an error naming its variable: falling
/// back to the default would hide the very lines the operator asked for.
pub fn init_logging() -> Result<(), String> {
    let filter = log_filter(
        std::env::var_os(LOG_ENV).as_deref(),
        std::env::var_os("RUST_LOG").as_deref(),
    )?;
    // Names in log fields come from outside, so the writer escapes every
    // event; no colour, since its escape sequences would be escaped too.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(crate::output::EscapingStderr)
        .with_target(false)
        .try_init();
    Ok(())
}

/// The filter from `SWARM_SWEEP_LOG`, else `RUST_LOG`, else `warn`. An
/// empty variable counts as unset.
pub fn log_filter(
    sweep_log: Option<&OsStr>,
    rust_log: Option<&OsStr>,
) -> Result<tracing_subscriber::EnvFilter, String> {
    let given = [(LOG_ENV, sweep_log), ("RUST_LOG", rust_log)]
        .into_iter()
        .find_map(|(name, value)| value.filter(|v| !v.is_empty()).map(|v| (name, v)));
    let Some((name, value)) = given else {
        return Ok(tracing_subscriber::EnvFilter::new("warn"));
    };
    let bad = |why: String| {
        format!(
            "{name}: {:?} is not a log filter ({why}); e.g. {name}=info or {name}=warn,sweep_runner=debug",
            OsString::from(value)
        )
    };
    let text = value.to_str().ok_or_else(|| bad("not UTF-8".to_owned()))?;
    tracing_subscriber::EnvFilter::builder()
        .parse(text)
        .map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color_or_dumb() {
        let s = |v: &'static str| Some(OsStr::new(v));
        assert!(colour_rule(true, None, s("xterm-256color")));
        assert!(colour_rule(true, None, None));
        assert!(
            colour_rule(true, s(""), s("xterm")),
            "an empty NO_COLOR is unset"
        );
        assert!(!colour_rule(false, None, s("xterm")));
        assert!(!colour_rule(true, s("1"), s("xterm")));
        assert!(!colour_rule(true, None, s("dumb")));
    }

    #[test]
    fn only_yes_proceeds() {
        for yes in ["yes\n", "y\n", "YES\r\n", " Yes "] {
            assert!(is_yes(yes), "{yes:?}");
        }
        for no in ["", "\n", "no\n", "n", "yess", "ye", "sure", "yes please"] {
            assert!(!is_yes(no), "{no:?}");
        }
    }

    #[test]
    fn the_question_counts_releases_and_dropped_objects() {
        assert_eq!(deletion_count(1, 0), "1 release");
        assert_eq!(deletion_count(2, 0), "2 releases");
        assert_eq!(deletion_count(0, 1), "1 dropped object");
        assert_eq!(deletion_count(0, 3), "3 dropped objects");
        assert_eq!(deletion_count(1, 3), "1 release and 3 dropped objects");
    }

    #[test]
    fn log_filters() {
        let s = |v: &'static str| Some(OsStr::new(v));
        assert!(log_filter(None, None).is_ok());
        assert!(log_filter(s("info"), None).is_ok());
        assert!(log_filter(s("warn,sweep_runner=debug"), s("[[[")).is_ok());
        assert!(log_filter(s(""), s("debug")).is_ok());
        let e = log_filter(s("info,=[bogus"), None).unwrap_err();
        assert!(e.starts_with("SWARM_SWEEP_LOG: "), "{e}");
        let e = log_filter(None, s("sweep=notalevel")).unwrap_err();
        assert!(e.starts_with("RUST_LOG: "), "{e}");
    }
}
