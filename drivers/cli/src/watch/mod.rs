//! `swarm-sweep watch`: the sweep on an interval, for a controller that
//! runs as a service.
//!
//! One sweep is the cycle `apply --yes` runs (`sweep_runner::Cycle`):
//! read the app set, gather, plan, keep the grace state, carry the plan
//! out. The app set is read afresh every time, and one that cannot be read
//! or parsed holds that sweep (the core's `app_set_not_loaded` hold)
//! before any swarm is read: it never stands in as an empty set, and a
//! read that never ends holds only its own sweep (`app_set.rs`). `--once`
//! runs the very same sweep once and ends with `apply`'s exit status, for
//! cron; there an app set that cannot be read is bad input (status 2), as
//! for `apply`.
//!
//! Signals are every command's (`crate::signals`): the first SIGTERM or
//! SIGINT lets the steps in flight finish, starts nothing new and ends
//! the process with status 0; a second ends it at once (130).

mod app_set;
mod http;
mod metrics;
mod shared;

use std::cell::Cell;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use sweep_core::audit::Origin;
use sweep_core::sweep::SweepReport;
use sweep_core::verdict::Status;
use sweep_core::{GraceState, Policy, SweepPlan, UnixTime};
use sweep_runner::{
    AppSetRead, Approval, Cycle, CycleError, Event, ExecuteSettings, GatherSettings, Host, Outcome,
    Runs, Stop,
};
use sweep_swarms::Registry;

use crate::audit_log::AuditLog;
use crate::cli::Source;
use crate::input::{self, InputError};
use crate::notify::{Limits, Notifier, EXIT_WAIT};
use crate::output;

use app_set::{read_limit, AppSetReader, FileAppSet, Read};
pub use metrics::SweepOutcome;
pub use shared::Shared;

/// What `watch` was asked to do, its flags checked.
pub struct Options {
    pub policy: Policy,
    pub settings: ExecuteSettings,
    pub runtime: tokio::runtime::Runtime,
    pub source: Source,
    pub interval: Duration,
    pub listen: Option<SocketAddr>,
    pub once: bool,
    /// The grace-period state file, if any.
    pub state: Option<PathBuf>,
    /// `--state-max-age`; when not given, [`default_state_max_age`].
    pub state_max_age: Option<Duration>,
    /// `--audit-log`: where each sweep appends a line per object acted on.
    pub audit_log: Option<PathBuf>,
    /// `--notify`: the webhooks, and how to notify them.
    pub notify: crate::notify::Settings,
}

/// The least default `--state-max-age`: a short interval must not make a
/// controller restarted after a minute or two lose its clocks.
pub const MIN_DEFAULT_STATE_MAX_AGE: Duration = Duration::from_secs(5 * 60);

/// The maximum age of the state file read at start when
/// `--state-max-age` is not given: three intervals, so a restart or a
/// missed sweep or two keep the clocks, and at least
/// [`MIN_DEFAULT_STATE_MAX_AGE`]. `None` (no limit) with `--once`, which
/// runs from cron at a period the tool cannot know, as `apply` does.
pub fn default_state_max_age(interval: Duration, once: bool) -> Option<Duration> {
    (!once).then(|| interval.saturating_mul(3).max(MIN_DEFAULT_STATE_MAX_AGE))
}

