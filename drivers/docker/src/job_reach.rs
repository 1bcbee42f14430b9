//! Nodes reached through volume jobs (`node_reach = "job"`): one manager
//! socket is enough to list and remove volumes on every node.
//!
//! A job is a whole round trip through the swarm (create, place, run, read,
//! remove: seconds), so the calls the sweep makes at once are gathered into
//! one job: every `stack_volumes` and `remove_volume` asked within
//! [`GATHER_WINDOW`] of the first goes in the same request, and each caller
//! reads its own node's part of the one result.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use sweep_core::agent::{AgentRequest, AgentResult, NodeReached, Removal};
use sweep_core::escape::escape;
use sweep_core::usage::ContainerUse;
use sweep_swarms::{BackendError, Node, NodeBackend, NodeHoldings, VolumesByStack};
use tokio::sync::{watch, OnceCell};

use crate::client::Client;
use crate::job::{self, JobSettings};

/// How long the first call of a job waits for others to join it.
const GATHER_WINDOW: Duration = Duration::from_millis(200);

/// What one job found: by node id, whether it was reached and what its
/// agent said.
type JobOutcome = Result<BTreeMap<String, NodeReached>, BackendError>;

/// The volume jobs of one swarm.
pub(crate) struct SwarmJobs {
    client: Client,
    swarm: String,
    settings: JobSettings,
    /// The image the jobs run, once pinned to its digest.
    image: OnceCell<String>,
    /// Whether running it unpinned was said already.
    unpinned_said: std::sync::atomic::AtomicBool,
    /// The swarm's node ids, from the last listing.
    nodes: Mutex<Vec<String>>,
    /// What the jobs' agents found on each node they reached.
    found: Mutex<Found>,
    /// The job being gathered, if any.
    pending: Mutex<Option<Pending>>,
    /// The nodes the last listing reached, with what it found there.
    reached: Mutex<HashMap<String, VolumesByStack>>,
}

struct Pending {
    /// The nodes whose backends asked: the job runs on these, besides the
    /// last listing's.
    nodes: BTreeSet<String>,
    list: BTreeSet<String>,
    remove: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    done: watch::Receiver<Option<Arc<JobOutcome>>>,
}

impl SwarmJobs {
    pub(crate) fn new(client: Client, swarm: String, settings: JobSettings) -> Self {
        SwarmJobs {
            client,
            swarm,
            settings,
            image: OnceCell::new(),
            unpinned_said: std::sync::atomic::AtomicBool::new(false),
            nodes: Mutex::new(Vec::new()),
            found: Mutex::new(Found::default()),
            pending: Mutex::new(None),
            reached: Mutex::new(HashMap::new()),
        }
    }

    /// The backend of `node`. It needs no earlier listing on this
    /// instance (a saved plan is carried out by a process that may not
    /// have listed): every call runs a job placed on that node, and only
    /// the node's own result line counts, so a node the job cannot reach
    /// is unreachable, never assumed.
    pub(crate) fn node(self: &Arc<Self>, node: &str) -> JobNode {
        let listed = self
            .reached
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(node)
            .cloned();
        JobNode::new(Arc::clone(self), node.to_owned(), listed)
    }

    /// The image the jobs run: pinned once to its digest, kept for good;
    /// by its tag while it cannot be pinned, asked again for the next job
    /// (a manager that could not be asked once may answer then), said once.
    async fn image(&self) -> String {
        if let Some(pinned) = self.image.get() {
            return pinned.clone();
        }
        match job::pinned_image(&self.client, &self.settings.image).await {
            Ok(pinned) => {
                let _ = self.image.set(pinned.clone());
                pinned
            }
            Err(why) => {
                if !self
                    .unpinned_said
                    .swap(true, std::sync::atomic::Ordering::Relaxed)
                {
                    tracing::warn!(swarm = self.swarm, image = %escape(&self.settings.image), %why, "the agent image is not pinned to a digest; the volume job runs it by its tag");
                }
                self.settings.image.clone()
            }
        }
    }

    /// Runs the listing job on every node of the swarm (`members`, from
    /// the manager) and gives the nodes it reached, each with the stack
    /// volumes it holds. A node not reached is named at warn level with
    /// the reason. Jobs a killed run left behind are removed first.
    pub(crate) async fn list(
        &self,
        members: &[Node],
    ) -> Result<Vec<(Node, NodeHoldings)>, BackendError> {
        job::remove_leftovers(&self.client, &self.swarm, self.settings.limit).await;
        let ids: Vec<String> = members.iter().map(|n| n.id.clone()).collect();
        *self.nodes.lock().unwrap_or_else(PoisonError::into_inner) = ids.clone();
        let outcome = self.run_job(&AgentRequest::list_all(), &ids).await?;
        let mut reached = Vec::new();
        for node in members {
            match outcome.get(&node.id) {
                Some(NodeReached::Reached(result)) => {
                    self.remember(&node.id, result);
                    let by_stack: VolumesByStack = result
                        .volumes
                        .iter()
                        .map(|(stack, names)| (stack.clone(), names.iter().cloned().collect()))
                        .collect();
                    reached.push((
                        node.clone(),
                        NodeHoldings::new(by_stack, result.container_uses()),
                    ));
                }
                other => {
                    tracing::warn!(
                        swarm = self.swarm,
                        node = %escape(node.display_name()),
                        reason = %why_not(other),
                        "node not reached by the volume job; its volumes are not covered"
                    );
                }
            }
        }
        *self.reached.lock().unwrap_or_else(PoisonError::into_inner) = reached
            .iter()
            .map(|(node, listed)| (node.id.clone(), listed.volumes.clone()))
            .collect();
        Ok(reached)
    }

