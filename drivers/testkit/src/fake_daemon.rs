//! One fake Docker daemon for every test and bench that needs one (no
//! Docker engine): it listens on a unix socket or on loopback TCP (or
//! serves a connection the test opened itself, such as a TLS one), answers
//! from a table of routes, records every request and counts connections.
//!
//! Real-engine tests prove what the engine does; this daemon proves what
//! the client does with answers an engine gives rarely or never: replies
//! that never end, that come late or never, that are malformed or huge.
//!
//! Routes match the request's path without its API version prefix
//! (`/v1.41`) and its query, on whole segments (`/volumes` matches
//! `/volumes/app_data`, never `/volumesx`); the route added last wins, so a
//! test overrides the defaults (`/version`, `/_ping`) by adding its own.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::Notify;

/// What a fake daemon answers to `/version`: Docker 20.10, API 1.41.
pub const VERSION_REPLY: &str =
    r#"{"Version":"20.10.24","ApiVersion":"1.41","MinAPIVersion":"1.12","Os":"linux"}"#;

/// How a reply's body goes out.
#[derive(Clone, Debug)]
enum Body {
    /// All of it, with its length.
    Whole(String),
    /// Chunked: `first`, then chunks of spaces until the client hangs up
    /// or `cap` bytes were sent (so that a client without a bound is not
    /// taken down with the machine); the connection is closed after.
    Endless { first: String, cap: u64 },
    /// With its whole length: `first`, then `rest` once the test says so
    /// ([`FakeDaemon::go`]), so that what comes first is read before what
    /// follows.
    Held { first: String, rest: String },
    /// With its whole length: `head`, `item` `count` times, then `tail`,
    /// written as it goes, so that a reply far larger than the test's
    /// memory budget costs the daemon one item.
    Repeated {
        head: String,
        item: String,
        count: u64,
        tail: String,
    },
    /// Nothing, ever: the request is held unanswered until the client
    /// hangs up.
    Silent,
}

/// One reply of a fake daemon.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    body: Body,
    delay: Duration,
}

impl Reply {
    /// A 200 reply with this JSON body.
    pub fn json(body: impl Into<String>) -> Self {
        Self::status(200, body)
    }

    /// A reply with this status and JSON body.
    pub fn status(status: u16, body: impl Into<String>) -> Self {
        Reply {
            status,
            body: Body::Whole(body.into()),
            delay: Duration::ZERO,
        }
    }

    /// A 200 chunked reply that opens with `first` and then goes on with
    /// spaces until the client hangs up or `cap` bytes were sent.
    pub fn endless(first: impl Into<String>, cap: u64) -> Self {
        Reply {
            status: 200,
            body: Body::Endless {
                first: first.into(),
                cap,
            },
            delay: Duration::ZERO,
        }
    }

    /// A 200 reply of `first` and `rest`, `rest` sent only after
    /// [`FakeDaemon::go`].
    pub fn held(first: impl Into<String>, rest: impl Into<String>) -> Self {
        Reply {
            status: 200,
            body: Body::Held {
                first: first.into(),
                rest: rest.into(),
            },
            delay: Duration::ZERO,
        }
    }

    /// A 200 reply of `head`, then `item` `count` times, then `tail`, with
    /// its whole length: a listing of any size (`item` carries its own
    /// separator, `,{...}`), written as it goes rather than held.
    pub fn repeated(
        head: impl Into<String>,
        item: impl Into<String>,
        count: u64,
        tail: impl Into<String>,
    ) -> Self {
        Reply {
            status: 200,
            body: Body::Repeated {
                head: head.into(),
                item: item.into(),
                count,
                tail: tail.into(),
            },
            delay: Duration::ZERO,
        }
    }

    /// No reply at all: the connection stays open and silent until the
    /// client hangs up.
    pub fn silent() -> Self {
        Reply {
            status: 0,
            body: Body::Silent,
            delay: Duration::ZERO,
        }
    }

    /// This reply, `delay` late (added to the daemon's own delay).
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay += delay;
        self
    }
}

/// The replies of one route: always the same one, or a list taken in turn
/// and then a last one for ever.
#[derive(Clone, Debug)]
enum Replies {
    Always(Reply),
    InTurn(VecDeque<Reply>, Reply),
}

#[derive(Clone, Debug)]
struct Route {
    method: Option<String>,
    prefix: String,
    replies: Replies,
}

