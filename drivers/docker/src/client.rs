//! One client per daemon: its API version, per-call timeouts, the
//! translation of bollard's errors into the seam's, and the daemon's
//! connections kept for reuse.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bollard::errors::Error as DockerError;
use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListNodesOptions, ListVolumesOptions, ListVolumesOptionsBuilder,
    RemoveVolumeOptionsBuilder,
};
use bollard::Docker;
use futures::future::{BoxFuture, FutureExt, WeakShared};
use http_body_util::BodyExt as _;
use sweep_core::usage::ContainerUse;
use sweep_swarms::{BackendError, Node, VolumesByStack};

use crate::api_version::ApiVersion;
use crate::configs::{ListedConfig, Scanner, Wants};
use crate::endpoint::{Endpoint, Transport};
use crate::labels::STACK_NAMESPACE;
use crate::transport::{self, reply_limit_of, returning, Pool, Streaming, REPLY_LIMIT};
use crate::usage::ListedService;

/// How one daemon call failed, before the caller decides what a status
/// means (404 is success for a removal, 409 is "in use" for a volume): not
/// yet the seam's [`BackendError`], let alone the core's classified
/// `sweep::Failure`.
#[derive(Debug)]
pub(crate) enum CallFailure {
    Status { code: u16, message: String },
    Backend(BackendError),
}

impl CallFailure {
    /// The error to report for a failed call about `what`.
    pub(crate) fn into_backend(self, what: &str) -> BackendError {
        match self {
            CallFailure::Status { code, message } => BackendError::Refused {
                object: what.to_owned(),
                status: code,
                message,
            },
            CallFailure::Backend(e) => e,
        }
    }
}

/// `e` with its causes, since hyper's own message ("client error
/// (Connect)") does not say what went wrong.
fn chain(e: &dyn StdError) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A client for one daemon. Clones share the
/// daemon's kept connections and its node list in flight.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    docker: Docker,
    endpoint: String,
    timeout: Duration,
    pool: Arc<Pool>,
    streaming: Streaming,
    version: Arc<ApiVersion>,
    node_list: InFlight<NodeList>,
    identity: InFlight<Identity>,
}

/// The manager's node list as read once.
type NodeList = Result<Vec<Node>, BackendError>;

/// A daemon's node identity as its info gives it: its swarm node id (if
/// it is in a swarm) and its name.
pub(crate) type Identity = Result<(Option<String>, String), BackendError>;

/// One request in flight, if any, for callers to join: several reads of
/// one swarm need the same answer at the same moment (the node list: the
/// count, the member list and the node probes; a daemon's info: the
/// manager's own node id and its probe as a node), and asking again only
/// loads the daemon. Held weakly: a request no caller waits for any more
/// is dropped (and its connection closed), never joined late. A finished
/// request is never reused: every call after it asks again.
struct InFlight<T>(Arc<Mutex<Option<WeakShared<BoxFuture<'static, T>>>>>);

impl<T> Default for InFlight<T> {
    fn default() -> Self {
        InFlight(Arc::new(Mutex::new(None)))
    }
}

impl<T> Clone for InFlight<T> {
    fn clone(&self) -> Self {
        InFlight(self.0.clone())
    }
}

impl<T> fmt::Debug for InFlight<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InFlight")
    }
}

impl<T: Clone + Send + Sync + 'static> InFlight<T> {
    /// The answer of the request in flight, or of `start`'s if none is.
    async fn join_or(&self, start: impl FnOnce() -> BoxFuture<'static, T>) -> T {
        let flight = {
            let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            let running = slot
                .as_ref()
                .and_then(WeakShared::upgrade)
                .filter(|f| f.peek().is_none());
            match running {
                Some(flight) => flight,
                None => {
                    let flight = start().shared();
                    *slot = flight.downgrade();
                    flight
                }
            }
        };
        flight.await
    }
}

impl fmt::Debug for Streaming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Streaming")
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Pool")
    }
}

