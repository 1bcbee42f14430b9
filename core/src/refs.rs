//! Swarm-qualified references.
//!
//! Release names are unique within a swarm and not across swarms, so the core
//! never compares bare release names: every rule works on a [`ReleaseRef`],
//! and a `ReleaseRef` cannot be compared with a `&str` by accident.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The name under which a registry resolves a swarm.
///
/// The empty name is the swarm the controller itself runs in; any other
/// string names a swarm the registry resolves by that name. Two different
/// names may still be one cluster: the planner groups them by cluster id.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(transparent)]
pub struct SwarmName(String);

impl SwarmName {
    /// The swarm the controller runs in.
    pub fn local() -> Self {
        SwarmName(String::new())
    }

    /// The swarm the registry resolves by `name`; `""` is the local one.
    pub fn new(name: impl Into<String>) -> Self {
        SwarmName(name.into())
    }

    /// The name as given; `""` for the local swarm. For people, use its
    /// `Display`, which shows the local swarm as `(local)`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the swarm the controller runs in (the empty name).
    pub fn is_local(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<&str> for SwarmName {
    fn from(name: &str) -> Self {
        SwarmName::new(name)
    }
}

impl From<String> for SwarmName {
    fn from(name: String) -> Self {
        SwarmName(name)
    }
}

/// Renders the local swarm as `(local)` so that a person never reads an
/// empty string as "no swarm".
impl fmt::Display for SwarmName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("(local)")
        } else {
            f.write_str(&self.0)
        }
    }
}

/// One release on one swarm: the unit every decision is made on.
///
/// Equality is on both parts: `web` on `alpha` and `web` on `beta` are
/// different releases. Ordering is by swarm, then release, which is the order
/// every list in a plan or report is sorted in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReleaseRef {
    /// The swarm the release is on.
    pub swarm: SwarmName,
    /// The release (stack) name, unique within `swarm` only.
    pub release: String,
}

impl ReleaseRef {
    /// Release `release` on `swarm`.
    pub fn new(swarm: impl Into<SwarmName>, release: impl Into<String>) -> Self {
        ReleaseRef {
            swarm: swarm.into(),
            release: release.into(),
        }
    }
}

/// `alpha/web`, or `(local)/web` for the controller's own swarm.
impl fmt::Display for ReleaseRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.swarm, self.release)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_release_name_on_two_swarms_is_two_releases() {
        assert_ne!(
            ReleaseRef::new("alpha", "web"),
            ReleaseRef::new("beta", "web")
        );
        assert_eq!(
            ReleaseRef::new("alpha", "web"),
            ReleaseRef::new("alpha", "web")
        );
    }

    #[test]
    fn local_swarm_displays_as_local() {
        assert_eq!(ReleaseRef::new("", "web").to_string(), "(local)/web");
        assert_eq!(ReleaseRef::new("beta", "web").to_string(), "beta/web");
    }
}
