//! One sweep cycle, the same for every command that deletes: read the app
//! set, gather, plan (or check a saved plan), keep the grace state, ask for
//! approval, execute, keep the grace state again, and end with one verdict.
//!
//! `apply`, `apply --plan`, `watch` and `watch --once` all run [`Cycle`];
//! they differ only in how they approve, how often they run and where they
//! print, which is what their [`Host`] says. Two orchestrators of one sweep
//! drift apart (one wrote the grace state before deleting, the other after;
//! one held an unreadable app set with a hold of its own): every step and
//! its order live here once.

use std::future::Future;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sweep_core::saved::{check, SavedPlan, Stale};
use sweep_core::sweep::{SweepReport, SweepTrace};
use sweep_core::verdict::{apply_status, plan_status, Status};
use sweep_core::{
    plan, AppSet, GraceState, Hold, NotCurrent, PlanWindows, Policy, ReleaseRef, Snapshot,
    SnapshotError, SwarmName, SweepPlan, UnixTime,
};
use sweep_swarms::Registry;
use thiserror::Error;

use crate::execute::{execute_traced, ExecuteSettings, Progress};
use crate::gather::{gather, GatherSettings};
use crate::stop::Stop;

/// How often a cycle runs, which decides what an app set that cannot be
/// read means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// One run that ends the process (`apply`, `watch --once`): an app set
    /// that cannot be read is bad input, [`CycleError::AppSet`].
    Once,
    /// One of many (`watch`): the sweep is held by the core's
    /// `app_set_not_loaded` hold, and the next one reads the app set
    /// afresh.
    Repeatedly,
}

/// What reading the app set gave.
#[derive(Debug)]
pub enum AppSetRead {
    Read(AppSet),
    /// It could not be read or parsed; why, said once by the host.
    Unreadable(String),
    /// A stop came before it was read.
    Stopped,
}

/// Whether the host lets the plan be carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    Proceed,
    /// Nothing is deleted; the host has said why.
    Declined,
}

