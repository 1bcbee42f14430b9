//! One removal that may find its object still in use: a stack part or a
//! volume. The one retry policy of the sweep lives here, so that a network
//! and a volume wait by the same rule and no driver needs a wait of its
//! own.
//!
//! An object in use is tried again after [`Settings::retry_interval`], or
//! at once when an engine event says something that held it went
//! ([`Removal::wake`]); it is given up once its own settle deadline, set at
//! its first attempt, has passed. Each object gets the whole settle timeout
//! from its own first attempt, so a slow first object does not eat the
//! time of the others.
//!
//! An event reports what one daemon did, and the rest of the engine learns
//! it a moment later: a node's container dies before the manager records
//! its task stopped, and no event says when it has. An attempt an event
//! woke (or one in flight when it came) that still finds the object in use
//! is therefore followed up soon, after [`FOLLOW_UP`], then twice as long
//! each time, until the retry interval is reached again: waiting out the
//! whole interval there cost up to an interval per wait, and a sweep has
//! several waits in a row. Follow-ups only come sooner than the interval
//! would, and never move the deadline.
//!
//! An object another workload may use (a volume, a network, a secret, a
//! config) is judged by a read of who uses what before its first attempt;
//! while its removal waits on the engine's "in use", another workload may
//! start to name it (a service at 0 replicas holds no container, so the
//! engine lets a volume go). Such a removal is [`Removal::guarded`]: each
//! retry waits for a fresh read ([`ActionKind::ReadUsage`]), one read for
//! every guarded retry due when it is handed out ([`start_reread`]), and
//! goes only once that read found nobody else using its object
//! ([`Removal::cleared`]).
//!
//! [`ActionKind::ReadUsage`]: super::ActionKind::ReadUsage

use std::collections::BTreeMap;
use std::time::Duration;

use super::action::StackPart;
use super::ledger::Ledger;
use super::report::ObjectOutcome;
use super::Settings;
use crate::objects::ObjectRef;
use crate::time::Timestamp;

/// The first follow-up after an event: long enough for a manager to take
/// a node's report (tens of milliseconds on a loaded two-core machine),
/// short against the engine's own waits (seconds).
pub(crate) const FOLLOW_UP: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Removal {
    state: State,
    /// Set at the first attempt.
    deadline: Option<Timestamp>,
    /// The wait before the next attempt when this one finds the object in
    /// use, while an event's news may still be on its way; `None`: the
    /// retry interval.
    follow_up: Option<Duration>,
    /// Whether the next attempt may go on the read it was last judged by.
    judged: Judged,
}

/// What a removal's next attempt needs of the reads of who uses what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    /// Nothing: its object is nobody else's to use (a stack's services,
    /// their tasks).
    Never,
    /// Judged by a read made since its last attempt: it may go when due.
    Fresh,
    /// Found in use since it was judged: its next attempt waits for a
    /// fresh read.
    Stale,
    /// The fresh read it waits for is handed out.
    Reading,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// May be handed out at `not_before` (at once when `None`).
    Ready {
        not_before: Option<Timestamp>,
    },
    Outstanding,
    Removed,
    Failed,
}

/// What became of an attempt that found the object in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InUse {
    /// It is tried again.
    Retrying,
    /// Its settle deadline has passed: given up.
    GaveUp,
}

impl Removal {
    /// Not tried yet; may go at once, and each retry as it comes due.
    pub fn ready() -> Self {
        Removal {
            state: State::Ready { not_before: None },
            deadline: None,
            follow_up: None,
            judged: Judged::Never,
        }
    }

    /// Not tried yet, of an object another workload may use, judged free
    /// by the read that decided it: may go at once, and each retry after
    /// an "in use" only once a fresh read found it free again.
    pub fn guarded() -> Self {
        Removal {
            judged: Judged::Fresh,
            ..Removal::ready()
        }
    }

    /// Whether its time to be tried has come at `now`.
    fn has_come(&self, now: Timestamp) -> bool {
        matches!(self.state, State::Ready { not_before } if not_before.is_none_or(|t| t <= now))
    }

    /// Whether it may be handed out at `now`.
    pub fn is_due(&self, now: Timestamp) -> bool {
        self.has_come(now) && matches!(self.judged, Judged::Never | Judged::Fresh)
    }

    /// Whether, at `now`, it waits for a fresh read of who uses its object
    /// that is not handed out yet.
    fn needs_read(&self, now: Timestamp) -> bool {
        self.has_come(now) && self.judged == Judged::Stale
    }

    /// Waiting for a read handed out for it.
    pub fn is_reading(&self) -> bool {
        self.judged == Judged::Reading
    }