impl Client {
    /// A client of the daemon at `endpoint`. Nothing is sent: requests go
    /// out under the pinned API version, and the daemon is asked for its
    /// own only if it refuses that ([`crate::api_version`]), so that the
    /// first round of requests is the first round trip.
    pub(crate) async fn connect(
        endpoint: &Endpoint,
        timeout: Duration,
    ) -> Result<Self, BackendError> {
        Client::connect_limited(endpoint, timeout, REPLY_LIMIT).await
    }

    /// [`Client::connect`] with every reply bounded by `limit` bytes
    /// (see [`crate::transport`]).
    pub(crate) async fn connect_limited(
        endpoint: &Endpoint,
        timeout: Duration,
        limit: u64,
    ) -> Result<Self, BackendError> {
        let url = endpoint.url();
        let unreachable = |message: String| BackendError::Unreachable {
            endpoint: url.to_owned(),
            message,
        };
        if let Transport::Unix = endpoint.transport() {
            // Said before any request, as bollard's own unix client did.
            let path = url.strip_prefix("unix://").unwrap_or(url);
            if !std::path::Path::new(path).exists() {
                return Err(unreachable(chain(&DockerError::SocketNotFoundError(
                    path.to_owned(),
                ))));
            }
        }
        // bollard's own timeout is whole seconds; ours wraps every call, so
        // bollard's only needs to be a backstop.
        let backstop = timeout.as_secs().saturating_add(1);
        // Nothing is sent yet: the first request goes out under the pinned
        // API version, and the daemon is asked for its range only if it
        // refuses that (see `crate::api_version`).
        let (docker, pool, streaming, version) =
            transport::connect(endpoint, backstop, limit).map_err(unreachable)?;
        Ok(Client {
            docker,
            endpoint: url.to_owned(),
            timeout,
            pool,
            streaming,
            version,
            node_list: InFlight::default(),
            identity: InFlight::default(),
        })
    }

    /// Closes the connections to this daemon kept for reuse (and those
    /// still reading a reply, once it is read): the caller is done with the
    /// daemon for now, and bounds the descriptors it holds.
    pub(crate) fn close_idle(&self) {
        self.pool.close_idle();
    }

    /// How many idle connections to this daemon are kept now.
    #[cfg(test)]
    pub(crate) fn idle_connections(&self) -> usize {
        self.pool.idle()
    }

    /// The daemon's node list (it must be a manager), with hostnames, down
    /// nodes included. Joins the request already in flight if there is one:
    /// its answer is as fresh as a new one would be. A finished request is
    /// never reused: every call after it asks again.
    pub(crate) async fn node_list(&self) -> NodeList {
        self.node_list
            .join_or(|| self.read_node_list().boxed())
            .await
    }

    /// This daemon's swarm node id (none when it is in no swarm) and its
    /// name, from its info; joins the read in flight if there is one (see
    /// [`InFlight`]).
    pub(crate) async fn identity(&self) -> Identity {
        let client = self.detached();
        self.identity
            .join_or(|| {
                async move {
                    let info = client
                        .call_plain("the daemon's info", client.docker.info())
                        .await?;
                    let id = info
                        .swarm
                        .and_then(|s| s.node_id)
                        .filter(|id| !id.is_empty());
                    Ok((id, info.name.unwrap_or_default()))
                }
                .boxed()
            })
            .await
    }

    /// A clone sharing the daemon's connections but no request in flight,
    /// for a request in flight to own: one holding the client would hold
    /// itself.
    fn detached(&self) -> Client {
        Client {
            docker: self.docker.clone(),
            endpoint: self.endpoint.clone(),
            timeout: self.timeout,
            pool: self.pool.clone(),
            streaming: self.streaming.clone(),
            version: self.version.clone(),
            node_list: InFlight::default(),
            identity: InFlight::default(),
        }
    }