/// What a cycle tells its host as it goes, for printing, logging and
/// metrics. None of them changes what the cycle does.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// The app set was read.
    AppSetRead,
    /// The app set could not be read; nothing is gathered.
    AppSetUnreadable(&'a str),
    /// Every swarm was read (as well as it could be). The snapshot is the
    /// one the plan is made from: given the time and, from the grace
    /// state, when each release was first seen departed (unless the clock
    /// could not be read); `took` is the gathering's alone.
    Gathered {
        snapshot: &'a Snapshot,
        took: Duration,
    },
    /// The grace state is not current, so every clock starts now.
    StateNotCurrent(&'a NotCurrent),
    /// The plan this cycle carries out (or holds).
    Planned(&'a SweepPlan),
    /// The saved plan relied on something that changed; nothing is deleted.
    Stale(&'a Stale),
    /// A release the fresh plan would also delete but the saved plan does
    /// not: left for a new review.
    Unreviewed(&'a ReleaseRef),
    /// A step of the sweep finished.
    Progress(&'a Progress),
    /// The sweep's trace, once it ended, when the settings asked for one.
    Trace(&'a SweepTrace),
    /// A deletion window of a swarm the plan deletes on closed between the
    /// plan and its approval (each `outside_window` hold says which and
    /// when it opens next): nothing is deleted.
    WindowClosed(&'a [Hold]),
}

/// Where a cycle's IO other than the swarms' goes: the commands differ
/// only here.
pub trait Host {
    /// Reads the app set afresh. It may wait; a stop ends the wait.
    fn read_app_set(&self, stop: &Stop) -> impl Future<Output = AppSetRead>;
    /// The wall clock, as the core counts time; `None` when it cannot be
    /// read as such (before 1970). Time is an input, never read here.
    fn now(&self) -> Option<UnixTime>;
    /// Writes the grace state where it is kept; `false` (said by the host)
    /// when it could not be written.
    fn save_state(&self, state: &GraceState) -> bool;
    /// Asked once the plan is made and kept, before anything is deleted.
    fn approve(&self, plan: &SweepPlan) -> Approval;
    /// What the cycle is doing.
    fn event(&self, event: Event<'_>);
}

/// What makes a cycle end without running: the caller's input, never a
/// swarm, is at fault, and nothing was deleted.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CycleError {
    #[error("the app set cannot be read, so nothing is deleted: {0}")]
    AppSet(String),
    #[error("the gathered snapshot cannot be planned, so nothing is deleted: {0}")]
    Unplannable(#[source] SnapshotError),
    #[error("the system clock is before 1970; the grace period cannot be measured, so nothing is deleted")]
    Clock,
}

/// How a cycle that ran ended, for the metrics and the summary line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything planned went, and nothing needs a person.
    Success,
    /// It ran, and a person has to act.
    NeedsAttention,
    /// A hold stopped the whole sweep: nothing was attempted.
    Held,
    /// The app set could not be read (in a cycle that runs repeatedly):
    /// the core's `app_set_not_loaded` hold, nothing gathered.
    AppSetUnreadable,
    /// A stop came; the next cycle finds what is left.
    Interrupted,
    /// The saved plan is stale; nothing was deleted.
    Stale,
    /// The host declined the plan; nothing was deleted.
    Declined,
}

/// A cycle that ran: how it ended, its verdict, and what it planned and
/// did.
#[derive(Debug)]
pub struct Ended {
    pub outcome: Outcome,
    /// The verdict, from `sweep_core::verdict`, with a grace state that
    /// could not be kept counted as needing a person.
    pub status: Status,
    /// The plan, once one was made.
    pub plan: Option<SweepPlan>,
    /// The report, once the plan was carried out.
    pub report: Option<SweepReport>,
}

/// The grace state a cycle keeps between runs, and how old it may grow
/// before its clocks restart.
#[derive(Debug, Clone)]
pub struct Grace {
    pub state: GraceState,
    pub max_age: Option<Duration>,
}

impl Grace {
    /// A state with no maximum age.
    pub fn new(state: GraceState) -> Self {
        Grace {
            state,
            max_age: None,
        }
    }
}

/// Where the plan comes from.
#[derive(Debug)]
enum PlanFrom {
    Fresh,
    /// `apply --plan`: the saved plan, checked against the fresh snapshot
    /// by the core; the tool version it must have been made by.
    Saved {
        saved: Box<SavedPlan>,
        tool_version: String,
    },
}

/// One sweep, as every command runs it.
pub struct Cycle<'a> {
    registry: &'a dyn Registry,
    policy: Policy,
    gather: GatherSettings,
    execute: ExecuteSettings,
    runs: Runs,
    plan_from: PlanFrom,
    /// `None`: no state is kept, and a grace period starts every clock now.
    grace: Mutex<Option<Grace>>,
}

impl<'a> Cycle<'a> {
    pub fn new(
        registry: &'a dyn Registry,
        policy: Policy,
        gather: GatherSettings,
        execute: ExecuteSettings,
        runs: Runs,
    ) -> Self {
        Cycle {
            registry,
            policy,
            gather,
            execute,
            runs,
            plan_from: PlanFrom::Fresh,
            grace: Mutex::new(None),
        }
    }

    /// Carries out `saved` rather than a fresh plan, once the core has
    /// checked it against the fresh snapshot (`sweep_core::saved::check`).
    pub fn with_saved_plan(mut self, saved: SavedPlan, tool_version: impl Into<String>) -> Self {
        self.plan_from = PlanFrom::Saved {
            saved: Box::new(saved),
            tool_version: tool_version.into(),
        };
        self
    }

    /// Keeps a grace state, from `state`, checked for age at every cycle.
    pub fn with_grace(self, state: GraceState, max_age: Option<Duration>) -> Self {
        *self.grace_slot() = Some(Grace { state, max_age });
        self
    }

    /// Replaces the grace state kept (a state read again from its file);
    /// starts keeping one if none was.
    pub fn replace_grace(&self, grace: Grace) {
        *self.grace_slot() = Some(grace);
    }

    /// The grace state as the last cycle left it.
    pub fn grace(&self) -> Option<GraceState> {
        self.grace_slot().as_ref().map(|g| g.state.clone())
    }

    fn grace_slot(&self) -> MutexGuard<'_, Option<Grace>> {
        self.grace.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs one cycle. `stop` ends it between steps, and lets the steps in
    /// flight of a sweep finish.
    pub async fn run<H: Host>(&self, host: &H, stop: &Stop) -> Result<Ended, CycleError> {
        let app_set = match host.read_app_set(stop).await {
            AppSetRead::Read(app_set) => {
                host.event(Event::AppSetRead);
                app_set
            }
            AppSetRead::Stopped => return Ok(Ended::interrupted(None)),
            AppSetRead::Unreadable(why) => {
                host.event(Event::AppSetUnreadable(&why));
                return match self.runs {
                    Runs::Once => Err(CycleError::AppSet(why)),
                    Runs::Repeatedly => Ok(self.held_for_the_app_set(host)),
                };
            }
        };
        if stop.requested() {
            return Ok(Ended::interrupted(None));
        }
        let started = Instant::now();
        let gathering = gather(self.registry, self.policy.clone(), app_set, self.gather);
        // Gathering only reads: a stop drops it where it stands.
        let mut snapshot = tokio::select! {
            snapshot = gathering => snapshot,
            () = stop.wait() => return Ok(Ended::interrupted(None)),
        };
        let took = started.elapsed();
        // Told once the time and the first-seen times are in: the snapshot
        // the plan is made from, as `swarm-sweep snapshot` prints it, so
        // that `/snapshot` planned elsewhere waits and holds as this plan.
        let now = self.clock(host, &mut snapshot);
        host.event(Event::Gathered {
            snapshot: &snapshot,
            took,
        });
        let now = now?;
        let plan = match self.decide(host, &snapshot, now)? {
            Decided::Plan(plan) => plan,
            Decided::Stale(ended) => return Ok(ended),
        };
        let windows = PlanWindows::of(&snapshot, &plan);
        drop(snapshot);
        host.event(Event::Planned(&plan));
        // Kept before anything is deleted: a run cut short (a kill, a
        // declined prompt) must not leave the entries of releases declared
        // again since, which would date a later departure back to the first.
        let mut kept = self.keep_grace(host, || GraceState::after_plan(&plan, now));
        if stop.requested() {
            return Ok(Ended::interrupted(Some(plan)).kept(kept));
        }
        let approval = host.approve(&plan);
        // A stop while the host was asking is a no as well.
        if approval == Approval::Proceed && stop.requested() {
            return Ok(Ended::interrupted(Some(plan)).kept(kept));
        }
        if approval == Approval::Declined {
            let status = plan_status(&plan).max(Status::NeedsAttention);
            return Ok(Ended {
                outcome: Outcome::Declined,
                status,
                plan: Some(plan),
                report: None,
            }
            .kept(kept));
        }
        // The approval can come long after the plan (a prompt left
        // waiting): a window that closed since stops the sweep before
        // anything is deleted, as it would have stopped the plan.
        let at = host.now().ok_or(CycleError::Clock)?;
        let closed = windows.closed_at(at);
        if !closed.is_empty() {
            host.event(Event::WindowClosed(&closed));
            return Ok(Ended {
                outcome: Outcome::Held,
                status: Status::NeedsAttention,
                plan: Some(plan),
                report: None,
            }
            .kept(kept));
        }
        let interrupted = std::cell::Cell::new(false);
        let stopped = async {
            stop.wait().await;
            interrupted.set(true);
        };
        // When each window closes, as time from now: the clock reads whole
        // seconds, so a second early rather than one late.
        let closes: Vec<(SwarmName, Duration)> = windows
            .closing(at)
            .into_iter()
            .map(|(swarm, t)| {
                let left = t.as_secs().saturating_sub(at.as_secs()).saturating_sub(1);
                (swarm, Duration::from_secs(left))
            })
            .collect();
        let swept = execute_traced(
            self.registry,
            &plan,
            self.execute,
            &closes,
            stopped,
            stop.aborted(),
            |p| host.event(Event::Progress(p)),
        )
        .await;
        if let Some(trace) = &swept.trace {
            host.event(Event::Trace(trace));
        }
        let report = swept.report;
        kept &= self.keep_grace(host, || GraceState::after_sweep(&plan, &report, now));
        let status = apply_status(&plan, &report);
        let outcome = if interrupted.get() {
            Outcome::Interrupted
        } else if plan.is_held() {
            Outcome::Held
        } else if status == Status::Success {
            Outcome::Success
        } else {
            Outcome::NeedsAttention
        };
        Ok(Ended {
            outcome,
            status,
            plan: Some(plan),
            report: Some(report),
        }
        .kept(kept))
    }

    /// The plan of a cycle whose app set could not be read: the core's own
    /// hold, on a snapshot with no app set and no swarm read. The grace
    /// state is left as it is: nothing new is known of any release.
    fn held_for_the_app_set<H: Host>(&self, host: &H) -> Ended {
        let snapshot = Snapshot::new(
            self.policy.clone(),
            AppSet::new(false, Vec::new()),
            Vec::new(),
        );
        let plan = plan(&snapshot).ok();
        if let Some(plan) = &plan {
            host.event(Event::Planned(plan));
        }
        Ended {
            outcome: Outcome::AppSetUnreadable,
            status: Status::NeedsAttention,
            plan,
            report: None,
        }
    }

    /// Gives the snapshot the time and, from the grace state, when each
    /// release was first seen departed; the time is returned, as the state
    /// written after is dated by it. A state not kept current (held sweeps
    /// for longer than its maximum age, a file left behind) restarts every
    /// clock: an old entry would date a release that came back and left
    /// again to its first departure.
    fn clock<H: Host>(&self, host: &H, snapshot: &mut Snapshot) -> Result<UnixTime, CycleError> {
        let now = host.now().ok_or(CycleError::Clock)?;
        if let Some(why) = clock(snapshot, self.grace_slot().as_mut(), now) {
            host.event(Event::StateNotCurrent(&why));
        }
        Ok(now)
    }

    /// The plan to carry out: the fresh one, or the saved one once the core
    /// found it still holds.
    fn decide<H: Host>(
        &self,
        host: &H,
        snapshot: &Snapshot,
        now: UnixTime,
    ) -> Result<Decided, CycleError> {
        match &self.plan_from {
            PlanFrom::Fresh => plan(snapshot)
                .map(Decided::Plan)
                .map_err(CycleError::Unplannable),
            PlanFrom::Saved {
                saved,
                tool_version,
            } => match check(saved, snapshot, tool_version).map_err(CycleError::Unplannable)? {
                Err(stale) => {
                    host.event(Event::Stale(&stale));
                    // Nothing is deleted, but what is departed now is still
                    // the next run's state.
                    let fresh = plan(snapshot).map_err(CycleError::Unplannable)?;
                    let kept = self.keep_grace(host, || GraceState::after_plan(&fresh, now));
                    Ok(Decided::Stale(
                        Ended {
                            outcome: Outcome::Stale,
                            status: Status::Stale,
                            plan: None,
                            report: None,
                        }
                        .kept(kept),
                    ))
                }
                Ok(approved) => {
                    for release in &approved.unreviewed {
                        host.event(Event::Unreviewed(release));
                    }
                    Ok(Decided::Plan(approved.plan))
                }
            },
        }
    }

    /// Replaces the grace state, when one is kept, and writes it; `false`
    /// when it could not be written.
    fn keep_grace<H: Host>(&self, host: &H, next: impl FnOnce() -> GraceState) -> bool {
        let mut slot = self.grace_slot();
        let Some(grace) = slot.as_mut() else {
            return true;
        };
        grace.state = next();
        host.save_state(&grace.state)
    }
}

/// Gives a gathered snapshot the time `now` and, from the grace state when
/// one is kept, when each release was first seen departed. A state that is
/// not current is replaced by the empty state at `now` (every clock starts
/// over, the safe direction) and why is returned. Without a state, a grace
/// period still needs the time (every departed release then starts its
/// window now, and nothing is deleted for it), and so do deletion windows.
pub fn clock(
    snapshot: &mut Snapshot,
    grace: Option<&mut Grace>,
    now: UnixTime,
) -> Option<NotCurrent> {
    match grace {
        Some(grace) => {
            let why = grace.state.check_current(now, grace.max_age).err();
            if why.is_some() {
                grace.state = GraceState::empty(now);
            }
            grace.state.apply_to(snapshot);
            snapshot.now = Some(now);
            why
        }
        None => {
            if snapshot.needs_time() {
                snapshot.now = Some(now);
            }
            None
        }
    }
}

// One per cycle and moved at once: the size of its variants costs nothing
// worth an allocation.
#[allow(clippy::large_enum_variant)]
enum Decided {
    Plan(SweepPlan),
    Stale(Ended),
}

impl Ended {
    fn interrupted(plan: Option<SweepPlan>) -> Self {
        Ended {
            outcome: Outcome::Interrupted,
            status: Status::NeedsAttention,
            plan,
            report: None,
        }
    }

    /// A grace state that could not be kept needs a person: the next run
    /// would count from times that no longer hold.
    fn kept(mut self, kept: bool) -> Self {
        if !kept {
            self.status = self.status.max(Status::NeedsAttention);
        }
        self
    }
}
