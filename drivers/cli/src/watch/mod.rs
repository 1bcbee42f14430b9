//! `swarm-sweep watch`: the sweep on an interval, for a controller that
//! runs as a service.
//!
//! One sweep is what `apply --yes` does: read the app set, gather, plan,
//! carry the plan out. The app set is read afresh every time, and one
//! that cannot be read or parsed holds that sweep before any swarm is
//! read: it never stands in as an empty set, and a read that never ends
//! holds only its own sweep (`app_set.rs`). `--once` runs the very same
//! sweep once and ends with `apply`'s exit status, for cron.
//!
//! The first SIGTERM or SIGINT lets the steps in flight finish, starts
//! nothing new and ends the process with status 0; a second ends it at
//! once (130). Either is safe: a release's records go last, so the next
//! sweep finds whatever an interrupted one left.

mod app_set;
mod http;
mod metrics;
mod shared;

use std::cell::Cell;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use sweep_core::sweep::SweepReport;
use sweep_core::verdict::{apply_status, Status, BAD_INPUT};
use sweep_core::{plan, GraceState, Policy, SweepPlan};
use sweep_runner::{execute_until_with, gather, ExecuteSettings, GatherSettings};
use sweep_swarms::Registry;
use tokio::sync::watch;

use crate::cli::Source;
use crate::input::{self, InputError};
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

/// Runs `watch`: its exit status, or bad input (status 2) found before
/// any swarm was read.
pub fn run(options: Options) -> Result<u8, InputError> {
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
    } = options;
    // Read before any swarm is: a state file that does not read is bad
    // input, never an empty state that would restart every clock. One that
    // is not current is not used; afterwards the state lives in memory.
    let max_age = state_max_age.or(default_state_max_age(interval, once));
    let grace = match crate::state::load_given(state.as_deref(), max_age)? {
        Some(grace) => grace,
        None => GraceState::empty(crate::state::now()?),
    };
    let limit = source.timeout_or_default();
    let registry = input::registry(&source, limit)?;
    let app_set_file = source.app_set.clone();
    let shared = Arc::new(Shared::new(
        app_set_file.display().to_string(),
        shared::app_set_patience(interval),
    ));
    let sweeper = Sweeper {
        registry: registry.as_ref(),
        app_set: AppSetReader::new(
            Arc::new(FileAppSet(app_set_file)),
            read_limit(interval, once),
        ),
        policy,
        gather: GatherSettings::new(limit),
        execute: settings,
        shared: shared.clone(),
        grace: Mutex::new(grace),
        state_file: state,
        state_max_age: max_age,
    };
    let status = runtime.block_on(async {
        let stop = Stop::on_signals()
            .map_err(|e| InputError::Runtime(format!("cannot handle signals: {e}")))?;
        if let Some(addr) = listen {
            let listener = http::bind(addr)
                .await
                .map_err(|e| InputError::Flag(format!("--listen {addr}: cannot listen: {e}")))?;
            tracing::info!(%addr, "serving /healthz, /readyz, /metrics, /plan and /report");
            http::serve(listener, shared.clone());
        }
        if once {
            let swept = sweeper.sweep(&stop).await;
            let status = if persist_state(&sweeper) {
                swept.status
            } else {
                swept.status.max(Status::NeedsAttention.code())
            };
            return Ok(status);
        }
        watch_loop(&sweeper, interval, &stop).await;
        // Said again on the way out, whatever the last sweep's write did.
        persist_state(&sweeper);
        output::warn_line("stopped");
        Ok(Status::Success.code())
    });
    // Reads of the app set stuck for good (a FIFO nobody writes) must not
    // keep the process from ending: the runtime would wait for them.
    runtime.shutdown_background();
    status
}

/// Writes the grace-period state, when a file was given, after each sweep
/// and on exit; `false` when it could not be written (said on stderr), so
/// `--once` ends with status 1 as `apply` would.
fn persist_state(sweeper: &Sweeper<'_>) -> bool {
    let state = sweeper.grace().clone();
    crate::state::save(sweeper.state_file.as_deref(), &state)
}

/// Sweeps every `interval`, start to start, until `stop`; a sweep that
/// overruns its interval is followed at once by the next.
async fn watch_loop(sweeper: &Sweeper<'_>, interval: Duration, stop: &Stop) {
    loop {
        let started = tokio::time::Instant::now();
        sweeper.sweep(stop).await;
        persist_state(sweeper);
        if stop.requested() {
            return;
        }
        tokio::select! {
            () = tokio::time::sleep_until(started + interval) => {}
            () = stop.wait() => return,
        }
    }
}

/// One sweep's inputs, the same for every sweep.
pub struct Sweeper<'a> {
    pub registry: &'a dyn Registry,
    pub app_set: AppSetReader,
    pub policy: Policy,
    pub gather: GatherSettings,
    pub execute: ExecuteSettings,
    pub shared: Arc<Shared>,
    /// When each departed release was first seen so, carried from one
    /// sweep to the next.
    pub grace: Mutex<GraceState>,
    pub state_file: Option<PathBuf>,
    /// How old the state may be at each sweep before its clocks restart
    /// (`--state-max-age`, or [`default_state_max_age`]).
    pub state_max_age: Option<Duration>,
}

/// How one sweep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Swept {
    pub outcome: SweepOutcome,
    /// The exit status `apply` would have had (`--once` ends with it).
    pub status: u8,
}

