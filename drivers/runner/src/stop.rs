//! A stop asked for from outside a sweep (a signal, a test): checked
//! between steps, and awaited by the steps that may be dropped where they
//! stand.

use std::future::Future;

use tokio::sync::watch;

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

    /// A stop that is never asked for.
    pub fn never() -> Stop {
        let (trigger, stop) = Stop::new();
        // Kept alive for good, so the stop never completes by its trigger
        // going away.
        std::mem::forget(trigger);
        stop
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
