//! How bytes reach a daemon: unix socket, plain TCP or TLS, with every reply
//! bounded.
//!
//! bollard reads a reply whole before decoding it and sets no limit, so a
//! hostile or broken endpoint streaming an endless body grows the process
//! without bound (3.7 GB was seen). bollard 0.21 has no hook on the response
//! body, and its custom transport must hand back hyper's own body type, so
//! the bound sits under HTTP: the connection a request goes out on refuses
//! to read more than [`REPLY_LIMIT`] bytes of plaintext for its reply. A
//! connection is kept open for the next request once its reply has been
//! read to the end ([`Transport::request`]), and its count starts again at
//! zero for each request, so every reply has the whole limit and no more.
//!
//! Bytes alone do not bound memory: bollard decodes a listing into structs
//! of up to 2 KiB each, and `[{},{},...]` spends three bytes per struct (a
//! 60 MB reply of configs took 5 GB). So the connection also counts `{`
//! bytes, each a possible struct, and refuses a reply holding more than
//! [`OBJECT_BUDGET`] divided by the size of the struct that reply decodes
//! into (inside strings too: counting more is only stricter).
//!
//! Either refusal surfaces as an IO error carrying [`ReplyLimit`], which
//! the client turns into a clear error naming the endpoint
//! ([`reply_limit_of`]).
//!
//! One reply is bounded otherwise: the configs listing, which holds every
//! config's data and so grows with a swarm past any bound on the whole, is
//! sent through [`Streaming`] with neither bound and read as a stream by
//! [`crate::configs`], which bounds each config in it instead.
//!
//! TLS is rustls (ring provider, no system library), set up as the docker
//! CLI sets it up: the endpoint's CA is the only trusted root, and the
//! client presents its certificate. An `ssh://` endpoint is one ssh process
//! per connection ([`crate::ssh`]), bounded here like any other stream.
//!
//! Kept connections are few and short-lived: at most [`IDLE_PER_DAEMON`]
//! per daemon and [`IDLE_LIMIT`] in the whole process, none reused after
//! [`IDLE_TIMEOUT`], and [`Pool::close_idle`] closes a daemon's at once. A
//! caller that bounds its open descriptors closes what it no longer needs,
//! since a kept connection holds one.

use std::cell::RefCell;
use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bollard::errors::Error as DockerError;
use bollard::{BollardRequest, Docker};
use http::header::{HeaderValue, HOST};
use http_body_util::Either;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::Response;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use sweep_swarms::ReplyLimit;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::oneshot;
use tokio_rustls::TlsConnector;

use crate::api_version::{self, ApiVersion, Range, Settled, Version};
use crate::endpoint::{Endpoint, TlsFiles, Transport as Kind};
use crate::files::{read_regular_limited, TLS_FILE_LIMIT};
use crate::ssh::{self, SshStream};

/// The most bytes read for one daemon reply (status line, headers and
/// body): 64 MiB. A listing of every release record of a swarm with a
/// hundred thousand releases is some 50 MB of JSON, and other listings are
/// per release and far smaller; a reply beyond this is refused rather than
/// read until memory runs out.
pub const REPLY_LIMIT: u64 = 64 * 1024 * 1024;

/// The paths sent without an API version: those that say which versions
/// a daemon speaks, and so cannot depend on one.
const UNVERSIONED: [&str; 2] = ["/version", "/_ping"];

/// The most bytes read of a `/version` reply asked for after a refusal
/// (a few hundred bytes from a daemon).
const VERSION_REPLY_LIMIT: u64 = 64 * 1024;

/// What the structs decoded from one reply may take at most: 256 MiB.
/// A reply may hold at most this many bytes' worth of structs, counting
/// each `{` as one struct of the type the reply decodes into (a 2 KiB
/// service for a service listing: some 120 000 objects, enough for
/// thousands of services; a 256-byte config for the release records:
/// a million objects, some 200 000 records).
pub const OBJECT_BUDGET: u64 = 256 * 1024 * 1024;

