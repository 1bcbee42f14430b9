//! Owner stamps: which releases this controller may ever consider its own.
//!
//! A release record carries `com.swarmcli.owner=<id>:<kind>/<name>`. This
//! controller stamps `cd/<controller>/<application>:release/<release>`,
//! with an application name of `[a-z0-9][a-z0-9._-]*`
//! ([`is_application_name`]), and reads a stamp back exactly as it writes
//! one: cut at its first `:`. A stamp under this controller's prefix in any
//! other shape was edited or copied by someone else and is nobody's
//! ([`Ownership::Malformed`]); every other shape is another controller's or
//! tool's. The sweep never deletes what is not provably its own.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Errors about owner stamps and controller ids.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum OwnerError {
    /// A controller id that could match another controller's stamps, break
    /// the stamp syntax or be mistyped invisibly (see [`ControllerId`]).
    #[error("controller id {id:?} is invalid: {why}")]
    InvalidController {
        /// The id as given.
        id: String,
        /// What is wrong with it, as `it contains '/'`.
        why: &'static str,
    },
}

/// The id of one controller instance, the `<controller>` in `cd/<controller>/`.
///
/// Two controllers may share a swarm; each only ever sweeps releases stamped
/// with its own id, so an id that could be a prefix of another's (`/`), break
/// the stamp syntax (`:`) or be mistyped invisibly (whitespace) is refused.
///
/// A plan read back from JSON goes through the same check: a hand-edited
/// plan cannot smuggle in an id that matches another controller's stamps.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(into = "String", try_from = "String")]
pub struct ControllerId(String);

impl TryFrom<String> for ControllerId {
    type Error = OwnerError;

    fn try_from(id: String) -> Result<Self, OwnerError> {
        ControllerId::new(id)
    }
}

impl From<ControllerId> for String {
    fn from(id: ControllerId) -> String {
        id.0
    }
}

impl ControllerId {
    /// Checks `id`: not empty, and no `/`, `:` or whitespace.
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

    /// The id as text.
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
        let Some(stamp) = stamp.filter(|s| !s.is_empty()) else {
            return Ownership::Unmanaged;
        };
        // Controller ids hold no '/', so `cd/<id>/` is a prefix of no other
        // controller's stamps: everything else is theirs or nobody's.
        let Some(after) = stamp
            .strip_prefix("cd/")
            .and_then(|s| s.strip_prefix(self.0.as_str()))
            .and_then(|s| s.strip_prefix('/'))
        else {
            return Ownership::Foreign;
        };
        match application_of(after, release) {
            Ok(application) => Ownership::Ours {
                application: application.to_owned(),
            },
            Err(reason) => Ownership::Malformed { reason },
        }
    }
}

/// `<application>:release/<release>`, cut where the controller cuts it: at
/// the first ':'. Cutting at the last one would read `a:b:release/web` as
/// application `a:b`, a name the controller can never have written.
fn application_of<'s>(after_prefix: &'s str, release: &str) -> Result<&'s str, String> {
    let Some((application, rest)) = after_prefix.split_once(':') else {
        return Err("it has no ':release/<release>' part".to_owned());
    };
    if !is_application_name(application) {
        return Err(format!(
            "its application part {application:?} is not an application name"
        ));
    }
    let Some(name) = rest.strip_prefix("release/") else {
        return Err(format!(
            "{rest:?} after the application is not 'release/<release>'"
        ));
    };
    if name != release {
        return Err(format!("it names release {name:?}, not this one"));
    }
    Ok(application)
}

/// Whether `name` is an application name: `^[a-z0-9][a-z0-9._-]*$`.
///
/// The controller only ever names applications this way, so a stamp whose
/// application part is anything else (upper case, whitespace, an invisible
/// or control character, a ':') was not written by it, and an app set that
/// lists such a name describes an application no stamp can belong to.
pub fn is_application_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z' | b'0'..=b'9'))
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-'))
}

impl fmt::Display for ControllerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The result of reading a release's stamp against this controller's id.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ownership {
    /// No stamp at all: deployed by hand or by another tool.
    Unmanaged,
    /// Another controller's stamp, or not a `cd/<controller>/` stamp at all.
    Foreign,
    /// Starts with this controller's `cd/<controller>/` but is not a stamp
    /// it writes for this release (`reason` says what is off): a stamp
    /// edited by hand or copied from another release. Not this
    /// controller's, and no other controller's either.
    Malformed {
        /// What is off, for people.
        reason: String,
    },
    /// Stamped by this controller for `application`.
    Ours {
        /// The application the stamp names.
        application: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctl() -> ControllerId {
        ControllerId::new("default").unwrap()
    }

    #[test]
    fn an_id_read_back_from_json_is_checked_like_a_new_one() {
        let id: ControllerId = serde_json::from_str("\"cd1\"").unwrap();
        assert_eq!(id.as_str(), "cd1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"cd1\"");
        for bad in ["\"a/b\"", "\"\"", "\"a:b\"", "\"a b\""] {
            assert!(serde_json::from_str::<ControllerId>(bad).is_err(), "{bad}");
        }
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
    fn other_controllers_and_other_shapes_are_foreign() {
        let c = ctl();
        for stamp in [
            "cd/other/edge:release/web",    // another controller
            "cd/defaultx/edge:release/web", // a controller whose id extends ours
            "cd/default:release/web",       // no application part
            "cd/edge:release/web",          // the old cd/<app> form
            "apply/edge:release/web",       // apply stamps
            "garbage",
            ":release/web",
            "CD/default/edge:release/web",
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
    fn our_prefix_with_anything_but_a_stamp_we_write_is_malformed() {
        let c = ctl();
        for stamp in [
            "cd/default/edge:release/other", // copied from another release
            "cd/default/:release/web",       // empty application
            "cd/default/a/b:release/web",    // application with '/'
            "cd/default/a:b:release/web",    // cut at the first ':' as written
            "cd/default/gone :release/web",  // trailing space
            "cd/default/go\tne:release/web",
            "cd/default/gone\u{200b}:release/web", // zero-width space
            "cd/default/gone\0:release/web",
            "cd/default/Edge:release/web",
            "cd/default/-edge:release/web",
            "cd/default/edge:deployment/web",
            "cd/default/edge:release/web ",
            "cd/default/edge",
            "cd/default/",
        ] {
            assert!(
                matches!(c.classify(Some(stamp), "web"), Ownership::Malformed { .. }),
                "{stamp:?}"
            );
        }
        let Ownership::Malformed { reason } =
            c.classify(Some("cd/default/gone :release/web"), "web")
        else {
            unreachable!()
        };
        assert!(reason.contains("\"gone \""), "{reason}");
    }

    #[test]
    fn the_stamp_is_cut_at_its_first_colon() {
        // A release name may hold ':' (the first one ends the application).
        assert_eq!(
            ctl().classify(Some("cd/default/edge:release/a:b"), "a:b"),
            ours("edge")
        );
        assert_eq!(
            ctl().classify(Some(&ctl().stamp("e.d_g-e9", "web")), "web"),
            ours("e.d_g-e9")
        );
    }

    #[test]
    fn application_names_follow_the_controller_grammar() {
        for good in ["a", "0", "edge", "shop-eu", "a.b_c-d", "9lives"] {
            assert!(is_application_name(good), "{good:?}");
        }
        for bad in [
            "",
            "-a",
            ".a",
            "_a",
            "Edge",
            "a b",
            "a\tb",
            "gone ",
            "gone\u{200b}",
            "a\0",
            "a:b",
            "a/b",
            "é",
            "a\n",
        ] {
            assert!(!is_application_name(bad), "{bad:?}");
        }
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
