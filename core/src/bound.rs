//! How large a JSON document may become once parsed.
//!
//! A byte limit on a file does not bound what it parses to: a release
//! written `{"name":""}` takes 12 bytes of text and over 200 bytes of
//! memory, so a saved plan or snapshot of tiny entries just under the byte
//! limit would allocate many times its size and abort the process instead
//! of being refused. Every document read through the shared reader
//! (snapshots, saved plans, state files) is therefore first counted, in one
//! pass over its bytes that allocates nothing, and one holding more than
//! [`MAX_JSON_VALUES`] values is refused before any of it is parsed.

/// The most JSON values one document may hold, every object, array,
/// string, number, boolean and null counting one (an object's keys do not
/// count).
///
/// Documents as this tool writes them take about 19 (compact) to 36
/// (indented) bytes of text per value. A snapshot of a million releases
/// over 100 swarms with the facts a gather records (objects, records,
/// usage, some revisions: `bench/plan-vs-read`'s) holds about 30.5M values
/// in 567 MB, and fits; its plan holds 18M. Parsed, planned and its plan
/// written, the costliest shape found (releases of a name alone: 16.7M
/// of them at the bound) takes about 340 bytes per value, 11.2 GB at the
/// bound: what a process planning documents nobody vouches for must be
/// allowed, or be refused the rest by its own memory limit.
///
/// Not raised for snapshots with every release's revisions and volumes
/// as well (some 60M values for a million releases): their text would
/// pass the 1 GiB a snapshot file may take anyway, and twice the values
/// would let a hostile document of tiny entries take some 17 GB before
/// anything refused it, more than the machines this runs on have.
pub const MAX_JSON_VALUES: u64 = 1 << 25;

/// A document holding more values than a reader may parse. The readers
/// report it as their own error (`SnapshotError::TooManyValues`): this
/// module comes before them and knows none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the document holds more than {limit} JSON values")]
pub struct TooManyValues {
    /// The most values a document may hold.
    pub limit: u64,
}

/// Refuses `text` when it holds more than [`MAX_JSON_VALUES`] values.
pub(crate) fn check_values(text: &str) -> Result<(), TooManyValues> {
    within(text, MAX_JSON_VALUES)
}

/// Refuses `text` when it holds more than `limit` values.
fn within(text: &str, limit: u64) -> Result<(), TooManyValues> {
    if count_values(text, limit) > limit {
        return Err(TooManyValues { limit });
    }
    Ok(())
}

/// The number of JSON values in `text`, counting stopped once it passes
/// `stop_above`. Exact for valid JSON (a key given twice counts each
/// time); for any other text an upper bound of what a parser reads of it
/// before it stops. Allocates nothing and never panics.
///
/// Every value but the first in its object or array follows a comma, and
/// the first follows the opening bracket, so values are the commas and
/// openings outside strings, less the empty objects and arrays, plus the
/// document itself.
pub fn count_values(text: &str, stop_above: u64) -> u64 {
    let bytes = text.as_bytes();
    let mut count: u64 = 1;
    let mut last = 0u8;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        match byte {
            b'"' => i = string_end(bytes, i + 1),
            b'[' | b'{' | b',' => {
                count += 1;
                if count > stop_above {
                    return count;
                }
            }
            b']' | b'}' if last == b'[' || last == b'{' => count -= 1,
            b' ' | b'\n' | b'\r' | b'\t' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        last = byte;
        i += 1;
    }
    count
}

