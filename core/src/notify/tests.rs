use std::time::Duration;

use proptest::prelude::*;

use super::decide::{removal_events, Removal};
use super::*;
use crate::plan::{plan, SweepPlan};
use crate::saved::{Change, ReleaseChange, Stale};
use crate::snapshot::Snapshot;
use crate::{GraceState, ReleaseRef};

const HOUR: Duration = Duration::from_secs(3600);

fn at(minutes: u64) -> UnixTime {
    UnixTime::from_secs(1_796_112_000 + minutes * 60)
}

/// A plan whose swarm `a` is held: `shop` has not said which releases it
/// declares, so the departed `blog` waits.
fn held_plan() -> SweepPlan {
    plan(
        &Snapshot::from_json(
            r#"{"app_set":{"loaded":true,"applications":[
                {"name":"shop","swarm":"a"},
                {"name":"wiki","swarm":"b","releases":[]}]},
              "swarms":[
                {"swarm":"a","releases":[{"name":"blog","owner":"cd/default/blog:release/blog"}]},
                {"swarm":"b","releases":[]}]}"#,
        )
        .unwrap(),
    )
    .unwrap()
}

fn free_plan() -> SweepPlan {
    plan(
        &Snapshot::from_json(
            r#"{"app_set":{"loaded":true,"applications":[{"name":"shop","swarm":"a","releases":[]}]},
              "swarms":[{"swarm":"a","releases":[]}]}"#,
        )
        .unwrap(),
    )
    .unwrap()
}

fn with_plan(plan: &SweepPlan) -> Facts<'_> {
    Facts {
        plan: Some(plan),
        ..Facts::default()
    }
}

/// A swarm outside its deletion windows is held by design: never news,
/// however long it lasts; the other holds of the plan still are.
#[test]
fn a_window_hold_is_never_news() {
    let windowed = plan(
        &Snapshot::from_json(
            r#"{"policy":{"windows":["deny 2020-01-01T00:00:00Z/2099-01-01T00:00:00Z"]},
              "now":"2026-12-01T00:00:00Z",
              "app_set":{"loaded":true,"applications":[{"name":"shop","swarm":"a"}]},
              "swarms":[{"swarm":"a","releases":[{"name":"blog","owner":"cd/default/blog:release/blog"}]},
                        {"swarm":"b","releases":[{"name":"wiki","owner":"cd/default/wiki:release/wiki"}]}]}"#,
        )
        .unwrap(),
    )
    .unwrap();
    let reasons: Vec<&str> = windowed.holds.iter().map(|h| h.reason.as_str()).collect();
    assert_eq!(
        reasons,
        ["unreconciled", "outside_window", "outside_window"]
    );
    let mut memory = NotifyMemory::default();
    assert!(decide(with_plan(&windowed), &mut memory, at(0), HOUR).is_empty());
    let events = decide(with_plan(&windowed), &mut memory, at(24 * 60), HOUR);
    let reasons: Vec<Option<&str>> = events.iter().map(|e| e.reason.as_deref()).collect();
    assert_eq!(reasons, [Some("unreconciled")]);
}

