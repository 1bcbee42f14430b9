//! The committed JSON Schemas (`schemas/`): up to date with the types, met
//! by every document the core writes from the example snapshots and the
//! fuzz seeds, and in agreement with the snapshot reader on what may be
//! left out and what is refused.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use jsonschema::Validator;
use serde_json::{json, Value};
use sweep_core::audit::{entries, Origin};
use sweep_core::saved::SavedPlan;
use sweep_core::sweep::{ActionKind, Outcome, Settings, Sweep, SweepTrace, Timestamp};
use sweep_core::{
    plan, AppSet, Application, GraceState, NodeEntry, NodeVolumes, ObjectVersion, Policy,
    ReleaseEntry, ServiceEntry, Snapshot, SnapshotError, StackObjects, SwarmSnapshot, SweepPlan,
    SweepReport, UnixTime,
};
use sweep_schemas::{documents, schemas_dir, workspace_root, REGENERATE};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The validator of a committed schema, by file name.
fn validator(name: &str) -> Validator {
    let path = schemas_dir().join(name);
    let schema: Value =
        serde_json::from_str(&read(&path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct Schemas {
    snapshot: Validator,
    plan: Validator,
    saved: Validator,
    report: Validator,
    apply: Validator,
    trace: Validator,
    audit: Validator,
    diff: Validator,
}

impl Schemas {
    fn load() -> Schemas {
        Schemas {
            snapshot: validator("snapshot.schema.json"),
            plan: validator("plan.schema.json"),
            saved: validator("saved-plan.schema.json"),
            report: validator("report.schema.json"),
            apply: validator("apply-output.schema.json"),
            trace: validator("trace.schema.json"),
            audit: validator("audit.schema.json"),
            diff: validator("plan-diff.schema.json"),
        }
    }
}

/// Fails with every error the validator finds in `doc`.
fn assert_valid(validator: &Validator, doc: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("  at {:?}: {e}", e.instance_path().as_str()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not meet its schema:\n{}\n{doc:#}",
        errors.join("\n")
    );
}

#[test]
fn committed_schemas_are_the_generated_ones() {
    let mut stale = Vec::new();
    for (name, text) in documents() {
        let path = schemas_dir().join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(format!("schemas/{name}"));
        }
    }
    assert!(
        stale.is_empty(),
        "out of date with the Rust types: {}; regenerate them with `{REGENERATE}` and commit the result",
        stale.join(", ")
    );
}

/// Every snapshot the checks start from: the examples and the fuzz seeds
/// that read as snapshots, each with its file name and its text.
fn snapshots() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut found = Vec::new();
    for dir in ["examples", "fuzz/seeds/plan_snapshot"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        for path in paths {
            found.push((
                format!("{dir}/{}", path.file_name().unwrap().to_string_lossy()),
                read(&path),
            ));
        }
    }
    found
}

/// The answer of a world where every action succeeds: re-reads find each
/// release as planned, every node holds one volume of the release, and the
/// re-listing finds the releases gone.
fn succeeding(kind: &ActionKind, plan: &SweepPlan) -> Outcome {
    match kind {
        ActionKind::ReadStamps { target, .. } => Outcome::as_planned(plan, target),
        ActionKind::ListVolumes { target, .. } => {
            Outcome::Volumes(vec![format!("{}_data", target.release.release)])
        }
        ActionKind::ListReleases { .. } => Outcome::Releases(Vec::new()),
        ActionKind::ReadUsage { .. } => Outcome::Usage(Default::default()),
        _ => Outcome::Done,
    }
}

/// The answer of a world where every removal is refused: the report then
/// carries an error entry for each release.
fn refusing(kind: &ActionKind, plan: &SweepPlan) -> Outcome {
    match kind {
        ActionKind::RemoveStack { .. } | ActionKind::RemoveVolume { .. } => {
            Outcome::unreachable("the daemon did not answer")
        }
        ActionKind::ListReleases { checking, .. } => {
            Outcome::Releases(checking.iter().map(|t| t.release.release.clone()).collect())
        }
        other => succeeding(other, plan),
    }
}

/// Drives a traced sweep of `plan` to its end against `world`, in virtual
/// time: its report and its trace.
fn sweep(
    plan: &SweepPlan,
    world: fn(&ActionKind, &SweepPlan) -> Outcome,
) -> (SweepReport, SweepTrace) {
    let mut sweep = Sweep::new(
        plan,
        Settings::new(Duration::from_secs(1), Duration::from_secs(5)).traced(),
    );
    let mut now = Timestamp::ZERO;
    for _ in 0..100_000 {
        if sweep.is_done() {
            let trace = sweep.trace().cloned().expect("a traced sweep has a trace");
            return (sweep.report(), trace);
        }
        let mut handed = Vec::new();
        while let Some(action) = sweep.poll_action(now) {
            handed.push(action);
        }
        if handed.is_empty() {
            now = sweep
                .poll_timeout()
                .expect("a sweep with nothing handed out and nothing waiting is done");
            continue;
        }
        for action in handed {
            let outcome = world(&action.kind, plan);
            sweep
                .handle_outcome(action.id, outcome, now)
                .expect("each action is answered once");
        }
    }
    panic!("the sweep did not finish");
}

#[test]
fn documents_made_from_every_example_and_seed_meet_their_schemas() {
    let schemas = Schemas::load();
    let mut checked = 0;
    let (mut deleted, mut failed) = (0, 0);
    let mut audit_lines = 0;
    let mut pending_diffs = 0;
    for (name, text) in snapshots() {
        let Ok(snapshot) = Snapshot::from_json(&text) else {
            continue;
        };
        checked += 1;
        let input: Value = serde_json::from_str(&text).expect("a snapshot that reads is JSON");
        assert_valid(&schemas.snapshot, &input, &format!("{name} as written"));
        let written = serde_json::to_value(&snapshot).unwrap();
        assert_valid(
            &schemas.snapshot,
            &written,
            &format!("{name} as `snapshot` writes it"),
        );

        let plan = plan(&snapshot).expect("a snapshot that reads plans");
        let plan_json = serde_json::to_value(&plan).unwrap();
        assert_valid(&schemas.plan, &plan_json, &format!("the plan of {name}"));

        // What `plan --diff-against` prints: against an app set that did
        // not load (every deletion held), both ways, with what windows and
        // grace periods only delay.
        let mut unloaded = snapshot.clone();
        unloaded.app_set.loaded = false;
        for (base, change) in [(&unloaded, &snapshot), (&snapshot, &unloaded)] {
            let diff = sweep_core::PlanDiff::of_snapshots(base, change).expect("both plan");
            assert_valid(
                &schemas.diff,
                &serde_json::to_value(&diff).unwrap(),
                &format!("a diff of the plan of {name}"),
            );
            pending_diffs += usize::from(diff.counts.releases_pending_added > 0);
        }

        let saved = SavedPlan::new(&snapshot, plan.clone(), "test");
        let saved_json = serde_json::to_value(&saved).unwrap();
        assert_valid(
            &schemas.saved,
            &saved_json,
            &format!("the saved plan of {name}"),
        );

        for (world, how) in [
            (
                succeeding as fn(&ActionKind, &SweepPlan) -> Outcome,
                "succeeding",
            ),
            (refusing, "refusing"),
        ] {
            let (report, trace) = sweep(&plan, world);
            assert_valid(
                &schemas.trace,
                &serde_json::to_value(&trace).unwrap(),
                &format!("the trace of {name} ({how})"),
            );
            deleted += report.totals.deleted;
            failed += report.totals.failed;
            let what = format!("the report of {name} ({how})");
            assert_valid(
                &schemas.report,
                &serde_json::to_value(&report).unwrap(),
                &what,
            );
            // The audit log's lines of that sweep, of each trigger.
            let digest = sweep_core::saved::snapshot_digest(&snapshot);
            for origin in [
                Origin::apply(),
                Origin::apply_plan("sha256:ab"),
                Origin::watch(),
            ] {
                for line in entries(&plan, &report, &origin, &digest, UnixTime::from_secs(0)) {
                    audit_lines += 1;
                    let value: Value = serde_json::from_str(&line.to_line()).unwrap();
                    assert_valid(&schemas.audit, &value, &format!("an audit line of {name}"));
                }
            }
            // What `apply --format json` prints.
            let out = json!({"plan": plan, "report": report});
            assert_valid(
                &schemas.apply,
                &out,
                &format!("the apply output of {name} ({how})"),
            );
        }
    }
    assert!(checked >= 3, "only {checked} snapshots were found to check");
    assert!(audit_lines > 0, "no audit line was checked");
    assert!(
        pending_diffs > 0,
        "no diff with a pending deletion was checked"
    );
    assert!(
        deleted > 0 && failed > 0,
        "the sweeps deleted {deleted} and failed {failed} releases: both kinds of report entry are to be checked"
    );
}

#[test]
fn snapshots_the_reader_refuses_are_refused_by_the_schema() {
    let schemas = Schemas::load();
    let minimal = json!({"app_set": {"loaded": true}});
    assert_valid(&schemas.snapshot, &minimal, "the minimal snapshot");
    let refused = [
        json!({"app_set": {"loaded": true}, "policy": {"purge_volume": true}}),
        json!({"app_set": {"loaded": true}, "extra": 1}),
        json!({"format_version": 3, "app_set": {"loaded": true}}),
        json!({"format_version": "1", "app_set": {"loaded": true}}),
        json!({"app_set": {"applications": []}}),
        json!({"app_set": {"loaded": true, "applications": [{"name": "e", "swarm": null}]}}),
        json!({"app_set": {"loaded": true, "applications": [{"name": "e", "swarm": "", "state": "gone"}]}}),
        json!({"app_set": {"loaded": true}, "swarms": [{"swarm": "a", "nodez": []}]}),
        json!({"policy": ["default", true, 0], "app_set": {"loaded": true}}),
        json!([{"loaded": true}]),
    ];
    for doc in refused {
        assert!(
            Snapshot::from_json(&doc.to_string()).is_err(),
            "the reader accepts {doc}"
        );
        assert!(!schemas.snapshot.is_valid(&doc), "the schema accepts {doc}");
    }
    // Every seed the reader refuses for its shape (not for what only the
    // reader checks: duplicates, names) is refused by the schema too.
    let mut shapes = 0;
    for (name, text) in snapshots() {
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Err(SnapshotError::Parse { path, message }) = Snapshot::from_json(&text) {
            shapes += 1;
            assert!(
                !schemas.snapshot.is_valid(&doc),
                "{name}: the reader refuses it ({path}: {message}), the schema does not"
            );
        }
    }
    assert!(shapes > 0, "no seed is refused for its shape");
}

/// A snapshot with every field of every struct present.
fn full_snapshot() -> Value {
    let objects = StackObjects::new(
        vec![ServiceEntry::new("s1", "shop_web", 7).with_keep("false")],
        vec![sweep_core::objects::ObjectRef::new("n1", "shop_default")],
        vec![sweep_core::objects::ObjectRef::new("s1", "shop_key")],
        vec![sweep_core::objects::ObjectRef::new("c1", "shop_conf")],
    )
    .with_volumes(vec![NodeVolumes::new("n1", vec!["shop_data".into()])]);
    let mut swarm = SwarmSnapshot::new("alpha");
    swarm.cluster_id = Some("cluster-a".into());
    swarm.error = Some("not really".into());
    swarm.releases = vec![
        ReleaseEntry::new("shop", Some("cd/default/shop:release/shop".into()))
            .with_records(vec![ObjectVersion::new("r1", 3)])
            .with_objects(objects),
    ];
    swarm.nodes = Some(vec![NodeEntry::new("n1", "node-1")]);
    swarm.node_count = Some(2);
    swarm.members = Some(vec![
        NodeEntry::new("n1", "node-1"),
        NodeEntry::new("n2", "node-2"),
    ]);
    swarm.self_stack = Some("swarm-sweep".into());
    let snapshot = Snapshot::new(
        Policy::new("cd1", true, Some(10)),
        AppSet::new(
            true,
            vec![Application::reconciled("edge", "alpha", &["edge"])],
        ),
        vec![swarm],
    );
    serde_json::to_value(&snapshot).unwrap()
}

/// Every object in `doc`, by its path of keys and indexes.
fn object_paths(doc: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match doc {
        Value::Object(map) => {
            out.push(at.clone());
            for (key, value) in map {
                at.push(Value::from(key.as_str()));
                object_paths(value, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                at.push(Value::from(i));
                object_paths(value, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The value at `path` in `doc`.
fn value_at<'a>(doc: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(doc, |here, step| match step {
        Value::String(key) => &mut here[key.as_str()],
        Value::Number(i) => &mut here[i.as_u64().expect("an index") as usize],
        _ => unreachable!("paths hold keys and indexes"),
    })
}

/// The object at `path` in `doc`.
fn object_at<'a>(doc: &'a mut Value, path: &[Value]) -> &'a mut serde_json::Map<String, Value> {
    value_at(doc, path).as_object_mut().expect("an object")
}

#[test]
fn the_schema_and_the_reader_agree_on_every_field() {
    let schemas = Schemas::load();
    let full = full_snapshot();
    Snapshot::from_json(&full.to_string()).expect("the full snapshot reads");
    assert_valid(&schemas.snapshot, &full, "the full snapshot");
    let mut paths = Vec::new();
    object_paths(&full, &mut Vec::new(), &mut paths);
    let mut verdicts = BTreeMap::new();
    for path in &paths {
        let keys: Vec<String> = object_at(&mut full.clone(), path).keys().cloned().collect();
        let mut variants = Vec::new();
        for key in &keys {
            let mut doc = full.clone();
            object_at(&mut doc, path).remove(key);
            variants.push((format!("without {key}"), doc));
        }
        let mut doc = full.clone();
        object_at(&mut doc, path).insert("unknown_field".into(), json!(true));
        variants.push(("with an unknown field".to_owned(), doc));
        let mut doc = full.clone();
        let values: Vec<Value> = object_at(&mut doc, path).values().cloned().collect();
        *value_at(&mut doc, path) = Value::Array(values);
        variants.push(("written as an array".to_owned(), doc));
        for (how, doc) in variants {
            let read = Snapshot::from_json(&doc.to_string()).is_ok();
            let valid = schemas.snapshot.is_valid(&doc);
            let at = format!("{path:?} {how}");
            assert_eq!(
                read, valid,
                "{at}: the reader says {read}, the schema {valid}"
            );
            verdicts.insert(at, read);
        }
    }
    // Both ways occur, so the agreement is not vacuous.
    assert!(verdicts.values().any(|v| *v) && verdicts.values().any(|v| !*v));
}

/// A state as `--state FILE` holds it: two departed releases.
fn full_state() -> Value {
    json!({
        "format_version": 1,
        "written_at": "2026-12-01T08:00:00Z",
        "departed": [
            {"swarm": "", "release": "shop", "since": "2026-12-01T07:30:00Z"},
            {"swarm": "alpha", "release": "web", "since": "2026-12-01T07:00:00Z"}
        ]
    })
}

#[test]
fn the_state_schema_and_the_reader_agree_on_every_field() {
    let schema = validator("state.schema.json");
    let full = full_state();
    let state = GraceState::from_json(&full.to_string()).expect("the full state reads");
    assert_valid(&schema, &full, "the full state");
    let written = serde_json::to_value(&state).unwrap();
    assert_valid(&schema, &written, "the state as written");
    assert_valid(
        &schema,
        &serde_json::to_value(GraceState::empty(UnixTime::from_secs(0))).unwrap(),
        "the empty state",
    );
    let mut variants = Vec::new();
    for path in [vec![], vec![json!("departed"), json!(0)]] {
        let keys: Vec<String> = object_at(&mut full.clone(), &path)
            .keys()
            .cloned()
            .collect();
        for key in keys {
            let mut doc = full.clone();
            object_at(&mut doc, &path).remove(&key);
            variants.push((format!("{path:?} without {key}"), doc));
        }
        let mut doc = full.clone();
        object_at(&mut doc, &path).insert("unknown_field".into(), json!(true));
        variants.push((format!("{path:?} with an unknown field"), doc));
    }
    let mut doc = full.clone();
    doc["written_at"] = json!("2026-12-01");
    variants.push(("written_at not a time".to_owned(), doc));
    for (how, doc) in variants {
        let read = GraceState::from_json(&doc.to_string()).is_ok();
        let valid = schema.is_valid(&doc);
        assert!(!read, "{how}: read");
        assert_eq!(
            read, valid,
            "{how}: the reader says {read}, the schema {valid}"
        );
    }
}

/// A notification body of each event kind, as `--notify-format json`
/// posts it, meets its schema; so does a state that remembers what
/// notifications sent.
#[test]
fn notifications_and_the_state_they_keep_meet_their_schemas() {
    use sweep_core::notify::{decide, Facts, Notification, NotifyMemory};
    let schema = validator("notification.schema.json");
    let snapshot = Snapshot::from_json(
        r#"{"app_set":{"loaded":true,"applications":[{"name":"shop","swarm":"a"}]},
            "swarms":[{"swarm":"a","releases":[{"name":"blog","owner":"cd/default/blog:release/blog"}]}]}"#,
    )
    .unwrap();
    let held = plan(&snapshot).unwrap();
    let mut memory = NotifyMemory::default();
    let at = |secs: u64| UnixTime::from_secs(1_796_112_000 + secs);
    let facts = Facts {
        plan: Some(&held),
        ..Facts::default()
    };
    decide(facts, &mut memory, at(0), Duration::from_secs(60));
    let events = decide(facts, &mut memory, at(120), Duration::from_secs(60));
    assert_eq!(events.len(), 1);
    for url in [None, Some("http://ctl:9090/report")] {
        let body = Notification::new(&events[0], "default", at(120), url);
        let doc: Value = serde_json::from_str(&body.to_json()).unwrap();
        assert_valid(&schema, &doc, "a held notification");
        let mut extra = doc.clone();
        extra["unknown_field"] = json!(1);
        assert!(
            !schema.is_valid(&extra),
            "an unknown field is not in the schema"
        );
    }
    let state = GraceState::empty(at(120)).with_notify(memory);
    let doc = serde_json::to_value(&state).unwrap();
    assert!(doc["notify"]["holds"]
        .as_array()
        .is_some_and(|h| h.len() == 1));
    assert_valid(
        &validator("state.schema.json"),
        &doc,
        "a state with notifications",
    );
    assert_eq!(GraceState::from_json(&doc.to_string()).unwrap(), state);
}
