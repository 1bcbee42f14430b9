//! The HTTP endpoints of `watch --listen`: `/healthz`, `/readyz`,
//! `/metrics`, `/plan`, `/report` and `/snapshot`, GET only.
//!
//! `/snapshot` holds what the last gather read, release records' data
//! included: the address must face trusted networks only.
//!
//! The port faces whatever can reach it, so every connection is bounded:
//! its request head in size, header count and time, the whole connection
//! in time, and the connections served at once in number, in all and from
//! any one client address. Each runs in a task of its own on the runtime,
//! apart from the sweep, so a slow or hostile client costs only its own
//! connection, and a flood from one address never takes the slots the
//! health probe needs.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use sweep_core::escape::escape;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::metrics::{self, SweepOutcome};
use super::shared::{Readiness, Shared, APP_SET_PATIENCE_INTERVALS};

/// The largest request head read: the routes take no headers worth
/// more, and a larger head is answered 431 and the connection closed.
pub const MAX_HEAD: usize = 8 * 1024;
/// The most header fields in one request.
const MAX_HEADERS: usize = 32;
/// How long a client may take to send its whole request head, counted
/// from the connection's start (never restarted by a byte that arrives),
/// so a client trickling a byte at a time holds its slot no longer.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one connection may last in all, reading the reply included.
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections served at once; one past it is closed unanswered.
pub const MAX_CONNECTIONS: usize = 64;
/// Connections served at once from one client address; one past it is
/// closed unanswered. A flood of slow clients from one address then holds
/// at most this many slots, and the health probe (from 127.0.0.1 in the
/// container) and the scraper find theirs free.
pub const MAX_CONNECTIONS_PER_ADDRESS: usize = 8;
/// Slots only 127.0.0.1 and ::1 may take: the image's healthcheck runs in
/// the container and comes from 127.0.0.1, so clients from elsewhere, from
/// however many addresses (the rest of 127.0.0.0/8 included, which any
/// process sharing the network namespace may bind), never hold every slot
/// it could use.
pub const KEPT_FOR_LOOPBACK: usize = 8;

/// Why a connection was closed unanswered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{MAX_CONNECTIONS} connections are served already")]
    Full,
    #[error("all the slots but those kept for the health probe (127.0.0.1, ::1) are taken")]
    KeptForLoopback,
    #[error("{MAX_CONNECTIONS_PER_ADDRESS} connections from {0} are served already")]
    AddressFull(IpAddr),
}

/// The connections served at once, in all and by client address.
#[derive(Debug, Default)]
struct Counts {
    total: usize,
    /// Only addresses with a connection served: at most
    /// [`MAX_CONNECTIONS`] entries.
    by_address: HashMap<IpAddr, usize>,
}

/// Admits a connection when both its address and the server have a slot
/// left.
#[derive(Debug, Clone, Default)]
pub struct Admission(Arc<Mutex<Counts>>);

/// One admitted connection's slot, given back when it is dropped.
#[derive(Debug)]
pub struct Slot {
    counts: Arc<Mutex<Counts>>,
    address: IpAddr,
}

impl Admission {
    fn lock(&self) -> MutexGuard<'_, Counts> {
        lock(&self.0)
    }

    /// A slot for a connection from `peer`, or why there is none.
    pub fn admit(&self, peer: IpAddr) -> Result<Slot, Refused> {
        // An IPv4 client of a dual-stack listener shows as ::ffff:a.b.c.d:
        // counted as a.b.c.d, so it has one count whichever way it came.
        let address = peer.to_canonical();
        let mut counts = self.lock();
        if counts.total >= MAX_CONNECTIONS {
            return Err(Refused::Full);
        }
        if counts.total >= MAX_CONNECTIONS - KEPT_FOR_LOOPBACK && !is_the_probes(address) {
            return Err(Refused::KeptForLoopback);
        }
        let from_address = counts.by_address.entry(address).or_insert(0);
        if *from_address >= MAX_CONNECTIONS_PER_ADDRESS {
            return Err(Refused::AddressFull(address));
        }
        *from_address += 1;
        counts.total += 1;
        Ok(Slot {
            counts: self.0.clone(),
            address,
        })
    }
}

