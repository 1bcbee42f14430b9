//! The planner as a WebAssembly module (`wasm/`, crate `sweep-wasm`) gives
//! byte for byte the plan the native build gives: over every example
//! snapshot and fuzz seed, over generated snapshots, and for bad input an
//! error result (status `1` and the error document), never a trap.
//!
//! In the soak set (`cargo test -p sweep-core --test wasm_plan --
//! --ignored`): building the module takes most of a minute of a cold run,
//! which the contributor's `cargo test --workspace` cannot spare.
//!
//! The module is built for `wasm32-unknown-unknown` by this test and run
//! through its ABI (`plan_input`, `plan`, `plan_output`, `plan_output_len`, `plan_exit_status`;
//! see wasm/src/lib.rs) exactly as a controller in another language would
//! call it. The host is `wasmi`, a WebAssembly interpreter in pure Rust:
//! a fraction of wasmtime's build time (no Cranelift), which matters on
//! small CI machines, and speed is not what is tested here.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use proptest::prelude::*;
use serde_json::{json, Value};
use wasmi::{Engine, Instance, Linker, Memory, Module, Store, TypedFunc};

const TARGET: &str = "wasm32-unknown-unknown";

fn workspace_root() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    dir.canonicalize().unwrap_or(dir)
}

/// Where the module is built: a target dir of its own under the
/// workspace's (`<target>/wasm`), so that the build never waits for the
/// lock of the `cargo test` running this.
fn wasm_target_dir() -> PathBuf {
    // CARGO_TARGET_TMPDIR is `<target>/tmp`, whatever the profile or host triple.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("wasm")
}

/// The standard library for the target is there (rustup installs it per
/// target); `None` when it cannot be told.
fn target_installed() -> Option<bool> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let entries = std::fs::read_dir(&dir).ok();
    Some(entries.is_some_and(|mut e| {
        e.any(|f| {
            f.is_ok_and(|f| {
                let name = f.file_name();
                let name = name.to_string_lossy();
                name.starts_with("libcore-") && name.ends_with(".rlib")
            })
        })
    }))
}

fn missing_target() -> ! {
    panic!(
        "the Rust target {TARGET} is not installed, so the WebAssembly module cannot be \
         built; install it with `rustup target add {TARGET}`"
    )
}

/// The module of this source tree, built once per test process so that a
/// run of this test alone never tests a stale module.
fn module() -> &'static (Engine, Module) {
    static MODULE: OnceLock<(Engine, Module)> = OnceLock::new();
    MODULE.get_or_init(|| {
        if target_installed() == Some(false) {
            missing_target();
        }
        let target_dir = wasm_target_dir();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.current_dir(workspace_root()).args([
            "build",
            "--quiet",
            "-p",
            "sweep-wasm",
            "--target",
            TARGET,
            "--release",
        ]);
        build.arg("--target-dir").arg(&target_dir);
        // The variables cargo sets for this test crate are not the build's.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if [
                "CARGO_PKG_",
                "CARGO_MANIFEST_",
                "CARGO_CRATE_",
                "CARGO_BIN_",
            ]
            .iter()
            .any(|p| key.starts_with(p))
                || ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"].contains(&&*key)
            {
                build.env_remove(&*key);
            }
        }
        let out = build.output().expect("run cargo build -p sweep-wasm");
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("target may not be installed")
                || stderr.contains("can't find crate for `core`")
                || stderr.contains("can't find crate for `std`")
            {
                missing_target();
            }
            panic!("cargo build -p sweep-wasm --target {TARGET} failed:\n{stderr}");
        }
        let file = target_dir.join(TARGET).join("release/sweep_wasm.wasm");
        let bytes = std::fs::read(&file)
            .unwrap_or_else(|e| panic!("{} missing after the build: {e}", file.display()));
        let engine = Engine::default();
        let module = Module::new(&engine, &bytes).expect("the module validates");
        (engine, module)
    })
}