#[test]
fn a_hold_is_news_once_it_has_lasted_and_then_only_when_it_changes() {
    let held = held_plan();
    assert_eq!(held.holds.len(), 1, "{:?}", held.holds);
    let mut memory = NotifyMemory::default();
    // First seen: the clock starts, nothing is sent.
    assert!(decide(with_plan(&held), &mut memory, at(0), HOUR).is_empty());
    assert!(decide(with_plan(&held), &mut memory, at(59), HOUR).is_empty());
    // An hour after it was first seen: one event, about the held release.
    let events = decide(with_plan(&held), &mut memory, at(60), HOUR);
    assert_eq!(events.len(), 1);
    let e = &events[0];
    assert_eq!(e.event, EventKind::Held);
    assert_eq!(e.swarm, Some(SwarmName::new("a")));
    assert_eq!(e.reason.as_deref(), Some("unreconciled"));
    assert_eq!(e.since, Some(at(0)));
    assert_eq!(e.releases, ["blog"]);
    assert_eq!(e.objects[0].kind, "release");
    assert_eq!(e.objects[0].name, "blog");
    // The same hold a day later: not again.
    for minutes in [61, 120, 24 * 60] {
        assert!(decide(with_plan(&held), &mut memory, at(minutes), HOUR).is_empty());
    }
    // It clears; when it comes back its clock starts over.
    let free = free_plan();
    assert!(decide(with_plan(&free), &mut memory, at(1500), HOUR).is_empty());
    assert!(memory.is_empty(), "{memory:?}");
    assert!(decide(with_plan(&held), &mut memory, at(1501), HOUR).is_empty());
    assert_eq!(
        decide(with_plan(&held), &mut memory, at(1561), HOUR).len(),
        1
    );
}

/// An event that never reached anyone is news again at the next sweep:
/// the memory of having tried must not silence a hold for good. The
/// failure of an older event forgets nothing newer of its cause.
#[test]
fn an_event_that_was_not_delivered_is_sent_again() {
    let held = held_plan();
    let mut memory = NotifyMemory::default();
    assert!(decide(with_plan(&held), &mut memory, at(0), HOUR).is_empty());
    let events = decide(with_plan(&held), &mut memory, at(60), HOUR);
    assert_eq!(events.len(), 1);
    let receipt = events[0].receipt().expect("a hold's repeats are held back");
    assert!(decide(with_plan(&held), &mut memory, at(61), HOUR).is_empty());

    let older = SentEvent {
        cause: receipt.cause.clone(),
        fingerprint: "sha256:an-older-event".into(),
    };
    assert!(!memory.undelivered(&older));
    assert!(decide(with_plan(&held), &mut memory, at(62), HOUR).is_empty());

    assert!(memory.undelivered(&receipt));
    assert!(!memory.undelivered(&receipt), "forgotten once");
    assert_eq!(
        memory.held_since(&receipt.cause),
        Some(at(0)),
        "the hold's clock runs on"
    );
    assert_eq!(decide(with_plan(&held), &mut memory, at(63), HOUR), events);
    assert!(decide(with_plan(&held), &mut memory, at(64), HOUR).is_empty());
}

#[test]
fn the_memory_survives_the_state_file_and_an_older_state_still_reads() {
    let held = held_plan();
    let mut memory = NotifyMemory::default();
    decide(with_plan(&held), &mut memory, at(0), HOUR);
    assert_eq!(decide(with_plan(&held), &mut memory, at(90), HOUR).len(), 1);
    // Written with the grace state, read back by the next run.
    let text = GraceState::empty(at(90))
        .with_notify(memory.clone())
        .to_json_pretty();
    let read = GraceState::from_json(&text).unwrap();
    assert_eq!(read.notify, memory);
    let mut memory = read.notify;
    assert!(decide(with_plan(&held), &mut memory, at(95), HOUR).is_empty());
    // A state written before notifications existed: an empty memory.
    let old = r#"{"format_version":1,"written_at":"2026-12-01T09:00:00Z","departed":[]}"#;
    assert!(GraceState::from_json(old).unwrap().notify.is_empty());
    // An empty memory is not written, so such a state is unchanged.
    assert!(!GraceState::empty(at(0)).to_json_pretty().contains("notify"));
}

fn removal(swarm: &str, release: &str, kind: &str, name: &str, failed: Option<&str>) -> Removal {
    let mut object = EventObject::new(&SwarmName::new(swarm), Some(release), kind, name);
    object.outcome = Some(
        if failed.is_some() {
            "failed"
        } else {
            "removed"
        }
        .to_owned(),
    );
    object.error = failed.map(str::to_owned);
    Removal {
        object,
        failed: failed.is_some(),
    }
}

