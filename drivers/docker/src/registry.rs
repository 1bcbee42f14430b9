//! Registries of Docker swarms: [`LocalRegistry`] (the one swarm the
//! environment points at) and [`FileRegistry`] (the swarms of a registry
//! file, with their nodes).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use sweep_swarms::{
    BackendError, Holdings, Lister, Node, NodeBackend, NodeHoldings, NodeReach, ReadNode, Registry,
    RegistryError, SwarmBackend, Target,
};
use tokio::sync::OnceCell;

use crate::backend::{DockerNode, DockerSwarm, DEFAULT_TIMEOUT};
use crate::client::Client;
use crate::config::{ConfigError, RegistryConfig, SwarmConfig};
use crate::endpoint::{Endpoint, EndpointError};
use crate::job::JobSettings;
use crate::job_reach::SwarmJobs;

fn connect_error(swarm: &str, endpoint: &Endpoint, e: BackendError) -> RegistryError {
    let message = match e {
        BackendError::Unreachable { message, .. } => message,
        BackendError::Timeout { after, .. } => format!("no answer within {after:?}"),
        other => other.to_string(),
    };
    RegistryError::Connect {
        swarm: swarm.to_owned(),
        endpoint: endpoint.url().to_owned(),
        message,
    }
}

fn not_configured(swarm: &str, endpoint: &Endpoint) -> RegistryError {
    RegistryError::Connect {
        swarm: swarm.to_owned(),
        endpoint: endpoint.url().to_owned(),
        message: "not a configured endpoint".into(),
    }
}

/// The swarm `DOCKER_HOST` (or the default socket) points at, as the local
/// swarm (target `""`); it resolves no other name, and neither lists swarms
/// nor reaches nodes individually.
pub struct LocalRegistry {
    endpoint: Endpoint,
    timeout: Duration,
    self_stack: Option<String>,
    backend: OnceCell<Arc<DockerSwarm>>,
}

impl LocalRegistry {
    /// The swarm whose manager is at `endpoint`. Nothing is connected
    /// before the first [`Registry::backend`] call.
    pub fn new(endpoint: Endpoint) -> Self {
        LocalRegistry {
            endpoint,
            timeout: DEFAULT_TIMEOUT,
            self_stack: None,
            backend: OnceCell::new(),
        }
    }

    /// The swarm the environment names, as the docker CLI reads it (see
    /// [`Endpoint::from_env`]).
    pub fn from_env() -> Result<Self, EndpointError> {
        Ok(LocalRegistry::new(Endpoint::from_env()?))
    }

    /// The swarm the docker CLI would talk to: the context named by
    /// `explicit` (a `--context` flag), else by `DOCKER_HOST`,
    /// `DOCKER_CONTEXT` or the docker config's `currentContext`, resolved
    /// as the docker CLI does (see [`crate::context`]).
    pub fn from_context(explicit: Option<&str>) -> Result<Self, crate::context::ContextError> {
        Ok(LocalRegistry::new(
            crate::context::resolve(explicit)?.endpoint,
        ))
    }

    /// The controller runs as `stack` here; the backend refuses to remove it.
    pub fn with_self_stack(mut self, stack: impl Into<String>) -> Self {
        self.self_stack = Some(stack.into());
        self
    }

    /// Bounds every daemon call by `timeout` (default [`DEFAULT_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The manager endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }
}

#[async_trait]
impl Registry for LocalRegistry {
    async fn backend(&self, target: &Target) -> Result<Arc<dyn SwarmBackend>, RegistryError> {
        if !target.is_local() {
            return Err(RegistryError::UnknownSwarm {
                swarm: target.as_str().to_owned(),
            });
        }
        let backend = self
            .backend
            .get_or_try_init(|| async {
                DockerSwarm::connect(&self.endpoint, self.timeout)
                    .await
                    .map(|s| Arc::new(s.with_self_stack(self.self_stack.clone())))
                    .map_err(|e| connect_error("", &self.endpoint, e))
            })
            .await?;
        Ok(backend.clone())
    }

    /// Closes the manager's connections kept for reuse.
    fn close_idle(&self, target: &Target) {
        if let (true, Some(backend)) = (target.is_local(), self.backend.get()) {
            backend.close_idle();
        }
    }
}

