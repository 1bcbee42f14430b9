//! Docker backends for the swarms seam ([`sweep_swarms`]), through bollard.
//!
//! - [`DockerSwarm`]: a swarm through one of its managers.
//! - [`DockerNode`]: one node's own daemon, for its volumes.
//! - [`LocalRegistry`]: the one swarm `DOCKER_HOST` points at.
//! - [`FileRegistry`]: the swarms of a registry file ([`config`]), with
//!   their nodes.
//!
//! Every connection negotiates the API version first, so daemons older than
//! bollard's default API (Debian's docker.io 20.10 speaks 1.41) work, and
//! every daemon call is bounded by a timeout. Endpoints are `unix://` sockets
//! or `tcp://` addresses, optionally with TLS (rustls; no system library).

mod backend;
mod client;
pub mod config;
mod endpoint;
pub mod labels;
mod registry;

pub use backend::{DockerNode, DockerSwarm, DEFAULT_TEARDOWN_WAIT, DEFAULT_TIMEOUT};
pub use config::{ConfigError, RegistryConfig, SwarmConfig};
pub use endpoint::{Endpoint, EndpointError, TlsFiles, DEFAULT_DOCKER_HOST};
pub use registry::{FileRegistry, LocalRegistry};