/// The index of the quote that closes the string whose text starts at
/// `start`, past its escapes; the length of `bytes` when it never closes.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return i,
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::SnapshotError;

    fn count(text: &str) -> u64 {
        count_values(text, u64::MAX)
    }

    /// Every value of `value`, counted by walking it.
    fn walked(value: &serde_json::Value) -> u64 {
        1 + match value {
            serde_json::Value::Array(items) => items.iter().map(walked).sum(),
            serde_json::Value::Object(members) => members.values().map(walked).sum(),
            _ => 0,
        }
    }

    #[test]
    fn every_value_counts_once_and_keys_not_at_all() {
        assert_eq!(count("0"), 1);
        assert_eq!(count("[]"), 1);
        assert_eq!(count("{ }"), 1);
        assert_eq!(count("[0, 1]"), 3);
        assert_eq!(count(r#"{"a": [], "b": {}, "c": null}"#), 4);
        assert_eq!(count(r#"[[[]], {"k": [true]}]"#), 6);
    }

    #[test]
    fn brackets_and_commas_inside_strings_do_not_count() {
        assert_eq!(count(r#"["a,b[c{", "\"],[{", "\\"]"#), 4);
        assert_eq!(count(r#"{"k,[{": "\\\",,,"}"#), 2);
    }

    #[test]
    fn the_count_agrees_with_a_parse_of_written_documents() {
        let snapshot = crate::Snapshot::from_json(
            r#"{"policy": {"purge_volumes": true}, "app_set": {"loaded": true,
                "applications": [{"name": "web", "swarm": "a", "releases": ["web"]}]},
                "swarms": [{"swarm": "a", "cluster_id": "c", "node_count": 2,
                  "nodes": [{"id": "n1", "hostname": "h\"1,["}],
                  "releases": [{"name": "old", "owner": "cd/default/old:release/old",
                    "records": [{"id": "r", "version": 1}],
                    "objects": {"services": [], "networks": ["n,{"], "volumes": []}},
                    {"name": "web", "owner": "cd/default/web:release/web"}]},
                  {"swarm": "b", "error": "down]"}]}"#,
        )
        .unwrap();
        let plan = crate::plan(&snapshot).unwrap();
        let saved = crate::saved::SavedPlan::new(&snapshot, plan.clone(), "1");
        for text in [
            snapshot.to_json_pretty(),
            serde_json::to_string(&snapshot).unwrap(),
            plan.to_json_pretty(),
            saved.to_json_pretty(),
        ] {
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(count(&text), walked(&value), "{text}");
        }
    }

    #[test]
    fn a_document_past_the_limit_is_refused_and_one_at_it_is_not() {
        let at = format!("[{}]", ["0"; 9].join(","));
        assert_eq!(within(&at, 10), Ok(()));
        let past = format!("[{}]", ["0"; 10].join(","));
        assert_eq!(
            within(&past, 10).map_err(SnapshotError::from),
            Err(SnapshotError::TooManyValues { limit: 10 })
        );
    }

    #[test]
    fn counting_stops_past_the_limit_and_never_panics_on_broken_text() {
        assert_eq!(count_values(&"[".repeat(1000), 5), 6);
        for broken in ["\"", "\"\\", "[\"\\\"", "]]]", "}", ",", "\"abc", "[,]"] {
            count(broken);
        }
        // An unbalanced closing bracket cannot make the count wrap.
        assert_eq!(count("[]]"), 1);
    }

    #[test]
    fn every_reader_refuses_a_document_past_the_limit_before_parsing_it() {
        // Two bytes a value; not a document of any kind, so a reader that
        // parsed before counting would give a parse error instead.
        let limit = usize::try_from(MAX_JSON_VALUES).unwrap();
        let mut text = String::with_capacity(2 * limit + 2);
        text.push('[');
        text.push_str(&"0,".repeat(limit));
        text.push_str("0]");
        let refused = Err(SnapshotError::TooManyValues {
            limit: MAX_JSON_VALUES,
        });
        assert_eq!(crate::Snapshot::from_json(&text).map(drop), refused);
        assert_eq!(crate::plan::plan_json(&text).map(drop), refused);
        assert_eq!(crate::saved::SavedPlan::from_json(&text).map(drop), refused);
        assert_eq!(crate::GraceState::from_json(&text).map(drop), refused);
    }
}
