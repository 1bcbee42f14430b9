//! Which API version a daemon's requests go out with.
//!
//! Asking a daemon's `/version` before anything else costs a round trip
//! before the first real request, and every read of a swarm would wait
//! for it. So requests go out at once under a pinned version, [`PINNED`],
//! and only a daemon that refuses it is asked which versions it speaks.
//! A daemon refuses a version outside its range with 400, in either
//! direction: Docker 20.10 speaks 1.41 at most, Docker 29 1.44 at least.
//! A refused request did nothing (the version is checked before any
//! handler runs), so it is sent once more under the version settled on.
//!
//! A 400 also answers requests refused for other reasons (a network still
//! in use, a bad filter). Which one it was is told by the daemon's range,
//! never by its message: a version inside the range was not what was
//! refused, and the answer goes to the caller as it came.
//!
//! The version settled on is the daemon's ([`ApiVersion`] lives as long as
//! its client): a registry that outlives one sweep, as `watch`'s does,
//! asks again only if the daemon refuses again, say after an upgrade.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

use serde::Deserialize;

/// An API version, `major.minor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Version {
    major: u16,
    minor: u16,
}

impl Version {
    pub(crate) const fn new(major: u16, minor: u16) -> Self {
        Version { major, minor }
    }

    /// `1.41` as a daemon writes it; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let (major, minor) = text.split_once('.')?;
        let digits =
            |s: &str| !s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(major) || !digits(minor) {
            return None;
        }
        Some(Version::new(major.parse().ok()?, minor.parse().ok()?))
    }

    /// The same version as bollard spells it.
    pub(crate) fn to_bollard(self) -> bollard::ClientVersion {
        bollard::ClientVersion {
            major_version: usize::from(self.major),
            minor_version: usize::from(self.minor),
        }
    }

    fn packed(self) -> u32 {
        (u32::from(self.major) << 16) | u32::from(self.minor)
    }

    fn unpacked(packed: u32) -> Self {
        // Both halves were u16 when packed.
        Version::new((packed >> 16) as u16, (packed & 0xffff) as u16)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// What requests go out with until a daemon refuses it: Docker 20.10's
/// newest API, which every release from 20.10 to 28 accepts, and whose
/// replies hold everything a sweep reads.
pub(crate) const PINNED: Version = Version::new(1, 41);

/// The newest version this client may settle on: the one its models are
/// written for.
pub(crate) fn newest() -> Version {
    let newest = bollard::API_DEFAULT_VERSION;
    let part = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    Version::new(part(newest.major_version), part(newest.minor_version))
}

/// The oldest version a daemon is taken to speak when it does not say:
/// Docker has accepted 1.12 since before it said so.
const OLDEST_UNSAID: Version = Version::new(1, 12);

/// The versions a daemon speaks, as its `/version` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Range {
    pub(crate) min: Version,
    pub(crate) max: Version,
}

/// The fields of `/version` that give the range.
#[derive(Deserialize)]
struct VersionReply {
    #[serde(rename = "ApiVersion")]
    api_version: Option<String>,
    #[serde(rename = "MinAPIVersion")]
    min_api_version: Option<String>,
}

impl Range {
    /// The range a `/version` reply gives; `None` when it gives no newest
    /// version, or versions that cannot be read or make no range.
    pub(crate) fn from_reply(body: &[u8]) -> Option<Self> {
        let reply: VersionReply = serde_json::from_slice(body).ok()?;
        let max = Version::parse(reply.api_version.as_deref()?)?;
        let min = match reply.min_api_version.as_deref() {
            Some(min) => Version::parse(min)?,
            None => OLDEST_UNSAID.min(max),
        };
        (min <= max).then_some(Range { min, max })
    }
}

/// What a 400 to a request sent under `sent` means, given the daemon's
/// range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settled {
    /// The daemon speaks `sent`: the 400 was about the request itself.
    Accepted,
    /// The daemon refused `sent`; it speaks this one, which this client
    /// speaks too.
    Use(Version),
    /// The daemon speaks nothing this client does: the refusal stands.
    Unsupported,
}

/// See [`Settled`]: the newest version both sides speak, when `sent` is
/// not one the daemon does.
pub(crate) fn settle(sent: Version, range: Range) -> Settled {
    if range.min <= sent && sent <= range.max {
        return Settled::Accepted;
    }
    let both = range.max.min(newest());
    if both < range.min {
        Settled::Unsupported
    } else {
        Settled::Use(both)
    }
}