    /// Not in flight, and still to be tried: whatever a read of who uses
    /// what says of its object applies to its next attempt.
    pub fn is_waiting(&self) -> bool {
        matches!(self.state, State::Ready { .. })
    }

    /// The read it waited for found nobody else using its object: it may
    /// go when due. A removal that did not wait for that read is left as
    /// it is (one that went stale while the read was out waits for the
    /// next).
    pub fn cleared(&mut self) {
        if self.judged == Judged::Reading {
            self.judged = Judged::Fresh;
        }
    }

    /// Handed out at `now`: outstanding until its outcome comes.
    pub fn start(&mut self, now: Timestamp, settings: &Settings) {
        debug_assert!(self.is_due(now), "a removal started before it was due");
        self.state = State::Outstanding;
        if self.deadline.is_none() {
            self.deadline = Some(now + settings.settle_timeout);
        }
    }

    pub fn is_outstanding(&self) -> bool {
        self.state == State::Outstanding
    }

    /// Still to be tried or answered.
    pub fn is_open(&self) -> bool {
        matches!(self.state, State::Ready { .. } | State::Outstanding)
    }

    pub fn is_failed(&self) -> bool {
        self.state == State::Failed
    }

    /// The attempt worked, or the object was already gone.
    pub fn removed(&mut self) {
        self.state = State::Removed;
        self.settled();
    }

    /// The attempt failed for good.
    pub fn failed(&mut self) {
        self.state = State::Failed;
        self.settled();
    }

    /// Finished: it waits for no read any more. One left marked reading
    /// (failed because its read failed) would hold back every other
    /// removal's read for good, and the sweep would never end.
    fn settled(&mut self) {
        if self.judged != Judged::Never {
            self.judged = Judged::Fresh;
        }
    }

    /// The attempt found the object in use at `now`: tried again after
    /// the retry interval, the last try landing on the deadline itself so
    /// that an object let go just in time is not given up on early.
    pub fn in_use(&mut self, now: Timestamp, settings: &Settings) -> InUse {
        let deadline = self.deadline.unwrap_or(now);
        if now < deadline {
            let wait = match self.follow_up.take() {
                Some(wait) if wait < settings.retry_interval => {
                    self.follow_up = Some(wait * 2);
                    wait
                }
                _ => settings.retry_interval,
            };
            let next = (now + wait).min(deadline);
            self.state = State::Ready {
                not_before: Some(next),
            };
            if self.judged != Judged::Never {
                self.judged = Judged::Stale;
            }
            InUse::Retrying
        } else {
            self.failed();
            InUse::GaveUp
        }
    }

    /// Something that held the object went: a removal waiting for its
    /// retry may go at once, and if that attempt (or the one in flight)
    /// still finds it in use, the next follows soon (see the module's
    /// docs). Its deadline stays, so events never extend the wait. Whether
    /// it became due.
    pub fn wake(&mut self) -> bool {
        match self.state {
            State::Ready {
                not_before: Some(_),
            } => {
                self.state = State::Ready { not_before: None };
                self.follow_up = Some(FOLLOW_UP);
                true
            }
            State::Outstanding => {
                self.follow_up = Some(FOLLOW_UP);
                false
            }
            State::Ready { not_before: None } | State::Removed | State::Failed => false,
        }
    }

    /// When a removal waiting for its retry becomes due (or needs its
    /// read); `None` while its read is out, whose answer decides it.
    pub fn retry_at(&self) -> Option<Timestamp> {
        match self.state {
            State::Ready { .. } if self.judged == Judged::Reading => None,
            State::Ready { not_before } => not_before,
            State::Outstanding | State::Removed | State::Failed => None,
        }
    }
}

/// Marks every one of `removals` whose retry has come at `now` and waits
/// for a fresh read of who uses its object as waiting for the read the
/// caller hands out; whether there is one to hand out. One read at a time:
/// while one is out, a retry that comes due waits for the next, which the
/// answer makes ready.
pub(crate) fn start_reread<'a>(
    removals: impl IntoIterator<Item = &'a mut Removal>,
    now: Timestamp,
) -> bool {
    let mut removals: Vec<&mut Removal> = removals.into_iter().collect();
    if removals.iter().any(|r| r.is_reading()) {
        return false;
    }
    let mut any = false;
    for removal in removals.iter_mut().filter(|r| r.needs_read(now)) {
        removal.judged = Judged::Reading;
        any = true;
    }
    any
}

