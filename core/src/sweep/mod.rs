//! The sweep: carrying a [`SweepPlan`] out, as a sans-IO state machine.
//!
//! [`Sweep`] decides what to do next and in which order; a driver does it
//! (talks to Docker, sleeps, runs things concurrently) and reports back.
//! Keeping the two apart lets every ordering rule be tested in virtual time
//! against a model world, with faults no real swarm produces on demand.
//!
//! The modules, one job each: [`action`] what the driver is asked to do,
//! [`outcome`] what it reports back, [`event`] what the engine says unasked,
//! `release` one release's state machine, `removal` the one retry policy
//! for what is still in use,
//! [`report`] the result, [`render`] the result as text; time is a
//! value the driver passes in ([`crate::time`]).

pub mod action;
mod agenda;
mod dropped;
pub mod event;
mod ledger;
mod nodes;
pub mod outcome;
mod release;
mod removal;
pub mod render;
pub mod report;
pub mod trace;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use thiserror::Error;

use crate::owner::ControllerId;
use crate::plan::{Coverage, SweepPlan, Uncovered};
use crate::refs::{ReleaseRef, SwarmName};
use crate::snapshot::NodeEntry;

pub use action::{
    label_filter, Action, ActionId, ActionKind, StackPart, Step, Target, Where, MANAGER,
    STACK_LABEL,
};
pub use event::Event;
pub use outcome::{Failure, Outcome, StampRead, UsageRead};
pub use render::report_text;
pub use report::{
    DroppedReport, ErrorEntry, ErrorKind, Leftover, ObjectKind, ObjectOutcome, ObjectReason,
    ObjectReport, ReleaseOutcome, ReleaseReport, StampChange, SweepReport, Totals, UncoveredSwarm,
};
pub use trace::{EventMark, Span, SpanOutcome, SweepTrace};
// Where it always was for embedders; time is its own module.
pub use crate::time::Timestamp;

use agenda::Agenda;
use dropped::{DropKey, DropRun};
use nodes::{NodesSince, PlannedNodes};
use release::{Key, Place, ReleaseRun};

/// Errors in how a driver calls the sweep. Each leaves the sweep as it was:
/// an answer refused here is not taken, and the action it was meant for (if
/// any) stays outstanding.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SweepError {
    /// The id was never handed out by this sweep.
    #[error("action {0} was never handed out")]
    UnknownAction(ActionId),
    /// The id was handed out and already answered.
    #[error("action {0} was already answered")]
    AlreadyAnswered(ActionId),
    /// A success of the wrong shape: a listing answered `Done`, or a
    /// removal answered with names. The action stays outstanding.
    #[error("action {id} ({action}) cannot have a `{outcome}` outcome")]
    OutcomeMismatch {
        /// The action answered.
        id: ActionId,
        /// What kind of action it is.
        action: Step,
        /// What kind of outcome it was answered with
        /// ([`Outcome::kind_str`]).
        outcome: &'static str,
    },
}

/// How long to wait for what is still in use: a stack's networks, secrets
/// and configs while its tasks stop, and its volumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// How often something still in use is tried again when no engine
    /// event ([`Event`]) says it may be free sooner. Taken as at least
    /// [`Settings::MIN_RETRY_INTERVAL`]: a retry at the same instant would
    /// spin a driver on virtual time forever.
    pub retry_interval: Duration,
    /// How long each object may stay in use, from its own first attempt,
    /// before its release is failed.
    pub settle_timeout: Duration,
    /// Record a [`SweepTrace`] ([`Sweep::trace`]). Off by default: it
    /// holds one span per action.
    pub trace: bool,
}

impl Settings {
    /// The shortest retry interval a sweep uses; a shorter one is raised
    /// to it.
    pub const MIN_RETRY_INTERVAL: Duration = Duration::from_millis(1);

    /// Settings that retry every `retry_interval` and give each object up
    /// to `settle_timeout` from its own first attempt.
    pub fn new(retry_interval: Duration, settle_timeout: Duration) -> Self {
        Settings {
            retry_interval,
            settle_timeout,
            trace: false,
        }
    }

    /// The same settings, recording a [`SweepTrace`].
    pub fn traced(self) -> Self {
        Settings {
            trace: true,
            ..self
        }
    }
}

impl Default for Settings {
    /// Retry every 2 s for up to 30 s.
    fn default() -> Self {
        Settings::new(Duration::from_secs(2), Duration::from_secs(30))
    }
}

