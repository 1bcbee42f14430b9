//! The registry file: which swarms there are, and how to reach their
//! managers and nodes.
//!
//! ```toml
//! timeout = "10s"                    # optional; per daemon call (or timeout_secs = 10)
//! [[swarm]]
//! name = "alpha"                     # "" is the local swarm
//! manager = "unix:///run/alpha-1/docker.sock"
//! self_stack = "swarm-sweep"         # optional
//! windows = ["allow Mon-Fri 02:00-05:00 Europe/Berlin"]  # optional; deletion windows (docs/windows.md)
//! [swarm.tls]                        # optional, tcp:// only
//! ca = "ca.pem"                      # relative to this file's directory
//! cert = "cert.pem"
//! key = "key.pem"
//! [[swarm.node]]                     # optional, zero or more
//! endpoint = "unix:///run/alpha-2/docker.sock"
//! # tls = { ca = "...", cert = "...", key = "..." }
//!
//! [[swarm]]                          # nodes reached through the swarm itself
//! name = "beta"
//! manager = "tcp://10.0.0.21:2376"
//! node_reach = "job"                 # "endpoints" (the [[swarm.node]] list), "job" or "none"
//! agent_image = "registry.example.com/swarm-sweep:0.1.0"  # an image reference (crate::image_ref)
//! agent_socket = "/var/run/docker.sock"  # optional; a path or a template
//! job_timeout = "2m"                 # optional
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use sweep_core::deletion_window::DeletionWindow;
use sweep_core::map_only::Obj;
use thiserror::Error;

use crate::backend::DEFAULT_TIMEOUT;
use crate::endpoint::{Endpoint, TlsFiles};
use crate::files::{
    read_limited, read_regular_limited, Accept, ReadFailure, CONFIG_LIMIT, TLS_FILE_LIMIT,
};
use crate::job::JobSettings;

/// The longest per-call timeout the file may ask for; anything longer is
/// more likely a unit mistake (milliseconds) than a wish.
pub const MAX_TIMEOUT_SECS: u64 = 3600;

/// Why a registry file was refused. Every variant names the file; the
/// place names the swarm (by name, or `#n` counting from 1) and the field.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: {message}")]
    Read { file: String, message: String },
    /// The file is not valid TOML.
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    /// A field is missing, unknown or has a value that cannot be used.
    #[error("{file}: {}{message}", place_prefix(.place))]
    Invalid {
        file: String,
        place: String,
        message: String,
    },
    /// Two `[[swarm]]` entries share a name, so a name would not say which
    /// swarm is meant.
    #[error("{file}: swarm {swarm:?} is configured more than once (swarm #{first} and #{second})")]
    DuplicateSwarm {
        file: String,
        swarm: String,
        first: usize,
        second: usize,
    },
}

fn place_prefix(place: &str) -> String {
    if place.is_empty() {
        String::new()
    } else {
        format!("{place}: ")
    }
}

/// A parsed, checked registry file.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryConfig {
    /// How long one daemon call may take.
    pub timeout: Duration,
    /// The swarms, in file order, names unique.
    pub swarms: Vec<SwarmConfig>,
}

/// One `[[swarm]]` entry.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwarmConfig {
    /// The name the swarm is targeted by; `""` is the local swarm.
    pub name: String,
    /// A manager of the swarm.
    pub manager: Endpoint,
    /// The stack the controller runs as on this swarm, if any.
    pub self_stack: Option<String>,
    /// Daemons of individual nodes, as configured (not yet checked to be
    /// members of this swarm: that is only known when they answer).
    pub nodes: Vec<Endpoint>,
    /// With `node_reach = "job"`: how every node is reached through a
    /// volume job run from the manager.
    pub job: Option<JobSettings>,
    /// When deletions may happen on this swarm, besides the policy's
    /// `--window`s (a deletion must pass both); empty is always.
    pub windows: Vec<DeletionWindow>,
}