    /// One read of the node list. Owns what it uses (not the client), so
    /// that the request in flight holds nothing that holds it.
    fn read_node_list(&self) -> impl Future<Output = NodeList> + Send + 'static {
        let client = self.detached();
        async move {
            let what = "the node list";
            let listed = client
                .call_plain(what, client.docker.list_nodes(None::<ListNodesOptions>))
                .await?;
            listed
                .into_iter()
                .map(|n| {
                    let hostname = n.description.and_then(|d| d.hostname).unwrap_or_default();
                    match n.id.filter(|id| !id.is_empty()) {
                        Some(id) => Ok(Node::new(id, hostname)),
                        None => Err(BackendError::Invalid {
                            what: what.into(),
                            message: format!("node {hostname:?} is listed without an id"),
                        }),
                    }
                })
                .collect()
        }
    }

    pub(crate) fn docker(&self) -> &Docker {
        &self.docker
    }

    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Sends under `version` from now on, until the daemon refuses it;
    /// `None` (and nothing changed) for a version that is not one.
    pub(crate) fn start_under(&self, version: &str) -> Option<()> {
        self.version
            .set(crate::api_version::Version::parse(version)?);
        Some(())
    }

    /// The API version requests go out with now: the pinned one until the
    /// daemon refused it.
    pub(crate) fn api_version(&self) -> String {
        self.version.current().to_string()
    }

    /// Runs one daemon call about `what` under the timeout.
    pub(crate) async fn call<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, DockerError>>,
    ) -> Result<T, CallFailure> {
        match returning(tokio::time::timeout(self.timeout, fut)).await {
            Err(_) => Err(CallFailure::Backend(BackendError::Timeout {
                endpoint: self.endpoint.clone(),
                after: self.timeout,
            })),
            Ok(Err(e)) => Err(translate(&self.endpoint, self.timeout, what, e)),
            Ok(Ok(value)) => Ok(value),
        }
    }

    /// Like [`Client::call`], for calls where no status is expected.
    pub(crate) async fn call_plain<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, DockerError>>,
    ) -> Result<T, BackendError> {
        self.call(what, fut).await.map_err(|f| f.into_backend(what))
    }

    /// The configs matching `filters`, read as a stream
    /// ([`crate::configs`]): `each` is called with every config as soon as
    /// it has been read, its data decoded when `wants` accepts its labels
    /// and skipped unread otherwise. The listing is bounded config by
    /// config, not as a whole, and by the call's timeout; a listing that
    /// cannot be read to its end is an error about `what`, never a shorter
    /// answer.
    pub(crate) async fn configs(
        &self,
        what: &str,
        filters: &HashMap<String, Vec<String>>,
        wants: Option<Wants<'_>>,
        each: &mut (dyn FnMut(ListedConfig) + Send),
    ) -> Result<(), BackendError> {
        self.listing(what, async {
            let mut reply = self.open_configs(what, filters, wants).await?;
            while let Some(batch) = reply.next().await? {
                batch.into_iter().for_each(&mut *each);
            }
            Ok(())
        })
        .await
    }

    /// Runs `read`, the whole read of one listing about `what`, under the
    /// call's timeout, as [`Client::call`] runs one call.
    pub(crate) async fn listing<T>(
        &self,
        what: &str,
        read: impl Future<Output = Result<T, CallFailure>>,
    ) -> Result<T, BackendError> {
        match returning(tokio::time::timeout(self.timeout, read)).await {
            Err(_) => Err(BackendError::Timeout {
                endpoint: self.endpoint.clone(),
                after: self.timeout,
            }),
            Ok(result) => result.map_err(|f| f.into_backend(what)),
        }
    }

    /// Every service of the swarm, each with its previous spec (see
    /// [`ListedService`]), bounded as every reply bollard reads is, and by
    /// the call's timeout.
    pub(crate) async fn services(&self, what: &str) -> Result<Vec<ListedService>, BackendError> {
        self.listing(what, async {
            let path = format!("/v{}/services", self.api_version());
            let failed = |e| translate(&self.endpoint, self.timeout, what, e);
            let response = self.streaming.get_bounded(&path).await.map_err(failed)?;
            let bytes = success(response)
                .await?
                .collect()
                .await
                .map_err(|e| failed(DockerError::from(e)))?
                .to_bytes();
            serde_json::from_slice(&bytes).map_err(|e| {
                CallFailure::Backend(BackendError::Invalid {
                    what: what.to_owned(),
                    message: e.to_string(),
                })
            })
        })
        .await
    }

    /// Asks for the configs matching `filters`; the reply is read a piece
    /// at a time ([`ConfigsReply::next`]). Run within
    /// [`Client::listing`], which bounds it in time.
    pub(crate) async fn open_configs<'a>(
        &'a self,
        what: &'a str,
        filters: &HashMap<String, Vec<String>>,
        wants: Option<Wants<'a>>,
    ) -> Result<ConfigsReply<'a>, CallFailure> {
        let query = serde_json::to_string(filters).map_err(|e| {
            CallFailure::Backend(BackendError::Other {
                message: format!("{what}: the filters cannot be written: {e}"),
            })
        })?;
        let path = format!(
            "/v{}/configs?filters={}",
            self.api_version(),
            percent_encode(&query)
        );
        let response = self
            .streaming
            .get(&path)
            .await
            .map_err(|e| translate(&self.endpoint, self.timeout, what, e))?;
        let body = success(response).await?;
        Ok(ConfigsReply {
            client: self,
            what,
            body,
            scanner: Scanner::new(wants),
            ended: false,
        })
    }
    /// Names of the volumes on this daemon that carry `release`'s stack
    /// namespace label.
    pub(crate) async fn stack_volumes(&self, release: &str) -> Result<Vec<String>, BackendError> {
        check_release(release)?;
        let what = format!("volumes of stack {release:?}");
        let filters = label_filter(&[(STACK_NAMESPACE, release)]);
        let options = ListVolumesOptionsBuilder::default()
            .filters(&filters)
            .build();
        let reply = self
            .call_plain(&what, self.docker.list_volumes(Some(options)))
            .await?;
        let mut names: Vec<String> = reply
            .volumes
            .unwrap_or_default()
            .into_iter()
            // The daemon filtered already; checking again costs nothing and
            // keeps a filter quirk from handing out another stack's volume.
            .filter(|v| v.labels.get(STACK_NAMESPACE).map(String::as_str) == Some(release))
            .map(|v| v.name)
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    /// Every stack volume on this daemon, by stack namespace: one listing
    /// of the volumes carrying a namespace label. A volume without a name
    /// is an error, and so is a listing the daemon says is incomplete (its
    /// warnings, as when a volume driver could not be asked): a volume left
    /// out would be one a plan never accounts for.
    pub(crate) async fn volumes_by_stack(&self) -> Result<VolumesByStack, BackendError> {
        let what = "the stack volumes";
        let filters = HashMap::from([("label".to_owned(), vec![STACK_NAMESPACE.to_owned()])]);
        let options = ListVolumesOptionsBuilder::default()
            .filters(&filters)
            .build();
        let reply = self
            .call_plain(what, self.docker.list_volumes(Some(options)))
            .await?;
        if let Some(warning) = reply.warnings.unwrap_or_default().into_iter().next() {
            return Err(BackendError::Invalid {
                what: what.into(),
                message: format!("the daemon says the listing may be incomplete: {warning}"),
            });
        }
        group_volumes(
            reply
                .volumes
                .unwrap_or_default()
                .into_iter()
                .map(|v| (v.name, v.labels.get(STACK_NAMESPACE).cloned())),
        )
    }

    /// Every volume on this daemon, with its stack namespace label when it
    /// has one. An incomplete listing is an error, as for
    /// [`Client::volumes_by_stack`]: a volume left out would look gone.
    pub(crate) async fn all_volumes(&self) -> Result<Vec<(String, Option<String>)>, BackendError> {
        let what = "the volumes";
        let reply = self
            .call_plain(what, self.docker.list_volumes(None::<ListVolumesOptions>))
            .await?;
        if let Some(warning) = reply.warnings.unwrap_or_default().into_iter().next() {
            return Err(BackendError::Invalid {
                what: what.into(),
                message: format!("the daemon says the listing may be incomplete: {warning}"),
            });
        }
        let mut volumes: Vec<(String, Option<String>)> = reply
            .volumes
            .unwrap_or_default()
            .into_iter()
            .map(|v| (v.name, v.labels.get(STACK_NAMESPACE).cloned()))
            .collect();
        if volumes.iter().any(|(name, _)| name.is_empty()) {
            return Err(BackendError::Invalid {
                what: what.into(),
                message: "a volume without a name".into(),
            });
        }
        volumes.sort();
        volumes.dedup();
        Ok(volumes)
    }

    /// The containers of this daemon, running or stopped, that mount a
    /// named volume ([`crate::usage::container_uses`]): the engine lets a
    /// volume go once no container of its own node uses it, so a stopped
    /// one of another workload is seen only here.
    pub(crate) async fn containers(&self) -> Result<Vec<ContainerUse>, BackendError> {
        let what = "the containers";
        let options = ListContainersOptionsBuilder::default().all(true).build();
        let listed = self
            .call_plain(what, self.docker.list_containers(Some(options)))
            .await?;
        crate::usage::container_uses(listed)
    }

    /// This daemon's swarm node id, from its own `info`.
    pub(crate) async fn own_node_id(&self) -> Result<String, BackendError> {
        let (id, _) = self.identity().await?;
        id.ok_or_else(|| BackendError::Invalid {
            what: "the daemon's info".into(),
            message: "the daemon reports no swarm node id".into(),
        })
    }

    /// Removes volume `name` from this daemon, never forcing.
    pub(crate) async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        check_object_name("volume", name)?;
        let what = format!("volume {name:?}");
        let options = RemoveVolumeOptionsBuilder::default().force(false).build();
        match self
            .call(
                &what,
                self.docker
                    .remove_volume(&crate::url_path::segment(name), Some(options)),
            )
            .await
        {
            Ok(()) | Err(CallFailure::Status { code: 404, .. }) => Ok(()),
            Err(CallFailure::Status { code: 409, message }) => Err(BackendError::InUse {
                object: what,
                message,
            }),
            Err(f) => Err(f.into_backend(&what)),
        }
    }
}

