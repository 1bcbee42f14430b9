//! `swarm-sweep apply` (and `apply --plan`): the sweep cycle once, with a
//! person to approve it and a terminal or a pipe to print to. The cycle
//! itself is `sweep_runner::Cycle`, the one `watch` runs; this module is
//! only how `apply` approves and where it prints.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Mutex;

use sweep_core::audit::Origin;
use sweep_core::escape::Escaped;
use sweep_core::saved::stale_text;
use sweep_core::sweep::{report_text, SweepReport, SweepTrace};
use sweep_core::verdict::Status;
use sweep_core::{render, AppSet, GraceState, SweepPlan, UnixTime};
use sweep_runner::{
    AppSetRead, Approval, Cycle, Ended, Event, ExecuteSettings, GatherSettings, Host, Outcome,
    Progress, Runs, Stop,
};

use crate::audit_log::AuditLog;
use crate::cli::{Format, PolicyArgs, Source};
use crate::input::{self, InputError};
use crate::notify::{Limits, Notifier, EXIT_WAIT};
use crate::output::{self, emit, OutputError};
use crate::review;

/// What `apply` was asked to do, its flags parsed.
pub struct Options {
    pub source: Source,
    pub policy: PolicyArgs,
    pub settings: ExecuteSettings,
    pub format: Format,
    /// `--plan FILE`: carry out this saved plan, if it still holds.
    pub saved: Option<PathBuf>,
    pub yes: bool,
    pub state: Option<PathBuf>,
    pub state_max_age: Option<std::time::Duration>,
    /// `--trace FILE`: where the sweep's trace goes.
    pub trace: Option<PathBuf>,
    /// `--audit-log FILE`: where a line per object acted on is appended
    /// (checked already).
    pub audit_log: Option<PathBuf>,
    /// `--notify`: the webhooks, and how to notify them.
    pub notify: crate::notify::Settings,
}

/// Runs `apply`: its verdict, or bad input found before any swarm was read.
pub fn run(options: Options) -> Result<Status, InputError> {
    let Options {
        source,
        policy,
        settings,
        format,
        saved,
        yes,
        state,
        state_max_age,
        trace: trace_file,
        audit_log,
        notify,
    } = options;
    let mut settings = settings;
    if trace_file.is_some() {
        settings.sweep = settings.sweep.traced();
    }
    // Every input is read before any swarm is: a file that does not read
    // is bad input, and nothing was gathered for it.
    // Held until the state is written back: see `StateLock`.
    let _state_lock = crate::state::lock_given(state.as_deref())?;
    let grace = crate::state::load_given(state.as_deref(), state_max_age)?;
    let (saved, origin) = match saved {
        None => (None, Origin::apply()),
        Some(file) => {
            let (plan, digest) = review::read_saved(&file)?;
            (Some((file, plan)), Origin::apply_plan(digest))
        }
    };
    let asked = match &saved {
        None => crate::commands::policy(&policy)?,
        // The saved plan's policy with what the operator typed again: a
        // flag that disagrees makes the core find the policy changed.
        Some((_, plan)) => crate::commands::policy_over(&policy, &plan.policy)?,
    };
    let app_set = input::read_app_set(&source.app_set)?;
    let limit = source.timeout_or_default();
    let registry = input::registry(&source, limit)?;
    let runtime = crate::commands::runtime()?;
    // What notifications remembered is the state file's: holds dated and
    // repeats held back across cron runs.
    let remembered = grace.as_ref().map(|g| g.notify.clone()).unwrap_or_default();
    let notifier = {
        let _in_runtime = runtime.enter();
        Notifier::start(
            notify,
            asked.controller.clone(),
            None,
            remembered,
            Limits::default(),
            Box::new(|| {}),
        )
    };
    let mut cycle = Cycle::new(
        registry.as_ref(),
        asked,
        GatherSettings::new(limit),
        settings,
        Runs::Once,
    );
    let mut saved_file = None;
    if let Some((file, plan)) = saved {
        cycle = cycle.with_saved_plan(plan, review::TOOL_VERSION);
        saved_file = Some(file);
    }
    if let Some(grace) = grace {
        cycle = cycle.with_grace(grace, state_max_age);
    }
    let host = ApplyHost {
        app_set: Mutex::new(Some(app_set)),
        format,
        yes,
        saved_file,
        state_file: state,
        progress: RefCell::new(Box::new(crate::terminal::progress_hook())),
        trace: RefCell::new(None),
        audit: audit_log.map(|file| AuditLog::new(file, origin)),
        notifier,
    };
    let ended = runtime.block_on(async {
        let stop = crate::signals::stop_on_signals()
            .map_err(|e| InputError::Runtime(format!("cannot handle signals: {e}")))?;
        Ok::<_, InputError>(cycle.run(&host, &stop).await)
    })?;
    let status = match ended {
        Err(e) => {
            output::warn_line(&e.to_string());
            Ok(Status::BadInput)
        }
        Ok(ended) => {
            // Decided after the sweep, so the memory changed since the
            // cycle wrote the state: written again, with it.
            let mut kept = true;
            if host
                .notifier
                .swept(ended.plan.as_ref(), ended.report.as_ref())
            {
                if let Some(state) = cycle.grace() {
                    kept = host.save_state(&state);
                }
            }
            let mut status = host.report(ended);
            if !kept {
                status = status.max(Status::NeedsAttention);
            }
            Ok(match (trace_file, host.trace.take()) {
                (Some(file), Some(trace)) => status.max(write_trace(&file, &trace)),
                _ => status,
            })
        }
    };
    // Delivery never changes the verdict; it only may delay the exit, by
    // at most this bound.
    // Stopped at once by a second signal: nothing more is waited for.
    let forgot = if crate::signals::aborted() {
        host.notifier.forget_abandoned()
    } else {
        runtime.block_on(async {
            // A stop may have dropped a volume job: its service holds every
            // node's docker socket, so its removal is waited for.
            sweep_docker::finish_job_removals(EXIT_WAIT).await;
            host.notifier.settle(EXIT_WAIT).await
        })
    };
    // What was not delivered is written as not sent, so the next run
    // sends it.
    if forgot {
        if let Some(state) = cycle.grace() {
            if !host.save_state(&state) {
                return status.map(|s| s.max(Status::NeedsAttention));
            }
        }
    }
    status
}

