//! The subcommands, and the exit status each ends with.
//!
//! Every command follows one table, decided in the core
//! (`sweep_core::verdict`): 0 done and nothing needs a person; 1 done, but
//! something needs a person (a swarm could not be read, a hold other than
//! waiting for an application, a purge that cannot reach every node, a
//! failed or pending deletion, output that could not be written); 2 bad
//! input (flags, files), nothing read from a swarm and nothing deleted.

use std::process::ExitCode;

use sweep_core::escape::Escaped;
use sweep_core::saved::{check, stale_text};
use sweep_core::sweep::{report_text, Settings, SweepReport};
use sweep_core::verdict::{
    apply_status, plan_detailed_status, plan_status, snapshot_status, Status, BAD_INPUT,
};
use sweep_core::{plan, render, AppSet, Policy, Snapshot, SweepPlan};
use sweep_docker::files::Accept;
use sweep_runner::{execute_until_with, gather, ExecuteSettings, GatherSettings};

use crate::cli::{Cli, Command, Format, PlanInput, PolicyArgs, RunArgs, Source};
use crate::input::{self, InputError};
use crate::output::{self, emit, OutputError};
use crate::review;

/// Output that could not be written needs a person, like anything else
/// left undone.
const EXIT_INCOMPLETE: u8 = Status::NeedsAttention.code();

pub fn run(cli: Cli) -> ExitCode {
    if let Err(e) = crate::terminal::init_logging() {
        output::warn_line(&e);
        return ExitCode::from(BAD_INPUT);
    }
    // Every daemon connection is a file descriptor: under the common soft
    // limit of 1024, a registry of a few hundred swarms would lose nodes to
    // "Too many open files". Gathering sizes itself from what is in force.
    if let Err(e) = sweep_runner::raise_open_file_limit() {
        tracing::warn!(error = %e, "cannot raise the open-file limit; gathering stays within the current one");
    }
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            output::warn_line(&e.to_string());
            ExitCode::from(BAD_INPUT)
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, InputError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| InputError::Runtime(format!("cannot start the async runtime: {e}")))
}

fn policy(args: &PolicyArgs) -> Result<Policy, InputError> {
    policy_over(args, &Policy::default())
}

/// The policy the flags ask for, `base` where they say nothing: for
/// `apply --plan`, the saved plan's policy with what the operator typed
/// again. A flag that disagrees with the saved plan then makes the core's
/// check find the policy changed (exit 3), rather than being ignored.
fn policy_over(args: &PolicyArgs, base: &Policy) -> Result<Policy, InputError> {
    let controller = args
        .controller
        .clone()
        .unwrap_or_else(|| base.controller.clone());
    sweep_core::ControllerId::new(controller.clone())
        .map_err(|e| InputError::Controller(e.to_string()))?;
    Ok(Policy::new(
        controller,
        args.prune_volumes || base.purge_volumes,
        args.max_deletions.or(base.max_deletions),
    )
    .with_min_departed_for(match args.min_departed_for {
        Some(crate::cli::GRACE_OFF) => None,
        Some(window) => Some(window),
        None => base.min_departed_for,
    }))
}

fn planned(snapshot: &Snapshot, origin: &str) -> Result<SweepPlan, InputError> {
    plan(snapshot).map_err(|source| InputError::Snapshot {
        file: origin.into(),
        source,
    })
}

struct Gathered {
    snapshot: Snapshot,
    registry: Box<dyn sweep_swarms::Registry>,
}

/// Reads the app set, opens the registry and gathers the snapshot. Every
/// input is checked before any swarm is read.
fn gather_snapshot(
    rt: &tokio::runtime::Runtime,
    source: &Source,
    policy: Policy,
) -> Result<Gathered, InputError> {
    let app_set: AppSet = input::read_app_set(&source.app_set)?;
    let limit = source.timeout_or_default();
    let registry = input::registry(source, limit)?;
    let mut snapshot = rt.block_on(gather(
        registry.as_ref(),
        policy,
        app_set,
        GatherSettings::new(limit),
    ));
    // A grace period without a state file still needs the time: every
    // departed release then starts its window now, and nothing is deleted.
    crate::state::clock(&mut snapshot)?;
    Ok(Gathered { snapshot, registry })
}