/// Runs `watch`: its verdict, or bad input found before any swarm was
/// read.
pub fn run(options: Options) -> Result<Status, InputError> {
    let Options {
        policy,
        settings,
        runtime,
        source,
        interval,
        listen,
        once,
        state,
        state_max_age,
        audit_log,
        notify,
    } = options;
    // Checked before any swarm is read: a log that could not record a
    // deletion is bad input, not something to find out after deleting.
    if let Some(file) = &audit_log {
        crate::audit_log::check(file)?;
    }
    // Read before any swarm is: a state file that does not read is bad
    // input, never an empty state that would restart every clock. One that
    // is not current is not used; afterwards the state lives in memory.
    let max_age = state_max_age.or(default_state_max_age(interval, once));
    // Held for as long as this watch runs: see `StateLock`.
    let _state_lock = crate::state::lock_given(state.as_deref())?;
    let grace = match crate::state::load_given(state.as_deref(), max_age)? {
        Some(grace) => grace,
        None => GraceState::empty(crate::state::now()?),
    };
    if state.is_none() {
        if let Some(window) = policy.min_departed_for {
            output::warn_line(&grace_without_state(window, once));
        }
    }
    let limit = source.timeout_or_default();
    let registry = input::registry(&source, limit)?;
    let app_set_file = source.app_set.clone();
    let mut shared = Shared::new(
        app_set_file.display().to_string(),
        shared::app_set_patience(interval),
    );
    // Only a server shows the snapshot: without one, writing it out at
    // every gather would cost a large registry's time for nobody.
    if listen.is_some() {
        shared = shared.keeping_snapshots();
    }
    let shared = Arc::new(shared);
    let notifier = {
        let _in_runtime = runtime.enter();
        let dropped = shared.clone();
        Notifier::start(
            notify,
            policy.controller.clone(),
            listen.map(crate::notify::report_url),
            // What notifications remembered is the state file's: holds
            // dated and repeats held back across restarts.
            grace.notify.clone(),
            Limits::default(),
            Box::new(move || dropped.notify_dropped()),
        )
    };
    let sweeper = Sweeper::new(
        registry.as_ref(),
        WatchHost::new(
            AppSetReader::new(
                Arc::new(FileAppSet(app_set_file)),
                read_limit(interval, once),
            ),
            shared.clone(),
            state,
            if once { Runs::Once } else { Runs::Repeatedly },
        )
        .with_audit_log(audit_log.map(|file| AuditLog::new(file, Origin::watch())))
        .with_notifier(notifier),
        policy,
        GatherSettings::new(limit),
        settings,
        grace,
        max_age,
    );
    let verdict = runtime.block_on(async {
        let stop = crate::signals::stop_on_signals()
            .map_err(|e| InputError::Runtime(format!("cannot handle signals: {e}")))?;
        if let Some(addr) = listen {
            let listener = http::bind(addr)
                .await
                .map_err(|e| InputError::Flag(format!("--listen {addr}: cannot listen: {e}")))?;
            tracing::info!(%addr, "serving /healthz, /readyz, /metrics, /plan, /report and /snapshot");
            http::serve(listener, shared.clone());
        }
        if once {
            let verdict = sweeper.sweep(&stop).await.verdict;
            // What was not delivered is written as not sent, so the next
            // run sends it.
            if sweeper.host.settle_notifications().await && !sweeper.persist_state() {
                return Ok(verdict.max(Status::NeedsAttention));
            }
            return Ok(verdict);
        }
        watch_loop(&sweeper, interval, &stop).await;
        // Said again on the way out, whatever the last sweep's write did;
        // and once more if what delivery could not deliver was forgotten
        // as sent meanwhile (a second signal cuts the wait short).
        sweeper.persist_state();
        if sweeper.host.settle_notifications().await {
            sweeper.persist_state();
        }
        output::warn_line("stopped");
        Ok(Status::Success)
    });
    // Reads of the app set stuck for good (a FIFO nobody writes) must not
    // keep the process from ending: the runtime would wait for them.
    runtime.shutdown_background();
    verdict
}

/// Sweeps every `interval`, start to start, until `stop`; a sweep that
/// overruns its interval is followed at once by the next. A swarm that
/// only its deletion windows hold is swept again when its next window
/// opens, if that comes before the interval is up.
async fn watch_loop(sweeper: &Sweeper<'_>, interval: Duration, stop: &Stop) {
    loop {
        let started = tokio::time::Instant::now();
        let swept = sweeper.sweep(stop).await;
        if stop.requested() {
            return;
        }
        let wake = match window_wait(swept.window_opens, SystemTime::now(), interval) {
            Some(wait) => {
                output::warn_line(&format!(
                    "deletions wait for a deletion window, which opens at {}: the next sweep starts then",
                    swept.window_opens.map(|t| t.to_string()).unwrap_or_default()
                ));
                tokio::time::Instant::now() + wait
            }
            None => started + interval,
        };
        tokio::select! {
            () = tokio::time::sleep_until(wake) => {}
            () = stop.wait() => return,
        }
    }
}

/// How long to wait, from `now`, for a deletion window that opens at
/// `opens` when it opens before the `interval` is up; `None` otherwise. A
/// second more, so that the sweep's own clock is past the opening.
fn window_wait(opens: Option<UnixTime>, now: SystemTime, interval: Duration) -> Option<Duration> {
    let opens = std::time::UNIX_EPOCH + Duration::from_secs(opens?.as_secs());
    let wait = opens.duration_since(now).unwrap_or_default() + Duration::from_secs(1);
    (wait < interval).then_some(wait)
}

/// The sweep cycle with `watch`'s host: the same cycle `apply` runs, every
/// interval.
pub struct Sweeper<'a> {
    cycle: Cycle<'a>,
    host: WatchHost,
}

/// How one sweep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    pub outcome: SweepOutcome,
    /// What `--once` ends with: the verdict `apply` would have had.
    pub verdict: Status,
    /// When a swarm that only its deletion windows held may have
    /// deletions again ([`SweepPlan::window_opens_at`]).
    pub window_opens: Option<UnixTime>,
}

