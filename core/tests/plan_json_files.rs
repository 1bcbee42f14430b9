//! The in-place reader (`plan_json`, what `plan --snapshot` uses) against
//! reading the snapshot and planning it, over every example, fuzz seed and
//! (when present) the local fuzz corpus: the same plan or the same error.
//! Kept out of the library so that the core itself never touches a file.

use sweep_core::plan::plan_json;
use sweep_core::{plan, Snapshot};

#[path = "../benches/support/fixture.rs"]
mod fixture;

fn files(dir: &str) -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| std::fs::read(e.ok()?.path()).ok())
        .filter_map(|bytes| String::from_utf8(bytes).ok())
        .collect()
}

#[test]
fn examples_and_seeds_plan_the_same_either_way() {
    let mut texts = files("../examples");
    texts.extend(files("../fuzz/seeds/plan_snapshot"));
    // The local fuzz corpus, when there is one: thousands of mutants.
    texts.extend(files("../fuzz/corpus/plan_snapshot"));
    assert!(texts.len() >= 10, "examples and seeds are found");
    for text in &texts {
        let owned = Snapshot::from_json(text).and_then(|s| plan(&s));
        assert_eq!(plan_json(text), owned, "{text}");
    }
}

/// A snapshot large enough (some megabytes) that `plan_json` reads its
/// swarms and decides its clusters on two cores, where there are two:
/// the plan of reading and planning it on one.
#[test]
fn a_large_snapshot_plans_the_same_either_way() {
    let text = serde_json::to_string(&fixture::snapshot(20, 2_000)).unwrap();
    assert!(text.len() > 8 << 20, "{} bytes", text.len());
    let owned = Snapshot::from_json(&text).and_then(|s| plan(&s)).unwrap();
    assert!(!owned.deletions.is_empty() && !owned.dropped.is_empty());
    assert_eq!(plan_json(&text).unwrap(), owned);
}
