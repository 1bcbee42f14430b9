//! Arbitrary bytes as a registry file (`--config FILE`, TOML).
//!
//! Invariants: parsing never panics; a file that parses has unique swarm
//! names, a timeout the file may ask for, and only endpoints that parse
//! again as themselves, with no control characters, credentials, query or
//! fragment in a `tcp://` one, and no password, path or option-like part in
//! an `ssh://` one; an `agent_image` of the image reference grammar, with
//! no component that climbs or character that ends a path; a refusal names
//! the file.
//! TLS paths resolve against a directory that does not exist, so the
//! fuzzer cannot make it read the machine's files by relative path.

#![no_main]

use std::collections::BTreeSet;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use sweep_docker::image_ref::check_image_reference;
use sweep_docker::{Endpoint, RegistryConfig};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match RegistryConfig::parse(text, "fuzz.toml", Path::new("/nonexistent")) {
        Ok(config) => {
            let names: BTreeSet<&str> = config.swarms.iter().map(|s| s.name.as_str()).collect();
            assert_eq!(names.len(), config.swarms.len(), "duplicate swarm names");
            let secs = config.timeout.as_secs();
            assert!((1..=sweep_docker::config::MAX_TIMEOUT_SECS).contains(&secs));
            let _ = format!("{config:?}");
            for swarm in &config.swarms {
                if let Some(job) = &swarm.job {
                    check_image(&job.image);
                }
                for endpoint in std::iter::once(&swarm.manager).chain(&swarm.nodes) {
                    check(endpoint);
                }
            }
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(shown.starts_with("fuzz.toml: "), "{shown:?}");
        }
    }
});

fn check_image(image: &str) {
    assert_eq!(check_image_reference(image), Ok(()), "{image:?}");
    assert!(!image.contains(['?', '#', '%', ' ', '\\']), "{image:?}");
    assert!(!image.chars().any(char::is_control), "{image:?}");
    assert!(
        image
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".."),
        "{image:?}"
    );
}

fn check(endpoint: &Endpoint) {
    let url = endpoint.url();
    assert!(!url.chars().any(char::is_control), "{url:?}");
    if let Some(authority) = url.strip_prefix("tcp://") {
        assert!(!authority.contains(['@', '?', '#', ' ']), "{url:?}");
    } else if let Some(authority) = url.strip_prefix("ssh://") {
        // Every part becomes an argument of `ssh`: none may read as an
        // option, carry a password, or hide a path or a command.
        let authority = authority.strip_suffix('/').unwrap_or(authority);
        assert!(!authority.contains(['/', '?', '#', ' ', ';']), "{url:?}");
        let (user, host) = match authority.rsplit_once('@') {
            Some((user, host)) => (Some(user), host),
            None => (None, authority),
        };
        if let Some(user) = user {
            assert!(!user.is_empty() && !user.starts_with('-'), "{url:?}");
            assert!(!user.contains([':', '@']), "{url:?}");
        }
        assert!(!host.is_empty() && !host.starts_with('-'), "{url:?}");
        assert!(endpoint.tls().is_none(), "{url:?}");
    } else {
        assert!(url.starts_with("unix:///"), "{url:?}");
        assert!(!url.contains(['?', '#']), "{url:?}");
    }
    let again = Endpoint::parse(url, endpoint.tls().cloned()).expect("parses again");
    assert_eq!(&again, endpoint);
    let _ = endpoint.to_string();
}
