//! A release record's data: gzip of one YAML document.
//!
//! The data comes from a config anyone who can create one may have written,
//! so each step is bounded before it can cost much:
//!
//! 1. input over [`PayloadLimits::max_compressed`] is refused unread;
//! 2. it must be gzip (`1f 8b`), and is decompressed through a reader that
//!    stops one byte past [`PayloadLimits::max_decoded`]: a gzip bomb (a
//!    few kilobytes that inflate to gigabytes) is refused having produced
//!    that much and no more;
//! 3. exactly one gzip member, and nothing after it: the engine writes one.
//!    A reader that stopped after the first member would silently drop
//!    what follows, one that joins members (Go's default) would read
//!    something else; refusing both makes every payload read here read the
//!    same by either;
//! 4. the decoded bytes must be UTF-8;
//! 5. the YAML is parsed under budgets ([`PayloadLimits::yaml`]: depth,
//!    nodes, aliases and their replay), which hold for the parts that are
//!    skipped (`values`, `files`) as much as for the parts kept.
//!
//! Fields not read here are tolerated: a newer engine may add some.

use std::io::{self, Read};

use serde::{Deserialize, Deserializer};
use thiserror::Error;

use crate::yaml::{self, Limits};

/// The bounds of [`decode_payload`]. The defaults ([`PayloadLimits::DEFAULT`])
/// are 500 KiB compressed (a swarm config holds at most 500 KiB), 10 MiB
/// decoded, and [`YAML_LIMITS`](super::YAML_LIMITS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PayloadLimits {
    /// Bytes of gzip accepted; more is refused before decompressing.
    pub max_compressed: usize,
    /// Bytes the gzip may decompress to.
    pub max_decoded: usize,
    /// The YAML document's budgets.
    pub yaml: Limits,
}

impl PayloadLimits {
    /// The default bounds, also [`PayloadLimits::default`].
    pub const DEFAULT: PayloadLimits = PayloadLimits {
        max_compressed: 500 * 1024,
        max_decoded: 10 * 1024 * 1024,
        yaml: super::YAML_LIMITS,
    };
}

impl Default for PayloadLimits {
    fn default() -> Self {
        PayloadLimits::DEFAULT
    }
}

/// What a release record's document says, as far as the sweep needs it.
/// The release's `values` and `files` are not kept (they are parsed, under
/// the budgets, and dropped); unknown fields are tolerated.
///
/// Every string is raw, as the record gives it: escape it before printing.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ReleaseDocument {
    /// The release's name.
    pub release: String,
    /// The record's revision: a YAML integer, never a quoted string.
    #[serde(deserialize_with = "plain_integer")]
    pub revision: u64,
    /// The revision's status (`deployed`, `superseded`, `failed`, ...).
    #[serde(default)]
    pub status: Option<String>,
    /// The chart it was rendered from.
    #[serde(default)]
    pub chart: Option<Chart>,
    /// The rendered Compose document, as one string (see
    /// [`declared`](super::declared)).
    pub manifest: String,
    /// When the revision was written (RFC 3339), unparsed.
    #[serde(default)]
    pub created: Option<String>,
    /// The stack the release was deployed as (the release's name).
    #[serde(default)]
    pub namespace: Option<String>,
    /// Networks the engine manages for the release outside its stack;
    /// absent or null is none.
    #[serde(
        default,
        rename = "managedNetworks",
        deserialize_with = "null_as_empty"
    )]
    pub managed_networks: Vec<String>,
    /// The owner stamp, as written (see [`crate::owner`]).
    #[serde(default)]
    pub owner: Option<String>,
}

/// The chart a release was rendered from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct Chart {
    /// Its name.
    pub name: String,
    /// Its version.
    #[serde(default)]
    pub version: Option<String>,
    /// The version of the application it packages.
    #[serde(default, rename = "appVersion")]
    pub app_version: Option<String>,
}

