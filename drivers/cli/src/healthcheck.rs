//! `swarm-sweep healthcheck`: one bounded HTTP GET of a `/healthz` on this
//! machine, for the image's healthcheck.
//!
//! The image is `FROM scratch`: it has no shell and no curl, so the binary
//! probes itself. Only loopback addresses are accepted, so a probe never
//! sends anything off the machine, and only IP literals (or `localhost`),
//! since a scratch image has no `/etc/hosts` to resolve names with.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The most of a reply read while looking for its status line: a healthy
/// endpoint answers in one short line, and a misbehaving one must not make
/// the probe hold an unbounded buffer.
const MAX_HEAD: usize = 8 * 1024;

/// Runs the probe; 0 when the endpoint answered 2xx, else 1 with the
/// reason on stderr (which Docker keeps in the container's health log).
pub fn run(url: &str, limit: Duration) -> u8 {
    match probe(url, limit) {
        Ok(status) if (200..300).contains(&status) => 0,
        Ok(status) => {
            eprintln!("swarm-sweep healthcheck: {url} answered {status}");
            1
        }
        Err(e) => {
            eprintln!("swarm-sweep healthcheck: {url}: {e}");
            1
        }
    }
}

/// What to connect to and which path to ask for.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    addr: SocketAddr,
    host: String,
    path: String,
}

/// Parses `http://HOST:PORT[/PATH]` with a loopback HOST.
fn target(url: &str) -> Result<Target, String> {
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
    Ok(Target {
        addr: SocketAddr::new(ip, port),
        host: authority.to_owned(),
        path: path.to_owned(),
    })
}

/// The status code of one GET, all of it within `limit`.
fn probe(url: &str, limit: Duration) -> Result<u16, String> {
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
    let mut head = Vec::with_capacity(256);
    let mut buf = [0u8; 1024];
    loop {
        if let Some(end) = head.windows(2).position(|w| w == b"\r\n") {
            return status(&head[..end]);
        }
        if head.len() >= MAX_HEAD {
            return Err("no status line in the reply".into());
        }
        stream
            .set_read_timeout(Some(left()?))
            .map_err(|e| e.to_string())?;
        match stream.read(&mut buf) {
            Ok(0) if head.is_empty() => return Err("the connection closed without a reply".into()),
            Ok(0) => return status(&head),
            Ok(n) => head.extend_from_slice(&buf[..n]),
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
        assert_eq!(run(&url, Duration::from_secs(5)), 0);
        let request = server.join().unwrap();
        assert!(
            request.starts_with("GET /healthz HTTP/1.0\r\n"),
            "{request}"
        );
    }

    #[test]
    fn another_status_or_no_http_is_unhealthy() {
        let (url, server) = serve(b"HTTP/1.1 503 Service Unavailable\r\n\r\n");
        assert_eq!(run(&url, Duration::from_secs(5)), 1);
        server.join().unwrap();
        let (url, server) = serve(b"SSH-2.0-nope\r\n");
        assert_eq!(run(&url, Duration::from_secs(5)), 1);
        server.join().unwrap();
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
        assert_eq!(run(&url, Duration::from_secs(2)), 1);
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