/// A sweep in progress.
///
/// # Calling protocol
///
/// ```text
/// let mut sweep = Sweep::new(&plan, Settings::default());
/// loop {
///     // 1. Take every action that may run now, up to your own limit.
///     while running < limit {
///         match sweep.poll_action(now()) { Some(a) => start(a), None => break }
///     }
///     // 2. Stop when done.
///     if sweep.is_done() { break }
///     // 3. Wait for the first of: an action finishing, or the deadline.
///     match wait(sweep.poll_timeout()) {
///         Finished(id, outcome) => sweep.handle_outcome(id, outcome, now())?,
///         DeadlineReached => {}
///     }
/// }
/// let report = sweep.report();
/// ```
///
/// * `poll_action(now)` hands out the next action that may run at `now`,
///   or `None`. Several may be outstanding at once (different releases,
///   different nodes, different volumes); the driver limits concurrency
///   just by not polling. Every action handed out must be answered once.
/// * `handle_outcome(id, outcome, now)` takes an action's result. New
///   actions may become ready: poll again.
/// * `handle_event(event, now)` takes what the engine said unasked (a
///   container of a stack went); a removal waiting on a retry may become
///   ready at once: poll again. Events are optional: without them retries
///   follow [`Settings::retry_interval`].
/// * `poll_timeout()` is the earliest time a waiting retry becomes ready
///   (it may be `<= now` when the driver was at its limit); `None` when
///   nothing waits on time. Time only ever comes in as a parameter.
/// * `is_done()` is true when nothing is outstanding and nothing is left
///   to hand out; `report()` may be called at any time, and reports an
///   unfinished release as failed (its records are kept).
///
/// Errors ([`SweepError`]) are for a driver calling out of protocol; they
/// never change the sweep's state.
///
/// # Example
///
/// Application `shop` left the app set, `blog` is still in it: the plan
/// deletes release `shop`, and the sweep carries that out against a
/// pretend swarm where every step works, except that the volume is still
/// in use at the first attempt.
///
/// ```
/// use std::time::Duration;
///
/// use sweep_core::sweep::{ActionKind, Outcome, Settings, StampRead, Sweep, Timestamp, UsageRead};
/// use sweep_core::{plan, ReleaseEntry, ReleaseOutcome, Snapshot};
///
/// let snapshot = Snapshot::from_json(
///     r#"{"policy": {"controller": "default", "purge_volumes": true},
///         "app_set": {"loaded": true, "applications": [
///             {"name": "blog", "swarm": "", "releases": ["blog"]}]},
///         "swarms": [{"swarm": "", "node_count": 1,
///             "nodes": [{"id": "n1", "hostname": "node-1"}],
///             "releases": [
///                 {"name": "blog", "owner": "cd/default/blog:release/blog"},
///                 {"name": "shop", "owner": "cd/default/shop:release/shop"}]}]}"#,
/// )?;
/// let plan = plan(&snapshot)?;
/// assert_eq!(plan.deletions.len(), 1);
///
/// let settings = Settings::new(Duration::from_secs(2), Duration::from_secs(30));
/// let mut sweep = Sweep::new(&plan, settings);
/// // The driver's clock, as time since an epoch it picks.
/// let mut now = Timestamp::ZERO;
/// let mut volume_busy = true;
/// while !sweep.is_done() {
///     // Every action that may run now. A real driver runs them against
///     // the swarm, concurrently and up to a limit of its own; here each
///     // is answered at once.
///     while let Some(action) = sweep.poll_action(now) {
///         let outcome = match &action.kind {
///             // The re-read before each destructive step: under every name
///             // of the cluster, the records still carry the planned stamp.
///             ActionKind::ReadStamps { target, .. } => {
///                 let stamp = Some("cd/default/shop:release/shop".to_owned());
///                 let entry = ReleaseEntry::new(target.release.release.clone(), stamp);
///                 Outcome::Stamps(
///                     target
///                         .names
///                         .iter()
///                         .map(|name| StampRead::new(name.clone(), Some(entry.clone())))
///                         .collect(),
///                 )
///             }
///             // The re-read before each removal of what another workload
///             // might use: the stack as labelled now (empty here: a real
///             // driver lists it), every service of the swarm, the
///             // containers at each place asked and the manager's node
///             // list. Nobody else uses anything, and no node joined.
///             ActionKind::ReadUsage { at, .. } => Outcome::unused(&at),
///             ActionKind::ListVolumes { .. } => Outcome::Volumes(vec!["shop_data".into()]),
///             ActionKind::RemoveVolume { .. } if volume_busy => {
///                 volume_busy = false;
///                 Outcome::in_use()
///             }
///             ActionKind::RemoveStack { .. }
///             | ActionKind::RemoveVolume { .. }
///             | ActionKind::DeleteRecords { .. } => Outcome::Done,
///             ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
///         };
///         sweep.handle_outcome(action.id, outcome, now)?;
///     }
///     // Nothing may run now: wait until a retry is due (or, in a real
///     // driver, an outstanding action finishes or an event comes).
///     match sweep.poll_timeout() {
///         Some(at) => now = now.max(at),
///         None => break,
///     }
/// }
///
/// assert!(sweep.is_done());
/// let report = sweep.report();
/// assert!(report.all_done());
/// let deleted: Vec<&str> = report
///     .releases
///     .iter()
///     .filter(|r| r.outcome == ReleaseOutcome::Deleted)
///     .map(|r| r.release.as_str())
///     .collect();
/// assert_eq!(deleted, ["shop"]);
/// assert_eq!(report.releases[0].volumes_deleted["node-1"], ["shop_data"]);
/// // The volume in use was tried again one retry interval later.
/// assert_eq!(now, Timestamp::ZERO + Duration::from_secs(2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Sweep {
    settings: Settings,
    /// Whose stamps the re-reads accept as ours.
    controller: ControllerId,
    held: bool,
    purge: bool,
    releases: Vec<ReleaseRun>,
    /// The live releases whose dropped objects go; in the agenda after the
    /// releases (index `releases.len() + i`).
    drops: Vec<DropRun>,
    /// Drop runs not settled.
    drops_unsettled: usize,
    /// Each drop run's index, for events.
    drop_by_ref: BTreeMap<ReleaseRef, usize>,
    swarms: Vec<SwarmRun>,
    outstanding: BTreeMap<ActionId, Pending>,
    next_id: u64,
    /// The releases a poll looks at; see [`Agenda`].
    agenda: Agenda,
    /// Each release's index into `swarms`.
    swarm_of: Vec<usize>,
    /// Each release's index into `releases`, for events, which name it.
    by_ref: BTreeMap<ReleaseRef, usize>,
    /// Swarms that may be due a re-listing, looked at lowest index first
    /// like the releases.
    relists: BTreeSet<usize>,
    /// Releases not settled, counted so that `is_done` need not scan
    /// every release.
    unsettled: usize,
    /// Settled releases awaiting a re-listing, counted likewise.
    awaiting: usize,
    /// When each action started and ended, if asked for.
    trace: Option<SweepTrace>,
    /// When each swarm's deletion window closes, on the sweep's clock
    /// (see [`Sweep::handle_window_closes`]), and whether the sweep has
    /// seen it pass.
    closes: BTreeMap<SwarmName, WindowClose>,
}

