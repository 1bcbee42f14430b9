//! Faults injected into any [`Registry`]: [`Faulty`] wraps a registry and
//! every backend and node backend it hands out, and its [`Lister`] and
//! [`NodeReach`] too, and makes the calls a [`Fault`] names fail, time out,
//! hang or slow down, a given number of times or always.
//!
//! It knows nothing of the registry it wraps, so one fault schedule runs
//! against the in-memory registry and against the docker registries of the
//! real-engine tests alike. Faults that only make sense as the state of a
//! world (a volume in use, a record removal cut off between two records)
//! belong to that world: see [`MemoryRegistry`](crate::MemoryRegistry).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use sweep_swarms::{
    BackendError, ContainerEvents, ContainerUse, Lister, Node, NodeBackend, NodeReach, ObjectRef,
    PayloadScope, Registry, RegistryError, ReleaseRecord, ServiceUse, StackObjects, StackPart,
    SwarmBackend, Target, VolumesByStack,
};

/// A call through the seam, to aim a fault at and to read a call log by.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// Connecting: [`Registry::backend`] for the manager (a fault without a
    /// node), [`NodeReach::node_backend`] for a node. A node whose
    /// connection faults is also left out of [`NodeReach::nodes`], as a
    /// registry leaves out a node it cannot connect to; each listing and
    /// each `node_backend` is one connection attempt.
    Connect,
    /// [`Lister::swarms`]; a fault on it matches whatever swarm it names.
    Swarms,
    /// [`NodeReach::nodes`].
    Nodes,
    /// [`SwarmBackend::releases`] and
    /// [`SwarmBackend::releases_with_payloads`]: one listing.
    Releases,
    /// [`SwarmBackend::remove_stack_part`], whatever the part: a fault
    /// counted in calls hits the services first, as they go first.
    RemoveStack,
    /// `stack_volumes` of either backend.
    StackVolumes,
    /// [`SwarmBackend::stack_objects`].
    StackObjects,
    /// `volumes_by_stack` of either backend.
    VolumesByStack,
    /// [`SwarmBackend::own_node_id`].
    OwnNodeId,
    /// [`SwarmBackend::service_uses`].
    ServiceUses,
    /// `containers` of either backend.
    Containers,
    /// `remove_volume` of either backend.
    RemoveVolume,
    /// [`SwarmBackend::remove_release_records`].
    RemoveReleaseRecords,
    /// [`SwarmBackend::node_count`].
    NodeCount,
    /// [`SwarmBackend::node_ids`].
    NodeIds,
    /// [`SwarmBackend::members`].
    Members,
    /// [`SwarmBackend::cluster_id`].
    ClusterId,
    /// `container_events` of either backend: the subscription, not the
    /// events it yields.
    Events,
}

/// What a fault does to the call it hits.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Fails with the error, without calling through: nothing happens.
    Fail(BackendError),
    /// Calls through, then fails with the error: a call whose answer was
    /// lost (a `remove_stack` that times out after the stack is gone).
    FailAfterEffect(BackendError),
    /// Waits this long without calling through, then fails with
    /// [`BackendError::Timeout`]: a daemon that bounds itself and gives up.
    Timeout(Duration),
    /// Never answers: only the caller's own bound ends the call.
    Hang,
    /// Waits this long, then calls through.
    Slow(Duration),
}

/// One fault: which call it hits, where, what it does and how often.
///
/// Registry calls carry the fault's error in the error the registry would
/// return: [`RegistryError::Connect`] for [`Call::Connect`],
/// [`RegistryError::Manager`] for [`Call::Nodes`] and
/// [`RegistryError::Listing`] for [`Call::Swarms`].
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The swarm, by the registry's name for it (ignored for
    /// [`Call::Swarms`]).
    pub swarm: String,
    /// `None`: the manager's backend and the registry's calls about the
    /// swarm; `Some(id)`: that node's own backend and connection.
    pub node: Option<String>,
    /// Which call.
    pub call: Call,
    /// Only calls about this release or volume name; `None`: any.
    pub subject: Option<String>,
    /// What it does.
    pub effect: Effect,
    /// How many matching calls pass untouched before it hits.
    pub after: u32,
    /// How many calls it hits; `None`: every one.
    pub times: Option<u32>,
}

