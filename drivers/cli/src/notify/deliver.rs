//! Delivery: a sweep hands bodies over and goes on; what cannot be
//! delivered in time is logged and counted, never waited for.
//!
//! Each webhook has its own bounded queue and worker, so a receiver that
//! hangs delays only its own events. A body is tried until it is taken, a
//! receiver refuses it for good (a 4xx other than 408 and 429), or its
//! time is up ([`Limits::retry_for`]); each attempt has its own timeout,
//! and the waits between them double. A full queue drops the new body at
//! once. Every body dropped is logged (the webhook masked) and counted
//! (`swarm_sweep_notify_dropped_total` in `watch`), and its receipt, if
//! it has one, is handed back so the memory forgets it was sent.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::body::Bytes;
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;

use super::client::{post, PostError};
use sweep_core::notify::webhook::Webhook as Target;
use sweep_core::notify::SentEvent;

/// The bounds of delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bodies waiting per webhook; one more is dropped.
    pub queue: usize,
    /// One attempt, connect to status line.
    pub request_timeout: Duration,
    /// The first wait between attempts; each next one doubles, up to
    /// [`MAX_BACKOFF`].
    pub first_backoff: Duration,
    /// How long a body is tried, from when it was handed over.
    pub retry_for: Duration,
}

/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

impl Default for Limits {
    /// 64 bodies a webhook, 10 s an attempt, retried for 5 minutes from
    /// a first wait of 1 s.
    fn default() -> Self {
        Limits {
            queue: 64,
            request_timeout: Duration::from_secs(10),
            first_backoff: Duration::from_secs(1),
            retry_for: Duration::from_secs(5 * 60),
        }
    }
}

/// Called for every body dropped, with its receipt if it has one.
pub type OnDrop = Box<dyn Fn(Option<&SentEvent>) + Send + Sync>;

/// A body to post, and by when it must be taken.
struct Job {
    id: u64,
    body: Bytes,
    deadline: Instant,
    receipt: Option<Arc<SentEvent>>,
}

/// What is left to do, shared with the workers.
struct Counters {
    /// Bodies handed over and not yet delivered or dropped.
    pending: AtomicUsize,
    dropped: AtomicU64,
    /// Woken whenever `pending` goes down.
    settled: Notify,
    on_drop: OnDrop,
    /// The receipts of the jobs with one not yet delivered or dropped, by
    /// job: what an exit that stops waiting must hand back.
    unsettled: Mutex<BTreeMap<u64, Arc<SentEvent>>>,
    next_id: AtomicU64,
}

impl Counters {
    fn dropped(&self, target: &Target, job: &Job, why: &str) {
        tracing::warn!(webhook = %target, "notification not delivered: {why}");
        self.dropped.fetch_add(1, Ordering::SeqCst);
        (self.on_drop)(job.receipt.as_deref());
    }

    fn settle(&self, job: &Job) {
        self.unsettled_receipts().remove(&job.id);
        self.pending.fetch_sub(1, Ordering::SeqCst);
        self.settled.notify_waiters();
    }