/// A configs listing being read ([`Client::open_configs`]).
pub(crate) struct ConfigsReply<'a> {
    client: &'a Client,
    what: &'a str,
    body: hyper::body::Incoming,
    scanner: Scanner<'a>,
    ended: bool,
}

impl ConfigsReply<'_> {
    /// The configs read whole from the next piece of the listing (none,
    /// when that piece ends none); `None` once the listing has been read to
    /// its end. A caller handles each batch before asking for the next, so
    /// that what it keeps of a config (its data, decoded) is held for as
    /// long as one piece of the listing, never for all of it.
    pub(crate) async fn next(&mut self) -> Result<Option<Vec<ListedConfig>>, CallFailure> {
        if self.ended {
            return Ok(None);
        }
        let what = self.what;
        let invalid = |e: crate::configs::ListingError| {
            CallFailure::Backend(BackendError::Invalid {
                what: what.to_owned(),
                message: e.to_string(),
            })
        };
        let mut batch = Vec::new();
        match self.body.frame().await {
            Some(frame) => {
                let frame = frame.map_err(|e| {
                    let client = self.client;
                    translate(&client.endpoint, client.timeout, what, DockerError::from(e))
                })?;
                if let Ok(bytes) = frame.into_data() {
                    self.scanner
                        .feed(&bytes, &mut |c| batch.push(c))
                        .map_err(invalid)?;
                }
            }
            None => {
                self.ended = true;
                self.scanner.finish().map_err(invalid)?;
                return Ok(None);
            }
        }
        Ok(Some(batch))
    }
}