/// A non-negative YAML integer, written as one. The chart engine writes
/// the revision as a number; `'2'` is a document some other hand wrote, and
/// read as 2 it could stand for the record it only claims to be.
fn plain_integer<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    struct Integer;
    impl serde::de::Visitor<'_> for Integer {
        type Value = u64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a non-negative integer")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
        }
        fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| {
                E::invalid_value(serde::de::Unexpected::Other("an integer too large"), &self)
            })
        }
        fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| {
                E::invalid_value(
                    serde::de::Unexpected::Other("an integer out of range"),
                    &self,
                )
            })
        }
    }
    deserializer.deserialize_any(Integer)
}

fn null_as_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(deserializer)?.unwrap_or_default())
}

/// Why a record's data was refused. Each step of [`decode_payload`] has its
/// own variants, so a caller can tell a record that is too large from one
/// that is damaged or malformed. Displayed on one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// More compressed bytes than [`PayloadLimits::max_compressed`]; not
    /// decompressed at all.
    #[error("{size} bytes of record data, more than the {limit} accepted")]
    TooLarge {
        /// The data's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The data does not start as gzip does (`1f 8b`).
    #[error("the record data is not gzip")]
    NotGzip,
    /// It starts as gzip but does not decompress: a bad header, a damaged
    /// or truncated stream, a wrong checksum.
    #[error("the record data is damaged gzip: {message}")]
    Corrupt {
        /// The decompressor's words.
        message: String,
    },
    /// Bytes after the gzip member: garbage, or a second member.
    #[error("{bytes} bytes after the record data's gzip member")]
    TrailingData {
        /// How many.
        bytes: usize,
    },
    /// It decompresses to more than [`PayloadLimits::max_decoded`] bytes:
    /// stopped there.
    #[error("the record data decompresses to more than {limit} bytes")]
    DecodedTooLarge {
        /// The limit.
        limit: usize,
    },
    /// The decompressed bytes are not UTF-8.
    #[error("the record document is not UTF-8 (from byte {valid_up_to})")]
    NotUtf8 {
        /// How many bytes from the start are valid UTF-8.
        valid_up_to: usize,
    },
    /// Not one YAML document: a syntax error, a second document, nothing.
    #[error("the record document, line {line}, column {column}: {message}")]
    Syntax {
        /// The line, from 1; 0 when unknown.
        line: u32,
        /// The column, from 1; 0 when unknown.
        column: u32,
        /// The parser's words.
        message: String,
    },
    /// Over a YAML budget ([`PayloadLimits::yaml`]: nesting, size, aliases),
    /// refused before it could cost much.
    #[error("the record document, line {line}, column {column}: {message}")]
    OverBudget {
        /// The line, from 1; 0 when unknown.
        line: u32,
        /// The column, from 1; 0 when unknown.
        column: u32,
        /// Which budget.
        message: String,
    },
    /// A required field (`release`, `revision`, `manifest`, a chart's
    /// `name`) is missing.
    #[error("the record document has no `{field}`")]
    MissingField {
        /// The field's path (`manifest`, `chart.name`).
        field: String,
    },
    /// A field's value does not fit: a revision that is not a number, a
    /// list where a string belongs.
    #[error("the record document's `{path}`: {message}")]
    Field {
        /// The field's path (`revision`, `managedNetworks[1]`).
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Reads a release record's data (after the Docker API's base64, which
/// the driver removes): gunzip, UTF-8, one YAML document, each within
/// `limits`.
///
/// ```
/// use std::io::Write;
/// use sweep_core::record::{decode_payload, PayloadLimits};
///
/// let yaml = "release: web\nrevision: 2\nmanifest: 'services: {app: {}}'\nvalues: {a: 1}\n";
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
/// gz.write_all(yaml.as_bytes())?;
/// let doc = decode_payload(&gz.finish()?, PayloadLimits::DEFAULT)?;
/// assert_eq!((doc.release.as_str(), doc.revision), ("web", 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_payload(
    bytes: &[u8],
    limits: PayloadLimits,
) -> Result<ReleaseDocument, PayloadError> {
    let decoded = gunzip(bytes, limits)?;
    let text = String::from_utf8(decoded).map_err(|e| PayloadError::NotUtf8 {
        valid_up_to: e.utf8_error().valid_up_to(),
    })?;
    parse(&text, limits.yaml)
}

fn gunzip(bytes: &[u8], limits: PayloadLimits) -> Result<Vec<u8>, PayloadError> {
    if bytes.len() > limits.max_compressed {
        return Err(PayloadError::TooLarge {
            size: bytes.len(),
            limit: limits.max_compressed,
        });
    }
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(PayloadError::NotGzip);
    }
    // The `bufread` decoder takes exactly the member's bytes from the
    // slice, so what it leaves is what follows the member.
    let mut decoder = flate2::bufread::GzDecoder::new(bytes);
    let decoded =
        read_bounded(&mut decoder, limits.max_decoded).map_err(|e| PayloadError::Corrupt {
            message: yaml::one_line(&e.to_string()),
        })?;
    if decoded.len() > limits.max_decoded {
        return Err(PayloadError::DecodedTooLarge {
            limit: limits.max_decoded,
        });
    }
    let rest = decoder.into_inner();
    if !rest.is_empty() {
        return Err(PayloadError::TrailingData { bytes: rest.len() });
    }
    Ok(decoded)
}