impl Fault {
    /// `effect` on every `call` to `swarm`'s manager (or about `swarm`).
    pub fn new(swarm: impl Into<String>, call: Call, effect: Effect) -> Self {
        Fault {
            swarm: swarm.into(),
            node: None,
            call,
            subject: None,
            effect,
            after: 0,
            times: None,
        }
    }

    /// On node `id`'s own backend and connection instead of the manager.
    pub fn on_node(mut self, id: impl Into<String>) -> Self {
        self.node = Some(id.into());
        self
    }

    /// Only on calls about release or volume `subject`.
    pub fn subject(mut self, subject: impl Into<String>) -> Self {
        self.subject = Some(subject.into());
        self
    }

    /// Hits `n` calls, then is gone.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    /// Lets `k` matching calls pass first (say, the first `k` record
    /// removals of a sweep), then hits.
    pub fn after(mut self, k: u32) -> Self {
        self.after = k;
        self
    }

    fn matches(&self, at: &At<'_>) -> bool {
        self.call == at.call
            && (at.call == Call::Swarms || self.swarm == at.swarm)
            && self.node.as_deref() == at.node
            && self.subject.as_deref().is_none_or(|s| s == at.subject)
    }
}

/// One fault that hit, as logged.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injected {
    /// The swarm called (empty for [`Call::Swarms`]).
    pub swarm: String,
    /// `None` for the manager, the node id for a node.
    pub node: Option<String>,
    /// Which call.
    pub call: Call,
    /// The call's release or volume name, empty when it has none.
    pub subject: String,
    /// What was done to it.
    pub effect: Effect,
}

/// Where a call goes.
struct At<'a> {
    swarm: &'a str,
    node: Option<&'a str>,
    call: Call,
    subject: &'a str,
}

impl At<'_> {
    fn endpoint(&self) -> String {
        format!("faulty://{}/{}", self.swarm, self.node.unwrap_or("manager"))
    }
}

/// Locks, carrying on after a panic elsewhere: the state is plain data that
/// every method leaves consistent, and a test must still be able to inspect it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

type Wrapped<T> = (Arc<T>, Arc<T>);

#[derive(Default)]
struct Shared {
    faults: Mutex<Vec<Fault>>,
    injected: Mutex<Vec<Injected>>,
    /// The inner backend handed out for a target, and its wrapper: the
    /// same wrapper while the inner registry hands out the same backend.
    backends: Mutex<HashMap<Target, Wrapped<dyn SwarmBackend>>>,
    node_backends: Mutex<HashMap<(Target, String), Wrapped<dyn NodeBackend>>>,
}

impl Shared {
    /// The effect of the first fault that hits a call at `at`, counted as
    /// spent and logged.
    fn take(&self, at: &At<'_>) -> Option<Effect> {
        let mut faults = lock(&self.faults);
        let mut hit = None;
        for fault in faults.iter_mut().filter(|f| f.matches(at)) {
            if fault.after > 0 {
                fault.after -= 1;
                continue;
            }
            match &mut fault.times {
                Some(0) => continue,
                Some(n) => *n -= 1,
                None => {}
            }
            hit = Some(fault.effect.clone());
            break;
        }
        faults.retain(|f| f.times != Some(0));
        drop(faults);
        if let Some(effect) = &hit {
            lock(&self.injected).push(Injected {
                swarm: if at.call == Call::Swarms {
                    String::new()
                } else {
                    at.swarm.to_owned()
                },
                node: at.node.map(str::to_owned),
                call: at.call,
                subject: at.subject.to_owned(),
                effect: effect.clone(),
            });
        }
        hit
    }