/// The most of an error reply's body read for its message: a refusal says
/// why in a line, and a body that goes on is not read further.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// The body of a reply sent outside bollard, when its status is a success;
/// otherwise the refusal with its message, as bollard reports one.
async fn success(
    response: hyper::Response<hyper::body::Incoming>,
) -> Result<hyper::body::Incoming, CallFailure> {
    let status = response.status();
    let mut body = response.into_body();
    if status.is_success() {
        return Ok(body);
    }
    let message = error_message(&mut body).await;
    Err(CallFailure::Status {
        code: status.as_u16(),
        message,
    })
}

/// The message of an error reply: its JSON `message`, else its text, read
/// up to [`ERROR_BODY_LIMIT`], as bollard reads one.
async fn error_message(body: &mut hyper::body::Incoming) -> String {
    let mut text = Vec::new();
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(bytes) = frame.into_data() {
            let room = ERROR_BODY_LIMIT.saturating_sub(text.len());
            text.extend_from_slice(&bytes[..bytes.len().min(room)]);
            if text.len() >= ERROR_BODY_LIMIT {
                break;
            }
        }
    }
    #[derive(serde::Deserialize)]
    struct Message {
        message: String,
    }
    match serde_json::from_slice::<Message>(&text) {
        Ok(m) => m.message,
        Err(_) => String::from_utf8_lossy(&text).into_owned(),
    }
}

