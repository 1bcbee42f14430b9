//! The in-place reader (`plan_json`, what `plan --snapshot` uses) against
//! reading the snapshot and planning it, over every example, fuzz seed and
//! (when present) the local fuzz corpus: the same plan or the same error.
//! Kept out of the library so that the core itself never touches a file.

use sweep_core::plan::plan_json;
use sweep_core::{plan, Snapshot};

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