/// The status a command ends with once its document was written (or not).
fn written(status: u8, result: Result<(), OutputError>) -> u8 {
    match result {
        // The reader stopped early (`| head`): what it read was its choice.
        Ok(()) | Err(OutputError::Closed) => status,
        Err(e) => {
            output::warn_line(&e.to_string());
            status.max(EXIT_INCOMPLETE)
        }
    }
}

fn dispatch(cli: Cli) -> Result<u8, InputError> {
    match cli.command {
        Command::Snapshot { source, policy: p } => {
            let policy = policy(&p)?;
            let rt = runtime()?;
            let g = gather_snapshot(&rt, &source, policy)?;
            let status = snapshot_status(&g.snapshot).code();
            Ok(written(
                status,
                emit(&format!("{}\n", g.snapshot.to_json_pretty())),
            ))
        }
        Command::Plan {
            input: PlanInput { snapshot, source },
            policy: p,
            format,
            out,
            detailed_exitcode,
            state: state_file,
            state_max_age,
        } => {
            let format = Format::resolve(format);
            // Checked before anything is read: a place the plan could never
            // be saved to (a device, a directory, a link) is bad input.
            if let Some(file) = &out {
                crate::safe_write::check_target(file)?;
            }
            // Read before any swarm is: a state file that does not read is
            // bad input, and nothing was gathered for it.
            let grace = crate::state::load_given(state_file.as_deref(), state_max_age)?;
            // A saved plan records the snapshot it was made from, so it is
            // planned from the whole snapshot; without --out a snapshot
            // file is planned in place, never held twice.
            // `written_at`: the time the state written after is dated by,
            // there when a state was read (never with --snapshot).
            let (plan, snapshot, written_at) = match (snapshot, source.into_source()) {
                (Some(file), _) if out.is_some() => {
                    let snapshot = review::read_snapshot(&file, Accept::FileOrPipe)?;
                    (
                        planned(&snapshot, &file.display().to_string())?,
                        Some(snapshot),
                        None,
                    )
                }
                (Some(file), _) => (input::plan_snapshot(&file)?, None, None),
                (None, Some(source)) => {
                    let policy = policy(&p)?;
                    let rt = runtime()?;
                    let mut g = gather_snapshot(&rt, &source, policy)?;
                    let written_at = grace
                        .as_ref()
                        .map(|state| crate::state::clock_with(&mut g.snapshot, state))
                        .transpose()?;
                    (
                        planned(&g.snapshot, "gathered snapshot")?,
                        Some(g.snapshot),
                        written_at,
                    )
                }
                // clap requires an input; said again in case it did not.
                (None, None) => {
                    return Err(InputError::Flag(
                        "plan needs an input: give --snapshot FILE, or --app-set FILE (and --config FILE)".into(),
                    ))
                }
            };
            let verdict = if detailed_exitcode {
                plan_detailed_status(&plan)
            } else {
                plan_status(&plan)
            };
            let mut status = verdict.code();
            if let (Some(file), Some(snapshot)) = (&out, &snapshot) {
                // A plan that was not saved must not look saved: the
                // operator would review one file and apply another.
                if let Err(e) = review::write_saved(file, snapshot, &plan) {
                    output::warn_line(&e.to_string());
                    status = status.max(EXIT_INCOMPLETE);
                }
            }
            if let Some(now) = written_at {
                let next = sweep_core::GraceState::after_plan(&plan, now);
                if !crate::state::save(state_file.as_deref(), &next) {
                    status = status.max(EXIT_INCOMPLETE);
                }
            }
            drop(snapshot);
            let shown = match format {
                Format::Json => emit_json(&plan),
                Format::Text => emit(&render::plan_text_styled(
                    &plan,
                    render::Style::coloured(crate::terminal::colour(
                        crate::terminal::Stream::Stdout,
                    )),
                )),
            };
            let status = written(status, shown);
            // The process ends here: freeing a large plan string by string
            // would only delay the exit.
            std::mem::forget(plan);
            Ok(status)
        }
        Command::Apply {
            source,
            policy: p,
            run,
            format,
            plan: saved,
            yes,
            state: state_file,
            state_max_age,
        } => {
            let format = Format::resolve(format);
            let settings = execute_settings(&run)?;
            let grace = crate::state::load_given(state_file.as_deref(), state_max_age)?;
            let rt = runtime()?;
            // The time the states written after are dated by, there when a
            // state was read.
            let clock = |g: &mut Gathered| {
                grace
                    .as_ref()
                    .map(|state| crate::state::clock_with(&mut g.snapshot, state))
                    .transpose()
            };
            let (plan, g, written_at) = match saved {
                None => {
                    let policy = policy(&p)?;
                    let mut g = gather_snapshot(&rt, &source, policy)?;
                    let written_at = clock(&mut g)?;
                    (planned(&g.snapshot, "gathered snapshot")?, g, written_at)
                }
                Some(file) => {
                    // Read before any swarm is: a file that does not read
                    // is bad input, and nothing was gathered for it.
                    let saved = review::read_saved(&file)?;
                    let asked = policy_over(&p, &saved.policy)?;
                    let mut g = gather_snapshot(&rt, &source, asked)?;
                    let written_at = clock(&mut g)?;
                    let checked =
                        check(&saved, &g.snapshot, review::TOOL_VERSION).map_err(|source| {
                            InputError::Snapshot {
                                file: "gathered snapshot".into(),
                                source,
                            }
                        })?;
                    match checked {
                        Err(stale) => {
                            // Each change's text escapes its names already.
                            eprint!("swarm-sweep: {}", stale_text(&stale));
                            // Nothing is deleted, but what is departed now
                            // is still the next run's state.
                            if let (Some(now), Ok(fresh)) = (written_at, plan(&g.snapshot)) {
                                let next = sweep_core::GraceState::after_plan(&fresh, now);
                                crate::state::save(state_file.as_deref(), &next);
                            }
                            return Ok(Status::Stale.code());
                        }
                        Ok(approved) => {
                            for r in &approved.unreviewed {
                                output::warn_line(&format!(
                                    "{r}: would be deleted now, but is not in the saved plan {}; plan again to review it",
                                    file.display()
                                ));
                            }
                            (approved.plan, g, written_at)
                        }
                    }
                }
            };
            // Written before anything is deleted too: a run that stops at
            // the prompt or is cut short would otherwise leave the entries
            // of releases declared again since, and such an entry would
            // date a later departure back to the first.
            let mut state_saved = written_at.is_none_or(|now| {
                crate::state::save(
                    state_file.as_deref(),
                    &sweep_core::GraceState::after_plan(&plan, now),
                )
            });
            if format == Format::Text {
                // An operator who cannot be shown the plan is not shown a
                // sweep either: nothing has been deleted yet, so stop here.
                let style = render::Style::coloured(crate::terminal::colour(
                    crate::terminal::Stream::Stdout,
                ));
                if let Err(e) = emit(&render::plan_text_styled(&plan, style)) {
                    output::warn_line(&format!(
                        "{e}; the plan was not shown, so nothing was deleted"
                    ));
                    return Ok(EXIT_INCOMPLETE);
                }
            }
            match crate::terminal::approve_apply(&plan, yes, format == Format::Text) {
                Ok(crate::terminal::Approval::Proceed) => {}
                Ok(crate::terminal::Approval::Declined) => {
                    output::warn_line("declined: nothing was deleted");
                    return Ok(EXIT_INCOMPLETE);
                }
                Err(e) => {
                    output::warn_line(&format!(
                        "cannot ask before deleting ({e}): nothing was deleted"
                    ));
                    return Ok(EXIT_INCOMPLETE);
                }
            }
            let report = rt.block_on(execute_until_with(
                g.registry.as_ref(),
                &plan,
                settings,
                interrupted(),
                crate::terminal::progress_hook(),
            ));
            let mut status = apply_status(&plan, &report).code();
            if let Some(now) = written_at {
                let next = sweep_core::GraceState::after_sweep(&plan, &report, now);
                state_saved &= crate::state::save(state_file.as_deref(), &next);
            }
            if !state_saved {
                status = status.max(EXIT_INCOMPLETE);
            }
            let text = match format {
                Format::Json => format!(
                    "{}\n",
                    serde_json::to_string_pretty(
                        &serde_json::json!({"plan": plan, "report": report})
                    )
                    .unwrap_or_default()
                ),
                Format::Text => format!("\n{}{}", report_text(&report), not_swept(&plan)),
            };
            match emit(&text) {
                Ok(()) => Ok(status),
                Err(e) => {
                    // Deletions happened: what went must not be lost with
                    // stdout, so a short report goes to stderr.
                    if !matches!(e, OutputError::Closed) {
                        output::warn_line(&e.to_string());
                    }
                    eprint!("{}", short_report(&report));
                    Ok(match e {
                        OutputError::Closed => status,
                        OutputError::Write(_) => status.max(EXIT_INCOMPLETE),
                    })
                }
            }
        }
        Command::Watch {
            source,
            policy: p,
            run,
            interval,
            listen,
            once,
            state,
            state_max_age,
        } => crate::watch::run(crate::watch::Options {
            policy: policy(&p)?,
            settings: execute_settings(&run)?,
            runtime: runtime()?,
            source,
            interval,
            listen,
            once,
            state,
            state_max_age,
        }),
        Command::Explain {
            release,
            input,
            policy: p,
            format,
        } => explain(release, input, p, Format::resolve(format)),
        Command::Completions { shell } => Ok(written(0, crate::generated::completions(shell))),
        Command::Man => Ok(written(0, crate::generated::man())),
        Command::Healthcheck {
            url,
            timeout,
            print,
        } => Ok(crate::healthcheck::run(&url, timeout, print)),
        Command::Agent {
            request,
            socket,
            timeout,
        } => crate::agent::run(&request, &socket, timeout),
    }
}

