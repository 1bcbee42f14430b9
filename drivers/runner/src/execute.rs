//! Carrying a plan out: the core's [`Sweep`] driven by tokio.
//!
//! The state machine decides what runs and in which order; this loop only
//! runs what it hands out, at most `concurrency` at a time, each under a
//! timeout, and sleeps until its retry deadline when nothing is ready.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use sweep_core::sweep::{
    Action, ActionId, ActionKind, Failure, Outcome, Settings, StackPart, StampRead, Sweep,
    SweepReport, Timestamp, Where,
};
use sweep_core::{ReleaseEntry, SwarmName, SweepPlan};
use sweep_swarms::{Node, NodeBackend, Registry, RegistryError, Target};
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
pub async fn execute(
    registry: &dyn Registry,
    plan: &SweepPlan,
    settings: ExecuteSettings,
) -> SweepReport {
    execute_until(registry, plan, settings, std::future::pending()).await
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
    let epoch = Instant::now();
    let now = || Timestamp::from_epoch(Instant::now().saturating_duration_since(epoch));
    let mut sweep = Sweep::new(plan, settings.sweep);
    let mut running = FuturesUnordered::new();
    // A cluster seen under several names is planned under one of them, but
    // its nodes may have been reached under another: try every name.
    let names: BTreeMap<&SwarmName, &[SwarmName]> = plan
        .swarms
        .iter()
        .map(|s| (&s.swarm, s.names.as_slice()))
        .collect();

    // The engine's own word on when what is in use may be free: each event
    // is handed to the sweep, which decides what it wakes.
    let mut events = std::pin::pin!(crate::events::subscribe(registry, plan));
    let mut stop = std::pin::pin!(stop);
    let mut stopping = false;
    loop {
        while !stopping && running.len() < settings.concurrency.max(1) {
            match sweep.poll_action(now()) {
                Some(action) => {
                    let aliases = names.get(action.kind.swarm()).copied().unwrap_or_default();
                    running.push(run(registry, aliases, action, settings.action_timeout))
                }
                None => break,
            }
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
                if let Some((id, outcome)) = finished {
                    if let Err(e) = sweep.handle_outcome(id, outcome, now()) {
                        // Only a bug in this loop can cause this; the sweep
                        // is unchanged by it, and its report says what is
                        // unfinished.
                        tracing::error!(error = %e, "outcome refused by the sweep");
                    }
                }
            }
            _ = sleep_until(deadline.unwrap_or(epoch)), if deadline.is_some() => {}
            // Only while something can still happen: a live subscription
            // must not keep a stalled sweep waiting for ever.
            Some(event) = events.next(), if !stopping && (deadline.is_some() || !running.is_empty()) => {
                sweep.handle_event(event, now());
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
    sweep.report()
}

async fn run(
    registry: &dyn Registry,
    aliases: &[SwarmName],
    action: Action,
    limit: Duration,
) -> (ActionId, Outcome) {
    let id = action.id;
    let outcome = match timeout(limit, perform(registry, aliases, &action.kind)).await {
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
    (id, outcome)
}

fn failed<E>(classify: impl Fn(&E) -> Failure) -> impl Fn(E) -> Outcome {
    move |e| Outcome::Failed(classify(&e))
}

async fn perform(registry: &dyn Registry, aliases: &[SwarmName], kind: &ActionKind) -> Outcome {
    if let ActionKind::ReadStamps { target, names, .. } = kind {
        return read_stamps(registry, &target.release.release, names).await;
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
        ActionKind::RemoveStack { target, part } => {
            if *part == StackPart::Services {
                tracing::warn!(
                    swarm = %target.release.swarm,
                    application = %target.application,
                    release = %target.release.release,
                    "deleting release"
                );
            }
            done(
                backend
                    .remove_stack_part(&target.release.release, *part)
                    .await,
            )
        }
        ActionKind::ListVolumes { target, at } => {
            let release = &target.release.release;
            let listed = match at {
                Where::Manager => backend.stack_volumes(release).await,
                Where::Node(node) => match node_backend(registry, &swarm, aliases, node).await {
                    Ok(n) => n.stack_volumes(release).await,
                    Err(outcome) => return outcome,
                },
            };
            listed.map_or_else(failed(classify_backend), Outcome::Volumes)
        }
        ActionKind::RemoveVolume { target, at, volume } => {
            tracing::info!(swarm = %target.release.swarm, release = %target.release.release, node = at.node_id().unwrap_or("(manager)"), %volume, "removing volume");
            match at {
                Where::Manager => done(backend.remove_volume(volume).await),
                Where::Node(node) => match node_backend(registry, &swarm, aliases, node).await {
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
        ActionKind::ReadStamps { target, names, .. } => {
            read_stamps(registry, &target.release.release, names).await
        }
    }
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
        let entry = records
            .into_iter()
            .find(|r| r.name == release)
            .map(|r| ReleaseEntry::new(r.name, r.owner));
        reads.push(StampRead::new(name.clone(), entry));
    }
    Outcome::Stamps(reads)
}

async fn node_backend(
    registry: &dyn Registry,
    swarm: &Target,
    aliases: &[SwarmName],
    node: &sweep_core::NodeEntry,
) -> Result<Arc<dyn NodeBackend>, Outcome> {
    let Some(reach) = registry.as_node_reach() else {
        // The plan listed a node, so the registry that gathered it had node
        // reach; a different registry here cannot reach it.
        return Err(Outcome::Failed(Failure::Unreachable(format!(
            "the registry cannot reach node {} individually",
            node.display_name()
        ))));
    };
    let wanted = Node::new(node.id.clone(), node.hostname.clone());
    let others = aliases
        .iter()
        .filter(|a| a.as_str() != swarm.swarm)
        .map(|a| Target::new(a.as_str()));
    // Any name of the cluster that reaches the node will do; the first
    // error is the one reported when none does.
    let mut first_error = None;
    for target in std::iter::once(swarm.clone()).chain(others) {
        match reach.node_backend(&target, &wanted).await {
            Ok(backend) => return Ok(backend),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let error = first_error.unwrap_or(RegistryError::UnknownNode {
        swarm: swarm.swarm.clone(),
        node: node.id.clone(),
    });
    Err(Outcome::Failed(classify_registry(&error)))
}