/// `text` as a URL query value: every byte but the unreserved ones
/// percent-encoded.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Translates one bollard error about `what`.
fn translate(endpoint: &str, timeout: Duration, what: &str, e: DockerError) -> CallFailure {
    // Checked first: the refusal arrives as an IO or hyper error, which
    // would otherwise read as an unreachable daemon.
    if let Some(limit) = reply_limit_of(&e) {
        return CallFailure::Backend(BackendError::TooLarge {
            what: what.to_owned(),
            endpoint: endpoint.to_owned(),
            limit,
        });
    }
    let backend = match e {
        DockerError::DockerResponseServerError {
            status_code,
            message,
        } => {
            return CallFailure::Status {
                code: status_code,
                message,
            }
        }
        DockerError::RequestTimeoutError => BackendError::Timeout {
            endpoint: endpoint.to_owned(),
            after: timeout,
        },
        DockerError::JsonDataError { .. }
        | DockerError::JsonSerdeError { .. }
        | DockerError::StrParseError { .. }
        | DockerError::APIVersionParseError {} => BackendError::Invalid {
            what: what.to_owned(),
            message: chain(&e),
        },
        DockerError::IOError { .. }
        | DockerError::HyperResponseError { .. }
        | DockerError::HyperLegacyError { .. }
        | DockerError::SocketNotFoundError(_) => BackendError::Unreachable {
            endpoint: endpoint.to_owned(),
            message: chain(&e),
        },
        other => BackendError::Other {
            message: format!("{what}: {}", chain(&other)),
        },
    };
    CallFailure::Backend(backend)
}

/// Volumes as listed (name, namespace label), grouped by namespace, each
/// name once and sorted. Volumes without a namespace (or with an empty one,
/// which names no release) belong to no stack and are left out; a volume
/// without a name is an error.
fn group_volumes(
    listed: impl IntoIterator<Item = (String, Option<String>)>,
) -> Result<VolumesByStack, BackendError> {
    let mut by_stack = VolumesByStack::new();
    for (name, namespace) in listed {
        if name.is_empty() {
            return Err(BackendError::Invalid {
                what: "the stack volumes".into(),
                message: format!("a volume of stack {namespace:?} is listed without a name"),
            });
        }
        let Some(namespace) = namespace.filter(|n| !n.is_empty()) else {
            continue;
        };
        by_stack.entry(namespace).or_default().push(name);
    }
    for names in by_stack.values_mut() {
        names.sort();
        names.dedup();
    }
    Ok(by_stack)
}

/// A daemon filter matching objects that carry every `key=value` label.
pub(crate) fn label_filter(labels: &[(&str, &str)]) -> HashMap<String, Vec<String>> {
    HashMap::from([(
        "label".to_owned(),
        labels.iter().map(|(k, v)| format!("{k}={v}")).collect(),
    )])
}

/// Refuses an empty release name: as a label filter value it would match
/// objects whose namespace label is empty, which belong to no release.
pub(crate) fn check_release(release: &str) -> Result<(), BackendError> {
    if release.is_empty() {
        return Err(BackendError::Other {
            message: "refusing to act on a release with an empty name".into(),
        });
    }
    Ok(())
}