/// When a swarm's deletion window closes, and whether that has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WindowClose {
    at: Timestamp,
    passed: bool,
}

#[derive(Debug, Clone)]
struct SwarmRun {
    swarm: SwarmName,
    /// Indices into `Sweep::releases`.
    releases: Vec<usize>,
    /// How many of them are not settled: a re-listing waits for none.
    unsettled: usize,
    relist: Relist,
    /// Set when a purge here cannot reach every node the swarm counts:
    /// the plan's own account of what is missing, and where the purge ran.
    uncovered: Option<Uncovered>,
    /// Where a purge here runs, by label.
    covered: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Relist {
    NotYet,
    Outstanding,
    Done,
}

#[derive(Debug, Clone)]
enum Pending {
    Release {
        index: usize,
        key: Key,
        step: Step,
    },
    Drop {
        index: usize,
        key: DropKey,
        step: Step,
    },
    Relist {
        swarm: usize,
        checking: Vec<usize>,
    },
}

impl Sweep {
    /// A sweep of `plan`'s deletions. A plan held as a whole gives a sweep
    /// that is done at once and hands out nothing.
    pub fn new(plan: &SweepPlan, settings: Settings) -> Self {
        let settings = Settings {
            retry_interval: settings.retry_interval.max(Settings::MIN_RETRY_INTERVAL),
            ..settings
        };
        let held = plan.is_held();
        let purge = plan.purge_volumes;
        let mut releases = Vec::new();
        let mut swarms: BTreeMap<SwarmName, SwarmRun> = BTreeMap::new();
        let mut seen: BTreeSet<ReleaseRef> = BTreeSet::new();
        let deletions = if held { &[][..] } else { &plan.deletions[..] };
        for deletion in deletions {
            // Two runs of one release would race: one could delete the
            // records while the other still removes volumes.
            if !seen.insert(deletion.release_ref()) {
                continue;
            }
            let swarm_plan = plan.swarm(&deletion.swarm);
            let places = places(swarm_plan.and_then(|s| s.nodes.as_deref()));
            let swarm = swarms
                .entry(deletion.swarm.clone())
                .or_insert_with(|| SwarmRun {
                    swarm: deletion.swarm.clone(),
                    releases: Vec::new(),
                    unsettled: 0,
                    relist: Relist::NotYet,
                    uncovered: None,
                    covered: places.iter().map(|p| p.label.clone()).collect(),
                });
            if purge
                && swarm.uncovered.is_none()
                && matches!(deletion.volumes, Coverage::Partial | Coverage::NodeLocal)
            {
                // The plan counted what is missing; a plan without that
                // account (edited by hand) reports it unknown, never
                // complete.
                let account = plan
                    .uncovered
                    .iter()
                    .find(|u| u.swarm == deletion.swarm)
                    .cloned()
                    .unwrap_or_else(|| {
                        Uncovered::unknown(deletion.swarm.clone(), deletion.volumes)
                    });
                swarm.uncovered = Some(account);
            }
            swarm.releases.push(releases.len());
            // A new run starts with its stack, not settled.
            swarm.unsettled += 1;
            // The re-reads ask every name of the cluster, as the planner
            // read them all: one name's stamp alone proves nothing when
            // another shows a different one.
            let target = Target::new(deletion.release_ref(), deletion.application.clone())
                .with_names(swarm_plan.map(|s| s.names.clone()).unwrap_or_default());
            releases.push(
                ReleaseRun::new(
                    target,
                    deletion.reason,
                    deletion.volumes,
                    purge,
                    places,
                    deletion.objects.clone(),
                    deletion.in_use_by.clone(),
                )
                .with_records(deletion.observed.as_ref().map(|o| o.records.clone()))
                .with_planned_nodes(PlannedNodes::of(swarm_plan)),
            );
        }
        // The dropped objects of live releases: never of a release being
        // deleted whole (a plan lists a release in one of the two), and
        // nothing of a held plan.
        let dropped = if held { &[][..] } else { &plan.dropped[..] };
        let mut drops = Vec::new();
        let mut drop_seen: BTreeSet<ReleaseRef> = BTreeSet::new();
        for d in dropped {
            let release = ReleaseRef::new(d.swarm.clone(), d.release.clone());
            if seen.contains(&release) || !drop_seen.insert(release.clone()) {
                continue;
            }
            let target = Target::new(release, d.application.clone())
                .with_names(
                    plan.swarm(&d.swarm)
                        .map(|s| s.names.clone())
                        .unwrap_or_default(),
                )
                .live();
            let swarm_plan = plan.swarm(&d.swarm);
            let places = places(swarm_plan.and_then(|s| s.nodes.as_deref()));
            let places = places.into_iter().map(|p| p.at).collect();
            drops.push(DropRun::new(
                target,
                d,
                places,
                PlannedNodes::of(swarm_plan),
            ));
        }
        let drop_by_ref = drops
            .iter()
            .enumerate()
            .map(|(i, r)| (r.target().release.clone(), i))
            .collect();
        let swarms: Vec<SwarmRun> = swarms.into_values().collect();
        let by_ref = releases
            .iter()
            .enumerate()
            .map(|(i, r)| (r.target().release.clone(), i))
            .collect();
        let mut swarm_of = vec![0; releases.len()];
        for (s, swarm) in swarms.iter().enumerate() {
            for &i in &swarm.releases {
                if let Some(slot) = swarm_of.get_mut(i) {
                    *slot = s;
                }
            }
        }
        Sweep {
            settings,
            controller: plan.controller.clone(),
            held,
            purge,
            agenda: Agenda::new(releases.len() + drops.len()),
            unsettled: releases.len(),
            awaiting: 0,
            drops_unsettled: drops.len(),
            drops,
            drop_by_ref,
            releases,
            swarms,
            swarm_of,
            by_ref,
            relists: BTreeSet::new(),
            outstanding: BTreeMap::new(),
            next_id: 0,
            trace: settings.trace.then(SweepTrace::default),
            closes: BTreeMap::new(),
        }
    }

