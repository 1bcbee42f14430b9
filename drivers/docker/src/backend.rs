//! The Docker backends: [`DockerSwarm`] (a swarm through its manager) and
//! [`DockerNode`] (one node's own daemon).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use bollard::errors::Error as DockerError;
use bollard::models::{Network, NodeState, Secret, Service, TaskState};
use bollard::query_parameters::{
    ListNetworksOptionsBuilder, ListNodesOptions, ListSecretsOptionsBuilder,
    ListServicesOptionsBuilder, ListTasksOptionsBuilder,
};
use sweep_core::deletion_window::DeletionWindow;
use sweep_core::objects::ObjectRef;
use sweep_core::record::{read_payload, Payload, RevisionRead};
use sweep_core::usage::{ContainerUse, ServiceUse};
use sweep_swarms::{
    BackendError, ContainerEvents, Listings, Node, NodeBackend, ObjectVersion, PayloadScope,
    ReleaseRecord, StackObjects, StackPart, SwarmBackend, VolumesByStack,
};

use sweep_core::stacks::{self, split_by_namespace, KindListings};

use crate::client::{check_object_name, check_release, label_filter, CallFailure, Client};
use crate::configs::{Data, Labels, ListedConfig};
use crate::endpoint::Endpoint;
use crate::labels::{
    self, ConfigLabels, OWNER, RECORD_TYPE, RELEASE, REVISION, STACK_NAMESPACE, STATUS, TYPE,
};
use crate::usage::ListedService;

/// How long a daemon call may take unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The swarm-scoped object kinds a stack is made of.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Service,
    Network,
    Secret,
    Config,
}

impl Kind {
    /// The object kind a stack part removes; `None` for
    /// [`StackPart::Tasks`], which removes nothing.
    fn of(part: StackPart) -> Option<Kind> {
        match part {
            StackPart::Services => Some(Kind::Service),
            StackPart::Tasks => None,
            StackPart::Networks => Some(Kind::Network),
            StackPart::Secrets => Some(Kind::Secret),
            StackPart::Configs => Some(Kind::Config),
        }
    }
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Service => "service",
            Kind::Network => "network",
            Kind::Secret => "secret",
            Kind::Config => "config",
        }
    }
}

/// An object as the daemon lists it: id, name, labels and version index,
/// any of them possibly missing.
type RawListed = (
    Option<String>,
    Option<String>,
    Option<HashMap<String, String>>,
    Option<u64>,
);

/// What bollard lists for one stack object kind, reduced to what removal
/// needs. One listing ([`DockerSwarm::list`]) serves all four kinds, so the
/// checks on what the daemon listed cannot drift apart between them.
trait Listable {
    fn into_raw(self) -> RawListed;
}

impl Listable for Service {
    fn into_raw(self) -> RawListed {
        let version = self.version.as_ref().and_then(|v| v.index);
        let (name, labels) = self.spec.map(|s| (s.name, s.labels)).unwrap_or_default();
        (self.id, name, labels, version)
    }
}

impl Listable for Network {
    fn into_raw(self) -> RawListed {
        (self.id, self.name, self.labels, None)
    }
}

impl Listable for Secret {
    fn into_raw(self) -> RawListed {
        let version = self.version.as_ref().and_then(|v| v.index);
        let (name, labels) = self.spec.map(|s| (s.name, s.labels)).unwrap_or_default();
        (self.id, name, labels, version)
    }
}

impl Listable for ListedConfig {
    fn into_raw(self) -> RawListed {
        (self.id, self.name, self.labels, self.version)
    }
}

/// One listed object: its id (what is removed), name (what is reported)
/// and version index (what a removal at a judged version checks).
struct Listed {
    id: String,
    name: String,
    version: Option<u64>,
}

impl Listed {
    /// The one of `objects` it is: by id where an object's id is known,
    /// else by name ([`ObjectRef::is_same`]).
    fn among<'o>(&self, objects: &'o [ObjectRef]) -> Option<&'o ObjectRef> {
        let this = ObjectRef::new(&self.id, &self.name);
        objects.iter().find(|o| o.is_same(&this))
    }

    /// Whether it is one of `objects` ([`Listed::among`]).
    #[cfg(test)]
    fn is_among(&self, objects: &[ObjectRef]) -> bool {
        self.among(objects).is_some()
    }

    /// Checks what the daemon listed: an object without an id cannot be
    /// removed, and one whose labels do not match was not asked for.
    fn checked(
        kind: Kind,
        (id, name, labels, version): RawListed,
        release: &str,
    ) -> Result<Option<Listed>, BackendError> {
        let labels = labels.as_ref();
        let name = name.unwrap_or_default();
        let Some(id) = id.filter(|id| !id.is_empty()) else {
            return Err(BackendError::Invalid {
                what: format!("{} {name:?} of stack {release:?}", kind.noun()),
                message: "listed without an id".into(),
            });
        };
        if check_object_name(kind.noun(), &id).is_err() {
            return Err(BackendError::Invalid {
                what: format!("{} {name:?} of stack {release:?}", kind.noun()),
                message: format!("listed with an id that is not one: {id:?}"),
            });
        }
        // The daemon filtered by label already; a second look keeps a filter
        // quirk from ever removing another stack's object. Whatever passes
        // is the stack's, a config carrying the record labels too: by the
        // one definition (`labels::is_release_record`) a config with a stack
        // namespace is no record, and nothing else would ever remove it.
        if !labels.is_some_and(|l| labels::in_stack(l, release)) {
            return Ok(None);
        }
        let name = if name.is_empty() { id.clone() } else { name };
        Ok(Some(Listed { id, name, version }))
    }
}

/// The stack namespace an object's labels name, if any. An empty one names
/// no release (none can be named so) and is read as none.
fn namespace_of(labels: Option<&HashMap<String, String>>) -> Option<String> {
    labels
        .and_then(|l| l.get(STACK_NAMESPACE))
        .filter(|n| !n.is_empty())
        .cloned()
}

