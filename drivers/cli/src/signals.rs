//! Signals, the same for every command that deletes: the first SIGTERM or
//! SIGINT lets the steps in flight finish and starts nothing new; a second
//! of either ends the sweep at once, leaving the steps in flight
//! unanswered, records what is known to be removed (the audit log) and
//! ends the process with status 130, within [`ABORT_LIMIT`] whatever is
//! still running. Either is safe: a release's records go last, so the next
//! run finds whatever an interrupted one left.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sweep_runner::Stop;

use crate::output;

/// The process's exit status on a second signal, as a shell reports a
/// process ended by SIGINT.
pub const STOPPED_AT_ONCE: i32 = 130;

/// The longest the process lives after a second signal: time to write the
/// audit log's lines of what the sweep removed, and no more.
pub const ABORT_LIMIT: Duration = Duration::from_secs(3);

/// Whether a second signal asked to stop at once.
static ABORTED: AtomicBool = AtomicBool::new(false);

/// Whether a second signal asked to stop at once: the process then ends
/// with [`STOPPED_AT_ONCE`], and waits for nothing it can skip (webhook
/// deliveries).
pub fn aborted() -> bool {
    ABORTED.load(Ordering::SeqCst)
}

/// A stop asked for by the first SIGTERM or SIGINT. The handlers are in
/// place when this returns, before anything is read. Must run inside the
/// runtime.
pub fn stop_on_signals() -> std::io::Result<Stop> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let (trigger, stop) = Stop::new();
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        if ASKING.load(Ordering::SeqCst) {
            output::warn_line("interrupted at the prompt: nothing was deleted");
            std::process::exit(STOPPED_AT_ONCE);
        }
        output::warn_line(
            "stopping: finishing the steps in flight and starting nothing new (interrupted; signal again to stop at once)",
        );
        trigger.stop();
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        output::warn_line("signalled again; stopping now");
        ABORTED.store(true, Ordering::SeqCst);
        trigger.abort();
        // A bound that holds whatever the runtime is doing: a thread of
        // its own, not a task.
        std::thread::spawn(|| {
            std::thread::sleep(ABORT_LIMIT);
            std::process::exit(STOPPED_AT_ONCE);
        });
    });
    Ok(stop)
}

/// Whether a person is being asked before anything is deleted: a signal
/// then ends the process at once, as it would any prompt, since nothing is
/// in flight.
static ASKING: AtomicBool = AtomicBool::new(false);

/// Runs `ask` (a prompt that blocks on the terminal) with a signal ending
/// the process at once.
pub fn while_asking<T>(ask: impl FnOnce() -> T) -> T {
    ASKING.store(true, Ordering::SeqCst);
    let answer = ask();
    ASKING.store(false, Ordering::SeqCst);
    answer
}
