//! The sweep's rules, one named test (or a few) each, against the model
//! world in virtual time.

mod harness;

use std::time::Duration;

use harness::{sweep, Event, ListingBy, NewStamp, Reach, Run, World, CONTROLLER};
use sweep_core::objects::ObjectRef;
use sweep_core::sweep::{
    Action, ActionId, ActionKind, ErrorKind, Event as SweepEvent, Failure, ObjectKind,
    ObjectOutcome, Outcome, ReleaseOutcome, Settings, StackPart, StampChange, Step, Sweep,
    SweepError, SweepReport, Timestamp, UsageRead, Where,
};
use sweep_core::usage::{InUse, ObjectKind as UsageKind, ServiceUse, Usage, User};
use sweep_core::{Coverage, ReleaseRef, ServiceEntry, StackObjects, SwarmName, SweepPlan};

const SEEDS: u64 = 12;

fn rr(swarm: &str, release: &str) -> ReleaseRef {
    ReleaseRef::new(swarm, release)
}

fn alpha3(w: &mut World) {
    w.swarm(
        "alpha",
        &[
            ("n1", "node-1", true),
            ("n2", "node-2", true),
            ("n3", "node-3", true),
        ],
        Reach::Nodes,
        true,
    );
}

fn is_release(kind: &ActionKind, swarm: &str, release: &str) -> bool {
    kind.target()
        .is_some_and(|t| t.release == rr(swarm, release))
}

/// The answer to a re-read that finds the release as planned, under every
/// name asked.
fn unchanged(kind: &ActionKind) -> Outcome {
    let ActionKind::ReadStamps { target, .. } = kind else {
        panic!("not a re-read: {kind:?}");
    };
    let names = &target.names;
    let release = &target.release.release;
    let stamp = format!("cd/{CONTROLLER}/{}:release/{release}", target.application);
    Outcome::same_stamps(names, release, Some(&stamp))
}

/// The answer to a usage read that finds `release`'s whole stack (a
/// service, a network, a secret and a config) and nobody else using it.
fn whole_stack(release: &str) -> Outcome {
    let stack = StackObjects::new(
        vec![ServiceEntry::new(
            format!("svc-{release}"),
            format!("{release}_web"),
            1,
        )],
        vec![ObjectRef::new(
            format!("net-{release}"),
            format!("{release}_default"),
        )],
        vec![ObjectRef::new(
            format!("sec-{release}"),
            format!("{release}_key"),
        )],
        vec![ObjectRef::new(
            format!("cfg-{release}"),
            format!("{release}_conf"),
        )],
    );
    Outcome::Usage(UsageRead::new(stack, Usage::default()))
}

/// The answer to the usage read `kind`: nobody else uses anything, and
/// the manager lists the nodes asked.
fn unused_for(kind: &ActionKind) -> Outcome {
    match kind {
        ActionKind::ReadUsage { at, .. } => Outcome::unused(at),
        other => panic!("not a usage read: {other:?}"),
    }
}

/// The ids of the nodes among `at`.
fn nodes_at(at: &[Where]) -> Vec<String> {
    at.iter()
        .filter_map(Where::node_id)
        .map(str::to_owned)
        .collect()
}

fn secs(s: u64) -> Timestamp {
    Timestamp::from_epoch(Duration::from_secs(s))
}

/// Index of the first event matching `pred`.
fn first(events: &[Event], pred: impl Fn(&Event) -> bool) -> usize {
    events.iter().position(pred).unwrap_or(usize::MAX)
}

/// Index of the last event matching `pred`.
fn last(events: &[Event], pred: impl Fn(&Event) -> bool) -> Option<usize> {
    events.iter().rposition(pred)
}

fn handed(e: &Event, step: Step) -> bool {
    matches!(e, Event::Handed(_, k) if k.step() == step)
}

fn answered(e: &Event, step: Step) -> bool {
    matches!(e, Event::Answered(_, k) if k.step() == step)
}

// ----- rule 1 ---------------------------------------------------------------

#[test]
fn rule1_stack_first_then_volumes_on_every_node_then_records_last() {
    for seed in 0..SEEDS {
        for limit in [1, 3, 8] {
            let mut w = World::new(true);
            alpha3(&mut w);
            w.release(
                "alpha",
                "web",
                "shop",
                &[("n1", "data"), ("n1", "logs"), ("n2", "cache")],
            );
            let (report, run) = sweep(w, seed, limit);
            let ev = &run.events;

            let stack_done = first(ev, |e| answered(e, Step::RemoveStack));
            let first_list = first(ev, |e| handed(e, Step::ListVolumes));
            assert!(
                stack_done < first_list,
                "volumes listed before the stack went"
            );
            let records = first(ev, |e| handed(e, Step::DeleteRecords));
            let last_vol = last(ev, |e| answered(e, Step::RemoveVolume));
            let last_list = last(ev, |e| answered(e, Step::ListVolumes));
            assert!(last_vol < Some(records) && last_list < Some(records));
            // Each destructive phase starts with a re-read of the records.
            let before: Vec<Step> = run
                .handed()
                .iter()
                .filter_map(|k| match k {
                    ActionKind::ReadStamps { before, .. } => Some(*before),
                    _ => None,
                })
                .collect();
            assert_eq!(
                before,
                [Step::RemoveStack, Step::ListVolumes, Step::DeleteRecords]
            );
            // Before each removal of what another workload may use, a
            // fresh read of who uses it.
            assert!(matches!(
                run.handed().get(1),
                Some(ActionKind::ReadUsage { .. })
            ));
            assert!(matches!(
                run.handed().get(2),
                Some(ActionKind::RemoveStack { .. })
            ));
            assert_eq!(run.world.count(|k| k.step() == Step::ReadUsage), 3);
            assert!(matches!(
                run.handed().last(),
                Some(ActionKind::DeleteRecords { .. })
            ));
            // Every reached node is listed, even one that holds nothing.
            assert_eq!(run.world.count(|k| k.step() == Step::ListVolumes), 3);
            assert_eq!(run.world.count(|k| k.step() == Step::RemoveVolume), 3);

            assert!(!run.world.has_stack("alpha", "web"));
            assert!(!run.world.has_records("alpha", "web"));
            assert!(run.world.volumes("alpha", "web").is_empty());
            let r = &report.releases[0];
            assert_eq!(r.outcome, ReleaseOutcome::Deleted);
            assert_eq!(r.volumes_deleted["node-1"], ["web_data", "web_logs"]);
            assert_eq!(r.volumes_deleted["node-2"], ["web_cache"]);
            assert!(report.all_done());
        }
    }
}

#[test]
fn rule1_records_stay_when_anything_before_them_failed() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data"), ("n2", "cache")]);
        w.faults
            .list_fails
            .insert((SwarmName::new("alpha"), "n2".into()));
        let (report, run) = sweep(w, seed, 4);
        assert_eq!(run.world.count(|k| k.step() == Step::DeleteRecords), 0);
        assert!(run.world.has_records("alpha", "web"));
        assert!(!run.world.has_stack("alpha", "web"));
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::Failed);
        assert_eq!(r.volumes_deleted["node-1"], ["web_data"]);
        assert!(report.failed());
    }
}

// ----- rule 2 ---------------------------------------------------------------

#[test]
fn rule2_in_use_volume_is_retried_every_interval_until_removed() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.faults
        .in_use
        .insert((SwarmName::new("alpha"), "n1".into(), "web_data".into()), 3);
    let (report, run) = sweep(w, 7, 4);
    let attempts: Vec<Timestamp> = run
        .world
        .log
        .iter()
        .filter(|e| e.kind.step() == Step::RemoveVolume)
        .map(|e| e.at)
        .collect();
    assert_eq!(attempts, [secs(0), secs(2), secs(4), secs(6)]);
    // Each retry comes right after a read of who uses the volume now (at
    // the same instant: the model answers at once). A service created
    // while the volume waited, at 0 replicas, would hold no container, and
    // the engine would let the volume go at the next try: only a read
    // between tries sees it (see rule 13).
    let after_first: Vec<(Step, Timestamp)> = run
        .world
        .log
        .iter()
        .skip_while(|e| e.kind.step() != Step::RemoveVolume)
        .skip(1)
        .filter(|e| matches!(e.kind.step(), Step::ReadUsage | Step::RemoveVolume))
        .map(|e| (e.kind.step(), e.at))
        .collect();
    let expected: Vec<(Step, Timestamp)> = [2, 4, 6]
        .into_iter()
        .flat_map(|t| [(Step::ReadUsage, secs(t)), (Step::RemoveVolume, secs(t))])
        .collect();
    assert_eq!(after_first, expected);
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(!run.world.has_records("alpha", "web"));
}

#[test]
fn rule2_volume_in_use_past_its_deadline_fails_the_release_and_keeps_records() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data"), ("n1", "logs")]);
    w.faults.in_use.insert(
        (SwarmName::new("alpha"), "n1".into(), "web_data".into()),
        u32::MAX,
    );
    let (report, run) = sweep(w, 3, 4);
    let attempts: Vec<Timestamp> = run
        .world
        .log
        .iter()
        .filter(
            |e| matches!(&e.kind, ActionKind::RemoveVolume { volume, .. } if volume == "web_data"),
        )
        .map(|e| e.at)
        .collect();
    // Every 2 s from 0, the last try on the deadline itself.
    assert_eq!(attempts.len(), 16);
    assert_eq!(attempts.last(), Some(&secs(30)));
    assert_eq!(run.now, secs(30));
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert_eq!(r.errors.len(), 1);
    assert_eq!(r.errors[0].action, Step::RemoveVolume);
    assert_eq!(r.errors[0].node.as_deref(), Some("node-1"));
    assert_eq!(r.errors[0].volume.as_deref(), Some("web_data"));
    assert!(run.world.has_records("alpha", "web"));
    assert_eq!(run.world.volumes("alpha", "web")["n1"], ["web_data"]);
}

/// Drives a sweep by hand: the driver holds volume `b` back until 25 s, so
/// the two volumes of one release on one node are first tried 25 s apart.
#[test]
fn rule2_each_volume_has_its_own_deadline() {
    let mut w = World::new(true);
    w.swarm("alpha", &[("n1", "node-1", true)], Reach::Nodes, true);
    w.release("alpha", "web", "shop", &[("n1", "a"), ("n1", "b")]);
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let mut tries: Vec<(String, u64)> = Vec::new();

    let mut take = |sweep: &mut Sweep, t: u64| -> Option<String> {
        let action = sweep.poll_action(secs(t))?;
        let outcome = match &action.kind {
            read @ ActionKind::ReadStamps { .. } => unchanged(read),
            ActionKind::RemoveStack { .. } => Outcome::Done,
            ActionKind::ListVolumes { .. } => {
                Outcome::Volumes(vec!["web_a".into(), "web_b".into()])
            }
            ActionKind::RemoveVolume { volume, .. } => {
                tries.push((volume.clone(), t));
                // a is held for ever; b lets go at 40 s.
                if volume == "web_b" && t >= 40 {
                    Outcome::Done
                } else {
                    Outcome::in_use()
                }
            }
            ActionKind::ReadUsage { at, .. } => Outcome::unused(at),
            other => panic!("unexpected action {other:?}"),
        };
        let name = match &action.kind {
            ActionKind::RemoveVolume { volume, .. } => volume.clone(),
            _ => String::new(),
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, secs(t)), Ok(()));
        Some(name)
    };
    // Re-read, the stack's services, its tasks, its other three parts,
    // re-read, listing.
    for _ in 0..8 {
        assert_eq!(take(&mut sweep, 0).as_deref(), Some(""));
    }
    // One volume removal per poll until 24 s: always a, which sorts
    // first; each retry after a read of who uses what now.
    assert_eq!(take(&mut sweep, 0).as_deref(), Some("web_a"));
    for t in (2..=24).step_by(2) {
        assert_eq!(take(&mut sweep, t).as_deref(), Some(""));
        assert_eq!(take(&mut sweep, t).as_deref(), Some("web_a"));
    }
    // At 25 s a waits for 26 s, and b is handed out for the first time.
    assert_eq!(take(&mut sweep, 25).as_deref(), Some("web_b"));
    while let Some(t) = sweep.poll_timeout() {
        let t = t.since_epoch().as_secs();
        while take(&mut sweep, t).is_some() {}
    }
    assert!(sweep.is_done());

    let last = |v: &str| tries.iter().filter(|(n, _)| n == v).map(|(_, t)| *t).max();
    // a gave up on its own deadline (0 + 30 s); b went on past it and was
    // removed at 41 s, inside its own (25 + 30 s).
    assert_eq!(last("web_a"), Some(30));
    assert_eq!(last("web_b"), Some(41));
    let report = sweep.report();
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert_eq!(r.volumes_deleted["node-1"], ["web_b"]);
    assert_eq!(r.errors.len(), 1);
    assert_eq!(r.errors[0].volume.as_deref(), Some("web_a"));
}