/// The swarms of a registry file ([`crate::config`]); implements
/// [`Registry`], [`Lister`] and [`NodeReach`].
///
/// Each daemon has one client, made on first use and kept (with the API
/// version settled on for it), whether it is reached as a swarm's manager, as a
/// node, or both, and under however many swarm names; a failed connection
/// is retried on the next use. The client keeps a few idle connections for
/// reuse; [`Registry::close_idle`] closes those of a swarm.
pub struct FileRegistry {
    config: RegistryConfig,
    /// One per configured endpoint (address and TLS files): the manager's
    /// client serves the manager probed as a node too, so its info is read
    /// once and its version settled once.
    clients: HashMap<Endpoint, OnceCell<Client>>,
    backends: HashMap<String, OnceCell<Arc<DockerSwarm>>>,
    node_daemons: HashMap<Endpoint, OnceCell<Arc<DockerNode>>>,
    /// The daemons each swarm's last [`NodeReach::nodes`] found, by the
    /// node id each answered with: the endpoint, and whether the manager's
    /// node list had the id.
    reached: Mutex<HashMap<String, HashMap<String, Answered>>>,
    /// The volume jobs of each swarm with `node_reach = "job"`.
    jobs: HashMap<String, OnceCell<Arc<SwarmJobs>>>,
    /// Held while a swarm's nodes are found again for a node backend, so
    /// that the actions of a sweep started at once probe the daemons once.
    discovering: HashMap<String, tokio::sync::Mutex<()>>,
}

/// A daemon that answered a node listing as a swarm node.
#[derive(Debug, Clone)]
struct Answered {
    endpoint: Endpoint,
    membership: Membership,
}

/// Whether a daemon's node id was on the manager's node list when it
/// answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Membership {
    Listed,
    /// Another swarm's node, or one that left: never served as a node.
    NotListed,
    /// The node list could not be read: found again when asked for.
    Unchecked,
}