    /// The deletion window of `swarm` closes at `at` (the driver's reading
    /// of the plan's windows, [`PlanWindows::closing`](crate::PlanWindows::closing),
    /// on the sweep's clock). From then on no action of the swarm's runs is
    /// handed out: those in flight finish, and each release (and each live
    /// release's dropped objects) not finished is reported failed with
    /// [`ErrorKind::WindowClosed`], its records kept for the next window.
    /// The windows limit when deletions may happen; a sweep that went on
    /// past their end would delete outside them. Told twice, the earlier
    /// time holds.
    pub fn handle_window_closes(&mut self, swarm: &SwarmName, at: Timestamp) {
        let close = self
            .closes
            .entry(swarm.clone())
            .or_insert(WindowClose { at, passed: false });
        if !close.passed && at < close.at {
            close.at = at;
        }
    }

    /// Whether the deletion window of `swarm` has closed by `now`.
    fn window_closed(&self, swarm: &SwarmName, now: Timestamp) -> bool {
        self.closes.get(swarm).is_some_and(|c| c.at <= now)
    }

    /// Puts every run of each swarm whose window closed by `now` on the
    /// agenda once, so that the runs waiting for an event or a retry are
    /// closed at once, not when they would next have woken.
    fn pass_window_closes(&mut self, now: Timestamp) {
        let passing: Vec<SwarmName> = self
            .closes
            .iter_mut()
            .filter(|(_, c)| !c.passed && c.at <= now)
            .map(|(swarm, c)| {
                c.passed = true;
                swarm.clone()
            })
            .collect();
        for swarm in passing {
            for (i, run) in self.releases.iter().enumerate() {
                if run.target().release.swarm == swarm {
                    self.agenda.push(i);
                }
            }
            for (d, run) in self.drops.iter().enumerate() {
                if run.target().release.swarm == swarm {
                    self.agenda.push(self.releases.len() + d);
                }
            }
        }
    }

