//! The engine's container events, for the sweep: a volume or network still
//! in use is tried again the moment a container of its stack goes, instead
//! of at the next retry interval.
//!
//! Events only ever hasten a retry the sweep has already scheduled, so every
//! subscription is best effort: one that cannot be opened, fails or ends is
//! logged and dropped, and the sweep falls back to its retry interval. The
//! subscriptions open concurrently inside the stream, so the sweep never
//! waits for one.

use std::collections::{BTreeMap, BTreeSet};
use std::pin::Pin;
use std::sync::Arc;

use futures::stream::{self, BoxStream, SelectAll, Stream, StreamExt};
use sweep_core::sweep::{Event, MANAGER};
use sweep_core::{NodeEntry, SwarmName, SweepPlan};
use sweep_swarms::{ContainerEvents, Registry, Target};

/// Where one subscription listens, and what it passes on.
struct Source {
    /// The plan's name for the swarm: the one its deletions use.
    swarm: SwarmName,
    /// Every name of the swarm's cluster, the plan's own first: a node
    /// reached under one name may not be reachable under another.
    names: Vec<SwarmName>,
    /// The node whose daemon it listens to; `None`: the manager's own.
    node: Option<NodeEntry>,
    /// The releases planned for deletion on this swarm, and the live ones
    /// whose dropped objects it removes: the events of any other stack
    /// wake nothing.
    releases: Arc<BTreeSet<String>>,
}

/// The container events of every daemon that may hold what `plan` deletes:
/// each node the plan reached on a swarm with deletions, or the swarm's
/// manager when the registry cannot reach nodes individually (or reached
/// none). Each event is a container gone of a release planned for deletion
/// on that swarm, ready for
/// [`Sweep::handle_event`](sweep_core::sweep::Sweep::handle_event).
///
/// Subscriptions open when the stream is first polled, concurrently;
/// nothing waits for them. The stream ends when every subscription has
/// ended (at once for a plan that removes nothing); dropping it closes
/// them all.
pub(crate) fn subscribe<'a>(
    registry: &'a dyn Registry,
    plan: &SweepPlan,
) -> impl Stream<Item = Event> + Send + 'a {
    let mut releases: BTreeMap<&SwarmName, BTreeSet<String>> = BTreeMap::new();
    if !plan.is_held() {
        for deletion in &plan.deletions {
            releases
                .entry(&deletion.swarm)
                .or_default()
                .insert(deletion.release.clone());
        }
        // A live release's dropped services stop as a deleted release's
        // do: their containers' events wake the waits on them as well.
        for dropped in plan.dropped.iter().filter(|d| !d.objects.is_empty()) {
            releases
                .entry(&dropped.swarm)
                .or_default()
                .insert(dropped.release.clone());
        }
    }
    let mut streams: SelectAll<BoxStream<'a, Event>> = SelectAll::new();
    for (swarm, releases) in releases {
        let releases = Arc::new(releases);
        let names = plan.swarm(swarm).map_or_else(Vec::new, |s| s.names.clone());
        let mut ordered = vec![swarm.clone()];
        ordered.extend(names.into_iter().filter(|n| n != swarm));
        // Without a node reached, the manager's own daemon is the only one
        // to hear from: its tasks' containers hold the stack's networks.
        let nodes = plan
            .swarm(swarm)
            .and_then(|s| s.nodes.as_ref())
            .filter(|nodes| !nodes.is_empty());
        let places: Vec<Option<NodeEntry>> = match nodes {
            Some(nodes) => nodes.iter().cloned().map(Some).collect(),
            None => vec![None],
        };
        for node in places {
            let source = Source {
                swarm: swarm.clone(),
                names: ordered.clone(),
                node,
                releases: releases.clone(),
            };
            streams.push(listen(registry, source).boxed());
        }
    }
    streams
}

/// One subscription, opened when first polled; empty when it cannot be.
fn listen(registry: &dyn Registry, source: Source) -> impl Stream<Item = Event> + Send + '_ {
    stream::once(async move {
        let opened = open(registry, &source).await;
        (source, opened)
    })
    .flat_map(|(source, opened)| {
        let events: Pin<Box<dyn Stream<Item = Event> + Send>> = match opened {
            Some(events) => Box::pin(relay(source, events)),
            None => Box::pin(stream::empty()),
        };
        events
    })
}