/// Writes `trace` to `file` whole ([`crate::safe_write::replace`]); a
/// trace asked for and not written needs a person, like an unwritten
/// report.
fn write_trace(file: &std::path::Path, trace: &SweepTrace) -> Status {
    let text = match serde_json::to_string_pretty(trace) {
        Ok(text) => text + "\n",
        Err(e) => {
            output::warn_line(&format!("the trace was not written: {e}"));
            return Status::NeedsAttention;
        }
    };
    match crate::safe_write::replace(file, text.as_bytes()) {
        Ok(()) => Status::Success,
        Err(e) => {
            output::warn_line(&format!("the trace was not written: {e}"));
            Status::NeedsAttention
        }
    }
}

/// Draws the progress line on a terminal.
type ProgressHook = Box<dyn FnMut(&Progress)>;

/// What `apply` does around the cycle.
struct ApplyHost {
    /// Read before the registry was opened, handed to the cycle once.
    app_set: Mutex<Option<AppSet>>,
    format: Format,
    yes: bool,
    saved_file: Option<PathBuf>,
    state_file: Option<PathBuf>,
    progress: RefCell<ProgressHook>,
    /// The sweep's trace, when asked for and the sweep ran.
    trace: RefCell<Option<SweepTrace>>,
    /// `--audit-log`.
    audit: Option<AuditLog>,
    notifier: Notifier,
}

