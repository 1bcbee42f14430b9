//! The subcommands, and the exit status each ends with.
//!
//! Exit 0: everything planned went, or nothing was to go. Exit 1: something
//! failed, is pending, was left on nodes no one reached, or a swarm could
//! not be read. Exit 2: bad input (flags, files); nothing was deleted.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use sweep_core::sweep::{report_text, ReleaseOutcome, Settings, SweepReport};
use sweep_core::{plan, render, AppSet, HoldReason, Policy, Snapshot, SweepPlan};
use sweep_runner::{execute_until, gather, ExecuteSettings, GatherSettings};

use crate::cli::{Cli, Command, Format, PolicyArgs, RunArgs, Source};
use crate::input::{self, InputError};

const EXIT_INCOMPLETE: u8 = 1;
const EXIT_BAD_INPUT: u8 = 2;

pub fn run(cli: Cli) -> ExitCode {
    init_logging();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("swarm-sweep: {e}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

fn init_logging() {
    // warn by default: one line per deletion, and every failure.
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWARM_SWEEP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

fn runtime() -> Result<tokio::runtime::Runtime, InputError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| InputError::Runtime(format!("cannot start the async runtime: {e}")))
}

fn policy(args: &PolicyArgs) -> Result<Policy, InputError> {
    sweep_core::ControllerId::new(args.controller.clone())
        .map_err(|e| InputError::Controller(e.to_string()))?;
    Ok(Policy::new(
        args.controller.clone(),
        args.prune_volumes,
        args.max_deletions,
    ))
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

/// Reads the app set, opens the registry and gathers the snapshot.
fn gather_snapshot(
    rt: &tokio::runtime::Runtime,
    source: &Source,
    policy: Policy,
) -> Result<Gathered, InputError> {
    let app_set: AppSet = input::read_app_set(&source.app_set)?;
    let limit = Duration::from_secs(source.timeout.max(1));
    let registry = input::registry(
        source.config.as_deref(),
        source.self_stack.as_deref(),
        limit,
    )?;
    let snapshot = rt.block_on(gather(
        registry.as_ref(),
        policy,
        app_set,
        GatherSettings::new(limit),
    ));
    Ok(Gathered { snapshot, registry })
}

fn dispatch(cli: Cli) -> Result<ExitCode, InputError> {
    match cli.command {
        Command::Snapshot { source, policy: p } => {
            let policy = policy(&p)?;
            let rt = runtime()?;
            let g = gather_snapshot(&rt, &source, policy)?;
            println!("{}", g.snapshot.to_json_pretty());
            Ok(ExitCode::SUCCESS)
        }
        Command::Plan {
            snapshot,
            source,
            policy: p,
            format,
        } => {
            let plan = match (snapshot, source.into_source()) {
                (Some(file), _) => planned(&input::read_snapshot(&file)?, &file.to_string_lossy())?,
                (None, Some(source)) => {
                    let policy = policy(&p)?;
                    let rt = runtime()?;
                    let g = gather_snapshot(&rt, &source, policy)?;
                    planned(&g.snapshot, "gathered snapshot")?
                }
                // clap requires --app-set without --snapshot.
                (None, None) => return Err(InputError::Flag("--app-set is required".into())),
            };
            match format {
                Format::Json => println!("{}", plan.to_json_pretty()),
                Format::Text => print!("{}", render::plan_text(&plan)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Apply {
            source,
            policy: p,
            run,
            format,
        } => {
            let policy = policy(&p)?;
            let settings = execute_settings(&run)?;
            let rt = runtime()?;
            let g = gather_snapshot(&rt, &source, policy)?;
            let plan = planned(&g.snapshot, "gathered snapshot")?;
            if format == Format::Text {
                print!("{}", render::plan_text(&plan));
            }
            let report = rt.block_on(execute_until(
                g.registry.as_ref(),
                &plan,
                settings,
                interrupted(),
            ));
            match format {
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &serde_json::json!({"plan": plan, "report": report})
                    )
                    .unwrap_or_default()
                ),
                Format::Text => {
                    print!("\n{}", report_text(&report));
                    for hold in plan.holds.iter().filter(|h| needs_attention(h.reason)) {
                        let scope = hold
                            .swarm
                            .as_ref()
                            .map_or("the whole sweep".to_owned(), |s| format!("swarm {s}"));
                        println!(
                            "not swept: {scope} is held ({})",
                            serde_json::to_value(hold.reason)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default()
                        );
                    }
                }
            }
            Ok(ExitCode::from(exit_status(&plan, &report)))
        }
    }
}

fn execute_settings(run: &RunArgs) -> Result<ExecuteSettings, InputError> {
    let secs = |flag: &str, v: f64| {
        Duration::try_from_secs_f64(v)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                InputError::Flag(format!("{flag}: {v} is not a positive number of seconds"))
            })
    };
    let sweep = Settings::new(
        secs("--retry-interval", run.retry_interval)?,
        secs("--settle-timeout", run.settle_timeout)?,
    );
    Ok(ExecuteSettings::new(
        sweep,
        run.concurrency as usize,
        ExecuteSettings::default().action_timeout,
    ))
}

/// 0 when everything planned went; 1 when something needs a person.
///
/// Holds that wait for an application to finish (unreconciled, draining)
/// are the normal course of a deploy and do not fail the run; a release
/// left as the controller's own stack is reported, not failed.
fn exit_status(plan: &SweepPlan, report: &SweepReport) -> u8 {
    let hold_needs_attention = plan.holds.iter().any(|h| needs_attention(h.reason));
    let release_incomplete = report.releases.iter().any(|r| {
        !matches!(
            r.outcome,
            ReleaseOutcome::Deleted | ReleaseOutcome::LeftOwnStack
        )
    });
    if hold_needs_attention || release_incomplete || !report.uncovered.is_empty() {
        EXIT_INCOMPLETE
    } else {
        0
    }
}

/// Holds that wait for an application are the normal course of a deploy;
/// every other hold means part of the sweep could not be done.
fn needs_attention(reason: HoldReason) -> bool {
    !matches!(reason, HoldReason::Unreconciled | HoldReason::Draining)
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
