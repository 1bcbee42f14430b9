//! Time as a value.
//!
//! The core never reads a clock: a clock read inside a state machine makes
//! its tests depend on the machine they run on and hides retry deadlines
//! from the driver. The driver picks an epoch (its start, say), maps its
//! clock to a [`Timestamp`] and passes it in; deadlines come back out as
//! `Timestamp`s for it to sleep until.

use std::fmt;
use std::ops::{Add, AddAssign};
use std::time::Duration;

use serde::{Deserialize, Serialize};

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
