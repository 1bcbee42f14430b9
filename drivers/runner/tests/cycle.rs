//! The sweep cycle every deleting command runs, against the in-memory
//! registry: the order of its steps (the grace state kept before anything
//! is deleted), what an unreadable app set means once and repeatedly, and
//! what a host's refusal, a stop or a stale saved plan leave behind.

use std::cell::RefCell;
use std::time::Duration;

use sweep_core::saved::SavedPlan;
use sweep_core::sweep::Settings;
use sweep_core::verdict::Status;
use sweep_core::{plan, AppSet, Application, GraceState, HoldReason, Policy, SweepPlan, UnixTime};
use sweep_runner::{
    gather, AppSetRead, Approval, Cycle, CycleError, Event, ExecuteSettings, GatherSettings, Host,
    Outcome, Runs, Stop, StopTrigger,
};
use sweep_testkit::{MemoryRecord, MemoryRegistry, MemoryStack, MemorySwarm};

const NOW: u64 = 1_800_000_000;

fn release(swarm: MemorySwarm, name: &str, app: &str) -> MemorySwarm {
    let stamp = format!("cd/default/{app}:release/{name}");
    swarm
        .record(MemoryRecord::new(name, 1, Some(&stamp)))
        .stack(name, MemoryStack::new().service(format!("{name}_svc")))
}

/// Alpha with `old` (of the departed application `gone`) and `web` (of
/// `shop`, still declared).
fn registry() -> MemoryRegistry {
    MemoryRegistry::new().with_swarm(release(
        release(MemorySwarm::new("alpha", "A"), "old", "gone"),
        "web",
        "shop",
    ))
}

fn apps() -> AppSet {
    AppSet::new(
        true,
        vec![Application::reconciled("shop", "alpha", &["web"])],
    )
}

fn releases(registry: &MemoryRegistry) -> Vec<String> {
    registry.release_names("alpha")
}

/// What happened, in order, as the host saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    AppSetRead,
    AppSetUnreadable,
    Gathered,
    StateNotCurrent,
    Planned { deletions: usize, held: bool },
    Stale,
    Saved { entries: usize },
    Asked,
    WindowClosed { swarms: Vec<String> },
}

struct TestHost {
    app_set: Option<AppSet>,
    now: std::cell::Cell<Option<UnixTime>>,
    /// The clock once the host was asked: an answer that came later.
    now_when_asked: Option<UnixTime>,
    approval: Approval,
    /// Whether writing the state works.
    saves: bool,
    /// Asked for while the host is asking, as a signal at a prompt is.
    stop_when_asked: Option<StopTrigger>,
    seen: RefCell<Vec<Seen>>,
    gathered: RefCell<Vec<Timed>>,
}

/// What a gathered snapshot said of time: its `now`, and each release's
/// `departed_since` by name.
type Timed = (Option<UnixTime>, Vec<(String, Option<UnixTime>)>);

impl TestHost {
    fn new(app_set: Option<AppSet>) -> Self {
        TestHost {
            app_set,
            now: std::cell::Cell::new(Some(UnixTime::from_secs(NOW))),
            now_when_asked: None,
            approval: Approval::Proceed,
            saves: true,
            stop_when_asked: None,
            seen: RefCell::new(Vec::new()),
            gathered: RefCell::new(Vec::new()),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.borrow().clone()
    }
}

impl Host for TestHost {
    async fn read_app_set(&self, _stop: &Stop) -> AppSetRead {
        match &self.app_set {
            Some(app_set) => AppSetRead::Read(app_set.clone()),
            None => AppSetRead::Unreadable("apps.yaml: line 1: not YAML".into()),
        }
    }

    fn now(&self) -> Option<UnixTime> {
        self.now.get()
    }

    fn save_state(&self, state: &GraceState) -> bool {
        self.seen.borrow_mut().push(Seen::Saved {
            entries: state.departed.len(),
        });
        self.saves
    }

    fn approve(&self, _plan: &SweepPlan) -> Approval {
        self.seen.borrow_mut().push(Seen::Asked);
        if let Some(later) = self.now_when_asked {
            self.now.set(Some(later));
        }
        if let Some(trigger) = &self.stop_when_asked {
            trigger.stop();
        }
        self.approval
    }