impl Sweeper<'_> {
    fn grace(&self) -> MutexGuard<'_, GraceState> {
        self.grace.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One sweep: read the app set, gather, plan, carry the plan out,
    /// log a summary line. Stops between steps when `stop` is requested.
    pub async fn sweep(&self, stop: &Stop) -> Swept {
        let started = Instant::now();
        let app_set = match self.app_set.read(stop).await {
            Read::AppSet(app_set) => {
                self.shared.app_set_read();
                app_set
            }
            Read::Stopped => return self.interrupted_before_deleting(started),
            Read::Unreadable(e) => {
                self.shared.app_set_unreadable(started, e.to_string());
                // Planning with no app set would read as "every
                // application left": hold, and say why.
                output::warn_line(&format!(
                    "the app set cannot be read, so this sweep is held and nothing is deleted: {e}"
                ));
                return self.finish(
                    SweepOutcome::AppSetUnreadable,
                    Status::NeedsAttention.code(),
                    started,
                    None,
                );
            }
        };
        if stop.requested() {
            return self.interrupted_before_deleting(started);
        }
        let gather_started = Instant::now();
        let gathering = gather(self.registry, self.policy.clone(), app_set, self.gather);
        // Gathering only reads: a stop drops it where it stands.
        let mut snapshot = tokio::select! {
            snapshot = gathering => snapshot,
            () = stop.wait() => return self.interrupted_before_deleting(started),
        };
        self.shared.gathered(&snapshot, gather_started.elapsed());
        let clocked = crate::state::clock_current(
            &mut snapshot,
            &mut self.grace(),
            self.state_max_age,
            self.state_file.as_deref(),
        );
        let now = match clocked {
            Ok(now) => now,
            Err(e) => {
                output::warn_line(&format!("{e}; nothing is deleted"));
                return self.finish(
                    SweepOutcome::NeedsAttention,
                    Status::NeedsAttention.code(),
                    started,
                    None,
                );
            }
        };
        let plan = match plan(&snapshot) {
            Ok(plan) => plan,
            Err(e) => {
                output::warn_line(&format!(
                    "the gathered snapshot cannot be planned, so nothing is deleted: {e}"
                ));
                return self.finish(SweepOutcome::NeedsAttention, BAD_INPUT, started, None);
            }
        };
        drop(snapshot);
        self.shared.planned(&plan);
        if stop.requested() {
            *self.grace() = GraceState::after_plan(&plan, now);
            return self.interrupted_before_deleting(started);
        }
        let interrupted = Cell::new(false);
        let stopped = async {
            stop.wait().await;
            interrupted.set(true);
        };
        // No progress line: the log's line per deletion is the record of
        // a sweep nobody watches.
        let report = execute_until_with(self.registry, &plan, self.execute, stopped, |_| {}).await;
        self.shared.executed(&plan, &report);
        *self.grace() = GraceState::after_sweep(&plan, &report, now);
        let status = apply_status(&plan, &report).code();
        let outcome = if interrupted.get() {
            SweepOutcome::Interrupted
        } else if plan.is_held() {
            SweepOutcome::Held
        } else if status == Status::Success.code() {
            SweepOutcome::Success
        } else {
            SweepOutcome::NeedsAttention
        };
        self.finish(outcome, status, started, Some((&plan, &report)))
    }

    fn interrupted_before_deleting(&self, started: Instant) -> Swept {
        self.finish(
            SweepOutcome::Interrupted,
            Status::NeedsAttention.code(),
            started,
            None,
        )
    }

    fn finish(
        &self,
        outcome: SweepOutcome,
        status: u8,
        started: Instant,
        done: Option<(&SweepPlan, &SweepReport)>,
    ) -> Swept {
        let took = started.elapsed();
        let at = SystemTime::now();
        self.shared.finished(outcome, took, at);
        output::warn_line(&summary(outcome, done, took, at));
        Swept { outcome, status }
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
        Some((plan, report)) => format!(
            "{} planned, {} deleted, {} failed, {} held",
            plan.deletions.len(),
            report.totals.deleted,
            report.totals.failed,
            plan.holds.len()
        ),
        None => "nothing deleted".to_owned(),
    };
    format!(
        "{when} sweep {outcome}: {counts} ({:.1}s)",
        took.as_secs_f64()
    )
}

/// Whether a stop was asked for, and a future that completes when it is.
#[derive(Clone)]
pub struct Stop {
    asked: watch::Receiver<bool>,
}

/// Asks a [`Stop`] to stop.
pub struct StopTrigger(watch::Sender<bool>);

impl StopTrigger {
    pub fn stop(&self) {
        self.0.send_replace(true);
    }
}

impl Stop {
    /// A stop that only `trigger` asks for.
    pub fn new() -> (StopTrigger, Stop) {
        let (tx, rx) = watch::channel(false);
        (StopTrigger(tx), Stop { asked: rx })
    }

    /// A stop asked for by the first SIGTERM or SIGINT; the second ends
    /// the process at once with status 130. The handlers are in place
    /// when this returns, before the first sweep starts.
    pub fn on_signals() -> std::io::Result<Stop> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let (trigger, stop) = Stop::new();
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            output::warn_line(
                "stopping: finishing the steps in flight, starting no new sweep (signal again to stop at once)",
            );
            trigger.stop();
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            output::warn_line("signalled again; stopping now");
            std::process::exit(130);
        });
        Ok(stop)
    }

    pub fn requested(&self) -> bool {
        *self.asked.borrow()
    }

    /// Completes once a stop is asked for.
    pub fn wait(&self) -> impl Future<Output = ()> + '_ {
        let mut asked = self.asked.clone();
        async move {
            if asked.wait_for(|s| *s).await.is_err() {
                // The trigger is gone without asking: no stop will come.
                std::future::pending::<()>().await;
            }
        }
    }
}

#[cfg(test)]
mod tests;
