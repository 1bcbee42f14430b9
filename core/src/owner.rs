//! Owner stamps: which releases this controller may ever consider its own.
//!
//! A release record carries `com.swarmcli.owner=<id>:<kind>/<name>`. This
//! controller stamps `cd/<controller>/<application>:release/<release>`. Every
//! other shape is somebody else's, and the sweep never deletes what is not
//! provably its own.

use std::fmt;

use serde::Serialize;
use thiserror::Error;

/// Errors about owner stamps and controller ids.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OwnerError {
    #[error("controller id {id:?} is invalid: {why}")]
    InvalidController { id: String, why: &'static str },
}

/// The id of one controller instance, the `<controller>` in `cd/<controller>/`.
///
/// Two controllers may share a swarm; each only ever sweeps releases stamped
/// with its own id, so an id that could be a prefix of another's (`/`), break
/// the stamp syntax (`:`) or be mistyped invisibly (whitespace) is refused.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct ControllerId(String);

impl ControllerId {
    pub fn new(id: impl Into<String>) -> Result<Self, OwnerError> {
        let id = id.into();
        let why = if id.is_empty() {
            Some("it is empty")
        } else if id.contains('/') {
            Some("it contains '/'")
        } else if id.contains(':') {
            Some("it contains ':'")
        } else if id.chars().any(char::is_whitespace) {
            Some("it contains whitespace")
        } else {
            None
        };
        match why {
            Some(why) => Err(OwnerError::InvalidController { id, why }),
            None => Ok(ControllerId(id)),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The stamp this controller writes on a release of `application`.
    pub fn stamp(&self, application: &str, release: &str) -> String {
        format!("cd/{}/{}:release/{}", self.0, application, release)
    }

    /// Whose release this is, as far as this controller is concerned.
    ///
    /// `release` is the name of the release the stamp was read from: a stamp
    /// copied onto another release does not make that release ours.
    pub fn classify(&self, stamp: Option<&str>, release: &str) -> Ownership {
        let Some(stamp) = stamp else {
            return Ownership::Unmanaged;
        };
        if stamp.is_empty() {
            return Ownership::Unmanaged;
        }
        match self.application_of(stamp, release) {
            Some(application) => Ownership::Ours {
                application: application.to_owned(),
            },
            None => Ownership::Foreign,
        }
    }

    fn application_of<'s>(&self, stamp: &'s str, release: &str) -> Option<&'s str> {
        // Release names never contain ':', so the last ':' separates the id
        // from `<kind>/<name>` even if an application name contains one.
        let (id, kind_name) = stamp.rsplit_once(':')?;
        let (kind, name) = kind_name.split_once('/')?;
        if kind != "release" || name != release {
            return None;
        }
        let application = id.strip_prefix("cd/")?.strip_prefix(self.0.as_str())?;
        let application = application.strip_prefix('/')?;
        if application.is_empty() || application.contains('/') {
            return None;
        }
        Some(application)
    }
}

impl fmt::Display for ControllerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The result of reading a release's stamp against this controller's id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// No stamp at all: deployed by hand or by another tool.
    Unmanaged,
    /// A stamp that is not this controller's, or that does not parse.
    Foreign,
    /// Stamped by this controller for `application`.
    Ours { application: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctl() -> ControllerId {
        ControllerId::new("default").unwrap()
    }

    fn ours(app: &str) -> Ownership {
        Ownership::Ours {
            application: app.into(),
        }
    }

    #[test]
    fn own_stamp_names_the_application() {
        assert_eq!(
            ctl().classify(Some("cd/default/edge:release/web"), "web"),
            ours("edge")
        );
        assert_eq!(
            ctl().classify(Some(&ctl().stamp("edge", "web")), "web"),
            ours("edge")
        );
    }

    #[test]
    fn anything_else_is_not_ours() {
        let c = ctl();
        for stamp in [
            "cd/default/edge:release/other", // copied from another release
            "cd/other/edge:release/web",     // another controller
            "cd/defaultx/edge:release/web",  // a controller whose id extends ours
            "cd/default:release/web",        // no application part
            "cd/default/:release/web",       // empty application
            "cd/default/a/b:release/web",    // application with '/'
            "cd/edge:release/web",           // the old cd/<app> form
            "apply/edge:release/web",        // apply stamps
            "cd/default/edge:deployment/web",
            "cd/default/edge",
            "garbage",
            ":release/web",
        ] {
            assert_eq!(
                c.classify(Some(stamp), "web"),
                Ownership::Foreign,
                "{stamp}"
            );
        }
        assert_eq!(c.classify(None, "web"), Ownership::Unmanaged);
        assert_eq!(c.classify(Some(""), "web"), Ownership::Unmanaged);
    }

    #[test]
    fn controller_ids_are_validated() {
        for bad in ["", "a/b", "a:b", "a b", "a\tb"] {
            assert!(matches!(
                ControllerId::new(bad),
                Err(OwnerError::InvalidController { .. })
            ));
        }
        assert_eq!(ControllerId::new("prod-1").unwrap().as_str(), "prod-1");
    }
}
