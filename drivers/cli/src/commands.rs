//! The subcommands. Each ends with a verdict the core decides
//! (`sweep_core::verdict`), turned into the process's exit status in one
//! place (`crate::exit`). `apply` and `watch` run the same sweep cycle
//! (`sweep_runner::Cycle`): see `crate::apply` and `crate::watch`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sweep_core::sweep::Settings;
use sweep_core::verdict::{
    diff_detailed_status, plan_detailed_status, plan_status, snapshot_status, Status,
};
use sweep_core::{
    markdown, plan, plan_diff, render, AppSet, PlanDiff, Policy, Snapshot, SweepPlan, UnixTime,
};
use sweep_docker::files::Accept;
use sweep_runner::{gather, ExecuteSettings, GatherSettings, Grace};

use crate::cli::{Cli, Command, Format, PlanFormat, PlanInput, PolicyArgs, RunArgs, Source};
use crate::exit::process_status;
use crate::input::{self, InputError};
use crate::output::{self, emit, OutputError};
use crate::review;

pub fn run(cli: Cli) -> ExitCode {
    if let Err(e) = crate::terminal::init_logging() {
        return process_status(Err(InputError::Runtime(e)));
    }
    // Every daemon connection is a file descriptor: under the common soft
    // limit of 1024, a registry of a few hundred swarms would lose nodes to
    // "Too many open files". Gathering sizes itself from what is in force.
    if let Err(e) = sweep_runner::raise_open_file_limit() {
        tracing::warn!(error = %e, "cannot raise the open-file limit; gathering stays within the current one");
    }
    process_status(dispatch(cli))
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, InputError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| InputError::Runtime(format!("cannot start the async runtime: {e}")))
}

pub(crate) fn policy(args: &PolicyArgs) -> Result<Policy, InputError> {
    policy_over(args, &Policy::default())
}

/// The policy the flags ask for, `base` where they say nothing: for
/// `apply --plan`, the saved plan's policy with what the operator typed
/// again. A flag that disagrees with the saved plan then makes the core's
/// check find the policy changed (exit 3), rather than being ignored.
pub(crate) fn policy_over(args: &PolicyArgs, base: &Policy) -> Result<Policy, InputError> {
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
    })
    .with_prune_resources(args.prune_resources || base.prune_resources)
    .with_windows(if args.window.is_empty() {
        base.windows.clone()
    } else {
        args.window.clone()
    }))
}

fn planned(snapshot: &Snapshot, origin: &Path) -> Result<SweepPlan, InputError> {
    plan(snapshot).map_err(|source| InputError::Snapshot {
        file: origin.to_owned(),
        source,
    })
}

/// Reads a snapshot file whole and, when `app_set` is given, puts that
/// app set in place of the one it was gathered with: a pull request's
/// app set planned on swarms read elsewhere. The snapshot's policy stays.
/// Either file that does not read is bad input, named.
fn snapshot_with(
    file: &Path,
    app_set: Option<&Path>,
    accept: Accept,
) -> Result<Snapshot, InputError> {
    // The app set first: it is the smaller file and the likelier mistake.
    let app_set = app_set.map(input::read_app_set).transpose()?;
    let mut snapshot = review::read_snapshot(file, accept)?;
    if let Some(app_set) = app_set {
        snapshot.app_set = app_set;
    }
    Ok(snapshot)
}

/// Reads the app set, opens the registry and gathers the snapshot. Every
/// input is checked before any swarm is read.
fn gather_snapshot(
    rt: &tokio::runtime::Runtime,
    source: &Source,
    policy: Policy,
) -> Result<Snapshot, InputError> {
    let app_set: AppSet = input::read_app_set(&source.app_set)?;
    let limit = source.timeout_or_default();
    let registry = input::registry(source, limit)?;
    let mut snapshot = rt.block_on(gather(
        registry.as_ref(),
        policy,
        app_set,
        GatherSettings::new(limit),
    ));
    // A grace period without a state file still needs the time (every
    // departed release then starts its window now, and nothing is
    // deleted), and so do deletion windows.
    if snapshot.needs_time() {
        sweep_runner::clock(&mut snapshot, None, crate::state::now()?);
    }
    Ok(snapshot)
}