    fn event(&self, event: Event<'_>) {
        let seen = match event {
            Event::AppSetRead => Seen::AppSetRead,
            Event::AppSetUnreadable(_) => Seen::AppSetUnreadable,
            Event::Gathered { snapshot, .. } => {
                let releases = snapshot
                    .swarms
                    .iter()
                    .flat_map(|s| &s.releases)
                    .map(|r| (r.name.clone(), r.departed_since))
                    .collect();
                self.gathered.borrow_mut().push((snapshot.now, releases));
                Seen::Gathered
            }
            Event::StateNotCurrent(_) => Seen::StateNotCurrent,
            Event::Planned(plan) => Seen::Planned {
                deletions: plan.deletions.len(),
                held: plan.is_held(),
            },
            Event::Stale(_) => Seen::Stale,
            Event::WindowClosed(holds) => Seen::WindowClosed {
                swarms: holds
                    .iter()
                    .filter_map(|h| h.swarm.as_ref().map(|s| s.as_str().to_owned()))
                    .collect(),
            },
            _ => return,
        };
        self.seen.borrow_mut().push(seen);
    }
}

fn cycle(registry: &MemoryRegistry, runs: Runs) -> Cycle<'_> {
    Cycle::new(
        registry,
        Policy::new("default", false, None),
        GatherSettings::default(),
        ExecuteSettings::new(Settings::default(), 2, Duration::from_secs(60)),
        runs,
    )
}

fn state() -> GraceState {
    GraceState::empty(UnixTime::from_secs(NOW - 60))
}

#[tokio::test(start_paused = true)]
async fn the_state_is_kept_before_anything_is_deleted_and_again_after() {
    let registry = registry();
    let cycle = cycle(&registry, Runs::Once).with_grace(state(), None);
    let host = TestHost::new(Some(apps()));
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::Success);
    assert_eq!(ended.status, Status::Success);
    assert_eq!(releases(&registry), ["web"]);
    assert_eq!(
        host.seen(),
        [
            Seen::AppSetRead,
            Seen::Gathered,
            Seen::Planned {
                deletions: 1,
                held: false
            },
            // Departed `old` is in the state written before the sweep, and
            // gone from the one written after it.
            Seen::Saved { entries: 1 },
            Seen::Asked,
            Seen::Saved { entries: 0 },
        ]
    );
    assert_eq!(
        cycle.grace().expect("a state").written_at,
        UnixTime::from_secs(NOW)
    );
}

#[tokio::test(start_paused = true)]
async fn an_unreadable_app_set_is_bad_input_once_and_the_cores_hold_repeatedly() {
    let registry = registry();
    let host = TestHost::new(None);
    let once = cycle(&registry, Runs::Once).with_grace(state(), None);
    match once.run(&host, &Stop::never()).await {
        Err(CycleError::AppSet(why)) => assert!(why.contains("apps.yaml"), "{why}"),
        other => panic!("not bad input: {other:?}"),
    }
    // Nothing gathered, planned or written.
    assert_eq!(host.seen(), [Seen::AppSetUnreadable]);

    let host = TestHost::new(None);
    let repeatedly = cycle(&registry, Runs::Repeatedly).with_grace(state(), None);
    let ended = repeatedly.run(&host, &Stop::never()).await.expect("held");
    assert_eq!(ended.outcome, Outcome::AppSetUnreadable);
    assert_eq!(ended.status, Status::NeedsAttention);
    let plan = ended.plan.expect("the core's plan");
    assert_eq!(
        plan.holds.iter().map(|h| h.reason).collect::<Vec<_>>(),
        [HoldReason::AppSetNotLoaded]
    );
    assert!(plan.deletions.is_empty() && plan.swarms.is_empty());
    assert_eq!(
        host.seen(),
        [
            Seen::AppSetUnreadable,
            Seen::Planned {
                deletions: 0,
                held: true
            }
        ]
    );
    // The grace state is not renewed by a sweep that knows nothing new.
    assert_eq!(repeatedly.grace(), Some(state()));
    assert_eq!(releases(&registry), ["old", "web"]);
}

#[tokio::test(start_paused = true)]
async fn a_declined_plan_deletes_nothing_and_keeps_the_state_of_the_plan() {
    let registry = registry();
    let cycle = cycle(&registry, Runs::Once).with_grace(state(), None);
    let mut host = TestHost::new(Some(apps()));
    host.approval = Approval::Declined;
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::Declined);
    assert_eq!(ended.status, Status::NeedsAttention);
    assert!(ended.report.is_none());
    assert_eq!(releases(&registry), ["old", "web"]);
    assert_eq!(host.seen().last(), Some(&Seen::Asked));
    assert!(host.seen().contains(&Seen::Saved { entries: 1 }));
}

