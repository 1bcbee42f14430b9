//! Events: what the engine tells the driver on its own, passed in as data.
//!
//! A volume or a network stays in use while a container of the stack still
//! exists; polling for the moment it lets go either wastes time (a long
//! interval) or hammers the daemon (a short one). The engine announces the
//! moment itself, so the driver subscribes to it and hands each event in
//! like any outcome; the sweep decides what it may wake. The retry interval
//! stays as the fallback for an event that never comes (a dropped stream,
//! a daemon that does not send them).

use crate::refs::SwarmName;

/// Something the engine reported, unasked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A container labelled with stack namespace `release` stopped or was
    /// removed on `swarm`, on the node with id `node` (`None`: the
    /// manager's own daemon, or a node the driver cannot name). What it
    /// held (volumes on its node, the stack's networks) may be free now.
    ContainerGone {
        /// The swarm the driver watched, as the plan names it.
        swarm: SwarmName,
        /// The node's id; `None` when unknown.
        node: Option<String>,
        /// The container's stack namespace: the release.
        release: String,
    },
}

impl Event {
    /// A container of `release`'s stack on `swarm` went away, on `node`.
    pub fn container_gone(
        swarm: SwarmName,
        node: Option<String>,
        release: impl Into<String>,
    ) -> Self {
        Event::ContainerGone {
            swarm,
            node,
            release: release.into(),
        }
    }
}
