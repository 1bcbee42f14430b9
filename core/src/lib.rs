//! The IO-free core of swarm-sweep.
//!
//! A controller deploys applications, each a set of releases (Docker
//! stacks), to one or more swarms, and stamps each release's records with
//! an owner stamp. When an application leaves the app set, its releases must
//! go. This crate decides which may go ([`plan()`]) from plain snapshots, and
//! never touches a socket, a file, a clock or a thread: drivers gather the
//! [`Snapshot`] and carry the [`SweepPlan`] out.
//!
//! Every decision is made on swarm-qualified names ([`ReleaseRef`]): release
//! names are unique within a swarm and not across swarms.

pub mod agent;
pub mod app_set_doc;
pub mod duration;
pub mod escape;
pub mod explain;
pub mod format;
pub mod grace;
mod names;
pub mod objects;
pub mod owner;
pub mod plan;
pub mod refs;
pub mod render;
pub mod saved;
pub mod snapshot;
pub mod sweep;
pub mod verdict;

pub use app_set_doc::AppSetError;
pub use format::{FormatVersion, FORMAT_VERSION};
pub use grace::{Departed, GraceState, NotCurrent, UnixTime};
pub use objects::{NodeVolumes, ObjectVersion, ServiceEntry, StackObjects, KEEP_LABEL};
pub use owner::{is_application_name, ControllerId, OwnerError, Ownership};
pub use plan::{
    plan, Coverage, Deletion, DeletionReason, Hold, HoldReason, Observed, SpareReason, Spared,
    SwarmPlan, SweepPlan, Uncovered,
};
pub use refs::{ReleaseRef, SwarmName};
pub use snapshot::{
    AppSet, AppState, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SnapshotError,
    SwarmSnapshot,
};
pub use sweep::{
    report_text, Action, ActionId, ActionKind, Outcome, ReleaseOutcome, Settings, StampChange,
    StampRead, Sweep, SweepError, SweepReport, Timestamp,
};
pub use verdict::{apply_status, plan_detailed_status, plan_status, snapshot_status, Status};