    /// Whether the run at agenda index `index` (a release, or a drop run
    /// after them) is on a swarm whose window closed by `now`. It is then
    /// off the agenda, its timer with it, and closed, unless an action of
    /// it is in flight: the answer puts it back, and it is closed then.
    fn closed_by_window(&mut self, index: usize, now: Timestamp) -> bool {
        if self.closes.is_empty() {
            return false;
        }
        let drop = index.checked_sub(self.releases.len());
        let run = match drop {
            Some(d) => self.drops.get(d).map(|r| (r.target(), r.is_settled())),
            None => self
                .releases
                .get(index)
                .map(|r| (r.target(), r.is_settled())),
        };
        let Some((target, settled)) = run else {
            return false;
        };
        if !self.window_closed(&target.release.swarm, now) {
            return false;
        }
        self.agenda.set_retry(index, None);
        match drop {
            Some(d) if !settled && !self.in_flight(d, true) => {
                self.update_drop(d, |run, _| run.close_window());
            }
            None if !settled && !self.in_flight(index, false) => {
                self.update(index, |run, _| run.close_window());
            }
            _ => {}
        }
        true
    }

    /// Whether an action of release `index` (`drop`: of drop run `index`)
    /// is outstanding.
    fn in_flight(&self, index: usize, drop: bool) -> bool {
        self.outstanding.values().any(|p| match p {
            Pending::Release { index: i, .. } => !drop && *i == index,
            Pending::Drop { index: i, .. } => drop && *i == index,
            Pending::Relist { .. } => false,
        })
    }

    /// The settings the sweep runs with: those it was given, with the
    /// retry interval raised to at least [`Settings::MIN_RETRY_INTERVAL`].
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// How many actions are handed out and not yet answered.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len()
    }

    /// How many releases the plan gave the sweep.
    pub fn planned(&self) -> usize {
        self.releases.len()
    }

    /// How many of them have settled (gone, failed, left, or waiting for
    /// coverage), counted as the sweep goes: a progress display reads it
    /// after every step, and a scan of a large plan each time would cost
    /// more than the step.
    pub fn settled(&self) -> usize {
        self.releases.len().saturating_sub(self.unsettled)
    }

    /// The next action that may run at `now`, if any.
    #[must_use = "an action handed out must be run and answered, or the sweep never finishes"]
    pub fn poll_action(&mut self, now: Timestamp) -> Option<Action> {
        let action = self.next_action(now)?;
        let in_flight = self.outstanding.len();
        if let Some(trace) = self.trace.as_mut() {
            trace.start(action.id, &action.kind, in_flight, now);
        }
        Some(action)
    }

    /// The trace so far, when [`Settings::trace`] asked for one: every
    /// action handed out, with its end once answered, and every event.
    pub fn trace(&self) -> Option<&SweepTrace> {
        self.trace.as_ref()
    }