/// The most idle connections kept for reuse per daemon. Reading a swarm
/// sends the manager a few requests at once; more kept would only hold
/// descriptors.
pub const IDLE_PER_DAEMON: usize = 2;

/// The most idle connections kept for reuse in the whole process, over all
/// daemons: each holds a file descriptor, and descriptors running out fails
/// every further connection, to healthy daemons too.
pub const IDLE_LIMIT: usize = 256;

/// How long an idle connection is reused: one idle longer is closed
/// instead. A daemon or a proxy in front of it may drop a connection that
/// has been idle for long, and a request sent just as it does fails.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Idle connections kept in the process ([`IDLE_LIMIT`]).
static IDLE: AtomicUsize = AtomicUsize::new(0);

/// The longest [`returning`] waits for one connection to be marked
/// reusable after its reply was read (it takes microseconds; the bound only
/// keeps a surprise from stalling a call).
const RETURN_WAIT: Duration = Duration::from_millis(100);

tokio::task_local! {
    /// Set by [`returning`] around one daemon call: one receiver per
    /// connection the call used, resolved once that connection is back in
    /// its pool or closed.
    static RETURNS: RefCell<Vec<oneshot::Receiver<()>>>;
}

/// Runs `call` (one daemon call), then waits until every connection it
/// used is back in its pool or closed. hyper marks a connection reusable a
/// moment after its reply has been read to the end; a request sent in that
/// moment (the next round of a swarm's reads, sent at once) would find no
/// connection idle and open another, so connections would hardly ever be
/// reused.
pub(crate) async fn returning<T>(call: impl Future<Output = T>) -> T {
    let (value, returns) = RETURNS
        .scope(RefCell::new(Vec::new()), async {
            let value = call.await;
            let returns = RETURNS.with(|r| std::mem::take(&mut *r.borrow_mut()));
            (value, returns)
        })
        .await;
    for back in returns {
        // Err: the connection closed instead; either way it is settled.
        let _ = tokio::time::timeout(RETURN_WAIT, back).await;
    }
    value
}

/// The largest struct any reply decodes into (a service, a task or the
/// daemon's info: about 2 KiB), for replies not otherwise known.
const LARGEST_MODEL: usize = {
    use bollard::models::{Service, SystemInfo, Task};
    let mut max = std::mem::size_of::<Service>();
    if std::mem::size_of::<Task>() > max {
        max = std::mem::size_of::<Task>();
    }
    if std::mem::size_of::<SystemInfo>() > max {
        max = std::mem::size_of::<SystemInfo>();
    }
    max
};

/// How many `{` a reply to `path` may hold: [`OBJECT_BUDGET`] over the
/// size of the struct the reply decodes into (each element, for a
/// listing). Nested objects are fields or small collections of that struct,
/// so each `{` costs at most that much.
fn object_limit(path: &str) -> u64 {
    use bollard::models::{Config, Network, Node, Secret, Volume};
    use std::mem::size_of;
    let path = path.split('?').next().unwrap_or("");
    let mut segments = path.split('/').filter(|s| !s.is_empty());
    let mut resource = segments.next().unwrap_or("");
    // `/v1.41/configs`: past the version.
    if resource.starts_with('v') && resource[1..].starts_with(|c: char| c.is_ascii_digit()) {
        resource = segments.next().unwrap_or("");
    }
    let weight = match resource {
        "configs" => size_of::<Config>(),
        "secrets" => size_of::<Secret>(),
        "networks" => size_of::<Network>(),
        "volumes" => size_of::<Volume>(),
        "nodes" => size_of::<Node>(),
        // Read into bollard's model, or into ours
        // (`crate::usage::ListedService`, whose specs are boxed so that it
        // is no larger: the transport's tests hold it to that).
        _ => LARGEST_MODEL,
    };
    OBJECT_BUDGET / weight.max(1) as u64
}

