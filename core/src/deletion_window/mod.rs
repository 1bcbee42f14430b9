//! Deletion windows: when the operator allows deletions to happen.
//!
//! A window is policy, written as one line of text:
//!
//! - `allow Mon-Fri 02:00-05:00 Europe/Berlin`: deletions may happen on
//!   those days between those local times in that IANA zone;
//! - `deny 2026-12-24T00:00:00Z/2026-12-27T00:00:00Z`: no deletion between
//!   those two moments (a holiday freeze).
//!
//! Either verb takes either form. A list of windows passes at a moment when
//! no deny window of it holds that moment and, if it has allow windows at
//! all, one of them does; a list without allow windows allows whatever it
//! does not deny. The plan checks every list that applies to a swarm (the
//! policy's, and each of the swarm's names' own) at the snapshot's `now`
//! ([`gate`]): a swarm outside them keeps every deletion, held with the
//! reason `outside_window` and the moment the next window opens.
//!
//! # Grammar
//!
//! Tokens are separated by runs of ASCII whitespace; verbs and day names are
//! read in any case; a window is at most [`MAX_WINDOW_LEN`] bytes.
//!
//! ```text
//! window   = verb weekly / verb interval
//! verb     = "allow" / "deny"
//! weekly   = days times zone
//! days     = day-item *("," day-item)
//! day-item = day / day "-" day         ; "Fri-Mon" wraps: Fri, Sat, Sun, Mon
//! day      = "Mon" / "Tue" / "Wed" / "Thu" / "Fri" / "Sat" / "Sun"
//! times    = hh ":" mm "-" hh ":" mm   ; 00:00..23:59; "24:00" as the end only
//! zone     = an IANA zone name of the bundled database ("UTC", "Europe/Berlin")
//! interval = instant "/" instant       ; the start strictly before the end
//! instant  = RFC 3339 with its offset: 2026-12-24T00:00:00Z, ...T00:00:00+01:00
//! ```
//!
//! A time range whose end is at or before its start crosses midnight and
//! belongs to the day it starts on: `Fri 22:00-02:00` is Friday 22:00 to
//! Saturday 02:00. A range of equal times is refused (empty or a whole day?
//! `00:00-24:00` says a whole day).
//!
//! # Clock changes
//!
//! A local time that a clock change skips (a gap) or repeats (a fold) has
//! more than one reading as a moment. The hazard is deleting when the
//! operator did not allow it, so an allow window is taken at its narrower
//! reading (its start at the latest reading, its end at the earliest) and a
//! deny window at its wider one (its start at the earliest, its end at the
//! latest). Days of one window list in one zone that touch (`Sat-Sun
//! 00:00-24:00`) are one stretch of time: only its outer ends are read so,
//! never the midnights inside it.
//!
//! The zone database is jiff's copy of the IANA database, bundled in the
//! binary: the same answer on every machine, in the scratch image (no
//! zoneinfo) and in WebAssembly.

mod gate;
mod occurs;
mod parse;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::time::UnixTime;

pub use gate::{closes_at, gate, Closed, ClosedCause, Gate};
pub use parse::WindowError;

/// The longest window text read: a window is a short line, and a longer
/// one is refused before it is looked at.
pub const MAX_WINDOW_LEN: usize = 256;

/// One deletion window, as parsed from its text ([`DeletionWindow::parse`]).
/// Written back as its canonical text (`Display`, JSON).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeletionWindow {
    verb: Verb,
    span: Span,
    /// The canonical text: what the window is written as and named by.
    text: String,
}

/// Whether a window allows deletions or denies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// Deletions may happen inside it (and, when a list has allow windows,
    /// only inside one of them).
    Allow,
    /// No deletion inside it, whatever allows it.
    Deny,
}

impl Verb {
    /// The word the grammar uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Allow => "allow",
            Verb::Deny => "deny",
        }
    }
}

/// When a window holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Span {
    Weekly(Weekly),
    /// From `start` up to, not including, `end`.
    Interval {
        start: UnixTime,
        end: UnixTime,
    },
}

/// Some days of every week, a local time range on each, in one zone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Weekly {
    /// Bit 0 is Monday, bit 6 Sunday.
    days: u8,
    /// Minutes after local midnight, 0..1440.
    start: u16,
    /// Minutes after local midnight, 1..=1440; at or before `start`, on
    /// the next day.
    end: u16,
    /// The zone's canonical IANA name, checked to be in the database.
    zone: String,
}

impl DeletionWindow {
    /// Parses one window (see the module's grammar).
    ///
    /// ```
    /// use sweep_core::deletion_window::{DeletionWindow, Verb, WindowError};
    ///
    /// let w = DeletionWindow::parse("allow mon-fri 02:00-05:00 europe/berlin").unwrap();
    /// assert_eq!(w.verb(), Verb::Allow);
    /// assert_eq!(w.to_string(), "allow Mon-Fri 02:00-05:00 Europe/Berlin");
    /// assert!(matches!(
    ///     DeletionWindow::parse("allow Mon-Fri 02:00-05:00 Mars/Olympus"),
    ///     Err(WindowError::Zone { .. })
    /// ));
    /// ```
    pub fn parse(text: &str) -> Result<Self, WindowError> {
        parse::window(text)
    }

    /// Whether it allows or denies.
    pub fn verb(&self) -> Verb {
        self.verb
    }

    /// Its canonical text.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for DeletionWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::str::FromStr for DeletionWindow {
    type Err = WindowError;
    fn from_str(text: &str) -> Result<Self, WindowError> {
        DeletionWindow::parse(text)
    }
}

impl Serialize for DeletionWindow {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

struct WindowVisitor;

impl Visitor<'_> for WindowVisitor {
    type Value = DeletionWindow;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a deletion window such as \"allow Mon-Fri 02:00-05:00 Europe/Berlin\"")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<DeletionWindow, E> {
        DeletionWindow::parse(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for DeletionWindow {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(WindowVisitor)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for DeletionWindow {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DeletionWindow".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A deletion window: `allow|deny DAYS HH:MM-HH:MM ZONE` (days `Mon-Fri`, `Sat,Sun`, `Fri-Mon`; an IANA zone) or `allow|deny START/END` (RFC 3339 instants with offsets). See docs/windows.md.",
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_WINDOW_LEN,
        })
    }
}
