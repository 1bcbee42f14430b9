//! Which daemon "the local swarm" is: docker contexts, resolved exactly as
//! the docker CLI resolves them.
//!
//! An operator who ran `docker context use prod` expects `docker stack ls`
//! and this tool to see the same swarm. Ignoring the context would sweep
//! whatever `/var/run/docker.sock` happens to be: the wrong swarm.
//!
//! The name is chosen in the docker CLI's order (`resolveContextName` in
//! docker/cli `cli/command/cli.go`):
//!
//! 1. an explicit name (the `--context` flag);
//! 2. `default` when `DOCKER_HOST` is set and non-empty;
//! 3. `DOCKER_CONTEXT`, when non-empty;
//! 4. `currentContext` in `<config dir>/config.json`, when non-empty;
//! 5. `default`.
//!
//! `default` always means the docker CLI's default endpoint: `DOCKER_HOST`
//! (or the local socket), with `DOCKER_TLS_VERIFY` / `DOCKER_CERT_PATH`
//! (see [`Endpoint::from_env`]). An explicit name wins over `DOCKER_HOST`, as
//! in the docker CLI; [`Resolved::ignored_docker_host`] says when that
//! happened so the caller can say so.
//!
//! Any other name is looked up in the context store (docker/cli
//! `cli/context/store`): `<config dir>/contexts/meta/<sha256 of the
//! name>/meta.json` holds `{"Name": ..., "Endpoints": {"docker": {"Host":
//! ..., "SkipTLSVerify": ...}}}`, and the endpoint's TLS material is in
//! `<config dir>/contexts/tls/<sha256 of the name>/docker/{ca,cert,key}.pem`.
//! The config dir is `DOCKER_CONFIG`, else `~/.docker`.
//!
//! Where the docker CLI would carry on with a guess, this refuses: a
//! context that does not exist (the docker CLI fails too), an unreadable or
//! malformed `config.json` (the docker CLI warns and falls back to the
//! default endpoint, which may be another swarm), a context without a docker
//! host (the docker CLI uses the local socket), TLS material that is not
//! all three of `ca.pem`, `cert.pem` and `key.pem`, and `SkipTLSVerify`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::endpoint::{Endpoint, EndpointError, TlsFiles};
use crate::files::{
    read_limited, read_regular_limited, Accept, ReadFailure, CONFIG_LIMIT, TLS_FILE_LIMIT,
};

/// The context name that always means the default endpoint.
pub const DEFAULT_CONTEXT: &str = "default";

/// Where the context name came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContextSource {
    /// Named by the caller (the `--context` flag).
    Explicit,
    /// `DOCKER_HOST` is set, which selects the default context.
    DockerHost,
    /// The `DOCKER_CONTEXT` environment variable.
    DockerContextVar,
    /// `currentContext` in the docker config file `file`.
    ConfigFile {
        /// The `config.json` that named it.
        file: PathBuf,
    },
    /// Nothing named a context.
    Unset,
}

impl fmt::Display for ContextSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContextSource::Explicit => f.write_str("--context"),
            ContextSource::DockerHost => f.write_str("DOCKER_HOST"),
            ContextSource::DockerContextVar => f.write_str("DOCKER_CONTEXT"),
            ContextSource::ConfigFile { file } => {
                write!(f, "currentContext in {}", file.display())
            }
            ContextSource::Unset => f.write_str("no context configured"),
        }
    }
}

/// The daemon a context name resolved to.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The context's name (`default` for the default endpoint).
    pub name: String,
    /// Where the name came from.
    pub source: ContextSource,
    /// The daemon to talk to.
    pub endpoint: Endpoint,
    /// `DOCKER_HOST`, when it was set but an explicit context won over it
    /// (as in the docker CLI); worth a warning, since the operator may
    /// think `DOCKER_HOST` is in effect.
    pub ignored_docker_host: Option<String>,
}

