//! `swarm-sweep healthcheck`: one bounded HTTP GET of a `/healthz` (or,
//! with `--print`, any route) of a `watch --listen` on this machine, for
//! the image's healthcheck and for a look from inside the container.
//!
//! The image is `FROM scratch`: it has no shell and no curl, so the binary
//! probes itself. Only loopback addresses are accepted, so a probe never
//! sends anything off the machine, and only IP literals (or `localhost`),
//! since a scratch image has no `/etc/hosts` to resolve names with.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use sweep_core::verdict::Status;

use sweep_core::escape::escape;

/// The most of a reply read: a `/plan` of a large swarm runs to a few
/// MiB, and a misbehaving endpoint must not make the probe hold an
/// unbounded buffer.
const MAX_REPLY: usize = 16 * 1024 * 1024;

/// Runs the probe; success (0) when the endpoint answered 2xx, else 1 with the
/// reason on stderr (which Docker keeps in the container's health log).
/// With `print`, a 2xx reply's body goes to stdout, its control
/// characters but line breaks and tabs escaped: the body names releases,
/// and a name must not drive the terminal it is read on.
pub fn run(url: &str, limit: Duration, print: bool) -> Status {
    match probe(url, limit) {
        Ok(reply) if (200..300).contains(&reply.status) => {
            if print {
                let text = String::from_utf8_lossy(&reply.body);
                let mut out = std::io::stdout().lock();
                let printed = text
                    .split_inclusive('\n')
                    .try_for_each(|line| {
                        let (line, end) = match line.strip_suffix('\n') {
                            Some(line) => (line, "\n"),
                            None => (line, ""),
                        };
                        for (i, part) in line.split('\t').enumerate() {
                            if i > 0 {
                                out.write_all(b"\t")?;
                            }
                            out.write_all(escape(part).as_bytes())?;
                        }
                        out.write_all(end.as_bytes())
                    })
                    .and_then(|()| out.flush());
                if let Err(e) = printed {
                    eprintln!("swarm-sweep healthcheck: writing the reply: {e}");
                    return Status::NeedsAttention;
                }
            }
            Status::Success
        }
        Ok(reply) => {
            eprintln!(
                "swarm-sweep healthcheck: {} answered {}",
                escape(url),
                reply.status
            );
            Status::NeedsAttention
        }
        Err(e) => {
            eprintln!("swarm-sweep healthcheck: {}: {}", escape(url), escape(&e));
            Status::NeedsAttention
        }
    }
}

/// A reply's status code and body.
#[derive(Debug)]
struct Reply {
    status: u16,
    body: Vec<u8>,
}

/// What to connect to and which path to ask for.
#[derive(Debug, PartialEq, Eq)]
struct Probe {
    addr: SocketAddr,
    host: String,
    path: String,
}

/// Parses `http://HOST:PORT[/PATH]` with a loopback HOST.
fn target(url: &str) -> Result<Probe, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("only http:// URLs are probed")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.contains('@') {
        return Err("a URL with credentials is not probed".into());
    }
    if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the path has whitespace or control characters".into());
    }
    let (host, port) = authority
        .rsplit_once(':')
        .ok_or("the URL needs a port, e.g. http://127.0.0.1:9090/healthz")?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("bad port {port:?} in the URL"))?;
    let ip: IpAddr = match host {
        "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        _ => host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| format!("{host:?} is not an IP address or localhost"))?,
    };
    if !ip.is_loopback() {
        return Err(format!("{ip} is not a loopback address"));
    }
    Ok(Probe {
        addr: SocketAddr::new(ip, port),
        host: authority.to_owned(),
        path: path.to_owned(),
    })
}

/// One GET, all of it within `limit`: the status and the body, read until
/// the server closes (the request is HTTP/1.0 with `Connection: close`).
fn probe(url: &str, limit: Duration) -> Result<Reply, String> {
    let t = target(url)?;
    let deadline = Instant::now() + limit;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("no answer within {limit:?}"))
    };
    let mut stream = TcpStream::connect_timeout(&t.addr, left()?)
        .map_err(|e| format!("cannot connect to {}: {e}", t.addr))?;
    stream
        .set_write_timeout(Some(left()?))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET {} HTTP/1.0\r\nHost: {}\r\nConnection: close\r\n\r\n",
        t.path, t.host
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("cannot send the request: {e}"))?;
    let mut reply = Vec::with_capacity(1024);
    let mut buf = [0u8; 8192];
    loop {
        stream
            .set_read_timeout(Some(left()?))
            .map_err(|e| e.to_string())?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) if reply.len() + n > MAX_REPLY => {
                return Err(format!("the reply is larger than {MAX_REPLY} bytes"))
            }
            Ok(n) => reply.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // What a read timeout reports on Unix.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!("no answer within {limit:?}"))
            }
            Err(e) => return Err(format!("reading the reply: {e}")),
        }
    }
    if reply.is_empty() {
        return Err("the connection closed without a reply".into());
    }
    let line_end = reply
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(reply.len());
    let status = status(&reply[..line_end])?;
    let body = match reply.windows(4).position(|w| w == b"\r\n\r\n") {
        Some(end) => reply.split_off(end + 4),
        None => Vec::new(),
    };
    Ok(Reply { status, body })
}

