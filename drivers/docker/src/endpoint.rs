//! Where a Docker daemon listens: `unix:///path` or `tcp://host:port` (with
//! optional TLS files).

use std::path::{Path, PathBuf};

use thiserror::Error;

/// The socket `DOCKER_HOST` means when it is unset.
pub const DEFAULT_DOCKER_HOST: &str = "unix:///var/run/docker.sock";

/// Why an endpoint string was refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EndpointError {
    /// Not `unix://` or `tcp://`.
    #[error("unsupported scheme {scheme:?} (use unix:// or tcp://)")]
    UnsupportedScheme { endpoint: String, scheme: String },
    /// The scheme is right but the rest is not.
    #[error("malformed endpoint {endpoint:?}: {message}")]
    Malformed { endpoint: String, message: String },
    /// TLS files were given for a unix socket, where they would be ignored
    /// and so suggest a protection that is not there.
    #[error("tls is only for tcp:// endpoints, not {endpoint:?}")]
    TlsOnUnix { endpoint: String },
}

/// The files a TLS-protected `tcp://` endpoint is reached with.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The CA that signed the daemon's certificate (the only one trusted
    /// besides the system's roots).
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    Unix,
    Tcp,
    Tls(TlsFiles),
}

/// A checked daemon address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    url: String,
    transport: Transport,
}

impl Endpoint {
    /// Checks `url` (`unix:///absolute/path` or `tcp://host:port`) and
    /// pairs it with `tls`, which only `tcp://` takes. A `tcp://` endpoint
    /// without TLS talks plain HTTP.
    pub fn parse(url: &str, tls: Option<TlsFiles>) -> Result<Self, EndpointError> {
        let malformed = |message: &str| EndpointError::Malformed {
            endpoint: url.to_owned(),
            message: message.to_owned(),
        };
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(malformed(
                "missing scheme (use unix:///path or tcp://host:port)",
            ));
        };
        let transport = match scheme {
            "unix" => {
                if !rest.starts_with('/') {
                    return Err(malformed("the socket path must be absolute"));
                }
                if tls.is_some() {
                    return Err(EndpointError::TlsOnUnix {
                        endpoint: url.to_owned(),
                    });
                }
                Transport::Unix
            }
            "tcp" => {
                let authority = rest.strip_suffix('/').unwrap_or(rest);
                if authority.contains('/') {
                    return Err(malformed("a tcp:// endpoint takes no path"));
                }
                let Some((host, port)) = authority.rsplit_once(':') else {
                    return Err(malformed("missing port (use tcp://host:port)"));
                };
                if host.is_empty() {
                    return Err(malformed("missing host"));
                }
                if port.parse::<u16>().map_or(true, |p| p == 0) {
                    return Err(malformed("the port must be a number from 1 to 65535"));
                }
                match tls {
                    Some(files) => Transport::Tls(files),
                    None => Transport::Tcp,
                }
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
    /// it: `DOCKER_HOST` (default [`DEFAULT_DOCKER_HOST`]), and for `tcp://`
    /// with `DOCKER_TLS_VERIFY` set, the TLS files in `DOCKER_CERT_PATH`
    /// (default `~/.docker`).
    pub fn from_env() -> Result<Self, EndpointError> {
        let var = |name: &str| std::env::var(name).ok();
        Endpoint::from_env_values(
            var("DOCKER_HOST").as_deref(),
            var("DOCKER_TLS_VERIFY").as_deref(),
            var("DOCKER_CERT_PATH").as_deref(),
            var("HOME").as_deref(),
        )
    }

    pub(crate) fn from_env_values(
        host: Option<&str>,
        tls_verify: Option<&str>,
        cert_path: Option<&str>,
        home: Option<&str>,
    ) -> Result<Self, EndpointError> {
        let host = host
            .filter(|h| !h.is_empty())
            .unwrap_or(DEFAULT_DOCKER_HOST);
        let tls = match tls_verify {
            Some(v) if !v.is_empty() && host.starts_with("tcp://") => {
                let dir = match cert_path.filter(|p| !p.is_empty()) {
                    Some(p) => PathBuf::from(p),
                    None => PathBuf::from(home.unwrap_or("/")).join(".docker"),
                };
                Some(TlsFiles::in_dir(&dir))
            }
            _ => None,
        };
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
            Transport::Unix | Transport::Tcp => None,
        }
    }

    pub(crate) fn transport(&self) -> &Transport {
        &self.transport
    }
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
            "unsupported scheme \"http\" (use unix:// or tcp://)"
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
            Err(EndpointError::TlsOnUnix { .. })
        ));
    }

    #[test]
    fn environment_like_the_docker_cli() {
        let e = Endpoint::from_env_values(None, None, None, None).unwrap();
        assert_eq!(e.url(), DEFAULT_DOCKER_HOST);
        let e = Endpoint::from_env_values(Some(""), None, None, None).unwrap();
        assert_eq!(e.url(), DEFAULT_DOCKER_HOST);
        let e = Endpoint::from_env_values(Some("tcp://h:2376"), Some("1"), None, Some("/home/u"))
            .unwrap();
        assert_eq!(
            e.tls(),
            Some(&TlsFiles::in_dir(Path::new("/home/u/.docker")))
        );
        let e = Endpoint::from_env_values(Some("tcp://h:2376"), Some("1"), Some("/certs"), None)
            .unwrap();
        assert_eq!(e.tls().map(|t| t.ca.clone()), Some("/certs/ca.pem".into()));
        let e = Endpoint::from_env_values(Some("tcp://h:2375"), Some(""), None, None).unwrap();
        assert_eq!(e.tls(), None);
        let e = Endpoint::from_env_values(Some("unix:///s"), Some("1"), None, None).unwrap();
        assert_eq!(e.tls(), None);
    }
}