/// One instance of the module, driven through its exports as any host
/// would.
struct Planner {
    store: Store<()>,
    memory: Memory,
    input: TypedFunc<u32, u32>,
    plan: TypedFunc<(), u32>,
    output: TypedFunc<(), u32>,
    output_len: TypedFunc<(), u32>,
    exit_status: TypedFunc<(), u32>,
}

impl Planner {
    fn new() -> Self {
        let (engine, module) = module();
        let mut store = Store::new(engine, ());
        // No imports are defined: instantiating proves the module needs none.
        let instance: Instance = Linker::<()>::new(engine)
            .instantiate_and_start(&mut store, module)
            .expect("the module instantiates with no imports");
        let memory = instance
            .get_memory(&store, "memory")
            .expect("the module exports its memory");
        Planner {
            input: instance.get_typed_func(&store, "plan_input").unwrap(),
            plan: instance.get_typed_func(&store, "plan").unwrap(),
            output: instance.get_typed_func(&store, "plan_output").unwrap(),
            output_len: instance.get_typed_func(&store, "plan_output_len").unwrap(),
            exit_status: instance.get_typed_func(&store, "plan_exit_status").unwrap(),
            memory,
            store,
        }
    }

    /// The status of `plan` and the output buffer's bytes; a trap fails
    /// the test.
    fn run(&mut self, snapshot: &[u8]) -> (u32, Vec<u8>) {
        let len = u32::try_from(snapshot.len()).unwrap();
        let ptr = self.input.call(&mut self.store, len).expect("plan_input");
        assert_ne!(ptr, 0, "plan_input({len}) could not allocate");
        self.memory
            .write(&mut self.store, ptr as usize, snapshot)
            .expect("the input buffer lies in memory");
        let status = self.plan.call(&mut self.store, ()).expect("plan traps");
        let at = self.output.call(&mut self.store, ()).expect("plan_output");
        let len = self
            .output_len
            .call(&mut self.store, ())
            .expect("plan_output_len");
        let mut out = vec![0; len as usize];
        self.memory
            .read(&self.store, at as usize, &mut out)
            .expect("the output buffer lies in memory");
        (status, out)
    }

    /// What `plan_exit_status` says of the last input.
    fn exit_status(&mut self) -> u32 {
        self.exit_status
            .call(&mut self.store, ())
            .expect("plan_exit_status")
    }
}

/// What the native build gives for `text`: status `0` and the plan as
/// `swarm-sweep plan --snapshot FILE --format json` prints it
/// (`serde_json::to_writer_pretty` and a newline, which is
/// [`sweep_core::SweepPlan::to_json_pretty`] and a newline), or status `1`
/// and the error document.
fn native(text: &str) -> (u32, String) {
    match sweep_core::plan::plan_json(text) {
        Ok(plan) => (0, plan.to_json_pretty() + "\n"),
        Err(e) => (1, refusal(&e.to_string())),
    }
}

/// The error document, spelt out: this is the contract, not a copy of the
/// module's code.
fn refusal(message: &str) -> String {
    format!(
        "{{\n  \"format_version\": 2,\n  \"error\": {}\n}}\n",
        serde_json::to_string(message).unwrap()
    )
}

/// Runs `text` through the module and natively; the same status and bytes.
fn same(planner: &mut Planner, text: &str) -> u32 {
    let (status, out) = planner.run(text.as_bytes());
    let out = String::from_utf8(out).expect("the module writes UTF-8");
    let (native_status, native_out) = native(text);
    assert_eq!(
        (status, out.as_str()),
        (native_status, native_out.as_str()),
        "module and native differ for:\n{text}"
    );
    // The exit status the binary would give, by the core's own rule.
    let native_exit = match sweep_core::plan::plan_json(text) {
        Ok(plan) => u32::from(sweep_core::plan_status(&plan).code()),
        Err(_) => 2,
    };
    assert_eq!(
        planner.exit_status(),
        native_exit,
        "exit status for:\n{text}"
    );
    status
}

