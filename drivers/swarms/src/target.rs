//! Names of swarms, and the seam's name for a node.

/// One swarm a registry can reach, by the name the registry knows it
/// under: the core's [`SwarmName`](sweep_core::SwarmName), under the name
/// the seam gives it, so that the swarm a plan names is the one a driver
/// asks the registry for, with no conversion between them.
///
/// The empty name is the swarm the controller itself runs in. Names are only
/// meaningful to the registry that resolves them: two registries may use the
/// same name for different swarms.
pub use sweep_core::SwarmName as Target;

/// One node of a swarm: the core's [`NodeEntry`](sweep_core::NodeEntry),
/// under the name the seam gives it, so that a node a registry reaches is
/// the very value the snapshot and the sweep's actions carry.
///
/// The swarm node id is the key: hostnames are for people and need not be
/// unique (two nodes may share one after a rebuild), so code must never
/// match nodes by hostname.
pub use sweep_core::NodeEntry as Node;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_name_falls_back_to_the_id() {
        assert_eq!(Node::new("n1", "host-1").display_name(), "host-1");
        assert_eq!(Node::new("n1", "").display_name(), "n1");
    }
}