/// The code of a status line `HTTP/1.x CODE REASON`.
fn status(line: &[u8]) -> Result<u16, String> {
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_whitespace();
    match (parts.next(), parts.next().map(str::parse::<u16>)) {
        (Some(v), Some(Ok(code))) if v.starts_with("HTTP/") => Ok(code),
        _ => Err(format!("not an HTTP status line: {:?}", line.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A one-shot server on a loopback port answering `reply`; its URL.
    fn serve(reply: &'static [u8]) -> (String, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = vec![0u8; 1024];
            let n = conn.read(&mut request).unwrap();
            conn.write_all(reply).unwrap();
            String::from_utf8_lossy(&request[..n]).into_owned()
        });
        (format!("http://127.0.0.1:{port}/healthz"), handle)
    }

    #[test]
    fn a_200_is_healthy_and_the_request_asks_for_the_path() {
        let (url, server) = serve(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        assert_eq!(run(&url, Duration::from_secs(5), false), Status::Success);
        let request = server.join().unwrap();
        assert!(
            request.starts_with("GET /healthz HTTP/1.0\r\n"),
            "{request}"
        );
    }

    #[test]
    fn another_status_or_no_http_is_unhealthy() {
        let (url, server) = serve(b"HTTP/1.1 503 Service Unavailable\r\n\r\n");
        assert_eq!(
            run(&url, Duration::from_secs(5), false),
            Status::NeedsAttention
        );
        server.join().unwrap();
        let (url, server) = serve(b"SSH-2.0-nope\r\n");
        assert_eq!(
            run(&url, Duration::from_secs(5), false),
            Status::NeedsAttention
        );
        server.join().unwrap();
    }

    #[test]
    fn the_body_is_read_to_the_close_and_bounded() {
        let (url, server) =
            serve(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nline 1\nline\t2\n");
        let reply = probe(&url, Duration::from_secs(5)).unwrap();
        assert_eq!(
            (reply.status, &reply.body[..]),
            (200, &b"line 1\nline\t2\n"[..])
        );
        server.join().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/plan", listener.local_addr().unwrap());
        let endless = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let _ = conn.read(&mut [0u8; 1024]);
            let _ = conn.write_all(b"HTTP/1.1 200 OK\r\n\r\n");
            let chunk = vec![b'x'; 64 * 1024];
            while conn.write_all(&chunk).is_ok() {}
        });
        let err = probe(&url, Duration::from_secs(20)).unwrap_err();
        assert!(err.contains("larger than"), "{err}");
        endless.join().unwrap();
    }

    #[test]
    fn a_silent_endpoint_fails_within_the_limit() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/healthz", listener.local_addr().unwrap());
        let started = Instant::now();
        assert!(probe(&url, Duration::from_millis(300))
            .unwrap_err()
            .contains("within"));
        assert!(started.elapsed() < Duration::from_secs(3));
        drop(listener);
    }

    #[test]
    fn nothing_listening_is_unhealthy() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/healthz", listener.local_addr().unwrap());
        drop(listener);
        assert_eq!(
            run(&url, Duration::from_secs(2), false),
            Status::NeedsAttention
        );
    }

    #[test]
    fn the_command_is_hidden_from_help_and_the_man_page() {
        let cmd = crate::cli::command();
        let sub = cmd.find_subcommand("healthcheck").expect("healthcheck");
        assert!(sub.is_hide_set());
    }

    #[test]
    fn only_loopback_http_urls_are_probed() {
        let t = target("http://localhost:9090/healthz").unwrap();
        assert_eq!(t.addr, "127.0.0.1:9090".parse().unwrap());
        assert_eq!(t.path, "/healthz");
        assert_eq!(
            target("http://[::1]:9090").unwrap().addr,
            "[::1]:9090".parse().unwrap()
        );
        for bad in [
            "https://127.0.0.1:9090/healthz",
            "http://10.0.0.1:9090/healthz",
            "http://example.com:9090/healthz",
            "http://127.0.0.1/healthz",
            "http://u:p@127.0.0.1:9090/",
            "http://127.0.0.1:9090/a b",
        ] {
            assert!(target(bad).is_err(), "{bad} accepted");
        }
    }
}
