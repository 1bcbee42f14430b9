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
use crate::cut::cut;

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
///
/// What is kept of a document is bounded, not only what is read: a few
/// kilobytes of gzip can hold a name of megabytes, and a thousand records
/// of them would be gigabytes in the snapshot and the plan. A reason is
/// cut at [`MAX_REASON_CHARS`]; a document holding a string longer than
/// [`MAX_DOCUMENT_TEXT_BYTES`] (no engine name, stamp or status is) is
/// unreadable.
pub fn read_payload(data: &[u8], release: &str) -> Payload {
    let unreadable = |why: String| Payload::Unreadable(cut(&why, MAX_REASON_CHARS));
    let document = match decode_payload(data, PayloadLimits::DEFAULT) {
        Ok(document) => document,
        Err(e) => return unreadable(e.to_string()),
    };
    if let Some(namespace) = document.namespace.as_deref() {
        if namespace != release {
            return unreadable(format!(
                "its namespace {namespace:?} is not the release {release:?}"
            ));
        }
    }
    let declares = match declared(&document.manifest, release, YAML_LIMITS) {
        Ok(declares) => declares,
        Err(e) => return unreadable(e.to_string()),
    };
    let texts = [
        Some(&document.release),
        document.owner.as_ref(),
        document.status.as_ref(),
    ];
    let longest = texts
        .into_iter()
        .flatten()
        .chain(&declares.services)
        .chain(&declares.networks)
        .chain(&declares.configs)
        .chain(&declares.secrets)
        .map(String::len)
        .max()
        .unwrap_or(0);
    if longest > MAX_DOCUMENT_TEXT_BYTES {
        return unreadable(format!(
            "it holds a name or stamp of {longest} bytes, more than the \
             {MAX_DOCUMENT_TEXT_BYTES} a record's may take"
        ));
    }
    Payload::Read(RevisionDocument {
        release: document.release,
        revision: document.revision,
        owner: document.owner,
        status: document.status,
        declares,
    })
}

/// The most characters of why a record's data did not read that a
/// snapshot keeps.
pub const MAX_REASON_CHARS: usize = 512;

/// The longest release, owner stamp, status or declared name a record's
/// document may hold, in bytes: far above any the engine or the chart
/// engine writes (an object's name is at most 64 characters).
pub const MAX_DOCUMENT_TEXT_BYTES: usize = 1024;

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::record::manifest::Kind;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(data).unwrap();
        gz.finish().unwrap()
    }

    fn document(manifest: &str, owner: &str) -> Vec<u8> {
        let manifest = manifest.replace('\n', "\n  ");
        gzip(
            format!(
                "release: shop\nrevision: 2\nstatus: deployed\nnamespace: shop\n\
                 owner: {owner}\nmanifest: |\n  {manifest}\n"
            )
            .as_bytes(),
        )
    }

    #[test]
    fn a_document_of_ordinary_names_reads() {
        let data = document(
            "services:\n  web:\n    image: shop\n    configs: [conf]\nconfigs:\n  conf:\n    file: ./c",
            "cd/default/store:release/shop",
        );
        let Payload::Read(read) = read_payload(&data, "shop") else {
            panic!("{:?}", read_payload(&data, "shop"));
        };
        assert!(read.declares.contains(Kind::Service, "shop_web"));
        assert!(read.declares.contains(Kind::Config, "shop_conf"));
    }

    /// A few kilobytes of gzip holding a name of megabytes: what is kept
    /// of the record is a short reason, whichever part held the name.
    #[test]
    fn a_name_of_megabytes_keeps_a_short_reason_not_the_name() {
        let long = "a".repeat(4 << 20);
        let cases = [
            // A variable Compose would substitute, named at length.
            document(
                &format!("configs:\n  conf:\n    name: \"${long}\"\n    file: ./c"),
                "o",
            ),
            document(
                &format!("services:\n  web:\n    configs: [conf]\nconfigs:\n  conf:\n    external: \"{long}\""),
                "o",
            ),
            // A declared name, and a stamp, that read but are too long.
            document(&format!("services:\n  w{long}:\n    image: shop"), "o"),
            document("services:\n  web:\n    image: shop", &long),
            // Another stack's document, under a namespace of megabytes.
            gzip(format!("release: shop\nrevision: 2\nnamespace: {long}\nmanifest: ''\n").as_bytes()),
        ];
        for (i, data) in cases.iter().enumerate() {
            assert!(data.len() < 64 * 1024, "case {i}: {} bytes", data.len());
            match read_payload(data, "shop") {
                Payload::Unreadable(why) => {
                    assert!(
                        why.chars().count() <= MAX_REASON_CHARS + 1,
                        "case {i}: {}",
                        why.len()
                    )
                }
                Payload::Read(read) => panic!(
                    "case {i} read: {} bytes of owner",
                    read.owner.map_or(0, |o| o.len())
                ),
            }
        }
    }
}