    /// Runs `call` at `at` through the faults; `error` turns a fault's
    /// error into the call's own error type.
    async fn apply<T, E>(
        &self,
        at: At<'_>,
        call: impl Future<Output = Result<T, E>>,
        error: impl FnOnce(BackendError) -> E,
    ) -> Result<T, E> {
        let Some(effect) = self.take(&at) else {
            return call.await;
        };
        match effect {
            Effect::Fail(e) => Err(error(e)),
            Effect::FailAfterEffect(e) => {
                // The effect happens even though the caller only hears the error.
                let _effect = call.await;
                Err(error(e))
            }
            Effect::Timeout(after) => {
                tokio::time::sleep(after).await;
                Err(error(BackendError::Timeout {
                    endpoint: at.endpoint(),
                    after,
                }))
            }
            Effect::Hang => std::future::pending().await,
            Effect::Slow(delay) => {
                tokio::time::sleep(delay).await;
                call.await
            }
        }
    }
}

/// A registry whose calls, and its backends' calls, suffer the faults
/// injected with [`Faulty::inject`]. Without faults it is the registry it
/// wraps: same swarms, same lister and node reach (offered when the inner
/// registry offers them), one wrapper per inner backend. Clones share
/// faults and log.
pub struct Faulty<R> {
    inner: Arc<R>,
    shared: Arc<Shared>,
}

impl<R> Clone for Faulty<R> {
    fn clone(&self) -> Self {
        Faulty {
            inner: self.inner.clone(),
            shared: self.shared.clone(),
        }
    }
}

impl<R: Registry> Faulty<R> {
    /// `inner`, with no faults yet.
    pub fn new(inner: R) -> Self {
        Faulty {
            inner: Arc::new(inner),
            shared: Arc::default(),
        }
    }

    /// The registry wrapped, to set up or inspect its world around the faults.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// Adds `fault`; a call hit by several faults suffers the one added first.
    pub fn inject(&self, fault: Fault) {
        lock(&self.shared.faults).push(fault);
    }

    /// Removes every fault not yet spent.
    pub fn clear(&self) {
        lock(&self.shared.faults).clear();
    }

    /// Every fault that hit a call so far, in order.
    pub fn injected(&self) -> Vec<Injected> {
        lock(&self.shared.injected).clone()
    }

    fn wrap_backend(&self, target: &Target, inner: Arc<dyn SwarmBackend>) -> Arc<dyn SwarmBackend> {
        let mut backends = lock(&self.shared.backends);
        if let Some((known, wrapper)) = backends.get(target) {
            if Arc::ptr_eq(known, &inner) {
                return wrapper.clone();
            }
        }
        let wrapper: Arc<dyn SwarmBackend> = Arc::new(FaultyBackend {
            inner: inner.clone(),
            shared: self.shared.clone(),
            swarm: target.as_str().to_owned(),
        });
        backends.insert(target.clone(), (inner, wrapper.clone()));
        wrapper
    }

    fn wrap_node_backend(
        &self,
        target: &Target,
        node: &Node,
        inner: Arc<dyn NodeBackend>,
    ) -> Arc<dyn NodeBackend> {
        let key = (target.clone(), node.id.clone());
        let mut backends = lock(&self.shared.node_backends);
        if let Some((known, wrapper)) = backends.get(&key) {
            if Arc::ptr_eq(known, &inner) {
                return wrapper.clone();
            }
        }
        let wrapper: Arc<dyn NodeBackend> = Arc::new(FaultyNodeBackend {
            inner: inner.clone(),
            shared: self.shared.clone(),
            swarm: target.as_str().to_owned(),
            node: node.id.clone(),
        });
        backends.insert(key, (inner, wrapper.clone()));
        wrapper
    }
}

fn connect_error(target: &Target, node: Option<&Node>, source: BackendError) -> RegistryError {
    RegistryError::Connect {
        swarm: target.as_str().to_owned(),
        endpoint: format!(
            "faulty://{}/{}",
            target.as_str(),
            node.map_or("manager", |n| n.id.as_str())
        ),
        message: source.to_string(),
    }
}