/// Drives a sweep by hand: the secret is in use, and the read of who uses
/// it before its retry fails while the config's first attempt is in
/// flight; the config is then found in use too. The failed read fails the
/// secret, and must not hold back the read the config's retry waits for:
/// the sweep once stopped there, with nothing to hand out and no time to
/// wait for.
#[test]
fn rule2_a_failed_read_of_who_uses_what_holds_back_no_other_retry() {
    let mut w = World::new(false);
    w.swarm("alpha", &[("n1", "node-1", true)], Reach::Nodes, true);
    w.release("alpha", "web", "shop", &[]);
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let mut config = None;
    let mut config_tries = 0;
    // Re-read, usage read, services, tasks, usage read, then the other
    // three parts: the network goes, the secret is in use, the config is
    // left in flight.
    for _ in 0..8 {
        let action = sweep.poll_action(secs(0)).expect("an action at 0 s");
        let outcome = match &action.kind {
            read @ ActionKind::ReadStamps { .. } => unchanged(read),
            ActionKind::ReadUsage { .. } => whole_stack("web"),
            ActionKind::RemoveStack {
                part: StackPart::Secrets,
                ..
            } => Outcome::in_use(),
            ActionKind::RemoveStack {
                part: StackPart::Configs,
                ..
            } => {
                config_tries += 1;
                config = Some(action.id);
                continue;
            }
            ActionKind::RemoveStack { .. } => Outcome::Done,
            other => panic!("unexpected action {other:?}"),
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, secs(0)), Ok(()));
    }
    assert!(sweep.poll_action(secs(0)).is_none());
    // The secret's retry is due: its read goes out, and fails.
    let read = sweep.poll_action(secs(2)).expect("the secret's read");
    assert_eq!(read.kind.step(), Step::ReadUsage);
    let failed = Outcome::unreachable("manager down");
    assert_eq!(sweep.handle_outcome(read.id, failed, secs(2)), Ok(()));
    let config = config.expect("the config was handed out");
    assert_eq!(
        sweep.handle_outcome(config, Outcome::in_use(), secs(2)),
        Ok(())
    );
    // The config's retry, after a read of its own.
    let mut now = secs(2);
    while !sweep.is_done() {
        match sweep.poll_action(now) {
            Some(action) => {
                let outcome = match &action.kind {
                    ActionKind::ReadUsage { .. } => whole_stack("web"),
                    ActionKind::RemoveStack {
                        part: StackPart::Configs,
                        ..
                    } => {
                        config_tries += 1;
                        Outcome::Done
                    }
                    // Still listed: the secret's failure stands.
                    ActionKind::ListReleases { .. } => Outcome::Releases(vec!["web".into()]),
                    other => panic!("unexpected action {other:?}"),
                };
                assert_eq!(sweep.handle_outcome(action.id, outcome, now), Ok(()));
            }
            None => {
                now = sweep
                    .poll_timeout()
                    .expect("a retry to wait for: the sweep is not done");
            }
        }
    }
    assert_eq!(config_tries, 2);
    let report = sweep.report();
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert!(r
        .errors
        .iter()
        .any(|e| e.action == Step::ReadUsage && e.kind == ErrorKind::Unreachable));
    let outcome = |name: &str| {
        report
            .objects
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.outcome)
    };
    assert_eq!(outcome("web_key"), Some(ObjectOutcome::Failed));
    assert_eq!(outcome("web_conf"), Some(ObjectOutcome::Removed));
}

/// Drives a sweep by hand: `web`'s volume is in use once, and its retry
/// comes due while nothing of `web` is answered and `api` (which sorts
/// first) keeps actions outstanding, so only the retry's time coming makes
/// `web` ready again. The driver's clock also steps back once in between.
#[test]
fn rule2_a_retry_is_handed_out_when_due_while_other_releases_are_busy() {
    let mut w = World::new(true);
    w.swarm("alpha", &[("n1", "node-1", true)], Reach::Nodes, true);
    w.release("alpha", "api", "shop", &[("n1", "data")]);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let web = |a: &Action| is_release(&a.kind, "alpha", "web");

    // Take web up to its first volume removal, which finds the volume in
    // use; api's stack removal stays outstanding.
    let mut busy: Vec<Action> = Vec::new();
    loop {
        let Some(action) = sweep.poll_action(secs(0)) else {
            panic!("web never got to its volume");
        };
        if !web(&action) {
            if action.kind.step() == Step::ReadStamps {
                let outcome = unchanged(&action.kind);
                assert_eq!(sweep.handle_outcome(action.id, outcome, secs(0)), Ok(()));
            } else if action.kind.step() == Step::ReadUsage {
                let outcome = unused_for(&action.kind);
                assert_eq!(sweep.handle_outcome(action.id, outcome, secs(0)), Ok(()));
            } else {
                busy.push(action);
            }
            continue;
        }
        let (outcome, last) = match &action.kind {
            read @ ActionKind::ReadStamps { .. } => (unchanged(read), false),
            ActionKind::RemoveStack { .. } => (Outcome::Done, false),
            ActionKind::ListVolumes { .. } => (Outcome::Volumes(vec!["web_data".into()]), false),
            ActionKind::RemoveVolume { .. } => (Outcome::in_use(), true),
            ActionKind::ReadUsage { at, .. } => (Outcome::unused(at), false),
            other => panic!("unexpected action {other:?}"),
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, secs(0)), Ok(()));
        if last {
            break;
        }
    }
    assert_eq!(busy.len(), 1);
    assert_eq!(sweep.poll_action(secs(0)), None);
    assert_eq!(sweep.poll_action(secs(1)), None);
    assert_eq!(sweep.poll_timeout(), Some(secs(2)));

    // At 3 s api's stack is answered; api sorts first, so its re-read
    // before its purge comes before web's retry.
    let stack = busy.remove(0);
    assert_eq!(
        sweep.handle_outcome(stack.id, Outcome::Done, secs(3)),
        Ok(())
    );
    // The rest of api's stack, now that its services are gone.
    let listing = loop {
        let Some(action) = sweep.poll_action(secs(3)) else {
            panic!("api's re-read was not handed out");
        };
        let outcome = match action.kind.step() {
            Step::RemoveStack => Outcome::Done,
            Step::ReadUsage => unused_for(&action.kind),
            _ => break action,
        };
        assert!(!web(&action));
        assert_eq!(sweep.handle_outcome(action.id, outcome, secs(3)), Ok(()));
    };
    assert!(!web(&listing) && listing.kind.step() == Step::ReadStamps);
    // A clock stepped back to 1 s: the retry is not due there ...
    assert_eq!(sweep.poll_action(secs(1)), None);
    assert_eq!(sweep.poll_timeout(), Some(secs(2)));
    // ... and at 3 s it is, with api's listing still outstanding: first
    // the read of who uses the volume now, which waits for no time ...
    let Some(reread) = sweep.poll_action(secs(3)) else {
        panic!("web's read before its retry was not handed out");
    };
    assert!(web(&reread) && reread.kind.step() == Step::ReadUsage);
    assert_eq!(sweep.poll_action(secs(3)), None);
    assert_eq!(sweep.poll_timeout(), None);
    let outcome = unused_for(&reread.kind);
    assert_eq!(sweep.handle_outcome(reread.id, outcome, secs(3)), Ok(()));
    // ... then the retry itself.
    let Some(retry) = sweep.poll_action(secs(3)) else {
        panic!("web's retry was not handed out");
    };
    assert!(web(&retry));
    assert!(matches!(&retry.kind, ActionKind::RemoveVolume { volume, .. } if volume == "web_data"));
    assert_eq!(sweep.poll_timeout(), None);
    assert_eq!(
        sweep.handle_outcome(retry.id, Outcome::Done, secs(3)),
        Ok(())
    );

    // The rest goes as usual.
    let mut pending = vec![listing];
    while let Some(action) = pending.pop() {
        let outcome = match &action.kind {
            ActionKind::ListVolumes { .. } => Outcome::Volumes(vec!["api_data".into()]),
            read @ ActionKind::ReadStamps { .. } => unchanged(read),
            ActionKind::ReadUsage { at, .. } => Outcome::unused(at),
            _ => Outcome::Done,
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, secs(3)), Ok(()));
        while let Some(next) = sweep.poll_action(secs(3)) {
            pending.push(next);
        }
    }
    assert!(sweep.is_done());
    let report = sweep.report();
    assert!(report.all_done());
    let r = report.release(&SwarmName::new("alpha"), "web").cloned();
    let r = r.unwrap_or_else(|| panic!("web not reported"));
    assert_eq!(r.outcome, ReleaseOutcome::Deleted);
    assert_eq!(r.volumes_deleted["node-1"], ["web_data"]);
}

// ----- rule 3 ---------------------------------------------------------------

#[test]
fn rule3_every_release_is_attempted_and_failures_name_release_swarm_and_node() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.swarm(
            "beta",
            &[("b1", "beta-1", true), ("b2", "beta-2", true)],
            Reach::Nodes,
            true,
        );
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        w.release("alpha", "cache", "shop", &[("n2", "mem")]);
        w.release("beta", "web", "shop", &[("b1", "data")]);
        w.release("beta", "db", "crm", &[("b2", "pg")]);
        w.faults.stack_fails.insert(rr("alpha", "web"), u32::MAX);
        w.faults
            .vanish_after_listing
            .insert((SwarmName::new("beta"), "b2".into()));
        let (report, run) = sweep(w, seed, 3);

        for (s, r) in [
            ("alpha", "web"),
            ("alpha", "cache"),
            ("beta", "web"),
            ("beta", "db"),
        ] {
            assert!(
                run.world
                    .count(|k| k.step() == Step::RemoveStack && is_release(k, s, r))
                    >= 1,
                "{s}/{r} was not attempted"
            );
        }
        let outcome = |s: &str, r: &str| report.release(&SwarmName::new(s), r).map(|x| x.outcome);
        assert_eq!(outcome("alpha", "web"), Some(ReleaseOutcome::Failed));
        assert_eq!(outcome("alpha", "cache"), Some(ReleaseOutcome::Deleted));
        assert_eq!(outcome("beta", "web"), Some(ReleaseOutcome::Deleted));
        assert_eq!(outcome("beta", "db"), Some(ReleaseOutcome::Failed));
        let failures: Vec<(String, String, Step, Option<String>)> = report
            .failures()
            .map(|(r, e)| {
                (
                    r.swarm.to_string(),
                    r.release.clone(),
                    e.action,
                    e.node.clone(),
                )
            })
            .collect();
        assert!(failures.contains(&("alpha".into(), "web".into(), Step::RemoveStack, None)));
        assert!(failures.contains(&(
            "beta".into(),
            "db".into(),
            Step::RemoveVolume,
            Some("beta-2".into())
        )));
        assert!(run.world.has_stack("alpha", "web") && run.world.has_records("alpha", "web"));
        assert!(run.world.has_records("beta", "db"));
        assert!(!run.world.has_records("alpha", "cache") && !run.world.has_records("beta", "web"));
    }
}

// ----- rule 4 ---------------------------------------------------------------

#[test]
fn rule4_records_error_for_work_that_worked_is_overturned_by_the_relisting() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        w.release("alpha", "api", "shop", &[("n2", "data")]);
        w.faults.records_lie.insert(rr("alpha", "web"), 1);
        let (report, run) = sweep(w, seed, 4);
        assert_eq!(run.world.count(|k| k.step() == Step::ListReleases), 1);
        let r = report.release(&SwarmName::new("alpha"), "web").cloned();
        let r = r.unwrap_or_else(|| panic!("web not reported"));
        assert_eq!(r.outcome, ReleaseOutcome::Deleted);
        assert_eq!(r.remedy, None);
        assert!(!run.world.has_records("alpha", "web"));
        assert!(report.all_done());
    }
}

