//! Time as a value: the core never reads a clock.
//!
//! A clock read inside the core makes its tests depend on the machine they
//! run on and hides deadlines from the driver, so every time is passed in:
//! - [`UnixTime`], a moment on the calendar (UTC, whole seconds), read and
//!   written as RFC 3339: what documents carry from one run to the next
//!   (a snapshot's `now`, first-seen departure times, when a state was
//!   written);
//! - [`Timestamp`], a point on the driver's own clock since an epoch it
//!   picks (its start, say): what a running sweep measures retries and
//!   deadlines by; deadlines come back out as `Timestamp`s for the driver
//!   to sleep until.
//!
//! Both only ever move forward by saturating arithmetic: a driver passing
//! absurd times gets absurd answers, never a panic.

use std::fmt;
use std::ops::{Add, AddAssign};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A moment, in whole seconds since the Unix epoch (UTC). Written as RFC
/// 3339 (`2026-12-01T08:00:00Z`). The core never reads a clock: drivers
/// make one from theirs ([`UnixTime::from_system_time`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixTime(u64);

impl UnixTime {
    /// The moment `secs` whole seconds after the Unix epoch.
    pub const fn from_secs(secs: u64) -> Self {
        UnixTime(secs)
    }

    /// The whole seconds since the Unix epoch.
    pub const fn as_secs(self) -> u64 {
        self.0
    }

    /// The moment `time`, to the second below; `None` before 1970.
    pub fn from_system_time(time: SystemTime) -> Option<Self> {
        time.duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| UnixTime(d.as_secs()))
    }

    /// Parses an RFC 3339 time in UTC (`2026-12-01T08:00:00Z`); fractions
    /// of a second are dropped.
    pub fn parse_rfc3339(text: &str) -> Result<Self, String> {
        let time = humantime::parse_rfc3339(text).map_err(|e| {
            format!("{text:?} is not an RFC 3339 UTC time such as 2026-12-01T08:00:00Z ({e})")
        })?;
        UnixTime::from_system_time(time)
            .ok_or_else(|| format!("{text:?} is before 1970-01-01T00:00:00Z"))
    }

    /// Seconds from `earlier` to this moment; zero when `earlier` is later.
    pub fn secs_since(self, earlier: UnixTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for UnixTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Past year 9999 RFC 3339 has no form; such a time cannot be parsed
        // either, so it can only come from a caller's arithmetic.
        match UNIX_EPOCH.checked_add(Duration::from_secs(self.0)) {
            Some(t) if self.0 < 253_402_300_800 => {
                write!(f, "{}", humantime::format_rfc3339_seconds(t))
            }
            _ => f.write_str("9999-12-31T23:59:59Z"),
        }
    }
}

impl Serialize for UnixTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for UnixTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Rfc3339;
        impl Visitor<'_> for Rfc3339 {
            type Value = UnixTime;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 UTC time such as 2026-12-01T08:00:00Z")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<UnixTime, E> {
                UnixTime::parse_rfc3339(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Rfc3339)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for UnixTime {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "UnixTime".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An RFC 3339 time in UTC, e.g. 2026-12-01T08:00:00Z.",
            "type": "string",
            "format": "date-time",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$",
        })
    }
}

/// A point in time: the time since an epoch the driver chooses.
///
/// Arithmetic saturates instead of overflowing: a driver passing absurd
/// times must get absurd deadlines, not a panic in the core.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(Duration);

impl Timestamp {
    /// The epoch itself.
    pub const ZERO: Timestamp = Timestamp(Duration::ZERO);

    /// The point `since_epoch` after the epoch.
    pub const fn from_epoch(since_epoch: Duration) -> Self {
        Timestamp(since_epoch)
    }

    /// Shorthand for [`Timestamp::from_epoch`] in whole milliseconds.
    pub const fn from_millis(millis: u64) -> Self {
        Timestamp(Duration::from_millis(millis))
    }

    /// The time since the epoch.
    pub const fn since_epoch(self) -> Duration {
        self.0
    }

    /// The time from `earlier` to `self`; zero if `earlier` is later (a
    /// driver whose clock stepped back).
    pub fn saturating_duration_since(self, earlier: Timestamp) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<Duration> for Timestamp {
    type Output = Timestamp;

    fn add(self, rhs: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(rhs))
    }
}

impl AddAssign<Duration> for Timestamp {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

/// `t+1.500s`: the time since the epoch.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t+{:?}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_and_write_as_rfc3339_utc() {
        let t = UnixTime::parse_rfc3339("2026-12-01T08:00:00Z").unwrap();
        assert_eq!(t.as_secs(), 1_796_112_000);
        assert_eq!(t.to_string(), "2026-12-01T08:00:00Z");
        assert_eq!(
            serde_json::from_str::<UnixTime>("\"2026-12-01T08:00:00.75Z\"").unwrap(),
            t
        );
        for bad in [
            "\"2026-12-01\"",
            "\"2026-12-01T08:00:00+01:00\"",
            "\"yesterday\"",
            "\"\"",
            "1796112000",
            "null",
        ] {
            assert!(serde_json::from_str::<UnixTime>(bad).is_err(), "{bad}");
        }
        assert_eq!(UnixTime::from_secs(5).secs_since(UnixTime::from_secs(9)), 0);
    }

    #[test]
    fn adding_saturates_instead_of_panicking() {
        let end = Timestamp::from_epoch(Duration::MAX);
        assert_eq!(end + Duration::from_secs(1), end);
        assert!(Timestamp::ZERO + Duration::from_millis(1) > Timestamp::ZERO);
        assert_eq!(
            Timestamp::ZERO.saturating_duration_since(Timestamp::from_millis(5)),
            Duration::ZERO
        );
    }
}
