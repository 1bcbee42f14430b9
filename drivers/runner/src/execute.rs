//! Carrying a plan out: the core's [`Sweep`] driven by tokio.
//!
//! The state machine decides what runs and in which order; this loop only
//! runs what it hands out, at most `concurrency` at a time, each under a
//! timeout, and sleeps until its retry deadline when nothing is ready.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::join_all;
use futures::stream::{FuturesUnordered, StreamExt};
use sweep_core::sweep::{
    Action, ActionId, ActionKind, Failure, Outcome, Settings, StackPart, StampRead, Step, Sweep,
    SweepReport, SweepTrace, Timestamp, UsageRead, Where, MANAGER,
};
use sweep_core::usage::{NodeContainers, Usage};
use sweep_core::{ReleaseEntry, SwarmName, SweepPlan};
use sweep_swarms::{NodeBackend, Registry, RegistryError, SwarmBackend, Target};
use tokio::time::{sleep_until, timeout, Instant};

use crate::classify::{classify_backend, classify_registry};

/// How the plan is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecuteSettings {
    /// Retry and settle times for volumes still in use.
    pub sweep: Settings,
    /// How many actions run at once (at least 1; default 8).
    pub concurrency: usize,
    /// The limit for each action (default 120 s). An action never waits
    /// for anything to be released: the sweep retries what is in use.
    pub action_timeout: Duration,
}

impl ExecuteSettings {
    /// Retries and settle times `sweep`, at most `concurrency` actions at
    /// once (at least 1), each limited to `action_timeout`.
    pub fn new(sweep: Settings, concurrency: usize, action_timeout: Duration) -> Self {
        ExecuteSettings {
            sweep,
            concurrency: concurrency.max(1),
            action_timeout,
        }
    }
}

impl Default for ExecuteSettings {
    fn default() -> Self {
        ExecuteSettings::new(Settings::default(), 8, Duration::from_secs(120))
    }
}

/// Carries `plan` out through `registry` and reports what became of each
/// planned deletion. Does nothing for a plan that holds the sweep.
///
/// `registry` must resolve the names the plan was made with (the one
/// [`gather`](crate::gather) read is the usual choice). Before each
/// destructive step the release's records are read again, and a release
/// restamped since the plan is left alone. Its records go last, once its
/// stack and (with a purge) its volumes on every node are gone, so a sweep
/// cut short is finished by the next one. Never fails: the report says
/// what went, what stayed and why.
///
/// # Example
///
/// Application `blog` has left the app set; `shop` is still in it. The
/// plan deletes `blog`'s release, and the sweep removes its stack, its
/// volume on the one node and, last, its records:
///
/// ```
/// use sweep_core::sweep::ReleaseOutcome;
/// use sweep_core::{plan, AppSet, Application, Policy};
/// use sweep_runner::{execute, gather, ExecuteSettings, GatherSettings};
/// use sweep_testkit::{MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = MemoryRegistry::new().with_swarm(
///     MemorySwarm::new("alpha", "cluster-a")
///         .node(
///             MemoryNode::new("a1", "alpha-1")
///                 .volume("blog_data", Some("blog"))
///                 .volume("shop_data", Some("shop")),
///         )
///         .record(MemoryRecord::new("blog", 1, Some("cd/default/blog:release/blog")))
///         .stack("blog", MemoryStack::new().service("blog_app").network("blog_net"))
///         .record(MemoryRecord::new("shop", 1, Some("cd/default/shop:release/shop")))
///         .stack("shop", MemoryStack::new().service("shop_app")),
/// );
/// let apps = AppSet::new(true, vec![Application::reconciled("shop", "alpha", &["shop"])]);
/// let policy = Policy::new("default", true, None);
/// let snapshot = gather(&registry, policy, apps, GatherSettings::default()).await;
/// let plan = plan(&snapshot)?;
/// assert_eq!(plan.deletions.len(), 1);
///
/// let report = execute(&registry, &plan, ExecuteSettings::default()).await;
/// assert!(report.all_done());
/// assert_eq!(report.releases[0].release, "blog");
/// assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
///
/// // What the swarm still holds: `shop`, whole.
/// assert_eq!(registry.stacks("alpha"), ["shop"]);
/// assert!(registry.records("alpha").iter().all(|r| r.release == "shop"));
/// let volumes: Vec<_> = registry.volumes("alpha", "a1").into_iter().map(|v| v.name).collect();
/// assert_eq!(volumes, ["shop_data"]);
/// # Ok(())
/// # }
/// ```
pub async fn execute(
    registry: &dyn Registry,
    plan: &SweepPlan,
    settings: ExecuteSettings,
) -> SweepReport {
    execute_until(registry, plan, settings, std::future::pending()).await
}