/// `explain SWARM/RELEASE`: what the plan decides for one release.
fn explain(
    release: sweep_core::ReleaseRef,
    input: PlanInput,
    policy_args: PolicyArgs,
    format: Format,
) -> Result<u8, InputError> {
    let PlanInput { snapshot, source } = input;
    let snapshot = match (snapshot, source.into_source()) {
        // A regular file only: pipes are for `plan --snapshot` and
        // `--app-set`, where they are documented.
        (Some(file), _) => review::read_snapshot(&file, Accept::RegularFile)?,
        (None, Some(source)) => {
            let policy = policy(&policy_args)?;
            let rt = runtime()?;
            gather_snapshot(&rt, &source, policy)?.snapshot
        }
        (None, None) => return Err(InputError::Flag(
            "explain needs an input: give --snapshot FILE, or --app-set FILE (and --config FILE)"
                .into(),
        )),
    };
    let explained = sweep_core::explain::explain(&snapshot, &release)?;
    let text = match format {
        Format::Text => explained.text(),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&explained).unwrap_or_default()
        ),
    };
    Ok(written(Status::Success.code(), emit(&text)))
}

/// Writes the plan as pretty JSON and a line break, the bytes
/// `to_json_pretty` gives, through [`emit`] in pieces: the plan of a
/// million releases is not also held as one string of its text.
fn emit_json(plan: &SweepPlan) -> Result<(), OutputError> {
    let mut out = Pieces {
        pending: Vec::with_capacity(Pieces::SIZE),
        failed: None,
    };
    let serialized = serde_json::to_writer_pretty(&mut out, plan)
        .map_err(std::io::Error::from)
        .and_then(|()| std::io::Write::write_all(&mut out, b"\n"));
    match serialized {
        Ok(()) => out.emit_whole(true),
        // Serializing plain data cannot fail by itself: only the writer does.
        Err(e) => Err(out.failed.unwrap_or(OutputError::Write(e))),
    }
}

