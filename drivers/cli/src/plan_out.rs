//! Writing a plan as pretty JSON to stdout: the bytes
//! [`SweepPlan::to_json_pretty`] gives and a line break, on both cores.
//!
//! The plan of a million releases is about as large as its snapshot, and
//! serializing it took about as long as parsing the snapshot. Its two
//! lists with an entry per release (`deletions`, `spared`) are therefore
//! serialized in blocks, alternately on this thread and on a second one,
//! and written in their order; the rest of the plan is serialized as it
//! always was, around them. Every block is serialized by serde_json with
//! [`Pretty`], serde_json's pretty printer started at the depth the entries
//! have in the whole document, so the bytes are those of one serialization
//! of the whole plan, whatever the block size (a test holds it to
//! `to_json_pretty`). Nothing of the plan's text is held whole: a few
//! blocks at a time.

use std::io::{self, Write};
use std::sync::mpsc;

use serde::Serialize;
use serde_json::ser::Formatter;
use sweep_core::SweepPlan;

use crate::output::{emit, OutputError};

/// Entries serialized in one block: about a megabyte of text for a
/// deletion with its objects, so that handing a block over costs nothing
/// next to serializing it, and few are held at once.
const BLOCK: usize = 2048;

/// Writes `plan` to stdout as pretty JSON and a line break, in the bytes
/// `to_json_pretty` gives.
pub fn emit_json(plan: &mut SweepPlan) -> Result<(), OutputError> {
    write_json(plan, BLOCK, &mut |text| emit(text))
}

/// [`emit_json`] through `out`, in blocks of `block` entries.
fn write_json(
    plan: &mut SweepPlan,
    block: usize,
    out: &mut dyn FnMut(&str) -> Result<(), OutputError>,
) -> Result<(), OutputError> {
    // The plan without its two long lists: serialized here, small.
    let deletions = std::mem::take(&mut plan.deletions);
    let spared = std::mem::take(&mut plan.spared);
    let shell = serialize(&*plan, 0);
    plan.deletions = deletions;
    plan.spared = spared;
    let mut shell = shell.map_err(OutputError::Write)?;
    shell.push('\n');
    // Where each list's `[]` stands in the plan without them. In pretty
    // JSON a line break is the printer's own (one inside a string is
    // escaped), and after it the indentation gives the depth: a line
    // starting with two spaces and a key is a key of the plan itself.
    let found = empty_list(&shell, 0, "deletions")
        .and_then(|d| Some((d, empty_list(&shell, d + 2, "spared")?)));
    let Some((deletions_at, spared_at)) = found else {
        // Not the plan this module knows: one serialization of the whole.
        let mut whole = serialize(&*plan, 0).map_err(OutputError::Write)?;
        whole.push('\n');
        return out(&whole);
    };
    out(&shell[..deletions_at])?;
    write_list(&plan.deletions, block, out)?;
    out(&shell[deletions_at + 2..spared_at])?;
    write_list(&plan.spared, block, out)?;
    out(&shell[spared_at + 2..])
}

/// The offset of the `[]` of the plan's (empty) list `name` in `shell`,
/// past `from`.
fn empty_list(shell: &str, from: usize, name: &str) -> Option<usize> {
    let key = format!("\n  \"{name}\": []");
    shell
        .get(from..)?
        .find(&key)
        .map(|at| from + at + key.len() - 2)
}

/// Writes `items` as the value of one of the plan's keys: `[]`, or the
/// entries, their blocks serialized alternately here and on a second
/// thread and written in order.
fn write_list<T: Serialize + Sync>(
    items: &[T],
    block: usize,
    out: &mut dyn FnMut(&str) -> Result<(), OutputError>,
) -> Result<(), OutputError> {
    if items.is_empty() {
        return out("[]");
    }
    let block = block.max(1);
    // Each block with the position of its first entry in the list.
    let blocks = || {
        items
            .chunks(block)
            .enumerate()
            .map(move |(n, chunk)| (n * block, chunk))
    };
    out("[")?;
    std::thread::scope(|scope| {
        // One block ready ahead at most: what is held stays a few blocks.
        let (ready, take) = mpsc::sync_channel::<io::Result<String>>(1);
        scope.spawn(move || {
            for (first, chunk) in blocks().skip(1).step_by(2) {
                // A closed channel: the writer stopped, and so does this.
                if ready.send(entries(first, chunk)).is_err() {
                    return;
                }
            }
        });
        for (n, (first, chunk)) in blocks().enumerate() {
            let text = if n % 2 == 0 {
                entries(first, chunk)
            } else {
                // The helper thread only ends early when this one stops
                // taking: a missing block is a failure, never a gap.
                take.recv()
                    .unwrap_or_else(|_| Err(io::Error::other("a block was not serialized")))
            };
            out(&text.map_err(OutputError::Write)?)?;
        }
        Ok(())
    })?;
    out("\n  ]")
}

/// The entries `chunk` of a list of the plan, the first of them at
/// `first` in the list: each after its separator and indentation, as
/// the whole plan's serialization has them.
fn entries<T: Serialize>(first: usize, chunk: &[T]) -> io::Result<String> {
    let mut text = Vec::with_capacity(chunk.len() * 512);
    for (i, item) in chunk.iter().enumerate() {
        text.extend_from_slice(if first + i == 0 { b"\n" } else { b",\n" });
        indent(&mut text, 2)?;
        item.serialize(&mut serde_json::Serializer::with_formatter(
            &mut text,
            Pretty::at(2),
        ))?;
    }
    String::from_utf8(text).map_err(io::Error::other)
}

