//! The grace period (`policy.min_departed_for`): a release is deleted only
//! once it has been seen departed continuously for at least that long.
//!
//! The core reads no clock: the snapshot carries `now` and, per release,
//! when it was first seen departed (`departed_since`). The driver keeps
//! those first-seen times between sweeps in a state document
//! ([`GraceState`]), filled into the next snapshot with
//! [`GraceState::apply_to`] and rebuilt from the plan
//! ([`GraceState::after_plan`]) or from the plan and the sweep's report
//! ([`GraceState::after_sweep`]); those three live downstream of the plan
//! and the sweep (`grace_update.rs`), so that the plan can read this
//! module's facts without the state depending on the plan. A release missing from the state counts
//! as first seen now, so anything lost restarts the clock: the safe
//! direction.
//!
//! A state proves "seen departed continuously" only while it was kept
//! current: one left behind for weeks (a controller that moved to another
//! node and came back) would date a release declared again and departed
//! again since back to its first departure, and delete it at once. So a
//! state records when it was written (`written_at`), and one older than a
//! maximum age, or written after `now` (the clock went back), is not used
//! ([`GraceState::current`]): every clock restarts at `now`.

use std::collections::HashSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::format::FormatVersion;
use crate::map_only::Obj;
use crate::notify_memory::NotifyMemory;
use crate::refs::SwarmName;
use crate::snapshot::{one_json_document, SnapshotError};
use crate::time::UnixTime;

/// A release the rules call departed and deletable, and since when it has
/// been seen so.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Departed {
    /// The swarm as the plan names it (the smallest name of its cluster).
    pub swarm: SwarmName,
    /// The release (stack) name on that swarm.
    pub release: String,
    /// When it was first seen departed.
    pub since: UnixTime,
}

impl Departed {
    /// `release` of `swarm` (the plan's name of its cluster), first seen
    /// departed at `since`.
    pub fn new(swarm: impl Into<SwarmName>, release: impl Into<String>, since: UnixTime) -> Self {
        Departed {
            swarm: swarm.into(),
            release: release.into(),
            since,
        }
    }
}

/// The first-seen times kept between sweeps: the state file of
/// `--state FILE`.
///
/// # Example
///
/// Two runs an hour and a half apart, with a grace period of one hour:
/// the first only starts the clock of the departed release, the second,
/// with the state the first wrote, deletes it.
///
/// ```
/// use std::time::Duration;
///
/// use sweep_core::{plan, GraceState, Snapshot, UnixTime};
///
/// let at = |now: &str| {
///     Snapshot::from_json(&format!(
///         r#"{{"policy": {{"min_departed_for": "1h"}}, "now": "{now}",
///             "app_set": {{"loaded": true, "applications": [
///                 {{"name": "blog", "swarm": "", "releases": []}}]}},
///             "swarms": [{{"swarm": "", "releases": [
///                 {{"name": "shop", "owner": "cd/default/shop:release/shop"}}]}}]}}"#
///     ))
/// };
///
/// // The first run: no state file yet, so every clock starts now.
/// let mut first = at("2026-12-01T08:00:00Z")?;
/// let now = first.now.expect("the snapshot says when it was gathered");
/// GraceState::empty(now).apply_to(&mut first);
/// let plan_1 = plan(&first)?;
/// assert!(plan_1.deletions.is_empty(), "`shop` is in its grace period");
/// let file = GraceState::after_plan(&plan_1, now).to_json_pretty();
///
/// // The second run reads the file back, used only if it is current.
/// let mut second = at("2026-12-01T09:30:00Z")?;
/// let now = UnixTime::parse_rfc3339("2026-12-01T09:30:00Z")?;
/// let max_age = Some(Duration::from_secs(24 * 60 * 60));
/// let (state, not_current) = GraceState::from_json(&file)?.current(now, max_age);
/// assert_eq!(not_current, None);
/// state.apply_to(&mut second);
/// let plan_2 = plan(&second)?;
/// assert_eq!(plan_2.deletions.len(), 1);
/// assert_eq!(plan_2.deletions[0].release, "shop");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(deny_unknown_fields))]
#[non_exhaustive]
pub struct GraceState {
    /// The format version ([`FORMAT_VERSION`](crate::FORMAT_VERSION)); a
    /// state of another version is refused, never read as empty.
    pub format_version: FormatVersion,
    /// When the state was written: the `now` of the plan or sweep it came
    /// from. A state read back too long after, or read at a `now` before
    /// it (the clock went back), is not used: every clock starts over.
    pub written_at: UnixTime,
    /// Sorted by swarm and release, one entry per release.
    pub departed: Vec<Departed>,
    /// What notifications remember between runs (`--notify`): since when
    /// each hold has been seen, and what was last sent per cause. Left out
    /// when empty; a state written before it existed reads as empty.
    #[serde(default, skip_serializing_if = "NotifyMemory::is_empty")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub notify: NotifyMemory,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateWire {
    // Required: a file that does not say which format it is could be
    // anything, and read as empty it would restart every clock silently.
    #[serde(rename = "format_version")]
    _format_version: FormatVersion,
    // Required: a state that does not say when it was written cannot show
    // it was kept current.
    written_at: UnixTime,
    departed: Vec<Departed>,
    #[serde(default)]
    notify: NotifyMemory,
}

