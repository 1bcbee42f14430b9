//! One stored revision of a release as a snapshot carries it: the record's
//! name and labels as listed, and what its data says, read once by
//! [`read_payload`] into the facts the resource rule needs (which objects
//! the revision's manifest declared, and whose it says it is).
//!
//! The data itself never reaches the snapshot: a record may hold up to
//! 500 KiB of gzip, a release keeps ten of them, and the rule needs a few
//! names of each.

use serde::{Deserialize, Serialize};

use super::manifest::{declared, Declared};
use super::payload::{decode_payload, PayloadLimits};
use super::YAML_LIMITS;

/// One release record of a release, as read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct RevisionRead {
    /// The record's config name (`swarmcli.release.<release>.v<revision>`).
    pub name: String,
    /// Its `com.swarmcli.revision` label as written; `None` without one.
    #[serde(default)]
    pub revision: Option<String>,
    /// Its `com.swarmcli.owner` label; `None` without one.
    #[serde(default)]
    pub owner: Option<String>,
    /// Its `com.swarmcli.status` label; `None` without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub status: Option<String>,
    /// What its data says; `None` when it was not read (the rule that needs
    /// it is off, or the application did not opt in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
}

impl RevisionRead {
    /// A record with its labels, its data not read.
    pub fn new(name: impl Into<String>, revision: Option<String>, owner: Option<String>) -> Self {
        RevisionRead {
            name: name.into(),
            revision,
            owner,
            status: None,
            payload: None,
        }
    }

    /// With its `com.swarmcli.status` label.
    pub fn with_status(mut self, status: impl Into<String>) -> Self {
        self.status = Some(status.into());
        self
    }

    /// With what its data says.
    pub fn with_payload(mut self, payload: Payload) -> Self {
        self.payload = Some(payload);
        self
    }
}

/// What a record's data says.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum Payload {
    /// The document, reduced to what the resource rule reads.
    Read(RevisionDocument),
    /// The data could not be read (not gzip, not YAML, over a limit, a
    /// manifest whose names are not known): why, on one line.
    Unreadable(String),
}

/// A record's document, reduced to what the resource rule reads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct RevisionDocument {
    /// The document's `release`.
    pub release: String,
    /// The document's `revision`.
    pub revision: u64,
    /// The document's `owner` stamp; `None` without one.
    #[serde(default)]
    pub owner: Option<String>,
    /// The document's `status` (`deployed`, `failed`, `superseded`,
    /// `pending-upgrade`, ...); `None` without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(default))]
    pub status: Option<String>,
    /// The objects its manifest declares, under the release's stack.
    pub declares: Declared,
}

impl RevisionDocument {
    /// A document of `release` at `revision`, stamped `owner`, declaring
    /// `declares`.
    pub fn new(
        release: impl Into<String>,
        revision: u64,
        owner: Option<String>,
        declares: Declared,
    ) -> Self {
        RevisionDocument {
            release: release.into(),
            revision,
            owner,
            status: None,
            declares,
        }
    }

    /// With the document's `status`.
    pub fn with_status(mut self, status: impl Into<String>) -> Self {
        self.status = Some(status.into());
        self
    }
}

/// Reads the data of a record of `release` (gzip of YAML, the API's base64
/// already removed) into what the resource rule needs: the document's
/// release, revision and owner, and the objects its manifest declares under
/// the release's stack. Never fails: what cannot be read is
/// [`Payload::Unreadable`], with why.
///
/// A document whose `namespace` is not the release was deployed as another
/// stack, so the names its manifest gives under the release's would be
/// wrong: it is unreadable too.
pub fn read_payload(data: &[u8], release: &str) -> Payload {
    let document = match decode_payload(data, PayloadLimits::DEFAULT) {
        Ok(document) => document,
        Err(e) => return Payload::Unreadable(e.to_string()),
    };
    if let Some(namespace) = document.namespace.as_deref() {
        if namespace != release {
            return Payload::Unreadable(format!(
                "its namespace {namespace:?} is not the release {release:?}"
            ));
        }
    }
    match declared(&document.manifest, release, YAML_LIMITS) {
        Ok(declares) => Payload::Read(RevisionDocument {
            release: document.release,
            revision: document.revision,
            owner: document.owner,
            status: document.status,
            declares,
        }),
        Err(e) => Payload::Unreadable(e.to_string()),
    }
}
