//! When weekly windows hold, as moments: their local days and times in
//! their zone, turned into intervals of seconds with the reading of clock
//! changes the verb calls for (narrower for allow, wider for deny).

use jiff::civil::{Date, DateTime};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{Timestamp, ToSpan};

use super::{Verb, Weekly};

/// From `.0` up to, not including, `.1`, in seconds since the Unix epoch.
pub(super) type Interval = (i64, i64);

/// Local days before the moment asked about whose windows are made: a
/// window starts on its day and ends at most one day later.
const DAYS_BEFORE: i64 = 2;
/// Local days after it: more than a week, so that every weekly window's
/// next occurrence is among them even when a clock change empties one.
pub(super) const DAYS_AFTER: i64 = 15;

/// The intervals during which `windows` (all in `zone`, all of `verb`)
/// hold, over the local days around `at`, merged and sorted. Days whose
/// local stretches touch or overlap are merged before they are read as
/// moments, so that a clock change at a midnight inside a stretch never
/// cuts a hole in it.
pub(super) fn intervals(
    windows: &[&Weekly],
    zone: &TimeZone,
    verb: Verb,
    at: i64,
) -> Vec<Interval> {
    let Ok(at) = Timestamp::from_second(at) else {
        return Vec::new();
    };
    let today = zone.to_datetime(at).date();
    let mut local: Vec<(DateTime, DateTime)> = Vec::new();
    for offset in -DAYS_BEFORE..=DAYS_AFTER {
        let Ok(day) = today.checked_add(offset.days()) else {
            continue;
        };
        let weekday = usize::from(day.weekday().to_monday_zero_offset().unsigned_abs());
        for w in windows.iter().filter(|w| w.days & (1 << weekday) != 0) {
            if let Some(stretch) = local_stretch(w, day) {
                local.push(stretch);
            }
        }
    }
    local.sort();
    let mut merged: Vec<(DateTime, DateTime)> = Vec::with_capacity(local.len());
    for (start, end) in local {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let (start_pick, end_pick) = match verb {
        Verb::Allow => (Pick::Latest, Pick::Earliest),
        Verb::Deny => (Pick::Earliest, Pick::Latest),
    };
    merged
        .into_iter()
        .filter_map(|(start, end)| {
            let start = reading(zone, start, start_pick)?;
            let end = reading(zone, end, end_pick)?;
            (start < end).then_some((start, end))
        })
        .collect()
}

/// The local start and end of `w` on `day`.
fn local_stretch(w: &Weekly, day: Date) -> Option<(DateTime, DateTime)> {
    let at = |day: Date, minutes: u16| -> Option<DateTime> {
        let (day, minutes) = if minutes >= 24 * 60 {
            (day.tomorrow().ok()?, minutes - 24 * 60)
        } else {
            (day, minutes)
        };
        let hour = i8::try_from(minutes / 60).ok()?;
        let minute = i8::try_from(minutes % 60).ok()?;
        Some(day.at(hour, minute, 0, 0))
    };
    let start = at(day, w.start)?;
    let end = if w.end > w.start {
        at(day, w.end)?
    } else {
        // Crosses midnight: the end is on the next day.
        at(day.tomorrow().ok()?, w.end)?
    };
    Some((start, end))
}

#[derive(Debug, Clone, Copy)]
enum Pick {
    Earliest,
    Latest,
}

/// The moment a local time means in `zone`: the one moment it names, or,
/// when a clock change skips or repeats it, the earliest or the latest of
/// the moments it could be read as.
fn reading(zone: &TimeZone, local: DateTime, pick: Pick) -> Option<i64> {
    let second = |offset: jiff::tz::Offset| offset.to_timestamp(local).ok().map(|t| t.as_second());
    let (a, b) = match zone.to_ambiguous_timestamp(local).offset() {
        AmbiguousOffset::Unambiguous { offset } => return second(offset),
        AmbiguousOffset::Gap { before, after } | AmbiguousOffset::Fold { before, after } => {
            (second(before)?, second(after)?)
        }
    };
    Some(match pick {
        Pick::Earliest => a.min(b),
        Pick::Latest => a.max(b),
    })
}
