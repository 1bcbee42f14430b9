//! Notifications: which events a sweep gives people word of, and the
//! bodies that carry them to a webhook.
//!
//! A controller that deletes production stacks unattended must say when
//! it acts and when it is stuck, and must not say the same thing every few
//! minutes for a day: an alert storm teaches people to mute it. So the
//! decisions live here, once, and the driver only delivers:
//!
//! - [`decide`] turns what a sweep saw ([`Facts`]: the plan, the report, a
//!   stale saved plan) into the [`Event`]s worth sending: objects deleted
//!   (`deleted`), deletions that failed (`deletion_failed`), a hold that
//!   has lasted longer than the operator's patience (`held`), volumes
//!   left on nodes the purge could not reach (`nodes_uncovered`), a saved
//!   plan refused as stale (`stale_plan`);
//! - the [`NotifyMemory`] it updates keeps, per cause, since when a hold
//!   has been seen and what was last sent, so an event equal to the last
//!   one for its cause is not sent again until it changes (or clears and
//!   comes back). It is plain data with time as a parameter: the driver
//!   keeps it in its state file, so it survives restarts and cron runs;
//! - [`Notification`] is the generic JSON body (its schema is
//!   `schemas/notification.schema.json`), [`slack::body`] the body of a
//!   Slack incoming webhook (which Mattermost and Rocket.Chat accept too),
//!   with every name escaped for Slack's markup;
//! - [`webhook`] reads the webhook URLs an operator gives, and shows them
//!   only masked (a webhook URL is a credential).

mod body;
mod decide;
mod memory;
pub mod slack;
pub mod webhook;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::names::named_enum;
use crate::refs::SwarmName;
use crate::time::UnixTime;

pub use body::{summary, Notification};
pub use decide::{
    decide, Facts, MAX_ERROR_CHARS, MAX_NAME_CHARS, MAX_OBJECTS, MAX_OBJECT_BYTES,
    MAX_RELEASE_BYTES,
};
pub use memory::{HoldSeen, NotifyMemory, SentEvent};

named_enum! {
    /// What an [`Event`] is about. JSON and text give it by name.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum EventKind {
        /// The sweep removed objects of one swarm.
        Deleted = "deleted",
        /// The sweep failed to remove objects of one swarm.
        DeletionFailed = "deletion_failed",
        /// A hold has stopped deletions for longer than the operator's
        /// patience (`--notify-held-after`).
        Held = "held",
        /// A volume purge could not reach every node of a swarm: volumes
        /// of deleted releases may be left there.
        NodesUncovered = "nodes_uncovered",
        /// `apply --plan` refused a saved plan that no longer holds.
        StalePlan = "stale_plan",
    }
}

impl EventKind {
    /// Whether an event of this kind equal to the last one sent for its
    /// cause is held back. A state (a hold, a failure retried every sweep,
    /// nodes out of reach) repeats until someone acts; a deletion is an
    /// act, and the same names deleted again are another deletion.
    pub fn repeats_are_held_back(self) -> bool {
        !matches!(self, EventKind::Deleted)
    }
}

/// One thing worth telling people, with the objects it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Event {
    /// What it is about: `deleted`, `deletion_failed`, `held`,
    /// `nodes_uncovered` or `stale_plan`.
    pub event: EventKind,
    /// The key repeats are recognised by (`Event::cause`): one per kind,
    /// swarm (or the whole sweep) and hold reason; an event equal to the
    /// last one of its cause is not sent again until it changes.
    pub cause: String,
    /// The swarm, as the plan names it; `None` for the whole sweep.
    pub swarm: Option<SwarmName>,
    /// `held`: the hold reason (`unreconciled`, `swarm_unreadable`...).
    pub reason: Option<String>,
    /// `held`: when the hold was first seen.
    pub since: Option<UnixTime>,
    /// The releases it is about, sorted, each once; at most 1000
    /// (`MAX_OBJECTS`) within `MAX_RELEASE_BYTES`, each name cut at
    /// `MAX_NAME_CHARS` (all are counted in `counts.releases`).
    pub releases: Vec<String>,
    /// The objects it is about, sorted; at most 1000 (`MAX_OBJECTS`)
    /// within `MAX_OBJECT_BYTES`, the rest counted in `objects_omitted`;
    /// names cut at `MAX_NAME_CHARS`, errors at `MAX_ERROR_CHARS`.
    pub objects: Vec<EventObject>,
    /// Objects left out of `objects` to keep the body bounded.
    pub objects_omitted: u64,
    /// Counts, over every object (listed or omitted).
    pub counts: Counts,
}

/// An object an event is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct EventObject {
    /// The swarm, as the plan names it.
    pub swarm: SwarmName,
    /// The release it belongs to; `None` for a node.
    pub release: Option<String>,
    /// `service`, `network`, `secret`, `config`, `volume`, `record`, or
    /// `release` (a held release) and `node` (a node out of reach).
    pub kind: String,
    /// Its name, raw: escape it before showing it.
    pub name: String,
    /// `volume`: the node it was on.
    pub node: Option<String>,
    /// What became of it, for `deleted` and `deletion_failed`
    /// (`removed`, `already_gone`, `failed`).
    pub outcome: Option<String>,
    /// What failed, raw.
    pub error: Option<String>,
}

impl EventObject {
    /// An object of `kind` named `name`, of `release` on `swarm`.
    pub fn new(
        swarm: &SwarmName,
        release: Option<&str>,
        kind: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        EventObject {
            swarm: swarm.clone(),
            release: release.map(str::to_owned),
            kind: kind.into(),
            name: name.into(),
            node: None,
            outcome: None,
            error: None,
        }
    }
}

/// How much an event is about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Counts {
    /// Releases.
    pub releases: u64,
    /// Objects (volumes included).
    pub objects: u64,
    /// Volumes among the objects.
    pub volumes: u64,
    /// Nodes out of reach (`nodes_uncovered`).
    pub nodes: u64,
}

impl Event {
    /// The key an event's memory is kept under: its kind, its swarm (or
    /// the whole sweep) and, for a hold, the reason. A JSON array, so no
    /// swarm name can make two causes one.
    pub fn cause(kind: EventKind, swarm: Option<&SwarmName>, reason: Option<&str>) -> String {
        serde_json::json!([kind.as_str(), swarm.map(SwarmName::as_str), reason]).to_string()
    }

    /// What the memory keeps of this event once it is sent, to hand back
    /// to [`NotifyMemory::undelivered`] if it never arrives; `None` for a
    /// kind whose repeats are not held back (nothing is kept of it).
    pub fn receipt(&self) -> Option<SentEvent> {
        self.event.repeats_are_held_back().then(|| SentEvent {
            cause: self.cause.clone(),
            fingerprint: self.fingerprint(),
        })
    }

    /// What makes two events of one cause the same news: everything but
    /// the error texts, which may carry request ids or times and would
    /// make a failure retried every sweep look new every time.
    pub fn fingerprint(&self) -> String {
        let mut same = self.clone();
        for object in &mut same.objects {
            object.error = None;
        }
        // Plain strings and numbers: serializing cannot fail.
        let json = serde_json::to_vec(&same).unwrap_or_default();
        let hash = Sha256::digest(&json);
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
    }
}

#[cfg(test)]
mod tests;
