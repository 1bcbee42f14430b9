//! The swarm-sweep planner as a WebAssembly module: a snapshot's JSON in,
//! the plan's JSON out, byte for byte what
//! `swarm-sweep plan --snapshot FILE --format json` prints for that file.
//!
//! A controller written in any language that can host WebAssembly gets the
//! same deterministic planner as the binary, not a reimplementation of its
//! rules. All the planning is `sweep-core`'s
//! ([`sweep_core::plan::plan_json`]); this crate only moves bytes across the
//! module's boundary.
//!
//! # Building
//!
//! ```sh
//! rustup target add wasm32-unknown-unknown
//! cargo build -p sweep-wasm --target wasm32-unknown-unknown --release
//! # target/wasm32-unknown-unknown/release/sweep_wasm.wasm
//! ```
//!
//! Built for `wasm32-unknown-unknown` the module **imports nothing** (no
//! WASI, no host functions): the planner reads no clock, file or
//! environment, so the same snapshot gives the same plan on every host.
//! It builds for `wasm32-wasip1` too, but then imports the WASI functions
//! the standard library links; the planner uses none of them.
//!
//! # ABI
//!
//! The module exports its linear memory as `memory` and five functions.
//! Pointers and lengths are `i32` on the wire, to be read as unsigned
//! (`u32`). The module owns both buffers; the host never allocates in the
//! module's memory.
//!
//! | export | signature | what it does |
//! |---|---|---|
//! | `plan_input` | `(len: i32) -> i32` | Makes the input buffer exactly `len` bytes (zeroed) and returns its address; the host writes the snapshot's JSON (UTF-8) there. Returns `0` when the module cannot allocate `len` bytes (nothing is changed but the input, which is then empty). |
//! | `plan` | `() -> i32` | Plans the input and consumes it (the input buffer is empty afterwards). `0`: the output buffer holds the plan's JSON. Nonzero (`1`): the input is not a usable snapshot and the output buffer holds an error document. Never traps on bad input. |
//! | `plan_output` | `() -> i32` | Address of the output buffer. |
//! | `plan_output_len` | `() -> i32` | Length of the output buffer in bytes. |
//! | `plan_exit_status` | `() -> i32` | The exit status `swarm-sweep plan --snapshot FILE` gives for the last input: `0` nothing needs a person, `1` a person has to look (a hold that needs attention, an unreadable swarm, a deletion that would leave volumes behind), `2` the input was refused. The rule is the core's (`sweep_core::plan_status`), so no host re-derives it from the plan. |
//!
//! A call, step by step:
//!
//! 1. `ptr = plan_input(len(snapshot))`; a `0` is out of memory.
//! 2. Write the snapshot's bytes into the exported `memory` at `ptr`.
//! 3. `status = plan()`.
//! 4. Read `plan_output_len()` bytes at `plan_output()`: on status `0` the
//!    plan, else the error document.
//! 5. `plan_exit_status()` says whether a person has to look at it.
//!
//! The plan is the pretty-printed JSON of the plan (the output contract in
//! `docs/reference.md`), ending in one newline. The error document is JSON
//! too:
//!
//! ```json
//! {
//!   "format_version": 2,
//!   "error": "app_set.applications: application \"shop\" is listed twice"
//! }
//! ```
//!
//! with `error` the message `swarm-sweep plan --snapshot FILE` prints after
//! the file's name (or that the input is not UTF-8), again ending in a
//! newline.
//!
//! Addresses stay valid until the next call into the module: a call may
//! grow the memory (which never moves what is in it, but a host's view of
//! the memory may need refreshing) and `plan_input`/`plan` replace the
//! buffers. One instance plans one snapshot at a time; plan snapshots
//! concurrently with one instance each. An instance can be reused for any
//! number of plans.
//!
//! Running out of memory while planning traps, as any allocation failure
//! in Rust aborts; so would a bug in the planner (a panic is a trap on this
//! target). A bad snapshot is never either: it is status `1`.
//!
//! # Unsafe code
//!
//! The workspace forbids `unsafe_code`; this crate denies it and allows it
//! on the exports alone, because the lint counts `#[no_mangle]` (the
//! exported name) as unsafe. Nothing here dereferences a pointer: the
//! exports hand the host addresses of buffers the module owns, and the host
//! reads and writes them through the module's memory.

use std::cell::RefCell;

use serde::Serialize;

/// `plan`'s status: the output buffer holds the plan.
pub const PLANNED: u32 = 0;
/// `plan`'s status: the input is not a usable snapshot; the output buffer
/// holds the error document.
pub const REFUSED: u32 = 1;

/// `plan_exit_status` after a refused input: the binary's exit status for
/// bad input.
pub const BAD_INPUT: u32 = sweep_core::verdict::BAD_INPUT as u32;

thread_local! {
    /// The snapshot's bytes, written by the host.
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The plan's or the error's JSON, read by the host.
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The exit status of the last input ([`plan_exit_status`]).
    static EXIT_STATUS: std::cell::Cell<u32> = const { std::cell::Cell::new(BAD_INPUT) };
}

/// The error document of a snapshot that cannot be planned.
#[derive(Serialize)]
struct Refusal<'a> {
    format_version: u32,
    error: &'a str,
}

