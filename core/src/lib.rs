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
//!
//! # How to embed
//!
//! 1. **Gather a [`Snapshot`]**: the policy, the app set and, per swarm, its
//!    releases with their owner stamps. Build one in code
//!    ([`Snapshot::new`], [`SwarmSnapshot::new`], [`ReleaseEntry::new`],
//!    [`Application::reconciled`]), or read the JSON input contract with
//!    [`Snapshot::from_json`] (`docs/reference.md`, "The snapshot (input
//!    contract)"; the JSON Schema is generated with the `schema` feature).
//! 2. **Plan** with [`plan()`] (or [`plan::plan_json`] straight from JSON
//!    text). The [`SweepPlan`] lists the [`Deletion`]s, every [`Spared`]
//!    release with its reason, the [`Hold`]s that stop the sweep, and the
//!    swarms a volume purge cannot fully reach ([`Uncovered`]). Planning is
//!    pure and deterministic; [`verdict`] turns a plan into an exit status,
//!    [`render`] into text for people, [`markdown`] into a pull-request
//!    comment, [`explain`] into the reasons for one release; [`PlanDiff`]
//!    compares the plans of two app sets on one snapshot.
//! 3. **Carry it out** with [`Sweep`], a sans-IO state machine that decides
//!    what to do next and in which order (the stack, then its volumes on
//!    every node, the release records last), re-reading stamps before each
//!    destructive step. The calling protocol: ask
//!    [`Sweep::poll_action`] for the next [`Action`] and run it; answer each
//!    with [`Sweep::handle_outcome`]; pass what the engine says unasked to
//!    [`Sweep::handle_event`]; when no action is ready, wait until
//!    [`Sweep::poll_timeout`]; stop when [`Sweep::is_done`], and read the
//!    [`SweepReport`] from [`Sweep::report`]. Time is a value the driver
//!    passes in ([`Timestamp`]).
//!
//! The `sweep-runner` crate (`drivers/runner`) is such a driver: it gathers
//! the snapshot from a registry of swarms and runs a sweep's actions
//! concurrently with tokio. Embed this crate directly to plan without IO
//! (in a test, a web page, another controller) or to drive a sweep your own
//! way.
//!
//! [`record`] reads a chart engine's release records (their config names,
//! their gzip-of-YAML data, the objects their Compose manifest declares)
//! under bounds, also without IO.
//!
//! # Example
//!
//! ```
//! use sweep_core::sweep::{ActionKind, Outcome, Settings, Sweep};
//! use sweep_core::{plan, Snapshot, Timestamp};
//!
//! let snapshot = Snapshot::from_json(r#"{
//!     "app_set": {"loaded": true, "applications": [
//!         {"name": "shop", "swarm": "alpha", "releases": ["web"]}
//!     ]},
//!     "swarms": [{"swarm": "alpha", "releases": [
//!         {"name": "web", "owner": "cd/default/shop:release/web"},
//!         {"name": "blog", "owner": "cd/default/blog:release/blog"}
//!     ]}]
//! }"#)?;
//! let plan = plan(&snapshot)?;
//! assert_eq!(plan.deletions.len(), 1);
//!
//! // A driver of a world where every action succeeds at once.
//! let mut sweep = Sweep::new(&plan, Settings::default());
//! let now = Timestamp::ZERO;
//! while let Some(action) = sweep.poll_action(now) {
//!     let outcome = match action.kind {
//!         ActionKind::ListVolumes { .. } => Outcome::Volumes(Vec::new()),
//!         ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
//!         // A real driver reads the records under each name; here the
//!         // release is still stamped, and its records are, as planned.
//!         ActionKind::ReadStamps { target, .. } => Outcome::as_planned(&plan, &target),
//!         // Nobody else uses anything of it.
//!         ActionKind::ReadUsage { .. } => Outcome::Usage(Default::default()),
//!         _ => Outcome::Done,
//!     };
//!     sweep.handle_outcome(action.id, outcome, now).expect("an answer it asked for");
//! }
//! assert!(sweep.is_done());
//! assert!(!sweep.report().failed());
//! # Ok::<(), sweep_core::SnapshotError>(())
//! ```

#![warn(missing_docs)]

pub mod agent;
pub mod app_set_doc;
pub mod audit;
pub mod bound;
mod cut;
pub mod deletion_window;
pub mod duration;
pub mod escape;
pub mod explain;
pub mod format;
pub mod grace;
mod grace_update;
pub mod map_only;
pub mod markdown;
mod names;
pub mod notify;
mod notify_memory;
pub mod objects;
pub mod owner;
mod parallel;
pub mod plan;
pub mod plan_diff;
pub mod reads;
pub mod record;
pub mod refs;
pub mod render;
pub mod saved;
pub mod snapshot;
pub mod stacks;
pub mod sweep;
pub mod time;
pub mod usage;
pub mod verdict;
pub mod yaml;

pub use app_set_doc::AppSetError;
pub use format::{FormatVersion, FORMAT_VERSION, OLDEST_FORMAT_VERSION};
pub use grace::{Departed, GraceState, NotCurrent};
pub use objects::{
    NodeVolumes, ObjectVersion, ServiceEntry, StackObjects, KEEP_LABEL, STACK_LABEL,
};
pub use owner::{is_application_name, ControllerId, OwnerError, Ownership};
pub use plan::{
    plan, Coverage, Deletion, DeletionReason, Hold, HoldReason, Observed, PlanWindows, SpareReason,
    Spared, SwarmPlan, SweepPlan, Uncovered,
};
pub use plan_diff::PlanDiff;
pub use refs::{ReleaseRef, SwarmName};
pub use snapshot::{
    AppSet, AppState, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SnapshotError,
    SwarmSnapshot,
};
pub use sweep::{
    report_text, Action, ActionId, ActionKind, ObjectReport, Outcome, ReleaseOutcome, Settings,
    StampChange, StampRead, Sweep, SweepError, SweepReport,
};
pub use time::{Timestamp, UnixTime};
pub use verdict::{
    apply_status, diff_detailed_status, plan_detailed_status, plan_status, snapshot_status, Status,
};
