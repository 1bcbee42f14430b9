//! Release records: the configs a chart engine writes for each revision of
//! a release, and what can be read from them without IO.
//!
//! A record is a swarm config named `swarmcli.release.<release>.v<revision>`
//! ([`name`]), labelled with the keys of [`labels`], whose data is gzip of
//! one YAML document ([`payload`]); that document holds the rendered
//! Compose manifest, from which [`manifest`] says which objects `docker
//! stack deploy` created for the release.
//!
//! Everything here is read from configs anyone who can create one may have
//! written: every reader is bounded (input sizes, decoded size, YAML
//! budgets) and refuses with a typed error rather than guessing or
//! panicking.

pub mod labels;
pub mod manifest;
pub mod name;
pub mod payload;
pub mod revision;

use crate::yaml::Limits;

pub use manifest::{declared, Declared, Kind, ManifestError};
pub use name::{parse_record_name, record_name, NameError, NAME_PREFIX};
pub use payload::{decode_payload, Chart, PayloadError, PayloadLimits, ReleaseDocument};
pub use revision::{
    read_payload, Payload, RevisionDocument, RevisionRead, MAX_DOCUMENT_TEXT_BYTES,
    MAX_REASON_CHARS,
};

/// The YAML budgets of a record's document and of its manifest: an app
/// set's ([`Limits::DEFAULT`]), but 64 levels deep, since a release's
/// values are the operator's own nested configuration.
pub const YAML_LIMITS: Limits = Limits {
    max_depth: 64,
    ..Limits::DEFAULT
};