/// Where a sweep stands, handed to the progress hook of
/// [`execute_until_with`] whenever an action starts or finishes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Releases the sweep carries out (0 for a plan held as a whole).
    pub total: usize,
    /// Releases settled: deleted, failed, left as the controller's own
    /// stack, or pending coverage (the sweep's own count); a failed
    /// release that a re-listing revives counts as not done again.
    pub done: usize,
    /// Releases whose records were deleted, their last step.
    pub deleted: usize,
    /// Actions handed out and not yet answered.
    pub in_flight: usize,
    /// The step started last, if any.
    pub current: Option<CurrentStep>,
    /// The sweep ended (done, stopped or stalled): the last call.
    pub finished: bool,
}

/// One step of the sweep, as a progress display names it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CurrentStep {
    /// The kind of step.
    pub step: Step,
    /// The stack part, for [`Step::RemoveStack`].
    pub part: Option<StackPart>,
    /// The swarm it runs on.
    pub swarm: SwarmName,
    /// The release; `None` for a re-listing of a swarm.
    pub release: Option<String>,
    /// The node's id, for a volume step on a node.
    pub node: Option<String>,
}

impl CurrentStep {
    fn of(kind: &ActionKind) -> Self {
        CurrentStep {
            step: kind.step(),
            part: kind.part(),
            swarm: kind.swarm().clone(),
            release: kind.target().map(|t| t.release.release.clone()),
            node: kind.at().and_then(Where::node_id).map(str::to_owned),
        }
    }
}

/// What [`Progress`] reports beside the sweep's own counts.
struct Tally {
    deleted: usize,
    current: Option<CurrentStep>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            deleted: 0,
            current: None,
        }
    }

    fn progress(&self, sweep: &Sweep, finished: bool) -> Progress {
        Progress {
            total: sweep.planned(),
            done: sweep.settled(),
            deleted: self.deleted,
            in_flight: sweep.outstanding(),
            current: self.current.clone(),
            finished,
        }
    }
}

/// [`execute`], until `stop` completes: then no new action starts, the
/// actions in flight finish, and the report says what is unfinished. An
/// interrupted release keeps its records (they go last), so the next sweep
/// finds it again; stopping between steps, not in the middle of one,
/// leaves nothing half-answered.
pub async fn execute_until(
    registry: &dyn Registry,
    plan: &SweepPlan,
    settings: ExecuteSettings,
    stop: impl std::future::Future<Output = ()>,
) -> SweepReport {
    drive(
        registry,
        plan,
        settings,
        &[],
        stop,
        std::future::pending(),
        None,
        &SystemTime::now,
    )
    .await
    .report
}

/// [`execute_until`], calling `on_progress` whenever an action starts or
/// finishes, and once more at the end with [`Progress::finished`] set.
/// The hook runs on the sweep's own loop: it must return quickly (draw,
/// do not wait), since no outcome is taken while it runs.
pub async fn execute_until_with(
    registry: &dyn Registry,
    plan: &SweepPlan,
    settings: ExecuteSettings,
    stop: impl std::future::Future<Output = ()>,
    mut on_progress: impl FnMut(&Progress),
) -> SweepReport {
    drive(
        registry,
        plan,
        settings,
        &[],
        stop,
        std::future::pending(),
        Some(&mut on_progress),
        &SystemTime::now,
    )
    .await
    .report
}

/// What a sweep ended with: its report, and its trace when the settings
/// asked for one ([`Settings::traced`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Swept {
    /// What became of each planned deletion.
    pub report: SweepReport,
    /// Each action's start and end, and each engine event, on the sweep's
    /// clock: time since the sweep started.
    pub trace: Option<SweepTrace>,
}

