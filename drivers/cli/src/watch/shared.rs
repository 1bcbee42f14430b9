//! What the sweeps leave for the HTTP endpoints: the metrics, the last
//! snapshot, plan and report, whether the last gather read every swarm, and since
//! when the app set has not read.
//!
//! The lock is held only to copy a value in or out, never across an
//! await, so a slow HTTP client cannot hold up a sweep.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use hyper::body::Bytes;
use sweep_core::sweep::SweepReport;
use sweep_core::{Snapshot, SweepPlan};

use super::metrics::{Metrics, SweepOutcome};

/// How many intervals the app set may go unread before `/readyz` fails:
/// a sweep or two held by a file being rewritten is normal, a controller
/// that has swept nothing for longer needs a person or a restart.
pub const APP_SET_PATIENCE_INTERVALS: u32 = 3;

/// How long the app set may go unread before `/readyz` fails.
pub fn app_set_patience(interval: Duration) -> Duration {
    interval.saturating_mul(APP_SET_PATIENCE_INTERVALS)
}

/// Whether the controller is doing its job, as `/readyz` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// No gather has finished yet.
    NotYet,
    /// Every swarm was read.
    Ready,
    /// These swarms (as plans name them) could not be read.
    Unreadable(Vec<String>),
    /// The app set has not read for longer than its patience: every sweep
    /// since has been held, whatever the last gather read.
    AppSetUnreadable {
        /// The app set, as given.
        file: String,
        /// Since the first sweep that could not read it.
        for_: Duration,
        /// Why the last read failed.
        why: String,
    },
}

/// Since when the app set has not read, and why.
#[derive(Debug)]
struct AppSetHealth {
    file: String,
    patience: Duration,
    unreadable: Option<(Instant, String)>,
}

#[derive(Debug)]
struct Inner {
    metrics: Metrics,
    /// Whether gathers keep their snapshot for `/snapshot`.
    keep_snapshots: bool,
    snapshot: Option<Bytes>,
    plan: Option<Bytes>,
    report: Option<Bytes>,
    gathered: Readiness,
    app_set: AppSetHealth,
    last_outcome: Option<SweepOutcome>,
}

/// The state the sweep writes and the endpoints read.
#[derive(Debug)]
pub struct Shared {
    inner: Mutex<Inner>,
}

impl Shared {
    /// The state of a controller reading the app set `file`, which may go
    /// unread for `patience` before `/readyz` fails.
    pub fn new(file: impl Into<String>, patience: Duration) -> Self {
        Shared {
            inner: Mutex::new(Inner {
                metrics: Metrics::new(),
                keep_snapshots: false,
                snapshot: None,
                plan: None,
                report: None,
                gathered: Readiness::NotYet,
                app_set: AppSetHealth {
                    file: file.into(),
                    patience,
                    unreadable: None,
                },
                last_outcome: None,
            }),
        }
    }

    /// Keeping the last gathered snapshot, as `swarm-sweep snapshot`
    /// prints it, for `/snapshot`: a pull request's preview plans it
    /// against its own app set where the managers' sockets cannot be
    /// reached (`plan --snapshot FILE --app-set FILE`).
    pub fn keeping_snapshots(self) -> Self {
        self.lock().keep_snapshots = true;
        self
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere leaves plain data behind, still worth serving.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A gather that took `took` and read `snapshot`, given the time and
    /// first-seen times the sweep plans it with.
    pub fn gathered(&self, snapshot: &Snapshot, took: Duration) {
        let unreadable: Vec<String> = snapshot
            .swarms
            .iter()
            .filter(|s| s.why_unreadable().is_some())
            .map(|s| s.swarm.to_string())
            .collect();
        // Written out before the lock is taken: a large snapshot takes a
        // while, and the endpoints must not wait for it.
        let keep = self.lock().keep_snapshots;
        let json = keep.then(|| Bytes::from(format!("{}\n", snapshot.to_json_pretty())));
        let mut inner = self.lock();
        inner.metrics.gathered(took);
        if json.is_some() {
            inner.snapshot = json;
        }
        inner.gathered = if unreadable.is_empty() {
            Readiness::Ready
        } else {
            Readiness::Unreadable(unreadable)
        };
    }

    /// The plan about to be carried out, shown at `/plan` from now on.
    pub fn planned(&self, plan: &SweepPlan) {
        let json = Bytes::from(format!("{}\n", plan.to_json_pretty()));
        let mut inner = self.lock();
        inner.metrics.planned(plan);
        inner.plan = Some(json);
    }

    /// The report of carrying `plan` out, shown at `/report` from now on.
    pub fn executed(&self, plan: &SweepPlan, report: &SweepReport) {
        let json = Bytes::from(format!("{}\n", report.to_json_pretty()));
        let mut inner = self.lock();
        inner.metrics.executed(plan, report);
        inner.report = Some(json);
    }

    /// A sweep that ended `at` with `outcome` after `took`.
    pub fn finished(&self, outcome: SweepOutcome, took: Duration, at: SystemTime) {
        let mut inner = self.lock();
        inner.metrics.finished(outcome, took, at);
        inner.last_outcome = Some(outcome);
    }

    /// The app set read.
    pub fn app_set_read(&self) {
        self.lock().app_set.unreadable = None;
    }

    /// A read of the app set that started `at` failed with `why`; the
    /// first of a run of them says since when.
    pub fn app_set_unreadable(&self, at: Instant, why: String) {
        let mut inner = self.lock();
        let since = inner
            .app_set
            .unreadable
            .take()
            .map_or(at, |(since, _)| since);
        inner.app_set.unreadable = Some((since, why));
    }

    /// A sweep's lines that could not be appended to the audit log.
    pub fn audit_write_failed(&self) {
        self.lock().metrics.audit_write_failed();
    }

    /// A notification given up on.
    pub fn notify_dropped(&self) {
        self.lock().metrics.notify_dropped();
    }

    pub fn metrics_text(&self) -> String {
        self.lock().metrics.render()
    }

    /// The last gathered snapshot as JSON, when snapshots are kept
    /// ([`Shared::keeping_snapshots`]) and a gather has finished.
    pub fn snapshot(&self) -> Option<Bytes> {
        self.lock().snapshot.clone()
    }

    pub fn plan(&self) -> Option<Bytes> {
        self.lock().plan.clone()
    }

    pub fn report(&self) -> Option<Bytes> {
        self.lock().report.clone()
    }

    pub fn readiness(&self) -> Readiness {
        self.readiness_at(Instant::now())
    }

    /// The readiness at `now`: an app set unread for longer than its
    /// patience first, since then no gather is current; else what the
    /// last gather read.
    pub fn readiness_at(&self, now: Instant) -> Readiness {
        let inner = self.lock();
        let health = &inner.app_set;
        if let Some((since, why)) = &health.unreadable {
            let for_ = now.saturating_duration_since(*since);
            if for_ > health.patience {
                return Readiness::AppSetUnreadable {
                    file: health.file.clone(),
                    for_,
                    why: why.clone(),
                };
            }
        }
        inner.gathered.clone()
    }

    pub fn last_outcome(&self) -> Option<SweepOutcome> {
        self.lock().last_outcome
    }
}
