//! Arbitrary bytes as a saved plan (`apply --plan FILE`), checked against
//! the snapshots it was made from, unchanged and emptied.
//!
//! Invariants: reading never panics; a saved plan that reads writes back
//! as itself; checking it never panics and never approves a deletion the
//! file does not hold; against a snapshot with no releases, nothing it
//! holds is approved; every change it reports is one line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sweep_core::saved::{check, SavedPlan};
use sweep_core::{AppSet, Snapshot};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(saved) = SavedPlan::from_json(text) else {
        return;
    };
    let again = SavedPlan::from_json(&saved.to_json_pretty()).expect("a written saved plan reads");
    assert_eq!(again, saved);

    let empty = Snapshot::new(
        saved.policy.clone(),
        AppSet::new(true, Vec::new()),
        Vec::new(),
    );
    match check(&saved, &empty, &saved.tool_version) {
        Ok(Ok(approved)) => assert!(
            approved.plan.deletions.is_empty(),
            "a deletion approved against a snapshot without releases"
        ),
        Ok(Err(stale)) => {
            for change in &stale.changes {
                assert!(!change.to_string().contains('\n'), "{change:?}");
            }
        }
        // The saved policy's controller may not be valid for a snapshot.
        Err(_) => {}
    }
});