/// [`execute_until_with`], handing back the trace as well as the report,
/// and ending at once when `abort` completes: the actions in flight are
/// dropped unanswered (they may or may not have taken effect; the report
/// marks their releases unfinished, and their records stay), so that what
/// is known to be done can still be reported and recorded. `closes` says
/// when each swarm's deletion window closes, as time from the call (see
/// [`PlanWindows::closing`](sweep_core::PlanWindows::closing)): no removal
/// starts there after it ([`Sweep::handle_window_closes`]). The time is
/// counted on the process's monotonic clock and on the system clock, and
/// the first to reach it closes the window.
pub async fn execute_traced(
    registry: &dyn Registry,
    plan: &SweepPlan,
    settings: ExecuteSettings,
    closes: &[(SwarmName, Duration)],
    stop: impl std::future::Future<Output = ()>,
    abort: impl std::future::Future<Output = ()>,
    mut on_progress: impl FnMut(&Progress),
) -> Swept {
    drive(
        registry,
        plan,
        settings,
        closes,
        stop,
        abort,
        Some(&mut on_progress),
        &SystemTime::now,
    )
    .await
}

/// How often a window's close is looked for on the wall clock while
/// anything waits or runs.
const WALL_CHECK: Duration = Duration::from_secs(1);

#[allow(clippy::too_many_arguments)]
async fn drive(
    registry: &dyn Registry,
    plan: &SweepPlan,
    settings: ExecuteSettings,
    closes: &[(SwarmName, Duration)],
    stop: impl std::future::Future<Output = ()>,
    abort: impl std::future::Future<Output = ()>,
    mut on_progress: Option<&mut dyn FnMut(&Progress)>,
    wall: &dyn Fn() -> SystemTime,
) -> Swept {
    let epoch = Instant::now();
    let now = || Timestamp::from_epoch(Instant::now().saturating_duration_since(epoch));
    let mut sweep = Sweep::new(plan, settings.sweep);
    for (swarm, after) in closes {
        sweep.handle_window_closes(swarm, Timestamp::from_epoch(*after));
    }
    // The sweep's clock is monotonic: it stands still while the machine is
    // suspended and ignores a step of the wall clock, and either would let
    // removals go on inside a window that has closed by the calendar. So a
    // close is also read on the wall clock, and the earlier reading wins.
    let wall_epoch = wall();
    let mut wall_pending: Vec<(SwarmName, Duration)> = closes.to_vec();
    let mut tally = on_progress.as_ref().map(|_| Tally::new());
    let mut running = FuturesUnordered::new();

    // The engine's own word on when what is in use may be free: each event
    // is handed to the sweep, which decides what it wakes.
    let mut events = std::pin::pin!(crate::events::subscribe(registry, plan));
    let mut stop = std::pin::pin!(stop);
    let mut abort = std::pin::pin!(abort);
    let mut stopping = false;
    loop {
        if !wall_pending.is_empty() {
            // A wall clock set back reads as no time passed: the monotonic
            // close still holds then.
            let walled = wall().duration_since(wall_epoch).unwrap_or(Duration::ZERO);
            wall_pending.retain(|(swarm, after)| {
                let passed = walled >= *after;
                if passed {
                    sweep.handle_window_closes(swarm, now());
                }
                !passed
            });
        }
        let mut started = false;
        while !stopping && running.len() < settings.concurrency.max(1) {
            match sweep.poll_action(now()) {
                Some(action) => {
                    if let Some(t) = tally.as_mut() {
                        t.current = Some(CurrentStep::of(&action.kind));
                        started = true;
                    }
                    running.push(run(registry, action, settings.action_timeout))
                }
                None => break,
            }
        }
        if started {
            report_progress(&mut on_progress, tally.as_mut(), &sweep, false);
        }
        if sweep.is_done() || (stopping && running.is_empty()) {
            break;
        }
        // A deadline only matters when there is room to start what it
        // releases; at the limit, only a finishing action frees a slot. A
        // deadline already past is waited for a moment, so that a sweep
        // with nothing to hand out yet cannot spin this loop.
        let deadline = sweep
            .poll_timeout()
            .filter(|_| !stopping && running.len() < settings.concurrency.max(1))
            .map(|t| (epoch + t.since_epoch()).max(Instant::now() + Duration::from_millis(1)));
        tokio::select! {
            finished = running.next(), if !running.is_empty() => {
                if let Some((id, step, outcome)) = finished {
                    let records_gone = step == Step::DeleteRecords && outcome == Outcome::Done;
                    if let Err(e) = sweep.handle_outcome(id, outcome, now()) {
                        // Only a bug in this loop can cause this; the sweep
                        // is unchanged by it, and its report says what is
                        // unfinished.
                        tracing::error!(error = %e, "outcome refused by the sweep");
                    } else if let Some(t) = tally.as_mut() {
                        t.deleted += usize::from(records_gone);
                    }
                    report_progress(&mut on_progress, tally.as_mut(), &sweep, false);
                }
            }
            _ = sleep_until(deadline.unwrap_or(epoch)), if deadline.is_some() => {}
            // Only while something can still happen, as for the events.
            _ = tokio::time::sleep(WALL_CHECK),
                if !wall_pending.is_empty() && !stopping && (deadline.is_some() || !running.is_empty()) => {}
            // Only while something can still happen: a live subscription
            // must not keep a stalled sweep waiting for ever.
            Some(event) = events.next(), if !stopping && (deadline.is_some() || !running.is_empty()) => {
                sweep.handle_event(event, now());
            }
            () = &mut abort => {
                tracing::warn!(in_flight = running.len(), "aborted: leaving the steps in flight unanswered");
                break;
            }
            () = &mut stop, if !stopping => {
                stopping = true;
                tracing::warn!(in_flight = running.len(), "interrupted: finishing the steps in flight, starting no more");
            }
            else => {
                // Nothing running and nothing to wait for, yet not done:
                // stop rather than spin; the report marks what is left.
                tracing::error!("the sweep stalled with work left; stopping");
                break;
            }
        }
    }
    report_progress(&mut on_progress, tally.as_mut(), &sweep, true);
    Swept {
        report: sweep.report(),
        trace: sweep.trace().cloned(),
    }
}

