use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::refs::ReleaseRef;
use crate::snapshot::Snapshot;
use crate::sweep::{ActionKind, Outcome, Settings, Sweep};
use crate::time::Timestamp;

/// Two departed releases on cluster `C1` (one with a volume purged), one
/// declared, on swarm `alpha`; a release of the local swarm.
fn snapshot() -> Snapshot {
    Snapshot::from_json(
        r#"{
        "policy": {"controller": "prod", "purge_volumes": true},
        "app_set": {"loaded": true, "applications": [
            {"name": "shop", "swarm": "alpha", "releases": ["web"]}
        ]},
        "swarms": [
            {"swarm": "alpha", "cluster_id": "C1", "node_count": 1, "releases": [
                {"name": "web", "owner": "cd/prod/shop:release/web"},
                {"name": "blog", "owner": "cd/prod/blog:release/blog"},
                {"name": "wiki", "owner": "cd/prod/wiki:release/wiki"}
            ]},
            {"swarm": "", "node_count": 1, "releases": [
                {"name": "old", "owner": "cd/prod/old:release/old"}
            ]}
        ]
    }"#,
    )
    .expect("the snapshot reads")
}

/// Carries `plan` out in a world that answers `removal` to every volume
/// removal, and removes everything else.
fn swept(plan: &SweepPlan, removal: fn() -> Outcome) -> SweepReport {
    let mut sweep = Sweep::new(
        plan,
        Settings::new(Duration::from_secs(1), Duration::from_secs(3)),
    );
    let mut now = Timestamp::ZERO;
    for _ in 0..10_000 {
        if sweep.is_done() {
            return sweep.report();
        }
        let mut handed = Vec::new();
        while let Some(action) = sweep.poll_action(now) {
            handed.push(action);
        }
        if handed.is_empty() {
            now = sweep.poll_timeout().expect("something to wait for");
            continue;
        }
        for action in handed {
            let outcome = match &action.kind {
                ActionKind::ReadStamps { target, .. } => {
                    let release = &target.release.release;
                    let stamp = plan.controller.stamp(&target.application, release);
                    Outcome::same_stamps(&target.names, release, Some(&stamp))
                }
                ActionKind::ListVolumes { target, .. } => {
                    Outcome::Volumes(vec![format!("{}_data", target.release.release)])
                }
                ActionKind::ListReleases { checking, .. } => {
                    Outcome::Releases(checking.iter().map(|t| t.release.release.clone()).collect())
                }
                ActionKind::ReadUsage { at, .. } => Outcome::unused(at),
                ActionKind::RemoveVolume { .. } => removal(),
                _ => Outcome::Done,
            };
            sweep
                .handle_outcome(action.id, outcome, now)
                .expect("an answer it asked for");
        }
    }
    panic!("the sweep did not end");
}

fn done() -> Outcome {
    Outcome::Done
}

fn refused() -> Outcome {
    Outcome::unreachable("the daemon\nsaid no")
}

const DIGEST: &str = "sha256:0123";
const AT: UnixTime = UnixTime::from_secs(1_800_000_000);

