//! Writes the JSON Schemas of swarm-sweep's JSON documents, generated from
//! the Rust types that write and read them, to `schemas/` at the top of the
//! workspace (or to the directory given as the one argument):
//!
//! ```sh
//! cargo run -p sweep-core --features schema --example schemas
//! ```
//!
//! The snapshot's schema describes what `plan --snapshot` accepts (optional
//! fields and their defaults, unknown fields refused); the others describe
//! what the commands write, every field they always write required.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;
use sweep_core::audit::AuditEntry;
use sweep_core::notify::Notification;
use sweep_core::saved::SavedPlan;
use sweep_core::sweep::SweepTrace;
use sweep_core::{GraceState, PlanDiff, Snapshot, SweepPlan, SweepReport};

/// What `swarm-sweep apply --format json` prints: the plan it carried out
/// and the report of the sweep.
#[derive(JsonSchema)]
#[allow(dead_code)] // Only its schema is used: the CLI builds the object itself.
struct ApplyOutput {
    plan: SweepPlan,
    report: SweepReport,
}

/// Which side of a document a schema describes.
#[derive(Clone, Copy)]
enum Side {
    /// What a reader accepts: fields with a default may be left out.
    Read,
    /// What a writer writes: every field it always writes is required.
    Written,
}

fn schema_of<T: JsonSchema>(side: Side, title: &str) -> String {
    let settings = SchemaSettings::draft2020_12();
    let settings = match side {
        Side::Read => settings.for_deserialize(),
        Side::Written => settings.for_serialize(),
    };
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    schema.insert("title".to_owned(), title.into());
    let schema = sorted(schema.to_value());
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

/// `value` with every object's keys in order, so that the text is the same
/// whether or not a build of `serde_json` keeps insertion order.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let map: BTreeMap<String, Value> =
                map.into_iter().map(|(k, v)| (k, sorted(v))).collect();
            Value::Object(map.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// Every schema file, by file name, with its text.
pub fn documents() -> Vec<(&'static str, String)> {
    vec![
        (
            "snapshot.schema.json",
            schema_of::<Snapshot>(Side::Read, "swarm-sweep snapshot"),
        ),
        (
            "plan.schema.json",
            schema_of::<SweepPlan>(Side::Written, "swarm-sweep plan"),
        ),
        (
            "saved-plan.schema.json",
            schema_of::<SavedPlan>(Side::Written, "swarm-sweep saved plan"),
        ),
        (
            "report.schema.json",
            schema_of::<SweepReport>(Side::Written, "swarm-sweep sweep report"),
        ),
        (
            "apply-output.schema.json",
            schema_of::<ApplyOutput>(Side::Written, "swarm-sweep apply output"),
        ),
        (
            "state.schema.json",
            schema_of::<GraceState>(Side::Written, "swarm-sweep grace-period state"),
        ),
        (
            "trace.schema.json",
            schema_of::<SweepTrace>(Side::Written, "swarm-sweep sweep trace"),
        ),
        (
            "audit.schema.json",
            schema_of::<AuditEntry>(Side::Written, "swarm-sweep audit log line"),
        ),
        (
            "notification.schema.json",
            schema_of::<Notification>(
                Side::Written,
                "swarm-sweep notification (--notify-format json)",
            ),
        ),
        (
            "plan-diff.schema.json",
            schema_of::<PlanDiff>(Side::Written, "swarm-sweep plan diff"),
        ),
    ]
}

#[allow(dead_code)] // Unused where this file is included as a module.
fn main() {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas"));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for (name, text) in documents() {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("{}", path.display());
    }
}
