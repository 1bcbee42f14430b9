//! What the real binary writes, against the committed JSON Schemas
//! (`schemas/`): the `snapshot` JSON, the `plan` JSON, the saved plan of
//! `plan --out` and the `apply --format json` output, gathered from swarm
//! alpha holding a departed release and a declared one.

use std::path::Path;

use jsonschema::Validator;
use serde_json::{json, Value};
use sweep_e2e::{
    app, create_record, create_stack_record, one, wait_deployed, workspace_root, Cleanup, Run,
    Scenario, Stack, SwarmEntry, ALPHA, QUICK,
};

fn validator(name: &str) -> Validator {
    let path = workspace_root().join("schemas").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Fails with every error `schema` finds in `doc`.
fn assert_meets(schema: &str, doc: &Value, what: &str) {
    let validator = validator(schema);
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("  at {:?}: {e}", e.instance_path().as_str()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not meet schemas/{schema}:\n{}\n{doc:#}",
        errors.join("\n")
    );
}

/// The run's JSON; exit 1 is allowed besides 0, since tests running beside
/// this one may stop a node of alpha for a while, which makes a purge's
/// coverage partial without changing the shape of any document.
fn output(run: &Run) -> Value {
    assert!(
        matches!(run.code(), Some(0 | 1)),
        "swarm-sweep {} exited {}\nstdout:\n{}\nstderr:\n{}",
        run.args.join(" "),
        run.status,
        run.stdout,
        run.stderr
    );
    run.json()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_document_the_binary_writes_meets_its_committed_schema() {
    let s = Scenario::new();
    let gone = s.release("schemagone");
    let kept = s.release("schemakept");
    let mut cleanup = Cleanup::new(&ALPHA);
    cleanup.add(&gone);
    cleanup.add(&kept);

    let stack = Stack::new(&gone)
        .with_volume()
        .with_network_secret_config()
        .on("alpha-2");
    create_stack_record(&ALPHA, &stack, 1, Some(&s.stamp("shop", &gone)));
    create_record(&ALPHA, &kept, 1, Some(&s.stamp("edge", &kept)));
    s.deploy(&ALPHA, &stack);
    wait_deployed(&ALPHA, &stack, &["alpha-2"]);

    let config = s.registry("registry.toml", &[SwarmEntry::of(&ALPHA)]);
    let apps = s.app_set("apps.json", json!([app("edge", "alpha", &[&kept])]));

    let snapshot = output(
        &s.sweep("snapshot", Some(&config), &apps)
            .arg("--prune-volumes")
            .run(),
    );
    assert_meets("snapshot.schema.json", &snapshot, "the snapshot");

    let plan = output(
        &s.sweep("plan", Some(&config), &apps)
            .args(&["--prune-volumes", "--format", "json"])
            .run(),
    );
    assert_meets("plan.schema.json", &plan, "the plan");
    assert_eq!(one(&plan, "deletions", &gone)["reason"], "departed");

    let saved = s.dir().join("plan.json");
    let run = s
        .sweep("plan", Some(&config), &apps)
        .args(&["--prune-volumes", "--format", "json"])
        .arg("--out")
        .arg(&saved)
        .run();
    // A build whose `plan --out` is declared but not implemented yet says
    // so and exits 2; the saved plan is checked as soon as it is written.
    if run.code() == Some(2) && run.stderr.contains("not built yet") {
        eprintln!("plan --out is not built yet: the saved plan was not checked");
    } else {
        output(&run);
        assert_meets(
            "saved-plan.schema.json",
            &read_json(&saved),
            "the saved plan",
        );
    }

    let applied = output(
        &s.sweep("apply", Some(&config), &apps)
            .args(&["--prune-volumes", "--format", "json"])
            .args(QUICK)
            .run(),
    );
    assert_meets("apply-output.schema.json", &applied, "the apply output");
    assert_meets(
        "plan.schema.json",
        &applied["plan"],
        "the apply output's plan",
    );
    assert_meets(
        "report.schema.json",
        &applied["report"],
        "the apply output's report",
    );
    let report = one(&applied["report"], "releases", &gone);
    assert_eq!(report["outcome"], "deleted", "{report:#}");
}