impl Route {
    fn matches(&self, method: &str, bare: &str) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
            && bare
                .strip_prefix(self.prefix.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

/// What a fake daemon answers: routes (the last added first), what it
/// answers anything else, and a delay before every reply.
#[derive(Clone, Debug)]
pub struct Routes {
    routes: Vec<Route>,
    otherwise: Reply,
    delay: Duration,
    /// The API versions answered (oldest, newest); others are refused.
    speaks: Option<((u32, u32), (u32, u32))>,
}

impl Default for Routes {
    fn default() -> Self {
        Self::new()
    }
}

impl Routes {
    /// `/version` ([`VERSION_REPLY`]) and `/_ping` answered as a daemon
    /// does, anything else 404.
    pub fn new() -> Self {
        Self::none()
            .on("/version", Reply::json(VERSION_REPLY))
            .on("/_ping", Reply::json("OK"))
    }

    /// No route at all: everything answered with 404 until routes are
    /// added or [`Routes::otherwise`] says else.
    pub fn none() -> Self {
        Routes {
            routes: Vec::new(),
            otherwise: Reply::status(404, r#"{"message":"not faked"}"#),
            delay: Duration::ZERO,
            speaks: None,
        }
    }

    /// A daemon speaking API versions `oldest` to `newest` (`"1.44"`,
    /// `"1.52"`), as its `/version` says: a request under another version
    /// is refused with 400 before any route sees it, as the engine refuses
    /// it (Docker 20.10 speaks 1.41 at most, Docker 29 1.44 at least).
    /// Requests without a version are answered.
    pub fn speaking(mut self, oldest: &str, newest: &str) -> Self {
        let version = serde_json::json!({
            "Version": "0.0.0-fake",
            "ApiVersion": newest,
            "MinAPIVersion": oldest,
            "Os": "linux",
        });
        self.speaks = parse_version(oldest).zip(parse_version(newest));
        self.on("/version", Reply::json(version.to_string()))
    }

    /// `reply` to every request (any method) on `prefix`.
    pub fn on(self, prefix: &str, reply: Reply) -> Self {
        self.route(None, prefix, Replies::Always(reply))
    }

    /// `reply` to `method` requests on `prefix`.
    pub fn on_method(self, method: &str, prefix: &str, reply: Reply) -> Self {
        self.route(Some(method), prefix, Replies::Always(reply))
    }

    /// `replies` to the requests on `prefix`, one each in turn, and `then`
    /// to every request after them.
    pub fn in_turn(self, prefix: &str, replies: Vec<Reply>, then: Reply) -> Self {
        self.route(None, prefix, Replies::InTurn(replies.into(), then))
    }

    /// `reply` to every request no route matches.
    pub fn otherwise(mut self, reply: Reply) -> Self {
        self.otherwise = reply;
        self
    }

    /// Every reply `delay` late.
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    fn route(mut self, method: Option<&str>, prefix: &str, replies: Replies) -> Self {
        self.routes.push(Route {
            method: method.map(str::to_owned),
            prefix: prefix.to_owned(),
            replies,
        });
        self
    }

    /// The reply to `method` on `path` (matched without its version and
    /// query), taking it from its route's turn.
    fn reply(&mut self, method: &str, path: &str) -> Reply {
        if let Some(refusal) = self.refusal(path) {
            return refusal.after(self.delay);
        }
        let bare = bare_path(path);
        let reply = match self
            .routes
            .iter_mut()
            .rev()
            .find(|r| r.matches(method, bare))
        {
            Some(route) => match &mut route.replies {
                Replies::Always(reply) => reply.clone(),
                Replies::InTurn(turns, then) => turns.pop_front().unwrap_or_else(|| then.clone()),
            },
            None => self.otherwise.clone(),
        };
        reply.after(self.delay)
    }

    /// The engine's refusal of `path`'s API version, when it has one this
    /// daemon does not speak.
    fn refusal(&self, path: &str) -> Option<Reply> {
        let ((oldest, newest), sent) = self.speaks.zip(path_version(path))?;
        let show = |(major, minor): (u32, u32)| format!("{major}.{minor}");
        let message = if sent > newest {
            format!(
                "client version {} is too new. Maximum supported API version is {}",
                show(sent),
                show(newest)
            )
        } else if sent < oldest {
            format!(
                "client version {} is too old. Minimum supported API version is {}, please upgrade your client to a newer version",
                show(sent),
                show(oldest)
            )
        } else {
            return None;
        };
        Some(Reply::status(
            400,
            serde_json::json!({ "message": message }).to_string(),
        ))
    }
}

/// `1.41` as (1, 41).
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The API version `path` is sent under (`/v1.41/...`), if any.
fn path_version(path: &str) -> Option<(u32, u32)> {
    let rest = path.strip_prefix("/v")?;
    parse_version(rest.split(['/', '?']).next()?)
}

/// One request a fake daemon read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `DELETE`, ...
    pub method: String,
    /// The path as sent, with its API version prefix and query.
    pub path: String,
    /// The path without API version prefix and query (what routes match).
    pub bare: String,
}

/// Connections counted: accepted so far, open now and the most open at
/// once. One counter may be shared by many daemons (to bound the
/// connections a client holds over all of them).
#[derive(Debug, Default)]
pub struct Connections {
    accepted: AtomicUsize,
    open: AtomicUsize,
    peak: AtomicUsize,
}

impl Connections {
    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Connections open now: accepted, and not yet closed by either side.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// The most connections open at once so far.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    fn opened(&self) {
        self.accepted.fetch_add(1, Ordering::SeqCst);
        let now = self.open.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }

    fn closed(&self) {
        self.open.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Inner {
    routes: Mutex<Routes>,
    requests: Mutex<Vec<Request>>,
    own: Arc<Connections>,
    shared: Option<Arc<Connections>>,
    go: Notify,
}

/// A fake Docker daemon; clones are the same daemon.
#[derive(Clone)]
pub struct FakeDaemon {
    inner: Arc<Inner>,
}

impl FakeDaemon {
    /// A daemon answering from `routes`; it listens once told where.
    pub fn new(routes: Routes) -> Self {
        Self::build(routes, None)
    }

    /// A daemon answering from `routes` whose connections are counted in
    /// `shared` too.
    pub fn counted_in(routes: Routes, shared: Arc<Connections>) -> Self {
        Self::build(routes, Some(shared))
    }

    fn build(routes: Routes, shared: Option<Arc<Connections>>) -> Self {
        FakeDaemon {
            inner: Arc::new(Inner {
                routes: Mutex::new(routes),
                requests: Mutex::new(Vec::new()),
                own: Arc::new(Connections::default()),
                shared,
                go: Notify::new(),
            }),
        }
    }

    /// Serves on a new unix socket at `socket` (on the current tokio
    /// runtime); returns its endpoint, `unix://<socket>`.
    pub fn listen_unix(&self, socket: &Path) -> String {
        let listener = UnixListener::bind(socket).expect("bind a fake daemon socket");
        let daemon = self.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let daemon = daemon.clone();
                tokio::spawn(async move { daemon.serve(stream).await });
            }
        });
        format!("unix://{}", socket.display())
    }

