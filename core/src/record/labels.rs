//! The labels of a release record, and the controller's marker on what it
//! created: one constant per key, the only place each key is spelled.
//!
//! The chart engine writes them; the Docker driver finds records by them
//! (`sweep_docker::labels` re-exports these), and a rule that named a key
//! twice would break the day one spelling changed and the other did not.

/// The label marking a config as a release record (value [`RECORD_TYPE`]).
pub const TYPE: &str = "com.swarmcli.type";
/// The value of [`TYPE`] on release records.
pub const RECORD_TYPE: &str = "release";
/// The label naming the release a record belongs to.
pub const RELEASE: &str = "com.swarmcli.release";
/// The label holding a record's revision, a decimal number.
pub const REVISION: &str = "com.swarmcli.revision";
/// The label holding a record's status (`deployed`, `superseded`, ...).
pub const STATUS: &str = "com.swarmcli.status";
/// The label naming the chart a record's release was rendered from.
pub const CHART: &str = "com.swarmcli.chart";
/// The label holding that chart's version.
pub const CHART_VERSION: &str = "com.swarmcli.chart.version";
/// The label holding when the record was written (RFC 3339).
pub const CREATED: &str = "com.swarmcli.created";
/// The label holding a record's owner stamp (see [`crate::owner`]).
pub const OWNER: &str = "com.swarmcli.owner";
/// The label the controller puts on the configs and secrets it created
/// itself, outside any stack.
pub const CD_CREATED: &str = "com.swarmcli.cd.created";
