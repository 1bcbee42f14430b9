//! A stop asked for from outside a sweep (a signal, a test): checked
//! between steps, and awaited by the steps that may be dropped where they
//! stand. Two levels: a stop lets the steps in flight finish and starts
//! nothing new; an abort leaves the steps in flight where they stand, so
//! that the sweep ends at once with a report of what is known to be done.

use std::future::Future;

use tokio::sync::watch;

/// Nothing asked.
const RUNNING: u8 = 0;
/// A stop asked: finish what is in flight, start nothing.
const STOPPING: u8 = 1;
/// An abort asked: end now.
const ABORTING: u8 = 2;

/// Whether a stop was asked for, and a future that completes when it is.
#[derive(Clone)]
pub struct Stop {
    asked: watch::Receiver<u8>,
}

/// Asks a [`Stop`] to stop.
pub struct StopTrigger(watch::Sender<u8>);

impl StopTrigger {
    /// Asks for a stop: the steps in flight finish, nothing new starts.
    pub fn stop(&self) {
        self.0.send_if_modified(|level| {
            let was = *level;
            *level = was.max(STOPPING);
            *level != was
        });
    }

    /// Asks for an abort (a stop too): the sweep ends at once, the steps
    /// in flight left unanswered.
    pub fn abort(&self) {
        self.0.send_replace(ABORTING);
    }
}

impl Stop {
    /// A stop that only `trigger` asks for.
    pub fn new() -> (StopTrigger, Stop) {
        let (tx, rx) = watch::channel(RUNNING);
        (StopTrigger(tx), Stop { asked: rx })
    }

    /// A stop that is never asked for.
    pub fn never() -> Stop {
        let (trigger, stop) = Stop::new();
        // Kept alive for good, so the stop never completes by its trigger
        // going away.
        std::mem::forget(trigger);
        stop
    }

    /// Whether a stop (or an abort) was asked for.
    pub fn requested(&self) -> bool {
        *self.asked.borrow() >= STOPPING
    }

    /// Whether an abort was asked for.
    pub fn abort_requested(&self) -> bool {
        *self.asked.borrow() >= ABORTING
    }

    /// Completes once a stop (or an abort) is asked for.
    pub fn wait(&self) -> impl Future<Output = ()> + '_ {
        self.reached(STOPPING)
    }

    /// Completes once an abort is asked for.
    pub fn aborted(&self) -> impl Future<Output = ()> + '_ {
        self.reached(ABORTING)
    }

    fn reached(&self, level: u8) -> impl Future<Output = ()> + '_ {
        let mut asked = self.asked.clone();
        async move {
            if asked.wait_for(|s| *s >= level).await.is_err() {
                // The trigger is gone without asking: no stop will come.
                std::future::pending::<()>().await;
            }
        }
    }
}
