//! Reading a JSON document: exactly one value, bounded before it is
//! parsed, every struct only from an object, and the path to the field an
//! error stopped at.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::text::{ReadStr, Text, WriteStr};
use super::types::{AppSet, Application, NodeEntry, Policy, ReleaseEntry, Snapshot, SwarmSnapshot};
use super::SnapshotError;
use crate::bound::check_values;
use crate::map_only::map_only;
use crate::objects::{NodeVolumes, ObjectRef, ObjectVersion, ServiceEntry, StackObjects};
use crate::reads::{FailedRead, UnreadNode};
use crate::record::{Declared, RevisionDocument, RevisionRead};
use crate::usage::{ContainerUse, NodeContainers, PreviousSpec, ServiceUse, Usage};

/// Reads exactly one JSON value of type `T` from `text`, once its values
/// are counted within the bound ([`crate::bound`]).
///
/// A `serde_json::Deserializer` stops after the first value, and only
/// `end()` refuses what follows: without it `{..} {..}` or `{..} garbage`
/// would read as the first document alone, whatever the rest said.
///
/// Tracking the path to every value costs as much as the parse itself, and
/// only an error needs it: a text that parses is read without it, and one
/// that does not is read again by [`explain`], whose error is the one
/// returned. Both reads are of the same type through the same
/// deserializer, so they accept exactly the same texts. `T` may borrow
/// from `text` (a `Snapshot<Text>`, whose names are not copied).
pub(crate) fn one_json_document<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, SnapshotError> {
    check_values(text)?;
    counted(text)
}

/// A snapshot read in place from `text` (names borrowed from it), as
/// [`one_json_document`] reads it; its swarms read on two cores when the
/// text is large and a second core is there.
///
/// Each swarm is taken as its text alone (checked as JSON, but not read
/// into anything) and read from it by one of two threads (`split`).
/// Whatever that refuses is read again the one way every other text is, so the errors,
/// and the texts refused, are those of [`one_json_document`]; what it
/// accepts is read by the same code as the one way reads it, swarm by
/// swarm, so it gives the same snapshot.
pub(crate) fn snapshot_in_place(text: &str) -> Result<Snapshot<Text<'_>>, SnapshotError> {
    check_values(text)?;
    if text.len() >= SPLIT_FROM && crate::parallel::two_cores() {
        if let Some(snapshot) = split(text) {
            return Ok(snapshot);
        }
    }
    counted(text)
}

/// `text` read with its swarms split over two cores; `None` for anything
/// that reading refuses.
fn split(text: &str) -> Option<Snapshot<Text<'_>>> {
    let _on = SplitSwarms::on();
    let mut de = serde_json::Deserializer::from_str(text);
    <Snapshot<Text<'_>> as Deserialize>::deserialize(&mut de)
        .ok()
        .filter(|_| de.end().is_ok())
}

/// Texts shorter than this are read on one thread: the swarms' text is
/// then read twice for less than it saves.
const SPLIT_FROM: usize = 1 << 20;

thread_local! {
    /// On while [`snapshot_in_place`] reads a snapshot on this thread:
    /// its swarms are then read on two cores ([`swarms`]). Off for every
    /// other reader, and for the reading again that gives an error.
    static SPLITTING: Cell<bool> = const { Cell::new(false) };
}

/// [`SPLITTING`] on while it lives, and off again however the reading
/// ends.
struct SplitSwarms;

impl SplitSwarms {
    fn on() -> Self {
        SPLITTING.set(true);
        SplitSwarms
    }
}

impl Drop for SplitSwarms {
    fn drop(&mut self) {
        SPLITTING.set(false);
    }
}

/// Reads a snapshot's `swarms`: a list of swarm objects, each read as
/// `SwarmSnapshot`; while [`snapshot_in_place`] splits, on two cores
/// (`split`).
pub(super) fn swarms<'de, D, S>(deserializer: D) -> Result<Vec<SwarmSnapshot<S>>, D::Error>
where
    D: Deserializer<'de>,
    S: ReadStr<'de>,
{
    if SPLITTING.get() {
        return super::split::swarms(deserializer);
    }
    Vec::deserialize(deserializer)
}

/// [`one_json_document`] of a text whose values were counted.
fn counted<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, SnapshotError> {
    let mut de = serde_json::Deserializer::from_str(text);
    if let Ok(value) = T::deserialize(&mut de) {
        if de.end().is_ok() {
            return Ok(value);
        }
    }
    explain(text)
}

/// [`one_json_document`] with the path to the value it stopped at.
fn explain<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, SnapshotError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| SnapshotError::Parse {
        path: e.path().to_string().trim_start_matches('.').to_owned(),
        message: e.inner().to_string(),
    })?;
    de.end().map_err(|e| SnapshotError::Parse {
        path: String::new(),
        message: e.to_string(),
    })?;
    Ok(value)
}

