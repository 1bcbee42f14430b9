//! Names of swarms, and the seam's name for a node.

use std::fmt;

/// One swarm a registry can reach, by the name the registry knows it under.
///
/// The empty name is the swarm the controller itself runs in. Names are only
/// meaningful to the registry that resolves them: two registries may use the
/// same name for different swarms.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    /// The registry's name for the swarm; `""` is the local swarm.
    pub swarm: String,
}

impl Target {
    /// The swarm the registry knows as `swarm`.
    pub fn new(swarm: impl Into<String>) -> Self {
        Target {
            swarm: swarm.into(),
        }
    }

    /// The swarm the controller runs in (the empty name).
    pub fn local() -> Self {
        Target::new("")
    }

    /// Whether this is the local swarm (the empty name).
    pub fn is_local(&self) -> bool {
        self.swarm.is_empty()
    }
}

impl fmt::Display for Target {
    /// `swarm "alpha"`, or `the local swarm` for the empty name, so that a
    /// message never shows an empty pair of quotes a reader could misread.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_local() {
            f.write_str("the local swarm")
        } else {
            write!(f, "swarm {:?}", self.swarm)
        }
    }
}

/// One node of a swarm: the core's [`NodeEntry`], under the name the seam
/// gives it, so that a node a registry reaches is the very value the
/// snapshot and the sweep's actions carry.
///
/// The swarm node id is the key: hostnames are for people and need not be
/// unique (two nodes may share one after a rebuild), so code must never
/// match nodes by hostname.
pub use sweep_core::NodeEntry as Node;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_target_is_the_empty_name() {
        assert_eq!(Target::local(), Target::new(""));
        assert!(Target::local().is_local());
        assert!(!Target::new("alpha").is_local());
        assert_eq!(Target::local().to_string(), "the local swarm");
        assert_eq!(Target::new("alpha").to_string(), "swarm \"alpha\"");
    }

    #[test]
    fn display_name_falls_back_to_the_id() {
        assert_eq!(Node::new("n1", "host-1").display_name(), "host-1");
        assert_eq!(Node::new("n1", "").display_name(), "n1");
    }
}