    /// One job of `request` over `nodes`, with the pinned image.
    async fn run_job(&self, request: &AgentRequest, nodes: &[String]) -> JobOutcome {
        let image = self.image().await;
        let image = image.as_str();
        job::run(
            &self.client,
            &self.swarm,
            &self.settings,
            image,
            request,
            nodes,
        )
        .await
    }

    /// Records what a job's agent listed on `node`.
    fn remember(&self, node: &str, result: &AgentResult) {
        self.found().remember(node, result);
    }

    fn found(&self) -> std::sync::MutexGuard<'_, Found> {
        self.found.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Joins (or starts) the job being gathered with `ask`'s part, and
    /// waits for its outcome.
    async fn ask(
        self: &Arc<Self>,
        node: &str,
        ask: impl FnOnce(
            &mut BTreeSet<String>,
            &mut BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
        ),
    ) -> Arc<JobOutcome> {
        let mut done = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            match pending.as_mut() {
                Some(p) => {
                    p.nodes.insert(node.to_owned());
                    ask(&mut p.list, &mut p.remove);
                    p.done.clone()
                }
                None => {
                    let (tx, rx) = watch::channel(None);
                    let mut p = Pending {
                        nodes: BTreeSet::from([node.to_owned()]),
                        list: BTreeSet::new(),
                        remove: BTreeMap::new(),
                        done: rx.clone(),
                    };
                    ask(&mut p.list, &mut p.remove);
                    *pending = Some(p);
                    let this = Arc::clone(self);
                    // Spawned, so that the job runs to its end (and its
                    // service is removed) whichever caller stops waiting.
                    tokio::spawn(async move {
                        tokio::time::sleep(GATHER_WINDOW).await;
                        let outcome = this.run_gathered().await;
                        let _ = tx.send(Some(Arc::new(outcome)));
                    });
                    rx
                }
            }
        };
        loop {
            if let Some(outcome) = done.borrow_and_update().clone() {
                return outcome;
            }
            if done.changed().await.is_err() {
                return Arc::new(Err(BackendError::Other {
                    message: "the volume job ended without an outcome".into(),
                }));
            }
        }
    }

    async fn run_gathered(&self) -> JobOutcome {
        let Some(pending) = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return Ok(BTreeMap::new());
        };
        let mut request = AgentRequest::remove(pending.remove);
        let mut list = request.list.take().unwrap_or_default();
        list.extend(pending.list);
        request.list = Some(list);
        let mut nodes: BTreeSet<String> = self
            .nodes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        nodes.extend(pending.nodes);
        let nodes: Vec<String> = nodes.into_iter().collect();
        let outcome = self.run_job(&request, &nodes).await?;
        for (node, reached) in &outcome {
            if let NodeReached::Reached(result) = reached {
                self.remember(node, result);
            }
        }
        Ok(outcome)
    }
}

/// What the jobs' agents found on each node they reached.
#[derive(Default)]
struct Found {
    /// By node: by volume, its stack, as a job that reached the node
    /// listed them. A volume is removed only as the stack it was listed
    /// under, and the agent checks the label again.
    stacks: HashMap<String, BTreeMap<String, String>>,
}

impl Found {
    /// Records what a job's agent listed on `node`.
    fn remember(&mut self, node: &str, result: &AgentResult) {
        let entry = self.stacks.entry(node.to_owned()).or_default();
        for (stack, names) in &result.volumes {
            for name in names {
                entry.insert(name.clone(), stack.clone());
            }
        }
    }

    /// The stack `volume` was listed under on `node`.
    fn stack_of(&self, node: &str, volume: &str) -> Option<String> {
        self.stacks.get(node).and_then(|v| v.get(volume)).cloned()
    }
}