const REMOVALS: &[EventKind] = &[EventKind::Deleted, EventKind::DeletionFailed];

#[test]
fn removals_are_one_event_per_swarm_and_outcome_with_every_object() {
    let events = removal_events([
        removal("b", "db", "volume", "db_data", None),
        removal("a", "web", "service", "web_app", None),
        removal("a", "web", "network", "web_default", Some("in use")),
        removal("a", "web", "config", "web_conf", None),
    ]);
    let kinds: Vec<(EventKind, Option<&str>)> = events
        .iter()
        .map(|e| (e.event, e.swarm.as_ref().map(SwarmName::as_str)))
        .collect();
    assert_eq!(
        kinds,
        [
            (EventKind::Deleted, Some("a")),
            (EventKind::DeletionFailed, Some("a")),
            (EventKind::Deleted, Some("b")),
        ]
    );
    let names: Vec<&str> = events[0].objects.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["web_conf", "web_app"]);
    assert_eq!(events[0].counts.objects, 2);
    assert_eq!(events[2].counts.volumes, 1);
    assert_eq!(events[1].objects[0].error.as_deref(), Some("in use"));
}

#[test]
fn a_failure_retried_every_sweep_is_sent_once_and_deletions_every_time() {
    let mut memory = NotifyMemory::default();
    let sweep = |error: &str| {
        removal_events([
            removal("a", "web", "network", "web_default", Some(error)),
            removal("a", "web", "service", "web_app", None),
        ])
    };
    let first = memory.admit(sweep("in use (request 1)"), REMOVALS);
    assert_eq!(first.len(), 2);
    // Nothing is kept of a deletion, so nothing is handed back if it is lost.
    let receipts: Vec<_> = first
        .iter()
        .map(|e| (e.event, e.receipt().is_some()))
        .collect();
    assert_eq!(
        receipts,
        [
            (EventKind::Deleted, false),
            (EventKind::DeletionFailed, true)
        ]
    );
    // The same failure, another error text: not news. The deletion is.
    let second = memory.admit(sweep("in use (request 2)"), REMOVALS);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].event, EventKind::Deleted);
    // Another object fails: news.
    let third = memory.admit(
        removal_events([removal("a", "web", "secret", "web_key", Some("x"))]),
        REMOVALS,
    );
    assert_eq!(third.len(), 1);
    // A sweep without failures clears it; the next failure is news again.
    assert!(memory.admit(Vec::new(), REMOVALS).is_empty());
    assert!(memory.is_empty());
    assert_eq!(memory.admit(sweep("in use"), REMOVALS).len(), 2);
}

#[test]
fn a_sweep_that_saw_less_keeps_what_it_did_not_see() {
    let mut memory = NotifyMemory::default();
    memory.admit(
        removal_events([removal("a", "web", "network", "n", Some("x"))]),
        REMOVALS,
    );
    // No report (the sweep was declined or stopped): the failure is kept.
    let held = held_plan();
    decide(with_plan(&held), &mut memory, at(0), HOUR);
    assert_eq!(memory.sent.len(), 1);
    assert_eq!(
        memory
            .admit(
                removal_events([removal("a", "web", "network", "n", Some("y"))]),
                REMOVALS
            )
            .len(),
        0
    );
}

#[test]
fn a_stale_plan_names_what_changed_and_is_sent_once() {
    let stale = Stale {
        changes: vec![
            Change::Release {
                release: ReleaseRef::new("a", "web"),
                change: ReleaseChange::Restamped,
            },
            Change::Cluster {
                swarm: SwarmName::new("b"),
                planned: Some("C1".into()),
                now: None,
            },
        ],
    };
    let facts = Facts {
        stale: Some(&stale),
        ..Facts::default()
    };
    let mut memory = NotifyMemory::default();
    let events = decide(facts, &mut memory, at(0), HOUR);
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event, EventKind::StalePlan);
    assert_eq!(events[0].swarm, None);
    let objects: Vec<(&str, &str)> = events[0]
        .objects
        .iter()
        .map(|o| (o.kind.as_str(), o.name.as_str()))
        .collect();
    assert_eq!(objects, [("release", "web"), ("swarm", "b")]);
    assert!(decide(facts, &mut memory, at(10), HOUR).is_empty());
    // A plan made since: the refusal is over.
    let free = free_plan();
    decide(with_plan(&free), &mut memory, at(20), HOUR);
    assert_eq!(decide(facts, &mut memory, at(30), HOUR).len(), 1);
}

