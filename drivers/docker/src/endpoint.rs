//! Where a Docker daemon listens: `unix:///path`, `tcp://host:port` (with
//! optional TLS files), or `ssh://[user@]host[:port]` (through the system
//! `ssh` client, as `docker -H ssh://...` reaches it).

use std::path::{Path, PathBuf};

use thiserror::Error;

/// The socket `DOCKER_HOST` means when it is unset.
pub const DEFAULT_DOCKER_HOST: &str = "unix:///var/run/docker.sock";

/// The host the docker CLI uses when `DOCKER_TLS_VERIFY` is set and
/// `DOCKER_HOST` is not.
const DEFAULT_TLS_HOST: &str = "tcp://localhost:2376";

/// Why an endpoint string was refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EndpointError {
    /// Not `unix://`, `tcp://` or `ssh://`.
    #[error("unsupported scheme {scheme:?} (use unix://, tcp:// or ssh://)")]
    UnsupportedScheme { endpoint: String, scheme: String },
    /// The scheme is right but the rest is not.
    #[error("malformed endpoint {endpoint:?}: {message}")]
    Malformed { endpoint: String, message: String },
    /// TLS files were given for a unix socket or an ssh connection, where
    /// they would be ignored and so suggest a protection that is not there.
    #[error("tls is only for tcp:// endpoints, not {endpoint:?}")]
    TlsNotTcp { endpoint: String },
    /// The URL carries a user name or password (`tcp://user:pw@host:port`),
    /// or a password (`ssh://user:pw@host`). The daemon API takes no
    /// credentials in the URL, ssh takes its own from its keys and agent,
    /// and a password there ends up in logs and error messages; `endpoint`
    /// is shown with it masked.
    #[error("refusing endpoint {endpoint:?}: credentials in an endpoint URL are not supported (use TLS client certificates, or ssh keys)")]
    Credentials { endpoint: String },
}

/// The files a TLS-protected `tcp://` endpoint is reached with.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TlsFiles {
    /// The CA that signed the daemon's certificate: the only one trusted
    /// (the system's roots are not), as with the docker CLI.
    pub ca: PathBuf,
    /// The client certificate.
    pub cert: PathBuf,
    /// The client certificate's private key.
    pub key: PathBuf,
}

impl TlsFiles {
    /// TLS with CA `ca` and client certificate `cert` / key `key`.
    pub fn new(ca: impl Into<PathBuf>, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        TlsFiles {
            ca: ca.into(),
            cert: cert.into(),
            key: key.into(),
        }
    }

    /// `ca.pem`, `cert.pem` and `key.pem` in `dir`, as `DOCKER_CERT_PATH`
    /// lays them out.
    pub fn in_dir(dir: &Path) -> Self {
        TlsFiles::new(
            dir.join("ca.pem"),
            dir.join("cert.pem"),
            dir.join("key.pem"),
        )
    }
}

/// How a daemon is reached.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Transport {
    Unix,
    Tcp,
    Tls(TlsFiles),
    Ssh(SshTarget),
}

/// Where an `ssh://` endpoint logs in: what `ssh` is given.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SshTarget {
    /// The login name; `None` leaves it to the user's ssh configuration.
    pub(crate) user: Option<String>,
    /// The host as ssh takes it: a name (or an alias of the user's ssh
    /// configuration), an IPv4 address, or an IPv6 address without
    /// brackets.
    pub(crate) host: String,
    /// The port; `None` leaves it to the user's ssh configuration.
    pub(crate) port: Option<u16>,
}

/// A checked daemon address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    url: String,
    transport: Transport,
}