fn files(dir: &str) -> Vec<(PathBuf, String)> {
    let dir = workspace_root().join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    files.sort();
    files
}

#[test]
#[ignore = "soak: builds the WebAssembly module, 45 s of a cold run; .ci/run runs it with the soak set"]
fn examples_and_seeds_plan_byte_for_byte_as_natively() {
    let examples = files("examples");
    assert!(examples.len() >= 4, "the examples are found: {examples:?}");
    let seeds = files("fuzz/seeds/plan_snapshot");
    assert!(!seeds.is_empty(), "the fuzz seeds are found");
    // One instance for all: a controller reuses one.
    let mut planner = Planner::new();
    let mut planned = 0;
    for (file, text) in examples.iter().chain(&seeds) {
        let (status, out) = planner.run(text.as_bytes());
        let (native_status, native_out) = native(text);
        assert_eq!(status, native_status, "{}", file.display());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            native_out,
            "{}",
            file.display()
        );
        planned += usize::from(status == 0);
    }
    // Every example plans; so do some seeds (others are hostile on purpose).
    assert!(planned > examples.len(), "{planned} planned");
}

#[test]
#[ignore = "soak: builds the WebAssembly module, 45 s of a cold run; .ci/run runs it with the soak set"]
fn bad_input_is_an_error_result_never_a_trap() {
    let mut planner = Planner::new();
    let deep_array = "[".repeat(100_000);
    let deep_object = format!(
        "{}{}",
        r#"{"app_set": {"loaded": true, "applications": []}, "x": "#.repeat(20_000),
        "}".repeat(20_000)
    );
    let deep_in_field = format!(
        r#"{{"app_set": {{"loaded": true, "applications": [{}]}}}}"#,
        "[".repeat(50_000)
    );
    let cases: &[&[u8]] = &[
        b"",
        b" ",
        b"garbage",
        b"null",
        b"[]",
        b"{",
        b"{}",
        br#"{"app_set": {"loaded": true, "applications": []}} {}"#,
        br#"{"app_set": {"loaded": true, "applications": [{"name": "a", "swarm": null}]}}"#,
        br#"{"app_set": {"loaded": true, "applications": [{"name": "Bad Name", "swarm": ""}]}}"#,
        br#"{"app_set": {"loaded": true}, "swarms": [{"swarm": "a"}, {"swarm": "a"}]}"#,
        br#"{"format_version": 3, "app_set": {"loaded": true}}"#,
        br#"{"policy": {"controller": "a/b"}, "app_set": {"loaded": true}}"#,
        br#"{"policy": {"min_departed_for": 0}, "app_set": {"loaded": true}}"#,
        deep_array.as_bytes(),
        deep_object.as_bytes(),
        deep_in_field.as_bytes(),
    ];
    for &case in cases {
        let text = std::str::from_utf8(case).unwrap();
        assert_eq!(same(&mut planner, text), 1, "refused: {text:.200}");
    }

    // Not UTF-8: refused with the offset of the first bad byte.
    for (bytes, offset) in [(&b"\xff"[..], 0), (b"{\"app_set\": \"\xc3\x28\"}", 13)] {
        let (status, out) = planner.run(bytes);
        assert_eq!(status, 1);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            refusal(&format!(
                "the snapshot is not UTF-8 text (invalid byte at offset {offset})"
            ))
        );
    }

    // Calling `plan` with no input (it consumed the last) is refused too.
    let status = planner.plan.call(&mut planner.store, ()).unwrap();
    assert_eq!(status, 1);

    // An input the module cannot hold: a null address, not a trap, and the
    // instance still plans afterwards.
    let ptr = planner.input.call(&mut planner.store, u32::MAX).unwrap();
    assert_eq!(ptr, 0);
    assert_eq!(
        same(
            &mut planner,
            r#"{"app_set": {"loaded": true, "applications": []}}"#
        ),
        0
    );
}