/// The limit a failed call ran into, if it failed because a reply was too
/// large.
pub(crate) fn reply_limit_of(e: &DockerError) -> Option<ReplyLimit> {
    fn in_io(e: &io::Error) -> Option<ReplyLimit> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<ReplyLimit>())
            .copied()
    }
    // bollard's IO and hyper variants are `transparent`: their `source()`
    // skips the wrapped error itself, so the IO error is looked at first.
    if let DockerError::IOError { err } = e {
        if let Some(limit) = in_io(err) {
            return Some(limit);
        }
    }
    let mut cause: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(t) = c.downcast_ref::<ReplyLimit>() {
            return Some(*t);
        }
        if let Some(limit) = c.downcast_ref::<io::Error>().and_then(in_io) {
            return Some(limit);
        }
        cause = c.source();
    }
    None
}

/// The bounds on one reply.
#[derive(Clone, Copy, Debug)]
struct Limits {
    bytes: u64,
    objects: u64,
}

impl Limits {
    /// No bound: for a reply its reader bounds as it goes ([`Streaming`]).
    const NONE: Limits = Limits {
        bytes: u64::MAX,
        objects: u64::MAX,
    };
}

/// What came through one connection for the reply now awaited, against
/// that reply's bounds. Shared between the connection (which counts) and
/// the transport (which starts the count again for each request).
#[derive(Debug)]
struct Meter {
    bytes: AtomicU64,
    objects: AtomicU64,
    max_bytes: AtomicU64,
    max_objects: AtomicU64,
}

impl Meter {
    fn new(limits: Limits) -> Self {
        Meter {
            bytes: AtomicU64::new(0),
            objects: AtomicU64::new(0),
            max_bytes: AtomicU64::new(limits.bytes),
            max_objects: AtomicU64::new(limits.objects),
        }
    }

    /// Counts from zero against `limits`, for the next reply. Only called
    /// on a connection whose last reply was read to its end: hyper refuses
    /// bytes arriving on an idle connection (and closes it), so nothing
    /// read before the request counts for less than it should.
    fn restart(&self, limits: Limits) {
        self.max_bytes.store(limits.bytes, Ordering::SeqCst);
        self.max_objects.store(limits.objects, Ordering::SeqCst);
        self.bytes.store(0, Ordering::SeqCst);
        self.objects.store(0, Ordering::SeqCst);
    }

    fn exceeded(&self) -> Option<ReplyLimit> {
        let max_bytes = self.max_bytes.load(Ordering::SeqCst);
        let max_objects = self.max_objects.load(Ordering::SeqCst);
        if self.bytes.load(Ordering::SeqCst) > max_bytes {
            Some(ReplyLimit::Bytes(max_bytes))
        } else if self.objects.load(Ordering::SeqCst) > max_objects {
            Some(ReplyLimit::Objects(max_objects))
        } else {
            None
        }
    }
}

/// A stream that fails reads once more than its meter's limits came
/// through.
struct Limited<S> {
    inner: S,
    meter: Arc<Meter>,
}

impl<S> Limited<S> {
    #[cfg(test)]
    fn new(inner: S, limits: Limits) -> Self {
        Limited::metered(inner, Arc::new(Meter::new(limits)))
    }