    /// [`Sweep::poll_action`], unrecorded.
    fn next_action(&mut self, now: Timestamp) -> Option<Action> {
        self.pass_window_closes(now);
        while let Some(index) = self.agenda.pop(now) {
            if let Some(d) = index.checked_sub(self.releases.len()) {
                if self.closed_by_window(index, now) {
                    continue;
                }
                let Some(run) = self.drops.get_mut(d) else {
                    debug_assert!(false, "the agenda names drop run {d}, which does not exist");
                    continue;
                };
                let Some((key, kind)) = run.next_action(now, &self.settings) else {
                    self.agenda.park(index);
                    continue;
                };
                let retry = run.next_retry();
                self.agenda.set_retry(index, retry);
                self.agenda.push(index);
                let step = kind.step();
                let id = self.allocate(Pending::Drop {
                    index: d,
                    key,
                    step,
                });
                return Some(Action { id, kind });
            }
            if self.closed_by_window(index, now) {
                continue;
            }
            let Some(run) = self.releases.get_mut(index) else {
                debug_assert!(
                    false,
                    "the agenda names release {index}, which does not exist"
                );
                continue;
            };
            let Some((key, kind)) = run.next_action(now, &self.settings) else {
                self.agenda.park(index);
                continue;
            };
            let retry = run.next_retry();
            self.agenda.set_retry(index, retry);
            // It may have more to hand out at once (volumes, nodes).
            self.agenda.push(index);
            let step = kind.step();
            let id = self.allocate(Pending::Release { index, key, step });
            return Some(Action { id, kind });
        }
        while let Some(s) = self.relists.pop_first() {
            if let Some(action) = self.relist_action(s, now) {
                return Some(action);
            }
        }
        None
    }

    /// The re-listing of swarm `s`, once every release there has settled
    /// and some failure there could be overturned by it.
    fn relist_action(&mut self, s: usize, now: Timestamp) -> Option<Action> {
        let Some(swarm) = self.swarms.get(s) else {
            debug_assert!(false, "swarm {s} is due a re-listing but does not exist");
            return None;
        };
        if swarm.relist != Relist::NotYet {
            return None;
        }
        if swarm.unsettled > 0 {
            return None;
        }
        let checking: Vec<usize> = swarm
            .releases
            .iter()
            .copied()
            .filter(|&i| {
                self.releases
                    .get(i)
                    .is_some_and(ReleaseRun::awaits_relisting)
            })
            .collect();
        if self.window_closed(&swarm.swarm, now) {
            // Nothing starts there once its window closed, a re-listing
            // either: the failures it could overturn stand, and say why.
            if let Some(swarm) = self.swarms.get_mut(s) {
                swarm.relist = Relist::Done;
            }
            for i in checking {
                self.update(i, |run, _| run.close_window());
            }
            return None;
        }
        if checking.is_empty() {
            return None;
        }
        let kind = ActionKind::ListReleases {
            swarm: swarm.swarm.clone(),
            checking: checking
                .iter()
                .filter_map(|&i| self.releases.get(i).map(|r| r.target().clone()))
                .collect(),
        };
        if let Some(swarm) = self.swarms.get_mut(s) {
            swarm.relist = Relist::Outstanding;
        }
        let id = self.allocate(Pending::Relist { swarm: s, checking });
        Some(Action { id, kind })
    }

    fn allocate(&mut self, pending: Pending) -> ActionId {
        let id = ActionId(self.next_id);
        self.next_id += 1;
        self.outstanding.insert(id, pending);
        id
    }

    /// Takes the outcome of action `id`, which ran until `now`.
    pub fn handle_outcome(
        &mut self,
        id: ActionId,
        outcome: Outcome,
        now: Timestamp,
    ) -> Result<(), SweepError> {
        let Some(pending) = self.outstanding.get(&id) else {
            return Err(if id.0 < self.next_id {
                SweepError::AlreadyAnswered(id)
            } else {
                SweepError::UnknownAction(id)
            });
        };
        let step = match pending {
            Pending::Release { step, .. } | Pending::Drop { step, .. } => *step,
            Pending::Relist { .. } => Step::ListReleases,
        };
        if !fits(step, &outcome) {
            return Err(SweepError::OutcomeMismatch {
                id,
                action: step,
                outcome: outcome.kind_str(),
            });
        }
        if let Some(trace) = self.trace.as_mut() {
            trace.end(id, &outcome, now);
        }
        match self.outstanding.remove(&id) {
            Some(Pending::Release { index, key, .. }) => {
                let settings = self.settings;
                self.update(index, |run, controller| {
                    run.handle(key, outcome, now, &settings, controller)
                });
            }
            Some(Pending::Drop { index, key, .. }) => {
                let settings = self.settings;
                self.update_drop(index, |run, controller| {
                    run.handle(key, outcome, now, &settings, controller)
                });
            }
            Some(Pending::Relist { swarm, checking }) => {
                let names: Result<BTreeSet<String>, String> = match outcome {
                    Outcome::Releases(names) => Ok(names.into_iter().collect()),
                    // A swarm "not found" proves nothing about releases.
                    Outcome::Failed(f) => Err(f.to_string()),
                    other => Err(format!("unexpected {} outcome", other.kind_str())),
                };
                let listing = names.as_ref().map_err(String::as_str);
                for i in checking {
                    self.update(i, |run, _| run.relisted(listing));
                }
                if let Some(s) = self.swarms.get_mut(swarm) {
                    s.relist = Relist::Done;
                }
            }
            None => {}
        }
        Ok(())
    }