/// Whether `address` is where the health probe comes from: 127.0.0.1 or
/// ::1, the addresses a loopback connection gets unless it binds another.
fn is_the_probes(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => v4 == std::net::Ipv4Addr::LOCALHOST,
        IpAddr::V6(v6) => v6 == std::net::Ipv6Addr::LOCALHOST,
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        counts.total -= 1;
        if let Some(n) = counts.by_address.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                counts.by_address.remove(&self.address);
            }
        }
    }
}

fn lock(counts: &Mutex<Counts>) -> MutexGuard<'_, Counts> {
    // Every change is one step under the lock: the counts stay right.
    counts.lock().unwrap_or_else(|p| p.into_inner())
}

/// Serves the endpoints from `listener` until the runtime shuts down.
pub fn serve(listener: TcpListener, shared: Arc<Shared>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let admission = Admission::default();
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(HEAD_TIMEOUT)
            .max_header_size(MAX_HEAD)
            .max_headers(MAX_HEADERS)
            .max_buf_size(2 * MAX_HEAD)
            // One request per connection: nothing is left open between
            // scrapes, and the connection's time limit never cuts a
            // second reply in half.
            .keep_alive(false);
        let builder = Arc::new(builder);
        loop {
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, typically: wait for some to
                    // be freed rather than spin.
                    tracing::warn!(error = %e, "cannot accept an HTTP connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let slot = match admission.admit(peer.ip()) {
                Ok(slot) => slot,
                Err(refused) => {
                    tracing::debug!(%peer, %refused, "closing this HTTP connection unanswered");
                    drop(stream);
                    continue;
                }
            };
            let shared = shared.clone();
            let builder = builder.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let reply = respond(&shared, req.method(), req.uri().path());
                    async move { Ok::<_, Infallible>(reply) }
                });
                let connection = builder.serve_connection(TokioIo::new(stream), service);
                match tokio::time::timeout(CONNECTION_TIMEOUT, connection).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::debug!(%peer, error = %e, "HTTP connection ended"),
                    Err(_) => tracing::debug!(%peer, "HTTP connection took too long; closed"),
                }
                drop(slot);
            });
        }
    })
}

/// Binds `addr`, for [`serve`].
pub async fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr).await
}

/// The reply to `method` on `path`.
pub fn respond(shared: &Shared, method: &Method, path: &str) -> Response<Full<Bytes>> {
    const ROUTES: &[&str] = &[
        "/healthz",
        "/readyz",
        "/metrics",
        "/plan",
        "/report",
        "/snapshot",
    ];
    if !ROUTES.contains(&path) {
        return text(StatusCode::NOT_FOUND, "not found\n".into());
    }
    if method != Method::GET {
        let mut reply = text(
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET is served\n".into(),
        );
        reply
            .headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET"));
        return reply;
    }
    match path {
        "/healthz" => text(StatusCode::OK, "ok\n".into()),
        "/readyz" => match shared.readiness() {
            Readiness::Ready => text(
                StatusCode::OK,
                "ready: the last gather read every swarm\n".into(),
            ),
            Readiness::NotYet => {
                let why = match shared.last_outcome() {
                    Some(SweepOutcome::AppSetUnreadable) => "; the app set could not be read",
                    _ => "",
                };
                text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("not ready: no gather has finished yet{why}\n"),
                )
            }
            Readiness::Unreadable(swarms) => {
                // Swarm names come from the registry file and the swarms:
                // escaped, one per line, so none can forge another line.
                let mut body =
                    String::from("not ready: the last gather could not read these swarms:\n");
                for swarm in swarms {
                    body.push_str(&escape(&swarm));
                    body.push('\n');
                }
                text(StatusCode::SERVICE_UNAVAILABLE, body)
            }
            Readiness::AppSetUnreadable { file, for_, why } => {
                // The path and the error (which may quote the file) are
                // the operator's: escaped, each on a line of its own.
                let body = format!(
                    "not ready: the app set has not been read for {}s, more than {APP_SET_PATIENCE_INTERVALS} intervals; every sweep since is held:\n{}\n{}\n",
                    for_.as_secs(),
                    escape(&file),
                    escape(&why),
                );
                text(StatusCode::SERVICE_UNAVAILABLE, body)
            }
        },
        "/metrics" => with_type(
            StatusCode::OK,
            metrics::CONTENT_TYPE,
            Bytes::from(shared.metrics_text()),
        ),
        "/plan" => json(shared.plan(), "no plan yet: no sweep has planned\n"),
        "/snapshot" => json(
            shared.snapshot(),
            "no snapshot yet: no gather has finished\n",
        ),
        "/report" => json(
            shared.report(),
            "no report yet: no sweep has carried out a plan\n",
        ),
        _ => text(StatusCode::NOT_FOUND, "not found\n".into()),
    }
}