/// The stacks' objects as listed, split by namespace by the core's rule
/// ([`sweep_core::stacks::split_by_namespace`]). An id is checked here, as
/// it goes into a request's path later ([`check_object_name`]).
fn group_stack_objects(
    services: Vec<Service>,
    networks: Vec<Network>,
    secrets: Vec<Secret>,
    configs: Vec<ListedConfig>,
) -> Result<BTreeMap<String, StackObjects>, BackendError> {
    let services = services
        .into_iter()
        .map(|s| {
            let version = s.version.as_ref().and_then(|v| v.index);
            let (name, labels) = s.spec.map(|s| (s.name, s.labels)).unwrap_or_default();
            listed(Kind::Service, s.id, name, version, labels)
        })
        .collect::<Result<_, _>>()?;
    let networks = networks
        .into_iter()
        .map(|n| {
            // Only a swarm-scope network the engine says is not
            // attachable refuses a container of no service; a listing that
            // does not say so (no `Attachable`, another scope: a local
            // network takes any container of its node) is taken as one
            // that does not.
            let attachable = n.attachable != Some(false) || n.scope.as_deref() != Some("swarm");
            listed(Kind::Network, n.id, n.name, None, n.labels)
                .map(|l| l.with_attachable(attachable))
        })
        .collect::<Result<_, _>>()?;
    let secrets = secrets
        .into_iter()
        .map(|s| {
            let version = s.version.as_ref().and_then(|v| v.index);
            let (name, labels) = s.spec.map(|s| (s.name, s.labels)).unwrap_or_default();
            listed(Kind::Secret, s.id, name, version, labels)
        })
        .collect::<Result<_, _>>()?;
    let configs = configs
        .into_iter()
        .map(|c| listed(Kind::Config, c.id, c.name, c.version, c.labels))
        .collect::<Result<_, _>>()?;
    split_by_namespace(KindListings::new(services, networks, secrets, configs)).map_err(|e| {
        BackendError::Invalid {
            what: "the stack objects".into(),
            message: e.to_string(),
        }
    })
}

/// One listed object for the core, its id checked for use in a path.
fn listed(
    kind: Kind,
    id: Option<String>,
    name: Option<String>,
    version: Option<u64>,
    labels: Option<Labels>,
) -> Result<stacks::Listed, BackendError> {
    if let Some(id) = id.as_deref().filter(|id| !id.is_empty()) {
        if check_object_name(kind.noun(), id).is_err() {
            return Err(BackendError::Invalid {
                what: format!("{} {name:?}", kind.noun()),
                message: format!("listed with an id that is not one: {id:?}"),
            });
        }
    }
    Ok(stacks::Listed::new(id, name)
        .with_version(version)
        .with_labels(labels.unwrap_or_default()))
}

/// Whether the data of a config with `labels` is read: a release record
/// of a release in `payloads`. Any other config's data streams past unread.
fn data_wanted(payloads: &PayloadScope, labels: &Labels) -> bool {
    labels::is_release_record(labels) && labels.get(RELEASE).is_some_and(|r| payloads.contains(r))
}

/// The releases whose records are `configs` (see
/// [`SwarmBackend::releases_with_payloads`]), read in a listing about
/// `what`.
fn releases_of(what: &str, configs: Vec<RecordConfig>) -> Result<Vec<ReleaseRecord>, BackendError> {
    if configs.iter().any(|c| c.name.is_empty()) {
        return Err(BackendError::Invalid {
            what: what.into(),
            message: "a config is listed with neither name nor id".into(),
        });
    }
    let releases = labels::newest_records(configs.iter().map(|c| ConfigLabels {
        name: &c.name,
        labels: &c.labels,
    }))?;
    let mut revisions = record_revisions(configs)?;
    Ok(releases
        .into_iter()
        .map(|r| match revisions.remove(&r.name) {
            // Records not found stay "not read", never "none".
            Some((records, read)) if !records.is_empty() => {
                r.with_records(records).with_revisions(read)
            }
            _ => r,
        })
        .collect())
}

/// One config of the release records listing, as kept: what the records
/// rules read, and what its data says when it was read.
struct RecordConfig {
    id: Option<String>,
    version: Option<u64>,
    /// Its name, else its id (what messages and the revision call it).
    name: String,
    labels: Labels,
    payload: Option<Payload>,
}

impl RecordConfig {
    /// `config` as kept, its data (when read) reduced at once to what the
    /// resource rule reads: the data itself is never held past this.
    fn read(config: ListedConfig) -> Self {
        let labels = config.labels.unwrap_or_default();
        let payload = match config.data {
            Data::Skipped => None,
            Data::Read(bytes) => Some(read_payload(
                &bytes,
                labels.get(RELEASE).map_or("", String::as_str),
            )),
            Data::Unreadable(e) => Some(Payload::Unreadable(e.to_string())),
        };
        RecordConfig {
            name: config
                .name
                .filter(|n| !n.is_empty())
                .or_else(|| config.id.clone())
                .unwrap_or_default(),
            id: config.id,
            version: config.version,
            labels,
            payload,
        }
    }

    /// The release it is a record of: `None` when it is no record
    /// ([`labels::is_release_record`]) or names none.
    fn release(&self) -> Option<&str> {
        if !labels::is_release_record(&self.labels) {
            return None;
        }
        self.labels
            .get(RELEASE)
            .map(String::as_str)
            .filter(|r| !r.is_empty())
    }
}

/// `batch` as kept ([`RecordConfig::read`]). What the data of a record
/// in scope says is read off the async workers, on the blocking pool: it
/// is gzip and YAML to parse, up to a fraction of a millisecond a record,
/// and on a worker it would hold up every other swarm's reads (and every
/// daemon's answer still to be read) for as long.
async fn records_read(batch: Vec<ListedConfig>) -> Result<Vec<RecordConfig>, CallFailure> {
    if !batch.iter().any(|c| matches!(c.data, Data::Read(_))) {
        return Ok(batch.into_iter().map(RecordConfig::read).collect());
    }
    tokio::task::spawn_blocking(move || batch.into_iter().map(RecordConfig::read).collect())
        .await
        .map_err(|e| {
            CallFailure::Backend(BackendError::Other {
                message: format!("reading the release records' data: {e}"),
            })
        })
}