#[test]
fn rule4_stack_error_for_work_that_worked_is_overturned_when_listing_by_stacks() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data"), ("n3", "logs")]);
        w.faults.stack_lies.insert(rr("alpha", "web"), 1);
        w.faults.listing_by = ListingBy::Stacks;
        let (report, run) = sweep(w, seed, 4);
        assert_eq!(run.world.count(|k| k.step() == Step::ListReleases), 1);
        assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
        assert!(!run.world.has_stack("alpha", "web"));
        assert!(!run.world.has_records("alpha", "web"));
        assert!(run.world.volumes("alpha", "web").is_empty());
    }
}

#[test]
fn rule4_release_still_listed_keeps_its_failure() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.faults.stack_fails.insert(rr("alpha", "web"), u32::MAX);
    let (report, run) = sweep(w, 1, 4);
    assert_eq!(run.world.count(|k| k.step() == Step::ListReleases), 1);
    assert_eq!(run.world.count(|k| k.step() == Step::RemoveStack), 1);
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Failed);
    assert!(run.world.has_stack("alpha", "web") && run.world.has_records("alpha", "web"));
    assert_eq!(run.world.volumes("alpha", "web")["n1"], ["web_data"]);
}

#[test]
fn rule4_failed_relisting_leaves_the_failure_standing() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[]);
    w.faults.records_lie.insert(rr("alpha", "web"), 1);
    w.faults.relist_fails.insert(SwarmName::new("alpha"));
    let (report, run) = sweep(w, 1, 4);
    assert_eq!(run.world.count(|k| k.step() == Step::ListReleases), 1);
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    let steps: Vec<Step> = r.errors.iter().map(|e| e.action).collect();
    assert_eq!(steps, [Step::DeleteRecords, Step::ListReleases]);
}

#[test]
fn rule4_one_relisting_per_swarm_with_failures_after_all_its_releases_settle() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.swarm("beta", &[("b1", "beta-1", true)], Reach::Nodes, true);
        w.release("alpha", "web", "shop", &[]);
        w.release("alpha", "api", "shop", &[]);
        w.release("alpha", "slow", "shop", &[("n1", "data")]);
        w.release("beta", "web", "shop", &[("b1", "data")]);
        w.faults.stack_fails.insert(rr("alpha", "web"), 1);
        w.faults.records_fail.insert(rr("alpha", "api"), 1);
        w.faults.in_use.insert(
            (SwarmName::new("alpha"), "n1".into(), "slow_data".into()),
            5,
        );
        let (report, run) = sweep(w, seed, 3);
        let relists: Vec<&ActionKind> = run
            .handed()
            .into_iter()
            .filter(|k| k.step() == Step::ListReleases)
            .collect();
        assert_eq!(relists.len(), 1, "{relists:?}");
        assert_eq!(relists[0].swarm(), &SwarmName::new("alpha"));
        let ev = &run.events;
        let relist_at = first(ev, |e| handed(e, Step::ListReleases));
        let slow_done = last(
            ev,
            |e| matches!(e, Event::Answered(_, k) if is_release(k, "alpha", "slow")),
        );
        assert!(
            slow_done < Some(relist_at),
            "re-listed before alpha settled"
        );
        // Both failures were real and are still listed.
        assert_eq!(report.totals.failed, 2);
        assert_eq!(report.totals.deleted, 2);
    }
}

// ----- rule 5 ---------------------------------------------------------------

#[test]
fn rule5_own_stack_is_left_with_a_remedy_and_nothing_further_is_done() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "ctl", "controller", &[("n1", "state")]);
        w.release("alpha", "web", "shop", &[("n2", "data")]);
        if let Some(s) = w.swarms.get_mut(&SwarmName::new("alpha")) {
            s.own_stack = Some("ctl".into());
        }
        let (report, run) = sweep(w, seed, 4);
        let r = report.release(&SwarmName::new("alpha"), "ctl").cloned();
        let r = r.unwrap_or_else(|| panic!("ctl not reported"));
        assert_eq!(r.outcome, ReleaseOutcome::LeftOwnStack);
        assert!(r.errors.is_empty());
        assert!(r
            .remedy
            .is_some_and(|m| m.contains("remove it by hand or move the controller")));
        // Its re-reads, then the refused stack removal.
        assert_eq!(run.world.count(|k| is_release(k, "alpha", "ctl")), 3);
        assert_eq!(run.world.count(|k| k.step() == Step::ListReleases), 0);
        assert!(run.world.has_stack("alpha", "ctl") && run.world.has_records("alpha", "ctl"));
        assert_eq!(run.world.volumes("alpha", "ctl")["n1"], ["ctl_state"]);
        assert!(!report.failed());
        // Reported every sweep with its remedy, but not a failure by itself.
        assert!(report.all_done());
        assert_eq!(report.totals.left_own_stack, 1);
        assert_eq!(report.totals.deleted, 1);
    }
}

// ----- rule 6 ---------------------------------------------------------------

#[test]
fn rule6_reached_node_that_is_unreachable_fails_the_purge_and_keeps_records() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data"), ("n2", "logs")]);
        w.faults
            .unreachable
            .insert((SwarmName::new("alpha"), "n2".into()));
        let (report, run) = sweep(w, seed, 4);
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::Failed);
        assert_eq!(r.errors.len(), 1);
        // Its containers cannot be read, so nothing proves a volume of the
        // release unused on any node: none goes, on any node.
        assert_eq!(r.errors[0].action, Step::ReadUsage);
        assert_eq!(r.errors[0].kind, ErrorKind::Unreachable);
        assert!(r.errors[0].message.contains("node n2"), "{:?}", r.errors);
        assert!(run.world.has_records("alpha", "web"));
        assert!(r.volumes_deleted.is_empty());
        assert_eq!(run.world.count(|k| k.step() == Step::RemoveVolume), 0);
        // The services go; the networks, secrets and configs wait for
        // the same read (a container of no service on n2 may be attached
        // to the network), so they stay too.
        assert!(!run.world.has_part("alpha", "web", StackPart::Services));
        for part in [StackPart::Networks, StackPart::Secrets, StackPart::Configs] {
            assert!(run.world.has_part("alpha", "web", part), "{part}");
        }
        // No re-listing: it cannot tell whether a volume is gone.
        assert_eq!(run.world.count(|k| k.step() == Step::ListReleases), 0);
        assert!(report.uncovered.is_empty());
    }
}

#[test]
fn rule6_node_the_registry_did_not_list_is_reported_uncovered() {
    let mut w = World::new(true);
    w.swarm(
        "alpha",
        &[
            ("n1", "node-1", true),
            ("n2", "node-2", true),
            ("n3", "node-3", false),
        ],
        Reach::Nodes,
        true,
    );
    w.release("alpha", "web", "shop", &[("n1", "data"), ("n3", "logs")]);
    let (report, run) = sweep(w, 5, 4);
    // Nothing is ever asked of the node the registry does not list.
    let on_n3 = run
        .world
        .count(|k| matches!(k.at(), Some(Where::Node(n)) if n.id == "n3"));
    assert_eq!(on_n3, 0);
    assert_eq!(run.world.volumes("alpha", "web")["n3"], ["web_logs"]);
    assert_eq!(report.uncovered.len(), 1);
    let u = &report.uncovered[0];
    assert_eq!(u.swarm, SwarmName::new("alpha"));
    assert_eq!(u.coverage, Coverage::Partial);
    assert_eq!(u.node_count, Some(3));
    assert_eq!(u.covered, ["node-1", "node-2"]);
    assert_eq!(u.missing, Some(1));
    assert_eq!(u.releases.len(), 1);
    assert_eq!(u.releases[0].release, "web");
    assert_eq!(u.releases[0].label_filter, "com.docker.stack.namespace=web");
    assert!(!report.all_done());
}

#[test]
fn rule6_node_local_purge_covers_the_manager_and_reports_the_rest() {
    let mut w = World::new(true);
    w.swarm(
        "alpha",
        &[
            ("m1", "mgr", true),
            ("w1", "worker-1", true),
            ("w2", "worker-2", true),
        ],
        Reach::ManagerOnly,
        true,
    );
    w.release("alpha", "web", "shop", &[("m1", "data"), ("w1", "logs")]);
    let (report, run) = sweep(w, 2, 4);
    assert!(run
        .handed()
        .iter()
        .filter_map(|k| k.at())
        .all(|at| *at == Where::Manager));
    let r = &report.releases[0];
    assert_eq!(r.coverage, Coverage::NodeLocal);
    assert_eq!(r.outcome, ReleaseOutcome::Deleted);
    assert_eq!(r.volumes_deleted["(manager)"], ["web_data"]);
    assert!(!run.world.has_records("alpha", "web"));
    assert_eq!(run.world.volumes("alpha", "web")["w1"], ["web_logs"]);
    let u = &report.uncovered[0];
    assert_eq!(u.coverage, Coverage::NodeLocal);
    assert_eq!(u.covered, ["(manager)"]);
    assert_eq!(u.missing, Some(2));
    assert_eq!(u.releases[0].label_filter, "com.docker.stack.namespace=web");
    assert!(!report.all_done());
}

// ----- rule 7 ---------------------------------------------------------------

#[test]
fn rule7_purge_that_gives_up_still_lists_every_volume_deleted_by_node() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release(
            "alpha",
            "web",
            "shop",
            &[
                ("n1", "a"),
                ("n1", "b"),
                ("n2", "held"),
                ("n2", "c"),
                ("n3", "d"),
            ],
        );
        w.faults.in_use.insert(
            (SwarmName::new("alpha"), "n2".into(), "web_held".into()),
            u32::MAX,
        );
        let (report, run) = sweep(w, seed, 2);
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::Failed);
        assert_eq!(r.volumes_deleted["node-1"], ["web_a", "web_b"]);
        assert_eq!(r.volumes_deleted["node-2"], ["web_c"]);
        assert_eq!(r.volumes_deleted["node-3"], ["web_d"]);
        assert_eq!(report.totals.volumes_deleted, 4);
        assert_eq!(run.world.volumes("alpha", "web")["n2"], ["web_held"]);
        assert!(run.world.has_records("alpha", "web"));
    }
}

// ----- rule 8 ---------------------------------------------------------------

#[test]
fn rule8_nothing_is_handed_out_for_a_release_the_plan_did_not_list() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        w.release("alpha", "live", "blog", &[("n1", "data")]);
        w.live_app("blog", "alpha", &["live"]);
        w.release_stamped(
            "alpha",
            "foreign",
            Some("cd/other/shop:release/foreign".into()),
            &[("n2", "data")],
        );
        w.release_stamped("alpha", "unmanaged", None, &[("n3", "data")]);
        let (report, run) = sweep(w, seed, 4);
        let touched: Vec<String> = run
            .handed()
            .iter()
            .filter_map(|k| k.target())
            .map(|t| t.release.release.clone())
            .collect();
        assert!(touched.iter().all(|r| r == "web"), "{touched:?}");
        for other in ["live", "foreign", "unmanaged"] {
            assert!(
                run.world.has_stack("alpha", other),
                "{other} lost its stack"
            );
            assert!(run.world.has_records("alpha", other));
            assert_eq!(run.world.volumes("alpha", other).len(), 1);
        }
        assert_eq!(report.releases.len(), 1);
        assert!(report.all_done());
    }
}

#[test]
fn rule8_held_plan_hands_out_nothing_and_is_done_at_once() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.app_set_loaded = false;
    let plan = w.plan();
    assert!(plan.is_held());
    let mut sweep = Sweep::new(&plan, Settings::default());
    assert!(sweep.is_done());
    assert_eq!(sweep.poll_action(Timestamp::ZERO), None);
    assert_eq!(sweep.poll_timeout(), None);
    let report = sweep.report();
    assert!(report.held);
    assert!(report.releases.is_empty());
    assert!(!report.all_done());
}

#[test]
fn rule8_held_plan_hands_out_nothing_even_with_deletions_in_it() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    let plan = w.plan();
    assert_eq!(plan.deletions.len(), 1);
    // A plan held as a whole that still lists a deletion: nothing goes.
    let mut value = serde_json::to_value(&plan).unwrap_or_default();
    value["holds"] = serde_json::json!([{
        "scope": "sweep", "swarm": null, "reason": "blast_radius",
        "applications": [], "message": "doctored"
    }]);
    let held: SweepPlan = match serde_json::from_value(value) {
        Ok(p) => p,
        Err(e) => panic!("doctored plan does not parse: {e}"),
    };
    assert!(held.is_held());
    let mut sweep = Sweep::new(&held, Settings::default());
    assert!(sweep.is_done());
    assert_eq!(sweep.poll_action(Timestamp::ZERO), None);
}

