//! Arbitrary bytes as lines of an audit log (`sweep_core::audit::parse_line`,
//! what `swarm-sweep audit` reads), split at line breaks as the command
//! splits them.
//!
//! Invariants: nothing panics; a line past the bound is refused as too
//! long; a line that reads came from an object and writes back as one
//! line that reads as the same entry, and its text for people is one line
//! with nothing unsafe for a terminal in it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sweep_core::audit::{parse_line, LineError, MAX_LINE_BYTES};
use sweep_core::escape::is_unsafe;
use sweep_fuzz::no_object_read_from_an_array;

fuzz_target!(|data: &[u8]| {
    for line in data.split(|&b| b == b'\n') {
        match parse_line(line) {
            Ok(entry) => {
                let again = entry.to_line();
                no_object_read_from_an_array(&String::from_utf8_lossy(line), &again);
                assert!(!again.contains('\n'), "{again}");
                assert_eq!(parse_line(again.as_bytes()).as_ref(), Ok(&entry));
                let text = entry.text();
                let body = text.strip_suffix('\n').expect("the text ends its line");
                assert!(!body.chars().any(is_unsafe), "{text}");
            }
            Err(LineError::TooLong { len }) => assert!(len > MAX_LINE_BYTES),
            Err(_) => assert!(line.len() <= MAX_LINE_BYTES),
        }
    }
});