    /// Serves on a new TCP port of 127.0.0.1 (loopback only: tests never
    /// send traffic off the machine); returns its port.
    pub async fn listen_tcp(&self) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let port = listener.local_addr().expect("a bound port").port();
        let daemon = self.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let daemon = daemon.clone();
                tokio::spawn(async move { daemon.serve(stream).await });
            }
        });
        port
    }

    /// Serves one connection, request after request, until either side
    /// closes it; for connections the test accepts itself (TLS).
    pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(&self, stream: S) {
        let counters: Vec<&Connections> = std::iter::once(&*self.inner.own)
            .chain(self.inner.shared.as_deref())
            .collect();
        counters.iter().for_each(|c| c.opened());
        self.answer(BufReader::new(stream)).await;
        counters.iter().for_each(|c| c.closed());
    }

    async fn answer<S: AsyncRead + AsyncWrite + Unpin>(&self, mut stream: BufReader<S>) {
        while let Some(request) = read_request(&mut stream).await {
            let reply = self
                .inner
                .routes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .reply(&request.method, &request.path);
            self.inner
                .requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(request);
            tokio::time::sleep(reply.delay).await;
            if !self.write(&mut stream, reply).await {
                return;
            }
        }
    }

    /// Writes `reply`; whether the connection can take another request.
    async fn write<S: AsyncRead + AsyncWrite + Unpin>(
        &self,
        stream: &mut BufReader<S>,
        reply: Reply,
    ) -> bool {
        let status = reply.status;
        let reason = match status {
            200 => "OK",
            400 => "Bad Request",
            404 => "Not Found",
            409 => "Conflict",
            500 => "Internal Server Error",
            _ => "Status",
        };
        let stream = stream.get_mut();
        let whole = |len: usize| {
            format!("HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n")
        };
        match reply.body {
            Body::Whole(body) => {
                let reply = whole(body.len()) + &body;
                stream.write_all(reply.as_bytes()).await.is_ok() && stream.flush().await.is_ok()
            }
            Body::Held { first, rest } => {
                let start = whole(first.len() + rest.len()) + &first;
                if stream.write_all(start.as_bytes()).await.is_err()
                    || stream.flush().await.is_err()
                {
                    return false;
                }
                self.inner.go.notified().await;
                stream.write_all(rest.as_bytes()).await.is_ok() && stream.flush().await.is_ok()
            }
            Body::Repeated {
                head,
                item,
                count,
                tail,
            } => {
                let length = (head.len() + tail.len()) as u64 + item.len() as u64 * count;
                let start = format!(
                    "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n{head}"
                );
                if stream.write_all(start.as_bytes()).await.is_err() {
                    return false;
                }
                for _ in 0..count {
                    if stream.write_all(item.as_bytes()).await.is_err() {
                        return false;
                    }
                }
                stream.write_all(tail.as_bytes()).await.is_ok() && stream.flush().await.is_ok()
            }
            Body::Endless { first, cap } => {
                let mut start = format!(
                    "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                );
                if !first.is_empty() {
                    start.push_str(&format!("{:x}\r\n{first}\r\n", first.len()));
                }
                if stream.write_all(start.as_bytes()).await.is_err() {
                    return false;
                }
                let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
                let mut sent = 0u64;
                while sent < cap && stream.write_all(chunk.as_bytes()).await.is_ok() {
                    sent += 0x10000;
                }
                false
            }
            Body::Silent => {
                // Say nothing; notice when the client gives up.
                let mut sink = [0u8; 1024];
                while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
                false
            }
        }
    }

    /// Sends the rest of the oldest [`Reply::held`] reply waiting for it
    /// (or of the next one, when none waits yet).
    pub fn go(&self) {
        self.inner.go.notify_one();
    }

    /// Every request read so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.inner
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// This daemon's own connection counts (not those of a shared counter).
    pub fn connections(&self) -> &Connections {
        &self.inner.own
    }
}