/// Gathers what is written and hands it to [`emit`] in pieces of whole
/// characters.
struct Pieces {
    pending: Vec<u8>,
    /// How the last emit went wrong; writing stops there.
    failed: Option<OutputError>,
}

impl Pieces {
    const SIZE: usize = 1 << 16;

    /// Emits the full piece, then takes `buf`.
    #[cold]
    #[inline(never)]
    fn spill(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if let Err(e) = self.emit_whole(false) {
            self.failed = Some(e);
            return Err(std::io::Error::other("stdout failed"));
        }
        self.pending.extend_from_slice(buf);
        Ok(())
    }

    /// Emits what is pending up to its last whole character, or all of
    /// it at the `end`.
    fn emit_whole(&mut self, end: bool) -> Result<(), OutputError> {
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(text) => text,
            // A character cut by the end of one write waits for the rest.
            Err(e) if e.error_len().is_none() && !end => {
                std::str::from_utf8(&self.pending[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(_) => {
                return Err(OutputError::Write(std::io::Error::other(
                    "the plan's JSON is not UTF-8",
                )))
            }
        };
        let done = whole.len();
        emit(whole)?;
        self.pending.drain(..done);
        Ok(())
    }
}

impl std::io::Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    // The serializer writes every token on its own with `write_all`, tens
    // of millions of them for a large plan: each is one copy into the
    // pending piece, and stdout is written once a piece is full.
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if self.pending.len() + buf.len() > Self::SIZE {
            return self.spill(buf);
        }
        self.pending.extend_from_slice(buf);
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
    let t = &report.totals;
    out.push_str(&format!(
        "  {} planned: {} deleted, {} failed, {} left as own stack, {} pending coverage; {} volumes removed\n",
        t.planned, t.deleted, t.failed, t.left_own_stack, t.pending_coverage, t.volumes_deleted
    ));
    out
}

fn execute_settings(run: &RunArgs) -> Result<ExecuteSettings, InputError> {
    // The flags' parser refused zero, negative and unbounded values.
    let sweep = Settings::new(run.retry_interval, run.settle_timeout);
    Ok(ExecuteSettings::new(
        sweep,
        run.concurrency as usize,
        ExecuteSettings::default().action_timeout,
    ))
}

/// Completes on the first SIGINT or SIGTERM: the sweep then finishes the
/// steps in flight and reports, so an operator's Ctrl-C never leaves a
/// step half-answered. A second signal ends the process at once, which is
/// as safe as a kill: records go last.
async fn interrupted() {
    use tokio::signal::unix::{signal, SignalKind};
    let sigint = async {
        // A handler that cannot be installed must not read as a signal.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let sigterm = async {
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = sigint => {}
        () = sigterm => {}
    }
    eprintln!(
        "swarm-sweep: interrupted; finishing the steps in flight (interrupt again to stop at once)"
    );
    tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("swarm-sweep: interrupted again; stopping now");
            std::process::exit(130);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use std::time::Duration;

    /// The policy `apply --plan` would use with these flags over `base`.
    fn over(flags: &[&str], base: &Policy) -> Policy {
        #[derive(Parser)]
        struct Flags {
            #[command(flatten)]
            policy: PolicyArgs,
        }
        let flags = Flags::try_parse_from(std::iter::once("t").chain(flags.iter().copied()))
            .expect("flags parse");
        policy_over(&flags.policy, base).expect("a policy")
    }

    #[test]
    fn a_grace_period_flag_sets_keeps_or_turns_off_the_base_one() {
        let base = Policy::new("default", false, None)
            .with_min_departed_for(Some(Duration::from_secs(600)));
        let window = |p: Policy| p.min_departed_for;
        assert_eq!(window(over(&[], &base)), Some(Duration::from_secs(600)));
        assert_eq!(
            window(over(&["--min-departed-for", "2m"], &base)),
            Some(Duration::from_secs(120))
        );
        // `off` is explicit, so a stack file can always pass the flag.
        assert_eq!(window(over(&["--min-departed-for", "off"], &base)), None);
        assert_eq!(
            window(over(&["--min-departed-for", "off"], &Policy::default())),
            None
        );
    }
}
