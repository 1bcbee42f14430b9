//! The verdict of window lists at a moment: open, or closed with why and
//! when the next opening is.

use std::collections::BTreeMap;

use jiff::tz::TimeZone;

use super::occurs::{self, Interval, DAYS_AFTER};
use super::{DeletionWindow, Span, Verb, Weekly};
use crate::time::UnixTime;

/// How far ahead the next opening is looked for: past it, windows that
/// never open (a deny of every day) read as never opening.
const HORIZON_SECS: i64 = 400 * 24 * 3600;
/// Steps of looking ahead, each past a deny or to an allow's start; far
/// more than any list of windows of a sane length needs within the horizon.
const MAX_STEPS: usize = 2_000;
const DAY_SECS: i64 = 24 * 3600;

/// Whether deletions may happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Every list passes (or there are no windows).
    Open,
    /// Some list does not pass.
    Closed(Closed),
}

/// Why deletions may not happen now, and when they may next.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Closed {
    /// What keeps them out now.
    pub cause: ClosedCause,
    /// The next moment every list passes; `None` when none comes within
    /// about a year, or the time is not known.
    pub opens_at: Option<UnixTime>,
}

/// What keeps deletions out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClosedCause {
    /// There are windows, and no time to check them at: nothing proves the
    /// moment is inside one.
    NoTime,
    /// Inside this deny window.
    Denied(DeletionWindow),
    /// Outside every one of these allow windows (of one list).
    OutsideAllow(Vec<DeletionWindow>),
}

/// The verdict of `lists` at `now`: a deletion must pass every list. A
/// list passes when no deny window of it holds and, if it has allow
/// windows, one of them holds. No window at all is open, with or without
/// a time; windows without a time are closed.
///
/// ```
/// use sweep_core::deletion_window::{gate, DeletionWindow, Gate};
/// use sweep_core::UnixTime;
///
/// let nights = [DeletionWindow::parse("allow Mon-Fri 02:00-05:00 UTC").unwrap()];
/// // Tuesday 2026-12-01 03:00 UTC: inside.
/// let inside = UnixTime::parse_rfc3339("2026-12-01T03:00:00Z").unwrap();
/// assert_eq!(gate(&[&nights], Some(inside)), Gate::Open);
/// // 06:00: closed until Wednesday 02:00.
/// let after = UnixTime::parse_rfc3339("2026-12-01T06:00:00Z").unwrap();
/// let Gate::Closed(closed) = gate(&[&nights], Some(after)) else { panic!() };
/// assert_eq!(closed.opens_at.unwrap().to_string(), "2026-12-02T02:00:00Z");
/// ```
pub fn gate(lists: &[&[DeletionWindow]], now: Option<UnixTime>) -> Gate {
    let lists: Vec<List<'_>> = lists
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| List::new(l))
        .collect();
    if lists.is_empty() {
        return Gate::Open;
    }
    let Some(now) = now.and_then(|n| i64::try_from(n.as_secs()).ok()) else {
        return Gate::Closed(Closed {
            cause: ClosedCause::NoTime,
            opens_at: None,
        });
    };
    let cause = lists.iter().find_map(|l| l.cause_at(now));
    match cause {
        None => Gate::Open,
        Some(cause) => Gate::Closed(Closed {
            cause,
            opens_at: opens_at(&lists, now),
        }),
    }
}

/// The first moment from `now` on at which some list of `lists` no longer
/// passes: when deletions that may start at `now` may start no more. `now`
/// itself when they may not start now; `None` without windows, or when
/// none closes within about a year.
///
/// ```
/// use sweep_core::deletion_window::{closes_at, DeletionWindow};
/// use sweep_core::UnixTime;
///
/// let nights = [DeletionWindow::parse("allow Mon-Fri 02:00-05:00 UTC").unwrap()];
/// let inside = UnixTime::parse_rfc3339("2026-12-01T03:00:00Z").unwrap();
/// assert_eq!(closes_at(&[&nights], inside).unwrap().to_string(), "2026-12-01T05:00:00Z");
/// ```
pub fn closes_at(lists: &[&[DeletionWindow]], now: UnixTime) -> Option<UnixTime> {
    if gate(lists, Some(now)) != Gate::Open {
        return Some(now);
    }
    let now = i64::try_from(now.as_secs()).ok()?;
    let limit = now.saturating_add(HORIZON_SECS);
    lists
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| List::new(l).next_fail(now, limit))
        .min()
        .filter(|&t| t <= limit)
        .and_then(|t| u64::try_from(t).ok())
        .map(UnixTime::from_secs)
}