/// The earliest time one of `removals` may be tried or needs its read.
/// While a read is out, a retry waiting for a read waits for its answer,
/// not for a time: a time already come with nothing to hand out would
/// have a driver wait on it over and over.
pub(crate) fn next_retry<'a>(removals: impl IntoIterator<Item = &'a Removal>) -> Option<Timestamp> {
    let mut reading = false;
    let mut free: Option<Timestamp> = None;
    let mut stale: Option<Timestamp> = None;
    for removal in removals {
        let at = removal.retry_at();
        match removal.judged {
            Judged::Reading => reading = true,
            Judged::Stale => stale = earlier(stale, at),
            Judged::Never | Judged::Fresh => free = earlier(free, at),
        }
    }
    if reading {
        free
    } else {
        earlier(free, stale)
    }
}

/// The earlier of two times, either of which may be absent.
fn earlier(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    [a, b].into_iter().flatten().min()
}

/// Takes what a read of who uses what left of `part` to remove: its
/// removal may go with `objects`, or, nothing of it left (all of it stays
/// for another workload), is done with nothing removed.
pub(crate) fn rejudged(
    parts: &mut BTreeMap<StackPart, Removal>,
    part_objects: &mut BTreeMap<StackPart, Vec<ObjectRef>>,
    part: StackPart,
    objects: Vec<ObjectRef>,
) {
    let Some(removal) = parts.get_mut(&part) else {
        return;
    };
    if objects.is_empty() {
        removal.removed();
    } else {
        removal.cleared();
    }
    part_objects.insert(part, objects);
}