/// The events of `source`'s daemon, or `None` (logged) when no name of its
/// swarm reaches it.
async fn open(registry: &dyn Registry, source: &Source) -> Option<ContainerEvents> {
    let daemon = source.node.as_ref().map_or(MANAGER, |n| n.display_name());
    let mut last_error = None;
    for name in &source.names {
        let target = Target::new(name.as_str());
        let subscribed = match &source.node {
            Some(node) => {
                let Some(reach) = registry.as_node_reach() else {
                    last_error = Some("the registry cannot reach nodes individually".to_owned());
                    break;
                };
                match reach.node_backend(&target, node).await {
                    Ok(backend) => backend.container_events().await,
                    Err(e) => {
                        last_error = Some(e.to_string());
                        continue;
                    }
                }
            }
            None => match registry.backend(&target).await {
                Ok(backend) => backend.container_events().await,
                Err(e) => {
                    last_error = Some(e.to_string());
                    continue;
                }
            },
        };
        match subscribed {
            Ok(events) => return Some(events),
            Err(e) => last_error = Some(e.to_string()),
        }
    }
    tracing::debug!(
        swarm = %source.swarm,
        node = daemon,
        error = last_error.as_deref().unwrap_or("no name to reach it by"),
        "no container events from this daemon; retries go by the interval"
    );
    None
}

