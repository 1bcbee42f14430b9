//! What the sweeps leave for the HTTP endpoints: the metrics, the last
//! plan and report, and whether the last gather read every swarm.
//!
//! The lock is held only to copy a value in or out, never across an
//! await, so a slow HTTP client cannot hold up a sweep.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use hyper::body::Bytes;
use sweep_core::sweep::SweepReport;
use sweep_core::{Snapshot, SweepPlan};

use super::metrics::{Metrics, SweepOutcome};

/// What the last gather could read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// No gather has finished yet.
    NotYet,
    /// Every swarm was read.
    Ready,
    /// These swarms (as plans name them) could not be read.
    Unreadable(Vec<String>),
}

#[derive(Debug)]
struct Inner {
    metrics: Metrics,
    plan: Option<Bytes>,
    report: Option<Bytes>,
    readiness: Readiness,
    last_outcome: Option<SweepOutcome>,
}

/// The state the sweep writes and the endpoints read.
#[derive(Debug)]
pub struct Shared {
    inner: Mutex<Inner>,
}

impl Default for Shared {
    fn default() -> Self {
        Shared::new()
    }
}

impl Shared {
    pub fn new() -> Self {
        Shared {
            inner: Mutex::new(Inner {
                metrics: Metrics::new(),
                plan: None,
                report: None,
                readiness: Readiness::NotYet,
                last_outcome: None,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere leaves plain data behind, still worth serving.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A gather that took `took` and read `snapshot`.
    pub fn gathered(&self, snapshot: &Snapshot, took: Duration) {
        let unreadable: Vec<String> = snapshot
            .swarms
            .iter()
            .filter(|s| s.error.is_some())
            .map(|s| s.swarm.to_string())
            .collect();
        let mut inner = self.lock();
        inner.metrics.gathered(took);
        inner.readiness = if unreadable.is_empty() {
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

    pub fn metrics_text(&self) -> String {
        self.lock().metrics.render()
    }

    pub fn plan(&self) -> Option<Bytes> {
        self.lock().plan.clone()
    }

    pub fn report(&self) -> Option<Bytes> {
        self.lock().report.clone()
    }

    pub fn readiness(&self) -> Readiness {
        self.lock().readiness.clone()
    }

    pub fn last_outcome(&self) -> Option<SweepOutcome> {
        self.lock().last_outcome
    }
}