#[test]
#[ignore = "soak: builds the WebAssembly module, 45 s of a cold run; .ci/run runs it with the soak set"]
fn a_large_snapshot_plans_as_natively() {
    // Large enough that the module's memory grows while planning (the
    // interpreter of a debug build is slow: no larger).
    let releases: Vec<Value> = (0..1000)
        .map(|i| json!({"name": format!("r{i}"), "owner": format!("cd/default/app{}:release/r{i}", i % 7)}))
        .collect();
    let text = json!({
        "policy": {"controller": "default", "purge_volumes": true},
        "app_set": {"loaded": true, "applications": [
            {"name": "app1", "swarm": "", "releases": ["r1", "r8"]}
        ]},
        "swarms": [{"swarm": "", "cluster_id": "C", "releases": releases,
                    "nodes": [{"id": "n1", "hostname": "h1"}], "node_count": 1}]
    })
    .to_string();
    let mut planner = Planner::new();
    let pages = planner.memory.size(&planner.store);
    assert_eq!(same(&mut planner, &text), 0);
    assert!(
        planner.memory.size(&planner.store) > pages,
        "the memory grew"
    );
    // And a small one after it, on the same instance.
    assert_eq!(
        same(
            &mut planner,
            r#"{"app_set": {"loaded": true, "applications": []}}"#
        ),
        0
    );
}

// Generated snapshots, as JSON: tiny name pools so that names collide
// across swarms, clusters alias and stamps name applications elsewhere;
// sometimes a duplicate or a cut-off document, which must be refused alike.

const SWARMS: &[&str] = &["", "alpha", "beta"];
const RELEASES: &[&str] = &["web", "db", "api", "swarm-sweep"];
const APPS: &[&str] = &["shop", "blog", "edge"];
const TIMES: &[&str] = &["2026-12-01T07:30:00Z", "2026-12-01T07:58:00Z"];

fn owner() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::sample::select(APPS).prop_map(|a| json!(format!("cd/default/{a}:release/"))),
        1 => Just(Value::Null),
        1 => prop::sample::select(APPS).prop_map(|a| json!(format!("cd/other/{a}:release/"))),
        1 => Just(json!("cd/default/a:b:release/")),
    ]
}

fn release() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(RELEASES),
        owner(),
        prop::option::weighted(0.3, prop::sample::select(TIMES)),
        prop::option::weighted(0.3, (1u64..3, prop::option::of(Just("true")))),
    )
        .prop_map(|(name, owner, since, facts)| {
            let owner = match owner {
                Value::String(stamp) => json!(format!("{stamp}{name}")),
                other => other,
            };
            let mut r = json!({"name": name, "owner": owner});
            if let Some(since) = since {
                r["departed_since"] = json!(since);
            }
            if let Some((version, keep)) = facts {
                r["records"] = json!([{"id": format!("rec-{name}"), "version": version}]);
                let mut service = json!({"id": format!("svc-{name}"), "name": format!("{name}_app"), "version": version});
                if let Some(keep) = keep {
                    service["keep"] = json!(keep);
                }
                r["objects"] = json!({
                    "services": [service],
                    "networks": [format!("{name}_default")],
                    "volumes": [{"node": "n1", "volumes": [format!("{name}_data")]}]
                });
            }
            r
        })
}

fn swarm() -> impl Strategy<Value = Value> {
    (
        prop::option::weighted(0.8, prop::sample::select(&["C1", "C2"][..])),
        prop::option::weighted(0.1, Just("unreachable")),
        prop::collection::btree_map(prop::sample::select(RELEASES), release(), 0..4),
        prop::option::of(prop::collection::btree_set(1u8..4, 0..3)),
        prop::option::of(0u64..4),
        prop::option::weighted(0.5, Just("swarm-sweep")),
    )
        .prop_map(|(cluster, error, releases, nodes, count, own)| {
            json!({
                "cluster_id": cluster,
                "error": error,
                "releases": releases.into_values().collect::<Vec<_>>(),
                "nodes": nodes.map(|ids| ids.into_iter()
                    .map(|i| json!({"id": format!("n{i}"), "hostname": format!("h{i}")}))
                    .collect::<Vec<_>>()),
                "node_count": count,
                "self_stack": own,
            })
        })
}

