//! Arbitrary bytes as a grace-period state file (`--state FILE`,
//! `sweep_core::GraceState::from_json`).
//!
//! Invariants: parsing never panics; a state that reads came from
//! objects only and writes back as itself, sorted, each release once; the
//! currency rule never panics, and a state it refuses is replaced by the
//! empty state at `now`, so no entry of a refused state can reach a plan;
//! applying a state to a snapshot only ever sets times the state holds.

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use sweep_core::{GraceState, Snapshot, UnixTime};
use sweep_fuzz::no_object_read_from_an_array;

fuzz_target!(|data: &[u8]| {
    // The first 16 bytes choose `now` and the maximum age; the rest is the
    // file.
    if data.len() < 16 {
        return;
    }
    let (clock, file) = data.split_at(16);
    let now = UnixTime::from_secs(u64::from_le_bytes(clock[..8].try_into().unwrap()) >> 30);
    let max_age = match u64::from_le_bytes(clock[8..].try_into().unwrap()) {
        0 => None,
        secs => Some(Duration::from_secs(secs >> 20)),
    };
    let Ok(text) = std::str::from_utf8(file) else {
        return;
    };
    let state = match GraceState::from_json(text) {
        Ok(state) => state,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    assert!(
        state
            .departed
            .windows(2)
            .all(|w| (&w[0].swarm, &w[0].release) < (&w[1].swarm, &w[1].release)),
        "not sorted, or a release twice: {state:?}"
    );
    no_object_read_from_an_array(text, &state.to_json_pretty());
    let again = GraceState::from_json(&state.to_json_pretty())
        .unwrap_or_else(|e| panic!("its own JSON does not read back: {e}"));
    assert_eq!(again, state, "its own JSON reads back differently");

    let verdict = state.check_current(now, max_age);
    let (used, why) = state.clone().current(now, max_age);
    assert_eq!(verdict.is_err(), why.is_some());
    if why.is_some() {
        assert!(used.departed.is_empty(), "a refused state kept entries");
        assert_eq!(used.written_at, now);
        assert!(!why.unwrap().to_string().contains('\n'));
    } else {
        assert_eq!(used, state);
        assert!(state.written_at <= now);
    }

    // A snapshot naming every release of the state, on its swarms, and
    // one more: each gets the state's time or none.
    let mut swarms = serde_json::Map::new();
    for d in &state.departed {
        let releases = swarms
            .entry(d.swarm.as_str().to_owned())
            .or_insert_with(|| serde_json::json!([{"name": "extra"}]));
        releases
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"name": d.release}));
    }
    let snapshot = serde_json::json!({
        "app_set": {"loaded": true, "applications": []},
        "swarms": swarms
            .into_iter()
            .map(|(swarm, releases)| serde_json::json!({"swarm": swarm, "releases": releases}))
            .collect::<Vec<_>>(),
    });
    let Ok(mut snapshot) = Snapshot::from_json(&snapshot.to_string()) else {
        // Names the snapshot refuses (a release name it does not allow)
        // cannot come from a gathered snapshot either.
        return;
    };
    used.apply_to(&mut snapshot);
    for swarm in &snapshot.swarms {
        for release in &swarm.releases {
            if let Some(since) = release.departed_since {
                assert!(
                    used.departed
                        .iter()
                        .any(|d| d.release == release.name && d.since == since),
                    "{}/{} got a time the state does not hold",
                    swarm.swarm.as_str(),
                    release.name
                );
            }
        }
    }
});