/// `value` as pretty JSON, its outermost value at depth `depth`.
fn serialize<T: Serialize + ?Sized>(value: &T, depth: usize) -> io::Result<String> {
    let mut text = Vec::new();
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut text,
        Pretty::at(depth),
    ))?;
    String::from_utf8(text).map_err(io::Error::other)
}

/// serde_json's `PrettyFormatter` with its two-space indentation, the
/// printer `to_json_pretty` uses, started at any depth; its indentation
/// is written in one piece rather than two bytes a level.
struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    fn at(depth: usize) -> Self {
        Pretty {
            depth,
            has_value: false,
        }
    }

    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            writer.write_all(b"\n")?;
            indent(writer, self.depth)?;
        }
        writer.write_all(bracket)
    }

    fn next<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        writer.write_all(if first { b"\n" } else { b",\n" })?;
        indent(writer, self.depth)
    }
}

/// Writes the indentation of `depth`, two spaces a level.
fn indent<W: ?Sized + Write>(writer: &mut W, depth: usize) -> io::Result<()> {
    const SPACES: &[u8; 64] = &[b' '; 64];
    let mut left = depth * 2;
    while left > 0 {
        let n = left.min(SPACES.len());
        writer.write_all(&SPACES[..n])?;
        left -= n;
    }
    Ok(())
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.next(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.next(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`write_json`] writes, gathered.
    fn written(plan: &mut SweepPlan, block: usize) -> String {
        let mut all = String::new();
        write_json(plan, block, &mut |text| {
            all.push_str(text);
            Ok(())
        })
        .unwrap();
        all
    }

    fn planned(text: &str) -> SweepPlan {
        sweep_core::plan::plan_json(text).unwrap()
    }

    /// Every example snapshot of the repository.
    fn examples() -> Vec<(String, String)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).unwrap();
                if sweep_core::plan::plan_json(&text).is_ok() {
                    found.push((path.display().to_string(), text));
                }
            }
        }
        found
    }

    #[test]
    fn the_bytes_are_those_of_one_serialization_whatever_the_block() {
        let examples = examples();
        assert!(examples.len() >= 3, "the examples were not found");
        for (name, text) in examples {
            let mut plan = planned(&text);
            let whole = format!("{}\n", plan.to_json_pretty());
            for block in [1, 2, 3, BLOCK] {
                assert_eq!(
                    written(&mut plan, block),
                    whole,
                    "{name}, blocks of {block}"
                );
            }
        }
    }

    #[test]
    fn empty_lists_and_hostile_names_are_written_as_one_serialization() {
        // Names with what a search for the lists' keys must not be fooled
        // by: line breaks, quotes and indentation inside strings.
        let text = r#"{"app_set":{"loaded":true,"applications":[
            {"name":"shop","swarm":"a\n  \"deletions\": []","releases":["web"]}]},
            "swarms":[{"swarm":"a\n  \"deletions\": []","releases":[
              {"name":"x\n  \"spared\": []","owner":"cd/default/gone:release/x\n  \"spared\": []"},
              {"name":"y\u2028","owner":"cd/default/gone:release/y\u2028"},
              {"name":"web","owner":"cd/default/shop:release/web"}]},
              {"swarm":"b","error":"\n  \"deletions\": []"}]}"#;
        let mut plan = planned(text);
        assert!(!plan.spared.is_empty());
        let whole = format!("{}\n", plan.to_json_pretty());
        for block in [1, 2, BLOCK] {
            assert_eq!(written(&mut plan, block), whole, "blocks of {block}");
        }
        // Nothing deleted, nothing spared.
        let mut empty = planned(r#"{"app_set":{"loaded":true,"applications":[]},"swarms":[]}"#);
        assert!(empty.deletions.is_empty() && empty.spared.is_empty());
        let whole = format!("{}\n", empty.to_json_pretty());
        assert_eq!(written(&mut empty, 1), whole);
    }

    #[test]
    fn a_failed_write_stops_the_writing_and_is_reported() {
        // Twenty deletions, written a block of one at a time: the write
        // that fails is of a block the second thread serialized.
        let releases: Vec<String> = (0..20)
            .map(|i| format!(r#"{{"name":"r{i}","owner":"cd/default/gone:release/r{i}"}}"#))
            .collect();
        let text = format!(
            r#"{{"app_set":{{"loaded":true,"applications":[{{"name":"shop","swarm":"a","releases":["web"]}}]}},
            "swarms":[{{"swarm":"a","releases":[{}]}}]}}"#,
            releases.join(",")
        );
        let mut plan = planned(&text);
        assert_eq!(plan.deletions.len(), 20);
        for stop in [1, 2, 3, 4, 7, 12] {
            let mut writes = 0;
            let result = write_json(&mut plan, 1, &mut |_| {
                writes += 1;
                if writes == stop {
                    return Err(OutputError::Closed);
                }
                Ok(())
            });
            assert!(matches!(result, Err(OutputError::Closed)), "{result:?}");
            assert_eq!(writes, stop);
        }
        // The plan is whole again after writing it.
        assert_eq!(plan.deletions.len(), 20);
    }
}