// ----- rule 9 ---------------------------------------------------------------

fn partial_world() -> World {
    let mut w = World::new(true);
    w.swarm(
        "alpha",
        &[
            ("n1", "node-1", true),
            ("n2", "node-2", true),
            ("n3", "node-3", false),
        ],
        Reach::Nodes,
        true,
    );
    w.release("alpha", "web", "shop", &[("n1", "data"), ("n3", "logs")]);
    w
}

#[test]
fn rule9_partial_coverage_removes_stack_and_reachable_volumes_but_keeps_records() {
    for seed in 0..SEEDS {
        let (report, run) = sweep(partial_world(), seed, 4);
        let r = &report.releases[0];
        assert_eq!(r.coverage, Coverage::Partial);
        assert_eq!(r.outcome, ReleaseOutcome::PendingCoverage);
        assert!(r
            .remedy
            .as_deref()
            .is_some_and(|m| m.contains("every node")));
        assert_eq!(r.volumes_deleted["node-1"], ["web_data"]);
        assert!(!run.world.has_stack("alpha", "web"));
        assert!(run.world.has_records("alpha", "web"));
        assert_eq!(run.world.count(|k| k.step() == Step::DeleteRecords), 0);
        assert!(!report.failed());
        assert_eq!(report.totals.pending_coverage, 1);
        assert!(!report.all_done());
    }
}

#[test]
fn rule9_partial_coverage_with_an_unknown_node_count_is_pending_too() {
    let mut w = World::new(true);
    w.swarm("alpha", &[("n1", "node-1", true)], Reach::Nodes, false);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    let (report, run) = sweep(w, 1, 4);
    assert_eq!(report.releases[0].coverage, Coverage::Partial);
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::PendingCoverage);
    assert!(run.world.has_records("alpha", "web"));
    assert_eq!(report.uncovered[0].missing, None);
}

#[test]
fn rule9_complete_off_and_node_local_coverage_delete_records() {
    let cases: [(bool, Reach, Coverage); 3] = [
        (true, Reach::Nodes, Coverage::Complete),
        (false, Reach::Nodes, Coverage::Off),
        (true, Reach::ManagerOnly, Coverage::NodeLocal),
    ];
    for (purge, reach, coverage) in cases {
        let mut w = World::new(purge);
        w.swarm(
            "alpha",
            &[("n1", "node-1", true), ("n2", "node-2", true)],
            reach,
            true,
        );
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        let (report, run) = sweep(w, 4, 4);
        let r = &report.releases[0];
        assert_eq!(r.coverage, coverage);
        assert_eq!(r.outcome, ReleaseOutcome::Deleted, "{coverage:?}");
        assert!(!run.world.has_records("alpha", "web"));
        assert!(!run.world.has_stack("alpha", "web"));
        let volumes_left = !run.world.volumes("alpha", "web").is_empty();
        assert_eq!(volumes_left, !purge, "{coverage:?}");
    }
}

#[test]
fn rule9_a_later_sweep_that_reaches_every_node_finishes_the_release() {
    let (first_report, run) = sweep(partial_world(), 3, 4);
    assert_eq!(
        first_report.releases[0].outcome,
        ReleaseOutcome::PendingCoverage
    );
    let mut w = run.world;
    w.log.clear();
    if let Some(s) = w.swarms.get_mut(&SwarmName::new("alpha")) {
        for n in &mut s.nodes {
            n.listed = true;
        }
    }
    let (report, run) = sweep(w, 3, 4);
    let r = &report.releases[0];
    assert_eq!(r.coverage, Coverage::Complete);
    assert_eq!(r.outcome, ReleaseOutcome::Deleted);
    assert_eq!(r.volumes_deleted["node-3"], ["web_logs"]);
    assert!(!run.world.has_records("alpha", "web"));
    assert!(run.world.volumes("alpha", "web").is_empty());
    assert!(report.all_done());
}

// ----- retries across sweeps ---------------------------------------------

#[test]
fn a_stack_error_for_work_that_worked_is_finished_by_the_next_sweep() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.faults.stack_lies.insert(rr("alpha", "web"), 1);
    let (report, run) = sweep(w, 1, 4);
    // Listed by records, the release is still there: the failure stands.
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Failed);
    assert!(run.world.has_records("alpha", "web"));
    let (report, run) = sweep(run.world, 1, 4);
    // The stack is gone, which is success, and the rest follows.
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(report.releases[0].errors.is_empty());
    assert!(!run.world.has_records("alpha", "web"));
    assert!(run.world.volumes("alpha", "web").is_empty());
}

// ----- protocol -------------------------------------------------------------

#[test]
fn unknown_and_repeated_ids_are_typed_errors_that_change_nothing() {
    let mut w = World::new(false);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[]);
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let t = Timestamp::ZERO;
    assert_eq!(
        sweep.handle_outcome(ActionId(0), Outcome::Done, t),
        Err(SweepError::UnknownAction(ActionId(0)))
    );
    let Some(read) = sweep.poll_action(t) else {
        panic!("no action");
    };
    // A re-read answered `Done` carries no stamps: refused, not taken
    // as "still ours".
    assert_eq!(
        sweep.handle_outcome(read.id, Outcome::Done, t),
        Err(SweepError::OutcomeMismatch {
            id: read.id,
            action: Step::ReadStamps,
            outcome: "done"
        })
    );
    let outcome = unchanged(&read.kind);
    assert_eq!(sweep.handle_outcome(read.id, outcome, t), Ok(()));
    let Some(usage) = sweep.poll_action(t) else {
        panic!("no usage read");
    };
    // A usage read answered `Done` says nothing of who uses what.
    assert_eq!(
        sweep.handle_outcome(usage.id, Outcome::Done, t),
        Err(SweepError::OutcomeMismatch {
            id: usage.id,
            action: Step::ReadUsage,
            outcome: "done"
        })
    );
    assert_eq!(
        sweep.handle_outcome(usage.id, whole_stack("web"), t),
        Ok(())
    );
    let Some(stack) = sweep.poll_action(t) else {
        panic!("no action");
    };
    assert_eq!(
        sweep.handle_outcome(stack.id, Outcome::Stamps(vec![]), t),
        Err(SweepError::OutcomeMismatch {
            id: stack.id,
            action: Step::RemoveStack,
            outcome: "stamps"
        })
    );
    assert_eq!(
        sweep.handle_outcome(stack.id, Outcome::Volumes(vec![]), t),
        Err(SweepError::OutcomeMismatch {
            id: stack.id,
            action: Step::RemoveStack,
            outcome: "volumes"
        })
    );
    assert_eq!(sweep.outstanding(), 1);
    assert_eq!(sweep.handle_outcome(stack.id, Outcome::Done, t), Ok(()));
    assert_eq!(
        sweep.handle_outcome(stack.id, Outcome::Done, t),
        Err(SweepError::AlreadyAnswered(stack.id))
    );
    assert_eq!(
        sweep.handle_outcome(ActionId(99), Outcome::Done, t),
        Err(SweepError::UnknownAction(ActionId(99)))
    );
    // The stack's other parts go once its services are gone and its
    // tasks have stopped, after a fresh read of who uses them.
    let Some(tasks) = sweep.poll_action(t) else {
        panic!("no wait for the tasks");
    };
    assert_eq!(tasks.kind.part(), Some(StackPart::Tasks));
    assert_eq!(sweep.handle_outcome(tasks.id, Outcome::Done, t), Ok(()));
    let Some(usage) = sweep.poll_action(t) else {
        panic!("no usage read before the other parts");
    };
    assert_eq!(usage.kind.step(), Step::ReadUsage);
    assert_eq!(
        sweep.handle_outcome(usage.id, whole_stack("web"), t),
        Ok(())
    );
    for _ in 0..3 {
        let Some(part) = sweep.poll_action(t) else {
            panic!("no stack part");
        };
        assert_eq!(part.kind.step(), Step::RemoveStack);
        assert_eq!(sweep.handle_outcome(part.id, Outcome::Done, t), Ok(()));
    }
    let Some(read) = sweep.poll_action(t) else {
        panic!("no re-read before the records");
    };
    assert!(matches!(
        read.kind,
        ActionKind::ReadStamps {
            before: Step::DeleteRecords,
            ..
        }
    ));
    let outcome = unchanged(&read.kind);
    assert_eq!(sweep.handle_outcome(read.id, outcome, t), Ok(()));
    let Some(records) = sweep.poll_action(t) else {
        panic!("no records action");
    };
    assert_eq!(records.kind.step(), Step::DeleteRecords);
}

#[test]
fn a_sweep_stopped_half_way_reports_the_unfinished_release_failed() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let _stack = sweep.poll_action(Timestamp::ZERO);
    assert!(!sweep.is_done());
    let report = sweep.report();
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Failed);
    assert!(report.releases[0].errors[0]
        .message
        .contains("ended before"));
}

#[test]
fn nodes_sharing_a_hostname_are_told_apart_by_id() {
    let mut w = World::new(true);
    w.swarm(
        "alpha",
        &[("n1", "worker", true), ("n2", "worker", true)],
        Reach::Nodes,
        true,
    );
    w.release("alpha", "web", "shop", &[("n1", "a"), ("n2", "b")]);
    let (report, _) = sweep(w, 1, 4);
    let r = &report.releases[0];
    assert_eq!(r.volumes_deleted["worker (n1)"], ["web_a"]);
    assert_eq!(r.volumes_deleted["worker (n2)"], ["web_b"]);
}

#[test]
fn the_same_release_name_on_two_swarms_is_two_releases() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.swarm("beta", &[("b1", "beta-1", true)], Reach::Nodes, true);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.release("beta", "web", "shop", &[("b1", "data")]);
    w.faults.stack_fails.insert(rr("beta", "web"), u32::MAX);
    let (report, run) = sweep(w, 9, 4);
    let outcome = |s: &str| report.release(&SwarmName::new(s), "web").map(|r| r.outcome);
    assert_eq!(outcome("alpha"), Some(ReleaseOutcome::Deleted));
    assert_eq!(outcome("beta"), Some(ReleaseOutcome::Failed));
    assert!(!run.world.has_records("alpha", "web"));
    assert!(run.world.has_records("beta", "web"));
    assert_eq!(run.world.volumes("beta", "web")["b1"], ["web_data"]);
}

#[test]
fn a_run_that_never_converges_is_caught_as_livelock() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.faults.in_use.insert(
        (SwarmName::new("alpha"), "n1".into(), "web_data".into()),
        u32::MAX,
    );
    let mut run = Run::new(w, Settings::default(), 1, 1).with_max_steps(5);
    assert!(matches!(
        run.drive(),
        Err(harness::DriveError::Livelock { .. })
    ));
}

// ----- rule 10: the stamp re-check -----------------------------------------
//
// The plan was made from a snapshot. Before each destructive phase (stack,
// purge, records) the sweep re-reads the release's records under every name
// of its cluster and judges them by the planner's own rule: a release no
// longer this controller's for the planned application is left alone, with
// a typed reason, and nothing more of it is removed.

/// `web` of the departed `shop` on `alpha`, with volumes on two nodes.
fn restamp_world() -> World {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data"), ("n2", "logs")]);
    w
}

/// Runs `w` with `to` scheduled before `web`'s re-read `nth` (0: before the
/// stack, 1: before the purge, 2: before the records) and checks that
/// `web` is left alone with `change`.
fn left_alone(to: NewStamp, nth: u32, change: StampChange) -> (SweepReport, Run) {
    let mut w = restamp_world();
    w.restamp("alpha", "web", nth, to.clone());
    let mut run = Run::new(w, Settings::default(), u64::from(nth), 3);
    // `finish` also fails on any removal after the change.
    let report = run.finish();
    let r = &report.releases[0];
    assert_eq!(
        r.outcome,
        ReleaseOutcome::Failed,
        "{to:?} before read {nth}"
    );
    let errors: Vec<_> = r.errors.iter().filter(|e| e.stamp.is_some()).collect();
    assert_eq!(errors.len(), 1, "{:?}", r.errors);
    assert_eq!(errors[0].action, Step::ReadStamps);
    assert_eq!(errors[0].stamp, Some(change), "{to:?}: {:?}", errors[0]);
    assert!(r
        .remedy
        .as_deref()
        .is_some_and(|m| m.contains("changed since the plan")));
    assert_eq!(report.stamp_changes().count(), 1);
    // Records are never deleted by the sweep after the change.
    if to != NewStamp::Remove {
        assert!(run.world.has_records("alpha", "web"));
    }
    assert_eq!(run.world.count(|k| k.step() == Step::DeleteRecords), 0);
    // Before the stack: nothing at all was removed.
    if nth == 0 {
        assert!(run.world.has_stack("alpha", "web"));
        assert_eq!(run.world.volumes("alpha", "web").len(), 2);
        assert_eq!(run.world.count(|k| k.step() == Step::RemoveStack), 0);
    }
    // Before the purge: the volumes stay.
    if nth == 1 {
        assert_eq!(run.world.volumes("alpha", "web").len(), 2);
        assert_eq!(run.world.count(|k| k.step() == Step::ListVolumes), 0);
    }
    (report, run)
}