/// Plans a snapshot's JSON bytes: `Ok` with the plan's JSON as
/// `swarm-sweep plan --snapshot FILE --format json` prints it, or `Err`
/// with the error document. What the `plan` export runs, callable from
/// Rust for tests.
pub fn plan_bytes(input: &[u8]) -> Result<Vec<u8>, Vec<u8>> {
    plan_with_status(input).map(|(plan, _)| plan)
}

/// [`plan_bytes`], with the plan's exit status (`sweep_core::plan_status`)
/// beside it.
fn plan_with_status(input: &[u8]) -> Result<(Vec<u8>, u32), Vec<u8>> {
    let text = match std::str::from_utf8(input) {
        Ok(text) => text,
        Err(e) => {
            return Err(refusal(&format!(
                "the snapshot is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            )))
        }
    };
    match sweep_core::plan::plan_json(text) {
        // As the binary writes it: pretty JSON and one newline.
        Ok(plan) => Ok((
            json_line(&plan),
            u32::from(sweep_core::plan_status(&plan).code()),
        )),
        Err(e) => Err(refusal(&e.to_string())),
    }
}

fn refusal(message: &str) -> Vec<u8> {
    json_line(&Refusal {
        format_version: sweep_core::FORMAT_VERSION,
        error: message,
    })
}

fn json_line(value: &impl Serialize) -> Vec<u8> {
    // Plain data of strings, numbers and enums: serializing into a Vec
    // cannot fail.
    let mut out = serde_json::to_vec_pretty(value).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Makes the input buffer `len` bytes long, zeroed, and returns its address
/// for the host to write the snapshot to; null when `len` bytes cannot be
/// allocated.
// The only unsafe thing here is the exported, unmangled name.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn plan_input(len: u32) -> *mut u8 {
    INPUT.with_borrow_mut(|input| {
        // Freed first: a large snapshot is never held twice.
        *input = Vec::new();
        let Ok(len) = usize::try_from(len) else {
            return std::ptr::null_mut();
        };
        if input.try_reserve_exact(len).is_err() {
            return std::ptr::null_mut();
        }
        input.resize(len, 0);
        input.as_mut_ptr()
    })
}

/// Plans the snapshot in the input buffer and empties it: [`PLANNED`] with
/// the plan in the output buffer, or [`REFUSED`] with the error document.
// The only unsafe thing here is the exported, unmangled name.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn plan() -> u32 {
    let input = INPUT.with_borrow_mut(std::mem::take);
    // The last output is freed before planning, so that it is never held
    // beside the snapshot and the new plan.
    OUTPUT.with_borrow_mut(|output| *output = Vec::new());
    let (status, exit, out) = match plan_with_status(&input) {
        Ok((plan, exit)) => (PLANNED, exit, plan),
        Err(refused) => (REFUSED, BAD_INPUT, refused),
    };
    drop(input);
    OUTPUT.with_borrow_mut(|output| *output = out);
    EXIT_STATUS.set(exit);
    status
}

/// The exit status `swarm-sweep plan --snapshot FILE` gives for the last
/// input `plan` took: `0`, `1` (a person has to look) or [`BAD_INPUT`].
// The only unsafe thing here is the exported, unmangled name.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn plan_exit_status() -> u32 {
    EXIT_STATUS.get()
}

/// The address of the output buffer.
// The only unsafe thing here is the exported, unmangled name.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn plan_output() -> *const u8 {
    OUTPUT.with_borrow(|output| output.as_ptr())
}

/// The length of the output buffer in bytes.
// The only unsafe thing here is the exported, unmangled name.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn plan_output_len() -> u32 {
    // A wasm32 buffer's length fits; elsewhere (native tests) saturates.
    OUTPUT.with_borrow(|output| u32::try_from(output.len()).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_plans_and_garbage_is_refused() {
        let snapshot = br#"{"app_set": {"loaded": true, "applications": []}}"#;
        let planned = plan_bytes(snapshot).unwrap();
        let expected = sweep_core::plan::plan_json(std::str::from_utf8(snapshot).unwrap())
            .unwrap()
            .to_json_pretty()
            + "\n";
        assert_eq!(String::from_utf8(planned).unwrap(), expected);

        let refused = String::from_utf8(plan_bytes(b"\xff{").unwrap_err()).unwrap();
        assert!(refused.contains("not UTF-8"), "{refused}");
        let refused: serde_json::Value =
            serde_json::from_slice(&plan_bytes(b"{").unwrap_err()).unwrap();
        assert_eq!(refused["format_version"], 2);
    }

    #[test]
    fn the_exports_move_the_bytes() {
        // Natively the buffers are thread-local too; only their lengths
        // are checked here, the bytes by the host test in sweep-core.
        let snapshot = br#"{"app_set": {"loaded": true, "applications": []}}"#;
        assert!(!plan_input(snapshot.len() as u32).is_null());
        INPUT.with_borrow_mut(|input| input.copy_from_slice(snapshot));
        assert_eq!(plan(), PLANNED);
        // An empty app set holds the sweep: a person has to look.
        assert_eq!(plan_exit_status(), 1);
        let expected = plan_bytes(snapshot).unwrap();
        assert_eq!(plan_output_len() as usize, expected.len());
        OUTPUT.with_borrow(|output| assert_eq!(*output, expected));
        // The input was consumed: planning again refuses the empty input.
        assert_eq!(plan(), REFUSED);
        assert_eq!(plan_exit_status(), BAD_INPUT);
    }
}