/// `events` as the sweep's events, only those of planned releases; ends at
/// the subscription's first error, and says so (at debug level) when it
/// ends.
fn relay(source: Source, events: ContainerEvents) -> impl Stream<Item = Event> + Send {
    let Source {
        swarm,
        node,
        releases,
        ..
    } = source;
    let node_id = node.as_ref().map(|n| n.id.clone());
    let daemon = node.map_or_else(|| MANAGER.to_owned(), |n| n.display_name().to_owned());
    let (failed_swarm, failed_daemon) = (swarm.clone(), daemon.clone());
    let ended = stream::once(async move {
        tracing::debug!(%swarm, node = %daemon, "container events ended; retries go by the interval");
    })
    .filter_map(|()| std::future::ready(None));
    let swarm = failed_swarm.clone();
    events
        .take_while(move |item| {
            if let Err(e) = item {
                tracing::debug!(swarm = %failed_swarm, node = %failed_daemon, error = %e, "container events failed");
            }
            std::future::ready(item.is_ok())
        })
        .filter_map(move |item| {
            let event = item
                .ok()
                .filter(|gone| releases.contains(&gone.namespace))
                .map(|gone| Event::container_gone(swarm.clone(), node_id.clone(), gone.namespace));
            std::future::ready(event)
        })
        .chain(ended)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use sweep_core::{plan, AppSet, Application, Policy};
    use sweep_swarms::{BackendError, StackPart};
    use sweep_testkit::{
        Call, Effect, Fault, Faulty, MemoryNode, MemoryRecord, MemoryRegistry, MemoryStack,
        MemorySwarm,
    };

    use super::*;
    use crate::{gather, GatherSettings};

    /// How long a test waits for what must come at once; never reached
    /// when all is well.
    const BOUND: Duration = Duration::from_secs(10);

    fn stamp(app: &str, release: &str) -> Option<&'static str> {
        Some(Box::leak(
            format!("cd/default/{app}:release/{release}").into_boxed_str(),
        ))
    }

    /// Swarm `alpha`: three nodes; `gone` (of the departed `shop`) has
    /// volumes on n1 and n2, `kept` (of the live `blog`) on n1.
    fn alpha(node_reach: bool) -> MemorySwarm {
        let mut swarm = MemorySwarm::new("alpha", "cluster-a")
            .node(MemoryNode::new("n0", "mgr"))
            .node(
                MemoryNode::new("n1", "w1")
                    .volume("gone_data", Some("gone"))
                    .volume("kept_data", Some("kept")),
            )
            .node(MemoryNode::new("n2", "w2").volume("gone_cache", Some("gone")))
            .record(MemoryRecord::new("gone", 1, stamp("shop", "gone")))
            .record(MemoryRecord::new("kept", 1, stamp("blog", "kept")))
            .stack("gone", MemoryStack::new().service("gone_web"))
            .stack("kept", MemoryStack::new().service("kept_web"));
        if !node_reach {
            swarm = swarm.without_node_reach();
        }
        swarm
    }

    async fn plan_for(registry: &dyn Registry) -> SweepPlan {
        let apps = AppSet::new(
            true,
            vec![Application::reconciled("blog", "alpha", &["kept"])],
        );
        let snapshot = gather(
            registry,
            Policy::new("default", true, None),
            apps,
            GatherSettings::default(),
        )
        .await;
        let plan = plan(&snapshot).expect("a gathered snapshot is valid");
        assert_eq!(plan.deletions.len(), 1, "{plan:?}");
        plan
    }

    /// Polls `events` until `subscribed` holds, so that what the test does
    /// next happens after the subscriptions opened, as it would on a real
    /// daemon (which reports nothing from before).
    async fn until_subscribed(
        events: &mut (impl Stream<Item = Event> + Unpin),
        subscribed: impl Fn() -> bool,
    ) {
        tokio::time::timeout(BOUND, async {
            while !subscribed() {
                tokio::select! {
                    biased;
                    event = events.next() => panic!("an event before anything went: {event:?}"),
                    () = tokio::task::yield_now() => {}
                }
            }
        })
        .await
        .expect("the subscriptions open");
    }

    async fn next(events: &mut (impl Stream<Item = Event> + Unpin)) -> Option<Event> {
        tokio::time::timeout(BOUND, events.next())
            .await
            .expect("an event or the end of the stream comes at once")
    }

    fn gone(node: Option<&str>) -> Event {
        Event::container_gone(SwarmName::new("alpha"), node.map(str::to_owned), "gone")
    }

    #[tokio::test]
    async fn nodes_holding_a_planned_release_report_its_containers_gone() {
        let registry = MemoryRegistry::new().with_swarm(alpha(true));
        let plan = plan_for(&registry).await;
        let mut events = Box::pin(subscribe(&registry, &plan));
        until_subscribed(&mut events, || {
            ["n0", "n1", "n2"]
                .iter()
                .all(|n| registry.event_subscribers("alpha", Some(n)) == 1)
        })
        .await;

        // A live release's containers wake nothing: not passed on.
        registry.emit_container_gone("alpha", Some("n1"), "kept");
        let backend = registry.backend(&Target::new("alpha")).await.unwrap();
        sweep_testkit::remove_whole_part(&*backend, "gone", StackPart::Services)
            .await
            .unwrap();
        let mut seen = vec![next(&mut events).await, next(&mut events).await];
        seen.sort_by_key(|e| format!("{e:?}"));
        assert_eq!(seen, vec![Some(gone(Some("n1"))), Some(gone(Some("n2")))]);

        // Nothing else is pending: the next event is the one sent now.
        registry.emit_container_gone("alpha", Some("n0"), "gone");
        assert_eq!(next(&mut events).await, Some(gone(Some("n0"))));

        drop(events);
        assert_eq!(registry.event_subscribers("alpha", Some("n1")), 0);
    }

    #[tokio::test]
    async fn without_node_reach_the_manager_reports_for_its_swarm() {
        let registry = MemoryRegistry::new().with_swarm(alpha(false));
        let plan = plan_for(&registry).await;
        let mut events = Box::pin(subscribe(&registry, &plan));
        until_subscribed(&mut events, || {
            registry.event_subscribers("alpha", None) == 1
        })
        .await;
        assert_eq!(registry.event_subscribers("alpha", Some("n1")), 0);
        let backend = registry.backend(&Target::new("alpha")).await.unwrap();
        sweep_testkit::remove_whole_part(&*backend, "gone", StackPart::Services)
            .await
            .unwrap();
        assert_eq!(next(&mut events).await, Some(gone(None)));
    }

    #[tokio::test]
    async fn failed_subscriptions_are_dropped_and_the_others_carry_on() {
        let registry = Faulty::new(MemoryRegistry::new().with_swarm(alpha(true)));
        let plan = plan_for(&registry).await;
        let boom = BackendError::Other {
            message: "boom".into(),
        };
        registry.inject(Fault::new("alpha", Call::Events, Effect::Fail(boom)).on_node("n2"));
        // A subscription that never answers holds nothing up either.
        registry.inject(Fault::new("alpha", Call::Events, Effect::Hang).on_node("n0"));
        let mut events = Box::pin(subscribe(&registry, &plan));
        until_subscribed(&mut events, || {
            registry.inner().event_subscribers("alpha", Some("n1")) == 1
                && registry.injected().len() == 2
        })
        .await;
        assert_eq!(registry.inner().event_subscribers("alpha", Some("n2")), 0);
        let backend = registry.backend(&Target::new("alpha")).await.unwrap();
        sweep_testkit::remove_whole_part(&*backend, "gone", StackPart::Services)
            .await
            .unwrap();
        assert_eq!(next(&mut events).await, Some(gone(Some("n1"))));
    }

    #[tokio::test]
    async fn a_plan_without_deletions_subscribes_to_nothing() {
        let registry = MemoryRegistry::new().with_swarm(alpha(true));
        let apps = AppSet::new(
            true,
            vec![
                Application::reconciled("blog", "alpha", &["kept"]),
                Application::reconciled("shop", "alpha", &["gone"]),
            ],
        );
        let snapshot = gather(
            &registry,
            Policy::new("default", true, None),
            apps,
            GatherSettings::default(),
        )
        .await;
        let plan = plan(&snapshot).unwrap();
        assert!(plan.deletions.is_empty());
        let mut events = Box::pin(subscribe(&registry, &plan));
        assert_eq!(next(&mut events).await, None);
        assert_eq!(registry.event_subscribers("alpha", Some("n1")), 0);
    }
}