impl Endpoint {
    /// Checks `url` (`unix:///absolute/path`, `tcp://host:port` or
    /// `ssh://[user@]host[:port]`) and pairs it with `tls`, which only
    /// `tcp://` takes. A `tcp://` endpoint without TLS talks plain HTTP.
    ///
    /// Refused: control characters anywhere; a query or fragment (`?`,
    /// `#`); credentials (`user:pw@` for `tcp://`, a password for `ssh://`,
    /// masked in the error); a path after a `tcp://` or `ssh://` address; a
    /// host that is not a DNS name, an IPv4 address or a bracketed IPv6
    /// address; a port that is not 1 to 65535 in digits; an ssh user name
    /// that is not a plain login name.
    pub fn parse(url: &str, tls: Option<TlsFiles>) -> Result<Self, EndpointError> {
        let malformed = |message: &str| EndpointError::Malformed {
            endpoint: url.to_owned(),
            message: message.to_owned(),
        };
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(malformed(
                "missing scheme (use unix:///path, tcp://host:port or ssh://user@host)",
            ));
        };
        // Control characters (a pasted newline, an escape sequence) are never
        // part of an address, and would garble the messages that name it.
        if url.chars().any(char::is_control) {
            return Err(malformed("contains control characters"));
        }
        let transport = match scheme {
            "unix" => {
                if !rest.starts_with('/') {
                    return Err(malformed("the socket path must be absolute"));
                }
                // `?` and `#` would be taken as a query or fragment by some
                // readers of the URL and as part of the path by others.
                if rest.contains(['?', '#']) {
                    return Err(malformed(
                        "a unix:// endpoint takes no query or fragment (`?`, `#`)",
                    ));
                }
                if tls.is_some() {
                    return Err(EndpointError::TlsNotTcp {
                        endpoint: url.to_owned(),
                    });
                }
                Transport::Unix
            }
            "tcp" => {
                let authority = rest.strip_suffix('/').unwrap_or(rest);
                if let Some((_, host)) = authority.rsplit_once('@') {
                    return Err(EndpointError::Credentials {
                        endpoint: format!("tcp://***@{host}"),
                    });
                }
                if authority.contains(['?', '#']) {
                    return Err(malformed(
                        "a tcp:// endpoint takes no query or fragment (`?`, `#`)",
                    ));
                }
                if authority.contains('/') {
                    return Err(malformed("a tcp:// endpoint takes no path"));
                }
                let Some((host, port)) = authority
                    .rsplit_once(':')
                    .filter(|_| !authority.ends_with(']'))
                else {
                    return Err(malformed("missing port (use tcp://host:port)"));
                };
                if host.is_empty() {
                    return Err(malformed("missing host"));
                }
                check_host(host).map_err(|m| malformed(&m))?;
                check_port(port).map_err(|m| malformed(&m))?;
                match tls {
                    Some(files) => Transport::Tls(files),
                    None => Transport::Tcp,
                }
            }
            "ssh" => {
                let authority = rest.strip_suffix('/').unwrap_or(rest);
                if authority.contains(['?', '#']) {
                    return Err(malformed(
                        "an ssh:// endpoint takes no query or fragment (`?`, `#`)",
                    ));
                }
                if authority.contains('/') {
                    return Err(malformed("an ssh:// endpoint takes no path"));
                }
                let (user, host_port) = match authority.rsplit_once('@') {
                    Some((user, host_port)) => (Some(user), host_port),
                    None => (None, authority),
                };
                if let Some(user) = user {
                    if user.contains(':') {
                        return Err(EndpointError::Credentials {
                            endpoint: format!("ssh://***@{host_port}"),
                        });
                    }
                    check_user(user).map_err(|m| malformed(&m))?;
                }
                // A port follows the last `:` unless that `:` is inside
                // the brackets of an IPv6 address.
                let (host, port) = match host_port.rsplit_once(':') {
                    Some((host, port)) if !host_port.ends_with(']') => (host, Some(port)),
                    _ => (host_port, None),
                };
                if host.is_empty() {
                    return Err(malformed("missing host"));
                }
                check_host(host).map_err(|m| malformed(&m))?;
                let port = match port {
                    Some(port) => Some(check_port(port).map_err(|m| malformed(&m))?),
                    None => None,
                };
                if tls.is_some() {
                    return Err(EndpointError::TlsNotTcp {
                        endpoint: url.to_owned(),
                    });
                }
                Transport::Ssh(SshTarget {
                    user: user.map(str::to_owned),
                    host: host
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .to_owned(),
                    port,
                })
            }
            other => {
                return Err(EndpointError::UnsupportedScheme {
                    endpoint: url.to_owned(),
                    scheme: other.to_owned(),
                })
            }
        };
        Ok(Endpoint {
            url: url.to_owned(),
            transport,
        })
    }

    /// The endpoint the process environment names, as the docker CLI reads
    /// it for its "default" context: `DOCKER_HOST` (default
    /// [`DEFAULT_DOCKER_HOST`]), and for `tcp://` with `DOCKER_TLS_VERIFY`
    /// set, the TLS files in `DOCKER_CERT_PATH` (default: the docker config
    /// directory, `DOCKER_CONFIG` or `~/.docker`).
    ///
    /// This ignores docker contexts; [`crate::context::resolve`] honours
    /// them, as the docker CLI does.
    pub fn from_env() -> Result<Self, EndpointError> {
        let var = |name: &str| std::env::var(name).ok();
        Endpoint::from_env_values(
            var("DOCKER_HOST").as_deref(),
            var("DOCKER_TLS_VERIFY").as_deref(),
            var("DOCKER_CERT_PATH").as_deref(),
            var("DOCKER_CONFIG").as_deref(),
            var("HOME").as_deref(),
        )
    }

    pub(crate) fn from_env_values(
        host: Option<&str>,
        tls_verify: Option<&str>,
        cert_path: Option<&str>,
        docker_config: Option<&str>,
        home: Option<&str>,
    ) -> Result<Self, EndpointError> {
        let cert_dir = match (
            cert_path.filter(|p| !p.is_empty()),
            docker_config.filter(|p| !p.is_empty()),
        ) {
            (Some(p), _) | (None, Some(p)) => PathBuf::from(p),
            (None, None) => PathBuf::from(home.unwrap_or("/")).join(".docker"),
        };
        Endpoint::from_default_values(host, tls_verify, &cert_dir)
    }

    /// The docker CLI's "default" context: `host` (`DOCKER_HOST`), with
    /// the TLS files in `cert_dir` when `tls_verify` (`DOCKER_TLS_VERIFY`) is
    /// set to anything non-empty. Like the docker CLI, TLS without a host
    /// means `tcp://localhost:2376` rather than the local socket.
    pub(crate) fn from_default_values(
        host: Option<&str>,
        tls_verify: Option<&str>,
        cert_dir: &Path,
    ) -> Result<Self, EndpointError> {
        let verify = tls_verify.is_some_and(|v| !v.is_empty());
        let host = match host.filter(|h| !h.is_empty()) {
            Some(h) => h,
            None if verify => DEFAULT_TLS_HOST,
            None => DEFAULT_DOCKER_HOST,
        };
        let tls = (verify && host.starts_with("tcp://")).then(|| TlsFiles::in_dir(cert_dir));
        Endpoint::parse(host, tls)
    }

    /// The address as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The TLS files, for a TLS-protected `tcp://` endpoint.
    pub fn tls(&self) -> Option<&TlsFiles> {
        match &self.transport {
            Transport::Tls(files) => Some(files),
            Transport::Unix | Transport::Tcp | Transport::Ssh(_) => None,
        }
    }

    pub(crate) fn transport(&self) -> &Transport {
        &self.transport
    }
}