fn report_progress(
    hook: &mut Option<&mut dyn FnMut(&Progress)>,
    tally: Option<&mut Tally>,
    sweep: &Sweep,
    finished: bool,
) {
    if let (Some(hook), Some(tally)) = (hook.as_mut(), tally) {
        hook(&tally.progress(sweep, finished));
    }
}

async fn run(
    registry: &dyn Registry,
    action: Action,
    limit: Duration,
) -> (ActionId, Step, Outcome) {
    let id = action.id;
    let step = action.kind.step();
    let outcome = match timeout(limit, perform(registry, &action.kind)).await {
        Ok(outcome) => outcome,
        Err(_) => Outcome::Failed(Failure::Unreachable(format!(
            "{} did not finish within {limit:?}",
            action.kind.step()
        ))),
    };
    if let Outcome::Failed(failure) = &outcome {
        if *failure != Failure::InUse {
            tracing::warn!(action = %action.kind.step(), swarm = %action.kind.swarm(), %failure, "step failed");
        }
    }
    (id, step, outcome)
}

fn failed<E>(classify: impl Fn(&E) -> Failure) -> impl Fn(E) -> Outcome {
    move |e| Outcome::Failed(classify(&e))
}

/// Carries out one action with nothing but the action and the registry:
/// every name the action concerns travels with it (a cluster seen under
/// several names is planned under one of them, but its nodes may have been
/// reached under another, so a node is looked for under each).
async fn perform(registry: &dyn Registry, kind: &ActionKind) -> Outcome {
    if let ActionKind::ReadStamps { target, .. } = kind {
        return read_stamps(registry, &target.release.release, &target.names).await;
    }
    let swarm = Target::new(kind.swarm().as_str());
    let backend = match registry.backend(&swarm).await {
        Ok(b) => b,
        Err(e) => return Outcome::Failed(classify_registry(&e)),
    };
    let done = |r: Result<(), _>| r.map_or_else(failed(classify_backend), |()| Outcome::Done);
    match kind {
        // The sweep re-read the records (`ReadStamps`) and judged them just
        // before handing this out.
        ActionKind::RemoveStack {
            target,
            part,
            objects,
        } => {
            if *part == StackPart::Services && target.live {
                let names: Vec<&str> = objects.iter().map(|o| o.name.as_str()).collect();
                tracing::warn!(
                    swarm = %target.release.swarm,
                    application = %target.application,
                    release = %target.release.release,
                    services = ?names,
                    "removing services a live release dropped"
                );
            } else if *part == StackPart::Services {
                tracing::warn!(
                    swarm = %target.release.swarm,
                    application = %target.application,
                    release = %target.release.release,
                    "deleting release"
                );
            }
            done(
                backend
                    .remove_stack_part(&target.release.release, *part, objects)
                    .await,
            )
        }
        ActionKind::ReadUsage { target, at } => read_usage(registry, &backend, target, at).await,
        ActionKind::ListVolumes { target, at } => {
            let release = &target.release.release;
            let listed = match at {
                Where::Manager => backend.stack_volumes(release).await,
                Where::Node(node) => match node_backend(registry, target, node).await {
                    Ok(n) => n.stack_volumes(release).await,
                    Err(outcome) => return outcome,
                },
            };
            listed.map_or_else(failed(classify_backend), Outcome::Volumes)
        }
        ActionKind::RemoveVolume { target, at, volume } => {
            tracing::info!(swarm = %target.release.swarm, release = %target.release.release, node = at.node_id().unwrap_or(MANAGER), %volume, "removing volume");
            match at {
                Where::Manager => done(backend.remove_volume(volume).await),
                Where::Node(node) => match node_backend(registry, target, node).await {
                    Ok(n) => done(n.remove_volume(volume).await),
                    Err(outcome) => outcome,
                },
            }
        }
        ActionKind::DeleteRecords { target } => {
            tracing::info!(swarm = %target.release.swarm, release = %target.release.release, "deleting release records");
            done(
                backend
                    .remove_release_records(&target.release.release)
                    .await,
            )
        }
        ActionKind::ListReleases { .. } => match backend.releases().await {
            Ok(records) => Outcome::Releases(records.into_iter().map(|r| r.name).collect()),
            Err(e) => Outcome::Failed(classify_backend(&e)),
        },
        // Answered above, before a backend for one name was looked up.
        ActionKind::ReadStamps { target, .. } => {
            read_stamps(registry, &target.release.release, &target.names).await
        }
    }
}