    fn unsettled_receipts(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<SentEvent>>> {
        self.unsettled.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The webhooks' queues.
pub struct Delivery {
    queues: Vec<(Arc<Target>, mpsc::Sender<Job>)>,
    counters: Arc<Counters>,
    limits: Limits,
}

impl Delivery {
    /// Starts a worker per target on the current runtime; `on_drop` is
    /// called for every body dropped (a metric).
    pub fn start(
        targets: Vec<Target>,
        content_type: &'static str,
        limits: Limits,
        on_drop: OnDrop,
    ) -> Self {
        let counters = Arc::new(Counters {
            pending: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            settled: Notify::new(),
            on_drop,
            unsettled: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(0),
        });
        let queues = targets
            .into_iter()
            .map(|target| {
                let target = Arc::new(target);
                let (tx, rx) = mpsc::channel(limits.queue.max(1));
                tokio::spawn(work(
                    target.clone(),
                    rx,
                    content_type,
                    limits,
                    counters.clone(),
                ));
                (target, tx)
            })
            .collect();
        Delivery {
            queues,
            counters,
            limits,
        }
    }

    /// Hands `body` to every webhook without waiting; a full queue drops it
    /// for that webhook. `receipt` is handed back to `on_drop` if any
    /// webhook does not get the body, or by [`Delivery::abandoned`].
    pub fn send(&self, body: Bytes, receipt: Option<SentEvent>) {
        let deadline = Instant::now() + self.limits.retry_for;
        let receipt = receipt.map(Arc::new);
        for (target, queue) in &self.queues {
            self.counters.pending.fetch_add(1, Ordering::SeqCst);
            let job = Job {
                id: self.counters.next_id.fetch_add(1, Ordering::SeqCst),
                body: body.clone(),
                deadline,
                receipt: receipt.clone(),
            };
            if let Some(receipt) = &job.receipt {
                self.counters
                    .unsettled_receipts()
                    .insert(job.id, receipt.clone());
            }
            if let Err(full) = queue.try_send(job) {
                let job = full.into_inner();
                self.counters.settle(&job);
                self.counters.dropped(
                    target,
                    &job,
                    "the queue is full (the receiver is too slow or down)",
                );
            }
        }
    }

    /// The receipts of bodies still neither delivered nor dropped, each
    /// once: what an exit abandons.
    pub fn abandoned(&self) -> Vec<SentEvent> {
        let mut receipts: Vec<SentEvent> = self
            .counters
            .unsettled_receipts()
            .values()
            .map(|r| SentEvent::clone(r))
            .collect();
        receipts.sort();
        receipts.dedup();
        receipts
    }

    /// Waits until every body handed over is delivered or dropped, or
    /// `limit` has passed; the number still pending then, which the
    /// caller says are abandoned (they are not retried after the process
    /// ends).
    pub async fn settle(&self, limit: Duration) -> usize {
        let deadline = Instant::now() + limit;
        loop {
            let woken = self.counters.settled.notified();
            let pending = self.counters.pending.load(Ordering::SeqCst);
            if pending == 0 {
                return 0;
            }
            if tokio::time::timeout_at(deadline, woken).await.is_err() {
                return self.counters.pending.load(Ordering::SeqCst);
            }
        }
    }

    /// Bodies dropped so far, over every webhook.
    #[cfg(test)]
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::SeqCst)
    }
}

/// One webhook's worker: each body in turn, retried until taken, refused
/// or out of time.
async fn work(
    target: Arc<Target>,
    mut rx: mpsc::Receiver<Job>,
    content_type: &'static str,
    limits: Limits,
    counters: Arc<Counters>,
) {
    while let Some(job) = rx.recv().await {
        match deliver(&target, &job, content_type, limits).await {
            Ok(()) => tracing::debug!(webhook = %target, "notification delivered"),
            Err(why) => counters.dropped(&target, &job, &why),
        }
        counters.settle(&job);
    }
}

async fn deliver(
    target: &Target,
    job: &Job,
    content_type: &str,
    limits: Limits,
) -> Result<(), String> {
    let mut backoff = limits.first_backoff;
    let mut attempts = 0u32;
    loop {
        let left = job.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("gave up after {attempts} attempt(s)"));
        }
        attempts += 1;
        let error = match post(
            target,
            job.body.clone(),
            content_type,
            limits.request_timeout.min(left),
        )
        .await
        {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if !error.is_transient() {
            return Err(format!("{error}; not retried"));
        }
        let wait = backoff.min(job.deadline.saturating_duration_since(Instant::now()));
        tracing::debug!(webhook = %target, %error, "notification attempt {attempts} failed; retrying in {wait:?}");
        if wait.is_zero() {
            return Err(last_words(attempts, &error));
        }
        tokio::time::sleep(wait).await;
        if Instant::now() >= job.deadline {
            return Err(last_words(attempts, &error));
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

fn last_words(attempts: u32, error: &PostError) -> String {
    format!("{error}, after {attempts} attempt(s); gave up")
}