/// Why no daemon could be chosen. Every variant names the context and where
/// its name came from, or the file or variable at fault.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ContextError {
    /// An environment variable is not valid Unicode, so what it names
    /// cannot be known.
    #[error("{variable}: not valid Unicode")]
    NotUnicode {
        /// The variable.
        variable: String,
    },
    /// The docker config file exists but cannot be read or is not the JSON
    /// object the docker CLI writes; the context it names is unknown.
    #[error("{}: {message}", file.display())]
    ConfigFile {
        /// The `config.json`.
        file: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// No context of that name exists.
    #[error("docker context {name:?} (from {from}) does not exist ({} not found)", meta.display())]
    Unknown {
        /// The context name.
        name: String,
        /// Where the name came from.
        from: ContextSource,
        /// Where its metadata would be.
        meta: PathBuf,
    },
    /// The context's metadata or TLS material cannot be read or makes no
    /// sense.
    #[error("docker context {name:?} (from {from}): {}: {message}", file.display())]
    Store {
        /// The context name.
        name: String,
        /// Where the name came from.
        from: ContextSource,
        /// The file at fault.
        file: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The context's TLS directory lacks some of the files a TLS connection
    /// needs; connecting without them would be a weaker connection than the
    /// context describes.
    #[error(
        "docker context {name:?} (from {from}): {} lacks {}: swarm-sweep needs ca.pem, cert.pem and key.pem",
        dir.display(),
        missing.join(", ")
    )]
    IncompleteTls {
        /// The context name.
        name: String,
        /// Where the name came from.
        from: ContextSource,
        /// The context's TLS directory.
        dir: PathBuf,
        /// The files not there.
        missing: Vec<String>,
    },
    /// The context turns TLS verification off.
    #[error(
        "docker context {name:?} (from {from}) sets SkipTLSVerify for {host}: refused, because swarm-sweep never talks to a daemon whose certificate it cannot verify (give the context the daemon's CA instead)"
    )]
    SkipTlsVerify {
        /// The context name.
        name: String,
        /// Where the name came from.
        from: ContextSource,
        /// The context's docker host.
        host: String,
    },
    /// The context's docker endpoint (or, for `default`, `DOCKER_HOST`) is
    /// not one this tool can reach safely.
    #[error("docker context {name:?} (from {from}): {error}")]
    Endpoint {
        /// The context name.
        name: String,
        /// Where the name came from.
        from: ContextSource,
        /// Why the endpoint was refused.
        error: EndpointError,
    },
}

/// The process environment the resolution reads, as values, so that it can
/// be tested without touching the process's own.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextEnv {
    /// `DOCKER_HOST`.
    pub docker_host: Option<String>,
    /// `DOCKER_CONTEXT`.
    pub docker_context: Option<String>,
    /// `DOCKER_TLS_VERIFY`.
    pub docker_tls_verify: Option<String>,
    /// `DOCKER_CERT_PATH`.
    pub docker_cert_path: Option<String>,
    /// `DOCKER_CONFIG`.
    pub docker_config: Option<String>,
    /// The home directory.
    pub home: Option<PathBuf>,
}

