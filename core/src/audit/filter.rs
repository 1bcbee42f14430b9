//! Which lines `swarm-sweep audit` shows: those since a time, of one
//! release.

use std::time::Duration;

use thiserror::Error;

use super::AuditEntry;
use crate::duration::{self, DurationError};
use crate::refs::ReleaseRef;
use crate::time::UnixTime;

/// `--since`: a time, or how long before now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// From this moment on.
    At(UnixTime),
    /// From this long before now on.
    Ago(Duration),
}

/// Why a `--since` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SinceError {
    /// Neither a duration nor an RFC 3339 time.
    #[error("{text:?} is neither a duration (24h, 30m) nor an RFC 3339 UTC time (2026-12-01T08:00:00Z): {duration}")]
    Neither {
        /// The value.
        text: String,
        /// Why it is no duration.
        duration: DurationError,
    },
}

impl Since {
    /// Reads `24h` (a duration, as every flag takes one) or
    /// `2026-12-01T08:00:00Z`.
    pub fn parse(text: &str) -> Result<Since, SinceError> {
        let text = text.trim();
        if let Ok(at) = UnixTime::parse_rfc3339(text) {
            return Ok(Since::At(at));
        }
        duration::parse(text)
            .map(Since::Ago)
            .map_err(|duration| SinceError::Neither {
                text: text.to_owned(),
                duration,
            })
    }

    /// The first moment shown, at `now`.
    pub fn start(self, now: UnixTime) -> UnixTime {
        match self {
            Since::At(at) => at,
            Since::Ago(ago) => UnixTime::from_secs(now.as_secs().saturating_sub(ago.as_secs())),
        }
    }
}

/// The lines to show: at or after `since`, of `release`; `None` keeps all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// The first moment shown.
    pub since: Option<UnixTime>,
    /// The one release shown.
    pub release: Option<ReleaseRef>,
}

impl Filter {
    /// Whether `entry` is shown.
    pub fn keeps(&self, entry: &AuditEntry) -> bool {
        self.since.is_none_or(|since| entry.time >= since)
            && self
                .release
                .as_ref()
                .is_none_or(|r| r.swarm == entry.swarm && r.release == entry.release)
    }
}