fn json(document: Option<Bytes>, missing: &str) -> Response<Full<Bytes>> {
    match document {
        Some(body) => with_type(StatusCode::OK, "application/json", body),
        None => text(StatusCode::NOT_FOUND, missing.to_owned()),
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    with_type(status, "text/plain; charset=utf-8", Bytes::from(body))
}

fn with_type(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut reply = Response::new(Full::new(body));
    *reply.status_mut() = status;
    let headers = reply.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Every reply describes a moment: a cache must not replay it.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    reply
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Instant, SystemTime};
    use sweep_core::{AppSet, Policy, Snapshot, SwarmSnapshot};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    async fn started() -> (SocketAddr, Arc<Shared>) {
        let shared =
            Arc::new(Shared::new("apps.yaml", Duration::from_secs(900)).keeping_snapshots());
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        serve(listener, shared.clone());
        (addr, shared)
    }

    /// Sends `request` as is and reads the reply to its end.
    async fn raw(addr: SocketAddr, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request).await.unwrap();
        let mut reply = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply))
            .await
            .expect("the server closes the connection after its reply");
        String::from_utf8_lossy(&reply).into_owned()
    }

    async fn get(addr: SocketAddr, path: &str) -> (u16, String, String) {
        let reply = raw(
            addr,
            format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n").as_bytes(),
        )
        .await;
        let (head, body) = reply.split_once("\r\n\r\n").expect("a head and a body");
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("a status");
        (status, head.to_owned(), body.to_owned())
    }

    fn snapshot(unreadable: &[&str], readable: &[&str]) -> Snapshot {
        let mut swarms: Vec<SwarmSnapshot> = unreadable
            .iter()
            .map(|n| SwarmSnapshot::unreadable(*n, "connection refused"))
            .collect();
        swarms.extend(readable.iter().map(|n| SwarmSnapshot::new(*n)));
        Snapshot::new(Policy::default(), AppSet::new(true, Vec::new()), swarms)
    }

    #[tokio::test]
    async fn routes_before_and_after_a_sweep() {
        let (addr, shared) = started().await;
        let (status, _, body) = get(addr, "/healthz").await;
        assert_eq!((status, body.as_str()), (200, "ok\n"));
        let (status, _, body) = get(addr, "/readyz").await;
        assert_eq!(status, 503, "{body}");
        assert!(body.contains("no gather"), "{body}");
        assert_eq!(get(addr, "/plan").await.0, 404);
        assert_eq!(get(addr, "/report").await.0, 404);
        assert_eq!(get(addr, "/snapshot").await.0, 404);
        assert_eq!(get(addr, "/nope").await.0, 404);
        let (status, head, body) = get(addr, "/metrics").await;
        assert_eq!(status, 200);
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
            "{head}"
        );
        assert!(body.contains("swarm_sweep_sweeps_total{outcome=\"success\"} 0"));

        shared.gathered(&snapshot(&[], &["alpha"]), Duration::from_millis(20));
        // The snapshot reads back as the one gathered: `plan --snapshot`
        // takes it as it is.
        let (status, head, body) = get(addr, "/snapshot").await;
        assert_eq!(status, 200);
        assert!(head.to_ascii_lowercase().contains("application/json"));
        assert_eq!(
            Snapshot::from_json(&body).unwrap(),
            snapshot(&[], &["alpha"])
        );
        let plan = sweep_core::plan(&snapshot(&[], &["alpha"])).unwrap();
        shared.planned(&plan);
        let (status, head, body) = get(addr, "/plan").await;
        assert_eq!(status, 200);
        assert!(head.to_ascii_lowercase().contains("application/json"));
        let parsed: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(parsed.get("deletions").is_some(), "{body}");
        let (status, _, body) = get(addr, "/readyz").await;
        assert_eq!(status, 200, "{body}");
        let (_, _, body) = get(addr, "/metrics").await;
        assert!(
            body.contains("swarm_sweep_gather_duration_seconds_count 1"),
            "{body}"
        );
        shared.finished(
            super::super::metrics::SweepOutcome::Success,
            Duration::from_secs(1),
            SystemTime::now(),
        );
        let (_, _, body) = get(addr, "/metrics").await;
        assert!(
            body.contains("swarm_sweep_sweeps_total{outcome=\"success\"} 1"),
            "{body}"
        );
    }

    #[tokio::test]
    async fn readyz_names_the_unreadable_swarms_escaped() {
        let (addr, shared) = started().await;
        shared.gathered(
            &snapshot(&["beta", "evil\nready: yes\u{1b}[2J"], &["alpha"]),
            Duration::ZERO,
        );
        let (status, _, body) = get(addr, "/readyz").await;
        assert_eq!(status, 503);
        let lines: Vec<&str> = body.lines().collect();
        assert_eq!(lines.len(), 3, "{body}");
        assert!(lines.contains(&"beta"), "{body}");
        assert!(!body.contains('\u{1b}'), "{body}");
        assert!(
            lines.iter().any(|l| l.starts_with("evil\\u{a}ready")),
            "{body}"
        );
        assert!(!lines.contains(&"alpha"));
    }

    #[tokio::test]
    async fn only_get() {
        let (addr, _) = started().await;
        for method in ["POST", "PUT", "DELETE", "HEAD"] {
            let reply = raw(
                addr,
                format!("{method} /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n")
                    .as_bytes(),
            )
            .await;
            assert!(reply.starts_with("HTTP/1.1 405"), "{method}: {reply}");
            assert!(reply.to_ascii_lowercase().contains("allow: get"), "{reply}");
        }
    }

    #[tokio::test]
    async fn an_oversized_head_is_refused_and_the_server_goes_on() {
        let (addr, _) = started().await;
        let big = format!(
            "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n",
            "a".repeat(64 * 1024)
        );
        let mut stream = TcpStream::connect(addr).await.unwrap();
        // The server may close before all of it is written.
        let _ = stream.write_all(big.as_bytes()).await;
        let mut reply = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut reply))
            .await
            .expect("closed, not left open");
        let reply = String::from_utf8_lossy(&reply);
        assert!(
            reply.is_empty() || reply.starts_with("HTTP/1.1 431"),
            "{reply}"
        );
        let many: String = (0..100).map(|i| format!("X-H{i}: v\r\n")).collect();
        let reply = raw(
            addr,
            format!("GET /healthz HTTP/1.1\r\nHost: t\r\n{many}\r\n").as_bytes(),
        )
        .await;
        assert!(!reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert_eq!(get(addr, "/healthz").await.0, 200);
    }

    /// A connection to `addr` from the loopback address `from`.
    async fn connect_from(from: &str, addr: SocketAddr) -> TcpStream {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket
            .bind(SocketAddr::new(from.parse().unwrap(), 0))
            .unwrap();
        socket.connect(addr).await.unwrap()
    }

    /// Reads until the server closes, within `limit`: how long it took.
    async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
        let began = Instant::now();
        let mut rest = Vec::new();
        tokio::time::timeout(limit, stream.read_to_end(&mut rest))
            .await
            .ok()
            .map(|_| began.elapsed())
    }

    #[tokio::test]
    async fn slow_clients_do_not_block_others() {
        let (addr, _) = started().await;
        // Clients that connect and send half a head, then nothing.
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS_PER_ADDRESS {
            let mut s = connect_from("127.0.0.2", addr).await;
            s.write_all(b"GET /metr").await.unwrap();
            idle.push(s);
        }
        let began = Instant::now();
        assert_eq!(get(addr, "/healthz").await.0, 200);
        assert!(began.elapsed() < Duration::from_secs(2));
        // A slow client is cut off by the head timeout.
        let mut slow = idle.pop().unwrap();
        let waited = closed_within(&mut slow, HEAD_TIMEOUT + Duration::from_secs(5)).await;
        assert!(waited.is_some(), "a silent client is disconnected");
    }

    #[tokio::test]
    async fn one_address_holds_at_most_its_share_of_the_slots() {
        let (addr, _) = started().await;
        let mut held = Vec::new();
        for _ in 0..MAX_CONNECTIONS_PER_ADDRESS {
            let mut s = connect_from("127.0.0.2", addr).await;
            s.write_all(b"G").await.unwrap();
            held.push(s);
        }
        // One more from that address is closed unanswered at once, not
        // left to wait for its head...
        let mut extra = connect_from("127.0.0.2", addr).await;
        let closed = closed_within(&mut extra, Duration::from_secs(2)).await;
        assert!(closed.is_some(), "the extra connection is left open");
        // ...while another address is served, and the address gets its
        // slots back as its connections end.
        assert_eq!(get(addr, "/healthz").await.0, 200);
        held.clear();
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let mut s = connect_from("127.0.0.2", addr).await;
            s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
                .await
                .unwrap();
            let mut reply = Vec::new();
            let _ = s.read_to_end(&mut reply).await;
            if reply.starts_with(b"HTTP/1.1 200") {
                break;
            }
            assert!(
                Instant::now() < until,
                "the address's slots never came back"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn a_head_trickled_a_byte_at_a_time_is_cut_off_at_the_head_timeout() {
        let (addr, _) = started().await;
        let began = Instant::now();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let head =
            b"GET /healthz HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        // A byte every 200 ms never lets a per-byte timer run out; the
        // deadline of the whole head does.
        for byte in head.iter() {
            if stream.write_all(&[*byte]).await.is_err() {
                break;
            }
            let mut one = [0u8; 1];
            match tokio::time::timeout(Duration::from_millis(200), stream.read(&mut one)).await {
                Err(_) => {}
                Ok(_) => break,
            }
            assert!(
                began.elapsed() < HEAD_TIMEOUT + Duration::from_secs(3),
                "still open"
            );
        }
        let took = began.elapsed();
        assert!(
            took >= HEAD_TIMEOUT - Duration::from_millis(500),
            "{took:?}"
        );
        assert!(took < HEAD_TIMEOUT + Duration::from_secs(3), "{took:?}");
    }

    #[test]
    fn admission_caps_each_address_and_the_whole() {
        let admission = Admission::default();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        let mut slots: Vec<Slot> = (0..MAX_CONNECTIONS_PER_ADDRESS - 1)
            .map(|_| admission.admit(a).unwrap())
            .collect();
        // The same client over IPv6-mapped IPv4 is the same address.
        slots.push(admission.admit(mapped).unwrap());
        assert_eq!(admission.admit(a).unwrap_err(), Refused::AddressFull(a));
        assert_eq!(
            admission.admit(mapped).unwrap_err(),
            Refused::AddressFull(a)
        );
        slots.pop();
        slots.push(admission.admit(a).unwrap());
        // Clients from many other addresses fill all but the slots kept
        // for loopback...
        let remote = MAX_CONNECTIONS - KEPT_FOR_LOOPBACK;
        for i in MAX_CONNECTIONS_PER_ADDRESS..remote {
            let other = IpAddr::from([10, 0, (i / 250) as u8, (i % 250) as u8]);
            slots.push(admission.admit(other).unwrap());
        }
        let late: IpAddr = "198.51.100.7".parse().unwrap();
        assert_eq!(admission.admit(late).unwrap_err(), Refused::KeptForLoopback);
        // Another loopback address, which a client of the same network
        // namespace may bind, is no probe's.
        let bound: IpAddr = "127.0.0.2".parse().unwrap();
        assert_eq!(
            admission.admit(bound).unwrap_err(),
            Refused::KeptForLoopback
        );
        // ...which the probe from 127.0.0.1 (or ::1) still finds.
        for i in 0..KEPT_FOR_LOOPBACK {
            let local: IpAddr = if i % 2 == 0 {
                "127.0.0.1".parse().unwrap()
            } else {
                "::1".parse().unwrap()
            };
            slots.push(admission.admit(local).unwrap());
        }
        let local: IpAddr = "127.0.0.3".parse().unwrap();
        assert_eq!(admission.admit(local).unwrap_err(), Refused::Full);
        slots.clear();
        assert_eq!(admission.lock().total, 0);
        assert!(admission.lock().by_address.is_empty());
        assert!(admission.admit(late).is_ok());
    }
}
