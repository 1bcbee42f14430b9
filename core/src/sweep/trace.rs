//! The sweep's trace: each action's start and end, and each engine event,
//! on the sweep's own clock.
//!
//! Where a sweep's time goes (an action waiting for a slot, a wait that
//! ended on a retry interval instead of an event, a step waiting for one it
//! need not) is invisible in its report, which says only what became of
//! each release. The trace records the times the driver passed in, and
//! nothing else: it reads no clock, so a trace taken in virtual time is as
//! exact as one taken on a swarm, and recording it changes no decision.
//!
//! Off unless [`Settings::traced`](super::Settings::traced) asks for it: a
//! sweep of a large plan holds one [`Span`] per action.

use serde::{Deserialize, Serialize};

use super::action::{ActionId, ActionKind, StackPart, Step, Where};
use super::outcome::{Failure, Outcome};
use crate::names::named_enum;
use crate::refs::SwarmName;
use crate::time::Timestamp;

/// What a sweep did, when: its actions in the order it handed them out,
/// and the engine events it was given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SweepTrace {
    /// The format version ([`FORMAT_VERSION`](crate::FORMAT_VERSION)).
    #[serde(default)]
    pub format_version: crate::format::FormatVersion,
    /// One per action, in the order handed out (by `action`).
    pub spans: Vec<Span>,
    /// One per engine event, in the order given.
    pub events: Vec<EventMark>,
}

/// One action: what it was, when it was handed out and when answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Span {
    /// The action's number ([`ActionId`]'s): from 0, in the order handed
    /// out.
    pub action: u64,
    /// What kind of step it was.
    pub step: Step,
    /// The stack part, for `remove_stack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<StackPart>,
    /// The swarm it ran on, as the plan names it.
    pub swarm: SwarmName,
    /// The release; absent for the re-listing of a swarm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    /// The node's id, for a volume step on one node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The volume, for `remove_volume`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    /// Actions outstanding once this one was handed out, itself included:
    /// at the driver's limit, the next action waits for a slot.
    pub in_flight: usize,
    /// When it was handed out, in microseconds on the sweep's clock.
    pub start_us: u64,
    /// When its outcome was taken; absent while it is outstanding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_us: Option<u64>,
    /// What it answered; absent while it is outstanding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<SpanOutcome>,
}

named_enum! {
    /// What an action answered, as a trace names it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum SpanOutcome {
        /// `done`: the removal worked.
        Done = "done",
        /// `answered`: a read or a listing answered.
        Answered = "answered",
        /// `in_use`: still in use; tried again later.
        InUse = "in_use",
        /// `gone`: not found (already gone).
        Gone = "gone",
        /// `failed`: any other failure.
        Failed = "failed",
    }
}

impl SpanOutcome {
    /// The trace's name for `outcome`.
    pub fn of(outcome: &Outcome) -> Self {
        match outcome {
            Outcome::Done => SpanOutcome::Done,
            Outcome::Volumes(_) | Outcome::Releases(_) | Outcome::Stamps(_) | Outcome::Usage(_) => {
                SpanOutcome::Answered
            }
            Outcome::Failed(Failure::InUse) => SpanOutcome::InUse,
            Outcome::Failed(Failure::Gone) => SpanOutcome::Gone,
            Outcome::Failed(_) => SpanOutcome::Failed,
        }
    }
}

/// One engine event the sweep was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct EventMark {
    /// When it was given, in microseconds on the sweep's clock.
    pub at_us: u64,
    /// The swarm it came from.
    pub swarm: SwarmName,
    /// The release whose container went.
    pub release: String,
    /// The node's id, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Whether it made a waiting removal due at once.
    pub woke: bool,
}

/// Microseconds since the sweep's epoch; saturating, though no sweep runs
/// for the half-million years that would take.
fn micros(at: Timestamp) -> u64 {
    u64::try_from(at.since_epoch().as_micros()).unwrap_or(u64::MAX)
}

impl SweepTrace {
    /// Records `kind`, handed out as `id` at `now` with `in_flight`
    /// actions outstanding. Ids are handed out from 0 in order, so a
    /// span's index is its action's number.
    pub(crate) fn start(
        &mut self,
        id: ActionId,
        kind: &ActionKind,
        in_flight: usize,
        now: Timestamp,
    ) {
        debug_assert_eq!(usize::try_from(id.0).ok(), Some(self.spans.len()));
        let volume = match kind {
            ActionKind::RemoveVolume { volume, .. } => Some(volume.clone()),
            _ => None,
        };
        self.spans.push(Span {
            action: id.0,
            step: kind.step(),
            part: kind.part(),
            swarm: kind.swarm().clone(),
            release: kind.target().map(|t| t.release.release.clone()),
            node: kind.at().and_then(Where::node_id).map(str::to_owned),
            volume,
            in_flight,
            start_us: micros(now),
            end_us: None,
            outcome: None,
        });
    }

    /// Records that action `id` answered `outcome` at `now`.
    pub(crate) fn end(&mut self, id: ActionId, outcome: &Outcome, now: Timestamp) {
        let span = usize::try_from(id.0)
            .ok()
            .and_then(|i| self.spans.get_mut(i));
        let Some(span) = span else {
            debug_assert!(false, "action {id} answered without a span");
            return;
        };
        span.end_us = Some(micros(now));
        span.outcome = Some(SpanOutcome::of(outcome));
    }

    /// Records an event of `release` on `swarm`, from node `node`, given
    /// at `now`; `woke`: it made a waiting removal due.
    pub(crate) fn event(
        &mut self,
        swarm: &SwarmName,
        release: &str,
        node: Option<&str>,
        woke: bool,
        now: Timestamp,
    ) {
        self.events.push(EventMark {
            at_us: micros(now),
            swarm: swarm.clone(),
            release: release.to_owned(),
            node: node.map(str::to_owned),
            woke,
        });
    }
}