#[tokio::test(start_paused = true)]
async fn a_stop_while_asking_is_a_no() {
    let registry = registry();
    let cycle = cycle(&registry, Runs::Once);
    let (trigger, stop) = Stop::new();
    let mut host = TestHost::new(Some(apps()));
    host.stop_when_asked = Some(trigger);
    let ended = cycle.run(&host, &stop).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::Interrupted);
    assert_eq!(ended.status, Status::NeedsAttention);
    assert_eq!(releases(&registry), ["old", "web"]);
}

#[tokio::test(start_paused = true)]
async fn a_stop_before_the_cycle_reads_no_swarm() {
    let registry = registry();
    let cycle = cycle(&registry, Runs::Repeatedly);
    let (trigger, stop) = Stop::new();
    trigger.stop();
    let host = TestHost::new(Some(apps()));
    let ended = cycle.run(&host, &stop).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::Interrupted);
    assert!(!host.seen().contains(&Seen::Gathered));
    assert_eq!(releases(&registry), ["old", "web"]);
}

#[tokio::test(start_paused = true)]
async fn a_state_that_cannot_be_written_needs_a_person_even_when_all_went() {
    let registry = registry();
    let cycle = cycle(&registry, Runs::Once).with_grace(state(), None);
    let mut host = TestHost::new(Some(apps()));
    host.saves = false;
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::Success);
    assert_eq!(ended.status, Status::NeedsAttention);
    assert_eq!(releases(&registry), ["web"]);
}

#[tokio::test(start_paused = true)]
async fn a_state_not_kept_current_restarts_every_clock() {
    let registry = registry();
    // An hour's window, and a state that says `old` left two days ago but
    // was last written a day ago, older than its maximum age allows.
    let policy =
        Policy::new("default", false, None).with_min_departed_for(Some(Duration::from_secs(3600)));
    let old = GraceState::new(
        vec![sweep_core::Departed::new(
            "alpha",
            "old",
            UnixTime::from_secs(NOW - 2 * 86_400),
        )],
        UnixTime::from_secs(NOW - 86_400),
    );
    let cycle = Cycle::new(
        &registry,
        policy,
        GatherSettings::default(),
        ExecuteSettings::new(Settings::default(), 2, Duration::from_secs(60)),
        Runs::Repeatedly,
    )
    .with_grace(old, Some(Duration::from_secs(900)));
    let host = TestHost::new(Some(apps()));
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert!(host.seen().contains(&Seen::StateNotCurrent));
    assert!(ended.plan.expect("a plan").deletions.is_empty());
    assert_eq!(releases(&registry), ["old", "web"]);
    let kept = cycle.grace().expect("a state");
    assert_eq!(
        kept.since(&"alpha".into(), "old"),
        Some(UnixTime::from_secs(NOW))
    );
}

/// The gathered snapshot the host is told of is the one the plan is made
/// from, as `swarm-sweep snapshot` prints it: with the time, and the grace
/// state's first-seen times. Planned elsewhere (`watch`'s `/snapshot`), it
/// waits out the same grace periods and deletion windows.
#[tokio::test(start_paused = true)]
async fn the_gathered_snapshot_carries_the_time_and_the_first_seen_times() {
    let registry = registry();
    let policy =
        Policy::new("default", false, None).with_min_departed_for(Some(Duration::from_secs(3600)));
    let since = UnixTime::from_secs(NOW - 600);
    let kept = GraceState::new(
        vec![sweep_core::Departed::new("alpha", "old", since)],
        UnixTime::from_secs(NOW - 60),
    );
    let cycle = Cycle::new(
        &registry,
        policy,
        GatherSettings::default(),
        ExecuteSettings::new(Settings::default(), 2, Duration::from_secs(60)),
        Runs::Once,
    )
    .with_grace(kept, None);
    let host = TestHost::new(Some(apps()));
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    let planned = ended.plan.expect("a plan");
    // `old` waits out the rest of its hour.
    assert!(planned.deletions.is_empty());
    assert_eq!(
        host.gathered.borrow().clone(),
        [(
            Some(UnixTime::from_secs(NOW)),
            vec![("old".to_owned(), Some(since)), ("web".to_owned(), None)]
        )]
    );

    // Without a state, a grace period still needs the time.
    let cycle = Cycle::new(
        &registry,
        Policy::new("default", false, None).with_min_departed_for(Some(Duration::from_secs(60))),
        GatherSettings::default(),
        ExecuteSettings::new(Settings::default(), 2, Duration::from_secs(60)),
        Runs::Once,
    );
    let host = TestHost::new(Some(apps()));
    cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert_eq!(host.gathered.borrow()[0].0, Some(UnixTime::from_secs(NOW)));
}