/// Everything `reader` gives up to `limit + 1` bytes: one more than the
/// limit says there was more. Read through `take`, so no more is ever
/// decompressed, into a buffer grown by doubling but never past `limit + 1`
/// (a plain `read_to_end` could double it to twice the limit).
fn read_bounded(reader: impl Read, limit: usize) -> io::Result<Vec<u8>> {
    let cap = limit.saturating_add(1);
    let mut reader = reader.take(u64::try_from(cap).unwrap_or(u64::MAX));
    let mut out = Vec::new();
    let mut chunk = [0u8; 8 * 1024];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let needed = out.len() + n;
        if needed > out.capacity() {
            let grown = out
                .capacity()
                .saturating_mul(2)
                .clamp(needed, cap.max(needed));
            out.reserve_exact(grown - out.len());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// Tags are not refused here, unlike in an app set: the fields read are
/// plain strings and numbers the engine writes, and a tag in the values
/// (which are not read) must not make the record unreadable.
fn parse(text: &str, limits: Limits) -> Result<ReleaseDocument, PayloadError> {
    let mut track = serde_path_to_error::Track::new();
    serde_saphyr::with_deserializer_from_str_with_options(text, yaml::options(limits), |de| {
        ReleaseDocument::deserialize(serde_path_to_error::Deserializer::new(de, &mut track))
    })
    .map_err(|e| yaml_error(&e, limits, &track.path()))
}

fn yaml_error(
    error: &serde_saphyr::Error,
    limits: Limits,
    path: &serde_path_to_error::Path,
) -> PayloadError {
    use serde_saphyr::Error as E;

    let (line, column) = yaml::line_column(error);
    let syntax = |message: String| PayloadError::Syntax {
        line,
        column,
        message,
    };
    if yaml::is_second_document(error) {
        return syntax("a second document: a record is one YAML document".into());
    }
    if let Some(message) = yaml::breach(error, limits) {
        return PayloadError::OverBudget {
            line,
            column,
            message,
        };
    }
    let inner = yaml::original(error);
    let path = path_text(path);
    match inner {
        E::SerdeMissingField { field, .. } => PayloadError::MissingField {
            field: join(&path, field),
        },
        E::Eof { .. } if path.is_empty() => syntax("the document is empty".into()),
        other if yaml::is_schema_error(other) => PayloadError::Field {
            path: if path.is_empty() {
                "(root)".into()
            } else {
                path
            },
            message: yaml::message(other),
        },
        other => syntax(yaml::message(other)),
    }
}

/// The path as `a.b[1]`, empty for the document itself, on one line.
fn path_text(path: &serde_path_to_error::Path) -> String {
    let text = path.to_string();
    if text == "." {
        String::new()
    } else {
        yaml::one_line(&text)
    }
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use proptest::prelude::*;

    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(data).unwrap();
        gz.finish().unwrap()
    }

    fn decode(data: &[u8]) -> Result<ReleaseDocument, PayloadError> {
        decode_payload(data, PayloadLimits::DEFAULT)
    }

    fn decode_yaml(yaml: &str) -> Result<ReleaseDocument, PayloadError> {
        decode(&gzip(yaml.as_bytes()))
    }

    /// A record as the engine writes it, with the parts not kept.
    const RECORD: &str = r#"
release: shop
revision: 7
status: deployed
chart:
  name: shop
  version: 1.4.2
  appVersion: "2.0"
values:
  replicas: 3
  image: {repository: shop, tag: "2.0"}
  env: [{name: A, value: "1"}]
manifest: |
  services:
    web:
      image: shop:2.0
created: "2026-11-30T10:00:00Z"
namespace: shop
managedNetworks: [shop_ingress]
owner: cd/default/store:release/shop
files:
  nginx.conf: c2VydmVyIHt9Cg==
hooks: [{name: later-field}]
"#;

    fn record() -> ReleaseDocument {
        ReleaseDocument {
            release: "shop".into(),
            revision: 7,
            status: Some("deployed".into()),
            chart: Some(Chart {
                name: "shop".into(),
                version: Some("1.4.2".into()),
                app_version: Some("2.0".into()),
            }),
            manifest: "services:\n  web:\n    image: shop:2.0\n".into(),
            created: Some("2026-11-30T10:00:00Z".into()),
            namespace: Some("shop".into()),
            managed_networks: vec!["shop_ingress".into()],
            owner: Some("cd/default/store:release/shop".into()),
        }
    }

    #[test]
    fn reads_a_record_and_tolerates_fields_it_does_not_know() {
        assert_eq!(decode_yaml(RECORD), Ok(record()));
    }

    #[test]
    fn optional_fields_may_be_absent_or_null() {
        let doc = decode_yaml("release: a\nrevision: 1\nmanifest: ''\n").unwrap();
        assert_eq!(doc.status, None);
        assert_eq!(doc.chart, None);
        assert!(doc.managed_networks.is_empty());
        assert_eq!(doc.owner, None);
        let doc =
            decode_yaml("release: a\nrevision: 1\nmanifest: ''\nmanagedNetworks: ~\nowner: ~\nchart: {name: c}\n")
                .unwrap();
        assert!(doc.managed_networks.is_empty());
        assert_eq!(doc.owner, None);
        assert_eq!(doc.chart.unwrap().version, None);
    }

    #[test]
    fn compressed_data_over_the_limit_is_refused_unread() {
        // Not even gzip: the size is checked first.
        let big = vec![0u8; 512_001];
        assert_eq!(
            decode(&big),
            Err(PayloadError::TooLarge {
                size: 512_001,
                limit: 512_000
            })
        );
        let mut limits = PayloadLimits::DEFAULT;
        let data = gzip(RECORD.as_bytes());
        limits.max_compressed = data.len();
        assert!(decode_payload(&data, limits).is_ok());
        limits.max_compressed = data.len() - 1;
        assert!(matches!(
            decode_payload(&data, limits),
            Err(PayloadError::TooLarge { .. })
        ));
    }

    /// 11 MiB of zeros: about 11 KB of gzip.
    #[test]
    fn a_gzip_bomb_stops_at_the_decoded_limit() {
        let bomb = gzip(&vec![0u8; 11 * 1024 * 1024]);
        assert!(bomb.len() < 100_000, "{}", bomb.len());
        assert_eq!(
            decode(&bomb),
            Err(PayloadError::DecodedTooLarge {
                limit: 10 * 1024 * 1024
            })
        );
    }

    #[test]
    fn the_decoded_limit_is_exact() {
        let yaml = "release: a\nrevision: 1\nmanifest: ''\n";
        let data = gzip(yaml.as_bytes());
        let mut limits = PayloadLimits::DEFAULT;
        limits.max_decoded = yaml.len();
        assert!(decode_payload(&data, limits).is_ok());
        limits.max_decoded = yaml.len() - 1;
        assert_eq!(
            decode_payload(&data, limits),
            Err(PayloadError::DecodedTooLarge {
                limit: yaml.len() - 1
            })
        );
        limits.max_decoded = 0;
        assert!(matches!(
            decode_payload(&data, limits),
            Err(PayloadError::DecodedTooLarge { limit: 0 })
        ));
    }

    #[test]
    fn the_decoded_buffer_never_grows_past_the_limit() {
        for (size, limit) in [
            (0, 0),
            (10, 100),
            (100_000, 50_000),
            (50_000, 50_000),
            (70_000, 65_536),
        ] {
            let data = vec![7u8; size];
            let out = read_bounded(&data[..], limit).unwrap();
            assert_eq!(out.len(), size.min(limit + 1), "{size} {limit}");
            assert!(
                out.capacity() <= limit + 1,
                "{size} {limit}: {}",
                out.capacity()
            );
        }
    }

    #[test]
    fn data_that_is_not_gzip_is_refused() {
        for data in [&b""[..], b"\x1f", b"release: a\n", b"\x8b\x1f rest"] {
            assert_eq!(decode(data), Err(PayloadError::NotGzip), "{data:?}");
        }
    }

    #[test]
    fn damaged_gzip_is_refused() {
        let data = gzip(RECORD.as_bytes());
        // Truncated: the stream or its trailer is cut.
        for end in [2, 10, data.len() / 2, data.len() - 1] {
            assert!(
                matches!(decode(&data[..end]), Err(PayloadError::Corrupt { .. })),
                "cut at {end}: {:?}",
                decode(&data[..end])
            );
        }
        // A wrong checksum.
        let mut bad = data.clone();
        let crc = bad.len() - 8;
        bad[crc] ^= 0xff;
        assert!(matches!(decode(&bad), Err(PayloadError::Corrupt { .. })));
        // A wrong compression method in the header.
        let mut bad = data.clone();
        bad[2] = 7;
        assert!(matches!(decode(&bad), Err(PayloadError::Corrupt { .. })));
        // A damaged stream.
        let mut bad = data;
        bad[12] ^= 0x55;
        assert!(decode(&bad).is_err());
    }

    #[test]
    fn one_member_and_nothing_after_it() {
        let one = gzip(RECORD.as_bytes());
        let mut garbage = one.clone();
        garbage.extend_from_slice(b"x");
        assert_eq!(
            decode(&garbage),
            Err(PayloadError::TrailingData { bytes: 1 })
        );
        // A second member, which a joining reader would append.
        let second = gzip(b"\nextra: 1\n");
        let mut two = one.clone();
        two.extend_from_slice(&second);
        assert_eq!(
            decode(&two),
            Err(PayloadError::TrailingData {
                bytes: second.len()
            })
        );
        assert_eq!(decode(&one), Ok(record()));
    }

    #[test]
    fn the_document_must_be_utf8() {
        assert_eq!(
            decode(&gzip(b"release: \xff\xfe\n")),
            Err(PayloadError::NotUtf8 { valid_up_to: 9 })
        );
    }

    #[test]
    fn required_fields_and_their_types() {
        for (yaml, field) in [
            ("revision: 1\nmanifest: ''\n", "release"),
            ("release: a\nmanifest: ''\n", "revision"),
            ("release: a\nrevision: 1\n", "manifest"),
            (
                "release: a\nrevision: 1\nmanifest: ''\nchart: {version: '1'}\n",
                "chart.name",
            ),
        ] {
            assert_eq!(
                decode_yaml(yaml),
                Err(PayloadError::MissingField {
                    field: field.into()
                }),
                "{yaml:?}"
            );
        }
        for (yaml, path) in [
            ("release: a\nrevision: x\nmanifest: ''\n", "revision"),
            ("release: a\nrevision: -1\nmanifest: ''\n", "revision"),
            ("release: a\nrevision: '2'\nmanifest: ''\n", "revision"),
            ("release: a\nrevision: \"2\"\nmanifest: ''\n", "revision"),
            ("release: a\nrevision: 2.0\nmanifest: ''\n", "revision"),
            ("release: a\nrevision: ~\nmanifest: ''\n", "revision"),
            ("release: a\nrevision: true\nmanifest: ''\n", "revision"),
            (
                "release: a\nrevision: 18446744073709551616\nmanifest: ''\n",
                "revision",
            ),
            ("release: [a]\nrevision: 1\nmanifest: ''\n", "release"),
            ("release: a\nrevision: 1\nmanifest: {a: b}\n", "manifest"),
            (
                "release: a\nrevision: 1\nmanifest: ''\nmanagedNetworks: [a, [b]]\n",
                "managedNetworks[1]",
            ),
        ] {
            match decode_yaml(yaml) {
                Err(PayloadError::Field { path: got, .. }) => assert_eq!(got, path, "{yaml:?}"),
                other => panic!("{yaml:?}: {other:?}"),
            }
        }
        assert!(matches!(
            decode_yaml("[1, 2]"),
            Err(PayloadError::Field { .. })
        ));
    }

    #[test]
    fn not_one_yaml_document_is_a_syntax_error() {
        for yaml in [
            "",
            "release: a\nrevision: 1\nmanifest: ''\n---\nrelease: b\n",
            "release: \"a\n",
            "release: a\n  revision: 1\n :",
        ] {
            assert!(
                matches!(decode_yaml(yaml), Err(PayloadError::Syntax { .. })),
                "{yaml:?}: {:?}",
                decode_yaml(yaml)
            );
        }
    }

    /// `values` nested `depth` levels below the document.
    fn with_values_nested(depth: usize) -> String {
        let mut text = String::from("release: a\nrevision: 1\nmanifest: ''\nvalues:\n");
        for level in 0..depth {
            text.push_str(&" ".repeat(2 * (level + 1)));
            text.push_str("k:\n");
        }
        text.push_str(&" ".repeat(2 * (depth + 1)));
        text.push_str("leaf\n");
        text
    }

    #[test]
    fn values_may_nest_deep_but_not_without_end() {
        // The document, `values`, then 60 more mappings: 62 levels.
        assert!(decode_yaml(&with_values_nested(60)).is_ok());
        // Skipped, yet bounded: the budget holds for what is not kept.
        for depth in [70, 1_000] {
            let e = decode_yaml(&with_values_nested(depth)).unwrap_err();
            assert!(
                matches!(&e, PayloadError::OverBudget { message, .. } if message.contains("nested deeper than 64")),
                "{e:?}"
            );
        }
        let flow = format!(
            "release: a\nrevision: 1\nmanifest: ''\nvalues: {}",
            "[".repeat(100_000)
        );
        assert!(matches!(
            decode_yaml(&flow),
            Err(PayloadError::OverBudget { .. })
        ));
    }

    /// Billion laughs, in the values nobody reads.
    #[test]
    fn an_alias_bomb_is_refused() {
        let mut text =
            String::from("release: a\nrevision: 1\nmanifest: ''\nvalues:\n  a0: &a0 [x, x]\n");
        for i in 1..40 {
            text.push_str(&format!("  a{i}: &a{i} [*a{p}, *a{p}]\n", p = i - 1));
        }
        let e = decode_yaml(&text).unwrap_err();
        assert!(matches!(e, PayloadError::OverBudget { .. }), "{e:?}");
        // Aliases in the manifest's place count as well.
        let text = format!("{text}\nextra: *a39\n");
        assert!(decode_yaml(&text).is_err());
    }

    #[test]
    fn a_modest_alias_is_fine() {
        let text = "release: a\nrevision: 1\nmanifest: &m 'services: {}'\nvalues: {copy: *m}\n";
        assert_eq!(decode_yaml(text).unwrap().manifest, "services: {}");
    }

    #[test]
    fn errors_stay_on_one_line() {
        for yaml in [
            "release: a\nrevision: 1\nmanifest: ''\n\"a\\nb\": [\n",
            "release: a\nrevision: \"1\\n2\"\nmanifest: ''\n",
            "release: a\nrevision: 1\nmanifest: ''\nchart: {\"x\\ny\": 1}\n",
        ] {
            let shown = decode_yaml(yaml).unwrap_err().to_string();
            assert!(!shown.contains('\n'), "{shown:?}");
        }
    }

    proptest! {
        #[test]
        fn never_panics_on_any_bytes(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode(&data);
        }

        #[test]
        fn never_panics_on_any_gzip(text in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode(&gzip(&text));
        }

        #[test]
        fn never_panics_on_yaml_like_text(text in "[a-z:{}\\[\\]&*!, \n-]{0,120}") {
            let _ = decode(&gzip(text.as_bytes()));
        }
    }
}