/// The version at the start of `path` (`/v1.41/...`), and the rest of the
/// path after it (`/...`).
pub(crate) fn of_path(path: &str) -> Option<(Version, &str)> {
    let rest = path.strip_prefix("/v")?;
    let end = rest.find('/').unwrap_or(rest.len());
    Some((Version::parse(&rest[..end])?, &rest[end..]))
}

/// One daemon's version: [`PINNED`] until it refuses that.
#[derive(Debug)]
pub(crate) struct ApiVersion {
    current: AtomicU32,
    /// Held while the daemon is asked for its range, so that requests
    /// refused at once ask once.
    settling: tokio::sync::Mutex<()>,
}

impl Default for ApiVersion {
    fn default() -> Self {
        ApiVersion::starting_at(PINNED)
    }
}

impl ApiVersion {
    /// Requests going out under `version` until the daemon refuses it.
    pub(crate) fn starting_at(version: Version) -> Self {
        ApiVersion {
            current: AtomicU32::new(version.packed()),
            settling: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) fn current(&self) -> Version {
        Version::unpacked(self.current.load(Ordering::Acquire))
    }

    pub(crate) fn set(&self, version: Version) {
        self.current.store(version.packed(), Ordering::Release);
    }

    /// Held while the daemon's range is asked for and settled.
    pub(crate) async fn settling(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.settling.lock().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> Version {
        Version::parse(text).unwrap()
    }

    #[test]
    fn versions_read_as_daemons_write_them_and_compare_as_numbers() {
        assert_eq!(v("1.41").to_string(), "1.41");
        assert!(v("1.9") < v("1.41") && v("1.41") < v("2.0"));
        for bad in [
            "", "1", "1.", ".4", "1.4.1", "v1.41", "1.x", "1.-4", "99999.1", " 1.41",
        ] {
            assert_eq!(Version::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_version_inside_the_range_was_not_what_was_refused() {
        let range = Range {
            min: v("1.12"),
            max: v("1.41"),
        };
        assert_eq!(settle(v("1.41"), range), Settled::Accepted);
        assert_eq!(settle(v("1.12"), range), Settled::Accepted);
    }

    #[test]
    fn a_refused_version_falls_back_in_either_direction() {
        // Docker 20.10 refuses a version too new for it.
        let old = Range {
            min: v("1.12"),
            max: v("1.41"),
        };
        assert_eq!(settle(v("1.44"), old), Settled::Use(v("1.41")));
        // Docker 29 refuses one too old for it; the newest both speak.
        let new = Range {
            min: v("1.44"),
            max: v("1.52"),
        };
        assert_eq!(settle(v("1.41"), new), Settled::Use(v("1.52")));
        // Newer than this client: its own newest.
        let newer = Range {
            min: v("1.44"),
            max: v("1.60"),
        };
        assert_eq!(settle(v("1.41"), newer), Settled::Use(newest()));
        // Nothing in common: the refusal stands.
        let beyond = Range {
            min: v("1.60"),
            max: v("1.61"),
        };
        assert_eq!(settle(v("1.41"), beyond), Settled::Unsupported);
    }

    #[test]
    fn ranges_come_from_version_replies_or_not_at_all() {
        let range = |body: &str| Range::from_reply(body.as_bytes());
        assert_eq!(
            range(r#"{"ApiVersion":"1.52","MinAPIVersion":"1.44","Os":"linux"}"#),
            Some(Range {
                min: v("1.44"),
                max: v("1.52")
            })
        );
        assert_eq!(
            range(r#"{"ApiVersion":"1.41"}"#),
            Some(Range {
                min: v("1.12"),
                max: v("1.41")
            })
        );
        for bad in [
            "",
            "[]",
            r#"{"MinAPIVersion":"1.12"}"#,
            r#"{"ApiVersion":"x"}"#,
            r#"{"ApiVersion":"1.41","MinAPIVersion":"1.44"}"#,
        ] {
            assert_eq!(range(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn paths_give_their_version_and_the_rest() {
        assert_eq!(of_path("/v1.41/info"), Some((v("1.41"), "/info")));
        assert_eq!(of_path("/v1.41"), Some((v("1.41"), "")));
        assert_eq!(of_path("/version"), None);
        assert_eq!(of_path("/volumes/v1.41"), None);
    }

    #[test]
    fn a_daemon_starts_pinned_and_keeps_what_it_settled_on() {
        let version = ApiVersion::default();
        assert_eq!(version.current(), PINNED);
        version.set(v("1.52"));
        assert_eq!(version.current(), v("1.52"));
    }
}