impl FileRegistry {
    /// Loads the registry file at `path`; nothing is connected yet.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        Ok(FileRegistry::new(RegistryConfig::load(path)?))
    }

    /// The registry of an already checked configuration.
    pub fn new(config: RegistryConfig) -> Self {
        let backends = config
            .swarms
            .iter()
            .map(|s| (s.name.clone(), OnceCell::new()))
            .collect();
        let endpoints = || {
            config
                .swarms
                .iter()
                .flat_map(|s| std::iter::once(&s.manager).chain(&s.nodes))
        };
        let clients = endpoints().map(|e| (e.clone(), OnceCell::new())).collect();
        let node_daemons = endpoints().map(|e| (e.clone(), OnceCell::new())).collect();
        let jobs = config
            .swarms
            .iter()
            .filter(|s| s.job.is_some())
            .map(|s| (s.name.clone(), OnceCell::new()))
            .collect();
        let discovering = config
            .swarms
            .iter()
            .map(|s| (s.name.clone(), tokio::sync::Mutex::new(())))
            .collect();
        FileRegistry {
            config,
            clients,
            backends,
            node_daemons,
            reached: Mutex::new(HashMap::new()),
            jobs,
            discovering,
        }
    }

    /// The endpoint the last listing of `swarm` found answering as `node`.
    fn answered(&self, swarm: &str, node: &str) -> Option<Answered> {
        self.reached
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(swarm)
            .and_then(|r| r.get(node))
            .cloned()
    }

    fn discovering(&self, swarm: &str) -> &tokio::sync::Mutex<()> {
        // Every configured swarm has one; `swarm_config` found it.
        static NONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
        self.discovering.get(swarm).unwrap_or(&NONE)
    }

    /// The configuration the registry serves.
    pub fn config(&self) -> &RegistryConfig {
        &self.config
    }

    fn swarm_config(&self, target: &Target) -> Result<&SwarmConfig, RegistryError> {
        self.config
            .swarms
            .iter()
            .find(|s| s.name == target.as_str())
            .ok_or_else(|| RegistryError::UnknownSwarm {
                swarm: target.as_str().to_owned(),
            })
    }

    async fn docker_swarm(&self, target: &Target) -> Result<Arc<DockerSwarm>, RegistryError> {
        let config = self.swarm_config(target)?;
        let cell = self
            .backends
            .get(&config.name)
            .ok_or_else(|| RegistryError::UnknownSwarm {
                swarm: target.as_str().to_owned(),
            })?;
        let swarm = cell
            .get_or_try_init(|| async {
                let client = self.client(&config.name, &config.manager).await?;
                Ok::<_, RegistryError>(Arc::new(
                    DockerSwarm::with_client(client)
                        .with_self_stack(config.self_stack.clone())
                        .with_windows(config.windows.clone()),
                ))
            })
            .await?;
        Ok(swarm.clone())
    }

    /// The volume jobs of `config`'s swarm, which has `node_reach = "job"`.
    async fn swarm_jobs(
        &self,
        config: &SwarmConfig,
        settings: &JobSettings,
    ) -> Result<Arc<SwarmJobs>, RegistryError> {
        let cell = self
            .jobs
            .get(&config.name)
            .ok_or_else(|| RegistryError::UnknownSwarm {
                swarm: config.name.clone(),
            })?;
        let jobs = cell
            .get_or_try_init(|| async {
                let client = self.client(&config.name, &config.manager).await?;
                Ok::<_, RegistryError>(Arc::new(SwarmJobs::new(
                    client,
                    config.name.clone(),
                    settings.clone(),
                )))
            })
            .await?;
        Ok(jobs.clone())
    }

    /// [`NodeReach::nodes`] through volume jobs: every member of the swarm
    /// the listing job reached.
    async fn nodes_by_job(
        &self,
        target: &Target,
        config: &SwarmConfig,
        settings: &JobSettings,
    ) -> Result<Option<Vec<(Node, NodeHoldings)>>, RegistryError> {
        let manager_error = |source| RegistryError::Manager {
            swarm: config.name.clone(),
            source,
        };
        let jobs = self.swarm_jobs(config, settings).await?;
        let members = self
            .docker_swarm(target)
            .await?
            .nodes()
            .await
            .map_err(manager_error)?;
        let reached = jobs.list(&members).await.map_err(manager_error)?;
        Ok(Some(reached))
    }

    /// The one client of the daemon at `endpoint`, connected on first use;
    /// callers at the same time wait for the same connection.
    async fn client(&self, swarm: &str, endpoint: &Endpoint) -> Result<Client, RegistryError> {
        let cell = self
            .clients
            .get(endpoint)
            .ok_or_else(|| not_configured(swarm, endpoint))?;
        let client = cell
            .get_or_try_init(|| async {
                Client::connect(endpoint, self.config.timeout)
                    .await
                    .map_err(|e| connect_error(swarm, endpoint, e))
            })
            .await?;
        Ok(client.clone())
    }

    async fn node_daemon(
        &self,
        swarm: &str,
        endpoint: &Endpoint,
    ) -> Result<Arc<DockerNode>, RegistryError> {
        let cell = self
            .node_daemons
            .get(endpoint)
            .ok_or_else(|| not_configured(swarm, endpoint))?;
        let node = cell
            .get_or_try_init(|| async {
                let client = self.client(swarm, endpoint).await?;
                Ok::<_, RegistryError>(Arc::new(DockerNode::with_client(client)))
            })
            .await?;
        Ok(node.clone())
    }

    /// Which swarm node the daemon at `endpoint` is (`None`: it is in no
    /// swarm), or why that could not be checked.
    ///
    /// The whole probe (connecting, reading the daemon's info) is bounded by one per-call timeout, not one per step:
    /// so [`NodeReach::nodes`] has a known limit ([`Self::nodes_bound`]),
    /// and a caller's own bound can be set past it instead of cutting off
    /// the nodes that did answer.
    async fn probe(&self, swarm: &str, endpoint: &Endpoint) -> Result<Option<Node>, String> {
        let limit = self.config.timeout;
        let check = async {
            let daemon = self
                .node_daemon(swarm, endpoint)
                .await
                .map_err(|e| match e {
                    // The endpoint is in the warning already.
                    RegistryError::Connect { message, .. } => message,
                    other => other.to_string(),
                })?;
            daemon.swarm_node().await.map_err(|e| e.to_string())
        };
        match tokio::time::timeout(limit, check).await {
            Ok(answer) => answer,
            Err(_) => Err(format!("no answer within {limit:?}")),
        }
    }

    /// The nodes of `target` as [`NodeReach::nodes`] finds them, each with
    /// its volumes and containers when `holdings` (see
    /// [`NodeReach::nodes_read`]).
    async fn discover(
        &self,
        target: &Target,
        holdings: bool,
    ) -> Result<Option<Vec<ReadNode>>, RegistryError> {
        let config = self.swarm_config(target)?;
        if let Some(settings) = &config.job {
            let nodes = self.nodes_by_job(target, config, settings).await?;
            // What the listing job found is what gathering reads; a node
            // backend's calls run jobs of their own.
            return Ok(nodes.map(|nodes| {
                nodes
                    .into_iter()
                    .map(|(node, held)| {
                        let held = if holdings {
                            Holdings::Read(held)
                        } else {
                            Holdings::NotRead
                        };
                        ReadNode::new(node, held)
                    })
                    .collect()
            }));
        }
        if config.nodes.is_empty() {
            return Ok(None);
        }
        let members = async {
            let manager = self.docker_swarm(target).await?;
            manager
                .nodes()
                .await
                .map_err(|source| RegistryError::Manager {
                    swarm: config.name.clone(),
                    source,
                })
        };
        let candidates = Self::candidates(config);
        let probes = candidates.iter().map(|endpoint| {
            // The manager's volumes and containers are read with it.
            let read = holdings && endpoint.url() != config.manager.url();
            self.probe_reading(&config.name, endpoint, read)
        });
        let (members, answers) = tokio::join!(members, futures::future::join_all(probes));
        let members: Option<HashSet<String>> = match members {
            Ok(list) => Some(list.into_iter().map(|n| n.id).collect()),
            Err(e) => {
                tracing::warn!(swarm = config.name, error = %e, "cannot read the manager's node list");
                None
            }
        };

        let mut listed = Vec::new();
        let mut reached = HashMap::new();
        for (endpoint, (answer, held)) in candidates.into_iter().zip(answers) {
            // A configured node left out is a node whose volumes a purge
            // does not reach: say which endpoint and why at warn level, so
            // that the loss is never silent. (The plan names the members
            // not reached, but neither the address nor the reason.)
            let not_reached = |reason: &str| {
                tracing::warn!(
                    swarm = config.name,
                    endpoint = endpoint.url(),
                    reason,
                    "configured node not reached; its volumes are not covered"
                );
            };
            let node = match answer {
                Ok(Some(node)) => node,
                Ok(None) => {
                    not_reached("the daemon is in no swarm");
                    continue;
                }
                Err(reason) => {
                    not_reached(&reason);
                    continue;
                }
            };
            // Two endpoints answering as one node (the manager listed again
            // under another address) are one node, reached the first way.
            if reached.contains_key(&node.id) {
                continue;
            }
            let membership = match &members {
                Some(ids) if ids.contains(&node.id) => Membership::Listed,
                Some(_) => {
                    not_reached(&format!(
                        "the daemon is node {:?}, which is not in the manager's node list",
                        node.id
                    ));
                    Membership::NotListed
                }
                None => Membership::Unchecked,
            };
            // What another swarm's daemon holds is never read as a node's,
            // as its backend is never served (see `node_backend`).
            let held = match (membership, held) {
                (Membership::NotListed, Holdings::Read(_)) => Holdings::Unread(format!(
                    "the daemon is node {:?}, which is not in the manager's node list",
                    node.id
                )),
                (_, held) => held,
            };
            reached.insert(
                node.id.clone(),
                Answered {
                    endpoint: endpoint.clone(),
                    membership,
                },
            );
            listed.push(ReadNode::new(node, held));
        }
        self.reached
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(config.name.clone(), reached);
        Ok(Some(listed))
    }

    /// [`Self::probe`], and with `read`, the daemon's volumes and
    /// containers asked for at the same moment, all within the one bound
    /// of a probe; without, [`Holdings::WithManager`].
    async fn probe_reading(
        &self,
        swarm: &str,
        endpoint: &Endpoint,
        read: bool,
    ) -> (Result<Option<Node>, String>, Holdings) {
        if !read {
            return (self.probe(swarm, endpoint).await, Holdings::WithManager);
        }
        let limit = self.config.timeout;
        let holdings = async {
            let daemon = self
                .node_daemon(swarm, endpoint)
                .await
                .map_err(|e| e.to_string())?;
            let (volumes, containers) =
                tokio::join!(daemon.volumes_by_stack(), daemon.containers());
            match (volumes, containers) {
                (Ok(Some(volumes)), Ok(Some(containers))) => {
                    Ok(NodeHoldings::new(volumes, containers))
                }
                (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
                _ => Err("the daemon does not list its volumes and containers".to_owned()),
            }
        };
        let (node, holdings) = tokio::join!(
            self.probe(swarm, endpoint),
            tokio::time::timeout(limit, holdings)
        );
        let holdings = match holdings {
            Ok(Ok(read)) => Holdings::Read(read),
            Ok(Err(error)) => Holdings::Unread(error),
            Err(_) => Holdings::Unread(format!(
                "listing its volumes and containers timed out after {limit:?}"
            )),
        };
        (node, holdings)
    }

    /// The longest [`NodeReach::nodes`] takes: connecting to the manager
    /// (when not connected yet) and then reading its node list, while the
    /// probes run; each step is bounded by the per-call timeout, and each
    /// probe as a whole by one.
    fn nodes_bound(&self) -> Duration {
        self.config.timeout.saturating_mul(2)
    }

    /// The daemons [`NodeReach::nodes`] probes for `config`: the manager
    /// and each configured node, each address once.
    fn candidates(config: &SwarmConfig) -> Vec<&Endpoint> {
        let mut candidates: Vec<&Endpoint> = Vec::with_capacity(config.nodes.len() + 1);
        for endpoint in std::iter::once(&config.manager).chain(&config.nodes) {
            if !candidates.iter().any(|c| c.url() == endpoint.url()) {
                candidates.push(endpoint);
            }
        }
        candidates
    }
}

