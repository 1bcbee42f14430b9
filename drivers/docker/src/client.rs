//! One connection to one daemon: version negotiation, per-call timeouts, and
//! the translation of bollard's errors into the seam's.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::future::Future;
use std::time::Duration;

use bollard::errors::Error as DockerError;
use bollard::query_parameters::{ListVolumesOptionsBuilder, RemoveVolumeOptionsBuilder};
use bollard::{BollardRequest, Docker, API_DEFAULT_VERSION};
use sweep_swarms::BackendError;

use crate::endpoint::{Endpoint, Transport};
use crate::labels::STACK_NAMESPACE;

/// How a daemon call failed, before the caller decides what a status means
/// (404 is success for a removal, 409 is "in use" for a volume).
#[derive(Debug)]
pub(crate) enum Failure {
    Status { code: u16, message: String },
    Backend(BackendError),
}

impl Failure {
    /// The error to report for a failed call about `what`.
    pub(crate) fn into_backend(self, what: &str) -> BackendError {
        match self {
            Failure::Status { code, message } => BackendError::Other {
                message: format!("{what}: the daemon answered {code}: {message}"),
            },
            Failure::Backend(e) => e,
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

/// A connected, version-negotiated client for one daemon.
#[derive(Clone, Debug)]
pub(crate) struct Client {
    docker: Docker,
    endpoint: String,
    timeout: Duration,
}

impl Client {
    /// Connects to `endpoint` and settles on an API version both sides
    /// speak. A daemon older than bollard's default (Debian's 20.10 speaks
    /// 1.41) rejects every request made with a newer version, so nothing is
    /// sent before the negotiation.
    pub(crate) async fn connect(
        endpoint: &Endpoint,
        timeout: Duration,
    ) -> Result<Self, BackendError> {
        let url = endpoint.url();
        // bollard's own timeout is whole seconds; ours wraps every call, so
        // bollard's only needs to be a backstop.
        let backstop = timeout.as_secs().saturating_add(1);
        let docker = match endpoint.transport() {
            Transport::Unix => Docker::connect_with_unix(url, backstop, API_DEFAULT_VERSION),
            Transport::Tcp => Docker::connect_with_http(url, backstop, API_DEFAULT_VERSION),
            Transport::Tls(files) => Docker::connect_with_ssl(
                url,
                &files.key,
                &files.cert,
                &files.ca,
                backstop,
                API_DEFAULT_VERSION,
            ),
        }
        .map_err(|e| BackendError::Unreachable {
            endpoint: url.to_owned(),
            message: chain(&e),
        })?;
        let docker = match tokio::time::timeout(timeout, docker.negotiate_version()).await {
            Err(_) => {
                return Err(BackendError::Timeout {
                    endpoint: url.to_owned(),
                    after: timeout,
                })
            }
            Ok(Err(e)) => {
                return Err(
                    translate(url, timeout, "the API version", e).into_backend("the API version")
                )
            }
            Ok(Ok(docker)) => docker,
        };
        let prefix = format!("/v{}", docker.client_version());
        let docker = docker.with_request_modifier(move |mut request: BollardRequest| {
            if let Some(pinned) = pin_version(&request.uri().to_string(), &prefix) {
                if let Ok(uri) = pinned.parse() {
                    *request.uri_mut() = uri;
                }
            }
            request
        });
        Ok(Client {
            docker,
            endpoint: url.to_owned(),
            timeout,
        })
    }

    pub(crate) fn docker(&self) -> &Docker {
        &self.docker
    }

    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub(crate) fn api_version(&self) -> String {
        self.docker.client_version().to_string()
    }

    /// Runs one daemon call about `what` under the timeout.
    pub(crate) async fn call<T>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, DockerError>>,
    ) -> Result<T, Failure> {
        match tokio::time::timeout(self.timeout, fut).await {
            Err(_) => Err(Failure::Backend(BackendError::Timeout {
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

    /// Removes volume `name` from this daemon, never forcing.
    pub(crate) async fn remove_volume(&self, name: &str) -> Result<(), BackendError> {
        check_object_name("volume", name)?;
        let what = format!("volume {name:?}");
        let options = RemoveVolumeOptionsBuilder::default().force(false).build();
        match self
            .call(&what, self.docker.remove_volume(name, Some(options)))
            .await
        {
            Ok(()) | Err(Failure::Status { code: 404, .. }) => Ok(()),
            Err(Failure::Status { code: 409, message }) => Err(BackendError::InUse {
                object: what,
                message,
            }),
            Err(f) => Err(f.into_backend(&what)),
        }
    }
}

/// `uri` with its path under the negotiated API version `prefix` (`/v1.41`),
/// or `None` when it already has a version.
///
/// bollard 0.21 builds the versioned URL and then joins the absolute request
/// path onto it, which drops the version: requests would go out unversioned
/// and the daemon would answer in its newest API format, whatever was
/// negotiated. Pinning the path keeps a newer daemon answering in the
/// format the negotiation settled on.
fn pin_version(uri: &str, prefix: &str) -> Option<String> {
    let after_scheme = uri.find("://")? + 3;
    let path_start = after_scheme + uri[after_scheme..].find('/')?;
    let path = &uri[path_start..];
    let already = path
        .strip_prefix("/v")
        .and_then(|rest| rest.chars().next())
        .is_some_and(|c| c.is_ascii_digit());
    if already {
        return None;
    }
    Some(format!("{}{prefix}{path}", &uri[..path_start]))
}

/// Translates one bollard error about `what`.
fn translate(endpoint: &str, timeout: Duration, what: &str, e: DockerError) -> Failure {
    let backend = match e {
        DockerError::DockerResponseServerError {
            status_code,
            message,
        } => {
            return Failure::Status {
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
        | DockerError::SocketNotFoundError(_)
        | DockerError::CertPathError { .. }
        | DockerError::CertParseError { .. }
        | DockerError::CertMultipleKeys { .. }
        | DockerError::NoNativeCertsError { .. }
        | DockerError::LoadNativeCertsErrors { .. } => BackendError::Unreachable {
            endpoint: endpoint.to_owned(),
            message: chain(&e),
        },
        other => BackendError::Other {
            message: format!("{what}: {}", chain(&other)),
        },
    };
    Failure::Backend(backend)
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
        assert!(matches!(f, Failure::Status { code: 409, .. }));
        assert_eq!(
            f.into_backend("volume \"v\""),
            BackendError::Other {
                message: "volume \"v\": the daemon answered 409: in use".into()
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
    fn requests_are_pinned_to_the_negotiated_version() {
        assert_eq!(
            pin_version("unix://2f72756e/configs?filters=x", "/v1.41").as_deref(),
            Some("unix://2f72756e/v1.41/configs?filters=x")
        );
        assert_eq!(
            pin_version("http://h:2375/volumes/v1", "/v1.41").as_deref(),
            Some("http://h:2375/v1.41/volumes/v1")
        );
        assert_eq!(pin_version("http://h:2375/v1.41/info", "/v1.41"), None);
        assert_eq!(
            pin_version("http://h:2375/volumes", "/v1.41").as_deref(),
            Some("http://h:2375/v1.41/volumes")
        );
        assert_eq!(pin_version("no-scheme", "/v1.41"), None);
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