#[test]
fn rule10_restamped_to_another_application_is_left_alone() {
    for nth in 0..3 {
        let to = NewStamp::Stamp(format!("cd/{CONTROLLER}/blog:release/web"));
        let (report, run) = left_alone(to, nth, StampChange::OtherApplication);
        let e = &report.releases[0].errors[0];
        assert_eq!(
            (e.kind, e.stamp),
            (ErrorKind::StampChanged, Some(StampChange::OtherApplication)),
            "{e:?}"
        );
        assert_eq!(
            run.world.stamp("alpha", "web").as_deref(),
            Some("cd/cd1/blog:release/web")
        );
    }
}

#[test]
fn rule10_redeployed_since_the_plan_is_left_alone_with_its_new_stack() {
    for nth in 0..3 {
        let (_, run) = left_alone(
            NewStamp::Redeploy("blog".into()),
            nth,
            StampChange::OtherApplication,
        );
        // The redeployed stack stands, whatever phase it came back in.
        assert!(run.world.has_stack("alpha", "web"));
    }
}

#[test]
fn rule10_restamped_to_another_controller_is_left_alone() {
    for nth in 0..3 {
        let to = NewStamp::Stamp("cd/cd2/shop:release/web".into());
        left_alone(to, nth, StampChange::OtherController);
        let to = NewStamp::Stamp("helm/shop".into());
        left_alone(to, nth, StampChange::OtherController);
    }
}

#[test]
fn rule10_malformed_stamp_is_left_alone() {
    for nth in 0..3 {
        // Our prefix, but copied from another release.
        let to = NewStamp::Stamp(format!("cd/{CONTROLLER}/shop:release/api"));
        left_alone(to, nth, StampChange::Malformed);
    }
}

#[test]
fn rule10_stamp_removed_is_left_alone() {
    for nth in 0..3 {
        left_alone(NewStamp::Stamp(String::new()), nth, StampChange::Unmanaged);
    }
}

#[test]
fn rule10_records_gone_since_the_plan_is_left_alone() {
    for nth in 0..3 {
        let (report, run) = left_alone(NewStamp::Remove, nth, StampChange::RecordsGone);
        assert!(!run.world.has_records("alpha", "web"));
        assert!(!report.all_done());
    }
}

#[test]
fn rule10_unreadable_records_are_left_alone() {
    let mut w = restamp_world();
    w.faults.read_fails.insert(rr("alpha", "web"));
    let (report, run) = sweep(w, 0, 3);
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert_eq!(r.errors[0].stamp, Some(StampChange::Unreadable));
    assert_eq!(r.errors[0].action, Step::ReadStamps);
    assert!(run.world.has_stack("alpha", "web") && run.world.has_records("alpha", "web"));
    assert_eq!(run.world.count(|k| k.step() == Step::RemoveStack), 0);
}

#[test]
fn rule10_unchanged_release_proceeds_and_is_read_before_each_phase() {
    for seed in 0..SEEDS {
        let (report, run) = sweep(restamp_world(), seed, 4);
        assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
        assert!(report.releases[0].errors.is_empty());
        assert_eq!(report.stamp_changes().count(), 0);
        assert_eq!(run.world.count(|k| k.step() == Step::ReadStamps), 3);
        assert!(!run.world.has_records("alpha", "web"));
        // No `stamp` field in JSON where nothing changed.
        assert!(!report.to_json_pretty().contains("\"stamp\""));
    }
}

#[test]
fn rule10_the_typed_reason_is_in_json_and_text() {
    let to = NewStamp::Stamp("cd/cd2/shop:release/web".into());
    let (report, _) = left_alone(to, 0, StampChange::OtherController);
    let json = report.to_json_pretty();
    assert!(json.contains("\"action\": \"read_stamps\""), "{json}");
    assert!(json.contains("\"stamp\": \"other_controller\""), "{json}");
    let back: SweepReport = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, report);
    let text = sweep_core::report_text(&report);
    assert!(
        text.contains("error in read_stamps [stamp other_controller]"),
        "{text}"
    );
}

/// `alpha` and `alpha2` are one cluster (`A`); each name keeps its own
/// copy of the records, like two reads at different moments.
fn cluster_world() -> World {
    let mut w = World::new(false);
    for name in ["alpha", "alpha2"] {
        w.swarm(name, &[("n1", "node-1", true)], Reach::Nodes, true);
        w.cluster(name, "A");
        w.release(name, "web", "shop", &[]);
    }
    w
}

#[test]
fn rule10_names_of_one_cluster_disagreeing_leave_the_release_alone() {
    for nth in 0..2 {
        let mut w = cluster_world();
        let to = NewStamp::Stamp(format!("cd/{CONTROLLER}/blog:release/web"));
        w.restamp_under("alpha", "web", nth, "alpha2", to);
        let (report, run) = sweep(w, u64::from(nth), 2);
        assert_eq!(report.releases.len(), 1, "planned once for the cluster");
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::Failed);
        assert_eq!(r.errors[0].stamp, Some(StampChange::NamesDisagree));
        assert!(run.world.has_records("alpha", "web"));
        if nth == 0 {
            assert!(run.world.has_stack("alpha", "web"));
        }
        // Every name of the cluster was asked.
        let asked: Vec<Vec<SwarmName>> = run
            .handed()
            .iter()
            .filter_map(|k| match k {
                ActionKind::ReadStamps { target, .. } => Some(target.names.clone()),
                _ => None,
            })
            .collect();
        assert!(asked
            .iter()
            .all(|n| n == &[SwarmName::new("alpha"), SwarmName::new("alpha2")]));
    }
}

#[test]
fn rule10_names_of_one_cluster_agreeing_let_the_release_go() {
    let (report, run) = sweep(cluster_world(), 0, 2);
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(!run.world.has_records("alpha", "web"));
}

#[test]
fn rule10_a_read_missing_a_name_is_unreadable() {
    let w = cluster_world();
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let t = Timestamp::ZERO;
    let Some(read) = sweep.poll_action(t) else {
        panic!("no re-read");
    };
    // Only `alpha` answered: `alpha2` might show anything.
    let stamp = format!("cd/{CONTROLLER}/shop:release/web");
    let outcome = Outcome::same_stamps(&[SwarmName::new("alpha")], "web", Some(&stamp));
    assert_eq!(sweep.handle_outcome(read.id, outcome, t), Ok(()));
    assert_eq!(sweep.poll_action(t), None);
    assert!(sweep.is_done());
    let report = sweep.report();
    assert_eq!(
        report.releases[0].errors[0].stamp,
        Some(StampChange::Unreadable)
    );
}

#[test]
fn rule10_records_found_gone_on_the_retry_after_a_relisting_are_deleted() {
    // The records step reports an error for work that worked; the
    // re-listing no longer lists the release, the retry's re-read finds
    // the records gone: its own first attempt took them.
    let mut w = restamp_world();
    w.faults.records_lie.insert(rr("alpha", "web"), 1);
    let (report, run) = sweep(w, 0, 3);
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert_eq!(report.stamp_changes().count(), 0);
    assert_eq!(run.world.count(|k| k.step() == Step::DeleteRecords), 1);
}

// ----- rule 11: the stack goes part by part, services first -------------------

/// The stack's parts as the world saw them removed, in order.
fn parts_removed(run: &Run, swarm: &str, release: &str) -> Vec<(Timestamp, StackPart)> {
    run.world
        .log
        .iter()
        .filter(|e| is_release(&e.kind, swarm, release))
        .filter_map(|e| e.kind.part().map(|p| (e.at, p)))
        .collect()
}

#[test]
fn rule11_services_go_first_and_alone_then_their_tasks_stop_then_the_other_parts() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        let (report, run) = sweep(w, seed, 4);
        let parts = parts_removed(&run, "alpha", "web");
        assert_eq!(parts.len(), 5, "seed {seed}: {parts:?}");
        assert_eq!(parts[0].1, StackPart::Services, "seed {seed}");
        assert_eq!(parts[1].1, StackPart::Tasks, "seed {seed}");
        let rest: std::collections::BTreeSet<StackPart> = parts[2..].iter().map(|p| p.1).collect();
        assert_eq!(rest.len(), 3, "seed {seed}");
        // The purge starts after the whole stack is gone: the world's
        // violation check would have caught a volume action before.
        assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
        assert!(!run.world.has_stack("alpha", "web"));
    }
}

#[test]
fn rule11_a_network_in_use_is_retried_by_the_sweep_policy_until_free() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.faults
        .part_in_use
        .insert((rr("alpha", "web"), StackPart::Networks), 2);
    let (report, run) = sweep(w, 5, 1);
    let tries: Vec<Timestamp> = parts_removed(&run, "alpha", "web")
        .into_iter()
        .filter(|(_, p)| *p == StackPart::Networks)
        .map(|(t, _)| t)
        .collect();
    assert_eq!(tries, [secs(0), secs(2), secs(4)]);
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Deleted);
    assert!(report.releases[0].errors.is_empty());
}

#[test]
fn rule11_a_network_in_use_past_its_deadline_fails_the_release_with_a_typed_error() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    w.faults
        .part_in_use
        .insert((rr("alpha", "web"), StackPart::Networks), u32::MAX);
    let (report, run) = sweep(w, 5, 2);
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    let stack_errors: Vec<_> = r
        .errors
        .iter()
        .filter(|e| e.action == Step::RemoveStack)
        .collect();
    assert_eq!(stack_errors.len(), 1, "{:?}", r.errors);
    assert_eq!(stack_errors[0].part, Some(StackPart::Networks));
    assert_eq!(stack_errors[0].kind, ErrorKind::InUse);
    // Records and volumes stay for the next sweep.
    assert!(run.world.has_records("alpha", "web"));
    assert_eq!(run.world.volumes("alpha", "web")["n1"], ["web_data"]);
    // The other parts were not held up by the network.
    let gone: Vec<StackPart> = parts_removed(&run, "alpha", "web")
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    assert!(gone.contains(&StackPart::Secrets) && gone.contains(&StackPart::Configs));
}

// ----- rule 12: engine events wake what waits, and nothing else ---------------

/// Drives `web`'s sweep by hand to its first volume removal, answered in
/// use at 0 s; returns the sweep with the retry waiting.
fn volume_waiting(node: &str) -> Sweep {
    let mut w = World::new(true);
    w.swarm(
        "alpha",
        &[("n1", "node-1", true), ("n2", "node-2", true)],
        Reach::Nodes,
        true,
    );
    w.release("alpha", "web", "shop", &[(node, "data")]);
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let mut tried = false;
    while let Some(action) = sweep.poll_action(secs(0)) {
        let outcome = match &action.kind {
            read @ ActionKind::ReadStamps { .. } => unchanged(read),
            ActionKind::RemoveStack { .. } => Outcome::Done,
            ActionKind::ListVolumes { at, .. } if at.node_id() == Some(node) => {
                Outcome::Volumes(vec!["web_data".into()])
            }
            ActionKind::ListVolumes { .. } => Outcome::Volumes(vec![]),
            ActionKind::RemoveVolume { .. } => {
                tried = true;
                Outcome::in_use()
            }
            ActionKind::ReadUsage { at, .. } => Outcome::unused(at),
            other => panic!("unexpected action {other:?}"),
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, secs(0)), Ok(()));
    }
    assert!(tried, "web never got to its volume");
    sweep
}