#[async_trait]
impl<R: Registry> Registry for Faulty<R> {
    async fn backend(&self, target: &Target) -> Result<Arc<dyn SwarmBackend>, RegistryError> {
        let at = At {
            swarm: target.as_str(),
            node: None,
            call: Call::Connect,
            subject: "",
        };
        let inner = self
            .shared
            .apply(at, self.inner.backend(target), |e| {
                connect_error(target, None, e)
            })
            .await?;
        Ok(self.wrap_backend(target, inner))
    }

    fn as_lister(&self) -> Option<&dyn Lister> {
        self.inner.as_lister().map(|_| self as &dyn Lister)
    }

    fn as_node_reach(&self) -> Option<&dyn NodeReach> {
        self.inner.as_node_reach().map(|_| self as &dyn NodeReach)
    }

    /// Forwarded, fault-free: closing kept connections is bookkeeping the
    /// caller's connection bound relies on, not a call that can fail.
    fn close_idle(&self, target: &Target) {
        self.inner.close_idle(target);
    }
}

#[async_trait]
impl<R: Registry> Lister for Faulty<R> {
    async fn swarms(&self) -> Result<Vec<Target>, RegistryError> {
        let at = At {
            swarm: "",
            node: None,
            call: Call::Swarms,
            subject: "",
        };
        let listing = async {
            match self.inner.as_lister() {
                Some(lister) => lister.swarms().await,
                // Offered when asked, withdrawn since: no list is no list.
                None => Err(RegistryError::Listing {
                    message: "the wrapped registry no longer lists its swarms".into(),
                }),
            }
        };
        self.shared
            .apply(at, listing, |e| RegistryError::Listing {
                message: e.to_string(),
            })
            .await
    }
}

#[async_trait]
impl<R: Registry> NodeReach for Faulty<R> {
    async fn nodes(&self, target: &Target) -> Result<Option<Vec<Node>>, RegistryError> {
        let Some(reach) = self.inner.as_node_reach() else {
            return Ok(None);
        };
        let at = At {
            swarm: target.as_str(),
            node: None,
            call: Call::Nodes,
            subject: "",
        };
        let listed = self
            .shared
            .apply(at, reach.nodes(target), |source| RegistryError::Manager {
                swarm: target.as_str().to_owned(),
                source,
            })
            .await?;
        let Some(listed) = listed else {
            return Ok(None);
        };
        // A node the registry could not connect to is left out, never
        // listed and then failed on (the contract of `nodes`).
        let mut reached = Vec::with_capacity(listed.len());
        for node in listed {
            let at = At {
                swarm: target.as_str(),
                node: Some(&node.id),
                call: Call::Connect,
                subject: "",
            };
            match self.shared.take(&at) {
                None => reached.push(node),
                Some(Effect::Slow(delay)) => {
                    tokio::time::sleep(delay).await;
                    reached.push(node);
                }
                Some(Effect::Timeout(after)) => tokio::time::sleep(after).await,
                Some(Effect::Hang) => std::future::pending::<()>().await,
                Some(Effect::Fail(_) | Effect::FailAfterEffect(_)) => {}
            }
        }
        Ok(Some(reached))
    }

    fn nodes_time_limit(&self) -> Option<Duration> {
        self.inner
            .as_node_reach()
            .and_then(NodeReach::nodes_time_limit)
    }

    fn nodes_connections(&self, target: &Target) -> usize {
        self.inner
            .as_node_reach()
            .map_or(1, |reach| reach.nodes_connections(target))
    }

    async fn node_backend(
        &self,
        target: &Target,
        node: &Node,
    ) -> Result<Arc<dyn NodeBackend>, RegistryError> {
        let Some(reach) = self.inner.as_node_reach() else {
            return Err(RegistryError::UnknownNode {
                swarm: target.as_str().to_owned(),
                node: node.id.clone(),
            });
        };
        let at = At {
            swarm: target.as_str(),
            node: Some(&node.id),
            call: Call::Connect,
            subject: "",
        };
        let inner = self
            .shared
            .apply(at, reach.node_backend(target, node), |e| {
                connect_error(target, Some(node), e)
            })
            .await?;
        Ok(self.wrap_node_backend(target, node, inner))
    }
}