impl<'a> Sweeper<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        registry: &'a dyn Registry,
        host: WatchHost,
        policy: Policy,
        gather: GatherSettings,
        execute: ExecuteSettings,
        grace: GraceState,
        state_max_age: Option<Duration>,
    ) -> Self {
        let cycle = Cycle::new(registry, policy, gather, execute, host.runs)
            .with_grace(grace, state_max_age);
        Sweeper { cycle, host }
    }

    /// The grace state as the last sweep left it (`watch` always keeps
    /// one: [`Sweeper::new`] gives its cycle one).
    pub fn grace(&self) -> Option<GraceState> {
        self.cycle.grace()
    }

    /// Writes the grace state where it is kept; `false` when it could not
    /// be written (said on stderr).
    fn persist_state(&self) -> bool {
        self.grace()
            .is_none_or(|state| self.host.save_state(&state))
    }

    /// One sweep: read the app set, gather, plan, carry the plan out, log
    /// a summary line. Stops between steps when `stop` is requested.
    pub async fn sweep(&self, stop: &Stop) -> Swept {
        let started = Instant::now();
        self.host.started.set(started);
        let ended = self.cycle.run(&self.host, stop).await;
        let window_opens = ended
            .as_ref()
            .ok()
            .and_then(|e| e.plan.as_ref())
            .and_then(SweepPlan::window_opens_at);
        let (outcome, verdict, done) = match &ended {
            Ok(ended) => (
                outcome_of(ended.outcome),
                ended.status,
                ended.plan.as_ref().zip(ended.report.as_ref()),
            ),
            Err(e) => {
                output::warn_line(&e.to_string());
                let outcome = match e {
                    CycleError::AppSet(_) => SweepOutcome::AppSetUnreadable,
                    _ => SweepOutcome::NeedsAttention,
                };
                (outcome, Status::BadInput, None)
            }
        };
        let mut verdict = verdict;
        if let Some((plan, report)) = done {
            self.host.shared.executed(plan, report);
            if !self.host.record(plan, report) {
                verdict = verdict.max(Status::NeedsAttention);
            }
        }
        if let Ok(ended) = &ended {
            // Decided after the sweep, so the memory changed since the
            // cycle wrote the state: written again, with it.
            if self
                .host
                .notified(ended.plan.as_ref(), ended.report.as_ref())
            {
                self.persist_state();
            }
        }
        let took = started.elapsed();
        let at = SystemTime::now();
        self.host.shared.finished(outcome, took, at);
        output::warn_line(&summary(outcome, done, took, at));
        Swept {
            outcome,
            verdict,
            window_opens,
        }
    }
}

/// How a sweep ended, as the metrics count it. Stale and declined plans are
/// `apply`'s alone: `watch` plans afresh and never asks.
fn outcome_of(outcome: Outcome) -> SweepOutcome {
    match outcome {
        Outcome::Success => SweepOutcome::Success,
        Outcome::Held => SweepOutcome::Held,
        Outcome::AppSetUnreadable => SweepOutcome::AppSetUnreadable,
        Outcome::Interrupted => SweepOutcome::Interrupted,
        Outcome::NeedsAttention | Outcome::Stale | Outcome::Declined => {
            SweepOutcome::NeedsAttention
        }
    }
}

/// What `watch` does around the cycle: reads the app set within a bound,
/// approves every plan (the controller runs unattended), keeps the state
/// file and tells the HTTP endpoints and the log.
pub struct WatchHost {
    app_set: AppSetReader,
    shared: Arc<Shared>,
    state_file: Option<PathBuf>,
    runs: Runs,
    /// When the sweep under way started.
    started: Cell<Instant>,
    /// `--audit-log`.
    audit: Option<AuditLog>,
    /// `--notify`; `None` in tests that have no use for it.
    notifier: Option<Notifier>,
}

impl WatchHost {
    pub fn new(
        app_set: AppSetReader,
        shared: Arc<Shared>,
        state_file: Option<PathBuf>,
        runs: Runs,
    ) -> Self {
        WatchHost {
            app_set,
            shared,
            state_file,
            runs,
            started: Cell::new(Instant::now()),
            audit: None,
            notifier: None,
        }
    }

