//! Arbitrary bytes as webhook URLs (`SWARM_SWEEP_NOTIFY`, whitespace
//! separated, or `--notify-file FILE`, one per line:
//! `sweep_core::notify::webhook::Webhook::parse_list`).
//!
//! Invariants: parsing never panics; every webhook read shows nothing of
//! its path or query (`scheme://host[:port]/***`), carries a request
//! target that starts with `/`, and reads back as itself from its parts;
//! an error names where the text came from, and nothing of it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sweep_core::notify::webhook::{ListOf, Webhook};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let of = if mode & 1 == 0 {
        ListOf::Words
    } else {
        ListOf::Lines
    };
    match Webhook::parse_list(text, "FROM", of) {
        Ok(hooks) => {
            for hook in hooks {
                let path = hook.path_and_query();
                assert!(path.starts_with('/'), "{hook:?}");
                assert!(!hook.host().is_empty());
                let shown = hook.to_string();
                let masked = if path == "/" { "" } else { "***" };
                assert_eq!(
                    shown,
                    format!(
                        "{}://{}/{masked}",
                        hook.scheme().as_str(),
                        hook.host_header()
                    )
                );
                assert_eq!(format!("{hook:?}"), format!("Webhook({shown})"));
                let again = format!("{}://{}{path}", hook.scheme().as_str(), hook.host_header());
                assert_eq!(Webhook::parse(&again, "again"), Ok(hook));
            }
        }
        Err(e) => assert!(e.to_string().starts_with("FROM "), "{e}"),
    }
});