/// Reads what `release`'s stack holds now and what uses what on its
/// swarm, with the containers at each of `at`, and hands it back raw: the
/// sweep judges it by the planner's rule. Anything that cannot be read
/// fails the whole read (a backend that does not read a fact counts as
/// one that cannot): a user not seen is data lost.
async fn read_usage(
    registry: &dyn Registry,
    backend: &Arc<dyn SwarmBackend>,
    target: &sweep_core::sweep::Target,
    at: &[Where],
) -> Outcome {
    let release = target.release.release.as_str();
    let unread = |what: &str| {
        Outcome::Failed(Failure::Other(format!(
            "the backend does not read {what}, so nothing proves the release's objects unused by \
             another workload"
        )))
    };
    let stack = match backend.stack_objects().await {
        Ok(Some(mut stacks)) => stacks.remove(release).unwrap_or_default(),
        Ok(None) => return unread("stack objects"),
        Err(e) => return Outcome::Failed(classify_backend(&e)),
    };
    // The manager's node list with the services: a node joined since the
    // plan holds containers and volumes nobody read, and the sweep judges
    // by it whether every node was still read.
    let (services, nodes) = futures::future::join(backend.service_uses(), backend.node_ids()).await;
    let services = match services {
        Ok(Some(services)) => services,
        Ok(None) => return unread("services' specs"),
        Err(e) => return Outcome::Failed(classify_backend(&e)),
    };
    let nodes = match nodes {
        Ok(nodes) => nodes,
        Err(e) => return Outcome::Failed(classify_backend(&e)),
    };
    // Every place at once: through a volume job, asks made together share
    // one job, where one place after another would run a job each.
    let listings = at.iter().map(|place| async move {
        match place {
            Where::Manager => Ok((MANAGER.to_owned(), backend.containers().await)),
            Where::Node(node) => match node_backend(registry, target, node).await {
                Ok(n) => Ok((node.id.clone(), n.containers().await)),
                Err(outcome) => Err(outcome),
            },
        }
    });
    let mut containers = Vec::with_capacity(at.len());
    for listing in join_all(listings).await {
        let (node, listed) = match listing {
            Ok(listing) => listing,
            Err(outcome) => return outcome,
        };
        match listed {
            Ok(Some(list)) => containers.push(NodeContainers::new(node, list)),
            Ok(None) => return unread("containers"),
            Err(e) => return Outcome::Failed(classify_backend(&e)),
        }
    }
    let mut stack = stack;
    stack.volumes = None;
    Outcome::Usage(UsageRead::new(stack, Usage::new(services, containers)).with_nodes(nodes))
}

