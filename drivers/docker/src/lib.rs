//! Docker backends for the swarms seam ([`sweep_swarms`]), through bollard.
//!
//! - [`DockerSwarm`]: a swarm through one of its managers.
//! - [`DockerNode`]: one node's own daemon, for its volumes and the
//!   containers that use them.
//! - [`LocalRegistry`]: the one swarm the docker context (or `DOCKER_HOST`)
//!   points at ([`context`]).
//! - [`FileRegistry`]: the swarms of a registry file ([`config`]), with
//!   their nodes.
//!
//! Requests go out under a pinned API version, 1.41 (Debian's docker.io
//! 20.10 speaks it at most, every engine up to 28 accepts it), with no
//! request before them; a daemon that refuses it in either direction is
//! asked which versions it speaks, and the refused request sent again under
//! the newest both sides speak. Every daemon call is bounded by a timeout,
//! and every reply in bytes ([`REPLY_LIMIT`]) and in what it decodes into
//! ([`OBJECT_BUDGET`]), but for the configs listing: it holds every
//! config's data, so it is read as a stream and bounded config by config
//! instead ([`CONFIG_LIMIT`], [`DATA_LIMIT`], [`MAX_CONFIGS`]).
//! Endpoints are `unix://` sockets, `tcp://` addresses (optionally with TLS:
//! rustls, no system library), or `ssh://` logins through the system `ssh`
//! client, as the docker CLI reaches them. Files are read with a
//! bound on their size ([`files`]).

pub mod agent;
mod api_version;
mod backend;
mod client;
pub mod config;
mod configs;
pub mod context;
mod endpoint;
mod events;
pub mod files;
pub mod image_ref;
mod job;
mod job_reach;
pub mod labels;
mod registry;
mod ssh;
mod transport;
mod url_path;
mod usage;

pub use backend::{DockerNode, DockerSwarm, DEFAULT_TIMEOUT};
pub use config::{ConfigError, RegistryConfig, SwarmConfig};
pub use configs::{CONFIG_LIMIT, DATA_LIMIT, MAX_CONFIGS};
pub use context::{ContextError, Resolved};
pub use endpoint::{Endpoint, EndpointError, TlsFiles, DEFAULT_DOCKER_HOST};
pub use files::{read_limited, Accept, ReadError};
pub use job::{
    finish_job_removals, JobSettings, DEFAULT_AGENT_SOCKET, JOB_LABEL, JOB_STARTED_LABEL,
};
pub use registry::{FileRegistry, LocalRegistry};
/// The one duration parser, shared with the core's policy.
pub use sweep_core::duration;
pub use transport::{OBJECT_BUDGET, REPLY_LIMIT};