impl ContextEnv {
    /// The current process's environment. A variable that is set but not
    /// Unicode is an error rather than "unset": unset would mean another
    /// daemon.
    pub fn from_process() -> Result<Self, ContextError> {
        let var = |name: &str| match std::env::var(name) {
            Ok(v) => Ok(Some(v)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(ContextError::NotUnicode {
                variable: name.to_owned(),
            }),
        };
        Ok(ContextEnv {
            docker_host: var("DOCKER_HOST")?,
            docker_context: var("DOCKER_CONTEXT")?,
            docker_tls_verify: var("DOCKER_TLS_VERIFY")?,
            docker_cert_path: var("DOCKER_CERT_PATH")?,
            docker_config: var("DOCKER_CONFIG")?,
            // HOME, else the user database, as the docker CLI does.
            home: std::env::home_dir(),
        })
    }

    /// The docker config directory: `DOCKER_CONFIG`, else `~/.docker`.
    pub fn config_dir(&self) -> Option<PathBuf> {
        match self.docker_config.as_deref().filter(|d| !d.is_empty()) {
            Some(dir) => Some(PathBuf::from(dir)),
            None => self.home.as_ref().map(|h| h.join(".docker")),
        }
    }
}

/// Resolves the context named by `explicit` (the `--context` flag; `None`
/// or empty when not given), else by the process environment and docker
/// config, to the daemon to talk to. See the module documentation for the
/// order.
pub fn resolve(explicit: Option<&str>) -> Result<Resolved, ContextError> {
    resolve_in(explicit, &ContextEnv::from_process()?)
}

/// [`resolve`] against the environment values `env`.
pub fn resolve_in(explicit: Option<&str>, env: &ContextEnv) -> Result<Resolved, ContextError> {
    let non_empty = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    let docker_host = non_empty(&env.docker_host);
    let (name, from) = if let Some(name) = explicit.filter(|n| !n.is_empty()) {
        (name.to_owned(), ContextSource::Explicit)
    } else if docker_host.is_some() {
        (DEFAULT_CONTEXT.to_owned(), ContextSource::DockerHost)
    } else if let Some(name) = non_empty(&env.docker_context) {
        (name, ContextSource::DockerContextVar)
    } else {
        match current_context(env.config_dir().as_deref())? {
            Some((name, file)) => (name, ContextSource::ConfigFile { file }),
            None => (DEFAULT_CONTEXT.to_owned(), ContextSource::Unset),
        }
    };
    let endpoint = if name == DEFAULT_CONTEXT {
        // DOCKER_CERT_PATH, else the config dir, as the docker CLI does.
        let cert_dir = non_empty(&env.docker_cert_path)
            .map(PathBuf::from)
            .or_else(|| env.config_dir())
            .unwrap_or_else(|| PathBuf::from("/.docker"));
        Endpoint::from_default_values(
            env.docker_host.as_deref(),
            env.docker_tls_verify.as_deref(),
            &cert_dir,
        )
        .map_err(|error| ContextError::Endpoint {
            name: name.clone(),
            from: from.clone(),
            error,
        })?
    } else {
        from_store(&name, &from, env.config_dir().as_deref())?
    };
    let ignored_docker_host = match from {
        ContextSource::Explicit if name != DEFAULT_CONTEXT => docker_host,
        _ => None,
    };
    Ok(Resolved {
        name,
        source: from,
        endpoint,
        ignored_docker_host,
    })
}

/// The store's directory name for context `name`: the hex SHA-256 of the
/// name (docker/cli `contextdirOf`, `digest.FromString(name).Encoded()`).
fn context_dir(name: &str) -> String {
    Sha256::digest(name.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `key` of a JSON object, matched as Go's `encoding/json` matches struct
/// fields: exactly, else ignoring ASCII case.
fn field<'a>(object: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
    object.get(key).or_else(|| {
        object
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    })
}

/// `currentContext` from `<config dir>/config.json`, with the file's path;
/// `None` when there is no such file or it names no context.
fn current_context(config_dir: Option<&Path>) -> Result<Option<(String, PathBuf)>, ContextError> {
    let Some(dir) = config_dir else {
        return Ok(None);
    };
    let file = dir.join("config.json");
    let bad = |message: String| ContextError::ConfigFile {
        file: file.clone(),
        message,
    };
    match std::fs::metadata(&file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(bad(format!("cannot read: {e}"))),
        Ok(_) => {}
    }
    let text = read_limited(&file, CONFIG_LIMIT, Accept::RegularFile)
        .map_err(|e| bad(e.failure.to_string()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    let Value::Object(object) = value else {
        return Err(bad("not a JSON object".into()));
    };
    match field(&object, "currentContext") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(name)) if name.is_empty() => Ok(None),
        Some(Value::String(name)) => Ok(Some((name.clone(), file))),
        Some(_) => Err(bad("currentContext is not a string".into())),
    }
}

/// The docker endpoint of context `name` in the store under `config_dir`.
fn from_store(
    name: &str,
    from: &ContextSource,
    config_dir: Option<&Path>,
) -> Result<Endpoint, ContextError> {
    let id = context_dir(name);
    let store = config_dir
        .map(|d| d.join("contexts"))
        .unwrap_or_else(|| PathBuf::from("~/.docker/contexts"));
    let meta = store.join("meta").join(&id).join("meta.json");
    let unknown = || ContextError::Unknown {
        name: name.to_owned(),
        from: from.clone(),
        meta: meta.clone(),
    };
    let Some(_) = config_dir else {
        return Err(unknown());
    };
    let bad = |file: &Path, message: String| ContextError::Store {
        name: name.to_owned(),
        from: from.clone(),
        file: file.to_owned(),
        message,
    };
    match std::fs::metadata(&meta) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(unknown()),
        Err(e) => return Err(bad(&meta, format!("cannot read: {e}"))),
        Ok(_) => {}
    }
    let text = read_limited(&meta, CONFIG_LIMIT, Accept::RegularFile)
        .map_err(|e| bad(&meta, e.failure.to_string()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| bad(&meta, format!("not valid JSON: {e}")))?;
    let docker = value
        .as_object()
        .and_then(|o| field(o, "Endpoints"))
        .and_then(Value::as_object)
        // Endpoint names are map keys, matched exactly.
        .and_then(|endpoints| endpoints.get("docker"))
        .and_then(Value::as_object)
        .ok_or_else(|| bad(&meta, "has no docker endpoint".into()))?;
    let host = match field(docker, "Host") {
        Some(Value::String(h)) if !h.is_empty() => h.clone(),
        // The docker CLI would fall back to the local socket: another
        // daemon than the context means.
        None | Some(Value::Null) | Some(Value::String(_)) => {
            return Err(bad(&meta, "the docker endpoint has no Host".into()))
        }
        Some(_) => {
            return Err(bad(
                &meta,
                "the docker endpoint's Host is not a string".into(),
            ))
        }
    };
    let skip_verify = match field(docker, "SkipTLSVerify") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(bad(
                &meta,
                "the docker endpoint's SkipTLSVerify is not a boolean".into(),
            ))
        }
    };
    let endpoint_error = |error: EndpointError| ContextError::Endpoint {
        name: name.to_owned(),
        from: from.clone(),
        error,
    };
    // Sockets take no TLS; the docker CLI ignores TLS settings for them.
    if !host.starts_with("tcp://") {
        return Endpoint::parse(&host, None).map_err(endpoint_error);
    }
    if skip_verify {
        return Err(ContextError::SkipTlsVerify {
            name: name.to_owned(),
            from: from.clone(),
            host,
        });
    }
    let tls_dir = store.join("tls").join(&id).join("docker");
    let tls = match std::fs::metadata(&tls_dir) {
        // No TLS material: the docker CLI talks plain HTTP, and so do we.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(bad(&tls_dir, format!("cannot read: {e}"))),
        Ok(_) => Some(tls_files(name, from, &tls_dir)?),
    };
    Endpoint::parse(&host, tls).map_err(endpoint_error)
}

