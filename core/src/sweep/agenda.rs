//! Which releases may have an action to hand out, so that a poll looks at
//! those instead of at every release: a driver polls after each outcome,
//! and a scan of every release each time is quadratic in the plan's size.
//!
//! A release is a candidate from the start, after each outcome or
//! re-listing verdict for it, and once its retry time has come. Candidates
//! are taken lowest index first, which is the order a scan of every release
//! would find them in, so the actions handed out stay the same.

use std::collections::BTreeSet;

use crate::time::Timestamp;

#[derive(Debug, Clone, Default)]
pub(crate) struct Agenda {
    /// Releases that may have an action now.
    ready: BTreeSet<usize>,
    /// Each release's earliest retry, as the release last said.
    retry: Vec<Option<Timestamp>>,
    /// Every `(retry, release)`, for the earliest deadline of all.
    timers: BTreeSet<(Timestamp, usize)>,
    /// The timers still to move a release into `ready`; a subset of
    /// `timers`, so that a due timer is moved once, not at every poll.
    waking: BTreeSet<(Timestamp, usize)>,
}

impl Agenda {
    /// An agenda of `releases` releases, all of them candidates.
    pub fn new(releases: usize) -> Self {
        Agenda {
            ready: (0..releases).collect(),
            retry: vec![None; releases],
            timers: BTreeSet::new(),
            waking: BTreeSet::new(),
        }
    }

    /// Makes release `i` a candidate.
    pub fn push(&mut self, i: usize) {
        self.ready.insert(i);
    }

    /// The lowest-indexed candidate, once every release whose retry is due
    /// at `now` has been made one. It stops being a candidate: push it
    /// back if it had an action, [`park`](Self::park) it if not.
    pub fn pop(&mut self, now: Timestamp) -> Option<usize> {
        while let Some(&(at, i)) = self.waking.first() {
            if at > now {
                break;
            }
            self.waking.remove(&(at, i));
            self.ready.insert(i);
        }
        self.ready.pop_first()
    }

    /// Release `i` had nothing to do: it waits for its retry, if it has
    /// one. Its timer may have moved it to `ready` already, at a `now` the
    /// driver has since gone back from.
    pub fn park(&mut self, i: usize) {
        if let Some(Some(at)) = self.retry.get(i) {
            self.waking.insert((*at, i));
        }
    }

    /// Release `i`'s earliest retry is now `at`.
    pub fn set_retry(&mut self, i: usize, at: Option<Timestamp>) {
        let Some(slot) = self.retry.get_mut(i) else {
            return;
        };
        if *slot == at {
            return;
        }
        if let Some(old) = slot.take() {
            self.timers.remove(&(old, i));
            self.waking.remove(&(old, i));
        }
        if let Some(at) = at {
            self.timers.insert((at, i));
            self.waking.insert((at, i));
        }
        *slot = at;
    }

    /// The earliest retry of any release.
    pub fn earliest(&self) -> Option<Timestamp> {
        self.timers.first().map(|&(at, _)| at)
    }
}