#[test]
fn one_line_per_object_the_sweep_acted_on_with_its_swarm_facts() {
    let snapshot = snapshot();
    let plan = crate::plan(&snapshot).unwrap();
    assert_eq!(plan.deletions.len(), 3);
    for (removal, failed) in [(done as fn() -> Outcome, false), (refused, true)] {
        let report = swept(&plan, removal);
        assert!(!report.objects.is_empty(), "the report lists its objects");
        let lines = entries(&plan, &report, &Origin::watch(), DIGEST, AT);
        assert_eq!(lines.len(), report.objects.len());
        for (line, object) in lines.iter().zip(&report.objects) {
            assert_eq!(
                (&line.swarm, &line.release, &line.application, &line.name),
                (
                    &object.swarm,
                    &object.release,
                    &object.application,
                    &object.name
                )
            );
            assert_eq!((line.kind, line.outcome), (object.kind, object.outcome));
            assert_eq!(line.node, object.node);
            assert_eq!(line.time, AT);
            assert_eq!(line.controller, "prod");
            assert_eq!(line.trigger, Trigger::Watch);
            assert_eq!(line.saved_plan_digest, None);
            assert_eq!(line.snapshot_digest, DIGEST);
            let cluster = if line.swarm.is_local() {
                None
            } else {
                Some("C1")
            };
            assert_eq!(line.cluster_id.as_deref(), cluster, "{line:?}");
            // A failed step never reads as a removal.
            if failed && line.kind == ObjectKind::Volume {
                assert_eq!(line.outcome, ObjectOutcome::Failed, "{line:?}");
            }
            if line.outcome == ObjectOutcome::Failed {
                assert!(line.error.is_some(), "{line:?}");
            }
            assert_eq!(parse_line(line.to_line().as_bytes()), Ok(line.clone()));
        }
        // Every planned release is there, and nothing else.
        let mut releases: Vec<ReleaseRef> = lines
            .iter()
            .map(|l| ReleaseRef::new(l.swarm.clone(), l.release.clone()))
            .collect();
        releases.dedup();
        let planned: Vec<ReleaseRef> = plan.deletions.iter().map(|d| d.release_ref()).collect();
        assert!(releases.iter().all(|r| planned.contains(r)), "{releases:?}");
        assert_eq!(releases.len(), planned.len(), "{releases:?}");
        assert!(lines
            .iter()
            .any(|l| l.kind == ObjectKind::Volume && l.name == "blog_data" && l.node.is_some()));
        // The records go last, and only once everything else went.
        let records = lines
            .iter()
            .filter(|l| l.kind == ObjectKind::Record)
            .count();
        assert_eq!(records, if failed { 0 } else { planned.len() });
        assert_eq!(
            lines.iter().any(|l| l.outcome == ObjectOutcome::Failed),
            failed
        );
    }
}