#[test]
fn rule12_a_container_gone_on_the_volume_s_node_makes_its_retry_due_at_once() {
    let mut sweep = volume_waiting("n1");
    let at = Timestamp::from_millis(300);
    assert_eq!(sweep.poll_action(at), None);
    assert_eq!(sweep.poll_timeout(), Some(secs(2)));
    sweep.handle_event(
        SweepEvent::container_gone(SwarmName::new("alpha"), Some("n1".into()), "web"),
        at,
    );
    let Some(reread) = sweep.poll_action(at) else {
        panic!("the event did not wake the volume");
    };
    // Who uses the volume now, then the retry.
    assert_eq!(reread.kind.step(), Step::ReadUsage);
    let outcome = Outcome::Usage(Default::default());
    assert_eq!(sweep.handle_outcome(reread.id, outcome, at), Ok(()));
    let Some(retry) = sweep.poll_action(at) else {
        panic!("the read did not let the retry go");
    };
    assert!(matches!(&retry.kind, ActionKind::RemoveVolume { volume, .. } if volume == "web_data"));
    assert_eq!(sweep.poll_timeout(), None);
}

#[test]
fn rule12_events_of_another_node_release_or_swarm_wake_nothing() {
    let mut sweep = volume_waiting("n1");
    let at = Timestamp::from_millis(300);
    for event in [
        SweepEvent::container_gone(SwarmName::new("alpha"), Some("n2".into()), "web"),
        SweepEvent::container_gone(SwarmName::new("alpha"), Some("n1".into()), "api"),
        SweepEvent::container_gone(SwarmName::new("beta"), Some("n1".into()), "web"),
    ] {
        sweep.handle_event(event, at);
        assert_eq!(sweep.poll_action(at), None);
        assert_eq!(sweep.poll_timeout(), Some(secs(2)));
    }
}

#[test]
fn rule12_events_never_extend_a_settle_deadline() {
    let mut sweep = volume_waiting("n1");
    // Woken again and again, and in use every time: given up at the
    // volume's own deadline (0 + 30 s) all the same.
    let mut t = 0;
    while t <= 40_000 {
        let now = Timestamp::from_millis(t);
        sweep.handle_event(
            SweepEvent::container_gone(SwarmName::new("alpha"), None, "web"),
            now,
        );
        while let Some(action) = sweep.poll_action(now) {
            let outcome = match &action.kind {
                ActionKind::RemoveVolume { .. } => Outcome::in_use(),
                ActionKind::ReadUsage { at, .. } => Outcome::unused(at),
                other => panic!("unexpected action {other:?}"),
            };
            assert_eq!(sweep.handle_outcome(action.id, outcome, now), Ok(()));
        }
        t += 700;
    }
    assert!(sweep.is_done());
    let report = sweep.report();
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::Failed);
    assert_eq!(report.releases[0].errors[0].kind, ErrorKind::InUse);
}

// ----- rule 13 --------------------------------------------------------------

#[test]
fn rule13_what_another_service_names_stays_and_keeps_the_records() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        // A service created after the plan names web's network and config.
        w.faults.shared.insert(
            rr("alpha", "web"),
            [StackPart::Networks, StackPart::Configs].into(),
        );
        let (report, run) = sweep(w, seed, 4);
        assert!(
            run.world.violations.is_empty(),
            "{:?}",
            run.world.violations
        );
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::InUse);
        let kept: Vec<(&str, &str, &str)> = r
            .in_use_by
            .iter()
            .map(|u| (u.kind.as_str(), u.object.as_str(), u.user.name.as_str()))
            .collect();
        assert_eq!(
            kept,
            [
                ("network", "web_networks", "other_app"),
                ("config", "web_configs", "other_app")
            ]
        );
        // Everything nobody else uses went; the rest and the records stay.
        let left = &run.world.swarms[&SwarmName::new("alpha")].stacks["web"];
        assert_eq!(
            left.iter().copied().collect::<Vec<_>>(),
            [StackPart::Networks, StackPart::Configs]
        );
        assert!(run.world.has_records("alpha", "web"));
        assert!(run.world.volumes("alpha", "web").is_empty());
        assert_eq!(report.totals.in_use, 1);
        assert!(!report.all_done());
        assert!(r
            .remedy
            .as_deref()
            .is_some_and(|m| m.contains("another workload")));
    }
}

#[test]
fn rule13_a_volume_another_container_uses_stays_on_every_node() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release(
            "alpha",
            "web",
            "shop",
            &[("n1", "data"), ("n2", "data"), ("n3", "logs")],
        );
        w.faults
            .shared_volumes
            .insert((SwarmName::new("alpha"), "web_data".into()));
        let (report, run) = sweep(w, seed, 4);
        assert!(
            run.world.violations.is_empty(),
            "{:?}",
            run.world.violations
        );
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::InUse);
        assert_eq!(r.in_use_by.len(), 1);
        assert_eq!(r.in_use_by[0].object, "web_data");
        assert_eq!(r.in_use_by[0].user.node.as_deref(), Some("n1"));
        let left = run.world.volumes("alpha", "web");
        assert_eq!(left["n1"], ["web_data"]);
        assert_eq!(left["n2"], ["web_data"]);
        assert!(!left.contains_key("n3"));
        assert_eq!(r.volumes_deleted["node-3"], ["web_logs"]);
        assert!(run.world.has_records("alpha", "web"));
        assert!(!run.world.has_stack("alpha", "web"));
    }
}

/// Drives `sweep` at time zero with every re-read finding `stack` and no
/// other workload, every step succeeding; what each stack step removed.
fn removing_what_is_read(sweep: &mut Sweep, stack: &StackObjects) -> Vec<(StackPart, Vec<String>)> {
    removing_what_is_read_listing(sweep, stack, |at| Some(nodes_at(at)))
}

/// `web`'s stack as read: a service, an attachable network and one that is
/// not.
fn debug_and_front() -> StackObjects {
    StackObjects::new(
        vec![ServiceEntry::new("svc-web", "web_web", 1)],
        vec![
            ObjectRef::new("n-debug", "web_debug").with_attachable(true),
            ObjectRef::new("n-front", "web_front"),
        ],
        vec![],
        vec![],
    )
}

/// The names each removal of networks among `removed` took.
fn networks_removed(removed: &[(StackPart, Vec<String>)]) -> Vec<&Vec<String>> {
    removed
        .iter()
        .filter(|(part, _)| *part == StackPart::Networks)
        .map(|(_, names)| names)
        .collect()
}

/// [`removing_what_is_read`] with the manager's node list at each re-read
/// by `nodes` (of the places asked; `None`: not read).
fn removing_what_is_read_listing(
    sweep: &mut Sweep,
    stack: &StackObjects,
    nodes: impl Fn(&[Where]) -> Option<Vec<String>>,
) -> Vec<(StackPart, Vec<String>)> {
    let t = Timestamp::ZERO;
    let mut removed = Vec::new();
    while let Some(action) = sweep.poll_action(t) {
        let outcome = match &action.kind {
            read @ ActionKind::ReadStamps { .. } => unchanged(read),
            ActionKind::ReadUsage { at, .. } => {
                let mut read = UsageRead::new(stack.clone(), Usage::default());
                read.nodes = nodes(at);
                Outcome::Usage(read)
            }
            ActionKind::RemoveStack { part, objects, .. } => {
                removed.push((*part, objects.iter().map(|o| o.name.clone()).collect()));
                Outcome::Done
            }
            ActionKind::DeleteRecords { .. } => Outcome::Done,
            other => panic!("unexpected action {other:?}"),
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, t), Ok(()));
    }
    removed
}

#[test]
fn rule13_a_use_the_plan_saw_keeps_the_object_though_its_user_left_since() {
    let mut w = World::new(false);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[]);
    let mut plan = w.plan();
    // The plan found web's network shared; by the time of the sweep the
    // user is gone. What was reviewed must not widen.
    let shared = sweep_core::usage::InUse::new(
        sweep_core::usage::ObjectKind::Network,
        "web_networks",
        sweep_core::usage::User::service("svc-other", "other_app"),
    );
    plan.deletions[0].in_use_by = vec![shared];
    let mut sweep = Sweep::new(&plan, Settings::default());
    let stack = StackObjects::new(
        vec![ServiceEntry::new("svc-web", "web_web", 1)],
        vec![ObjectRef::new("networks-web", "web_networks")],
        vec![],
        vec![ObjectRef::new("configs-web", "web_configs")],
    );
    let removed = removing_what_is_read(&mut sweep, &stack);
    assert_eq!(
        removed,
        [
            (StackPart::Services, vec!["web_web".to_owned()]),
            (StackPart::Tasks, vec![]),
            (StackPart::Configs, vec!["web_configs".to_owned()]),
        ]
    );
    let report = sweep.report();
    assert_eq!(report.releases[0].outcome, ReleaseOutcome::InUse);
    assert_eq!(report.releases[0].in_use_by[0].object, "web_networks");
}

/// A plan that listed no objects of the release (its names saw it
/// differently) found no unseen user of its networks: the sweep's re-read
/// keeps an attachable one all the same while some node's containers were
/// not read, as the planner would, and removes it once every node was.
#[test]
fn rule13_an_attachable_network_stays_where_a_node_s_containers_were_not_read() {
    for every_node_read in [false, true] {
        let mut w = World::new(false);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[]);
        let mut plan = w.plan();
        plan.deletions[0].objects = None;
        plan.deletions[0].in_use_by = Vec::new();
        for swarm in &mut plan.swarms {
            swarm.every_node_read = every_node_read;
        }
        let mut sweep = Sweep::new(&plan, Settings::default());
        let stack = debug_and_front();
        let removed = removing_what_is_read(&mut sweep, &stack);
        let networks = networks_removed(&removed);
        let report = sweep.report();
        let r = &report.releases[0];
        if every_node_read {
            assert_eq!(
                networks,
                [&vec!["web_debug".to_owned(), "web_front".to_owned()]]
            );
            assert_eq!(r.outcome, ReleaseOutcome::Deleted, "{r:?}");
        } else {
            assert_eq!(networks, [&vec!["web_front".to_owned()]]);
            assert_eq!(r.outcome, ReleaseOutcome::InUse, "{r:?}");
            assert_eq!(r.in_use_by.len(), 1, "{:?}", r.in_use_by);
            assert_eq!(r.in_use_by[0].object, "web_debug");
            assert_eq!(r.in_use_by[0].user.kind.as_str(), "unseen");
        }
    }
}

/// A node that joined since the plan was never read: from the first
/// re-read whose node list names it (or that could not list the nodes),
/// an attachable network stays, as if the plan had not read every node,
/// and the report says why.
#[test]
fn rule13_an_attachable_network_stays_once_a_node_joined_since_the_plan() {
    type Listing = fn(&[Where]) -> Option<Vec<String>>;
    let joined: Listing = |at| {
        let mut ids = nodes_at(at);
        ids.push("n4".to_owned());
        Some(ids)
    };
    let unread: Listing = |_| None;
    let left: Listing = |_| Some(vec!["n1".to_owned()]);
    for (case, listing, kept) in [
        ("joined", joined, true),
        ("unread", unread, true),
        ("a node left", left, false),
    ] {
        let mut w = World::new(false);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[]);
        let plan = w.plan();
        assert!(plan.swarms[0].every_node_read, "{case}");
        let mut sweep = Sweep::new(&plan, Settings::default());
        let stack = debug_and_front();
        let removed = removing_what_is_read_listing(&mut sweep, &stack, listing);
        let networks = networks_removed(&removed);
        let report = sweep.report();
        let r = &report.releases[0];
        if kept {
            assert_eq!(networks, [&vec!["web_front".to_owned()]], "{case}");
            assert_eq!(r.outcome, ReleaseOutcome::InUse, "{case}: {r:?}");
            assert_eq!(r.in_use_by[0].object, "web_debug", "{case}");
            assert_eq!(r.in_use_by[0].user.kind.as_str(), "unseen", "{case}");
            // Only a read without a node list is a driver's error.
            let said = r
                .errors
                .iter()
                .any(|e| e.action == Step::ReadUsage && e.message.contains("no node list"));
            assert_eq!(said, case == "unread", "{case}: {:?}", r.errors);
        } else {
            assert_eq!(
                networks,
                [&vec!["web_debug".to_owned(), "web_front".to_owned()]],
                "{case}"
            );
            assert_eq!(r.outcome, ReleaseOutcome::Deleted, "{case}: {r:?}");
            assert!(r.errors.is_empty(), "{case}: {:?}", r.errors);
        }
    }
}

