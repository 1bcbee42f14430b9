//! The memory of notifications, as plain data: kept in the grace state
//! file beside the first-seen times, so it survives restarts and cron
//! runs. Apart from `crate::notify`, which reads plans and reports, so
//! that the state (read by the plan) does not depend on them; the rules
//! that change it are `crate::notify`'s.

use serde::{Deserialize, Serialize};

use crate::time::UnixTime;

/// The memory of notifications, kept in the state file (`--state`) beside
/// the grace period's first-seen times. Plain data: the driver passes the
/// time in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct NotifyMemory {
    /// Each hold of the last plan, by cause, with when it was first seen;
    /// sorted by cause.
    #[serde(default)]
    pub holds: Vec<HoldSeen>,
    /// The last event sent for each cause still in force, by its
    /// fingerprint; sorted by cause.
    #[serde(default)]
    pub sent: Vec<SentEvent>,
}

/// A hold, and when it was first seen.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct HoldSeen {
    /// The hold's cause (`notify::Event::cause`).
    pub cause: String,
    /// When a plan first had it.
    pub since: UnixTime,
}

/// The last event sent for a cause.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct SentEvent {
    /// The cause (`notify::Event::cause`).
    pub cause: String,
    /// Its `notify::Event::fingerprint`.
    pub fingerprint: String,
}

impl NotifyMemory {
    /// Nothing remembered.
    pub fn is_empty(&self) -> bool {
        self.holds.is_empty() && self.sent.is_empty()
    }

    /// When the hold of `cause` was first seen, if it is remembered.
    pub fn held_since(&self, cause: &str) -> Option<UnixTime> {
        self.holds
            .iter()
            .find(|h| h.cause == cause)
            .map(|h| h.since)
    }
}

crate::map_only::map_only! {
    NotifyMemory => "a notify memory object";
    HoldSeen => "a hold seen object";
    SentEvent => "a sent event object";
}