/// The verdict a command ends with once its document was written (or
/// not): output that could not be written needs a person, like anything
/// else left undone.
fn written(status: Status, result: Result<(), OutputError>) -> Status {
    match result {
        // The reader stopped early (`| head`): what it read was its choice.
        Ok(()) | Err(OutputError::Closed) => status,
        Err(e) => {
            output::warn_line(&e.to_string());
            status.max(Status::NeedsAttention)
        }
    }
}

fn dispatch(cli: Cli) -> Result<Status, InputError> {
    match cli.command {
        Command::Snapshot { source, policy: p } => {
            let policy = policy(&p)?;
            let rt = runtime()?;
            let snapshot = gather_snapshot(&rt, &source, policy)?;
            let status = snapshot_status(&snapshot);
            Ok(written(
                status,
                emit(&format!("{}\n", snapshot.to_json_pretty())),
            ))
        }
        Command::Plan {
            input: PlanInput { snapshot, source },
            policy: p,
            format,
            out,
            detailed_exitcode,
            diff_against,
            state: state_file,
            state_max_age,
        } => {
            let format = PlanFormat::resolve(format);
            // Checked before anything is read: a place the plan could never
            // be saved to (a device, a directory, a link) is bad input.
            if let Some(file) = &out {
                crate::safe_write::check_target(file)?;
            }
            // Read before any swarm is: an app set or a state file that
            // does not read is bad input, and nothing was gathered for it.
            let base = diff_against
                .as_deref()
                .map(input::read_app_set)
                .transpose()?;
            // Held until the state is written back: see `StateLock`.
            let _state_lock = crate::state::lock_given(state_file.as_deref())?;
            let grace = crate::state::load_given(state_file.as_deref(), state_max_age)?;
            // A saved plan records the snapshot it was made from, and a diff
            // plans it twice, so both keep the whole snapshot; otherwise a
            // snapshot file is planned in place, never held twice.
            // `written_at`: the time the state written after is dated by,
            // there when a state was read (never with --snapshot).
            let app_set = source.app_set.clone();
            // `origin`: how errors of planning the snapshot name it.
            let (mut plan, snapshot, written_at, origin) = match (snapshot, source.into_source()) {
                (Some(file), _) if app_set.is_none() && out.is_none() && base.is_none() => {
                    (input::plan_snapshot(&file)?, None, None, file)
                }
                (Some(file), _) => {
                    let snapshot = snapshot_with(&file, app_set.as_deref(), Accept::FileOrPipe)?;
                    (planned(&snapshot, &file)?, Some(snapshot), None, file)
                }
                (None, Some(source)) => {
                    let policy = policy(&p)?;
                    let rt = runtime()?;
                    let mut gathered = gather_snapshot(&rt, &source, policy)?;
                    let written_at = match grace {
                        Some(state) => {
                            let now = crate::state::now()?;
                            // Read current a moment ago: no age limit again.
                            let mut grace = Grace {
                                state,
                                max_age: None,
                            };
                            sweep_runner::clock(&mut gathered, Some(&mut grace), now);
                            Some(now)
                        }
                        None => None,
                    };
                    let origin = PathBuf::from("gathered snapshot");
                    (planned(&gathered, &origin)?, Some(gathered), written_at, origin)
                }
                // clap requires an input; said again in case it did not.
                (None, None) => {
                    return Err(InputError::Flag(
                        "plan needs an input: give --snapshot FILE, or --app-set FILE (and --config FILE)".into(),
                    ))
                }
            };
            // The base's plan, on the very snapshot the change's was made
            // from: only the app set differs. Each side's settled plan
            // beside it shows what a window, a grace period or an
            // application still reconciling only delays.
            let diff = match (base, &snapshot, &diff_against) {
                (Some(base), Some(snapshot), Some(file)) => {
                    let mut based = snapshot.clone();
                    based.app_set = base;
                    let base_plan = planned(&based, file)?;
                    let base_settled = planned(&plan_diff::settled(&based), file)?;
                    drop(based);
                    let change_settled = planned(&plan_diff::settled(snapshot), &origin)?;
                    Some(PlanDiff::between_settled(
                        &base_plan,
                        &plan,
                        &base_settled,
                        &change_settled,
                    ))
                }
                _ => None,
            };
            let verdict = match (&diff, detailed_exitcode) {
                (Some(diff), true) => diff_detailed_status(&plan, diff),
                (None, true) => plan_detailed_status(&plan),
                (_, false) => plan_status(&plan),
            };
            let mut status = verdict;
            if let (Some(file), Some(snapshot)) = (&out, &snapshot) {
                // A plan that was not saved must not look saved: the
                // operator would review one file and apply another.
                if let Err(e) = review::write_saved(file, snapshot, &plan) {
                    output::warn_line(&e.to_string());
                    status = status.max(Status::NeedsAttention);
                }
            }
            if let Some(now) = written_at {
                let next = sweep_core::GraceState::after_plan(&plan, now);
                if !crate::state::save(state_file.as_deref(), &next) {
                    status = status.max(Status::NeedsAttention);
                }
            }
            drop(snapshot);
            let colour = || {
                render::Style::coloured(crate::terminal::colour(crate::terminal::Stream::Stdout))
            };
            let shown = match (format, &diff) {
                (PlanFormat::Json, None) => crate::plan_out::emit_json(&mut plan),
                (PlanFormat::Text, None) => emit(&render::plan_text_styled(&plan, colour())),
                (PlanFormat::Markdown, None) => emit(&markdown::plan_markdown(&plan)),
                (PlanFormat::Json, Some(diff)) => emit(&format!("{}\n", diff.to_json_pretty())),
                (PlanFormat::Text, Some(diff)) => emit(&render::diff_text(diff)),
                (PlanFormat::Markdown, Some(diff)) => emit(&markdown::diff_markdown(diff)),
            };
            let status = written(status, shown);
            // The process ends here: freeing a large plan string by string
            // would only delay the exit.
            std::mem::forget(plan);
            Ok(status)
        }
        Command::Apply {
            source,
            policy,
            run,
            format,
            plan: saved,
            yes,
            state,
            state_max_age,
            trace,
            audit_log,
            notify,
        } => {
            // Checked before anything is read or deleted: a place the
            // trace could never be written to is bad input.
            if let Some(file) = &trace {
                crate::safe_write::check_target(file)?;
            }
            // So is an audit log that could not record a deletion.
            if let Some(file) = &audit_log {
                crate::audit_log::check(file)?;
            }
            crate::apply::run(crate::apply::Options {
                source,
                policy,
                settings: execute_settings(&run)?,
                format: Format::resolve(format),
                saved,
                yes,
                state,
                state_max_age,
                trace,
                audit_log,
                notify: notify_settings(&notify)?,
            })
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
            audit_log,
            notify,
        } => crate::watch::run(crate::watch::Options {
            audit_log,
            notify: notify_settings(&notify)?,
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
        Command::Audit {
            file,
            since,
            release,
            format,
        } => {
            let filter = sweep_core::audit::Filter {
                since: since
                    .map(|s| s.start(crate::state::now().unwrap_or(UnixTime::from_secs(0)))),
                release,
            };
            crate::audit_command::run(&file, &filter, Format::resolve(format))
        }
        Command::Completions { shell } => Ok(written(
            Status::Success,
            crate::generated::completions(shell),
        )),
        Command::Man => Ok(written(Status::Success, crate::generated::man())),
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
) -> Result<Status, InputError> {
    let PlanInput { snapshot, source } = input;
    let app_set = source.app_set.clone();
    let snapshot = match (snapshot, source.into_source()) {
        // A regular file only: pipes are for `plan --snapshot` and
        // `--app-set`, where they are documented. With `--app-set`, the
        // release is explained as `plan` with the same pair plans it.
        (Some(file), _) => snapshot_with(&file, app_set.as_deref(), Accept::RegularFile)?,
        (None, Some(source)) => {
            let policy = policy(&policy_args)?;
            let rt = runtime()?;
            gather_snapshot(&rt, &source, policy)?
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
    Ok(written(Status::Success, emit(&text)))
}

/// The webhooks and how to notify them, read before anything else is:
/// one that cannot be used is bad input.
fn notify_settings(args: &crate::cli::NotifyArgs) -> Result<crate::notify::Settings, InputError> {
    Ok(crate::notify::Settings::read(
        args,
        std::env::var_os(crate::cli::NOTIFY_ENV),
    )?)
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