#[test]
fn an_event_lists_a_bounded_number_of_objects_and_counts_them_all() {
    let many =
        (0..MAX_OBJECTS + 5).map(|i| removal("a", "web", "volume", &format!("v{i:05}"), None));
    let events = removal_events(many);
    assert_eq!(events[0].objects.len(), MAX_OBJECTS);
    assert_eq!(events[0].objects_omitted, 5);
    assert_eq!(events[0].counts.objects, (MAX_OBJECTS + 5) as u64);
}

/// Names another user made a megabyte long, and an engine's error page
/// on every failed object: the body stays within what receivers take,
/// each long text cut and marked, and every object still counted.
#[test]
fn an_event_of_hostile_names_and_long_errors_stays_a_bounded_body() {
    let page = "<html>".repeat(64 * 1024 / 6);
    let huge = "r".repeat(1 << 20);
    let failed = (0..500).map(|i| {
        let release = format!("{huge}{i:03}");
        removal(
            "a",
            &release,
            "volume",
            &format!("{huge}v{i:03}"),
            Some(&page),
        )
    });
    let events = removal_events(failed);
    assert_eq!(events.len(), 1);
    let event = &events[0];
    assert_eq!(event.counts.objects, 500);
    assert_eq!(event.counts.releases, 500);
    assert_eq!(event.objects.len() as u64 + event.objects_omitted, 500);
    assert!(!event.objects.is_empty());
    let body = Notification::new(event, "prod-cd", at(0), None).to_json();
    assert!(
        body.len() <= MAX_OBJECT_BYTES + MAX_RELEASE_BYTES + 4096,
        "{} bytes",
        body.len()
    );
    let first = &event.objects[0];
    assert_eq!(first.name.chars().count(), MAX_NAME_CHARS + 1);
    assert!(first.name.ends_with('…'));
    assert!(first.release.as_deref().is_some_and(|r| r.ends_with('…')));
    let error = first.error.as_deref().unwrap();
    assert_eq!(error.chars().count(), MAX_ERROR_CHARS + 1);
    assert!(event
        .releases
        .iter()
        .all(|r| r.chars().count() <= MAX_NAME_CHARS + 1));
    // The Slack body of the same event is bounded as it was.
    assert!(
        super::slack::body(event, "prod-cd", at(0), None)
            .to_string()
            .len()
            < 64 * 1024
    );
}

/// Names of an ordinary length are listed whole, up to the count bound.
#[test]
fn ordinary_names_are_listed_whole() {
    let events = removal_events((0..MAX_OBJECTS).map(|i| {
        removal(
            "a",
            &format!("web{i:04}"),
            "service",
            &format!("web{i:04}_app"),
            Some("no such service"),
        )
    }));
    assert_eq!(events[0].objects.len(), MAX_OBJECTS);
    assert_eq!(events[0].objects_omitted, 0);
    assert_eq!(events[0].releases.len(), MAX_OBJECTS);
    assert_eq!(events[0].objects[0].name, "web0000_app");
}