impl Host for ApplyHost {
    async fn read_app_set(&self, _stop: &Stop) -> AppSetRead {
        match self
            .app_set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            Some(app_set) => AppSetRead::Read(app_set),
            // A cycle runs once under `apply`; a second read would be a bug,
            // and it must not read as an empty set.
            None => AppSetRead::Unreadable("the app set was already used by this run".into()),
        }
    }

    fn now(&self) -> Option<UnixTime> {
        crate::state::now().ok()
    }

    fn save_state(&self, state: &GraceState) -> bool {
        let state = state.clone().with_notify(self.notifier.memory());
        crate::state::save(self.state_file.as_deref(), &state)
    }

    fn approve(&self, plan: &SweepPlan) -> Approval {
        if self.format == Format::Text {
            // An operator who cannot be shown the plan is not shown a
            // sweep either: nothing has been deleted yet, so stop here.
            let style =
                render::Style::coloured(crate::terminal::colour(crate::terminal::Stream::Stdout));
            if let Err(e) = emit(&render::plan_text_styled(plan, style)) {
                output::warn_line(&format!(
                    "{e}; the plan was not shown, so nothing was deleted"
                ));
                return Approval::Declined;
            }
        }
        // A signal at the prompt ends the process at once: nothing is in
        // flight, and nothing was deleted.
        let asked = crate::signals::while_asking(|| {
            crate::terminal::approve_apply(plan, self.yes, self.format == Format::Text)
        });
        match asked {
            Ok(crate::terminal::Approval::Proceed) => Approval::Proceed,
            Ok(crate::terminal::Approval::Declined) => {
                output::warn_line("declined: nothing was deleted");
                Approval::Declined
            }
            Err(e) => {
                output::warn_line(&format!(
                    "cannot ask before deleting ({e}): nothing was deleted"
                ));
                Approval::Declined
            }
        }
    }

    fn event(&self, event: Event<'_>) {
        match event {
            // Each change's text escapes its names already.
            Event::Stale(stale) => {
                eprint!("swarm-sweep: {}", stale_text(stale));
                self.notifier.stale(stale);
            }
            Event::Unreviewed(release) => {
                let file = self
                    .saved_file
                    .as_ref()
                    .map(|f| f.display().to_string())
                    .unwrap_or_default();
                output::warn_line(&format!(
                    "{release}: would be deleted now, but is not in the saved plan {file}; plan again to review it"
                ));
            }
            Event::StateNotCurrent(why) => {
                if let Some(file) = &self.state_file {
                    output::warn_line(&crate::state::not_current(file, why));
                }
            }
            Event::Progress(p) => (self.progress.borrow_mut())(p),
            Event::Trace(trace) => *self.trace.borrow_mut() = Some(trace.clone()),
            Event::WindowClosed(holds) => output::window_closed(holds),
            Event::Gathered { snapshot, .. } => {
                if let Some(audit) = &self.audit {
                    audit.gathered(snapshot);
                }
            }
            _ => {}
        }
    }
}

impl ApplyHost {
    /// Prints how the cycle ended, and gives the verdict.
    fn report(&self, ended: Ended) -> Status {
        let Ended {
            outcome,
            status,
            plan,
            report,
        } = ended;
        let (Some(plan), Some(report)) = (plan, report) else {
            // Stale or declined (said as it happened), or stopped before
            // anything was deleted.
            if outcome == Outcome::Interrupted {
                output::warn_line("interrupted before anything was deleted");
            }
            return status;
        };
        // Recorded before the report is printed: a closed stdout must not
        // cost the record of what was deleted.
        let status = status.max(self.record(&plan, &report));
        let text = match self.format {
            Format::Json => format!(
                "{}\n",
                serde_json::to_string_pretty(&serde_json::json!({"plan": plan, "report": report}))
                    .unwrap_or_default()
            ),
            Format::Text => format!("\n{}{}", report_text(&report), not_swept(&plan)),
        };
        match emit(&text) {
            Ok(()) => status,
            Err(e) => {
                // Deletions happened: what went must not be lost with
                // stdout, so a short report goes to stderr.
                if !matches!(e, OutputError::Closed) {
                    output::warn_line(&e.to_string());
                }
                eprint!("{}", short_report(&report));
                match e {
                    OutputError::Closed => status,
                    OutputError::Write(_) => status.max(Status::NeedsAttention),
                }
            }
        }
    }
}

impl ApplyHost {
    /// Appends the sweep's lines to the audit log, when one was given. A
    /// record that could not be written needs a person (status 1): the
    /// deletions happened, and the trace of them is missing.
    fn record(&self, plan: &SweepPlan, report: &SweepReport) -> Status {
        match &self.audit {
            Some(audit) if !audit.record_or_say(plan, report) => Status::NeedsAttention,
            _ => Status::Success,
        }
    }
}

/// One line per swarm (or the whole sweep) that a hold kept from being
/// swept, for holds that need a person.
fn not_swept(plan: &SweepPlan) -> String {
    let mut out = String::new();
    for hold in plan.holds.iter().filter(|h| h.reason.needs_attention()) {
        let scope = hold
            .swarm
            .as_ref()
            .map_or("the whole sweep".to_owned(), |s| {
                format!("swarm {}", Escaped(s))
            });
        out.push_str(&format!(
            "not swept: {scope} is held ({})\n",
            hold.reason.as_str()
        ));
    }
    out
}

/// What became of each planned release, in one line each, for stderr when
/// the full report could not be written to stdout.
fn short_report(report: &SweepReport) -> String {
    let mut out = String::from("swarm-sweep: report:\n");
    for r in &report.releases {
        out.push_str(&format!(
            "  {}/{}: {}\n",
            Escaped(&r.swarm),
            Escaped(&r.release),
            r.outcome.as_str()
        ));
    }
    out.push_str(&format!("  {}\n", report.totals));
    out
}
