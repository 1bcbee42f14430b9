//! What notifications remember from one sweep to the next: since when each
//! hold has been seen, and what was last sent for each cause. The data
//! is `crate::notify_memory`'s, kept in the grace state; the rules that
//! change it are here.

use std::collections::{BTreeMap, BTreeSet};

use super::{Event, EventKind};
pub use crate::notify_memory::{HoldSeen, NotifyMemory, SentEvent};
use crate::time::UnixTime;

impl NotifyMemory {
    /// Remembers the holds of a plan made at `now`: each keeps the time it
    /// was first seen, a new one starts now, and one the plan no longer
    /// has is forgotten (a hold that clears and comes back starts over).
    pub(crate) fn see_holds<'a>(
        &mut self,
        causes: impl IntoIterator<Item = &'a str>,
        now: UnixTime,
    ) {
        let held: BTreeMap<String, UnixTime> = causes
            .into_iter()
            .map(|cause| (cause.to_owned(), self.held_since(cause).unwrap_or(now)))
            .collect();
        self.holds = held
            .into_iter()
            .map(|(cause, since)| HoldSeen { cause, since })
            .collect();
    }

    /// The events of `candidates` to send: each unless it equals the last
    /// one sent for its cause and its kind holds repeats back. Remembers
    /// what is sent, and forgets the causes of the `evaluated` kinds that
    /// no candidate has any more (cleared: the next one is news again).
    pub(crate) fn admit(&mut self, candidates: Vec<Event>, evaluated: &[EventKind]) -> Vec<Event> {
        let mut last: BTreeMap<String, String> = std::mem::take(&mut self.sent)
            .into_iter()
            .map(|s| (s.cause, s.fingerprint))
            .collect();
        let present: BTreeSet<&str> = candidates.iter().map(|e| e.cause.as_str()).collect();
        last.retain(|cause, _| {
            present.contains(cause.as_str())
                || matches!(cause_kind(cause), Some(kind) if !evaluated.contains(&kind))
        });
        let mut admitted = Vec::with_capacity(candidates.len());
        for event in candidates {
            if !event.event.repeats_are_held_back() {
                admitted.push(event);
                continue;
            }
            let fingerprint = event.fingerprint();
            if last.get(&event.cause) == Some(&fingerprint) {
                continue;
            }
            last.insert(event.cause.clone(), fingerprint);
            admitted.push(event);
        }
        self.sent = last
            .into_iter()
            .map(|(cause, fingerprint)| SentEvent { cause, fingerprint })
            .collect();
        admitted
    }

    /// Forgets that `sent` was sent: its delivery failed, so the next
    /// sweep that finds the same event sends it again rather than staying
    /// silent about something nobody heard. `true` when it was
    /// remembered; a newer event of the same cause is kept.
    pub fn undelivered(&mut self, sent: &SentEvent) -> bool {
        let before = self.sent.len();
        self.sent.retain(|s| s != sent);
        self.sent.len() != before
    }
}

/// The kind a cause key names; `None` for a key this version did not write.
fn cause_kind(cause: &str) -> Option<EventKind> {
    let parts: Vec<serde_json::Value> = serde_json::from_str(cause).ok()?;
    let name = parts.first()?.as_str()?;
    EventKind::ALL.iter().copied().find(|k| k.as_str() == name)
}