/// Why a state is not current, so its entries are not used
/// ([`GraceState::current`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotCurrent {
    /// Written longer ago than the maximum age: it may have missed a
    /// release declared again and departed again since.
    #[error("it was written at {written_at}, {} ago, more than the maximum age of {}", crate::duration::show(*.age), crate::duration::show(*.max_age))]
    TooOld {
        /// When the state was written.
        written_at: UnixTime,
        /// How long before `now` that was.
        age: Duration,
        /// The maximum age it was checked against.
        max_age: Duration,
    },
    /// Written after `now`: the clock went back since, and no time it
    /// holds can be measured against it.
    #[error("it was written at {written_at}, {} after now ({now}): the clock went back", crate::duration::show(Duration::from_secs(written_at.secs_since(*now))))]
    WrittenInTheFuture {
        /// When the state says it was written.
        written_at: UnixTime,
        /// The time it was checked at.
        now: UnixTime,
    },
}

impl GraceState {
    /// The state holding `departed`, sorted, written at `written_at`.
    pub fn new(mut departed: Vec<Departed>, written_at: UnixTime) -> Self {
        departed.sort();
        GraceState {
            format_version: FormatVersion,
            written_at,
            departed,
            notify: NotifyMemory::default(),
        }
    }

    /// This state with `notify` as what notifications remember.
    pub fn with_notify(mut self, notify: NotifyMemory) -> Self {
        self.notify = notify;
        self
    }

    /// The state with no entries, written at `now`: every clock starts
    /// now (a missing state file, or one that is not current).
    pub fn empty(now: UnixTime) -> Self {
        GraceState::new(Vec::new(), now)
    }

    /// The rule for a state read back: it is current only if it was
    /// written at or before `now` and, with a `max_age`, at most that long
    /// before. Without a `max_age` only the clock going back is refused.
    ///
    /// The hazard: a state not kept current (a controller that ran
    /// elsewhere for weeks) would date a release declared again and
    /// departed again meanwhile back to its first departure, and delete it
    /// at once.
    pub fn check_current(
        &self,
        now: UnixTime,
        max_age: Option<Duration>,
    ) -> Result<(), NotCurrent> {
        if self.written_at > now {
            return Err(NotCurrent::WrittenInTheFuture {
                written_at: self.written_at,
                now,
            });
        }
        let age = Duration::from_secs(now.secs_since(self.written_at));
        match max_age {
            Some(max_age) if age > max_age => Err(NotCurrent::TooOld {
                written_at: self.written_at,
                age,
                max_age,
            }),
            _ => Ok(()),
        }
    }

    /// The state to plan with at `now`: this one when it is current
    /// ([`GraceState::check_current`]), else the empty state, so that
    /// every clock restarts at `now` (the safe direction), and why.
    pub fn current(self, now: UnixTime, max_age: Option<Duration>) -> (Self, Option<NotCurrent>) {
        match self.check_current(now, max_age) {
            Ok(()) => (self, None),
            Err(why) => (GraceState::empty(now), Some(why)),
        }
    }

