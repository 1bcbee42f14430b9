//! `--notify`: word of what `apply` and `watch` did, posted to webhooks.
//!
//! Which events a sweep gives, which repeat and what their bodies say is
//! the core's (`sweep_core::notify`); this module finds the webhooks
//! (`--notify`, `SWARM_SWEEP_NOTIFY`, `--notify-file`), keeps the core's
//! memory between sweeps (in the state file with `--state`), and hands
//! the bodies to delivery, which never holds up or fails a sweep.

mod client;
mod deliver;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hyper::body::Bytes;
use sweep_core::notify::webhook::{ListOf, Webhook, WebhookError};
use sweep_core::notify::{self, slack, Facts, Notification, NotifyMemory};
use sweep_core::saved::Stale;
use sweep_core::sweep::SweepReport;
use sweep_core::SweepPlan;
use sweep_docker::files::{read_limited, Accept, ReadError};
use thiserror::Error;

use crate::cli::{NotifyArgs, NotifyFormat, NOTIFY_ENV};

pub use deliver::{Delivery, Limits, OnDrop};

/// The largest `--notify-file`: 64 KiB, hundreds of URLs.
pub const FILE_LIMIT: u64 = 64 * 1024;

/// How long `apply` (and `watch` on its way out) waits for deliveries
/// still under way before it exits: what is not delivered by then is
/// logged as abandoned.
pub const EXIT_WAIT: Duration = Duration::from_secs(15);