    fn metered(inner: S, meter: Arc<Meter>) -> Self {
        Limited { inner, meter }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Limited<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(e) = self.meter.exceeded() {
            return Poll::Ready(Err(io::Error::other(e)));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let new = &buf.filled()[before..];
                let braces = new.iter().filter(|&&b| b == b'{').count() as u64;
                this.meter
                    .bytes
                    .fetch_add(new.len() as u64, Ordering::SeqCst);
                this.meter.objects.fetch_add(braces, Ordering::SeqCst);
                if let Some(e) = this.meter.exceeded() {
                    // A failed read must not leave bytes in the buffer.
                    buf.set_filled(before);
                    return Poll::Ready(Err(io::Error::other(e)));
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Limited<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Any of the streams a daemon is reached over.
trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// Where and how to connect.
enum Dial {
    Unix(PathBuf),
    Tcp {
        host: String,
        port: u16,
    },
    Tls {
        host: String,
        port: u16,
        name: ServerName<'static>,
        connector: TlsConnector,
    },
    Ssh {
        program: ssh::Program,
        host: String,
    },
}

/// The request body type bollard sends (not exported by name).
trait HasBody {
    type Body;
}

impl<B> HasBody for http::Request<B> {
    type Body = B;
}

type Body = <BollardRequest as HasBody>::Body;

/// One open connection: where requests go, and its reply meter.
struct Conn {
    sender: SendRequest<Body>,
    meter: Arc<Meter>,
    /// The [`Pool::generation`] it was handed out in.
    generation: u64,
}

/// One of the [`IDLE_LIMIT`] places for an idle connection; given back
/// when the connection is taken or closed.
struct IdleSlot;

impl IdleSlot {
    fn take() -> Option<IdleSlot> {
        IDLE.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < IDLE_LIMIT).then_some(n + 1)
        })
        .ok()
        .map(|_| IdleSlot)
    }
}

impl Drop for IdleSlot {
    fn drop(&mut self) {
        IDLE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection kept for the next request.
struct Idle {
    conn: Conn,
    since: Instant,
    _slot: IdleSlot,
}

/// The idle connections to one daemon.
#[derive(Default)]
pub(crate) struct Pool {
    state: Mutex<PoolState>,
}

#[derive(Default)]
struct PoolState {
    idle: Vec<Idle>,
    /// Bumped by [`Pool::close_idle`]: a connection handed out before is
    /// closed when its reply is done instead of kept, so closing a
    /// daemon's idle connections also covers those still reading.
    generation: u64,
}

impl Pool {
    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// An idle connection ready for a request: the newest, skipping (and
    /// closing) those the daemon closed and those idle too long.
    fn take(&self) -> Option<Conn> {
        let mut state = self.lock();
        let generation = state.generation;
        while let Some(idle) = state.idle.pop() {
            let fresh = idle.since.elapsed() < IDLE_TIMEOUT;
            if fresh && idle.conn.sender.is_ready() && !idle.conn.sender.is_closed() {
                let mut conn = idle.conn;
                conn.generation = generation;
                return Some(conn);
            }
        }
        None
    }

    /// Keeps `conn` for the next request if there is room, else closes it.
    fn keep(&self, conn: Conn) {
        let mut state = self.lock();
        if conn.generation != state.generation || state.idle.len() >= IDLE_PER_DAEMON {
            return;
        }
        if let Some(slot) = IdleSlot::take() {
            state.idle.push(Idle {
                conn,
                since: Instant::now(),
                _slot: slot,
            });
        }
    }

    /// Closes every idle connection to this daemon, and every connection
    /// still reading a reply once it is done.
    pub(crate) fn close_idle(&self) {
        let closed = {
            let mut state = self.lock();
            state.generation = state.generation.wrapping_add(1);
            std::mem::take(&mut state.idle)
        };
        // Dropped outside the lock: dropping a sender wakes its connection.
        drop(closed);
    }

    /// How many idle connections to this daemon are kept now.
    #[cfg(test)]
    pub(crate) fn idle(&self) -> usize {
        self.lock().idle.len()
    }
}

/// A bollard transport to one daemon.
struct Transport {
    dial: Dial,
    /// The daemon's API version, settled on as it answers.
    version: Arc<ApiVersion>,
    /// The byte limit on one reply.
    limit: u64,
    pool: Arc<Pool>,
}

impl Transport {
    /// A new connection, counted by `meter`. The bound is on the plaintext
    /// (above TLS), where the `{` can be counted; rustls bounds the
    /// handshake itself.
    async fn connect(&self, meter: Arc<Meter>) -> io::Result<Box<dyn Stream>> {
        Ok(match &self.dial {
            Dial::Unix(path) => Box::new(Limited::metered(UnixStream::connect(path).await?, meter)),
            Dial::Tcp { host, port } => {
                let tcp = TcpStream::connect((host.as_str(), *port)).await?;
                tcp.set_nodelay(true)?;
                Box::new(Limited::metered(tcp, meter))
            }
            Dial::Tls {
                host,
                port,
                name,
                connector,
            } => {
                let tcp = TcpStream::connect((host.as_str(), *port)).await?;
                tcp.set_nodelay(true)?;
                let tls = connector.connect(name.clone(), tcp).await?;
                Box::new(Limited::metered(tls, meter))
            }
            Dial::Ssh { program, host } => {
                Box::new(Limited::metered(SshStream::spawn(program, host)?, meter))
            }
        })
    }

    /// Sends `request` ([`Transport::send`]) under the daemon's API
    /// version ([`crate::api_version`]): a path without one is put under
    /// it, and a request the daemon refuses for its version is sent once
    /// more under the version settled on.
    async fn request(
        self: Arc<Self>,
        request: BollardRequest,
        limits: Option<Limits>,
    ) -> Result<Response<Incoming>, DockerError> {
        let (mut parts, body) = request.into_parts();
        // bollard builds absolute URIs; on a connection of our own the
        // request line takes the path, and the authority goes in `Host`.
        let authority = parts.uri.authority().map(|a| a.as_str().to_owned());
        let mut path = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        if api_version::of_path(&path).is_none() && !UNVERSIONED.contains(&parts.uri.path()) {
            path = format!("/v{}{path}", self.version.current());
        }
        parts.uri = path.parse()?;
        if let Some(authority) = authority {
            if !parts.headers.contains_key(HOST) {
                if let Ok(value) = HeaderValue::from_str(&authority) {
                    parts.headers.insert(HOST, value);
                }
            }
        }
        let limits = limits.unwrap_or(Limits {
            bytes: self.limit,
            objects: object_limit(&path),
        });
        let sent = api_version::of_path(&path).map(|(version, rest)| (version, rest.to_owned()));
        // What sending it again takes: its head, and its body when whole
        // (a streamed body cannot be sent twice; none of ours is).
        let again = match (&sent, &body) {
            (Some(_), Either::Left(whole)) => {
                Some((parts.method.clone(), parts.headers.clone(), whole.clone()))
            }
            _ => None,
        };
        let response = self
            .send(BollardRequest::from_parts(parts, body), limits)
            .await?;
        let (Some((sent, rest)), Some((method, headers, whole))) = (sent, again) else {
            return Ok(response);
        };
        if response.status() != http::StatusCode::BAD_REQUEST {
            return Ok(response);
        }
        let Some(version) = self.settle(sent, &headers).await else {
            return Ok(response);
        };
        drop(response);
        let mut request = BollardRequest::new(Either::Left(whole));
        *request.method_mut() = method;
        *request.headers_mut() = headers;
        *request.uri_mut() = format!("/v{version}{rest}").parse()?;
        self.send(request, limits).await
    }

    /// The version to send a request refused (400) under `sent` again
    /// with, when the daemon's range says `sent` was what it refused;
    /// `None` when the refusal was about something else, or the daemon
    /// speaks nothing this client does (the refusal stands).
    async fn settle(&self, sent: Version, headers: &http::HeaderMap) -> Option<Version> {
        let _one = self.version.settling().await;
        let current = self.version.current();
        if current != sent {
            // Another request refused at the same time settled it already.
            return Some(current);
        }
        let mut ask = BollardRequest::new(bollard::body_full(hyper::body::Bytes::new()));
        *ask.uri_mut() = http::Uri::from_static("/version");
        if let Some(host) = headers.get(HOST) {
            ask.headers_mut().insert(HOST, host.clone());
        }
        let limits = Limits {
            bytes: VERSION_REPLY_LIMIT,
            objects: object_limit("/version"),
        };
        let reply = self.send(ask, limits).await.ok()?;
        if !reply.status().is_success() {
            return None;
        }
        let body = http_body_util::BodyExt::collect(reply.into_body())
            .await
            .ok()?
            .to_bytes();
        let range = Range::from_reply(&body)?;
        match api_version::settle(sent, range) {
            Settled::Use(version) => {
                tracing::debug!(refused = %sent, settled = %version, "the daemon refused the API version; settled on another");
                self.version.set(version);
                Some(version)
            }
            Settled::Accepted | Settled::Unsupported => None,
        }
    }

    /// Sends `request` over a kept connection to this daemon when one is
    /// idle, else over a new one, with the reply bounded by the limits
    /// (counted from zero for it). The connection is kept for the next
    /// request once the reply has been read to its end; a reply given up on
    /// (a timeout, an error) closes its connection, since hyper cannot tell
    /// where that reply would have ended.
    /// `limits` replaces the bounds of [`REPLY_LIMIT`] and
    /// [`object_limit`] for a reply whose reader bounds it itself.
    async fn send(
        &self,
        request: BollardRequest,
        limits: Limits,
    ) -> Result<Response<Incoming>, DockerError> {
        let mut request = request;
        while let Some(mut conn) = self.pool.take() {
            conn.meter.restart(limits);
            match conn.sender.try_send_request(request).await {
                Ok(response) => {
                    self.keep_when_read(conn);
                    return Ok(response);
                }
                Err(mut e) => match e.take_message() {
                    // Never sent (the daemon had closed the connection):
                    // the next connection takes it.
                    Some(unsent) => request = unsent,
                    None => return Err(e.into_error().into()),
                },
            }
        }
        let generation = self.pool.generation();
        let meter = Arc::new(Meter::new(limits));
        let stream = self.connect(meter.clone()).await?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        // The connection is driven until it closes: when its reply is given
        // up on, when the daemon hangs up, or when no one holds its sender.
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::trace!(error = %e, "daemon connection ended");
            }
        });
        let response = sender.send_request(request).await?;
        self.keep_when_read(Conn {
            sender,
            meter,
            generation,
        });
        Ok(response)
    }