fn application() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(&["", "alpha", "beta", "alpah"][..]),
        prop::option::weighted(
            0.9,
            prop::collection::btree_set(prop::sample::select(RELEASES), 0..3),
        ),
        prop::sample::select(&["reconciled", "reconciled", "unreconciled", "draining"][..]),
    )
        .prop_map(|(swarm, releases, state)| {
            json!({"swarm": swarm, "releases": releases, "state": state})
        })
}

fn snapshot() -> impl Strategy<Value = Value> {
    (
        (
            any::<bool>(),
            prop::option::weighted(0.2, 0u64..3),
            prop::option::weighted(0.3, prop::sample::select(&["10m", "1h"][..])),
            prop::option::weighted(0.5, Just("2026-12-01T08:00:00Z")),
            prop::option::weighted(0.95, Just(true)),
        ),
        prop::collection::btree_map(prop::sample::select(APPS), application(), 0..4),
        // Now and then an application listed twice: refused alike.
        prop::option::weighted(0.05, application()),
        prop::collection::btree_map(prop::sample::select(SWARMS), swarm(), 1..4),
    )
        .prop_map(|((purge, max, window, now, loaded), apps, twice, swarms)| {
            let mut apps: Vec<Value> = apps
                .into_iter()
                .map(|(name, mut a)| {
                    a["name"] = json!(name);
                    a
                })
                .collect();
            if let (Some(mut again), Some(name)) = (twice, apps.first().map(|a| a["name"].clone()))
            {
                again["name"] = name;
                apps.push(again);
            }
            let mut policy =
                json!({"controller": "default", "purge_volumes": purge, "max_deletions": max});
            if let Some(window) = window {
                policy["min_departed_for"] = json!(window);
            }
            let swarms: Vec<Value> = swarms
                .into_iter()
                .map(|(name, mut s)| {
                    s["swarm"] = json!(name);
                    s
                })
                .collect();
            let mut s = json!({
                "policy": policy,
                "app_set": {"loaded": loaded.is_some(), "applications": apps},
                "swarms": swarms,
            });
            if let Some(now) = now {
                s["now"] = json!(now);
            }
            s
        })
}

/// The snapshot as text: compact or pretty, and now and then cut off.
fn snapshot_text() -> impl Strategy<Value = String> {
    (
        snapshot(),
        any::<bool>(),
        prop::option::weighted(0.1, any::<prop::sample::Index>()),
    )
        .prop_map(|(s, pretty, cut)| {
            let text = if pretty {
                serde_json::to_string_pretty(&s).unwrap()
            } else {
                s.to_string()
            };
            match cut {
                // The generated text is ASCII, so any byte is a boundary.
                Some(at) => text[..at.index(text.len())].to_owned(),
                None => text,
            }
        })
}

/// Generated snapshots per run: each is planned natively and by the module
/// in the interpreter, the slowest test of the core. A few keep a
/// contributor's `cargo test -p sweep-core` quick; `PROPTEST_CASES` asks
/// for more (.ci/run's soak step).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    #[ignore = "soak: builds the WebAssembly module, 45 s of a cold run; .ci/run runs it with the soak set"]
    fn generated_snapshots_plan_byte_for_byte_as_natively(texts in prop::collection::vec(snapshot_text(), 1..4)) {
        // Several snapshots through one instance: nothing of one plan
        // reaches the next.
        let mut planner = Planner::new();
        for text in &texts {
            same(&mut planner, text);
        }
    }
}