/// Every release record's config id and version index, and every record
/// as a revision (its name, revision and owner labels as written, and what
/// its data says when read), by release: the configs that are records
/// ([`labels::is_release_record`]) and name one. A record without an id or
/// version cannot be proven unchanged later, so it is an error, never
/// left out.
#[allow(clippy::type_complexity)]
fn record_revisions(
    configs: Vec<RecordConfig>,
) -> Result<BTreeMap<String, (Vec<ObjectVersion>, Vec<RevisionRead>)>, BackendError> {
    let mut by_release: BTreeMap<String, (Vec<ObjectVersion>, Vec<RevisionRead>)> = BTreeMap::new();
    for c in configs {
        let Some(release) = c.release().map(str::to_owned) else {
            continue;
        };
        let id = c.id.as_deref().filter(|id| !id.is_empty());
        let (Some(id), Some(version)) = (id, c.version) else {
            return Err(BackendError::Invalid {
                what: format!("release record {:?} of {release:?}", c.name),
                message: "listed without an id or a version".into(),
            });
        };
        let version = ObjectVersion::new(id, version);
        let revision = RevisionRead::new(
            c.name.clone(),
            c.labels.get(REVISION).cloned(),
            c.labels.get(OWNER).cloned(),
        );
        let revision = match c.labels.get(STATUS) {
            Some(status) => revision.with_status(status.clone()),
            None => revision,
        };
        let revision = match c.payload {
            Some(payload) => revision.with_payload(payload),
            None => revision,
        };
        let entry = by_release.entry(release).or_default();
        entry.0.push(version);
        entry.1.push(revision);
    }
    Ok(by_release)
}

/// Checks every object of a listing of `kind` ([`Listed::checked`]),
/// keeping those of `release`'s stack.
fn check_listed<T: Listable>(
    kind: Kind,
    release: &str,
    raw: Vec<T>,
) -> Result<Vec<Listed>, BackendError> {
    let mut listed = Vec::with_capacity(raw.len());
    for object in raw {
        if let Some(l) = Listed::checked(kind, object.into_raw(), release)? {
            listed.push(l);
        }
    }
    Ok(listed)
}

/// One swarm through its manager's daemon; implements [`SwarmBackend`].
#[derive(Debug)]
pub struct DockerSwarm {
    client: Client,
    self_stack: Option<String>,
    windows: Vec<DeletionWindow>,
}

impl DockerSwarm {
    /// A backend of the manager at `endpoint`; nothing is sent yet (see
    /// the crate's docs on the API version). Every daemon call is bounded
    /// by `timeout`.
    pub async fn connect(endpoint: &Endpoint, timeout: Duration) -> Result<Self, BackendError> {
        Ok(DockerSwarm::with_client(
            Client::connect(endpoint, timeout).await?,
        ))
    }

    /// The swarm whose manager `client` is connected to (a client shared
    /// with the manager's [`DockerNode`], so that one daemon has one client).
    pub(crate) fn with_client(client: Client) -> Self {
        DockerSwarm {
            client,
            self_stack: None,
            windows: Vec::new(),
        }
    }

    /// The controller runs as `stack` on this swarm: [`remove_stack_part`]
    /// refuses it.
    ///
    /// [`remove_stack_part`]: SwarmBackend::remove_stack_part
    pub fn with_self_stack(mut self, stack: Option<String>) -> Self {
        self.self_stack = stack;
        self
    }

    /// The registry file's deletion windows of this swarm, carried into
    /// its snapshot entry for the planner to judge.
    pub fn with_windows(mut self, windows: Vec<DeletionWindow>) -> Self {
        self.windows = windows;
        self
    }

    /// The manager's endpoint.
    pub fn endpoint(&self) -> &str {
        self.client.endpoint()
    }

    /// The API version requests to the manager go out with, e.g. `1.41`:
    /// the pinned one, or the one settled on after the manager refused it.
    pub fn api_version(&self) -> String {
        self.client.api_version()
    }

    /// Starts sending under API `version` (`"1.44"`) instead of the pinned
    /// one, as a client of another age would, so that a daemon's refusal
    /// and the way back from it can be shown on a real engine. Not for
    /// production: the pinned version is the one every supported engine
    /// answers at once. `None` for a version that is not one.
    #[doc(hidden)]
    pub fn sending_under(self, version: &str) -> Option<Self> {
        self.client.start_under(version)?;
        Some(self)
    }

    /// Closes the manager's connections kept for reuse.
    pub(crate) fn close_idle(&self) {
        self.client.close_idle();
    }

    /// The manager's node list with hostnames, down nodes included. Calls
    /// made while one is in flight (the count, the members and the node
    /// probes of one gather) share its answer rather than ask again.
    pub async fn nodes(&self) -> Result<Vec<Node>, BackendError> {
        self.client.node_list().await
    }

    /// The objects of `kind` in `release`'s stack, each checked
    /// ([`Listed::checked`]).
    async fn list(&self, kind: Kind, release: &str) -> Result<Vec<Listed>, BackendError> {
        let what = format!("{}s of stack {release:?}", kind.noun());
        let filters = label_filter(&[(STACK_NAMESPACE, release)]);
        let docker = self.client.docker();
        // Only the typed call differs between the kinds.
        match kind {
            Kind::Service => {
                let o = ListServicesOptionsBuilder::default()
                    .filters(&filters)
                    .build();
                self.checked(kind, release, &what, docker.list_services(Some(o)))
                    .await
            }
            Kind::Network => {
                let o = ListNetworksOptionsBuilder::default()
                    .filters(&filters)
                    .build();
                self.checked(kind, release, &what, docker.list_networks(Some(o)))
                    .await
            }
            Kind::Secret => {
                let o = ListSecretsOptionsBuilder::default()
                    .filters(&filters)
                    .build();
                self.checked(kind, release, &what, docker.list_secrets(Some(o)))
                    .await
            }
            Kind::Config => {
                // Read as a stream, as every configs listing is: it holds
                // each config's data, which is not needed here.
                let mut raw = Vec::new();
                self.client
                    .configs(&what, &filters, None, &mut |c| raw.push(c))
                    .await?;
                check_listed(kind, release, raw)
            }
        }
    }

    /// Runs one listing call and checks every object it lists
    /// ([`check_listed`]).
    async fn checked<T: Listable>(
        &self,
        kind: Kind,
        release: &str,
        what: &str,
        call: impl Future<Output = Result<Vec<T>, DockerError>>,
    ) -> Result<Vec<Listed>, BackendError> {
        check_listed(kind, release, self.client.call_plain(what, call).await?)
    }