/// The longest `job_timeout`: a job longer than this is stuck.
pub const MAX_JOB_TIMEOUT: Duration = Duration::from_secs(3600);
/// The default `job_timeout`.
pub const DEFAULT_JOB_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    timeout_secs: Option<u64>,
    /// A duration with a unit (`"30s"`); kept as TOML so that a bare
    /// number of seconds reads too, and a wrong type gets this field's own
    /// message rather than serde's.
    timeout: Option<toml::Value>,
    #[serde(default)]
    swarm: Vec<Obj<RawSwarm>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSwarm {
    name: String,
    manager: String,
    self_stack: Option<String>,
    tls: Option<Obj<RawTls>>,
    #[serde(default)]
    node: Vec<Obj<RawNode>>,
    node_reach: Option<RawNodeReach>,
    agent_image: Option<String>,
    agent_socket: Option<String>,
    job_timeout: Option<toml::Value>,
    #[serde(default)]
    windows: Vec<String>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum RawNodeReach {
    Endpoints,
    Job,
    None,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTls {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    endpoint: String,
    tls: Option<Obj<RawTls>>,
}

/// Turns a deserializer path (`swarm[1].node[0].tls.ca`) into the place an
/// error message names (`swarm "beta": node #1: tls: ca`).
/// An unknown field is the last segment of its own path; it is left out
/// since `message` already names it.
fn render_path(path: &serde_path_to_error::Path, table: &toml::Table, message: &str) -> String {
    use serde_path_to_error::Segment;
    let mut parts: Vec<String> = Vec::new();
    let mut swarm_index = None;
    let segments: Vec<&Segment> = path.iter().collect();
    let shown = match segments.last() {
        Some(Segment::Map { key }) if message.starts_with(&format!("unknown field `{key}`")) => {
            &segments[..segments.len() - 1]
        }
        _ => &segments[..],
    };
    for segment in shown {
        match segment {
            Segment::Seq { index } => match parts.last().map(String::as_str) {
                Some("swarm") if swarm_index.is_none() => {
                    swarm_index = Some(*index);
                    parts.pop();
                    parts.push(swarm_label(table, *index));
                }
                Some("node") => {
                    parts.pop();
                    parts.push(format!("node #{}", index + 1));
                }
                _ => parts.push(format!("#{}", index + 1)),
            },
            Segment::Map { key } => parts.push(key.clone()),
            Segment::Enum { variant } => parts.push(variant.clone()),
            Segment::Unknown => {}
        }
    }
    parts.join(": ")
}

/// `swarm "name"` when the entry has a string name, else `swarm #n`.
fn swarm_label(table: &toml::Table, index: usize) -> String {
    let name = table
        .get("swarm")
        .and_then(toml::Value::as_array)
        .and_then(|swarms| swarms.get(index))
        .and_then(|s| s.get("name"))
        .and_then(toml::Value::as_str);
    match name {
        Some(name) => format!("swarm {name:?}"),
        None => format!("swarm #{}", index + 1),
    }
}

impl RegistryConfig {
    /// Reads and checks the registry file at `path`. Relative TLS file
    /// paths are taken relative to the file's directory.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        // A regular file only, read within the limit: `--config /dev/zero`
        // or a FIFO is refused unread, never waited on or read without end.
        let text = read_limited(path, CONFIG_LIMIT, Accept::RegularFile).map_err(|e| {
            ConfigError::Read {
                file: file.clone(),
                message: e.failure.to_string(),
            }
        })?;
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        RegistryConfig::parse(&text, &file, base)
    }

    /// Checks registry file text; `file` names it in errors and `base` is
    /// the directory relative TLS file paths start from.
    pub fn parse(text: &str, file: &str, base: &Path) -> Result<Self, ConfigError> {
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ConfigError::Syntax {
                    file: file.to_owned(),
                    message: e.to_string().trim_end().to_owned(),
                })?;
        let raw: RawFile = serde_path_to_error::deserialize(toml::Value::Table(table.clone()))
            .map_err(|e| {
                let message = e.inner().message().trim_end().to_owned();
                ConfigError::Invalid {
                    file: file.to_owned(),
                    place: render_path(e.path(), &table, &message),
                    message,
                }
            })?;
        let invalid = |place: String, message: String| ConfigError::Invalid {
            file: file.to_owned(),
            place,
            message,
        };

        let timeout = match (raw.timeout_secs, raw.timeout) {
            // Two answers to one question: whichever won, the other was
            // what somebody meant.
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "timeout, timeout_secs".into(),
                    "both are set; keep one (timeout = \"30s\" or timeout_secs = 30)".into(),
                ))
            }
            (None, None) => DEFAULT_TIMEOUT,
            (Some(0), None) => {
                return Err(invalid("timeout_secs".into(), "must be at least 1".into()))
            }
            (Some(s), None) if s > MAX_TIMEOUT_SECS => {
                return Err(invalid(
                    "timeout_secs".into(),
                    format!("must be at most {MAX_TIMEOUT_SECS}"),
                ))
            }
            (Some(s), None) => Duration::from_secs(s),
            (None, Some(value)) => {
                timeout_value(&value).map_err(|message| invalid("timeout".into(), message))?
            }
        };

        let mut swarms: Vec<SwarmConfig> = Vec::with_capacity(raw.swarm.len());
        // Name -> index of its first entry. A scan of `swarms` per entry was
        // quadratic: 100 000 swarms took 22 s to load.
        let mut seen: HashMap<String, usize> = HashMap::with_capacity(raw.swarm.len());
        for (index, Obj(s)) in raw.swarm.into_iter().enumerate() {
            let label = format!("swarm {:?}", s.name);
            if let Some(&first) = seen.get(&s.name) {
                return Err(ConfigError::DuplicateSwarm {
                    file: file.to_owned(),
                    swarm: s.name,
                    first: first + 1,
                    second: index + 1,
                });
            }
            seen.insert(s.name.clone(), index);
            let tls = check_tls(
                s.tls.map(Obj::into_inner),
                base,
                &format!("{label}: tls"),
                &invalid,
            )?;
            let manager = Endpoint::parse(&s.manager, tls)
                .map_err(|e| invalid(format!("{label}: manager"), e.to_string()))?;
            // Two names for one manager are allowed: the planner groups
            // names by the cluster id each reports, so one swarm configured
            // twice is still planned as one swarm.
            let self_stack = match s.self_stack {
                Some(stack) if stack.is_empty() => {
                    return Err(invalid(
                        format!("{label}: self_stack"),
                        "must not be empty (leave it out when unknown)".into(),
                    ))
                }
                other => other,
            };
            let mut nodes: Vec<Endpoint> = Vec::with_capacity(s.node.len());
            // Endpoint URL -> index of the node that has it (linear, as above).
            let mut node_seen: HashMap<String, usize> = HashMap::with_capacity(s.node.len());
            for (n, Obj(node)) in s.node.into_iter().enumerate() {
                let place = format!("{label}: node #{}", n + 1);
                let tls = check_tls(
                    node.tls.map(Obj::into_inner),
                    base,
                    &format!("{place}: tls"),
                    &invalid,
                )?;
                let endpoint = Endpoint::parse(&node.endpoint, tls)
                    .map_err(|e| invalid(format!("{place}: endpoint"), e.to_string()))?;
                if let Some(&first) = node_seen.get(endpoint.url()) {
                    return Err(invalid(
                        format!("{place}: endpoint"),
                        format!("same endpoint as node #{}", first + 1),
                    ));
                }
                node_seen.insert(endpoint.url().to_owned(), n);
                nodes.push(endpoint);
            }
            let job = node_reach(
                s.node_reach,
                &nodes,
                s.agent_image,
                s.agent_socket,
                s.job_timeout,
            )
            .map_err(|(field, message)| invalid(format!("{label}: {field}"), message))?;
            let windows = s
                .windows
                .iter()
                .enumerate()
                .map(|(n, w)| {
                    DeletionWindow::parse(w)
                        .map_err(|e| invalid(format!("{label}: windows #{}", n + 1), e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            swarms.push(SwarmConfig {
                name: s.name,
                manager,
                self_stack,
                nodes,
                job,
                windows,
            });
        }
        Ok(RegistryConfig { timeout, swarms })
    }
}

/// How a swarm's nodes are reached: the job settings for `node_reach =
/// "job"`, `None` otherwise. One answer per question: the job keys only
/// with a job, node entries only with endpoints (the default when there
/// are any), neither with `"none"`. Errors name the field.
fn node_reach(
    reach: Option<RawNodeReach>,
    nodes: &[Endpoint],
    image: Option<String>,
    socket: Option<String>,
    timeout: Option<toml::Value>,
) -> Result<Option<JobSettings>, (&'static str, String)> {
    let job_keys = [
        ("agent_image", image.is_some()),
        ("agent_socket", socket.is_some()),
        ("job_timeout", timeout.is_some()),
    ];
    if reach != Some(RawNodeReach::Job) {
        if let Some((key, _)) = job_keys.iter().find(|(_, set)| *set) {
            return Err((key, "only with node_reach = \"job\"".into()));
        }
    }
    match reach {
        None => Ok(None),
        Some(RawNodeReach::Endpoints) if nodes.is_empty() => Err((
            "node_reach",
            "\"endpoints\" needs [[swarm.node]] entries".into(),
        )),
        Some(RawNodeReach::Endpoints) => Ok(None),
        Some(RawNodeReach::None) if !nodes.is_empty() => Err((
            "node_reach",
            "\"none\" with [[swarm.node]] entries; remove one or the other".into(),
        )),
        Some(RawNodeReach::None) => Ok(None),
        Some(RawNodeReach::Job) if !nodes.is_empty() => Err((
            "node_reach",
            "\"job\" reaches every node through the manager; remove the [[swarm.node]] entries"
                .into(),
        )),
        Some(RawNodeReach::Job) => {
            let image = match image {
                Some(image) => match crate::image_ref::check_image_reference(&image) {
                    Ok(()) => image,
                    Err(e) => return Err(("agent_image", format!("not an image reference ([registry[:port]/]path[:tag][@digest]): {e}"))),
                },
                None => return Err(("agent_image", "node_reach = \"job\" needs the agent's image (this project's), e.g. agent_image = \"swarm-sweep:0.1.0\"".into())),
            };
            let socket = match socket {
                None => crate::job::DEFAULT_AGENT_SOCKET.to_owned(),
                Some(socket) if socket.starts_with('/') && !socket.chars().any(|c| c.is_control() || c == ',') => socket,
                Some(_) => return Err(("agent_socket", "must be an absolute path (a template such as /run/{{.Node.Hostname}}.sock is allowed), without commas".into())),
            };
            let limit = match timeout {
                None => DEFAULT_JOB_TIMEOUT,
                Some(value) => {
                    let text = match &value {
                        toml::Value::String(text) => text.clone(),
                        toml::Value::Integer(n) => n.to_string(),
                        _ => {
                            return Err(("job_timeout", "must be a duration such as \"2m\"".into()))
                        }
                    };
                    sweep_core::duration::parse_within(
                        &text,
                        Duration::from_secs(1),
                        MAX_JOB_TIMEOUT,
                    )
                    .map_err(|e| ("job_timeout", e.to_string()))?
                }
            };
            Ok(Some(JobSettings::new(image, socket, limit)))
        }
    }
}

/// The `timeout` key: a duration string, or a bare number of seconds,
/// within the bounds of `timeout_secs`.
fn timeout_value(value: &toml::Value) -> Result<Duration, String> {
    let text = match value {
        toml::Value::String(text) => text.clone(),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(f) => f.to_string(),
        other => {
            return Err(format!(
                "expected a duration such as \"30s\", found a {}",
                other.type_str()
            ))
        }
    };
    crate::duration::parse_within(
        &text,
        Duration::from_secs(1),
        Duration::from_secs(MAX_TIMEOUT_SECS),
    )
    .map_err(|e| e.to_string())
}

/// Resolves TLS file paths against `base` and checks they can be read now,
/// so that a typo shows when the file is loaded rather than at the first
/// connection, possibly in the middle of a sweep. Each must be a regular
/// file of at most [`TLS_FILE_LIMIT`] bytes: a FIFO there would block the
/// connection until some writer appears, a directory fails only when
/// connecting, and a device may never end.
fn check_tls(
    tls: Option<RawTls>,
    base: &Path,
    place: &str,
    invalid: &impl Fn(String, String) -> ConfigError,
) -> Result<Option<TlsFiles>, ConfigError> {
    let Some(tls) = tls else {
        return Ok(None);
    };
    let mut resolved = Vec::with_capacity(3);
    for (field, path) in [("ca", tls.ca), ("cert", tls.cert), ("key", tls.key)] {
        let path = base.join(path);
        if let Err(e) = read_regular_limited(&path, TLS_FILE_LIMIT) {
            let message = match e.failure {
                ReadFailure::Io { message } => {
                    format!("cannot read {}: {message}", path.display())
                }
                ReadFailure::Directory => {
                    format!(
                        "{} is not a regular file (it is a directory)",
                        path.display()
                    )
                }
                ReadFailure::NotRegular { kind } => {
                    format!("{} is not a regular file (it is a {kind})", path.display())
                }
                ReadFailure::TooLarge { limit } => format!(
                    "{} is larger than {limit} bytes, too large for a TLS file",
                    path.display()
                ),
                other => format!("{}: {other}", path.display()),
            };
            return Err(invalid(format!("{place}: {field}"), message));
        }
        resolved.push(path);
    }
    let mut files = resolved.into_iter();
    match (files.next(), files.next(), files.next()) {
        (Some(ca), Some(cert), Some(key)) => Ok(Some(TlsFiles::new(ca, cert, key))),
        _ => Err(invalid(place.to_owned(), "incomplete".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RegistryConfig, ConfigError> {
        RegistryConfig::parse(text, "registry.toml", Path::new("/nonexistent"))
    }

    fn message(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    /// A swarm's deletion windows are read with the core's grammar; one
    /// that does not read is refused naming the swarm, its place in the
    /// list and the part that is wrong, matched on the variant.
    #[test]
    fn windows_per_swarm() {
        let c = parse(
            "[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\nwindows = [\"allow mon-fri 02:00-05:00 Europe/Berlin\", \"deny 2026-12-24T00:00:00Z/2026-12-27T00:00:00Z\"]\n[[swarm]]\nname = \"b\"\nmanager = \"unix:///b\"\n",
        )
        .unwrap();
        let texts: Vec<&str> = c.swarms[0].windows.iter().map(|w| w.as_str()).collect();
        assert_eq!(
            texts,
            [
                "allow Mon-Fri 02:00-05:00 Europe/Berlin",
                "deny 2026-12-24T00:00:00Z/2026-12-27T00:00:00Z"
            ]
        );
        assert!(c.swarms[1].windows.is_empty());
        let err = parse(
            "[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\nwindows = [\"allow Mon 01:00-02:00 UTC\", \"allow Mon 01:00-02:00 Mars/Olympus\"]\n",
        )
        .unwrap_err();
        let ConfigError::Invalid { place, message, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(place, "swarm \"a\": windows #2");
        assert!(message.contains("Mars/Olympus"), "{message}");
        assert!(matches!(
            parse("[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\nwindows = \"allow\"\n"),
            Err(ConfigError::Invalid { place, .. }) if place.contains("windows")
        ));
    }

    #[test]
    fn the_test_bed_format() {
        let c = parse(
            r#"
timeout_secs = 7
[[swarm]]
name = "alpha"
manager = "unix:///run/swarm-sweep-bed/alpha-1/docker.sock"
self_stack = "swarm-sweep"
[[swarm.node]]
endpoint = "unix:///run/swarm-sweep-bed/alpha-2/docker.sock"
[[swarm.node]]
endpoint = "unix:///run/swarm-sweep-bed/alpha-3/docker.sock"
[[swarm]]
name = ""
manager = "tcp://127.0.0.1:2375"
"#,
        )
        .unwrap();
        assert_eq!(c.timeout, Duration::from_secs(7));
        assert_eq!(c.swarms.len(), 2);
        assert_eq!(c.swarms[0].name, "alpha");
        assert_eq!(c.swarms[0].self_stack.as_deref(), Some("swarm-sweep"));
        assert_eq!(c.swarms[0].nodes.len(), 2);
        assert_eq!(c.swarms[1].name, "");
        assert!(c.swarms[1].nodes.is_empty());
        assert_eq!(parse("").unwrap().timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn unsupported_scheme_names_file_swarm_and_field() {
        assert_eq!(
            message("[[swarm]]\nname = \"alpha\"\nmanager = \"http://h:1\"\n"),
            "registry.toml: swarm \"alpha\": manager: unsupported scheme \"http\" (use unix://, tcp:// or ssh://)"
        );
        assert_eq!(
            message(
                "[[swarm]]\nname = \"a\"\nmanager = \"unix:///s\"\n[[swarm.node]]\nendpoint = \"npipe://x\"\n"
            ),
            "registry.toml: swarm \"a\": node #1: endpoint: unsupported scheme \"npipe\" (use unix://, tcp:// or ssh://)"
        );
    }

    #[test]
    fn ssh_endpoints_are_taken_for_managers_and_nodes() {
        let c = parse(
            "[[swarm]]\nname = \"a\"\nmanager = \"ssh://ops@mgr-1\"\n\
             [[swarm.node]]\nendpoint = \"ssh://ops@worker-1:2222\"\n",
        )
        .unwrap();
        assert_eq!(c.swarms[0].manager.url(), "ssh://ops@mgr-1");
        assert_eq!(c.swarms[0].nodes[0].url(), "ssh://ops@worker-1:2222");
        assert_eq!(
            message("[[swarm]]\nname = \"a\"\nmanager = \"ssh://ops:pw@mgr-1\"\n"),
            "registry.toml: swarm \"a\": manager: refusing endpoint \"ssh://***@mgr-1\": credentials in an endpoint URL are not supported (use TLS client certificates, or ssh keys)"
        );
    }

    #[test]
    fn unknown_and_missing_fields_are_placed() {
        let m = message("[[swarm]]\nname = \"alpha\"\nmanager = \"unix:///s\"\nmanagr = \"x\"\n");
        assert!(
            m.starts_with("registry.toml: swarm \"alpha\": unknown field `managr`"),
            "{m}"
        );
        let m = message("[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\n[[swarm]]\nmanager = \"unix:///s\"\n");
        assert_eq!(m, "registry.toml: swarm #2: missing field `name`");
        let m = message("timeot = \"3s\"\n");
        assert!(
            m.starts_with("registry.toml: unknown field `timeot`"),
            "{m}"
        );
        let m = message(
            "[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\n[[swarm.node]]\nendpoint = \"unix:///b\"\nport = 1\n",
        );
        assert!(
            m.starts_with("registry.toml: swarm \"a\": node #1: unknown field `port`"),
            "{m}"
        );
        let m =
            message("[[swarm]]\nname = \"a\"\nmanager = \"tcp://h:1\"\n[swarm.tls]\nca = \"x\"\n");
        assert!(
            m.starts_with("registry.toml: swarm \"a\": tls: missing field `cert`"),
            "{m}"
        );
    }

    /// A table written as an array of its values would be read by position,
    /// past every key: refused, naming where. The same file with tables
    /// reads.
    #[test]
    fn a_table_written_as_an_array_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["ca", "cert", "key"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        let read = |text: &str| RegistryConfig::parse(text, "registry.toml", dir.path());
        let swarm = "[[swarm]]\nname = \"a\"\nmanager = \"tcp://h:1\"\n";
        let tls = "{ca = \"ca\", cert = \"cert\", key = \"key\"}";
        let tls_array = "[\"ca\", \"cert\", \"key\"]";
        let good = read(&format!(
            "{swarm}tls = {tls}\nnode = [{{endpoint = \"tcp://h:2\", tls = {tls}}}]\n"
        ));
        assert_eq!(good.unwrap().swarms[0].nodes.len(), 1);
        let placed = |text: String, place: &str| match read(&text) {
            Err(ConfigError::Invalid { place: found, .. }) => assert_eq!(found, place, "{text}"),
            other => panic!("{text}: {other:?}"),
        };
        placed(format!("{swarm}tls = {tls_array}\n"), "swarm \"a\": tls");
        placed(
            format!("{swarm}tls = {tls}\nnode = [[\"tcp://h:2\", {tls_array}]]\n"),
            "swarm \"a\": node #1",
        );
        placed(
            format!(
                "{swarm}tls = {tls}\nnode = [{{endpoint = \"tcp://h:2\", tls = {tls_array}}}]\n"
            ),
            "swarm \"a\": node #1: tls",
        );
    }

    #[test]
    fn nodes_are_reached_by_endpoints_a_job_or_not_at_all() {
        let base = "[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\n";
        let job = parse(&format!(
            "{base}node_reach = \"job\"\nagent_image = \"swarm-sweep:0.1.0\"\nagent_socket = \"/run/{{{{.Node.Hostname}}}}.sock\"\njob_timeout = \"90s\"\n"
        ))
        .unwrap();
        assert_eq!(
            job.swarms[0].job,
            Some(JobSettings::new(
                "swarm-sweep:0.1.0",
                "/run/{{.Node.Hostname}}.sock",
                Duration::from_secs(90)
            ))
        );
        let defaults = parse(&format!(
            "{base}node_reach = \"job\"\nagent_image = \"swarm-sweep:0.1.0\"\n"
        ))
        .unwrap();
        let settings = defaults.swarms[0].job.as_ref().unwrap();
        assert_eq!(settings.socket, "/var/run/docker.sock");
        assert_eq!(settings.limit, DEFAULT_JOB_TIMEOUT);
        let node = "[[swarm.node]]\nendpoint = \"unix:///b\"\n";
        assert!(parse(&format!("{base}node_reach = \"endpoints\"\n{node}"))
            .unwrap()
            .swarms[0]
            .job
            .is_none());
        assert!(parse(&format!("{base}node_reach = \"none\"\n"))
            .unwrap()
            .swarms[0]
            .job
            .is_none());
        for (text, place) in [
            (format!("{base}node_reach = \"job\"\n"), "swarm \"a\": agent_image"),
            (
                format!("{base}node_reach = \"job\"\nagent_image = \"x:1\"\n{node}"),
                "swarm \"a\": node_reach",
            ),
            (format!("{base}node_reach = \"endpoints\"\n"), "swarm \"a\": node_reach"),
            (format!("{base}node_reach = \"none\"\n{node}"), "swarm \"a\": node_reach"),
            (format!("{base}agent_image = \"x:1\"\n"), "swarm \"a\": agent_image"),
            (
                format!("{base}node_reach = \"job\"\nagent_image = \"x 1\"\n"),
                "swarm \"a\": agent_image",
            ),
            (
                format!("{base}node_reach = \"job\"\nagent_image = \"x:1\"\nagent_socket = \"run/s.sock\"\n"),
                "swarm \"a\": agent_socket",
            ),
            (
                format!("{base}node_reach = \"job\"\nagent_image = \"x:1\"\njob_timeout = \"0s\"\n"),
                "swarm \"a\": job_timeout",
            ),
            (format!("{base}node_reach = \"nodes\"\n"), "swarm \"a\": node_reach"),
        ] {
            match parse(&text) {
                Err(ConfigError::Invalid { place: p, .. }) => assert_eq!(p, place, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_agent_image_outside_the_reference_grammar_is_refused_at_load() {
        let base = "[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\nnode_reach = \"job\"\n";
        for image in [
            "../../containers/x",
            "x/../../containers/y",
            "x?force=1",
            "x#y",
            "x%2F..",
            "UPPER",
            "x:-tag",
            "x@sha256:short",
        ] {
            let text = format!("{base}agent_image = {image:?}\n");
            match parse(&text) {
                Err(ConfigError::Invalid { place, .. }) => {
                    assert_eq!(place, "swarm \"a\": agent_image", "{image}")
                }
                other => panic!("{image}: {other:?}"),
            }
        }
        for image in [
            "swarm-sweep:0.1.0",
            "registry.example.com:5000/ops/swarm-sweep:1",
        ] {
            let text = format!("{base}agent_image = {image:?}\n");
            let config = parse(&text).unwrap_or_else(|e| panic!("{image}: {e}"));
            assert_eq!(config.swarms[0].job.as_ref().unwrap().image, image);
        }
    }

    #[test]
    fn syntax_errors_name_the_file() {
        let e = parse("[[swarm]\n").unwrap_err();
        assert!(matches!(e, ConfigError::Syntax { .. }));
        assert!(e.to_string().starts_with("registry.toml: "));
    }

    #[test]
    fn duplicates_are_refused() {
        assert_eq!(
            message("[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\n[[swarm]]\nname = \"a\"\nmanager = \"unix:///b\"\n"),
            "registry.toml: swarm \"a\" is configured more than once (swarm #1 and #2)"
        );
        // One manager under two names is one swarm known by two names.
        let two_names = RegistryConfig::parse(
            "[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\n[[swarm]]\nname = \"b\"\nmanager = \"unix:///a\"\n",
            "registry.toml",
            Path::new("/"),
        )
        .expect("two names for one manager are allowed");
        assert_eq!(two_names.swarms.len(), 2);
        let m = message(
            "[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\n[[swarm.node]]\nendpoint = \"unix:///b\"\n[[swarm.node]]\nendpoint = \"unix:///b\"\n",
        );
        assert_eq!(
            m,
            "registry.toml: swarm \"a\": node #2: endpoint: same endpoint as node #1"
        );
    }

    #[test]
    fn values_are_checked() {
        assert_eq!(
            message("timeout_secs = 0\n"),
            "registry.toml: timeout_secs: must be at least 1"
        );
        assert!(message("timeout_secs = 99999\n").contains("at most"));
        assert!(message("timeout_secs = -1\n").starts_with("registry.toml: timeout_secs: "));
        assert_eq!(
            message("[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\nself_stack = \"\"\n"),
            "registry.toml: swarm \"a\": self_stack: must not be empty (leave it out when unknown)"
        );
        let m = message("[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\n[swarm.tls]\nca = \"ca\"\ncert = \"c\"\nkey = \"k\"\n");
        assert!(
            m.starts_with("registry.toml: swarm \"a\": tls: ca: cannot read /nonexistent/ca"),
            "{m}"
        );
    }

    #[test]
    fn timeout_takes_units_within_the_same_bounds() {
        assert_eq!(
            parse("timeout = \"30s\"\n").unwrap().timeout,
            Duration::from_secs(30)
        );
        assert_eq!(
            parse("timeout = \"2m\"\n").unwrap().timeout,
            Duration::from_secs(120)
        );
        assert_eq!(
            parse("timeout = \"1h\"\n").unwrap().timeout,
            Duration::from_secs(3600)
        );
        assert_eq!(
            parse("timeout = \"1500ms\"\n").unwrap().timeout,
            Duration::from_millis(1500)
        );
        // A bare number is seconds, as in timeout_secs.
        assert_eq!(
            parse("timeout = 7\n").unwrap().timeout,
            Duration::from_secs(7)
        );
        assert_eq!(
            parse("timeout = \"7\"\n").unwrap().timeout,
            Duration::from_secs(7)
        );
        assert_eq!(
            message("timeout = \"500ms\"\n"),
            "registry.toml: timeout: \"500ms\" is less than the minimum of 1s"
        );
        assert_eq!(
            message("timeout = \"2h\"\n"),
            "registry.toml: timeout: \"2h\" is more than the maximum of 1h"
        );
        for bad in [
            "\"0s\"", "0", "\"-3s\"", "-3", "\"soon\"", "\"\"", "true", "[1]",
        ] {
            let m = message(&format!("timeout = {bad}\n"));
            assert!(m.starts_with("registry.toml: timeout: "), "{bad}: {m}");
        }
        assert_eq!(
            message("timeout = \"30s\"\ntimeout_secs = 30\n"),
            "registry.toml: timeout, timeout_secs: both are set; keep one (timeout = \"30s\" or timeout_secs = 30)"
        );
    }

    #[test]
    fn tls_files_resolve_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["ca.pem", "cert.pem", "key.pem"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        let path = dir.path().join("registry.toml");
        std::fs::write(
            &path,
            "[[swarm]]\nname = \"a\"\nmanager = \"tcp://h:2376\"\n[swarm.tls]\nca = \"ca.pem\"\ncert = \"cert.pem\"\nkey = \"key.pem\"\n",
        )
        .unwrap();
        let c = RegistryConfig::load(&path).unwrap();
        let tls = c.swarms[0].manager.tls().cloned().unwrap();
        assert_eq!(tls.ca, dir.path().join("ca.pem"));
        // TLS on a unix socket is refused rather than silently ignored.
        std::fs::write(
            &path,
            "[[swarm]]\nname = \"a\"\nmanager = \"unix:///s\"\n[swarm.tls]\nca = \"ca.pem\"\ncert = \"cert.pem\"\nkey = \"key.pem\"\n",
        )
        .unwrap();
        let m = RegistryConfig::load(&path).unwrap_err().to_string();
        assert!(
            m.contains("swarm \"a\": manager: tls is only for tcp://"),
            "{m}"
        );
    }

    #[test]
    fn tls_files_must_be_small_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["cert.pem", "key.pem"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        let fifo = dir.path().join("ca.pem");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let path = dir.path().join("registry.toml");
        let text = |ca: &str| {
            format!(
                "[[swarm]]\nname = \"a\"\nmanager = \"tcp://h:2376\"\n[swarm.tls]\nca = \"{ca}\"\ncert = \"cert.pem\"\nkey = \"key.pem\"\n"
            )
        };
        let file = path.display().to_string();
        // A FIFO: opening it would block until a writer appears.
        std::fs::write(&path, text("ca.pem")).unwrap();
        assert_eq!(
            RegistryConfig::load(&path).unwrap_err().to_string(),
            format!(
                "{file}: swarm \"a\": tls: ca: {} is not a regular file (it is a FIFO)",
                fifo.display()
            )
        );
        // A directory opens fine and fails only when read.
        std::fs::create_dir(dir.path().join("certs")).unwrap();
        std::fs::write(&path, text("certs")).unwrap();
        assert_eq!(
            RegistryConfig::load(&path).unwrap_err().to_string(),
            format!(
                "{file}: swarm \"a\": tls: ca: {} is not a regular file (it is a directory)",
                dir.path().join("certs").display()
            )
        );
        std::fs::write(&path, text("/dev/zero")).unwrap();
        let m = RegistryConfig::load(&path).unwrap_err().to_string();
        assert!(
            m.ends_with("tls: ca: /dev/zero is not a regular file (it is a character device)"),
            "{m}"
        );
        let big = dir.path().join("big.pem");
        std::fs::write(&big, vec![b'x'; TLS_FILE_LIMIT as usize + 1]).unwrap();
        std::fs::write(&path, text("big.pem")).unwrap();
        let m = RegistryConfig::load(&path).unwrap_err().to_string();
        assert!(
            m.ends_with(&format!(
                "tls: ca: {} is larger than 1048576 bytes, too large for a TLS file",
                big.display()
            )),
            "{m}"
        );
    }

    #[test]
    fn an_endless_registry_file_is_refused_unread() {
        // A device is no registry file: refused before a byte is read.
        let e = RegistryConfig::load("/dev/zero").unwrap_err();
        assert_eq!(
            e,
            ConfigError::Read {
                file: "/dev/zero".into(),
                message: "is not a regular file (it is a character device)".into()
            }
        );
    }

    #[test]
    fn bad_endpoints_are_refused_at_load_naming_the_field() {
        assert_eq!(
            message("[[swarm]]\nname = \"a\"\nmanager = \"tcp://host with space:2376\"\n"),
            "registry.toml: swarm \"a\": manager: malformed endpoint \"tcp://host with space:2376\": \"host with space\" is not a host name or IP address"
        );
        let m = message("[[swarm]]\nname = \"a\"\nmanager = \"tcp://user:secret@h:2376\"\n");
        assert!(
            m.starts_with("registry.toml: swarm \"a\": manager: refusing endpoint \"tcp://***@h:2376\": credentials"),
            "{m}"
        );
        assert!(!m.contains("secret"), "{m}");
        let m = message(
            "[[swarm]]\nname = \"a\"\nmanager = \"unix:///a\"\n[[swarm.node]]\nendpoint = \"unix:///s.sock?x=1\"\n",
        );
        assert!(
            m.starts_with("registry.toml: swarm \"a\": node #1: endpoint: malformed endpoint \"unix:///s.sock?x=1\""),
            "{m}"
        );
        for bad in ["tcp://h:2376?x", "tcp://h:2376#f", "tcp://h\\u0007:2376"] {
            let m = message(&format!("[[swarm]]\nname = \"a\"\nmanager = \"{bad}\"\n"));
            assert!(
                m.starts_with("registry.toml: swarm \"a\": manager: malformed endpoint"),
                "{bad}: {m}"
            );
        }
        assert!(parse("[[swarm]]\nname = \"a\"\nmanager = \"tcp://[::1]:2376\"\n").is_ok());
    }

    /// `n` swarms, the last with `nodes` nodes.
    fn generated(n: usize, nodes: usize) -> String {
        use std::fmt::Write;
        let mut text = String::new();
        for i in 0..n {
            writeln!(
                text,
                "[[swarm]]\nname = \"s{i}\"\nmanager = \"unix:///run/s{i}.sock\""
            )
            .unwrap();
        }
        for n in 0..nodes {
            writeln!(text, "[[swarm.node]]\nendpoint = \"unix:///run/n{n}.sock\"").unwrap();
        }
        text
    }

    #[test]
    fn a_hundred_thousand_swarms_parse() {
        // Finding duplicates was quadratic (22 s for 100 000 swarms); what
        // is left is TOML parsing.
        let c = parse(&generated(100_000, 10_000)).unwrap();
        assert_eq!(c.swarms.len(), 100_000);
        assert_eq!(c.swarms[99_999].nodes.len(), 10_000);
    }

    #[test]
    fn duplicates_name_the_first_and_second_entry() {
        let mut dup_node = generated(1_000, 100);
        dup_node.push_str("[[swarm.node]]\nendpoint = \"unix:///run/n17.sock\"\n");
        assert_eq!(
            message(&dup_node),
            "registry.toml: swarm \"s999\": node #101: endpoint: same endpoint as node #18"
        );
        let mut dup_swarm = generated(1_000, 100);
        dup_swarm.push_str("[[swarm]]\nname = \"s5\"\nmanager = \"unix:///x\"\n[[swarm]]\nname = \"s5\"\nmanager = \"unix:///y\"\n");
        assert_eq!(
            message(&dup_swarm),
            "registry.toml: swarm \"s5\" is configured more than once (swarm #6 and #1001)"
        );
    }

    #[test]
    fn unreadable_file_is_named() {
        let e = RegistryConfig::load("/nonexistent/registry.toml").unwrap_err();
        assert!(matches!(e, ConfigError::Read { .. }));
        assert!(e.to_string().starts_with("/nonexistent/registry.toml: "));
    }
}
