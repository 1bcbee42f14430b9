//! The audit log: one JSON line per object a sweep removed or failed to
//! remove, appended by `apply --audit-log` and `watch --audit-log`, and
//! read back by `swarm-sweep audit`.
//!
//! A deletion that leaves no trace cannot be reviewed after the fact: who
//! (which controller, triggered how) removed which object of which release
//! on which cluster, why, and from which snapshot. Each line says all of
//! it on its own, so a rotated file, a `grep` or a `jq` filter still reads
//! whole facts. The lines are made here from the plan and the report's
//! per-object outcomes ([`ObjectReport`]), so the log and every other
//! reader of those outcomes say the same thing; the driver adds only the
//! time, the trigger and the digests, and does the file's IO.
//!
//! - [`entries`] builds the lines of one sweep;
//! - [`parse_line`] reads one back, bounded and never panicking;
//! - [`Filter`] keeps the lines `swarm-sweep audit --since --release` asks
//!   for;
//! - [`AuditEntry::text`] renders one for people, every name escaped.

mod filter;
mod parse;
mod text;

use serde::{Deserialize, Serialize};

use crate::format::FormatVersion;
use crate::names::named_enum;
use crate::plan::SweepPlan;
use crate::refs::SwarmName;
use crate::sweep::{ObjectKind, ObjectOutcome, ObjectReason, ObjectReport, SweepReport};
use crate::time::UnixTime;

pub use filter::{Filter, Since, SinceError};
pub use parse::{parse_line, LineError, MAX_LINE_BYTES};

/// The most characters of an engine's error kept in a line: the rest is
/// cut, so that every line written stays well under [`MAX_LINE_BYTES`]
/// whatever a daemon answered.
pub const MAX_ERROR_CHARS: usize = 4096;

named_enum! {
    /// What started the sweep that wrote a line.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Trigger {
        /// `apply`: a plan made and carried out at once.
        Apply = "apply",
        /// `apply --plan FILE`: a saved plan, reviewed before; the line
        /// carries the file's digest (`saved_plan_digest`).
        ApplyPlan = "apply --plan",
        /// `watch` (and `watch --once`).
        Watch = "watch",
    }
}

/// One line of the audit log: one object a sweep removed or tried to.
///
/// Every string is written as it was found (JSON escapes what needs it, so
/// no name can start a line of its own); [`AuditEntry::text`] escapes them
/// for a terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct AuditEntry {
    /// The format version ([`FORMAT_VERSION`](crate::FORMAT_VERSION)); a
    /// line of a newer version is reported, not guessed at.
    #[serde(default)]
    pub format_version: FormatVersion,
    /// When the driver recorded the outcome (the wall clock, UTC).
    pub time: UnixTime,
    /// The controller id whose sweep it was.
    pub controller: String,
    /// What started the sweep.
    pub trigger: Trigger,
    /// For `apply --plan`: `sha256:` and the hex SHA-256 of the saved plan
    /// file as it was read (what `sha256sum` prints for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_plan_digest: Option<String>,
    /// The swarm, as the plan names it (`""`: the local one).
    pub swarm: SwarmName,
    /// The cluster id the swarm reported when it was gathered; `None` when
    /// it reported none.
    pub cluster_id: Option<String>,
    /// The release (stack) the object belonged to.
    pub release: String,
    /// The application the release was stamped for.
    pub application: String,
    /// Why it was removed: `departed`, `destination_moved` (the release
    /// was deleted) or `dropped` (a live release's chart dropped it).
    pub reason: ObjectReason,
    /// The object's kind.
    pub kind: ObjectKind,
    /// The engine's id, when known (volumes have none).
    pub id: Option<String>,
    /// The object's name.
    pub name: String,
    /// For a volume: the node it was on (`(manager)` without node reach).
    pub node: Option<String>,
    /// `removed`, `already_gone`, `failed` (the step that removed it
    /// failed: it may or may not be gone) or `in_use` (left, since a
    /// service still names it).
    pub outcome: ObjectOutcome,
    /// For `failed`: what failed, as the engine said it (cut at
    /// [`MAX_ERROR_CHARS`] characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `sha256:` and the hex digest of the gathered snapshot the sweep was
    /// planned from (as `saved::snapshot_digest` computes it).
    pub snapshot_digest: String,
}

/// What started a sweep, as its lines say: the trigger, and for
/// `apply --plan` the saved plan's digest (never one without the other).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    trigger: Trigger,
    saved_plan_digest: Option<String>,
}

impl Origin {
    /// A sweep `apply` planned itself.
    pub fn apply() -> Self {
        Origin {
            trigger: Trigger::Apply,
            saved_plan_digest: None,
        }
    }