    /// Removes one object: gone already is success, and the engine's
    /// answers that mean "in use" ([`in_use`]) are [`BackendError::InUse`].
    /// Any other refusal is one: guessing that a 500 means "in use" would
    /// have the sweep wait on an object that will never go.
    async fn remove(&self, kind: Kind, object: &Listed) -> Result<(), BackendError> {
        let what = format!("{} {:?}", kind.noun(), object.name);
        let docker = self.client.docker();
        let id = &*crate::url_path::segment(&object.id);
        let result = match kind {
            Kind::Service => self.client.call(&what, docker.delete_service(id)).await,
            Kind::Network => self.client.call(&what, docker.remove_network(id)).await,
            Kind::Secret => self.client.call(&what, docker.delete_secret(id)).await,
            Kind::Config => self.client.call(&what, docker.delete_config(id)).await,
        };
        match result {
            Ok(()) | Err(CallFailure::Status { code: 404, .. }) => Ok(()),
            Err(CallFailure::Status { code, message }) if in_use(code, &message) => {
                Err(BackendError::InUse {
                    object: what,
                    message,
                })
            }
            Err(f) => Err(f.into_backend(&what)),
        }
    }

    /// `Ok` once no task of `release`'s stack is live on a node that is up,
    /// [`BackendError::InUse`] while one is: until then the nodes keep the
    /// stack's networks. Waits for nothing itself; the sweep asks again.
    /// A down node's tasks keep the last state they reported and never
    /// stop, so they are not waited for.
    async fn tasks_stopped(
        &self,
        release: &str,
        services: &[ObjectRef],
    ) -> Result<(), BackendError> {
        let what = format!("tasks of stack {release:?}");
        let filters = label_filter(&[(STACK_NAMESPACE, release)]);
        let options = ListTasksOptionsBuilder::default().filters(&filters).build();
        let docker = self.client.docker();
        let mut tasks = self
            .client
            .call_plain(&what, docker.list_tasks(Some(options)))
            .await?;
        // Some services only (those a live release dropped): the stack's
        // other tasks keep running, and are not waited for.
        if !services.is_empty() {
            tasks.retain(|t| {
                t.service_id
                    .as_deref()
                    .is_some_and(|id| services.iter().any(|s| s.handle() == id))
            });
        }
        if tasks.is_empty() {
            return Ok(());
        }
        let nodes = self
            .client
            .call_plain("the node list", docker.list_nodes(None::<ListNodesOptions>))
            .await?;
        let down: std::collections::BTreeSet<String> = nodes
            .into_iter()
            .filter(|n| {
                n.status
                    .as_ref()
                    .and_then(|s| s.state)
                    .is_some_and(|state| state == NodeState::DOWN)
            })
            .filter_map(|n| n.id)
            .collect();
        let live = tasks
            .iter()
            .filter(|t| t.node_id.as_ref().is_none_or(|n| !down.contains(n)))
            .filter(|t| is_live(t.status.as_ref().and_then(|s| s.state)))
            .count();
        if live == 0 {
            Ok(())
        } else {
            Err(BackendError::InUse {
                object: what,
                message: format!("{live} still running"),
            })
        }
    }