#[test]
fn a_saved_plan_sweep_names_the_plan_and_a_plain_one_does_not() {
    let snapshot = snapshot();
    let plan = crate::plan(&snapshot).unwrap();
    let report = swept(&plan, done);
    let saved = entries(&plan, &report, &Origin::apply_plan("sha256:ab"), DIGEST, AT);
    assert!(saved
        .iter()
        .all(|l| l.trigger == Trigger::ApplyPlan
            && l.saved_plan_digest.as_deref() == Some("sha256:ab")));
    assert!(saved[0].to_line().contains(r#""trigger":"apply --plan""#));
    assert!(saved[0]
        .to_line()
        .contains(r#""saved_plan_digest":"sha256:ab""#));
    let plain = entries(&plan, &report, &Origin::apply(), DIGEST, AT);
    assert!(plain.iter().all(|l| l.trigger == Trigger::Apply));
    assert!(!plain[0].to_line().contains("saved_plan_digest"));
}

#[test]
fn a_sweep_with_nothing_to_do_writes_no_line() {
    let mut snapshot = snapshot();
    snapshot.app_set = crate::AppSet::new(false, Vec::new());
    let plan = crate::plan(&snapshot).unwrap();
    assert!(plan.is_held());
    let report = swept(&plan, done);
    assert!(entries(&plan, &report, &Origin::watch(), DIGEST, AT).is_empty());
}

/// An entry with every field set, names hostile.
fn hostile() -> AuditEntry {
    AuditEntry {
        format_version: crate::FormatVersion,
        time: AT,
        controller: "prod".into(),
        trigger: Trigger::ApplyPlan,
        saved_plan_digest: Some("sha256:ab".into()),
        swarm: SwarmName::new("al\u{1b}[2Jpha"),
        cluster_id: Some("C1".into()),
        release: "web\nto delete (9):".into(),
        application: "shop\u{202e}".into(),
        reason: ObjectReason::ALL[0],
        kind: ObjectKind::ALL[0],
        id: Some("id\r1".into()),
        name: "web_app\n".into(),
        node: Some("n\u{7}1".into()),
        outcome: ObjectOutcome::ALL[0],
        error: Some("boom\n\u{1b}[1A".into()),
        snapshot_digest: DIGEST.into(),
    }
}

#[test]
fn a_line_is_one_line_and_its_text_escapes_every_name() {
    let entry = hostile();
    let line = entry.to_line();
    assert!(!line.contains('\n') && !line.contains('\r'), "{line}");
    assert_eq!(parse_line(line.as_bytes()), Ok(entry.clone()));
    // A CRLF line, as an editor may have saved it, reads the same.
    assert_eq!(
        parse_line(format!("{line}\r").as_bytes()),
        Ok(entry.clone())
    );
    let text = entry.text();
    assert_eq!(text.matches('\n').count(), 1, "{text}");
    assert!(text.ends_with('\n'));
    assert!(!text[..text.len() - 1].chars().any(crate::escape::is_unsafe));
    assert!(text.starts_with("2027-01-15T08:00:00Z "), "{text}");
    assert!(
        text.contains("al\\u{1b}[2Jpha/web\\u{a}to delete (9):"),
        "{text}"
    );
    assert!(text.contains("(saved plan sha256:ab)"), "{text}");
}

#[test]
fn an_error_is_cut_so_every_line_stays_under_the_bound() {
    let mut entry = hostile();
    entry.error = Some("é".repeat(MAX_LINE_BYTES));
    let cut = cut_error(entry.error.as_deref().unwrap());
    assert_eq!(cut.chars().count(), MAX_ERROR_CHARS + 1);
    entry.error = Some(cut);
    assert!(entry.to_line().len() < MAX_LINE_BYTES);
    assert_eq!(cut_error("short"), "short");
}

#[test]
fn names_made_too_long_are_cut_until_the_line_reads_back() {
    let snapshot = snapshot();
    let plan = crate::plan(&snapshot).unwrap();
    let mut report = swept(&plan, refused);
    let object = &mut report.objects[0];
    // Escaped to six bytes each in JSON, and two bytes each.
    object.name = "\u{1}".repeat(MAX_LINE_BYTES);
    object.release = "é".repeat(MAX_LINE_BYTES);
    object.error = Some("\"".repeat(MAX_ERROR_CHARS));
    object.node = Some("n".repeat(64));
    let object = object.clone();
    let lines = entries(&plan, &report, &Origin::watch(), DIGEST, AT);
    let line = &lines[0];
    let text = line.to_line();
    assert!(text.len() <= MAX_WRITTEN_BYTES, "{} bytes", text.len());
    assert_eq!(parse_line(text.as_bytes()), Ok(line.clone()));
    for (cut, whole) in [(&line.name, &object.name), (&line.release, &object.release)] {
        let kept = cut.strip_suffix('…').expect("marked as cut");
        assert!(
            whole.starts_with(kept) && kept.len() > 1000,
            "{} chars",
            kept.chars().count()
        );
    }
    // What fits is left whole: the short names, and every other line.
    assert_eq!(line.node, object.node);
    assert_eq!(
        (&line.swarm, &line.application),
        (&object.swarm, &object.application)
    );
    let plain = entries(&plan, &swept(&plan, refused), &Origin::watch(), DIGEST, AT);
    assert_eq!(lines[1..], plain[1..]);
}

#[test]
fn lines_that_are_not_entries_are_errors_not_panics() {
    assert_eq!(
        parse_line(&vec![b'{'; MAX_LINE_BYTES + 1]),
        Err(LineError::TooLong {
            len: MAX_LINE_BYTES + 1
        })
    );
    assert_eq!(
        parse_line(b"{\"time\xff"),
        Err(LineError::NotUtf8 { offset: 6 })
    );
    let torn = hostile().to_line();
    for bad in [&torn[..torn.len() / 2], "", "null", "[]", "{}"] {
        assert!(
            matches!(parse_line(bad.as_bytes()), Err(LineError::Invalid { .. })),
            "{bad:?}"
        );
    }
    let other = torn.replace(r#""outcome":"#, r#""outcome":"maybe","x":"#);
    assert!(matches!(
        parse_line(other.as_bytes()),
        Err(LineError::Invalid { .. })
    ));
}

#[test]
fn since_reads_a_duration_before_now_or_a_time() {
    let now = UnixTime::from_secs(100_000);
    assert_eq!(
        Since::parse("24h"),
        Ok(Since::Ago(Duration::from_secs(86_400)))
    );
    assert_eq!(
        Since::parse("24h").unwrap().start(now),
        UnixTime::from_secs(13_600)
    );
    // Further back than the epoch: from the start.
    assert_eq!(
        Since::parse("1000h").unwrap().start(now),
        UnixTime::from_secs(0)
    );
    assert_eq!(Since::parse("2027-01-15T08:00:00Z").unwrap().start(now), AT);
    assert!(matches!(
        Since::parse("yesterday"),
        Err(SinceError::Neither { .. })
    ));
    assert!(Since::parse("0").is_err());
}

#[test]
fn the_filter_keeps_lines_since_a_time_of_one_release() {
    let entry = hostile();
    let at = |secs| Filter {
        since: Some(UnixTime::from_secs(secs)),
        release: None,
    };
    assert!(Filter::default().keeps(&entry));
    assert!(at(AT.as_secs()).keeps(&entry));
    assert!(!at(AT.as_secs() + 1).keeps(&entry));
    let of = |swarm: &str, release: &str| Filter {
        since: None,
        release: Some(ReleaseRef::new(swarm, release)),
    };
    assert!(of("al\u{1b}[2Jpha", "web\nto delete (9):").keeps(&entry));
    // The same release name on another swarm is another release.
    assert!(!of("beta", "web\nto delete (9):").keeps(&entry));
    assert!(!of("al\u{1b}[2Jpha", "web").keeps(&entry));
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_]{0,12}",
        any::<String>(),
        proptest::collection::vec(any::<char>(), 0..64).prop_map(|c| c.into_iter().collect()),
    ]
}

fn entry() -> impl Strategy<Value = AuditEntry> {
    (
        (any::<u32>(), name(), 0..Trigger::ALL.len(), name(), name()),
        (
            name(),
            name(),
            0..ObjectReason::ALL.len(),
            0..ObjectKind::ALL.len(),
        ),
        (
            proptest::option::of(name()),
            name(),
            proptest::option::of(name()),
            0..ObjectOutcome::ALL.len(),
            proptest::option::of(name()),
        ),
    )
        .prop_map(
            |(
                (time, controller, trigger, swarm, release),
                (application, cluster, reason, kind),
                (id, object, node, outcome, error),
            )| {
                let trigger = Trigger::ALL[trigger];
                AuditEntry {
                    format_version: crate::FormatVersion,
                    time: UnixTime::from_secs(u64::from(time)),
                    controller,
                    trigger,
                    saved_plan_digest: (trigger == Trigger::ApplyPlan).then(|| "sha256:ab".into()),
                    swarm: SwarmName::new(swarm),
                    cluster_id: Some(cluster),
                    release,
                    application,
                    reason: ObjectReason::ALL[reason],
                    kind: ObjectKind::ALL[kind],
                    id,
                    name: object,
                    node,
                    outcome: ObjectOutcome::ALL[outcome],
                    error,
                    snapshot_digest: DIGEST.into(),
                }
            },
        )
}

proptest! {
    /// Whatever the names hold, a line is one line, reads back as itself
    /// and stays under the bound; its text is one escaped line.
    #[test]
    fn every_entry_is_one_line_that_reads_back(entry in entry()) {
        let line = entry.to_line();
        prop_assert!(!line.contains('\n'));
        prop_assert!(line.len() < MAX_LINE_BYTES);
        prop_assert_eq!(parse_line(line.as_bytes()), Ok(entry.clone()));
        let text = entry.text();
        prop_assert_eq!(text.matches('\n').count(), 1);
        prop_assert!(!text[..text.len() - 1].chars().any(crate::escape::is_unsafe));
    }

    /// The filter keeps exactly the lines at or after its time, of its
    /// release.
    #[test]
    fn the_filter_is_its_two_conditions(entry in entry(), since in any::<u32>(), same in any::<bool>()) {
        let release = if same {
            ReleaseRef::new(entry.swarm.clone(), entry.release.clone())
        } else {
            ReleaseRef::new(entry.swarm.clone(), format!("{}-other", entry.release))
        };
        let since = UnixTime::from_secs(u64::from(since));
        let filter = Filter { since: Some(since), release: Some(release) };
        prop_assert_eq!(filter.keeps(&entry), same && entry.time >= since);
    }

    /// Arbitrary bytes are an entry or an error, never a panic.
    #[test]
    fn arbitrary_lines_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_line(&bytes);
    }
}