// Every struct of a snapshot is read only from an object (see `crate::map_only`).
map_only! {
    Snapshot[S] => "a snapshot object";
    Policy[S] => "a policy object";
    AppSet[S] => "an app set object";
    Application[S] => "an application object";
    SwarmSnapshot[S] => "a swarm object";
    ReleaseEntry[S] => "a release object";
    NodeEntry => "a node object";
    ObjectVersion => "an object version";
    ServiceEntry => "a service object";
    NodeVolumes => "a node's volumes object";
    StackObjects => "a stack objects object";
    Usage => "a usage object";
    ServiceUse => "a service use object";
    PreviousSpec => "a previous spec object";
    ContainerUse => "a container use object";
    NodeContainers => "a node's containers object";
    FailedRead => "a failed read object";
    UnreadNode => "an unread node object";
    RevisionRead => "a revision object";
    RevisionDocument => "a revision document object";
    Declared => "a declared objects object";
}

// A network, secret or config: an object `{"name", "id"}`, or a bare name
// (what snapshots listed before ids were read), never anything else.
impl<'de> Deserialize<'de> for ObjectRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameOrMap;
        impl<'de> Visitor<'de> for NameOrMap {
            type Value = ObjectRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object name, or an object with a name and an id")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<ObjectRef, E> {
                Ok(ObjectRef::named(name))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ObjectRef, A::Error> {
                ObjectRef::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_any(NameOrMap)
    }
}

impl Serialize for ObjectRef {
    fn serialize<W: Serializer>(&self, serializer: W) -> Result<W::Ok, W::Error> {
        ObjectRef::serialize(self, serializer)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Reading `text` with its swarms split over two threads (whatever
    /// its size) accepts exactly what the one way
    /// accepts, and gives the same snapshot: its errors are the one
    /// way's by construction.
    pub(crate) fn split_reads_the_same(text: &str) {
        let one: Result<Snapshot<Text<'_>>, _> = one_json_document(text);
        let split = split(text);
        match one {
            Ok(one) => assert_eq!(split, Some(one), "{text}"),
            Err(e) => assert_eq!(split, None, "{text}: {e}"),
        }
        // Whatever happened, the next reading on this thread is the one way.
        assert!(!SPLITTING.get());
    }

    #[test]
    fn swarms_read_on_two_threads_are_those_read_on_one() {
        let release = |i: usize| {
            format!(
                r#"{{"name":"r{i}","owner":"cd/default/a{i}:release/r{i}","records":[{{"id":"c{i}","version":1}}],
                "objects":{{"services":[{{"id":"s{i}","name":"r{i}_web","version":2}}],"networks":[{{"name":"r{i}_default","id":"n{i}"}}],"secrets":["r{i}_k"]}}}}"#
            )
        };
        let swarm = |s: usize| {
            let releases: Vec<String> = (0..20).map(|i| release(s * 100 + i)).collect();
            format!(
                r#"{{"swarm":"s{s}","cluster_id":"C{c}","node_count":1,"releases":[{}],
                "usage":{{"services":[{{"id":"s{s}00","name":"x","stack":"r{s}00","networks":["n{s}01"]}}]}}}}"#,
                releases.join(","),
                c = s % 7,
            )
        };
        let doc = |swarms: &[String]| {
            format!(
                r#"{{"policy":{{"purge_volumes":true}},"app_set":{{"loaded":true,"applications":[{{"name":"a1","swarm":"s0","releases":["r1"]}}]}},"swarms":[{}]}}"#,
                swarms.join(",")
            )
        };
        let swarms: Vec<String> = (0..30).map(swarm).collect();
        split_reads_the_same(&doc(&swarms));
        split_reads_the_same(&doc(&swarms[..1]));
        split_reads_the_same(&doc(&[]));
        // A swarm refused, in either half; a name escaped; the same swarm
        // twice (refused later, by validation, both ways alike).
        for bad in [0, 29] {
            let mut broken = swarms.clone();
            broken[bad] = r#"{"swarm":"bad","releases":[{"name":1}]}"#.to_owned();
            split_reads_the_same(&doc(&broken));
            broken[bad] = r#"["bad"]"#.to_owned();
            split_reads_the_same(&doc(&broken));
            broken[bad] = r#"{"swarm":"bad","unknown":true}"#.to_owned();
            split_reads_the_same(&doc(&broken));
        }
        let mut odd = swarms.clone();
        odd[3] = r#"{"swarm":"s\u0033","releases":[{"name":"r\"1"}]}"#.to_owned();
        odd[4] = swarms[5].clone();
        split_reads_the_same(&doc(&odd));
        // Swarms given twice as a key, or as something else than a list.
        let text = doc(&swarms);
        split_reads_the_same(&text.replacen(r#""swarms":["#, r#""swarms":[],"swarms":["#, 1));
        split_reads_the_same(&text.replacen(r#""swarms":["#, r#""swarms":{"a":["#, 1));
        split_reads_the_same(r#"{"app_set":{"loaded":true},"swarms":null}"#);
        split_reads_the_same(r#"{"app_set":{"loaded":true},"swarms":[{}]}"#);
        split_reads_the_same(r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a"}]} x"#);
        split_reads_the_same(r#"{"app_set":{"loaded":true},"swarms":[{"swarm":"a"}"#);
        // Deeply nested where a swarm stands: refused both ways.
        let deep = format!(
            r#"{{"app_set":{{"loaded":true}},"swarms":[{}{}]}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        split_reads_the_same(&deep);
        // The whole snapshot written as an array of its fields, in order:
        // refused both ways, as every struct written so is.
        split_reads_the_same(r#"[2,{"purge_volumes":true},{"loaded":true,"applications":[]},[]]"#);
    }
}