    /// Removes those of `objects` that are still listed as `release`'s
    /// stack's objects of `kind`, carrying on past failures so that one
    /// stuck object does not keep the others; reports the first. One not
    /// listed is gone. Removing only what is both handed over and still
    /// labelled keeps a shared object the caller left out, and an object
    /// re-created since under the same name by another stack, in place.
    async fn remove_objects(
        &self,
        kind: Kind,
        release: &str,
        objects: &[ObjectRef],
    ) -> Result<(), BackendError> {
        if objects.is_empty() {
            return Ok(());
        }
        let mut first = None;
        let mut refused_networks = Vec::new();
        let listed = self.list(kind, release).await?;
        for (object, asked) in listed
            .into_iter()
            .filter_map(|l| l.among(objects).map(|asked| (l, asked)))
        {
            // Given at the version it was judged at, it goes only at that
            // version: one changed since (a redeploy that declares it
            // again, updated in place) is no longer what was judged.
            // A listing without a version proves no version: left too.
            if let Some(judged) = asked.version {
                if object.version != Some(judged) {
                    first.get_or_insert(BackendError::Other {
                        message: format!(
                            "{} {:?} changed since it was judged (version {}, judged at {judged}); left in place",
                            kind.noun(),
                            object.name,
                            object.version.map_or("unknown".to_owned(), |v| v.to_string()),
                        ),
                    });
                    continue;
                }
            }
            match self.remove(kind, &object).await {
                Ok(()) => {}
                Err(BackendError::Refused { .. }) if matches!(kind, Kind::Network) => {
                    refused_networks.push(object);
                }
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        if !refused_networks.is_empty() {
            // A manager lists its own copy of a swarm network, removed
            // already, until its container there lets go, and refuses to
            // remove that copy ("not found", 500). Listed again: gone is
            // gone; still listed, it is still going: in use, for the sweep
            // to try again within its settle timeout, never a success.
            let still: Vec<Listed> = self.list(kind, release).await?;
            if let Some(object) = refused_networks
                .iter()
                .find(|r| still.iter().any(|s| s.id == r.id))
            {
                first.get_or_insert(BackendError::InUse {
                    object: format!("network {:?}", object.name),
                    message: "still listed after the manager refused to remove it".into(),
                });
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// Whether a task in `state` may still hold the stack's networks; a task
/// without a state is taken as live.
fn is_live(state: Option<TaskState>) -> bool {
    !matches!(
        state,
        Some(
            TaskState::COMPLETE
                | TaskState::SHUTDOWN
                | TaskState::FAILED
                | TaskState::REJECTED
                | TaskState::REMOVE
                | TaskState::ORPHANED
        )
    )
}

/// Whether the engine's answer to a removal means "in use: try again once
/// what holds it is gone". That is its conflict status (409), and, from a
/// manager, swarmkit's failed precondition: a network still attached to a
/// task that is stopping is refused with gRPC code `FailedPrecondition`,
/// which the Engine API answers as 400 (in every version: it maps that code
/// to 400, not 409). Every other 400 (a secret a service still mounts is
/// `InvalidArgument`) is a refusal that waiting does not lift.
fn in_use(status: u16, message: &str) -> bool {
    status == 409 || (status == 400 && message.contains("code = FailedPrecondition"))
}

#[async_trait]
impl SwarmBackend for DockerSwarm {
    async fn releases(&self) -> Result<Vec<ReleaseRecord>, BackendError> {
        self.releases_with_payloads(&PayloadScope::none()).await
    }

    async fn releases_with_payloads(
        &self,
        payloads: &PayloadScope,
    ) -> Result<Vec<ReleaseRecord>, BackendError> {
        let what = "release records";
        let filters = label_filter(&[(TYPE, RECORD_TYPE)]);
        // The data of a record of a release in scope, and of no other
        // config: the rest streams past unread.
        let wants = |labels: &Labels| data_wanted(payloads, labels);
        let wants: Option<crate::configs::Wants<'_>> = (!payloads.is_empty()).then_some(&wants);
        let client = &self.client;
        let configs = client
            .listing(what, async {
                let mut configs = Vec::new();
                let mut reply = client.open_configs(what, &filters, wants).await?;
                while let Some(batch) = reply.next().await? {
                    configs.extend(records_read(batch).await?);
                }
                Ok(configs)
            })
            .await?;
        releases_of(what, configs)
    }

    async fn listings(&self, payloads: &PayloadScope) -> Listings {
        let client = &self.client;
        let docker = client.docker();
        let namespaced = HashMap::from([("label".to_owned(), vec![STACK_NAMESPACE.to_owned()])]);
        let networks = ListNetworksOptionsBuilder::default()
            .filters(&namespaced)
            .build();
        let secrets = ListSecretsOptionsBuilder::default()
            .filters(&namespaced)
            .build();
        let wants = |labels: &Labels| data_wanted(payloads, labels);
        let wants: Option<crate::configs::Wants<'_>> = (!payloads.is_empty()).then_some(&wants);
        // One listing of every config: the release records (what a label
        // filter on their type would give) and the stacks' configs (those
        // with a namespace), streamed, the data read of the records in
        // scope only.
        let what = "the configs";
        let configs = client.listing(what, async {
            let mut records = Vec::new();
            let mut stacks = Vec::new();
            let mut reply = client.open_configs(what, &HashMap::new(), wants).await?;
            while let Some(batch) = reply.next().await? {
                let mut of_records = Vec::new();
                for config in batch {
                    let labels = config.labels.as_ref();
                    let record =
                        labels.and_then(|l| l.get(TYPE)).map(String::as_str) == Some(RECORD_TYPE);
                    match (record, namespace_of(labels).is_some()) {
                        (true, true) => {
                            of_records.push(config.clone());
                            stacks.push(config);
                        }
                        (true, false) => of_records.push(config),
                        (false, true) => stacks.push(config),
                        (false, false) => {}
                    }
                }
                records.extend(records_read(of_records).await?);
            }
            Ok((records, stacks))
        });
        // Every service: the stacks' are among them, and the shared-object
        // rule needs the others too.
        let (configs, services, networks, secrets) = tokio::join!(
            configs,
            client.services("the services"),
            client.call_plain("the stack networks", docker.list_networks(Some(networks))),
            client.call_plain("the stack secrets", docker.list_secrets(Some(secrets))),
        );
        let (releases, stack_configs) = match configs {
            Ok((records, stacks)) => (releases_of("release records", records), Ok(stacks)),
            Err(e) => (Err(e.clone()), Err(e)),
        };
        let stacks = (|| {
            let services = services.as_ref().map_err(Clone::clone)?;
            let services = services.iter().map(ListedService::service).collect();
            group_stack_objects(services, networks?, secrets?, stack_configs?).map(Some)
        })();
        let uses = services.and_then(crate::usage::service_uses).map(Some);
        Listings {
            releases,
            stacks,
            services: uses,
        }
    }

    async fn stack_objects(&self) -> Result<Option<BTreeMap<String, StackObjects>>, BackendError> {
        let filters = HashMap::from([("label".to_owned(), vec![STACK_NAMESPACE.to_owned()])]);
        let docker = self.client.docker();
        let services = ListServicesOptionsBuilder::default()
            .filters(&filters)
            .build();
        let networks = ListNetworksOptionsBuilder::default()
            .filters(&filters)
            .build();
        let secrets = ListSecretsOptionsBuilder::default()
            .filters(&filters)
            .build();
        // At once: one round to the manager, not four. The configs are
        // read as a stream: their data, not needed here, streams past.
        let configs = async {
            let mut configs = Vec::new();
            self.client
                .configs("the stack configs", &filters, None, &mut |c| {
                    configs.push(c)
                })
                .await
                .map(|()| configs)
        };
        let (services, networks, secrets, configs) = tokio::try_join!(
            self.client
                .call_plain("the stack services", docker.list_services(Some(services))),
            self.client
                .call_plain("the stack networks", docker.list_networks(Some(networks))),
            self.client
                .call_plain("the stack secrets", docker.list_secrets(Some(secrets))),
            configs,
        )?;
        group_stack_objects(services, networks, secrets, configs).map(Some)
    }

    async fn service_uses(&self) -> Result<Option<Vec<ServiceUse>>, BackendError> {
        let services = self.client.services("the services").await?;
        crate::usage::service_uses(services).map(Some)
    }

    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        self.client.containers().await.map(Some)
    }

    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        self.client.volumes_by_stack().await.map(Some)
    }

    async fn own_node_id(&self) -> Result<Option<String>, BackendError> {
        self.client.own_node_id().await.map(Some)
    }

    async fn remove_stack_part(
        &self,
        release: &str,
        part: StackPart,
        objects: &[ObjectRef],
    ) -> Result<(), BackendError> {
        check_release(release)?;
        if self.self_stack.as_deref() == Some(release) {
            return Err(BackendError::OwnStack {
                release: release.to_owned(),
            });
        }
        match Kind::of(part) {
            Some(kind) => self.remove_objects(kind, release, objects).await,
            None => self.tasks_stopped(release, objects).await,
        }
    }

    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        self.client.stack_volumes(release).await
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        self.client.remove_volume(name).await
    }

    async fn remove_release_records(&self, release: &str) -> Result<(), BackendError> {
        check_release(release)?;
        let what = format!("release records of {release:?}");
        let filters = label_filter(&[(TYPE, RECORD_TYPE), (RELEASE, release)]);
        let mut configs = Vec::new();
        self.client
            .configs(&what, &filters, None, &mut |c| configs.push(c))
            .await?;
        let empty = HashMap::new();
        // Which configs are records of this release, and in what order they
        // go, is labels.rs's to say (one definition: a stack's config
        // carrying the record labels is the stack's, not a record).
        let ordered = labels::removal_order(
            release,
            configs.iter().map(|c| {
                let name = c
                    .name
                    .as_deref()
                    .filter(|n| !n.is_empty())
                    .or(c.id.as_deref())
                    .unwrap_or_default();
                let labels = c.labels.as_ref().unwrap_or(&empty);
                (ConfigLabels { name, labels }, c)
            }),
        )?;
        // Every id is checked before the first removal: one that cannot be
        // used would otherwise stop the removal halfway, its record (maybe
        // the newest) left behind the ones already removed.
        let mut objects = Vec::with_capacity(ordered.len());
        for c in ordered {
            let name = c.name.clone().unwrap_or_default();
            let Some(id) =
                c.id.clone()
                    .filter(|id| check_object_name("config", id).is_ok())
            else {
                return Err(BackendError::Invalid {
                    what: format!("config {name:?}"),
                    message: "listed without a usable id".into(),
                });
            };
            let name = if name.is_empty() { id.clone() } else { name };
            objects.push(Listed {
                id,
                name,
                version: c.version,
            });
        }
        // Oldest revision first, the newest last (see `removal_order`).
        for object in &objects {
            // Stop at the first failure: going on would remove newer
            // revisions while an older one stays, and that older stamp would
            // judge the release next time.
            self.remove(Kind::Config, object).await?;
        }
        Ok(())
    }

    async fn node_count(&self) -> Result<usize, BackendError> {
        Ok(self.nodes().await?.len())
    }

    async fn node_ids(&self) -> Result<Vec<String>, BackendError> {
        Ok(self.nodes().await?.into_iter().map(|n| n.id).collect())
    }

    async fn members(&self) -> Result<Vec<Node>, BackendError> {
        self.nodes().await
    }

    async fn cluster_id(&self) -> Result<String, BackendError> {
        let what = "the swarm";
        let swarm = self
            .client
            .call_plain(what, self.client.docker().inspect_swarm())
            .await?;
        swarm
            .id
            .filter(|id| !id.is_empty())
            .ok_or_else(|| BackendError::Invalid {
                what: what.into(),
                message: "inspected without a cluster id".into(),
            })
    }

    fn self_stack(&self) -> Option<&str> {
        self.self_stack.as_deref()
    }

    fn windows(&self) -> &[DeletionWindow] {
        &self.windows
    }

    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        Ok(crate::events::container_events(
            self.client.docker(),
            self.client.endpoint(),
        ))
    }
}

/// One node's own daemon; implements [`NodeBackend`].
#[derive(Debug)]
pub struct DockerNode {
    client: Client,
}

impl DockerNode {
    /// A backend of the daemon at `endpoint`; nothing is sent yet (see the
    /// crate's docs on the API version). Every call is bounded by
    /// `timeout`.
    pub async fn connect(endpoint: &Endpoint, timeout: Duration) -> Result<Self, BackendError> {
        Ok(DockerNode::with_client(
            Client::connect(endpoint, timeout).await?,
        ))
    }

    /// The daemon `client` is connected to (shared with the
    /// [`DockerSwarm`] when this daemon is the manager).
    pub(crate) fn with_client(client: Client) -> Self {
        DockerNode { client }
    }

    /// The daemon's endpoint.
    pub fn endpoint(&self) -> &str {
        self.client.endpoint()
    }

    /// The API version requests to the daemon go out with, e.g. `1.41`:
    /// the pinned one, or the one settled on after the daemon refused it.
    pub fn api_version(&self) -> String {
        self.client.api_version()
    }

    /// Which swarm node this daemon is, from its own `info`: its swarm node
    /// id and name; `None` when it is in no swarm. Says nothing about
    /// *which* swarm: callers check the id against a manager's node list.
    pub async fn swarm_node(&self) -> Result<Option<Node>, BackendError> {
        let (id, name) = self.client.identity().await?;
        Ok(id.map(|id| Node::new(id, name)))
    }
}

#[async_trait]
impl NodeBackend for DockerNode {
    async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        self.client.stack_volumes(release).await
    }

    async fn volumes_by_stack(&self) -> Result<Option<VolumesByStack>, BackendError> {
        self.client.volumes_by_stack().await.map(Some)
    }

    async fn containers(&self) -> Result<Option<Vec<ContainerUse>>, BackendError> {
        self.client.containers().await.map(Some)
    }

    async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        self.client.remove_volume(name).await
    }

