//! The generic JSON body of a notification, and its one-line summary.

use serde::Serialize;

use super::{Counts, Event, EventKind, EventObject};
use crate::format::FormatVersion;
use crate::refs::SwarmName;
use crate::time::UnixTime;

/// The body `--notify-format json` posts: one event, with who sent it,
/// when, and where to read the full report. Names are raw (JSON is
/// exact): a receiver that shows them escapes them for its medium.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[non_exhaustive]
pub struct Notification {
    /// The format version ([`FORMAT_VERSION`](crate::FORMAT_VERSION)).
    pub format_version: FormatVersion,
    /// What it is about: `deleted`, `deletion_failed`, `held`,
    /// `nodes_uncovered` or `stale_plan`.
    pub event: EventKind,
    /// The key repeats are recognised by: equal events of one cause are
    /// sent once until they change.
    pub cause: String,
    /// When the sweep decided to send it.
    pub time: UnixTime,
    /// The controller id of the sweep.
    pub controller: String,
    /// One line for people, raw.
    pub summary: String,
    /// The swarm, as the plan names it; `null` for the whole sweep.
    pub swarm: Option<SwarmName>,
    /// `held`: the hold reason.
    pub reason: Option<String>,
    /// `held`: when the hold was first seen.
    pub since: Option<UnixTime>,
    /// The releases it is about, sorted.
    pub releases: Vec<String>,
    /// The objects it is about, sorted (at most 1000).
    pub objects: Vec<EventObject>,
    /// Objects not listed in `objects`.
    pub objects_omitted: u64,
    /// Counts over every object.
    pub counts: Counts,
    /// The controller's `/report` (`watch --listen`); `null` otherwise.
    pub report_url: Option<String>,
}

impl Notification {
    /// The body of `event`, sent by `controller` at `time`; `report_url`
    /// where the controller serves its last report.
    pub fn new(event: &Event, controller: &str, time: UnixTime, report_url: Option<&str>) -> Self {
        Notification {
            format_version: FormatVersion,
            event: event.event,
            cause: event.cause.clone(),
            time,
            controller: controller.to_owned(),
            summary: summary(event),
            swarm: event.swarm.clone(),
            reason: event.reason.clone(),
            since: event.since,
            releases: event.releases.clone(),
            objects: event.objects.clone(),
            objects_omitted: event.objects_omitted,
            counts: event.counts,
            report_url: report_url.map(str::to_owned),
        }
    }

    /// The JSON posted.
    pub fn to_json(&self) -> String {
        // Plain strings and numbers: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// One line saying what `event` is, names raw: escape for the medium.
pub fn summary(event: &Event) -> String {
    let on = match &event.swarm {
        Some(swarm) => format!("on swarm {swarm}"),
        None => "in the sweep".to_owned(),
    };
    let c = &event.counts;
    let releases = plural(c.releases, "release", "releases");
    match event.event {
        EventKind::Deleted => format!(
            "deleted {} ({}) of {releases} {on}",
            plural(c.objects, "object", "objects"),
            plural(c.volumes, "volume", "volumes"),
        ),
        EventKind::DeletionFailed => format!(
            "failed to delete {} of {releases} {on}; the next sweep retries",
            plural(c.objects, "object", "objects"),
        ),
        EventKind::Held => format!(
            "held {on} ({}) since {}: {releases} not deleted",
            event.reason.as_deref().unwrap_or("held"),
            event
                .since
                .map_or_else(|| "now".to_owned(), |t| t.to_string()),
        ),
        EventKind::NodesUncovered => format!(
            "volume purge {on} could not reach {}: volumes of {releases} may be left there",
            plural(c.nodes, "node", "nodes"),
        ),
        EventKind::StalePlan => format!(
            "the saved plan is stale ({} changed): nothing was deleted; plan again",
            plural(c.objects, "object", "objects"),
        ),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