/// Fails every part removal waiting for a read of who uses what that
/// could not be made, each of its objects recorded failed with `message`:
/// without the read nothing proves them unused, and the records stay.
pub(crate) fn fail_reading(
    parts: &mut BTreeMap<StackPart, Removal>,
    objects: &BTreeMap<StackPart, Vec<ObjectRef>>,
    ledger: &mut Ledger,
    message: &str,
) {
    for (part, removal) in parts.iter_mut() {
        if removal.is_reading() {
            removal.failed();
            let listed = objects.get(part).map(Vec::as_slice).unwrap_or_default();
            ledger.part(*part, listed, ObjectOutcome::Failed, Some(message));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn settings() -> Settings {
        Settings::new(Duration::from_secs(2), Duration::from_secs(5))
    }

    #[test]
    fn in_use_retries_until_the_deadline_and_lands_on_it() {
        let s = settings();
        let mut r = Removal::ready();
        r.start(Timestamp::ZERO, &s);
        assert_eq!(r.in_use(Timestamp::from_millis(4000), &s), InUse::Retrying);
        assert_eq!(r.retry_at(), Some(Timestamp::from_millis(5000)));
        assert!(!r.is_due(Timestamp::from_millis(4999)));
        r.start(Timestamp::from_millis(5000), &s);
        assert_eq!(r.in_use(Timestamp::from_millis(5000), &s), InUse::GaveUp);
        assert!(r.is_failed());
    }

    #[test]
    fn a_wake_makes_a_waiting_removal_due_without_moving_its_deadline() {
        let s = settings();
        let mut r = Removal::ready();
        r.start(Timestamp::ZERO, &s);
        r.in_use(Timestamp::from_millis(10), &s);
        assert!(r.wake());
        assert!(r.is_due(Timestamp::from_millis(10)));
        assert!(!r.wake(), "a due removal has nothing to wake");
        r.start(Timestamp::from_millis(10), &s);
        assert_eq!(r.in_use(Timestamp::from_millis(6000), &s), InUse::GaveUp);
    }

    #[test]
    fn after_a_wake_in_use_is_followed_up_soon_then_back_off_to_the_interval() {
        let s = Settings::new(Duration::from_secs(2), Duration::from_secs(30));
        let mut r = Removal::ready();
        r.start(Timestamp::ZERO, &s);
        r.in_use(Timestamp::ZERO, &s);
        assert_eq!(r.retry_at(), Some(Timestamp::from_millis(2000)));
        assert!(r.wake());
        let mut now = Timestamp::from_millis(500);
        let mut waits = Vec::new();
        for _ in 0..7 {
            r.start(now, &s);
            r.in_use(now, &s);
            let next = r.retry_at().unwrap();
            waits.push(next.saturating_duration_since(now).as_millis());
            now = next;
        }
        assert_eq!(waits, [100, 200, 400, 800, 1600, 2000, 2000]);
    }

    #[test]
    fn an_event_during_an_attempt_is_followed_up_and_never_passes_the_deadline() {
        let s = Settings::new(Duration::from_secs(2), Duration::from_millis(1050));
        let mut r = Removal::ready();
        r.start(Timestamp::ZERO, &s);
        assert!(!r.wake(), "nothing became due: it is in flight");
        r.in_use(Timestamp::from_millis(1000), &s);
        assert_eq!(r.retry_at(), Some(Timestamp::from_millis(1050)));
        r.start(Timestamp::from_millis(1050), &s);
        assert_eq!(r.in_use(Timestamp::from_millis(1050), &s), InUse::GaveUp);
    }

    #[test]
    fn without_an_event_in_use_waits_the_interval() {
        let s = Settings::new(Duration::from_secs(2), Duration::from_secs(30));
        let mut r = Removal::ready();
        for at in [0, 2000, 4000] {
            r.start(Timestamp::from_millis(at), &s);
            r.in_use(Timestamp::from_millis(at), &s);
            assert_eq!(r.retry_at(), Some(Timestamp::from_millis(at + 2000)));
        }
    }

    #[test]
    fn a_guarded_retry_waits_for_a_read_and_goes_once_it_cleared() {
        let s = settings();
        let mut r = Removal::guarded();
        // Its first attempt was judged by the read that decided it.
        assert!(r.is_due(Timestamp::ZERO));
        r.start(Timestamp::ZERO, &s);
        r.in_use(Timestamp::ZERO, &s);
        let at = Timestamp::from_millis(2000);
        assert_eq!(r.retry_at(), Some(at));
        assert!(!r.is_due(at), "not without a fresh read");
        assert!(!start_reread([&mut r], Timestamp::from_millis(1999)));
        assert!(start_reread([&mut r], at));
        assert!(r.is_reading() && r.is_waiting());
        assert_eq!(r.retry_at(), None, "the read's answer decides it");
        assert!(!start_reread([&mut r], at), "one read at a time");
        r.cleared();
        assert!(r.is_due(at));
        r.start(at, &s);
        assert!(!r.is_waiting());
        r.in_use(at, &s);
        assert!(!r.is_due(Timestamp::from_millis(4000)), "every retry reads");
    }

    #[test]
    fn an_unguarded_retry_needs_no_read() {
        let s = settings();
        let mut r = Removal::ready();
        r.start(Timestamp::ZERO, &s);
        r.in_use(Timestamp::ZERO, &s);
        let at = Timestamp::from_millis(2000);
        assert!(r.is_due(at));
        assert!(!start_reread([&mut r], at));
    }

    #[test]
    fn one_read_covers_every_retry_due_and_a_later_one_waits_for_the_next() {
        let s = settings();
        let (mut a, mut b, mut c) = (Removal::guarded(), Removal::guarded(), Removal::guarded());
        for (r, at) in [(&mut a, 0), (&mut b, 0), (&mut c, 500)] {
            r.start(Timestamp::from_millis(at), &s);
            r.in_use(Timestamp::from_millis(at), &s);
        }
        let at = Timestamp::from_millis(2000);
        assert_eq!(next_retry([&a, &b, &c]), Some(at));
        assert!(start_reread([&mut a, &mut b, &mut c], at));
        assert!(a.is_reading() && b.is_reading() && !c.is_reading());
        // While the read is out, c's time coming is no deadline for a
        // driver to wait on: the read's answer is.
        assert_eq!(next_retry([&a, &b, &c]), None);
        let later = Timestamp::from_millis(2500);
        assert!(!start_reread([&mut a, &mut b, &mut c], later));
        for r in [&mut a, &mut b, &mut c] {
            r.cleared();
        }
        assert!(a.is_due(later) && b.is_due(later));
        assert!(
            !c.is_due(later),
            "c went stale after the read was handed out"
        );
        assert_eq!(next_retry([&a, &b, &c]), Some(at));
        assert!(start_reread([&mut c], later));
    }

    #[test]
    fn a_removal_failed_while_reading_holds_back_no_other_read() {
        let s = settings();
        let (mut a, mut b) = (Removal::guarded(), Removal::guarded());
        a.start(Timestamp::ZERO, &s);
        a.in_use(Timestamp::ZERO, &s);
        let at = Timestamp::from_millis(2000);
        assert!(start_reread([&mut a, &mut b], at));
        // The read failed: a fails, and b, tried since, is found in use.
        a.failed();
        assert!(!a.is_reading());
        b.start(at, &s);
        b.in_use(at, &s);
        let later = Timestamp::from_millis(4000);
        assert_eq!(next_retry([&a, &b]), Some(later));
        assert!(start_reread([&mut a, &mut b], later));
        assert!(b.is_reading() && !a.is_reading());
    }

    #[test]
    fn an_outstanding_or_finished_removal_is_not_woken() {
        let s = settings();
        let mut r = Removal::ready();
        r.start(Timestamp::ZERO, &s);
        assert!(!r.wake());
        r.removed();
        assert!(!r.wake());
        assert!(!r.is_open());
    }
}