/// Why the webhooks cannot be used; nothing was read from a swarm.
#[derive(Debug, Error)]
pub enum NotifyError {
    #[error("{0}")]
    Webhook(#[from] WebhookError),
    #[error("--notify-file: {0}")]
    File(#[from] ReadError),
    #[error("{NOTIFY_ENV}: not valid UTF-8")]
    Environment,
}

/// The notification settings, their webhooks read and checked.
#[derive(Debug)]
pub struct Settings {
    pub targets: Vec<Webhook>,
    pub format: NotifyFormat,
    pub held_after: Duration,
}

impl Settings {
    /// The webhooks from the flags, `env` (the value of
    /// `SWARM_SWEEP_NOTIFY`, whitespace-separated) and the file, each once.
    pub fn read(
        args: &NotifyArgs,
        env: Option<std::ffi::OsString>,
    ) -> Result<Settings, NotifyError> {
        let mut targets = Vec::new();
        for (i, url) in args.notify.iter().enumerate() {
            targets.push(Webhook::parse(&url.0, &format!("--notify #{}", i + 1))?);
        }
        if let Some(env) = env {
            let env = env.into_string().map_err(|_| NotifyError::Environment)?;
            targets.extend(Webhook::parse_list(&env, NOTIFY_ENV, ListOf::Words)?);
        }
        if let Some(file) = &args.notify_file {
            let text = read_limited(file, FILE_LIMIT, Accept::RegularFile)?;
            let from = file.display().to_string();
            targets.extend(Webhook::parse_list(&text, &from, ListOf::Lines)?);
        }
        // The same webhook given twice gets each event once.
        let mut unique: Vec<Webhook> = Vec::with_capacity(targets.len());
        for t in targets {
            if !unique.contains(&t) {
                unique.push(t);
            }
        }
        Ok(Settings {
            targets: unique,
            format: args.notify_format,
            held_after: args.notify_held_after,
        })
    }
}

/// The core's memory, shared with delivery, which hands back what it
/// could not deliver.
struct Remembered {
    memory: Mutex<NotifyMemory>,
    /// Set when delivery made the memory forget something: the state file
    /// no longer says what the memory does.
    forgot: AtomicBool,
}

impl Remembered {
    fn lock(&self) -> std::sync::MutexGuard<'_, NotifyMemory> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `receipt`'s event reached nobody, or not everybody: the next sweep
    /// that finds it sends it again.
    fn undelivered(&self, receipt: &sweep_core::notify::SentEvent) {
        if self.lock().undelivered(receipt) {
            self.forgot.store(true, Ordering::SeqCst);
        }
    }
}

/// What `apply` and `watch` keep for notifications: the core's memory,
/// and the delivery of what it decides to send.
pub struct Notifier {
    format: NotifyFormat,
    held_after: Duration,
    controller: String,
    report_url: Option<String>,
    memory: Arc<Remembered>,
    /// `None` without webhooks: nothing is decided, and the memory read
    /// from the state file is written back as it was.
    delivery: Option<Delivery>,
}

impl Notifier {
    /// Starts delivery (on the current runtime) to the webhooks of
    /// `settings`, for `controller`, remembering `memory` (the state
    /// file's); `on_drop` counts each body dropped. An event dropped for
    /// any webhook is forgotten as sent, so a later sweep that finds it
    /// again sends it again (a webhook that did get it gets it twice:
    /// better than one that never hears of it).
    pub fn start(
        settings: Settings,
        controller: String,
        report_url: Option<String>,
        memory: NotifyMemory,
        limits: Limits,
        on_drop: Box<dyn Fn() + Send + Sync>,
    ) -> Self {
        let content_type = "application/json";
        let memory = Arc::new(Remembered {
            memory: Mutex::new(memory),
            forgot: AtomicBool::new(false),
        });
        let delivery = (!settings.targets.is_empty()).then(|| {
            let remembered = memory.clone();
            let on_drop: OnDrop = Box::new(move |receipt| {
                on_drop();
                if let Some(receipt) = receipt {
                    remembered.undelivered(receipt);
                }
            });
            Delivery::start(settings.targets, content_type, limits, on_drop)
        });
        Notifier {
            format: settings.format,
            held_after: settings.held_after,
            controller,
            report_url,
            memory,
            delivery,
        }
    }

    /// What notifications remember now, for the state file.
    pub fn memory(&self) -> NotifyMemory {
        self.memory.lock().clone()
    }

    /// A saved plan refused as stale.
    pub fn stale(&self, stale: &Stale) {
        self.decide(Facts {
            stale: Some(stale),
            ..Facts::default()
        });
    }

    /// A sweep that got as far as `plan` and `report`; `true` when the
    /// memory changed since the state file was last written with it (the
    /// file should be written again).
    pub fn swept(&self, plan: Option<&SweepPlan>, report: Option<&SweepReport>) -> bool {
        let decided = self.decide(Facts {
            plan,
            report,
            stale: None,
        });
        self.memory.forgot.swap(false, Ordering::SeqCst) || decided
    }

    fn decide(&self, facts: Facts<'_>) -> bool {
        let Some(delivery) = &self.delivery else {
            return false;
        };
        // A clock before 1970 cannot date a hold: nothing is decided.
        let Ok(now) = crate::state::now() else {
            return false;
        };
        let mut memory = self.memory.lock();
        let before = memory.clone();
        let events = notify::decide(facts, &mut memory, now, self.held_after);
        let changed = *memory != before;
        drop(memory);
        for event in &events {
            let url = self.report_url.as_deref();
            let body = match self.format {
                NotifyFormat::Json => {
                    Notification::new(event, &self.controller, now, url).to_json()
                }
                NotifyFormat::Slack => slack::body(event, &self.controller, now, url).to_string(),
            };
            tracing::info!(
                event = event.event.as_str(),
                "notifying: {}",
                sweep_core::escape::escape(&notify::summary(event))
            );
            delivery.send(Bytes::from(body), event.receipt());
        }
        changed
    }

    /// Waits up to `limit` for deliveries under way; says how many were
    /// abandoned, and forgets having sent them. `true` when the memory
    /// changed since the state file was last written with it (the file
    /// should be written again, so the next run sends them).
    pub async fn settle(&self, limit: Duration) -> bool {
        let Some(delivery) = &self.delivery else {
            return false;
        };
        let left = delivery.settle(limit).await;
        if left > 0 {
            crate::output::warn_line(&format!(
                "{left} notification(s) not delivered within {}; abandoned",
                humantime::format_duration(limit)
            ));
        }
        self.forget_abandoned()
    }

    /// Forgets having sent what is still under way, without waiting: the
    /// process is about to end (a second signal stops it at once), and
    /// what it abandons must be sent by the next run. `true` when the
    /// memory changed since the state file was last written with it.
    pub fn forget_abandoned(&self) -> bool {
        if let Some(delivery) = &self.delivery {
            for receipt in delivery.abandoned() {
                self.memory.undelivered(&receipt);
            }
        }
        self.memory.forgot.swap(false, Ordering::SeqCst)
    }
}

/// The link to `/report` of `watch --listen ADDR`: the address itself,
/// or this machine's host name where it listens on every address.
pub fn report_url(listen: std::net::SocketAddr) -> String {
    let host = if listen.ip().is_unspecified() {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| {
                !h.is_empty()
                    && h.len() <= 253
                    && h.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
            })
            .unwrap_or_else(|| listen.ip().to_string())
    } else if listen.is_ipv6() {
        format!("[{}]", listen.ip())
    } else {
        listen.ip().to_string()
    };
    format!("http://{host}:{}/report", listen.port())
}

#[cfg(test)]
pub(crate) mod tests;
