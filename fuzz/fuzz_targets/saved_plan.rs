//! Arbitrary bytes as a saved plan (`apply --plan FILE`), checked against
//! the snapshots it was made from, unchanged and emptied.
//!
//! Invariants: reading never panics; a saved plan that reads writes back
//! as itself, and every field the file gave a value (not null, not an
//! empty list) is in what it writes back, at the same path: no field at
//! any depth was read past unknown, and no object was read from an array;
//! the bound's count of values is exactly a parser's (every key given
//! twice counted twice); checking it never panics and never approves a
//! deletion the file does not hold; against a snapshot with no releases,
//! nothing it holds is approved; every change it reports is one line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use sweep_core::bound::count_values;
use sweep_core::saved::{check, SavedPlan};
use sweep_core::{AppSet, Snapshot, SnapshotError};
use sweep_fuzz::no_object_read_from_an_array;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(Count(values)) = serde_json::from_str::<Count>(text) {
        assert_eq!(
            count_values(text, u64::MAX),
            values,
            "the value count is not exact"
        );
    }
    let saved = match SavedPlan::from_json(text) {
        Ok(saved) => saved,
        Err(SnapshotError::TooManyValues { .. }) => panic!("a fuzz input over the value bound"),
        Err(_) => return,
    };
    let written = saved.to_json_pretty();
    no_object_read_from_an_array(text, &written);
    let again = SavedPlan::from_json(&written).expect("a written saved plan reads");
    assert_eq!(again, saved);
    if let (Ok(given), Ok(kept)) = (
        serde_json::from_str::<Value>(text),
        serde_json::from_str::<Value>(&written),
    ) {
        kept_every_field(&given, &kept, "");
    }

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

/// Fails unless every member of `given` with a value is in `kept` at the
/// same path: a member read past would be one the reader does not know.
fn kept_every_field(given: &Value, kept: &Value, path: &str) {
    match (given, kept) {
        (Value::Object(given), Value::Object(kept)) => {
            for (key, value) in given {
                let empty = value.is_null() || value.as_array().is_some_and(Vec::is_empty);
                match kept.get(key) {
                    Some(found) => kept_every_field(value, found, &format!("{path}.{key}")),
                    None => assert!(empty, "{path}.{key} was read past"),
                }
            }
        }
        (Value::Array(given), Value::Array(kept)) => {
            for (i, (value, found)) in given.iter().zip(kept).enumerate() {
                kept_every_field(value, found, &format!("{path}[{i}]"));
            }
        }
        _ => {}
    }
}

/// How many JSON values a document holds, as a parser reads them: every
/// value once, a member whose key is given twice included.
struct Count(u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CountVisitor)
    }
}

struct CountVisitor;

impl<'de> Visitor<'de> for CountVisitor {
    type Value = Count;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Count, E> {
        Ok(Count(1))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Count, E> {
        Ok(Count(1))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Count, E> {
        Ok(Count(1))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Count, E> {
        Ok(Count(1))
    }
    fn visit_str<E>(self, _: &str) -> Result<Count, E> {
        Ok(Count(1))
    }
    fn visit_unit<E>(self) -> Result<Count, E> {
        Ok(Count(1))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
        let mut n = 1;
        while let Some(Count(inner)) = seq.next_element()? {
            n += inner;
        }
        Ok(Count(n))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
        let mut n = 1;
        while map.next_key::<IgnoredAny>()?.is_some() {
            n += map.next_value::<Count>()?.0;
        }
        Ok(Count(n))
    }
}