    /// Changes release `i` by `change` and keeps the books on it: it is a
    /// candidate again, its retry is re-read, and the counts of settled
    /// releases follow, making its swarm a candidate for a re-listing once
    /// every release there has settled.
    fn update(&mut self, i: usize, change: impl FnOnce(&mut ReleaseRun, &ControllerId)) {
        let Some(run) = self.releases.get_mut(i) else {
            debug_assert!(false, "release {i} is not in the sweep");
            return;
        };
        let (was_settled, was_awaiting) = (run.is_settled(), run.awaits_relisting());
        change(run, &self.controller);
        let (settled, awaiting) = (run.is_settled(), run.awaits_relisting());
        let retry = run.next_retry();
        self.agenda.set_retry(i, retry);
        self.agenda.push(i);
        recount(&mut self.unsettled, !was_settled, !settled);
        recount(&mut self.awaiting, was_awaiting, awaiting);
        let Some(&s) = self.swarm_of.get(i) else {
            debug_assert!(false, "release {i} has no swarm");
            return;
        };
        if let Some(swarm) = self.swarms.get_mut(s) {
            recount(&mut swarm.unsettled, !was_settled, !settled);
            if swarm.unsettled == 0 && swarm.relist == Relist::NotYet {
                self.relists.insert(s);
            }
        }
        // Only a settled release awaits a re-listing.
        debug_assert!(self.awaiting + self.unsettled <= self.releases.len());
    }

    /// Changes drop run `d` by `change` and keeps the books on it, as
    /// [`Sweep::update`] does for a release (no re-listing: a drop run
    /// never touches records, so no failure of it can be overturned).
    fn update_drop(&mut self, d: usize, change: impl FnOnce(&mut DropRun, &ControllerId)) {
        let Some(run) = self.drops.get_mut(d) else {
            debug_assert!(false, "drop run {d} is not in the sweep");
            return;
        };
        let was_settled = run.is_settled();
        change(run, &self.controller);
        let settled = run.is_settled();
        let retry = run.next_retry();
        let index = self.releases.len() + d;
        self.agenda.set_retry(index, retry);
        self.agenda.push(index);
        recount(&mut self.drops_unsettled, !was_settled, !settled);
    }

    /// Takes an event the engine sent at `now`: a removal it may have
    /// freed becomes ready at once (see [`Event`]). Events about releases
    /// this sweep does not delete, or about a release with nothing
    /// waiting, change nothing: an event can make an attempt come sooner,
    /// never one that would not have come, and never moves a deadline.
    pub fn handle_event(&mut self, event: Event, now: Timestamp) {
        match event {
            Event::ContainerGone {
                swarm,
                node,
                release,
            } => {
                let release = ReleaseRef::new(swarm, release);
                let woke_drop = self.wake_drop(&release);
                let woke_release = self.wake_release(&release, node.as_deref());
                if let Some(trace) = self.trace.as_mut() {
                    let woke = woke_drop || woke_release;
                    trace.event(&release.swarm, &release.release, node.as_deref(), woke, now);
                }
            }
        }
    }

    /// Wakes the drop run of `release`, if any; whether anything woke.
    fn wake_drop(&mut self, release: &ReleaseRef) -> bool {
        let Some(&d) = self.drop_by_ref.get(release) else {
            return false;
        };
        let woke = self.drops.get_mut(d).is_some_and(DropRun::wake);
        if woke {
            self.update_drop(d, |_, _| {});
        }
        woke
    }

    /// Wakes the run of `release`, for an event from `node`; whether
    /// anything woke.
    fn wake_release(&mut self, release: &ReleaseRef, node: Option<&str>) -> bool {
        let Some(&i) = self.by_ref.get(release) else {
            return false;
        };
        let woke = self.releases.get_mut(i).is_some_and(|run| run.wake(node));
        if woke {
            self.update(i, |_, _| {});
        }
        woke
    }

