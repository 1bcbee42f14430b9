//! The window grammar (see the module's documentation), read from text an
//! operator or a file gives: bounded, never panicking, and every refusal
//! naming the part that is wrong.

use thiserror::Error;

use super::{DeletionWindow, Span, Verb, Weekly, MAX_WINDOW_LEN};
use crate::time::UnixTime;

/// Why a window's text was refused; each variant names the part that is
/// wrong and quotes it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WindowError {
    /// Longer than [`MAX_WINDOW_LEN`] bytes.
    #[error("a deletion window is at most {max} bytes, this one is {len}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Not `allow ...` or `deny ...`.
    #[error("a deletion window starts with allow or deny, not {found:?}")]
    Verb {
        /// The first word.
        found: String,
    },
    /// Not `VERB DAYS TIMES ZONE` nor `VERB START/END`.
    #[error(
        "{found:?} is neither \"allow|deny DAYS HH:MM-HH:MM ZONE\" nor \"allow|deny START/END\""
    )]
    Shape {
        /// The whole text.
        found: String,
    },
    /// A day name that is not `Mon` .. `Sun`.
    #[error("{found:?} is not a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)")]
    Day {
        /// The day as written.
        found: String,
    },
    /// A day item that is neither a day nor `DAY-DAY`.
    #[error("{found:?} is not a day or a day range such as Mon-Fri")]
    DayRange {
        /// The item as written.
        found: String,
    },
    /// A time that is not `HH:MM` from 00:00 to 23:59 (24:00 as an end).
    #[error("{found:?} is not a time HH:MM from 00:00 to 23:59 (24:00 as an end only)")]
    Time {
        /// The time as written.
        found: String,
    },
    /// A time range without its `-`, or of two equal times.
    #[error("{found:?} is not a time range such as 02:00-05:00 (equal times are refused: a whole day is 00:00-24:00)")]
    TimeRange {
        /// The range as written.
        found: String,
    },
    /// A zone the bundled IANA database does not have.
    #[error("{found:?} is not an IANA time zone such as Europe/Berlin or UTC")]
    Zone {
        /// The zone as written.
        found: String,
    },
    /// An instant that is not an RFC 3339 time with an offset, or is
    /// before 1970.
    #[error("{found:?} is not an RFC 3339 time with an offset such as 2026-12-24T00:00:00Z, from 1970 on")]
    Instant {
        /// The instant as written.
        found: String,
    },
    /// An interval whose end is not after its start.
    #[error("{found:?} ends before it starts (or where it starts)")]
    Interval {
        /// The interval as written.
        found: String,
    },
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const WHOLE_DAY: u16 = 24 * 60;

pub(super) fn window(text: &str) -> Result<DeletionWindow, WindowError> {
    if text.len() > MAX_WINDOW_LEN {
        return Err(WindowError::TooLong {
            len: text.len(),
            max: MAX_WINDOW_LEN,
        });
    }
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    let verb = match words.first() {
        Some(w) if w.eq_ignore_ascii_case("allow") => Verb::Allow,
        Some(w) if w.eq_ignore_ascii_case("deny") => Verb::Deny,
        first => {
            return Err(WindowError::Verb {
                found: first.copied().unwrap_or_default().to_owned(),
            })
        }
    };
    match words[1..] {
        [interval_text] => {
            let (start, end) = interval(interval_text)?;
            Ok(DeletionWindow {
                verb,
                span: Span::Interval { start, end },
                text: format!("{} {interval_text}", verb.as_str()),
            })
        }
        [days_text, times_text, zone_text] => {
            let (days, days_shown) = days(days_text)?;
            let (start, end) = times(times_text)?;
            let zone = zone(zone_text)?;
            let text = format!(
                "{} {days_shown} {}-{} {zone}",
                verb.as_str(),
                clock(start),
                clock(end)
            );
            Ok(DeletionWindow {
                verb,
                span: Span::Weekly(Weekly {
                    days,
                    start,
                    end,
                    zone,
                }),
                text,
            })
        }
        _ => Err(WindowError::Shape {
            found: text.to_owned(),
        }),
    }
}