#[async_trait]
impl Registry for FileRegistry {
    async fn backend(&self, target: &Target) -> Result<Arc<dyn SwarmBackend>, RegistryError> {
        Ok(self.docker_swarm(target).await?)
    }

    fn as_lister(&self) -> Option<&dyn Lister> {
        Some(self)
    }

    fn as_node_reach(&self) -> Option<&dyn NodeReach> {
        Some(self)
    }

    /// Closes the kept connections of the swarm's manager and configured
    /// nodes (of any other swarm on the same daemons too: they reconnect).
    fn close_idle(&self, target: &Target) {
        let Ok(config) = self.swarm_config(target) else {
            return;
        };
        for endpoint in std::iter::once(&config.manager).chain(&config.nodes) {
            if let Some(client) = self.clients.get(endpoint).and_then(OnceCell::get) {
                client.close_idle();
            }
        }
    }
}

#[async_trait]
impl Lister for FileRegistry {
    async fn swarms(&self) -> Result<Vec<Target>, RegistryError> {
        Ok(self
            .config
            .swarms
            .iter()
            .map(|s| Target::new(s.name.clone()))
            .collect())
    }
}

#[async_trait]
impl NodeReach for FileRegistry {
    /// `None` for a swarm without `[[swarm.node]]` entries. Otherwise every
    /// daemon among the manager and the configured nodes that answers
    /// within the timeout as a swarm node, with the node id it holds, once
    /// per id. Which of them count as this swarm's nodes is the planner's
    /// rule (only those on the manager's node list); a daemon of another
    /// swarm is listed here like any other, and named at warn level. The
    /// manager is probed too, since it is a node with volumes of its own.
    ///
    /// All daemons are probed at once, each within one per-call timeout as
    /// a whole, and the answer holds every one that answered: a silent
    /// daemon costs only itself, and is named (endpoint and reason) at
    /// warn level, like every configured node left out.
    ///
    /// The manager's node list is read while the daemons are probed (the
    /// one the manager's backend has in flight when it has: reading a
    /// swarm takes one round, not two), for [`NodeReach::node_backend`]'s
    /// own check.
    async fn nodes(&self, target: &Target) -> Result<Option<Vec<Node>>, RegistryError> {
        Ok(self
            .discover(target, false)
            .await?
            .map(|read| read.into_iter().map(|r| r.node).collect()))
    }