#[test]
fn the_generic_body_carries_the_event_and_the_report_link() {
    let event = removal_events([removal("a", "web", "service", "web_app", None)]).remove(0);
    let body = Notification::new(&event, "prod-cd", at(0), Some("http://ctl:9090/report"));
    let json: serde_json::Value = serde_json::from_str(&body.to_json()).unwrap();
    assert_eq!(json["event"], "deleted");
    assert_eq!(json["controller"], "prod-cd");
    assert_eq!(json["swarm"], "a");
    assert_eq!(json["time"], "2026-12-01T08:00:00Z");
    assert_eq!(json["releases"], serde_json::json!(["web"]));
    assert_eq!(json["objects"][0]["kind"], "service");
    assert_eq!(json["objects"][0]["name"], "web_app");
    assert_eq!(json["objects"][0]["release"], "web");
    assert_eq!(json["objects"][0]["swarm"], "a");
    assert_eq!(json["counts"]["objects"], 1);
    assert_eq!(json["report_url"], "http://ctl:9090/report");
    assert_eq!(
        json["summary"],
        "deleted 1 object (0 volumes) of 1 release on swarm a"
    );
}

#[test]
fn the_slack_body_escapes_names_and_links_the_report() {
    let hostile = "<!channel> @here & <https://evil|click>\n*fake*";
    let event = removal_events([removal("a", hostile, "service", hostile, None)]).remove(0);
    let body = slack::body(&event, "prod-cd", at(0), Some("http://ctl:9090/report"));
    let text = body["text"].as_str().unwrap();
    assert!(!text.contains("<!"), "{text}");
    assert!(!text.contains("<https"), "{text}");
    assert!(!text.contains("@here"), "{text}");
    assert!(text.contains("&lt;!channel&gt;"), "{text}");
    assert!(text.contains("&amp;"), "{text}");
    // The name's line break is shown, not obeyed.
    assert!(text.contains("\\u{a}*fake*"), "{text}");
    let blocks = body["blocks"].as_array().unwrap();
    let context = blocks.last().unwrap()["elements"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        context.contains("<http://ctl:9090/report|the last report>"),
        "{context}"
    );
    assert!(blocks[0]["text"]["text"]
        .as_str()
        .unwrap()
        .starts_with("*Deleted*"));
}

#[test]
fn a_name_in_a_slack_body_makes_no_link_image_or_emphasis() {
    let link = "[Approve](https://evil.example)";
    let image = "![](https://evil.example/p.png)";
    let tick = "a`b";
    let event = removal_events([
        removal("a", link, "service", link, None),
        removal("a", image, "config", image, None),
        removal("a", tick, "secret", tick, None),
    ])
    .remove(0);
    let body = slack::body(&event, "c", at(0), None);
    let list = body["blocks"][1]["text"]["text"].as_str().unwrap();
    // Each name is a code span of its own, which no renderer links.
    assert!(list.contains(&format!("`{link}`")), "{list}");
    assert!(list.contains(&format!("`{image}`")), "{list}");
    assert!(list.contains("`a\u{2cb}b`"), "{list}");
    for line in list.lines() {
        assert_eq!(line.matches('`').count() % 2, 0, "{line}");
    }
}

#[test]
fn a_slack_list_stays_within_a_section_whatever_the_names() {
    // Names escaping to ten times their length: the lines that fit, and
    // the rest counted.
    let long = "&\u{200b}".repeat(50);
    let event = removal_events(
        (0..20).map(|i| removal("a", &long, "volume", &format!("{long}{i}"), Some(&long))),
    )
    .remove(0);
    let body = slack::body(&event, "c", at(0), None);
    let list = body["blocks"][1]["text"]["text"].as_str().unwrap();
    assert!(list.chars().count() <= 3000, "{}", list.chars().count());
    let shown = list.lines().filter(|l| l.starts_with('•')).count();
    assert!((1..20).contains(&shown), "{shown}");
    assert!(
        list.ends_with(&format!("…and {} more", 20 - shown)),
        "{list}"
    );
}