#[tokio::test(start_paused = true)]
async fn a_clock_before_1970_deletes_nothing() {
    let registry = registry();
    let cycle = cycle(&registry, Runs::Once);
    let host = TestHost::new(Some(apps()));
    host.now.set(None);
    assert!(matches!(
        cycle.run(&host, &Stop::never()).await,
        Err(CycleError::Clock)
    ));
    assert_eq!(releases(&registry), ["old", "web"]);
}

#[tokio::test(start_paused = true)]
async fn a_stale_saved_plan_deletes_nothing_and_keeps_the_fresh_state() {
    let registry = registry();
    // Saved while `web` was departed too; `web` is declared again since.
    let snapshot = gather(
        &registry,
        Policy::new("default", false, None),
        AppSet::new(
            true,
            vec![Application::reconciled("other", "alpha", &["x"])],
        ),
        GatherSettings::default(),
    )
    .await;
    let saved = SavedPlan::new(&snapshot, plan(&snapshot).unwrap(), "1.0.0");
    let cycle = cycle(&registry, Runs::Once)
        .with_saved_plan(saved, "1.0.0")
        .with_grace(state(), None);
    let host = TestHost::new(Some(apps()));
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::Stale);
    assert_eq!(ended.status, Status::Stale);
    assert_eq!(releases(&registry), ["old", "web"]);
    assert_eq!(
        host.seen(),
        [
            Seen::AppSetRead,
            Seen::Gathered,
            Seen::Stale,
            Seen::Saved { entries: 1 }
        ]
    );
}

/// Planned inside the deletion window, approved after it closed (a prompt
/// left waiting): nothing is deleted, and the host is told why.
#[tokio::test(start_paused = true)]
async fn a_window_that_closed_before_the_approval_deletes_nothing() {
    let registry = registry();
    // NOW is a Friday, 08:00 UTC.
    let window = sweep_core::deletion_window::DeletionWindow::parse("allow Fri 07:00-09:00 UTC")
        .expect("a window");
    let cycle = Cycle::new(
        &registry,
        Policy::new("default", false, None).with_windows(vec![window]),
        GatherSettings::default(),
        ExecuteSettings::new(Settings::default(), 2, Duration::from_secs(60)),
        Runs::Once,
    );
    let mut host = TestHost::new(Some(apps()));
    host.now_when_asked = Some(UnixTime::from_secs(NOW + 2 * 3600));
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::Held);
    assert_eq!(ended.status, Status::NeedsAttention);
    assert!(ended.report.is_none());
    assert_eq!(releases(&registry), ["old", "web"]);
    assert_eq!(
        host.seen().last(),
        Some(&Seen::WindowClosed {
            swarms: vec!["alpha".to_owned()]
        })
    );

    // Answered in the window's last second: the sweep starts, and the
    // window closes (a second early, as the clock reads whole seconds)
    // before anything is removed.
    let mut host = TestHost::new(Some(apps()));
    host.now_when_asked = Some(UnixTime::from_secs(NOW + 3599));
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::NeedsAttention);
    assert_eq!(ended.status, Status::NeedsAttention);
    let report = ended.report.expect("a sweep");
    assert!(report.releases[0]
        .errors
        .iter()
        .any(|e| e.kind == sweep_core::sweep::ErrorKind::WindowClosed));
    assert_eq!(releases(&registry), ["old", "web"]);

    // Answered while the window is still open, it deletes.
    let mut host = TestHost::new(Some(apps()));
    host.now_when_asked = Some(UnixTime::from_secs(NOW + 3000));
    let ended = cycle.run(&host, &Stop::never()).await.expect("it ran");
    assert_eq!(ended.outcome, Outcome::Success);
    assert_eq!(releases(&registry), ["web"]);
}