    /// Puts `conn` back in the pool once its reply has been read to its
    /// end; dropped (and so closed) when the reply is given up on. A call
    /// run by [`returning`] waits for this.
    fn keep_when_read(&self, mut conn: Conn) {
        let pool = self.pool.clone();
        let (back, settled) = oneshot::channel();
        // Outside a `returning` call nobody waits: nothing to leave.
        let _ = RETURNS.try_with(|r| r.borrow_mut().push(settled));
        tokio::spawn(async move {
            if conn.sender.ready().await.is_ok() {
                pool.keep(conn);
            }
            let _ = back.send(());
        });
    }
}

/// Requests sent outside bollard over the same connections (and pool) as
/// its own, for the replies read as a stream: the configs listing, which
/// [`crate::configs`] bounds config by config.
#[derive(Clone)]
pub(crate) struct Streaming {
    transport: Arc<Transport>,
    /// What bollard puts before every path (`unix://<hex>`, `http://host:port`),
    /// so that these requests carry the `Host` bollard's do.
    base: String,
}

impl Streaming {
    /// Sends `GET path_and_query` (the API version included) and hands
    /// back the reply unread, with no bound on its size: the caller reads
    /// its body as a stream and bounds what it keeps.
    pub(crate) async fn get(
        &self,
        path_and_query: &str,
    ) -> Result<Response<Incoming>, DockerError> {
        self.get_within(path_and_query, Some(Limits::NONE)).await
    }

