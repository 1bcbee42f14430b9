//! The sweep loop against the in-memory registry.

use std::collections::VecDeque;
use std::sync::Mutex;

use sweep_core::sweep::{Settings, SweepReport};
use sweep_core::{AppSet, Application, Policy, SweepPlan};
use sweep_testkit::{
    Call, Effect, Fault, Faulty, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm,
};

use super::*;

fn departed(swarm: MemorySwarm, name: &str) -> MemorySwarm {
    let stamp = format!("cd/default/gone:release/{name}");
    swarm
        .record(MemoryRecord::new(name, 1, Some(&stamp)))
        .stack(name, MemoryStack::new().service(format!("{name}_svc")))
}

fn kept(swarm: MemorySwarm, name: &str) -> MemorySwarm {
    let stamp = format!("cd/default/shop:release/{name}");
    swarm
        .record(MemoryRecord::new(name, 1, Some(&stamp)))
        .stack(name, MemoryStack::new().service(format!("{name}_svc")))
}

fn apps() -> AppSet {
    AppSet::new(
        true,
        vec![Application::reconciled("shop", "alpha", &["web"])],
    )
}

/// Hands out the app sets given, in order, then the last one again.
/// Clones share the script.
#[derive(Clone)]
struct Scripted(Arc<Mutex<VecDeque<Result<AppSet, String>>>>);

impl Scripted {
    fn new(reads: Vec<Result<AppSet, String>>) -> Self {
        Scripted(Arc::new(Mutex::new(reads.into())))
    }
}

impl AppSetSource for Scripted {
    fn read(&self) -> Result<AppSet, String> {
        let mut reads = self.0.lock().unwrap();
        if reads.len() > 1 {
            reads.pop_front().unwrap()
        } else {
            reads.front().cloned().expect("an app set")
        }
    }
}

fn sweeper<'a>(registry: &'a dyn Registry, app_set: &Scripted) -> Sweeper<'a> {
    Sweeper {
        registry,
        app_set: AppSetReader::new(Arc::new(app_set.clone())),
        policy: Policy::new("default", false, None),
        gather: GatherSettings::default(),
        execute: ExecuteSettings::new(Settings::default(), 1, Duration::from_secs(120)),
        shared: Arc::new(Shared::new()),
        grace: Mutex::new(GraceState::empty(sweep_core::UnixTime::from_secs(0))),
        state_file: None,
        state_max_age: None,
    }
}

fn never() -> Stop {
    let (trigger, stop) = Stop::new();
    // Kept alive so the stop never completes by its trigger going away.
    std::mem::forget(trigger);
    stop
}

fn metric(shared: &Shared, series: &str) -> String {
    shared
        .metrics_text()
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ').map(str::to_owned))
        .unwrap_or_else(|| panic!("no {series}"))
}

fn last(shared: &Shared) -> (SweepPlan, SweepReport) {
    let plan = serde_json::from_slice(&shared.plan().expect("a plan")).unwrap();
    let report = serde_json::from_slice(&shared.report().expect("a report")).unwrap();
    (plan, report)
}