/// The first moment from `now` on at which every list passes.
fn opens_at(lists: &[List<'_>], now: i64) -> Option<UnixTime> {
    let mut t = now;
    for _ in 0..MAX_STEPS {
        let mut moved = false;
        for list in lists {
            let next = list.next_pass(t, now.saturating_add(HORIZON_SECS));
            if next > t {
                t = next;
                moved = true;
            }
        }
        if t > now.saturating_add(HORIZON_SECS) {
            return None;
        }
        if !moved {
            return u64::try_from(t).ok().map(UnixTime::from_secs);
        }
    }
    None
}

/// One list of windows, prepared: weekly windows by verb and zone (their
/// days are merged where they touch), one-off intervals apart.
struct List<'a> {
    weekly: Vec<Group<'a>>,
    /// One-off windows, with their interval in seconds.
    once: Vec<(&'a DeletionWindow, Interval)>,
    /// Every allow window, sorted: what a closed list names.
    allows: Vec<&'a DeletionWindow>,
}

/// The weekly windows of one verb in one zone.
struct Group<'a> {
    verb: Verb,
    /// `None` if the zone cannot be loaded (a window is only made from a
    /// zone the database has, so never): nothing is then allowed and
    /// everything denied.
    zone: Option<TimeZone>,
    /// Sorted.
    windows: Vec<(&'a DeletionWindow, &'a Weekly)>,
}

impl Group<'_> {
    fn intervals(&self, at: i64) -> Vec<Interval> {
        let weekly: Vec<&Weekly> = self.windows.iter().map(|(_, w)| *w).collect();
        self.intervals_of(&weekly, at)
    }

    fn intervals_of(&self, weekly: &[&Weekly], at: i64) -> Vec<Interval> {
        match (&self.zone, self.verb) {
            (Some(zone), verb) => occurs::intervals(weekly, zone, verb, at),
            (None, Verb::Allow) => Vec::new(),
            (None, Verb::Deny) => vec![(i64::MIN, i64::MAX)],
        }
    }
}

fn contains((start, end): Interval, t: i64) -> bool {
    start <= t && t < end
}

impl<'a> List<'a> {
    fn new(windows: &'a [DeletionWindow]) -> Self {
        let mut sorted: Vec<&DeletionWindow> = windows.iter().collect();
        sorted.sort();
        sorted.dedup();
        let mut groups: BTreeMap<(Verb, &str), Vec<(&DeletionWindow, &Weekly)>> = BTreeMap::new();
        let mut once = Vec::new();
        for w in &sorted {
            match &w.span {
                Span::Weekly(weekly) => groups
                    .entry((w.verb, weekly.zone.as_str()))
                    .or_default()
                    .push((w, weekly)),
                Span::Interval { start, end } => {
                    let second = |t: UnixTime| i64::try_from(t.as_secs()).unwrap_or(i64::MAX);
                    once.push((*w, (second(*start), second(*end))));
                }
            }
        }
        let weekly = groups
            .into_iter()
            .map(|((verb, zone), windows)| Group {
                verb,
                zone: jiff::tz::db().get(zone).ok(),
                windows,
            })
            .collect();
        let allows = sorted
            .iter()
            .copied()
            .filter(|w| w.verb == Verb::Allow)
            .collect();
        List {
            weekly,
            once,
            allows,
        }
    }

    /// Why the list does not pass at `t`, if it does not.
    fn cause_at(&self, t: i64) -> Option<ClosedCause> {
        if let Some(w) = self.denied_by(t) {
            return Some(ClosedCause::Denied(w.clone()));
        }
        (!self.allowed(t))
            .then(|| ClosedCause::OutsideAllow(self.allows.iter().map(|w| (*w).clone()).collect()))
    }