/// Why a node was not reached, in words.
fn why_not(outcome: Option<&NodeReached>) -> String {
    match outcome {
        None => "it is not in the job's outcome".into(),
        Some(NodeReached::Reached(_)) => "it was reached".into(),
        Some(NodeReached::NoTask) => "no task was placed on it (down, drained or paused)".into(),
        Some(NodeReached::SeveralTasks { tasks }) => format!("{tasks} tasks ran on it"),
        Some(NodeReached::NotComplete { state, error }) => match error {
            Some(error) => format!("its task ended {state}: {}", escape(error)),
            None => format!("its task ended {state}"),
        },
        Some(NodeReached::OutputUnread(why)) => {
            format!("its task's output could not be read: {}", escape(why))
        }
        Some(NodeReached::NoResult) => "its task printed no result".into(),
        Some(NodeReached::SeveralResults { results }) => {
            format!("its task printed {results} results")
        }
        Some(NodeReached::BadResult(e)) => format!("its result does not read: {e}"),
        Some(NodeReached::WrongNode { named }) => format!(
            "its agent's daemon is node {:?}: the socket is not this node's",
            escape(named)
        ),
        Some(NodeReached::AgentFailed(error)) => format!("its agent failed: {}", escape(error)),
        Some(_) => "it was not reached".into(),
    }
}

/// One node, reached through the swarm's volume jobs.
pub(crate) struct JobNode {
    jobs: Arc<SwarmJobs>,
    node: String,
    /// What the listing job found on it, for the snapshot; `None` when no
    /// listing on this instance reached it.
    listed: Option<VolumesByStack>,
}

impl JobNode {
    pub(crate) fn new(jobs: Arc<SwarmJobs>, node: String, listed: Option<VolumesByStack>) -> Self {
        JobNode { jobs, node, listed }
    }

    /// This node's result in `outcome`, or why there is none.
    fn own<'a>(&self, outcome: &'a JobOutcome) -> Result<&'a AgentResult, BackendError> {
        let outcome = outcome.as_ref().map_err(Clone::clone)?;
        match outcome.get(&self.node) {
            Some(NodeReached::Reached(result)) => Ok(result),
            other => Err(BackendError::Unreachable {
                endpoint: format!("node {} through a volume job", self.node),
                message: why_not(other),
            }),
        }
    }
}

#[async_trait]
impl NodeBackend for JobNode {
    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        crate::client::check_release(release)?;
        let outcome = self
            .jobs
            .ask(&self.node, |list, _| {
                list.insert(release.to_owned());
            })
            .await;
        let result = self.own(&outcome)?;
        Ok(result
            .volumes
            .get(release)
            .map(|names| names.iter().cloned().collect())
            .unwrap_or_default())
    }

    /// What the listing job found; `None` (list stack by stack) when no
    /// listing on this instance reached the node.
    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        Ok(self.listed.clone())
    }

    /// A job lists them now, every time: this is the re-read right before
    /// a volume goes, and a container created since the listing (or since
    /// any other job) must stop it. The listing's own are handed to the
    /// gathering with the node ([`SwarmJobs::list`]).
    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        let outcome = self.jobs.ask(&self.node, |_, _| {}).await;
        let result = self.own(&outcome)?;
        Ok(Some(result.container_uses()))
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        let object = format!("volume {name:?} on node {}", self.node);
        // A volume is removed as the stack it was listed under; one never
        // listed on this node is not this sweep's to remove.
        let stack = self.jobs.found().stack_of(&self.node, name);
        let Some(stack) = stack else {
            return Err(BackendError::Invalid {
                what: object,
                message: "no volume job listed it on this node".into(),
            });
        };
        let outcome = self
            .jobs
            .ask(&self.node, |_, remove| {
                remove
                    .entry(self.node.clone())
                    .or_default()
                    .entry(stack)
                    .or_default()
                    .insert(name.to_owned());
            })
            .await;
        let result = self.own(&outcome)?;
        match result.removal(name) {
            Removal::Removed => Ok(()),
            Removal::InUse => Err(BackendError::InUse {
                object,
                message: "a container still uses it".into(),
            }),
            Removal::Refused(reason) => Err(BackendError::Other {
                message: format!("{object}: the agent refused: {}", escape(reason)),
            }),
            Removal::Failed(message) => Err(BackendError::Other {
                message: format!("{object}: {}", escape(message)),
            }),
            // Not mentioned (or anything a newer core says): unknown.
            _ => Err(BackendError::Invalid {
                what: object,
                message: "the agent's result does not mention it".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use sweep_core::agent::AgentContainer;

    use super::*;

    fn result(node: &str, containers: &[ContainerUse]) -> AgentResult {
        let mut result = AgentResult::new(node);
        result.containers = containers.iter().map(AgentContainer::from).collect();
        result
    }

    #[test]
    fn a_volume_is_removed_only_as_the_stack_a_job_listed_it_under() {
        let mut found = Found::default();
        let mut listing = result("N1", &[]);
        listing.volumes =
            BTreeMap::from([("gone".to_owned(), BTreeSet::from(["gone_data".to_owned()]))]);
        found.remember("N1", &listing);
        // A removal job since lists no volumes: the stack is kept.
        found.remember("N1", &result("N1", &[]));
        assert_eq!(found.stack_of("N1", "gone_data").as_deref(), Some("gone"));
        assert_eq!(found.stack_of("N2", "gone_data"), None);
        assert_eq!(found.stack_of("N1", "other"), None);
    }
}
