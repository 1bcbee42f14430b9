//! The snapshot: everything the planner knows, as plain values.
//!
//! This is a public contract (`swarm-sweep plan --snapshot FILE` reads it,
//! `swarm-sweep snapshot` writes it), so field names never change and unknown
//! fields are refused: a misspelt `purge_volume` silently ignored would turn
//! a purge off, a misspelt `max_deletion` would drop the blast-radius guard.
//! For the same reason the text is exactly one JSON object and every struct
//! in it is an object: a second document, trailing text or a struct written
//! as an array of its values is refused, never half-read.
//!
//! The schema is stated once, on the types (`types`): their fields, which
//! are optional and their defaults, what is refused. The JSON Schema in
//! `schemas/` is derived from the same attributes. The types are generic
//! over how they hold names ([`SnapshotStr`]): `Snapshot` is
//! `Snapshot<String>`, and `plan --snapshot` reads a `Snapshot` borrowing
//! its names from the file's text so that a large file's names are not
//! copied. Adding a field is one edit to its type; both readers, the
//! writer, the schema and validation follow from it.
//!
//! - `types`: the structs, their constructors;
//! - `read`: one JSON document, bounded, every struct only from an object;
//! - `validate`: what the schema cannot check (unique, well-formed names);
//! - `text`: owned and borrowed names;
//! - `window`: the grace period's JSON.

pub(crate) mod read;
mod split;
mod text;
mod types;
mod validate;
pub(crate) mod window;

use thiserror::Error;

use crate::owner::OwnerError;
use crate::refs::SwarmName;

pub(crate) use read::{one_json_document, snapshot_in_place};
#[cfg(feature = "schema")]
pub use text::SchemaStr;
pub(crate) use text::Text;
pub use text::{ReadStr, SnapshotStr, WriteStr};
pub(crate) use types::Facts;
pub use types::{
    AppSet, AppState, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot,
};

/// Errors that make a snapshot unusable. Nothing is planned from one.
///
/// Its `Display` is the message for people; it quotes names from the
/// snapshot with `{:?}`, so it carries no raw control character.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// The JSON does not parse or does not fit the schema; `path` is the
    /// field it stopped at (`swarms[1].nodes[0].id`), empty for the root.
    #[error("{}: {message}", if path.is_empty() { "(root)" } else { path.as_str() })]
    Parse {
        /// Where the reader stopped, as `swarms[1].nodes[0].id`.
        path: String,
        /// What is wrong there, as the JSON reader says it.
        message: String,
    },
    /// A stamp names an application, not a swarm, so two applications of
    /// one name would make every stamp of that name ambiguous.
    #[error("app_set.applications: application {name:?} is listed twice")]
    DuplicateApplication {
        /// The application's name.
        name: String,
    },
    /// Two entries of `swarms` have one name: which of them tells what the
    /// swarm holds would be a guess.
    #[error("swarms: swarm {:?} is listed twice", swarm.as_str())]
    DuplicateSwarm {
        /// The swarm's name.
        swarm: SwarmName,
    },
    /// One swarm entry lists a release name twice: release names are
    /// unique within a swarm, so one of the two is not what the swarm
    /// holds.
    #[error("swarms: swarm {:?}: releases: release {release:?} is listed twice", swarm.as_str())]
    DuplicateRelease {
        /// The swarm entry.
        swarm: SwarmName,
        /// The release name.
        release: String,
    },
    /// One swarm entry lists a node id twice (in `nodes` or `members`):
    /// the node id is the key coverage counts by.
    #[error("swarms: swarm {:?}: nodes: node id {node:?} is listed twice", swarm.as_str())]
    DuplicateNode {
        /// The swarm entry.
        swarm: SwarmName,
        /// The node id.
        node: String,
    },
    /// A name that must not be empty is; `field` says which.
    #[error("{field}: must not be empty")]
    EmptyName {
        /// The path to the field, as `swarms[0].releases[2].name`.
        field: String,
    },
    /// The controller only writes stamps for names of the grammar
    /// [`is_application_name`](crate::owner::is_application_name) checks, so an application named otherwise
    /// could never own a release and would silently own nothing. `field`
    /// is `app_set.applications[<i>].name`.
    #[error("{field}: application name {name:?} is not of the form [a-z0-9][a-z0-9._-]*, so no owner stamp can name it")]
    InvalidApplicationName {
        /// The path to the field.
        field: String,
        /// The name as given.
        name: String,
    },
    /// `policy.controller` is not a valid controller id (see
    /// [`ControllerId::new`](crate::owner::ControllerId::new)).
    #[error("policy.controller: {0}")]
    Controller(#[from] OwnerError),
    /// The document holds more JSON values than
    /// [`MAX_JSON_VALUES`](crate::bound::MAX_JSON_VALUES): parsed, it would
    /// take more memory than any document this tool reads may. Refused
    /// before any of it is parsed.
    #[error("(root): the document holds more than {limit} JSON values, more than any document this tool reads")]
    TooManyValues {
        /// The most values a document may hold.
        limit: u64,
    },
}

impl From<crate::bound::TooManyValues> for SnapshotError {
    fn from(e: crate::bound::TooManyValues) -> Self {
        SnapshotError::TooManyValues { limit: e.limit }
    }
}

#[cfg(test)]
mod tests;