    /// [`NodeReach::nodes`], each daemon's volumes and containers asked for
    /// at the same moment as its info, over connections of its own: one
    /// round trip for the swarm's nodes. The manager's daemon is asked only
    /// for its info; the manager's read lists its volumes and containers.
    async fn nodes_read(&self, target: &Target) -> Result<Option<Vec<ReadNode>>, RegistryError> {
        self.discover(target, true).await
    }

    /// With volume jobs, a listing is one job: connecting, the node list,
    /// the leftover jobs and the image, then the job itself.
    fn nodes_time_limit(&self) -> Option<Duration> {
        let jobs = self
            .config
            .swarms
            .iter()
            .filter_map(|s| s.job.as_ref())
            .map(|j| {
                j.limit
                    .saturating_add(self.config.timeout.saturating_mul(4))
            })
            .max();
        Some(self.nodes_bound().max(jobs.unwrap_or_default()))
    }

    /// Three per probed daemon: its info, volumes and containers, asked
    /// for at once ([`NodeReach::nodes_read`]); one for the manager's
    /// daemon, asked for its info only. The node list shares the manager's
    /// read in flight, counted by the caller as a manager read. None
    /// without `[[swarm.node]]` entries.
    fn nodes_connections(&self, target: &Target) -> usize {
        match self.swarm_config(target) {
            // The job's calls go one at a time through the manager's client.
            Ok(config) if config.job.is_some() => 2,
            Ok(config) if !config.nodes.is_empty() => Self::candidates(config)
                .iter()
                .map(|e| {
                    if e.url() == config.manager.url() {
                        1
                    } else {
                        3
                    }
                })
                .sum(),
            _ => 0,
        }
    }