/// `path` without its API version prefix (`/v1.41`) and query.
pub fn bare_path(path: &str) -> &str {
    let path = path.split('?').next().unwrap_or(path);
    match path.strip_prefix("/v") {
        Some(rest)
            if rest.split('/').next().is_some_and(|v| {
                !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            }) =>
        {
            rest.find('/').map_or(path, |i| &rest[i..])
        }
        _ => path,
    }
}

/// The next request's head (its body, by its length, read and dropped);
/// `None` once the client hangs up or sends something that is no request.
async fn read_request<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut BufReader<S>,
) -> Option<Request> {
    let mut first = String::new();
    let mut length = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = stream.read_until(b'\n', &mut line).await.ok()?;
        if n == 0 || line.len() > 64 * 1024 {
            return None;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        if first.is_empty() {
            first = text.to_owned();
        } else if let Some((name, value)) = text.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
    let mut body = stream.take(length);
    tokio::io::copy(&mut body, &mut tokio::io::sink())
        .await
        .ok()?;
    let mut words = first.split_whitespace();
    let method = words.next()?.to_owned();
    let path = words.next()?.to_owned();
    Some(Request {
        method,
        bare: bare_path(&path).to_owned(),
        path,
    })
}

/// The routes of the daemon of swarm node `node_id` (hostname `hostname`):
/// its information, and empty listings of stack objects, volumes and
/// containers.
pub fn swarm_node(node_id: &str, hostname: &str) -> Routes {
    let info = serde_json::json!({ "Name": hostname, "Swarm": { "NodeID": node_id } });
    Routes::new()
        .on("/configs", Reply::json("[]"))
        .on("/services", Reply::json("[]"))
        .on("/networks", Reply::json("[]"))
        .on("/secrets", Reply::json("[]"))
        .on("/containers/json", Reply::json("[]"))
        .on("/volumes", Reply::json(r#"{"Volumes":[],"Warnings":null}"#))
        .on("/info", Reply::json(info.to_string()))
}

/// The routes of a manager, node `node_id`, of cluster `cluster`, whose
/// node list is `members` (id, hostname), each ready; its node list
/// `node_list_delay` late.
pub fn swarm_manager(
    node_id: &str,
    hostname: &str,
    cluster: &str,
    members: &[(String, String)],
    node_list_delay: Duration,
) -> Routes {
    let list: Vec<serde_json::Value> = members
        .iter()
        .map(|(id, host)| {
            serde_json::json!({
                "ID": id,
                "Description": { "Hostname": host },
                "Status": { "State": "ready" },
            })
        })
        .collect();
    swarm_node(node_id, hostname)
        .on(
            "/swarm",
            Reply::json(serde_json::json!({ "ID": cluster }).to_string()),
        )
        .on(
            "/nodes",
            Reply::json(serde_json::Value::Array(list).to_string()).after(node_list_delay),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemon_refuses_versions_it_does_not_speak_as_the_engine_does() {
        let mut routes = Routes::new()
            .on("/info", Reply::json("{}"))
            .speaking("1.44", "1.52");
        let status = |r: Reply| r.status;
        assert_eq!(status(routes.reply("GET", "/v1.44/info")), 200);
        assert_eq!(status(routes.reply("GET", "/v1.52/info?x=1")), 200);
        assert_eq!(status(routes.reply("GET", "/info")), 200);
        let old = routes.reply("GET", "/v1.41/info");
        assert_eq!(old.status, 400);
        assert!(
            matches!(&old.body, Body::Whole(b) if b.contains("client version 1.41 is too old"))
        );
        let new = routes.reply("GET", "/v1.53/info");
        assert!(
            matches!(&new.body, Body::Whole(b) if b.contains("client version 1.53 is too new"))
        );
        let version = routes.reply("GET", "/version");
        assert!(matches!(&version.body, Body::Whole(b) if b.contains(r#""MinAPIVersion":"1.44""#)));
    }

    #[test]
    fn bare_paths_lose_their_version_and_query_only() {
        assert_eq!(bare_path("/v1.41/configs?filters=x"), "/configs");
        assert_eq!(bare_path("/version"), "/version");
        assert_eq!(bare_path("/volumes/v1"), "/volumes/v1");
        assert_eq!(bare_path("/v1.41/volumes/v1?force=false"), "/volumes/v1");
    }

    #[test]
    fn routes_match_whole_segments_and_the_last_added_wins() {
        let mut routes = Routes::new()
            .on("/volumes", Reply::json("a"))
            .on_method("DELETE", "/volumes", Reply::status(409, "b"))
            .in_turn("/events", vec![Reply::json("1")], Reply::json("2"));
        let body = |r: Reply| match r.body {
            Body::Whole(b) => (r.status, b),
            other => panic!("{other:?}"),
        };
        assert_eq!(body(routes.reply("GET", "/volumes")), (200, "a".into()));
        assert_eq!(
            body(routes.reply("DELETE", "/volumes/x")),
            (409, "b".into())
        );
        assert_eq!(body(routes.reply("GET", "/volumesx")).0, 404);
        assert_eq!(body(routes.reply("GET", "/events")).1, "1");
        assert_eq!(body(routes.reply("GET", "/events")).1, "2");
        assert_eq!(body(routes.reply("GET", "/events")).1, "2");
        assert_eq!(body(routes.reply("GET", "/version")).1, VERSION_REPLY);
    }

    #[tokio::test]
    async fn requests_are_recorded_and_connections_counted() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("d.sock");
        let daemon = FakeDaemon::new(Routes::new().on("/info", Reply::json("{}")));
        daemon.listen_unix(&socket);
        let mut stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
        stream
            .write_all(b"POST /v1.41/info?x=1 HTTP/1.1\r\nHost: d\r\nContent-Length: 3\r\n\r\nabcGET /nope HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        let mut seen = String::new();
        while !seen.contains("not faked") {
            let mut buf = [0u8; 1024];
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "{seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        assert!(seen.starts_with("HTTP/1.1 200 OK\r\n"), "{seen}");
        let requests = daemon.requests();
        assert_eq!(
            requests
                .iter()
                .map(|r| (r.method.as_str(), r.bare.as_str()))
                .collect::<Vec<_>>(),
            [("POST", "/info"), ("GET", "/nope")]
        );
        assert_eq!(requests[0].path, "/v1.41/info?x=1");
        assert_eq!(daemon.connections().accepted(), 1);
        assert_eq!(daemon.connections().open(), 1);
        drop(stream);
        for _ in 0..100 {
            if daemon.connections().open() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(daemon.connections().open(), 0);
        assert_eq!(daemon.connections().peak(), 1);
    }
}