/// A purge the plan found complete is complete no more once a node
/// joined: a global task of the release may have left its volume there.
/// The volumes on the nodes the plan read go, the records stay
/// (`pending_coverage`), and the report's uncovered entry names the new
/// node.
#[test]
fn rule1_a_node_joined_since_the_plan_keeps_a_purge_s_records() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data"), ("n2", "data")]);
    w.faults
        .joined
        .insert(SwarmName::new("alpha"), ["web".to_owned()].into());
    let plan = w.plan();
    assert_eq!(plan.deletions[0].volumes, Coverage::Complete);
    let (report, run) = sweep(w, 7, 4);
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::PendingCoverage, "{r:?}");
    assert_eq!(r.coverage, Coverage::Partial);
    assert!(run.world.has_records("alpha", "web"));
    assert!(run
        .world
        .reached_volumes(&SwarmName::new("alpha"), "web")
        .is_empty());
    assert!(!run.world.has_stack("alpha", "web"));
    let uncovered = &report.uncovered;
    assert_eq!(uncovered.len(), 1, "{uncovered:?}");
    assert_eq!(
        uncovered[0].unreached,
        Some(vec!["alpha-joined".to_owned()])
    );
    assert_eq!(uncovered[0].missing, Some(1));
    assert_eq!(uncovered[0].releases[0].release, "web");
    assert!(!report.all_done());
}

#[test]
fn rule13_an_object_labelled_since_the_plan_is_not_removed_on_its_word() {
    let mut w = World::new(false);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[]);
    let mut plan = w.plan();
    plan.deletions[0].objects = Some(StackObjects::new(
        vec![ServiceEntry::new("svc-web", "web_web", 1)],
        vec![ObjectRef::new("networks-web", "web_networks")],
        vec![],
        vec![],
    ));
    let mut sweep = Sweep::new(&plan, Settings::default());
    let t = Timestamp::ZERO;
    let mut removed: Vec<String> = Vec::new();
    while let Some(action) = sweep.poll_action(t) {
        let outcome = match &action.kind {
            read @ ActionKind::ReadStamps { .. } => unchanged(read),
            ActionKind::ReadUsage { .. } => {
                // A second network carries the stack's label since.
                let stack = StackObjects::new(
                    vec![],
                    vec![
                        ObjectRef::new("networks-web", "web_networks"),
                        ObjectRef::new("net-new", "web_extra"),
                    ],
                    vec![],
                    vec![],
                );
                Outcome::Usage(UsageRead::new(stack, Usage::default()))
            }
            ActionKind::RemoveStack { objects, .. } => {
                removed.extend(objects.iter().map(|o| o.name.clone()));
                Outcome::Done
            }
            other => panic!("unexpected action {other:?}"),
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, t), Ok(()));
    }
    assert_eq!(removed, ["web_networks"]);
    let report = sweep.report();
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert!(r.errors.iter().any(|e| e.message.contains("web_extra")));
}

#[test]
fn rule13_an_unreadable_usage_removes_nothing_more_and_keeps_the_records() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        w.faults.usage_fails.insert(rr("alpha", "web"));
        let (report, run) = sweep(w, seed, 4);
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::Failed);
        assert_eq!(r.errors[0].action, Step::ReadUsage);
        assert_eq!(run.world.count(|k| k.step() == Step::RemoveStack), 0);
        assert!(run.world.has_stack("alpha", "web") && run.world.has_records("alpha", "web"));
        assert_eq!(run.world.volumes("alpha", "web")["n1"], ["web_data"]);
    }
}

/// The answer to a usage read that finds no stack left and `users` on the
/// swarm, whose manager lists its one node.
fn used_by(users: Vec<ServiceUse>) -> Outcome {
    Outcome::Usage(
        UsageRead::new(StackObjects::default(), Usage::new(users, Vec::new()))
            .with_nodes(vec!["n1".into()]),
    )
}

/// Drives `web`'s sweep by hand, one node and one volume, answering every
/// usage read with `read` as the swarm is at that moment and each volume
/// removal with `remove`; the steps handed out, the report and the clock
/// at the end.
fn volume_sweep(
    mut read: impl FnMut() -> Outcome,
    mut remove: impl FnMut() -> Outcome,
) -> (Vec<Step>, SweepReport, Timestamp) {
    let mut w = World::new(true);
    w.swarm("alpha", &[("n1", "node-1", true)], Reach::Nodes, true);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let mut steps = Vec::new();
    let mut now = Timestamp::ZERO;
    loop {
        while let Some(action) = sweep.poll_action(now) {
            steps.push(action.kind.step());
            let outcome = match &action.kind {
                read @ ActionKind::ReadStamps { .. } => unchanged(read),
                ActionKind::ReadUsage { .. } => read(),
                ActionKind::RemoveStack { .. } | ActionKind::DeleteRecords { .. } => Outcome::Done,
                ActionKind::ListVolumes { .. } => Outcome::Volumes(vec!["web_data".into()]),
                ActionKind::RemoveVolume { .. } => remove(),
                other => panic!("unexpected action {other:?}"),
            };
            assert_eq!(sweep.handle_outcome(action.id, outcome, now), Ok(()));
        }
        match sweep.poll_timeout() {
            Some(t) if t > now => now = t,
            _ => break,
        }
    }
    assert!(sweep.is_done());
    (steps, sweep.report(), now)
}

/// A service of another stack that mounts the volume is created while the
/// volume's node is listed (through node reach a listing is a whole job's
/// round trip): the read that judges the volume comes after its listing,
/// so it sees the service, and the volume is never tried.
#[test]
fn rule13_a_user_appearing_while_the_volumes_are_listed_spares_them() {
    let byhand = ServiceUse::new("svc-byhand", "byhand_db")
        .in_stack("byhand")
        .with_volumes(["web_data"]);
    let listed = std::cell::Cell::new(false);
    let mut w = World::new(true);
    w.swarm("alpha", &[("n1", "node-1", true)], Reach::Nodes, true);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    let mut sweep = Sweep::new(&w.plan(), Settings::default());
    let mut steps = Vec::new();
    let now = Timestamp::ZERO;
    while let Some(action) = sweep.poll_action(now) {
        steps.push(action.kind.step());
        let outcome = match &action.kind {
            read @ ActionKind::ReadStamps { .. } => unchanged(read),
            ActionKind::ReadUsage { .. } if listed.get() => used_by(vec![byhand.clone()]),
            ActionKind::ReadUsage { .. } => used_by(vec![]),
            ActionKind::RemoveStack { .. } | ActionKind::DeleteRecords { .. } => Outcome::Done,
            ActionKind::ListVolumes { .. } => {
                listed.set(true);
                Outcome::Volumes(vec!["web_data".into()])
            }
            // The engine would let it go: no container holds it.
            ActionKind::RemoveVolume { .. } => Outcome::Done,
            other => panic!("unexpected action {other:?}"),
        };
        assert_eq!(sweep.handle_outcome(action.id, outcome, now), Ok(()));
    }
    assert!(sweep.is_done());
    assert!(!steps.contains(&Step::RemoveVolume), "{steps:?}");
    assert!(!steps.contains(&Step::DeleteRecords), "{steps:?}");
    let r = &sweep.report().releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::InUse);
    assert_eq!(
        r.in_use_by,
        [InUse::new(
            UsageKind::Volume,
            "web_data",
            User::service("svc-byhand", "byhand_db")
        )]
    );
    assert!(r.volumes_deleted.is_empty());
}

/// The volume's first removal is refused "in use" (a task's container
/// not yet gone), and at that moment a service of another stack is
/// created that mounts it at 0 replicas: no container holds the volume,
/// so the engine would let it go at the next try. The read of who uses
/// what before that retry sees the service, and the volume is spared
/// exactly as the first check spares it: it stays, and the records with
/// it.
#[test]
fn rule13_a_user_appearing_while_a_volume_waits_stops_its_retry() {
    let byhand = ServiceUse::new("svc-byhand", "byhand_db")
        .in_stack("byhand")
        .with_volumes(["web_data"]);
    let named = std::cell::Cell::new(false);
    let (steps, report, now) = volume_sweep(
        || {
            if named.get() {
                used_by(vec![byhand.clone()])
            } else {
                used_by(vec![])
            }
        },
        || {
            if named.replace(true) {
                // The engine would let it go now: no container holds it.
                Outcome::Done
            } else {
                Outcome::Failed(Failure::InUse)
            }
        },
    );
    use Step::*;
    assert_eq!(
        steps,
        [
            ReadStamps,
            ReadUsage,
            RemoveStack,
            RemoveStack,
            ReadUsage,
            ReadStamps,
            ListVolumes,
            ReadUsage,
            RemoveVolume,
            // The retry's time: who uses the volume now, and no retry.
            ReadUsage,
        ]
    );
    assert_eq!(now, secs(2));
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::InUse);
    assert_eq!(
        r.in_use_by,
        [InUse::new(
            UsageKind::Volume,
            "web_data",
            User::service("svc-byhand", "byhand_db")
        )]
    );
    assert!(r.volumes_deleted.is_empty());
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert!(r
        .remedy
        .as_deref()
        .is_some_and(|m| m.contains("another workload")));
    let volume: Vec<(ObjectKind, &str, Option<&str>, ObjectOutcome)> = report
        .objects
        .iter()
        .map(|o| (o.kind, o.name.as_str(), o.node.as_deref(), o.outcome))
        .collect();
    assert_eq!(
        volume,
        [(
            ObjectKind::Volume,
            "web_data",
            Some("node-1"),
            ObjectOutcome::InUse
        )]
    );
    assert_eq!(report.totals.in_use, 1);
    assert!(!report.all_done());
}

/// A read of who uses what that fails before a retry proves nothing: the
/// volume is not tried again, the release fails and keeps its records.
#[test]
fn rule13_a_failed_read_before_a_retry_fails_the_volume_and_keeps_the_records() {
    let reads = std::cell::Cell::new(0);
    let (steps, report, _) = volume_sweep(
        || {
            reads.set(reads.get() + 1);
            // The three gates read; the fourth read, before the retry,
            // fails.
            if reads.get() <= 3 {
                used_by(Vec::new())
            } else {
                Outcome::unreachable("manager: connection reset")
            }
        },
        Outcome::in_use,
    );
    assert_eq!(
        steps.iter().filter(|s| **s == Step::RemoveVolume).count(),
        1
    );
    assert_eq!(steps.last(), Some(&Step::ReadUsage));
    assert!(!steps.contains(&Step::DeleteRecords));
    let r = &report.releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert_eq!(r.errors.len(), 1);
    assert_eq!(r.errors[0].action, Step::ReadUsage);
    assert_eq!(r.errors[0].kind, ErrorKind::Unreachable);
    let volume = &report.objects[0];
    assert_eq!(volume.name, "web_data");
    assert_eq!(volume.outcome, ObjectOutcome::Failed);
    assert!(volume
        .error
        .as_deref()
        .is_some_and(|e| e.contains("not tried again")));
}

/// The same in the model world, under any interleaving: a volume a
/// service starts to mount when its removal is first refused "in use" is
/// never removed after (the world flags any such removal), it stays on
/// its node with the records, and the rest of the release goes.
#[test]
fn rule13_a_volume_named_while_it_waits_stays_with_the_records_under_any_interleaving() {
    for seed in 0..SEEDS {
        for limit in [1, 3, 8] {
            let mut w = World::new(true);
            alpha3(&mut w);
            w.release("alpha", "web", "shop", &[("n1", "data"), ("n2", "logs")]);
            let alpha = SwarmName::new("alpha");
            w.faults
                .in_use
                .insert((alpha.clone(), "n1".into(), "web_data".into()), 2);
            w.faults
                .named_on_in_use
                .insert((rr("alpha", "web"), "web_data".into()));
            let (report, run) = sweep(w, seed, limit);
            assert!(run.world.named_since(&rr("alpha", "web")));
            let tries = run.world.count(
                |k| matches!(k, ActionKind::RemoveVolume { volume, .. } if volume == "web_data"),
            );
            assert_eq!(tries, 1, "seed {seed}, limit {limit}");
            let r = &report.releases[0];
            assert_eq!(r.outcome, ReleaseOutcome::InUse);
            assert_eq!(r.in_use_by.len(), 1);
            assert_eq!(r.in_use_by[0].object, "web_data");
            assert_eq!(r.in_use_by[0].user.name, "byhand_db");
            assert_eq!(run.world.volumes("alpha", "web")["n1"], ["web_data"]);
            assert_eq!(r.volumes_deleted["node-2"], ["web_logs"]);
            assert!(run.world.has_records("alpha", "web"));
            assert!(!run.world.has_stack("alpha", "web"));
        }
    }
}