fn release_names(registry: &MemoryRegistry, swarm: &str) -> Vec<String> {
    let mut names: Vec<String> = registry
        .records(swarm)
        .into_iter()
        .map(|r| r.release)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[tokio::test(start_paused = true)]
async fn a_departed_release_is_swept_and_counted() {
    let registry = MemoryRegistry::new()
        .with_swarm(kept(departed(MemorySwarm::new("alpha", "A"), "old"), "web"));
    let source = Scripted::new(vec![Ok(apps())]);
    let s = sweeper(&registry, &source);
    let swept = s.sweep(&never()).await;
    assert_eq!(
        swept,
        Swept {
            outcome: SweepOutcome::Success,
            status: 0
        }
    );
    assert_eq!(release_names(&registry, "alpha"), ["web"]);
    assert!(registry.stack("alpha", "old").is_none_or(|s| s.is_empty()));
    assert_eq!(
        metric(
            &s.shared,
            "swarm_sweep_deletions_total{reason=\"departed\"}"
        ),
        "1"
    );
    assert_eq!(
        metric(&s.shared, "swarm_sweep_sweeps_total{outcome=\"success\"}"),
        "1"
    );
    assert_eq!(metric(&s.shared, "swarm_sweep_failures_total"), "0");
    assert_ne!(
        metric(&s.shared, "swarm_sweep_last_success_timestamp_seconds"),
        "0"
    );
    assert_eq!(
        metric(&s.shared, "swarm_sweep_gather_duration_seconds_count"),
        "1"
    );
    assert_eq!(s.shared.readiness(), shared::Readiness::Ready);
    let (plan, report) = last(&s.shared);
    assert_eq!(plan.deletions.len(), 1);
    assert_eq!(report.totals.deleted, 1);

    // Nothing is left to delete: the next sweep deletes nothing more.
    let swept = s.sweep(&never()).await;
    assert_eq!(swept.outcome, SweepOutcome::Success);
    assert_eq!(
        metric(
            &s.shared,
            "swarm_sweep_deletions_total{reason=\"departed\"}"
        ),
        "1"
    );
    assert_eq!(
        metric(&s.shared, "swarm_sweep_sweeps_total{outcome=\"success\"}"),
        "2"
    );
}

#[tokio::test(start_paused = true)]
async fn an_unreadable_app_set_holds_the_sweep_and_keeps_the_last_plan() {
    let registry = MemoryRegistry::new()
        .with_swarm(kept(departed(MemorySwarm::new("alpha", "A"), "old"), "web"));
    // Unreadable first: nothing may be deleted, whatever the swarm holds.
    let source = Scripted::new(vec![
        Err("apps.yaml: line 3: not YAML".into()),
        Ok(AppSet::new(
            true,
            vec![Application::reconciled("shop", "alpha", &["web"]), {
                Application::reconciled("gone", "alpha", &["old"])
            }],
        )),
        Err("apps.yaml: cannot read: permission denied".into()),
    ]);
    let s = sweeper(&registry, &source);
    let swept = s.sweep(&never()).await;
    assert_eq!(
        swept,
        Swept {
            outcome: SweepOutcome::AppSetUnreadable,
            status: 1
        }
    );
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
    assert!(s.shared.plan().is_none() && s.shared.report().is_none());
    assert_eq!(s.shared.readiness(), shared::Readiness::NotYet);
    assert_eq!(
        metric(&s.shared, "swarm_sweep_gather_duration_seconds_count"),
        "0",
        "nothing was gathered"
    );

    // Readable, and `old` is declared again: a plan that deletes nothing.
    assert_eq!(s.sweep(&never()).await.outcome, SweepOutcome::Success);
    let before = s.shared.plan().unwrap();

    // Unreadable again, with `old` no longer declared by anything that
    // could be read: held, the previous plan still served.
    let swept = s.sweep(&never()).await;
    assert_eq!(swept.outcome, SweepOutcome::AppSetUnreadable);
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
    assert_eq!(s.shared.plan().unwrap(), before);
    assert_eq!(
        metric(
            &s.shared,
            "swarm_sweep_sweeps_total{outcome=\"app_set_unreadable\"}"
        ),
        "2"
    );
    assert_eq!(
        metric(
            &s.shared,
            "swarm_sweep_deletions_total{reason=\"departed\"}"
        ),
        "0"
    );
}

#[tokio::test(start_paused = true)]
async fn the_status_is_the_one_apply_would_have() {
    // An unreadable swarm needs a person: 1, as for apply.
    let registry = MemoryRegistry::new()
        .with_swarm(departed(MemorySwarm::new("alpha", "A"), "old"))
        .with_swarm(departed(MemorySwarm::new("beta", "B"), "old"));
    registry.set_manager_unreachable("beta", true).unwrap();
    let source = Scripted::new(vec![Ok(AppSet::new(
        true,
        vec![
            Application::reconciled("shop", "alpha", &[]),
            Application::reconciled("shop2", "beta", &[]),
        ],
    ))]);
    let s = sweeper(&registry, &source);
    let swept = s.sweep(&never()).await;
    let (plan, report) = last(&s.shared);
    assert_eq!(swept.status, apply_status(&plan, &report).code());
    assert_eq!(swept.status, 1);
    assert_eq!(swept.outcome, SweepOutcome::NeedsAttention);
    assert_eq!(release_names(&registry, "alpha"), Vec::<String>::new());
    assert_eq!(release_names(&registry, "beta"), ["old"]);
    assert_eq!(
        s.shared.readiness(),
        shared::Readiness::Unreadable(vec!["beta".into()])
    );

    // An empty app set holds the whole sweep: `held`, and 1.
    let registry =
        MemoryRegistry::new().with_swarm(departed(MemorySwarm::new("alpha", "A"), "old"));
    let source = Scripted::new(vec![Ok(AppSet::new(true, Vec::new()))]);
    let s = sweeper(&registry, &source);
    let swept = s.sweep(&never()).await;
    let (plan, report) = last(&s.shared);
    assert_eq!(swept.status, apply_status(&plan, &report).code());
    assert_eq!(
        swept,
        Swept {
            outcome: SweepOutcome::Held,
            status: 1
        }
    );
    assert_eq!(release_names(&registry, "alpha"), ["old"]);
    assert_eq!(
        metric(&s.shared, "swarm_sweep_holds{reason=\"empty_app_set\"}"),
        "1"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stop_finishes_the_step_in_flight_and_the_next_sweep_converges() {
    let memory = MemoryRegistry::new().with_swarm(departed(
        departed(MemorySwarm::new("alpha", "A"), "one"),
        "two",
    ));
    let registry = Faulty::new(memory.clone());
    registry.inject(Fault::new(
        "alpha",
        Call::RemoveStack,
        Effect::Slow(Duration::from_secs(10)),
    ));
    let source = Scripted::new(vec![Ok(apps())]);
    let s = sweeper(&registry, &source);
    let (trigger, stop) = Stop::new();
    let (swept, ()) = tokio::join!(s.sweep(&stop), async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        trigger.stop();
    });
    assert_eq!(swept.outcome, SweepOutcome::Interrupted);
    assert_eq!(swept.status, 1);
    // Records go last: both releases are still found.
    assert_eq!(release_names(&memory, "alpha"), ["one", "two"]);
    assert_eq!(
        metric(
            &s.shared,
            "swarm_sweep_sweeps_total{outcome=\"interrupted\"}"
        ),
        "1"
    );
    assert_eq!(metric(&s.shared, "swarm_sweep_failures_total"), "0");

    registry.clear();
    let swept = s.sweep(&never()).await;
    assert_eq!(swept.outcome, SweepOutcome::Success);
    assert_eq!(release_names(&memory, "alpha"), Vec::<String>::new());
    assert_eq!(
        metric(
            &s.shared,
            "swarm_sweep_deletions_total{reason=\"departed\"}"
        ),
        "2"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stop_before_the_sweep_deletes_nothing() {
    let registry =
        MemoryRegistry::new().with_swarm(departed(MemorySwarm::new("alpha", "A"), "old"));
    let source = Scripted::new(vec![Ok(apps())]);
    let s = sweeper(&registry, &source);
    let (trigger, stop) = Stop::new();
    trigger.stop();
    assert_eq!(s.sweep(&stop).await.outcome, SweepOutcome::Interrupted);
    assert_eq!(release_names(&registry, "alpha"), ["old"]);
}

#[tokio::test(start_paused = true)]
async fn the_loop_sweeps_every_interval_until_stopped() {
    let registry = MemoryRegistry::new().with_swarm(kept(MemorySwarm::new("alpha", "A"), "web"));
    let source = Scripted::new(vec![Ok(apps())]);
    let s = sweeper(&registry, &source);
    let (trigger, stop) = Stop::new();
    let began = tokio::time::Instant::now();
    tokio::join!(watch_loop(&s, Duration::from_secs(60), &stop), async {
        tokio::time::sleep(Duration::from_secs(150)).await;
        trigger.stop();
    });
    // Sweeps at 0 s, 60 s and 120 s; the stop at 150 s ends the wait.
    assert_eq!(
        metric(&s.shared, "swarm_sweep_sweeps_total{outcome=\"success\"}"),
        "3"
    );
    let ended = began.elapsed();
    assert!(
        ended >= Duration::from_secs(150) && ended < Duration::from_secs(151),
        "{ended:?}"
    );
}

#[test]
fn the_summary_line_counts_what_the_sweep_did() {
    let at = std::time::UNIX_EPOCH + Duration::from_secs(1_764_576_000);
    let line = summary(
        SweepOutcome::AppSetUnreadable,
        None,
        Duration::from_millis(40),
        at,
    );
    assert_eq!(
        line,
        "2025-12-01T08:00:00Z sweep app_set_unreadable: nothing deleted (0.0s)"
    );
}

#[tokio::test(start_paused = true)]
async fn the_grace_period_is_carried_between_sweeps_and_written() {
    let registry = MemoryRegistry::new()
        .with_swarm(kept(departed(MemorySwarm::new("alpha", "A"), "old"), "web"));
    let source = Scripted::new(vec![Ok(apps())]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("state.json");
    let mut s = sweeper(&registry, &source);
    s.policy =
        Policy::new("default", false, None).with_min_departed_for(Some(Duration::from_secs(3600)));
    s.state_file = Some(file.clone());

    // Seen departed now: its hour starts, nothing is deleted.
    s.sweep(&never()).await;
    assert!(persist_state(&s));
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
    let since = s
        .grace()
        .since(&"alpha".into(), "old")
        .expect("the clock started");
    let written = crate::state::read(&file).unwrap().expect("a state file");
    assert_eq!(written, *s.grace());

    // Still inside the hour: the first-seen time is kept, not restarted.
    s.sweep(&never()).await;
    assert_eq!(s.grace().since(&"alpha".into(), "old"), Some(since));
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);

    // Seen departed two hours ago: it goes, and leaves the state.
    *s.grace() = GraceState::new(
        vec![sweep_core::Departed::new(
            "alpha",
            "old",
            sweep_core::UnixTime::from_secs(since.as_secs() - 7200),
        )],
        since,
    );
    assert_eq!(s.sweep(&never()).await.outcome, SweepOutcome::Success);
    assert_eq!(release_names(&registry, "alpha"), ["web"]);
    assert_eq!(s.grace().since(&"alpha".into(), "old"), None);
    assert!(persist_state(&s));
    let written = crate::state::read(&file).unwrap().expect("a state file");
    assert!(written.departed.is_empty());
    assert!(written.written_at >= since);
}

/// A state file whose `old` was first seen departed two days ago, written
/// `written_ago` seconds ago.
/// A state written `written_ago` seconds ago: `old` of alpha first seen
/// departed two days ago.
fn old_state(written_ago: u64) -> GraceState {
    let now = crate::state::now().unwrap().as_secs();
    GraceState::new(
        vec![sweep_core::Departed::new(
            "alpha",
            "old",
            sweep_core::UnixTime::from_secs(now - 2 * 86_400),
        )],
        sweep_core::UnixTime::from_secs(now - written_ago),
    )
}

fn state_file_of(dir: &std::path::Path, written_ago: u64) -> PathBuf {
    let file = dir.join(format!("state-{written_ago}.json"));
    crate::state::write(&file, &old_state(written_ago)).unwrap();
    file
}

/// Alpha with `old` departed and `web` kept.
fn old_and_web() -> MemoryRegistry {
    MemoryRegistry::new().with_swarm(kept(departed(MemorySwarm::new("alpha", "A"), "old"), "web"))
}

/// A sweeper of `registry` with an hour's grace period.
fn with_an_hour<'a>(registry: &'a dyn Registry, app_set: &Scripted) -> Sweeper<'a> {
    let mut s = sweeper(registry, app_set);
    s.policy =
        Policy::new("default", false, None).with_min_departed_for(Some(Duration::from_secs(3600)));
    s
}

#[tokio::test(start_paused = true)]
async fn a_state_file_left_behind_restarts_the_clocks_and_deletes_nothing_in_its_window() {
    let dir = tempfile::tempdir().unwrap();
    let max_age = default_state_max_age(Duration::from_secs(300), false);
    assert_eq!(max_age, Some(Duration::from_secs(900)));
    // A state written a minute ago is current: `old` has waited two days
    // and goes. The same state left behind for three weeks is not used:
    // `old` may have been declared again and departed again meanwhile, so
    // its hour starts now and nothing is deleted.
    for (written_ago, deleted) in [(60, true), (21 * 86_400, false)] {
        let registry = old_and_web();
        let source = Scripted::new(vec![Ok(apps())]);
        let s = with_an_hour(&registry, &source);
        let file = state_file_of(dir.path(), written_ago);
        let now = crate::state::now().unwrap();
        *s.grace() = crate::state::load(&file, now, max_age).unwrap();
        s.sweep(&never()).await;
        let (plan, _) = last(&s.shared);
        if deleted {
            assert_eq!(release_names(&registry, "alpha"), ["web"]);
            assert_eq!(s.grace().since(&"alpha".into(), "old"), None);
        } else {
            assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
            assert!(plan.deletions.is_empty());
            let spared = plan.spared.iter().find(|x| x.release == "old").unwrap();
            assert_eq!(spared.reason, sweep_core::SpareReason::GracePeriod);
            let since = s.grace().since(&"alpha".into(), "old").unwrap();
            assert!(since >= now, "the clock restarted: {since}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_state_kept_in_memory_through_a_long_hold_restarts_the_clocks() {
    // The state in memory was last renewed 20 minutes ago (sweeps held
    // since, say, by an app set that did not read): `old` may have come
    // back and left again unseen, so its hour starts over. Renewed a
    // minute ago, the same state lets it go.
    for (renewed_ago, deleted) in [(60, true), (20 * 60, false)] {
        let registry = old_and_web();
        let source = Scripted::new(vec![Ok(apps())]);
        let mut s = with_an_hour(&registry, &source);
        s.state_max_age = default_state_max_age(Duration::from_secs(300), false);
        let now = crate::state::now().unwrap().as_secs();
        *s.grace() = old_state(renewed_ago);
        s.sweep(&never()).await;
        let (plan, _) = last(&s.shared);
        if deleted {
            assert_eq!(release_names(&registry, "alpha"), ["web"]);
        } else {
            assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
            assert!(plan.deletions.is_empty());
            let since = s.grace().since(&"alpha".into(), "old").unwrap();
            assert!(since.as_secs() >= now, "the clock restarted: {since}");
        }
        // Either way the state is renewed by this sweep's plan.
        assert!(s.grace().written_at.as_secs() >= now);
    }
}

#[test]
fn the_default_state_max_age_is_three_intervals_and_at_least_five_minutes() {
    let secs = |s| Some(Duration::from_secs(s));
    assert_eq!(
        default_state_max_age(Duration::from_secs(1), false),
        secs(300)
    );
    assert_eq!(
        default_state_max_age(Duration::from_secs(100), false),
        secs(300)
    );
    assert_eq!(
        default_state_max_age(Duration::from_secs(101), false),
        secs(303)
    );
    assert_eq!(
        default_state_max_age(Duration::from_secs(3600), false),
        secs(10_800)
    );
    assert_eq!(default_state_max_age(Duration::from_secs(3600), true), None);
}

/// Never answers until told to: a FIFO nobody writes.
struct Stuck(Arc<(Mutex<bool>, std::sync::Condvar)>);

impl AppSetSource for Stuck {
    fn read(&self) -> Result<AppSet, String> {
        let (released, wake) = &*self.0;
        let mut released = released.lock().unwrap();
        while !*released {
            released = wake.wait(released).unwrap();
        }
        Ok(apps())
    }
}

#[tokio::test]
async fn an_app_set_that_never_reads_holds_its_sweep_and_not_the_stop() {
    let registry =
        MemoryRegistry::new().with_swarm(departed(MemorySwarm::new("alpha", "A"), "old"));
    let gate = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let mut s = sweeper(&registry, &Scripted::new(vec![Ok(apps())]));
    s.app_set = AppSetReader::new(Arc::new(Stuck(gate.clone())));
    // A stop is heard while the read hangs.
    let (trigger, stop) = Stop::new();
    let (swept, ()) = tokio::join!(s.sweep(&stop), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.stop();
    });
    assert_eq!(swept.outcome, SweepOutcome::Interrupted);
    // The read still hangs: the next sweep is held at once, not stuck.
    let swept = tokio::time::timeout(Duration::from_secs(5), s.sweep(&never()))
        .await
        .expect("held, not stuck");
    assert_eq!(swept.outcome, SweepOutcome::AppSetUnreadable);
    assert_eq!(release_names(&registry, "alpha"), ["old"]);
    // Once it answers, sweeps go on.
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while s.app_set.busy.load(Ordering::Acquire) {
        assert!(std::time::Instant::now() < until);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(s.sweep(&never()).await.outcome, SweepOutcome::Success);
}
