//! The generic JSON body of a notification, and its one-line summary.

use serde::Serialize;

use super::{Event, EventKind};
use crate::format::FormatVersion;
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
    /// When the sweep decided to send it.
    pub time: UnixTime,
    /// The controller id of the sweep.
    pub controller: String,
    /// One line for people, raw.
    pub summary: String,
    /// The controller's `/report` (`watch --listen`); `null` otherwise.
    pub report_url: Option<String>,
    /// The event: what it is about, its cause, swarm, releases, objects
    /// and counts.
    #[serde(flatten)]
    pub event: Event,
}

impl Notification {
    /// The body of `event`, sent by `controller` at `time`; `report_url`
    /// where the controller serves its last report.
    pub fn new(event: &Event, controller: &str, time: UnixTime, report_url: Option<&str>) -> Self {
        Notification {
            format_version: FormatVersion,
            time,
            controller: controller.to_owned(),
            summary: summary(event),
            report_url: report_url.map(str::to_owned),
            event: event.clone(),
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