    /// Parses a state document: exactly one JSON object, each entry an
    /// object, no release twice. Anything else is an error, never an empty
    /// state: an empty state would restart every clock without a word.
    pub fn from_json(text: &str) -> Result<Self, SnapshotError> {
        let wire: Obj<StateWire> = one_json_document(text)?;
        let written_at = wire.0.written_at;
        let notify = wire.0.notify;
        let departed = wire.0.departed;
        let mut seen = HashSet::with_capacity(departed.len());
        for (i, d) in departed.iter().enumerate() {
            if d.release.is_empty() {
                return Err(SnapshotError::EmptyName {
                    field: format!("departed[{i}].release"),
                });
            }
            if !seen.insert((&d.swarm, &d.release)) {
                return Err(SnapshotError::Parse {
                    path: format!("departed[{i}]"),
                    message: format!(
                        "release {:?} of swarm {:?} is listed twice",
                        d.release,
                        d.swarm.as_str()
                    ),
                });
            }
        }
        Ok(GraceState::new(departed, written_at).with_notify(notify))
    }

    /// The JSON [`GraceState::from_json`] reads.
    pub fn to_json_pretty(&self) -> String {
        // Plain strings and numbers: serializing cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// When `release` of `swarm` (as the plan names the swarm) was first
    /// seen departed, if the state knows.
    pub fn since(&self, swarm: &SwarmName, release: &str) -> Option<UnixTime> {
        self.departed
            .binary_search_by(|d| (&d.swarm, d.release.as_str()).cmp(&(swarm, release)))
            .ok()
            .map(|i| self.departed[i].since)
    }

    /// Whether this state holds every entry of `older`, each with the same
    /// first-seen time. Then `older`, read in this state's place, dates no
    /// release back further than this one would: it only lacks entries,
    /// and a missing entry restarts its clock (the safe direction). An
    /// entry this state dropped (its release declared again since) would
    /// instead date that release's next departure back to the first.
    pub fn keeps_every_entry_of(&self, older: &GraceState) -> bool {
        older
            .departed
            .iter()
            .all(|d| self.since(&d.swarm, &d.release) == Some(d.since))
    }
}

crate::map_only::map_only! {
    Departed => "a departed object";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_keeps_an_older_one_only_with_each_entry_and_time() {
        let t = |secs| UnixTime::from_secs(secs);
        let old = GraceState::new(
            vec![
                Departed::new("a", "web", t(100)),
                Departed::new("b", "db", t(50)),
            ],
            t(200),
        );
        let more = GraceState::new(
            vec![
                Departed::new("b", "db", t(50)),
                Departed::new("a", "web", t(100)),
                Departed::new("a", "new", t(300)),
            ],
            t(300),
        );
        assert!(more.keeps_every_entry_of(&old));
        assert!(old.keeps_every_entry_of(&GraceState::empty(t(0))));
        let dropped = GraceState::new(vec![Departed::new("a", "web", t(100))], t(300));
        assert!(!dropped.keeps_every_entry_of(&old));
        let restarted = GraceState::new(
            vec![
                Departed::new("a", "web", t(300)),
                Departed::new("b", "db", t(50)),
            ],
            t(300),
        );
        assert!(!restarted.keeps_every_entry_of(&old));
        assert!(!GraceState::empty(t(300)).keeps_every_entry_of(&old));
    }

    #[test]
    fn a_state_reads_back_and_refuses_what_it_cannot_trust() {
        let text = r#"{"format_version":1,"written_at":"2026-12-01T09:00:00Z","departed":[{"swarm":"b","release":"web","since":"2026-12-01T08:00:00Z"},{"swarm":"a","release":"db","since":"2026-12-01T07:00:00Z"}]}"#;
        let state = GraceState::from_json(text).unwrap();
        assert_eq!(state.departed[0].swarm, SwarmName::new("a"));
        assert_eq!(GraceState::from_json(&state.to_json_pretty()), Ok(state));
        for (bad, at) in [
            ("", ""),
            ("{}", ""),
            (r#"{"departed":[]}"#, ""),
            (r#"{"format_version":3,"departed":[]}"#, "format_version"),
            (r#"{"format_version":1}"#, ""),
            (r#"{"format_version":1,"departed":[]}"#, ""),
            (
                r#"{"format_version":1,"written_at":"yesterday","departed":[]}"#,
                "written_at",
            ),
            (
                r#"{"format_version":1,"written_at":null,"departed":[]}"#,
                "written_at",
            ),
            (
                r#"{"format_version":1,"written_at":"2026-12-01T09:00:00Z","departed":[],"extra":1}"#,
                "extra",
            ),
            (
                r#"{"format_version":1,"written_at":"2026-12-01T09:00:00Z","departed":[["a","w","2026-12-01T08:00:00Z"]]}"#,
                "departed[0]",
            ),
            (
                r#"{"format_version":1,"written_at":"2026-12-01T09:00:00Z","departed":[{"swarm":"a","release":"w","since":"soon"}]}"#,
                "departed[0].since",
            ),
            (
                r#"{"format_version":1,"written_at":"2026-12-01T09:00:00Z","departed":[]} {}"#,
                "",
            ),
        ] {
            match GraceState::from_json(bad) {
                Err(SnapshotError::Parse { path, .. }) => assert_eq!(path, at, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        let twice = r#"{"format_version":1,"written_at":"2026-12-01T09:00:00Z","departed":[{"swarm":"a","release":"w","since":"2026-12-01T08:00:00Z"},{"swarm":"a","release":"w","since":"2026-12-01T09:00:00Z"}]}"#;
        assert!(GraceState::from_json(twice)
            .unwrap_err()
            .to_string()
            .contains("twice"));
        let empty = r#"{"format_version":1,"written_at":"2026-12-01T09:00:00Z","departed":[{"swarm":"a","release":"","since":"2026-12-01T08:00:00Z"}]}"#;
        assert!(GraceState::from_json(empty).is_err());
    }

    fn at(secs: u64) -> UnixTime {
        UnixTime::from_secs(secs)
    }

    fn state_written_at(secs: u64) -> GraceState {
        GraceState::new(vec![Departed::new("a", "web", at(secs - 600))], at(secs))
    }

    #[test]
    fn a_state_is_current_up_to_its_maximum_age_and_never_from_the_future() {
        let s = state_written_at(10_000);
        let hour = Some(Duration::from_secs(3600));
        // Written now, or exactly the maximum age ago: current.
        assert_eq!(s.check_current(at(10_000), hour), Ok(()));
        assert_eq!(s.check_current(at(13_600), hour), Ok(()));
        // A second more: too old, and the age says by how much.
        assert_eq!(
            s.check_current(at(13_601), hour),
            Err(NotCurrent::TooOld {
                written_at: at(10_000),
                age: Duration::from_secs(3601),
                max_age: Duration::from_secs(3600),
            })
        );
        // A second before it was written: the clock went back.
        let future = Err(NotCurrent::WrittenInTheFuture {
            written_at: at(10_000),
            now: at(9_999),
        });
        assert_eq!(s.check_current(at(9_999), hour), future);
        // Without a maximum age, any age is current; the future is not.
        assert_eq!(s.check_current(at(u64::MAX), None), Ok(()));
        assert_eq!(s.check_current(at(9_999), None), future);
        // A maximum age below a second: only a state written this second.
        let instant = Some(Duration::from_millis(500));
        assert_eq!(s.check_current(at(10_000), instant), Ok(()));
        assert!(s.check_current(at(10_001), instant).is_err());
    }

    #[test]
    fn a_state_that_is_not_current_restarts_every_clock_at_now() {
        let s = state_written_at(10_000);
        let hour = Some(Duration::from_secs(3600));
        assert_eq!(s.clone().current(at(10_060), hour), (s.clone(), None));
        for now in [at(9_000), at(20_000)] {
            let (used, why) = s.clone().current(now, hour);
            assert_eq!(used, GraceState::empty(now));
            assert!(used.departed.is_empty());
            assert!(why.is_some());
        }
        let (_, why) = s.clone().current(at(20_000), hour);
        assert_eq!(
            why.unwrap().to_string(),
            "it was written at 1970-01-01T02:46:40Z, 2h 46m 40s ago, more than the maximum age of 1h"
        );
        let (_, why) = s.current(at(9_000), hour);
        assert_eq!(
            why.unwrap().to_string(),
            "it was written at 1970-01-01T02:46:40Z, 16m 40s after now (1970-01-01T02:30:00Z): the clock went back"
        );
    }

    #[test]
    fn written_at_is_written_and_read_back() {
        let s = state_written_at(1_796_112_000);
        let text = s.to_json_pretty();
        assert!(
            text.contains(r#""written_at": "2026-12-01T08:00:00Z""#),
            "{text}"
        );
        assert_eq!(GraceState::from_json(&text), Ok(s));
    }
}