/// Refuses names the daemon could not have given an object: bollard puts
/// names into the request path unescaped, so `/`, `?` or `..` would address
/// another endpoint than the object's.
pub(crate) fn check_object_name(kind: &str, name: &str) -> Result<(), BackendError> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(BackendError::Other {
            message: format!("refusing to act on {kind} {name:?}: not a valid {kind} name"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweep_swarms::ReplyLimit;
    use sweep_testkit::fake_daemon::{FakeDaemon, Reply, Routes};

    /// A volume listing of stack `app` that fits in every limit here.
    const SMALL: &str = r#"{"Volumes":[{"Name":"app_data","Driver":"local","Mountpoint":"/m","Labels":{"com.docker.stack.namespace":"app"},"Scope":"local","Options":{}}],"Warnings":[]}"#;

    /// A daemon that answers `/version` and `/_ping` normally, a volume
    /// listing with `small` when given, and everything else with an
    /// endless body.
    fn daemon(small: Option<&str>) -> FakeDaemon {
        let routes = Routes::new().otherwise(Reply::endless("[", 4 * crate::REPLY_LIMIT));
        FakeDaemon::new(match small {
            Some(small) => routes.on("/volumes", Reply::json(small)),
            None => routes,
        })
    }

    #[tokio::test]
    async fn an_endless_reply_is_refused_at_the_limit_over_a_unix_socket() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("endless.sock");
        let endpoint = Endpoint::parse(&daemon(None).listen_unix(&socket), None).unwrap();
        let client = Client::connect_limited(&endpoint, Duration::from_secs(30), 256 * 1024)
            .await
            .expect("connecting sends nothing");
        assert_eq!(client.api_version(), "1.41");
        let e = client.stack_volumes("app").await.unwrap_err();
        assert_eq!(
            e,
            BackendError::TooLarge {
                what: "volumes of stack \"app\"".into(),
                endpoint: endpoint.url().to_owned(),
                limit: ReplyLimit::Bytes(256 * 1024),
            }
        );
    }

    #[tokio::test]
    async fn replies_within_the_limit_are_read_over_tcp() {
        // Loopback only: tests never send traffic off the machine.
        let port = daemon(Some(SMALL)).listen_tcp().await;
        let endpoint = Endpoint::parse(&format!("tcp://127.0.0.1:{port}"), None).unwrap();
        let client = Client::connect_limited(&endpoint, Duration::from_secs(30), 64 * 1024)
            .await
            .unwrap();
        assert_eq!(client.stack_volumes("app").await.unwrap(), vec!["app_data"]);
        // The same daemon's endless configs listing is cut off.
        let what = "configs";
        let e = client
            .call_plain(
                what,
                client
                    .docker()
                    .list_configs(None::<bollard::query_parameters::ListConfigsOptions>),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(
                &e,
                BackendError::TooLarge {
                    limit: ReplyLimit::Bytes(65536),
                    ..
                }
            ),
            "{e:?}"
        );
        // A reply larger than the limit as a whole, even if small per read,
        // is refused: connecting sends nothing, the first call finds out.
        let client = Client::connect_limited(&endpoint, Duration::from_secs(30), 16)
            .await
            .unwrap();
        let e = client.stack_volumes("app").await.unwrap_err();
        assert!(
            matches!(
                &e,
                BackendError::TooLarge {
                    limit: ReplyLimit::Bytes(16),
                    ..
                }
            ),
            "{e:?}"
        );
    }

    /// Replies on a kept connection are bounded each on its own: the count
    /// starts from zero for every request (ten replies, together past the
    /// limit, are all read), and a reply past the limit is still refused,
    /// its connection closed rather than reused. Kept connections are
    /// closed on request.
    #[tokio::test]
    async fn kept_connections_bound_every_reply_on_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("kept.sock");
        let fake = daemon(Some(SMALL));
        let endpoint = Endpoint::parse(&fake.listen_unix(&socket), None).unwrap();
        let limit = 1024;
        let client = Client::connect_limited(&endpoint, Duration::from_secs(30), limit)
            .await
            .unwrap();
        for _ in 0..10 {
            assert_eq!(client.stack_volumes("app").await.unwrap(), vec!["app_data"]);
        }
        assert_eq!(fake.connections().accepted(), 1, "one connection for all");
        assert_eq!(client.idle_connections(), 1);

        let what = "configs";
        let e = client
            .call_plain(
                what,
                client
                    .docker()
                    .list_configs(None::<bollard::query_parameters::ListConfigsOptions>),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(
                &e,
                BackendError::TooLarge {
                    limit: ReplyLimit::Bytes(1024),
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            client.idle_connections(),
            0,
            "a refused reply's connection is not kept"
        );
        assert_eq!(client.stack_volumes("app").await.unwrap(), vec!["app_data"]);
        assert_eq!(fake.connections().accepted(), 2);
        assert_eq!(client.idle_connections(), 1);
        client.close_idle();
        assert_eq!(client.idle_connections(), 0);
    }

    /// Calls made while the node list is in flight share it; a call after
    /// it asks again.
    #[tokio::test]
    async fn the_node_list_in_flight_is_shared_and_never_reused_after() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("nodes.sock");
        let fake = FakeDaemon::new(
            Routes::new().on(
                "/nodes",
                Reply::json(r#"[{"ID":"n1","Description":{"Hostname":"h1"}}]"#)
                    .after(Duration::from_millis(200)),
            ),
        );
        let endpoint = Endpoint::parse(&fake.listen_unix(&socket), None).unwrap();
        let lists = || {
            fake.requests()
                .iter()
                .filter(|r| r.bare == "/nodes")
                .count()
        };
        let client = Client::connect(&endpoint, Duration::from_secs(30))
            .await
            .unwrap();
        let other = client.clone();
        let (a, b, c) = tokio::join!(client.node_list(), other.node_list(), client.node_list());
        let expected = vec![Node::new("n1", "h1")];
        assert_eq!(
            (a.unwrap(), b.unwrap(), c.unwrap()),
            (expected.clone(), expected.clone(), expected.clone())
        );
        assert_eq!(lists(), 1);
        assert_eq!(client.node_list().await.unwrap(), expected);
        assert_eq!(lists(), 2);
    }

    #[test]
    fn object_names_that_could_leave_the_path_are_refused() {
        assert!(check_object_name("volume", "app_data-1.x").is_ok());
        for bad in ["", ".", "..", "a/b", "a?force=1", "../networks/x", "a b"] {
            assert!(check_object_name("volume", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn empty_release_is_refused() {
        assert!(check_release("").is_err());
        assert!(check_release("app").is_ok());
    }

    #[test]
    fn status_errors_keep_their_code_until_the_caller_decides() {
        let f = translate(
            "unix:///s",
            Duration::from_secs(1),
            "volume \"v\"",
            DockerError::DockerResponseServerError {
                status_code: 409,
                message: "in use".into(),
            },
        );
        assert!(matches!(f, CallFailure::Status { code: 409, .. }));
        assert_eq!(
            f.into_backend("volume \"v\""),
            BackendError::Refused {
                object: "volume \"v\"".into(),
                status: 409,
                message: "in use".into()
            }
        );
        let f = translate(
            "unix:///s",
            Duration::from_secs(3),
            "x",
            DockerError::RequestTimeoutError,
        );
        assert!(matches!(
            f.into_backend("x"),
            BackendError::Timeout { after, .. } if after == Duration::from_secs(3)
        ));
        let f = translate(
            "unix:///s",
            Duration::from_secs(3),
            "x",
            DockerError::SocketNotFoundError("/s".into()),
        );
        assert!(matches!(
            f.into_backend("x"),
            BackendError::Unreachable { .. }
        ));
    }

    #[test]
    fn volumes_are_grouped_by_namespace_and_nameless_ones_refused() {
        let grouped = group_volumes([
            ("b_data".to_owned(), Some("b".to_owned())),
            ("a_data".to_owned(), Some("a".to_owned())),
            ("a_cache".to_owned(), Some("a".to_owned())),
            ("a_data".to_owned(), Some("a".to_owned())),
            ("loose".to_owned(), None),
            ("blank".to_owned(), Some(String::new())),
        ])
        .unwrap();
        assert_eq!(
            grouped,
            VolumesByStack::from([
                (
                    "a".to_owned(),
                    vec!["a_cache".to_owned(), "a_data".to_owned()]
                ),
                ("b".to_owned(), vec!["b_data".to_owned()]),
            ])
        );
        assert!(matches!(
            group_volumes([(String::new(), Some("a".to_owned()))]),
            Err(BackendError::Invalid { .. })
        ));
    }

    #[test]
    fn label_filters_are_anded_key_value_pairs() {
        let f = label_filter(&[("a", "1"), ("b", "2")]);
        assert_eq!(
            f.get("label"),
            Some(&vec!["a=1".to_owned(), "b=2".to_owned()])
        );
    }
}