/// A manager backend handed out by a [`Faulty`] registry.
struct FaultyBackend {
    inner: Arc<dyn SwarmBackend>,
    shared: Arc<Shared>,
    swarm: String,
}

impl FaultyBackend {
    fn at<'a>(&'a self, call: Call, subject: &'a str) -> At<'a> {
        At {
            swarm: &self.swarm,
            node: None,
            call,
            subject,
        }
    }
}

fn same(e: BackendError) -> BackendError {
    e
}

#[async_trait]
impl SwarmBackend for FaultyBackend {
    async fn releases(&self) -> Result<Vec<ReleaseRecord>, BackendError> {
        let at = self.at(Call::Releases, "");
        self.shared.apply(at, self.inner.releases(), same).await
    }

    // The same fault as `releases`: one listing, read with or without data.
    async fn releases_with_payloads(
        &self,
        payloads: &PayloadScope,
    ) -> Result<Vec<ReleaseRecord>, BackendError> {
        let at = self.at(Call::Releases, "");
        let call = self.inner.releases_with_payloads(payloads);
        self.shared.apply(at, call, same).await
    }

    async fn remove_stack_part(
        &self,
        release: &str,
        part: StackPart,
        objects: &[ObjectRef],
    ) -> Result<(), BackendError> {
        let at = self.at(Call::RemoveStack, release);
        let call = self.inner.remove_stack_part(release, part, objects);
        self.shared.apply(at, call, same).await
    }

    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        let at = self.at(Call::StackVolumes, release);
        let call = self.inner.stack_volumes(release);
        self.shared.apply(at, call, same).await
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        let at = self.at(Call::RemoveVolume, name);
        let call = self.inner.remove_volume(name);
        self.shared.apply(at, call, same).await
    }

    // Forwarded explicitly, as every read with a default is: the default
    // would hide what the inner backend reads.
    async fn stack_objects(&self) -> Result<Option<BTreeMap<String, StackObjects>>, BackendError> {
        let at = self.at(Call::StackObjects, "");
        self.shared
            .apply(at, self.inner.stack_objects(), same)
            .await
    }

    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        let at = self.at(Call::VolumesByStack, "");
        self.shared
            .apply(at, self.inner.volumes_by_stack(), same)
            .await
    }

    async fn own_node_id(&self) -> Result<Option<String>, BackendError> {
        let at = self.at(Call::OwnNodeId, "");
        self.shared.apply(at, self.inner.own_node_id(), same).await
    }

    async fn service_uses(&self) -> Result<Option<Vec<ServiceUse>>, BackendError> {
        let at = self.at(Call::ServiceUses, "");
        self.shared.apply(at, self.inner.service_uses(), same).await
    }

    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        let at = self.at(Call::Containers, "");
        self.shared.apply(at, self.inner.containers(), same).await
    }

    async fn remove_release_records(&self, release: &str) -> Result<(), BackendError> {
        let at = self.at(Call::RemoveReleaseRecords, release);
        let call = self.inner.remove_release_records(release);
        self.shared.apply(at, call, same).await
    }

    async fn node_count(&self) -> Result<usize, BackendError> {
        let at = self.at(Call::NodeCount, "");
        self.shared.apply(at, self.inner.node_count(), same).await
    }

    async fn node_ids(&self) -> Result<Vec<String>, BackendError> {
        let at = self.at(Call::NodeIds, "");
        self.shared.apply(at, self.inner.node_ids(), same).await
    }

    // Forwarded explicitly: the trait's default would drop the inner
    // backend's hostnames.
    async fn members(&self) -> Result<Vec<Node>, BackendError> {
        let at = self.at(Call::Members, "");
        self.shared.apply(at, self.inner.members(), same).await
    }

    async fn cluster_id(&self) -> Result<String, BackendError> {
        let at = self.at(Call::ClusterId, "");
        self.shared.apply(at, self.inner.cluster_id(), same).await
    }

    fn self_stack(&self) -> Option<&str> {
        self.inner.self_stack()
    }

    // Forwarded explicitly: the trait's default would hide the inner
    // backend's events, and the sweep would only ever retry on time.
    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        let at = self.at(Call::Events, "");
        self.shared
            .apply(at, self.inner.container_events(), same)
            .await
    }
}

