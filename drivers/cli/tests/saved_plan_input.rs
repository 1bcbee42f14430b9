//! `apply --plan FILE` with a saved plan that is not what `plan --out`
//! wrote: refused with exit 2 naming the file (and the field), before any
//! swarm is read.

use crate::support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::{root, run_without_daemon, stderr};
use sweep_core::bound::MAX_JSON_VALUES;

/// `plan --snapshot examples/three-swarms.json --out FILE` into `dir`.
fn saved_plan(dir: &Path) -> PathBuf {
    let file = dir.join("plan.json");
    let snapshot = root().join("examples/three-swarms.json");
    let out = run_without_daemon(&[
        "plan",
        "--snapshot",
        snapshot.to_str().unwrap(),
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    file
}

fn apply_plan(dir: &Path, plan: &Path) -> Output {
    let apps = dir.join("apps.json");
    std::fs::write(&apps, r#"{"loaded": true, "applications": []}"#).unwrap();
    run_without_daemon(&[
        "apply",
        "--yes",
        "--plan",
        plan.to_str().unwrap(),
        "--app-set",
        apps.to_str().unwrap(),
    ])
}

fn read(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

#[test]
fn a_written_plan_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let plan = saved_plan(dir.path());
    let out = apply_plan(dir.path(), &plan);
    // Read, then found stale: no swarm it was planned against answers here.
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("not a saved plan"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_unknown_field_inside_a_deletion_is_exit_2_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let plan = saved_plan(dir.path());
    let mut value = read(&plan);
    value["plan"]["deletions"][0]["also_delete"] = Value::Bool(true);
    std::fs::write(&plan, value.to_string()).unwrap();
    let out = apply_plan(dir.path(), &plan);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(plan.to_str().unwrap()), "{err}");
    assert!(err.contains("plan.deletions[0].also_delete"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_plan_of_more_values_than_the_bound_is_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let plan = saved_plan(dir.path());
    // A valid saved plan whose first swarm has one name more than the
    // bound allows values: three bytes each, so about 100 MB on disk,
    // where the old reader spent gigabytes parsing it.
    let mut value = read(&plan);
    value["plan"]["swarms"][0]["names"] = Value::Array(vec![Value::String("MARK".into())]);
    let text = value.to_string();
    let (before, after) = text.split_once(r#""MARK""#).unwrap();
    let mut file = std::io::BufWriter::new(std::fs::File::create(&plan).unwrap());
    file.write_all(before.as_bytes()).unwrap();
    let chunk = "\"\",".repeat(1 << 20);
    let names = MAX_JSON_VALUES + 1;
    for _ in 0..names >> 20 {
        file.write_all(chunk.as_bytes()).unwrap();
    }
    let rest = usize::try_from(names % (1 << 20)).unwrap();
    file.write_all(&chunk.as_bytes()[..rest * 3]).unwrap();
    file.write_all(b"\"\"").unwrap();
    file.write_all(after.as_bytes()).unwrap();
    file.into_inner().unwrap().sync_all().unwrap();

    let out = apply_plan(dir.path(), &plan);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(plan.to_str().unwrap()), "{err}");
    assert!(
        err.contains(&format!("more than {MAX_JSON_VALUES} JSON values")),
        "{err}"
    );
}

/// A saved plan anyone may write to, or another user owns, could have been
/// widened after it was reviewed: exit 2 naming the file, before any swarm
/// is read. What `plan --out` writes is its owner's alone, and a group
/// that may write is the owner's choice.
#[test]
fn a_saved_plan_others_could_rewrite_is_refused() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let plan = saved_plan(dir.path());
    assert_eq!(std::fs::metadata(&plan).unwrap().mode() & 0o777, 0o600);
    let refused_with = |word: &str| {
        let out = apply_plan(dir.path(), &plan);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(plan.to_str().unwrap()), "{err}");
        assert!(err.contains("refused as the saved plan"), "{err}");
        assert!(err.contains(word), "{err}");
    };
    std::fs::set_permissions(&plan, std::fs::Permissions::from_mode(0o666)).unwrap();
    refused_with("chmod o-w");
    std::fs::set_permissions(&plan, std::fs::Permissions::from_mode(0o664)).unwrap();
    // Read, then found stale: no swarm it was planned against answers here.
    assert_eq!(apply_plan(dir.path(), &plan).status.code(), Some(3));
    if rustix::process::geteuid().is_root() {
        std::os::unix::fs::chown(&plan, Some(65534), None).unwrap();
        refused_with("owned by uid 65534");
    }
}
