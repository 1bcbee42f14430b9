//! Arbitrary bytes as a release record's data
//! (`sweep_core::record::decode_payload`): as they are, gzipped (so that
//! the document itself is reached, which random bytes with a valid gzip
//! checksum seldom are), and as the Compose manifest such a record holds
//! (`sweep_core::record::declared`).
//!
//! Invariants: nothing panics; every refusal is one non-empty line; a
//! document under the decoded limit is never refused for its size, one
//! over it always is; what reads under the small budgets reads the same
//! under the default ones; every service a manifest declares is
//! `<stack>_<key>`.
//!
//! The limits are small (64 KiB compressed, 256 KiB decoded, a tenth of
//! the alias budget) so that a bomb's mutants cost the fuzzer milliseconds;
//! `PayloadLimits::DEFAULT` and `YAML_LIMITS` are what `swarm-sweep` uses.

#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use sweep_core::record::{
    declared, decode_payload, Kind, PayloadError, PayloadLimits, ReleaseDocument, YAML_LIMITS,
};
use sweep_core::yaml::Limits;

fn limits() -> PayloadLimits {
    let mut limits = PayloadLimits::DEFAULT;
    limits.max_compressed = 64 * 1024;
    limits.max_decoded = 256 * 1024;
    limits.yaml = yaml_limits();
    limits
}

fn yaml_limits() -> Limits {
    let mut limits = YAML_LIMITS;
    limits.max_alias_replay /= 10;
    limits
}

fn one_line(shown: String) {
    assert!(!shown.is_empty());
    assert!(!shown.contains('\n'), "a refusal on two lines: {shown:?}");
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(data).expect("writing to a Vec");
    gz.finish().expect("writing to a Vec")
}

fn payload(data: &[u8]) -> Option<ReleaseDocument> {
    match decode_payload(data, limits()) {
        Ok(doc) => {
            assert_eq!(
                decode_payload(data, PayloadLimits::DEFAULT).as_ref(),
                Ok(&doc),
                "larger budgets read it differently"
            );
            Some(doc)
        }
        Err(e) => {
            one_line(e.to_string());
            None
        }
    }
}

fn manifest(text: &str, stack: &str) {
    match declared(text, stack, yaml_limits()) {
        Ok(d) => {
            for service in &d.services {
                assert!(
                    service.starts_with(&format!("{stack}_")),
                    "service {service:?} outside stack {stack:?}"
                );
                assert!(d.contains(Kind::Service, service));
            }
            assert_eq!(
                declared(text, stack, YAML_LIMITS).as_ref(),
                Ok(&d),
                "larger budgets read it differently"
            );
        }
        Err(e) => one_line(e.to_string()),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some(doc) = payload(data) {
        manifest(&doc.manifest, &doc.release);
    }
    let gz = gzip(data);
    let decoded = decode_payload(&gz, limits());
    if data.len() > limits().max_decoded {
        assert!(
            matches!(decoded, Err(PayloadError::DecodedTooLarge { .. })),
            "{} bytes not refused as too large: {decoded:?}",
            data.len()
        );
    } else {
        assert!(
            !matches!(
                decoded,
                Err(PayloadError::TooLarge { .. }
                    | PayloadError::NotGzip
                    | PayloadError::Corrupt { .. }
                    | PayloadError::TrailingData { .. }
                    | PayloadError::DecodedTooLarge { .. })
            ),
            "its own gzip refused: {decoded:?}"
        );
        if let Some(doc) = payload(&gz) {
            manifest(&doc.manifest, &doc.release);
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        manifest(text, "s");
    }
});