    /// A sweep of the saved plan whose file has digest `saved_plan_digest`
    /// ([`saved::bytes_digest`](crate::saved::bytes_digest) of its bytes).
    pub fn apply_plan(saved_plan_digest: impl Into<String>) -> Self {
        Origin {
            trigger: Trigger::ApplyPlan,
            saved_plan_digest: Some(saved_plan_digest.into()),
        }
    }

    /// A sweep of `watch`.
    pub fn watch() -> Self {
        Origin {
            trigger: Trigger::Watch,
            saved_plan_digest: None,
        }
    }

    /// The trigger.
    pub fn trigger(&self) -> Trigger {
        self.trigger
    }
}

/// The audit lines of one sweep: one per object of `report.objects`, in
/// the report's order, each with the cluster id `plan` knows for its swarm,
/// dated `time` (when the driver recorded the outcomes) and naming the
/// snapshot the plan was made from by `snapshot_digest`
/// ([`saved::snapshot_digest`](crate::saved::snapshot_digest)). Objects
/// of steps never attempted are not in the report, so not here: a line is
/// written only for what the sweep acted on.
pub fn entries(
    plan: &SweepPlan,
    report: &SweepReport,
    origin: &Origin,
    snapshot_digest: &str,
    time: UnixTime,
) -> Vec<AuditEntry> {
    let sweep = Shared {
        plan,
        controller: &report.controller,
        origin,
        snapshot_digest,
        time,
    };
    report.objects.iter().map(|o| sweep.entry(o)).collect()
}

/// What every line of one sweep shares.
struct Shared<'a> {
    plan: &'a SweepPlan,
    controller: &'a str,
    origin: &'a Origin,
    snapshot_digest: &'a str,
    time: UnixTime,
}

impl Shared<'_> {
    fn entry(&self, object: &ObjectReport) -> AuditEntry {
        let cluster_id = self
            .plan
            .swarms
            .iter()
            .find(|s| s.swarm == object.swarm)
            .and_then(|s| s.cluster_id.clone());
        AuditEntry {
            format_version: FormatVersion,
            time: self.time,
            controller: self.controller.to_owned(),
            trigger: self.origin.trigger,
            saved_plan_digest: self.origin.saved_plan_digest.clone(),
            swarm: object.swarm.clone(),
            cluster_id,
            release: object.release.clone(),
            application: object.application.clone(),
            reason: object.reason,
            kind: object.kind,
            id: object.id.clone(),
            name: object.name.clone(),
            node: object.node.clone(),
            outcome: object.outcome,
            error: object.error.as_deref().map(cut_error),
            snapshot_digest: self.snapshot_digest.to_owned(),
        }
        .fitted()
    }
}

/// The longest line [`entries`] makes: half the reader's bound. Names come
/// from whoever made the objects and nothing bounds their length; a line
/// the reader refuses would be a record nobody can read back.
pub const MAX_WRITTEN_BYTES: usize = MAX_LINE_BYTES / 2;

/// How many bytes `text` takes in a JSON string: a control character as
/// `\\u00XX` at most, a quote or a backslash escaped.
fn escaped_len(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => 2,
            c if u32::from(c) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum()
}

/// `error`, at most [`MAX_ERROR_CHARS`] characters of it.
fn cut_error(error: &str) -> String {
    crate::cut::cut(error, MAX_ERROR_CHARS)
}

impl AuditEntry {
    /// The entry, its longest string cut in half (marked `…`) until its line
    /// fits in [`MAX_WRITTEN_BYTES`]: a short field is never touched while
    /// a longer one is left, so that the names an operator searches by stay
    /// whole but for a name made to be too long.
    fn fitted(mut self) -> Self {
        while self.to_line().len() > MAX_WRITTEN_BYTES {
            let mut swarm = self.swarm.as_str().to_owned();
            let fields = [
                &mut self.controller,
                &mut swarm,
                &mut self.release,
                &mut self.application,
                &mut self.name,
            ]
            .into_iter()
            .chain(
                [
                    &mut self.cluster_id,
                    &mut self.id,
                    &mut self.node,
                    &mut self.error,
                ]
                .into_iter()
                .flatten(),
            );
            let Some(longest) = fields.max_by_key(|f| escaped_len(f)) else {
                break;
            };
            let half = longest.chars().count() / 2;
            if half == 0 {
                break;
            }
            let at = longest
                .char_indices()
                .nth(half)
                .map_or(longest.len(), |(at, _)| at);
            longest.truncate(at);
            longest.push('…');
            self.swarm = SwarmName::new(swarm);
        }
        self
    }

    /// The entry as one line of the log, without its line break. JSON
    /// escapes line breaks and every control character inside strings, so
    /// the line is always exactly one line.
    pub fn to_line(&self) -> String {
        // Plain data of strings and enums: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

crate::map_only::map_only! {
    AuditEntry => "an audit entry object";
}

#[cfg(test)]
mod tests;