    /// The smallest deny window holding `t`.
    fn denied_by(&self, t: i64) -> Option<&'a DeletionWindow> {
        let once = self
            .once
            .iter()
            .filter(|(w, i)| w.verb == Verb::Deny && contains(*i, t))
            .map(|(w, _)| *w);
        let weekly = self
            .weekly
            .iter()
            .filter(|g| g.verb == Verb::Deny)
            .filter_map(|g| {
                if !g.intervals(t).into_iter().any(|i| contains(i, t)) {
                    return None;
                }
                // Named by a window that holds `t` alone, else (it holds only
                // where two of them touch) by the group's first.
                g.windows
                    .iter()
                    .find(|(_, w)| g.intervals_of(&[w], t).into_iter().any(|i| contains(i, t)))
                    .or(g.windows.first())
                    .map(|(w, _)| *w)
            });
        once.chain(weekly).min()
    }

    /// The end of the deny windows holding `t`; `None` if none does.
    fn denied_until(&self, t: i64) -> Option<i64> {
        self.held_until(Verb::Deny, t)
    }

    /// The latest end of the windows of `verb` holding `t`; `None` if none
    /// does.
    fn held_until(&self, verb: Verb, t: i64) -> Option<i64> {
        let once = self
            .once
            .iter()
            .filter(|(w, i)| w.verb == verb && contains(*i, t))
            .map(|(_, (_, end))| *end);
        let weekly = self
            .weekly
            .iter()
            .filter(|g| g.verb == verb)
            .flat_map(|g| g.intervals(t))
            .filter(|i| contains(*i, t))
            .map(|(_, end)| end);
        once.chain(weekly).max()
    }

    /// The starts of the windows of `verb` in the days looked at from `t`.
    fn starts(&self, verb: Verb, t: i64) -> impl Iterator<Item = i64> + '_ {
        let once = self
            .once
            .iter()
            .filter(move |(w, _)| w.verb == verb)
            .map(|(_, (start, _))| *start);
        let weekly = self
            .weekly
            .iter()
            .filter(move |g| g.verb == verb)
            .flat_map(move |g| g.intervals(t))
            .map(|(start, _)| start);
        once.chain(weekly)
    }

    fn allowed(&self, t: i64) -> bool {
        if self.allows.is_empty() {
            return true;
        }
        let once = self
            .once
            .iter()
            .any(|(w, i)| w.verb == Verb::Allow && contains(*i, t));
        once || self
            .weekly
            .iter()
            .filter(|g| g.verb == Verb::Allow)
            .any(|g| g.intervals(t).into_iter().any(|i| contains(i, t)))
    }

    /// The next start of an allow window after `t`, or, when none starts
    /// in the days looked at, the last of those days: no opening before it.
    fn next_allow(&self, t: i64) -> i64 {
        self.starts(Verb::Allow, t)
            .filter(|&start| start > t)
            .min()
            .unwrap_or_else(|| t.saturating_add((DAYS_AFTER - 1) * DAY_SECS))
    }

    /// The first moment from `t` on (where the list passes) at which it
    /// does not: a deny window starting, or the end of the allow windows
    /// that hold one after another from `t`; a moment past `limit` when
    /// there is none up to it.
    fn next_fail(&self, t: i64, limit: i64) -> i64 {
        // The days looked at hold every weekly window's next occurrence.
        let denied = self
            .starts(Verb::Deny, t)
            .filter(|&start| start >= t)
            .min()
            .unwrap_or(i64::MAX);
        if self.allows.is_empty() {
            return denied;
        }
        let mut u = t;
        for _ in 0..MAX_STEPS {
            if u > limit || u >= denied {
                break;
            }
            match self.held_until(Verb::Allow, u) {
                Some(end) if end > u => u = end,
                _ => return u.min(denied),
            }
        }
        u.min(denied)
    }

    /// The first moment from `t` on at which the list passes, or a moment
    /// past `limit` when there is none up to it.
    fn next_pass(&self, mut t: i64, limit: i64) -> i64 {
        for _ in 0..MAX_STEPS {
            if t > limit {
                return t;
            }
            if let Some(until) = self.denied_until(t) {
                t = until;
            } else if !self.allowed(t) {
                t = self.next_allow(t);
            } else {
                return t;
            }
        }
        i64::MAX
    }
}
