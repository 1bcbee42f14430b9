//! The sweep's trace, step by step: what it records of a sweep driven by
//! hand, on a clock the test moves.

use std::time::Duration;

use sweep_core::sweep::{
    ActionKind, Event, Outcome, Settings, SpanOutcome, StackPart, StampRead, Step, Sweep,
    SweepTrace, Timestamp,
};
use sweep_core::{plan, ReleaseEntry, Snapshot, SwarmName};

const STAMP: &str = "cd/default/shop:release/shop";

fn sweep(settings: Settings) -> Sweep {
    let snapshot = Snapshot::from_json(
        r#"{"policy": {"controller": "default", "purge_volumes": true},
            "app_set": {"loaded": true, "applications": [
                {"name": "blog", "swarm": "", "releases": ["blog"]}]},
            "swarms": [{"swarm": "", "node_count": 1,
                "nodes": [{"id": "n1", "hostname": "node-1"}],
                "releases": [
                    {"name": "blog", "owner": "cd/default/blog:release/blog"},
                    {"name": "shop", "owner": "cd/default/shop:release/shop"}]}]}"#,
    )
    .unwrap();
    Sweep::new(&plan(&snapshot).unwrap(), settings)
}

/// What a swarm where everything works answers to `kind`; a volume
/// removal answers `volume`.
fn answer(kind: &ActionKind, volume: &Outcome) -> Outcome {
    match kind {
        ActionKind::ReadStamps { target, .. } => Outcome::Stamps(
            target
                .names
                .iter()
                .map(|name| {
                    let entry =
                        ReleaseEntry::new(target.release.release.clone(), Some(STAMP.into()));
                    StampRead::new(name.clone(), Some(entry))
                })
                .collect(),
        ),
        ActionKind::ReadUsage { at, .. } => Outcome::unused(at),
        ActionKind::ListVolumes { .. } => Outcome::Volumes(vec!["shop_data".into()]),
        ActionKind::RemoveVolume { .. } => volume.clone(),
        ActionKind::RemoveStack { .. } | ActionKind::DeleteRecords { .. } => Outcome::Done,
        ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
    }
}

/// Drives `sweep` one action at a time, each taking 10 ms; the volume is
/// in use at its first attempt, and a container of the stack goes 300 ms
/// after that attempt.
fn drive(sweep: &mut Sweep) -> Timestamp {
    let tick = Duration::from_millis(10);
    let mut now = Timestamp::ZERO;
    let mut volume_busy = true;
    let mut event_at = None;
    while !sweep.is_done() {
        if let Some(action) = sweep.poll_action(now) {
            now += tick;
            let outcome = if matches!(action.kind, ActionKind::RemoveVolume { .. }) && volume_busy {
                volume_busy = false;
                event_at = Some(now + Duration::from_millis(300));
                answer(&action.kind, &Outcome::in_use())
            } else {
                answer(&action.kind, &Outcome::Done)
            };
            sweep.handle_outcome(action.id, outcome, now).unwrap();
            continue;
        }
        match (event_at.take(), sweep.poll_timeout()) {
            (Some(at), _) => {
                now = now.max(at);
                let event = Event::container_gone(SwarmName::new(""), Some("n1".into()), "shop");
                sweep.handle_event(event, now);
            }
            (None, Some(at)) => now = now.max(at),
            (None, None) => break,
        }
    }
    now
}

fn ms(millis: u64) -> u64 {
    millis * 1000
}

#[test]
fn no_trace_unless_asked() {
    let mut sweep = sweep(Settings::default());
    drive(&mut sweep);
    assert!(sweep.trace().is_none());
}

#[test]
fn each_action_is_traced_from_its_start_to_its_end_on_the_drivers_clock() {
    let mut sweep = sweep(Settings::default().traced());
    let end = drive(&mut sweep);
    let trace = sweep.trace().unwrap();
    let steps: Vec<(Step, Option<StackPart>)> =
        trace.spans.iter().map(|s| (s.step, s.part)).collect();
    use StackPart::*;
    use Step::*;
    assert_eq!(
        steps,
        [
            (ReadStamps, None),
            (ReadUsage, None),
            (RemoveStack, Some(Services)),
            (RemoveStack, Some(Tasks)),
            (ReadUsage, None),
            (ReadStamps, None),
            (ListVolumes, None),
            (ReadUsage, None),
            (RemoveVolume, None),
            // Who uses the volume now, before its retry.
            (ReadUsage, None),
            (RemoveVolume, None),
            (ReadStamps, None),
            (DeleteRecords, None),
        ]
    );
    // One at a time, 10 ms each, back to back but for the wait.
    for (n, span) in trace.spans.iter().enumerate() {
        assert_eq!(span.action, n as u64);
        assert_eq!(span.end_us, Some(span.start_us + ms(10)), "{span:?}");
        assert_eq!(span.in_flight, 1);
        assert_eq!(span.release.as_deref(), Some("shop"));
    }
    let volumes: Vec<_> = trace
        .spans
        .iter()
        .filter(|s| s.step == Step::RemoveVolume)
        .collect();
    assert_eq!(volumes[0].outcome, Some(SpanOutcome::InUse));
    assert_eq!(volumes[1].outcome, Some(SpanOutcome::Done));
    assert_eq!(volumes[0].volume.as_deref(), Some("shop_data"));
    assert_eq!(volumes[0].node.as_deref(), Some("n1"));
    // The retry came with the event, 300 ms after the answer, not at the
    // retry interval (2 s): its read then, and the retry right after.
    let reread = &trace.spans[9];
    assert_eq!(reread.step, Step::ReadUsage);
    assert_eq!(reread.start_us, volumes[0].end_us.unwrap() + ms(300));
    assert_eq!(volumes[1].start_us, reread.end_us.unwrap());
    assert_eq!(trace.events.len(), 1);
    assert_eq!(trace.events[0].at_us, reread.start_us);
    assert!(trace.events[0].woke);
    assert_eq!(trace.events[0].node.as_deref(), Some("n1"));
    assert_eq!(
        trace.spans.last().unwrap().end_us,
        Some(u64::try_from(end.since_epoch().as_micros()).unwrap())
    );
}

#[test]
fn an_outstanding_action_has_no_end_and_an_idle_event_wakes_nothing() {
    let mut sweep = sweep(Settings::default().traced());
    let at = Timestamp::from_millis(5);
    let action = sweep.poll_action(at).unwrap();
    sweep.handle_event(
        Event::container_gone(SwarmName::new(""), None, "shop"),
        Timestamp::from_millis(6),
    );
    let trace = sweep.trace().unwrap();
    assert_eq!(trace.spans.len(), 1);
    assert_eq!(trace.spans[0].start_us, ms(5));
    assert_eq!(trace.spans[0].end_us, None);
    assert_eq!(trace.spans[0].outcome, None);
    assert!(!trace.events[0].woke);
    // A refused answer is not the action's end.
    let wrong = sweep.handle_outcome(action.id, Outcome::Done, Timestamp::from_millis(7));
    assert!(wrong.is_err());
    assert_eq!(sweep.trace().unwrap().spans[0].end_us, None);
}

#[test]
fn a_trace_reads_back_as_written() {
    let mut sweep = sweep(Settings::default().traced());
    drive(&mut sweep);
    let trace = sweep.trace().unwrap();
    let json = serde_json::to_string(trace).unwrap();
    let back: SweepTrace = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, trace);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["spans"][2]["part"], "services");
    assert_eq!(value["spans"][8]["outcome"], "in_use");
    assert!(value["spans"][0].get("volume").is_none());
}
