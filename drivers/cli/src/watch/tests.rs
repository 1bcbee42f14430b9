//! The sweep loop against the in-memory registry.

use std::collections::VecDeque;
use std::sync::Mutex;

use sweep_core::sweep::{Settings, SweepReport};
use sweep_core::{AppSet, Application, Policy, SweepPlan};
use sweep_testkit::{
    Call, Effect, Fault, Faulty, MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm,
};

use super::app_set::{
    read_limit, AppSetSource, Read, Unreadable, APP_SET_READ_LIMIT, MAX_STUCK_READS,
};
use super::shared::{app_set_patience, Readiness};
use super::*;
use sweep_runner::Grace;

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
    sweeper_of(registry, app_set, Policy::new("default", false, None))
}

fn sweeper_of<'a>(registry: &'a dyn Registry, app_set: &Scripted, policy: Policy) -> Sweeper<'a> {
    Sweeper::new(
        registry,
        WatchHost::new(
            AppSetReader::new(Arc::new(app_set.clone()), APP_SET_READ_LIMIT),
            Arc::new(Shared::new(
                "apps.yaml",
                shared::app_set_patience(Duration::from_secs(300)),
            )),
            None,
            Runs::Repeatedly,
        ),
        policy,
        GatherSettings::default(),
        ExecuteSettings::new(Settings::default(), 1, Duration::from_secs(120)),
        GraceState::empty(sweep_core::UnixTime::from_secs(0)),
        None,
    )
}

fn never() -> Stop {
    Stop::never()
}

const SUCCESS: Status = Status::Success;
const NEEDS_ATTENTION: Status = Status::NeedsAttention;

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
    registry.release_names(swarm)
}

/// Inside a deny window nothing is deleted, the hold is counted by its
/// reason, and the sweep says when the window opens, for the loop to wake
/// then rather than a whole interval later.
#[tokio::test(start_paused = true)]
async fn outside_its_window_a_swarm_waits_and_says_until_when() {
    let registry = MemoryRegistry::new()
        .with_swarm(kept(departed(MemorySwarm::new("alpha", "A"), "old"), "web"));
    let source = Scripted::new(vec![Ok(apps())]);
    let now = crate::state::now().unwrap();
    let opens = UnixTime::from_secs(now.as_secs() + 600);
    let freeze = sweep_core::deletion_window::DeletionWindow::parse(&format!(
        "deny 2000-01-01T00:00:00Z/{opens}"
    ))
    .unwrap();
    let policy = Policy::new("default", false, None).with_windows(vec![freeze]);
    let s = sweeper_of(&registry, &source, policy);
    let swept = s.sweep(&never()).await;
    assert_eq!(
        swept,
        Swept {
            outcome: SweepOutcome::Success,
            verdict: SUCCESS,
            window_opens: Some(opens),
        }
    );
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_holds{reason=\"outside_window\"}"
        ),
        "1"
    );
    let now = std::time::UNIX_EPOCH + Duration::from_secs(now.as_secs());
    let wait = window_wait(swept.window_opens, now, Duration::from_secs(3600));
    assert_eq!(wait, Some(Duration::from_secs(601)));
    // An interval that ends first wins.
    assert_eq!(
        window_wait(swept.window_opens, now, Duration::from_secs(300)),
        None
    );
    assert_eq!(window_wait(None, now, Duration::from_secs(3600)), None);
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
            verdict: SUCCESS,
            window_opens: None,
        }
    );
    assert_eq!(release_names(&registry, "alpha"), ["web"]);
    assert!(registry.stack("alpha", "old").is_none_or(|s| s.is_empty()));
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_deletions_total{reason=\"departed\"}"
        ),
        "1"
    );
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_sweeps_total{outcome=\"success\"}"
        ),
        "1"
    );
    assert_eq!(metric(&s.host.shared, "swarm_sweep_failures_total"), "0");
    assert_ne!(
        metric(&s.host.shared, "swarm_sweep_last_success_timestamp_seconds"),
        "0"
    );
    assert_eq!(
        metric(&s.host.shared, "swarm_sweep_gather_duration_seconds_count"),
        "1"
    );
    assert_eq!(s.host.shared.readiness(), shared::Readiness::Ready);
    let (plan, report) = last(&s.host.shared);
    assert_eq!(plan.deletions.len(), 1);
    assert_eq!(report.totals.deleted, 1);

    // Nothing is left to delete: the next sweep deletes nothing more.
    let swept = s.sweep(&never()).await;
    assert_eq!(swept.outcome, SweepOutcome::Success);
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_deletions_total{reason=\"departed\"}"
        ),
        "1"
    );
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_sweeps_total{outcome=\"success\"}"
        ),
        "2"
    );
}