/// Checks a port: digits only (`u16::from_str` takes a leading `+`), 1 to
/// 65535.
fn check_port(port: &str) -> Result<u16, String> {
    match port.parse::<u16>() {
        Ok(p) if p != 0 && !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => Ok(p),
        _ => Err("the port must be a number from 1 to 65535".to_owned()),
    }
}

/// Checks the login name of an `ssh://` endpoint: letters, digits, `.`,
/// `_` and `-`, not starting with `-`, at most 64 bytes. The name becomes
/// an argument of `ssh`, and one starting with `-` would be read as an
/// option; the others are what login names are made of.
fn check_user(user: &str) -> Result<(), String> {
    let ok = !user.is_empty()
        && user.len() <= 64
        && !user.starts_with('-')
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(format!("{user:?} is not an ssh login name"))
    }
}

/// Checks the host of a `tcp://` or `ssh://` endpoint: a DNS name, an IPv4 address, or
/// an IPv6 address in brackets. Anything else (spaces, `%`, a bare IPv6
/// address) is a typo or an injection, and some layer below would read it
/// differently from the operator.
fn check_host(host: &str) -> Result<(), String> {
    if let Some(inner) = host.strip_prefix('[') {
        return match inner.strip_suffix(']') {
            Some(addr) if addr.parse::<std::net::Ipv6Addr>().is_ok() => Ok(()),
            _ => Err(format!("{host:?} is not an IPv6 address in brackets")),
        };
    }
    if host.contains(':') {
        return Err(format!(
            "{host:?} is not a host name (an IPv6 address goes in brackets: [::1])"
        ));
    }
    // One trailing dot is the fully qualified spelling of the same name.
    let name = host.strip_suffix('.').unwrap_or(host);
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(format!("{host:?} is not a host name or IP address"));
    }
    Ok(())
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_unix_and_tcp() {
        let e = Endpoint::parse("unix:///run/x/docker.sock", None).unwrap();
        assert_eq!(e.url(), "unix:///run/x/docker.sock");
        assert_eq!(e.transport(), &Transport::Unix);
        let e = Endpoint::parse("tcp://10.0.0.1:2376", None).unwrap();
        assert_eq!(e.transport(), &Transport::Tcp);
        let tls = TlsFiles::new("/c/ca.pem", "/c/cert.pem", "/c/key.pem");
        let e = Endpoint::parse("tcp://[::1]:2376/", Some(tls.clone())).unwrap();
        assert_eq!(e.tls(), Some(&tls));
    }

    #[test]
    fn refuses_what_it_cannot_reach_safely() {
        assert_eq!(
            Endpoint::parse("http://h:1", None).unwrap_err().to_string(),
            "unsupported scheme \"http\" (use unix://, tcp:// or ssh://)"
        );
        assert!(matches!(
            Endpoint::parse("/var/run/docker.sock", None),
            Err(EndpointError::Malformed { .. })
        ));
        assert!(matches!(
            Endpoint::parse("unix://relative.sock", None),
            Err(EndpointError::Malformed { .. })
        ));
        assert!(matches!(
            Endpoint::parse("tcp://host", None),
            Err(EndpointError::Malformed { .. })
        ));
        assert!(matches!(
            Endpoint::parse("tcp://host:0", None),
            Err(EndpointError::Malformed { .. })
        ));
        assert!(matches!(
            Endpoint::parse("tcp://:2375", None),
            Err(EndpointError::Malformed { .. })
        ));
        assert!(matches!(
            Endpoint::parse("tcp://h:2375/v1.41", None),
            Err(EndpointError::Malformed { .. })
        ));
        assert!(matches!(
            Endpoint::parse("unix:///s", Some(TlsFiles::in_dir(Path::new("/c")))),
            Err(EndpointError::TlsNotTcp { .. })
        ));
        assert!(matches!(
            Endpoint::parse("ssh://h", Some(TlsFiles::in_dir(Path::new("/c")))),
            Err(EndpointError::TlsNotTcp { .. })
        ));
    }

    #[test]
    fn ssh_endpoints_like_the_docker_cli() {
        let target = |url: &str| match Endpoint::parse(url, None).map(|e| e.transport().clone()) {
            Ok(Transport::Ssh(t)) => (t.user, t.host, t.port),
            other => panic!("{url:?}: {other:?}"),
        };
        assert_eq!(
            target("ssh://root@10.0.0.1"),
            (Some("root".into()), "10.0.0.1".into(), None)
        );
        assert_eq!(
            target("ssh://deploy.bot@mgr-1.example.com:2222/"),
            (
                Some("deploy.bot".into()),
                "mgr-1.example.com".into(),
                Some(2222)
            )
        );
        // No user: the user's ssh configuration (or login name) decides.
        assert_eq!(target("ssh://mgr"), (None, "mgr".into(), None));
        assert_eq!(
            target("ssh://u@[fe80::1]:22"),
            (Some("u".into()), "fe80::1".into(), Some(22))
        );
        assert_eq!(
            target("ssh://u@[::1]"),
            (Some("u".into()), "::1".into(), None)
        );
        let refused = [
            "ssh://",
            "ssh://u@",
            "ssh://@h",
            "ssh://-oProxyCommand=x@h",
            "ssh://u@-oProxyCommand=x",
            "ssh://u@h:0",
            "ssh://u@h:22x",
            "ssh://u@h:",
            "ssh://u@h/path",
            "ssh://u@h?x",
            "ssh://u@h#f",
            "ssh://u v@h",
            "ssh://u;id@h",
            "ssh://u@h;id",
            "ssh://u@::1",
            "ssh://u@h\n",
        ];
        for url in refused {
            match Endpoint::parse(url, None) {
                Err(EndpointError::Malformed { endpoint, .. }) => assert_eq!(endpoint, url),
                other => panic!("{url:?}: {other:?}"),
            }
        }
        let e = Endpoint::parse("ssh://u:secret@h", None).unwrap_err();
        assert_eq!(
            e,
            EndpointError::Credentials {
                endpoint: "ssh://***@h".into()
            }
        );
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[test]
    fn environment_like_the_docker_cli() {
        let e = Endpoint::from_env_values(None, None, None, None, None).unwrap();
        assert_eq!(e.url(), DEFAULT_DOCKER_HOST);
        let e = Endpoint::from_env_values(Some(""), None, None, None, None).unwrap();
        assert_eq!(e.url(), DEFAULT_DOCKER_HOST);
        let e =
            Endpoint::from_env_values(Some("tcp://h:2376"), Some("1"), None, None, Some("/home/u"))
                .unwrap();
        assert_eq!(
            e.tls(),
            Some(&TlsFiles::in_dir(Path::new("/home/u/.docker")))
        );
        let e = Endpoint::from_env_values(
            Some("tcp://h:2376"),
            Some("1"),
            Some("/certs"),
            Some("/cfg"),
            None,
        )
        .unwrap();
        assert_eq!(e.tls().map(|t| t.ca.clone()), Some("/certs/ca.pem".into()));
        let e =
            Endpoint::from_env_values(Some("tcp://h:2375"), Some(""), None, None, None).unwrap();
        assert_eq!(e.tls(), None);
        let e = Endpoint::from_env_values(Some("unix:///s"), Some("1"), None, None, None).unwrap();
        assert_eq!(e.tls(), None);
    }

    #[test]
    fn tls_defaults_like_the_docker_cli() {
        // DOCKER_CERT_PATH unset: the docker config directory holds the files.
        let e = Endpoint::from_env_values(
            Some("tcp://h:2376"),
            Some("1"),
            Some(""),
            Some("/cfg"),
            Some("/home/u"),
        )
        .unwrap();
        assert_eq!(e.tls(), Some(&TlsFiles::in_dir(Path::new("/cfg"))));
        // DOCKER_TLS_VERIFY without DOCKER_HOST: the CLI talks to
        // tcp://localhost:2376 over TLS, not to the local socket.
        let e = Endpoint::from_env_values(None, Some("1"), None, None, Some("/home/u")).unwrap();
        assert_eq!(e.url(), "tcp://localhost:2376");
        assert!(e.tls().is_some());
    }

    #[test]
    fn endpoints_are_validated_when_parsed() {
        let refused = [
            "tcp://host with space:2376",
            "tcp://h:2376?x",
            "tcp://h:2376?x=1",
            "tcp://h:2376#f",
            "tcp://h%41:2376",
            "tcp://h\u{0}:2376",
            "tcp://h:2376\n",
            "tcp://h\u{1b}[2J:2376",
            "tcp://h;rm:2376",
            "tcp://-h:2376",
            "tcp://a..b:2376",
            "tcp://::1:2376",
            "tcp://[::1",
            "tcp://[::1]",
            "tcp://[::g]:2376",
            "tcp://h:+2376",
            "tcp://h:2376:1",
            "tcp://h: 2376",
            "unix:///s.sock?x=1",
            "unix:///s.sock#f",
            "unix:///s\nsock",
        ];
        for url in refused {
            match Endpoint::parse(url, None) {
                Err(EndpointError::Malformed { endpoint, .. }) => assert_eq!(endpoint, url),
                other => panic!("{url:?}: {other:?}"),
            }
        }
        let e = Endpoint::parse("tcp://user:pw@host:2376", None).unwrap_err();
        assert_eq!(
            e,
            EndpointError::Credentials {
                endpoint: "tcp://***@host:2376".into()
            }
        );
        // The password never reaches the message.
        assert!(!e.to_string().contains("pw"), "{e}");
        let m = Endpoint::parse("tcp://host with space:2376", None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            m,
            "malformed endpoint \"tcp://host with space:2376\": \"host with space\" is not a host name or IP address"
        );
        for ok in [
            "tcp://[::1]:2376",
            "tcp://[fe80::1]:2376/",
            "tcp://127.0.0.1:2375",
            "tcp://docker-1.example.com.:2376",
            "tcp://my_host:2376",
            "unix:///run/a b/docker.sock",
        ] {
            assert!(Endpoint::parse(ok, None).is_ok(), "{ok:?}");
        }
    }
}