/// A network refused "in use" (a task still attached) that a service of
/// another workload starts to name meanwhile: the read before its retry
/// sees the service, and the network is kept at once, reported in
/// `in_use_by`, not retried until the settle time into a failure.
#[test]
fn rule13_a_network_named_while_it_waits_is_kept_not_retried_into_a_failure() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        let web = rr("alpha", "web");
        w.faults
            .part_in_use
            .insert((web.clone(), StackPart::Networks), u32::MAX);
        w.faults
            .shared_on_in_use
            .insert(web.clone(), [StackPart::Networks].into());
        let (report, run) = sweep(w, seed, 4);
        assert!(run.world.named_since(&web));
        let networks = run.world.count(|k| k.part() == Some(StackPart::Networks));
        assert_eq!(networks, 1, "seed {seed}");
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::InUse);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        let kept: Vec<(&str, &str)> = r
            .in_use_by
            .iter()
            .map(|u| (u.object.as_str(), u.user.name.as_str()))
            .collect();
        assert_eq!(kept, [("web_networks", "other_app")]);
        assert!(run.now < secs(5), "waited until {}", run.now);
        assert!(run.world.has_part("alpha", "web", StackPart::Networks));
        assert!(!run.world.has_part("alpha", "web", StackPart::Configs));
        // The rest went, volumes included; the records stay.
        assert!(run.world.volumes("alpha", "web").is_empty());
        assert!(run.world.has_records("alpha", "web"));
    }
}

/// A stopped container of no service attached to the network since the
/// plan, on the last node reached: the engine would let the network go
/// (it refuses only while such a container runs), and the container could
/// never start again. The read before the networks go lists every place's
/// containers, so the network stays, with the records.
#[test]
fn rule13_a_network_a_container_attached_since_the_plan_stays() {
    for reach in [Reach::Nodes, Reach::ManagerOnly] {
        for seed in 0..SEEDS {
            let mut w = World::new(true);
            w.swarm(
                "alpha",
                &[
                    ("n1", "node-1", true),
                    ("n2", "node-2", true),
                    ("n3", "node-3", true),
                ],
                reach,
                true,
            );
            w.release("alpha", "web", "shop", &[("n1", "data")]);
            let web = rr("alpha", "web");
            w.faults.attached.insert(web.clone());
            let (report, run) = sweep(w, seed, 4);
            assert!(
                run.world.violations.is_empty(),
                "{:?}",
                run.world.violations
            );
            let r = &report.releases[0];
            assert_eq!(r.outcome, ReleaseOutcome::InUse, "{:?}", r.errors);
            assert!(r.errors.is_empty(), "{:?}", r.errors);
            let kept: Vec<(&str, &str, Option<&str>)> = r
                .in_use_by
                .iter()
                .map(|u| {
                    let user = &u.user;
                    (u.object.as_str(), user.name.as_str(), user.node.as_deref())
                })
                .collect();
            // The model names the manager's daemon by its node's id.
            let node = match reach {
                Reach::Nodes => "n3",
                Reach::ManagerOnly => "n1",
            };
            assert_eq!(kept, [("web_networks", "byhand", Some(node))]);
            assert!(run.world.has_part("alpha", "web", StackPart::Networks));
            for part in [StackPart::Services, StackPart::Secrets, StackPart::Configs] {
                assert!(!run.world.has_part("alpha", "web", part), "{part}");
            }
            assert_eq!(
                run.world.count(|k| k.part() == Some(StackPart::Networks)),
                0
            );
            assert!(run.world.volumes("alpha", "web").is_empty());
            assert!(run.world.has_records("alpha", "web"));
        }
    }
}

/// A network refused "in use" while a container of no service runs
/// attached to it, and that container then stops (still attached): the
/// read before the retry lists every place's containers, and the network
/// is kept at once, not removed from under the stopped container.
#[test]
fn rule13_a_network_a_container_stopped_on_while_it_waited_stays() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        let web = rr("alpha", "web");
        w.faults
            .part_in_use
            .insert((web.clone(), StackPart::Networks), u32::MAX);
        w.faults.attached_on_in_use.insert(web.clone());
        let (report, run) = sweep(w, seed, 4);
        assert!(
            run.world.violations.is_empty(),
            "{:?}",
            run.world.violations
        );
        assert!(run.world.named_since(&web));
        let networks = run.world.count(|k| k.part() == Some(StackPart::Networks));
        assert_eq!(networks, 1, "seed {seed}");
        let r = &report.releases[0];
        assert_eq!(r.outcome, ReleaseOutcome::InUse);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert_eq!(r.in_use_by.len(), 1);
        assert_eq!(r.in_use_by[0].user.name, "byhand");
        assert!(run.world.has_part("alpha", "web", StackPart::Networks));
        assert!(run.world.has_records("alpha", "web"));
    }
}

/// The read before the networks go lists the containers where the plan
/// read them; a release whose plan lists no network reads none there.
#[test]
fn rule13_the_read_before_the_networks_lists_containers_only_for_networks() {
    let mut w = World::new(false);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[]);
    let unlisted = w.plan();
    let stack = |networks: Vec<ObjectRef>| {
        let mut plan = unlisted.clone();
        let secrets = vec![ObjectRef::new("secrets-web", "web_secrets")];
        let services = vec![ServiceEntry::new("svc-web", "web_web", 1)];
        plan.deletions[0].objects =
            Some(StackObjects::new(services, networks, secrets, Vec::new()));
        plan
    };
    let with = stack(vec![ObjectRef::new("networks-web", "web_networks")]);
    let without = stack(Vec::new());
    // A plan that lists no objects at all proves no network absent.
    for (plan, places) in [(with, 3), (without, 0), (unlisted, 3)] {
        let mut sweep = Sweep::new(&plan, Settings::default());
        let t = Timestamp::ZERO;
        let mut reads = Vec::new();
        while let Some(action) = sweep.poll_action(t) {
            let outcome = match &action.kind {
                read @ ActionKind::ReadStamps { .. } => unchanged(read),
                ActionKind::ReadUsage { at, .. } => {
                    reads.push(at.len());
                    Outcome::Usage(UsageRead::default())
                }
                _ => Outcome::Done,
            };
            sweep.handle_outcome(action.id, outcome, t).unwrap();
        }
        // Before the services, then before the networks, secrets and
        // configs.
        assert_eq!(reads, [0, places]);
    }
}

/// Rule 14: a swarm's deletion window closing stops the sweep there. No
/// action of the swarm's releases is handed out from the moment it
/// closes; what was in flight finishes; each release not finished keeps
/// its records and says why. Another swarm's releases go on.
#[test]
fn rule14_nothing_is_handed_out_on_a_swarm_once_its_window_closed() {
    for seed in 0..SEEDS {
        for close_ms in [0u64, 150, 700, 2_500] {
            let mut w = World::new(true);
            alpha3(&mut w);
            w.swarm("beta", &[("b1", "beta-1", true)], Reach::Nodes, true);
            for release in ["web", "api", "db"] {
                w.release("alpha", release, "shop", &[("n1", "data"), ("n2", "data")]);
            }
            w.release("beta", "blog", "shop", &[("b1", "data")]);
            let close = Timestamp::ZERO + Duration::from_millis(close_ms);
            let mut run =
                Run::new(w, Settings::default(), seed, 3).with_latency(Duration::from_millis(200));
            run.sweep
                .handle_window_closes(&SwarmName::new("alpha"), close);
            let report = run.finish();
            for e in &run.events {
                if let Event::Handed(at, kind) = e {
                    let on_alpha = kind
                        .target()
                        .is_some_and(|t| t.release.swarm == SwarmName::new("alpha"));
                    assert!(
                        !on_alpha || *at < close,
                        "seed {seed}, close {close_ms} ms: {kind:?} handed out at {at:?}"
                    );
                }
            }
            for r in &report.releases {
                let alpha = r.swarm == SwarmName::new("alpha");
                let closed = r.errors.iter().any(|e| e.kind == ErrorKind::WindowClosed);
                match r.outcome {
                    ReleaseOutcome::Deleted => {
                        assert!(!closed);
                        assert!(!run.world.has_records(r.swarm.as_str(), &r.release));
                    }
                    outcome => {
                        assert!(alpha, "{r:?}");
                        assert_eq!(outcome, ReleaseOutcome::Failed);
                        assert!(closed, "{r:?}");
                        assert!(r.remedy.as_deref().is_some_and(|m| m.contains("window")));
                        assert!(run.world.has_records(r.swarm.as_str(), &r.release));
                    }
                }
            }
            let beta = report.releases.iter().find(|r| r.release == "blog");
            assert_eq!(beta.map(|r| r.outcome), Some(ReleaseOutcome::Deleted));
            if close_ms == 0 {
                // Closed from the start: nothing of alpha was even read.
                assert!(!run.handed().iter().any(|k| is_release(k, "alpha", "web")));
                for release in ["web", "api", "db"] {
                    assert!(run.world.has_stack("alpha", release));
                }
            }
        }
    }
}

/// The sweep wakes its driver when a window closes, with nothing else due:
/// a release waiting for its volume to be let go is closed then, not at
/// its next retry.
#[test]
fn rule14_a_window_closing_is_a_deadline_of_its_own() {
    let mut w = World::new(true);
    alpha3(&mut w);
    w.release("alpha", "web", "shop", &[("n1", "data")]);
    let plan = w.plan();
    let mut sweep = Sweep::new(
        &plan,
        Settings::new(Duration::from_secs(30), Duration::from_secs(600)),
    );
    let close = Timestamp::ZERO + Duration::from_secs(5);
    sweep.handle_window_closes(&SwarmName::new("alpha"), close);
    let first = sweep
        .poll_action(Timestamp::ZERO)
        .expect("the first re-read");
    // With the re-read in flight, the close is the one deadline.
    assert_eq!(sweep.poll_timeout(), Some(close));
    // Told a later time, the earlier holds.
    sweep.handle_window_closes(&SwarmName::new("alpha"), close + Duration::from_secs(60));
    assert_eq!(sweep.poll_timeout(), Some(close));
    assert!(
        sweep.poll_action(close).is_none(),
        "nothing new once closed"
    );
    // The re-read in flight is answered after the close: the release ends
    // there, its stack untouched.
    sweep
        .handle_outcome(first.id, unchanged(&first.kind), close)
        .unwrap();
    assert!(sweep.poll_action(close).is_none());
    assert!(sweep.is_done());
    assert_eq!(sweep.poll_timeout(), None);
    let r = &sweep.report().releases[0];
    assert_eq!(r.outcome, ReleaseOutcome::Failed);
    assert_eq!(
        r.errors
            .iter()
            .map(|e| (e.kind, e.action))
            .collect::<Vec<_>>(),
        [(ErrorKind::WindowClosed, Step::ReadUsage)]
    );
}

/// A re-listing is a step too: once the window closed, the failure it
/// could have overturned stands, and says why.
#[test]
fn rule14_no_re_listing_starts_once_the_window_closed() {
    for seed in 0..SEEDS {
        let mut w = World::new(true);
        alpha3(&mut w);
        w.release("alpha", "web", "shop", &[("n1", "data")]);
        w.release("alpha", "api", "shop", &[("n2", "data")]);
        w.faults.records_fail.insert(rr("alpha", "web"), 1);
        w.faults.in_use.insert(
            (SwarmName::new("alpha"), "n2".into(), "api_data".into()),
            1_000,
        );
        let close = Timestamp::ZERO + Duration::from_secs(3);
        let mut run = Run::new(w, Settings::default(), seed, 2);
        run.sweep
            .handle_window_closes(&SwarmName::new("alpha"), close);
        let report = run.finish();
        assert!(
            !run.handed()
                .iter()
                .any(|k| matches!(k, ActionKind::ListReleases { .. })),
            "seed {seed}: {:?}",
            run.handed()
        );
        for r in &report.releases {
            assert_eq!(r.outcome, ReleaseOutcome::Failed, "{r:?}");
            assert!(
                r.errors.iter().any(|e| e.kind == ErrorKind::WindowClosed),
                "{r:?}"
            );
        }
        let web = report.releases.iter().find(|r| r.release == "web");
        assert!(web.is_some_and(|r| r
            .errors
            .iter()
            .any(|e| e.action == Step::ListReleases && e.kind == ErrorKind::WindowClosed)));
        assert!(run.world.has_records("alpha", "web"));
        assert!(run.world.has_records("alpha", "api"));
    }
}