#[tokio::test(start_paused = true)]
async fn an_unreadable_app_set_holds_the_sweep_with_the_cores_hold() {
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
            verdict: NEEDS_ATTENTION,
            window_opens: None,
        }
    );
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
    // The plan served is the core's: the whole sweep held because the app
    // set was not loaded, as any snapshot without one is; nothing ran.
    let held = |s: &Sweeper<'_>| -> SweepPlan {
        serde_json::from_slice(&s.host.shared.plan().expect("a plan")).unwrap()
    };
    let plan = held(&s);
    assert!(plan.is_held() && plan.deletions.is_empty());
    assert_eq!(
        plan.holds.iter().map(|h| h.reason).collect::<Vec<_>>(),
        [sweep_core::HoldReason::AppSetNotLoaded]
    );
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_holds{reason=\"app_set_not_loaded\"}"
        ),
        "1"
    );
    assert!(s.host.shared.report().is_none());
    assert_eq!(s.host.shared.readiness(), shared::Readiness::NotYet);
    assert_eq!(
        metric(&s.host.shared, "swarm_sweep_gather_duration_seconds_count"),
        "0",
        "nothing was gathered"
    );

    // Readable, and `old` is declared again: a plan that deletes nothing.
    assert_eq!(s.sweep(&never()).await.outcome, SweepOutcome::Success);
    let before = s.host.shared.plan().unwrap();

    assert!(!held(&s).is_held());

    // Unreadable again, with `old` no longer declared by anything that
    // could be read: held again, nothing deleted.
    let swept = s.sweep(&never()).await;
    assert_eq!(swept.outcome, SweepOutcome::AppSetUnreadable);
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
    assert_ne!(s.host.shared.plan().unwrap(), before);
    assert_eq!(
        held(&s).holds.iter().map(|h| h.reason).collect::<Vec<_>>(),
        [sweep_core::HoldReason::AppSetNotLoaded]
    );
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_sweeps_total{outcome=\"app_set_unreadable\"}"
        ),
        "2"
    );
    assert_eq!(
        metric(
            &s.host.shared,
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
    let (plan, report) = last(&s.host.shared);
    assert_eq!(
        swept.verdict,
        sweep_core::verdict::apply_status(&plan, &report)
    );
    assert_eq!(swept.verdict, NEEDS_ATTENTION);
    assert_eq!(swept.outcome, SweepOutcome::NeedsAttention);
    assert_eq!(release_names(&registry, "alpha"), Vec::<String>::new());
    assert_eq!(release_names(&registry, "beta"), ["old"]);
    assert_eq!(
        s.host.shared.readiness(),
        shared::Readiness::Unreadable(vec!["beta".into()])
    );

    // An empty app set holds the whole sweep: `held`, and 1.
    let registry =
        MemoryRegistry::new().with_swarm(departed(MemorySwarm::new("alpha", "A"), "old"));
    let source = Scripted::new(vec![Ok(AppSet::new(true, Vec::new()))]);
    let s = sweeper(&registry, &source);
    let swept = s.sweep(&never()).await;
    let (plan, report) = last(&s.host.shared);
    assert_eq!(
        swept.verdict,
        sweep_core::verdict::apply_status(&plan, &report)
    );
    assert_eq!(
        swept,
        Swept {
            outcome: SweepOutcome::Held,
            verdict: NEEDS_ATTENTION,
            window_opens: None,
        }
    );
    assert_eq!(release_names(&registry, "alpha"), ["old"]);
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_holds{reason=\"empty_app_set\"}"
        ),
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
    assert_eq!(swept.verdict, NEEDS_ATTENTION);
    // Records go last: both releases are still found.
    assert_eq!(release_names(&memory, "alpha"), ["one", "two"]);
    assert_eq!(
        metric(
            &s.host.shared,
            "swarm_sweep_sweeps_total{outcome=\"interrupted\"}"
        ),
        "1"
    );
    assert_eq!(metric(&s.host.shared, "swarm_sweep_failures_total"), "0");

    registry.clear();
    let swept = s.sweep(&never()).await;
    assert_eq!(swept.outcome, SweepOutcome::Success);
    assert_eq!(release_names(&memory, "alpha"), Vec::<String>::new());
    assert_eq!(
        metric(
            &s.host.shared,
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
        metric(
            &s.host.shared,
            "swarm_sweep_sweeps_total{outcome=\"success\"}"
        ),
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
    let mut s = with_an_hour(&registry, &source);
    s.host.state_file = Some(file.clone());

    // Seen departed now: its hour starts, nothing is deleted; the sweep
    // itself wrote the state.
    s.sweep(&never()).await;
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
    let since = s
        .grace()
        .unwrap()
        .since(&"alpha".into(), "old")
        .expect("the clock started");
    let written = crate::state::read(&file).unwrap().expect("a state file");
    assert_eq!(Some(written), s.grace());

    // Still inside the hour: the first-seen time is kept, not restarted.
    s.sweep(&never()).await;
    assert_eq!(
        s.grace().unwrap().since(&"alpha".into(), "old"),
        Some(since)
    );
    assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);

    // Seen departed two hours ago: it goes, and leaves the state.
    s.cycle.replace_grace(Grace::new(GraceState::new(
        vec![sweep_core::Departed::new(
            "alpha",
            "old",
            sweep_core::UnixTime::from_secs(since.as_secs() - 7200),
        )],
        since,
    )));
    assert_eq!(s.sweep(&never()).await.outcome, SweepOutcome::Success);
    assert_eq!(release_names(&registry, "alpha"), ["web"]);
    assert_eq!(s.grace().unwrap().since(&"alpha".into(), "old"), None);
    assert!(s.persist_state());
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
    sweeper_of(
        registry,
        app_set,
        Policy::new("default", false, None).with_min_departed_for(Some(Duration::from_secs(3600))),
    )
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
        s.cycle.replace_grace(Grace {
            state: crate::state::load(&file, now, max_age).unwrap(),
            max_age: None,
        });
        s.sweep(&never()).await;
        let (plan, _) = last(&s.host.shared);
        if deleted {
            assert_eq!(release_names(&registry, "alpha"), ["web"]);
            assert_eq!(s.grace().unwrap().since(&"alpha".into(), "old"), None);
        } else {
            assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
            assert!(plan.deletions.is_empty());
            let spared = plan.spared.iter().find(|x| x.release == "old").unwrap();
            assert_eq!(spared.reason, sweep_core::SpareReason::GracePeriod);
            let since = s.grace().unwrap().since(&"alpha".into(), "old").unwrap();
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
        let s = with_an_hour(&registry, &source);
        let now = crate::state::now().unwrap().as_secs();
        s.cycle.replace_grace(Grace {
            state: old_state(renewed_ago),
            max_age: default_state_max_age(Duration::from_secs(300), false),
        });
        s.sweep(&never()).await;
        let (plan, _) = last(&s.host.shared);
        if deleted {
            assert_eq!(release_names(&registry, "alpha"), ["web"]);
        } else {
            assert_eq!(release_names(&registry, "alpha"), ["old", "web"]);
            assert!(plan.deletions.is_empty());
            let since = s.grace().unwrap().since(&"alpha".into(), "old").unwrap();
            assert!(since.as_secs() >= now, "the clock restarted: {since}");
        }
        // Either way the state is renewed by this sweep's plan.
        assert!(s.grace().unwrap().written_at.as_secs() >= now);
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

/// Never answers until told to, like a FIFO whose writer never writes;
/// counts the reads that reached it.
#[derive(Clone, Default)]
struct Stuck {
    gate: Arc<(Mutex<bool>, std::sync::Condvar)>,
    reads: Arc<std::sync::atomic::AtomicUsize>,
}

impl Stuck {
    fn release(&self) {
        *self.gate.0.lock().unwrap() = true;
        self.gate.1.notify_all();
    }

    fn reads(&self) -> usize {
        self.reads.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl AppSetSource for Stuck {
    fn read(&self) -> Result<AppSet, String> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let (released, wake) = &*self.gate;
        let mut released = released.lock().unwrap();
        while !*released {
            released = wake.wait(released).unwrap();
        }
        Ok(apps())
    }
}

/// Waits, in real time and at most `limit`, until `done`.
async fn until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn an_app_set_that_never_reads_holds_its_sweep_and_not_the_stop() {
    let registry =
        MemoryRegistry::new().with_swarm(departed(MemorySwarm::new("alpha", "A"), "old"));
    let stuck = Stuck::default();
    let mut s = sweeper(&registry, &Scripted::new(vec![Ok(apps())]));
    s.host.app_set = AppSetReader::new(Arc::new(stuck.clone()), Duration::from_millis(200));
    // A stop is heard while the read hangs.
    let (trigger, stop) = Stop::new();
    let (swept, ()) = tokio::join!(s.sweep(&stop), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.stop();
    });
    assert_eq!(swept.outcome, SweepOutcome::Interrupted);
    // The read still hangs: the next sweep is held within the bound, not
    // stuck behind it.
    let swept = tokio::time::timeout(Duration::from_secs(5), s.sweep(&never()))
        .await
        .expect("held, not stuck");
    assert_eq!(swept.outcome, SweepOutcome::AppSetUnreadable);
    assert_eq!(release_names(&registry, "alpha"), ["old"]);
    // Once it answers, sweeps go on; what the abandoned reads return is
    // dropped.
    stuck.release();
    until("the stuck reads to end", Duration::from_secs(5), || {
        s.host.app_set.alive() == 0
    })
    .await;
    assert_eq!(s.sweep(&never()).await.outcome, SweepOutcome::Success);
}

#[tokio::test]
async fn stuck_reads_alive_at_once_are_bounded_and_later_reads_start_afresh() {
    let stuck = Stuck::default();
    let reader = AppSetReader::new(Arc::new(stuck.clone()), Duration::from_millis(20));
    // Every read hangs and is abandoned: a fresh one each time, until
    // MAX_STUCK_READS are alive; then none is started.
    for i in 0..MAX_STUCK_READS + 3 {
        let expected = if i < MAX_STUCK_READS {
            Unreadable::TooSlow(Duration::from_millis(20))
        } else {
            Unreadable::TooManyStuck(MAX_STUCK_READS)
        };
        match reader.read(&never()).await {
            Read::Unreadable(e) => assert_eq!(e, expected, "read {i}"),
            _ => panic!("read {i}: not held"),
        }
    }
    assert_eq!(reader.alive(), MAX_STUCK_READS);
    until(
        "the reads to reach the source",
        Duration::from_secs(5),
        || stuck.reads() == MAX_STUCK_READS,
    )
    .await;
    // They all return at last, their results dropped; the next read is a
    // fresh one, and it reads.
    stuck.release();
    until("the stuck reads to end", Duration::from_secs(5), || {
        reader.alive() == 0
    })
    .await;
    assert!(matches!(reader.read(&never()).await, Read::AppSet(_)));
    assert_eq!(stuck.reads(), MAX_STUCK_READS + 1);
}

#[test]
fn the_read_limit_is_the_interval_when_shorter() {
    let secs = Duration::from_secs;
    assert_eq!(read_limit(secs(1), false), secs(1));
    assert_eq!(read_limit(secs(300), false), APP_SET_READ_LIMIT);
    assert_eq!(read_limit(secs(1), true), APP_SET_READ_LIMIT);
}

#[test]
fn readyz_fails_once_the_app_set_is_unread_for_more_than_three_intervals() {
    let interval = Duration::from_secs(60);
    let shared = Shared::new("/run/apps.yaml", app_set_patience(interval));
    let t0 = Instant::now();
    shared.gathered(
        &sweep_core::Snapshot::new(
            Policy::default(),
            apps(),
            vec![sweep_core::SwarmSnapshot::new("alpha")],
        ),
        Duration::ZERO,
    );
    // Unreadable since t0; the last gather's readiness stands for three
    // intervals, and the later failures do not move the start.
    shared.app_set_unreadable(t0, "first".into());
    shared.app_set_unreadable(t0 + interval, "still stuck".into());
    assert_eq!(shared.readiness_at(t0 + 3 * interval), Readiness::Ready);
    assert_eq!(
        shared.readiness_at(t0 + 3 * interval + Duration::from_secs(1)),
        Readiness::AppSetUnreadable {
            file: "/run/apps.yaml".into(),
            for_: 3 * interval + Duration::from_secs(1),
            why: "still stuck".into(),
        }
    );
    // One read and it is forgotten; a new run of failures starts afresh.
    shared.app_set_read();
    assert_eq!(shared.readiness_at(t0 + 10 * interval), Readiness::Ready);
    shared.app_set_unreadable(t0 + 10 * interval, "again".into());
    assert_eq!(shared.readiness_at(t0 + 13 * interval), Readiness::Ready);
}

/// A FIFO at `path` whose writer is connected and never writes: opening
/// it for reading returns, reading it waits for good.
fn silent_fifo(path: &std::path::Path) -> std::fs::File {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
    // Opened for reading and writing, which never waits for the other
    // end, the FIFO has a writer for as long as the file is kept.
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap()
}

#[tokio::test]
async fn a_read_stuck_on_a_silent_fifo_is_abandoned_and_sweeps_resume_once_the_app_set_reads() {
    let interval = Duration::from_millis(500);
    let registry = MemoryRegistry::new().with_swarm(kept(MemorySwarm::new("alpha", "A"), "web"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("apps.yaml");
    let writer = silent_fifo(&path);
    let mut s = sweeper(&registry, &Scripted::new(vec![Ok(apps())]));
    s.host.app_set = AppSetReader::new(
        Arc::new(FileAppSet(path.clone())),
        read_limit(interval, false),
    );
    s.host.shared = Arc::new(Shared::new(
        path.display().to_string(),
        app_set_patience(interval),
    ));
    let unreadable = |s: &Sweeper<'_>| {
        metric(
            &s.host.shared,
            "swarm_sweep_sweeps_total{outcome=\"app_set_unreadable\"}",
        )
        .parse::<u32>()
        .unwrap()
    };
    let (trigger, stop) = Stop::new();
    let began = Instant::now();
    let watched = async {
        // Held from the first sweep, ready or not as before for three
        // intervals, then not ready, naming the file.
        until("a held sweep", Duration::from_secs(10), || {
            unreadable(&s) >= 1
        })
        .await;
        assert_eq!(s.host.shared.readiness(), Readiness::NotYet);
        until("/readyz to fail", Duration::from_secs(20), || {
            matches!(
                s.host.shared.readiness(),
                Readiness::AppSetUnreadable { .. }
            )
        })
        .await;
        assert!(began.elapsed() > app_set_patience(interval));
        let Readiness::AppSetUnreadable { file, for_, .. } = s.host.shared.readiness() else {
            unreachable!()
        };
        assert_eq!(file, path.display().to_string());
        assert!(for_ > app_set_patience(interval), "{for_:?}");
        // Sweeps went on meanwhile, each held (one at 0, 1, 2 and perhaps
        // 3 intervals).
        assert!(unreadable(&s) >= 3, "{}", unreadable(&s));
        // The stuck read is abandoned, and the later ones do not open the
        // same FIFO to get stuck beside it: one alive, and perhaps the
        // current sweep's, about to find that out.
        assert!(s.host.app_set.alive() <= 2, "{}", s.host.app_set.alive());

        // A regular file renamed over the FIFO, whose silent writer stays:
        // the next sweep reads it and goes on.
        let next = dir.path().join("apps.yaml.new");
        std::fs::write(
            &next,
            "loaded: true\napplications:\n  - name: shop\n    swarm: alpha\n    releases: [web]\n",
        )
        .unwrap();
        std::fs::rename(&next, &path).unwrap();
        let restored = Instant::now();
        until("a sweep after the restore", Duration::from_secs(10), || {
            metric(
                &s.host.shared,
                "swarm_sweep_sweeps_total{outcome=\"success\"}",
            ) == "1"
        })
        .await;
        let resumed = restored.elapsed();
        // At the next interval, with room for a loaded machine.
        assert!(
            resumed < interval * 2 + Duration::from_secs(1),
            "{resumed:?}"
        );
        assert_eq!(s.host.shared.readiness(), Readiness::Ready);
        trigger.stop();
    };
    tokio::join!(watch_loop(&s, interval, &stop), watched);
    drop(writer);
}

/// [`sweeper`] appending to the audit log `file`.
fn audited<'a>(
    registry: &'a dyn Registry,
    app_set: &Scripted,
    file: &std::path::Path,
) -> Sweeper<'a> {
    let mut s = sweeper(registry, app_set);
    s.host.audit = Some(AuditLog::new(file.to_owned(), Origin::watch()));
    s
}

#[tokio::test(start_paused = true)]
async fn every_object_a_sweep_acted_on_is_in_the_audit_log_once() {
    let old = MemoryStack::new().service("old_svc").network("old_net");
    let registry = MemoryRegistry::new().with_swarm(kept(
        MemorySwarm::new("alpha", "A")
            .record(MemoryRecord::new(
                "old",
                1,
                Some("cd/default/gone:release/old"),
            ))
            .stack("old", old),
        "web",
    ));
    let source = Scripted::new(vec![Ok(apps())]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.jsonl");
    let s = audited(&registry, &source, &file);
    let swept = s.sweep(&never()).await;
    assert_eq!(swept.verdict, SUCCESS);
    let (_, report) = last(&s.host.shared);
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<sweep_core::audit::AuditEntry> = text
        .lines()
        .map(|l| sweep_core::audit::parse_line(l.as_bytes()).unwrap())
        .collect();
    let named: Vec<(String, String)> = lines
        .iter()
        .map(|l| (l.kind.to_string(), l.name.clone()))
        .collect();
    assert_eq!(
        named,
        report
            .objects
            .iter()
            .map(|o| (o.kind.to_string(), o.name.clone()))
            .collect::<Vec<_>>()
    );
    for (kind, name) in [
        ("service", "old_svc"),
        ("network", "old_net"),
        ("record", "old"),
    ] {
        assert_eq!(
            named
                .iter()
                .filter(|n| **n == (kind.to_owned(), name.to_owned()))
                .count(),
            1,
            "{kind} {name} in {named:?}"
        );
    }
    assert!(lines
        .iter()
        .all(|l| l.trigger == sweep_core::audit::Trigger::Watch
            && l.cluster_id.as_deref() == Some("A")
            && l.outcome == sweep_core::sweep::ObjectOutcome::Removed));
    assert_eq!(
        metric(&s.host.shared, "swarm_sweep_audit_write_failures_total"),
        "0"
    );
    // Nothing left to delete: the next sweep writes nothing.
    s.sweep(&never()).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[tokio::test(start_paused = true)]
async fn a_log_that_cannot_be_written_is_counted_and_the_sweep_stands() {
    let registry = MemoryRegistry::new()
        .with_swarm(kept(departed(MemorySwarm::new("alpha", "A"), "old"), "web"));
    let source = Scripted::new(vec![Ok(apps())]);
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be: every open of it fails.
    let file = dir.path().join("audit.jsonl");
    std::fs::create_dir(&file).unwrap();
    let s = audited(&registry, &source, &file);
    let swept = s.sweep(&never()).await;
    assert_eq!(swept.outcome, SweepOutcome::Success);
    // What `--once` ends with: a person must look.
    assert_eq!(swept.verdict, NEEDS_ATTENTION);
    assert_eq!(release_names(&registry, "alpha"), ["web"]);
    assert_eq!(
        metric(&s.host.shared, "swarm_sweep_audit_write_failures_total"),
        "1"
    );
}

/// A real receiver on 127.0.0.1 needs real time: not a paused clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_object_a_sweep_removes_is_told_once_to_the_webhook() {
    use crate::cli::NotifyFormat;
    use crate::notify::tests::{receiver, Answer};
    use crate::notify::{Limits, Notifier, Settings};
    use sweep_core::notify::NotifyMemory;

    let registry = MemoryRegistry::new().with_swarm(kept(
        departed(departed(MemorySwarm::new("alpha", "A"), "old"), "older"),
        "web",
    ));
    let source = Scripted::new(vec![Ok(apps())]);
    let (webhook, received) = receiver(Answer::Ok).await;
    let notifier = Notifier::start(
        Settings {
            targets: vec![webhook],
            format: NotifyFormat::Json,
            held_after: Duration::from_secs(3600),
        },
        "default".into(),
        None,
        NotifyMemory::default(),
        Limits::default(),
        Box::new(|| {}),
    );
    let mut s = sweeper(&registry, &source);
    s.host = WatchHost::new(
        AppSetReader::new(Arc::new(source.clone()), APP_SET_READ_LIMIT),
        s.host.shared.clone(),
        None,
        Runs::Repeatedly,
    )
    .with_notifier(notifier);
    assert_eq!(s.sweep(&never()).await.outcome, SweepOutcome::Success);
    let (_, first) = last(&s.host.shared);
    // Nothing left to delete: the second sweep tells nothing.
    s.sweep(&never()).await;
    s.host.settle_notifications().await;
    let (_, second) = last(&s.host.shared);
    assert!(
        second.objects.is_empty(),
        "the second sweep removed nothing"
    );
    let bodies = received.requests.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    let event: serde_json::Value = serde_json::from_str(&bodies[0].1).unwrap();
    assert_eq!(event["event"], "deleted");
    assert_eq!(event["swarm"], "alpha");
    assert_eq!(event["releases"], serde_json::json!(["old", "older"]));
    let mut told: Vec<(String, String)> = event["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap().to_owned(),
                o["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    told.sort();
    let before = told.len();
    told.dedup();
    assert_eq!(told.len(), before, "each object once");
    let mut gone: Vec<(String, String)> = first
        .objects
        .iter()
        .filter(|o| o.outcome.is_gone())
        .map(|o| (o.kind.as_str().to_owned(), o.name.clone()))
        .collect();
    gone.sort();
    assert_eq!(told, gone);
    assert!(
        told.contains(&("service".into(), "old_svc".into())),
        "{told:?}"
    );
    assert!(
        told.contains(&("service".into(), "older_svc".into())),
        "{told:?}"
    );
}