    /// Sends `GET path_and_query` (the API version included) with the
    /// bounds of every reply bollard reads ([`REPLY_LIMIT`] and
    /// [`object_limit`]): for a reply decoded into a model of ours, where
    /// bollard's leaves out a field that matters.
    pub(crate) async fn get_bounded(
        &self,
        path_and_query: &str,
    ) -> Result<Response<Incoming>, DockerError> {
        self.get_within(path_and_query, None).await
    }

    /// Sends `GET path_and_query` under `limits` (`None`: those of every
    /// reply bollard reads).
    async fn get_within(
        &self,
        path_and_query: &str,
        limits: Option<Limits>,
    ) -> Result<Response<Incoming>, DockerError> {
        let request = http::Request::builder()
            .method(http::Method::GET)
            .uri(format!("{}{path_and_query}", self.base))
            .body(bollard::body_full(hyper::body::Bytes::new()))?;
        self.transport.clone().request(request, limits).await
    }
}

/// A bollard client for `endpoint` whose replies are bounded by `limit`
/// bytes each, the pool of its idle connections, and the way to send
/// requests whose replies are read as a stream; `timeout` is bollard's own
/// (whole seconds). Fails with a message when the TLS files cannot be
/// used.
pub(crate) fn connect(
    endpoint: &Endpoint,
    timeout: u64,
    limit: u64,
) -> Result<(Docker, Arc<Pool>, Streaming, Arc<ApiVersion>), String> {
    let url = endpoint.url();
    let (dial, client_addr) = match endpoint.transport() {
        Kind::Unix => {
            let path = url.strip_prefix("unix://").unwrap_or(url);
            // bollard's own unix URIs carry the path hex-encoded as host.
            let hex: String = path.bytes().map(|b| format!("{b:02x}")).collect();
            (Dial::Unix(PathBuf::from(path)), format!("unix://{hex}"))
        }
        Kind::Tcp => {
            let (host, port, authority) = host_port(url)?;
            (Dial::Tcp { host, port }, format!("http://{authority}"))
        }
        Kind::Tls(files) => {
            let (host, port, authority) = host_port(url)?;
            let name = ServerName::try_from(host.clone())
                .map_err(|e| format!("{host:?} cannot be verified as a TLS server name: {e}"))?;
            let connector = TlsConnector::from(Arc::new(tls_config(files)?));
            (
                Dial::Tls {
                    host,
                    port,
                    name,
                    connector,
                },
                format!("https://{authority}"),
            )
        }
        Kind::Ssh(target) => (
            Dial::Ssh {
                program: ssh::command(target, Duration::from_secs(timeout)),
                host: target.host.clone(),
            },
            // The daemon at the end of `dial-stdio` ignores the host; the
            // URL only needs one.
            "http://docker".to_owned(),
        ),
    };
    let pool = Arc::new(Pool::default());
    let version = Arc::new(ApiVersion::default());
    let transport = Arc::new(Transport {
        dial,
        version: version.clone(),
        limit,
        pool: pool.clone(),
    });
    let streaming = Streaming {
        transport: transport.clone(),
        base: client_addr.clone(),
    };
    let docker = Docker::connect_with_custom_transport(
        move |request: BollardRequest| transport.clone().request(request, None),
        Some(client_addr),
        timeout,
        // Only for bollard's own bookkeeping: the transport puts each
        // request under the daemon's version.
        &api_version::PINNED.to_bollard(),
    )
    .map_err(|e| e.to_string())?;
    Ok((docker, pool, streaming, version))
}