    /// This host, notifying through `notifier`.
    pub fn with_notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }

    /// Tells the notifier how a sweep ended; `true` when what it remembers
    /// changed.
    fn notified(&self, plan: Option<&SweepPlan>, report: Option<&SweepReport>) -> bool {
        self.notifier
            .as_ref()
            .is_some_and(|n| n.swept(plan, report))
    }

    /// Waits, within [`EXIT_WAIT`] each, for volume jobs' removals and
    /// notifications still under way; `true` when the notifications'
    /// memory changed since the state file was written (what was not
    /// delivered is forgotten as sent).
    async fn settle_notifications(&self) -> bool {
        // Stopped at once by a second signal: nothing more is waited for,
        // and what is under way is abandoned.
        if crate::signals::aborted() {
            return self
                .notifier
                .as_ref()
                .is_some_and(Notifier::forget_abandoned);
        }
        // A stop may have dropped a volume job: its service holds every
        // node's docker socket, so its removal is waited for.
        sweep_docker::finish_job_removals(EXIT_WAIT).await;
        match &self.notifier {
            Some(n) => n.settle(EXIT_WAIT).await,
            None => false,
        }
    }

    /// Appends each sweep's lines to `audit`, when given.
    pub fn with_audit_log(mut self, audit: Option<AuditLog>) -> Self {
        self.audit = audit;
        self
    }

    /// Appends the sweep's lines to the audit log, when one was given;
    /// `false` when they could not be written. Sweeping goes on: the
    /// failure is logged and counted, and the next sweep opens the file
    /// afresh.
    fn record(&self, plan: &SweepPlan, report: &SweepReport) -> bool {
        let Some(audit) = &self.audit else {
            return true;
        };
        let recorded = audit.record_or_say(plan, report);
        if !recorded {
            self.shared.audit_write_failed();
        }
        recorded
    }
}

impl Host for WatchHost {
    async fn read_app_set(&self, stop: &Stop) -> AppSetRead {
        match self.app_set.read(stop).await {
            Read::AppSet(app_set) => AppSetRead::Read(app_set),
            Read::Unreadable(e) => AppSetRead::Unreadable(e.to_string()),
            Read::Stopped => AppSetRead::Stopped,
        }
    }

    fn now(&self) -> Option<UnixTime> {
        crate::state::now().ok()
    }

    fn save_state(&self, state: &GraceState) -> bool {
        match &self.notifier {
            Some(n) => {
                let state = state.clone().with_notify(n.memory());
                crate::state::save(self.state_file.as_deref(), &state)
            }
            None => crate::state::save(self.state_file.as_deref(), state),
        }
    }

    fn approve(&self, _plan: &SweepPlan) -> Approval {
        Approval::Proceed
    }

    fn event(&self, event: Event<'_>) {
        match event {
            Event::AppSetRead => self.shared.app_set_read(),
            Event::AppSetUnreadable(why) => {
                self.shared
                    .app_set_unreadable(self.started.get(), why.to_owned());
                // A one-shot run says it once, as bad input.
                if self.runs == Runs::Repeatedly {
                    output::warn_line(&format!(
                        "the app set cannot be read, so this sweep is held and nothing is deleted: {why}"
                    ));
                }
            }
            Event::Gathered { snapshot, took } => {
                self.shared.gathered(snapshot, took);
                if let Some(audit) = &self.audit {
                    audit.gathered(snapshot);
                }
            }
            Event::StateNotCurrent(why) => output::warn_line(&match &self.state_file {
                Some(file) => crate::state::not_current(file, why),
                None => crate::state::not_current_in_memory(why),
            }),
            Event::Planned(plan) => self.shared.planned(plan),
            Event::WindowClosed(holds) => output::window_closed(holds),
            // No progress line: the log's line per deletion is the record
            // of a sweep nobody watches.
            _ => {}
        }
    }
}

/// What `watch` says when a grace period is set and no `--state` keeps its
/// first-seen times: they live in this process only, so `--once` (a new
/// process each time) never sees a release departed long enough.
fn grace_without_state(window: Duration, once: bool) -> String {
    let window = sweep_core::duration::show(window);
    if once {
        format!(
            "min_departed_for is {window} and no --state keeps when releases were first seen departed: every run of watch --once starts their clocks again, so none is ever deleted; give --state FILE"
        )
    } else {
        format!(
            "min_departed_for is {window} and no --state keeps when releases were first seen departed: they are kept in memory only, and a restart starts every clock again; give --state FILE to keep them"
        )
    }
}

/// The one line logged per sweep: how it ended, and what it planned,
/// deleted, failed and held.
pub fn summary(
    outcome: SweepOutcome,
    done: Option<(&SweepPlan, &SweepReport)>,
    took: Duration,
    at: SystemTime,
) -> String {
    let when = humantime::format_rfc3339_seconds(at);
    let counts = match done {
        Some((plan, report)) => {
            let mut counts = format!(
                "{} planned, {} deleted, {} failed, {} held",
                plan.deletions.len(),
                report.totals.deleted,
                report.totals.failed,
                plan.holds.len()
            );
            // Objects live releases dropped are deletions too: said where
            // the resource rule is on, so that a sweep removing only those
            // does not read as one that removed nothing.
            if plan.prune_resources {
                counts.push_str(&format!(
                    "; {} dropped objects planned, {} removed, {} releases' failed",
                    plan.dropped_objects(),
                    report.totals.objects_deleted,
                    report.totals.dropped_failed
                ));
            }
            counts
        }
        None => "nothing deleted".to_owned(),
    };
    format!(
        "{when} sweep {outcome}: {counts} ({:.1}s)",
        took.as_secs_f64()
    )
}

#[cfg(test)]
mod tests;