/// A node backend handed out by a [`Faulty`] registry.
struct FaultyNodeBackend {
    inner: Arc<dyn NodeBackend>,
    shared: Arc<Shared>,
    swarm: String,
    node: String,
}

impl FaultyNodeBackend {
    fn at<'a>(&'a self, call: Call, subject: &'a str) -> At<'a> {
        At {
            swarm: &self.swarm,
            node: Some(&self.node),
            call,
            subject,
        }
    }
}

#[async_trait]
impl NodeBackend for FaultyNodeBackend {
    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        let at = self.at(Call::StackVolumes, release);
        let call = self.inner.stack_volumes(release);
        self.shared.apply(at, call, same).await
    }

    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        let at = self.at(Call::VolumesByStack, "");
        self.shared
            .apply(at, self.inner.volumes_by_stack(), same)
            .await
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        let at = self.at(Call::RemoveVolume, name);
        let call = self.inner.remove_volume(name);
        self.shared.apply(at, call, same).await
    }

    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        let at = self.at(Call::Containers, "");
        self.shared.apply(at, self.inner.containers(), same).await
    }

    // Forwarded explicitly, as for the manager's backend.
    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        let at = self.at(Call::Events, "");
        self.shared
            .apply(at, self.inner.container_events(), same)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemoryNode, MemoryRegistry, MemoryStack, MemorySwarm};

    fn faulty() -> Faulty<MemoryRegistry> {
        Faulty::new(
            MemoryRegistry::new().with_swarm(
                MemorySwarm::new("alpha", "cluster-a")
                    .node(MemoryNode::new("a1", "alpha-1").volume("app_data", Some("app")))
                    .node(MemoryNode::new("a2", "alpha-2").volume("app_cache", Some("app")))
                    .stack("app", MemoryStack::new().network("app_default")),
            ),
        )
    }

    fn boom() -> BackendError {
        BackendError::Other {
            message: "boom".into(),
        }
    }

    #[tokio::test]
    async fn without_faults_it_is_the_inner_registry() {
        let reg = faulty();
        let alpha = Target::new("alpha");
        let b = reg.backend(&alpha).await.unwrap();
        assert!(Arc::ptr_eq(&b, &reg.backend(&alpha).await.unwrap()));
        assert_eq!(b.cluster_id().await.unwrap(), "cluster-a");
        // Hostnames come through: members is forwarded, not defaulted.
        assert_eq!(
            b.members().await.unwrap(),
            vec![Node::new("a1", "alpha-1"), Node::new("a2", "alpha-2")]
        );
        assert_eq!(
            reg.as_lister().unwrap().swarms().await.unwrap(),
            vec![alpha.clone()]
        );
        let reach = reg.as_node_reach().unwrap();
        assert_eq!(reach.nodes(&alpha).await.unwrap().unwrap().len(), 2);
        let n2 = Node::new("a2", "");
        let nb = reach.node_backend(&alpha, &n2).await.unwrap();
        assert!(Arc::ptr_eq(
            &nb,
            &reach.node_backend(&alpha, &n2).await.unwrap()
        ));
        reg.inner().set_lister(false);
        assert!(reg.as_lister().is_none());
        assert!(reg.injected().is_empty());
    }

    #[tokio::test]
    async fn fail_with_and_without_effect_n_times() {
        let reg = faulty();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        reg.inject(Fault::new("alpha", Call::RemoveStack, Effect::Fail(boom())).times(1));
        // The fixture's stack is a network alone: no service holds it.
        let networks = |b: Arc<dyn SwarmBackend>| async move {
            crate::remove_whole_part(&*b, "app", StackPart::Networks).await
        };
        assert_eq!(networks(b.clone()).await, Err(boom()));
        assert!(reg.inner().stack("alpha", "app").is_some());
        reg.inject(
            Fault::new("alpha", Call::RemoveStack, Effect::FailAfterEffect(boom())).times(1),
        );
        assert_eq!(networks(b.clone()).await, Err(boom()));
        assert!(reg.inner().stack("alpha", "app").is_none());
        networks(b.clone()).await.unwrap();
        assert_eq!(reg.injected().len(), 2);
        // Only the two removals that went through reached the world,
        // besides the three listings that named what to remove.
        let events = reg.inner().events();
        assert_eq!(
            events.iter().filter(|e| e.op == Call::RemoveStack).count(),
            2
        );
        assert_eq!(events.len(), 5);
    }

    #[tokio::test]
    async fn after_k_calls_and_only_on_a_subject() {
        let reg = faulty();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        reg.inject(
            Fault::new("alpha", Call::RemoveReleaseRecords, Effect::Fail(boom()))
                .subject("web")
                .after(1),
        );
        assert!(b.remove_release_records("web").await.is_ok());
        assert!(b.remove_release_records("other").await.is_ok());
        assert_eq!(b.remove_release_records("web").await, Err(boom()));
        // Always, until cleared.
        assert_eq!(b.remove_release_records("web").await, Err(boom()));
        reg.clear();
        assert!(b.remove_release_records("web").await.is_ok());
    }

    #[tokio::test]
    async fn node_faults_hit_that_node_only() {
        let reg = faulty();
        let alpha = Target::new("alpha");
        reg.inject(
            Fault::new("alpha", Call::StackVolumes, Effect::Fail(boom()))
                .on_node("a2")
                .times(1),
        );
        let reach = reg.as_node_reach().unwrap();
        let n2 = reach
            .node_backend(&alpha, &Node::new("a2", ""))
            .await
            .unwrap();
        let n1 = reach
            .node_backend(&alpha, &Node::new("a1", ""))
            .await
            .unwrap();
        assert!(n1.stack_volumes("app").await.is_ok());
        let manager = reg.backend(&alpha).await.unwrap();
        assert!(manager.stack_volumes("app").await.is_ok());
        assert_eq!(n2.stack_volumes("app").await, Err(boom()));
        assert_eq!(n2.stack_volumes("app").await.unwrap(), ["app_cache"]);
    }

    #[tokio::test]
    async fn the_object_and_volume_reads_can_fail_and_are_forwarded_otherwise() {
        let reg = faulty();
        let alpha = Target::new("alpha");
        let b = reg.backend(&alpha).await.unwrap();
        let objects = b.stack_objects().await.unwrap().unwrap();
        assert_eq!(
            objects["app"].networks,
            [ObjectRef::new("networks-app_default", "app_default")]
        );
        assert_eq!(b.own_node_id().await.unwrap().as_deref(), Some("a1"));
        reg.inject(Fault::new("alpha", Call::StackObjects, Effect::Fail(boom())).times(1));
        reg.inject(Fault::new("alpha", Call::OwnNodeId, Effect::Fail(boom())).times(1));
        reg.inject(
            Fault::new("alpha", Call::VolumesByStack, Effect::Fail(boom()))
                .on_node("a2")
                .times(1),
        );
        assert_eq!(b.stack_objects().await, Err(boom()));
        assert_eq!(b.own_node_id().await, Err(boom()));
        // The node fault hits the node only, not the manager's own daemon.
        assert!(b.volumes_by_stack().await.unwrap().is_some());
        let a2 = reg
            .as_node_reach()
            .unwrap()
            .node_backend(&alpha, &Node::new("a2", ""))
            .await
            .unwrap();
        assert_eq!(a2.volumes_by_stack().await, Err(boom()));
        let by_stack = a2.volumes_by_stack().await.unwrap().unwrap();
        assert_eq!(by_stack["app"], ["app_cache"]);
        assert_eq!(reg.injected().len(), 3);
    }

    #[tokio::test]
    async fn a_node_that_cannot_be_connected_to_is_left_out_of_the_listing() {
        let reg = faulty();
        let alpha = Target::new("alpha");
        reg.inject(Fault::new("alpha", Call::Connect, Effect::Fail(boom())).on_node("a2"));
        let reach = reg.as_node_reach().unwrap();
        assert_eq!(
            reach.nodes(&alpha).await.unwrap().unwrap(),
            vec![Node::new("a1", "alpha-1")]
        );
        assert!(matches!(
            reach.node_backend(&alpha, &Node::new("a2", "")).await,
            Err(RegistryError::Connect { .. })
        ));
        // The manager's node list still counts it.
        let b = reg.backend(&alpha).await.unwrap();
        assert_eq!(b.node_count().await.unwrap(), 2);
    }

    #[tokio::test]
    async fn registry_calls_carry_the_fault_in_their_own_error() {
        let reg = faulty();
        let alpha = Target::new("alpha");
        reg.inject(Fault::new("alpha", Call::Connect, Effect::Fail(boom())).times(1));
        reg.inject(Fault::new("alpha", Call::Nodes, Effect::Fail(boom())).times(1));
        reg.inject(Fault::new("any", Call::Swarms, Effect::Fail(boom())).times(1));
        assert!(matches!(
            reg.backend(&alpha).await,
            Err(RegistryError::Connect { .. })
        ));
        assert!(reg.backend(&alpha).await.is_ok());
        assert_eq!(
            reg.as_node_reach().unwrap().nodes(&alpha).await,
            Err(RegistryError::Manager {
                swarm: "alpha".into(),
                source: boom()
            })
        );
        assert!(matches!(
            reg.as_lister().unwrap().swarms().await,
            Err(RegistryError::Listing { .. })
        ));
        assert!(reg.as_lister().unwrap().swarms().await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn timeouts_slow_calls_and_hangs() {
        let reg = faulty();
        let b = reg.backend(&Target::new("alpha")).await.unwrap();
        let second = Duration::from_secs(1);
        reg.inject(Fault::new("alpha", Call::Releases, Effect::Timeout(second)).times(1));
        reg.inject(Fault::new("alpha", Call::Releases, Effect::Slow(second * 3)).times(1));
        reg.inject(Fault::new("alpha", Call::ClusterId, Effect::Hang));
        let start = tokio::time::Instant::now();
        assert!(matches!(
            b.releases().await,
            Err(BackendError::Timeout { after, .. }) if after == second
        ));
        assert_eq!(start.elapsed(), second);
        assert!(b.releases().await.is_ok());
        assert_eq!(start.elapsed(), second * 4);
        let hung = tokio::time::timeout(second * 60, b.cluster_id()).await;
        assert!(hung.is_err(), "never answers");
    }
    #[tokio::test]
    async fn container_events_are_forwarded_and_their_subscription_can_fail() {
        use futures_util::StreamExt;
        let reg = Faulty::new(
            MemoryRegistry::new().with_swarm(
                MemorySwarm::new("alpha", "cluster-a")
                    .node(MemoryNode::new("a1", "alpha-1").volume("app_data", Some("app")))
                    .node(MemoryNode::new("a2", "alpha-2").volume("app_cache", Some("app")))
                    .stack("app", MemoryStack::new().service("app_web")),
            ),
        );
        let alpha = Target::new("alpha");
        let b = reg.backend(&alpha).await.unwrap();
        let reach = reg.as_node_reach().unwrap();
        let a1 = reach
            .node_backend(&alpha, &Node::new("a1", "alpha-1"))
            .await
            .unwrap();
        let a2 = reach
            .node_backend(&alpha, &Node::new("a2", "alpha-2"))
            .await
            .unwrap();
        reg.inject(Fault::new("alpha", Call::Events, Effect::Fail(boom())).on_node("a2"));
        let mut on_a1 = a1.container_events().await.unwrap();
        assert_eq!(a2.container_events().await.err(), Some(boom()));
        crate::remove_whole_part(&*b, "app", StackPart::Services)
            .await
            .unwrap();
        assert_eq!(
            on_a1.next().await,
            Some(Ok(sweep_swarms::ContainerGone::new("app")))
        );
        assert_eq!(reg.injected().len(), 1);
        assert_eq!(reg.injected()[0].call, Call::Events);
    }
}