/// Reads `release`'s records under each of `names` and hands the raw
/// stamps back; judging them is the sweep's job, by the planner's rule.
/// One name that cannot be read fails the whole read: the sweep then
/// leaves the release alone, since nothing proves it ours.
async fn read_stamps(registry: &dyn Registry, release: &str, names: &[SwarmName]) -> Outcome {
    let mut reads = Vec::with_capacity(names.len());
    for name in names {
        let backend = match registry.backend(&Target::new(name.as_str())).await {
            Ok(b) => b,
            Err(e) => return Outcome::Failed(classify_registry(&e)),
        };
        let records = match backend.releases().await {
            Ok(records) => records,
            Err(e) => return Outcome::Failed(classify_backend(&e)),
        };
        // The stamp, and the records' ids and versions: the sweep of a live
        // release's dropped objects proves by them that no revision came
        // since the plan.
        let entry = records.into_iter().find(|r| r.name == release).map(|r| {
            let entry = ReleaseEntry::new(r.name, r.owner);
            match r.records {
                Some(versions) => entry.with_records(versions),
                None => entry,
            }
        });
        reads.push(StampRead::new(name.clone(), entry));
    }
    Outcome::Stamps(reads)
}

/// The backend of `node` under the first name of `target`'s cluster that
/// reaches it, its own swarm first.
async fn node_backend(
    registry: &dyn Registry,
    target: &sweep_core::sweep::Target,
    node: &sweep_core::NodeEntry,
) -> Result<Arc<dyn NodeBackend>, Outcome> {
    let swarm: Target = target.release.swarm.clone();
    let Some(reach) = registry.as_node_reach() else {
        // The plan listed a node, so the registry that gathered it had node
        // reach; a different registry here cannot reach it.
        return Err(Outcome::Failed(Failure::Unreachable(format!(
            "the registry cannot reach node {} individually",
            node.display_name()
        ))));
    };
    let others = target
        .names
        .iter()
        .filter(|a| *a != &target.release.swarm)
        .cloned();
    // Any name of the cluster that reaches the node will do; the first
    // error is the one reported when none does.
    let mut first_error = None;
    for target in std::iter::once(swarm.clone()).chain(others) {
        match reach.node_backend(&target, node).await {
            Ok(backend) => return Ok(backend),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let error = first_error.unwrap_or(RegistryError::UnknownNode {
        swarm: swarm.as_str().to_owned(),
        node: node.id.clone(),
    });
    Err(Outcome::Failed(classify_registry(&error)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sweep_core::{plan, AppSet, Application, Policy};
    use sweep_testkit::{MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm};

    fn departed(swarm: MemorySwarm, name: &str) -> MemorySwarm {
        let stamp = format!("cd/default/gone:release/{name}");
        swarm
            .record(MemoryRecord::new(name, 1, Some(&stamp)))
            .stack(name, MemoryStack::new().service(format!("{name}_svc")))
    }

    #[tokio::test(start_paused = true)]
    async fn progress_counts_up_to_every_release_and_ends_finished() {
        let mut swarm = MemorySwarm::new("alpha", "A");
        for name in ["a", "b", "c"] {
            swarm = departed(swarm, name);
        }
        let registry = MemoryRegistry::new().with_swarm(swarm);
        let apps = AppSet::new(true, vec![Application::reconciled("shop", "alpha", &[])]);
        let snapshot = crate::gather(
            &registry,
            Policy::new("default", false, None),
            apps,
            crate::GatherSettings::default(),
        )
        .await;
        let plan = plan(&snapshot).unwrap();
        assert_eq!(plan.deletions.len(), 3);

        let mut seen: Vec<Progress> = Vec::new();
        let report = execute_until_with(
            &registry,
            &plan,
            ExecuteSettings::default(),
            std::future::pending(),
            |p| seen.push(p.clone()),
        )
        .await;
        assert!(report.all_done());
        let last = seen.last().expect("at least the final call");
        assert!(last.finished);
        assert_eq!((last.done, last.total, last.deleted), (3, 3, 3));
        assert_eq!(last.in_flight, 0);
        assert_eq!(seen.iter().filter(|p| p.finished).count(), 1);
        assert!(seen.iter().all(|p| p.total == 3 && p.done <= 3));
        // Every step is named as it starts, the records last.
        let steps: Vec<Step> = seen
            .iter()
            .filter_map(|p| p.current.as_ref().map(|c| c.step))
            .collect();
        assert!(steps.contains(&Step::RemoveStack), "{steps:?}");
        assert_eq!(
            last.current.as_ref().map(|c| c.step),
            Some(Step::DeleteRecords)
        );
        assert!(seen.windows(2).all(|w| w[0].deleted <= w[1].deleted));
    }

    #[tokio::test(start_paused = true)]
    async fn a_traced_sweep_hands_back_every_action_ended_on_its_clock_and_the_same_report() {
        let mut swarm = MemorySwarm::new("alpha", "A");
        for name in ["a", "b"] {
            swarm = departed(swarm, name);
        }
        let registry = MemoryRegistry::new().with_swarm(swarm);
        let snapshot = crate::gather(
            &registry,
            Policy::new("default", false, None),
            AppSet::new(true, vec![Application::reconciled("shop", "alpha", &[])]),
            crate::GatherSettings::default(),
        )
        .await;
        let plan = plan(&snapshot).unwrap();
        let untraced = execute_traced(
            &registry,
            &plan,
            ExecuteSettings::default(),
            &[],
            std::future::pending(),
            std::future::pending(),
            |_| {},
        )
        .await;
        assert!(untraced.trace.is_none());

        let registry = MemoryRegistry::new().with_swarm(
            ["a", "b"]
                .into_iter()
                .fold(MemorySwarm::new("alpha", "A"), departed),
        );
        let mut settings = ExecuteSettings::default();
        settings.sweep = settings.sweep.traced();
        // The same world afresh: the first sweep emptied it.
        let swept = execute_traced(
            &registry,
            &plan,
            settings,
            &[],
            std::future::pending(),
            std::future::pending(),
            |_| {},
        )
        .await;
        assert_eq!(swept.report, untraced.report);
        assert!(swept.report.all_done());
        let trace = swept.trace.expect("asked for");
        let records: Vec<&str> = trace
            .spans
            .iter()
            .filter(|s| s.step == Step::DeleteRecords)
            .filter_map(|s| s.release.as_deref())
            .collect();
        assert_eq!(records.len(), 2, "{trace:#?}");
        for span in &trace.spans {
            assert!(span.end_us.is_some_and(|e| e >= span.start_us), "{span:?}");
            assert!(span.in_flight >= 1 && span.in_flight <= 8, "{span:?}");
        }
    }

    /// Sweeps `plan` with alpha's window closing `close` seconds in on the
    /// sweep's clock, retries `retry` seconds apart, and `wall` for the
    /// system clock.
    async fn sweep_closing(
        registry: &MemoryRegistry,
        plan: &SweepPlan,
        close: u64,
        retry: u64,
        wall: &dyn Fn() -> SystemTime,
    ) -> Swept {
        let settings = ExecuteSettings::new(
            Settings::new(Duration::from_secs(retry), Duration::from_secs(600)),
            4,
            Duration::from_secs(60),
        );
        let closes = [(SwarmName::new("alpha"), Duration::from_secs(close))];
        drive(
            registry,
            plan,
            settings,
            &closes,
            std::future::pending(),
            std::future::pending(),
            None,
            wall,
        )
        .await
    }

    /// The machine slept, or its clock was set forward, past the close of
    /// the window: the sweep's monotonic clock says half an hour is left,
    /// the wall clock says it has closed. The earlier reading wins: the
    /// volume still in use stays, and so do the records.
    #[tokio::test(start_paused = true)]
    async fn a_close_the_wall_clock_passed_stops_the_sweep_though_its_own_clock_did_not() {
        let mut swarm = MemorySwarm::new("alpha", "A");
        for (i, host) in ["mgr", "w1"].iter().enumerate() {
            swarm = swarm.node(
                MemoryNode::new(format!("alpha-n{i}"), format!("alpha-{host}"))
                    .volume("old_data", Some("old")),
            );
        }
        let registry = MemoryRegistry::new().with_swarm(departed(swarm, "old"));
        registry
            .volume_in_use("alpha", "alpha-n1", "old_data", 1000)
            .unwrap();
        let snapshot = crate::gather(
            &registry,
            Policy::new("default", true, None),
            AppSet::new(true, vec![Application::reconciled("shop", "alpha", &[])]),
            crate::GatherSettings::default(),
        )
        .await;
        let plan = plan(&snapshot).unwrap();
        assert_eq!(plan.deletions.len(), 1);

        let started = Instant::now();
        let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        // Two seconds in, the wall clock jumps an hour ahead.
        let wall = move || {
            let e = started.elapsed();
            base + e + Duration::from_secs(if e >= Duration::from_secs(2) { 3600 } else { 0 })
        };
        // A retry a minute away: only the look at the wall clock can wake
        // the sweep in time.
        let swept = sweep_closing(&registry, &plan, 1800, 60, &wall).await;
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let r = &swept.report.releases[0];
        assert_eq!(r.outcome, sweep_core::sweep::ReleaseOutcome::Failed);
        assert!(
            r.errors
                .iter()
                .any(|e| e.kind == sweep_core::sweep::ErrorKind::WindowClosed),
            "{r:?}"
        );
        assert_eq!(registry.records("alpha").len(), 1, "the records stay");
        let left: Vec<String> = ["alpha-n0", "alpha-n1"]
            .iter()
            .flat_map(|n| registry.volumes("alpha", n))
            .map(|v| v.name)
            .collect();
        assert_eq!(left, ["old_data"]);
    }

    /// A wall clock set back changes nothing: the close on the sweep's own
    /// clock still holds.
    #[tokio::test(start_paused = true)]
    async fn a_wall_clock_set_back_does_not_move_the_close_later() {
        let mut swarm = MemorySwarm::new("alpha", "A");
        swarm =
            swarm.node(MemoryNode::new("alpha-n0", "alpha-mgr").volume("old_data", Some("old")));
        let registry = MemoryRegistry::new().with_swarm(departed(swarm, "old"));
        registry
            .volume_in_use("alpha", "alpha-n0", "old_data", 1000)
            .unwrap();
        let snapshot = crate::gather(
            &registry,
            Policy::new("default", true, None),
            AppSet::new(true, vec![Application::reconciled("shop", "alpha", &[])]),
            crate::GatherSettings::default(),
        )
        .await;
        let plan = plan(&snapshot).unwrap();
        let started = Instant::now();
        let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let wall = move || base.checked_sub(started.elapsed() * 100).unwrap_or(base);
        let swept = sweep_closing(&registry, &plan, 7, 2, &wall).await;
        let took = started.elapsed();
        assert!(
            took >= Duration::from_secs(7) && took < Duration::from_secs(10),
            "{took:?}"
        );
        let r = &swept.report.releases[0];
        assert!(
            r.errors
                .iter()
                .any(|e| e.kind == sweep_core::sweep::ErrorKind::WindowClosed),
            "{r:?}"
        );
        assert_eq!(registry.records("alpha").len(), 1, "the records stay");
    }

    #[tokio::test(start_paused = true)]
    async fn a_held_plan_reports_nothing_to_do() {
        let registry =
            MemoryRegistry::new().with_swarm(departed(MemorySwarm::new("alpha", "A"), "a"));
        let snapshot = crate::gather(
            &registry,
            Policy::new("default", false, None),
            AppSet::new(true, Vec::new()),
            crate::GatherSettings::default(),
        )
        .await;
        let plan = plan(&snapshot).unwrap();
        assert!(plan.is_held());
        let mut seen = Vec::new();
        execute_until_with(
            &registry,
            &plan,
            ExecuteSettings::default(),
            std::future::pending(),
            |p| seen.push(p.clone()),
        )
        .await;
        assert_eq!(seen.len(), 1);
        assert!(seen[0].finished && seen[0].total == 0 && seen[0].done == 0);
    }
}