    async fn node_backend(
        &self,
        target: &Target,
        node: &Node,
    ) -> Result<Arc<dyn NodeBackend>, RegistryError> {
        let config = self.swarm_config(target)?;
        if let Some(settings) = &config.job {
            let jobs = self.swarm_jobs(config, settings).await?;
            return Ok(Arc::new(jobs.node(&node.id)));
        }
        // The daemon answering as the node, checked against the manager's
        // node list: the planner counts only listed nodes, and this is the
        // precondition at the removal itself, so that no caller's mistake
        // reaches another swarm's daemon.
        let unknown = || RegistryError::UnknownNode {
            swarm: config.name.clone(),
            node: node.id.clone(),
        };
        let listed = |answered: Option<Answered>| match answered {
            Some(a) if a.membership == Membership::Listed => Some(Ok(a.endpoint)),
            Some(a) if a.membership == Membership::NotListed => Some(Err(unknown())),
            _ => None,
        };
        let endpoint = match listed(self.answered(&config.name, &node.id)) {
            Some(endpoint) => endpoint?,
            // No listing on this instance reached the node (a saved plan
            // carried out by a process of its own, or a node that answers
            // again): find the endpoint that answers as that node now, by
            // its own daemon's word and the manager's node list, as a
            // listing does. Once per swarm at a time.
            None => {
                let _one = self.discovering(&config.name).lock().await;
                match listed(self.answered(&config.name, &node.id)) {
                    Some(endpoint) => endpoint?,
                    None => {
                        self.nodes(target).await?;
                        listed(self.answered(&config.name, &node.id))
                            .unwrap_or_else(|| Err(unknown()))?
                    }
                }
            }
        };
        Ok(self.node_daemon(&config.name, &endpoint).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(text: &str) -> FileRegistry {
        FileRegistry::new(
            RegistryConfig::parse(text, "registry.toml", Path::new("/")).unwrap_or_else(|e| {
                panic!("{e}");
            }),
        )
    }

    #[tokio::test]
    async fn lists_configured_names_and_refuses_others() {
        let r = registry(
            "[[swarm]]\nname = \"alpha\"\nmanager = \"unix:///nonexistent/a.sock\"\n[[swarm]]\nname = \"\"\nmanager = \"unix:///nonexistent/l.sock\"\n",
        );
        let lister = r.as_lister().unwrap();
        assert_eq!(
            lister.swarms().await.unwrap(),
            vec![Target::new("alpha"), Target::local()]
        );
        assert!(matches!(
            r.backend(&Target::new("beta")).await,
            Err(RegistryError::UnknownSwarm { .. })
        ));
        match r.backend(&Target::new("alpha")).await {
            Err(RegistryError::Connect {
                swarm, endpoint, ..
            }) => {
                assert_eq!(swarm, "alpha");
                assert_eq!(endpoint, "unix:///nonexistent/a.sock");
            }
            other => panic!("{:?}", other.err()),
        }
        let reach = r.as_node_reach().unwrap();
        assert_eq!(reach.nodes(&Target::new("alpha")).await.unwrap(), None);
        assert!(matches!(
            reach
                .node_backend(&Target::new("alpha"), &Node::new("n1", ""))
                .await,
            Err(RegistryError::UnknownNode { .. })
        ));
    }

    #[tokio::test]
    async fn local_registry_resolves_only_the_local_swarm() {
        let r = LocalRegistry::new(Endpoint::parse("unix:///nonexistent/d.sock", None).unwrap())
            .with_self_stack("swarm-sweep");
        assert!(r.as_lister().is_none());
        assert!(r.as_node_reach().is_none());
        assert!(matches!(
            r.backend(&Target::new("alpha")).await,
            Err(RegistryError::UnknownSwarm { .. })
        ));
        assert!(matches!(
            r.backend(&Target::local()).await,
            Err(RegistryError::Connect { .. })
        ));
    }
}