    async fn container_events(&self) -> Result<ContainerEvents, BackendError> {
        Ok(crate::events::container_events(
            self.client.docker(),
            self.client.endpoint(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configs::Wants;
    use sweep_core::record::labels::CD_CREATED;
    use sweep_swarms::{ServiceEntry, KEEP_LABEL};

    fn labels(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn listed_objects_are_checked_again() {
        let mine = labels(&[(STACK_NAMESPACE, "app")]);
        let theirs = labels(&[(STACK_NAMESPACE, "app2")]);
        let raw = |id: Option<&str>, name: Option<&str>, labels: Option<&Labels>| {
            (
                id.map(str::to_owned),
                name.map(str::to_owned),
                labels.cloned(),
                Some(4),
            )
        };
        let ok = Listed::checked(
            Kind::Service,
            raw(Some("abc123"), Some("app_web"), Some(&mine)),
            "app",
        )
        .unwrap();
        assert_eq!(
            ok.map(|l| (l.id, l.name, l.version)),
            Some(("abc123".into(), "app_web".into(), Some(4)))
        );
        assert!(
            Listed::checked(Kind::Service, raw(Some("x"), None, Some(&theirs)), "app")
                .unwrap()
                .is_none()
        );
        assert!(
            Listed::checked(Kind::Service, raw(Some("x"), None, None), "app")
                .unwrap()
                .is_none()
        );
        assert!(Listed::checked(Kind::Service, raw(None, None, Some(&mine)), "app").is_err());
        assert!(
            Listed::checked(Kind::Service, raw(Some("../x"), None, Some(&mine)), "app").is_err()
        );
    }

    fn from_json<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    /// A configs listing as the streamed reader reads it, with the data of
    /// the configs `wants` accepts.
    fn configs(value: serde_json::Value, wants: Option<Wants<'_>>) -> Vec<ListedConfig> {
        let mut listed = Vec::new();
        let mut scanner = crate::configs::Scanner::new(wants);
        scanner
            .feed(value.to_string().as_bytes(), &mut |c| listed.push(c))
            .unwrap();
        scanner.finish().unwrap();
        listed
    }

    #[test]
    fn stack_objects_are_grouped_by_namespace_with_versions_and_keep_labels() {
        let services: Vec<Service> = from_json(serde_json::json!([
            {"ID": "s1", "Version": {"Index": 7}, "Spec": {"Name": "app_web",
                "Labels": {STACK_NAMESPACE: "app", KEEP_LABEL: "true"}}},
            {"ID": "s2", "Version": {"Index": 9}, "Spec": {"Name": "app_db",
                "Labels": {STACK_NAMESPACE: "app"}}},
            {"ID": "s3", "Version": {"Index": 3}, "Spec": {"Name": "other_web",
                "Labels": {STACK_NAMESPACE: "other", KEEP_LABEL: ""}}},
            {"ID": "s4", "Version": {"Index": 3}, "Spec": {"Name": "loose",
                "Labels": {STACK_NAMESPACE: ""}}},
        ]));
        let networks: Vec<Network> = from_json(serde_json::json!([
            {"Id": "n1", "Name": "app_front", "Scope": "swarm", "Attachable": false, "Labels": {STACK_NAMESPACE: "app"}},
            {"Id": "n1", "Name": "app_front", "Scope": "swarm", "Attachable": false, "Labels": {STACK_NAMESPACE: "app"}},
            {"Id": "n2", "Name": "other_debug", "Scope": "swarm", "Attachable": true, "Labels": {STACK_NAMESPACE: "other"}},
            // Unsaid, or not the swarm's: taken as attachable.
            {"Id": "n3", "Name": "other_bare", "Labels": {STACK_NAMESPACE: "other"}},
            {"Id": "n4", "Name": "other_local", "Scope": "local", "Attachable": false, "Labels": {STACK_NAMESPACE: "other"}},
        ]));
        let secrets: Vec<Secret> = from_json(serde_json::json!([
            {"ID": "x1", "Spec": {"Name": "other_tok", "Labels": {STACK_NAMESPACE: "other"}}},
            {"ID": "x2", "Version": {"Index": 5}, "Spec": {"Name": "other_key",
                "Labels": {STACK_NAMESPACE: "other", CD_CREATED: "true"}}},
        ]));
        let configs = configs(
            serde_json::json!([
                {"ID": "c1", "Version": {"Index": 4}, "Spec": {"Name": "app_conf",
                    "Labels": {STACK_NAMESPACE: "app"}, "Data": "Y29uZg=="}},
                {"ID": "c3", "Version": {"Index": 6}, "Spec": {"Name": "app_env",
                    "Labels": {STACK_NAMESPACE: "app", CD_CREATED: "2024-05-01"}}},
                // Unlabelled (a filter quirk): nobody's.
                {"ID": "c2", "Spec": {"Name": "swarmcli.release.app.v1", "Labels": {TYPE: RECORD_TYPE, RELEASE: "app"}}},
            ]),
            None,
        );
        let stacks = group_stack_objects(services, networks, secrets, configs).unwrap();
        assert_eq!(stacks.keys().collect::<Vec<_>>(), ["app", "other"]);
        let app = &stacks["app"];
        assert_eq!(
            app.services,
            vec![
                ServiceEntry::new("s1", "app_web", 7).with_keep("true"),
                ServiceEntry::new("s2", "app_db", 9),
            ]
        );
        assert_eq!(app.networks, [ObjectRef::new("n1", "app_front")]);
        assert_eq!(
            stacks["other"].networks,
            [
                ObjectRef::new("n3", "other_bare").with_attachable(true),
                ObjectRef::new("n2", "other_debug").with_attachable(true),
                ObjectRef::new("n4", "other_local").with_attachable(true),
            ]
        );
        assert!(app.secrets.is_empty());
        // Configs and secrets with their versions and the controller's
        // created marker, as read.
        assert_eq!(
            app.configs,
            [
                ObjectRef::new("c1", "app_conf").with_version(4),
                ObjectRef::new("c3", "app_env")
                    .with_version(6)
                    .with_cd_created("2024-05-01"),
            ]
        );
        assert_eq!(app.volumes, None);
        let other = &stacks["other"];
        assert_eq!(
            other.services,
            vec![ServiceEntry::new("s3", "other_web", 3).with_keep("")]
        );
        assert_eq!(
            other.secrets,
            [
                ObjectRef::new("x2", "other_key")
                    .with_version(5)
                    .with_cd_created("true"),
                ObjectRef::new("x1", "other_tok"),
            ]
        );
    }

    #[test]
    fn stack_objects_without_id_name_or_version_are_invalid() {
        let ns = serde_json::json!({STACK_NAMESPACE: "app"});
        let bad_services = [
            serde_json::json!([{"Version": {"Index": 1}, "Spec": {"Name": "a", "Labels": ns}}]),
            serde_json::json!([{"ID": "", "Version": {"Index": 1}, "Spec": {"Name": "a", "Labels": ns}}]),
            serde_json::json!([{"ID": "s1", "Version": {"Index": 1}, "Spec": {"Labels": ns}}]),
            serde_json::json!([{"ID": "s1", "Version": {"Index": 1}}]),
            serde_json::json!([{"ID": "s1", "Spec": {"Name": "a", "Labels": ns}}]),
            serde_json::json!([{"ID": "../x", "Version": {"Index": 1}, "Spec": {"Name": "a", "Labels": ns}}]),
        ];
        for services in bad_services {
            let e = group_stack_objects(from_json(services.clone()), vec![], vec![], vec![]);
            assert!(
                matches!(e, Err(BackendError::Invalid { .. })),
                "{services}: {e:?}"
            );
        }
        let nameless: Vec<Network> = from_json(serde_json::json!([{"Id": "n1", "Labels": ns}]));
        assert!(group_stack_objects(vec![], nameless, vec![], vec![]).is_err());
        let idless: Vec<Secret> =
            from_json(serde_json::json!([{"Spec": {"Name": "t", "Labels": ns}}]));
        assert!(group_stack_objects(vec![], vec![], idless, vec![]).is_err());
        let empty = configs(serde_json::json!([{}]), None);
        assert!(group_stack_objects(vec![], vec![], vec![], empty).is_err());
    }

    fn read(value: serde_json::Value, wants: Option<Wants<'_>>) -> Vec<RecordConfig> {
        configs(value, wants)
            .into_iter()
            .map(RecordConfig::read)
            .collect()
    }

    #[test]
    fn every_record_is_a_revision_with_its_version_and_labels() {
        let listing = serde_json::json!([
            {"ID": "c1", "Version": {"Index": 11}, "Spec": {"Name": "swarmcli.release.app.v1",
                "Labels": {TYPE: RECORD_TYPE, RELEASE: "app", REVISION: "1", OWNER: "o1"},
                "Data": "bm90IGd6aXA="}},
            {"ID": "c2", "Version": {"Index": 12}, "Spec": {"Name": "swarmcli.release.app.v2",
                "Labels": {TYPE: RECORD_TYPE, RELEASE: "app", REVISION: "2"}}},
            // The stack's, not a record.
            {"ID": "c3", "Version": {"Index": 13}, "Spec": {"Name": "app_conf",
                "Labels": {TYPE: RECORD_TYPE, RELEASE: "app", STACK_NAMESPACE: "app"}}},
            {"ID": "c4", "Version": {"Index": 14}, "Spec": {"Name": "plain"}},
            {"ID": "c5", "Version": {"Index": 15}, "Spec": {"Name": "swarmcli.release.db.v3",
                "Labels": {TYPE: RECORD_TYPE, RELEASE: "db", REVISION: "03"}}},
        ]);
        let by_release = record_revisions(read(listing.clone(), None)).unwrap();
        assert_eq!(by_release.keys().collect::<Vec<_>>(), ["app", "db"]);
        let (versions, revisions) = &by_release["app"];
        assert_eq!(
            versions,
            &[ObjectVersion::new("c1", 11), ObjectVersion::new("c2", 12)]
        );
        // Labels as written, data unread.
        assert_eq!(
            revisions,
            &[
                RevisionRead::new(
                    "swarmcli.release.app.v1",
                    Some("1".into()),
                    Some("o1".into())
                ),
                RevisionRead::new("swarmcli.release.app.v2", Some("2".into()), None),
            ]
        );
        assert_eq!(
            by_release["db"].1,
            [RevisionRead::new(
                "swarmcli.release.db.v3",
                Some("03".into()),
                None
            )]
        );

        // In scope, the data is read; a record listed without data reads
        // as none, which is no record data either.
        let wants = |l: &Labels| l.get(RELEASE).map(String::as_str) == Some("app");
        let by_release = record_revisions(read(listing, Some(&wants))).unwrap();
        let payloads: Vec<Option<Payload>> = by_release["app"]
            .1
            .iter()
            .map(|r| r.payload.clone())
            .collect();
        assert_eq!(
            payloads,
            [
                Some(Payload::Unreadable("the record data is not gzip".into())),
                Some(Payload::Unreadable("the record data is not gzip".into())),
            ]
        );
        assert_eq!(by_release["db"].1[0].payload, None);

        let unversioned = serde_json::json!([
            {"ID": "c1", "Spec": {"Name": "swarmcli.release.app.v1",
                "Labels": {TYPE: RECORD_TYPE, RELEASE: "app", REVISION: "1"}}},
        ]);
        assert!(matches!(
            record_revisions(read(unversioned, None)),
            Err(BackendError::Invalid { .. })
        ));
    }

    #[test]
    fn only_the_objects_handed_over_are_removed_by_id_where_known() {
        let listed = Listed {
            id: "n1".into(),
            name: "app_front".into(),
            version: None,
        };
        assert!(listed.is_among(&[ObjectRef::new("n1", "app_front")]));
        // Known by its name alone (an older snapshot): the name decides.
        assert!(listed.is_among(&[ObjectRef::named("app_front")]));
        // The same name re-created since is another object.
        assert!(!listed.is_among(&[ObjectRef::new("n0", "app_front")]));
        // The other network of the stack, left out as shared.
        assert!(!listed.is_among(&[ObjectRef::new("n2", "app_back")]));
        assert!(!listed.is_among(&[]));
    }

    #[test]
    fn only_stopped_tasks_have_let_go() {
        assert!(is_live(Some(TaskState::RUNNING)));
        assert!(is_live(Some(TaskState::STARTING)));
        assert!(is_live(Some(TaskState::PENDING)));
        assert!(is_live(None));
        assert!(!is_live(Some(TaskState::SHUTDOWN)));
        assert!(!is_live(Some(TaskState::COMPLETE)));
        assert!(!is_live(Some(TaskState::FAILED)));
    }

    #[test]
    fn in_use_is_a_conflict_or_a_swarm_precondition_and_nothing_else() {
        assert!(in_use(409, "remove app_data: volume is in use - [0123]"));
        assert!(in_use(
            400,
            "rpc error: code = FailedPrecondition desc = network x is in use by task y"
        ));
        assert!(!in_use(
            400,
            "rpc error: code = InvalidArgument desc = secret 'a' is in use by the following service: b"
        ));
        assert!(!in_use(500, "network x not found"));
        assert!(!in_use(503, "This node is not a swarm manager."));
    }

    #[test]
    fn a_stack_config_with_the_record_labels_goes_with_the_stack() {
        // Not a record (it carries a namespace), so the stack's: left out,
        // it would outlive both the stack and the records, and nothing
        // would find it again.
        let record_in_stack = labels(&[
            (STACK_NAMESPACE, "app"),
            (TYPE, RECORD_TYPE),
            (RELEASE, "app"),
        ]);
        let listed = Listed::checked(
            Kind::Config,
            (
                Some("c1".into()),
                Some("swarmcli.release.app.v1".into()),
                Some(record_in_stack.clone()),
                None,
            ),
            "app",
        )
        .unwrap();
        assert_eq!(
            listed.map(|l| l.name),
            Some("swarmcli.release.app.v1".into())
        );
        // Another stack's, whatever release it names: not this stack's.
        assert!(Listed::checked(
            Kind::Config,
            (
                Some("c1".into()),
                Some("swarmcli.release.app.v1".into()),
                Some(record_in_stack.clone()),
                None,
            ),
            "app2"
        )
        .unwrap()
        .is_none());
    }
}
