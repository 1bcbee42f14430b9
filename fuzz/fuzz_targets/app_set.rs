//! Arbitrary bytes as an app-set document (`--app-set FILE`, YAML or JSON).
//!
//! Invariants: parsing never panics; a refusal is one non-empty line; an
//! app set that parses also passes the snapshot's validation, parses the
//! same under the default budgets, and its JSON reads back as the same app
//! set.
//!
//! The alias budget is a tenth of the default: the same checks, but an
//! alias bomb's mutants cost the fuzzer milliseconds instead of a tenth of
//! a second each (`Limits::DEFAULT` is what `swarm-sweep` uses).

#![no_main]

use libfuzzer_sys::fuzz_target;
use sweep_core::app_set_doc::{self, Limits};
use sweep_core::{AppSet, Snapshot};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut limits = Limits::DEFAULT;
    limits.max_alias_replay /= 10;
    let app_set = match app_set_doc::parse_with_limits(text, limits) {
        Ok(app_set) => app_set,
        Err(e) => {
            let shown = e.to_string();
            assert!(!shown.is_empty());
            assert!(!shown.contains('\n'), "a refusal on two lines: {shown:?}");
            assert_eq!(shown, format!("{}: {}", e.place(), e.message()));
            return;
        }
    };
    Snapshot::new(Default::default(), app_set.clone(), Vec::new())
        .validate()
        .expect("a parsed app set validates");
    assert_eq!(
        AppSet::from_document(text).as_ref(),
        Ok(&app_set),
        "larger budgets read it differently"
    );
    for json in [
        serde_json::to_string(&app_set).expect("an app set serializes"),
        serde_json::to_string_pretty(&app_set).expect("an app set serializes"),
    ] {
        let again = AppSet::from_document(&json)
            .unwrap_or_else(|e| panic!("its own JSON does not read back: {e}\n{json}"));
        assert_eq!(again, app_set, "its own JSON reads back differently");
    }
});