/// `Mon-Fri,Sun`: the set of days (bit 0 Monday) and its canonical text.
fn days(text: &str) -> Result<(u8, String), WindowError> {
    let mut set = 0u8;
    let mut shown = Vec::new();
    for item in text.split(',') {
        let (from, to) = match item.split_once('-') {
            None => (day(item)?, None),
            Some((a, b)) if !b.contains('-') => (day(a)?, Some(day(b)?)),
            Some(_) => {
                return Err(WindowError::DayRange {
                    found: item.to_owned(),
                })
            }
        };
        match to {
            None => {
                set |= 1 << from;
                shown.push(DAYS[from].to_owned());
            }
            Some(to) => {
                // Wraps past Sunday: Fri-Mon is Fri, Sat, Sun, Mon.
                let mut d = from;
                loop {
                    set |= 1 << d;
                    if d == to {
                        break;
                    }
                    d = (d + 1) % 7;
                }
                shown.push(format!("{}-{}", DAYS[from], DAYS[to]));
            }
        }
    }
    Ok((set, shown.join(",")))
}

fn day(text: &str) -> Result<usize, WindowError> {
    DAYS.iter()
        .position(|d| d.eq_ignore_ascii_case(text))
        .ok_or_else(|| WindowError::Day {
            found: text.to_owned(),
        })
}

/// `02:00-05:00`: minutes after midnight of the start and the end.
fn times(text: &str) -> Result<(u16, u16), WindowError> {
    let range = || WindowError::TimeRange {
        found: text.to_owned(),
    };
    let (a, b) = text.split_once('-').ok_or_else(range)?;
    let start = time(a)?;
    let end = time(b)?;
    if start == WHOLE_DAY {
        return Err(WindowError::Time {
            found: a.to_owned(),
        });
    }
    if start == end {
        return Err(range());
    }
    // 00:00 as an end is the next midnight, like 24:00.
    Ok((start, if end == 0 { WHOLE_DAY } else { end }))
}

fn time(text: &str) -> Result<u16, WindowError> {
    let bad = || WindowError::Time {
        found: text.to_owned(),
    };
    let b = text.as_bytes();
    if b.len() != 5 || b[2] != b':' || ![b[0], b[1], b[3], b[4]].iter().all(u8::is_ascii_digit) {
        return Err(bad());
    }
    let hours = u16::from(b[0] - b'0') * 10 + u16::from(b[1] - b'0');
    let minutes = u16::from(b[3] - b'0') * 10 + u16::from(b[4] - b'0');
    match (hours, minutes) {
        (24, 0) => Ok(WHOLE_DAY),
        (0..=23, 0..=59) => Ok(hours * 60 + minutes),
        _ => Err(bad()),
    }
}

/// `HH:MM` of minutes after midnight.
pub(super) fn clock(minutes: u16) -> String {
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

/// The zone's canonical name, when the bundled database has it.
fn zone(text: &str) -> Result<String, WindowError> {
    let bad = || WindowError::Zone {
        found: text.to_owned(),
    };
    // A path, or a POSIX TZ string, is no zone name here: only names the
    // bundled database holds, so every machine reads the same zone.
    if text.is_empty() || text.starts_with('/') || text.contains("..") {
        return Err(bad());
    }
    let tz = jiff::tz::db().get(text).map_err(|_| bad())?;
    Ok(tz.iana_name().unwrap_or(text).to_owned())
}

/// `START/END`, both RFC 3339 with offsets.
fn interval(text: &str) -> Result<(UnixTime, UnixTime), WindowError> {
    let (a, b) = text.split_once('/').ok_or_else(|| WindowError::Shape {
        found: text.to_owned(),
    })?;
    let start = instant(a)?;
    let end = instant(b)?;
    if end <= start {
        return Err(WindowError::Interval {
            found: text.to_owned(),
        });
    }
    Ok((start, end))
}

fn instant(text: &str) -> Result<UnixTime, WindowError> {
    let bad = || WindowError::Instant {
        found: text.to_owned(),
    };
    // RFC 3339 only: a `T` between date and time, and no bracketed zone
    // annotation, which jiff's wider Temporal syntax would also take.
    let b = text.as_bytes();
    if b.len() < 20 || !matches!(b[10], b'T' | b't') || text.contains('[') {
        return Err(bad());
    }
    let ts: jiff::Timestamp = text.parse().map_err(|_| bad())?;
    u64::try_from(ts.as_second())
        .map(UnixTime::from_secs)
        .map_err(|_| bad())
}