/// The TLS files in a context's TLS directory: all three present, small,
/// regular files, or an error.
fn tls_files(name: &str, from: &ContextSource, dir: &Path) -> Result<TlsFiles, ContextError> {
    let files = TlsFiles::in_dir(dir);
    let mut missing = Vec::new();
    for (file_name, path) in [
        ("ca.pem", &files.ca),
        ("cert.pem", &files.cert),
        ("key.pem", &files.key),
    ] {
        match read_regular_limited(path, TLS_FILE_LIMIT) {
            Ok(_) => {}
            Err(e) => match e.failure {
                ReadFailure::Io { .. }
                    if std::fs::symlink_metadata(path)
                        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) =>
                {
                    missing.push(file_name.to_owned());
                }
                failure => {
                    return Err(ContextError::Store {
                        name: name.to_owned(),
                        from: from.clone(),
                        file: path.clone(),
                        message: failure.to_string(),
                    })
                }
            },
        }
    }
    if missing.is_empty() {
        Ok(files)
    } else {
        Err(ContextError::IncompleteTls {
            name: name.to_owned(),
            from: from.clone(),
            dir: dir.to_owned(),
            missing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A docker config directory with contexts in it.
    struct Store {
        dir: tempfile::TempDir,
    }

    impl Store {
        fn new() -> Self {
            Store {
                dir: tempfile::tempdir().unwrap(),
            }
        }

        fn path(&self) -> &Path {
            self.dir.path()
        }

        fn env(&self) -> ContextEnv {
            ContextEnv {
                docker_config: Some(self.path().display().to_string()),
                home: Some(PathBuf::from("/nonexistent-home")),
                ..ContextEnv::default()
            }
        }

        fn meta(&self, name: &str, json: &str) {
            let dir = self.path().join("contexts/meta").join(context_dir(name));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("meta.json"), json).unwrap();
        }

        fn context(&self, name: &str, host: &str) {
            self.meta(
                name,
                &format!(
                    r#"{{"Name":"{name}","Metadata":{{}},"Endpoints":{{"docker":{{"Host":"{host}","SkipTLSVerify":false}}}}}}"#
                ),
            );
        }

        fn tls(&self, name: &str, files: &[&str]) -> PathBuf {
            let dir = self
                .path()
                .join("contexts/tls")
                .join(context_dir(name))
                .join("docker");
            std::fs::create_dir_all(&dir).unwrap();
            for f in files {
                std::fs::write(dir.join(f), "-----BEGIN X-----\n").unwrap();
            }
            dir
        }

        fn current(&self, name: &str) {
            std::fs::write(
                self.path().join("config.json"),
                format!(r#"{{"auths":{{}},"currentContext":"{name}"}}"#),
            )
            .unwrap();
        }
    }

    #[test]
    fn the_store_layout_is_the_docker_clis() {
        // `docker context create prod` writes contexts/meta/<this>/meta.json.
        assert_eq!(
            context_dir("default"),
            "37a8eec1ce19687d132fe29051dca629d164e2c4958ba141d5f4133a33f0688f"
        );
    }

    #[test]
    fn current_context_from_the_config_file() {
        let s = Store::new();
        s.context("prod", "tcp://prod.example:2375");
        s.current("prod");
        let r = resolve_in(None, &s.env()).unwrap();
        assert_eq!(r.name, "prod");
        assert_eq!(r.endpoint.url(), "tcp://prod.example:2375");
        assert_eq!(r.endpoint.tls(), None);
        assert_eq!(
            r.source,
            ContextSource::ConfigFile {
                file: s.path().join("config.json")
            }
        );
    }

    #[test]
    fn docker_context_variable_wins_over_the_config_file() {
        let s = Store::new();
        s.context("prod", "tcp://prod.example:2375");
        s.context("staging", "unix:///run/staging.sock");
        s.current("prod");
        let env = ContextEnv {
            docker_context: Some("staging".into()),
            ..s.env()
        };
        let r = resolve_in(None, &env).unwrap();
        assert_eq!(r.name, "staging");
        assert_eq!(r.source, ContextSource::DockerContextVar);
        assert_eq!(r.endpoint.url(), "unix:///run/staging.sock");
        // Empty means unset, as in the docker CLI.
        let env = ContextEnv {
            docker_context: Some(String::new()),
            ..s.env()
        };
        assert_eq!(resolve_in(None, &env).unwrap().name, "prod");
    }

    #[test]
    fn docker_host_selects_the_default_context() {
        let s = Store::new();
        s.context("prod", "tcp://prod.example:2375");
        s.current("prod");
        let env = ContextEnv {
            docker_host: Some("unix:///run/other.sock".into()),
            docker_context: Some("prod".into()),
            ..s.env()
        };
        let r = resolve_in(None, &env).unwrap();
        assert_eq!(r.name, "default");
        assert_eq!(r.source, ContextSource::DockerHost);
        assert_eq!(r.endpoint.url(), "unix:///run/other.sock");
        assert_eq!(r.ignored_docker_host, None);
        // An empty DOCKER_HOST is unset.
        let env = ContextEnv {
            docker_host: Some(String::new()),
            ..s.env()
        };
        assert_eq!(resolve_in(None, &env).unwrap().name, "prod");
    }

    #[test]
    fn an_explicit_context_wins_over_everything() {
        let s = Store::new();
        s.context("prod", "tcp://prod.example:2375");
        s.context("staging", "unix:///run/staging.sock");
        s.current("staging");
        let env = ContextEnv {
            docker_host: Some("unix:///run/other.sock".into()),
            docker_context: Some("staging".into()),
            ..s.env()
        };
        let r = resolve_in(Some("prod"), &env).unwrap();
        assert_eq!(r.name, "prod");
        assert_eq!(r.source, ContextSource::Explicit);
        assert_eq!(r.endpoint.url(), "tcp://prod.example:2375");
        assert_eq!(
            r.ignored_docker_host.as_deref(),
            Some("unix:///run/other.sock")
        );
        // An explicit "default" is the default endpoint, DOCKER_HOST included.
        let r = resolve_in(Some("default"), &env).unwrap();
        assert_eq!(r.endpoint.url(), "unix:///run/other.sock");
        assert_eq!(r.ignored_docker_host, None);
        // An empty flag is no flag.
        assert_eq!(resolve_in(Some(""), &env).unwrap().name, "default");
    }

    #[test]
    fn default_means_the_default_endpoint() {
        let s = Store::new();
        // Nothing configured.
        let r = resolve_in(None, &s.env()).unwrap();
        assert_eq!(r.name, "default");
        assert_eq!(r.source, ContextSource::Unset);
        assert_eq!(r.endpoint.url(), crate::DEFAULT_DOCKER_HOST);
        // A config file naming "default", even with a context stored under
        // that name, is the default endpoint.
        s.context("default", "tcp://evil.example:2375");
        s.current("default");
        let r = resolve_in(None, &s.env()).unwrap();
        assert_eq!(r.endpoint.url(), crate::DEFAULT_DOCKER_HOST);
        // With DOCKER_TLS_VERIFY, the certificates are in the config dir.
        let env = ContextEnv {
            docker_host: Some("tcp://h:2376".into()),
            docker_tls_verify: Some("1".into()),
            ..s.env()
        };
        let r = resolve_in(None, &env).unwrap();
        assert_eq!(r.endpoint.tls(), Some(&TlsFiles::in_dir(s.path())));
        // A config file without currentContext, or an empty one.
        std::fs::write(s.path().join("config.json"), r#"{"auths":{}}"#).unwrap();
        assert_eq!(
            resolve_in(None, &s.env()).unwrap().source,
            ContextSource::Unset
        );
        std::fs::write(s.path().join("config.json"), r#"{"currentContext":""}"#).unwrap();
        assert_eq!(
            resolve_in(None, &s.env()).unwrap().source,
            ContextSource::Unset
        );
        // The config dir defaults to ~/.docker.
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".docker")).unwrap();
        std::fs::write(
            home.path().join(".docker/config.json"),
            r#"{"currentContext":"nope"}"#,
        )
        .unwrap();
        let env = ContextEnv {
            home: Some(home.path().to_owned()),
            ..ContextEnv::default()
        };
        assert!(matches!(
            resolve_in(None, &env),
            Err(ContextError::Unknown { name, .. }) if name == "nope"
        ));
    }

    #[test]
    fn unknown_contexts_are_errors_naming_where_they_came_from() {
        let s = Store::new();
        let e = resolve_in(Some("prod"), &s.env()).unwrap_err();
        assert!(matches!(
            &e,
            ContextError::Unknown { name, from: ContextSource::Explicit, .. } if name == "prod"
        ));
        assert!(
            e.to_string()
                .starts_with("docker context \"prod\" (from --context) does not exist ("),
            "{e}"
        );
        let env = ContextEnv {
            docker_context: Some("gone".into()),
            ..s.env()
        };
        let e = resolve_in(None, &env).unwrap_err().to_string();
        assert!(
            e.starts_with("docker context \"gone\" (from DOCKER_CONTEXT) does not exist"),
            "{e}"
        );
        s.current("old");
        let e = resolve_in(None, &s.env()).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "docker context \"old\" (from currentContext in {}) does not exist",
                s.path().join("config.json").display()
            )),
            "{e}"
        );
    }

    #[test]
    fn tls_files_are_picked_up() {
        let s = Store::new();
        s.context("secure", "tcp://10.0.0.5:2376");
        let dir = s.tls("secure", &["ca.pem", "cert.pem", "key.pem"]);
        let r = resolve_in(Some("secure"), &s.env()).unwrap();
        assert_eq!(r.endpoint.tls(), Some(&TlsFiles::in_dir(&dir)));
        // Some but not all: refused, never a plainer connection.
        std::fs::remove_file(dir.join("key.pem")).unwrap();
        std::fs::remove_file(dir.join("cert.pem")).unwrap();
        let e = resolve_in(Some("secure"), &s.env()).unwrap_err();
        assert_eq!(
            e,
            ContextError::IncompleteTls {
                name: "secure".into(),
                from: ContextSource::Explicit,
                dir: dir.clone(),
                missing: vec!["cert.pem".into(), "key.pem".into()],
            }
        );
        // A FIFO as CA.
        std::fs::remove_file(dir.join("ca.pem")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("ca.pem"))
            .status()
            .unwrap();
        assert!(made.success());
        let e = resolve_in(Some("secure"), &s.env())
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("ca.pem: is not a regular file (it is a FIFO)"),
            "{e}"
        );
        // A unix socket context ignores TLS material, as the docker CLI does.
        s.context("sock", "unix:///run/d.sock");
        s.tls("sock", &["ca.pem"]);
        assert_eq!(
            resolve_in(Some("sock"), &s.env()).unwrap().endpoint.tls(),
            None
        );
    }

    #[test]
    fn skip_tls_verify_is_refused() {
        let s = Store::new();
        s.meta(
            "lax",
            r#"{"Name":"lax","Endpoints":{"docker":{"Host":"tcp://h:2376","SkipTLSVerify":true}}}"#,
        );
        s.tls("lax", &["ca.pem", "cert.pem", "key.pem"]);
        let e = resolve_in(Some("lax"), &s.env()).unwrap_err();
        assert!(matches!(e, ContextError::SkipTlsVerify { .. }), "{e}");
        assert!(e.to_string().contains("cannot verify"), "{e}");
    }

    #[test]
    fn broken_files_are_errors_not_the_default_socket() {
        let s = Store::new();
        std::fs::write(s.path().join("config.json"), "{not json").unwrap();
        let e = resolve_in(None, &s.env()).unwrap_err();
        assert!(matches!(e, ContextError::ConfigFile { .. }), "{e}");
        std::fs::write(s.path().join("config.json"), r#"{"currentContext":7}"#).unwrap();
        assert!(resolve_in(None, &s.env()).is_err());
        std::fs::remove_file(s.path().join("config.json")).unwrap();
        s.meta("x", "[]");
        let e = resolve_in(Some("x"), &s.env()).unwrap_err().to_string();
        assert!(e.ends_with("meta.json: has no docker endpoint"), "{e}");
        s.meta("x", r#"{"Endpoints":{"docker":{"Host":""}}}"#);
        let e = resolve_in(Some("x"), &s.env()).unwrap_err().to_string();
        assert!(
            e.ends_with("meta.json: the docker endpoint has no Host"),
            "{e}"
        );
        s.meta(
            "x",
            r#"{"Endpoints":{"docker":{"Host":"npipe:////./pipe/docker"}}}"#,
        );
        let e = resolve_in(Some("x"), &s.env()).unwrap_err();
        assert!(
            matches!(
                &e,
                ContextError::Endpoint {
                    error: EndpointError::UnsupportedScheme { .. },
                    ..
                }
            ),
            "{e}"
        );
        // Go's JSON decoding ignores the case of field names.
        s.meta("x", r#"{"endpoints":{"docker":{"host":"tcp://h:2375"}}}"#);
        assert_eq!(
            resolve_in(Some("x"), &s.env()).unwrap().endpoint.url(),
            "tcp://h:2375"
        );
        let env = ContextEnv {
            docker_host: Some("tcp://bad host:1".into()),
            ..s.env()
        };
        let e = resolve_in(None, &env).unwrap_err().to_string();
        assert!(
            e.starts_with("docker context \"default\" (from DOCKER_HOST): malformed endpoint"),
            "{e}"
        );
    }
}