/// Host (brackets removed), port and authority of a checked `tcp://` URL.
fn host_port(url: &str) -> Result<(String, u16, String), String> {
    let authority = url
        .strip_prefix("tcp://")
        .map(|rest| rest.strip_suffix('/').unwrap_or(rest))
        .ok_or_else(|| format!("{url:?} is not a tcp:// endpoint"))?;
    let (host, port) = authority
        .rsplit_once(':')
        .ok_or_else(|| format!("{url:?} has no port"))?;
    let port = port
        .parse::<u16>()
        .map_err(|_| format!("{url:?} has no valid port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok((host.to_owned(), port, authority.to_owned()))
}

/// The TLS setup for `files`, as the docker CLI makes it: the CA file is
/// the only trusted root (the system's roots are not: a daemon's
/// certificate comes from the operator's CA), and the client certificate
/// and key are presented to the daemon.
fn tls_config(files: &TlsFiles) -> Result<ClientConfig, String> {
    let read = |what: &str, path: &std::path::Path| {
        read_regular_limited(path, TLS_FILE_LIMIT).map_err(|e| format!("TLS {what}: {e}"))
    };
    let ca = read("CA", &files.ca)?;
    let ca_certs = CertificateDer::pem_slice_iter(&ca)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("TLS CA: {}: {e}", files.ca.display()))?;
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(ca_certs);
    if added == 0 {
        return Err(format!(
            "TLS CA: {}: no usable certificate",
            files.ca.display()
        ));
    }
    let cert = read("certificate", &files.cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("TLS certificate: {}: {e}", files.cert.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "TLS certificate: {}: no certificate",
            files.cert.display()
        ));
    }
    let key = read("key", &files.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key)
        .map_err(|e| format!("TLS key: {}: {e}", files.key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .map_err(|e| {
            format!(
                "TLS: the certificate {} and key {} cannot be used: {e}",
                files.cert.display(),
                files.key.display()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn read_endless(block: &'static [u8], limits: Limits) -> io::Error {
        let (mut a, b) = tokio::io::duplex(1024);
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            while a.write_all(block).await.is_ok() {}
        });
        let mut limited = Limited::new(b, limits);
        let mut sink = Vec::new();
        let e = limited.read_to_end(&mut sink).await.unwrap_err();
        assert!(sink.len() as u64 <= limits.bytes, "{}", sink.len());
        e
    }

    #[tokio::test]
    async fn a_limited_stream_fails_past_its_limits() {
        let limits = Limits {
            bytes: 1000,
            objects: 100,
        };
        let e = read_endless(b"xxxxxxxxxx", limits).await;
        let wrapped = DockerError::IOError { err: e };
        assert_eq!(reply_limit_of(&wrapped), Some(ReplyLimit::Bytes(1000)));
        let e = read_endless(b"{},", limits).await;
        assert_eq!(
            reply_limit_of(&DockerError::IOError { err: e }),
            Some(ReplyLimit::Objects(100))
        );
        assert_eq!(
            reply_limit_of(&DockerError::IOError {
                err: io::Error::other("x")
            }),
            None
        );
    }

    #[test]
    fn object_limits_follow_what_the_reply_decodes_into() {
        let configs = object_limit("/v1.41/configs?filters=x");
        assert_eq!(
            configs,
            OBJECT_BUDGET / std::mem::size_of::<bollard::models::Config>() as u64
        );
        assert!(configs >= 1_000_000, "{configs}");
        let services = object_limit("/v1.41/services?filters=x");
        assert_eq!(services, OBJECT_BUDGET / LARGEST_MODEL as u64);
        assert!(std::mem::size_of::<crate::usage::ListedService>() <= LARGEST_MODEL);
        assert!(services >= 100_000, "{services}");
        assert_eq!(object_limit("/configs"), configs);
        assert_eq!(object_limit("/version"), services);
        assert_eq!(object_limit(""), services);
    }

    #[test]
    fn tcp_urls_split_into_host_and_port() {
        assert_eq!(
            host_port("tcp://[::1]:2376/").unwrap(),
            ("::1".into(), 2376, "[::1]:2376".into())
        );
        assert_eq!(
            host_port("tcp://h.example:2375").unwrap(),
            ("h.example".into(), 2375, "h.example:2375".into())
        );
    }
}