    /// The earliest time a waiting retry becomes ready; `None` when nothing
    /// waits on time.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        // A window closing is a time to act at too, while anything is left.
        let closing = self
            .closes
            .values()
            .filter(|c| !c.passed)
            .map(|c| c.at)
            .min()
            // Only while something waits on time or is in flight: a sweep
            // stalled by a bug must not wait for a close months away.
            .filter(|_| {
                !self.is_done()
                    && (self.agenda.earliest().is_some() || !self.outstanding.is_empty())
            });
        match (self.agenda.earliest(), closing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Nothing outstanding and nothing left to hand out.
    pub fn is_done(&self) -> bool {
        self.outstanding.is_empty()
            && self.unsettled == 0
            && self.awaiting == 0
            && self.drops_unsettled == 0
    }

    /// The account of a swarm whose plan proved a purge complete, where a
    /// re-read found a node joined since (or came without a node list):
    /// what is missing then is the joined nodes.
    fn joined_since(&self, swarm: &SwarmRun) -> Option<Uncovered> {
        if !self.purge {
            return None;
        }
        let runs = swarm.releases.iter().filter_map(|&i| self.releases.get(i));
        let since = runs
            .clone()
            .filter_map(ReleaseRun::nodes_since)
            .cloned()
            .reduce(NodesSince::and)?;
        Some(Uncovered {
            swarm: swarm.swarm.clone(),
            // What the re-reads listed: the plan's count is out of date.
            node_count: runs.filter_map(ReleaseRun::nodes_listed).max(),
            reached: swarm.covered.clone(),
            missing: since.missing(),
            unreached: since.ids(),
            coverage: Coverage::Partial,
        })
    }

    /// What the sweep did so far; final once [`is_done`](Self::is_done).
    pub fn report(&self) -> SweepReport {
        let releases: Vec<ReleaseReport> = self.releases.iter().map(ReleaseRun::report).collect();
        let uncovered = self
            .swarms
            .iter()
            .filter_map(|s| {
                let account = s.uncovered.clone().or_else(|| self.joined_since(s))?;
                let left: Vec<Leftover> = s
                    .releases
                    .iter()
                    .filter_map(|&i| releases.get(i))
                    // Its own stack was left whole, not partly purged.
                    .filter(|r| r.outcome != ReleaseOutcome::LeftOwnStack)
                    // A swarm complete in the plan: only the releases that
                    // found a node joined since.
                    .filter(|r| s.uncovered.is_some() || r.coverage == Coverage::Partial)
                    .map(|r| Leftover {
                        release: r.release.clone(),
                        application: r.application.clone(),
                        label_filter: label_filter(&r.release),
                    })
                    .collect();
                (!left.is_empty()).then(|| UncoveredSwarm {
                    swarm: s.swarm.clone(),
                    coverage: account.coverage,
                    node_count: account.node_count,
                    covered: s.covered.clone(),
                    missing: account.missing,
                    unreached: account.unreached,
                    releases: left,
                })
            })
            .collect();
        SweepReport::new(
            self.controller.as_str().to_owned(),
            self.held,
            self.purge,
            releases,
            uncovered,
            self.drops.iter().map(DropRun::report).collect(),
            self.releases
                .iter()
                .flat_map(ReleaseRun::objects)
                .chain(self.drops.iter().flat_map(DropRun::objects))
                .collect(),
        )
    }
}

/// Moves `count` by one when a release joins (`before` false, `now` true)
/// or leaves what it counts.
fn recount(count: &mut usize, before: bool, now: bool) {
    match (before, now) {
        (false, true) => *count += 1,
        (true, false) => *count = count.saturating_sub(1),
        _ => {}
    }
}

/// Whether a success has the shape its action calls for. Failures fit
/// every action.
fn fits(step: Step, outcome: &Outcome) -> bool {
    match outcome {
        Outcome::Failed(_) => true,
        Outcome::Done => matches!(
            step,
            Step::RemoveStack | Step::RemoveVolume | Step::DeleteRecords
        ),
        Outcome::Volumes(_) => step == Step::ListVolumes,
        Outcome::Releases(_) => step == Step::ListReleases,
        Outcome::Stamps(_) => step == Step::ReadStamps,
        Outcome::Usage(_) => step == Step::ReadUsage,
    }
}

/// Where a purge of a swarm runs: each reached node, or the manager when
/// the registry cannot reach nodes. Names are the nodes' display names,
/// made unique with the id where hostnames collide, since a report keyed
/// by an ambiguous name would merge two nodes' volumes.
fn places(nodes: Option<&[NodeEntry]>) -> Vec<Place> {
    let Some(nodes) = nodes else {
        return vec![Place {
            at: Where::Manager,
            label: MANAGER.to_owned(),
        }];
    };
    let mut by_id: BTreeMap<&str, &NodeEntry> = BTreeMap::new();
    for n in nodes {
        by_id.entry(n.id.as_str()).or_insert(n);
    }
    let mut uses: BTreeMap<&str, usize> = BTreeMap::new();
    for n in by_id.values() {
        *uses.entry(n.display_name()).or_default() += 1;
    }
    by_id
        .values()
        .map(|n| {
            let name = n.display_name();
            let label = if uses.get(name).copied().unwrap_or(0) > 1 || name == MANAGER {
                format!("{name} ({})", n.id)
            } else {
                name.to_owned()
            };
            Place {
                at: Where::Node((*n).clone()),
                label,
            }
        })
        .collect()
}