#[test]
fn the_slack_body_lists_a_bounded_number_of_lines() {
    let event =
        removal_events((0..30).map(|i| removal("a", "web", "volume", &format!("v{i:02}"), None)))
            .remove(0);
    let body = slack::body(&event, "c", at(0), None);
    let list = body["blocks"][1]["text"]["text"].as_str().unwrap();
    assert_eq!(list.lines().count(), slack::MAX_LINES + 1);
    assert!(list.ends_with("…and 10 more"), "{list}");
    assert_eq!(body["blocks"].as_array().unwrap().len(), 3);
}

proptest! {
    #[test]
    fn no_name_survives_slack_escaping_as_markup(name in "\\PC{0,40}|[<>&@!a-z|\n]{0,40}") {
        let shown = slack::escape(&name);
        prop_assert!(!shown.contains('<') && !shown.contains('>'));
        // The word joiner after each `@` is the escaping's own.
        let joiner_free = shown.replace("@\u{2060}", "@");
        prop_assert!(!joiner_free.chars().any(crate::escape::is_unsafe), "{:?}", shown);
        for mention in ["@here", "@channel", "@all", "@everyone"] {
            prop_assert!(!shown.contains(mention));
        }
        // Every `&` starts an entity this escaping wrote.
        for (at, _) in shown.match_indices('&') {
            let rest = &shown[at..];
            prop_assert!(rest.starts_with("&amp;") || rest.starts_with("&lt;") || rest.starts_with("&gt;"));
        }
    }

    #[test]
    fn the_memory_sends_each_distinct_failure_once(errors in proptest::collection::vec(0u8..3, 1..12)) {
        // The same failing object, retried with varying error texts, is
        // sent the first time only.
        let mut memory = NotifyMemory::default();
        let mut sent = 0;
        for e in errors {
            let events = removal_events([removal("a", "w", "network", "n", Some(&format!("error {e}")))]);
            sent += memory.admit(events, REMOVALS).len();
        }
        prop_assert_eq!(sent, 1);
    }
}

mod from_a_sweep {
    use super::*;
    use crate::sweep::{ActionKind, Outcome, Settings, Sweep, SweepReport};
    use crate::Timestamp;

    fn succeeding(kind: &ActionKind) -> Outcome {
        match kind {
            ActionKind::ReadStamps { target, .. } => {
                let release = &target.release.release;
                let stamp = format!("cd/default/{}:release/{release}", target.application);
                Outcome::same_stamps(&target.names, release, Some(&stamp))
            }
            ActionKind::ListVolumes { target, .. } => {
                Outcome::Volumes(vec![format!("{}_data", target.release.release)])
            }
            ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
            ActionKind::ReadUsage { at, .. } => Outcome::unused(at),
            _ => Outcome::Done,
        }
    }

    fn refusing(kind: &ActionKind) -> Outcome {
        match kind {
            ActionKind::RemoveStack { .. } | ActionKind::RemoveVolume { .. } => {
                Outcome::unreachable("the daemon did not answer")
            }
            ActionKind::ListReleases { checking, .. } => {
                Outcome::Releases(checking.iter().map(|t| t.release.release.clone()).collect())
            }
            other => succeeding(other),
        }
    }

