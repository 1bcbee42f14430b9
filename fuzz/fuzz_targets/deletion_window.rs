//! Arbitrary bytes as deletion windows (`--window`, a registry file's
//! `windows`, a snapshot's `policy.windows`:
//! `sweep_core::deletion_window::DeletionWindow::parse`), judged at a time
//! the input chooses.
//!
//! Invariants: parsing never panics, and a window that reads writes back as
//! a canonical text that reads as the same window; judging any list at any
//! time never panics; a closed verdict's opening is later than the time
//! asked about and open itself; the order of the windows changes nothing.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sweep_core::deletion_window::{gate, Closed, DeletionWindow, Gate};
use sweep_core::UnixTime;

fuzz_target!(|data: &[u8]| {
    // The first 8 bytes choose `now` (up to about year 2100); the rest is
    // one window per line, at most 6.
    if data.len() < 8 {
        return;
    }
    let (clock, text) = data.split_at(8);
    let now = UnixTime::from_secs(u64::from_le_bytes(clock.try_into().unwrap()) % 4_102_444_800);
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let mut windows = Vec::new();
    for line in text.lines().take(6) {
        match DeletionWindow::parse(line) {
            Ok(w) => {
                let again = DeletionWindow::parse(w.as_str())
                    .unwrap_or_else(|e| panic!("{w} does not read back: {e}"));
                assert_eq!(again, w, "{line:?} reads back differently");
                windows.push(w);
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    let verdict = gate(&[&windows], Some(now));
    if let Gate::Closed(Closed {
        opens_at: Some(t), ..
    }) = &verdict
    {
        assert!(*t > now, "opens at {t}, not after {now}");
        assert_eq!(
            gate(&[&windows], Some(*t)),
            Gate::Open,
            "closed at its own opening {t}"
        );
    }
    let mut reversed = windows.clone();
    reversed.reverse();
    assert_eq!(gate(&[&reversed], Some(now)), verdict);
});