    fn swept(world: fn(&ActionKind) -> Outcome) -> (SweepPlan, SweepReport) {
        let plan = plan(
            &Snapshot::from_json(
                r#"{"policy":{"purge_volumes":true},
                  "app_set":{"loaded":true,"applications":[{"name":"shop","swarm":"a","releases":[]}]},
                  "swarms":[{"swarm":"a","node_count":1,"releases":[
                    {"name":"blog","owner":"cd/default/blog:release/blog"}]}]}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(plan.deletions.len(), 1, "{:?}", plan.holds);
        let mut sweep = Sweep::new(
            &plan,
            Settings::new(Duration::from_secs(1), Duration::from_secs(5)),
        );
        let mut now = Timestamp::ZERO;
        while !sweep.is_done() {
            let mut handed = Vec::new();
            while let Some(action) = sweep.poll_action(now) {
                handed.push(action);
            }
            if handed.is_empty() {
                now = sweep.poll_timeout().expect("waiting for something");
                continue;
            }
            for action in handed {
                let outcome = world(&action.kind);
                sweep.handle_outcome(action.id, outcome, now).unwrap();
            }
        }
        let report = sweep.report();
        (plan, report)
    }

    #[test]
    fn every_object_the_report_says_is_gone_is_in_the_deleted_event() {
        let (plan, report) = swept(succeeding);
        let gone: Vec<(String, String)> = report
            .objects
            .iter()
            .filter(|o| o.outcome.is_gone())
            .map(|o| (o.kind.as_str().to_owned(), o.name.clone()))
            .collect();
        assert!(gone.iter().any(|(k, _)| k == "volume"), "{gone:?}");
        let facts = Facts {
            plan: Some(&plan),
            report: Some(&report),
            stale: None,
        };
        let mut memory = NotifyMemory::default();
        let events = decide(facts, &mut memory, at(0), HOUR);
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0].event, EventKind::Deleted);
        let mut listed: Vec<(String, String)> = events[0]
            .objects
            .iter()
            .map(|o| (o.kind.clone(), o.name.clone()))
            .collect();
        let mut gone = gone;
        listed.sort();
        gone.sort();
        assert_eq!(listed, gone);
        let volume = events[0]
            .objects
            .iter()
            .find(|o| o.kind == "volume")
            .unwrap();
        assert_eq!(volume.node.as_deref(), Some("(manager)"));
        // The same deletion again is another act, so it is sent again.
        assert_eq!(decide(facts, &mut memory, at(5), HOUR).len(), 1);
    }

    #[test]
    fn a_refused_removal_is_a_deletion_failed_event_sent_once() {
        let (plan, report) = swept(refusing);
        let facts = Facts {
            plan: Some(&plan),
            report: Some(&report),
            stale: None,
        };
        let mut memory = NotifyMemory::default();
        let events = decide(facts, &mut memory, at(0), HOUR);
        let failed: Vec<&Event> = events
            .iter()
            .filter(|e| e.event == EventKind::DeletionFailed)
            .collect();
        assert_eq!(failed.len(), 1, "{events:?}");
        assert!(failed[0]
            .objects
            .iter()
            .all(|o| o.outcome.as_deref() == Some("failed")));
        // The snapshot listed no object of the release's stack, so the
        // report has no object to say failed: the release itself is.
        assert!(report.objects.is_empty(), "{:?}", report.objects);
        let o = &failed[0].objects[0];
        assert_eq!((o.kind.as_str(), o.name.as_str()), ("release", "blog"));
        assert_eq!(
            o.error.as_deref(),
            Some("unreachable: the daemon did not answer")
        );
        assert!(decide(facts, &mut memory, at(5), HOUR)
            .iter()
            .all(|e| e.event != EventKind::DeletionFailed));
    }

    /// A sweep its window's closing cut short failed at nothing: no word
    /// of a failure, as for the window's own holds.
    #[test]
    fn a_release_its_window_cut_short_is_no_failure_event() {
        let (plan, _) = swept(succeeding);
        let mut sweep = Sweep::new(
            &plan,
            Settings::new(Duration::from_secs(1), Duration::from_secs(5)),
        );
        sweep.handle_window_closes(&plan.deletions[0].swarm, Timestamp::ZERO);
        assert!(sweep.poll_action(Timestamp::ZERO).is_none());
        let report = sweep.report();
        assert_eq!(
            report.releases[0].errors[0].kind,
            crate::sweep::ErrorKind::WindowClosed
        );
        let facts = Facts {
            plan: Some(&plan),
            report: Some(&report),
            stale: None,
        };
        let events = decide(facts, &mut NotifyMemory::default(), at(0), HOUR);
        assert!(
            events.iter().all(|e| e.event != EventKind::DeletionFailed),
            "{events:?}"
        );
    }
}
